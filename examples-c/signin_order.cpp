/*
 * libperps C++ example: sign in with a wallet, log in, place an order, and handle errors as
 * perps::Error exceptions — with include/perps.hpp, the header-only C++17 layer.
 *
 *   signin_order_cpp BASE_URL PERPS_URL [bsc|solana]
 *
 * Build (see examples-c/Makefile, target signin_order_cpp):
 *   g++ -std=c++17 -Wall -Wextra -Werror -pedantic -Iinclude examples-c/signin_order.cpp \
 *       -Ltarget/release -lperps -Wl,-rpath,$PWD/target/release -o signin_order_cpp
 *
 * The wallet keys are well-known TEST keys (never use them with real funds). As in the C
 * example, the wallet signature is a separate step (perps::wallet_sign) to show where an
 * external wallet would sign; perps::Client::signin does all of sign-in in one call.
 */
#include <cstdlib>
#include <iostream>
#include <string>

#include "perps.hpp"

// Hardhat/Anvil account #0 (published test key) and RFC 8032 test 2 as a Solana keypair.
static const char *const BSC_TEST_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
static const char *const SOLANA_TEST_KEY =
    "[76,205,8,155,40,255,150,218,157,182,195,70,236,17,78,15,91,138,49,159,53,171,166,36,"
    "218,140,246,237,79,184,166,251,61,64,23,195,232,67,137,90,146,183,10,167,77,27,126,188,"
    "156,152,44,207,46,196,150,140,192,205,85,241,42,244,102,12]";

// Print everything a perps::Error carries.
static void print_error(const char *what, const perps::Error &e) {
    std::cout << what << ": " << perps::code_name(e.code()) << " (" << e.code() << "): " << e.what() << "\n";
    if (e.http_status() != 0) {
        std::cout << "  HTTP " << e.http_status() << ", body: " << e.body().value_or("(none)") << "\n";
    }
    if (e.may_have_reached_venue()) {
        std::cout << "  the request may have reached the venue: check before resending\n";
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        std::cerr << "usage: " << argv[0] << " BASE_URL PERPS_URL [bsc|solana]\n";
        return 2;
    }
    const std::string base_url = argv[1];
    const std::string perps_url = argv[2];
    const std::string chain = argc > 3 ? argv[3] : "bsc";
    const std::string wallet_key = chain == "solana" ? SOLANA_TEST_KEY : BSC_TEST_KEY;
    std::cout << "libperps " << perps::version() << ", " << chain << "\n";

    try {
        // --- README "Use from C++" (the same lines) ---
        perps::Client client(base_url, perps_url);
        perps::Session session;  // a fresh request-signing key
        std::string address = perps::wallet_address(chain, wallet_key);
        std::string payload = client.prepare_signin(session, chain, address);  // challenge verified
        std::string signature = perps::wallet_sign(chain, wallet_key, payload);  // the wallet's part
        client.login(session, signature, 3600);  // the token stays in the session
        std::string order = R"({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01",)"
                            R"("price":"65000","time_in_force":"gtc","reduce_only":false})";
        std::cout << "order placed: " << client.new_order(session, order) << "\n";
        try {  // a limit order without a price: refused before anything is sent
            client.new_order(session, R"({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01",)"
                                      R"("time_in_force":"gtc","reduce_only":false})");
        } catch (const perps::Error &e) {
            std::cout << "refused: " << perps::code_name(e.code()) << " (" << e.code() << "): " << e.what() << "\n";
        }
        // --- end of the README snippet ---

        std::cout << "session: " << session.info() << "\n";

        // A refusal by the venue carries the HTTP status and the venue's body.
        try {
            client.request(session, "GET", "/api/no_such_endpoint");
            std::cout << "unexpected: the venue accepted an unknown endpoint\n";
            return 1;
        } catch (const perps::Error &e) {
            print_error("venue refused", e);
            if (e.code() != PERPS_HTTP_STATUS || e.http_status() != 404) {
                return 1;
            }
        }
        return EXIT_SUCCESS;
    } catch (const perps::Error &e) {  // any step above that failed
        print_error("failed", e);
    } catch (const std::exception &e) {
        std::cout << "failed: " << e.what() << "\n";
    }
    return EXIT_FAILURE;
}
