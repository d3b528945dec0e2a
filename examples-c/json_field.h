/*
 * examples-c/json_field.h: the few JSON reads the examples need, kept tiny on purpose.
 *
 * The library returns the venue's JSON as text; an engine parses it with the JSON library
 * it already uses. These helpers find a field by name in compact JSON and are enough for
 * the examples' answers (scalars and lists of orders); they are not a JSON parser.
 */
#ifndef PERPS_EXAMPLES_JSON_FIELD_H
#define PERPS_EXAMPLES_JSON_FIELD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text of the first `"key":` value at or after `from`: a string's content without its
 * quotes, or a number / true / false / null as written. Returns the position after the
 * value (to continue searching), or NULL when the key is absent or the value too long. */
static const char *json_field(const char *from, const char *key, char *out, size_t out_size) {
    char needle[64];
    snprintf(needle, sizeof needle, "\"%s\":", key);
    const char *at = from ? strstr(from, needle) : NULL;
    if (at == NULL) {
        return NULL;
    }
    at += strlen(needle);
    while (*at == ' ') {
        at++;
    }
    const char *end;
    if (*at == '"') {
        at++;
        end = strchr(at, '"');
    } else {
        end = at + strcspn(at, ",}] \n");
    }
    if (end == NULL || (size_t)(end - at) >= out_size) {
        return NULL;
    }
    memcpy(out, at, (size_t)(end - at));
    out[end - at] = '\0';
    return end;
}

/* A decimal ("65000.10", 64999.5) as an integer number of ticks of 10^-decimals; digits
 * beyond the tick are dropped. Exact: no floating point. */
static long long to_ticks(const char *decimal, int decimals) {
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
static void from_ticks(long long ticks, int decimals, char *out, size_t out_size) {
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

#endif /* PERPS_EXAMPLES_JSON_FIELD_H */
