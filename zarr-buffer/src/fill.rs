//! [`fill_pattern`]: a buffer of one element's bytes repeated.

/// Fills `out` with `pattern` repeated: a chunk (or block) of fill values. A byte pattern of
/// one repeated byte (zero above all) is a plain `fill`; others are doubled in place, so the
/// cost is a few `memcpy`s, not one per element. Only whole copies of the pattern are written:
/// `out.len()` is meant to be a multiple of `pattern.len()`, and trailing bytes of a shorter
/// remainder are left as they are. An empty pattern writes nothing.
///
/// ```
/// use zarr_buffer::fill_pattern;
/// let mut out = [0u8; 6];
/// fill_pattern(&mut out, &[1, 2]);
/// assert_eq!(out, [1, 2, 1, 2, 1, 2]);
/// ```
pub fn fill_pattern(out: &mut [u8], pattern: &[u8]) {
    let n = pattern.len();
    if n == 0 {
        return;
    }
    if pattern.iter().all(|&b| b == pattern[0]) {
        out.fill(pattern[0]);
        return;
    }
    let whole = out.len() / n * n;
    let out = &mut out[..whole];
    if out.is_empty() {
        return;
    }
    out[..n].copy_from_slice(pattern);
    let mut filled = n;
    while filled < out.len() {
        let m = filled.min(out.len() - filled);
        out.copy_within(..m, filled);
        filled += m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_gets_whole_patterns() {
        for len in 0..40 {
            let mut out = vec![9u8; len];
            fill_pattern(&mut out, &[1, 2, 3]);
            for (i, &b) in out.iter().enumerate() {
                let want = if i < len / 3 * 3 { [1, 2, 3][i % 3] } else { 9 };
                assert_eq!(b, want, "len {len}, byte {i}");
            }
        }
        let mut zeros = vec![5u8; 7];
        fill_pattern(&mut zeros, &[0, 0]);
        assert_eq!(zeros, [0; 7]);
        fill_pattern(&mut zeros, &[]);
        assert_eq!(zeros, [0; 7]);
    }
}
