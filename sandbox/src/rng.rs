//! A small seeded generator for the synthetic market (SplitMix64): the same seed gives the
//! same book, the same shuffles and the same walk, so a rehearsal can be replayed. Not for
//! secrets: keys, nonces and ids come from `random` (the OS).

#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    #[cfg(test)]
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator for one stream (e.g. one symbol) derived from a seed and a label, so
    /// adding a symbol does not change the others' markets.
    pub(crate) fn for_stream(seed: u64, label: &str) -> Rng {
        let mut rng = Rng(seed);
        for b in label.bytes() {
            rng.0 ^= u64::from(b);
            rng.next();
        }
        rng
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is irrelevant for a synthetic market.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// Fisher–Yates.
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn seeded_and_stream_separated() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        assert_eq!((a.next(), a.next()), (b.next(), b.next()));
        assert_ne!(Rng::for_stream(7, "BTC-USD").next(), Rng::for_stream(7, "ETH-USD").next());
        let mut items: Vec<u32> = (0..10).collect();
        Rng::new(1).shuffle(&mut items);
        let mut sorted = items.clone();
        sorted.sort();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
    }
}
