/* A slower disk flush for bench/load.py's flush-delay regimes.
 *
 * Preloaded (LD_PRELOAD) into every process that writes an archive during a
 * regime, it waits YARP_BENCH_FLUSH_DELAY_US microseconds and then calls the
 * C library's own fsync or fdatasync, so every flush still reaches the disk
 * (durability is unchanged) and each one simply takes longer, as on a disk or
 * a virtual machine whose flushes cost milliseconds.
 *
 * The bench compiles it at run time:  gcc -shared -fPIC -O2 -o slow_flush.so slow_flush.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

typedef int (*flush_fn)(int);

static flush_fn next_fsync;
static flush_fn next_fdatasync;
static long delay_us;

__attribute__((constructor)) static void slow_flush_init(void) {
    const char *text = getenv("YARP_BENCH_FLUSH_DELAY_US");
    delay_us = text ? strtol(text, NULL, 10) : 0;
    if (delay_us < 0)
        delay_us = 0;
    next_fsync = (flush_fn)dlsym(RTLD_NEXT, "fsync");
    next_fdatasync = (flush_fn)dlsym(RTLD_NEXT, "fdatasync");
}

/* Sleep the whole delay, resuming after a signal; the caller's errno is kept. */
static void wait_delay(void) {
    if (delay_us <= 0)
        return;
    int saved = errno;
    struct timespec left = {delay_us / 1000000, (delay_us % 1000000) * 1000};
    while (nanosleep(&left, &left) == -1 && errno == EINTR)
        ;
    errno = saved;
}

int fsync(int fd) {
    if (!next_fsync)
        next_fsync = (flush_fn)dlsym(RTLD_NEXT, "fsync");
    wait_delay();
    return next_fsync(fd);
}

int fdatasync(int fd) {
    if (!next_fdatasync)
        next_fdatasync = (flush_fn)dlsym(RTLD_NEXT, "fdatasync");
    wait_delay();
    return next_fdatasync(fd);
}
