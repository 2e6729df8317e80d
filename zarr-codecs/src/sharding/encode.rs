//! Encoding shards: the inner chunks, gathered straight from the shard's data and encoded in
//! parallel, in Morton order.

use rayon::prelude::*;
use zarr_grid::geometry::block_runs;

use crate::block::BlockPlace;
use crate::error::{CodecError, Result};

use super::ShardingCodec;

impl ShardingCodec {
    /// Encodes the inner chunks in Morton order (in parallel); `None` for all-fill ones.
    /// The shard is the block `place` of `src` (the shard buffer itself, or the data of a
    /// region write): each inner chunk is gathered straight from it.
    pub(super) fn encode_inner(
        &self,
        src: &[u8],
        place: BlockPlace<'_>,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let elem = self.repr.element_size();
        let zeros = vec![0u64; self.inner_shape.len()];
        let encode_one = |&lin: &usize| -> Result<Option<Vec<u8>>> {
            let idx = self.unravel(lin);
            let start: Vec<u64> = idx
                .iter()
                .zip(&self.inner_shape)
                .zip(place.start)
                .map(|((i, c), s)| s + i * c)
                .collect();
            let mut buf = Vec::new();
            buf.try_reserve_exact(self.inner_len)
                .map_err(|_| CodecError::ChunkTooLarge {
                    shape: self.inner_shape.clone(),
                    element_size: elem,
                })?;
            // the runs come in order of the inner chunk's bytes
            block_runs(
                place.shape,
                &start,
                &self.inner_shape,
                &zeros,
                &self.inner_shape,
                elem,
                |s, _, n| {
                    buf.extend_from_slice(&src[s..s + n]);
                },
            );
            if self.inner.repr().is_fill(&buf) {
                return Ok(None);
            }
            self.inner
                .encode_owned(buf)
                .map(Some)
                .map_err(|e| CodecError::InnerChunk {
                    chunk: idx,
                    source: Box::new(e),
                })
        };
        if self.morton().len() <= 1 {
            self.morton().iter().map(encode_one).collect()
        } else {
            self.morton().par_iter().map(encode_one).collect()
        }
    }

    /// Encodes a shard; `None` when no inner chunk needs storing.
    pub(super) fn encode_shard(&self, input: &[u8]) -> Result<Option<Vec<u8>>> {
        if input.len() != self.len {
            return Err(CodecError::BufferLength {
                what: "the shard",
                expected: self.len as u64,
                got: input.len() as u64,
            });
        }
        let zeros = vec![0u64; self.repr.rank()];
        let place = BlockPlace {
            shape: &self.repr.shape,
            start: &zeros,
        };
        let encoded = self.encode_inner(input, place)?;
        if encoded.iter().all(Option::is_none) {
            return Ok(None);
        }
        self.assemble(&encoded).map(Some)
    }
}
