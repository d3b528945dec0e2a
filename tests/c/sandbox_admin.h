/*
 * tests/c/sandbox_admin.h: what the C tests that run against the sandbox venue share — its
 * admin endpoints (under /_sandbox) over a plain socket (no HTTP library in the tests), and
 * just enough JSON to read a field of their answers. tests/c/run.sh names the admin URL in
 * PERPS_TEST_SANDBOX_ADMIN_URL; call parse_admin_url on it first.
 *
 * Included once by a test program (test_funding.c, test_stream_partly_sent.c,
 * test_trading_venue.c), after _POSIX_C_SOURCE is defined and after check.h.
 */
#ifndef PERPS_TESTS_C_SANDBOX_ADMIN_H
#define PERPS_TESTS_C_SANDBOX_ADMIN_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* The venue's admin endpoints over a plain socket (no HTTP library in the tests)         */
/* ------------------------------------------------------------------------------------ */

static char admin_host[64] = "127.0.0.1";
static int admin_port;
static char admin_path[64]; /* "/_sandbox" */

static inline int parse_admin_url(const char *url) {
    const char *prefix = "http://";
    if (url == NULL || strncmp(url, prefix, strlen(prefix)) != 0) {
        return 0;
    }
    const char *host = url + strlen(prefix);
    const char *colon = strchr(host, ':');
    const char *slash = strchr(host, '/');
    if (colon == NULL || slash == NULL || colon > slash || (size_t)(colon - host) >= sizeof admin_host ||
        strlen(slash) >= sizeof admin_path) {
        return 0;
    }
    memcpy(admin_host, host, (size_t)(colon - host));
    admin_host[colon - host] = '\0';
    admin_port = atoi(colon + 1);
    strcpy(admin_path, slash);
    return admin_port > 0;
}

/* One admin request; the answer's body (de-chunked) in out, or 0 when it is not a 200. */
static inline int admin(const char *method, const char *what, const char *body, char *out, size_t out_size) {
    static char answer[65536];
    char request[1024];
    int n = snprintf(request, sizeof request,
                     "%s %s/%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     method, admin_path, what, admin_host, strlen(body), body);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)admin_port);
    inet_pton(AF_INET, admin_host, &addr.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || n < 0 || (size_t)n >= sizeof request ||
        send(fd, request, (size_t)n, 0) != n) {
        if (fd >= 0) {
            close(fd);
        }
        return 0;
    }
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof answer && (r = recv(fd, answer + got, sizeof answer - 1 - got, 0)) > 0) {
        got += (size_t)r;
    }
    close(fd);
    answer[got] = '\0';
    char *head_end = strstr(answer, "\r\n\r\n");
    if (strncmp(answer, "HTTP/1.1 200", 12) != 0 || head_end == NULL) {
        return 0;
    }
    *head_end = '\0';
    const char *payload = head_end + 4;
    size_t len = 0;
    if (strstr(answer, "ransfer-Encoding: chunked") != NULL) {
        while (*payload != '\0') {
            char *end;
            size_t size = strtoul(payload, &end, 16);
            if (size == 0 || strncmp(end, "\r\n", 2) != 0 || len + size >= out_size) {
                break;
            }
            memcpy(out + len, end + 2, size);
            len += size;
            payload = end + 2 + size + 2;
        }
    } else {
        len = strlen(payload);
        if (len >= out_size) {
            return 0;
        }
        memcpy(out, payload, len);
    }
    out[len] = '\0';
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* Just enough JSON: the text of a field's value after the first "name": at or after from */
/* ------------------------------------------------------------------------------------ */

/* A string field's content (no escapes in the fields read here) or a number's digits. */
static inline int field(const char *from, const char *name, char *out, size_t out_size) {
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *at = from != NULL ? strstr(from, key) : NULL;
    if (at == NULL) {
        return 0;
    }
    at += strlen(key);
    int quoted = *at == '"';
    at += quoted;
    size_t len = quoted ? strcspn(at, "\"") : strcspn(at, ",}]");
    if (len >= out_size) {
        return 0;
    }
    memcpy(out, at, len);
    out[len] = '\0';
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* A fresh account                                                                         */
/* ------------------------------------------------------------------------------------ */

/* A client (`options_json`, NULL for none) and a session of a fresh account on the sandbox
 * tests/c/run.sh names in PERPS_TEST_SANDBOX_{BASE,PERPS,ADMIN}_URL (the same venue serves
 * every run of a program). 0 when the environment does not name it, said on stderr for
 * `program`, which then exits 2. Where the account or a handle could not be made, a check
 * fails and the handle is NULL; the caller frees both. */
static inline int sandbox_account(const char *program, const char *options_json, perps_client **c, perps_session **s) {
    const char *base = getenv("PERPS_TEST_SANDBOX_BASE_URL");
    const char *perps = getenv("PERPS_TEST_SANDBOX_PERPS_URL");
    *c = NULL;
    *s = NULL;
    if (base == NULL || perps == NULL || !parse_admin_url(getenv("PERPS_TEST_SANDBOX_ADMIN_URL"))) {
        fprintf(stderr, "%s: set PERPS_TEST_SANDBOX_{BASE,PERPS,ADMIN}_URL (tests/c/run.sh does)\n", program);
        return 0;
    }
    char credential[2048], token[1024], key[128];
    CHECK(admin("POST", "api-key", "{}", credential, sizeof credential));
    CHECK(field(credential, "token", token, sizeof token) && field(credential, "private_key", key, sizeof key));
    *c = perps_client_new(base, perps, options_json, NULL);
    *s = perps_session_from_api_key(token, key, NULL);
    CHECK(*c != NULL && *s != NULL);
    return 1;
}

#endif
