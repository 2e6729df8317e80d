//! zfp's bit stream: bits in order of significance, least first, in 64-bit little-endian
//! words (zfp's default word size, on the little-endian machines zfp streams come from).

/// Writes bits; the output is a whole number of words.
#[derive(Debug, Default)]
pub(super) struct BitWriter {
    words: Vec<u64>,
    buffer: u64,
    bits: u32,
}

impl BitWriter {
    /// A writer with room for `bytes` bytes.
    pub(super) fn with_capacity(bytes: usize) -> Self {
        BitWriter {
            words: Vec::with_capacity(bytes / 8 + 1),
            buffer: 0,
            bits: 0,
        }
    }

    /// Writes one bit (0 or 1) and returns it.
    #[inline]
    pub(super) fn write_bit(&mut self, bit: u64) -> u64 {
        self.buffer |= bit << self.bits;
        self.bits += 1;
        if self.bits == 64 {
            self.words.push(self.buffer);
            self.buffer = 0;
            self.bits = 0;
        }
        bit
    }

    /// Writes the `n` (0 to 64) low bits of `value`; returns the bits not written
    /// (`value >> n`).
    #[inline]
    pub(super) fn write_bits(&mut self, value: u64, n: u32) -> u64 {
        if n == 0 {
            return value;
        }
        let low = if n == 64 {
            value
        } else {
            value & ((1 << n) - 1)
        };
        self.buffer |= low << self.bits;
        let total = self.bits + n;
        if total >= 64 {
            self.words.push(self.buffer);
            let used = 64 - self.bits;
            self.buffer = if used == 64 { 0 } else { low >> used };
            self.bits = total - 64;
        } else {
            self.bits = total;
        }
        if n == 64 {
            0
        } else {
            value >> n
        }
    }

    /// Writes `n` zero bits.
    pub(super) fn pad(&mut self, mut n: u32) {
        while n > 0 {
            let m = n.min(64);
            self.write_bits(0, m);
            n -= m;
        }
    }

    /// The bits written so far.
    #[cfg(test)]
    pub(super) fn tell(&self) -> u64 {
        self.words.len() as u64 * 64 + u64::from(self.bits)
    }

    /// Pads to a whole word and returns the bytes.
    pub(super) fn finish(mut self) -> Vec<u8> {
        if self.bits > 0 {
            self.words.push(self.buffer);
        }
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// Reads bits; reading past the end yields zeros and is reported by [`BitReader::overran`].
#[derive(Debug)]
pub(super) struct BitReader<'a> {
    data: &'a [u8],
    /// The position in bits.
    pos: u64,
}

impl<'a> BitReader<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        BitReader { data, pos: 0 }
    }

    /// Whether more bits were read than the data holds (rounded up to whole words, as zfp
    /// writes them).
    pub(super) fn overran(&self) -> bool {
        self.pos > self.data.len() as u64 * 8
    }

    /// The position in bits.
    pub(super) fn tell(&self) -> u64 {
        self.pos
    }

    /// Skips `n` bits.
    pub(super) fn skip(&mut self, n: u64) {
        self.pos = self.pos.saturating_add(n);
    }

    /// Skips to the next multiple of 64 bits.
    pub(super) fn align(&mut self) {
        self.pos = self.pos.div_ceil(64).saturating_mul(64);
    }

    /// The 64 bits from `bit` on (zeros past the end).
    #[inline]
    fn window(&self, bit: u64) -> u64 {
        let byte = (bit / 8) as usize;
        let mut w = [0u8; 16];
        if byte < self.data.len() {
            let end = (byte + 16).min(self.data.len());
            w[..end - byte].copy_from_slice(&self.data[byte..end]);
        }
        let lo = u128::from_le_bytes(w);
        (lo >> (bit % 8)) as u64
    }

    #[inline]
    pub(super) fn read_bit(&mut self) -> u64 {
        let byte = (self.pos / 8) as usize;
        let bit = self
            .data
            .get(byte)
            .map_or(0, |b| u64::from(b >> (self.pos % 8)) & 1);
        self.pos += 1;
        bit
    }

    /// Reads `n` (0 to 64) bits, the first read the least significant.
    #[inline]
    pub(super) fn read_bits(&mut self, n: u32) -> u64 {
        if n == 0 {
            return 0;
        }
        let v = self.window(self.pos);
        self.pos += u64::from(n);
        if n == 64 {
            v
        } else {
            v & ((1 << n) - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn bits_round_trip(items in prop::collection::vec((any::<u64>(), 0u32..=64), 0..100)) {
            let mut w = BitWriter::default();
            let mut total = 0u64;
            for &(v, n) in &items {
                let rest = w.write_bits(v, n);
                prop_assert_eq!(rest, if n == 64 { 0 } else { v >> n });
                total += u64::from(n);
                prop_assert_eq!(w.tell(), total);
            }
            let bytes = w.finish();
            prop_assert_eq!(bytes.len() as u64, total.div_ceil(64) * 8);
            let mut r = BitReader::new(&bytes);
            for &(v, n) in &items {
                let want = if n == 64 { v } else { v & ((1u64 << n) - 1) };
                prop_assert_eq!(r.read_bits(n), want);
            }
            prop_assert!(!r.overran());
        }
    }

    #[test]
    fn single_bits_and_padding() {
        let mut w = BitWriter::default();
        for i in 0..70 {
            w.write_bit((i % 3) & 1);
        }
        w.pad(10);
        let bytes = w.finish();
        assert_eq!(bytes.len(), 16);
        let mut r = BitReader::new(&bytes);
        for i in 0..70 {
            assert_eq!(r.read_bit(), (i % 3) & 1);
        }
        r.align();
        assert_eq!(r.tell(), 128);
        assert!(!r.overran());
        r.skip(1);
        assert!(r.overran());
        assert_eq!(r.read_bits(64), 0);
    }
}
