/*
 * tests/cpp/test_hpp.cpp: the offline part of include/perps.hpp, the C++17 layer.
 *
 * Checks that every wrapper returns what the C API returns (known answers shared with
 * tests/c/test_core.c), that every failure is thrown as perps::Error with the right code
 * and the C error object's details, that NUL bytes inside std::string arguments are refused
 * instead of cut short, and that the handle types are move-only and free exactly once
 * (moved-from objects are empty; run under valgrind by tests/cpp/run.sh, which fails on
 * any leak, double free or invalid access).
 *
 * No network: the only client calls go to 127.0.0.1:1 (connection refused) or fail before
 * sending. Prints "N passed, M failed" last and exits non-zero on any failure.
 */
#include "perps.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// ------------------------------------------------------------------------------------
// A tiny harness
// ------------------------------------------------------------------------------------

#include "check.hpp"

static bool contains(const std::string &haystack, const std::string &needle) {
    return haystack.find(needle) != std::string::npos;
}

// `f` must throw perps::Error with `code`, a message containing `needle` (when not NULL),
// and none of the venue details an offline failure cannot have.
template <typename F>
static void expect_error_at(F f, perps_code code, const char *needle, int line) {
    try {
        f();
        check_at(false, "a perps::Error was thrown", line);
    } catch (const perps::Error &e) {
        if (std::getenv("PERPS_TEST_VERBOSE") != nullptr) {
            std::cout << "  line " << line << ": " << perps::code_name(e.code()) << ": " << e.what() << "\n";
        }
        check_at(e.code() == code, "e.code() == expected code", line);
        if (e.code() != code) {
            std::cerr << "     got " << perps::code_name(e.code()) << " (" << e.what() << "), expected "
                      << perps::code_name(code) << "\n";
        }
        check_at(std::strlen(e.what()) > 0, "the message is not empty", line);
        check_at(std::strcmp(e.message(), e.what()) == 0, "message() == what()", line);
        if (needle != nullptr) {
            check_at(contains(e.what(), needle), "the message names the problem", line);
            if (!contains(e.what(), needle)) {
                std::cerr << "     message \"" << e.what() << "\" does not contain \"" << needle << "\"\n";
            }
        }
        check_at(e.http_status() == 0, "offline error: no HTTP status", line);
        check_at(!e.body().has_value(), "offline error: no venue body", line);
        check_at(!e.may_have_reached_venue(), "offline error: never reached the venue", line);
    } catch (...) {
        check_at(false, "the exception is a perps::Error", line);
    }
}
#define EXPECT_ERROR(expr, code, needle) expect_error_at([&] { (void)(expr); }, (code), (needle), __LINE__)

// ------------------------------------------------------------------------------------
// Known answers (computed independently of the library)
// ------------------------------------------------------------------------------------

// Shared with the C tests: keys, known answers, payloads, CERTS and ORDER.
#include "../c/fixtures.h"

static const std::vector<std::uint8_t> SOL_RAW_SIG_BYTES(std::begin(SOL_RAW_SIG), std::end(SOL_RAW_SIG));

// A loopback venue that refuses connections: offline, but a valid client.
static const char DEAD_BASE[] = "http://127.0.0.1:1/auth";
static const char DEAD_PERPS[] = "http://127.0.0.1:1/perps";

// ------------------------------------------------------------------------------------
// Types: what the compiler must accept and refuse
// ------------------------------------------------------------------------------------

static_assert(std::is_base_of_v<std::runtime_error, perps::Error>, "Error is a std::runtime_error");
static_assert(std::is_nothrow_copy_constructible_v<perps::Error>, "copying an Error never throws");
static_assert(!std::is_copy_constructible_v<perps::Session> && !std::is_copy_assignable_v<perps::Session>,
              "Session is move-only");
static_assert(!std::is_copy_constructible_v<perps::Client> && !std::is_copy_assignable_v<perps::Client>,
              "Client is move-only");
static_assert(std::is_nothrow_move_constructible_v<perps::Session> &&
                  std::is_nothrow_move_assignable_v<perps::Session>,
              "moving a Session never throws (std::vector relies on it)");
static_assert(std::is_nothrow_move_constructible_v<perps::Client> && std::is_nothrow_move_assignable_v<perps::Client>,
              "moving a Client never throws");
static_assert(noexcept(perps::version()) && noexcept(perps::code_name(PERPS_OK)), "noexcept where nothing can fail");
static_assert(noexcept(std::declval<const perps::Session &>().try_sign_body_into(
                  std::string_view(), std::declval<perps_body_signature &>())),
              "the exception-free hot path is noexcept");

// ------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------

static void test_version_and_codes() {
    std::string expected = std::to_string(PERPS_VERSION_MAJOR) + "." + std::to_string(PERPS_VERSION_MINOR) + "." +
                           std::to_string(PERPS_VERSION_PATCH);
    CHECK(perps::version() == expected);
    CHECK(std::string(perps::code_name(PERPS_OK)) == "PERPS_OK");
    CHECK(std::string(perps::code_name(PERPS_INVALID_ORDER)) == "PERPS_INVALID_ORDER");
    CHECK(std::string(perps::code_name(PERPS_PANIC)) == "PERPS_PANIC");
    CHECK(std::string(perps::code_name(PERPS_NOT_FOUND)) == "PERPS_NOT_FOUND" && PERPS_NOT_FOUND == 13);
    CHECK(std::string(perps::code_name(PERPS_RATE_LIMITED)) == "PERPS_RATE_LIMITED" && PERPS_RATE_LIMITED == 14);
    CHECK(std::string(perps::code_name(static_cast<perps_code>(42))) == "PERPS_UNKNOWN");
}

static void test_error_type() {
    perps::Error e(PERPS_HTTP_STATUS, "the venue answered HTTP 503", 503, std::string(R"({"code":503})"), true);
    perps::Error copy = e;  // nothrow, shares the body
    CHECK(copy.code() == PERPS_HTTP_STATUS);
    CHECK(std::string(copy.what()) == "the venue answered HTTP 503");
    CHECK(copy.http_status() == 503);
    CHECK(copy.body() == std::optional<std::string>(R"({"code":503})"));
    CHECK(copy.may_have_reached_venue());
    CHECK(!copy.cl_ord_id() && !copy.x_request_id() && copy.retry_after_ms() == -1);  // unknown by default
    CHECK(!copy.stream_request_id());

    perps::Error timed_out(PERPS_TIMEOUT, "timed out", 0, std::nullopt, true, std::string("mm-01J0"),
                           std::string("0f8fad5b-d9cb-469f-a165-70867728950e"), 1500);
    perps::Error copied = timed_out;
    CHECK(copied.cl_ord_id() == std::optional<std::string>("mm-01J0"));
    CHECK(copied.x_request_id() == std::optional<std::string>("0f8fad5b-d9cb-469f-a165-70867728950e"));
    CHECK(copied.retry_after_ms() == 1500);
    CHECK(!copied.stream_request_id());

    perps::Error partly(PERPS_TIMEOUT, "partly sent", 0, std::nullopt, true, std::string("mm-01J1"),
                        std::string("0f8fad5b-d9cb-469f-a165-70867728950e"), -1,
                        std::string("7c9e6679-7425-40de-944b-e07fc1f90ae7"));
    perps::Error partly_copy = partly;
    CHECK(partly_copy.stream_request_id() == std::optional<std::string>("7c9e6679-7425-40de-944b-e07fc1f90ae7"));
    CHECK(partly_copy.x_request_id() == std::optional<std::string>("0f8fad5b-d9cb-469f-a165-70867728950e"));

    // Caught as a std::exception, with the C library's message.
    try {
        perps::order_serialize("{}");
        CHECK(false);
    } catch (const std::exception &any) {
        CHECK(contains(any.what(), "symbol"));
    }
}

static void test_session_offline() {
    perps::Session s;
    std::string id = s.request_id();
    CHECK(id.size() >= 43 && id.size() <= 44);
    CHECK(id == s.request_id());
    CHECK(perps::Session().request_id() != id);  // a fresh key each time

    std::string info = s.info();
    CHECK(contains(info, "\"request_id\":\"" + id + "\""));
    CHECK(contains(info, "\"has_token\":false"));
    EXPECT_ERROR(s.token(), PERPS_INVALID_STATE, "token");

    s.set_session_id("ws-session-1");
    CHECK(contains(s.info(), "\"session_id\":\"ws-session-1\""));
    s.set_session_id(std::nullopt);
    CHECK(contains(s.info(), "\"session_id\":null"));
    s.set_impersonate(std::string("cv_vault"));
    CHECK(contains(s.info(), "\"impersonate\":\"cv_vault\""));
    s.set_impersonate(std::nullopt);
    s.logout();  // no token: still fine
    EXPECT_ERROR(s.set_session_id(std::string("a\0b", 3)), PERPS_INVALID_ARGUMENT, "NUL");
}

static void test_api_key_session() {
    perps::Session s = perps::Session::from_api_key("api-token-123", ED_SEED_B58);
    CHECK(s.request_id() == ED_REQUEST_ID);
    CHECK(s.token() == "api-token-123");
    CHECK(contains(s.info(), "\"has_token\":true"));
    s.logout();
    EXPECT_ERROR(s.token(), PERPS_INVALID_STATE, nullptr);

    EXPECT_ERROR(perps::Session::from_api_key("tok", "not-a-key"), PERPS_INVALID_KEY, nullptr);
    EXPECT_ERROR(perps::Session::from_api_key("tok", ED_BAD_PAIR_B58), PERPS_INVALID_KEY, nullptr);
    EXPECT_ERROR(perps::Session::from_api_key("tok", "\xff\xfe"), PERPS_INVALID_ARGUMENT, "UTF-8");
    EXPECT_ERROR(perps::Session::from_api_key(std::string("tok\0en", 6), ED_SEED_B58), PERPS_INVALID_ARGUMENT,
                 "api_token contains a NUL byte");
}

static void test_sign_body() {
    perps::Session s = perps::Session::from_api_key("tok", ED_SEED_B58);

    std::string at = s.sign_body_at(KAT_BODY, KAT_ID, KAT_TS);
    CHECK(contains(at, R"("x-request-sign-version":"v1")"));
    CHECK(contains(at, std::string(R"("x-request-id":")") + KAT_ID + "\""));
    CHECK(contains(at, R"("x-request-timestamp":"1700000000123")"));
    CHECK(contains(at, std::string(R"("x-request-signature":")") + KAT_SIG + "\""));

    std::string fresh = s.sign_body(KAT_BODY);
    CHECK(contains(fresh, R"("x-request-sign-version":"v1")") && !contains(fresh, KAT_ID));

    // The allocation-free path: the C struct. A fresh signature is hedged (a new nonce every
    // time), so sign_body_at for the id and time it chose is another, deterministic, signature
    // (tests/c verify both with OpenSSL); sign_body_at itself is the same every time.
    perps_body_signature sig = s.sign_body_into(KAT_BODY);
    CHECK(std::string(sig.version) == "v1");
    CHECK(std::strlen(sig.request_id) == 36);
    CHECK(std::strlen(sig.signature) == 88);
    std::string again = s.sign_body_at(KAT_BODY, sig.request_id, std::atoll(sig.timestamp));
    CHECK(!contains(again, std::string(R"("x-request-signature":")") + sig.signature + "\""));
    CHECK(again == s.sign_body_at(KAT_BODY, sig.request_id, std::atoll(sig.timestamp)));

    // Bytes after a NUL are signed by the pointer+length path, refused by the string paths.
    perps_body_signature with_nul;
    CHECK(s.try_sign_body_into(std::string_view("a\0b", 3), with_nul) == PERPS_OK);
    EXPECT_ERROR(s.sign_body(std::string("a\0b", 3)), PERPS_INVALID_ARGUMENT, "body contains a NUL byte");
    EXPECT_ERROR(s.sign_body_at(std::string("a\0b", 3), KAT_ID, KAT_TS), PERPS_INVALID_ARGUMENT, "NUL");

    EXPECT_ERROR(s.sign_body_at(KAT_BODY, "not-a-uuid", KAT_TS), PERPS_INVALID_ARGUMENT, nullptr);
    EXPECT_ERROR(s.sign_body_at(KAT_BODY, KAT_ID, -1), PERPS_INVALID_ARGUMENT, nullptr);
    EXPECT_ERROR(s.sign_body("\xff"), PERPS_INVALID_ARGUMENT, "UTF-8");
    EXPECT_ERROR(s.sign_body_into("\xff"), PERPS_INVALID_ARGUMENT, "perps_sign_body_into");
}

static void test_wallet() {
    CHECK(perps::wallet_address("bsc", EVM_KEY) == EVM_ADDRESS);
    CHECK(perps::wallet_address("solana", ED_SEED_B58) == ED_REQUEST_ID);
    CHECK(perps::wallet_sign("bsc", EVM_KEY, EVM_PAYLOAD) == EVM_SIG);
    CHECK(perps::wallet_sign("solana", ED_SEED_B58, SOL_PAYLOAD) == SOL_LOGIN_SIG);
    CHECK(perps::wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, SOL_RAW_SIG_BYTES) == SOL_LOGIN_SIG);
    CHECK(perps::wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, SOL_RAW_SIG_BYTES.data(), SOL_RAW_SIG_BYTES.size()) ==
          SOL_LOGIN_SIG);

    EXPECT_ERROR(perps::wallet_address("bsc", "0x1234"), PERPS_INVALID_KEY, nullptr);
    EXPECT_ERROR(perps::wallet_address("solana", ED_BAD_PAIR_B58), PERPS_INVALID_KEY, nullptr);
    EXPECT_ERROR(perps::wallet_address("eth", EVM_KEY), PERPS_INVALID_ARGUMENT, "chain");
    EXPECT_ERROR(perps::wallet_sign("bsc", EVM_KEY, "not json"), PERPS_INVALID_ARGUMENT, nullptr);
    EXPECT_ERROR(perps::wallet_sign("bsc", std::string(EVM_KEY) + '\0', EVM_PAYLOAD), PERPS_INVALID_ARGUMENT,
                 "private_key contains a NUL byte");

    std::vector<std::uint8_t> flipped = SOL_RAW_SIG_BYTES;
    flipped[0] ^= 1;
    EXPECT_ERROR(perps::wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, flipped), PERPS_VERIFICATION_FAILED,
                 nullptr);
    std::vector<std::uint8_t> short_sig(SOL_RAW_SIG_BYTES.begin(), SOL_RAW_SIG_BYTES.end() - 1);
    EXPECT_ERROR(perps::wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, short_sig), PERPS_INVALID_ARGUMENT,
                 nullptr);
    EXPECT_ERROR(perps::wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, nullptr, 64), PERPS_INVALID_ARGUMENT,
                 "NULL");
}

static void test_orders_and_challenges() {
    CHECK(perps::order_serialize(ORDER) == ORDER);  // already in canonical form
    CHECK(perps::order_serialize(std::string(" ") + ORDER + "\n") == ORDER);

    EXPECT_ERROR(perps::order_serialize(R"({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01",)"
                                        R"("time_in_force":"gtc","reduce_only":false})"),
                 PERPS_INVALID_ORDER, "price");
    EXPECT_ERROR(perps::order_serialize(R"({"symbol":"BTC-USD","side":"buy","order_type":"market","qty":0.01,)"
                                        R"("time_in_force":"ioc","reduce_only":false})"),
                 PERPS_INVALID_ORDER, "qty");
    EXPECT_ERROR(perps::order_serialize(R"({"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1",)"
                                        R"("time_in_force":"ioc","reduceOnly":true})"),
                 PERPS_INVALID_ORDER, "reduceOnly");
    EXPECT_ERROR(perps::order_serialize("[]"), PERPS_INVALID_ORDER, nullptr);
    EXPECT_ERROR(perps::order_serialize(std::string(ORDER) + '\0' + "garbage"), PERPS_INVALID_ARGUMENT,
                 "order_json contains a NUL byte");

    // A challenge that verifies (fixtures.h: signed by the key whose public key is CERTS'
    // generator point, checked independently by tests/python/test_challenge.py), for the session
    // whose request key is the RFC 8032 key: its payload back unchanged; expired or for another
    // wallet: refused.
    std::string request_id = perps::Session::from_api_key("tok", ED_SEED_B58).request_id();
    CHECK(request_id == ED_REQUEST_ID);
    CHECK(perps::challenge_verify(CHALLENGE_JWS, CERTS, request_id, "bsc", EVM_ADDRESS, CHALLENGE_NOW) ==
          CHALLENGE_PAYLOAD);
    EXPECT_ERROR(perps::challenge_verify(CHALLENGE_JWS, CERTS, request_id, "bsc", EVM_ADDRESS, CHALLENGE_EXP),
                 PERPS_VERIFICATION_FAILED, "expired");
    EXPECT_ERROR(perps::challenge_verify(CHALLENGE_JWS, CERTS, request_id, "bsc",
                                         "0x1111111111111111111111111111111111111111", CHALLENGE_NOW),
                 PERPS_VERIFICATION_FAILED, "address");
    EXPECT_ERROR(perps::challenge_verify("not.a.jws", CERTS, ED_REQUEST_ID, "bsc", EVM_ADDRESS),
                 PERPS_VERIFICATION_FAILED, nullptr);
    EXPECT_ERROR(perps::challenge_verify("not.a.jws", "not json", ED_REQUEST_ID, "bsc", EVM_ADDRESS, 1700000000),
                 PERPS_BAD_RESPONSE, nullptr);
}

static void test_client_offline() {
    EXPECT_ERROR(perps::Client("not a url", DEAD_PERPS), PERPS_INVALID_ARGUMENT, nullptr);
    EXPECT_ERROR(perps::Client("http://venue.example/auth", "http://venue.example/perps"), PERPS_INVALID_ARGUMENT,
                 nullptr);
    EXPECT_ERROR(perps::Client(DEAD_BASE, DEAD_PERPS, R"({"no_such_option":1})"), PERPS_INVALID_ARGUMENT,
                 "no_such_option");
    EXPECT_ERROR(perps::Client(std::string(DEAD_BASE) + '\0', DEAD_PERPS), PERPS_INVALID_ARGUMENT,
                 "base_url contains a NUL byte");

    perps::Client client(DEAD_BASE, DEAD_PERPS, R"({"connect_timeout_ms":2000})");
    perps::Session session;
    // No token yet: refused before anything is sent.
    EXPECT_ERROR(client.new_order(session, ORDER), PERPS_INVALID_STATE, nullptr);
    EXPECT_ERROR(client.request(session, "GET", "/api/query_open_orders"), PERPS_INVALID_STATE, nullptr);
    EXPECT_ERROR(client.login(session, "0x00", 3600), PERPS_INVALID_STATE, nullptr);
    // Connection refused: nothing reached the venue.
    EXPECT_ERROR(client.sync_time(), PERPS_TRANSPORT, nullptr);
    EXPECT_ERROR(client.signin(session, "bsc", EVM_KEY, 3600), PERPS_TRANSPORT, nullptr);
    EXPECT_ERROR(client.prepare_signin(session, "bsc", EVM_ADDRESS), PERPS_TRANSPORT, nullptr);

    // Session from an API credential: it has a token, so the order is sent (and refused).
    perps::Session api = perps::Session::from_api_key("tok", ED_SEED_B58);
    EXPECT_ERROR(client.new_order(api, ORDER), PERPS_TRANSPORT, nullptr);
    // A bad order is refused before anything is sent (else this would be PERPS_TRANSPORT).
    EXPECT_ERROR(client.new_order(api, R"({"symbol":"BTC-USD"})"), PERPS_INVALID_ORDER, nullptr);
}

// The endpoint methods, offline: parameters and sessions refused before anything is sent
// (else the dead venue would give PERPS_TRANSPORT), and the C error's fields copied.
static void test_endpoints_offline() {
    perps::Client client(DEAD_BASE, DEAD_PERPS, R"({"connect_timeout_ms":2000})");
    perps::Session api = perps::Session::from_api_key("tok", ED_SEED_B58);  // has a token

    EXPECT_ERROR(client.cancel_order(api, R"({"order_id":"12"})"), PERPS_INVALID_ARGUMENT, "order_id");
    EXPECT_ERROR(client.cancel_order(api, "{}"), PERPS_INVALID_ARGUMENT, "cancel_order");
    EXPECT_ERROR(client.cancel_orders(api, R"({"order_id_list":[]})"), PERPS_INVALID_ARGUMENT, "order_id_list");
    EXPECT_ERROR(client.change_leverage(api, R"({"symbol":"BTC-USD","leverage":"10"})"), PERPS_INVALID_ARGUMENT,
                 "leverage");
    EXPECT_ERROR(client.change_margin_mode(api, R"({"symbol":"BTC-USD","margin_mode":"CROSS"})"),
                 PERPS_INVALID_ARGUMENT, "margin_mode");
    EXPECT_ERROR(client.query_order(api, R"({"id":1})"), PERPS_INVALID_ARGUMENT, "\"id\"");
    EXPECT_ERROR(client.query_orders(api, R"({"limit":501})"), PERPS_INVALID_ARGUMENT, "limit");
    EXPECT_ERROR(client.query_open_orders(api, std::string(R"({"symbol":1})")), PERPS_INVALID_ARGUMENT, "symbol");
    EXPECT_ERROR(client.query_trades(api, std::string(R"({"side":"long"})")), PERPS_INVALID_ARGUMENT, "side");
    EXPECT_ERROR(client.query_funding_history(api, std::string(R"({"limit":501})")), PERPS_INVALID_ARGUMENT,
                 "expected an integer from 1 to 500");
    EXPECT_ERROR(client.query_funding_history(api, std::string(R"({"side":"buy"})")), PERPS_INVALID_ARGUMENT,
                 "unknown parameter \"side\"");
    EXPECT_ERROR(client.query_positions(api, std::string("[1]")), PERPS_INVALID_ARGUMENT, "params_json");
    EXPECT_ERROR(client.query_balance(api, std::string(R"({"symbol":"BTC-USD"})")), PERPS_INVALID_ARGUMENT,
                 "symbol");
    EXPECT_ERROR(client.query_position_config(api, "{}"), PERPS_INVALID_ARGUMENT, "symbol");
    EXPECT_ERROR(client.query_symbol_info(R"({"symbol":null})"), PERPS_INVALID_ARGUMENT, "symbol");
    EXPECT_ERROR(client.query_symbol_price("{}"), PERPS_INVALID_ARGUMENT, "symbol");
    EXPECT_ERROR(client.query_depth_book(api, R"({"symbol":"BTC-USD","limit":0})"), PERPS_INVALID_ARGUMENT, "limit");
    EXPECT_ERROR(client.query_depth_book(std::string("{\"symbol\":\"BTC\0\"}", 17)), PERPS_INVALID_ARGUMENT,
                 "params_json contains a NUL byte");

    // An account endpoint needs a session with a token; the public three need none.
    perps::Session fresh;
    EXPECT_ERROR(client.query_balance(fresh), PERPS_INVALID_STATE, nullptr);
    perps::Session gone(std::move(fresh));
    EXPECT_ERROR(client.query_balance(fresh), PERPS_INVALID_ARGUMENT, "session");  // NOLINT(bugprone-use-after-move)
    EXPECT_ERROR(client.query_positions(fresh), PERPS_INVALID_ARGUMENT, "session");
    EXPECT_ERROR(client.query_symbol_info(), PERPS_TRANSPORT, nullptr);  // sent: nobody listens
    EXPECT_ERROR(client.query_symbol_price(R"({"symbol":"BTC-USD"})"), PERPS_TRANSPORT, nullptr);
    EXPECT_ERROR(client.query_depth_book(fresh, R"({"symbol":"BTC-USD"})"), PERPS_TRANSPORT, nullptr);
    EXPECT_ERROR(client.query_open_orders(api), PERPS_TRANSPORT, nullptr);

    // A refused order names its generated cl_ord_id only once it is decided; a GET carries
    // no x-request-id; -1 is "no retry-after".
    try {
        client.cancel_order(api, R"({"cl_ord_id":"x"})");
        CHECK(false);
    } catch (const perps::Error &e) {
        CHECK(e.code() == PERPS_TRANSPORT && !e.cl_ord_id() && e.retry_after_ms() == -1);
    }
    try {
        client.new_order(api, ORDER);
        CHECK(false);
    } catch (const perps::Error &e) {
        CHECK(e.code() == PERPS_TRANSPORT);
        CHECK(e.cl_ord_id().has_value() && e.cl_ord_id()->size() == 26);  // generated, no prefix
    }
    perps::Client prefixed(DEAD_BASE, DEAD_PERPS, R"({"cl_ord_id_prefix":"hpp-"})");
    try {
        prefixed.new_order(api, ORDER);
        CHECK(false);
    } catch (const perps::Error &e) {
        CHECK(e.cl_ord_id() && e.cl_ord_id()->compare(0, 4, "hpp-") == 0 && e.cl_ord_id()->size() == 30);
    }
    EXPECT_ERROR(perps::Client(DEAD_BASE, DEAD_PERPS, R"({"rate_limit":"sometimes"})"), PERPS_INVALID_ARGUMENT,
                 "rate_limit");
}

static void test_move_semantics() {
    // Move construction: the source is empty, using it throws, destroying it is a no-op.
    perps::Session a;
    const std::string id = a.request_id();
    perps::Session b(std::move(a));
    CHECK(!a && a.get() == nullptr);  // NOLINT(bugprone-use-after-move): the point of the test
    CHECK(b && b.request_id() == id);
    EXPECT_ERROR(a.request_id(), PERPS_INVALID_ARGUMENT, "NULL");
    EXPECT_ERROR(a.sign_body("x"), PERPS_INVALID_ARGUMENT, "NULL");
    EXPECT_ERROR(a.logout(), PERPS_INVALID_ARGUMENT, "NULL");
    EXPECT_ERROR(a.sign_body_into("x"), PERPS_INVALID_ARGUMENT, nullptr);
    perps_body_signature untouched;
    std::memset(&untouched, 'z', sizeof untouched);
    CHECK(a.try_sign_body_into("x", untouched) == PERPS_INVALID_ARGUMENT);
    CHECK(untouched.version[0] == 'z' && untouched.signature[sizeof untouched.signature - 1] == 'z');

    // Move assignment frees the handle the target held (valgrind: no leak) and takes the new one.
    perps::Session c;
    c = std::move(b);
    CHECK(!b && c.request_id() == id);
    // Assigning into a moved-from object revives it; self-move-assignment keeps the handle.
    a = std::move(c);
    CHECK(a.request_id() == id && !c);
    perps::Session &alias = a;
    a = std::move(alias);
    CHECK(a && a.request_id() == id);

    // release() gives the handle up; adopt() takes it back (freed once, by d).
    perps_session *raw = a.release();
    CHECK(!a && raw != nullptr);
    perps::Session d = perps::Session::adopt(raw);
    CHECK(d.request_id() == id);
    CHECK(!perps::Session::adopt(nullptr));

    // Containers move sessions around when they grow.
    std::vector<perps::Session> sessions;
    for (int i = 0; i < 9; ++i) {
        sessions.emplace_back();
    }
    sessions.push_back(std::move(d));
    CHECK(sessions.back().request_id() == id);

    // The same for clients; a moved-from client fails with PERPS_INVALID_ARGUMENT.
    perps::Client c1(DEAD_BASE, DEAD_PERPS);
    perps::Client c2(std::move(c1));
    CHECK(!c1 && c2);  // NOLINT(bugprone-use-after-move)
    EXPECT_ERROR(c1.new_order(sessions.back(), ORDER), PERPS_INVALID_ARGUMENT, "NULL");
    EXPECT_ERROR(c1.sync_time(), PERPS_INVALID_ARGUMENT, "NULL");
    perps::Client c3(DEAD_BASE, DEAD_PERPS);
    c3 = std::move(c2);
    CHECK(c3 && !c2);
    perps::Client c4 = perps::Client::adopt(c3.release());
    CHECK(c4 && !c3);
    EXPECT_ERROR(c4.new_order(sessions.back(), ORDER), PERPS_INVALID_STATE, nullptr);  // a working client
}

int main() {
    test_version_and_codes();
    test_error_type();
    test_session_offline();
    test_api_key_session();
    test_sign_body();
    test_wallet();
    test_orders_and_challenges();
    test_client_offline();
    test_endpoints_offline();
    test_move_semantics();
    return perps_test_summary();
}
