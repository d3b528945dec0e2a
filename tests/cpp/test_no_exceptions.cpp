/*
 * tests/cpp/test_no_exceptions.cpp: include/perps.hpp in a program built with
 * -fno-exceptions (tests/cpp/run.sh builds and runs it; no network).
 *
 *   test_no_exceptions ok        successful calls return their results; exits 0
 *   test_no_exceptions default   a failure reaches the default handler: it prints
 *                                "libperps: PERPS_INVALID_ORDER (3): ..." and aborts
 *   test_no_exceptions handler   a failure reaches the installed handler, which prints the
 *                                error and exits with status 42
 *   test_no_exceptions nul       a NUL byte in an argument fails the same way (status 42)
 *
 * run.sh checks the exit status and the output of each mode.
 */
#include "perps.hpp"

#if PERPS_HPP_EXCEPTIONS
#error "build this test with -fno-exceptions"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static const char *const valid_order =
    R"({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000",)"
    R"("time_in_force":"gtc","reduce_only":false})";
static const char *const order_without_price =
    R"({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01",)"
    R"("time_in_force":"gtc","reduce_only":false})";

static void exit_42(const perps::Error &error) {
    std::printf("handled: %s (%d): %s\n", perps::code_name(error.code()), static_cast<int>(error.code()),
                error.what());
    std::fflush(stdout);
    std::_Exit(42);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (std::strcmp(mode, "ok") == 0) {
        std::string body = perps::order_serialize(valid_order);
        std::printf("version %s; serialized %s\n", std::string(perps::version()).c_str(), body.c_str());
        perps::Session session;  // a fresh key: no failure, nothing thrown
        std::printf("request key id %zu characters\n", session.request_id().size());
        return body.find("\"price\":\"65000\"") != std::string::npos ? 0 : 1;
    }
    if (std::strcmp(mode, "default") == 0) {
        perps::order_serialize(order_without_price);  // the default handler aborts
        std::printf("returned from a failed call\n");
        return 1;
    }
    if (std::strcmp(mode, "handler") == 0 || std::strcmp(mode, "nul") == 0) {
        if (perps::set_error_handler(exit_42) != nullptr) {
            std::printf("a handler was installed before\n");
            return 1;
        }
        if (std::strcmp(mode, "nul") == 0) {
            perps::order_serialize(std::string("{\"symbol\":\"BTC-USD\"\0}", 21));
        } else {
            perps::order_serialize(order_without_price);
        }
        std::printf("returned from a failed call\n");
        return 1;
    }
    std::fprintf(stderr, "usage: test_no_exceptions ok|default|handler|nul\n");
    return 2;
}
