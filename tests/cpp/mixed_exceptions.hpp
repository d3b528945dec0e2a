// tests/cpp/mixed_exceptions.hpp: what tests/cpp/mixed_no_exceptions_part.cpp (built with
// -fno-exceptions) gives tests/cpp/test_mixed_exceptions.cpp. Plain types only: the two
// modes of perps.hpp are distinct types.
#ifndef PERPS_TESTS_MIXED_EXCEPTIONS_HPP
#define PERPS_TESTS_MIXED_EXCEPTIONS_HPP

#include <string>

/// perps::order_serialize of a valid order, from code built without exceptions, and the
/// length of a fresh session's request key id after a space.
std::string serialize_without_exceptions(const char *order_json);

#endif
