/*
 * tests/cpp/sandbox_harness.hpp: what the C++ tests against the sandbox venue share — the
 * check counters and macros, the expected-error helper, the one-test runner, the bsc test
 * key, and the venue's admin endpoints (under /_sandbox) over a plain socket (no HTTP
 * library in the tests). Its functions are inline: a program uses those it needs.
 */
#ifndef PERPS_TESTS_SANDBOX_HARNESS_HPP
#define PERPS_TESTS_SANDBOX_HARNESS_HPP

#include "perps.hpp"

#include "mini_json.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using mini_json::Value;

// ------------------------------------------------------------------------------------
// A tiny harness
// ------------------------------------------------------------------------------------

static int passed = 0;
static int failed = 0;

// `file` defaults to the caller's file (a GCC and Clang builtin): the test's, not this header's.
inline bool check_at(bool ok, const char *expr, int line, const std::string &context = std::string(),
                     const char *file = __builtin_FILE()) {
    if (ok) {
        ++passed;
    } else {
        ++failed;
        std::cout.flush();
        std::cerr << "FAIL " << file << ":" << line << ": " << expr << (context.empty() ? "" : "\n     ")
                  << context << "\n";
    }
    return ok;
}
#define CHECK(cond) check_at(static_cast<bool>(cond), #cond, __LINE__)
#define CHECK_CTX(cond, context) check_at(static_cast<bool>(cond), #cond, __LINE__, (context))

inline bool contains(const std::string &haystack, const std::string &needle) {
    return haystack.find(needle) != std::string::npos;
}

// The perps::Error `f` throws, or std::nullopt (and a failure) when it throws none.
template <typename F>
inline std::optional<perps::Error> error_of_at(F f, perps_code code, int line) {
    try {
        f();
        check_at(false, "a perps::Error was thrown", line);
        return std::nullopt;
    } catch (const perps::Error &e) {
        check_at(e.code() == code, "e.code() == expected code", line,
                 std::string("got ") + perps::code_name(e.code()) + ": " + e.what() + "; expected " +
                     perps::code_name(code));
        return e;
    }
}
#define ERROR_OF(expr, code) error_of_at([&] { (void)(expr); }, (code), __LINE__)

// Hardhat/Anvil account #0: a published TEST key, never to be used with real funds.
static const char BSC_KEY[] = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

// ------------------------------------------------------------------------------------
// The sandbox's admin endpoints, over a plain socket (no HTTP library in the tests)
// ------------------------------------------------------------------------------------

static std::string g_admin_host = "127.0.0.1";
static int g_admin_port = 0;
static std::string g_admin_path;  // "/_sandbox"

inline bool parse_admin_url(const std::string &url) {
    const std::string prefix = "http://";
    if (url.compare(0, prefix.size(), prefix) != 0) {
        return false;
    }
    std::size_t colon = url.find(':', prefix.size());
    std::size_t slash = url.find('/', prefix.size());
    if (colon == std::string::npos || slash == std::string::npos || colon > slash) {
        return false;
    }
    g_admin_host = url.substr(prefix.size(), colon - prefix.size());
    g_admin_port = std::atoi(url.substr(colon + 1, slash - colon - 1).c_str());
    g_admin_path = url.substr(slash);
    return g_admin_port > 0;
}

/// One admin request; returns the answer's body (throws on a non-200 answer).
inline std::string admin(const std::string &method, const std::string &what, const std::string &body = "") {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        throw std::runtime_error("socket");
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(g_admin_port));
    inet_pton(AF_INET, g_admin_host.c_str(), &addr.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
        close(fd);
        throw std::runtime_error("connect to the sandbox's admin port");
    }
    std::string request = method + " " + g_admin_path + "/" + what + " HTTP/1.1\r\nHost: " + g_admin_host +
                          "\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body;
    for (std::size_t sent = 0; sent < request.size();) {
        ssize_t n = send(fd, request.data() + sent, request.size() - sent, 0);
        if (n <= 0) {
            close(fd);
            throw std::runtime_error("send to the admin port");
        }
        sent += static_cast<std::size_t>(n);
    }
    std::string answer;
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0) {
        answer.append(buf, static_cast<std::size_t>(n));
    }
    close(fd);
    std::size_t head_end = answer.find("\r\n\r\n");
    if (answer.compare(0, 12, "HTTP/1.1 200") != 0 || head_end == std::string::npos) {
        throw std::runtime_error("admin " + what + ": " + answer.substr(0, 200));
    }
    std::string payload = answer.substr(head_end + 4);
    if (contains(answer.substr(0, head_end), "ransfer-Encoding: chunked")) {  // de-chunk
        std::string plain;
        std::size_t at = 0;
        while (at < payload.size()) {
            std::size_t eol = payload.find("\r\n", at);
            std::size_t size = std::strtoul(payload.substr(at, eol - at).c_str(), nullptr, 16);
            if (size == 0) {
                break;
            }
            plain += payload.substr(eol + 2, size);
            at = eol + 2 + size + 2;
        }
        payload = plain;
    }
    return payload;
}

/// The venue's request log (oldest first) for one endpoint, e.g. "cancel_order".
inline std::vector<Value> logged(const std::string &endpoint, int last = 200) {
    Value log = mini_json::parse(admin("GET", "requests?last=" + std::to_string(last)));
    std::vector<Value> out;
    const std::string suffix = "/api/" + endpoint;
    for (const Value &r : log.items) {
        const std::string &path = r["path"].text;
        if (path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
            out.push_back(r);
        }
    }
    return out;
}

/// How many requests to /api/* the venue has logged so far (to show that nothing was sent).
inline std::size_t api_requests() {
    Value log = mini_json::parse(admin("GET", "requests?last=1000"));
    std::size_t n = 0;
    for (const Value &r : log.items) {
        n += contains(r["path"].text, "/api/") ? 1 : 0;
    }
    return n;
}

// Run one test; an exception it does not expect fails it, and the next test still runs.
template <typename F>
inline void run(const char *name, F test) {
    try {
        test();
    } catch (const perps::Error &e) {
        check_at(false, name, __LINE__,
                 std::string("unexpected perps::Error ") + perps::code_name(e.code()) + ": " + e.what() + " " +
                     e.body().value_or(""));
    } catch (const std::exception &e) {
        check_at(false, name, __LINE__, std::string("unexpected exception: ") + e.what());
    }
}

#endif  // PERPS_TESTS_SANDBOX_HARNESS_HPP
