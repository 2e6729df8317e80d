//! Decoding shards: a whole shard into a buffer or into its block of a larger one, each inner
//! chunk straight into its place, and a region of a stored shard read through a byte-range
//! source (the index, then only the inner chunks the region needs).

use rayon::prelude::*;
use zarr_grid::geometry::{regular_chunks_in_region, Region};
use zarr_grid::ChunkPart;

use crate::block::{BlockPlace, SharedOut};
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
                chunk: part.chunk.iter().map(|&g| g as u64).collect(),
                source: Box::new(e),
            };
            let dst = part.in_region.shifted(base);
            let Some(bytes) = job.data else {
                // SAFETY: the jobs' blocks partition the caller's block of the output, so
                // blocks of different jobs never overlap.
                unsafe { shared.fill_block(out_shape, &dst.start, &dst.shape, fill) };
                return Ok(());
            };
            if part.in_chunk.shape == self.inner_shape && dst.is_contiguous_in(out_shape) {
                let offset = dst.linear_offset(out_shape) as usize * elem;
                // SAFETY: this job's block, contiguous in the output; see above.
                let out = unsafe { shared.run(offset, inner_len) };
                return self.inner.decode_into(bytes, out).map_err(wrap);
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

    /// Decodes a whole stored shard into `out`.
    pub(super) fn decode_shard(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
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
    pub(super) fn decode_shard_block(
        &self,
        input: &[u8],
        shared: &SharedOut<'_>,
        place: BlockPlace<'_>,
    ) -> Result<()> {
        let spans = self.spans(input)?;
        if spans.iter().all(Option::is_none) {
            // SAFETY: the caller's block.
            let fill = self.repr.fill_value.as_bytes();
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
        let zeros = vec![0u64; region.rank()];
        self.run_jobs(&jobs, &SharedOut::new(out), &region.shape, &zeros)?;
        Ok(true)
    }
}
