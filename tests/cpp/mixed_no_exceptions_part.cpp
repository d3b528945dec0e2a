/*
 * tests/cpp/mixed_no_exceptions_part.cpp: the part of test_mixed_exceptions built with
 * -fno-exceptions (see there). It uses the wrappers test_mixed_exceptions.cpp uses, so both
 * object files hold their own copies of the same inline functions of perps.hpp.
 */
#include "perps.hpp"

#if PERPS_HPP_EXCEPTIONS
#error "build this part with -fno-exceptions"
#endif

#include <string>

#include "mixed_exceptions.hpp"

std::string serialize_without_exceptions(const char *order_json) {
    perps::Client client("http://127.0.0.1:1/auth", "http://127.0.0.1:1/perps");
    return perps::order_serialize(order_json) + " " + std::to_string(perps::Session().request_id().size());
}
