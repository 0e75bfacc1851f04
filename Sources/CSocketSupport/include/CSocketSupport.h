// Socket and thread calls Glibc's Swift module does not import (they are GNU extensions). This header
// declares only plain functions of ours, so it never changes how Glibc's headers are read.
#ifndef WEARFLEET_CSOCKETSUPPORT_H
#define WEARFLEET_CSOCKETSUPPORT_H

/// accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK): the accepted socket is
/// close-on-exec from its first instant, so a process spawned concurrently never inherits it.
/// Returns the descriptor, or -1 with errno set.
int wearfleet_accept_cloexec_nonblock(int listener);

/// pipe2(fds, O_CLOEXEC | O_NONBLOCK). Returns 0, or -1 with errno set.
int wearfleet_pipe_cloexec_nonblock(int fds[2]);

/// pthread_setname_np(pthread_self(), name): names the calling thread (at most 15 bytes are
/// kept). Returns 0 or an error number.
int wearfleet_name_current_thread(const char *name);

#endif
