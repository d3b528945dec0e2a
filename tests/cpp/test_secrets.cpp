/*
 * tests/cpp/test_secrets.cpp: include/perps.hpp makes no copy of a secret argument that it
 * cannot wipe.
 *
 * A wallet key or an API token is often at hand as a `const char *` (getenv, a config
 * parser, a locked buffer). Taken as `const std::string &`, such an argument became a
 * std::string made by the call: a copy of the key on the heap (past the small-string size),
 * freed unwiped when the call returned. The C library wipes what it is given; so do the
 * Java and C# bindings with their own copies (README "Use from C#"). perps.hpp borrows a
 * secret argument instead, as a C string or as the caller's std::string, and copies
 * neither.
 *
 * How: this program replaces the global operator new and delete (every std::string and
 * std::vector allocation passes through them; the Rust library's own allocations do not)
 * and looks into each block as it is freed for any of the test's secrets. The library is
 * given each secret once as a C string and once as a std::string, on calls that succeed
 * and calls that fail; no freed block may hold one. A control (a std::string copy made by
 * the test) shows the scan finds what it looks for. No network: the only client call goes
 * to 127.0.0.1:1 (connection refused).
 *
 * Prints "N passed, M failed" last and exits non-zero on any failure.
 */
#include "perps.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "../c/fixtures.h"

// An API token longer than any small-string buffer.
static const char API_TOKEN[] = "cpp-secret-api-token-0123456789abcdefghijklmnopqrstuvwxyz";

// ------------------------------------------------------------------------------------
// Freed-block scan
// ------------------------------------------------------------------------------------

static const char *const SECRETS[] = {EVM_KEY, ED_SEED_B58, ED_PAIR_B58, API_TOKEN};
static int freed_holding_secret = 0;

// Each block starts with a header that records its size, so delete can look into it.
static constexpr std::size_t HEADER = alignof(std::max_align_t);

static bool holds_secret(const char *block, std::size_t size) {
    for (const char *secret : SECRETS) {
        std::size_t len = std::strlen(secret);
        for (std::size_t at = 0; at + len <= size; ++at) {
            if (std::memcmp(block + at, secret, len) == 0) {
                return true;
            }
        }
    }
    return false;
}

void *operator new(std::size_t size) {
    char *raw = static_cast<char *>(std::malloc(size + HEADER));
    if (raw == nullptr) {
        throw std::bad_alloc();
    }
    std::memcpy(raw, &size, sizeof size);
    return raw + HEADER;
}
void *operator new[](std::size_t size) { return operator new(size); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept {
    try {
        return operator new(size);
    } catch (...) {
        return nullptr;
    }
}
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return operator new(size, std::nothrow); }

void operator delete(void *block) noexcept {
    if (block == nullptr) {
        return;
    }
    char *raw = static_cast<char *>(block) - HEADER;
    std::size_t size;
    std::memcpy(&size, raw, sizeof size);
    if (holds_secret(static_cast<char *>(block), size)) {
        ++freed_holding_secret;
    }
    std::free(raw);
}
void operator delete[](void *block) noexcept { operator delete(block); }
void operator delete(void *block, std::size_t) noexcept { operator delete(block); }
void operator delete[](void *block, std::size_t) noexcept { operator delete(block); }
void operator delete(void *block, const std::nothrow_t &) noexcept { operator delete(block); }
void operator delete[](void *block, const std::nothrow_t &) noexcept { operator delete(block); }

// ------------------------------------------------------------------------------------
// Harness
// ------------------------------------------------------------------------------------

#include "check.hpp"

// Run `call`, which may throw perps::Error (`failing`: must), and count the freed blocks
// that held a secret meanwhile: there must be none.
template <typename F>
static void no_copy_freed_at(F call, bool failing, const char *what, int line) {
    freed_holding_secret = 0;
    bool threw = false;
    try {
        call();
    } catch (const perps::Error &) {
        threw = true;
    }
    check_at(threw == failing, failing ? "the call failed" : "the call succeeded", line);
    check_at(freed_holding_secret == 0, what, line);
    if (freed_holding_secret != 0) {
        std::fprintf(stderr, "     %d freed block(s) held a secret\n", freed_holding_secret);
    }
}
#define NO_COPY_FREED(expr, failing) no_copy_freed_at([&] { (void)(expr); }, (failing), #expr, __LINE__)

// A C string that is not one of the fixtures' arrays (as from getenv or a config parser).
static const char *c_string(const char *text) { return text; }

int main() {
    // The control: a std::string copy of a secret, freed, is found.
    freed_holding_secret = 0;
    {
        std::string copy(c_string(EVM_KEY));
        CHECK(copy.size() == std::strlen(EVM_KEY));
    }
    CHECK(freed_holding_secret == 1);

    // Secrets given as C strings: no std::string of them is made.
    const char *evm_key = c_string(EVM_KEY);
    const char *ed_seed = c_string(ED_SEED_B58);
    const char *ed_pair = c_string(ED_PAIR_B58);
    const char *token = c_string(API_TOKEN);
    NO_COPY_FREED(perps::wallet_address("bsc", evm_key), false);
    NO_COPY_FREED(perps::wallet_address("solana", ed_pair), false);
    NO_COPY_FREED(perps::wallet_address("eth", evm_key), true);  // refused: no copy either
    NO_COPY_FREED(perps::wallet_sign("bsc", evm_key, EVM_PAYLOAD), false);
    NO_COPY_FREED(perps::wallet_sign("solana", ed_seed, SOL_PAYLOAD), false);
    NO_COPY_FREED(perps::wallet_sign("bsc", evm_key, "not json"), true);
    NO_COPY_FREED(perps::Session::from_api_key(token, ed_seed), false);
    NO_COPY_FREED(perps::Session::from_api_key(token, ed_pair), false);
    NO_COPY_FREED(perps::Session::from_api_key(token, "not-a-key"), true);

    perps::Client client("http://127.0.0.1:1/auth", "http://127.0.0.1:1/perps");
    perps::Session session;
    NO_COPY_FREED(client.signin(session, "bsc", evm_key, 3600), true);  // connection refused

    // The same secrets as the caller's std::strings: borrowed, not copied.
    {
        const std::string key_string(evm_key);
        const std::string token_string(token);
        const std::string seed_string(ed_seed);
        NO_COPY_FREED(perps::wallet_address("bsc", key_string), false);
        NO_COPY_FREED(perps::wallet_sign("bsc", key_string, EVM_PAYLOAD), false);
        NO_COPY_FREED(perps::Session::from_api_key(token_string, seed_string), false);
        NO_COPY_FREED(client.signin(session, "bsc", key_string, 3600), true);
    }

    // A NUL byte inside a std::string secret is still refused, not cut short.
    try {
        perps::wallet_address("bsc", std::string(evm_key) + '\0');
        CHECK(false);
    } catch (const perps::Error &e) {
        CHECK(e.code() == PERPS_INVALID_ARGUMENT && std::strstr(e.what(), "private_key contains a NUL byte"));
    }

    // A NULL C string is the C API's PERPS_INVALID_ARGUMENT, not a crash in std::string.
    try {
        perps::wallet_address("bsc", static_cast<const char *>(nullptr));
        CHECK(false);
    } catch (const perps::Error &e) {
        CHECK(e.code() == PERPS_INVALID_ARGUMENT);
    }

    return perps_test_summary();
}
