/*
 * libperps C++17 layer, one part of perps.hpp: the free functions (no handle, no network) and perps::Session.
 * Include perps.hpp, never this file alone: perps.hpp checks the standard, includes perps.h
 * and the standard headers, and includes its parts in order.
 */
#ifndef PERPS_HPP_SESSION_PART
#define PERPS_HPP_SESSION_PART

#ifndef PERPS_HPP_INCLUDING_PARTS
#error "include perps.hpp, not perps/session.hpp"
#else

namespace perps {

/* ------------------------------------------------------------------------------------ */
/* Free functions: no handle, no network                                                 */
/* ------------------------------------------------------------------------------------ */

/// The library's version, "MAJOR.MINOR.PATCH" (static storage). Compare with
/// PERPS_VERSION_MAJOR/MINOR/PATCH, the version of the header you compiled against.
inline std::string_view version() noexcept { return perps_version(); }

/// The wallet address of `private_key` on `chain` ("bsc": EIP-55, "solana": base58).
inline std::string wallet_address(const std::string &chain, const std::string &private_key) {
    return detail::string_result("perps_wallet_address", [&](perps_error **err) {
        return perps_wallet_address(detail::arg(chain, "chain"), detail::arg(private_key, "private_key"), err);
    });
}

/// The login `signature` for a sign-in payload (the JSON Client::prepare_signin returns).
inline std::string wallet_sign(const std::string &chain, const std::string &private_key,
                               const std::string &payload_json) {
    return detail::string_result("perps_wallet_sign", [&](perps_error **err) {
        return perps_wallet_sign(detail::arg(chain, "chain"), detail::arg(private_key, "private_key"),
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
    static Session from_api_key(const std::string &api_token, const std::string &ed25519_private_key) {
        detail::ErrorSlot err;
        perps_session *s = perps_session_from_api_key(detail::arg(api_token, "api_token"),
                                                      detail::arg(ed25519_private_key, "ed25519_private_key"),
                                                      err.out());
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

}  // namespace perps

#endif  // PERPS_HPP_INCLUDING_PARTS
#endif  // PERPS_HPP_SESSION_PART
