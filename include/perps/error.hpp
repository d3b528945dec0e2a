/*
 * libperps C++17 layer, one part of perps.hpp: errors: perps::Error, code_name, the no-exceptions handler, and the helpers every wrapper calls.
 * Include perps.hpp, never this file alone: perps.hpp checks the standard, includes perps.h
 * and the standard headers, and includes its parts in order.
 */
#ifndef PERPS_HPP_ERROR_PART
#define PERPS_HPP_ERROR_PART

#ifndef PERPS_HPP_INCLUDING_PARTS
#error "include perps.hpp, not perps/error.hpp"
#else

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
    /// rate limiter for PERPS_RATE_LIMITED), in milliseconds; -1 when unknown.
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

}  // namespace perps

#endif  // PERPS_HPP_INCLUDING_PARTS
#endif  // PERPS_HPP_ERROR_PART
