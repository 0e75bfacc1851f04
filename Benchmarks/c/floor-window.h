/*
 * What the C floors (dbus-floor, fd-floor) share: the clock, the process's CPU time, and one
 * report window of latencies, printed as the JSON line every receiver of fleet-bench prints:
 * {"count":N,"seconds":wall,"cpu_us":CPU,"p50_us":latency,"p99_us":latency,"samples":N}.
 * One copy, so that both floors pick their percentiles the same way.
 */
#ifndef WEARFLEET_FLOOR_WINDOW_H
#define WEARFLEET_FLOOR_WINDOW_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static inline int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline double now_seconds(void) { return (double)monotonic_ns() / 1e9; }

/* User + system CPU of the whole process, in microseconds. */
static inline long long cpu_us(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (long long)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000LL + usage.ru_utime.tv_usec +
           usage.ru_stime.tv_usec;
}

/* Latencies of one report window, in microseconds. */
struct latencies {
    uint32_t *values;
    size_t count, capacity;
};

static inline void latency_add(struct latencies *l, uint32_t value) {
    if (l->count == l->capacity) {
        size_t capacity = l->capacity ? l->capacity * 2 : 4096;
        uint32_t *grown = realloc(l->values, capacity * sizeof *grown);
        if (!grown) return; /* out of memory: the sample is dropped, the count still holds */
        l->values = grown;
        l->capacity = capacity;
    }
    l->values[l->count++] = value;
}

/* The latency between a send time carried in a payload and now, in microseconds (0 if the
 * clock reads earlier, which one clock never should). */
static inline uint32_t latency_since(int64_t sent_ns) {
    int64_t now = monotonic_ns();
    return now > sent_ns ? (uint32_t)((now - sent_ns) / 1000) : 0;
}

static inline int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank, as fleet-bench's own receivers pick it; `l` must be sorted. */
static inline uint32_t latency_percentile(const struct latencies *l, double p) {
    if (l->count == 0) return 0;
    size_t index = (size_t)(p * (double)(l->count - 1) + 0.5);
    return l->values[index];
}

/* Prints the window's JSON line and starts a new window of latencies. */
static inline void report_window(long long count, double seconds, long long cpu, struct latencies *window) {
    qsort(window->values, window->count, sizeof *window->values, compare_u32);
    printf("{\"count\":%lld,\"seconds\":%.6f,\"cpu_us\":%lld,\"p50_us\":%u,\"p99_us\":%u,\"samples\":%zu}\n", count, seconds, cpu,
           latency_percentile(window, 0.5), latency_percentile(window, 0.99), window->count);
    fflush(stdout);
    window->count = 0;
}
#endif
