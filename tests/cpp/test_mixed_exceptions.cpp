/*
 * tests/cpp/test_mixed_exceptions.cpp: one program, two translation units that include
 * perps.hpp in its two modes: this one with exceptions, mixed_no_exceptions_part.cpp with
 * -fno-exceptions (a latency-critical module built so, say). The header's inline functions
 * (detail::fail, the call wrappers, the classes' methods) are compiled into both object
 * files; had they the same names in both modes, the linker would keep one copy of each for
 * the whole program (an ODR violation) and, keeping the part's, a failure here would call
 * the error handler and abort instead of throwing perps::Error. tests/cpp/run.sh links the
 * part first, so its copies are the ones kept should the names collide.
 *
 * Prints "N passed, M failed" last and exits non-zero on any failure.
 */
#include "perps.hpp"

#if !PERPS_HPP_EXCEPTIONS
#error "build this file with exceptions"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mixed_exceptions.hpp"

#include "check.hpp"

static const char VALID[] = R"({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000",)"
                            R"("time_in_force":"gtc","reduce_only":false})";
static const char NO_PRICE[] = R"({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01",)"
                               R"("time_in_force":"gtc","reduce_only":false})";

// `call` must throw perps::Error with `code`.
template <typename F>
static void throws_at(F call, perps_code code, int line) {
    try {
        call();
        check_at(false, "a perps::Error was thrown", line);
    } catch (const perps::Error &e) {
        check_at(e.code() == code, "the perps::Error has the expected code", line);
    }
}
#define THROWS(expr, code) throws_at([&] { (void)(expr); }, (code), __LINE__)

int main() {
    // The part built without exceptions works as usual.
    std::string from_part = serialize_without_exceptions(VALID);
    CHECK(from_part.find(R"("price":"65000")") != std::string::npos);

    // Failures here are thrown, as this file was built to expect.
    std::string here = perps::order_serialize(VALID);
    CHECK(from_part.compare(0, here.size(), here) == 0);
    THROWS(perps::order_serialize(NO_PRICE), PERPS_INVALID_ORDER);
    THROWS(perps::order_serialize(std::string("{\0}", 3)), PERPS_INVALID_ARGUMENT);
    THROWS(perps::Client("not a url", "http://127.0.0.1:1/perps"), PERPS_INVALID_ARGUMENT);
    perps::Session session;
    THROWS(session.token(), PERPS_INVALID_STATE);

    return perps_test_summary();
}
