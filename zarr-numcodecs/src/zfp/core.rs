//! ZFP's block transform and embedded coding (zfp 1.0, built with its defaults: no rounding
//! bias, no tight error), for `int32`, `int64`, `float32` and `float64` blocks of 1 to 4
//! dimensions, in the lossy modes (rate, precision, accuracy, expert) and the reversible one.
//!
//! Written from the zfp paper (Lindstrom 2014) and the library's format: a block of 4^d
//! values gets a common exponent (floats), becomes integers (block floating point), goes
//! through a decorrelating lifting transform along each axis, is reordered by sequency and
//! mapped to negabinary, and its bit planes are coded from the most significant one down with
//! group tests, within the bit budget and precision the mode sets. Integer arithmetic wraps as
//! zfp's does on the two's complement machines its streams come from.

use super::bits::{BitReader, BitWriter};
use super::perm::{PERM_1, PERM_2, PERM_3, PERM_4};

/// The four parameters every zfp mode comes down to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Params {
    pub minbits: u32,
    pub maxbits: u32,
    pub maxprec: u32,
    pub minexp: i32,
}

pub(super) const MIN_BITS: u32 = 1;
pub(super) const MAX_BITS: u32 = 16658;
pub(super) const MAX_PREC: u32 = 64;
pub(super) const MIN_EXP: i32 = -1074;

impl Params {
    /// Whether this is the reversible (lossless) mode.
    pub(super) fn reversible(&self) -> bool {
        self.minexp < MIN_EXP
    }
}

fn perm(dims: usize) -> &'static [u8] {
    match dims {
        1 => &PERM_1,
        2 => &PERM_2,
        3 => &PERM_3,
        _ => &PERM_4,
    }
}

/// A zfp integer type (`int32`, `int64`): the arithmetic of the transforms.
pub(super) trait ZInt: Copy + Default + PartialEq + std::fmt::Debug {
    const BITS: u32;
    const PBITS: u32;
    const NBMASK: u64;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn shr1(self) -> Self;
    fn shl1(self) -> Self;
    /// Two's complement to negabinary, as an unsigned value of `BITS` bits.
    fn to_nb(self) -> u64;
    fn from_nb(u: u64) -> Self;
    /// Between sign-magnitude and two's complement (the same map both ways).
    fn flip_sign_magnitude(self) -> Self;
}

macro_rules! zint {
    ($t:ty, $u:ty, $bits:literal, $pbits:literal) => {
        impl ZInt for $t {
            const BITS: u32 = $bits;
            const PBITS: u32 = $pbits;
            const NBMASK: u64 = 0xaaaa_aaaa_aaaa_aaaa >> (64 - $bits);
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn shr1(self) -> Self {
                self >> 1
            }
            #[inline(always)]
            fn shl1(self) -> Self {
                self.wrapping_shl(1)
            }
            #[inline(always)]
            fn to_nb(self) -> u64 {
                let m = Self::NBMASK as $u;
                u64::from((self as $u).wrapping_add(m) ^ m)
            }
            #[inline(always)]
            fn from_nb(u: u64) -> Self {
                let m = Self::NBMASK as $u;
                ((u as $u) ^ m).wrapping_sub(m) as $t
            }
            #[inline(always)]
            fn flip_sign_magnitude(self) -> Self {
                if self < 0 {
                    ((self as $u) ^ (<$u>::MAX >> 1)) as $t
                } else {
                    self
                }
            }
        }
    };
}

zint!(i32, u32, 32, 5);
zint!(i64, u64, 64, 6);

/// A zfp float type (`float32`, `float64`) and its integer type.
pub(super) trait ZFloat: Copy + Default + PartialOrd + std::fmt::Debug {
    type I: ZInt;
    const EBITS: u32;
    const EBIAS: i32;
    fn abs(self) -> Self;
    /// `frexp`'s exponent of a positive value (0 for infinity and NaN, as glibc), at least
    /// `1 - EBIAS` (subnormals).
    fn exponent(self) -> i32;
    /// `ldexp(1, k)`, exactly (infinity above the range, zero below).
    fn pow2(k: i32) -> Self;
    fn mul(self, o: Self) -> Self;
    /// C's cast to the integer type, with x86's result (the minimum) where C leaves it
    /// undefined (NaN, out of range).
    fn to_int(self) -> Self::I;
    fn from_int(i: Self::I) -> Self;
    fn to_bits_int(self) -> Self::I;
    fn from_bits_int(i: Self::I) -> Self;
    fn same_bits(self, o: Self) -> bool;
    fn zero() -> Self;
}

macro_rules! zfloat {
    ($f:ty, $i:ty, $u:ty, $ebits:literal, $mant:literal) => {
        impl ZFloat for $f {
            type I = $i;
            const EBITS: u32 = $ebits;
            const EBIAS: i32 = (1 << ($ebits - 1)) - 1;
            #[inline(always)]
            fn abs(self) -> Self {
                <$f>::abs(self)
            }
            #[inline(always)]
            fn exponent(self) -> i32 {
                if !self.is_finite() {
                    return 0;
                }
                let biased = ((self.to_bits() >> $mant) as i32) & ((1 << $ebits) - 1);
                (biased - (Self::EBIAS - 1)).max(1 - Self::EBIAS)
            }
            #[inline(always)]
            fn pow2(k: i32) -> Self {
                let max_exp = Self::EBIAS;
                let min_normal = 1 - Self::EBIAS;
                if k > max_exp {
                    <$f>::INFINITY
                } else if k >= min_normal {
                    <$f>::from_bits(((k + Self::EBIAS) as $u) << $mant)
                } else if k >= min_normal - $mant {
                    <$f>::from_bits((1 as $u) << (k - (min_normal - $mant)))
                } else {
                    0.0
                }
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn to_int(self) -> $i {
                // in range: truncation toward zero, as C
                if self.is_finite() && self.abs() < Self::pow2(<$i>::BITS as i32 - 1) {
                    self as $i
                } else {
                    <$i>::MIN
                }
            }
            #[inline(always)]
            fn from_int(i: $i) -> Self {
                i as $f
            }
            #[inline(always)]
            fn to_bits_int(self) -> $i {
                self.to_bits() as $i
            }
            #[inline(always)]
            fn from_bits_int(i: $i) -> Self {
                <$f>::from_bits(i as $u)
            }
            #[inline(always)]
            fn same_bits(self, o: Self) -> bool {
                self.to_bits() == o.to_bits()
            }
            #[inline(always)]
            fn zero() -> Self {
                0.0
            }
        }
    };
}

zfloat!(f32, i32, u32, 8, 23);
zfloat!(f64, i64, u64, 11, 52);

/// The lines of a block along `axis`: their first index and the stride.
fn for_lines(dims: usize, axis: usize, mut f: impl FnMut(usize, usize)) {
    let stride: usize = 1 << (2 * axis);
    let n: usize = 1 << (2 * dims);
    for start in 0..n {
        if (start / stride).is_multiple_of(4) {
            f(start, stride);
        }
    }
}

fn fwd_lift<I: ZInt>(p: &mut [I], b: usize, s: usize) {
    let (mut x, mut y, mut z, mut w) = (p[b], p[b + s], p[b + 2 * s], p[b + 3 * s]);
    x = x.add(w).shr1();
    w = w.sub(x);
    z = z.add(y).shr1();
    y = y.sub(z);
    x = x.add(z).shr1();
    z = z.sub(x);
    w = w.add(y).shr1();
    y = y.sub(w);
    w = w.add(y.shr1());
    y = y.sub(w.shr1());
    p[b] = x;
    p[b + s] = y;
    p[b + 2 * s] = z;
    p[b + 3 * s] = w;
}

fn inv_lift<I: ZInt>(p: &mut [I], b: usize, s: usize) {
    let (mut x, mut y, mut z, mut w) = (p[b], p[b + s], p[b + 2 * s], p[b + 3 * s]);
    y = y.add(w.shr1());
    w = w.sub(y.shr1());
    y = y.add(w);
    w = w.shl1();
    w = w.sub(y);
    z = z.add(x);
    x = x.shl1();
    x = x.sub(z);
    y = y.add(z);
    z = z.shl1();
    z = z.sub(y);
    w = w.add(x);
    x = x.shl1();
    x = x.sub(w);
    p[b] = x;
    p[b + s] = y;
    p[b + 2 * s] = z;
    p[b + 3 * s] = w;
}

fn rev_fwd_lift<I: ZInt>(p: &mut [I], b: usize, s: usize) {
    let (x, mut y, mut z, mut w) = (p[b], p[b + s], p[b + 2 * s], p[b + 3 * s]);
    w = w.sub(z);
    z = z.sub(y);
    y = y.sub(x);
    w = w.sub(z);
    z = z.sub(y);
    w = w.sub(z);
    p[b + s] = y;
    p[b + 2 * s] = z;
    p[b + 3 * s] = w;
}

fn rev_inv_lift<I: ZInt>(p: &mut [I], b: usize, s: usize) {
    let (x, mut y, mut z, mut w) = (p[b], p[b + s], p[b + 2 * s], p[b + 3 * s]);
    w = w.add(z);
    z = z.add(y);
    w = w.add(z);
    y = y.add(x);
    z = z.add(y);
    w = w.add(z);
    p[b + s] = y;
    p[b + 2 * s] = z;
    p[b + 3 * s] = w;
}

/// The forward transform: along x, then y, z, w.
fn fwd_xform<I: ZInt>(p: &mut [I], dims: usize, reversible: bool) {
    for axis in 0..dims {
        for_lines(dims, axis, |b, s| {
            if reversible {
                rev_fwd_lift(p, b, s)
            } else {
                fwd_lift(p, b, s)
            }
        });
    }
}

/// The inverse transform: along w, then z, y, x.
fn inv_xform<I: ZInt>(p: &mut [I], dims: usize, reversible: bool) {
    for axis in (0..dims).rev() {
        for_lines(dims, axis, |b, s| {
            if reversible {
                rev_inv_lift(p, b, s)
            } else {
                inv_lift(p, b, s)
            }
        });
    }
}

/// Codes the bit planes of `data` (negabinary, `intprec` bits) from the most significant
/// down, within `maxbits` bits and `maxprec` planes; returns the bits written.
fn encode_ints(w: &mut BitWriter, maxbits: u32, maxprec: u32, data: &[u64], intprec: u32) -> u32 {
    let size = data.len();
    let kmin = intprec.saturating_sub(maxprec);
    let mut bits = maxbits;
    let mut n = 0usize;
    let mut k = intprec;
    while bits > 0 && k > kmin {
        k -= 1;
        // the first n bits of the plane, verbatim
        let m = n.min(bits as usize);
        bits -= m as u32;
        for v in &data[..m] {
            w.write_bit((v >> k) & 1);
        }
        let mut ones: usize = data[m..].iter().map(|v| ((v >> k) & 1) as usize).sum();
        // group tests over the rest
        while bits > 0 && n < size {
            bits -= 1;
            if w.write_bit(u64::from(ones > 0)) == 0 {
                break;
            }
            ones -= 1;
            while bits > 0 && n < size - 1 {
                bits -= 1;
                if w.write_bit((data[n] >> k) & 1) == 1 {
                    break;
                }
                n += 1;
            }
            n += 1;
        }
    }
    maxbits - bits
}

/// The inverse of [`encode_ints`].
fn decode_ints(
    r: &mut BitReader<'_>,
    maxbits: u32,
    maxprec: u32,
    data: &mut [u64],
    intprec: u32,
) -> u32 {
    let size = data.len();
    data.fill(0);
    let kmin = intprec.saturating_sub(maxprec);
    let mut bits = maxbits;
    let mut n = 0usize;
    let mut k = intprec;
    while bits > 0 && k > kmin {
        k -= 1;
        let m = n.min(bits as usize);
        bits -= m as u32;
        for v in &mut data[..m] {
            *v += r.read_bit() << k;
        }
        while bits > 0 && n < size {
            bits -= 1;
            if r.read_bit() == 0 {
                break;
            }
            while bits > 0 && n < size - 1 {
                bits -= 1;
                if r.read_bit() == 1 {
                    break;
                }
                n += 1;
            }
            data[n] += 1 << k;
            n += 1;
        }
    }
    maxbits - bits
}

/// Encodes a block of integers (zfp's `encode_block` / `rev_encode_block` for `Int`).
fn encode_int_block<I: ZInt>(
    w: &mut BitWriter,
    minbits: u32,
    maxbits: u32,
    maxprec: u32,
    iblock: &mut [I],
    dims: usize,
    reversible: bool,
) -> u32 {
    fwd_xform(iblock, dims, reversible);
    let mut ublock = [0u64; 256];
    let ublock = &mut ublock[..iblock.len()];
    for (u, &p) in ublock.iter_mut().zip(perm(dims)) {
        *u = iblock[p as usize].to_nb();
    }
    let mut bits = if reversible {
        // the planes needed: from the top down to the lowest set bit of any coefficient
        let or = ublock.iter().fold(0u64, |a, &b| a | b);
        let p = if or == 0 {
            0
        } else {
            I::BITS - or.trailing_zeros()
        };
        let prec = p.min(maxprec).max(1);
        w.write_bits(u64::from(prec - 1), I::PBITS);
        I::PBITS + encode_ints(w, maxbits.wrapping_sub(I::PBITS), prec, ublock, I::BITS)
    } else {
        encode_ints(w, maxbits, maxprec, ublock, I::BITS)
    };
    if bits < minbits {
        w.pad(minbits - bits);
        bits = minbits;
    }
    bits
}

/// Decodes a block of integers.
fn decode_int_block<I: ZInt>(
    r: &mut BitReader<'_>,
    minbits: u32,
    maxbits: u32,
    maxprec: u32,
    iblock: &mut [I],
    dims: usize,
    reversible: bool,
) -> u32 {
    let mut ublock = [0u64; 256];
    let ublock = &mut ublock[..iblock.len()];
    let mut bits = if reversible {
        let prec = r.read_bits(I::PBITS) as u32 + 1;
        I::PBITS + decode_ints(r, maxbits.wrapping_sub(I::PBITS), prec, ublock, I::BITS)
    } else {
        decode_ints(r, maxbits, maxprec, ublock, I::BITS)
    };
    if bits < minbits {
        r.skip(u64::from(minbits - bits));
        bits = minbits;
    }
    for (&u, &p) in ublock.iter().zip(perm(dims)) {
        iblock[p as usize] = I::from_nb(u);
    }
    inv_xform(iblock, dims, reversible);
    bits
}

/// Encodes one block of integer data.
pub(super) fn encode_ints_block<I: ZInt>(
    w: &mut BitWriter,
    p: &Params,
    block: &mut [I],
    dims: usize,
) {
    encode_int_block(
        w,
        p.minbits,
        p.maxbits,
        p.maxprec,
        block,
        dims,
        p.reversible(),
    );
}

/// Decodes one block of integer data.
pub(super) fn decode_ints_block<I: ZInt>(
    r: &mut BitReader<'_>,
    p: &Params,
    block: &mut [I],
    dims: usize,
) {
    decode_int_block(
        r,
        p.minbits,
        p.maxbits,
        p.maxprec,
        block,
        dims,
        p.reversible(),
    );
}

/// The bit planes to code for a block of common exponent `emax`.
fn precision(emax: i32, maxprec: u32, minexp: i32, dims: usize) -> u32 {
    let p = emax - minexp + 2 * dims as i32 + 2;
    maxprec.min(p.max(0) as u32)
}

fn exponent_block<F: ZFloat>(block: &[F]) -> i32 {
    let mut max = F::zero();
    for &v in block {
        let f = v.abs();
        if max < f {
            max = f;
        }
    }
    if max > F::zero() {
        max.exponent()
    } else {
        -F::EBIAS
    }
}

fn fwd_cast<F: ZFloat>(iblock: &mut [F::I], fblock: &[F], emax: i32) {
    let s = F::pow2(F::I::BITS as i32 - 2 - emax);
    for (i, &f) in iblock.iter_mut().zip(fblock) {
        *i = s.mul(f).to_int();
    }
}

fn inv_cast<F: ZFloat>(iblock: &[F::I], fblock: &mut [F], emax: i32) {
    let s = F::pow2(emax - (F::I::BITS as i32 - 2));
    for (f, &i) in fblock.iter_mut().zip(iblock) {
        *f = s.mul(F::from_int(i));
    }
}

/// Encodes one block of float data.
pub(super) fn encode_floats_block<F: ZFloat>(
    w: &mut BitWriter,
    p: &Params,
    fblock: &[F],
    dims: usize,
) {
    let mut iblock = [F::I::default(); 256];
    let iblock = &mut iblock[..fblock.len()];
    let emax = exponent_block(fblock);
    if p.reversible() {
        if emax != -F::EBIAS {
            fwd_cast(iblock, fblock, emax);
        }
        let mut back = [F::zero(); 256];
        let back = &mut back[..fblock.len()];
        inv_cast(iblock, back, emax);
        let exact = back.iter().zip(fblock).all(|(a, b)| a.same_bits(*b));
        let bits;
        if exact {
            let e = (emax + F::EBIAS) as u64;
            if e == 0 {
                w.write_bit(0);
                return;
            }
            w.write_bits(1, 2);
            w.write_bits(e, F::EBITS);
            bits = 2 + F::EBITS;
        } else {
            for (i, &f) in iblock.iter_mut().zip(fblock) {
                *i = f.to_bits_int().flip_sign_magnitude();
            }
            w.write_bits(3, 2);
            bits = 2;
        }
        encode_int_block(
            w,
            p.minbits - bits.min(p.minbits),
            p.maxbits.wrapping_sub(bits),
            p.maxprec,
            iblock,
            dims,
            true,
        );
        return;
    }
    let maxprec = precision(emax, p.maxprec, p.minexp, dims);
    let e = if maxprec > 0 {
        (emax + F::EBIAS) as u32
    } else {
        0
    };
    if e > 0 {
        let bits = 1 + F::EBITS;
        w.write_bits(2 * u64::from(e) + 1, bits);
        fwd_cast(iblock, fblock, emax);
        encode_int_block(
            w,
            p.minbits - bits.min(p.minbits),
            p.maxbits.wrapping_sub(bits),
            maxprec,
            iblock,
            dims,
            false,
        );
    } else {
        w.write_bit(0);
        if p.minbits > 1 {
            w.pad(p.minbits - 1);
        }
    }
}

/// Decodes one block of float data.
pub(super) fn decode_floats_block<F: ZFloat>(
    r: &mut BitReader<'_>,
    p: &Params,
    fblock: &mut [F],
    dims: usize,
) {
    let mut iblock = [F::I::default(); 256];
    let iblock = &mut iblock[..fblock.len()];
    if p.reversible() {
        if r.read_bit() == 0 {
            fblock.fill(F::zero());
            if p.minbits > 1 {
                r.skip(u64::from(p.minbits - 1));
            }
            return;
        }
        if r.read_bit() == 1 {
            let bits = 2;
            decode_int_block(
                r,
                p.minbits - bits.min(p.minbits),
                p.maxbits.wrapping_sub(bits),
                p.maxprec,
                iblock,
                dims,
                true,
            );
            for (f, &i) in fblock.iter_mut().zip(iblock.iter()) {
                *f = F::from_bits_int(i.flip_sign_magnitude());
            }
        } else {
            let bits = 2 + F::EBITS;
            let emax = r.read_bits(F::EBITS) as i32 - F::EBIAS;
            decode_int_block(
                r,
                p.minbits - bits.min(p.minbits),
                p.maxbits.wrapping_sub(bits),
                p.maxprec,
                iblock,
                dims,
                true,
            );
            inv_cast(iblock, fblock, emax);
        }
        return;
    }
    if r.read_bit() == 1 {
        let bits = 1 + F::EBITS;
        let emax = r.read_bits(F::EBITS) as i32 - F::EBIAS;
        let maxprec = precision(emax, p.maxprec, p.minexp, dims);
        decode_int_block(
            r,
            p.minbits - bits.min(p.minbits),
            p.maxbits.wrapping_sub(bits),
            maxprec,
            iblock,
            dims,
            false,
        );
        inv_cast(iblock, fblock, emax);
    } else {
        fblock.fill(F::zero());
        if p.minbits > 1 {
            r.skip(u64::from(p.minbits - 1));
        }
    }
}

/// Pads a partial line of `n` (0 to 4) values at `b`, stride `s`, as zfp does.
fn pad_line<T: Copy + Default>(q: &mut [T], b: usize, s: usize, n: usize) {
    if n == 0 {
        q[b] = T::default();
    }
    if n <= 1 {
        q[b + s] = q[b];
    }
    if n <= 2 {
        q[b + 2 * s] = q[b + s];
    }
    if n <= 3 {
        q[b + 3 * s] = q[b];
    }
}

/// Pads a block whose filled part is `n` (per axis, x first) along each axis in turn.
pub(super) fn pad_block<T: Copy + Default>(q: &mut [T], n: &[usize]) {
    let dims = n.len();
    for axis in 0..dims {
        if n[axis] >= 4 {
            continue;
        }
        for_lines(dims, axis, |b, s| {
            // only lines whose coordinates above `axis` lie in the filled part
            let filled = (axis + 1..dims).all(|a| (b >> (2 * a)) % 4 < n[a]);
            if filled {
                pad_line(q, b, s, n[axis]);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pow2_is_ldexp_of_one() {
        assert_eq!(f32::pow2(0), 1.0);
        assert_eq!(f32::pow2(-149), f32::from_bits(1));
        assert_eq!(f32::pow2(-150), 0.0);
        assert_eq!(f32::pow2(127), 2f32.powi(127));
        assert!(f32::pow2(128).is_infinite());
        assert_eq!(f64::pow2(-1074), f64::from_bits(1));
        assert_eq!(f64::pow2(1023), 2f64.powi(1023));
        assert_eq!(f64::pow2(-3), 0.125);
    }

    #[test]
    fn exponent_is_frexps() {
        assert_eq!(1.0f64.exponent(), 1);
        assert_eq!(0.75f64.exponent(), 0);
        assert_eq!(f64::MIN_POSITIVE.exponent(), -1021);
        assert_eq!(f64::from_bits(1).exponent(), -1022);
        assert_eq!(3.0f32.exponent(), 2);
        assert_eq!(f32::INFINITY.exponent(), 0);
    }

    #[test]
    fn casts_follow_c_on_x86() {
        assert_eq!(2.9f32.to_int(), 2);
        assert_eq!((-2.9f32).to_int(), -2);
        assert_eq!(f32::NAN.to_int(), i32::MIN);
        assert_eq!(3e9f32.to_int(), i32::MIN);
        assert_eq!(f64::INFINITY.to_int(), i64::MIN);
        assert_eq!((-1e18f64).to_int(), -1_000_000_000_000_000_000);
    }

    #[test]
    fn transforms_invert() {
        for dims in 1..=4 {
            let n = 1 << (2 * dims);
            let orig: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1000 - 500).collect();
            let mut b = orig.clone();
            fwd_xform(&mut b, dims, true);
            inv_xform(&mut b, dims, true);
            assert_eq!(b, orig);
            // the lossy lifting is exact up to the bits it drops
            let mut b: Vec<i64> = orig.iter().map(|v| v << 20).collect();
            fwd_xform(&mut b, dims, false);
            inv_xform(&mut b, dims, false);
            for (a, o) in b.iter().zip(&orig) {
                assert!((a - (o << 20)).abs() < 64, "{dims}: {a} vs {}", o << 20);
            }
        }
    }

    #[test]
    fn negabinary_round_trips() {
        for v in [0i32, 1, -1, i32::MAX, i32::MIN, 12345] {
            assert_eq!(i32::from_nb(v.to_nb()), v);
        }
        assert_eq!(1i32.to_nb(), 1);
        assert_eq!((-1i32).to_nb(), 3);
        for v in [0i64, -7, i64::MIN] {
            assert_eq!(i64::from_nb(v.to_nb()), v);
        }
    }
}
