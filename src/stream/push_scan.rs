//! The single-pass reading of the venue's pushes: the frame scanned once, byte by byte, each
//! text borrowed from it (no `serde_json::Value`, no copy of a key or a price), and the
//! levels of a `depth_book` push noted where they lie, to be sorted and written straight into
//! the event.
//!
//! It reads only what it can read completely and checks as it goes that the frame is JSON:
//! strings without escapes or control characters, numbers by JSON's grammar, nesting up to
//! `MAX_DEPTH`, nothing after the object. Anything else — an escape, a repeated envelope key or
//! `symbol` in `data`, an unknown channel, a `seq` that is not an integer within `i64`, a
//! book without `data` or without one of its sides, a side that is not an array, `data` before
//! `channel` in a book, a level with spaces inside or fewer than two elements — returns `None`,
//! and the frame goes down the serde paths (`push_serde.rs`, `market.rs`), which give the
//! event, the error or the pass-through. What it reads it leaves to the checks all paths share
//! (`Market::attribute`: the envelope's and the data's symbols; `depth::write_scanned`: each
//! level's price and quantity, `crate::book_levels`). Where the paths read a frame they give
//! the same events (a test in `market.rs` and the `stream_push` fuzz target compare them).

mod scanner;

use super::depth::Side;
use super::subscriptions::{ACCOUNT_CHANNELS, PUBLIC_CHANNELS};
use scanner::Scanner;

/// Where a text lies in the frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn of<'a>(&self, text: &'a str) -> &'a str {
        &text[self.start..self.end]
    }
}

/// One level of a book: its price's and its quantity's texts (a string's content, or a
/// number's or a literal's text) and the level's whole text, compact (`["65010.3","1.000"]`).
#[derive(Clone, Copy, Debug)]
pub struct Level {
    pub price: Span,
    pub qty: Span,
    pub text: Span,
}

/// One field of a book's `data`, in the venue's order.
#[derive(Clone, Copy, Debug)]
pub enum BookField {
    Raw {
        key: Span,
        value: Span,
    },
    /// `levels[from..to]` of the scratch.
    Levels {
        key: Span,
        side: Side,
        from: usize,
        to: usize,
    },
}

/// What a book's `data` held; kept by the market stream and reused, so reading a push
/// allocates nothing once these have grown to a book's size.
#[derive(Default)]
pub struct Book {
    pub fields: Vec<BookField>,
    pub levels: Vec<Level>,
}

/// A push read by the scanner.
pub struct Push<'a> {
    pub seq: Option<i64>,
    /// One of the known channels.
    pub channel: &'static str,
    /// The envelope's.
    pub symbol: Option<&'a str>,
    /// What its `data` names, when that is a string (`push_serde::DataSymbol`).
    pub data_symbol: Option<&'a str>,
    pub data: Data<'a>,
}

pub enum Data<'a> {
    /// No `data` field.
    Absent,
    /// The value's text as sent.
    Raw(&'a str),
    /// A `depth_book`'s `data`: in the `Book` scratch.
    Book,
}

/// Read `{ "seq", "channel", "symbol", "data", … }` of a known channel; `None` sends the frame
/// to the serde path.
pub fn push<'a>(text: &'a str, book: &mut Book) -> Option<Push<'a>> {
    let mut s = Scanner::new(text);
    let (mut seq, mut channel, mut symbol, mut data, mut data_symbol) = (None, None, None, None, None);
    s.space();
    s.eat(b'{')?;
    s.space();
    if s.peek()? != b'}' {
        loop {
            let key = s.string()?;
            s.space();
            s.eat(b':')?;
            s.space();
            match key {
                "seq" if seq.is_none() => seq = Some(s.integer()?),
                "channel" if channel.is_none() => {
                    let name = s.string()?;
                    channel = Some(PUBLIC_CHANNELS.iter().chain(ACCOUNT_CHANNELS).find(|c| **c == name).copied()?);
                }
                "symbol" if symbol.is_none() => symbol = Some(s.string()?),
                "data" if data.is_none() => {
                    data = Some(if channel == Some("depth_book") {
                        data_symbol = book_data(&mut s, book)?;
                        Data::Book
                    } else {
                        // A book's `data` before its `channel` is left to the serde path.
                        let (raw, named) = raw_data(&mut s)?;
                        data_symbol = named;
                        Data::Raw(raw)
                    });
                }
                "seq" | "channel" | "symbol" | "data" => return None,
                _ => {
                    s.value(0)?;
                }
            }
            s.space();
            match s.next()? {
                b',' => s.space(),
                b'}' => break,
                _ => return None,
            }
        }
    } else {
        s.at += 1;
    }
    s.space();
    if s.at != text.len() {
        return None;
    }
    let channel = channel?;
    // A book's `data` before its `channel`, or none: left to the serde path.
    if channel == "depth_book" && !matches!(data, Some(Data::Book)) {
        return None;
    }
    Some(Push { seq, channel, symbol, data_symbol, data: data.unwrap_or(Data::Absent) })
}

/// A string's text (the scanner read it: no escape, no quote inside).
fn string_text(value: &str) -> Option<&str> {
    value.strip_prefix('"')?.strip_suffix('"')
}

/// `data` other than a book, its text as sent, and the symbol it names: its `symbol` member
/// when it is an object (read in the same pass); `None` when it names `symbol` twice.
fn raw_data<'a>(s: &mut Scanner<'a>) -> Option<(&'a str, Option<&'a str>)> {
    let start = s.at;
    if s.peek()? != b'{' {
        return Some((s.value(0)?, None));
    }
    // What `Scanner::value` reads of an object, its keys looked at.
    s.at += 1;
    s.space();
    let mut symbol: Option<Option<&'a str>> = None;
    if s.peek()? == b'}' {
        s.at += 1;
    } else {
        loop {
            let key = s.string()?;
            s.space();
            s.eat(b':')?;
            s.space();
            let value = s.value(1)?;
            if key == "symbol" && symbol.replace(string_text(value)).is_some() {
                return None;
            }
            s.space();
            match s.next()? {
                b',' => s.space(),
                b'}' => break,
                _ => return None,
            }
        }
    }
    Some((&s.text[start..s.at], symbol.flatten()))
}

/// A book's `data`: an object with one `asks` and one `bids`, each an array of compact
/// levels of two elements or more; the symbol it names (`None` when it names `symbol`
/// twice, or lacks a side: what the serde path reports).
fn book_data<'a>(s: &mut Scanner<'a>, book: &mut Book) -> Option<Option<&'a str>> {
    book.fields.clear();
    book.levels.clear();
    let (mut asks, mut bids) = (false, false);
    let mut symbol: Option<Option<&'a str>> = None;
    s.eat(b'{')?;
    s.space();
    if s.peek()? == b'}' {
        return None;
    }
    loop {
        let key_start = s.at + 1;
        let name = s.string()?;
        let key = Span { start: key_start, end: key_start + name.len() };
        s.space();
        s.eat(b':')?;
        s.space();
        let side = match name {
            "asks" if !asks => {
                asks = true;
                Some(Side::Asks)
            }
            "bids" if !bids => {
                bids = true;
                Some(Side::Bids)
            }
            "asks" | "bids" => return None,
            _ => None,
        };
        match side {
            Some(side) => {
                let from = book.levels.len();
                levels(s, &mut book.levels)?;
                book.fields.push(BookField::Levels { key, side, from, to: book.levels.len() });
            }
            None => {
                let start = s.at;
                let value = s.value(1)?;
                if name == "symbol" && symbol.replace(string_text(value)).is_some() {
                    return None;
                }
                book.fields.push(BookField::Raw { key, value: Span { start, end: s.at } });
            }
        }
        s.space();
        match s.next()? {
            b',' => s.space(),
            b'}' => break,
            _ => return None,
        }
    }
    (asks && bids).then_some(symbol.flatten())
}

/// `[[price, qty, …], …]`, each level compact with two elements or more, its elements
/// strings, numbers or literals.
fn levels(s: &mut Scanner<'_>, out: &mut Vec<Level>) -> Option<()> {
    s.eat(b'[')?;
    s.space();
    if s.peek()? == b']' {
        s.at += 1;
        return Some(());
    }
    loop {
        let start = s.at;
        s.eat(b'[')?;
        let price = s.element()?;
        s.eat(b',')?;
        let qty = s.element()?;
        while s.peek()? == b',' {
            s.at += 1;
            s.element()?;
        }
        s.eat(b']')?;
        out.push(Level { price, qty, text: Span { start, end: s.at } });
        s.space();
        match s.next()? {
            b',' => s.space(),
            b']' => return Some(()),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(text: &str) -> bool {
        push(text, &mut Book::default()).is_some()
    }

    #[test]
    fn a_book_is_read_in_place() {
        let text = r#" {"seq":7,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["2","1"],[1.5,"2",true]],"bids":[ ],"symbol":"BTC-USD","t":{"a":[1,{}]}} } "#;
        let mut book = Book::default();
        let push = push(text, &mut book).unwrap();
        assert_eq!((push.seq, push.channel, push.symbol), (Some(7), "depth_book", Some("BTC-USD")));
        assert!(matches!(push.data, Data::Book));
        let prices: Vec<&str> = book.levels.iter().map(|l| l.price.of(text)).collect();
        assert_eq!(prices, ["2", "1.5"]);
        assert_eq!(book.levels[1].text.of(text), r#"[1.5,"2",true]"#);
        assert_eq!(book.fields.len(), 4);
        assert!(
            matches!(book.fields[3], BookField::Raw { key, value } if key.of(text) == "t" && value.of(text) == r#"{"a":[1,{}]}"#)
        );
    }

    #[test]
    fn what_is_not_read_completely_is_left_to_the_serde_path() {
        assert!(scanned(r#"{"seq":1,"channel":"price","symbol":"X","data":{"p":"1"},"extra":[null]}"#));
        for text in [
            r#"{"seq":1,"channel":"price","data":{"p":"\u0031"}}"#,
            r#"{"seq":1.0,"channel":"price"}"#,
            r#"{"seq":99999999999999999999,"channel":"price"}"#,
            r#"{"seq":1,"seq":2,"channel":"price"}"#,
            r#"{"seq":1,"channel":"kline"}"#,
            r#"{"seq":1,"channel":null}"#,
            r#"{"seq":1,"data":{"asks":[]},"channel":"depth_book"}"#,
            r#"{"channel":"depth_book","data":{"asks":[["1", "2"]]}}"#,
            r#"{"channel":"depth_book","data":{"asks":[[]]}}"#,
            r#"{"channel":"depth_book","data":{"asks":[["1",[2]]]}}"#,
            r#"{"channel":"depth_book","data":{"asks":[],"asks":[]}}"#,
            r#"{"channel":"depth_book","data":[]}"#,
            r#"{"channel":"depth_book","data":{"asks":[],"bids":[],"asks":[]}}"#,
            r#"{"channel":"depth_book","data":{"asks":[]}}"#,
            r#"{"channel":"depth_book","data":{}}"#,
            r#"{"channel":"depth_book","data":null}"#,
            r#"{"channel":"depth_book","symbol":"X"}"#,
            r#"{"channel":"depth_book","data":{"asks":[["1"]],"bids":[]}}"#,
            r#"{"channel":"depth_book","data":{"asks":[],"bids":[],"symbol":"X","symbol":"X"}}"#,
            r#"{"channel":"price","data":{"symbol":"X","p":1,"symbol":"Y"}}"#,
            r#"{"channel":"price"} x"#,
            r#"{"channel":"price",}"#,
            "{\"channel\":\"price\",\"data\":\"a\tb\"}",
            r#"{"channel":"price","data":tru}"#,
            "",
            "[]",
        ] {
            assert!(!scanned(text), "{text}");
        }
    }
}
