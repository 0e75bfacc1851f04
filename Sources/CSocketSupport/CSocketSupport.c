// _GNU_SOURCE is defined here, in the implementation only: a module's header must not define it
// (see NOTES.md, "System-library modules").
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
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

int wearfleet_take_process_nice(void) {
    /* getpriority can return -1 as a value: errno tells an error apart. */
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)getpid()); /* the main thread's */
    if (nice == -1 && errno != 0) return -1;
    return setpriority(PRIO_PROCESS, (id_t)gettid(), nice);
}

/* The most datagrams one call moves: its headers and vectors live on the stack. */
enum { datagrams_per_call = 64 };

/* Zeroes the first count headers and gives each its own one vector, vectors[i]: one datagram per
 * buffer. */
static void one_vector_per_message(struct mmsghdr *messages, struct iovec *vectors, unsigned int count) {
    memset(messages, 0, sizeof(struct mmsghdr) * count);
    for (unsigned int i = 0; i < count; i++) {
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
    }
}

int wearfleet_receive_datagrams(int fd, unsigned char *buffer, unsigned long slot, unsigned int count, unsigned long *lengths) {
    struct mmsghdr messages[datagrams_per_call];
    struct iovec vectors[datagrams_per_call];
    if (count > datagrams_per_call) count = datagrams_per_call;
    one_vector_per_message(messages, vectors, count);
    for (unsigned int i = 0; i < count; i++) {
        vectors[i].iov_base = buffer + (unsigned long)i * slot;
        vectors[i].iov_len = slot;
    }
    int received = recvmmsg(fd, messages, count, MSG_DONTWAIT, NULL);
    for (int i = 0; i < received; i++) lengths[i] = messages[i].msg_len;
    return received;
}

int wearfleet_release_free_heap(void) {
    return malloc_trim(0);
}

int wearfleet_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

int wearfleet_send_datagrams(int fd, const unsigned char *const *buffers, const unsigned long *lengths, unsigned int count) {
    struct mmsghdr messages[datagrams_per_call];
    struct iovec vectors[datagrams_per_call];
    if (count > datagrams_per_call) count = datagrams_per_call;
    one_vector_per_message(messages, vectors, count);
    for (unsigned int i = 0; i < count; i++) {
        vectors[i].iov_base = (void *)buffers[i];
        vectors[i].iov_len = lengths[i];
    }
    return sendmmsg(fd, messages, count, MSG_DONTWAIT | MSG_NOSIGNAL);
}
