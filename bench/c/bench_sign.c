/*
 * bench_sign: body signatures through the C ABI, as a C engine calls them.
 *
 *   perps_sign_body_into                  ns per call (wall and thread CPU)
 *   perps_sign_body + perps_string_free   ns per call (wall and thread CPU)
 *   RSS growth over M perps_sign_body + perps_string_free calls (/proc/self/statm)
 *
 * usage: bench_sign [N [M]]    N calls per variant (default 20000), M calls for the RSS
 *                              check (default 1000000). Prints timings; asserts none.
 * Exits non-zero if a call fails, or if RSS grows by 1 MiB or more over the M calls
 * (a leak: each call's string is freed, so nothing should accumulate).
 *
 * Build: make -C bench/c (links target/release/libperps.so with an rpath).
 */
#define _POSIX_C_SOURCE 200809L
#include "perps.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char BODY[] =
    "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\","
    "\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";

enum { ROUNDS = 10 };

static double now_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static void die(const char *what, perps_error *err) {
    fprintf(stderr, "bench_sign: %s failed: %s\n", what, err ? perps_error_message(err) : "(no error object)");
    perps_error_free(err);
    exit(1);
}

static void sign_into(const perps_session *s, perps_body_signature *out) {
    if (perps_sign_body_into(s, (const uint8_t *)BODY, sizeof BODY - 1, out) != PERPS_OK) die("perps_sign_body_into", NULL);
}

static void sign_json(const perps_session *s) {
    perps_error *err = NULL;
    char *json = perps_sign_body(s, BODY, &err);
    if (json == NULL) die("perps_sign_body", err);
    perps_string_free(json);
}

/* Resident set size in bytes. */
static long rss_bytes(void) {
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 20000;
    long m = argc > 2 ? atol(argv[2]) : 1000000;
    if (n < ROUNDS || m < 0) {
        fprintf(stderr, "usage: bench_sign [N >= %d [M >= 0]]\n", ROUNDS);
        return 2;
    }
    perps_error *err = NULL;
    perps_session *s = perps_session_new(&err);
    if (s == NULL) die("perps_session_new", err);
    perps_body_signature out;

    for (int i = 0; i < 1000; i++) { /* warm-up: caches, frequency, lazy one-time set-up */
        sign_into(s, &out);
        sign_json(s);
    }

    /* The two variants interleaved round by round, so load changes hit both alike. */
    long per_round = n / ROUNDS;
    double wall[2][ROUNDS], cpu[2][ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < 2; k++) {
            int which = (r + k) % 2;
            double w = now_ns(CLOCK_MONOTONIC), c = now_ns(CLOCK_THREAD_CPUTIME_ID);
            for (long i = 0; i < per_round; i++) {
                if (which == 0) sign_into(s, &out);
                else sign_json(s);
            }
            wall[which][r] = (now_ns(CLOCK_MONOTONIC) - w) / (double)per_round;
            cpu[which][r] = (now_ns(CLOCK_THREAD_CPUTIME_ID) - c) / (double)per_round;
        }
    }
    printf("bench_sign: %d rounds of %ld calls per variant (median ns per call)\n", ROUNDS, per_round);
    printf("  perps_sign_body_into                  wall %8.0f   thread CPU %8.0f\n", median(wall[0], ROUNDS), median(cpu[0], ROUNDS));
    printf("  perps_sign_body + perps_string_free   wall %8.0f   thread CPU %8.0f\n", median(wall[1], ROUNDS), median(cpu[1], ROUNDS));
    printf("  last signature: x-request-id %s, x-request-timestamp %s\n", out.request_id, out.timestamp);

    long before = rss_bytes();
    for (long i = 0; i < m; i++) sign_json(s);
    long after = rss_bytes();
    perps_session_free(s);
    if (before < 0 || after < 0) {
        printf("  RSS: /proc/self/statm is not readable here; not measured\n");
        return 0;
    }
    long growth = after - before;
    int ok = growth < 1024L * 1024L;
    printf("  RSS over %ld perps_sign_body + perps_string_free: %ld KiB -> %ld KiB, growth %ld KiB (target < 1024 KiB): %s\n",
           m, before / 1024, after / 1024, growth / 1024, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
