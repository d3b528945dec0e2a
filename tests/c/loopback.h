/*
 * tests/c/loopback.h: loopback sockets for the C tests that play the venue themselves or need
 * a port nothing listens on (test_client.c, test_trading.c, bad_input_fixtures.h), and the
 * reading of one header of a raw HTTP request. Plain `static` functions; `static inline`
 * where an includer may not use them, so that -Werror's unused-function check stays quiet.
 */

#ifndef PERPS_TESTS_C_LOOPBACK_H
#define PERPS_TESTS_C_LOOPBACK_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* A loopback TCP socket bound to an ephemeral port; listening if `backlog` > 0; -1 on failure. */
static inline int loopback_socket(int backlog, int *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return -1;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) != 0 || (backlog > 0 && listen(fd, backlog) != 0)) {
        close(fd);
        return -1;
    }
    *port = ntohs(addr.sin_port);
    return fd;
}

/* A loopback port nothing listens on: bind one, then close it (9, discard, normally closed,
 * if binding fails). */
static inline int closed_port(void) {
    int port = 9;
    int fd = loopback_socket(0, &port);
    if (fd >= 0) {
        close(fd);
    }
    return port;
}

/* Connect to a loopback port and hang up at once: wakes a server blocked in accept(). */
static inline void loopback_poke(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((unsigned short)port);
    (void)connect(fd, (struct sockaddr *)&addr, sizeof addr);
    close(fd);
}

/* The value of header `name` (case-insensitive) in a raw HTTP request, copied to `out`; 0
 * when absent or longer than `out_size` - 1. */
static inline int header_value(const char *request, const char *name, char *out, size_t out_size) {
    size_t name_len = strlen(name);
    const char *line = strstr(request, "\r\n");
    while (line != NULL && line[2] != '\r') {
        line += 2;
        if (strncasecmp(line, name, name_len) == 0 && line[name_len] == ':') {
            const char *value = line + name_len + 1;
            while (*value == ' ') {
                value++;
            }
            const char *end = strstr(value, "\r\n");
            if (end == NULL || (size_t)(end - value) >= out_size) {
                return 0;
            }
            memcpy(out, value, (size_t)(end - value));
            out[end - value] = '\0';
            return 1;
        }
        line = strstr(line, "\r\n");
    }
    return 0;
}

#endif
