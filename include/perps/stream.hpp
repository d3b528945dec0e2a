/*
 * libperps C++17 layer, one part of perps.hpp: perps::Stream: the venue's two WebSockets.
 * Include perps.hpp, never this file alone: perps.hpp checks the standard, includes perps.h
 * and the standard headers, and includes its parts in order.
 */
#ifndef PERPS_HPP_STREAM_PART
#define PERPS_HPP_STREAM_PART

#ifndef PERPS_HPP_INCLUDING_PARTS
#error "include perps.hpp, not perps/stream.hpp"
#else

namespace perps {

/* ------------------------------------------------------------------------------------ */
/* Stream: one of the venue's WebSockets (owns a perps_stream*)                           */
/* ------------------------------------------------------------------------------------ */

/// The market + account stream (Stream::market) or the order stream (Stream::orders). A
/// poll model: next() returns the next event as JSON; the library never calls your code.
/// RAII: the destructor closes the stream and frees it (perps_stream_free, bounded wait).
/// next(), new_order(), cancel_order() and close() may run on different threads at once;
/// close() wakes a next() blocked in another thread (it then throws PERPS_STREAM_CLOSED).
/// The stream keeps what it needs of its Client and Session: they may be destroyed first.
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
        return event ? *event : std::string();
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

    /// Close from any thread; the object stays valid until destroyed. Harmless twice.
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

}  // namespace perps

#endif  // PERPS_HPP_INCLUDING_PARTS
#endif  // PERPS_HPP_STREAM_PART
