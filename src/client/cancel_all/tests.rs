//! Unit tests of cancel_all's reading of the venue's answers and its choice of orders.

use super::*;
use crate::error::Code;

#[test]
fn the_ended_statuses_are_statuses_the_library_knows() {
    for status in ENDED {
        assert!(crate::endpoints::ORDER_STATUSES.contains(status), "{status}");
    }
    for open in ["open", "new", "partially_filled", "untriggered"] {
        assert!(!ENDED.contains(&open), "{open}");
    }
}

#[test]
fn order_ids_are_read_exactly_as_numbers_or_digits() {
    for (row, id) in [
        (json!({ "id": 7 }), Some(7)),
        (json!({ "id": "9007199254740993" }), Some(9_007_199_254_740_993)),
        (json!({ "id": 9_007_199_254_740_993_i64 }), Some(9_007_199_254_740_993)),
        // A float would name another order above 2^53; zero and negatives are no ids.
        (serde_json::from_str(r#"{"id":9.007199254740993e15}"#).unwrap(), None),
        (json!({ "id": 0 }), None),
        (json!({ "id": "-3" }), None),
        (json!({ "id": "7a" }), None),
        (json!({}), None),
    ] {
        assert_eq!(order_id(&row), id, "{row}");
    }
}

#[test]
fn a_listed_order_without_an_id_makes_the_listing_unusable() {
    let error = listed_target(&json!({ "cl_ord_id": "mm-1", "status": "open" })).unwrap_err();
    assert_eq!(error.code(), Code::BadResponse);
    assert!(error.message().contains("without a positive integer \"id\""), "{}", error.message());
    let target = listed_target(&json!({ "id": 7, "cl_ord_id": "mm-1", "symbol": "BTC-USD" })).unwrap();
    assert_eq!(target.key(), json!({ "order_id": 7 }));
}

fn listed(id: i64, cl: &str, symbol: &str) -> Target {
    listed_target(&json!({ "id": id, "cl_ord_id": cl, "symbol": symbol, "status": "open" })).unwrap()
}

#[test]
fn named_orders_alone_choose_only_themselves() {
    let (ours, theirs) = (listed(1, "mm-1", "BTC-USD"), listed(2, "other-engine-7", "ETH-USD"));
    let only_named = Selection { symbol: None, prefix: None, named: vec!["mm-1"] };
    assert!(only_named.chooses(&ours));
    assert!(!only_named.chooses(&theirs), "naming one order must not cancel another");
    // No filter and no name: every order of the account.
    let all = Selection { symbol: None, prefix: None, named: vec![] };
    assert!(all.chooses(&ours) && all.chooses(&theirs));
    // A filter with names: the filtered orders and the named ones.
    let both = Selection { symbol: Some("ETH-USD"), prefix: None, named: vec!["mm-1"] };
    assert!(both.chooses(&ours) && both.chooses(&theirs));
    let prefix = Selection { symbol: None, prefix: Some("mm-"), named: vec![] };
    assert!(prefix.chooses(&ours) && !prefix.chooses(&theirs));
    // A row naming no symbol, listed for the symbol asked for, is of it; another symbol is not.
    let of_btc = Selection { symbol: Some("BTC-USD"), prefix: None, named: vec![] };
    let no_symbol = listed_target(&json!({ "id": 3, "cl_ord_id": "x" })).unwrap();
    assert!(of_btc.chooses(&no_symbol) && of_btc.chooses(&ours) && !of_btc.chooses(&theirs));
}

#[test]
fn a_listing_that_may_hold_more_is_truncated() {
    for (n, total, truncated) in [
        (1, None, false),
        (1, Some(json!(1)), false),
        (1, Some(json!(null)), false),
        (1, Some(json!(5000)), true),
        // The venue writes numbers either way; an unreadable total cannot say the list is whole.
        (1, Some(json!("5000")), true),
        (1, Some(json!("1")), false),
        (1, Some(json!("many")), true),
        (1, Some(json!(2.5)), true),
        // A full page says nothing of what is beyond it, with a total or without.
        (OPEN_ORDERS_PAGE, None, true),
        (OPEN_ORDERS_PAGE, Some(json!(OPEN_ORDERS_PAGE)), true),
    ] {
        assert_eq!(may_hold_more(n, total.as_ref()), truncated, "{n} rows, total {total:?}");
    }
}

#[test]
fn an_answer_about_another_order_does_not_answer_for_this_one() {
    let target = listed(1, "mm-1", "BTC-USD");
    assert!(target.is_answered_by(&json!({ "id": 1, "status": "canceled" })));
    assert!(target.is_answered_by(&json!({ "id": "1", "cl_ord_id": "mm-1", "status": "canceled" })));
    assert!(!target.is_answered_by(&json!({ "id": 999, "cl_ord_id": "mm-1", "status": "canceled" })));
    assert!(target.is_answered_by(&json!({ "cl_ord_id": "mm-1", "status": "canceled" })), "no id: by cl_ord_id");
    assert!(!target.is_answered_by(&json!({ "status": "canceled" })), "naming no order: no answer");
    let named = Target::named("mm-2");
    assert!(named.is_answered_by(&json!({ "id": 5, "cl_ord_id": "mm-2", "status": "open" })));
    assert!(!named.is_answered_by(&json!({ "id": 5, "cl_ord_id": "mm-3", "status": "canceled" })));
    assert!(!named.is_answered_by(&json!({ "id": 5, "status": "canceled" })));
}
