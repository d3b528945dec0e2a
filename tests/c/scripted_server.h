/*
 * tests/c/scripted_server.h: the scripted HTTP server of test_trading.c (its only includer),
 * on a loopback socket and a thread of the test program: every connection gets one answer,
 * the current script, and is closed; the last request is kept for the test to read. Split
 * from test_trading.c to keep the tests readable; plain `static` functions, each used.
 */

#ifndef PERPS_TESTS_C_SCRIPTED_SERVER_H
#define PERPS_TESTS_C_SCRIPTED_SERVER_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loopback.h"
#include "offline_checks.h"

#define MAX_REQUEST 16384

static struct {
    pthread_mutex_t lock;
    int listen_fd;
    int port;
    int stop;
    int requests;            /* requests read so far */
    char last[MAX_REQUEST];  /* the last request, head and body */
    char answer[4096];       /* what every request is answered with */
} server = {PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, 0, {0}, {0}};

/* Answer the next requests with this status line, extra headers and JSON body. */
static void script(int status, const char *extra_headers, const char *body) {
    pthread_mutex_lock(&server.lock);
    snprintf(server.answer, sizeof server.answer,
             "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%sContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
             status, extra_headers, strlen(body), body);
    pthread_mutex_unlock(&server.lock);
}

static int requests_seen(void) {
    pthread_mutex_lock(&server.lock);
    int n = server.requests;
    pthread_mutex_unlock(&server.lock);
    return n;
}

/* Copy the value of header `name` (case-insensitive) of the last request; 0 when absent. */
static int last_header(const char *name, char *out, size_t out_size) {
    pthread_mutex_lock(&server.lock);
    int found = header_value(server.last, name, out, out_size);
    pthread_mutex_unlock(&server.lock);
    return found;
}

/* The value of "key":"..." in the last request's body; 0 when absent. */
static int last_body_string(const char *key, char *out, size_t out_size) {
    pthread_mutex_lock(&server.lock);
    const char *body = strstr(server.last, "\r\n\r\n");
    int found = body != NULL && json_string(body, key, out, out_size);
    pthread_mutex_unlock(&server.lock);
    return found;
}

static void last_request_line(char *out, size_t out_size) {
    pthread_mutex_lock(&server.lock);
    const char *end = strstr(server.last, "\r\n");
    size_t n = end ? (size_t)(end - server.last) : 0;
    if (n >= out_size) {
        n = out_size - 1;
    }
    memcpy(out, server.last, n);
    out[n] = '\0';
    pthread_mutex_unlock(&server.lock);
}

/* Read one request (head and Content-Length body) into buf; its length, or -1. */
static int read_request(int fd, char *buf, size_t size) {
    size_t n = 0;
    char *head_end = NULL;
    while (head_end == NULL) {
        ssize_t got = recv(fd, buf + n, size - 1 - n, 0);
        if (got <= 0) {
            return -1;
        }
        n += (size_t)got;
        buf[n] = '\0';
        head_end = strstr(buf, "\r\n\r\n");
        if (n + 1 >= size) {
            return -1;
        }
    }
    size_t length = 0;
    for (const char *line = strstr(buf, "\r\n"); line != NULL && line < head_end; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "content-length:", 15) == 0) {
            length = (size_t)strtoul(line + 17, NULL, 10);
        }
    }
    size_t total = (size_t)(head_end - buf) + 4 + length;
    while (n < total && n + 1 < size) {
        ssize_t got = recv(fd, buf + n, size - 1 - n, 0);
        if (got <= 0) {
            return -1;
        }
        n += (size_t)got;
    }
    buf[n] = '\0';
    return (int)n;
}

static void *serve(void *unused) {
    (void)unused;
    char *buf = malloc(MAX_REQUEST);
    for (;;) {
        int fd = accept(server.listen_fd, NULL, NULL);
        pthread_mutex_lock(&server.lock);
        int stop = server.stop;
        pthread_mutex_unlock(&server.lock);
        if (stop) {
            if (fd >= 0) {
                close(fd);
            }
            break;
        }
        if (fd < 0) {
            continue;
        }
        if (buf != NULL && read_request(fd, buf, MAX_REQUEST) > 0) {
            char answer[sizeof server.answer];
            pthread_mutex_lock(&server.lock);
            server.requests++;
            memcpy(server.last, buf, MAX_REQUEST);
            memcpy(answer, server.answer, sizeof answer);
            pthread_mutex_unlock(&server.lock);
            ssize_t sent = send(fd, answer, strlen(answer), 0);
            (void)sent;
        }
        close(fd);
    }
    free(buf);
    return NULL;
}

static pthread_t server_thread;

static int start_server(void) {
    int fd = loopback_socket(16, &server.port);
    if (fd < 0) {
        return 0;
    }
    server.listen_fd = fd;
    return pthread_create(&server_thread, NULL, serve, NULL) == 0;
}

/* Wake the accept() with one last connection, join the thread, close the socket. */
static void stop_server(void) {
    pthread_mutex_lock(&server.lock);
    server.stop = 1;
    pthread_mutex_unlock(&server.lock);
    loopback_poke(server.port);
    pthread_join(server_thread, NULL);
    close(server.listen_fd);
}

#endif
