//! The fixtures a case of the bad-input table names (`@client`, `@api`, `@order`, the big
//! inputs…) and the secrets each case hands to the library. Part of the runner in
//! `harness.rs`; its own module because the fixtures are built once and shared by every case.

use super::table::*;
use perps::ffi::client::*;
use perps::ffi::error::*;
use perps::ffi::session::*;
use std::collections::HashMap;
use std::ffi::CString;
use std::ptr::{null, null_mut};

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

    pub fn session(&self, name: &str) -> *mut perps_session {
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
