//! The order stream's reading of the venue's replies (`ws-api`), as its I/O thread reads them,
//! for 1 to 4 requests awaiting their replies (alternately an `order:new` and an
//! `order:cancel`). The first byte: bits 0–1 the number of requests less one, bit 2 whether
//! an `auth:login` is awaited on the first connection. The rest: text frames separated by the
//! byte 0xFF, where `@1`…`@4` stand for the requests' `request_id`s and `@L` for the current
//! login's; a frame of the one byte 0x00 ends the connection (a new one logs in again when
//! bit 2 is set), 0x01 marks the connection served.
//! Invariants: no panic; a frame gives exactly one event unless it may answer the login (then
//! at most one): nothing is dropped silently; every event is a JSON object naming its channel;
//! an `order_response` carries the venue's frame unchanged and the receive time; each request
//! gets at most one outcome (`final`, `matched`), and every later outcome for it is a
//! `repeat`, never matched; only a repeat `contradicts`; a matched reply names its request's
//! method and ids; `success` and `outcome_unknown` only on an outcome, never both (and never
//! `outcome_unknown` on a repeat); a disconnection lists as `unanswered` exactly the requests
//! without an outcome that no earlier disconnection listed, oldest first.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perps::stream::OrderReplyDecoder;
use serde_json::Value;

/// The connection ends: its `unanswered` list must name exactly the requests without an
/// outcome not listed before (their fate was reported unknown once), oldest first; the next
/// connection logs in again when the first did.
fn reconnect(
    decoder: &mut OrderReplyDecoder,
    ids: &[String],
    finished: &[bool],
    listed: &mut [bool],
    logs_in: bool,
    login: &mut String,
) {
    let mut expected = Vec::new();
    for ((id, done), listed) in ids.iter().zip(finished).zip(listed.iter_mut()) {
        if !*done && !*listed {
            expected.push(id);
            *listed = true;
        }
    }
    assert_eq!(decoder.disconnect().iter().collect::<Vec<_>>(), expected, "the unanswered list");
    assert!(!decoder.awaits_outcomes(), "every request was listed");
    if logs_in {
        *login = decoder.login_sent().unwrap();
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let requests = usize::from(flags & 3) + 1;
    let logs_in = flags & 4 != 0;
    let mut decoder = OrderReplyDecoder::new(requests).unwrap();
    let ids = decoder.request_ids();
    let mut login = if logs_in { decoder.login_sent().unwrap() } else { "no-login".to_owned() };
    let mut finished = vec![false; requests];
    let mut listed = vec![false; requests];
    for (i, frame) in rest.split(|&b| b == 0xff).enumerate() {
        match frame {
            [0] => {
                reconnect(&mut decoder, &ids, &finished, &mut listed, logs_in, &mut login);
                continue;
            }
            [1] => {
                decoder.served();
                continue;
            }
            _ => {}
        }
        let Ok(text) = std::str::from_utf8(frame) else { continue };
        let mut text = text.replace("@L", &login);
        for (n, id) in ids.iter().enumerate() {
            text = text.replace(&format!("@{}", n + 1), id);
        }
        let received_ns = 1_700_000_000_000_000_000 + i as i64;
        let may_answer_login = decoder.login_awaited();
        let (outcome, events) = decoder.decode_all(&text, received_ns);
        if may_answer_login {
            assert!(events.len() <= 1, "{events:?} for {text:?}");
        } else {
            assert_eq!(events.len(), 1, "one event for {text:?}: {events:?}");
            assert_eq!(outcome, "pending", "no login awaited: {text:?}");
        }
        for event in &events {
            let event: Value = serde_json::from_str(event).unwrap_or_else(|e| panic!("not JSON ({e}): {event}"));
            let channel = event.get("channel").and_then(Value::as_str).unwrap_or_else(|| panic!("no channel: {event}"));
            if channel != "order_response" {
                continue;
            }
            let sent: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(event["frame"], sent, "the venue's frame, unchanged");
            assert_eq!(event["received_ns"].as_i64(), Some(received_ns));
            let flag = |name: &str| event[name].as_bool().unwrap_or_else(|| panic!("{name} not a bool: {event}"));
            let (is_final, matched, repeat, contradicts) =
                (flag("final"), flag("matched"), flag("repeat"), flag("contradicts"));
            assert!(!contradicts || repeat, "only a repeat contradicts: {event}");
            let (success, unknown) = (flag("success"), flag("outcome_unknown"));
            assert!(!success || is_final, "only an outcome succeeds: {event}");
            assert!(!(success && unknown), "a success is no unknown outcome: {event}");
            assert!(!unknown || (is_final && !repeat), "only an outcome (not a repeat) is of unknown effect: {event}");
            assert!(!repeat || (is_final && !matched), "a repeat is a final reply of no request: {event}");
            let request = ids.iter().position(|id| event["request_id"] == id.as_str());
            if matched {
                let n = request.unwrap_or_else(|| panic!("matched to no request of ours: {event}"));
                assert!(!finished[n], "a request answered after its outcome: {event}");
                let method = if n % 2 == 0 { "order:new" } else { "order:cancel" };
                assert_eq!(event["method"], method, "{event}");
                if n % 2 == 0 {
                    assert_eq!(event["cl_ord_id"], format!("c-{n}"), "{event}");
                } else {
                    assert_eq!(event["order_id"].as_i64(), Some(n as i64), "{event}");
                }
                finished[n] |= is_final;
            } else if let Some(n) = request
                && is_final
            {
                assert!(finished[n] && repeat, "an outcome of a request awaiting one, unmatched: {event}");
            }
        }
        if matches!(outcome, "refused" | "unavailable") {
            // The supervisor ends the connection; the stream ends (refused) or reconnects.
            reconnect(&mut decoder, &ids, &finished, &mut listed, logs_in, &mut login);
        }
    }
});
