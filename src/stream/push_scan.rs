//! The single-pass reading of the venue's pushes: the frame scanned once, byte by byte, each
//! text borrowed from it (no `serde_json::Value`, no copy of a key or a price), and the
//! levels of a `depth_book` push noted where they lie, to be sorted and written straight into
//! the event.
//!
//! It reads only what it can read completely and checks as it goes that the frame is JSON:
//! strings without escapes or control characters, numbers by JSON's grammar, nesting up to
//! `MAX_DEPTH`, nothing after the object. Anything else — an escape, a repeated key, an
//! unknown channel, `data` before `channel` in a book, a level with spaces inside, a `seq`
//! that is not an integer — returns `None`, and the frame goes down the serde path
//! (`push_serde.rs`, `market.rs`), which gives the event, the error or the pass-through.
//! Where both read a frame they give the same events (a test in `market.rs` compares them on
//! edited frames).

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

/// One level of a book: its price's text (a string's content, or a number's literal) and the
/// level's whole text, compact (`["65010.3","1.000"]`).
#[derive(Clone, Copy, Debug)]
pub struct Level {
    pub price: Span,
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
    pub symbol: Option<&'a str>,
    /// The symbol its `seq` is counted under: `symbol`, or for an account push whose envelope
    /// names none, its data's (`seq.rs` says why).
    pub seq_symbol: Option<&'a str>,
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
    let (mut seq, mut channel, mut symbol, mut data) = (None, None, None, None);
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
                        book_data(&mut s, book)?;
                        Data::Book
                    } else {
                        // A book's `data` before its `channel` is left to the serde path.
                        Data::Raw(s.value(0)?)
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
    if channel == "depth_book" && matches!(data, Some(Data::Raw(_))) {
        return None;
    }
    let data = data.unwrap_or(Data::Absent);
    let mut seq_symbol = symbol;
    if symbol.is_none() {
        seq_symbol = data_symbol(text, &data, book);
        if PUBLIC_CHANNELS.contains(&channel) {
            symbol = seq_symbol;
        }
    }
    Some(Push { seq, channel, symbol, seq_symbol, data })
}

/// The symbol that names a public push whose envelope has none: the first `symbol` member of
/// its `data` object, when it is a string (as `push_serde::data_symbol` reads it). `data` was
/// read whole already, so only its keys are looked at here.
fn data_symbol<'a>(text: &'a str, data: &Data<'a>, book: &Book) -> Option<&'a str> {
    let value = match *data {
        Data::Raw(raw) => {
            let mut s = Scanner::new(raw);
            s.eat(b'{')?;
            loop {
                s.space();
                let key = s.string()?;
                s.space();
                s.eat(b':')?;
                s.space();
                let value = s.value(1)?;
                if key == "symbol" {
                    break value;
                }
                s.space();
                s.eat(b',')?;
            }
        }
        Data::Book => book.fields.iter().find_map(|field| match *field {
            BookField::Raw { key, value } if key.of(text) == "symbol" => Some(value.of(text)),
            _ => None,
        })?,
        Data::Absent => return None,
    };
    // A string's text (the scanner read it: no escape, no quote inside).
    value.strip_prefix('"')?.strip_suffix('"')
}

/// A book's `data`: an object whose `asks` and `bids` are arrays of compact levels.
fn book_data(s: &mut Scanner<'_>, book: &mut Book) -> Option<()> {
    book.fields.clear();
    book.levels.clear();
    let (mut asks, mut bids) = (false, false);
    s.eat(b'{')?;
    s.space();
    if s.peek()? == b'}' {
        s.at += 1;
        return Some(());
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
                s.value(1)?;
                book.fields.push(BookField::Raw { key, value: Span { start, end: s.at } });
            }
        }
        s.space();
        match s.next()? {
            b',' => s.space(),
            b'}' => return Some(()),
            _ => return None,
        }
    }
}

/// `[[price, qty, …], …]`, each level compact and non-empty, its elements strings, numbers or
/// literals.
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
        while s.peek()? == b',' {
            s.at += 1;
            s.element()?;
        }
        s.eat(b']')?;
        out.push(Level { price, text: Span { start, end: s.at } });
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
