// Socket, thread and heap calls Glibc's Swift module does not import (GNU extensions, and epoll). Apart
// from <sys/epoll.h> this header declares only plain functions of ours, so it never changes how
// Glibc's headers are read.
#ifndef WEARFLEET_CSOCKETSUPPORT_H
#define WEARFLEET_CSOCKETSUPPORT_H

// epoll is Linux's, not POSIX's: Glibc's Swift module leaves it out. Read here without
// _GNU_SOURCE, as Glibc reads its own headers.
#include <sys/epoll.h>

/// accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK): the accepted socket is
/// close-on-exec from its first instant, so a process spawned concurrently never inherits it.
/// Returns the descriptor, or -1 with errno set.
int wearfleet_accept_cloexec_nonblock(int listener);

/// pipe2(fds, O_CLOEXEC | O_NONBLOCK). Returns 0, or -1 with errno set.
int wearfleet_pipe_cloexec_nonblock(int fds[2]);

/// pthread_setname_np(pthread_self(), name): names the calling thread (at most 15 bytes are
/// kept). Returns 0 or an error number.
int wearfleet_name_current_thread(const char *name);

/// Gives the calling thread the main thread's nice value (on Linux each thread has its own, and
/// a new thread inherits its creator's). Returns 0, or -1 with errno set (EACCES/EPERM: lowering
/// it needs CAP_SYS_NICE).
int wearfleet_take_process_nice(void);

/// recvmmsg(fd, …, MSG_DONTWAIT): reads up to `count` datagrams (at most 64) in one call, the
/// i-th into `buffer + i * slot` with its length in `lengths[i]` (a datagram longer than `slot` is
/// cut to `slot`). Returns how many were read, or -1 with errno set (EAGAIN: none waiting). A
/// length of 0 is the peer's orderly shutdown (SOCK_SEQPACKET
/// cannot tell it from an empty datagram); the entries after it repeat it.
int wearfleet_receive_datagrams(int fd, unsigned char *buffer, unsigned long slot, unsigned int count, unsigned long *lengths);

/// malloc_trim(0): returns the heap's free pages to the kernel, in every malloc arena (glibc
/// releases free pages inside the heaps too, not only at their tops). Returns 1 when memory
/// was released, 0 when none could be.
int wearfleet_release_free_heap(void);

/// mallopt(M_MMAP_THRESHOLD, bytes): allocations of at least `bytes` get mappings of their own,
/// returned whole when freed, and glibc stops raising the threshold each time such a mapping is
/// freed (its default dynamic threshold climbs to 32 MB, after which large short-lived buffers
/// land in the heap and leave it fragmented). Returns 1 on success, 0 on failure.
int wearfleet_fix_mmap_threshold(int bytes);

/// sendmmsg(fd, …, MSG_DONTWAIT | MSG_NOSIGNAL): sends up to `count` datagrams (at most 64) in
/// one call, the i-th `lengths[i]` bytes from `buffers[i]`. Returns how many were sent (fewer when
/// the socket filled), or -1 with errno set (EAGAIN: none fitted).
int wearfleet_send_datagrams(int fd, const unsigned char *const *buffers, const unsigned long *lengths, unsigned int count);

#endif
