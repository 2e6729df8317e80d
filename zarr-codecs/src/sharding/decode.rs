//! Decoding shards: a whole shard into a buffer or into its block of a larger one, each inner
//! chunk straight into its place, and a region of a stored shard read through a byte-range
//! source (the index, then only the inner chunks the region needs).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use zarr_buffer::fill_pattern;
use zarr_grid::geometry::{regular_chunks_in_region, Region};
use zarr_grid::ChunkPart;

use crate::block::{Block, BlockBuffer};
use crate::buffer::AlignedBuffer;
use crate::error::{CodecError, Result};
use crate::parallel;
use crate::source::{single_range, ByteRange, ByteRangeSource};

use super::{IndexLocation, ShardingCodec};

/// A piece of work: one inner chunk's part of the output, and where its stored bytes are.
struct Job<'a> {
    part: &'a ChunkPart,
    data: Stored<'a>,
}

/// Where an inner chunk's stored bytes are.
#[derive(Clone, Copy)]
enum Stored<'a> {
    /// Not stored: the inner chunk reads as the fill value.
    Missing,
    /// Read already.
    Bytes(&'a [u8]),
    /// At `(offset, nbytes)` of the shard in a source of cheap requests, read where it is
    /// decoded.
    At(&'a dyn ByteRangeSource, u64, u64),
}

impl<'a> Stored<'a> {
    /// The stored bytes, read now when only their span is known; `None` when not stored.
    fn load(self) -> Result<Option<Cow<'a, [u8]>>> {
        match self {
            Stored::Missing => Ok(None),
            Stored::Bytes(bytes) => Ok(Some(Cow::Borrowed(bytes))),
            Stored::At(source, offset, nbytes) => {
                let range = ByteRange::Range {
                    start: offset,
                    end: offset + nbytes,
                };
                // the shard was there for its index: gone now, it reads as cut short
                let got = source.get_ranges(&[range])?.ok_or(CodecError::ShortRead {
                    expected: nbytes,
                    got: 0,
                })?;
                Ok(Some(Cow::Owned(single_range(got, nbytes)?)))
            }
        }
    }
}

impl ShardingCodec {
    /// Decodes the inner chunks of `jobs` into `out`, in parallel, each into its block (the
    /// job's `in_region`, in positions of `out`); missing ones read as the fill value.
    fn run_jobs(&self, jobs: &[Job<'_>], out: &mut Block<'_>) -> Result<()> {
        let elem = self.repr.element_size();
        let fill = self.repr.fill_value.as_bytes();
        let inner_len = self.inner_len;
        let mut blocks = out.split(jobs.iter().map(|job| &job.part.in_region))?;
        let run_one = |scratch: &mut AlignedBuffer, job: &Job<'_>, block: &mut Block<'_>| {
            let part = &job.part;
            let wrap = |e: CodecError| CodecError::InnerChunk {
                chunk: part.chunk.iter().map(|&g| g as u64).collect(),
                source: Box::new(e),
            };
            let Some(bytes) = job.data.load()? else {
                return Ok(block.fill(fill)?);
            };
            if part.in_chunk.shape == self.inner_shape {
                if let Some(run) = block.as_contiguous_mut() {
                    // the whole inner chunk is one run of the output: decode straight into it
                    return self.inner.decode_into(&bytes, run).map_err(wrap);
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
            self.inner
                .decode_into_slice(&bytes, scratch)
                .map_err(wrap)?;
            Ok(block.copy_from(scratch, &self.inner_shape, &part.in_chunk.start)?)
        };
        // the calling thread decodes too (`parallel`)
        let mut work: Vec<(&Job<'_>, &mut Block<'_>)> = jobs.iter().zip(&mut blocks).collect();
        parallel::try_for_each_mut(&mut work, AlignedBuffer::new, |scratch, _, (job, block)| {
            run_one(scratch, job, block)
        })
    }

    /// Decodes a whole stored shard into `out`.
    pub(super) fn decode_shard(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        if out.len() != self.len {
            return Err(CodecError::BufferLength {
                what: "the output buffer",
                expected: self.len as u64,
                got: out.len() as u64,
            });
        }
        let mut out = BlockBuffer::new(out, &self.repr.shape, self.repr.element_size())?;
        self.decode_shard_block(input, &mut out.whole())
    }

    /// Decodes a whole stored shard into `out` (a block of the shard's shape), each inner
    /// chunk straight into its place.
    pub(super) fn decode_shard_block(&self, input: &[u8], out: &mut Block<'_>) -> Result<()> {
        let spans = self.spans(input)?;
        if spans.iter().all(Option::is_none) {
            return Ok(out.fill(self.repr.fill_value.as_bytes())?);
        }
        let whole = Region::whole(&self.repr.shape);
        // the parts come in C order of the inner chunks, as the index does
        let parts: Vec<ChunkPart> = regular_chunks_in_region(&self.inner_shape, &whole).collect();
        let jobs: Vec<Job<'_>> = parts
            .iter()
            .zip(&spans)
            .map(|(part, span)| Job {
                part,
                data: span.map_or(Stored::Missing, |(o, n)| {
                    Stored::Bytes(&input[o as usize..(o + n) as usize])
                }),
            })
            .collect();
        self.run_jobs(&jobs, out)
    }

    /// Reads the shard index (one request); `None` when the shard is not stored.
    pub(super) fn read_index(&self, source: &dyn ByteRangeSource) -> Result<Option<AlignedBuffer>> {
        let index_range = match self.location {
            IndexLocation::Start => ByteRange::Range {
                start: 0,
                end: self.index_len as u64,
            },
            IndexLocation::End => ByteRange::Suffix(self.index_len as u64),
        };
        let Some(got) = source.get_ranges(&[index_range])? else {
            return Ok(None);
        };
        let index_bytes = single_range(got, self.index_len as u64)?;
        Ok(Some(self.decode_index(&index_bytes)?))
    }

    /// Reads the stored inner chunks of `spans` (their `(offset, nbytes)` in the shard) with
    /// one request, byte ranges that touch or overlap coalesced; `None` when the shard is gone.
    pub(super) fn fetch_spans(
        source: &dyn ByteRangeSource,
        spans: &[Option<(u64, u64)>],
    ) -> Result<Option<Fetched>> {
        let mut wanted: Vec<(u64, u64, usize)> = spans
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.map(|(offset, nbytes)| (offset, offset + nbytes, i)))
            .collect();
        wanted.sort_unstable();
        let mut groups: Vec<(u64, u64)> = Vec::new();
        let mut at = vec![None; spans.len()];
        for &(start, end, i) in &wanted {
            match groups.last_mut() {
                Some(g) if start <= g.1 => g.1 = g.1.max(end),
                _ => groups.push((start, end)),
            }
            at[i] = Some(groups.len() - 1);
        }
        if groups.is_empty() {
            return Ok(Some(Fetched {
                bytes: Vec::new(),
                groups,
                at,
                spans: spans.to_vec(),
            }));
        }
        let ranges: Vec<ByteRange> = groups
            .iter()
            .map(|&(start, end)| ByteRange::Range { start, end })
            .collect();
        let Some(bytes) = source.get_ranges(&ranges)? else {
            return Ok(None);
        };
        if bytes.len() != ranges.len() {
            return Err(CodecError::SourceRanges {
                expected: ranges.len(),
                got: bytes.len(),
            });
        }
        for (b, &(start, end)) in bytes.iter().zip(&groups) {
            if b.len() as u64 != end - start {
                return Err(CodecError::ShortRead {
                    expected: end - start,
                    got: b.len() as u64,
                });
            }
        }
        Ok(Some(Fetched {
            bytes,
            groups,
            at,
            spans: spans.to_vec(),
        }))
    }

    /// The spans in the shard of the inner chunks `lins` (C-order indices), from the decoded
    /// index `words`, each entry checked.
    pub(super) fn spans_of(
        &self,
        words: &[u64],
        lins: impl Iterator<Item = usize>,
    ) -> Result<Vec<Span>> {
        lins.map(|lin| self.entry(words, lin, None)).collect()
    }

    /// The shard's index for a read (never for an update, which reads the stored one): the
    /// one `source` keeps ([`ByteRangeSource::cached_index`]; `true`), else read (one
    /// request) and offered to it (`false`). `None` when the shard is not stored.
    fn index_for_read(
        &self,
        source: &dyn ByteRangeSource,
    ) -> Result<Option<(Arc<AlignedBuffer>, bool)>> {
        if let Some(index) = source.cached_index() {
            // one of another layout (which a source keyed by value never gives) is not used
            if index.as_words().len() == 2 * self.n_chunks {
                return Ok(Some((index, true)));
            }
            source.drop_index();
        }
        self.fresh_index(source)
            .map(|index| index.map(|index| (index, false)))
    }

    /// Reads the shard's index (one request) and offers it to `source`; `None` when the shard
    /// is not stored.
    fn fresh_index(&self, source: &dyn ByteRangeSource) -> Result<Option<Arc<AlignedBuffer>>> {
        let Some(index) = self.read_index(source)? else {
            return Ok(None);
        };
        let index = Arc::new(index);
        source.keep_index(&index);
        Ok(Some(index))
    }

    /// Runs `read` with the words of the shard's index ([`Self::index_for_read`]); `read`
    /// answers `None` when the shard is gone. `None` when the shard is not stored.
    ///
    /// With an index the source kept from an earlier read, an outcome a stale index explains
    /// (the shard was rewritten elsewhere since: it is gone, shorter, or its bytes where the
    /// index says do not decode) is not trusted: the kept index is dropped, read again, and
    /// `read` runs once more, whose outcome stands. A failing request is not such an outcome
    /// (it is returned as it is).
    pub(super) fn with_index<R>(
        &self,
        source: &dyn ByteRangeSource,
        mut read: impl FnMut(&[u64]) -> Result<Option<R>>,
    ) -> Result<Option<R>> {
        let Some((index, kept)) = self.index_for_read(source)? else {
            return Ok(None);
        };
        let outcome = read(index.as_words());
        match &outcome {
            _ if !kept => return outcome,
            Ok(Some(_)) => return outcome,
            Err(e) if !stale_sign(e) => return outcome,
            _ => {}
        }
        source.drop_index();
        let Some(index) = self.fresh_index(source)? else {
            return Ok(None);
        };
        read(index.as_words())
    }

    /// Where the inner chunks of `spans` are: from a source of cheap requests each is read
    /// where it is decoded ([`ByteRangeSource::cheap_requests`]); from any other they are read
    /// now, in one request ([`Self::fetch_spans`]), into `fetched`. `None` when the shard is
    /// gone.
    fn stored<'a>(
        source: &'a dyn ByteRangeSource,
        spans: &[Span],
        fetched: &'a mut Option<Fetched>,
    ) -> Result<Option<Vec<Stored<'a>>>> {
        if source.cheap_requests() {
            return Ok(Some(
                spans
                    .iter()
                    .map(|s| s.map_or(Stored::Missing, |(o, n)| Stored::At(source, o, n)))
                    .collect(),
            ));
        }
        let Some(got) = Self::fetch_spans(source, spans)? else {
            return Ok(None);
        };
        let got: &Fetched = fetched.insert(got);
        Ok(Some(
            (0..spans.len())
                .map(|i| got.get(i).map_or(Stored::Missing, Stored::Bytes))
                .collect(),
        ))
    }

    /// Reads the index and the inner chunks `region` needs (two requests, or one per inner
    /// chunk from a source of cheap requests; one fewer with an index the source keeps) and
    /// decodes them.
    pub(super) fn decode_partial(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
        out: &mut [u8],
    ) -> Result<bool> {
        let parts: Vec<ChunkPart> = regular_chunks_in_region(&self.inner_shape, region).collect();
        let mut out = BlockBuffer::new(out, &region.shape, self.repr.element_size())?;
        let done = self.with_index(source, |words| {
            let spans = self.spans_of(words, parts.iter().map(|p| self.ravel(&p.chunk)))?;
            let mut fetched = None;
            let Some(stored) = Self::stored(source, &spans, &mut fetched)? else {
                return Ok(None);
            };
            let jobs: Vec<Job<'_>> = parts
                .iter()
                .zip(stored)
                .map(|(part, data)| Job { part, data })
                .collect();
            self.run_jobs(&jobs, &mut out.whole())?;
            Ok(Some(()))
        })?;
        Ok(done.is_some())
    }

    /// Reads the index and the inner chunks the points fall in (two requests, or one per inner
    /// chunk from a source of cheap requests; one fewer with an index the source keeps),
    /// decodes the points of each inner chunk as the inner chain does (each inner chunk once,
    /// in parallel) and writes them to `out` in the order of `points`; missing inner chunks
    /// read as the fill value.
    pub(super) fn decode_points_partial(
        &self,
        source: &dyn ByteRangeSource,
        points: &[Vec<u64>],
        out: &mut [u8],
    ) -> Result<bool> {
        // the points by inner chunk (C order): their positions inside it and in `out`
        let mut by_inner: BTreeMap<usize, InnerPoints> = BTreeMap::new();
        for (i, p) in points.iter().enumerate() {
            let chunk: Vec<i64> = p
                .iter()
                .zip(&self.inner_shape)
                .map(|(&x, &n)| (x / n) as i64)
                .collect();
            let local: Vec<u64> = p
                .iter()
                .zip(&self.inner_shape)
                .map(|(&x, &n)| x % n)
                .collect();
            let entry = by_inner.entry(self.ravel(&chunk)).or_default();
            entry.0.push(local);
            entry.1.push(i);
        }
        let groups: Vec<(usize, InnerPoints)> = by_inner.into_iter().collect();
        let values = self.with_index(source, |words| {
            let spans = self.spans_of(words, groups.iter().map(|(lin, _)| *lin))?;
            let mut fetched = None;
            let Some(stored) = Self::stored(source, &spans, &mut fetched)? else {
                return Ok(None);
            };
            self.decode_groups(&groups, &stored).map(Some)
        })?;
        let Some(values) = values else {
            return Ok(false);
        };
        let elem = self.repr.element_size();
        for ((_, (_, outputs)), values) in groups.iter().zip(&values) {
            for (&i, v) in outputs.iter().zip(values.chunks_exact(elem)) {
                out[i * elem..(i + 1) * elem].copy_from_slice(v);
            }
        }
        Ok(true)
    }

    /// The values of the points of each group (an inner chunk and its points), decoded from
    /// the group's stored bytes in `stored` (fill value where not stored), in parallel.
    fn decode_groups(
        &self,
        groups: &[(usize, InnerPoints)],
        stored: &[Stored<'_>],
    ) -> Result<Vec<Vec<u8>>> {
        let elem = self.repr.element_size();
        let fill = self.repr.fill_value.as_bytes();
        let decode_one = |g: usize, (lin, (locals, _)): &(usize, InnerPoints)| -> Result<Vec<u8>> {
            let mut values = vec![0u8; locals.len() * elem];
            match stored[g].load()? {
                None => fill_pattern(&mut values, fill),
                Some(bytes) => self
                    .inner
                    .decode_points_in(&bytes, locals, &mut values)
                    .map_err(|e| CodecError::InnerChunk {
                        chunk: self.unravel(*lin),
                        source: Box::new(e),
                    })?,
            }
            Ok(values)
        };
        // the calling thread decodes too (`parallel`)
        parallel::try_map(groups, decode_one)
    }
}

/// Whether a read with a kept shard index that failed with `e` may have failed because the
/// index is stale: anything but a failing request (a range outside the value is such a sign).
fn stale_sign(e: &CodecError) -> bool {
    match e {
        CodecError::InnerChunk { source, .. } => stale_sign(source),
        CodecError::Source { source } => source.is_out_of_range(),
        _ => true,
    }
}

/// Where an inner chunk lies in the shard, `(offset, nbytes)`; `None` when it is not stored.
pub(super) type Span = Option<(u64, u64)>;

/// The points of one inner chunk: their positions inside it and their indices in the output.
type InnerPoints = (Vec<Vec<u64>>, Vec<usize>);

/// The inner chunks one request fetched: the coalesced byte ranges and where each wanted span
/// lies in them.
pub(super) struct Fetched {
    bytes: Vec<Vec<u8>>,
    groups: Vec<(u64, u64)>,
    /// For each span, the range that holds it (`None`: not stored).
    at: Vec<Option<usize>>,
    spans: Vec<Option<(u64, u64)>>,
}

impl Fetched {
    /// The stored bytes of span `i`, if it is stored.
    pub(super) fn get(&self, i: usize) -> Option<&[u8]> {
        let (offset, nbytes) = self.spans[i]?;
        let g = self.at[i]?;
        let from = (offset - self.groups[g].0) as usize;
        Some(&self.bytes[g][from..from + nbytes as usize])
    }
}
