//! Order validation through the C ABI: see what exactly will be signed and sent.

use crate::ffi::error::perps_error;
use crate::ffi::strings::{arg_str, to_c_string};
use std::ffi::c_char;

/// Validate a `new_order` JSON object and return the exact compact body that
/// `perps_new_order` would sign and send (which, for an order without `cl_ord_id`, also
/// writes the `cl_ord_id` it generates). `PERPS_INVALID_ORDER` names the offending field
/// (unknown fields, JSON numbers for decimals, a limit order without `price`, any order
/// without `time_in_force` — market orders too, as the venue's documents require it, …).
/// Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_order_serialize(order_json: *const c_char, err: *mut *mut perps_error) -> *mut c_char {
    ffi_boundary!(err, { to_c_string(crate::order::validate(arg_str(order_json, "order_json")?)?.into_string()) })
}
