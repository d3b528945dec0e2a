/*
 * examples-c/ticks.h: prices and quantities as exact integers of ticks, for the examples.
 *
 * The venue writes decimals as strings; comparing or moving a price by a tick in floating
 * point would round. An engine uses its own fixed-point type.
 */
#ifndef PERPS_EXAMPLES_TICKS_H
#define PERPS_EXAMPLES_TICKS_H

#include <stdio.h>
#include <string.h>

/* A plain decimal ("65000.10", "-0.5", "64999") as an integer number of ticks of
 * 10^-decimals, digits beyond the tick dropped; 1 when it is one, 0 for anything else —
 * empty, "null", an exponent ("6.5e4"), a second '.', a sign alone, more than 15 digits
 * (which, scaled to the tick, could overflow). Exact: no floating point. */
static inline int ticks_of(const char *decimal, int decimals, long long *out) {
    long long ticks = 0;
    int negative = *decimal == '-', fraction = -1, digits = 0;
    for (const char *p = decimal + negative; *p != '\0'; p++) {
        if (*p == '.' && fraction < 0) {
            fraction = 0;
            continue;
        }
        if (*p < '0' || *p > '9' || ++digits > 15) {
            return 0;
        }
        if (fraction == decimals) {
            continue; /* beyond the tick */
        }
        ticks = ticks * 10 + (*p - '0');
        if (fraction >= 0) {
            fraction++;
        }
    }
    if (digits == 0) {
        return 0;
    }
    for (int i = fraction < 0 ? 0 : fraction; i < decimals; i++) {
        ticks *= 10;
    }
    *out = negative ? -ticks : ticks;
    return 1;
}

/* ticks_of, also refusing a decimal with a non-zero digit beyond the tick ("65000.125" at 2
 * decimals): a price off the venue's tick, or a quantity off its lot, is not rounded here but
 * refused, since it says that the rules read at start no longer hold. Trailing zeros are fine
 * ("0.0100" at 2 decimals is 1). */
static inline int ticks_exact(const char *decimal, int decimals, long long *out) {
    const char *point = strchr(decimal, '.');
    for (const char *p = point ? point + 1 : decimal; point != NULL && *p != '\0'; p++) {
        if (p - point > decimals && *p != '0') {
            return 0; /* (a character that is no digit is refused by ticks_of) */
        }
    }
    return ticks_of(decimal, decimals, out);
}

/* ticks_of, with 0 for what is not a plain decimal. */
static inline long long to_ticks(const char *decimal, int decimals) {
    long long ticks = 0;
    return ticks_of(decimal, decimals, &ticks) ? ticks : 0;
}

/* Ticks back to a plain decimal string. */
static inline void from_ticks(long long ticks, int decimals, char *out, size_t out_size) {
    long long scale = 1;
    for (int i = 0; i < decimals; i++) {
        scale *= 10;
    }
    const char *sign = ticks < 0 ? "-" : "";
    long long magnitude = ticks < 0 ? -ticks : ticks;
    if (decimals == 0) {
        snprintf(out, out_size, "%s%lld", sign, magnitude);
    } else {
        snprintf(out, out_size, "%s%lld.%0*lld", sign, magnitude / scale, decimals, magnitude % scale);
    }
}

#endif /* PERPS_EXAMPLES_TICKS_H */
