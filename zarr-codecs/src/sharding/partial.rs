//! Sharding's partial encoder: an update of part of a shard re-encodes only the inner chunks
//! it touches, and every other inner chunk keeps its stored bytes as they are.
//!
//! An inner chunk the update covers whole is encoded from the update's values alone; one it
//! covers in part is updated by the inner chain's own partial encoder when it has one (a
//! nested shard), and otherwise decoded (fill value when not stored), updated and encoded.
//! The touched inner chunks are updated in parallel (rayon), then the shard is assembled
//! again (Morton order, index).
//!
//! A shard of variable-size elements (`string`, `variable_length_bytes`) takes an update of
//! them ([`ChunkUpdate::new_vlen`]): each inner chunk the update touches is decoded with the
//! inner chain's vlen decoder (fill value when not stored), the update's elements put in
//! place and the inner chunk encoded with the inner chain's vlen encoder, as the fixed-size
//! path does with byte buffers; an inner chunk left all fill value is not stored, unless the
//! update keeps empty parts.

use rayon::prelude::*;
use zarr_buffer::Piece;
use zarr_grid::geometry::regular_chunks_in_region;
use zarr_grid::ChunkPart;

use crate::block::ChunkUpdate;
use crate::codec::PartialEncoder;
use crate::error::{CodecError, Result};
use crate::source::ByteRangeSource;

use super::ShardingCodec;
#[cfg(feature = "vlen")]
use crate::block::{VLEN_DATA_INDEX, VLEN_FILL_INDEX};

/// The bit of an element index of [`ShardingCodec::update_inner_vlen`] that names an element
/// of the stored inner chunk (neither an element of the update nor the fill value).
#[cfg(feature = "vlen")]
const STORED: u64 = 1 << 62;

impl ShardingCodec {
    /// The inner chunks `update` touches (C order of the inner grid), each with its C-order
    /// index, after checking the update against the shard.
    fn touched(&self, update: &ChunkUpdate<'_>) -> Result<Vec<(usize, ChunkPart)>> {
        match (self.repr.data_type.is_variable_size(), update.items()) {
            (false, None) | (true, Some(_)) => {}
            (variable, _) => {
                return Err(CodecError::NotApplicable {
                    operation: "updating part of a shard",
                    reason: if variable {
                        format!(
                            "shards of {} hold variable-size elements, and the update has \
                             fixed-size ones",
                            self.repr.data_type
                        )
                    } else {
                        format!(
                            "shards of {} hold fixed-size elements, and the update has \
                             variable-size ones",
                            self.repr.data_type
                        )
                    },
                })
            }
        }
        let region = update.region();
        region
            .check_inside(&self.repr.shape)
            .map_err(|_| CodecError::RegionOutOfBounds {
                start: region.start.clone(),
                shape: region.shape.clone(),
                chunk_shape: self.repr.shape.clone(),
            })?;
        Ok(regular_chunks_in_region(&self.inner_shape, region)
            .map(|part| (self.ravel(&part.chunk), part))
            .collect())
    }

    /// The new stored bytes of the inner chunk `part` (stored now as `old`, `None`: not
    /// stored) with its part of `update` written; `None` when it is not to be stored.
    fn update_inner(
        &self,
        old: Option<&[u8]>,
        part: &ChunkPart,
        update: &ChunkUpdate<'_>,
    ) -> Result<Option<Vec<u8>>> {
        let sub = update.sub(&part.in_region, part.in_chunk.clone())?;
        let whole = part.in_chunk.shape == self.inner_shape;
        if !whole {
            if let Some(inner) = self.inner.partial_encoder() {
                return inner.encode_update(old, &sub);
            }
        }
        if let Some(items) = sub.items() {
            return self.update_inner_vlen(if whole { None } else { old }, &sub, items);
        }
        let mut buf = Vec::new();
        buf.try_reserve_exact(self.inner_len)
            .map_err(|_| CodecError::ChunkTooLarge {
                shape: self.inner_shape.clone(),
                element_size: self.repr.element_size(),
            })?;
        buf.resize(self.inner_len, 0);
        match old {
            Some(bytes) if !whole => self.inner.decode_into(bytes, &mut buf)?,
            // every position is written below
            _ if whole => {}
            _ => self.inner.repr().fill(&mut buf),
        }
        sub.write_into(&mut buf, &self.inner_shape)?;
        if update.keep_empty() && self.inner.stores_empty_chunks() {
            self.inner.encode_owned(buf).map(Some)
        } else {
            self.inner.encode_chunk(&buf)
        }
    }

    /// [`ShardingCodec::update_inner`] for variable-size elements: the inner chunk `old`
    /// (`None`: all fill value) with the update `sub` of it (its elements `items`) written,
    /// through the inner chain's vlen codec. The inner chunk is updated as a buffer of
    /// element indices (one `u64` each: [`STORED`] `| e` for its stored element `e`, or the
    /// update's own indices), which the update's block copy writes, and the elements they
    /// name are encoded.
    #[cfg(feature = "vlen")]
    fn update_inner_vlen(
        &self,
        old: Option<&[u8]>,
        sub: &ChunkUpdate<'_>,
        items: &[&[u8]],
    ) -> Result<Option<Vec<u8>>> {
        const INDEX: usize = std::mem::size_of::<u64>();
        let too_large = |element_size| CodecError::ChunkTooLarge {
            shape: self.inner_shape.clone(),
            element_size,
        };
        let n = zarr_grid::geometry::num_elements(&self.inner_shape)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| too_large(INDEX))?;
        let stored = old.map(|b| self.inner.decode_vlen(b)).transpose()?;
        let mut indices = Vec::new();
        indices
            .try_reserve_exact(n.checked_mul(INDEX).ok_or_else(|| too_large(INDEX))?)
            .map_err(|_| too_large(INDEX))?;
        for e in 0..n as u64 {
            let i = if stored.is_some() {
                STORED | e
            } else {
                VLEN_FILL_INDEX
            };
            indices.extend_from_slice(&i.to_ne_bytes());
        }
        sub.write_into(&mut indices, &self.inner_shape)?;
        let fill = self.repr.fill_value.as_bytes();
        let mut elements: Vec<&[u8]> = Vec::new();
        elements
            .try_reserve_exact(n)
            .map_err(|_| too_large(std::mem::size_of::<&[u8]>()))?;
        for index in indices.chunks_exact(INDEX) {
            let mut i = [0; INDEX];
            i.copy_from_slice(index);
            let i = u64::from_ne_bytes(i);
            let element = if i == VLEN_FILL_INDEX {
                Some(fill)
            } else if i & VLEN_DATA_INDEX != 0 {
                usize::try_from(i & !VLEN_DATA_INDEX)
                    .ok()
                    .and_then(|k| items.get(k).copied())
            } else {
                usize::try_from(i & !STORED)
                    .ok()
                    .and_then(|e| stored.as_ref()?.get(e))
            };
            elements.push(element.ok_or_else(|| CodecError::Corrupt {
                codec: self.inner.array_to_bytes().name(),
                reason: format!("no element for index {i:#x} of the inner chunk"),
            })?);
        }
        let keep = sub.keep_empty() && self.inner.stores_empty_chunks();
        if !keep && elements.iter().all(|&e| e == fill) {
            return Ok(None);
        }
        self.inner.encode_vlen(elements.iter().copied()).map(Some)
    }

    /// Without the `vlen` feature no inner chunk of variable-size elements is updated.
    #[cfg(not(feature = "vlen"))]
    fn update_inner_vlen(
        &self,
        _: Option<&[u8]>,
        _: &ChunkUpdate<'_>,
        _: &[&[u8]],
    ) -> Result<Option<Vec<u8>>> {
        Err(CodecError::NotApplicable {
            operation: "a partial update of variable-size elements",
            reason: "zarr-codecs is built without its `vlen` feature".into(),
        })
    }

    /// [`ShardingCodec::update_inner`] of each touched inner chunk, `old` giving its stored
    /// bytes, in parallel when there are several; errors name the inner chunk.
    fn update_touched<'o>(
        &self,
        touched: &[(usize, ChunkPart)],
        old: impl Fn(usize) -> Option<&'o [u8]> + Sync,
        update: &ChunkUpdate<'_>,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let one = |(i, (_, part)): (usize, &(usize, ChunkPart))| {
            self.update_inner(old(i), part, update)
                .map_err(|e| CodecError::InnerChunk {
                    chunk: part.chunk.iter().map(|&g| g as u64).collect(),
                    source: Box::new(e),
                })
        };
        if touched.len() > 1 {
            touched.par_iter().enumerate().map(one).collect()
        } else {
            touched.iter().enumerate().map(one).collect()
        }
    }
}

impl PartialEncoder for ShardingCodec {
    fn encode_update(
        &self,
        encoded: Option<&[u8]>,
        update: &ChunkUpdate<'_>,
    ) -> Result<Option<Vec<u8>>> {
        let touched = self.touched(update)?;
        let mut chunks: Vec<Option<&[u8]>> = match encoded {
            Some(e) => self.inner_chunk_bytes(e)?,
            None => vec![None; self.n_chunks],
        };
        let new = self.update_touched(&touched, |i| chunks[touched[i].0], update)?;
        for ((lin, _), bytes) in touched.iter().zip(&new) {
            chunks[*lin] = bytes.as_deref();
        }
        self.assemble_shard(&chunks)
    }

    fn updates_in_place(&self) -> bool {
        true
    }

    fn encode_update_pieces(
        &self,
        source: &dyn ByteRangeSource,
        update: &ChunkUpdate<'_>,
    ) -> Result<Option<Vec<Piece>>> {
        let touched = self.touched(update)?;
        let spans = self
            .stored_spans(source)?
            .unwrap_or_else(|| vec![None; self.n_chunks]);
        // the stored bytes of the inner chunks the update touches in part, in one request
        // (one it covers whole is encoded from the update alone)
        let wanted: Vec<Option<(u64, u64)>> = touched
            .iter()
            .map(|(lin, part)| spans[*lin].filter(|_| part.in_chunk.shape != self.inner_shape))
            .collect();
        let fetched = Self::fetch_spans(source, &wanted)?.ok_or(CodecError::SourceRanges {
            // the value was deleted between reading its index and its inner chunks
            expected: wanted.iter().flatten().count(),
            got: 0,
        })?;
        let new = self.update_touched(&touched, |i| fetched.get(i), update)?;
        let mut pieces: Vec<Option<Piece>> = spans
            .iter()
            .map(|span| span.map(|(offset, nbytes)| Piece::Kept(offset..offset + nbytes)))
            .collect();
        for ((lin, _), bytes) in touched.iter().zip(new) {
            pieces[*lin] = bytes.map(Piece::New);
        }
        self.assemble_pieces(&pieces)
    }
}
