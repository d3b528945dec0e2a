//! The engine without HTTP: resting index, events, ids, limits.

use super::events::Channel;
use super::order::{NewOrder, OrderType, Side, Tif};
use super::{Engine, OrderRef, Who};
use crate::decimal::Dec;
use crate::symbols::{Symbol, SymbolSpec};

const WHO: Who<'static> = Who { account: "bsc:0xabc", user: "bsc_0xabc" };

fn d(s: &str) -> Dec {
    Dec::parse(s).unwrap()
}

fn engine(limits: bool) -> Engine {
    let symbols = SymbolSpec::defaults().iter().map(|s| Symbol::from_spec(s).unwrap()).collect();
    Engine::new(symbols, 1, d("1000"), limits, 0)
}

fn buy(price: &str, qty: &str, tif: Tif) -> NewOrder {
    NewOrder {
        symbol: "BTC-USD".into(),
        side: Side::Buy,
        order_type: OrderType::Limit,
        qty: d(qty),
        price: Some(d(price)),
        tif: Some(tif),
        reduce_only: false,
        cl_ord_id: None,
        margin_mode: None,
        leverage: None,
    }
}

#[test]
fn resting_index_follows_cancels_and_fills() {
    let mut e = engine(false);
    let a = e.place(WHO, buy("64000", "0.01", Tif::Gtc), 1).unwrap();
    let b = e.place(WHO, buy("63000", "0.01", Tif::Gtc), 2).unwrap();
    assert!(a.order_id > 1 << 32 && b.order_id == a.order_id + 1);
    assert_eq!(e.resting_ids(0), [b.order_id, a.order_id]);
    e.cancel(WHO, &OrderRef::Id(b.order_id), 3).unwrap();
    assert_eq!(e.resting_ids(0), [a.order_id]);
    assert_eq!(e.cancel(WHO, &OrderRef::Id(b.order_id), 4).unwrap_err().status, 404);
    let events = e.set_mark("BTC-USD", d("64000"), 5).unwrap();
    assert!(e.resting_ids(0).is_empty());
    let channels: Vec<Channel> = events.iter().map(|ev| ev.channel).collect();
    assert_eq!(channels, [Channel::Trade, Channel::Order, Channel::Position, Channel::Balance]);
    assert!(events.iter().all(|ev| ev.account == WHO.account && ev.seq > 0));
    assert!(events.windows(2).all(|w| w[0].seq + 1 == w[1].seq), "one journal, in order");
    assert_eq!(e.events_since(0).len() as u64, events.last().unwrap().seq);
}

#[test]
fn ioc_and_alo_never_enter_the_resting_index() {
    let mut e = engine(false);
    let ioc = e.place(WHO, buy("60000", "0.01", Tif::Ioc), 1).unwrap();
    assert_eq!(ioc.status, "canceled");
    let alo = e.place(WHO, buy("70000", "0.01", Tif::Alo), 2).unwrap();
    assert_eq!(alo.status, "rejected");
    assert_eq!(alo.events.len(), 2, "created, then rejected: {:?}", alo.events);
    assert!(e.resting_ids(0).is_empty());
}

#[test]
fn account_limits_when_enabled() {
    let mut e = engine(true);
    // Margin: 1000 DUSD at leverage 10 holds 10,000 of value; 0.2 BTC at 60,000 is 12,000.
    let refused = e.place(WHO, buy("60000", "0.2", Tif::Gtc), 1).unwrap_err();
    assert!(refused.message.starts_with("insufficient margin"), "{refused:?}");
    for i in 0..100 {
        e.place(WHO, buy(&format!("{}", 50_000 + i), "0.0001", Tif::Gtc), 2).unwrap();
    }
    let refused = e.place(WHO, buy("50000", "0.0001", Tif::Gtc), 3).unwrap_err();
    assert_eq!(refused.message, "max open orders 100 reached for BTC-USD");
    // Without limits, nothing of the sort is checked.
    let mut e = engine(false);
    assert_eq!(e.place(WHO, buy("60000", "0.2", Tif::Gtc), 1).unwrap().status, "open");
}

#[test]
fn generated_client_ids_are_ulid_shaped_and_distinct() {
    let a = super::ulid();
    let b = super::ulid();
    assert_eq!(a.len(), 26);
    assert_ne!(a, b);
    assert!(a.bytes().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()) && !a.contains(['I', 'L', 'O', 'U']));
}

#[test]
fn the_running_locked_margin_equals_the_resting_orders() {
    let mut e = engine(false);
    let mut rng = crate::rng::Rng::new(5);
    for step in 0..400 {
        let price = 64_000 + rng.below(2000) as i64;
        let qty = format!("0.{:04}", 1 + rng.below(3000));
        let tif = [Tif::Gtc, Tif::Ioc, Tif::Alo][rng.below(3) as usize];
        let mut order = buy(&price.to_string(), &qty, tif);
        if rng.below(2) == 0 {
            order.side = Side::Sell;
        }
        let _ = e.place(WHO, order, step);
        match rng.below(10) {
            0 => {
                let mark = 64_900 + rng.below(200) as i64;
                e.set_mark("BTC-USD", Dec::from_int(mark), step).unwrap();
            }
            1 => {
                let live: Vec<u64> = e.live_orders(WHO.account, None).map(|o| o.id).collect();
                if let Some(id) = live.get(rng.below(live.len().max(1) as u64) as usize) {
                    e.cancel(WHO, &OrderRef::Id(*id), step).unwrap();
                }
            }
            _ => {}
        }
        let summed: Dec = e.live_orders(WHO.account, None).map(|o| o.locked()).sum();
        assert_eq!(e.accounts[WHO.account].locked, summed, "step {step}");
    }
    assert!(e.live_orders(WHO.account, None).count() > 10, "some orders rest");
    let resting: usize = (0..3).map(|i| e.resting_ids(i).len()).sum();
    assert_eq!(resting, e.live_orders(WHO.account, None).count(), "the resting index holds exactly the live orders");
}
