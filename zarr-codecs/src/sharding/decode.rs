//! Decoding shards: a whole shard into a buffer or into its block of a larger one, each inner
//! chunk straight into its place, and a region of a stored shard read through a byte-range
//! source (the index, then only the inner chunks the region needs).

use rayon::prelude::*;
use zarr_grid::geometry::{regular_chunks_in_region, Region};
use zarr_grid::ChunkPart;

use crate::block::{Block, BlockBuffer};
use crate::buffer::AlignedBuffer;
use crate::error::{CodecError, Result};
use crate::source::{single_range, ByteRange, ByteRangeSource};

use super::{IndexLocation, ShardingCodec};

/// A piece of work: one inner chunk's part of the output, and its stored bytes if any.
struct Job<'a> {
    part: ChunkPart,
    data: Option<&'a [u8]>,
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
            let Some(bytes) = job.data else {
                return Ok(block.fill(fill)?);
            };
            if part.in_chunk.shape == self.inner_shape {
                if let Some(run) = block.as_contiguous_mut() {
                    // the whole inner chunk is one run of the output: decode straight into it
                    return self.inner.decode_into(bytes, run).map_err(wrap);
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
            Ok(block.copy_from(scratch, &self.inner_shape, &part.in_chunk.start)?)
        };
        if jobs.len() <= 1 {
            let mut scratch = AlignedBuffer::new();
            return jobs
                .iter()
                .zip(&mut blocks)
                .try_for_each(|(job, block)| run_one(&mut scratch, job, block));
        }
        jobs.par_iter()
            .zip(blocks.par_iter_mut())
            .try_for_each_init(AlignedBuffer::new, |scratch, (job, block)| {
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
        let jobs: Vec<Job<'_>> = regular_chunks_in_region(&self.inner_shape, &whole)
            .zip(&spans)
            .map(|(part, span)| Job {
                part,
                data: span.map(|(o, n)| &input[o as usize..(o + n) as usize]),
            })
            .collect();
        self.run_jobs(&jobs, out)
    }

    /// Reads the index and the inner chunks `region` needs (two requests) and decodes them.
    pub(super) fn decode_partial(
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
        let mut out = BlockBuffer::new(out, &region.shape, self.repr.element_size())?;
        self.run_jobs(&jobs, &mut out.whole())?;
        Ok(true)
    }
}
