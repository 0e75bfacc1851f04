#ifndef WEARFLEET_CDBUS_SHIM_H
#define WEARFLEET_CDBUS_SHIM_H
// libdbus-1, plus the libc pieces Glibc's Swift module does not export: eventfd (for waking the
// connection thread) and pthread_setname_np (to name it). _GNU_SOURCE must NOT be defined here:
// it changes the definitions of shared libc types (fd_set, …) and clashes with Glibc's module.
#include <dbus/dbus.h>
#include <sys/eventfd.h>
#include <pthread.h>

extern int pthread_setname_np(pthread_t thread, const char *name);
#endif
