//! The `sharding_indexed` codec (array -> bytes): a shard holds a grid of inner chunks, each
//! encoded with its own codec chain, and an index of where each one lies.
//!
//! Name: `sharding_indexed`. Configuration:
//!
//! - `chunk_shape`: the inner chunk shape; it has the shard's rank and divides the shard
//!   shape on every axis;
//! - `codecs`: the inner chunks' codec chain (any valid chain, sharding included);
//! - `index_codecs`: the index's codec chain, which must encode to a fixed size (`bytes`,
//!   usually followed by `crc32c`);
//! - `index_location`: `"start"` or `"end"` (default `"end"`).
//!
//! `codecs` and `index_codecs` default as in zarr-python (`[bytes little]` and
//! `[bytes little, crc32c]`). See the
//! [Zarr v3 spec](https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html).
//!
//! The index is a C-order array of `(offset, nbytes)` pairs of `uint64`, one per inner chunk,
//! offsets counted from the start of the shard; `(2^64-1, 2^64-1)` marks an inner chunk that is
//! not stored and reads as the fill value.
//!
//! Writing follows zarr-python, so that shards with deterministic inner codecs are
//! byte-identical: inner chunks whose elements all equal the fill value are not stored, the
//! others are written back to back in Morton (Z) order of their grid positions, and a shard
//! with no stored inner chunk is not written at all
//! ([`crate::CodecChain::encode_chunk`] returns `None`). Inner chunks are encoded and decoded
//! in parallel (rayon). Reading a region ([`crate::CodecChain::decode_region`]) fetches the
//! index with one request and the inner chunks it needs with one more.
//!
//! ```
//! use zarr_codecs::{default_registry, ChunkRepr, CodecChain};
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![4, 4], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "sharding_indexed", "configuration": {
//!     "chunk_shape": [2, 2],
//!     "codecs": [{"name": "bytes"}],
//!     "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
//!     "index_location": "end"}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let mut chunk = vec![0u8; 16];
//! chunk[0] = 1; // only the first inner chunk holds data
//! let shard = chain.encode_chunk(&chunk)?.expect("not all fill");
//! assert_eq!(shard.len(), 4 + 4 * 16 + 4); // one inner chunk, the index, its checksum
//! assert_eq!(chain.decode(&shard)?.as_bytes(), &chunk[..]);
//! assert!(chain.encode_chunk(&[0; 16])?.is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod morton;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use zarr_grid::geometry::{block_runs, regular_chunks_in_region, ChunkPart, Region};
use zarr_meta::{DataType, ExtensionDef, ExtensionPoint, FillValue};

use crate::block::{BlockPlace, SharedOut};
use crate::buffer::AlignedBuffer;
use crate::chain::{check_region, CodecChain};
use crate::codec::{ArrayToBytesCodec, Codec};
use crate::error::{CodecError, Result};
use crate::registry::CodecRegistry;
use crate::repr::ChunkRepr;
use crate::source::{single_range, ByteRange, ByteRangeSource};

/// The codec's name.
pub const NAME: &str = "sharding_indexed";

/// The index entry of an inner chunk that is not stored.
const MISSING: u64 = u64::MAX;

/// Where the index lies in the shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexLocation {
    /// Before the inner chunks.
    Start,
    /// After the inner chunks.
    #[default]
    End,
}

fn bytes_little() -> ExtensionDef {
    let mut config = Map::new();
    config.insert("endian".into(), Value::String("little".into()));
    ExtensionDef::with_configuration("bytes", config)
}

fn default_codecs() -> Vec<ExtensionDef> {
    vec![bytes_little()]
}

fn default_index_codecs() -> Vec<ExtensionDef> {
    vec![bytes_little(), ExtensionDef::new("crc32c")]
}

/// The configuration of `sharding_indexed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardingConfig {
    /// The inner chunk shape.
    pub chunk_shape: Vec<u64>,
    /// The inner chunks' codecs.
    #[serde(default = "default_codecs")]
    pub codecs: Vec<ExtensionDef>,
    /// The index's codecs (fixed-size encoding).
    #[serde(default = "default_index_codecs")]
    pub index_codecs: Vec<ExtensionDef>,
    /// Where the index lies.
    #[serde(default)]
    pub index_location: IndexLocation,
}

/// The `sharding_indexed` codec, built for one shard representation.
#[derive(Debug)]
pub struct ShardingCodec {
    repr: ChunkRepr,
    len: usize,
    inner_shape: Vec<u64>,
    chunks_per_shard: Vec<u64>,
    n_chunks: usize,
    inner: CodecChain,
    inner_len: usize,
    inner_bound: u64,
    index: CodecChain,
    index_len: usize,
    location: IndexLocation,
    /// C-order linear indices of the inner chunks, in Morton order: computed on the first
    /// encode, so that opening an array (which builds the codec) costs nothing per inner chunk.
    morton: std::sync::OnceLock<Vec<usize>>,
}

/// A piece of work: one inner chunk's part of the output, and its stored bytes if any.
struct Job<'a> {
    part: ChunkPart,
    data: Option<&'a [u8]>,
}

impl ShardingCodec {
    /// The Morton order of the inner chunks (C-order linear indices).
    fn morton(&self) -> &[usize] {
        self.morton
            .get_or_init(|| morton::morton_order(&self.chunks_per_shard))
    }

    /// The codec for shards of `repr`; nested codec definitions resolve through `registry`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for an inner chunk shape of another rank,
    /// with a zero, or that does not divide the shard shape, and for index codecs without a
    /// fixed-size encoding; any error of the nested chains.
    pub fn new(config: &ShardingConfig, repr: ChunkRepr, registry: &CodecRegistry) -> Result<Self> {
        let len = repr.validate()?;
        let invalid = |reason: String| -> CodecError {
            ExtensionDef::new(NAME)
                .invalid_configuration(ExtensionPoint::Codec, reason)
                .into()
        };
        let inner_shape = config.chunk_shape.clone();
        if inner_shape.len() != repr.rank() {
            return Err(invalid(format!(
                "chunk_shape {inner_shape:?} has {} dimensions but the shard has {}",
                inner_shape.len(),
                repr.rank()
            )));
        }
        if inner_shape.contains(&0) {
            return Err(invalid(format!("chunk_shape {inner_shape:?} has a zero")));
        }
        if repr.shape.iter().zip(&inner_shape).any(|(s, c)| s % c != 0) {
            return Err(invalid(format!(
                "chunk_shape {inner_shape:?} does not divide the shard shape {:?}",
                repr.shape
            )));
        }
        let chunks_per_shard: Vec<u64> = repr
            .shape
            .iter()
            .zip(&inner_shape)
            .map(|(s, c)| s / c)
            .collect();
        let inner_repr = repr.with_shape(inner_shape.clone());
        let inner = CodecChain::from_defs(&config.codecs, &inner_repr, registry)?;
        let mut index_shape = chunks_per_shard.clone();
        index_shape.push(2);
        let index_repr = ChunkRepr::new(
            index_shape,
            DataType::UInt64,
            FillValue::from_ne_bytes(DataType::UInt64, MISSING.to_ne_bytes())?,
        );
        let index = CodecChain::from_defs(&config.index_codecs, &index_repr, registry)?;
        let index_len = index
            .fixed_encoded_size()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                invalid(
                    "index_codecs must encode to a fixed size (bytes, optionally followed by crc32c)"
                        .into(),
                )
            })?;
        let n_chunks = index.decoded_len() / 16;
        Ok(ShardingCodec {
            len,
            inner_len: inner.decoded_len(),
            inner_bound: inner.encoded_size_bound(),
            morton: std::sync::OnceLock::new(),
            repr,
            inner_shape,
            chunks_per_shard,
            n_chunks,
            inner,
            index,
            index_len,
            location: config.index_location,
        })
    }

    /// The configuration, with the nested chains as they are written back.
    pub fn config(&self) -> ShardingConfig {
        ShardingConfig {
            chunk_shape: self.inner_shape.clone(),
            codecs: self.inner.to_defs(),
            index_codecs: self.index.to_defs(),
            index_location: self.location,
        }
    }

    /// The inner chunk shape.
    pub fn inner_chunk_shape(&self) -> &[u64] {
        &self.inner_shape
    }

    /// The number of inner chunks along each axis.
    pub fn chunks_per_shard(&self) -> &[u64] {
        &self.chunks_per_shard
    }

    /// The inner chunks' codec chain.
    pub fn inner_chain(&self) -> &CodecChain {
        &self.inner
    }

    /// The encoded index size in bytes.
    pub fn index_len(&self) -> usize {
        self.index_len
    }

    /// Where the index lies.
    pub fn index_location(&self) -> IndexLocation {
        self.location
    }

    fn unravel(&self, mut lin: usize) -> Vec<u64> {
        let mut idx = vec![0u64; self.chunks_per_shard.len()];
        for d in (0..idx.len()).rev() {
            let n = self.chunks_per_shard[d] as usize;
            idx[d] = (lin % n) as u64;
            lin /= n;
        }
        idx
    }

    fn ravel(&self, idx: &[u64]) -> usize {
        idx.iter()
            .zip(&self.chunks_per_shard)
            .fold(0usize, |acc, (&i, &n)| acc * n as usize + i as usize)
    }

    /// The stored `(offset, nbytes)` of inner chunk `lin`, checked; `None` if not stored.
    fn entry(
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
    fn decode_index(&self, bytes: &[u8]) -> Result<AlignedBuffer> {
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

    /// Decodes the inner chunks of `jobs` into `out` (a C-order buffer of `out_shape`), in
    /// parallel, each job's block shifted by `base`; missing ones read as the fill value.
    /// The jobs' blocks must partition a block of `out` that no other thread touches.
    fn run_jobs(
        &self,
        jobs: &[Job<'_>],
        shared: &SharedOut<'_>,
        out_shape: &[u64],
        base: &[u64],
    ) -> Result<()> {
        let elem = self.repr.element_size();
        let fill = self.repr.fill_value.as_bytes();
        let inner_len = self.inner_len;
        let run_one = |scratch: &mut AlignedBuffer, job: &Job<'_>| -> Result<()> {
            let part = &job.part;
            let wrap = |e: CodecError| CodecError::InnerChunk {
                chunk: part.chunk.clone(),
                source: Box::new(e),
            };
            let dst = Region {
                start: part
                    .in_region
                    .start
                    .iter()
                    .zip(base)
                    .map(|(s, b)| s + b)
                    .collect(),
                shape: part.in_region.shape.clone(),
            };
            let Some(bytes) = job.data else {
                // SAFETY: the jobs' blocks partition the caller's block of the output, so
                // blocks of different jobs never overlap.
                unsafe { shared.fill_block(out_shape, &dst.start, &dst.shape, fill) };
                return Ok(());
            };
            if part.in_chunk.shape == self.inner_shape {
                if let Some(offset) = contiguous_offset(out_shape, &dst, elem) {
                    // SAFETY: this job's block, contiguous in the output; see above.
                    let out = unsafe { shared.run(offset, inner_len) };
                    return self.inner.decode_into(bytes, out).map_err(wrap);
                }
            }
            if scratch.len() != inner_len {
                *scratch = AlignedBuffer::try_zeroed(inner_len).ok_or_else(|| {
                    CodecError::ChunkTooLarge {
                        shape: self.inner_shape.clone(),
                        element_size: elem,
                    }
                })?;
            }
            self.inner.decode_into(bytes, scratch).map_err(wrap)?;
            // SAFETY: this job's block; see above.
            unsafe {
                shared.copy_block(
                    scratch,
                    &self.inner_shape,
                    &part.in_chunk.start,
                    out_shape,
                    &dst.start,
                    &dst.shape,
                    elem,
                )
            };
            Ok(())
        };
        if jobs.len() <= 1 {
            let mut scratch = AlignedBuffer::new();
            return jobs.iter().try_for_each(|job| run_one(&mut scratch, job));
        }
        jobs.par_iter()
            .try_for_each_init(AlignedBuffer::new, |scratch, job| run_one(scratch, job))
    }

    /// Decodes the index of a whole stored shard and checks every entry against the shard:
    /// `(offset, nbytes)` per inner chunk in C order, `None` where not stored.
    fn spans(&self, input: &[u8]) -> Result<Vec<Option<(u64, u64)>>> {
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

    /// The stored bytes of every inner chunk of a shard, in C order of the inner chunk grid
    /// (positions `zarr_grid::geometry::indices(self.chunks_per_shard())`), `None` for an inner
    /// chunk that is not stored. The index is decoded and every entry checked against the
    /// shard and the inner chain's bound; the inner chunks themselves are not decoded (decode
    /// them with [`ShardingCodec::inner_chain`]).
    ///
    /// # Errors
    /// A truncated shard, a corrupt index, an entry pointing outside the shard.
    pub fn inner_chunk_bytes<'a>(&self, shard: &'a [u8]) -> Result<Vec<Option<&'a [u8]>>> {
        Ok(self
            .spans(shard)?
            .into_iter()
            .map(|span| span.map(|(o, n)| &shard[o as usize..(o + n) as usize]))
            .collect())
    }

    /// Assembles a shard from inner chunks already encoded with the inner chain, given in C
    /// order of the inner chunk grid (`None`: not stored), as encoding a shard does: the inner
    /// chunks written in Morton order, then the index. `None` when no inner chunk is stored
    /// (the shard is then not written).
    ///
    /// # Errors
    /// [`CodecError::BufferLength`] for a list of the wrong length; an index codec's failure.
    pub fn assemble_shard(&self, mut inner: Vec<Option<Vec<u8>>>) -> Result<Option<Vec<u8>>> {
        if inner.len() != self.n_chunks {
            return Err(CodecError::BufferLength {
                what: "the list of inner chunks",
                expected: self.n_chunks as u64,
                got: inner.len() as u64,
            });
        }
        if inner.iter().all(Option::is_none) {
            return Ok(None);
        }
        let morton: Vec<Option<Vec<u8>>> =
            self.morton().iter().map(|&lin| inner[lin].take()).collect();
        self.assemble(&morton).map(Some)
    }

    /// Decodes a whole stored shard into `out`.
    fn decode_shard(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        if out.len() != self.len {
            return Err(CodecError::BufferLength {
                what: "the output buffer",
                expected: self.len as u64,
                got: out.len() as u64,
            });
        }
        let zeros = vec![0u64; self.repr.rank()];
        let place = BlockPlace {
            shape: &self.repr.shape,
            start: &zeros,
        };
        self.decode_shard_block(input, &SharedOut::new(out), place)
    }

    /// Decodes a whole stored shard into its block `place` of `shared`, each inner chunk
    /// straight into its place. The caller has checked the block against the buffer and
    /// owns it alone.
    fn decode_shard_block(
        &self,
        input: &[u8],
        shared: &SharedOut<'_>,
        place: BlockPlace<'_>,
    ) -> Result<()> {
        let spans = self.spans(input)?;
        if spans.iter().all(Option::is_none) {
            let fill = self.repr.fill_value.as_bytes();
            // SAFETY: the caller's block.
            unsafe { shared.fill_block(place.shape, place.start, &self.repr.shape, fill) };
            return Ok(());
        }
        let whole = Region::whole(&self.repr.shape);
        // the parts come in C order of the inner chunks, as the index does
        let jobs: Vec<Job<'_>> = regular_chunks_in_region(&self.inner_shape, &whole)
            .zip(&spans)
            .map(|(part, span)| Job {
                part,
                data: span.map(|(o, n)| &input[o as usize..(o + n) as usize]),
            })
            .collect();
        self.run_jobs(&jobs, shared, place.shape, place.start)
    }

    /// Reads the index and the inner chunks `region` needs (two requests) and decodes them.
    fn decode_partial(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
        out: &mut [u8],
    ) -> Result<bool> {
        let index_range = match self.location {
            IndexLocation::Start => ByteRange::Range {
                start: 0,
                end: self.index_len as u64,
            },
            IndexLocation::End => ByteRange::Suffix(self.index_len as u64),
        };
        let Some(got) = source.get_ranges(&[index_range])? else {
            return Ok(false);
        };
        let index_bytes = single_range(got, self.index_len as u64)?;
        let index = self.decode_index(&index_bytes)?;
        let words = index.as_words();

        let parts: Vec<ChunkPart> = regular_chunks_in_region(&self.inner_shape, region).collect();
        let mut spans = Vec::with_capacity(parts.len());
        let mut wanted: Vec<(u64, u64, usize)> = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            let span = self.entry(words, self.ravel(&part.chunk), None)?;
            if let Some((offset, nbytes)) = span {
                wanted.push((offset, offset + nbytes, i));
            }
            spans.push(span);
        }
        // coalesce byte ranges that touch or overlap into one
        wanted.sort_unstable();
        let mut groups: Vec<(u64, u64)> = Vec::new();
        let mut group_of = vec![usize::MAX; parts.len()];
        for &(start, end, i) in &wanted {
            match groups.last_mut() {
                Some(g) if start <= g.1 => g.1 = g.1.max(end),
                _ => groups.push((start, end)),
            }
            group_of[i] = groups.len() - 1;
        }
        let fetched = if groups.is_empty() {
            Vec::new()
        } else {
            let ranges: Vec<ByteRange> = groups
                .iter()
                .map(|&(start, end)| ByteRange::Range { start, end })
                .collect();
            let Some(fetched) = source.get_ranges(&ranges)? else {
                return Ok(false);
            };
            if fetched.len() != ranges.len() {
                return Err(CodecError::SourceRanges {
                    expected: ranges.len(),
                    got: fetched.len(),
                });
            }
            for (bytes, &(start, end)) in fetched.iter().zip(&groups) {
                if bytes.len() as u64 != end - start {
                    return Err(CodecError::ShortRead {
                        expected: end - start,
                        got: bytes.len() as u64,
                    });
                }
            }
            fetched
        };
        let jobs: Vec<Job<'_>> = parts
            .into_iter()
            .zip(spans)
            .enumerate()
            .map(|(i, (part, span))| {
                let data = span.map(|(offset, nbytes)| {
                    let g = group_of[i];
                    let at = (offset - groups[g].0) as usize;
                    &fetched[g][at..at + nbytes as usize]
                });
                Job { part, data }
            })
            .collect();
        let zeros = vec![0u64; region.rank()];
        self.run_jobs(&jobs, &SharedOut::new(out), &region.shape, &zeros)?;
        Ok(true)
    }

    /// Encodes the inner chunks in Morton order (in parallel); `None` for all-fill ones.
    /// The shard is the block `place` of `src` (the shard buffer itself, or the data of a
    /// region write): each inner chunk is gathered straight from it.
    fn encode_inner(&self, src: &[u8], place: BlockPlace<'_>) -> Result<Vec<Option<Vec<u8>>>> {
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
    fn encode_shard(&self, input: &[u8]) -> Result<Option<Vec<u8>>> {
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

    /// The shard bytes for inner chunks encoded in Morton order.
    fn assemble(&self, encoded: &[Option<Vec<u8>>]) -> Result<Vec<u8>> {
        let data_len: usize = encoded.iter().flatten().map(Vec::len).sum();
        let mut index = vec![MISSING; 2 * self.n_chunks];
        let mut offset = match self.location {
            IndexLocation::Start => self.index_len as u64,
            IndexLocation::End => 0,
        };
        for (&lin, chunk) in self.morton().iter().zip(encoded) {
            if let Some(bytes) = chunk {
                index[2 * lin] = offset;
                index[2 * lin + 1] = bytes.len() as u64;
                offset += bytes.len() as u64;
            }
        }
        let index_bytes = self.index.encode(bytemuck::cast_slice(&index))?;
        if index_bytes.len() != self.index_len {
            return Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: self.index_len as u64,
                got: index_bytes.len() as u64,
            });
        }
        let mut out = Vec::with_capacity(self.index_len + data_len);
        if self.location == IndexLocation::Start {
            out.extend_from_slice(&index_bytes);
        }
        for bytes in encoded.iter().flatten() {
            out.extend_from_slice(bytes);
        }
        if self.location == IndexLocation::End {
            out.extend_from_slice(&index_bytes);
        }
        Ok(out)
    }
}

/// The byte offset of a block in a C-order buffer when the block is one contiguous run.
fn contiguous_offset(shape: &[u64], block: &Region, elem: usize) -> Option<usize> {
    let rank = shape.len();
    // axes after `k` are spanned wholly; axes before it have extent 1
    let k = (0..rank)
        .rev()
        .find(|&d| block.shape[d] != shape[d])
        .unwrap_or(0);
    if block.shape[..k].iter().any(|&n| n != 1) {
        return None;
    }
    let mut offset = 0usize;
    let mut stride = elem;
    for d in (0..rank).rev() {
        offset += block.start[d] as usize * stride;
        stride *= shape[d] as usize;
    }
    Some(offset)
}

/// Builds `sharding_indexed` from its definition.
pub(crate) fn factory(
    def: &ExtensionDef,
    repr: &ChunkRepr,
    registry: &CodecRegistry,
) -> Result<Codec> {
    let config: ShardingConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    let codec = ShardingCodec::new(&config, repr.clone(), registry)?;
    Ok(Codec::ArrayToBytes(Box::new(codec)))
}

impl ArrayToBytesCodec for ShardingCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        ExtensionDef::from_config(NAME, &self.config()).unwrap_or_else(|_| ExtensionDef::new(NAME))
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.repr
    }

    fn encoded_size_bound(&self) -> u64 {
        (self.n_chunks as u64)
            .saturating_mul(self.inner_bound)
            .saturating_add(self.index_len as u64)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        match self.encode_shard(input)? {
            Some(shard) => Ok(shard),
            // a shard with every inner chunk missing: just the index
            None => self.assemble(&vec![None; self.n_chunks]),
        }
    }

    fn encode_or_skip(&self, input: &[u8]) -> Result<Option<Vec<u8>>> {
        self.encode_shard(input)
    }

    fn encode_or_skip_block(&self, src: &[u8], place: BlockPlace<'_>) -> Result<Option<Vec<u8>>> {
        place.check(&self.repr, src.len())?;
        let encoded = self.encode_inner(src, place)?;
        if encoded.iter().all(Option::is_none) {
            return Ok(None);
        }
        self.assemble(&encoded).map(Some)
    }

    unsafe fn decode_into_block(
        &self,
        input: &[u8],
        out: &SharedOut<'_>,
        place: BlockPlace<'_>,
    ) -> Result<()> {
        place.check(&self.repr, out.len())?;
        self.decode_shard_block(input, out, place)
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        self.decode_shard(input, out)
    }

    fn inner_chunk_shape(&self) -> Option<&[u64]> {
        Some(&self.inner_shape)
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }

    fn decode_region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
        out: &mut [u8],
    ) -> Result<bool> {
        check_region(&self.repr, region, out.len())?;
        if region.shape == self.repr.shape {
            let Some(bytes) = source.get()? else {
                return Ok(false);
            };
            self.decode_shard(&bytes, out)?;
            return Ok(true);
        }
        if region.is_empty() {
            return Ok(source.size()?.is_some());
        }
        self.decode_partial(source, region, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::default_registry;

    fn repr() -> ChunkRepr {
        ChunkRepr::new(
            vec![4, 6],
            DataType::UInt16,
            FillValue::zero(DataType::UInt16),
        )
    }

    fn build(config: &str) -> Result<Codec> {
        let def: ExtensionDef = serde_json::from_str(&format!(
            r#"{{"name": "sharding_indexed", "configuration": {config}}}"#
        ))
        .unwrap();
        factory(&def, &repr(), &default_registry())
    }

    fn sharding(config: &str) -> Box<dyn ArrayToBytesCodec> {
        match build(config).unwrap() {
            Codec::ArrayToBytes(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn config_is_written_back_with_defaults() {
        let c = build(r#"{"chunk_shape": [2, 3]}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&c.to_def()).unwrap(),
            concat!(
                r#"{"name":"sharding_indexed","configuration":{"chunk_shape":[2,3],"#,
                r#""codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"#,
                r#""index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"#,
                r#""index_location":"end"}}"#
            )
        );
    }

    #[test]
    fn invalid_configurations_are_refused() {
        for (config, message) in [
            (
                r#"{"chunk_shape": [2, 4]}"#,
                "does not divide the shard shape [4, 6]",
            ),
            (
                r#"{"chunk_shape": [2]}"#,
                "has 1 dimensions but the shard has 2",
            ),
            (r#"{"chunk_shape": [0, 3]}"#, "has a zero"),
            (
                r#"{"chunk_shape": [2, 3], "index_location": "middle"}"#,
                "unknown variant",
            ),
            (r#"{"chunk_shape": [2, 3], "extra": 1}"#, "unknown field"),
            (
                r#"{"chunk_shape": [2, 3], "codecs": [{"name": "bytes"}]}"#,
                "\"endian\" is required",
            ),
        ] {
            let err = build(config).unwrap_err().to_string();
            assert!(err.contains(message), "{config}: {err}");
        }
    }

    #[test]
    fn all_fill_shards_are_not_stored() {
        let c = sharding(r#"{"chunk_shape": [2, 3]}"#);
        let zeros = vec![0u8; 48];
        assert_eq!(c.encode_or_skip(&zeros).unwrap(), None);
        // `encode` still produces a valid shard: the index alone
        let empty = c.encode(&zeros).unwrap();
        assert_eq!(empty.len(), 4 * 16 + 4);
        let mut out = vec![1u8; 48];
        c.decode_into(&empty, &mut out).unwrap();
        assert_eq!(out, zeros);
    }

    #[test]
    fn an_inner_chunk_of_the_wrong_size_is_an_error() {
        let c = sharding(
            r#"{"chunk_shape": [2, 3], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}"#,
        );
        let data: Vec<u8> = (0..48).collect();
        let mut shard = c.encode(&data).unwrap();
        let n = shard.len();
        // shorten inner chunk (0, 0) by one byte in the index
        let at = n - 4 * 16 + 8;
        shard[at..at + 8].copy_from_slice(&11u64.to_le_bytes());
        let mut out = vec![0u8; 48];
        let err = c.decode_into(&shard, &mut out).unwrap_err();
        assert!(
            matches!(&err, CodecError::InnerChunk { chunk, source }
            if chunk == &[0, 0] && matches!(**source, CodecError::SizeMismatch { .. })),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "inner chunk [0, 0] of the shard: bytes decoded to 11 bytes, expected 12"
        );
        // an entry longer than any inner chunk's encoding
        shard[at..at + 8].copy_from_slice(&13u64.to_le_bytes());
        let err = c.decode_into(&shard, &mut out).unwrap_err();
        assert!(matches!(err, CodecError::InvalidShardIndex { .. }), "{err}");
        // a truncated shard
        assert!(matches!(
            c.decode_into(&shard[..10], &mut out),
            Err(CodecError::Truncated { .. })
        ));
    }
}
