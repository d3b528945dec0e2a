/*
 * tests/c/test_stream_partly_sent.c: perps_error_stream_request_id from C against the sandbox
 * venue (tests/c/run.sh starts it and names its URLs in PERPS_TEST_SANDBOX_BASE_URL,
 * PERPS_TEST_SANDBOX_PERPS_URL and PERPS_TEST_SANDBOX_ADMIN_URL). Run under ASan/UBSan and
 * valgrind by run.sh.
 *
 * A real partial write: the order stream is signed in, the venue stalls it (admin
 * `ws/stall`: it reads nothing more, the socket stays open), and orders are written until
 * the socket is full; the order whose frame no longer fits fails once part of it may have
 * left (its write waits read_timeout_ms, then PERPS_TIMEOUT). That error must name the
 * request by its envelope request_id — the id the message names, not the x-request-id —
 * and the `disconnected` event that follows must list that same id as `unanswered`.
 * Errors without such a frame (an invalid order, a closed stream, a REST call) have none.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "sandbox_admin.h"
#include "stream_events.h"

#include <time.h>

static const char RESTING_BUY[] = "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\","
                                  "\"price\":\"64000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";

/* Errors of requests whose frame never left, and of other calls: no envelope request_id. */
static void test_errors_without_a_written_frame(perps_client *c, perps_session *s) {
    perps_error *err = NULL;
    perps_stream *st = perps_order_stream_open(c, s, &err);
    CHECK(st != NULL && err == NULL);
    if (st == NULL) {
        perps_error_free(err);
        return;
    }
    perps_string_free(next_with(st, "\"connected\"", NULL, 10));

    /* Refused before signing: an invalid order. */
    CHECK(perps_stream_new_order(st, "{\"symbol\":\"BTC-USD\"}", &err) == NULL);
    if (check_error_at(err, PERPS_INVALID_ORDER, NULL, __LINE__)) {
        CHECK(perps_error_stream_request_id(err) == NULL);
        CHECK(perps_error_request_id(err) == NULL);
        CHECK(!perps_error_may_have_reached_venue(err));
        perps_error_free(err);
        err = NULL;
    }
    /* A cancel naming no order: refused unsent. */
    CHECK(perps_stream_cancel_order(st, "{}", &err) == NULL);
    if (check_error_at(err, PERPS_INVALID_ARGUMENT, "names no order", __LINE__)) {
        CHECK(perps_error_stream_request_id(err) == NULL);
        perps_error_free(err);
        err = NULL;
    }
    /* Refused unsent on a closed stream. */
    perps_stream_close(st);
    CHECK(perps_stream_new_order(st, RESTING_BUY, &err) == NULL);
    if (check_error_at(err, PERPS_STREAM_CLOSED, NULL, __LINE__)) {
        CHECK(perps_error_stream_request_id(err) == NULL);
        CHECK(!perps_error_may_have_reached_venue(err));
        perps_error_free(err);
        err = NULL;
    }
    perps_stream_free(st);

    /* A REST call that reached the venue: an x-request-id, no envelope request_id. */
    CHECK(perps_cancel_order(c, s, "{\"cl_ord_id\":\"no-such-order\"}", &err) == NULL);
    if (check_error_at(err, PERPS_NOT_FOUND, NULL, __LINE__)) {
        CHECK(perps_error_request_id(err) != NULL);
        CHECK(perps_error_stream_request_id(err) == NULL);
        perps_error_free(err);
    }
}

/* The stalled venue: orders until one no longer fits the socket. */
static void test_a_partly_written_frame_is_named_by_its_envelope_request_id(perps_client *c, perps_session *s) {
    perps_error *err = NULL;
    perps_stream *st = perps_order_stream_open(c, s, &err);
    CHECK(st != NULL && err == NULL);
    if (st == NULL) {
        perps_error_free(err);
        return;
    }
    perps_string_free(next_with(st, "\"connected\"", NULL, 10));

    /* One order through, with its outcome: the connection works before the stall. */
    char *sent = perps_stream_new_order(st, RESTING_BUY, &err);
    CHECK(sent != NULL && err == NULL);
    char first_id[64] = "";
    CHECK(field(sent, "request_id", first_id, sizeof first_id));
    perps_string_free(sent);
    perps_string_free(next_with(st, "\"final\":true", first_id, 10));

    char answer[256];
    CHECK(admin("POST", "ws/stall", "{}", answer, sizeof answer));
    CHECK(strstr(answer, "\"stalled\":") != NULL && strstr(answer, "\"stalled\":0") == NULL);

    /* Orders until the write fails. Each one written in full returns its ids; the venue
     * reads none of them. Bounded well below the 100,000 requests a stream holds. */
    char last_id[64] = "";
    long written = 0;
    int every_answer_has_its_id = 1;
    double deadline = now_s() + 60;
    while (written < 50000 && now_s() < deadline) {
        sent = perps_stream_new_order(st, RESTING_BUY, &err);
        if (sent == NULL) {
            break;
        }
        every_answer_has_its_id &= field(sent, "request_id", last_id, sizeof last_id);
        perps_string_free(sent);
        written++;
    }
    printf("  %ld orders written in full before the socket was full\n", written);
    CHECK(written > 0 && every_answer_has_its_id);
    CHECK(err != NULL);
    char partly[64] = "";
    if (err != NULL) {
        perps_code code = perps_error_code(err);
        const char *message = perps_error_message(err);
        printf("  the failed write: %s\n", message);
        CHECK(code == PERPS_TIMEOUT || code == PERPS_TRANSPORT);
        CHECK(perps_error_may_have_reached_venue(err));
        const char *id = perps_error_stream_request_id(err);
        CHECK(id != NULL && strlen(id) == 36); /* a UUID, as every envelope request_id */
        if (id != NULL && strlen(id) < sizeof partly) {
            strcpy(partly, id);
            /* The id the message names for callers that read only the message. */
            char named[128];
            snprintf(named, sizeof named, "request_id %s may have been partly sent", id);
            CHECK(strstr(message, named) != NULL);
            /* A new request: not one of those written in full. */
            CHECK(strcmp(id, last_id) != 0 && strcmp(id, first_id) != 0);
            /* Not the x-request-id, which perps_error_request_id gives. */
            const char *x_request_id = perps_error_request_id(err);
            CHECK(x_request_id != NULL && strcmp(x_request_id, id) != 0);
            /* Stable while the error lives: the same borrowed text on every call. */
            CHECK(perps_error_stream_request_id(err) == id);
        }
        CHECK(perps_error_cl_ord_id(err) != NULL); /* the order to look up */
        perps_error_free(err);
    }

    /* The broken connection is replaced: its `disconnected` event lists the partly written
     * request among those awaiting their outcome, by that same id. */
    if (partly[0] != '\0') {
        char *down = next_with(st, "\"disconnected\"", NULL, 30);
        const char *unanswered = down != NULL ? strstr(down, "\"unanswered\":[") : NULL;
        CHECK(unanswered != NULL);
        CHECK(unanswered != NULL && strstr(unanswered, partly) != NULL);
        CHECK(unanswered != NULL && strstr(unanswered, last_id) != NULL);
        perps_string_free(down);
    }
    perps_stream_free(st);
}

int main(void) {
    /* A write that finds the socket full waits read_timeout_ms; the stalled venue's silence
     * must not end the connection first (stream_idle_timeout_ms). */
    perps_client *c;
    perps_session *s;
    if (!sandbox_account("test_stream_partly_sent", "{\"read_timeout_ms\":2000,\"stream_idle_timeout_ms\":120000}", &c, &s)) {
        return 2;
    }
    if (c != NULL && s != NULL) {
        test_errors_without_a_written_frame(c, s);
        test_a_partly_written_frame_is_named_by_its_envelope_request_id(c, s);
    }
    perps_session_free(s);
    perps_client_free(c);
    return check_summary();
}
