//! Query-string parameters of the GET endpoints: a repeated parameter or a value of the
//! wrong type is HTTP 400 naming the parameter. An unknown parameter is ignored, as the live
//! venue does (clients send undocumented ones such as `limit` and `page`; the request log
//! still shows them); strict mode refuses it with 400. An empty value (`symbol=`) counts as
//! absent, as most web frameworks read it.

use crate::clock::parse_iso8601;
use crate::http::{Incoming, Reply, error};

pub(crate) struct Params<'a> {
    inc: &'a Incoming,
    strict: bool,
}

impl<'a> Params<'a> {
    /// The request's parameters; in strict mode all of them must be in `allowed`.
    pub(crate) fn only(inc: &'a Incoming, allowed: &[&str], strict: bool) -> Result<Params<'a>, Reply> {
        if strict && let Some((name, _)) = inc.query.iter().find(|(name, _)| !allowed.contains(&name.as_str())) {
            return Err(error(
                400,
                format!("unknown query parameter {name:?}; allowed: {} (strict mode)", list(allowed)),
            ));
        }
        Ok(Params { inc, strict })
    }

    pub(crate) fn text(&self, name: &str) -> Result<Option<&'a str>, Reply> {
        match self.inc.query_param(name) {
            Ok(v) => Ok(v.filter(|v| !v.is_empty())),
            Err(m) => Err(error(400, m)),
        }
    }

    pub(crate) fn required(&self, name: &str) -> Result<&'a str, Reply> {
        self.text(name)?.ok_or_else(|| error(400, format!("query parameter {name} is required")))
    }

    /// A non-negative integer (ids).
    pub(crate) fn id(&self, name: &str) -> Result<Option<u64>, Reply> {
        self.text(name)?
            .map(|v| {
                v.bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| v.parse::<u64>().ok())
                    .flatten()
                    .ok_or_else(|| error(400, format!("query parameter {name} must be an integer, not {v:?}")))
            })
            .transpose()
    }

    /// `limit`: 1..=max, `default` when absent.
    pub(crate) fn limit(&self, default: usize, max: usize) -> Result<usize, Reply> {
        match self.id("limit") {
            Ok(None) => Ok(default),
            Ok(Some(n)) if (1..=max as u64).contains(&n) => Ok(n as usize),
            _ => Err(error(400, format!("query parameter limit must be an integer from 1 to {max}"))),
        }
    }

    /// An ISO 8601 date-time, as Unix microseconds. Without a zone (`2025-08-11T03:35:25`)
    /// it is taken as UTC, except in strict mode.
    pub(crate) fn time(&self, name: &str) -> Result<Option<i64>, Reply> {
        self.text(name)?
            .map(|v| {
                let naive = || (!self.strict).then(|| parse_iso8601(&format!("{v}Z"))).flatten();
                parse_iso8601(v).or_else(naive).ok_or_else(|| {
                    error(
                        400,
                        format!(
                            "query parameter {name} must be an ISO 8601 date-time (2025-08-11T03:35:25Z), not {v:?}"
                        ),
                    )
                })
            })
            .transpose()
    }

    /// One of a closed set of lower-case words, parsed by `parse`.
    pub(crate) fn word<T>(
        &self,
        name: &str,
        allowed: &[&str],
        parse: fn(&str) -> Option<T>,
    ) -> Result<Option<T>, Reply> {
        self.text(name)?
            .map(|v| {
                parse(v).ok_or_else(|| {
                    error(400, format!("query parameter {name} must be one of {}, not {v:?}", list(allowed)))
                })
            })
            .transpose()
    }
}

fn list(words: &[&str]) -> String {
    words.join(", ")
}
