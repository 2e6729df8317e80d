//! The shard index: decoding it and checking its entries against the shard, the inner
//! chunks' byte spans, and assembling a shard from encoded inner chunks (Morton order, then
//! the index).

use crate::buffer::AlignedBuffer;
use zarr_buffer::Piece;

use crate::codec::InnerSpans;
use crate::error::{CodecError, Result};
use crate::source::ByteRangeSource;

use super::{IndexLocation, ShardingCodec, NAME};

/// The index entry of an inner chunk that is not stored.
pub(super) const MISSING: u64 = u64::MAX;

impl ShardingCodec {
    /// The stored `(offset, nbytes)` of inner chunk `lin`, checked; `None` if not stored.
    pub(super) fn entry(
        &self,
        words: &[u64],
        lin: usize,
        shard_len: Option<u64>,
    ) -> Result<Option<(u64, u64)>> {
        let (offset, nbytes) = (words[2 * lin], words[2 * lin + 1]);
        if offset == MISSING && nbytes == MISSING {
            return Ok(None);
        }
        let err = |reason: &'static str| CodecError::InvalidShardIndex {
            chunk: self.unravel(lin),
            offset,
            nbytes,
            reason,
        };
        if nbytes > self.inner_bound {
            return Err(err("nbytes exceeds the largest encoding of an inner chunk"));
        }
        let end = offset
            .checked_add(nbytes)
            .ok_or_else(|| err("it points outside the shard"))?;
        if shard_len.is_some_and(|len| end > len) {
            return Err(err("it points outside the shard"));
        }
        Ok(Some((offset, nbytes)))
    }

    /// Decodes an index; the result holds `2 * n_chunks` native-order words.
    pub(super) fn decode_index(&self, bytes: &[u8]) -> Result<AlignedBuffer> {
        let index = self.index.decode(bytes)?;
        if index.as_words().len() != 2 * self.n_chunks {
            return Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: 16 * self.n_chunks as u64,
                got: index.len() as u64,
            });
        }
        Ok(index)
    }

    /// Decodes the index of a whole stored shard and checks every entry against the shard:
    /// `(offset, nbytes)` per inner chunk in C order, `None` where not stored.
    pub(super) fn spans(&self, input: &[u8]) -> Result<Vec<Option<(u64, u64)>>> {
        if input.len() < self.index_len {
            return Err(CodecError::Truncated {
                codec: NAME,
                needed: self.index_len as u64,
                got: input.len() as u64,
            });
        }
        let index_bytes = match self.location {
            IndexLocation::Start => &input[..self.index_len],
            IndexLocation::End => &input[input.len() - self.index_len..],
        };
        let index = self.decode_index(index_bytes)?;
        let words = index.as_words();
        let shard_len = Some(input.len() as u64);
        (0..self.n_chunks)
            .map(|lin| self.entry(words, lin, shard_len))
            .collect()
    }

    /// The stored bytes of every inner chunk of a shard, in C order of the inner chunk grid,
    /// `None` for an inner chunk that is not stored: the index decoded and every entry checked
    /// against the shard and the inner chain's bound; the inner chunks are not decoded.
    pub(super) fn inner_chunk_bytes<'a>(&self, shard: &'a [u8]) -> Result<Vec<Option<&'a [u8]>>> {
        Ok(self
            .spans(shard)?
            .into_iter()
            .map(|span| span.map(|(o, n)| &shard[o as usize..(o + n) as usize]))
            .collect())
    }

    /// Whether any inner chunk of `inner` (one per inner chunk of the shard, `None`: not
    /// stored) is stored; a list of another length is an error.
    fn any_stored<T>(&self, inner: &[Option<T>]) -> Result<bool> {
        if inner.len() != self.n_chunks {
            return Err(CodecError::BufferLength {
                what: "the list of inner chunks",
                expected: self.n_chunks as u64,
                got: inner.len() as u64,
            });
        }
        Ok(inner.iter().any(Option::is_some))
    }

    /// Assembles a shard from inner chunks already encoded with the inner chain, given in C
    /// order of the inner chunk grid (`None`: not stored), as encoding a shard does: the inner
    /// chunks written in Morton order, then the index. `None` when no inner chunk is stored
    /// (the shard is then not written).
    pub(super) fn assemble_shard(&self, inner: &[Option<&[u8]>]) -> Result<Option<Vec<u8>>> {
        if !self.any_stored(inner)? {
            return Ok(None);
        }
        self.assemble(self.morton().iter().map(|&lin| inner[lin]))
            .map(Some)
    }

    /// The shard bytes for inner chunks given in Morton order (`None`: not stored).
    pub(super) fn assemble<'c, I>(&self, morton_ordered: I) -> Result<Vec<u8>>
    where
        I: Iterator<Item = Option<&'c [u8]>> + Clone,
    {
        let data_len: usize = morton_ordered.clone().flatten().map(<[u8]>::len).sum();
        let index_bytes =
            self.index_for(morton_ordered.clone().map(|c| c.map(|b| b.len() as u64)))?;
        let mut out = Vec::with_capacity(self.index_len + data_len);
        if self.location == IndexLocation::Start {
            out.extend_from_slice(&index_bytes);
        }
        for bytes in morton_ordered.flatten() {
            out.extend_from_slice(bytes);
        }
        if self.location == IndexLocation::End {
            out.extend_from_slice(&index_bytes);
        }
        Ok(out)
    }

    /// The shard for inner chunks given in Morton order (`None`: not stored), as the parts
    /// [`assemble`](Self::assemble) would join: the index and the inner chunks, moved, not
    /// copied.
    pub(super) fn assemble_parts(
        &self,
        morton_ordered: Vec<Option<Vec<u8>>>,
    ) -> Result<Vec<Vec<u8>>> {
        let index = self.index_for(
            morton_ordered
                .iter()
                .map(|c| c.as_ref().map(|b| b.len() as u64)),
        )?;
        let mut parts = Vec::with_capacity(morton_ordered.len() + 1);
        if self.location == IndexLocation::Start {
            parts.push(index);
            parts.extend(morton_ordered.into_iter().flatten());
        } else {
            parts.extend(morton_ordered.into_iter().flatten());
            parts.push(index);
        }
        Ok(parts)
    }

    /// The encoded index of a shard whose inner chunks, in Morton order, are `morton_lens`
    /// bytes long (`None`: not stored), laid out one after the other as
    /// [`assemble`](Self::assemble) writes them.
    fn index_for(&self, morton_lens: impl Iterator<Item = Option<u64>>) -> Result<Vec<u8>> {
        let mut index = vec![MISSING; 2 * self.n_chunks];
        let mut offset = match self.location {
            IndexLocation::Start => self.index_len as u64,
            IndexLocation::End => 0,
        };
        for (&lin, len) in self.morton().iter().zip(morton_lens) {
            if let Some(len) = len {
                index[2 * lin] = offset;
                index[2 * lin + 1] = len;
                offset += len;
            }
        }
        let index_bytes = self.index.encode_slice(bytemuck::cast_slice(&index))?;
        if index_bytes.len() != self.index_len {
            return Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: self.index_len as u64,
                got: index_bytes.len() as u64,
            });
        }
        Ok(index_bytes)
    }

    /// The spans of the inner chunks of the shard stored in `source`, from its size and its
    /// index (two requests), every entry checked; `None` when the shard is not stored.
    pub(super) fn stored_spans(&self, source: &dyn ByteRangeSource) -> Result<Option<InnerSpans>> {
        let Some(size) = source.size()? else {
            return Ok(None);
        };
        if size < self.index_len as u64 {
            return Err(CodecError::Truncated {
                codec: NAME,
                needed: self.index_len as u64,
                got: size,
            });
        }
        let Some(index) = self.read_index(source)? else {
            return Ok(None);
        };
        let words = index.as_words();
        (0..self.n_chunks)
            .map(|lin| self.entry(words, lin, Some(size)))
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// The shard as pieces: `inner` per inner chunk in C order (`None`: not stored; a
    /// [`Piece::Kept`] span of the shard the spans came from; or new bytes), laid out in Morton
    /// order with the index, as [`assemble`](Self::assemble) lays out bytes; consecutive kept
    /// spans merged. `None` when no inner chunk is stored.
    pub(super) fn assemble_pieces(&self, inner: &[Option<Piece>]) -> Result<Option<Vec<Piece>>> {
        if !self.any_stored(inner)? {
            return Ok(None);
        }
        let morton = || self.morton().iter().map(|&lin| inner[lin].as_ref());
        let index = self.index_for(morton().map(|p| p.map(Piece::len)))?;
        let mut pieces: Vec<Piece> = Vec::new();
        if self.location == IndexLocation::Start {
            pieces.push(Piece::New(index.clone()));
        }
        for piece in morton().flatten() {
            match (pieces.last_mut(), piece) {
                (Some(Piece::Kept(last)), Piece::Kept(next)) if last.end == next.start => {
                    last.end = next.end;
                }
                _ => pieces.push(piece.clone()),
            }
        }
        if self.location == IndexLocation::End {
            pieces.push(Piece::New(index));
        }
        Ok(Some(pieces))
    }
}
