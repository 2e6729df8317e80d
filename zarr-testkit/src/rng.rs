//! The one seeded generator of the workspace's tests, bench data and seed writers.
//!
//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014,
//! with the constants of Vigna's reference code): every seed, 0 included, gives a full-period
//! stream of well-mixed 64-bit values, the same on every platform and in every release of this
//! crate. It is for test data only: neither cryptographic nor meant to be fast beyond need.
//!
//! A test that wants reproducible data makes one `Rng::new(seed)` and draws from it; a
//! property test derives the seed from one of its inputs, so a failing case replays.

/// A seeded SplitMix64 generator.
///
/// ```
/// use zarr_testkit::Rng;
///
/// let mut rng = Rng::new(42);
/// let x = rng.next_u64();
/// assert_eq!(Rng::new(42).next_u64(), x);
/// let coin = rng.chance(0.5);
/// let i = rng.below(6); // a die: 0..6
/// assert!(i < 6);
/// # let _ = coin;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose stream is fixed by `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next 32 random bits (the high half of a draw).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A random byte (the top byte of a draw).
    pub fn byte(&mut self) -> u8 {
        (self.next_u64() >> 56) as u8
    }

    /// Uniform in `0..n` (multiply-shift: the bias is below `n / 2^64`, nothing a test sees).
    ///
    /// # Panics
    ///
    /// When `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0): an empty range");
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `range`.
    ///
    /// # Panics
    ///
    /// When `range` is empty.
    pub fn range(&mut self, range: std::ops::Range<u64>) -> u64 {
        assert!(
            range.start < range.end,
            "Rng::range({range:?}): an empty range"
        );
        range.start + self.below(range.end - range.start)
    }

    /// A uniform index into a slice of `len` elements.
    ///
    /// # Panics
    ///
    /// When `len` is 0.
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// Uniform in `[0, 1)`, with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `true` with probability `p` (0 never, 1 always).
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Fills `out` with random bytes (eight per draw, little-endian).
    pub fn fill(&mut self, out: &mut [u8]) {
        let mut chunks = out.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let last = self.next_u64().to_le_bytes();
            rest.copy_from_slice(&last[..rest.len()]);
        }
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = vec![0u8; n];
        self.fill(&mut out);
        out
    }

    /// Shuffles `items` uniformly (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.index(i + 1));
        }
    }

    /// A uniform permutation of `0..n`.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        self.shuffle(&mut p);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn the_stream_is_splitmix64() {
        // Vigna's splitmix64.c from state 0: the first outputs
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn draws_stay_in_their_ranges_and_cover_them() {
        let mut rng = Rng::new(1);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            let i = rng.below(7) as usize;
            seen[i] += 1;
            let r = rng.range(10..13);
            assert!((10..13).contains(&r));
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
        }
        // each of 7 values about 1000 times
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
        assert!(!Rng::new(3).chance(0.0));
        assert!(Rng::new(3).chance(1.0));
    }

    #[test]
    fn fill_uses_every_byte_of_a_draw() {
        let mut a = Rng::new(9);
        let bytes = a.bytes(11);
        let mut b = Rng::new(9);
        let first = b.next_u64().to_le_bytes();
        let second = b.next_u64().to_le_bytes();
        assert_eq!(&bytes[..8], &first);
        assert_eq!(&bytes[8..], &second[..3]);
        assert_eq!(a, b, "a partial draw is one draw");
    }

    #[test]
    fn permutations_are_permutations() {
        let mut rng = Rng::new(5);
        for n in [0, 1, 2, 9] {
            let mut p = rng.permutation(n);
            p.sort_unstable();
            assert_eq!(p, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    #[should_panic(expected = "an empty range")]
    fn an_empty_range_panics() {
        Rng::new(0).below(0);
    }
}
