/*
 * libperps example: sign in with a wallet, log in, place an order — each step printed.
 *
 *   signin_order BASE_URL PERPS_URL [bsc|solana]
 *
 * The wallet key is a well-known TEST key (never use it with real funds). The wallet
 * signature is made with perps_wallet_sign, as a separate step, to show the path where the
 * wallet lives elsewhere (a browser wallet, a hardware device): only the payload goes to
 * the wallet and only the signature comes back.
 */
#include <stdio.h>
#include <string.h>

#include "perps.h"

/* Hardhat/Anvil account #0 (published test key) and RFC 8032 test 2 as a Solana keypair. */
static const char *const BSC_TEST_KEY =
    "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
static const char *const SOLANA_TEST_KEY =
    "[76,205,8,155,40,255,150,218,157,182,195,70,236,17,78,15,91,138,49,159,53,171,166,36,"
    "218,140,246,237,79,184,166,251,61,64,23,195,232,67,137,90,146,183,10,167,77,27,126,188,"
    "156,152,44,207,46,196,150,140,192,205,85,241,42,244,102,12]";

static const char *const ORDER =
    "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\","
    "\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";

/* Print a failure the documented way and free the error object. */
static int fail(const char *step, perps_error *err) {
    fprintf(stderr, "%s failed: code %d: %s\n", step, (int)perps_error_code(err), perps_error_message(err));
    if (perps_error_http_status(err) != 0) {
        fprintf(stderr, "  HTTP %u, body: %s\n", (unsigned)perps_error_http_status(err),
                perps_error_body(err) ? perps_error_body(err) : "(none)");
    }
    if (perps_error_may_have_reached_venue(err)) {
        fprintf(stderr, "  the request may have reached the venue: check before resending\n");
    }
    perps_error_free(err);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s BASE_URL PERPS_URL [bsc|solana]\n", argv[0]);
        return 2;
    }
    const char *chain = argc > 3 ? argv[3] : "bsc";
    const char *wallet_key = strcmp(chain, "solana") == 0 ? SOLANA_TEST_KEY : BSC_TEST_KEY;
    perps_error *err = NULL;
    int status = 1;
    char *address = NULL, *request_id = NULL, *payload = NULL, *signature = NULL;
    char *login = NULL, *order = NULL;

    printf("libperps %s\n", perps_version());
    perps_client *client = perps_client_new(argv[1], argv[2], NULL, &err);
    if (client == NULL) return fail("perps_client_new", err);
    perps_session *session = perps_session_new(&err);
    if (session == NULL) {
        perps_client_free(client);
        return fail("perps_session_new", err);
    }

    if ((address = perps_wallet_address(chain, wallet_key, &err)) == NULL) { fail("perps_wallet_address", err); goto done; }
    if ((request_id = perps_session_request_id(session, &err)) == NULL) { fail("perps_session_request_id", err); goto done; }
    printf("1. wallet %s (%s), request key %s\n", address, chain, request_id);

    if ((payload = perps_prepare_signin(client, session, chain, address, &err)) == NULL) { fail("perps_prepare_signin", err); goto done; }
    printf("2. challenge verified (ES256, requestId, address, expiry): %.80s...\n", payload);

    if ((signature = perps_wallet_sign(chain, wallet_key, payload, &err)) == NULL) { fail("perps_wallet_sign", err); goto done; }
    printf("3. wallet signed the sign-in message: %.40s...\n", signature);

    if ((login = perps_login(client, session, signature, 3600, &err)) == NULL) { fail("perps_login", err); goto done; }
    printf("4. logged in (token kept in the session, valid for 1 h)\n");

    if ((order = perps_new_order(client, session, ORDER, &err)) == NULL) { fail("perps_new_order", err); goto done; }
    printf("5. order placed: %s\n", order);
    status = 0;

done:
    perps_string_free(order);
    perps_string_free(login);
    perps_string_free(signature);
    perps_string_free(payload);
    perps_string_free(request_id);
    perps_string_free(address);
    perps_session_free(session);
    perps_client_free(client);
    return status;
}
