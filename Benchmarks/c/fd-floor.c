/*
 * fd-floor: the floor of fleet-bench's fd-path figures: what a process costs that receives the
 * simulator's notifications one datagram at a time on SOCK_SEQPACKET sockets, as AcquireNotify
 * hands them out, and does nothing else with them.
 *
 *   fd-floor ADDRESS DEVICE...
 *
 * It asks the simulator on the bus at ADDRESS for a tap of every notify socket each DEVICE (a
 * Bluetooth address) has acquired (org.wearfleet.Simulator1.TapNotifySockets, one call per
 * device: the bus limits the descriptors one message may carry). Each tap carries a copy of
 * every datagram sent on the socket the daemon acquired, sent by the same thread right before or
 * right after it, by turns (the receiver woken first pays differently for its wake-up). So the
 * floor takes the very datagrams the daemon takes, at the same instants, in the same window, as
 * dbus-floor bluez-recv does on the D-Bus path. (A sender of the floor's own would not do: on these
 * machines what a wake-up costs the receiver depends on the sender too: a C receiver costs
 * about half as much fed by a C sender as fed by the simulator.)
 *
 * It waits in epoll_wait on every tap and a signalfd, and reads each readable tap with recv until
 * it is empty: no decoding, no allocation, nothing but counting and the latency sample from the
 * send time the simulated devices carry in bytes 2..9. It prints "ready", and on SIGUSR1 one
 * JSON line for the window since the last one, in the format of the other receivers:
 * {"count":N,"seconds":wall,"cpu_us":CPU,"p50_us":latency,"p99_us":latency,"samples":N}.
 * It ends on SIGTERM, or when every tap has ended (the acquisitions are over).
 */
#define _GNU_SOURCE
#include <dbus/dbus.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floor-window.h"

#define MAX_TAPS 4096

static int fail(const char *what, const char *detail) {
    fprintf(stderr, "fd-floor: %s: %s\n", what, detail);
    return 1;
}

/* Calls TapNotifySockets for `device` and appends the taps it returns (owned here) to
 * taps[*count...]; 0, or -1 after saying why. */
static int tap_device(DBusConnection *connection, const char *device, int *taps, int *count) {
    DBusError error;
    dbus_error_init(&error);
    DBusMessage *call = dbus_message_new_method_call(
        "org.wearfleet.Simulator", "/org/wearfleet/simulator", "org.wearfleet.Simulator1", "TapNotifySockets");
    if (!call || !dbus_message_append_args(call, DBUS_TYPE_STRING, &device, DBUS_TYPE_INVALID)) return fail("TapNotifySockets", "out of memory"), -1;
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(connection, call, 10000, &error);
    dbus_message_unref(call);
    if (!reply) return fail(device, error.message), -1;
    DBusMessageIter arguments, sockets;
    if (!dbus_message_iter_init(reply, &arguments) || dbus_message_iter_get_arg_type(&arguments) != DBUS_TYPE_ARRAY ||
        dbus_message_iter_get_element_type(&arguments) != DBUS_TYPE_UNIX_FD) {
        dbus_message_unref(reply);
        return fail(device, "the reply to TapNotifySockets is not of type ah"), -1;
    }
    dbus_message_iter_recurse(&arguments, &sockets);
    while (dbus_message_iter_get_arg_type(&sockets) == DBUS_TYPE_UNIX_FD) {
        int fd = -1;
        dbus_message_iter_get_basic(&sockets, &fd); /* a duplicate of our own */
        if (*count == MAX_TAPS) {
            close(fd);
            dbus_message_unref(reply);
            return fail(device, "more taps than fd-floor takes (MAX_TAPS)"), -1;
        }
        taps[(*count)++] = fd;
        dbus_message_iter_next(&sockets);
    }
    dbus_message_unref(reply);
    return 0;
}

/* Taps every device's acquired sockets; their number, or -1. */
static int tap_sockets(const char *address, char **devices, int device_count, int *taps) {
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(address, &error);
    if (!connection || !dbus_bus_register(connection, &error)) return fail("connect", error.message), -1;
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    int count = 0, failed = 0;
    for (int i = 0; i < device_count && !failed; i++) failed = tap_device(connection, devices[i], taps, &count) != 0;
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return failed ? -1 : count;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: fd-floor ADDRESS DEVICE...\n");
        return 64;
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    static int taps[MAX_TAPS];
    int count = tap_sockets(argv[1], argv + 2, argc - 2, taps);
    if (count < 0) return 1;
    if (count == 0) return fail("TapNotifySockets", "no characteristic holds an AcquireNotify socket");
    int signals = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    /* The signalfd's token is `count`, one past the last tap. */
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)count};
    if (signals < 0 || epoll < 0 || epoll_ctl(epoll, EPOLL_CTL_ADD, signals, &event) != 0) return fail("epoll", strerror(errno));
    for (int i = 0; i < count; i++) {
        event.data.u32 = (uint32_t)i;
        if (epoll_ctl(epoll, EPOLL_CTL_ADD, taps[i], &event) != 0) return fail("epoll", strerror(errno));
    }
    struct latencies window = {0};
    long long received = 0, cpu_start = cpu_us();
    int64_t window_start = monotonic_ns();
    int open_taps = count;
    printf("ready\n");
    fflush(stdout);
    struct epoll_event ready[64];
    unsigned char buffer[520];
    while (open_taps > 0) {
        int events = epoll_wait(epoll, ready, 64, -1);
        if (events < 0) {
            if (errno == EINTR) continue;
            return fail("epoll_wait", strerror(errno));
        }
        for (int e = 0; e < events; e++) {
            uint32_t index = ready[e].data.u32;
            if (index == (uint32_t)count) {
                struct signalfd_siginfo info;
                while (read(signals, &info, sizeof info) == sizeof info) {
                    if (info.ssi_signo == SIGTERM) return 0;
                    int64_t now = monotonic_ns();
                    long long cpu = cpu_us();
                    report_window(received, (double)(now - window_start) / 1e9, cpu - cpu_start, &window);
                    received = 0;
                    window_start = now;
                    cpu_start = cpu;
                }
                continue;
            }
            for (;;) {
                ssize_t got = recv(taps[index], buffer, sizeof buffer, MSG_DONTWAIT);
                if (got < 0 && (errno == EAGAIN || errno == EINTR)) break; /* drained */
                if (got <= 0) { /* the acquisition ended (or the tap failed) */
                    epoll_ctl(epoll, EPOLL_CTL_DEL, taps[index], NULL);
                    close(taps[index]);
                    open_taps--;
                    break;
                }
                received++;
                if (got >= 10) {
                    int64_t sent;
                    memcpy(&sent, buffer + 2, sizeof sent);
                    latency_add(&window, latency_since(sent));
                }
            }
        }
    }
    return 0;
}
