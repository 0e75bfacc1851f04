// The MQTT benchmark's C side, plain libmosquitto:
//   mqtt-floor pub HOST PORT RATE SECONDS SIZE  publishes RATE messages/s of SIZE bytes, QoS 0,
//       on 100 topics in turn, for SECONDS: the floor a publisher of the daemon's messages
//       costs. Prints {"messages":N,"cpu_us":X} (its own user + system CPU).
//   mqtt-floor sub HOST PORT TOPIC SECONDS  counts what arrives on TOPIC for SECONDS after its
//       SUBACK (it prints "ready" then) and reads each value's send time from its "hex" (a motion
//       band's bytes: sequence u16, then CLOCK_MONOTONIC ns u64, little-endian): prints
//       {"messages":N,"bytes":B,"p50_us":P,"p99_us":Q}.
// Network loop: libmosquitto's own thread (mosquitto_loop_start), as a C publisher would do it.
#define _GNU_SOURCE  // memmem
#include <mosquitto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double cpu_us(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
}

static volatile int subscribed;
static long received, received_bytes;
static int64_t *latencies;
static long latency_count, latency_capacity;

static void on_subscribe(struct mosquitto *m, void *u, int mid, int n, const int *q) {
    (void)m; (void)u; (void)mid; (void)n; (void)q;
    subscribed = 1;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void on_message(struct mosquitto *m, void *u, const struct mosquitto_message *message) {
    (void)m; (void)u;
    int64_t now = now_ns();
    received++;
    received_bytes += message->payloadlen;
    const char *payload = message->payload;
    const char *hex = memmem(payload, message->payloadlen, "\"hex\":\"", 7);
    if (!hex) return;
    hex += 7;
    if ((payload + message->payloadlen) - hex < 20) return;
    uint64_t sent = 0;
    for (int i = 0; i < 8; i++) {
        int high = hex_value(hex[4 + 2 * i]), low = hex_value(hex[5 + 2 * i]);
        if (high < 0 || low < 0) return;
        sent |= (uint64_t)(high << 4 | low) << (8 * i);
    }
    if (latency_count == latency_capacity) {
        latency_capacity = latency_capacity ? latency_capacity * 2 : 65536;
        latencies = realloc(latencies, latency_capacity * sizeof *latencies);
        if (!latencies) exit(1);
    }
    latencies[latency_count++] = now - (int64_t)sent;
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: mqtt-floor pub HOST PORT RATE SECONDS SIZE | sub HOST PORT TOPIC SECONDS\n");
        return 2;
    }
    mosquitto_lib_init();
    struct mosquitto *m = mosquitto_new(NULL, true, NULL);
    if (!m || mosquitto_connect(m, argv[2], atoi(argv[3]), 30) != MOSQ_ERR_SUCCESS) {
        fprintf(stderr, "mqtt-floor: cannot connect\n");
        return 1;
    }
    if (strcmp(argv[1], "sub") == 0) {
        mosquitto_subscribe_callback_set(m, on_subscribe);
        mosquitto_message_callback_set(m, on_message);
        mosquitto_subscribe(m, NULL, argv[4], 0);
        mosquitto_loop_start(m);
        while (!subscribed) usleep(1000);
        printf("ready\n");
        fflush(stdout);
        usleep((useconds_t)(atof(argv[5]) * 1e6));
        mosquitto_loop_stop(m, true);
        long count = latency_count;
        qsort(latencies, count, sizeof *latencies, compare);
        printf("{\"messages\":%ld,\"bytes\":%ld,\"p50_us\":%lld,\"p99_us\":%lld}\n", received, received_bytes,
               count ? (long long)(latencies[count / 2] / 1000) : -1LL, count ? (long long)(latencies[count * 99 / 100] / 1000) : -1LL);
        return 0;
    }
    if (argc < 7) return 2;
    double rate = atof(argv[4]), seconds = atof(argv[5]);
    int size = atoi(argv[6]);
    char *payload = malloc(size > 0 ? size : 1);
    memset(payload, 'x', size > 0 ? size : 1);
    mosquitto_loop_start(m);
    char topic[64];
    long sent = 0, total = (long)(rate * seconds);
    double start_cpu = cpu_us();
    int64_t start = now_ns();
    // Paced in 10 ms batches, as values from 100 devices arrive.
    while (sent < total) {
        int64_t due = start + (int64_t)(sent / rate * 1e9);
        int64_t wait = due - now_ns();
        if (wait > 0) {
            struct timespec ts = {wait / 1000000000LL, wait % 1000000000LL};
            nanosleep(&ts, NULL);
        }
        long batch_end = sent + (long)(rate / 100) + 1;
        for (; sent < batch_end && sent < total; sent++) {
            snprintf(topic, sizeof topic, "bench/device/%03ld/raw", sent % 100);
            mosquitto_publish(m, NULL, topic, size, payload, 0, false);
        }
    }
    mosquitto_disconnect(m);
    mosquitto_loop_stop(m, false);
    printf("{\"messages\":%ld,\"cpu_us\":%.0f}\n", sent, cpu_us() - start_cpu);
    return 0;
}
