/*
 * tests/c/test_example_ticks.c: the examples' decimal reading (examples-c/ticks.h), under
 * ASan/UBSan and valgrind (tests/c/run.sh). The market maker quotes around the book's top
 * levels as read by ticks_of: a price that is not a plain decimal ("6.5e4", "null", "") must
 * be refused, not read as 6.50 or 0 (a mid halved, a bid resting at half price), and no
 * length of digits may overflow (undefined behaviour in C). ticks_exact reads the symbol's rules
 * and the book's prices, which must be on the tick (or lot): an off-tick price is refused, not
 * rounded.
 */
#include "check.h"

#include "../../examples-c/ticks.h"

static int reads(const char *text, int decimals, long long expected) {
    long long ticks = -12345;
    return ticks_of(text, decimals, &ticks) && ticks == expected;
}

static int refused(const char *text) {
    long long ticks = -12345;
    return !ticks_of(text, 2, &ticks) && ticks == -12345; /* untouched */
}

int main(void) {
    CHECK(reads("65000.10", 2, 6500010));
    CHECK(reads("65000.1", 2, 6500010));
    CHECK(reads("65000", 2, 6500000));
    CHECK(reads("65000.129", 2, 6500012)); /* beyond the tick: dropped */
    CHECK(reads("-0.5", 2, -50));
    CHECK(reads(".5", 2, 50));
    CHECK(reads("7", 0, 7));
    CHECK(reads("999999999999999", 2, 99999999999999900LL)); /* 15 digits: the most */
    CHECK(refused(""));
    CHECK(refused("-"));
    CHECK(refused("."));
    CHECK(refused("null"));
    CHECK(refused("6.5e4"));
    CHECK(refused("1.2.3"));
    CHECK(refused("65000.10 "));
    CHECK(refused("+1"));
    CHECK(refused("1000000000000000")); /* 16 digits */
    CHECK(refused("99999999999999999999999999999"));
    CHECK(to_ticks("abc", 2) == 0 && to_ticks("1.25", 2) == 125);
    /* ticks_exact: the symbol's rules and the book's prices must be on the tick or lot. */
    long long t = -1;
    CHECK(ticks_exact("65000.10", 2, &t) && t == 6500010);
    CHECK(ticks_exact("0.0100", 2, &t) && t == 1); /* trailing zeros beyond the tick */
    CHECK(ticks_exact("2", 0, &t) && t == 2);
    CHECK(ticks_exact("0.0001", 4, &t) && t == 1);
    t = -1;
    CHECK(!ticks_exact("65000.125", 2, &t) && t == -1); /* off the tick: refused, untouched */
    CHECK(!ticks_exact("0.00001", 4, &t));
    CHECK(!ticks_exact("2.5", 0, &t));
    CHECK(!ticks_exact("6.5e4", 2, &t) && !ticks_exact("1.0x", 2, &t) && !ticks_exact("", 2, &t));
    char out[40];
    from_ticks(6500010, 2, out, sizeof out);
    CHECK(strcmp(out, "65000.10") == 0);
    from_ticks(-50, 2, out, sizeof out);
    CHECK(strcmp(out, "-0.50") == 0);
    return check_summary();
}
