//! Pacing one request (client option `rate_limit`) within its call's time: the account's
//! credit bucket (`pacing`, account requests only). With `"wait"`, a wait is accepted only
//! when it leaves the request itself at least half of `total_timeout_ms`: a request sent with
//! a few milliseconds left would time out with its fate unknown, which is worse than a
//! refusal that sent nothing.

use super::Client;
use super::options::RateLimit;
use super::pacing::Bucket;
use crate::error::{Code, Error, Result};
use std::time::{Duration, Instant};

/// What pacing decided for one request.
pub(super) struct Paced {
    /// The account's bucket, to empty on a venue 429.
    pub bucket: Option<&'static Bucket>,
    /// The exchange's time limit when it is less than `total_timeout_ms` (a wait, or earlier
    /// steps of the call, used some of it); `None`: all of it.
    pub time_left: Option<Duration>,
}

impl Client {
    /// Pace one request (an account's: to the account's bucket), sleeping when the mode is
    /// `"wait"`. `target`: the request's path, for messages. `deadline`: when the call's time
    /// ends, if earlier steps of the call used some of it (`None`: the request has all of
    /// `total_timeout_ms`). Refusals send nothing.
    pub(super) fn pace(&self, account: Option<&str>, target: &str, deadline: Option<Instant>) -> Result<Paced> {
        let left = match deadline {
            None => self.total_timeout,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(Error::new(
                        Code::Timeout,
                        format!(
                            "{}: the call took longer than total_timeout_ms ({} ms) before the request was sent; \
                             nothing was sent",
                            path_of(target),
                            self.total_timeout.as_millis()
                        ),
                    ));
                }
                left
            }
        };
        let unpaced = Paced { bucket: None, time_left: deadline.map(|_| left) };
        let max_wait = match self.rate_limit {
            RateLimit::Off => return Ok(unpaced),
            RateLimit::Wait => left.saturating_sub(self.least_time_for_the_request()),
            RateLimit::Refuse => Duration::ZERO,
        };
        let Some(account) = account else { return Ok(unpaced) };
        let bucket = self.buckets.of(&self.perps_url, account);
        let wait = bucket.admit(max_wait).map_err(|wait| self.refusal(target, wait))?;
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        let time_left = (deadline.is_some() || !wait.is_zero()).then(|| left.saturating_sub(wait));
        Ok(Paced { bucket: Some(bucket), time_left })
    }

    /// The least time a wait must leave the request itself: half of `total_timeout_ms`.
    fn least_time_for_the_request(&self) -> Duration {
        self.total_timeout / 2
    }

    fn refusal(&self, target: &str, wait: Duration) -> Error {
        let ms = wait.as_nanos().div_ceil(1_000_000) as i64;
        let why = match self.rate_limit {
            RateLimit::Wait => format!(
                "waiting {ms} ms for the account's request budget would leave the request less than half of \
                 total_timeout_ms ({} ms)",
                self.total_timeout.as_millis()
            ),
            _ => format!(
                "the account's request budget is spent (rate_limit \"refuse\"); a request would be allowed in {ms} ms"
            ),
        };
        Error::new(
            Code::RateLimited,
            format!(
                "{}: {why} (venue budget: 45 credits a request, 1,000 credits/s, burst 900); nothing was sent",
                path_of(target)
            ),
        )
        .with_retry_after_ms(ms)
    }
}

/// The path of a request target, without its query.
fn path_of(target: &str) -> &str {
    target.split('?').next().unwrap_or(target)
}
