/* A broker load client that spends almost no CPU of its own, for bench/load.py's broker ceiling.
 *
 *     load_client SOCKET FRAMES WINDOW
 *
 * FRAMES holds whole frames back to back, each an 8-byte big-endian length and
 * that many bytes of JSON, all encoded beforehand by the bench: the first is
 * this connection's handshake, every other one a request envelope carrying the
 * same correlation id. The client connects to the broker's Unix socket, sends
 * the handshake and checks the answer says "ok":true, prints "ready" and waits
 * for one byte on stdin; then it sends the requests with at most WINDOW
 * unacknowledged (1: each acknowledged before the next), reads every reply in
 * order and prints one line:
 *
 *     requests=N ok=N failed=N elapsed_s=S cpu_s=S p50_ms=L p99_ms=L
 *
 * cpu_s is the client's own user + system time over the timed part only.
 * A reply counts as ok when its JSON says "ok":true; anything else is a failure
 * (the first failing reply is echoed to stderr, cut to 200 bytes).
 *
 * The bench compiles it at run time:  gcc -O2 -o load_client load_client.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPLY (1u << 20)

static int sock = -1;
static unsigned char *rbuf;
static size_t rlen, rcap;

static void die(const char *what) {
    fprintf(stderr, "load_client: %s: %s\n", what, errno ? strerror(errno) : "protocol error");
    exit(2);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static uint64_t be64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static void send_all(const unsigned char *p, size_t n) {
    while (n) {
        ssize_t w = send(sock, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            die("send");
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Receive until one whole reply frame is buffered; return its body length (the body starts at rbuf + 8). */
static size_t read_reply(void) {
    for (;;) {
        if (rlen >= 8) {
            uint64_t size = be64(rbuf);
            if (size == 0 || size > MAX_REPLY) {
                errno = 0;
                die("reply length out of bounds");
            }
            if (rlen >= 8 + size)
                return (size_t)size;
        }
        if (rlen == rcap) {
            errno = 0;
            die("reply buffer full");
        }
        ssize_t r = recv(sock, rbuf + rlen, rcap - rlen, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = ECONNRESET;
            die("recv");
        }
        rlen += (size_t)r;
    }
}

static void drop_reply(size_t body) {
    size_t used = 8 + body;
    memmove(rbuf, rbuf + used, rlen - used);
    rlen -= used;
}

static int reply_ok(size_t body) {
    return memmem(rbuf + 8, body, "\"ok\":true", 9) != NULL;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: load_client SOCKET FRAMES WINDOW\n");
        return 64;
    }
    long window = strtol(argv[3], NULL, 10);
    if (window < 1)
        window = 1;

    /* The frames, read whole, and where each one starts. */
    FILE *f = fopen(argv[2], "rb");
    if (!f)
        die("open frames");
    struct stat st;
    if (fstat(fileno(f), &st) != 0)
        die("stat frames");
    size_t total = (size_t)st.st_size;
    unsigned char *data = malloc(total ? total : 1);
    if (!data || fread(data, 1, total, f) != total)
        die("read frames");
    fclose(f);
    size_t count = 0, cap = 1024;
    size_t *start = malloc(cap * sizeof *start);
    if (!start)
        die("malloc");
    for (size_t at = 0; at < total;) {
        if (at + 8 > total || be64(data + at) > total - at - 8) {
            errno = 0;
            die("truncated frames file");
        }
        if (count + 1 >= cap) {
            cap *= 2;
            start = realloc(start, cap * sizeof *start);
            if (!start)
                die("realloc");
        }
        start[count++] = at;
        at += 8 + (size_t)be64(data + at);
    }
    if (count < 1) {
        errno = 0;
        die("no handshake frame");
    }
    start[count] = total;
    size_t requests = count - 1;

    rcap = MAX_REPLY + 8;
    rbuf = malloc(rcap);
    double *sent_at = malloc((requests + 1) * sizeof *sent_at);
    double *latency = malloc((requests + 1) * sizeof *latency);
    if (!rbuf || !sent_at || !latency)
        die("malloc");

    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        die("socket path");
    }
    strcpy(addr.sun_path, argv[1]);
    sock = socket(AF_UNIX, SOCK_STREAM, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0)
        die("connect");

    send_all(data + start[0], start[1] - start[0]);
    size_t body = read_reply();
    if (!reply_ok(body)) {
        fprintf(stderr, "load_client: handshake refused: %.*s\n", (int)(body < 200 ? body : 200), rbuf + 8);
        return 3;
    }
    drop_reply(body);

    printf("ready\n");
    fflush(stdout);
    char go;
    if (read(0, &go, 1) != 1)
        die("waiting for go");

    double cpu0 = cpu_s(), t0 = now_s();
    size_t next = 1, acked = 0, ok = 0, failed = 0;
    while (acked < requests) {
        /* Fill the window: the frames are contiguous, so one send carries them all. */
        size_t last = next;
        while (last <= requests && last - 1 - acked < (size_t)window)
            last++;
        if (last > next) {
            double t = now_s();
            for (size_t i = next; i < last; i++)
                sent_at[i] = t;
            send_all(data + start[next], start[last] - start[next]);
            next = last;
        }
        /* Read one reply, then every other one already buffered. */
        do {
            body = read_reply();
            acked++;
            latency[acked] = now_s() - sent_at[acked];
            if (reply_ok(body)) {
                ok++;
            } else {
                if (!failed)
                    fprintf(stderr, "load_client: request %zu failed: %.*s\n", acked,
                            (int)(body < 200 ? body : 200), rbuf + 8);
                failed++;
            }
            drop_reply(body);
        } while (acked < next - 1 && rlen >= 8 && rlen >= 8 + be64(rbuf));
    }
    double elapsed = now_s() - t0, cpu = cpu_s() - cpu0;

    qsort(latency + 1, requests, sizeof *latency, by_value);
    double p50 = requests ? latency[1 + requests / 2] : 0, p99 = requests ? latency[1 + (requests * 99) / 100] : 0;
    printf("requests=%zu ok=%zu failed=%zu elapsed_s=%.6f cpu_s=%.6f p50_ms=%.3f p99_ms=%.3f\n", requests, ok, failed,
           elapsed, cpu, p50 * 1000, p99 * 1000);
    close(sock);
    return failed ? 1 : 0;
}
