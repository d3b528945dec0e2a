/*
 * tests/c/test_stream.c: the stream exports from C against the WebSocket test venue
 * (tests/common/ws_server.rs run as `ws_test_server`; tests/c/run.sh starts it and passes
 * its perps_url in PERPS_TEST_WS_URL): open, events, orders on the order stream, the
 * stream outliving its client and session, and close from another thread waking a blocked
 * perps_stream_next at once. Run under ASan/UBSan and valgrind by run.sh. The bad inputs
 * are rows of tests/bad_input/cases.txt (test_bad_input.c).
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "stream_events.h"

#include <pthread.h>
#include <time.h>

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

struct blocked {
    perps_stream *st;
    perps_code code;
    int returned_null;
    double returned_at;
};

static void *block_in_next(void *arg) {
    struct blocked *b = arg;
    for (;;) {
        perps_error *err = NULL;
        char *event = perps_stream_next(b->st, -1, &err);
        if (event == NULL) {
            b->returned_null = 1;
            b->code = err != NULL ? perps_error_code(err) : PERPS_OK;
            b->returned_at = now_s();
            perps_error_free(err);
            return NULL;
        }
        perps_string_free(event);
    }
}

static void market_stream(const char *url) {
    perps_error *err = NULL;
    perps_client *client = perps_client_new(url, url, NULL, &err);
    CHECK(client != NULL);
    perps_stream *st = perps_stream_open(client, NULL, "[{\"channel\":\"price\",\"symbol\":\"BTC-USD\"}]", &err);
    CHECK(st != NULL && err == NULL);
    if (st == NULL) {
        perps_error_free(err);
        perps_client_free(client);
        return;
    }
    perps_client_free(client); /* the stream keeps what it needs */
    char *event = next_with(st, "\"state\":\"connected\"", NULL, 5);
    CHECK(event != NULL && strstr(event, "\"stream\":\"market\"") != NULL);
    perps_string_free(event);
    event = next_with(st, "\"channel\":\"price\"", NULL, 5);
    CHECK(event != NULL && strstr(event, "\"symbol\":\"BTC-USD\"") != NULL && strstr(event, "\"received_ns\":") != NULL);
    perps_string_free(event);

    /* Orders go to an order stream. */
    char *sent = perps_stream_new_order(st, "{}", &err);
    CHECK(sent == NULL);
    if (check_error_at(err, PERPS_INVALID_STATE, "market stream", __LINE__)) perps_error_free(err);
    err = NULL;

    /* A zero timeout never blocks: an event or NULL with no error. */
    double t0 = now_s();
    event = perps_stream_next(st, 0, &err);
    CHECK(err == NULL && now_s() - t0 < 1.0);
    perps_string_free(event);

    /* Close from another thread wakes a blocked next at once. */
    struct blocked b = {st, PERPS_OK, 0, 0};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, block_in_next, &b) == 0);
    sleep_ms(300);
    double closed_at = now_s();
    perps_stream_close(st);
    pthread_join(thread, NULL);
    CHECK(b.returned_null && b.code == PERPS_STREAM_CLOSED);
    CHECK(b.returned_at - closed_at < 1.5); /* generous: valgrind serialises the threads */
    event = perps_stream_next(st, 1000, &err);
    CHECK(event == NULL);
    if (check_error_at(err, PERPS_STREAM_CLOSED, "closed", __LINE__)) perps_error_free(err);
    err = NULL;
    perps_stream_close(st); /* twice is harmless */
    double t1 = now_s();
    perps_stream_free(st);
    CHECK(now_s() - t1 < 3.0);
}

static void order_stream(const char *url) {
    perps_error *err = NULL;
    perps_client *client = perps_client_new(url, url, NULL, &err);
    perps_session *session =
        perps_session_from_api_key("c-test-token-9", "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb", &err);
    CHECK(client != NULL && session != NULL);
    CHECK(perps_session_set_session_id(session, "c-engine-1", &err) == PERPS_OK);
    perps_stream *st = perps_order_stream_open(client, session, &err);
    CHECK(st != NULL && err == NULL);
    perps_session_free(session);
    perps_client_free(client);
    if (st == NULL) {
        perps_error_free(err);
        return;
    }
    char *event = next_with(st, "\"state\":\"connected\"", NULL, 5);
    CHECK(event != NULL && strstr(event, "\"session_id\":\"c-engine-1\"") != NULL);
    perps_string_free(event);

    char *sent = perps_stream_new_order(
        st,
        "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\",\"price\":\"65000\","
        "\"time_in_force\":\"alo\",\"reduce_only\":false,\"cl_ord_id\":\"c-1\"}",
        &err);
    CHECK(sent != NULL && strstr(sent, "\"request_id\":\"") != NULL && strstr(sent, "\"cl_ord_id\":\"c-1\"") != NULL);
    perps_string_free(sent);
    event = next_with(st, "\"final\":true", NULL, 5);
    CHECK(event != NULL && strstr(event, "\"message\":\"success\"") != NULL && strstr(event, "\"cl_ord_id\":\"c-1\"") != NULL);
    perps_string_free(event);

    sent = perps_stream_new_order(st, "{\"symbol\":\"BTC-USD\"}", &err);
    CHECK(sent == NULL);
    if (check_error_at(err, PERPS_INVALID_ORDER, "missing required field", __LINE__)) perps_error_free(err);
    err = NULL;
    sent = perps_stream_cancel_order(st, "{\"order_id\":\"12\"}", &err);
    CHECK(sent == NULL);
    if (check_error_at(err, PERPS_INVALID_ARGUMENT, "order_id", __LINE__)) perps_error_free(err);
    err = NULL;
    /* A field named twice: refused as REST refuses it, never "the last one wins". */
    sent = perps_stream_cancel_order(st, "{\"order_id\":1,\"order_id\":2}", &err);
    CHECK(sent == NULL);
    if (check_error_at(err, PERPS_INVALID_ARGUMENT, "member name twice", __LINE__)) perps_error_free(err);
    err = NULL;
    sent = perps_stream_cancel_order(st, "{\"cl_ord_id\":\"c-1\"}", &err);
    CHECK(sent != NULL && strstr(sent, "\"cl_ord_id\":\"c-1\"") != NULL);
    perps_string_free(sent);
    event = next_with(st, "\"method\":\"order:cancel\"", NULL, 5);
    perps_string_free(event);
    perps_stream_free(st); /* without close first: free closes */
}

int main(void) {
    const char *url = getenv("PERPS_TEST_WS_URL");
    CHECK(url != NULL);
    if (url != NULL) {
        market_stream(url);
        order_stream(url);
    }
    return check_summary();
}
