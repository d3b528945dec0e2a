//! One symbol's synthetic market: a mark price and a book of ten levels a side around it.
//!
//! The best ask is half a level step above the mark and the best bid half a step below
//! (rounded outwards to the tick), so an order at the mark rests and an order through it
//! trades. Level sizes come from the seeded generator. User orders take liquidity from the
//! levels; the book is rebuilt around the mark whenever the mark moves.

use super::decimal::Dec;
use super::rng::Rng;
use super::symbols::Symbol;

/// Levels a side.
pub(crate) const LEVELS: usize = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Level {
    pub price: Dec,
    pub qty: Dec,
}

#[derive(Debug)]
pub(crate) struct Market {
    pub mark: Dec,
    /// Asks lowest first; bids highest first (best first on both sides).
    pub asks: Vec<Level>,
    pub bids: Vec<Level>,
    /// The last price a user traded at; `None` until the first fill (the venue answers null).
    pub last_price: Option<Dec>,
    rng: Rng,
}

impl Market {
    pub(crate) fn new(symbol: &Symbol, seed: u64) -> Market {
        let mut market = Market {
            mark: symbol.mark,
            asks: Vec::new(),
            bids: Vec::new(),
            last_price: None,
            rng: Rng::for_stream(seed, &symbol.name),
        };
        market.rebuild(symbol);
        market
    }

    /// Moves the mark and rebuilds the book around it.
    pub(crate) fn set_mark(&mut self, symbol: &Symbol, mark: Dec) {
        self.mark = mark;
        self.rebuild(symbol);
    }

    /// One step of the walk: the mark moves by −2…+2 level steps (it may stay), never to
    /// where the ten bid levels would reach zero. Returns the new mark.
    pub(crate) fn walk(&mut self, symbol: &Symbol) -> Dec {
        let steps = self.rng.below(5) as i64 - 2;
        let next = (self.mark + symbol.level_step.mul(Dec::from_int(steps))).floor_to(symbol.tick);
        if next > symbol.level_step.mul(Dec::from_int(LEVELS as i64 + 1)) {
            self.set_mark(symbol, next);
        } else {
            self.rebuild(symbol);
        }
        self.mark
    }

    fn rebuild(&mut self, symbol: &Symbol) {
        let half = symbol.level_step.div(Dec::from_int(2));
        let mut level = |i: usize, side: i64| {
            let offset = half + symbol.level_step.mul(Dec::from_int(i as i64));
            let price = if side > 0 {
                (self.mark + offset).ceil_to(symbol.tick)
            } else {
                (self.mark - offset).floor_to(symbol.tick)
            };
            // 0.5–1.5 × level_qty, a little more further from the mark, on the lot.
            let factor = Dec::from_int(50 + self.rng.below(101) as i64 + 10 * i as i64).div(Dec::from_int(100));
            let qty = symbol.level_qty.mul(factor).floor_to(symbol.lot).max(symbol.lot);
            Level { price, qty }
        };
        let asks: Vec<Level> = (0..LEVELS).map(|i| level(i, 1)).collect();
        let bids: Vec<Level> = (0..LEVELS).map(|i| level(i, -1)).collect();
        self.asks = dedup_prices(asks);
        self.bids = dedup_prices(bids);
    }

    pub(crate) fn best_ask(&self) -> Option<Dec> {
        self.asks.first().map(|l| l.price)
    }

    pub(crate) fn best_bid(&self) -> Option<Dec> {
        self.bids.first().map(|l| l.price)
    }

    /// The levels a taker on `buy` side meets, best first.
    pub(crate) fn opposite(&mut self, buy: bool) -> &mut Vec<Level> {
        if buy { &mut self.asks } else { &mut self.bids }
    }

    /// The levels as the venue serves them: `[price, qty]` strings, in an order that is
    /// **not** the sorted one (the venue documents "not guaranteed"; clients must sort).
    pub(crate) fn shuffled(&mut self, levels: &[Level], symbol: &Symbol) -> Vec<[String; 2]> {
        unsorted(&mut self.rng, levels, symbol)
    }
}

/// `levels` as `[price, qty]` strings in a shuffled order that is never the sorted one (either
/// direction) when there are two levels or more: what the venue's depth book looks like.
pub(crate) fn unsorted(rng: &mut Rng, levels: &[Level], symbol: &Symbol) -> Vec<[String; 2]> {
    let mut out: Vec<Level> = levels.to_vec();
    rng.shuffle(&mut out);
    if out.len() > 1
        && (out.windows(2).all(|w| w[0].price <= w[1].price) || out.windows(2).all(|w| w[0].price >= w[1].price))
    {
        out.swap(0, 1);
    }
    out.iter().map(|l| [symbol.price_text(l.price), symbol.qty_text(l.qty)]).collect()
}

/// Coarse ticks can round two levels onto one price: keep one level per price.
fn dedup_prices(mut levels: Vec<Level>) -> Vec<Level> {
    levels.dedup_by(|b, a| {
        if a.price == b.price {
            a.qty += b.qty;
            true
        } else {
            false
        }
    });
    levels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::SymbolSpec;

    fn symbol(i: usize) -> Symbol {
        Symbol::from_spec(&SymbolSpec::defaults()[i]).unwrap()
    }

    #[test]
    fn book_straddles_the_mark() {
        let btc = symbol(0);
        let m = Market::new(&btc, 1);
        assert_eq!(m.best_ask().unwrap().plain(), "65000.25");
        assert_eq!(m.best_bid().unwrap().plain(), "64999.75");
        assert_eq!((m.asks.len(), m.bids.len()), (LEVELS, LEVELS));
        assert!(m.asks.windows(2).all(|w| w[0].price < w[1].price));
        assert!(m.bids.windows(2).all(|w| w[0].price > w[1].price));
        assert!(m.asks.iter().chain(&m.bids).all(|l| l.qty.is_positive() && l.qty.is_multiple_of(btc.lot)));
        // Same seed, same book.
        assert_eq!(Market::new(&btc, 1).asks, m.asks);
    }

    #[test]
    fn xag_bids_cross_a_power_of_ten() {
        let xag = symbol(2);
        let mut m = Market::new(&xag, 1);
        let bids = m.bids.clone();
        let served = m.shuffled(&bids, &xag);
        let prices: Vec<&str> = served.iter().map(|l| l[0].as_str()).collect();
        assert!(prices.contains(&"100.04") && prices.contains(&"99.95"), "{prices:?}");
        let mut by_text = prices.clone();
        by_text.sort();
        let mut by_value = prices.clone();
        by_value.sort_by_key(|p| Dec::parse(p).unwrap());
        assert_ne!(by_text, by_value, "a string sort is not a numeric sort here");
        assert_ne!(prices, by_value.iter().rev().copied().collect::<Vec<_>>(), "not served best first");
    }

    #[test]
    fn the_walk_moves_on_the_tick_and_stays_positive() {
        let xag = symbol(2);
        let mut m = Market::new(&xag, 3);
        let mut moved = false;
        for _ in 0..2000 {
            let before = m.mark;
            let after = m.walk(&xag);
            moved |= before != after;
            assert!(after.is_multiple_of(xag.tick) && after > xag.level_step.mul(Dec::from_int(11)));
            assert!(m.best_bid().unwrap() < after && after < m.best_ask().unwrap());
        }
        assert!(moved);
    }
}
