//! The `transpose` codec (array -> array): permutes the axes of the chunk.
//!
//! Name: `transpose`. Configuration: `order`, a permutation of `0..rank`; encoded axis `k` is
//! decoded axis `order[k]` (numpy's `np.transpose(chunk, order)`), so the encoded shape is
//! `shape[order[0]], shape[order[1]], ...`. The legacy forms `"C"` (identity) and `"F"`
//! (reversed axes) that some writers used are read too and written back as the permutation.
//! See the [Zarr v3 spec](https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/index.html).
//!
//! The permutation runs as a cache-blocked copy: axes that stay together are merged, the
//! contiguous run is copied whole, and the two axes that are contiguous in the source and in the
//! destination are walked in tiles.
//!
//! ```
//! use zarr_codecs::{default_registry, ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![2, 3], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes"}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let encoded = chain.encode(&[0, 1, 2, 3, 4, 5], EncodeOptions::WRITE_EMPTY)?;
//! assert_eq!(encoded, Some(vec![0, 3, 1, 4, 2, 5]));
//! assert_eq!(chain.decode(&[0, 3, 1, 4, 2, 5])?.as_bytes(), &[0, 1, 2, 3, 4, 5]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use crate::codec::{ArrayToArrayCodec, Codec};
use crate::error::{CodecError, Result};
use crate::registry::CodecRegistry;
use crate::repr::ChunkRepr;

/// The codec's name.
pub const NAME: &str = "transpose";

/// The `order` of a transpose: a permutation, or the legacy `"C"` / `"F"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TransposeOrder {
    /// A permutation of `0..rank`.
    Permutation(Vec<u64>),
    /// `"C"` (identity) or `"F"` (reversed axes).
    Named(String),
}

/// The configuration of `transpose`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransposeConfig {
    /// The permutation.
    pub order: TransposeOrder,
}

crate::config::codec_def!(TransposeConfig => NAME);

/// The `transpose` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct TransposeCodec {
    order: Vec<usize>,
    inverse: Vec<usize>,
    decoded: ChunkRepr,
    encoded: ChunkRepr,
    len: usize,
}

impl TransposeCodec {
    /// The codec for `repr` with `order` (encoded axis `k` is decoded axis `order[k]`).
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] if `order` is not a permutation of the
    /// chunk's axes.
    pub fn new(repr: ChunkRepr, order: &[u64]) -> Result<Self> {
        let len = repr.validate()?;
        let rank = repr.rank();
        let invalid = |reason: String| -> CodecError {
            ExtensionDef::new(NAME)
                .invalid_configuration(ExtensionPoint::Codec, reason)
                .into()
        };
        if order.len() != rank {
            return Err(invalid(format!(
                "order {order:?} has {} entries but the chunk has {rank} dimensions",
                order.len()
            )));
        }
        let mut inverse = vec![usize::MAX; rank];
        for (k, &axis) in order.iter().enumerate() {
            let a = usize::try_from(axis).unwrap_or(usize::MAX);
            if a >= rank || inverse[a] != usize::MAX {
                return Err(invalid(format!(
                    "order {order:?} is not a permutation of 0..{rank}"
                )));
            }
            inverse[a] = k;
        }
        let order: Vec<usize> = order.iter().map(|&a| a as usize).collect();
        let encoded = repr.with_shape(order.iter().map(|&a| repr.shape[a]).collect());
        Ok(TransposeCodec {
            order,
            inverse,
            decoded: repr,
            encoded,
            len,
        })
    }

    /// The permutation.
    pub fn order(&self) -> &[usize] {
        &self.order
    }

    fn check(&self, input: &[u8], out: &[u8]) -> Result<()> {
        for (what, got) in [("the input", input.len()), ("the output buffer", out.len())] {
            if got != self.len {
                return Err(CodecError::BufferLength {
                    what,
                    expected: self.len as u64,
                    got: got as u64,
                });
            }
        }
        Ok(())
    }
}

/// Builds `transpose` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: TransposeConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    let rank = repr.rank() as u64;
    let order: Vec<u64> = match config.order {
        TransposeOrder::Permutation(p) => p,
        TransposeOrder::Named(n) if n == "C" => (0..rank).collect(),
        TransposeOrder::Named(n) if n == "F" => (0..rank).rev().collect(),
        TransposeOrder::Named(n) => {
            return Err(def
                .invalid_configuration(
                    ExtensionPoint::Codec,
                    format!("order {n:?} is neither a permutation nor \"C\" or \"F\""),
                )
                .into())
        }
    };
    let codec = TransposeCodec::new(repr.clone(), &order)?;
    Ok(Codec::ArrayToArray(Box::new(codec)))
}

impl ArrayToArrayCodec for TransposeCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        let config = TransposeConfig {
            order: TransposeOrder::Permutation(self.order.iter().map(|&a| a as u64).collect()),
        };
        config.into()
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.decoded
    }

    fn encoded_repr(&self) -> &ChunkRepr {
        &self.encoded
    }

    fn encode(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        self.check(input, out)?;
        permute(
            input,
            &self.decoded.shape,
            &self.order,
            self.decoded.element_size(),
            out,
        );
        Ok(())
    }

    fn decode(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        self.check(input, out)?;
        permute(
            input,
            &self.encoded.shape,
            &self.inverse,
            self.decoded.element_size(),
            out,
        );
        Ok(())
    }

    /// The decoded elements' indices (native-endian `u64`s) permuted as `encode` permutes
    /// elements.
    fn encoded_order(&self) -> Option<Result<Vec<usize>>> {
        const INDEX: usize = std::mem::size_of::<u64>();
        let too_large = || CodecError::ChunkTooLarge {
            shape: self.decoded.shape.clone(),
            element_size: INDEX,
        };
        let order = (|| {
            let n = zarr_grid::geometry::num_elements(&self.decoded.shape)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(too_large)?;
            let bytes = n.checked_mul(INDEX).ok_or_else(too_large)?;
            let mut indices = Vec::new();
            indices.try_reserve_exact(bytes).map_err(|_| too_large())?;
            indices.extend((0..n as u64).flat_map(u64::to_ne_bytes));
            let mut permuted = Vec::new();
            permuted.try_reserve_exact(bytes).map_err(|_| too_large())?;
            permuted.resize(bytes, 0);
            permute(
                &indices,
                &self.decoded.shape,
                &self.order,
                INDEX,
                &mut permuted,
            );
            drop(indices);
            let mut order = Vec::new();
            order.try_reserve_exact(n).map_err(|_| too_large())?;
            order.extend(permuted.chunks_exact(INDEX).map(|b| {
                let mut i = [0; INDEX];
                i.copy_from_slice(b);
                // an index below n, which fits in usize
                u64::from_ne_bytes(i) as usize
            }));
            Ok(order)
        })();
        Some(order)
    }
}

/// Writes the C-order array `src` of shape `src_shape` with its axes permuted into `dst`:
/// destination axis `k` is source axis `perm[k]`. Both buffers hold
/// `product(src_shape) * elem` bytes.
pub(crate) fn permute(src: &[u8], src_shape: &[u64], perm: &[usize], elem: usize, dst: &mut [u8]) {
    if src.is_empty() {
        return;
    }
    let rank = src_shape.len();
    // source strides in elements
    let mut src_stride = vec![1usize; rank];
    for a in (0..rank.saturating_sub(1)).rev() {
        src_stride[a] = src_stride[a + 1] * src_shape[a + 1] as usize;
    }
    // destination axes: (extent, source stride), dropping axes of extent 1
    let mut axes: Vec<(usize, usize)> = perm
        .iter()
        .map(|&a| (src_shape[a] as usize, src_stride[a]))
        .filter(|&(n, _)| n != 1)
        .collect();
    // merge neighbouring axes that are also neighbours, in order, in the source
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(axes.len());
    for (n, s) in axes.drain(..) {
        match merged.last_mut() {
            Some(last) if last.1 == s * n => *last = (last.0 * n, s),
            _ => merged.push((n, s)),
        }
    }
    let mut elem = elem;
    // a last axis contiguous in the source is one run: make it the element
    if let Some(&(n, 1)) = merged.last() {
        elem *= n;
        merged.pop();
        for axis in &mut merged {
            axis.1 /= n;
        }
    }
    match elem {
        1 => permute_kernel::<1>(src, dst, &merged, elem),
        2 => permute_kernel::<2>(src, dst, &merged, elem),
        4 => permute_kernel::<4>(src, dst, &merged, elem),
        8 => permute_kernel::<8>(src, dst, &merged, elem),
        16 => permute_kernel::<16>(src, dst, &merged, elem),
        _ => permute_kernel::<0>(src, dst, &merged, elem),
    }
}

/// Copies one element of `N` bytes (`N == 0`: of `elem` bytes).
#[inline(always)]
fn copy_elem<const N: usize>(src: &[u8], s: usize, dst: &mut [u8], d: usize, elem: usize) {
    if N == 0 {
        dst[d * elem..(d + 1) * elem].copy_from_slice(&src[s * elem..(s + 1) * elem]);
    } else {
        let mut a = [0u8; N];
        a.copy_from_slice(&src[s * N..(s + 1) * N]);
        dst[d * N..(d + 1) * N].copy_from_slice(&a);
    }
}

/// The permutation over `axes` (destination order: extent and source stride, in elements of
/// `elem` bytes; no axis is contiguous in both).
fn permute_kernel<const N: usize>(
    src: &[u8],
    dst: &mut [u8],
    axes: &[(usize, usize)],
    elem: usize,
) {
    let rank = axes.len();
    if rank == 0 {
        dst.copy_from_slice(src);
        return;
    }
    let mut dst_stride = vec![1usize; rank];
    for k in (0..rank - 1).rev() {
        dst_stride[k] = dst_stride[k + 1] * axes[k + 1].0;
    }
    let q = rank - 1;
    // the destination axis that is contiguous in the source, if not the last one
    let p = axes[..q].iter().position(|&(_, s)| s == 1);
    let outer: Vec<usize> = (0..q).filter(|&k| Some(k) != p).collect();
    let outer_count: usize = outer.iter().map(|&k| axes[k].0).product();
    let (nq, sq) = axes[q];
    let tile = if elem <= 2 { 32 } else { 16 };
    let mut idx = vec![0usize; outer.len()];
    for _ in 0..outer_count {
        let mut s_base = 0;
        let mut d_base = 0;
        for (i, &k) in outer.iter().enumerate() {
            s_base += idx[i] * axes[k].1;
            d_base += idx[i] * dst_stride[k];
        }
        match p {
            None => {
                for j in 0..nq {
                    copy_elem::<N>(src, s_base + j * sq, dst, d_base + j, elem);
                }
            }
            Some(p) => {
                let (np, _) = axes[p];
                let dp = dst_stride[p];
                for ib in (0..np).step_by(tile) {
                    let ie = (ib + tile).min(np);
                    for jb in (0..nq).step_by(tile) {
                        let je = (jb + tile).min(nq);
                        for i in ib..ie {
                            let d_row = d_base + i * dp;
                            let s_row = s_base + i;
                            for j in jb..je {
                                copy_elem::<N>(src, s_row + j * sq, dst, d_row + j, elem);
                            }
                        }
                    }
                }
            }
        }
        // advance the odometer over the outer axes
        for i in (0..outer.len()).rev() {
            idx[i] += 1;
            if idx[i] < axes[outer[i]].0 {
                break;
            }
            idx[i] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::default_registry;
    use proptest::prelude::*;
    use zarr_grid::geometry::indices;
    use zarr_meta::{DataType, FillValue};

    fn naive(src: &[u8], shape: &[u64], perm: &[usize], elem: usize) -> Vec<u8> {
        let dshape: Vec<u64> = perm.iter().map(|&a| shape[a]).collect();
        let mut out = Vec::with_capacity(src.len());
        for di in indices(&dshape) {
            let mut si = vec![0u64; shape.len()];
            for (k, &a) in perm.iter().enumerate() {
                si[a] = di[k];
            }
            let mut lin = 0u64;
            for (a, &n) in shape.iter().enumerate() {
                lin = lin * n + si[a];
            }
            let lin = lin as usize * elem;
            out.extend_from_slice(&src[lin..lin + elem]);
        }
        out
    }

    fn def(json: &str) -> ExtensionDef {
        serde_json::from_str(json).unwrap()
    }

    fn repr(shape: Vec<u64>) -> ChunkRepr {
        ChunkRepr::new(shape, DataType::Int32, FillValue::zero(DataType::Int32))
    }

    #[test]
    fn rejects_non_permutations() {
        let reg = default_registry();
        for order in ["[0, 0]", "[0]", "[0, 2]", "[1, 0, 2]", "[-1, 0]", "\"X\""] {
            let d = def(&format!(
                r#"{{"name": "transpose", "configuration": {{"order": {order}}}}}"#
            ));
            let err = factory(&d, &repr(vec![2, 3]), &reg).unwrap_err();
            assert!(
                err.to_string()
                    .contains("invalid configuration for codec \"transpose\""),
                "{err}"
            );
        }
        let d = def(r#"{"name": "transpose", "configuration": {"order": [1, 0], "extra": 1}}"#);
        assert!(factory(&d, &repr(vec![2, 3]), &reg).is_err());
        let d = def(r#"{"name": "transpose"}"#);
        assert!(factory(&d, &repr(vec![2, 3]), &reg).is_err());
    }

    #[test]
    fn config_round_trips_and_legacy_orders_read() {
        let reg = default_registry();
        let json = r#"{"name":"transpose","configuration":{"order":[2,0,1]}}"#;
        let c = factory(&def(json), &repr(vec![2, 3, 4]), &reg).unwrap();
        assert_eq!(serde_json::to_string(&c.to_def()).unwrap(), json);
        let f = factory(
            &def(r#"{"name":"transpose","configuration":{"order":"F"}}"#),
            &repr(vec![2, 3, 4]),
            &reg,
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&f.to_def()).unwrap(),
            r#"{"name":"transpose","configuration":{"order":[2,1,0]}}"#
        );
    }

    proptest! {
        #[test]
        fn permute_matches_naive(
            shape in prop::collection::vec(1u64..6, 0..5),
            elem in prop::sample::select(vec![1usize, 2, 3, 4, 8, 16]),
            seed in any::<u64>(),
        ) {
            let rank = shape.len();
            // a permutation from the seed
            let perm = zarr_testkit::Rng::new(seed).permutation(rank);
            let n = shape.iter().product::<u64>() as usize * elem;
            let src: Vec<u8> = (0..n).map(|i| (i * 7 + (seed as usize % 13)) as u8).collect();
            let mut dst = vec![0u8; n];
            permute(&src, &shape, &perm, elem, &mut dst);
            prop_assert_eq!(&dst, &naive(&src, &shape, &perm, elem));

            // the codec round trips
            let t = match elem { 1 => DataType::UInt8, 2 => DataType::UInt16, 4 => DataType::Float32,
                8 => DataType::Int64, 16 => DataType::Complex128, _ => DataType::from_name("r24").unwrap() };
            let r = ChunkRepr::new(shape.clone(), t, FillValue::zero(t));
            let order: Vec<u64> = perm.iter().map(|&a| a as u64).collect();
            let codec = TransposeCodec::new(r, &order).unwrap();
            let mut enc = vec![0u8; n];
            codec.encode(&src, &mut enc).unwrap();
            let mut dec = vec![0u8; n];
            codec.decode(&enc, &mut dec).unwrap();
            prop_assert_eq!(dec, src);
        }
    }

    #[test]
    fn large_tiled_transpose() {
        let shape = [37u64, 70];
        let src: Vec<u8> = (0..37 * 70 * 4).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        permute(&src, &shape, &[1, 0], 4, &mut dst);
        assert_eq!(dst, naive(&src, &shape, &[1, 0], 4));
    }
}
