/*
 * libperps C++17 API: a header-only layer over the C API in perps.h.
 *
 *   perps::Client client(base_url, perps_url);            // owns a perps_client*
 *   perps::Session session;                               // owns a perps_session* (fresh key)
 *   client.signin(session, "bsc", wallet_private_key);    // or prepare_signin + wallet_sign + login
 *   std::string answer = client.new_order(session, order_json);  // carries its cl_ord_id
 *   client.cancel_order(session, R"({"cl_ord_id":"..."})");        // one method per endpoint
 *
 * What it adds to the C API, and nothing else:
 *  - Ownership. Client, Session and Stream are move-only and free their handle exactly once; a
 *    moved-from object holds no handle (using it throws PERPS_INVALID_ARGUMENT; destroying
 *    it, and Stream::close() on it, do nothing). release() gives the handle up, adopt()
 *    takes one. Every char* the library returns is copied into a std::string and freed
 *    with perps_string_free (which overwrites it) before the function returns or throws.
 *  - Errors. A failing call throws perps::Error (a std::runtime_error) carrying the code,
 *    message, HTTP status, venue body, may_have_reached_venue flag, the order's cl_ord_id,
 *    the x-request-id sent, retry_after_ms and stream_request_id, copied out of the
 *    perps_error, which is then freed. Error is nothrow-copyable, as exceptions should be.
 *  - Inputs. std::string arguments containing a NUL byte throw PERPS_INVALID_ARGUMENT here
 *    instead of being cut short by the C API (a body must be signed and sent in full);
 *    only sign_body_into takes raw bytes (a std::string_view, signed byte for byte).
 *
 * Secrets: a secret argument (wallet_address, wallet_sign and Client::signin's private key,
 * Session::from_api_key's token and key) is borrowed as given, a std::string or a C string,
 * and never copied (a std::string the call made of a `const char *` key would be freed
 * unwiped; tests/cpp/test_secrets.cpp). Results holding secrets (perps::Session::token(),
 * login() answers, wallet signatures) end up in ordinary std::string memory, which is not
 * overwritten when freed. Keep them short-lived, or use the C API for those calls.
 *
 * Threads: as in C. A Client and a Session may be shared between threads (their methods
 * may run concurrently, including the non-const ones); so may a Stream (next, new_order,
 * cancel_order, close). Do not move or destroy one while another thread is using it: to end
 * a Stream that another thread reads, close() it, and destroy it once that call returned.
 *
 * Without exceptions (-fno-exceptions, detected through __cpp_exceptions; or define
 * PERPS_HPP_EXCEPTIONS 0): every failure that would throw perps::Error calls the error
 * handler instead, which must not return. The default prints "libperps: CODE_NAME (n):
 * message" to stderr and calls std::abort(); perps::set_error_handler installs your own, to
 * log and end the process (std::abort, std::_Exit, std::quick_exit). Never longjmp out of it:
 * the jump would skip the destructors of the wrapper's and your call's temporaries (undefined
 * behaviour in C++, and every failure would leak the error and strings it holds). Calls that
 * must fail softly in such a program use the C API (perps.h) directly, or
 * try_sign_body_into, which never fails that way. (For binding authors: a failure goes through detail::fail, never a bare `throw`,
 * so that this header keeps compiling with -fno-exceptions; tests/cpp/run.sh checks it.)
 *
 * Needs C++17 (an older standard stops at an #error; C programs include perps.h).
 * Link with -lperps (see `pkg-config --cflags --libs perps`, or CMake's perps::perps).
 */
#ifndef PERPS_HPP
#define PERPS_HPP

#if defined(_MSVC_LANG) && _MSVC_LANG > __cplusplus
#define PERPS_HPP_STANDARD _MSVC_LANG
#else
#define PERPS_HPP_STANDARD __cplusplus
#endif

#if !defined(__cplusplus) || PERPS_HPP_STANDARD < 201703L
#error "perps.hpp needs C++17 or newer (compile with -std=c++17); C and older C++ can use perps.h"
#else

#ifndef PERPS_HPP_EXCEPTIONS
#if defined(__cpp_exceptions) || defined(_CPPUNWIND)
#define PERPS_HPP_EXCEPTIONS 1
#else
#define PERPS_HPP_EXCEPTIONS 0
#endif
#endif

#include "perps.h"

#if !PERPS_HPP_EXCEPTIONS
#include <atomic>
#include <cstdio>
#include <cstdlib>
#endif
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perps {

/* ------------------------------------------------------------------------------------ */
/* Errors                                                                                */
/* ------------------------------------------------------------------------------------ */

/// The name of a code ("PERPS_INVALID_ORDER"), or "PERPS_UNKNOWN" for a number the header
/// does not know.
inline const char *code_name(perps_code code) noexcept {
    switch (code) {
    case PERPS_OK: return "PERPS_OK";
    case PERPS_INVALID_ARGUMENT: return "PERPS_INVALID_ARGUMENT";
    case PERPS_INVALID_KEY: return "PERPS_INVALID_KEY";
    case PERPS_INVALID_ORDER: return "PERPS_INVALID_ORDER";
    case PERPS_VERIFICATION_FAILED: return "PERPS_VERIFICATION_FAILED";
    case PERPS_INVALID_STATE: return "PERPS_INVALID_STATE";
    case PERPS_TRANSPORT: return "PERPS_TRANSPORT";
    case PERPS_TIMEOUT: return "PERPS_TIMEOUT";
    case PERPS_HTTP_STATUS: return "PERPS_HTTP_STATUS";
    case PERPS_API_ERROR: return "PERPS_API_ERROR";
    case PERPS_BAD_RESPONSE: return "PERPS_BAD_RESPONSE";
    case PERPS_TOKEN_EXPIRED: return "PERPS_TOKEN_EXPIRED";
    case PERPS_RNG: return "PERPS_RNG";
    case PERPS_NOT_FOUND: return "PERPS_NOT_FOUND";
    case PERPS_RATE_LIMITED: return "PERPS_RATE_LIMITED";
    case PERPS_STREAM_CLOSED: return "PERPS_STREAM_CLOSED";
    case PERPS_STREAM_LIMIT: return "PERPS_STREAM_LIMIT";
    case PERPS_PANIC: return "PERPS_PANIC";
    }
    return "PERPS_UNKNOWN";
}

/// One failure, thrown by every wrapper whose C call fails. what() is the message.
class Error : public std::runtime_error {
public:
    Error(perps_code code, const std::string &message, std::uint16_t http_status = 0,
          std::optional<std::string> body = std::nullopt, bool may_have_reached_venue = false,
          std::optional<std::string> cl_ord_id = std::nullopt, std::optional<std::string> x_request_id = std::nullopt,
          std::int64_t retry_after_ms = -1, std::optional<std::string> stream_request_id = std::nullopt)
        : std::runtime_error(message), code_(code), http_status_(http_status), body_(shared(std::move(body))),
          may_have_reached_venue_(may_have_reached_venue), cl_ord_id_(shared(std::move(cl_ord_id))),
          x_request_id_(shared(std::move(x_request_id))), retry_after_ms_(retry_after_ms),
          stream_request_id_(shared(std::move(stream_request_id))) {}

    /// Copy everything out of a C error object (which the caller still owns and frees).
    explicit Error(const perps_error *e)
        : Error(perps_error_code(e), perps_error_message(e), perps_error_http_status(e), copy(perps_error_body(e)),
                perps_error_may_have_reached_venue(e), copy(perps_error_cl_ord_id(e)),
                copy(perps_error_request_id(e)), perps_error_retry_after_ms(e),
                copy(perps_error_stream_request_id(e))) {}

    /// The stable code (PERPS_INVALID_ORDER, PERPS_HTTP_STATUS, ...).
    perps_code code() const noexcept { return code_; }
    /// The message (the same text as what()); never contains a secret.
    const char *message() const noexcept { return what(); }
    /// The HTTP status of the venue's answer, or 0 when there was none.
    std::uint16_t http_status() const noexcept { return http_status_; }
    /// The venue's response body, when there was one.
    std::optional<std::string> body() const { return value(body_); }
    /// Whether the request may have reached the venue: for an order, query the venue before
    /// sending it again (the library never retries).
    bool may_have_reached_venue() const noexcept { return may_have_reached_venue_; }
    /// The `cl_ord_id` of the order a failed new_order (Client or Stream) was placing (the
    /// caller's or the one the library generated): look the order up with query_order before
    /// sending it again; for a failed Stream::cancel_order, the cl_ord_id its params named; for
    /// a request() POST to /api/new_order, the cl_ord_id its body names. std::nullopt for other
    /// calls, or when the call failed before the id was decided (perps_error_cl_ord_id).
    std::optional<std::string> cl_ord_id() const { return value(cl_ord_id_); }
    /// The x-request-id header sent with the failed request (body-signed requests), or
    /// std::nullopt when nothing was sent (perps_error_request_id). Not the session's request
    /// key id (Session::request_id) nor the venue's request_id field.
    std::optional<std::string> x_request_id() const { return value(x_request_id_); }
    /// The envelope request_id of an order-stream request (Stream::new_order, cancel_order)
    /// whose frame may have been partly written when the write failed: the id its
    /// order_response events and the "unanswered" list of the next "disconnected" status
    /// event name. std::nullopt for every other error (perps_error_stream_request_id). Not
    /// the x-request-id.
    std::optional<std::string> stream_request_id() const { return value(stream_request_id_); }
    /// How long to wait before asking again (the Retry-After of a 429 or 503, or the local
    /// rate limiter for PERPS_RATE_LIMITED), in milliseconds; -1 when unknown. A Retry-After
    /// too long to count in milliseconds gives INT64_MAX: cap it before std::chrono
    /// arithmetic (sleep_for's conversion to nanoseconds would overflow).
    std::int64_t retry_after_ms() const noexcept { return retry_after_ms_; }

private:
    using Text = std::shared_ptr<const std::string>;  // shared: copying an Error never throws

    static std::optional<std::string> copy(const char *borrowed) {
        return borrowed ? std::optional<std::string>(borrowed) : std::nullopt;
    }
    static Text shared(std::optional<std::string> text) {
        return text ? std::make_shared<const std::string>(std::move(*text)) : nullptr;
    }
    static std::optional<std::string> value(const Text &text) {
        return text ? std::optional<std::string>(*text) : std::nullopt;
    }

    perps_code code_;
    std::uint16_t http_status_;
    Text body_;
    bool may_have_reached_venue_;
    Text cl_ord_id_;
    Text x_request_id_;
    std::int64_t retry_after_ms_;
    Text stream_request_id_;
};

/* Without exceptions, everything below is in the inline namespace perps::no_exceptions:
 * its functions fail otherwise (they call the error handler), so they must not share names
 * with the throwing ones a translation unit built with exceptions compiles. Otherwise a
 * program mixing both kinds of object files would have two definitions of each (an ODR
 * violation), of which the linker keeps one for every caller: a failure in code built to
 * catch perps::Error could abort the process (tests/cpp/test_mixed_exceptions.cpp). The
 * names in code are unchanged (perps::Client), but not the types: a Client made in one mode
 * cannot be passed to a function built in the other (a link error says so). perps::Error
 * and code_name(), above, are the same in both. */
#if !PERPS_HPP_EXCEPTIONS
inline namespace no_exceptions {
#endif

/* ------------------------------------------------------------------------------------ */
/* Plumbing (not part of the API)                                                        */
/* ------------------------------------------------------------------------------------ */

#if !PERPS_HPP_EXCEPTIONS
/// Without exceptions: what a failure calls instead of throwing perps::Error. It must not
/// return (if it does, std::abort() follows), and must end the process rather than longjmp
/// out (that would skip the destructors of the failing call's temporaries).
using ErrorHandler = void (*)(const Error &error);

namespace detail {
inline std::atomic<ErrorHandler> error_handler{nullptr};
}  // namespace detail

/// Install the handler failures call (nullptr restores the default: print, then abort);
/// returns the previous one (nullptr for the default). Any thread; takes effect at once.
inline ErrorHandler set_error_handler(ErrorHandler handler) noexcept {
    return detail::error_handler.exchange(handler);
}
#endif

namespace detail {

/// Every failure of this header goes through here: throw, or (without exceptions) the
/// error handler, then abort.
[[noreturn]] inline void fail(const Error &error) {
#if PERPS_HPP_EXCEPTIONS
    throw error;
#else
    if (ErrorHandler handler = error_handler.load()) {
        handler(error);
    } else {
        std::fprintf(stderr, "libperps: %s (%d): %s\n", code_name(error.code()), static_cast<int>(error.code()),
                     error.what());
    }
    std::abort();
#endif
}

struct ErrorFree {
    void operator()(perps_error *e) const noexcept { perps_error_free(e); }
};
struct StringFree {
    void operator()(char *s) const noexcept { perps_string_free(s); }
};
struct ClientFree {
    void operator()(perps_client *c) const noexcept { perps_client_free(c); }
};
struct SessionFree {
    void operator()(perps_session *s) const noexcept { perps_session_free(s); }
};
struct StreamFree {
    void operator()(perps_stream *st) const noexcept { perps_stream_free(st); }
};
using ErrorPtr = std::unique_ptr<perps_error, ErrorFree>;
using StringPtr = std::unique_ptr<char, StringFree>;

/// The `perps_error **err` out-parameter of one call. Whatever the call stores is freed
/// when this goes out of scope, after raise() has copied it into a perps::Error.
class ErrorSlot {
public:
    ErrorSlot() noexcept = default;
    ErrorSlot(const ErrorSlot &) = delete;
    ErrorSlot &operator=(const ErrorSlot &) = delete;
    ~ErrorSlot() { perps_error_free(err_); }

    perps_error **out() noexcept { return &err_; }

    /// Throw the stored error (or, should the library not have stored one, `code`).
    [[noreturn]] void raise(const char *function, perps_code code = PERPS_PANIC) {
        ErrorPtr owned(std::exchange(err_, nullptr));  // freed after Error has copied it
        if (owned) {
            fail(Error(owned.get()));
        }
        fail(Error(code, std::string(function) + " failed (" + code_name(code) + ")"));
    }

private:
    perps_error *err_ = nullptr;
};

/// A std::string argument as a C string; one containing a NUL byte would be silently cut
/// short by the C API, so it is refused.
inline const char *arg(const std::string &s, const char *name) {
    if (s.find('\0') != std::string::npos) {
        fail(Error(PERPS_INVALID_ARGUMENT, std::string(name) + " contains a NUL byte"));
    }
    return s.c_str();
}

/// An optional argument: std::nullopt is NULL.
inline const char *arg(const std::optional<std::string> &s, const char *name) {
    return s ? arg(*s, name) : nullptr;
}

/// A secret argument (a private key, an API token): the caller's std::string or C string,
/// borrowed for the call and never copied. A `const std::string &` parameter would turn a
/// `const char *` key into a std::string the call made and freed unwiped (on the heap past
/// the small-string size), where the C library wipes what it is given.
class SecretArg {
public:
    SecretArg(const std::string &s) noexcept : string_(&s) {}  // NOLINT(google-explicit-constructor)
    SecretArg(const char *s) noexcept : c_string_(s) {}        // NOLINT(google-explicit-constructor)

    /// As a C string for the call: NULL stays NULL (the C API refuses it); a std::string
    /// holding a NUL byte is refused as arg() refuses it.
    const char *c_str(const char *name) const { return string_ ? arg(*string_, name) : c_string_; }

private:
    const std::string *string_ = nullptr;
    const char *c_string_ = nullptr;
};

/// Call a C function that returns an owned char* (NULL on failure): `call(perps_error **)`.
template <typename Call>
std::string string_result(const char *function, Call call) {
    ErrorSlot err;
    StringPtr result(call(err.out()));
    if (!result) {
        err.raise(function);
    }
    return std::string(result.get());  // if this throws, result is still freed
}

/// Call a C function that returns a perps_code: `call(perps_error **)`.
template <typename Call>
void code_result(const char *function, Call call) {
    ErrorSlot err;
    perps_code code = call(err.out());
    if (code != PERPS_OK) {
        err.raise(function, code);
    }
}

}  // namespace detail

/* ------------------------------------------------------------------------------------ */
/* Free functions: no handle, no network                                                 */
/* ------------------------------------------------------------------------------------ */

/// The library's version, "MAJOR.MINOR.PATCH" (static storage). Compare with
/// PERPS_VERSION_MAJOR/MINOR/PATCH, the version of the header you compiled against.
inline std::string_view version() noexcept { return perps_version(); }

/// The wallet address of `private_key` on `chain` ("bsc": EIP-55, "solana": base58).
inline std::string wallet_address(const std::string &chain, detail::SecretArg private_key) {
    return detail::string_result("perps_wallet_address", [&](perps_error **err) {
        return perps_wallet_address(detail::arg(chain, "chain"), private_key.c_str("private_key"), err);
    });
}

/// The login `signature` for a sign-in payload (the JSON Client::prepare_signin returns).
inline std::string wallet_sign(const std::string &chain, detail::SecretArg private_key,
                               const std::string &payload_json) {
    return detail::string_result("perps_wallet_sign", [&](perps_error **err) {
        return perps_wallet_sign(detail::arg(chain, "chain"), private_key.c_str("private_key"),
                                 detail::arg(payload_json, "payload_json"), err);
    });
}

/// Wrap a raw 64-byte Ed25519 signature of the payload's `message` (made e.g. by a hardware
/// wallet for `address`) into the login `signature`; verified first.
inline std::string wrap_solana_signature(const std::string &payload_json, const std::string &address,
                                         const std::uint8_t *signature, std::size_t signature_len) {
    return detail::string_result("perps_wallet_wrap_solana_signature", [&](perps_error **err) {
        return perps_wallet_wrap_solana_signature(detail::arg(payload_json, "payload_json"),
                                                  detail::arg(address, "address"), signature, signature_len, err);
    });
}

inline std::string wrap_solana_signature(const std::string &payload_json, const std::string &address,
                                         const std::vector<std::uint8_t> &signature) {
    return wrap_solana_signature(payload_json, address, signature.data(), signature.size());
}

/// The exact compact body Client::new_order would sign and send (validates the order).
inline std::string order_serialize(const std::string &order_json) {
    return detail::string_result("perps_order_serialize", [&](perps_error **err) {
        return perps_order_serialize(detail::arg(order_json, "order_json"), err);
    });
}

/// Verify a sign-in challenge offline; returns the decoded payload JSON.
/// `now_unix_secs` 0 means the system clock.
inline std::string challenge_verify(const std::string &signed_data, const std::string &certs_json,
                                    const std::string &request_id, const std::string &chain,
                                    const std::string &address, std::int64_t now_unix_secs = 0) {
    return detail::string_result("perps_challenge_verify", [&](perps_error **err) {
        return perps_challenge_verify(detail::arg(signed_data, "signed_data"), detail::arg(certs_json, "certs_json"),
                                      detail::arg(request_id, "request_id"), detail::arg(chain, "chain"),
                                      detail::arg(address, "address"), now_unix_secs, err);
    });
}

/* ------------------------------------------------------------------------------------ */
/* Session: one identity (owns a perps_session*)                                         */
/* ------------------------------------------------------------------------------------ */

class Session {
public:
    /// A session with a fresh temporary Ed25519 request key (perps_session_new).
    Session() : handle_(make()) {}

    /// A session for a web-site API credential (perps_session_from_api_key).
    static Session from_api_key(detail::SecretArg api_token, detail::SecretArg ed25519_private_key) {
        detail::ErrorSlot err;
        perps_session *s = perps_session_from_api_key(api_token.c_str("api_token"),
                                                      ed25519_private_key.c_str("ed25519_private_key"), err.out());
        if (s == nullptr) {
            err.raise("perps_session_from_api_key");
        }
        return Session(s);
    }

    /// Take ownership of a handle from the C API (NULL gives an empty session).
    static Session adopt(perps_session *s) noexcept { return Session(s); }

    Session(Session &&) noexcept = default;
    Session &operator=(Session &&) noexcept = default;  // frees the handle it held
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;
    ~Session() = default;  // perps_session_free (zeroizes the key and token)

    /// The handle, still owned by this object (NULL after a move).
    perps_session *get() const noexcept { return handle_.get(); }
    /// Give the handle up: the caller frees it with perps_session_free.
    perps_session *release() noexcept { return handle_.release(); }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    /// The request key id: base58 of the session's Ed25519 public key, sent as requestId at
    /// sign-in. Not the x-request-id (fresh per signed request) nor the venue's request_id.
    std::string request_id() const {
        return detail::string_result("perps_session_request_id",
                                     [&](perps_error **err) { return perps_session_request_id(get(), err); });
    }

    /// The access token (a secret). PERPS_INVALID_STATE when not logged in.
    std::string token() const {
        return detail::string_result("perps_session_token",
                                     [&](perps_error **err) { return perps_session_token(get(), err); });
    }

    /// State as JSON, without secrets (request_id, has_token, chain, address, ...).
    std::string info() const {
        return detail::string_result("perps_session_info",
                                     [&](perps_error **err) { return perps_session_info(get(), err); });
    }

    /// Forget the token and any pending challenge; the key is kept.
    void logout() {
        detail::code_result("perps_session_logout",
                            [&](perps_error **err) { return perps_session_logout(get(), err); });
    }

    /// The x-session-id header for order entry (the POSTs of new_order, cancel_order and
    /// cancel_orders; reads go without it); std::nullopt clears it.
    void set_session_id(const std::optional<std::string> &value) {
        detail::code_result("perps_session_set_session_id", [&](perps_error **err) {
            return perps_session_set_session_id(get(), detail::arg(value, "value"), err);
        });
    }

    /// The x-impersonate header (a vault id) for trading requests; std::nullopt clears it.
    void set_impersonate(const std::optional<std::string> &value) {
        detail::code_result("perps_session_set_impersonate", [&](perps_error **err) {
            return perps_session_set_impersonate(get(), detail::arg(value, "value"), err);
        });
    }

    /// Sign `body` with a fresh UUID and the local clock: JSON of the four x-request-* headers.
    std::string sign_body(const std::string &body) const {
        return detail::string_result("perps_sign_body", [&](perps_error **err) {
            return perps_sign_body(get(), detail::arg(body, "body"), err);
        });
    }

    /// The same with your request id (a hyphenated UUID) and timestamp (ms since the epoch).
    std::string sign_body_at(const std::string &body, const std::string &request_id,
                             std::int64_t timestamp_ms) const {
        return detail::string_result("perps_sign_body_at", [&](perps_error **err) {
            return perps_sign_body_at(get(), detail::arg(body, "body"), detail::arg(request_id, "request_id"),
                                      timestamp_ms, err);
        });
    }

    /// The hot path without allocation: the four header values in fixed-size C strings.
    /// The body is signed byte for byte (it may contain any UTF-8, including NUL).
    perps_body_signature sign_body_into(std::string_view body) const {
        perps_body_signature out{};
        perps_code code = try_sign_body_into(body, out);
        if (code != PERPS_OK) {
            detail::fail(Error(code, std::string("perps_sign_body_into failed (") + code_name(code) + ")"));
        }
        return out;
    }

    /// The same without exceptions: PERPS_OK, or a code (`out` is then unchanged).
    perps_code try_sign_body_into(std::string_view body, perps_body_signature &out) const noexcept {
        return perps_sign_body_into(get(), reinterpret_cast<const std::uint8_t *>(body.data()), body.size(), &out);
    }

private:
    explicit Session(perps_session *s) noexcept : handle_(s) {}

    static perps_session *make() {
        detail::ErrorSlot err;
        perps_session *s = perps_session_new(err.out());
        if (s == nullptr) {
            err.raise("perps_session_new");
        }
        return s;
    }

    std::unique_ptr<perps_session, detail::SessionFree> handle_;
};

/* ------------------------------------------------------------------------------------ */
/* Client: the venue, its HTTP settings and connection pool (owns a perps_client*)       */
/* ------------------------------------------------------------------------------------ */

class Client {
public:
    /// A client for the venue's two base URLs; `options_json` as in perps_client_new.
    Client(const std::string &base_url, const std::string &perps_url,
           const std::optional<std::string> &options_json = std::nullopt)
        : handle_(make(base_url, perps_url, options_json)) {}

    /// Take ownership of a handle from the C API (NULL gives an empty client).
    static Client adopt(perps_client *c) noexcept { return Client(c); }

    Client(Client &&) noexcept = default;
    Client &operator=(Client &&) noexcept = default;  // frees the handle it held
    Client(const Client &) = delete;
    Client &operator=(const Client &) = delete;
    ~Client() = default;  // perps_client_free

    perps_client *get() const noexcept { return handle_.get(); }
    perps_client *release() noexcept { return handle_.release(); }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    /// Measure the venue's clock and keep the offset for later requests; returns it (ms).
    std::int64_t sync_time() const {
        std::int64_t offset_ms = 0;
        detail::code_result("perps_client_sync_time",
                            [&](perps_error **err) { return perps_client_sync_time(get(), &offset_ms, err); });
        return offset_ms;
    }

    /// POST prepare-signin, verify the challenge, keep it in the session; returns the
    /// payload JSON whose `message` the wallet signs (see perps::wallet_sign).
    std::string prepare_signin(Session &session, const std::string &chain, const std::string &address) const {
        return detail::string_result("perps_prepare_signin", [&](perps_error **err) {
            return perps_prepare_signin(get(), session.get(), detail::arg(chain, "chain"),
                                        detail::arg(address, "address"), err);
        });
    }

    /// POST login with the kept challenge and the wallet's signature; keeps the token.
    /// `expires_seconds` <= 0 asks for the venue default. Returns the login answer (has the token).
    std::string login(Session &session, const std::string &signature, std::int64_t expires_seconds = 0) const {
        return detail::string_result("perps_login", [&](perps_error **err) {
            return perps_login(get(), session.get(), detail::arg(signature, "signature"), expires_seconds, err);
        });
    }

    /// All of sign-in in one call with an in-process wallet key; returns the login answer.
    std::string signin(Session &session, const std::string &chain, detail::SecretArg wallet_private_key,
                       std::int64_t expires_seconds = 0) const {
        return detail::string_result("perps_signin", [&](perps_error **err) {
            return perps_signin(get(), session.get(), detail::arg(chain, "chain"),
                                wallet_private_key.c_str("wallet_private_key"), expires_seconds, err);
        });
    }

    /// Validate, serialise once, sign and POST /api/new_order; the venue's answer.
    /// Never retried: on an Error with may_have_reached_venue(), query before resending.
    std::string new_order(const Session &session, const std::string &order_json) const {
        return detail::string_result("perps_new_order", [&](perps_error **err) {
            return perps_new_order(get(), session.get(), detail::arg(order_json, "order_json"), err);
        });
    }

    /// Any other endpoint under perps_url ("GET", "POST", "PUT", "DELETE"; path from '/').
    /// A body, when given, is signed and sent byte for byte. Never retried, but a GET that
    /// found its kept-alive connection closed before any answer is sent once more (README
    /// "The keep-alive race").
    std::string request(const Session &session, const std::string &method, const std::string &path,
                        const std::optional<std::string> &body = std::nullopt) const {
        return detail::string_result("perps_request", [&](perps_error **err) {
            return perps_request(get(), session.get(), detail::arg(method, "method"), detail::arg(path, "path"),
                                 detail::arg(body, "body"), err);
        });
    }

    /* -- The trading loop: one method per venue endpoint (perps_cancel_order ...). --------
     * `params_json` is a JSON object of the endpoint's parameters (see perps.h; checked
     * before anything is sent: PERPS_INVALID_ARGUMENT names the parameter), std::nullopt for
     * none. Returns the venue's JSON answer. Never retried (but a GET query that found its
     * kept-alive connection closed before any answer is sent once more: README "The
     * keep-alive race"). An order already gone or not yet visible: PERPS_NOT_FOUND. The
     * three public endpoints also take no session.                                         */

    /// POST /api/cancel_order: {"order_id":<int64>} or {"cl_ord_id":"..."}.
    std::string cancel_order(const Session &session, const std::string &params_json) const {
        return endpoint("perps_cancel_order", perps_cancel_order, session.get(), params_json);
    }
    /// POST /api/cancel_orders: {"order_id_list":[...]} and/or {"cl_ord_id_list":[...]}.
    std::string cancel_orders(const Session &session, const std::string &params_json) const {
        return endpoint("perps_cancel_orders", perps_cancel_orders, session.get(), params_json);
    }
    /// Cancel every open order selected (symbol, cl_ord_id_prefix; cl_ord_id_list: named orders
    /// the venue may not list yet — alone, only those), then confirm each ended with
    /// query_order for up to confirm_ms (default 15000; 0: do not confirm). Returns the report
    /// {"complete", "orders": [{"order_id","cl_ord_id","symbol","status","confirmed"}],
    /// "cancel_requests", "failed_cancel_requests", "queries", "listing_truncated"} (perps.h:
    /// perps_cancel_all). std::nullopt: every open order.
    std::string cancel_all(const Session &session,
                           const std::optional<std::string> &params_json = std::nullopt) const {
        return endpoint("perps_cancel_all", perps_cancel_all, session.get(), params_json);
    }
    /// POST /api/change_leverage: {"symbol":"BTC-USD","leverage":<int>}.
    std::string change_leverage(const Session &session, const std::string &params_json) const {
        return endpoint("perps_change_leverage", perps_change_leverage, session.get(), params_json);
    }
    /// POST /api/change_margin_mode: {"symbol":"BTC-USD","margin_mode":"cross"|"isolated"}.
    std::string change_margin_mode(const Session &session, const std::string &params_json) const {
        return endpoint("perps_change_margin_mode", perps_change_margin_mode, session.get(), params_json);
    }
    /// GET /api/query_order: {"order_id":<int64>} or {"cl_ord_id":"..."}; the order object.
    std::string query_order(const Session &session, const std::string &params_json) const {
        return endpoint("perps_query_order", perps_query_order, session.get(), params_json);
    }
    /// GET /api/query_orders (history): symbol, status, order_type, start, end, last_id, limit.
    std::string query_orders(const Session &session,
                             const std::optional<std::string> &params_json = std::nullopt) const {
        return endpoint("perps_query_orders", perps_query_orders, session.get(), params_json);
    }
    /// GET /api/query_open_orders: symbol, limit.
    std::string query_open_orders(const Session &session,
                                  const std::optional<std::string> &params_json = std::nullopt) const {
        return endpoint("perps_query_open_orders", perps_query_open_orders, session.get(), params_json);
    }
    /// GET /api/query_trades (the account's fills): symbol, side, start, end, last_id, limit.
    std::string query_trades(const Session &session,
                             const std::optional<std::string> &params_json = std::nullopt) const {
        return endpoint("perps_query_trades", perps_query_trades, session.get(), params_json);
    }
    /// GET /api/query_funding_history (the account's funding payments, `qty` negative = paid):
    /// symbol, start, end, last_id, limit (1..500). The venue's JSON as sent: a bare array of
    /// rows newest first (live), or the {"page_size","result","total"} envelope.
    std::string query_funding_history(const Session &session,
                                      const std::optional<std::string> &params_json = std::nullopt) const {
        return endpoint("perps_query_funding_history", perps_query_funding_history, session.get(), params_json);
    }
    /// GET /api/query_positions: symbol (optional).
    std::string query_positions(const Session &session,
                                const std::optional<std::string> &params_json = std::nullopt) const {
        return endpoint("perps_query_positions", perps_query_positions, session.get(), params_json);
    }
    /// GET /api/query_balance (no parameters).
    std::string query_balance(const Session &session,
                              const std::optional<std::string> &params_json = std::nullopt) const {
        return endpoint("perps_query_balance", perps_query_balance, session.get(), params_json);
    }
    /// GET /api/query_position_config: {"symbol":"BTC-USD"}.
    std::string query_position_config(const Session &session, const std::string &params_json) const {
        return endpoint("perps_query_position_config", perps_query_position_config, session.get(), params_json);
    }
    /// GET /api/query_symbol_info (public): symbol (optional: every symbol without it).
    std::string query_symbol_info(const std::optional<std::string> &params_json = std::nullopt) const {
        return endpoint("perps_query_symbol_info", perps_query_symbol_info, nullptr, params_json);
    }
    std::string query_symbol_info(const Session &session,
                                  const std::optional<std::string> &params_json = std::nullopt) const {
        return endpoint("perps_query_symbol_info", perps_query_symbol_info, session.get(), params_json);
    }
    /// GET /api/query_symbol_price (public): {"symbol":"BTC-USD"}.
    std::string query_symbol_price(const std::string &params_json) const {
        return endpoint("perps_query_symbol_price", perps_query_symbol_price, nullptr, params_json);
    }
    std::string query_symbol_price(const Session &session, const std::string &params_json) const {
        return endpoint("perps_query_symbol_price", perps_query_symbol_price, session.get(), params_json);
    }
    /// GET /api/query_depth_book (public): {"symbol":"BTC-USD"} and an optional "limit"
    /// (1..1000, undocumented by the venue, passed through); levels sorted best first.
    std::string query_depth_book(const std::string &params_json) const {
        return endpoint("perps_query_depth_book", perps_query_depth_book, nullptr, params_json);
    }
    std::string query_depth_book(const Session &session, const std::string &params_json) const {
        return endpoint("perps_query_depth_book", perps_query_depth_book, session.get(), params_json);
    }

private:
    explicit Client(perps_client *c) noexcept : handle_(c) {}

    /// The shape every endpoint export shares.
    using EndpointFn = char *(*)(const perps_client *, const perps_session *, const char *, perps_error **);

    std::string endpoint(const char *function, EndpointFn fn, const perps_session *session,
                         const std::string &params_json) const {
        return endpoint(function, fn, session, detail::arg(params_json, "params_json"));
    }
    std::string endpoint(const char *function, EndpointFn fn, const perps_session *session,
                         const std::optional<std::string> &params_json) const {
        return endpoint(function, fn, session, detail::arg(params_json, "params_json"));
    }
    std::string endpoint(const char *function, EndpointFn fn, const perps_session *session,
                         const char *params_json) const {
        return detail::string_result(function, [&](perps_error **err) { return fn(get(), session, params_json, err); });
    }

    static perps_client *make(const std::string &base_url, const std::string &perps_url,
                              const std::optional<std::string> &options_json) {
        detail::ErrorSlot err;
        perps_client *c = perps_client_new(detail::arg(base_url, "base_url"), detail::arg(perps_url, "perps_url"),
                                           detail::arg(options_json, "options_json"), err.out());
        if (c == nullptr) {
            err.raise("perps_client_new");
        }
        return c;
    }

    std::unique_ptr<perps_client, detail::ClientFree> handle_;
};

/* ------------------------------------------------------------------------------------ */
/* Stream: one of the venue's WebSockets (owns a perps_stream*)                           */
/* ------------------------------------------------------------------------------------ */

/// The market + account stream (Stream::market) or the order stream (Stream::orders). A
/// poll model: next() returns the next event as JSON; the library never calls your code.
/// RAII: the destructor closes the stream and frees it (perps_stream_free, bounded wait).
/// next(), new_order(), cancel_order() and close() may run on different threads at once;
/// close() wakes a next() blocked in another thread (it then throws PERPS_STREAM_CLOSED).
/// Not the destructor nor a move: as perps_stream_free, they must not run while another
/// thread is in one of the stream's calls (close() it, wait until that call returned, then
/// destroy it). The stream keeps what it needs of its Client and Session: they may be destroyed first.
class Stream {
public:
    /// perps_stream_open without a session: public channels only.
    static Stream market(const Client &client, const std::string &subscriptions_json) {
        return Stream(open(client.get(), nullptr, subscriptions_json));
    }
    /// perps_stream_open with a session: public and account channels.
    static Stream market(const Client &client, const Session &session, const std::string &subscriptions_json) {
        return Stream(open(client.get(), session.get(), subscriptions_json));
    }
    /// perps_order_stream_open: order entry and order results.
    static Stream orders(const Client &client, const Session &session) {
        detail::ErrorSlot err;
        perps_stream *st = perps_order_stream_open(client.get(), session.get(), err.out());
        if (st == nullptr) {
            err.raise("perps_order_stream_open");
        }
        return Stream(st);
    }

    /// Take ownership of a handle from the C API (NULL gives an empty stream).
    static Stream adopt(perps_stream *st) noexcept { return Stream(st); }

    Stream(Stream &&) noexcept = default;
    Stream &operator=(Stream &&) noexcept = default;  // frees the stream it held
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;
    ~Stream() = default;  // perps_stream_free: closes, then frees

    perps_stream *get() const noexcept { return handle_.get(); }
    /// Give the handle up: the caller closes and frees it with perps_stream_free.
    perps_stream *release() noexcept { return handle_.release(); }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    /// The next event (one JSON object), or std::nullopt when `timeout` passes first
    /// (a negative timeout waits without limit). Throws perps::Error with
    /// PERPS_STREAM_CLOSED after close() or once an ended stream has given all its events.
    std::optional<std::string> next(std::chrono::milliseconds timeout) const {
        detail::ErrorSlot err;
        detail::StringPtr event(perps_stream_next(get(), static_cast<std::int64_t>(timeout.count()), err.out()));
        if (event) {
            return std::string(event.get());
        }
        if (*err.out() != nullptr) {
            err.raise("perps_stream_next");
        }
        return std::nullopt;
    }

    /// The next event, waiting without limit.
    std::string next() const {
        std::optional<std::string> event = next(std::chrono::milliseconds(-1));
        return event ? std::move(*event) : std::string();
    }

    /// Order stream: validate (and, with the client option symbol_rules, check against the
    /// symbol rules, as Client::new_order), sign and write an `order:new` frame; returns
    /// {"request_id":…,"cl_ord_id":…} once written (replies come as order_response events).
    std::string new_order(const std::string &order_json) const {
        return detail::string_result("perps_stream_new_order", [&](perps_error **err) {
            return perps_stream_new_order(get(), detail::arg(order_json, "order_json"), err);
        });
    }

    /// Order stream: `order:cancel` with {"order_id":…} and/or {"cl_ord_id":…}.
    std::string cancel_order(const std::string &params_json) const {
        return detail::string_result("perps_stream_cancel_order", [&](perps_error **err) {
            return perps_stream_cancel_order(get(), detail::arg(params_json, "params_json"), err);
        });
    }

    /// Close from any thread; the object stays valid until destroyed. Harmless twice, and on
    /// a moved-from Stream it does nothing (it cannot throw: destructors and shutdown paths
    /// call it).
    void close() const noexcept { perps_stream_close(get()); }

private:
    explicit Stream(perps_stream *st) noexcept : handle_(st) {}

    static perps_stream *open(const perps_client *c, const perps_session *s, const std::string &subscriptions_json) {
        detail::ErrorSlot err;
        perps_stream *st = perps_stream_open(c, s, detail::arg(subscriptions_json, "subscriptions_json"), err.out());
        if (st == nullptr) {
            err.raise("perps_stream_open");
        }
        return st;
    }

    std::unique_ptr<perps_stream, detail::StreamFree> handle_;
};

#if !PERPS_HPP_EXCEPTIONS
}  // inline namespace no_exceptions
#endif

}  // namespace perps

#endif  // C++17
#endif  // PERPS_HPP
