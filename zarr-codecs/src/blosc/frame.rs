//! Blosc 1 buffers of the kinds most data holds, decoded here rather than by c-blosc: LZ4
//! (`lz4` and `lz4hc`) and Zstandard blocks, byte-shuffled or not, and buffers stored as they
//! are. Bit shuffle and the BloscLZ, Snappy and zlib compressors go to c-blosc.
//!
//! Why: `blosc_decompress_ctx` allocates its block scratch (two blocks, 512 KiB for the
//! 256 KiB blocks of a 512 KiB chunk of 16-bit data at level 5) on every call, and that memory
//! often comes fresh from the kernel, page fault by page fault; `blosc_getitem` does the same
//! for a prefix. Here a shuffled block is decompressed into the thread's codec scratch buffer
//! and unshuffled from there into the output, and a prefix decodes only the blocks it covers.
//!
//! The layout (c-blosc's `README_HEADER.rst` and `blosc_d`): a 16-byte header (format version
//! 2, the compressor's format version, flags, type size, then the decompressed size, the block
//! size and the compressed size as little-endian 32-bit integers); unless the buffer is stored
//! as it is (flag `0x02`), one 32-bit offset per block, and at each offset the block's
//! streams: the block is split into `typesize` streams (one per byte plane) when flag `0x10`
//! is clear, the type size is at most 16, the block holds at least 128 elements and it is not
//! the shorter last block; otherwise one. Each stream is a 32-bit compressed size and its
//! bytes, stored as they are when that size is the stream's decompressed size. Flag `0x01`
//! with a type size above 1: the block's bytes are byte-shuffled.

use crate::byteshuffle::unshuffle;
use crate::error::{CodecError, Result};
use crate::scratch::with_codec_scratch;

use super::NAME;

const HEADER: usize = 16;
const DOSHUFFLE: u8 = 0x01;
const MEMCPYED: u8 = 0x02;
const DOBITSHUFFLE: u8 = 0x04;
const FUTURE_FLAGS: u8 = 0x08;
const DONT_SPLIT: u8 = 0x10;
/// c-blosc's `MAX_SPLITS` and `MIN_BUFFERSIZE`: the conditions for a split block.
const MAX_SPLITS: usize = 16;
const MIN_BUFFERSIZE: usize = 128;
const FORMAT_VERSION: u8 = 2;
/// The compressor formats (flags bits 5..8) decoded here, and their one format version.
const LZ4_FORMAT: u8 = 1;
#[cfg(feature = "zstd")]
const ZSTD_FORMAT: u8 = 4;
const COMPRESSOR_VERSION: u8 = 1;

/// How a stream's bytes are compressed.
#[derive(Debug, Clone, Copy)]
enum Compressor {
    Lz4,
    #[cfg(feature = "zstd")]
    Zstd,
}

/// A Blosc buffer this module decodes.
#[derive(Debug)]
pub(super) struct Frame<'a> {
    input: &'a [u8],
    /// `None`: the bytes are stored as they are, after the header.
    compressor: Option<Compressor>,
    shuffled: bool,
    split_allowed: bool,
    typesize: usize,
    nbytes: usize,
    blocksize: usize,
}

fn corrupt(reason: impl Into<String>) -> CodecError {
    CodecError::corrupt(NAME, reason.into())
}

fn le32(input: &[u8], at: usize) -> Option<u32> {
    let bytes = input.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

impl<'a> Frame<'a> {
    /// The buffer `input`, whose header c-blosc validated (it states `input.len()` compressed
    /// bytes and `nbytes` decompressed ones), when this module decodes it; `None` sends it to
    /// c-blosc, which also reports the faults of a header it refuses.
    pub(super) fn native(input: &'a [u8], nbytes: usize) -> Option<Frame<'a>> {
        let header = input.get(..HEADER)?;
        let (flags, typesize) = (header[2], usize::from(header[3]));
        let blocksize = le32(header, 8)? as usize;
        if header[0] != FORMAT_VERSION
            || flags & FUTURE_FLAGS != 0
            || typesize == 0
            || blocksize == 0
            || blocksize > nbytes
            || blocksize > super::ffi::BLOSC_MAX_BLOCKSIZE as usize
        {
            return None;
        }
        let compressor = if flags & MEMCPYED != 0 {
            if nbytes.checked_add(HEADER) != Some(input.len()) {
                return None;
            }
            None
        } else {
            if flags & DOBITSHUFFLE != 0 || header[1] != COMPRESSOR_VERSION {
                return None;
            }
            Some(match flags >> 5 {
                LZ4_FORMAT => Compressor::Lz4,
                #[cfg(feature = "zstd")]
                ZSTD_FORMAT => Compressor::Zstd,
                _ => return None,
            })
        };
        Some(Frame {
            input,
            compressor,
            shuffled: flags & DOSHUFFLE != 0 && typesize > 1,
            split_allowed: flags & DONT_SPLIT == 0,
            typesize,
            nbytes,
            blocksize,
        })
    }

    /// Decodes the first `out.len()` (at most the decompressed size) bytes: the blocks that
    /// hold them, no others.
    pub(super) fn decode_prefix(&self, out: &mut [u8]) -> Result<()> {
        if out.len() > self.nbytes {
            return Err(corrupt(format!(
                "{} bytes asked of a buffer of {}",
                out.len(),
                self.nbytes
            )));
        }
        let Some(compressor) = self.compressor else {
            out.copy_from_slice(&self.input[HEADER..HEADER + out.len()]);
            return Ok(());
        };
        let nblocks = self.nbytes.div_ceil(self.blocksize);
        if nblocks > (self.input.len() - HEADER) / 4 {
            return Err(corrupt(format!(
                "{nblocks} block offsets do not fit in {} bytes",
                self.input.len()
            )));
        }
        for (j, dst) in out.chunks_mut(self.blocksize).enumerate() {
            let bsize = self.blocksize.min(self.nbytes - j * self.blocksize);
            if dst.len() == bsize && !self.shuffled {
                self.decompress_block(compressor, j, dst)?;
                continue;
            }
            // into the codec scratch, then unshuffled or copied (the bytes `dst` wants)
            let mut via = |tmp: &mut [u8]| -> Result<()> {
                self.decompress_block(compressor, j, tmp)?;
                if self.shuffled {
                    unshuffle(tmp, self.typesize, dst);
                } else {
                    dst.copy_from_slice(&tmp[..dst.len()]);
                }
                Ok(())
            };
            match with_codec_scratch(bsize, &mut via) {
                Some(done) => done?,
                None => {
                    let mut tmp = Vec::new();
                    tmp.try_reserve_exact(bsize).map_err(|_| {
                        corrupt(format!("cannot allocate a block of {bsize} bytes"))
                    })?;
                    tmp.resize(bsize, 0);
                    via(&mut tmp)?;
                }
            }
        }
        Ok(())
    }

    /// Decompresses block `j` (still shuffled, if it is) into `dst`, its whole size.
    fn decompress_block(&self, compressor: Compressor, j: usize, dst: &mut [u8]) -> Result<()> {
        let bsize = dst.len();
        let last_short = bsize < self.blocksize;
        let nsplits = if self.split_allowed
            && self.typesize <= MAX_SPLITS
            && bsize / self.typesize >= MIN_BUFFERSIZE
            && !last_short
        {
            self.typesize
        } else {
            1
        };
        let neblock = bsize / nsplits;
        if neblock * nsplits != bsize {
            return Err(corrupt(format!(
                "block of {bsize} bytes is not {nsplits} streams"
            )));
        }
        let start = le32(self.input, HEADER + 4 * j).ok_or_else(|| corrupt("truncated"))?;
        let mut at = start as usize;
        for stream in dst.chunks_exact_mut(neblock) {
            let csize = le32(self.input, at)
                .ok_or_else(|| corrupt(format!("block {j}: a stream header past the end")))?;
            at += 4;
            let bytes = usize::try_from(csize)
                .ok()
                .and_then(|c| self.input.get(at..at.checked_add(c)?))
                .ok_or_else(|| {
                    corrupt(format!("block {j}: a stream of {csize} bytes past the end"))
                })?;
            at += bytes.len();
            if bytes.len() == neblock {
                stream.copy_from_slice(bytes);
                continue;
            }
            let got = match compressor {
                Compressor::Lz4 => {
                    lz4::block::decompress_to_buffer(bytes, Some(neblock as i32), stream)
                        .map_err(|e| corrupt(format!("block {j}: lz4: {e}")))?
                }
                #[cfg(feature = "zstd")]
                Compressor::Zstd => crate::zstd::decompress_to(bytes, stream).map_err(|code| {
                    corrupt(format!(
                        "block {j}: zstd: {}",
                        crate::zstd::error_name(code)
                    ))
                })?,
            };
            if got != neblock {
                return Err(corrupt(format!(
                    "block {j}: a stream decompressed to {got} bytes, not {neblock}"
                )));
            }
        }
        Ok(())
    }
}
