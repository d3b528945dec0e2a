//! libperps: sign in to a perpetual-futures venue with a wallet, sign request bodies with
//! Ed25519, and send orders — a pure Rust core behind a thin C ABI.
//!
//! The core modules hold no raw pointers and can be used from Rust directly; `ffi` only
//! converts between C and the core. See README.md for the C API conventions.

pub mod body_sign;
mod book_levels;
pub mod challenge;
pub mod cl_ord_id;
pub mod client;
#[doc(hidden)] // internal: public for the constant-time test and benchmarks only
pub mod curve;
pub mod decimal;
pub mod endpoints;
pub mod error;
mod fields;
mod json_entries;
pub mod keys;
mod name_lookup;
pub mod order;
mod os_random;
pub mod redact;
pub mod session;
pub mod signin_message;
mod site_binding;
pub mod stream;
pub mod strict_json;
pub mod wallet;
mod wipe;

pub mod ffi;

pub use error::{Code, Error, Result};
