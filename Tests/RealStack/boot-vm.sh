#!/usr/bin/env bash
# Boots Debian's kernel under qemu (TCG: this machine's KVM cannot run a stock kernel) with the
# host's root filesystem shared read-only over 9p, runs one stage-2 script in the guest, and
# returns when the guest powers off.
#
#   boot-vm.sh RESULTS_DIR STAGE2_SCRIPT [KEY=VALUE ...]
#
# RESULTS_DIR is shared read-write with the guest (mounted at /realstack-results); the KEY=VALUE
# pairs go into RESULTS_DIR/job.env for the stage-2 script, with STAGE2 itself. The guest has
# no network device at all. The console goes to RESULTS_DIR/console.log.
# Environment: REALSTACK_VM_TIMEOUT (seconds, default 1500): the guest is killed after that.
# Exit status: qemu's (0 when the guest powered off), 124 on the timeout, 77 when no kernel,
# qemu or busybox is installed (the caller says SKIP).
set -euo pipefail

results=$1
stage2=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
timeout_seconds=${REALSTACK_VM_TIMEOUT:-1500}

# The newest installed Debian kernel whose modules are installed too.
kernel=''
for candidate in $(ls -1v /boot/vmlinuz-* 2>/dev/null | tac); do
    version=${candidate#/boot/vmlinuz-}
    if [[ -d /lib/modules/$version/kernel/net/bluetooth ]]; then kernel=$candidate; break; fi
done
if [[ -z $kernel ]]; then
    echo "boot-vm: no /boot/vmlinuz-* with Bluetooth modules in /lib/modules (Debian: linux-image-amd64)" >&2
    exit 77
fi
for tool in qemu-system-x86_64 busybox; do
    command -v "$tool" >/dev/null || { echo "boot-vm: $tool is not installed" >&2; exit 77; }
done
kernel_version=${kernel#/boot/vmlinuz-}
modules=/lib/modules/$kernel_version

# What reaches the 9p root, in dependency order (modinfo's "depends"): virtio_ring, then virtio,
# then its transports; netfs before fscache before 9p. The initramfs lists it for /init.
modules_in_load_order=(virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
    netfs fscache 9pnet 9pnet_virtio 9p overlay)

# The initramfs: busybox (static) and the modules that reach the 9p root. Built once per kernel
# and per version of the init script, beside the results (the build directory).
cache_dir=$(dirname "$results")/initramfs
mkdir -p "$cache_dir"
init_sum=$( (cat "$here/initramfs-init"; echo "${modules_in_load_order[*]}") | sha256sum | cut -c1-16)
initramfs=$cache_dir/initramfs-$kernel_version-$init_sum.cpio.gz
if [[ ! -s $initramfs ]]; then
    staging=$(mktemp -d)
    trap 'rm -rf "$staging"' EXIT
    mkdir -p "$staging"/{bin,modules,proc,sys,dev}
    cp "$(command -v busybox)" "$staging/bin/busybox"
    for module in "${modules_in_load_order[@]}"; do
        source_file=$(modinfo -k "$kernel_version" -F filename "$module")
        case $source_file in
            *.ko) cp "$source_file" "$staging/modules/$module.ko" ;;
            *.ko.xz) xz -dc "$source_file" > "$staging/modules/$module.ko" ;;
            *.ko.zst) zstd -dcq "$source_file" > "$staging/modules/$module.ko" ;;
            *) echo "boot-vm: module $module not found for $kernel_version" >&2; exit 77 ;;
        esac
    done
    printf '%s\n' "${modules_in_load_order[@]}" > "$staging/modules/load-order"
    install -m 0755 "$here/initramfs-init" "$staging/init"
    (cd "$staging" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$initramfs.partial"
    mv "$initramfs.partial" "$initramfs"
    rm -rf "$staging"
    trap - EXIT
fi

mkdir -p "$results"
{
    echo "STAGE2=$stage2"
    echo "KERNEL_VERSION=$kernel_version"
    for pair in "$@"; do echo "$pair"; done
} > "$results/job.env"
rm -f "$results/stage"

# -smp 2 with multi-threaded TCG uses both host cores; -no-reboot and panic=-1 end qemu on any
# kernel panic instead of rebooting into the same failure. 9p's "security_model=none" passes the
# host's owners and modes through unchanged (the guest runs as root over a read-only root).
status=0
timeout --kill-after=10 "$timeout_seconds" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp 2 -m 3072 \
    -nographic -no-reboot -nic none \
    -kernel "$kernel" -initrd "$initramfs" \
    -append "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$results,mount_tag=results,security_model=none" \
    < /dev/null > "$results/console.log" 2>&1 || status=$?
exit "$status"
