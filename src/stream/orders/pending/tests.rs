//! The pending table's rules: matching, bounds, reports, deadlines.

use super::*;

const ACK: Reply = Reply::Ack;
const DONE: Reply = Reply::Outcome(Verdict::Success);

#[test]
fn a_request_id_is_keyed_in_our_form_and_a_uuid_written_otherwise_is_put_in_it() {
    let id = RequestId::fresh().unwrap();
    let text = id.as_str();
    assert_eq!(key_of(text), Some(id.key));
    assert_eq!(text_of(id.key), text);
    let upper = text.to_ascii_uppercase();
    let simple = text.replace('-', "");
    let braced = format!("{{{text}}}");
    let moved = format!("{}-{}", &text[..7], &text[8..]);
    for other in [upper.as_str(), simple.as_str(), braced.as_str(), moved.as_str(), "", "r1"] {
        if other != text {
            assert_eq!(key_of(other), None, "{other}");
        }
    }
    // The same UUID written otherwise (RFC 9562: its hex is case-insensitive) is put in our
    // form; our form itself needs nothing, and a text that is no UUID stays unmatched.
    let urn = format!("urn:uuid:{upper}");
    let mixed: String =
        text.chars().enumerate().map(|(i, c)| if i % 2 == 0 { c.to_ascii_uppercase() } else { c }).collect();
    for other in [upper.as_str(), simple.as_str(), braced.as_str(), urn.as_str(), mixed.as_str()] {
        assert_eq!(canonical(other).as_deref(), Some(text), "{other}");
    }
    for other in [text, moved.as_str(), "", "r1", " 0"] {
        assert_eq!(canonical(other), None, "{other}");
    }
    // The table: remembered, found by its text, forgotten after the outcome.
    let state = OrderState::new("s".into(), false);
    state.remember(&id, "order:new", None, Some(7)).unwrap();
    assert_eq!(state.unanswered(), vec![text.to_owned()]);
    state.forget(&id);
    assert!(state.unanswered().is_empty());
}

#[test]
fn a_request_beyond_the_bound_is_refused_and_none_is_forgotten() {
    let state = OrderState::new("s".into(), false).with_max_pending(3);
    let ids: Vec<RequestId> = (0..5).map(|_| RequestId::fresh().unwrap()).collect();
    for id in &ids[..3] {
        state.remember(id, "order:new", None, None).unwrap();
    }
    for (id, method) in [(&ids[3], "order:new"), (&ids[4], "order:cancel")] {
        let e = state.remember(id, method, Some("c-9"), None).unwrap_err();
        assert_eq!(e.code(), Code::InvalidState);
        assert!(!e.may_have_reached_venue());
        assert!(e.message().contains("3 requests awaiting their outcome"), "{}", e.message());
        assert!(e.message().contains(&format!("this {method} was not sent")), "{}", e.message());
    }
    let first_three: Vec<&str> = ids[..3].iter().map(RequestId::as_str).collect();
    assert_eq!(state.unanswered(), first_three, "every request sent is still awaited, in order");
    // An outcome makes room again.
    assert!(state.answered(ids[0].as_str(), DONE).request.is_some());
    state.remember(&ids[3], "order:new", None, None).unwrap();
    assert_eq!(state.unanswered().len(), 3);
    assert_eq!(MAX_PENDING, OrderState::new("s".into(), false).max_pending);
}

#[test]
fn a_rotation_awaits_only_the_requests_of_the_current_connection() {
    let state = OrderState::new("s".into(), false).with_max_pending(3);
    let ids: Vec<RequestId> = (0..7).map(|_| RequestId::fresh().unwrap()).collect();
    assert!(!state.awaits_unreported());
    state.remember(&ids[0], "order:new", None, None).unwrap();
    state.remember(&ids[1], "order:new", None, None).unwrap();
    assert!(state.answered(ids[0].as_str(), ACK).request.is_some(), "an ack");
    assert!(state.awaits_unreported(), "acked, its outcome still awaited");
    assert!(state.answered(ids[0].as_str(), DONE).request.is_some());
    assert!(state.awaits_unreported(), "the second still awaited");
    // The connection ends: what it leaves is listed, and awaited on no later connection.
    assert_eq!(state.report_unanswered(), vec![ids[1].as_str().to_owned()]);
    assert!(!state.awaits_unreported());
    // The next connection's requests are, whatever becomes of the earlier ones.
    state.remember(&ids[2], "order:new", None, None).unwrap();
    assert!(state.awaits_unreported());
    assert!(state.answered(ids[1].as_str(), DONE).request.is_some(), "a late outcome");
    assert!(state.awaits_unreported());
    state.forget(&ids[2]);
    assert!(!state.awaits_unreported(), "a request not sent is not awaited");
    // A full table forgets a reported request to make room; the count holds.
    for id in &ids[3..6] {
        state.remember(id, "order:new", None, None).unwrap();
    }
    assert_eq!(state.report_unanswered().len(), 3);
    assert!(!state.awaits_unreported());
    state.remember(&ids[6], "order:new", None, None).unwrap();
    assert_eq!(state.unanswered().len(), 3, "the oldest reported one made room");
    assert!(state.awaits_unreported());
    assert!(state.answered(ids[6].as_str(), DONE).request.is_some());
    assert!(!state.awaits_unreported());
}

#[test]
fn a_full_table_forgets_the_oldest_request_already_reported_unanswered() {
    let state = OrderState::new("s".into(), false).with_max_pending(3);
    let ids: Vec<RequestId> = (0..6).map(|_| RequestId::fresh().unwrap()).collect();
    let text = |at: &[usize]| at.iter().map(|&i| ids[i].as_str().to_owned()).collect::<Vec<_>>();
    for id in &ids[..2] {
        state.remember(id, "order:new", None, None).unwrap();
    }
    // A disconnection lists the first two: the engine reconciles them.
    assert_eq!(state.report_unanswered(), text(&[0, 1]));
    state.remember(&ids[2], "order:new", None, None).unwrap();
    // Full: the oldest reported one makes room, then the next; never the unreported one.
    state.remember(&ids[3], "order:new", None, None).unwrap();
    assert_eq!(state.unanswered(), text(&[1, 2, 3]));
    state.remember(&ids[4], "order:new", None, None).unwrap();
    assert_eq!(state.unanswered(), text(&[2, 3, 4]));
    assert_eq!(state.remember(&ids[5], "order:new", None, None).unwrap_err().code(), Code::InvalidState);
    assert_eq!(state.unanswered(), text(&[2, 3, 4]));
    // The forgotten request's late outcome is passed on unmatched, not as a repeat.
    let late = state.answered(ids[0].as_str(), DONE);
    assert!(late.request.is_none() && !late.repeat);
}

#[test]
fn a_second_outcome_of_a_finished_request_is_a_repeat_within_the_memory() {
    let state = OrderState::new("s".into(), false);
    let ids: Vec<RequestId> = (0..REMEMBERED_FINISHED + 1).map(|_| RequestId::fresh().unwrap()).collect();
    for id in &ids {
        state.remember(id, "order:new", None, None).unwrap();
    }
    let ack = state.answered(ids[0].as_str(), ACK);
    assert!(ack.request.is_some() && !ack.repeat, "an ack keeps the request awaited");
    let outcome = state.answered(ids[0].as_str(), DONE);
    assert!(outcome.request.is_some() && !outcome.repeat);
    let again = state.answered(ids[0].as_str(), DONE);
    assert!(again.request.is_none() && again.repeat, "its outcome again");
    let late_ack = state.answered(ids[0].as_str(), ACK);
    assert!(late_ack.request.is_none() && !late_ack.repeat, "a late ack is no outcome");
    let unknown = RequestId::fresh().unwrap();
    assert!(!state.answered(unknown.as_str(), DONE).repeat, "no request of this stream");
    // The memory is bounded: the oldest finished request is forgotten first.
    for id in &ids[1..] {
        assert!(state.answered(id.as_str(), DONE).request.is_some());
    }
    assert!(!state.answered(ids[0].as_str(), DONE).repeat, "beyond the memory");
    assert!(state.answered(ids[1].as_str(), DONE).repeat);
    assert!(state.answered(ids[REMEMBERED_FINISHED].as_str(), DONE).repeat);
}

#[test]
fn a_repeat_that_says_otherwise_contradicts_its_first_copy_and_names_its_order() {
    let state = OrderState::new("s".into(), false);
    let id = RequestId::fresh().unwrap();
    state.remember(&id, "order:new", Some("c-1"), None).unwrap();
    // An ack in words the stream does not know is taken for the outcome; the real outcome
    // then comes as a repeat.
    assert!(state.answered(id.as_str(), DONE).request.is_some());
    let same = state.answered(id.as_str(), DONE);
    assert!(same.repeat && !same.contradicts && same.request.is_none());
    assert_eq!(same.first.as_ref().and_then(|r| r.cl_ord_id.as_deref()), Some("c-1"));
    for verdict in [Verdict::Refused, Verdict::Unknown] {
        let other = state.answered(id.as_str(), Reply::Outcome(verdict));
        assert!(other.repeat && other.contradicts, "{verdict:?}: {other:?}");
        assert_eq!(other.first.map(|r| r.method), Some("order:new"));
    }
    assert!(!state.answered(id.as_str(), ACK).repeat, "an ack is never a repeat");
}

#[test]
fn a_request_past_its_deadline_is_reported_once_and_then_makes_room_like_one_listed_unanswered() {
    let timeout = Duration::from_millis(100);
    let state = OrderState::new("s".into(), false).with_max_pending(3).with_request_timeout(Some(timeout));
    let ids: Vec<RequestId> = (0..5).map(|_| RequestId::fresh().unwrap()).collect();
    let t0 = Instant::now();
    assert!(state.remember(&ids[0], "order:new", Some("c-0"), None).unwrap(), "the only deadline");
    assert!(!state.remember(&ids[1], "order:cancel", None, Some(9)).unwrap());
    assert!(!state.remember(&ids[2], "order:new", Some("c-2"), None).unwrap());
    assert!(state.answered(ids[0].as_str(), ACK).request.is_some());
    assert!(state.answered(ids[1].as_str(), DONE).request.is_some(), "answered in time");
    let (none, next) = state.expire(t0);
    assert!(none.is_empty());
    assert!(next.is_some_and(|at| at >= t0 + timeout), "{next:?}");
    // Well past: the two unanswered ones, in the order sent; the answered one is not.
    let (due, next) = state.expire(t0 + Duration::from_secs(1));
    let named: Vec<(&str, Option<&str>, bool)> =
        due.iter().map(|t| (t.request_id.as_str(), t.request.cl_ord_id.as_deref(), t.request.acked)).collect();
    assert_eq!(named, [(ids[0].as_str(), Some("c-0"), true), (ids[2].as_str(), Some("c-2"), false)]);
    assert_eq!(next, None);
    assert!(state.expire(t0 + Duration::from_secs(2)).0.is_empty(), "once only");
    assert!(!state.awaits_unreported(), "a rotation does not wait for them");
    // Still awaited: a late outcome is matched.
    assert!(state.answered(ids[2].as_str(), DONE).request.is_some());
    // A disconnection lists every request its connection leaves unanswered, those reported
    // by their deadline too (the list is complete for the connection); never one twice.
    state.remember(&ids[3], "order:new", None, None).unwrap();
    assert_eq!(state.report_unanswered(), vec![ids[0].as_str().to_owned(), ids[3].as_str().to_owned()]);
    assert!(state.report_unanswered().is_empty(), "listed once");
    // ids[3]'s deadline, now past, reports nothing more: the disconnection did.
    assert!(state.expire(t0 + Duration::from_secs(9)).0.is_empty());
    // The table full (0 and 3 awaited, and one more): a reported request makes room.
    state.remember(&ids[4], "order:new", None, None).unwrap();
    let six = RequestId::fresh().unwrap();
    state.remember(&six, "order:new", None, None).unwrap();
    assert_eq!(
        state.unanswered(),
        vec![ids[3].as_str().to_owned(), ids[4].as_str().to_owned(), six.as_str().to_owned()]
    );
}

#[test]
fn without_a_deadline_nothing_expires() {
    let state = OrderState::new("s".into(), false);
    let id = RequestId::fresh().unwrap();
    assert!(!state.remember(&id, "order:new", None, None).unwrap(), "no deadline to keep");
    let (due, next) = state.expire(Instant::now() + Duration::from_secs(86_400));
    assert!(due.is_empty() && next.is_none());
    assert!(state.awaits_unreported());
}
