//! Shards of variable-size elements (`string`, `variable_length_bytes`): each inner chunk
//! through the inner chain's vlen codec, the index as for any shard.

use zarr_grid::geometry::{linear_index, regular_chunks_in_region, unravel_index, Region};
use zarr_grid::ChunkPart;

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
        let parts: Vec<ChunkPart> = regular_chunks_in_region(&self.inner_shape, region).collect();
        let inner = self.with_index(source, |words| {
            let spans = self.spans_of(words, parts.iter().map(|p| self.ravel(&p.chunk)))?;
            let Some(fetched) = Self::fetch_spans(source, &spans)? else {
                return Ok(None);
            };
            (0..parts.len())
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
                .collect::<Result<Vec<_>>>()
                .map(Some)
        })?;
        let Some(inner) = inner else {
            return Ok(None);
        };
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
            c.encode_slice(&[]).unwrap_err(),
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

    /// A shard chain of `string` elements of `shape` from its codecs' JSON, fill value "-".
    fn chain_of(json: &str, shape: &[u64]) -> CodecChain {
        let fill = FillValue::from_json(&serde_json::json!("-"), DataType::String).unwrap();
        let repr = ChunkRepr::new(shape.to_vec(), DataType::String, fill);
        CodecChain::from_json(json, &repr, &default_registry()).unwrap()
    }

    /// The elements of a shard as strings (`None`: not stored, all fill value).
    fn values(c: &CodecChain, shard: Option<&[u8]>, n: usize) -> Vec<String> {
        match shard {
            Some(b) => c.decode_vlen(b).unwrap().to_strings(VLEN_UTF8).unwrap(),
            None => vec!["-".into(); n],
        }
    }

    /// Differential test of sharding's partial encoder on shards of strings: 320 seeded
    /// random updates of parts of shards (index at either end, inner chunks compressed or
    /// not, a bytes -> bytes codec after the shard, a shard of shards), each checked
    /// against a model of the values and against decoding the whole shard, updating it
    /// and encoding it again; the in-place update (pieces of the stored value) gives the
    /// same shard.
    #[test]
    fn partial_updates_of_string_shards_agree_with_a_model() {
        use crate::{ChunkUpdate, VLEN_DATA_INDEX, VLEN_FILL_INDEX};
        use zarr_buffer::Piece;
        use zarr_grid::geometry::Region;
        let vlen = r#"{"name":"vlen-utf8","configuration":{}}"#;
        let gzip = r#"{"name":"gzip","configuration":{"level":1}}"#;
        let index = r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]"#;
        let shard = |inner: &str, codecs: &str, at: &str| {
            format!(
                r#"{{"name":"sharding_indexed","configuration":{{"chunk_shape":{inner},
                "codecs":[{codecs}],"index_codecs":{index},"index_location":"{at}"}}}}"#
            )
        };
        let configs: Vec<(String, Vec<u64>)> = vec![
            (format!("[{}]", shard("[2,3]", vlen, "end")), vec![6, 6]),
            (
                format!("[{}]", shard("[3,2]", &format!("{vlen},{gzip}"), "start")),
                vec![6, 8],
            ),
            (
                format!(r#"[{},{{"name":"crc32c"}}]"#, shard("[4,4]", vlen, "end")),
                vec![8, 4],
            ),
            (
                format!(
                    "[{}]",
                    shard("[4,4]", &shard("[2,2]", vlen, "end"), "start")
                ),
                vec![8, 8],
            ),
        ];
        let mut rng = zarr_testkit::Rng::new(3703);
        let words = ["", "a", "é", "héllo", "中文", "-", "xyz", "\u{1F600}"];
        let mut updates = 0;
        for (json, shape) in &configs {
            let c = chain_of(json, shape);
            let encoder = c.partial_encoder().expect("a shard has a partial encoder");
            let n = (shape[0] * shape[1]) as usize;
            let mut stored: Option<Vec<u8>> = None;
            let mut model: Vec<String> = vec!["-".into(); n];
            for _ in 0..80 {
                let start = [rng.below(shape[0]), rng.below(shape[1])];
                let size = [
                    rng.range(1..shape[0] - start[0] + 1),
                    rng.range(1..shape[1] - start[1] + 1),
                ];
                // the update's block lies inside a larger data buffer
                let pad = [rng.below(3), rng.below(3)];
                let data_shape = [size[0] + pad[0], size[1] + pad[1]];
                let from = Region::new(
                    vec![rng.below(pad[0] + 1), rng.below(pad[1] + 1)],
                    size.to_vec(),
                )
                .unwrap();
                let items: Vec<String> = (0..data_shape[0] * data_shape[1])
                    .map(|_| {
                        words[rng.below(words.len() as u64) as usize]
                            .repeat(rng.range(1..3) as usize)
                    })
                    .collect();
                let item_refs: Vec<&[u8]> = items.iter().map(|s| s.as_bytes()).collect();
                let mut data_values = Vec::new();
                let mut indices = Vec::new();
                for (k, item) in items.iter().enumerate() {
                    let i = if rng.chance(0.3) {
                        data_values.push("-".to_string());
                        VLEN_FILL_INDEX
                    } else {
                        data_values.push(item.clone());
                        VLEN_DATA_INDEX | k as u64
                    };
                    indices.extend_from_slice(&i.to_ne_bytes());
                }
                let keep_empty = rng.chance(0.3);
                let region = Region::new(start.to_vec(), size.to_vec()).unwrap();
                let update = ChunkUpdate::new_vlen(
                    &indices,
                    &data_shape,
                    &item_refs,
                    &from,
                    region.clone(),
                    keep_empty,
                )
                .unwrap();
                // decode, update and encode the whole shard
                let mut whole = values(&c, stored.as_deref(), n);
                for i in 0..size[0] {
                    for j in 0..size[1] {
                        let src = (from.start[0] + i) * data_shape[1] + from.start[1] + j;
                        let dst = (start[0] + i) * shape[1] + start[1] + j;
                        whole[dst as usize] = data_values[src as usize].clone();
                        model[dst as usize] = data_values[src as usize].clone();
                    }
                }
                assert_eq!(whole, model);
                let reference = c.encode_vlen(whole.iter().map(|s| s.as_bytes())).unwrap();
                let new = encoder.encode_update(stored.as_deref(), &update).unwrap();
                let got = values(&c, new.as_deref(), n);
                assert_eq!(got, model, "{json} {region:?}");
                assert_eq!(values(&c, Some(&reference), n), got);
                if new.is_none() {
                    assert!(model.iter().all(|v| v == "-"), "{json}: deleted a shard");
                }
                if encoder.updates_in_place() {
                    let source: Option<&[u8]> = stored.as_deref();
                    let pieces = encoder.encode_update_pieces(&source, &update).unwrap();
                    let in_place = pieces.map(|pieces| {
                        let mut out = Vec::new();
                        for p in pieces {
                            match p {
                                Piece::Kept(r) => out.extend_from_slice(
                                    &stored.as_ref().unwrap()[r.start as usize..r.end as usize],
                                ),
                                Piece::New(b) => out.extend_from_slice(&b),
                            }
                        }
                        out
                    });
                    assert_eq!(in_place, new, "{json} {region:?}: in place");
                }
                stored = new;
                updates += 1;
            }
        }
        assert_eq!(updates, 320);
    }

    #[test]
    fn partial_updates_of_string_shards_refuse_bad_input() {
        use crate::{ChunkUpdate, VLEN_DATA_INDEX};
        use zarr_grid::geometry::Region;
        let c = chain("-");
        let encoder = c.partial_encoder().unwrap();
        let region = Region::new(vec![1, 1], vec![1, 2]).unwrap();
        let given: Vec<&[u8]> = vec![b"a"];
        // an index naming no element given
        let indices: Vec<u8> = [VLEN_DATA_INDEX, VLEN_DATA_INDEX | 1, 7]
            .iter()
            .flat_map(|i| i.to_ne_bytes())
            .collect();
        for bad in [1, 2] {
            let at = Region::new(vec![0, bad], vec![1, 1]).unwrap();
            let err = ChunkUpdate::new_vlen(&indices, &[1, 3], &given, &at, at.clone(), false)
                .unwrap_err();
            assert!(
                matches!(err, crate::BlockError::ElementIndex { .. }),
                "{err}"
            );
        }
        // an update of fixed-size elements into a shard of strings
        let fixed = ChunkUpdate::new(
            &[0u8; 16],
            &[1, 2],
            8,
            &Region::whole(&[1, 2]),
            region,
            false,
        )
        .unwrap();
        let err = encoder.encode_update(None, &fixed).unwrap_err();
        assert!(matches!(err, CodecError::NotApplicable { .. }), "{err}");
        // a corrupt stored shard: an error, never a panic
        let v: Vec<String> = (0..16).map(|i| "x".repeat(i)).collect();
        let shard = c.encode_vlen(items(&v)).unwrap();
        let at = Region::new(vec![0, 0], vec![1, 1]).unwrap();
        let update = ChunkUpdate::new_vlen(
            &indices[..8],
            &[1, 1],
            &given,
            &Region::whole(&[1, 1]),
            at,
            false,
        )
        .unwrap();
        for n in 0..shard.len() {
            assert!(
                encoder.encode_update(Some(&shard[..n]), &update).is_err(),
                "{n}"
            );
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
