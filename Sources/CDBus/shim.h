#ifndef WEARFLEET_CDBUS_SHIM_H
#define WEARFLEET_CDBUS_SHIM_H
// libdbus-1, plus the few libc pieces Glibc's Swift module does not export
// (eventfd, pthread_setname_np): the connection loop thread needs both.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dbus/dbus.h>
#include <sys/eventfd.h>
#include <pthread.h>
#include <poll.h>
#include <sys/socket.h>
#endif
