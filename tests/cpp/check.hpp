// The offline C++ tests' harness (test_hpp, test_stream, test_secrets, test_mixed_exceptions;
// the sandbox tests have a richer one in sandbox_harness.hpp): CHECK counts a pass or prints
// the failing expression with the test file's name and line; a test prints
// "N passed, M failed" (perps_test_summary) last and exits non-zero on any failure.
#ifndef PERPS_TESTS_CPP_CHECK_HPP
#define PERPS_TESTS_CPP_CHECK_HPP

#include <cstdio>
#include <cstdlib>

static int passed = 0;
static int failed = 0;

// `line` is the caller's: helpers that check on their caller's behalf pass theirs on.
// __BASE_FILE__ (GCC and Clang) names the test's .cpp, not this header.
static inline void check_at(bool ok, const char *expr, int line) {
    if (ok) {
        ++passed;
    } else {
        ++failed;
        std::fflush(stdout);
        std::fprintf(stderr, "FAIL %s:%d: %s\n", __BASE_FILE__, line, expr);
    }
}
#define CHECK(cond) check_at(static_cast<bool>(cond), #cond, __LINE__)

// Print the counts last; the process's exit status.
static inline int perps_test_summary() {
    std::fflush(stderr);
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
