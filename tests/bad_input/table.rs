//! The bad-input table's format: the parsed line (`Case`, `Arg`), the parameter kinds of
//! every exported function, the list of exports, the endpoint calls and code names, and the
//! parser of `cases.txt`. Part of the runner in `harness.rs`; its own module because the
//! format is one concept, apart from the fixtures and the calls.

use perps::ffi::client::*;
use perps::ffi::error::*;
use perps::ffi::session::*;
use perps::ffi::trading::*;
use std::ffi::c_char;

pub const TABLE: &str = include_str!("cases.txt");

/// One argument as the table writes it.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Null,
    Str { bytes: Vec<u8>, secret: bool },
    Int(String),
    Fixture(String),
}

#[derive(Clone, Debug)]
pub struct Case {
    pub line: usize,
    pub function: String,
    pub args: Vec<Arg>,
    pub expected: perps_code,
    /// `None` for "-": no message to check.
    pub fragment: Option<String>,
}

impl Case {
    pub fn label(&self) -> String {
        format!("cases.txt:{} perps_{}", self.line, self.function)
    }
}

/// Parameter kinds of every exported function, in C order, without `err`:
/// c client, s session, x string, k secret string, b bytes (a length follows), n size_t,
/// i int64_t, o out-pointer, e error / C client / S session / z string / t stream / T stream to
/// free that may only be NULL.
pub fn signature(function: &str) -> Option<&'static str> {
    Some(match function {
        "string_free" => "z",
        "client_free" => "C",
        "session_free" => "S",
        "error_free"
        | "error_code"
        | "error_message"
        | "error_http_status"
        | "error_body"
        | "error_may_have_reached_venue"
        | "error_cl_ord_id"
        | "error_request_id"
        | "error_stream_request_id"
        | "error_retry_after_ms" => "e",
        "version" | "session_new" => "",
        "client_new" => "xxx",
        "session_from_api_key" => "kk",
        "session_request_id" | "session_token" | "session_info" | "session_logout" => "s",
        "session_set_session_id" | "session_set_impersonate" => "sx",
        "sign_body" => "sx",
        "sign_body_at" => "sxxi",
        "sign_body_into" => "sbno",
        "wallet_address" => "xk",
        "wallet_sign" => "xkx",
        "wallet_wrap_solana_signature" => "xxbn",
        "challenge_verify" => "xxxxxi",
        "order_serialize" => "x",
        "prepare_signin" => "csxx",
        "login" => "csxi",
        "signin" => "csxki",
        "new_order" => "csx",
        "request" => "csxxx",
        "client_sync_time" => "co",
        name if endpoint(name).is_some() => "csx",
        "stream_open" => "csx",
        "order_stream_open" => "cs",
        "stream_next" => "ti",
        "stream_new_order" | "stream_cancel_order" => "tx",
        "stream_close" => "t",
        "stream_free" => "T",
        _ => return None,
    })
}

/// Every function the header exports (for the "every exported function" check).
pub const EXPORTED: &[&str] = &[
    "string_free",
    "challenge_verify",
    "client_new",
    "client_free",
    "prepare_signin",
    "login",
    "signin",
    "new_order",
    "request",
    "client_sync_time",
    "error_code",
    "error_message",
    "error_http_status",
    "error_body",
    "error_may_have_reached_venue",
    "error_cl_ord_id",
    "error_request_id",
    "error_stream_request_id",
    "error_retry_after_ms",
    "error_free",
    "order_serialize",
    "session_new",
    "session_from_api_key",
    "session_request_id",
    "session_token",
    "session_info",
    "session_logout",
    "session_free",
    "session_set_session_id",
    "session_set_impersonate",
    "sign_body",
    "sign_body_at",
    "sign_body_into",
    "version",
    "wallet_address",
    "wallet_sign",
    "wallet_wrap_solana_signature",
    "cancel_order",
    "cancel_orders",
    "cancel_all",
    "change_leverage",
    "change_margin_mode",
    "query_order",
    "query_orders",
    "query_open_orders",
    "query_trades",
    "query_funding_history",
    "query_positions",
    "query_balance",
    "query_position_config",
    "query_symbol_info",
    "query_symbol_price",
    "query_depth_book",
    "stream_open",
    "order_stream_open",
    "stream_next",
    "stream_new_order",
    "stream_cancel_order",
    "stream_close",
    "stream_free",
];

/// The fifteen endpoint calls and `perps_cancel_all`, all `char *perps_X(client, session, params_json, err)`.
type EndpointFn =
    extern "C" fn(*const perps_client, *const perps_session, *const c_char, *mut *mut perps_error) -> *mut c_char;

pub fn endpoint(name: &str) -> Option<EndpointFn> {
    Some(match name {
        "cancel_order" => perps_cancel_order,
        "cancel_orders" => perps_cancel_orders,
        "cancel_all" => perps_cancel_all,
        "change_leverage" => perps_change_leverage,
        "change_margin_mode" => perps_change_margin_mode,
        "query_order" => perps_query_order,
        "query_orders" => perps_query_orders,
        "query_open_orders" => perps_query_open_orders,
        "query_trades" => perps_query_trades,
        "query_funding_history" => perps_query_funding_history,
        "query_positions" => perps_query_positions,
        "query_balance" => perps_query_balance,
        "query_position_config" => perps_query_position_config,
        "query_symbol_info" => perps_query_symbol_info,
        "query_symbol_price" => perps_query_symbol_price,
        "query_depth_book" => perps_query_depth_book,
        _ => return None,
    })
}

pub fn code_named(name: &str) -> Option<perps_code> {
    use perps_code::*;
    Some(match name {
        "OK" => PERPS_OK,
        "INVALID_ARGUMENT" => PERPS_INVALID_ARGUMENT,
        "INVALID_KEY" => PERPS_INVALID_KEY,
        "INVALID_ORDER" => PERPS_INVALID_ORDER,
        "VERIFICATION_FAILED" => PERPS_VERIFICATION_FAILED,
        "INVALID_STATE" => PERPS_INVALID_STATE,
        "TRANSPORT" => PERPS_TRANSPORT,
        "TIMEOUT" => PERPS_TIMEOUT,
        "HTTP_STATUS" => PERPS_HTTP_STATUS,
        "API_ERROR" => PERPS_API_ERROR,
        "BAD_RESPONSE" => PERPS_BAD_RESPONSE,
        "TOKEN_EXPIRED" => PERPS_TOKEN_EXPIRED,
        "RNG" => PERPS_RNG,
        "NOT_FOUND" => PERPS_NOT_FOUND,
        "RATE_LIMITED" => PERPS_RATE_LIMITED,
        "STREAM_CLOSED" => PERPS_STREAM_CLOSED,
        "STREAM_LIMIT" => PERPS_STREAM_LIMIT,
        "PANIC" => PERPS_PANIC,
        _ => return None,
    })
}

// ---- parsing ---------------------------------------------------------------------------------

fn parse_literal(bytes: &[u8], mut i: usize, line: usize) -> (Vec<u8>, usize) {
    assert_eq!(bytes[i], b'"', "line {line}: a literal starts with '\"'");
    i += 1;
    let mut out = Vec::new();
    loop {
        let b = *bytes.get(i).unwrap_or_else(|| panic!("line {line}: unterminated literal"));
        i += 1;
        match b {
            b'"' => return (out, i),
            b'\\' => {
                let e = bytes[i];
                i += 1;
                match e {
                    b'\\' => out.push(b'\\'),
                    b'"' => out.push(b'"'),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'x' => {
                        let hex = std::str::from_utf8(&bytes[i..i + 2]).unwrap();
                        out.push(u8::from_str_radix(hex, 16).unwrap_or_else(|_| panic!("line {line}: bad \\x")));
                        i += 2;
                    }
                    other => panic!("line {line}: unknown escape \\{}", other as char),
                }
            }
            other => out.push(other),
        }
    }
}

/// Parse the table; panics (naming the line) on anything malformed.
pub fn parse(table: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for (index, text) in table.lines().enumerate() {
        let line = index + 1;
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let bytes = trimmed.as_bytes();
        let mut i = 0;
        let mut tokens: Vec<Arg> = Vec::new();
        let mut function = String::new();
        let mut after_arrow: Vec<String> = Vec::new();
        let mut fragment: Option<Vec<u8>> = None;
        let mut arrow = false;
        while i < bytes.len() {
            if bytes[i] == b' ' || bytes[i] == b'\t' {
                i += 1;
                continue;
            }
            if bytes[i] == b'"' || (bytes[i] == b'$' && bytes.get(i + 1) == Some(&b'"')) {
                let secret = bytes[i] == b'$';
                let (value, next) = parse_literal(bytes, if secret { i + 1 } else { i }, line);
                i = next;
                if arrow {
                    fragment = Some(value);
                } else {
                    tokens.push(Arg::Str { bytes: value, secret });
                }
                continue;
            }
            let start = i;
            while i < bytes.len() && bytes[i] != b' ' && bytes[i] != b'\t' {
                i += 1;
            }
            let word = &trimmed[start..i];
            if word == "=>" {
                arrow = true;
            } else if arrow {
                after_arrow.push(word.to_owned());
            } else if function.is_empty() {
                function = word.to_owned();
            } else if word == "NULL" {
                tokens.push(Arg::Null);
            } else if let Some(name) = word.strip_prefix('@') {
                tokens.push(Arg::Fixture(name.to_owned()));
            } else if word.parse::<i128>().is_ok() {
                tokens.push(Arg::Int(word.to_owned()));
            } else {
                panic!("line {line}: unknown token {word:?}");
            }
        }
        assert!(arrow, "line {line}: no '=>'");
        assert_eq!(after_arrow.len(), 1, "line {line}: expected exactly one code name after '=>'");
        let expected = code_named(&after_arrow[0]).unwrap_or_else(|| panic!("line {line}: unknown code"));
        let fragment = fragment.unwrap_or_else(|| panic!("line {line}: no fragment (use \"-\")"));
        let fragment = String::from_utf8(fragment).unwrap();
        let kinds = signature(&function).unwrap_or_else(|| panic!("line {line}: unknown function {function}"));
        assert_eq!(kinds.len(), tokens.len(), "line {line}: perps_{function} takes {} arguments", kinds.len());
        cases.push(Case {
            line,
            function,
            args: tokens,
            expected,
            fragment: if fragment == "-" { None } else { Some(fragment) },
        });
    }
    cases
}

pub fn cases() -> Vec<Case> {
    parse(TABLE)
}
