//! The C ABI: every `extern "C"` function lives here, one file per C area. Each export runs
//! its body inside [`ffi_boundary!`] (pointer checks, panic catching, error hand-off) and
//! does nothing but convert arguments and results; the work happens in the core modules.
#![allow(non_camel_case_types)]
#![allow(clippy::not_unsafe_ptr_arg_deref)]

#[macro_use]
mod boundary;
pub(crate) mod handles;
pub mod strings;

pub mod challenge;
pub mod client;
pub mod error;
pub mod order;
pub mod session;
pub mod sign;
pub mod stream;
pub mod trading;
pub mod version;
pub mod wallet;
