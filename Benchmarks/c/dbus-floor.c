/*
 * dbus-floor: the plain-libdbus floor that dbus-bench compares the Swift DBus library against.
 *
 * One program, four roles, each doing the least libdbus allows (no main-loop integration, no
 * value boxing), so its figures are what the bus and libdbus cost by themselves:
 *
 *   dbus-floor serve ADDRESS              owns org.wearfleet.Bench, answers Ping with an empty reply
 *   dbus-floor calls ADDRESS INFLIGHT S   Ping round trips for S seconds with INFLIGHT outstanding
 *   dbus-floor recv  ADDRESS              counts and decodes PropertiesChanged until the end marker
 *   dbus-floor send  ADDRESS COUNT        emits COUNT PropertiesChanged signals, then the end marker
 *   dbus-floor bluez-recv ADDRESS         counts bluetoothd's characteristic notifications until SIGTERM
 *
 * bluez-recv is the floor of fleet-bench's ingest figures: it receives the same Value
 * PropertiesChanged signals as the daemon (bluetoothd broadcasts them to every matching client;
 * the daemon's StartNotify is what makes them flow), reads the send time the simulated devices
 * carry in bytes 2..9, and on SIGUSR1 prints one JSON line for the window since the last one:
 * {"count":N,"seconds":wall,"cpu_us":CPU,"p50_us":latency,"p99_us":latency}. It polls the bus
 * socket and a signalfd itself, so it wakes only for messages and for the report request.
 *
 * The end marker is one more PropertiesChanged, for interface org.wearfleet.Bench1: it travels
 * under the receiver's single match rule, behind every measured signal (the bus keeps a
 * sender's order).
 *
 * Roles that wait for the bus print "ready" once subscribed or named, and every measuring role
 * ends with one JSON line: {"count":N,"seconds":wall,"cpu_us":process CPU time over the same
 * window}. The Swift roles of dbus-bench print exactly the same fields, measured the same way.
 * Every wait is bounded (IDLE_LIMIT_MS): a lost reply or signal ends the run, never hangs it.
 */
#include <dbus/dbus.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "floor-window.h"

#define BENCH_NAME "org.wearfleet.Bench"
#define BENCH_PATH "/org/wearfleet/Bench"
#define BENCH_IFACE "org.wearfleet.Bench1"
#define CHAR_PATH "/org/bluez/hci0/dev_00_11_22_33_44_55/service0010/char0011"
#define CHAR_IFACE "org.bluez.GattCharacteristic1"
#define PROPS_IFACE "org.freedesktop.DBus.Properties"
#define IDLE_LIMIT_MS 10000


static void die(const char *what, DBusError *error) {
    fprintf(stderr, "dbus-floor: %s: %s\n", what, error && dbus_error_is_set(error) ? error->message : "failed");
    exit(1);
}

static DBusConnection *connect_bus(const char *address) {
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(address, &error);
    if (!connection) die("connect", &error);
    if (!dbus_bus_register(connection, &error)) die("register", &error);
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    return connection;
}

static void report(long long count, double seconds, long long cpu) {
    printf("{\"count\":%lld,\"seconds\":%.6f,\"cpu_us\":%lld}\n", count, seconds, cpu);
    fflush(stdout);
}

static void ready(void) {
    printf("ready\n");
    fflush(stdout);
}

/* Blocks until a message arrives (NULL after IDLE_LIMIT_MS of silence or on disconnect). */
static DBusMessage *next_message(DBusConnection *connection) {
    double deadline = now_seconds() + IDLE_LIMIT_MS / 1000.0;
    for (;;) {
        DBusMessage *message = dbus_connection_pop_message(connection);
        if (message) return message;
        int left = (int)((deadline - now_seconds()) * 1000);
        if (left <= 0 || !dbus_connection_read_write(connection, left)) return NULL;
    }
}

static int serve(const char *address) {
    DBusConnection *connection = connect_bus(address);
    DBusError error;
    dbus_error_init(&error);
    if (dbus_bus_request_name(connection, BENCH_NAME, DBUS_NAME_FLAG_DO_NOT_QUEUE, &error) !=
        DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
        die("request name", &error);
    ready();
    /* Runs until the bench terminates it or the bus goes away. */
    while (dbus_connection_read_write(connection, -1)) {
        DBusMessage *message;
        while ((message = dbus_connection_pop_message(connection))) {
            if (dbus_message_is_method_call(message, BENCH_IFACE, "Ping")) {
                DBusMessage *reply = dbus_message_new_method_return(message);
                dbus_connection_send(connection, reply, NULL);
                dbus_message_unref(reply);
            }
            dbus_message_unref(message);
        }
    }
    return 0;
}

static void send_ping(DBusConnection *connection) {
    DBusMessage *call = dbus_message_new_method_call(BENCH_NAME, BENCH_PATH, BENCH_IFACE, "Ping");
    dbus_connection_send(connection, call, NULL);
    dbus_message_unref(call);
}

/* Keeps `inflight` calls outstanding: every reply is counted and replaced by a new call. */
static int calls(const char *address, int inflight, double seconds) {
    DBusConnection *connection = connect_bus(address);
    long long cpu0 = cpu_us();
    double start = now_seconds(), end = start + seconds;
    long long count = 0;
    int outstanding = 0;
    for (; outstanding < inflight; outstanding++) send_ping(connection);
    while (outstanding > 0) {
        DBusMessage *message = next_message(connection);
        if (!message) {
            fprintf(stderr, "dbus-floor: no reply within %d ms\n", IDLE_LIMIT_MS);
            return 1;
        }
        int type = dbus_message_get_type(message);
        if (type == DBUS_MESSAGE_TYPE_METHOD_RETURN || type == DBUS_MESSAGE_TYPE_ERROR) {
            if (type == DBUS_MESSAGE_TYPE_ERROR) {
                fprintf(stderr, "dbus-floor: error reply %s\n", dbus_message_get_error_name(message));
                return 1;
            }
            count++;
            outstanding--;
            if (now_seconds() < end) {
                send_ping(connection);
                outstanding++;
            }
        }
        dbus_message_unref(message);
    }
    report(count, now_seconds() - start, cpu_us() - cpu0);
    return 0;
}

/* Decodes `sa{sv}as` as far as a consumer needs: sets *interface and returns the bytes of a
 * GattCharacteristic1 "Value" (NULL for any other change). */
static const uint8_t *changed_value(DBusMessage *message, const char **interface, int *length) {
    DBusMessageIter args, dict, entry, variant, bytes;
    *interface = NULL;
    if (!dbus_message_iter_init(message, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING) return NULL;
    dbus_message_iter_get_basic(&args, interface);
    if (strcmp(*interface, CHAR_IFACE) != 0) return NULL;
    if (!dbus_message_iter_next(&args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY) return NULL;
    for (dbus_message_iter_recurse(&args, &dict); dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&dict)) {
        const char *key;
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        if (strcmp(key, "Value") != 0 || dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_ARRAY) continue;
        const uint8_t *data;
        dbus_message_iter_recurse(&variant, &bytes);
        dbus_message_iter_get_fixed_array(&bytes, &data, length);
        return data;
    }
    return NULL;
}

/* Returns 1 for a decoded characteristic value (its bytes summed into *checksum), -1 for the end
 * marker, 0 for anything else. */
static int decode_properties_changed(DBusMessage *message, unsigned *checksum) {
    const char *interface;
    int length;
    const uint8_t *data = changed_value(message, &interface, &length);
    if (data == NULL) return interface != NULL && strcmp(interface, BENCH_IFACE) == 0 ? -1 : 0;
    for (int i = 0; i < length; i++) *checksum += data[i];
    return 1;
}

/* The Value bytes of a GattCharacteristic1 PropertiesChanged, or NULL. */
static const uint8_t *characteristic_value(DBusMessage *message, int *length) {
    const char *interface;
    return changed_value(message, &interface, length);
}

static int recv_signals(const char *address) {
    DBusConnection *connection = connect_bus(address);
    DBusError error;
    dbus_error_init(&error);
    /* dbus_bus_add_match blocks for the reply, so the rules are in place before "ready". */
    dbus_bus_add_match(connection, "type='signal',interface='" PROPS_IFACE "',member='PropertiesChanged'", &error);
    if (dbus_error_is_set(&error)) die("add match", &error);
    ready();
    long long count = 0, cpu0 = cpu_us();
    double start = 0, last = 0;
    unsigned checksum = 0;
    for (;;) {
        DBusMessage *message = next_message(connection);
        if (!message) break; /* silence: the sender died or the bus dropped signals */
        int decoded = dbus_message_is_signal(message, PROPS_IFACE, "PropertiesChanged")
                          ? decode_properties_changed(message, &checksum)
                          : 0;
        dbus_message_unref(message);
        if (decoded < 0) break;
        if (decoded > 0) {
            if (count == 0) start = now_seconds();
            count++;
            last = now_seconds();
        }
    }
    report(count, last - start, cpu_us() - cpu0);
    return checksum == 0xFFFFFFFF; /* keeps the decoding from being optimised away */
}

static int send_signals(const char *address, long long total) {
    DBusConnection *connection = connect_bus(address);
    uint8_t value[20];
    for (int i = 0; i < 20; i++) value[i] = (uint8_t)i;
    const uint8_t *value_pointer = value;
    const char *interface = CHAR_IFACE, *key = "Value";
    double start = now_seconds();
    for (long long n = 0; n < total; n++) {
        DBusMessage *signal = dbus_message_new_signal(CHAR_PATH, PROPS_IFACE, "PropertiesChanged");
        DBusMessageIter args, dict, entry, variant, bytes, invalidated;
        dbus_message_iter_init_append(signal, &args);
        dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &interface);
        dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &dict);
        dbus_message_iter_open_container(&dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
        dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
        dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "ay", &variant);
        dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "y", &bytes);
        dbus_message_iter_append_fixed_array(&bytes, DBUS_TYPE_BYTE, &value_pointer, 20);
        dbus_message_iter_close_container(&variant, &bytes);
        dbus_message_iter_close_container(&entry, &variant);
        dbus_message_iter_close_container(&dict, &entry);
        dbus_message_iter_close_container(&args, &dict);
        dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "s", &invalidated);
        dbus_message_iter_close_container(&args, &invalidated);
        dbus_connection_send(connection, signal, NULL);
        dbus_message_unref(signal);
        /* Writing every few signals keeps the queue in this process short: the pace is the
         * socket's, that is, the bus's. */
        if (n % 64 == 63) dbus_connection_flush(connection);
    }
    DBusMessage *done = dbus_message_new_signal(BENCH_PATH, PROPS_IFACE, "PropertiesChanged");
    DBusMessageIter args, dict, invalidated;
    const char *marker = BENCH_IFACE;
    dbus_message_iter_init_append(done, &args);
    dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &marker);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &dict);
    dbus_message_iter_close_container(&args, &dict);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "s", &invalidated);
    dbus_message_iter_close_container(&args, &invalidated);
    dbus_connection_send(connection, done, NULL);
    dbus_message_unref(done);
    dbus_connection_flush(connection);
    report(total, now_seconds() - start, cpu_us());
    return 0;
}

static int bluez_recv(const char *address) {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int signals = signalfd(-1, &mask, SFD_CLOEXEC);
    if (signals < 0) die("signalfd", NULL);

    DBusConnection *connection = connect_bus(address);
    DBusError error;
    dbus_error_init(&error);
    dbus_bus_add_match(connection,
                       "type='signal',sender='org.bluez',interface='" PROPS_IFACE
                       "',member='PropertiesChanged',arg0='" CHAR_IFACE "'",
                       &error);
    if (dbus_error_is_set(&error)) die("add match", &error);
    int bus_fd = -1;
    if (!dbus_connection_get_unix_fd(connection, &bus_fd)) die("bus socket", NULL);
    ready();

    struct latencies window = {0};
    long long count = 0, cpu0 = cpu_us();
    double start = now_seconds();
    unsigned checksum = 0;
    for (;;) {
        /* Messages libdbus already read come first; then sleep until the socket or a signal. */
        DBusMessage *message;
        while ((message = dbus_connection_pop_message(connection))) {
            int length = 0;
            const uint8_t *value = dbus_message_is_signal(message, PROPS_IFACE, "PropertiesChanged")
                                       ? characteristic_value(message, &length)
                                       : NULL;
            if (value) {
                count++;
                for (int i = 0; i < length; i++) checksum += value[i];
                if (length >= 10) {
                    uint64_t sent = 0;
                    for (int i = 9; i >= 2; i--) sent = sent << 8 | value[i];
                    latency_add(&window, latency_since((int64_t)sent));
                }
            }
            dbus_message_unref(message);
        }
        struct pollfd fds[2] = {{.fd = bus_fd, .events = POLLIN}, {.fd = signals, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) continue;
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo info;
            if (read(signals, &info, sizeof info) != sizeof info) continue;
            if (info.ssi_signo != SIGUSR1) break;
            double now = now_seconds();
            long long cpu = cpu_us();
            report_window(count, now - start, cpu - cpu0, &window);
            count = 0;
            start = now;
            cpu0 = cpu;
        }
        if (fds[0].revents & (POLLHUP | POLLERR)) break;
        if (fds[0].revents & POLLIN && !dbus_connection_read_write(connection, 0)) break;
    }
    free(window.values);
    return checksum == 0xFFFFFFFF;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "serve") == 0) return serve(argv[2]);
    if (argc >= 5 && strcmp(argv[1], "calls") == 0) return calls(argv[2], atoi(argv[3]), atof(argv[4]));
    if (argc >= 3 && strcmp(argv[1], "recv") == 0) return recv_signals(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "send") == 0) return send_signals(argv[2], atoll(argv[3]));
    if (argc >= 3 && strcmp(argv[1], "bluez-recv") == 0) return bluez_recv(argv[2]);
    fprintf(stderr, "usage: dbus-floor serve|calls|recv|send|bluez-recv ADDRESS [INFLIGHT SECONDS | COUNT]\n");
    return 2;
}
