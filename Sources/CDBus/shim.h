#ifndef WEARFLEET_CDBUS_SHIM_H
#define WEARFLEET_CDBUS_SHIM_H
// libdbus-1, plus the libc piece Glibc's Swift module does not export: eventfd (for waking the
// connection thread). _GNU_SOURCE must NOT be defined here:
// it changes the definitions of shared libc types (fd_set, …) and clashes with Glibc's module.
#include <dbus/dbus.h>
#include <sys/eventfd.h>

// The byte length of the array at `iter`, as the message carries it: O(1), where
// dbus_message_iter_get_element_count walks every element of variable size. libdbus marks
// dbus_message_iter_get_array_len deprecated (it counts bytes, not elements), which is exactly
// what a reader checking the shape of a known array wants: see DBusArgumentReader.
static inline int wearfleet_dbus_iter_array_byte_length(DBusMessageIter *iter) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    return dbus_message_iter_get_array_len(iter);
#pragma clang diagnostic pop
}
#endif
