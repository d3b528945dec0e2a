/*
 * examples-c/ticks.h: prices and quantities as exact integers of ticks, for the examples.
 *
 * The venue writes decimals as strings; comparing or moving a price by a tick in floating
 * point would round. An engine uses its own fixed-point type.
 */
#ifndef PERPS_EXAMPLES_TICKS_H
#define PERPS_EXAMPLES_TICKS_H

#include <stdio.h>

/* A decimal ("65000.10", 64999.5) as an integer number of ticks of 10^-decimals; digits
 * beyond the tick are dropped. Exact: no floating point. */
static inline long long to_ticks(const char *decimal, int decimals) {
    long long ticks = 0;
    int negative = *decimal == '-', fraction = -1;
    for (const char *p = decimal + negative; *p != '\0'; p++) {
        if (*p == '.') {
            fraction = 0;
            continue;
        }
        if (*p < '0' || *p > '9' || fraction == decimals) {
            break;
        }
        ticks = ticks * 10 + (*p - '0');
        if (fraction >= 0) {
            fraction++;
        }
    }
    for (int i = fraction < 0 ? 0 : fraction; i < decimals; i++) {
        ticks *= 10;
    }
    return negative ? -ticks : ticks;
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
