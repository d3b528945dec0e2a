/*
 * tests/c/test_client.c: the client half of the libperps C ABI, exercised from C without a
 * venue (the sandbox flows are in tests/flows_c_abi.rs).
 *
 * Covers perps_client_new/_free, perps_prepare_signin, perps_login, perps_signin,
 * perps_new_order, perps_request, perps_client_sync_time, perps_session_set_session_id and
 * perps_session_set_impersonate: NULL for every pointer argument, invalid UTF-8, bad URLs
 * and options, wrong-state calls that must fail before anything is sent, a refused
 * connection (PERPS_TRANSPORT, never reached the venue), and a loopback socket that accepts
 * but never answers (PERPS_TIMEOUT, may have reached the venue, sent exactly once), whose
 * captured request shows that the body sent is the body signed.
 *
 * Build: cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude tests/c/test_client.c …
 */

#define _POSIX_C_SOURCE 200809L

#include "perps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "ed25519_verify.h"
#include "loopback.h"

/* Check code, a non-empty message containing `needle` (unless NULL) and the "reached"
 * flag; then free the error. */
static void expect_error_at(perps_error *e, perps_code code, const char *needle, int reached, int line) {
    if (!check_error_at(e, code, needle, line)) {
        return;
    }
    check_at(perps_error_may_have_reached_venue(e) == (reached != 0), "may_have_reached_venue as expected", line);
    perps_error_free(e);
}

#define EXPECT_ERROR(e, code, needle) expect_error_at((e), (code), (needle), 0, __LINE__)
#define EXPECT_ERROR_REACHED(e, code, needle, reached) expect_error_at((e), (code), (needle), (reached), __LINE__)

static const char BAD_UTF8[] = "\xff\xfe";
static const char ED_SEED_B58[] = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
static const char EVM_KEY[] = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
static const char EVM_ADDRESS[] = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
static const char ORDER[] =
    "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.010\",\"price\":\"65000.5\","
    "\"time_in_force\":\"gtc\",\"reduce_only\":false}";

/* ------------------------------------------------------------------------------------ */
/* Tests                                                                                 */
/* ------------------------------------------------------------------------------------ */

static void test_client_new(void) {
    perps_error *err = NULL;
    perps_client_free(NULL);

    perps_client *c = perps_client_new("https://api.example", "https://perps.example", NULL, &err);
    CHECK(c != NULL && err == NULL); /* no network at construction */
    perps_client_free(c);
    c = perps_client_new("https://api.example", "https://perps.example", "", &err);
    CHECK(c != NULL && err == NULL);
    perps_client_free(c);
    c = perps_client_new("http://127.0.0.1:1", "http://localhost:2", /* loopback http is fine */
                         "{\"connect_timeout_ms\":1000,\"read_timeout_ms\":2000,\"total_timeout_ms\":3000,"
                         "\"max_response_bytes\":65536,\"user_agent\":\"test/1\",\"allow_insecure_http\":false}",
                         &err);
    CHECK(c != NULL && err == NULL);
    perps_client_free(c);
    c = perps_client_new("http://api.example", "http://perps.example", "{\"allow_insecure_http\":true}", &err);
    CHECK(c != NULL && err == NULL);
    perps_client_free(c);

    CHECK(perps_client_new(NULL, "https://perps.example", NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "base_url");
    err = NULL;
    CHECK(perps_client_new("https://api.example", NULL, NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "perps_url");
    err = NULL;
    CHECK(perps_client_new(BAD_UTF8, "https://perps.example", NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_client_new("https://api.example", BAD_UTF8, NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_client_new("https://api.example", "https://perps.example", BAD_UTF8, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");

    static const char *bad_urls[] = {"", "not a url", "ftp://api.example", "http://api.example"};
    for (size_t i = 0; i < sizeof bad_urls / sizeof bad_urls[0]; i++) {
        err = NULL;
        CHECK(perps_client_new(bad_urls[i], "https://perps.example", NULL, &err) == NULL);
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);
        err = NULL;
        CHECK(perps_client_new("https://api.example", bad_urls[i], NULL, &err) == NULL);
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);
    }
    static const char *bad_options[] = {
        "not json", "[]", "{\"timeout_ms\":5}", "{\"read_timeout_ms\":\"5\"}", "{\"allow_insecure_http\":1}",
    };
    for (size_t i = 0; i < sizeof bad_options / sizeof bad_options[0]; i++) {
        err = NULL;
        CHECK(perps_client_new("https://api.example", "https://perps.example", bad_options[i], &err) == NULL);
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);
    }
    err = NULL;
    CHECK(perps_client_new("https://api.example", "https://perps.example", "{\"timeout_ms\":5}", &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "timeout_ms");
    CHECK(perps_client_new(NULL, NULL, NULL, NULL) == NULL);
}

static void test_session_headers(void) {
    perps_error *err = NULL;
    perps_session *s = perps_session_new(NULL);
    CHECK(s != NULL);

    CHECK(perps_session_set_session_id(s, "sess-123", &err) == PERPS_OK && err == NULL);
    CHECK(perps_session_set_session_id(s, NULL, &err) == PERPS_OK && err == NULL); /* clears */
    CHECK(perps_session_set_impersonate(s, "cv_vault1", &err) == PERPS_OK && err == NULL);
    CHECK(perps_session_set_impersonate(s, NULL, &err) == PERPS_OK && err == NULL);

    CHECK(perps_session_set_session_id(NULL, "x", &err) == PERPS_INVALID_ARGUMENT);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_session_set_impersonate(NULL, "cv_x", &err) == PERPS_INVALID_ARGUMENT);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_session_set_session_id(s, BAD_UTF8, &err) == PERPS_INVALID_ARGUMENT);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_session_set_impersonate(s, BAD_UTF8, &err) == PERPS_INVALID_ARGUMENT);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    /* Values travel in a header: no CR/LF injection. */
    err = NULL;
    CHECK(perps_session_set_session_id(s, "a\r\nx-evil: 1", &err) == PERPS_INVALID_ARGUMENT);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);
    err = NULL;
    CHECK(perps_session_set_impersonate(s, "cv_a\r\nx-evil: 1", &err) == PERPS_INVALID_ARGUMENT);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);
    CHECK(perps_session_set_session_id(NULL, NULL, NULL) == PERPS_INVALID_ARGUMENT);
    perps_session_free(s);
}

/* NULL arguments, wrong states and bad inputs: all fail before anything is sent. The
 * client points at a closed port, so a request that did go out would be PERPS_TRANSPORT. */
static void test_fail_before_sending(void) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
    perps_error *err = NULL;
    perps_client *c = perps_client_new(url, url, NULL, &err);
    perps_session *fresh = perps_session_new(NULL);
    perps_session *api = perps_session_from_api_key("tok-abc", ED_SEED_B58, NULL);
    CHECK(c != NULL && fresh != NULL && api != NULL);
    if (c == NULL || fresh == NULL || api == NULL) {
        perps_error_free(err);
        perps_client_free(c);
        perps_session_free(fresh);
        perps_session_free(api);
        return;
    }

    /* perps_prepare_signin */
    CHECK(perps_prepare_signin(NULL, fresh, "bsc", EVM_ADDRESS, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "client");
    err = NULL;
    CHECK(perps_prepare_signin(c, NULL, "bsc", EVM_ADDRESS, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_prepare_signin(c, fresh, NULL, EVM_ADDRESS, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "chain");
    err = NULL;
    CHECK(perps_prepare_signin(c, fresh, "bsc", NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "address");
    err = NULL;
    CHECK(perps_prepare_signin(c, fresh, "eth", EVM_ADDRESS, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "chain");
    err = NULL;
    CHECK(perps_prepare_signin(c, fresh, "bsc", BAD_UTF8, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    CHECK(perps_prepare_signin(NULL, NULL, NULL, NULL, NULL) == NULL);

    /* perps_login: no pending challenge is a state error, not a request. */
    err = NULL;
    CHECK(perps_login(c, fresh, "0x00", 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_STATE, NULL);
    err = NULL;
    CHECK(perps_login(NULL, fresh, "0x00", 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "client");
    err = NULL;
    CHECK(perps_login(c, NULL, "0x00", 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_login(c, fresh, NULL, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "signature");
    err = NULL;
    CHECK(perps_login(c, fresh, BAD_UTF8, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    CHECK(perps_login(NULL, NULL, NULL, 0, NULL) == NULL);

    /* perps_signin: the key is checked before anything is sent. */
    err = NULL;
    CHECK(perps_signin(NULL, fresh, "bsc", EVM_KEY, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "client");
    err = NULL;
    CHECK(perps_signin(c, NULL, "bsc", EVM_KEY, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_signin(c, fresh, NULL, EVM_KEY, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "chain");
    err = NULL;
    CHECK(perps_signin(c, fresh, "bsc", NULL, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "wallet_private_key");
    err = NULL;
    CHECK(perps_signin(c, fresh, "bsc", BAD_UTF8, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_signin(c, fresh, "bsc", "0x1234", 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_KEY, NULL);
    err = NULL;
    CHECK(perps_signin(c, fresh, "solana", "0OIl0OIl", 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_KEY, NULL);
    CHECK(perps_signin(NULL, NULL, NULL, NULL, 0, NULL) == NULL);
    /* chain and wallet_private_key swapped: the key must not come back in the message. */
    err = NULL;
    CHECK(perps_signin(c, fresh, EVM_KEY, "bsc", 0, &err) == NULL);
    CHECK(err != NULL && strstr(perps_error_message(err), "ac0974bec39a") == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);

    /* perps_new_order: no token → state error; a bad order → order error; neither sends. */
    err = NULL;
    CHECK(perps_new_order(c, fresh, ORDER, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_STATE, NULL);
    err = NULL;
    CHECK(perps_new_order(c, api, "{\"symbol\":\"BTC-USD\",\"reduceOnly\":true}", &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ORDER, "reduceOnly");
    err = NULL;
    CHECK(perps_new_order(NULL, api, ORDER, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "client");
    err = NULL;
    CHECK(perps_new_order(c, NULL, ORDER, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_new_order(c, api, NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "order_json");
    err = NULL;
    CHECK(perps_new_order(c, api, BAD_UTF8, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    CHECK(perps_new_order(NULL, NULL, NULL, NULL) == NULL);

    /* perps_request */
    err = NULL;
    CHECK(perps_request(c, fresh, "GET", "/api/query_open_orders", NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_STATE, NULL);
    err = NULL;
    CHECK(perps_request(NULL, api, "GET", "/api/x", NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "client");
    err = NULL;
    CHECK(perps_request(c, NULL, "GET", "/api/x", NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_request(c, api, NULL, "/api/x", NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "method");
    err = NULL;
    CHECK(perps_request(c, api, "GET", NULL, NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "path");
    err = NULL;
    CHECK(perps_request(c, api, "POST", "/api/x", BAD_UTF8, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    static const char *bad_methods[] = {"PATCH", "", "GET /x HTTP/1.1\r\n"};
    for (size_t i = 0; i < sizeof bad_methods / sizeof bad_methods[0]; i++) {
        err = NULL;
        CHECK(perps_request(c, api, bad_methods[i], "/api/x", NULL, &err) == NULL);
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "method");
    }
    static const char *bad_paths[] = {"", "api/x", "http://evil.example/api/x", "/api/x\r\nx-evil: 1", "/a b"};
    for (size_t i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
        err = NULL;
        CHECK(perps_request(c, api, "GET", bad_paths[i], NULL, &err) == NULL);
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "path");
    }
    CHECK(perps_request(NULL, NULL, NULL, NULL, NULL, NULL) == NULL);

    /* perps_client_sync_time */
    int64_t offset = 12345;
    err = NULL;
    CHECK(perps_client_sync_time(NULL, &offset, &err) == PERPS_INVALID_ARGUMENT);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "client");
    CHECK(offset == 12345);
    CHECK(perps_client_sync_time(NULL, NULL, NULL) == PERPS_INVALID_ARGUMENT);

    perps_client_free(c);
    perps_session_free(fresh);
    perps_session_free(api);
}

/* A refused connection: PERPS_TRANSPORT, and the venue cannot have seen anything. */
static void test_refused_connection(void) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
    perps_error *err = NULL;
    perps_client *c = perps_client_new(url, url, "{\"connect_timeout_ms\":2000}", &err);
    perps_session *fresh = perps_session_new(NULL);
    perps_session *api = perps_session_from_api_key("tok-abc", ED_SEED_B58, NULL);
    CHECK(c != NULL && fresh != NULL && api != NULL);
    if (c != NULL && fresh != NULL && api != NULL) {
        CHECK(perps_prepare_signin(c, fresh, "bsc", EVM_ADDRESS, &err) == NULL);
        EXPECT_ERROR_REACHED(err, PERPS_TRANSPORT, NULL, 0);
        err = NULL;
        CHECK(perps_signin(c, fresh, "bsc", EVM_KEY, 3600, &err) == NULL);
        EXPECT_ERROR_REACHED(err, PERPS_TRANSPORT, NULL, 0);
        err = NULL;
        CHECK(perps_new_order(c, api, ORDER, &err) == NULL);
        EXPECT_ERROR_REACHED(err, PERPS_TRANSPORT, NULL, 0);
        err = NULL;
        CHECK(perps_request(c, api, "POST", "/api/cancel_order", "{\"order_id\":1}", &err) == NULL);
        EXPECT_ERROR_REACHED(err, PERPS_TRANSPORT, NULL, 0);
        err = NULL;
        int64_t offset = 12345;
        CHECK(perps_client_sync_time(c, &offset, &err) == PERPS_TRANSPORT);
        CHECK(offset == 12345); /* out-parameter written only on success */
        EXPECT_ERROR_REACHED(err, PERPS_TRANSPORT, NULL, 0);
        /* The session is unchanged by the failed sign-in. */
        char *info = perps_session_info(fresh, NULL);
        CHECK(info != NULL && strstr(info, "\"pending_signin\":false") != NULL &&
              strstr(info, "\"has_token\":false") != NULL);
        perps_string_free(info);
    }
    perps_client_free(c);
    perps_session_free(fresh);
    perps_session_free(api);
}

/* A venue that accepts the connection and never answers: PERPS_TIMEOUT, "may have reached
 * the venue", exactly one connection (never retried), and the captured request carries the
 * bearer, the session headers and a body signature over exactly the body sent. */
static void test_silent_venue(void) {
    int port = 0;
    int listener = loopback_socket(8, &port);
    CHECK(listener >= 0);
    if (listener < 0) {
        return;
    }
    CHECK(fcntl(listener, F_SETFL, O_NONBLOCK) == 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    perps_error *err = NULL;
    perps_client *c = perps_client_new(
        url, url, "{\"connect_timeout_ms\":2000,\"read_timeout_ms\":300,\"total_timeout_ms\":3000}", &err);
    perps_session *api = perps_session_from_api_key("tok-abc", ED_SEED_B58, NULL);
    CHECK(c != NULL && api != NULL);
    CHECK(perps_session_set_session_id(api, "sess-42", NULL) == PERPS_OK);
    CHECK(perps_session_set_impersonate(api, "cv_vault7", NULL) == PERPS_OK);

    if (c != NULL && api != NULL) {
        CHECK(perps_new_order(c, api, ORDER, &err) == NULL);
        /* The order had no cl_ord_id: the error names the one generated, and the x-request-id. */
        char cl_ord_id[64] = "", sent_id[64] = "";
        if (err != NULL && perps_error_cl_ord_id(err) != NULL) {
            snprintf(cl_ord_id, sizeof cl_ord_id, "%s", perps_error_cl_ord_id(err));
        }
        if (err != NULL && perps_error_request_id(err) != NULL) {
            snprintf(sent_id, sizeof sent_id, "%s", perps_error_request_id(err));
        }
        CHECK(strlen(cl_ord_id) == 26);
        EXPECT_ERROR_REACHED(err, PERPS_TIMEOUT, NULL, 1);

        /* Exactly one connection was made. */
        int conn = accept(listener, NULL, NULL);
        CHECK(conn >= 0);
        int extra = accept(listener, NULL, NULL);
        CHECK(extra < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
        if (extra >= 0) {
            close(extra);
        }

        /* Read what was sent (the client has given up, so no more will come). */
        static char request[16384];
        size_t used = 0;
        if (conn >= 0) {
            for (;;) {
                ssize_t n = recv(conn, request + used, sizeof request - 1 - used, MSG_DONTWAIT);
                if (n <= 0) {
                    break;
                }
                used += (size_t)n;
            }
            close(conn);
        }
        request[used] = '\0';
        const char *body = strstr(request, "\r\n\r\n");
        body = body ? body + 4 : NULL;
        CHECK(strncmp(request, "POST /api/new_order HTTP/1.1\r\n", 30) == 0);

        char value[256], id[64], ts[32], sig[128];
        CHECK(header_value(request, "authorization", value, sizeof value) && strcmp(value, "Bearer tok-abc") == 0);
        CHECK(header_value(request, "content-type", value, sizeof value) &&
              strncmp(value, "application/json", 16) == 0);
        CHECK(header_value(request, "x-session-id", value, sizeof value) && strcmp(value, "sess-42") == 0);
        CHECK(header_value(request, "x-impersonate", value, sizeof value) && strcmp(value, "cv_vault7") == 0);
        CHECK(header_value(request, "x-request-sign-version", value, sizeof value) && strcmp(value, "v1") == 0);
        int have = header_value(request, "x-request-id", id, sizeof id) &&
                   header_value(request, "x-request-timestamp", ts, sizeof ts) &&
                   header_value(request, "x-request-signature", sig, sizeof sig);
        CHECK(have);
        CHECK(have && strcmp(id, sent_id) == 0);

        /* The body sent is the validated serialisation with the generated cl_ord_id in its
         * documented place (last here), and the signature covers it. */
        char *serialised = perps_order_serialize(ORDER, NULL);
        char expected_body[512] = "";
        if (serialised != NULL && strlen(serialised) > 1) {
            snprintf(expected_body, sizeof expected_body, "%.*s,\"cl_ord_id\":\"%s\"}", (int)strlen(serialised) - 1,
                     serialised, cl_ord_id);
        }
        perps_string_free(serialised);
        CHECK(body != NULL && strcmp(body, expected_body) == 0);
        if (have && body != NULL) {
            /* Verified by OpenSSL under the session's key (a fresh signature is hedged: a
             * re-signature would not reproduce it). */
            char *request_key = perps_session_request_id(api, NULL);
            CHECK(request_key != NULL && body_signature_verifies(request_key, id, ts, body, strlen(body), sig));
            perps_string_free(request_key);
        }

        /* perps_client_sync_time against the same silent venue: a timeout, offset untouched. */
        int64_t offset = 12345;
        err = NULL;
        CHECK(perps_client_sync_time(c, &offset, &err) == PERPS_TIMEOUT);
        EXPECT_ERROR_REACHED(err, PERPS_TIMEOUT, NULL, 1);
        CHECK(offset == 12345);
        conn = accept(listener, NULL, NULL);
        if (conn >= 0) {
            close(conn);
        }
    }
    perps_client_free(c);
    perps_session_free(api);
    close(listener);
}

int main(void) {
    test_client_new();
    test_session_headers();
    test_fail_before_sending();
    test_refused_connection();
    test_silent_venue();

    return check_summary();
}
