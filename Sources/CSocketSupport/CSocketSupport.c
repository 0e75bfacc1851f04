// _GNU_SOURCE is defined here, in the implementation only: a module's header must not define it
// (see NOTES.md, "System-library modules").
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "CSocketSupport.h"

int wearfleet_accept_cloexec_nonblock(int listener) {
    return accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

int wearfleet_pipe_cloexec_nonblock(int fds[2]) {
    return pipe2(fds, O_CLOEXEC | O_NONBLOCK);
}

int wearfleet_name_current_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
