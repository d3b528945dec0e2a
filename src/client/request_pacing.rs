//! Pacing one request (client option `rate_limit`) within its call's time: the account's
//! credit bucket (`pacing`, account requests only) and the venue host's per-IP limit
//! (`per_ip_limit`, every request). With `"wait"`, a wait is accepted only when it leaves
//! the request itself at least half of `total_timeout_ms`: a request sent with a few
//! milliseconds left would time out with its fate unknown, which is worse than a refusal
//! that sent nothing. With `"off"`, nothing waits and nothing is refused, but the request is
//! noted in the host's per-IP log, so that the pacing clients of the host count it.

use super::Client;
use super::options::RateLimit;
use super::pacing::{self, Bucket};
use super::per_ip_limit::{self, HostWindow};
use crate::error::{Code, Error, Result};
use std::time::{Duration, Instant};

/// What pacing decided for one request.
pub(super) struct Paced {
    /// The limits the request was paced to, to pause on a venue 429.
    pub limits: Limits,
    /// The exchange's time limit when it is less than `total_timeout_ms` (a wait, or earlier
    /// steps of the call, used some of it); `None`: all of it.
    pub time_left: Option<Duration>,
}

/// The limits a request was paced to (with `rate_limit` `"off"`: only the host's per-IP
/// limit, which it does not wait for but pauses on a 429).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Limits {
    /// The account's bucket (account requests of a pacing client).
    bucket: Option<&'static Bucket>,
    /// The per-IP limit of the request's host.
    host: Option<&'static HostWindow>,
    /// Whether the request was an account's: its 429 may be the account's budget as well as
    /// the IP's.
    account: bool,
}

impl Limits {
    /// The venue answered 429 (as an HTTP status, or as the `code` of a 2xx answer): pause
    /// the account's bucket for `retry_after` (at most `pacing::MAX_RETRY_AFTER_PAUSE`;
    /// without one, one request's refill), so that every pacing client of the account waits
    /// or is refused instead of sending into the venue's limit; and pause the host's per-IP
    /// limit. A request of no account can only have met the per-IP limit: its pause is as
    /// long as the bucket's would be (one window without a `Retry-After`). An account's 429
    /// does not say which limit it met, and the per-IP limit counts one second: the host is
    /// paused for at most one window (1.1 s), so that one account's spent budget never holds
    /// the other accounts' cancels for long.
    pub fn venue_429(&self, retry_after_ms: Option<i64>) {
        let retry_after = retry_after_ms.map(|ms| Duration::from_millis(ms.max(0) as u64));
        if let Some(bucket) = self.bucket {
            bucket.exhausted(retry_after);
        }
        if let Some(host) = self.host {
            let for_host = if self.account {
                Some(retry_after.map_or(per_ip_limit::WINDOW, |d| d.min(per_ip_limit::WINDOW)))
            } else {
                retry_after
            };
            host.exhausted(for_host);
        }
    }
}

/// Which limit refused a request.
#[derive(Clone, Copy)]
enum Limit {
    Account,
    PerIp,
}

impl Client {
    /// Pace one request to `host` (and, for an account's request, to the account's bucket),
    /// sleeping when the mode is `"wait"`. `target`: the request's path or URL, for messages.
    /// `deadline`: when the call's time ends, if earlier steps of the call used some of it
    /// (`None`: the request has all of `total_timeout_ms`). Refusals send nothing.
    pub(super) fn pace(
        &self,
        host: &'static HostWindow,
        account: Option<&str>,
        target: &str,
        deadline: Option<Instant>,
    ) -> Result<Paced> {
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
        let max_wait = match self.rate_limit {
            RateLimit::Off => {
                host.record();
                // Its own requests never wait, but a 429 it gets still pauses the host for the
                // pacing clients: the venue's limit is per IP.
                let limits = Limits { bucket: None, host: Some(host), account: account.is_some() };
                return Ok(Paced { limits, time_left: deadline.map(|_| left) });
            }
            RateLimit::Wait => left.saturating_sub(self.least_time_for_the_request()),
            RateLimit::Refuse => Duration::ZERO,
        };
        let bucket = account.map(|account| self.buckets.of(&self.perps_url, account));
        // One reading of the clock for both limits: it is most of their cost.
        let now = pacing::now_ns();
        let account_wait = match bucket {
            Some(bucket) => {
                bucket.admit_at(now, max_wait).map_err(|wait| self.refusal(target, Limit::Account, wait))?
            }
            None => Duration::ZERO,
        };
        let wait = host.admit_at(now, account_wait, max_wait).map_err(|wait| {
            if let Some(bucket) = bucket {
                bucket.give_back();
            }
            self.refusal(target, Limit::PerIp, wait)
        })?;
        let mut wait = wait;
        if !wait.is_zero() {
            std::thread::sleep(wait);
            // A venue 429 may have paused the host while this request waited for its place:
            // it waits for the pause too, when that still leaves it its time, or is refused.
            let pause = host.pause_left();
            if !pause.is_zero() {
                if wait + pause > max_wait {
                    if let Some(bucket) = bucket {
                        bucket.give_back();
                    }
                    return Err(self.refusal(target, Limit::PerIp, pause));
                }
                std::thread::sleep(pause);
                wait += pause;
            }
        }
        let time_left = (deadline.is_some() || !wait.is_zero()).then(|| left.saturating_sub(wait));
        Ok(Paced { limits: Limits { bucket, host: Some(host), account: account.is_some() }, time_left })
    }

    /// Pace the one GET `Transport::send_within` sends again after the keep-alive race, as
    /// `pace` paces any request (the same limits: the host's per-IP limit, the account's
    /// bucket for an account's request), within `left`, the time the call has left: the
    /// exchange's time limit after any wait, or `None` when there is no room in time (the
    /// read is not sent again; the first failure is the call's). The venue did not read the
    /// first send, but it may have counted it: both take their places in the limits.
    pub(super) fn pace_again(
        &self,
        host: &'static HostWindow,
        account: Option<&str>,
        target: &str,
        left: Duration,
    ) -> Option<Duration> {
        let paced = self.pace(host, account, target, Some(Instant::now() + left)).ok()?;
        Some(paced.time_left.unwrap_or(left))
    }

    /// After the answer to a paced request: an HTTP 429 pauses the limits it was paced to,
    /// for its `Retry-After` when it has one the client can read (`Limits::venue_429`).
    pub(super) fn pause_on_429(&self, limits: &Limits, reply: &super::transport::Reply) {
        if reply.status == 429 {
            let retry_after =
                reply.retry_after.as_deref().and_then(|v| super::retry_after::millis(v, self.venue_now_ms()));
            limits.venue_429(retry_after);
        }
    }

    /// The least time a wait must leave the request itself: half of `total_timeout_ms`.
    fn least_time_for_the_request(&self) -> Duration {
        self.total_timeout / 2
    }

    fn refusal(&self, target: &str, limit: Limit, wait: Duration) -> Error {
        let ms = wait.as_nanos().div_ceil(1_000_000) as i64;
        let (budget, venue) = match limit {
            Limit::Account => (
                "the account's request budget",
                "venue budget: 45 credits a request, 1,000 credits/s, burst 900".to_owned(),
            ),
            Limit::PerIp => (
                "the per-IP request budget of the venue's host",
                format!(
                    "venue limit: 50 requests/s per IP; this process keeps to {} in any {} ms",
                    per_ip_limit::REQUESTS,
                    per_ip_limit::WINDOW.as_millis()
                ),
            ),
        };
        let why = match self.rate_limit {
            RateLimit::Wait => format!(
                "waiting {ms} ms for {budget} would leave the request less than half of total_timeout_ms ({} ms)",
                self.total_timeout.as_millis()
            ),
            _ => format!("{budget} is spent (rate_limit \"refuse\"); a request would be allowed in {ms} ms"),
        };
        Error::new(Code::RateLimited, format!("{}: {why} ({venue}); nothing was sent", path_of(target)))
            .with_retry_after_ms(ms)
    }
}

/// The path of a request target or URL, without its query.
fn path_of(target: &str) -> &str {
    let after_scheme = target.split_once("://").map_or(target, |(_, rest)| rest.find('/').map_or("/", |i| &rest[i..]));
    after_scheme.split('?').next().unwrap_or(after_scheme)
}
