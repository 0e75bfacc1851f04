/*
 * fd-floor: the floor of fleet-bench's fd-path figures: what the kernel alone costs a process
 * that receives notifications one datagram at a time on SOCK_SEQPACKET sockets, as
 * AcquireNotify hands them out.
 *
 *   fd-floor DEVICES RATE_HZ PAYLOAD
 *
 * It makes DEVICES socket pairs and forks a sender that writes PAYLOAD-byte datagrams to each
 * at RATE_HZ, the devices' phases spread evenly over a period (as independent devices would
 * send), each carrying its CLOCK_MONOTONIC send time in bytes 2..9. The receiver (this process)
 * waits in epoll_wait on every socket and a signalfd, and reads each readable socket with recv
 * until it is empty: no decoding, no allocation, nothing but counting and the latency sample.
 * It prints "ready", and on SIGUSR1 one JSON line for the window since the last one, in the
 * format of the other receivers:
 * {"count":N,"seconds":wall,"cpu_us":CPU,"p50_us":latency,"p99_us":latency,"samples":N}.
 * cpu_us is the receiver's own CPU time (getrusage RUSAGE_SELF: the sender is another process).
 * SIGTERM ends both processes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "floor-window.h"

#define MAX_DEVICES 1000

/* The sender: device i sends at start + i * period / n + k * period. After a stall it resumes
 * the rate instead of bursting to catch up, as the simulator does. */
static void send_forever(int *fds, int n, double rate, int payload) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    unsigned char bytes[512];
    memset(bytes, 0x5a, sizeof bytes);
    int64_t step = (int64_t)(1e9 / rate / n);
    int64_t next = monotonic_ns();
    for (uint64_t seq = 0;; seq++) {
        next += step;
        int64_t now = monotonic_ns();
        if (next < now - 4 * step * n) next = now;
        struct timespec at = {.tv_sec = next / 1000000000, .tv_nsec = next % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {}
        int64_t sent = monotonic_ns();
        bytes[0] = 0x01;
        bytes[1] = (unsigned char)seq;
        memcpy(bytes + 2, &sent, sizeof sent);
        if (send(fds[seq % (uint64_t)n], bytes, (size_t)payload, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EPIPE) _exit(0);
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: fd-floor DEVICES RATE_HZ PAYLOAD\n");
        return 64;
    }
    int n = atoi(argv[1]);
    double rate = atof(argv[2]);
    int payload = atoi(argv[3]);
    if (n < 1 || n > MAX_DEVICES || rate <= 0 || payload < 10 || payload > 512) {
        fprintf(stderr, "fd-floor: DEVICES 1..%d, RATE_HZ > 0, PAYLOAD 10..512\n", MAX_DEVICES);
        return 64;
    }
    static int receivers[MAX_DEVICES], senders[MAX_DEVICES];
    for (int i = 0; i < n; i++) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
            perror("fd-floor: socketpair");
            return 1;
        }
        receivers[i] = pair[0];
        senders[i] = pair[1];
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    pid_t child = fork();
    if (child < 0) {
        perror("fd-floor: fork");
        return 1;
    }
    if (child == 0) {
        sigprocmask(SIG_UNBLOCK, &mask, NULL);
        for (int i = 0; i < n; i++) close(receivers[i]);
        send_forever(senders, n, rate, payload);
    }
    for (int i = 0; i < n; i++) close(senders[i]);
    int signals = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)n};
    epoll_ctl(epoll, EPOLL_CTL_ADD, signals, &event);
    for (int i = 0; i < n; i++) {
        event.data.u32 = (uint32_t)i;
        epoll_ctl(epoll, EPOLL_CTL_ADD, receivers[i], &event);
    }
    struct latencies window = {0};
    long long count = 0, cpu_start = cpu_us();
    int64_t window_start = monotonic_ns();
    printf("ready\n");
    fflush(stdout);
    struct epoll_event ready[64];
    unsigned char buffer[512];
    for (;;) {
        int events = epoll_wait(epoll, ready, 64, -1);
        if (events < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int e = 0; e < events; e++) {
            uint32_t index = ready[e].data.u32;
            if (index == (uint32_t)n) {
                struct signalfd_siginfo info;
                while (read(signals, &info, sizeof info) == sizeof info) {
                    if (info.ssi_signo == SIGTERM) {
                        kill(child, SIGKILL);
                        return 0;
                    }
                    int64_t now = monotonic_ns();
                    long long cpu = cpu_us();
                    report_window(count, (double)(now - window_start) / 1e9, cpu - cpu_start, &window);
                    count = 0;
                    window_start = now;
                    cpu_start = cpu;
                }
                continue;
            }
            for (;;) {
                ssize_t got = recv(receivers[index], buffer, sizeof buffer, MSG_DONTWAIT);
                if (got <= 0) break;
                count++;
                int64_t sent; /* every datagram is at least 10 bytes: main refuses smaller ones */
                memcpy(&sent, buffer + 2, sizeof sent);
                latency_add(&window, latency_since(sent));
            }
        }
    }
    kill(child, SIGKILL);
    return 1;
}
