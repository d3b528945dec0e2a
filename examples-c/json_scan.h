/*
 * examples-c/json_scan.h: reading one member of one JSON object, for the examples.
 *
 * Stream events nest the venue's frames (`data`, `frame`) inside the library's envelope, and
 * both carry keys such as "code", "message" or "status": a search through the whole text
 * could read a nested value instead of the envelope's. These helpers walk
 * the object's own members only, skipping nested values whole. They read compact or spaced
 * JSON as the library writes it; they are not a validating parser, and a string's escapes
 * are copied as written (none of the values the examples read contain any). An engine uses
 * the JSON library it already has.
 */
#ifndef PERPS_EXAMPLES_JSON_SCAN_H
#define PERPS_EXAMPLES_JSON_SCAN_H

#include <stddef.h>
#include <string.h>

static inline const char *json_skip_space(const char *p) {
    while (p != NULL && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
        p++;
    }
    return p;
}

/* The end of the string starting at its opening quote `p` (just after the closing quote),
 * or NULL when the text ends first. */
static inline const char *json_skip_string(const char *p) {
    for (p++; *p != '\0'; p++) {
        if (*p == '\\' && p[1] != '\0') {
            p++;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* The position just after the value starting at `p` (an object or array with everything
 * nested in it, a string, or a scalar), or NULL when the text ends first. */
static inline const char *json_skip_value(const char *p) {
    p = json_skip_space(p);
    if (p == NULL || *p == '\0') {
        return NULL;
    }
    if (*p == '"') {
        return json_skip_string(p);
    }
    if (*p != '{' && *p != '[') {
        const char *end = p + strcspn(p, ",}] \t\r\n");
        return end == p ? NULL : end;
    }
    int depth = 0;
    while (*p != '\0') {
        if (*p == '"') {
            p = json_skip_string(p);
            if (p == NULL) {
                return NULL;
            }
            continue;
        }
        if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (--depth == 0) {
                return p + 1;
            }
        }
        p++;
    }
    return NULL;
}

/* The value of member `key` of the object starting at `object` (its first character after
 * spaces must be '{'), looking at that object's own members only. NULL when absent. */
static inline const char *json_member(const char *object, const char *key) {
    const char *p = json_skip_space(object);
    if (p == NULL || *p != '{') {
        return NULL;
    }
    size_t key_len = strlen(key);
    for (p = json_skip_space(p + 1); p != NULL && *p == '"'; p = json_skip_space(p + 1)) {
        const char *name = p + 1, *after = json_skip_string(p);
        if (after == NULL) {
            return NULL;
        }
        int match = (size_t)(after - 1 - name) == key_len && memcmp(name, key, key_len) == 0;
        p = json_skip_space(after);
        if (*p != ':') {
            return NULL;
        }
        p = json_skip_space(p + 1);
        if (match) {
            return p;
        }
        p = json_skip_space(json_skip_value(p));
        if (p == NULL || *p != ',') {
            return NULL;
        }
    }
    return NULL;
}

/* Copy the scalar at `value` into `out`: a string's content without its quotes, or a number,
 * true, false or null as written. 0 (and "" in `out`) when `value` is NULL, an object, an
 * array, or too long for `out`. */
static inline int json_text(const char *value, char *out, size_t out_size) {
    out[0] = '\0';
    value = json_skip_space(value);
    if (value == NULL || *value == '{' || *value == '[') {
        return 0;
    }
    const char *end = json_skip_value(value);
    if (end == NULL) {
        return 0;
    }
    if (*value == '"') {
        value++;
        end--;
    }
    if ((size_t)(end - value) >= out_size) {
        return 0;
    }
    memcpy(out, value, (size_t)(end - value));
    out[end - value] = '\0';
    return 1;
}

/* json_text of member `key` of `object`. */
static inline int json_get(const char *object, const char *key, char *out, size_t out_size) {
    return json_text(json_member(object, key), out, out_size);
}

/* The first element of the array starting at `array`, or NULL when it is empty or not an
 * array. */
static inline const char *json_first(const char *array) {
    const char *p = json_skip_space(array);
    if (p == NULL || *p != '[') {
        return NULL;
    }
    p = json_skip_space(p + 1);
    return *p == ']' ? NULL : p;
}

/* The element after `element` in its array, or NULL after the last one. */
static inline const char *json_next(const char *element) {
    const char *p = json_skip_space(json_skip_value(element));
    return p != NULL && *p == ',' ? json_skip_space(p + 1) : NULL;
}

/* The list of a REST answer that the venue sends either bare (`[…]`) or in an envelope
 * (`{"result":[…],…}`): the documents show both. */
static inline const char *json_list(const char *answer) {
    const char *p = json_skip_space(answer);
    if (p != NULL && *p == '{') {
        p = json_member(p, "result");
    }
    return p != NULL && *p == '[' ? p : NULL;
}

#endif /* PERPS_EXAMPLES_JSON_SCAN_H */
