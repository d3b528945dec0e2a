//! The boundary every export goes through: a panic never unwinds into C, and a failure
//! becomes a `perps_error` handed to the caller through its `err` out-parameter.

use crate::error::{Code, Error, Result};
use crate::ffi::error::{perps_code, perps_error};

/// What an export returns when it fails: NULL for pointers, the error code for codes.
pub(crate) trait Failure {
    fn failure(code: Code) -> Self;
}

impl<T> Failure for *mut T {
    fn failure(_: Code) -> Self {
        std::ptr::null_mut()
    }
}

impl<T> Failure for *const T {
    fn failure(_: Code) -> Self {
        std::ptr::null()
    }
}

impl Failure for perps_code {
    fn failure(code: Code) -> Self {
        code.into()
    }
}

/// Run an export's body: `ffi_boundary!(err, { … Ok(value) })`. Without `err`, the failure
/// value alone (NULL or a code) reports the problem.
macro_rules! ffi_boundary {
    ($err:expr, $body:block) => {{
        let outcome =
            ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| -> $crate::error::Result<_> { $body }));
        $crate::ffi::boundary::finish(outcome, $err)
    }};
    ($body:block) => {{
        let outcome =
            ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| -> $crate::error::Result<_> { $body }));
        $crate::ffi::boundary::finish(outcome, ::std::ptr::null_mut())
    }};
}

pub(crate) fn finish<T: Failure>(outcome: std::thread::Result<Result<T>>, err: *mut *mut perps_error) -> T {
    let error = match outcome {
        Ok(Ok(value)) => return value,
        Ok(Err(error)) => error,
        // What the call sent before the bug is unknown (cancel_all's cancels, an order's
        // request): said as "may have reached the venue", so no order is resent blindly.
        Err(_) => Error::new(Code::Panic, "internal error: a panic was caught at the C boundary (a libperps bug)")
            .reached_venue(true),
    };
    let code = error.code();
    // SAFETY: the caller passes either NULL or a valid `perps_error **` (header contract).
    unsafe { perps_error::store(err, error) };
    T::failure(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_may_have_reached_the_venue() {
        let mut err: *mut perps_error = std::ptr::null_mut();
        let outcome: std::thread::Result<Result<perps_code>> = Err(Box::new("a bug"));
        assert_eq!(finish(outcome, &mut err), perps_code::PERPS_PANIC);
        assert!(crate::ffi::error::perps_error_may_have_reached_venue(err));
        crate::ffi::error::perps_error_free(err);
    }
}
