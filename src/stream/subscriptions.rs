//! The market stream's channels and the caller's subscriptions to them
//! (`subscriptions_json`), checked strictly before anything is sent.

use crate::error::{Error, Result, excerpt};
use serde_json::Value;

pub(crate) const PUBLIC_CHANNELS: &[&str] = &["price", "depth_book", "public_trade"];
pub(crate) const ACCOUNT_CHANNELS: &[&str] = &["order", "position", "balance", "trade"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscription {
    pub channel: &'static str,
    /// Public channels only.
    pub symbol: Option<String>,
}

/// Parse `subscriptions_json`: an array of `{"channel":…,"symbol":…}` objects; `symbol` is
/// required for public channels and refused for account channels, which need a session.
pub fn parse_subscriptions(json: &str, has_session: bool) -> Result<Vec<Subscription>> {
    let value: Value = serde_json::from_str(json)
        .map_err(|e| Error::invalid_argument(format!("subscriptions_json is not valid JSON: {e}")))?;
    let Value::Array(items) = value else {
        return Err(Error::invalid_argument(
            "subscriptions_json must be a JSON array such as [{\"channel\":\"price\",\"symbol\":\"BTC-USD\"}]",
        ));
    };
    if items.is_empty() {
        return Err(Error::invalid_argument("subscriptions_json lists no channel"));
    }
    let mut subs: Vec<Subscription> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Value::Object(fields) = item else {
            return Err(Error::invalid_argument(format!("subscriptions_json[{i}] is not an object")));
        };
        if let Some(unknown) = fields.keys().find(|k| *k != "channel" && *k != "symbol") {
            return Err(Error::invalid_argument(format!(
                "subscriptions_json[{i}] has an unknown field \"{}\" (only \"channel\" and \"symbol\")",
                excerpt(unknown)
            )));
        }
        let name = match fields.get("channel") {
            Some(Value::String(name)) => name.as_str(),
            Some(_) => {
                return Err(Error::invalid_argument(format!("subscriptions_json[{i}].channel must be a string")));
            }
            None => return Err(Error::invalid_argument(format!("subscriptions_json[{i}] has no \"channel\""))),
        };
        let Some(channel) = PUBLIC_CHANNELS.iter().chain(ACCOUNT_CHANNELS).find(|c| **c == name).copied() else {
            return Err(Error::invalid_argument(format!(
                "subscriptions_json[{i}]: unknown channel \"{}\" (known: {}, {})",
                excerpt(name),
                PUBLIC_CHANNELS.join(", "),
                ACCOUNT_CHANNELS.join(", ")
            )));
        };
        let public = PUBLIC_CHANNELS.contains(&channel);
        let symbol = match (fields.get("symbol"), public) {
            (Some(Value::String(symbol)), true) => {
                if symbol.is_empty()
                    || symbol.len() > 32
                    || !symbol.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'/' | b'.'))
                {
                    return Err(Error::invalid_argument(format!(
                        "subscriptions_json[{i}]: symbol \"{}\" is not a symbol (e.g. \"BTC-USD\")",
                        excerpt(symbol)
                    )));
                }
                Some(symbol.clone())
            }
            (Some(_), true) => {
                return Err(Error::invalid_argument(format!("subscriptions_json[{i}].symbol must be a string")));
            }
            (None, true) => {
                return Err(Error::invalid_argument(format!(
                    "subscriptions_json[{i}]: channel \"{channel}\" needs a \"symbol\""
                )));
            }
            (Some(_), false) => {
                return Err(Error::invalid_argument(format!(
                    "subscriptions_json[{i}]: account channel \"{channel}\" takes no \"symbol\""
                )));
            }
            (None, false) => None,
        };
        if !public && !has_session {
            return Err(Error::invalid_argument(format!(
                "subscriptions_json[{i}]: account channel \"{channel}\" needs a session (s is NULL)"
            )));
        }
        let sub = Subscription { channel, symbol };
        if subs.contains(&sub) {
            return Err(Error::invalid_argument(format!("subscriptions_json[{i}] repeats an earlier subscription")));
        }
        subs.push(sub);
    }
    Ok(subs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscriptions_are_validated_strictly() {
        let ok = parse_subscriptions(r#"[{"channel":"price","symbol":"BTC-USD"},{"channel":"order"}]"#, true).unwrap();
        assert_eq!(ok.len(), 2);
        for (json, session, fragment) in [
            ("{", false, "not valid JSON"),
            ("{}", false, "must be a JSON array"),
            ("[]", false, "lists no channel"),
            ("[1]", false, "[0] is not an object"),
            (r#"[{"symbol":"BTC-USD"}]"#, false, "no \"channel\""),
            (r#"[{"channel":"kline","symbol":"BTC-USD"}]"#, false, "unknown channel \"kline\""),
            (r#"[{"channel":"price"}]"#, false, "needs a \"symbol\""),
            (r#"[{"channel":"price","symbol":""}]"#, false, "is not a symbol"),
            (r#"[{"channel":"price","symbol":5}]"#, false, "symbol must be a string"),
            (r#"[{"channel":"order"}]"#, false, "needs a session"),
            (r#"[{"channel":"order","symbol":"BTC-USD"}]"#, true, "takes no \"symbol\""),
            (r#"[{"channel":"price","symbol":"X","depth":5}]"#, false, "unknown field \"depth\""),
            (r#"[{"channel":"order"},{"channel":"order"}]"#, true, "repeats"),
        ] {
            let e = parse_subscriptions(json, session).unwrap_err();
            assert_eq!(e.code(), crate::Code::InvalidArgument);
            assert!(e.message().contains(fragment), "{json}: {}", e.message());
        }
    }
}
