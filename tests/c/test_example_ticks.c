/*
 * tests/c/test_example_ticks.c: the examples' decimal reading (examples-c/ticks.h), under
 * ASan/UBSan and valgrind (tests/c/run.sh). The market maker quotes around the book's top
 * levels as read by ticks_of: a price that is not a plain decimal ("6.5e4", "null", "") must
 * be refused, not read as 6.50 or 0 (a mid halved, a bid resting at half price), and no
 * length of digits may overflow (undefined behaviour in C).
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
    char out[40];
    from_ticks(6500010, 2, out, sizeof out);
    CHECK(strcmp(out, "65000.10") == 0);
    from_ticks(-50, 2, out, sizeof out);
    CHECK(strcmp(out, "-0.50") == 0);
    return check_summary();
}
