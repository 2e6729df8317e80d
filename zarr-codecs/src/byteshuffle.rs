//! The byte shuffle undone: blosc's `shuffle` filter and `numcodecs.shuffle` store byte `b` of
//! element `i` of `n` elements at `b * n + i` (the byte planes, one after the other), and any
//! bytes past the last whole element as they are.

/// Elements taken from each plane at a time by the unrolled loop.
const TILE: usize = 32;

/// Writes the first `dst.len()` bytes (at most `src.len()`) of the unshuffled `src`, whose
/// elements are `k` bytes (`k >= 1`): `dst[i * k + b] = src[b * n + i]` with
/// `n = src.len() / k`, and the `src.len() % k` bytes after the `n` elements copied as they are
/// (c-blosc's `unshuffle`, which a prefix of a block stops early).
pub fn unshuffle(src: &[u8], k: usize, dst: &mut [u8]) {
    if k <= 1 {
        dst.copy_from_slice(&src[..dst.len()]);
        return;
    }
    let n = src.len() / k;
    // whole elements of `dst`
    let m = (dst.len() / k).min(n);
    match k {
        2 => interleave::<2>(src, n, &mut dst[..m * 2]),
        4 => interleave::<4>(src, n, &mut dst[..m * 4]),
        8 => interleave::<8>(src, n, &mut dst[..m * 8]),
        _ => {
            for (i, element) in dst[..m * k].chunks_exact_mut(k).enumerate() {
                for (b, byte) in element.iter_mut().enumerate() {
                    *byte = src[b * n + i];
                }
            }
        }
    }
    // a last partial element (a prefix that ends inside one), then the bytes after the
    // elements, as they are
    for (p, byte) in dst.iter_mut().enumerate().skip(m * k) {
        let (i, b) = (p / k, p % k);
        *byte = if i < n { src[b * n + i] } else { src[p] };
    }
}

/// `dst[i * K + b] = src[b * n + i]` for the `dst.len() / K` elements of `dst`: tiles of
/// [`TILE`] elements, whose constant loop bounds let the compiler turn the transposition into
/// vector shuffles, then the rest one by one.
fn interleave<const K: usize>(src: &[u8], n: usize, dst: &mut [u8]) {
    let m = dst.len() / K;
    let planes: [&[u8]; K] = std::array::from_fn(|b| &src[b * n..b * n + m]);
    let mut tiles = dst.chunks_exact_mut(TILE * K);
    for (t, out) in tiles.by_ref().enumerate() {
        let tile: [&[u8; TILE]; K] = std::array::from_fn(|b| {
            planes[b][t * TILE..(t + 1) * TILE]
                .try_into()
                .expect("a tile is TILE bytes")
        });
        for (i, element) in out.chunks_exact_mut(K).enumerate() {
            for b in 0..K {
                element[b] = tile[b][i];
            }
        }
    }
    let first = m / TILE * TILE;
    for (i, element) in tiles.into_remainder().chunks_exact_mut(K).enumerate() {
        for b in 0..K {
            element[b] = planes[b][first + i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition, one byte at a time.
    fn reference(src: &[u8], k: usize) -> Vec<u8> {
        let n = src.len() / k;
        (0..src.len())
            .map(|p| {
                if p < n * k {
                    src[(p % k) * n + p / k]
                } else {
                    src[p]
                }
            })
            .collect()
    }

    proptest! {
        #[test]
        fn every_prefix_is_the_definitions(
            src in prop::collection::vec(any::<u8>(), 0..1200),
            k in prop::sample::select(vec![1usize, 2, 3, 4, 5, 8, 16]),
            cut in 0.0f64..=1.0,
        ) {
            let want = reference(&src, k);
            let len = (src.len() as f64 * cut) as usize;
            let mut dst = vec![0xAAu8; len];
            unshuffle(&src, k, &mut dst);
            prop_assert_eq!(&dst[..], &want[..len]);
        }
    }
}
