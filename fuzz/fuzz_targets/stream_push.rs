//! The market stream's reading of venue pushes (`ws-stream`), as its I/O thread reads them:
//! the input is a run of text frames separated by the byte 0xFF (never part of UTF-8), each
//! decoded in turn by the single-pass scanner (`push_scan`, with the serde paths behind it),
//! separately by the serde paths alone (the one-pass `FastPush`, the general path behind
//! it), and by the general path alone.
//! Invariants: no panic; the three give the same events, in the same order (status events
//! compared without their own clock reading); every frame gives at least one event (nothing
//! a venue sends is dropped silently); every event is one JSON object naming its channel,
//! and a data event carries the frame's receive time; a `depth_book` event carries a book
//! (both sides arrays).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perps::stream::PushDecoder;
use serde_json::Value;

/// An event as compared: a status event parsed, without the clock reading it takes itself.
fn comparable(event: &str) -> Value {
    let mut value: Value = serde_json::from_str(event).unwrap_or_else(|e| panic!("not JSON ({e}): {event}"));
    let object = value.as_object_mut().unwrap_or_else(|| panic!("not an object: {event}"));
    let channel = object.get("channel").and_then(Value::as_str).unwrap_or_else(|| panic!("no channel: {event}"));
    if channel == "status" {
        object.remove("received_ns");
        value
    } else {
        Value::String(event.to_owned())
    }
}

fuzz_target!(|data: &[u8]| {
    let mut scanner = PushDecoder::default();
    let mut serde_path = PushDecoder::serde_only();
    let mut general = PushDecoder::general_only();
    for (i, frame) in data.split(|&b| b == 0xff).enumerate() {
        let Ok(frame) = std::str::from_utf8(frame) else { continue };
        let received_ns = 1_700_000_000_000_000_000 + i as i64;
        let a = scanner.decode_all(frame, received_ns);
        let b = serde_path.decode_all(frame, received_ns);
        let c = general.decode_all(frame, received_ns);
        assert!(!a.is_empty(), "no event for the frame {frame:?}");
        let compared = |events: Vec<String>| -> Vec<Value> { events.iter().map(|e| comparable(e)).collect() };
        let (a, b, c) = (compared(a), compared(b), compared(c));
        assert_eq!(a, b, "the scanner and the serde paths differ on {frame:?}");
        assert_eq!(b, c, "the serde paths and the general path alone differ on {frame:?}");
        for event in &a {
            if let Value::String(text) = event {
                let parsed: Value = serde_json::from_str(text).unwrap();
                if parsed.get("channel").and_then(Value::as_str) != Some("unrecognized")
                    && parsed.get("received_ns").is_some()
                {
                    assert_eq!(parsed["received_ns"].as_i64(), Some(received_ns), "{text}");
                }
                if parsed["channel"] == "depth_book" {
                    assert!(parsed["data"]["asks"].is_array() && parsed["data"]["bids"].is_array(), "{text}");
                }
            }
        }
    }
});
