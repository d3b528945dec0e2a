//! Calling the C ABI from Rust tests the way a C caller would: C strings in, owned C
//! strings and `perps_error` objects out, every one freed.
#![allow(dead_code)]

use perps::ffi::client::*;
use perps::ffi::error::*;
use perps::ffi::session::*;
use perps::ffi::strings::perps_string_free;
use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

/// What a failing call reported through its `perps_error`.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub code: perps_code,
    pub message: String,
    pub http_status: u16,
    pub body: Option<String>,
    pub may_have_reached_venue: bool,
    /// `perps_error_cl_ord_id`, `perps_error_request_id`, `perps_error_retry_after_ms`.
    pub cl_ord_id: Option<String>,
    pub request_id: Option<String>,
    pub retry_after_ms: i64,
}

/// The failure a call must have ended in: its code and whether it may have reached the
/// venue, and a message saying what happened.
pub fn expect(result: Result<String, Failure>, code: perps_code, reached: bool) -> Failure {
    let f = match result {
        Ok(answer) => panic!("expected {code:?}, got success: {answer}"),
        Err(f) => f,
    };
    assert_eq!(f.code, code, "{f:?}");
    assert_eq!(f.may_have_reached_venue, reached, "may_have_reached_venue in {f:?}");
    assert!(!f.message.is_empty());
    f
}

pub fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

/// Run a call returning an owned `char*`; copy it out and free it, or read and free the error.
pub fn owned(call: impl FnOnce(*mut *mut perps_error) -> *mut c_char) -> Result<String, Failure> {
    let mut err: *mut perps_error = null_mut();
    let out = call(&mut err);
    if out.is_null() {
        assert!(!err.is_null(), "NULL result without an error object");
        return Err(take_error(err));
    }
    assert!(err.is_null(), "error object set on success");
    let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_owned();
    perps_string_free(out);
    Ok(text)
}

/// Run a call returning a `perps_code`.
pub fn code(call: impl FnOnce(*mut *mut perps_error) -> perps_code) -> Result<(), Failure> {
    let mut err: *mut perps_error = null_mut();
    match call(&mut err) {
        perps_code::PERPS_OK => {
            assert!(err.is_null());
            Ok(())
        }
        returned => {
            let failure = take_error(err);
            assert_eq!(failure.code, returned);
            Err(failure)
        }
    }
}

pub fn take_error(err: *mut perps_error) -> Failure {
    let borrowed = |p: *const c_char| (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned());
    let failure = Failure {
        code: perps_error_code(err),
        message: borrowed(perps_error_message(err)).unwrap(),
        http_status: perps_error_http_status(err),
        body: borrowed(perps_error_body(err)),
        may_have_reached_venue: perps_error_may_have_reached_venue(err),
        cl_ord_id: borrowed(perps_error_cl_ord_id(err)),
        request_id: borrowed(perps_error_request_id(err)),
        retry_after_ms: perps_error_retry_after_ms(err),
    };
    perps_error_free(err);
    failure
}

/// A client handle freed on drop.
pub struct Client(pub *mut perps_client);

// SAFETY: the library documents clients and sessions as safe to share between threads
// (README "Thread safety"); the handles are only freed on drop, after every borrow ended.
unsafe impl Send for Client {}
unsafe impl Sync for Client {}
unsafe impl Send for Session {}
unsafe impl Sync for Session {}

impl Client {
    pub fn new(base_url: &str, perps_url: &str, options: Option<&str>) -> Result<Client, Failure> {
        let (b, p) = (c(base_url), c(perps_url));
        let o = options.map(c);
        let mut err = null_mut();
        let handle = perps_client_new(b.as_ptr(), p.as_ptr(), o.as_ref().map_or(null(), |o| o.as_ptr()), &mut err);
        if handle.is_null() { Err(take_error(err)) } else { Ok(Client(handle)) }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        perps_client_free(self.0);
    }
}

/// A session handle freed on drop.
pub struct Session(pub *mut perps_session);

impl Session {
    pub fn new() -> Session {
        let mut err = null_mut();
        let s = perps_session_new(&mut err);
        assert!(!s.is_null());
        Session(s)
    }

    pub fn from_api_key(token: &str, key: &str) -> Result<Session, Failure> {
        let (t, k) = (c(token), c(key));
        let mut err = null_mut();
        let s = perps_session_from_api_key(t.as_ptr(), k.as_ptr(), &mut err);
        if s.is_null() { Err(take_error(err)) } else { Ok(Session(s)) }
    }

    pub fn request_id(&self) -> String {
        owned(|e| perps_session_request_id(self.0, e)).unwrap()
    }

    pub fn info(&self) -> serde_json::Value {
        serde_json::from_str(&owned(|e| perps_session_info(self.0, e)).unwrap()).unwrap()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        perps_session_free(self.0);
    }
}

pub fn signin(client: &Client, session: &Session, chain: &str, key: &str, expires: i64) -> Result<String, Failure> {
    let (ch, k) = (c(chain), c(key));
    owned(|e| perps_signin(client.0, session.0, ch.as_ptr(), k.as_ptr(), expires, e))
}

pub fn prepare(client: &Client, session: &Session, chain: &str, address: &str) -> Result<String, Failure> {
    let (ch, a) = (c(chain), c(address));
    owned(|e| perps_prepare_signin(client.0, session.0, ch.as_ptr(), a.as_ptr(), e))
}

pub fn login(client: &Client, session: &Session, signature: &str, expires: i64) -> Result<String, Failure> {
    let s = c(signature);
    owned(|e| perps_login(client.0, session.0, s.as_ptr(), expires, e))
}

pub fn new_order(client: &Client, session: &Session, order: &str) -> Result<String, Failure> {
    let o = c(order);
    owned(|e| perps_new_order(client.0, session.0, o.as_ptr(), e))
}

pub fn request(
    client: &Client,
    session: &Session,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<String, Failure> {
    let (m, p) = (c(method), c(path));
    let b = body.map(c);
    owned(|e| perps_request(client.0, session.0, m.as_ptr(), p.as_ptr(), b.as_ref().map_or(null(), |b| b.as_ptr()), e))
}

pub fn wallet_sign(chain: &str, key: &str, payload: &str) -> Result<String, Failure> {
    let (ch, k, p) = (c(chain), c(key), c(payload));
    owned(|e| perps::ffi::wallet::perps_wallet_sign(ch.as_ptr(), k.as_ptr(), p.as_ptr(), e))
}

pub fn wallet_address(chain: &str, key: &str) -> Result<String, Failure> {
    let (ch, k) = (c(chain), c(key));
    owned(|e| perps::ffi::wallet::perps_wallet_address(ch.as_ptr(), k.as_ptr(), e))
}

/// `perps_cancel_all`; `session` None passes NULL, `params` None passes NULL.
pub fn cancel_all(client: &Client, session: Option<&Session>, params: Option<&str>) -> Result<String, Failure> {
    let p = params.map(c);
    let s = session.map_or(null_mut(), |s| s.0);
    owned(|e| perps::ffi::trading::perps_cancel_all(client.0, s, p.as_ref().map_or(null(), |p| p.as_ptr()), e))
}

/// The fifteen endpoint calls by name (`"cancel_order"` … `"query_depth_book"`).
pub type EndpointFn =
    extern "C" fn(*const perps_client, *const perps_session, *const c_char, *mut *mut perps_error) -> *mut c_char;

pub const ENDPOINTS: [(&str, EndpointFn); 15] = {
    use perps::ffi::trading::*;
    [
        ("cancel_order", perps_cancel_order),
        ("cancel_orders", perps_cancel_orders),
        ("change_leverage", perps_change_leverage),
        ("change_margin_mode", perps_change_margin_mode),
        ("query_order", perps_query_order),
        ("query_orders", perps_query_orders),
        ("query_open_orders", perps_query_open_orders),
        ("query_trades", perps_query_trades),
        ("query_funding_history", perps_query_funding_history),
        ("query_positions", perps_query_positions),
        ("query_balance", perps_query_balance),
        ("query_position_config", perps_query_position_config),
        ("query_symbol_info", perps_query_symbol_info),
        ("query_symbol_price", perps_query_symbol_price),
        ("query_depth_book", perps_query_depth_book),
    ]
};

/// Call the endpoint export `name` (without `perps_`); `session` None passes NULL.
pub fn call(client: &Client, session: Option<&Session>, name: &str, params: Option<&str>) -> Result<String, Failure> {
    let function = ENDPOINTS.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no export perps_{name}")).1;
    let p = params.map(c);
    let s = session.map_or(null_mut(), |s| s.0);
    owned(|e| function(client.0, s, p.as_ref().map_or(null(), |p| p.as_ptr()), e))
}
