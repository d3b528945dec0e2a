/*
 * libperps C++17 layer, one part of perps.hpp: perps::Client: sign-in, orders and the trading loop over REST.
 * Include perps.hpp, never this file alone: perps.hpp checks the standard, includes perps.h
 * and the standard headers, and includes its parts in order.
 */
#ifndef PERPS_HPP_CLIENT_PART
#define PERPS_HPP_CLIENT_PART

#ifndef PERPS_HPP_INCLUDING_PARTS
#error "include perps.hpp, not perps/client.hpp"
#else

namespace perps {

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
    std::string signin(Session &session, const std::string &chain, const std::string &wallet_private_key,
                       std::int64_t expires_seconds = 0) const {
        return detail::string_result("perps_signin", [&](perps_error **err) {
            return perps_signin(get(), session.get(), detail::arg(chain, "chain"),
                                detail::arg(wallet_private_key, "wallet_private_key"), expires_seconds, err);
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
    /// A body, when given, is signed and sent byte for byte. Never retried.
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
     * none. Returns the venue's JSON answer. Never retried. An order already gone or not yet
     * visible: PERPS_NOT_FOUND. The three public endpoints also take no session.           */

    /// POST /api/cancel_order: {"order_id":<int64>} or {"cl_ord_id":"..."}.
    std::string cancel_order(const Session &session, const std::string &params_json) const {
        return endpoint("perps_cancel_order", perps_cancel_order, session.get(), params_json);
    }
    /// POST /api/cancel_orders: {"order_id_list":[...]} and/or {"cl_ord_id_list":[...]}.
    std::string cancel_orders(const Session &session, const std::string &params_json) const {
        return endpoint("perps_cancel_orders", perps_cancel_orders, session.get(), params_json);
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
    /// GET /api/query_depth_book (public): {"symbol":"BTC-USD"}; levels sorted best first.
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

}  // namespace perps

#endif  // PERPS_HPP_INCLUDING_PARTS
#endif  // PERPS_HPP_CLIENT_PART
