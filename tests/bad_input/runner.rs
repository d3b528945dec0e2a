//! Running one case of the bad-input table through the C ABI: the call with an error
//! out-parameter, what it gave back (`Outcome`), and the same call again with err == NULL
//! when it failed. Part of the runner in `harness.rs`; its own module because the dispatch
//! over every exported function is long.

use super::fixtures::*;
use super::table::*;
use perps::ffi::challenge::perps_challenge_verify;
use perps::ffi::client::*;
use perps::ffi::error::*;
use perps::ffi::order::perps_order_serialize;
use perps::ffi::session::*;
use perps::ffi::sign::*;
use perps::ffi::stream::*;
use perps::ffi::strings::perps_string_free;
use perps::ffi::version::perps_version;
use perps::ffi::wallet::*;
use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

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
            // A client fixture where a session goes, or a session where a client goes: a
            // handle of the wrong kind, which the library must refuse by its tag.
            (Arg::Fixture(name), b'c' | b's') if name == "client" => (fx.client as *const c_char, 0),
            (Arg::Fixture(name), b'c' | b's') => (fx.session(name) as *const c_char, 0),
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
            | "error_stream_request_id"
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
        "error_cl_ord_id" | "error_request_id" | "error_stream_request_id" => {
            outcome.code = Some(perps_code::PERPS_OK);
            let returned = match case.function.as_str() {
                "error_cl_ord_id" => perps_error_cl_ord_id(null()),
                "error_request_id" => perps_error_request_id(null()),
                _ => perps_error_stream_request_id(null()),
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
