//! The runner of the bad-input table `tests/bad_input/cases.txt`, shared by
//! `tests/bad_input.rs` (every case through the C ABI, with its assertions) and
//! `tests/secrets.rs` (what the cases produce, scanned for secrets). The C twin of this runner
//! is `tests/c/test_bad_input.c`; both read the same file, so the table is written once.
//! The file's header documents the line format and the fixtures.
#![allow(dead_code)]

use perps::ffi::challenge::perps_challenge_verify;
use perps::ffi::client::*;
use perps::ffi::error::*;
use perps::ffi::order::perps_order_serialize;
use perps::ffi::session::*;
use perps::ffi::sign::*;
use perps::ffi::stream::*;
use perps::ffi::strings::perps_string_free;
use perps::ffi::trading::*;
use perps::ffi::version::perps_version;
use perps::ffi::wallet::*;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

pub const TABLE: &str = include_str!("cases.txt");
/// Longest message any failing case may produce: an error never carries a huge input back.
pub const MAX_MESSAGE_LEN: usize = 512;
/// A secret leaks when any run of this many bytes of it appears in a message.
pub const SECRET_WINDOW: usize = 8;

pub const API_TOKEN: &str = "api-tok-7Hq2Lm9Xw4Rk8Vn3";
pub const LOGGED_OUT_TOKEN: &str = "api-tok-gone-5Tz1Qp6Yc0Wd";
pub const EVM_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/// RFC 8032 test 1: the seed in base58, and seed || public key in base58.
pub const ED_SEED_B58: &str = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
pub const ED_PAIR_B58: &str =
    "49W385L4rePHy6PAaQUovbD2aacgN4HsKXSMeUzRg4fmwXszN91JuMFrQRj3vMDpZuRF3ZknQBuRBoWQJEfXstMw";
pub const ED_PUBLIC_B58: &str = "FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z";
pub const EVM_PAYLOAD: &str = "{\"domain\":\"standx.com\",\"chainId\":56,\"message\":\"standx.com wants you to sign in \
    with your Ethereum account:\\n0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266\\n\\nSign in to StandX.\\n\\nNonce: \
    abc123\",\"exp\":1700000180,\"iat\":1700000000}";
pub const SOL_PAYLOAD: &str = "{\"message\":\"sign me please\",\"requestId\":\"x\"}";
pub const SOL_RAW_SIG: [u8; 64] = [
    73, 168, 206, 31, 70, 74, 255, 147, 242, 247, 230, 89, 131, 29, 150, 98, 180, 38, 138, 158, 24, 219, 207, 93, 120,
    132, 56, 86, 61, 25, 219, 9, 86, 73, 244, 95, 62, 151, 232, 135, 181, 10, 10, 23, 44, 18, 77, 22, 154, 252, 179,
    31, 149, 250, 31, 197, 190, 77, 213, 27, 64, 158, 152, 7,
];
pub const CERTS: &str = "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"k1\",\"alg\":\"ES256\",\"use\":\"sig\",\
    \"x\":\"axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY\",\"y\":\"T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU\"}]}";
pub const ORDER: &str = "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\",\
    \"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";
pub const MIB10: usize = 10 << 20;

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
    "change_leverage",
    "change_margin_mode",
    "query_order",
    "query_orders",
    "query_open_orders",
    "query_trades",
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

/// The fourteen endpoint calls, all `char *perps_X(client, session, params_json, err)`.
type EndpointFn =
    extern "C" fn(*const perps_client, *const perps_session, *const c_char, *mut *mut perps_error) -> *mut c_char;

pub fn endpoint(name: &str) -> Option<EndpointFn> {
    Some(match name {
        "cancel_order" => perps_cancel_order,
        "cancel_orders" => perps_cancel_orders,
        "change_leverage" => perps_change_leverage,
        "change_margin_mode" => perps_change_margin_mode,
        "query_order" => perps_query_order,
        "query_orders" => perps_query_orders,
        "query_open_orders" => perps_query_open_orders,
        "query_trades" => perps_query_trades,
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

// ---- fixtures --------------------------------------------------------------------------------

pub struct Fixtures {
    pub client: *mut perps_client,
    pub fresh: *mut perps_session,
    pub api: *mut perps_session,
    pub logged_out: *mut perps_session,
    /// name → (bytes without NUL, secret)
    pub strings: HashMap<&'static str, (Vec<u8>, bool)>,
    pub url: String,
}

/// A loopback URL nothing listens on.
pub fn closed_loopback_url() -> String {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    format!("http://127.0.0.1:{port}")
}

impl Fixtures {
    pub fn new() -> Fixtures {
        let url = closed_loopback_url();
        Fixtures::with_urls(&url, &url)
    }

    /// The same fixtures with @client pointing at the given venue URLs.
    pub fn with_urls(base_url: &str, perps_url: &str) -> Fixtures {
        let url = base_url.to_owned();
        let (b, p) = (CString::new(base_url).unwrap(), CString::new(perps_url).unwrap());
        let client = perps_client_new(b.as_ptr(), p.as_ptr(), null(), null_mut());
        assert!(!client.is_null());
        let fresh = perps_session_new(null_mut());
        let token = CString::new(API_TOKEN).unwrap();
        let gone = CString::new(LOGGED_OUT_TOKEN).unwrap();
        let key = CString::new(ED_SEED_B58).unwrap();
        let api = perps_session_from_api_key(token.as_ptr(), key.as_ptr(), null_mut());
        let logged_out = perps_session_from_api_key(gone.as_ptr(), key.as_ptr(), null_mut());
        assert!(!fresh.is_null() && !api.is_null() && !logged_out.is_null());
        assert_eq!(perps_session_logout(logged_out, null_mut()), perps_code::PERPS_OK);

        let mut strings: HashMap<&'static str, (Vec<u8>, bool)> = HashMap::new();
        strings.insert("order", (ORDER.into(), false));
        strings.insert("evm_key", (EVM_KEY.into(), true));
        strings.insert("sol_key", (ED_PAIR_B58.into(), true));
        strings.insert("evm_payload", (EVM_PAYLOAD.into(), false));
        strings.insert("sol_payload", (SOL_PAYLOAD.into(), false));
        strings.insert("sol_address", (ED_PUBLIC_B58.into(), false));
        strings.insert("sig64", (SOL_RAW_SIG.to_vec(), false));
        strings.insert("zero64", (vec![0u8; 64], false));
        strings.insert("certs", (CERTS.into(), false));
        strings.insert("big_ascii", (vec![b'a'; MIB10], false));
        let mut bad = vec![b'a'; MIB10];
        bad[MIB10 - 1] = 0xff;
        strings.insert("big_bad_utf8", (bad, false));
        let mut order = ORDER.trim_end_matches('}').as_bytes().to_vec();
        order.extend_from_slice(b",\"cl_ord_id\":\"");
        order.resize(order.len() + MIB10, b'x');
        order.extend_from_slice(b"\"}");
        strings.insert("big_order", (order, false));
        let mut deep = b"{\"a\":".to_vec();
        deep.resize(deep.len() + MIB10, b'[');
        strings.insert("big_deep", (deep, false));
        let mut json_string = b"\"".to_vec();
        json_string.resize(1 + MIB10, b'a');
        json_string.push(b'"');
        strings.insert("big_json_string", (json_string, false));
        strings.insert("big_key", (vec![b'a'; 64 << 10], true));
        Fixtures { client, fresh, api, logged_out, strings, url }
    }

    fn session(&self, name: &str) -> *mut perps_session {
        match name {
            "fresh" => self.fresh,
            "api" => self.api,
            "logged_out" => self.logged_out,
            other => panic!("unknown session fixture @{other}"),
        }
    }

    /// Secrets a case hands to the library: see the table's header.
    pub fn secrets(&self, case: &Case) -> Vec<Vec<u8>> {
        let kinds = signature(&case.function).unwrap().as_bytes();
        let mut secrets = Vec::new();
        for (arg, &kind) in case.args.iter().zip(kinds) {
            match arg {
                Arg::Str { bytes, secret } if *secret || kind == b'k' => secrets.push(bytes.clone()),
                Arg::Fixture(name) => match name.as_str() {
                    "api" => secrets.extend([API_TOKEN.into(), ED_SEED_B58.into()]),
                    "logged_out" => secrets.extend([LOGGED_OUT_TOKEN.into(), ED_SEED_B58.into()]),
                    other => {
                        if let Some((bytes, secret)) = self.strings.get(other)
                            && (*secret || kind == b'k')
                        {
                            secrets.push(bytes.clone());
                        }
                    }
                },
                _ => {}
            }
        }
        secrets
    }
}

impl Drop for Fixtures {
    fn drop(&mut self) {
        perps_client_free(self.client);
        perps_session_free(self.fresh);
        perps_session_free(self.api);
        perps_session_free(self.logged_out);
    }
}

/// The first run of `SECRET_WINDOW` bytes of `secret` found in `text` (the whole secret when
/// it is shorter, if at least 4 bytes long), searching `text`'s windows in `secret`.
pub fn leaked_run(text: &[u8], secret: &[u8]) -> Option<String> {
    if secret.len() < 4 {
        return None;
    }
    let w = SECRET_WINDOW.min(secret.len());
    if text.len() < w {
        return None;
    }
    let runs: std::collections::HashSet<&[u8]> = secret.windows(w).collect();
    text.windows(w).find(|run| runs.contains(run)).map(|run| String::from_utf8_lossy(run).into_owned())
}

// ---- running a case through the C ABI ---------------------------------------------------------

/// What one call gave back.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The code of the error object, or of the return value when there is no error object
    /// (perps_sign_body_into, accessors); PERPS_OK on success.
    pub code: Option<perps_code>,
    pub message: Option<String>,
    pub http_status: u16,
    pub body: Option<String>,
    pub reached: bool,
    /// `perps_error_request_id`: an x-request-id means request bytes were sent.
    pub request_id: Option<String>,
    /// The returned string on success (copied, then freed).
    pub returned: Option<String>,
    /// Problems found while calling (return value vs. error object, out-parameters, the
    /// second call with err == NULL).
    pub problems: Vec<String>,
}

enum Ret {
    Owned(*mut c_char),
    Client(*mut perps_client),
    Session(*mut perps_session),
    Stream(*mut perps_stream),
    Code(perps_code),
    Unit,
}

fn copy(ptr: *const c_char) -> Option<String> {
    (!ptr.is_null()).then(|| String::from_utf8_lossy(unsafe { CStr::from_ptr(ptr) }.to_bytes()).into_owned())
}

/// Run a case: once with an error out-parameter, once (when it fails) with err == NULL.
pub fn run(case: &Case, fx: &Fixtures) -> Outcome {
    let kinds = signature(&case.function).unwrap().as_bytes();
    let mut keep: Vec<CString> = Vec::new();
    let mut ptrs: Vec<*const c_char> = Vec::new();
    let mut ints: Vec<i128> = Vec::new();
    let mut last_len = 0usize;
    let mut out_sig = [0x5au8; std::mem::size_of::<perps_body_signature>()];
    let mut out_i64: i64 = 0x5a5a_5a5a_5a5a_5a5a;
    let mut uses_out = false;
    for (arg, &kind) in case.args.iter().zip(kinds) {
        let (ptr, int): (*const c_char, i128) = match (arg, kind) {
            (Arg::Null, _) => (null(), 0),
            (Arg::Fixture(name), b'c') if name == "client" => (fx.client as *const c_char, 0),
            (Arg::Fixture(name), b's') => (fx.session(name) as *const c_char, 0),
            (Arg::Fixture(name), b'o') if name == "out" => {
                uses_out = true;
                let p = if case.function == "sign_body_into" {
                    out_sig.as_mut_ptr() as *const c_char
                } else {
                    &mut out_i64 as *mut i64 as *const c_char
                };
                (p, 0)
            }
            (Arg::Fixture(name), b'n') if name == "len" => (null(), last_len as i128),
            (Arg::Fixture(name), b'x' | b'k' | b'b') => {
                let (bytes, _) = fx.strings.get(name.as_str()).unwrap_or_else(|| panic!("unknown fixture @{name}"));
                last_len = bytes.len();
                if kind == b'b' {
                    (bytes.as_ptr() as *const c_char, 0)
                } else {
                    keep.push(CString::new(bytes.clone()).expect("string fixture without NUL"));
                    (keep.last().unwrap().as_ptr(), 0)
                }
            }
            (Arg::Str { bytes, .. }, b'x' | b'k' | b'b') => {
                last_len = bytes.len();
                keep.push(CString::new(bytes.clone()).expect("literal without NUL"));
                (keep.last().unwrap().as_ptr(), 0)
            }
            (Arg::Int(text), b'i' | b'n') => (null(), text.parse::<i128>().unwrap()),
            (arg, kind) => panic!("{}: argument {arg:?} does not fit parameter kind {}", case.label(), kind as char),
        };
        ptrs.push(ptr);
        ints.push(int);
    }
    let p = |i: usize| ptrs[i];
    let i64_at = |i: usize| i64::try_from(ints[i]).expect("int64 argument in range");
    let usize_at = |i: usize| u64::try_from(ints[i]).expect("size_t argument in range") as usize;

    let call = |err: *mut *mut perps_error| -> Ret {
        match case.function.as_str() {
            "string_free" => {
                perps_string_free(p(0) as *mut c_char);
                Ret::Unit
            }
            "client_free" => {
                perps_client_free(p(0) as *mut perps_client);
                Ret::Unit
            }
            "session_free" => {
                perps_session_free(p(0) as *mut perps_session);
                Ret::Unit
            }
            "error_free" => {
                perps_error_free(p(0) as *mut perps_error);
                Ret::Unit
            }
            "error_code" => Ret::Code(perps_error_code(p(0) as *const perps_error)),
            // Accessors without an error object: checked against their documented answers.
            "error_message"
            | "error_http_status"
            | "error_body"
            | "error_may_have_reached_venue"
            | "error_cl_ord_id"
            | "error_request_id"
            | "error_retry_after_ms"
            | "version" => Ret::Unit,
            "session_new" => Ret::Session(perps_session_new(err)),
            "client_new" => Ret::Client(perps_client_new(p(0), p(1), p(2), err)),
            "session_from_api_key" => Ret::Session(perps_session_from_api_key(p(0), p(1), err)),
            "session_request_id" => Ret::Owned(perps_session_request_id(p(0) as *const perps_session, err)),
            "session_token" => Ret::Owned(perps_session_token(p(0) as *const perps_session, err)),
            "session_info" => Ret::Owned(perps_session_info(p(0) as *const perps_session, err)),
            "session_logout" => Ret::Code(perps_session_logout(p(0) as *const perps_session, err)),
            "session_set_session_id" => {
                Ret::Code(perps_session_set_session_id(p(0) as *const perps_session, p(1), err))
            }
            "session_set_impersonate" => {
                Ret::Code(perps_session_set_impersonate(p(0) as *const perps_session, p(1), err))
            }
            "sign_body" => Ret::Owned(perps_sign_body(p(0) as *const perps_session, p(1), err)),
            "sign_body_at" => Ret::Owned(perps_sign_body_at(p(0) as *const perps_session, p(1), p(2), i64_at(3), err)),
            "sign_body_into" => Ret::Code(perps_sign_body_into(
                p(0) as *const perps_session,
                p(1) as *const u8,
                usize_at(2),
                p(3) as *mut perps_body_signature,
            )),
            "wallet_address" => Ret::Owned(perps_wallet_address(p(0), p(1), err)),
            "wallet_sign" => Ret::Owned(perps_wallet_sign(p(0), p(1), p(2), err)),
            "wallet_wrap_solana_signature" => {
                Ret::Owned(perps_wallet_wrap_solana_signature(p(0), p(1), p(2) as *const u8, usize_at(3), err))
            }
            "challenge_verify" => Ret::Owned(perps_challenge_verify(p(0), p(1), p(2), p(3), p(4), i64_at(5), err)),
            "order_serialize" => Ret::Owned(perps_order_serialize(p(0), err)),
            "prepare_signin" => Ret::Owned(perps_prepare_signin(
                p(0) as *const perps_client,
                p(1) as *const perps_session,
                p(2),
                p(3),
                err,
            )),
            "login" => {
                Ret::Owned(perps_login(p(0) as *const perps_client, p(1) as *const perps_session, p(2), i64_at(3), err))
            }
            "signin" => Ret::Owned(perps_signin(
                p(0) as *const perps_client,
                p(1) as *const perps_session,
                p(2),
                p(3),
                i64_at(4),
                err,
            )),
            "new_order" => {
                Ret::Owned(perps_new_order(p(0) as *const perps_client, p(1) as *const perps_session, p(2), err))
            }
            "request" => Ret::Owned(perps_request(
                p(0) as *const perps_client,
                p(1) as *const perps_session,
                p(2),
                p(3),
                p(4),
                err,
            )),
            "client_sync_time" => Ret::Code(perps_client_sync_time(p(0) as *const perps_client, p(1) as *mut i64, err)),
            name if endpoint(name).is_some() => Ret::Owned(endpoint(name).unwrap()(
                p(0) as *const perps_client,
                p(1) as *const perps_session,
                p(2),
                err,
            )),
            "stream_open" => {
                Ret::Stream(perps_stream_open(p(0) as *const perps_client, p(1) as *const perps_session, p(2), err))
            }
            "order_stream_open" => {
                Ret::Stream(perps_order_stream_open(p(0) as *const perps_client, p(1) as *const perps_session, err))
            }
            "stream_next" => Ret::Owned(perps_stream_next(p(0) as *const perps_stream, i64_at(1), err)),
            "stream_new_order" => Ret::Owned(perps_stream_new_order(p(0) as *const perps_stream, p(1), err)),
            "stream_cancel_order" => Ret::Owned(perps_stream_cancel_order(p(0) as *const perps_stream, p(1), err)),
            "stream_close" => {
                perps_stream_close(p(0) as *const perps_stream);
                Ret::Unit
            }
            "stream_free" => {
                perps_stream_free(p(0) as *mut perps_stream);
                Ret::Unit
            }
            other => panic!("no runner for perps_{other}"),
        }
    };

    let mut outcome = Outcome::default();
    // Accessors and frees that take no err: their documented answers for NULL.
    match case.function.as_str() {
        "error_message" => {
            outcome.code = Some(perps_code::PERPS_OK);
            outcome.returned = copy(perps_error_message(null()));
            return outcome;
        }
        "error_http_status" => {
            outcome.code = Some(perps_code::PERPS_OK);
            if perps_error_http_status(null()) != 0 {
                outcome.problems.push("perps_error_http_status(NULL) is not 0".into());
            }
            return outcome;
        }
        "error_body" => {
            outcome.code = Some(perps_code::PERPS_OK);
            if !perps_error_body(null()).is_null() {
                outcome.problems.push("perps_error_body(NULL) is not NULL".into());
            }
            return outcome;
        }
        "error_may_have_reached_venue" => {
            outcome.code = Some(perps_code::PERPS_OK);
            if perps_error_may_have_reached_venue(null()) {
                outcome.problems.push("perps_error_may_have_reached_venue(NULL) is true".into());
            }
            return outcome;
        }
        "error_cl_ord_id" | "error_request_id" => {
            outcome.code = Some(perps_code::PERPS_OK);
            let returned = if case.function == "error_cl_ord_id" {
                perps_error_cl_ord_id(null())
            } else {
                perps_error_request_id(null())
            };
            if !returned.is_null() {
                outcome.problems.push(format!("perps_{}(NULL) is not NULL", case.function));
            }
            return outcome;
        }
        "error_retry_after_ms" => {
            outcome.code = Some(perps_code::PERPS_OK);
            if perps_error_retry_after_ms(null()) != -1 {
                outcome.problems.push("perps_error_retry_after_ms(NULL) is not -1".into());
            }
            return outcome;
        }
        "version" => {
            outcome.code = Some(perps_code::PERPS_OK);
            outcome.returned = copy(perps_version());
            return outcome;
        }
        _ => {}
    }

    let sig_before = out_sig;
    let mut err: *mut perps_error = null_mut();
    let ret = call(&mut err);
    let failed = match ret {
        Ret::Owned(s) => {
            if !s.is_null() {
                outcome.returned = copy(s);
                perps_string_free(s);
            }
            s.is_null()
        }
        Ret::Client(c) => {
            perps_client_free(c);
            c.is_null()
        }
        Ret::Session(s) => {
            perps_session_free(s);
            s.is_null()
        }
        Ret::Stream(st) => {
            perps_stream_free(st);
            st.is_null()
        }
        Ret::Code(code) => {
            outcome.code = Some(code);
            code != perps_code::PERPS_OK
        }
        Ret::Unit => false,
    };
    if !err.is_null() {
        let e = err as *const perps_error;
        let code = perps_error_code(e);
        if let Some(returned) = outcome.code
            && returned != code
        {
            outcome.problems.push(format!("returned {returned:?} but the error object says {code:?}"));
        }
        outcome.code = Some(code);
        outcome.message = copy(perps_error_message(e));
        outcome.http_status = perps_error_http_status(e);
        outcome.body = copy(perps_error_body(e));
        outcome.reached = perps_error_may_have_reached_venue(e);
        outcome.request_id = copy(perps_error_request_id(e));
        perps_error_free(err);
        if !failed {
            outcome.problems.push("an error object was written on success".into());
        }
    } else if failed && case.function != "sign_body_into" && case.function != "error_code" {
        outcome.problems.push("the call failed without writing an error object".into());
    }
    if outcome.code.is_none() {
        outcome.code = Some(if failed { perps_code::PERPS_PANIC } else { perps_code::PERPS_OK });
    }
    if failed {
        if uses_out && (out_sig != sig_before || out_i64 != 0x5a5a_5a5a_5a5a_5a5a) {
            outcome.problems.push("an out-parameter was written on failure".into());
        }
        // Again without an error out-parameter: the return value alone reports the failure.
        match call(null_mut()) {
            Ret::Owned(s) if !s.is_null() => {
                perps_string_free(s);
                outcome.problems.push("with err == NULL the call succeeded".into());
            }
            Ret::Client(c) if !c.is_null() => {
                perps_client_free(c);
                outcome.problems.push("with err == NULL the call succeeded".into());
            }
            Ret::Session(s) if !s.is_null() => {
                perps_session_free(s);
                outcome.problems.push("with err == NULL the call succeeded".into());
            }
            Ret::Stream(st) if !st.is_null() => {
                perps_stream_free(st);
                outcome.problems.push("with err == NULL the call succeeded".into());
            }
            Ret::Code(code) if Some(code) != outcome.code => {
                outcome.problems.push(format!("with err == NULL the call returned {code:?}"));
            }
            _ => {}
        }
    }
    outcome
}

/// Every assertion of the table for one case; an empty list means the case passed.
pub fn check(case: &Case, outcome: &Outcome, secrets: &[Vec<u8>]) -> Vec<String> {
    let mut problems = outcome.problems.clone();
    if outcome.code != Some(case.expected) {
        problems.push(format!("code {:?}, expected {:?} (message {:?})", outcome.code, case.expected, outcome.message));
    }
    if case.expected == perps_code::PERPS_OK {
        if let Some(fragment) = &case.fragment {
            match &outcome.returned {
                Some(text) if text.contains(fragment.as_str()) => {}
                other => problems.push(format!("result {other:?} lacks {fragment:?}")),
            }
        }
        return problems;
    }
    if let Some(fragment) = &case.fragment {
        match &outcome.message {
            Some(m) if m.contains(fragment.as_str()) => {}
            other => problems.push(format!("message {other:?} lacks {fragment:?}")),
        }
    }
    if let Some(m) = &outcome.message {
        if m.is_empty() {
            problems.push("empty message".into());
        }
        if m.len() > MAX_MESSAGE_LEN {
            problems.push(format!("message is {} bytes (max {MAX_MESSAGE_LEN}): {:?}…", m.len(), &m[..80]));
        }
        for secret in secrets {
            if let Some(run) = leaked_run(m.as_bytes(), secret) {
                problems.push(format!("message {m:?} contains {run:?} of a secret"));
            }
        }
    } else if case.fragment.is_some() {
        problems.push("no error object, so no message".into());
    }
    // Every case fails before anything could reach a venue.
    if outcome.http_status != 0 || outcome.body.is_some() || outcome.reached || outcome.request_id.is_some() {
        problems.push(format!(
            "an offline failure carries http_status {}, body {:?}, reached {}, x-request-id {:?}",
            outcome.http_status, outcome.body, outcome.reached, outcome.request_id
        ));
    }
    problems
}
