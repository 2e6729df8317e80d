//! Bounded reading of a streaming decompressor (`zlib`, `bz2`, `lzma`): never more than the
//! bound is produced or allocated.

use std::io::{self, Read};

use crate::limit_usize;
use zarr_codecs::AlignedBuffer;
use zarr_codecs::{CodecError, Result};

fn io_error(codec: &'static str, e: io::Error) -> CodecError {
    CodecError::Decompress {
        codec,
        source: e.into(),
    }
}

/// Reads until `buf` is full or the stream ends; the count read.
fn fill(codec: &'static str, reader: &mut dyn Read, buf: &mut [u8]) -> Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(codec, e)),
        }
    }
    Ok(filled)
}

/// Whether the stream has ended (reading on to the end checks its trailer).
fn at_end(codec: &'static str, reader: &mut dyn Read) -> Result<bool> {
    let mut probe = [0u8; 1];
    Ok(fill(codec, reader, &mut probe)? == 0)
}

/// Reads `reader` to its end into a new buffer: at most `max_decoded` bytes, starting from
/// `hint` (the size the stream is expected to have) and doubling.
///
/// # Errors
/// [`CodecError::ExceedsBound`] when the stream holds more than `max_decoded` bytes; the
/// decompressor's error, as [`CodecError::Decompress`].
pub(crate) fn read_bounded(
    codec: &'static str,
    reader: &mut dyn Read,
    hint: usize,
    max_decoded: u64,
) -> Result<AlignedBuffer> {
    let max = limit_usize(max_decoded);
    let mut buf = AlignedBuffer::zeroed(hint.clamp(64, 1 << 30).min(max));
    let mut filled = 0;
    loop {
        filled += fill(codec, reader, &mut buf[filled..])?;
        if filled < buf.len() {
            break;
        }
        if buf.len() >= max {
            if at_end(codec, reader)? {
                break;
            }
            return Err(CodecError::ExceedsBound {
                codec,
                limit: max_decoded,
            });
        }
        buf.resize(buf.len().saturating_mul(2).max(64).min(max));
    }
    buf.truncate(filled);
    Ok(buf)
}

/// Reads `reader` to its end into `out`, which it must fill exactly.
///
/// # Errors
/// [`CodecError::SizeMismatch`] for a shorter stream, [`CodecError::ExceedsBound`] for a
/// longer one, and the decompressor's error.
pub(crate) fn read_exact(codec: &'static str, reader: &mut dyn Read, out: &mut [u8]) -> Result<()> {
    let filled = fill(codec, reader, out)?;
    if filled < out.len() {
        return Err(CodecError::SizeMismatch {
            codec,
            expected: out.len() as u64,
            got: filled as u64,
        });
    }
    if !at_end(codec, reader)? {
        return Err(CodecError::ExceedsBound {
            codec,
            limit: out.len() as u64,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_sizes() {
        let data = vec![7u8; 1000];
        let b = read_bounded("t", &mut &data[..], 10, 1000).unwrap();
        assert_eq!(b.as_bytes(), &data[..]);
        assert!(matches!(
            read_bounded("t", &mut &data[..], 10, 999),
            Err(CodecError::ExceedsBound { .. })
        ));
        let mut out = vec![0u8; 1000];
        read_exact("t", &mut &data[..], &mut out).unwrap();
        assert!(matches!(
            read_exact("t", &mut &data[..], &mut [0u8; 999]),
            Err(CodecError::ExceedsBound { .. })
        ));
        assert!(matches!(
            read_exact("t", &mut &data[..], &mut [0u8; 1001]),
            Err(CodecError::SizeMismatch { .. })
        ));
        assert_eq!(read_bounded("t", &mut &[][..], 0, 10).unwrap().len(), 0);
    }
}
