//! The Morton (Z) order in which zarr-python writes the inner chunks of a shard.
//!
//! zarr-python (`zarr.core.indexing._morton_order`) orders the inner chunk positions by their
//! Morton code: bit `b` of every axis, for `b` from the least significant, axis 0 first, where
//! axis `d` contributes only its `bit_length(n_d - 1)` bits (an axis of extent 1 none). Writing
//! in the same order makes our shards byte-identical to zarr-python's.

/// The number of bits needed for positions `0..n` (`(n - 1).bit_length()` in Python).
fn bits_for(n: u64) -> u32 {
    u64::BITS - n.saturating_sub(1).leading_zeros()
}

/// The Morton code of `idx` in a grid whose axes need `bits` bits.
fn morton_code(idx: &[u64], bits: &[u32]) -> u128 {
    let max = bits.iter().copied().max().unwrap_or(0);
    let mut z = 0u128;
    let mut out_bit = 0u32;
    for b in 0..max {
        for (d, &nb) in bits.iter().enumerate() {
            if b < nb {
                if out_bit < 128 {
                    z |= u128::from((idx[d] >> b) & 1) << out_bit;
                }
                out_bit += 1;
            }
        }
    }
    z
}

/// The C-order linear indices of the positions of a grid of `shape`, in Morton order.
pub(crate) fn morton_order(shape: &[u64]) -> Vec<usize> {
    let bits: Vec<u32> = shape.iter().map(|&n| bits_for(n)).collect();
    let total: usize = shape.iter().map(|&n| n as usize).product();
    if shape.contains(&0) {
        return Vec::new();
    }
    let mut keyed: Vec<(u128, usize)> = Vec::with_capacity(total);
    let mut idx = vec![0u64; shape.len()];
    for lin in 0..total {
        keyed.push((morton_code(&idx, &bits), lin));
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, lin)| lin).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_zarr_python() {
        // zarr.core.indexing._morton_order((2, 2)) and ((3, 5))
        assert_eq!(morton_order(&[2, 2]), vec![0, 2, 1, 3]);
        // (3, 5): bits (2, 3); positions as (row, col) in zarr-python's order
        let want: [(usize, usize); 15] = [
            (0, 0),
            (1, 0),
            (0, 1),
            (1, 1),
            (2, 0),
            (2, 1),
            (0, 2),
            (1, 2),
            (0, 3),
            (1, 3),
            (2, 2),
            (2, 3),
            (0, 4),
            (1, 4),
            (2, 4),
        ];
        let got = morton_order(&[3, 5]);
        let want: Vec<usize> = want.iter().map(|&(r, c)| r * 5 + c).collect();
        assert_eq!(got, want);
        let want3: [[usize; 3]; 18] = [
            [0, 0, 0],
            [1, 0, 0],
            [0, 1, 0],
            [1, 1, 0],
            [0, 0, 1],
            [1, 0, 1],
            [0, 1, 1],
            [1, 1, 1],
            [2, 0, 0],
            [2, 1, 0],
            [2, 0, 1],
            [2, 1, 1],
            [0, 0, 2],
            [1, 0, 2],
            [0, 1, 2],
            [1, 1, 2],
            [2, 0, 2],
            [2, 1, 2],
        ];
        let want3: Vec<usize> = want3.iter().map(|i| (i[0] * 2 + i[1]) * 3 + i[2]).collect();
        assert_eq!(morton_order(&[3, 2, 3]), want3);
        assert_eq!(morton_order(&[1, 4]), vec![0, 1, 2, 3]);
        assert_eq!(morton_order(&[]), vec![0]);
        assert!(morton_order(&[0, 3]).is_empty());
    }
}
