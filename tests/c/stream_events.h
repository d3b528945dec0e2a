/*
 * tests/c/stream_events.h: waiting for a stream's events, shared by the C stream tests.
 */
#ifndef PERPS_TEST_STREAM_EVENTS_H
#define PERPS_TEST_STREAM_EVENTS_H

#include "check.h"

#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The next event containing both needles (the second may be NULL) within `seconds`; NULL
 * (checked) otherwise. */
static char *next_with(perps_stream *st, const char *needle, const char *also, double seconds) {
    double deadline = now_s() + seconds;
    while (now_s() < deadline) {
        perps_error *err = NULL;
        char *event = perps_stream_next(st, 200, &err);
        if (err != NULL) {
            fprintf(stderr, "     next: %s\n", perps_error_message(err));
            perps_error_free(err);
            break;
        }
        if (event != NULL && strstr(event, needle) != NULL && (also == NULL || strstr(event, also) != NULL)) {
            return event;
        }
        perps_string_free(event);
    }
    fprintf(stderr, "     no event with %s\n", needle);
    CHECK(!"an expected event arrived");
    return NULL;
}

#endif
