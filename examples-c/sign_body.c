/*
 * sign_body.c: sign a request body with libperps, no network needed.
 *
 * Shows the ownership rules of the C API:
 *  - every char* the library returns is yours: free it with perps_string_free();
 *  - a failing call returns NULL (or a non-zero perps_code) and, if you passed &err,
 *    a perps_error* that you read and free with perps_error_free();
 *  - every session you create is freed with perps_session_free().
 *
 * Build and run from the repository root:
 *   make lib && make -C examples-c sign_body && ./examples-c/sign_body
 */

#include "perps.h"

#include <stdio.h>
#include <string.h>

/* Print a failed call's error and free it. */
static void report(const char *what, perps_error *err) {
    fprintf(stderr, "%s failed (code %d): %s\n", what, (int)perps_error_code(err), perps_error_message(err));
    perps_error_free(err);
}

int main(void) {
    int status = 1;
    perps_error *err = NULL; /* set only when a call fails */
    perps_session *session = NULL;
    char *request_id = NULL;
    char *headers_json = NULL;
    char *address = NULL;

    printf("libperps %s\n", perps_version());

    /* A session with a fresh temporary Ed25519 key; its public key is the requestId. */
    session = perps_session_new(&err);
    if (session == NULL) {
        report("perps_session_new", err);
        goto done;
    }
    request_id = perps_session_request_id(session, &err);
    if (request_id == NULL) {
        report("perps_session_request_id", err);
        goto done;
    }
    printf("requestId: %s\n", request_id);

    /* The body is signed byte for byte: send exactly this string. */
    const char *body = "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\","
                       "\"qty\":\"0.01\",\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";
    printf("body: %s\n", body);

    /* 1. The four headers as one JSON object (allocated: free it). */
    headers_json = perps_sign_body(session, body, &err);
    if (headers_json == NULL) {
        report("perps_sign_body", err);
        goto done;
    }
    printf("\nperps_sign_body:\n  %s\n", headers_json);

    /* 2. The hot path: no allocation, the headers land in a struct on your stack. It
     *    returns a code instead of an error object; `sig` is written only on success. */
    perps_body_signature sig;
    perps_code code = perps_sign_body_into(session, (const uint8_t *)body, strlen(body), &sig);
    if (code != PERPS_OK) {
        fprintf(stderr, "perps_sign_body_into failed (code %d)\n", (int)code);
        goto done;
    }
    printf("\nperps_sign_body_into:\n");
    printf("  x-request-sign-version: %s\n", sig.version);
    printf("  x-request-id: %s\n", sig.request_id);
    printf("  x-request-timestamp: %s\n", sig.timestamp);
    printf("  x-request-signature: %s\n", sig.signature);

    /* A wallet address from a private key (a well-known development key: never fund it). */
    address = perps_wallet_address("bsc", "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", &err);
    if (address == NULL) {
        report("perps_wallet_address", err);
        goto done;
    }
    printf("\nbsc wallet address: %s\n", address);

    /* What a failure looks like: NULL back, and an error object to read and free. */
    char *nothing = perps_sign_body_at(session, body, "not-a-uuid", 0, &err);
    if (nothing == NULL) {
        printf("\nexpected failure: code %d: %s\n", (int)perps_error_code(err), perps_error_message(err));
        perps_error_free(err);
        err = NULL;
    }
    perps_string_free(nothing); /* NULL is fine */

    status = 0;

done:
    /* Every _free accepts NULL, so one cleanup path serves every exit. */
    perps_string_free(address);
    perps_string_free(headers_json);
    perps_string_free(request_id);
    perps_session_free(session);
    return status;
}
