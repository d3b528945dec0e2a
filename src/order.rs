//! `new_order` validation and its one serialisation.
//!
//! The caller's JSON is checked field by field against what the venue accepts, then written
//! once, compactly, in a fixed field order. That exact string is signed and sent; nothing
//! re-serialises it afterwards. Decimals stay the caller's own text ("1.50" stays "1.50"):
//! they are never parsed into floats.

use crate::error::{Error, Result};
use crate::fields;
use crate::json_entries::{self, Problem};
use serde_json::Value;
use std::fmt::{self, Write as _};

mod scan;

/// A validated order, serialised once.
#[derive(Clone, PartialEq, Eq)]
pub struct OrderBody {
    json: String,
    /// Where each field's value text sits in `json` (inside the quotes for strings), by
    /// index in [`FIELDS`]; `None` when absent. Lets the symbol rules read the order's
    /// symbol, price and qty without parsing it again.
    spans: [Option<(u32, u32)>; FIELDS.len()],
}

impl OrderBody {
    /// The exact body to sign and send.
    pub fn as_str(&self) -> &str {
        &self.json
    }
    pub fn into_string(self) -> String {
        self.json
    }
    /// A field's value as written in the body: a string's text without its quotes (symbols,
    /// decimals and `cl_ord_id` hold nothing JSON escapes), or a number's or bool's literal.
    pub fn field(&self, name: &str) -> Option<&str> {
        let index = FIELDS.iter().position(|(n, _, _)| *n == name)?;
        self.spans[index].map(|(start, end)| &self.json[start as usize..end as usize])
    }
}

impl fmt::Debug for OrderBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.json)
    }
}

/// What each field holds.
#[derive(Clone, Copy)]
enum Kind {
    Symbol,
    Enum(&'static [&'static str]),
    Decimal,
    Bool,
    PositiveInt,
    Text,
}

/// When a field must be present.
#[derive(Clone, Copy, PartialEq)]
enum Need {
    Always,
    Optional,
    /// Required for limit orders only.
    ForLimit,
}

/// Every field the venue documents, in the order they are written.
const FIELDS: &[(&str, Kind, Need)] = &[
    ("symbol", Kind::Symbol, Need::Always),
    ("side", Kind::Enum(&["buy", "sell"]), Need::Always),
    ("order_type", Kind::Enum(&["limit", "market"]), Need::Always),
    ("qty", Kind::Decimal, Need::Always),
    ("price", Kind::Decimal, Need::ForLimit),
    // Required on market orders too: the venue's documents list it as required, and clients
    // send market orders with "ioc" (venue-api.md §1.3). Not defaulted: the caller chooses.
    ("time_in_force", Kind::Enum(&["gtc", "ioc", "alo"]), Need::Always),
    ("reduce_only", Kind::Bool, Need::Always),
    ("cl_ord_id", Kind::Text, Need::Optional),
    ("margin_mode", Kind::Enum(&["cross", "isolated"]), Need::Optional),
    ("leverage", Kind::PositiveInt, Need::Optional),
    ("tp_price", Kind::Decimal, Need::Optional),
    ("sl_price", Kind::Decimal, Need::Optional),
];

const CL_ORD_ID: usize = 7;

/// Validate a `new_order` JSON object and serialise it once.
pub fn validate(order_json: &str) -> Result<OrderBody> {
    validate_inner(order_json, None::<fn() -> Result<String>>)
}

/// Validate and serialise like [`validate`]; when the order has no `cl_ord_id`, call
/// `generate` for one and write it into the body in its place. Returns the body and the
/// order's `cl_ord_id` (given or generated).
pub fn validate_with_id(order_json: &str, generate: impl FnOnce() -> Result<String>) -> Result<(OrderBody, String)> {
    let body = validate_generating_id(order_json, generate)?;
    let id = body.cl_ord_id().to_owned();
    Ok((body, id))
}

/// [`validate_with_id`] without a copy of the `cl_ord_id`: read it with
/// [`OrderBody::cl_ord_id`].
pub fn validate_generating_id(order_json: &str, generate: impl FnOnce() -> Result<String>) -> Result<OrderBody> {
    validate_inner(order_json, Some(generate))
}

/// The validation without the single-pass scanner: the definition the scanner must agree
/// with (the `order` fuzz target and `tests/order_validation.rs` compare the two).
#[doc(hidden)]
pub fn validate_reference(order_json: &str) -> Result<OrderBody> {
    reference(order_json, None::<fn() -> Result<String>>)
}

impl OrderBody {
    /// The order's `cl_ord_id` (given or generated) in a body made by
    /// [`validate_generating_id`]; empty for a body made without one.
    pub fn cl_ord_id(&self) -> &str {
        self.spans[CL_ORD_ID].map_or("", |(start, end)| &self.json[start as usize..end as usize])
    }
}

/// The common case first: `scan` reads a plain order (no escapes, no unusual number forms)
/// in one pass and accepts it only when every check passes; anything else, and every error,
/// comes from the reference path, so both give the same body and the same messages.
fn validate_inner(order_json: &str, generate: Option<impl FnOnce() -> Result<String>>) -> Result<OrderBody> {
    match scan::scan(order_json) {
        Some(mut present) => {
            let (generated, generated_value);
            if present[CL_ORD_ID].is_none()
                && let Some(generate) = generate
            {
                generated = generate()?;
                present[CL_ORD_ID] = Some(if scan::plain_text(&generated) {
                    Piece::Text(&generated)
                } else {
                    // Whatever a generator returns is written as the reference path writes it.
                    generated_value = Value::String(generated.clone());
                    Piece::Json(&generated_value)
                });
            }
            Ok(write_compact(&present))
        }
        None => reference(order_json, generate),
    }
}

fn reference(order_json: &str, generate: Option<impl FnOnce() -> Result<String>>) -> Result<OrderBody> {
    let entries = json_entries::parse(order_json).map_err(|problem| {
        Error::invalid_order(match problem {
            Problem::Duplicate(text) => format!("{text} in the order"),
            Problem::NotObject => "the order must be a JSON object".to_owned(),
            Problem::Syntax(text) => format!("the order is not valid JSON: {text}"),
            Problem::Trailing(text) => format!("the order has trailing characters after the JSON object: {text}"),
        })
    })?;
    for (name, _) in &entries {
        if !FIELDS.iter().any(|(known, _, _)| known == name) {
            return Err(Error::invalid_order(json_entries::unknown_name_message(
                "field",
                name,
                FIELDS.iter().map(|(known, _, _)| *known),
            )));
        }
    }
    let limit = entries.iter().any(|(n, v)| n == "order_type" && v.as_str() == Some("limit"));
    let generated: Value;
    let mut present: [Option<Piece>; FIELDS.len()] = [None; FIELDS.len()];
    for (index, &(name, kind, need)) in FIELDS.iter().enumerate() {
        match entries.iter().find(|(n, _)| n == name) {
            Some((_, value)) => {
                check_value(name, kind, value).map_err(Error::invalid_order)?;
                present[index] = Some(Piece::Json(value));
            }
            None if need == Need::Always && name == "time_in_force" => {
                return Err(Error::invalid_order(
                    "missing required field \"time_in_force\" (\"gtc\", \"ioc\" or \"alo\"; the venue requires it on \
                     market orders too, which clients send with \"ioc\")",
                ));
            }
            None if need == Need::Always => {
                return Err(Error::invalid_order(format!("missing required field \"{name}\"")));
            }
            None if need == Need::ForLimit && limit => {
                return Err(Error::invalid_order(format!("\"{name}\" is required for a limit order")));
            }
            None => {}
        }
    }
    if present[CL_ORD_ID].is_none()
        && let Some(generate) = generate
    {
        generated = Value::String(generate()?);
        present[CL_ORD_ID] = Some(Piece::Json(&generated));
    }
    Ok(write_compact(&present))
}

/// One field's value, ready to be written.
#[derive(Clone, Copy)]
enum Piece<'a> {
    /// A checked value of the reference path, written by serde_json.
    Json(&'a Value),
    /// A string's text that needs no escape (checked: no `"`, `\` or control character).
    Text(&'a str),
    /// A literal written as it is (`true`, `false`, an integer's digits).
    Literal(&'a str),
}

/// `{"symbol":…,"side":…,…}` in the documented field order, no spaces.
fn write_compact(present: &[Option<Piece>; FIELDS.len()]) -> OrderBody {
    let mut json = String::with_capacity(224);
    let mut spans = [None; FIELDS.len()];
    json.push('{');
    for (index, piece) in present.iter().enumerate() {
        let Some(piece) = piece else { continue };
        if json.len() > 1 {
            json.push(',');
        }
        json.push('"');
        json.push_str(FIELDS[index].0);
        json.push_str("\":");
        let start = json.len();
        let quoted = match piece {
            // Written straight into the body: no intermediate String per field.
            Piece::Json(value) => {
                write!(json, "{value}").expect("writing to a String cannot fail");
                usize::from(value.is_string())
            }
            Piece::Text(text) => {
                json.push('"');
                json.push_str(text);
                json.push('"');
                1
            }
            Piece::Literal(text) => {
                json.push_str(text);
                0
            }
        };
        spans[index] = Some(((start + quoted) as u32, (json.len() - quoted) as u32));
    }
    json.push('}');
    OrderBody { json, spans }
}

fn check_value(name: &str, kind: Kind, value: &Value) -> fields::Checked {
    if value.is_null() {
        return Err(format!("\"{name}\" is null; omit an optional field instead"));
    }
    match kind {
        Kind::Symbol => fields::symbol(name, value),
        Kind::Text => fields::visible_text(name, value),
        Kind::Enum(allowed) => fields::one_of(name, value, allowed),
        Kind::Bool => fields::boolean(name, value),
        Kind::PositiveInt => match value.as_u64() {
            Some(n) if (1..=u32::MAX as u64).contains(&n) => Ok(()),
            _ => Err(format!(
                "\"{name}\" must be a JSON integer ≥ 1 (got {})",
                crate::error::excerpt(&value.to_string())
            )),
        },
        Kind::Decimal => fields::positive_decimal(name, value),
    }
}
