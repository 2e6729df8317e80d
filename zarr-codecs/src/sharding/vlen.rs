//! Shards of variable-size elements (`string`, `variable_length_bytes`): each inner chunk
//! through the inner chain's vlen codec, the index as for any shard.

use zarr_grid::geometry::{linear_index, unravel_index, Region};

use super::ShardingCodec;
use crate::error::{CodecError, Result};
use crate::source::ByteRangeSource;
use crate::vlen::VlenChunk;

/// The elements of a whole shard or inner chunk, C order.
fn count(shape: &[u64]) -> Result<usize> {
    zarr_grid::geometry::num_elements(shape)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| CodecError::ChunkTooLarge {
            shape: shape.to_vec(),
            element_size: 4,
        })
}

fn try_vec<T>(n: usize, shape: &[u64]) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| CodecError::ChunkTooLarge {
            shape: shape.to_vec(),
            element_size: std::mem::size_of::<T>(),
        })?;
    Ok(v)
}

impl ShardingCodec {
    /// Calls `f(position in the shard, position in the inner chunk)` (C-order linear indices)
    /// for every element of inner chunk `lin`.
    fn for_each_inner_element(&self, lin: usize, mut f: impl FnMut(usize, usize)) {
        let rank = self.inner_shape.len();
        let grid = self.unravel(lin);
        let mut in_inner = vec![0u64; rank];
        let mut in_shard = vec![0u64; rank];
        let n = zarr_grid::geometry::num_elements(&self.inner_shape).unwrap_or(0);
        for e in 0..n {
            unravel_index(e, &self.inner_shape, &mut in_inner);
            for d in 0..rank {
                in_shard[d] = grid[d] * self.inner_shape[d] + in_inner[d];
            }
            f(
                linear_index(&in_shard, &self.repr.shape) as usize,
                e as usize,
            );
        }
    }

    /// Decodes a whole stored shard of variable-size elements: every element of the shard
    /// shape, those of missing inner chunks the fill value.
    pub(super) fn decode_shard_vlen(&self, shard: &[u8]) -> Result<VlenChunk> {
        let parts = self.inner_chunk_bytes(shard)?;
        let inner = parts
            .iter()
            .map(|p| p.map(|b| self.inner.decode_vlen(b)).transpose())
            .collect::<Result<Vec<_>>>()?;
        let n = count(&self.repr.shape)?;
        let fill = self.repr.fill_value.as_bytes();
        let mut items: Vec<&[u8]> = try_vec(n, &self.repr.shape)?;
        items.resize(n, fill);
        for (lin, chunk) in inner.iter().enumerate() {
            if let Some(chunk) = chunk {
                self.for_each_inner_element(lin, |s, e| {
                    // the inner chain checked the element count
                    if let Some(b) = chunk.get(e) {
                        items[s] = b;
                    }
                });
            }
        }
        Ok(VlenChunk::from_items(items))
    }

    /// The elements of `region` (of the shard; C order of the region) of the shard read
    /// through `source`: the index (one request), then, in one more, only the inner chunks
    /// the region meets; elements of missing inner chunks are the fill value. `None` when the
    /// shard is not stored.
    pub(super) fn decode_shard_vlen_region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
    ) -> Result<Option<VlenChunk>> {
        let Some((parts, spans)) = self.region_spans(source, region)? else {
            return Ok(None);
        };
        let Some(fetched) = Self::fetch_spans(source, &spans)? else {
            return Ok(None);
        };
        let inner = (0..parts.len())
            .map(|i| {
                fetched
                    .get(i)
                    .map(|b| {
                        self.inner
                            .decode_vlen(b)
                            .map_err(|e| CodecError::InnerChunk {
                                chunk: parts[i].chunk.iter().map(|&g| g as u64).collect(),
                                source: Box::new(e),
                            })
                    })
                    .transpose()
            })
            .collect::<Result<Vec<_>>>()?;
        let n = count(&region.shape)?;
        let fill = self.repr.fill_value.as_bytes();
        let mut items: Vec<&[u8]> = try_vec(n, &region.shape)?;
        items.resize(n, fill);
        for (part, chunk) in parts.iter().zip(&inner) {
            let Some(chunk) = chunk else {
                continue;
            };
            part.try_for_each_position(&self.inner_shape, &region.shape, |src, dst| {
                // the inner chain checked the element count
                if let (Some(b), Some(slot)) = (chunk.get(src), items.get_mut(dst)) {
                    *slot = b;
                }
                Ok::<(), CodecError>(())
            })?;
        }
        Ok(Some(VlenChunk::from_items(items)))
    }

    /// Encodes the elements of a shard (C order, every element of the shard shape): inner
    /// chunks that are all fill value are not stored, unless every one is (the caller asked
    /// for the shard to be stored, so it then holds them all).
    pub(super) fn encode_shard_vlen(&self, items: &[&[u8]]) -> Result<Vec<u8>> {
        let n = count(&self.repr.shape)?;
        if items.len() != n {
            return Err(CodecError::BufferLength {
                what: "the shard's elements",
                expected: n as u64,
                got: items.len() as u64,
            });
        }
        let fill = self.repr.fill_value.as_bytes();
        let per_inner = count(&self.inner_shape)?;
        let encode_all = |skip_fill: bool| -> Result<Vec<Option<Vec<u8>>>> {
            let mut inner: Vec<&[u8]> = try_vec(per_inner, &self.inner_shape)?;
            inner.resize(per_inner, fill);
            (0..self.n_chunks)
                .map(|lin| {
                    self.for_each_inner_element(lin, |s, e| inner[e] = items[s]);
                    if skip_fill && inner.iter().all(|&b| b == fill) {
                        Ok(None)
                    } else {
                        self.inner.encode_vlen(inner.iter().copied()).map(Some)
                    }
                })
                .collect()
        };
        let mut encoded = encode_all(true)?;
        if encoded.iter().all(Option::is_none) {
            encoded = encode_all(false)?;
        }
        let refs: Vec<Option<&[u8]>> = encoded.iter().map(Option::as_deref).collect();
        self.assemble(self.morton().iter().map(|&lin| refs[lin]))
    }
}

#[cfg(test)]
mod tests {
    use zarr_meta::{DataType, FillValue};

    use crate::vlen::{encode, VLEN_UTF8};
    use crate::{default_registry, ChunkRepr, CodecChain, CodecError};

    fn chain(fill: &str) -> CodecChain {
        let fill = FillValue::from_json(&serde_json::json!(fill), DataType::String).unwrap();
        let repr = ChunkRepr::new(vec![4, 4], DataType::String, fill);
        let json = r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],
            "codecs":[{"name":"vlen-utf8","configuration":{}}],
            "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],
            "index_location":"end"}}]"#;
        CodecChain::from_json(json, &repr, &default_registry()).unwrap()
    }

    fn items(v: &[String]) -> Vec<&[u8]> {
        v.iter().map(|s| s.as_bytes()).collect()
    }

    #[test]
    fn shards_of_strings_round_trip() {
        let c = chain("-");
        let mut v: Vec<String> = (0..16).map(|i| format!("é{i}")).collect();
        // the inner chunk (1, 0) (rows 2-3, columns 0-1) all fill: not stored
        for i in [8, 9, 12, 13] {
            v[i] = "-".into();
        }
        let shard = c.encode_vlen(items(&v)).unwrap();
        let back = c.decode_vlen(&shard).unwrap();
        assert_eq!(back.to_strings(VLEN_UTF8).unwrap(), v);
        // three inner chunks stored, each the vlen format of its 4 elements, C order inside
        let first = encode(
            ["é0", "é1", "é4", "é5"].iter().map(|s| s.as_bytes()),
            VLEN_UTF8,
        )
        .unwrap();
        assert_eq!(&shard[..first.len()], &first[..]);
        // (the third, "é10" "é11" "é14" "é15", is 4 bytes longer), then the index and its crc32c
        assert_eq!(shard.len(), 3 * first.len() + 4 + 4 * 16 + 4);
        // all fill: every inner chunk is stored (the caller asked for the shard)
        let fill: Vec<String> = vec!["-".into(); 16];
        let shard = c.encode_vlen(items(&fill)).unwrap();
        assert_eq!(
            c.decode_vlen(&shard)
                .unwrap()
                .to_strings(VLEN_UTF8)
                .unwrap(),
            fill
        );
        // the fixed-size paths refuse
        assert!(matches!(
            c.decode(&shard).unwrap_err(),
            CodecError::NotApplicable { .. }
        ));
        assert!(matches!(
            c.encode(&[]).unwrap_err(),
            CodecError::NotApplicable { .. }
        ));
        let err = c.encode_vlen(items(&fill[..3])).unwrap_err();
        assert!(matches!(err, CodecError::BufferLength { .. }), "{err}");
    }

    #[test]
    fn regions_of_shards_and_chunks_agree_with_the_whole() {
        use zarr_grid::geometry::Region;
        let sharded = chain("-");
        let fill = FillValue::from_json(&serde_json::json!("-"), DataType::String).unwrap();
        let repr = ChunkRepr::new(vec![4, 4], DataType::String, fill);
        let plain = CodecChain::from_json(
            r#"[{"name":"vlen-utf8","configuration":{}},{"name":"gzip","configuration":{"level":1}}]"#,
            &repr,
            &default_registry(),
        )
        .unwrap();
        let mut v: Vec<String> = (0..16).map(|i| format!("é{i}")).collect();
        for i in [8, 9, 12, 13] {
            v[i] = "-".into();
        }
        for c in [&sharded, &plain] {
            let stored = c.encode_vlen(items(&v)).unwrap();
            for (start, shape) in [
                ([0, 0], [4, 4]),
                ([1, 1], [2, 3]),
                ([2, 0], [2, 2]),
                ([3, 3], [1, 1]),
            ] {
                let region = Region::new(start.to_vec(), shape.to_vec()).unwrap();
                let got = c.decode_vlen_region(&stored, &region).unwrap().unwrap();
                let want: Vec<String> = (0..shape[0])
                    .flat_map(|i| (0..shape[1]).map(move |j| (start[0] + i) * 4 + start[1] + j))
                    .map(|k| v[k as usize].clone())
                    .collect();
                assert_eq!(got.to_strings(VLEN_UTF8).unwrap(), want, "{region:?}");
            }
            assert!(c
                .decode_vlen_region(&None::<&[u8]>, &Region::whole(&[4, 4]))
                .unwrap()
                .is_none());
            let outside = Region::new(vec![3, 0], vec![2, 1]).unwrap();
            assert!(matches!(
                c.decode_vlen_region(&stored, &outside),
                Err(CodecError::RegionOutOfBounds { .. })
            ));
            // truncated: an error, never a panic
            for n in 0..stored.len() {
                let _ = c.decode_vlen_region(&stored[..n].to_vec(), &Region::whole(&[2, 2]));
            }
        }
    }

    #[test]
    fn corrupt_shards_are_errors() {
        let c = chain("");
        let v: Vec<String> = (0..16).map(|i| "x".repeat(i)).collect();
        let shard = c.encode_vlen(items(&v)).unwrap();
        for n in 0..shard.len() {
            assert!(c.decode_vlen(&shard[..n]).is_err(), "{n}");
        }
        for i in 0..shard.len() {
            for b in [0u8, 0x80, 0xff] {
                let mut bad = shard.clone();
                bad[i] ^= b | 1;
                // the index is checksummed, the inner chunks are checked: never a panic
                let _ = c.decode_vlen(&bad);
            }
        }
    }

    #[test]
    fn inner_fixed_size_codecs_are_refused() {
        let repr = ChunkRepr::new(vec![4], DataType::Bytes, FillValue::zero(DataType::Bytes));
        let json = r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2],
            "codecs":[{"name":"bytes"}],
            "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}}]"#;
        let err = CodecChain::from_json(json, &repr, &default_registry()).unwrap_err();
        assert!(
            zarr_testkit::report(&err).contains("codec \"bytes\" takes fixed-size elements"),
            "{}",
            zarr_testkit::report(&err)
        );
    }
}
