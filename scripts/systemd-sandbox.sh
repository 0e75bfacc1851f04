#!/usr/bin/env bash
# Boots a real systemd as PID 1 in fresh namespaces, on a throw-away copy of this machine's root,
# so the system test can install and run wearfleetd as a service without touching the machine.
#
#   scripts/systemd-sandbox.sh boot DIR [TREE]   boot; TREE's files are copied over the root first
#   scripts/systemd-sandbox.sh run DIR CMD...    run CMD inside (all namespaces, root directory)
#   scripts/systemd-sandbox.sh stop DIR          kill the sandbox's PID 1 (and so everything in it)
#   scripts/systemd-sandbox.sh check             exit 0 when this machine can boot a sandbox
#
# DIR is an empty directory of the caller's; `boot` writes DIR/pid (systemd's PID as this machine
# sees it), DIR/console.log (systemd's own output) and mounts the sandbox's tmpfs on DIR/root
# inside the sandbox's mount namespace only. Nothing is mounted outside: when the namespace's last
# process dies, every mount goes with it. Needs root (unshare of mount/PID/cgroup namespaces).
#
# A network namespace of its own: only a loopback (systemd brings it up), so a daemon listening on
# 127.0.0.1 inside never meets one of this machine's.
# Layout inside: an overlay root (this machine's / read-only below, a tmpfs above), fresh /proc,
# a read-only /sys with a cgroup2 of the sandbox's own cgroup namespace at /sys/fs/cgroup, a
# private /dev (a tmpfs with the few device nodes bound in, its own devpts), and tmpfs /run and
# /tmp. systemd boots sandbox.target (basic.target plus nothing else), so the machine's enabled
# services (databases, timers' jobs, gettys) never start inside.
set -euo pipefail

BOOT_SECONDS=${SANDBOX_BOOT_SECONDS:-30}
STOP_SECONDS=${SANDBOX_STOP_SECONDS:-10}

die() { echo "systemd-sandbox: $*" >&2; exit 1; }

# The part that runs as PID 1 of the new PID namespace: builds the root, then becomes systemd.
inside() {
    local base=$1 tree=$2
    mount --make-rprivate /
    mount -t tmpfs -o mode=0755 wearfleet-sandbox "$base"
    mkdir -p "$base/upper" "$base/work" "$base/root"
    mount -t overlay overlay -o "lowerdir=/,upperdir=$base/upper,workdir=$base/work" "$base/root"
    local root=$base/root
    if [[ -n $tree ]]; then cp -a "$tree/." "$root/"; fi

    mount -t proc proc "$root/proc"
    # Kernel settings are the machine's: read-only inside (systemd-sysctl then skips itself).
    local entry
    for entry in sys sysrq-trigger; do
        [[ -e $root/proc/$entry ]] || continue
        mount --bind "$root/proc/$entry" "$root/proc/$entry"
        mount -o remount,bind,ro "$root/proc/$entry"
    done
    mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
    mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$root/sys/fs/cgroup"

    mount -t tmpfs -o mode=0755,nosuid wearfleet-sandbox-dev "$root/dev"
    local node
    for node in null zero full random urandom tty; do
        touch "$root/dev/$node"
        mount --bind "/dev/$node" "$root/dev/$node"
    done
    mkdir -p "$root/dev/pts" "$root/dev/shm" "$root/dev/mqueue"
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
    ln -s pts/ptmx "$root/dev/ptmx"
    ln -s /proc/self/fd "$root/dev/fd"
    ln -s /proc/self/fd/0 "$root/dev/stdin"
    ln -s /proc/self/fd/1 "$root/dev/stdout"
    ln -s /proc/self/fd/2 "$root/dev/stderr"
    mount -t tmpfs -o mode=1777,nosuid,nodev wearfleet-sandbox-shm "$root/dev/shm"
    mount -t tmpfs -o mode=0755,nosuid,nodev wearfleet-sandbox-run "$root/run"
    mount -t tmpfs -o mode=1777,nosuid,nodev wearfleet-sandbox-tmp "$root/tmp"

    # A target of our own: basic.target (journald, the system bus, sysinit) and nothing enabled on
    # the machine. A fresh machine id keeps the sandbox's journal apart from the machine's.
    mkdir -p "$root/etc/systemd/system"
    cat > "$root/etc/systemd/system/sandbox.target" <<'UNIT'
[Unit]
Description=Wearfleet test sandbox
Requires=basic.target
After=basic.target
AllowIsolate=yes
UNIT
    # A journal in /run only: no flush to /var/log and no rotation halfway through a test (a
    # rotated journal made `journalctl -u` come back empty right after).
    mkdir -p "$root/etc/systemd/journald.conf.d"
    printf '[Journal]\nStorage=volatile\n' > "$root/etc/systemd/journald.conf.d/sandbox.conf"
    rm -f "$root/etc/machine-id"
    systemd-id128 new > "$root/etc/machine-id"

    cd "$root"
    mkdir -p .host
    pivot_root . .host
    cd /
    umount -l /.host
    rmdir /.host
    # `container` tells systemd it is not alone on the kernel: units conditioned on real hardware
    # (udev, time sync, kernel modules) are skipped instead of failing.
    exec env -i container=wearfleet-sandbox PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /lib/systemd/systemd --system --unit=sandbox.target --show-status=no
}

sandbox_pid() {
    local dir=$1
    [[ -s $dir/pid ]] || die "no sandbox in $dir (no $dir/pid)"
    cat "$dir/pid"
}

run_inside() {
    local dir=$1; shift
    local pid
    pid=$(sandbox_pid "$dir")
    nsenter --target "$pid" --all --root --wd -- env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}

boot() {
    local dir=$1 tree=${2:-}
    [[ -d $dir ]] || die "$dir is not a directory"
    [[ ! -e $dir/pid ]] || die "$dir already has a sandbox (pid $(cat "$dir/pid"))"
    if [[ -n $tree ]]; then tree=$(cd "$tree" && pwd); fi
    dir=$(cd "$dir" && pwd)
    mkdir -p "$dir/root"
    setsid unshare --mount --pid --fork --uts --ipc --cgroup --net --propagation private \
        "$0" __inside "$dir/root" "$tree" < /dev/null > "$dir/console.log" 2>&1 &
    local unshare_pid=$! child=""
    # systemd is unshare's only child; read its PID from the kernel, never by name.
    while [[ -z $child ]]; do
        child=$(cat "/proc/$unshare_pid/task/$unshare_pid/children" 2>/dev/null || true)
        child=${child// /}
        if [[ -z $child ]]; then
            kill -0 "$unshare_pid" 2>/dev/null || { cat "$dir/console.log" >&2; die "unshare exited"; }
            sleep 0.05
        fi
    done
    echo "$child" > "$dir/pid"
    echo "$unshare_pid" > "$dir/unshare.pid"
    # Booted when systemctl answers "running" (or "degraded": a unit of the machine failed inside).
    local state='' deadline=$((SECONDS + BOOT_SECONDS))
    while ((SECONDS < deadline)); do
        kill -0 "$child" 2>/dev/null || { cat "$dir/console.log" >&2; stop "$dir"; die "systemd exited while booting"; }
        state=$(run_inside "$dir" systemctl is-system-running 2>/dev/null || true)
        case $state in
            running | degraded) echo "systemd-sandbox: booted (pid $child, $state)"; return 0 ;;
        esac
        sleep 0.1
    done
    cat "$dir/console.log" >&2
    stop "$dir"
    die "systemd did not finish booting within ${BOOT_SECONDS}s (state: ${state:-none})"
}

stop() {
    local dir=$1
    [[ -e $dir/pid ]] || return 0
    local pid unshare_pid
    pid=$(cat "$dir/pid")
    unshare_pid=$(cat "$dir/unshare.pid" 2>/dev/null || true)
    # SIGKILL to a PID namespace's init kills every process in the namespace; the mount namespace
    # (and with it the overlay, the tmpfs and the bound device nodes) goes when they are gone.
    kill -KILL "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + STOP_SECONDS))
    while { kill -0 "$pid" 2>/dev/null || { [[ -n $unshare_pid ]] && kill -0 "$unshare_pid" 2>/dev/null; }; }; do
        ((SECONDS < deadline)) || die "sandbox (pid $pid) did not stop within ${STOP_SECONDS}s"
        sleep 0.05
    done
    rm -f "$dir/pid" "$dir/unshare.pid"
    rmdir "$dir/root" 2>/dev/null || true
}

check() {
    [[ $(id -u) -eq 0 ]] || { echo "not root"; return 1; }
    [[ -x /lib/systemd/systemd ]] || { echo "no /lib/systemd/systemd"; return 1; }
    unshare --mount --pid --fork --cgroup --propagation private true 2>/dev/null \
        || { echo "unshare of mount/PID/cgroup namespaces failed"; return 1; }
    return 0
}

case ${1:-} in
    __inside) shift; inside "$@" ;;
    boot) shift; (($# >= 1)) || die "usage: $0 boot DIR [TREE]"; boot "$@" ;;
    run) shift; (($# >= 2)) || die "usage: $0 run DIR CMD..."; run_inside "$@" ;;
    stop) shift; (($# == 1)) || die "usage: $0 stop DIR"; stop "$1" ;;
    check) check ;;
    *) die "usage: $0 boot DIR [TREE] | run DIR CMD... | stop DIR | check" ;;
esac
