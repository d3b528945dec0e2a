/*
 * libperps example: one trading call over REST from the command line, signed in with the
 * TEST wallet key (never use it with real funds): the one-call sign-in, then one endpoint
 * export, named after the venue endpoint, with its parameters as JSON.
 *
 *   rest_call BASE_URL PERPS_URL METHOD [PARAMS_JSON]
 *
 * METHOD is new_order, cancel_order, query_order, query_open_orders or query_positions. It
 * prints the venue's answer (exit status 0), or the library's error (1; 3 for
 * PERPS_NOT_FOUND, an order the venue does not know). examples-c/market_maker.sh uses it to
 * place an order of "another engine" on the market maker's account, and to check afterwards
 * that the market maker left it alone.
 */
#include <stdio.h>
#include <string.h>

#include "perps.h"

static const char *const BSC_TEST_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

typedef char *(*endpoint_fn)(const perps_client *, const perps_session *, const char *, perps_error **);
static const struct {
    const char *name;
    endpoint_fn call;
} METHODS[] = {
    {"cancel_order", perps_cancel_order},
    {"query_order", perps_query_order},
    {"query_open_orders", perps_query_open_orders},
    {"query_positions", perps_query_positions},
};

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s BASE_URL PERPS_URL METHOD [PARAMS_JSON]\n", argv[0]);
        return 2;
    }
    const char *method = argv[3], *params = argc > 4 ? argv[4] : NULL;
    endpoint_fn call = NULL;
    for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++) {
        call = strcmp(METHODS[i].name, method) == 0 ? METHODS[i].call : call;
    }
    if (call == NULL && strcmp(method, "new_order") != 0) {
        fprintf(stderr, "%s: unknown METHOD \"%s\"\n", argv[0], method);
        return 2;
    }
    perps_error *err = NULL;
    char *login = NULL, *answer = NULL;
    perps_client *client = perps_client_new(argv[1], argv[2], NULL, &err);
    perps_session *session = client ? perps_session_new(&err) : NULL;
    if (session != NULL) {
        login = perps_signin(client, session, "bsc", BSC_TEST_KEY, 3600, &err);
    }
    if (login != NULL) { /* perps_new_order takes the order itself, and is never retried */
        answer = call ? call(client, session, params, &err) : perps_new_order(client, session, params, &err);
    }
    int status = 0;
    if (answer != NULL) {
        printf("%s\n", answer);
    } else {
        status = perps_error_code(err) == PERPS_NOT_FOUND ? 3 : 1;
        fprintf(stderr, "%s %s failed: code %d: %s\n", argv[0], method, (int)perps_error_code(err), perps_error_message(err));
        perps_error_free(err);
    }
    perps_string_free(answer);
    perps_string_free(login);
    perps_session_free(session);
    perps_client_free(client);
    return status;
}
