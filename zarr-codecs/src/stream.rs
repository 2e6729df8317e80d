//! The plumbing of the bytes -> bytes codecs over a streaming compressor (`gzip` here,
//! zarr-numcodecs' `zlib`, `bz2` and `lzma`): one place that maps the library's I/O errors,
//! bounds decoding (never more than the bound is produced or allocated), checks that a stream
//! fills the caller's buffer exactly, and refuses bytes after the stream's end. A codec states
//! only its library calls:
//!
//! ```
//! use zarr_codecs::stream;
//!
//! // a "compressor" that stores the chunk as it is: its decoder reads the stored bytes
//! let data = vec![7u8; 1000];
//! let stored = stream::compress("copy", 1000, |mut out| {
//!     out.extend_from_slice(&data);
//!     Ok(out)
//! })?;
//! let unread = |_: &&[u8]| 0;
//! let decoded = stream::decode("copy", &stored[..], unread, 64, 1000)?;
//! assert_eq!(decoded.as_bytes(), &data[..]);
//! // a stream longer than the bound, or than the caller's buffer, is an error
//! assert!(stream::decode("copy", &stored[..], unread, 64, 999).is_err());
//! assert!(stream::decode_into("copy", &stored[..], unread, &mut [0u8; 999]).is_err());
//! // and so is input the decoder left after the end of its stream
//! let err = stream::decode("copy", &stored[..], |_| 3, 64, 1000).unwrap_err();
//! assert!(err.to_string().contains("3 trailing bytes after the stream"), "{err}");
//! # Ok::<(), zarr_codecs::CodecError>(())
//! ```

use std::io::{self, Read};

use crate::buffer::AlignedBuffer;
use crate::codec::limit_usize;
use crate::error::{CodecError, Result};

/// Encodes through a streaming encoder: `encode` writes the chunk into the `Vec` it is given
/// (with room for `bound` bytes, the encoder's worst case) and returns the finished stream.
///
/// # Errors
/// The encoder's I/O error, as [`CodecError::Compressor`] of `codec`.
pub fn compress(
    codec: &'static str,
    bound: u64,
    encode: impl FnOnce(Vec<u8>) -> io::Result<Vec<u8>>,
) -> Result<Vec<u8>> {
    encode(Vec::with_capacity(limit_usize(bound))).map_err(|e| CodecError::Compressor {
        codec,
        source: e.into(),
    })
}

/// Decodes a whole stream into a new buffer: at most `max_decoded` bytes, starting from `hint`
/// (the size the stream is expected to have) and doubling; `unread` gives the count of input
/// bytes the decoder has not consumed, which must be none once the stream ends.
///
/// # Errors
/// [`CodecError::ExceedsBound`] when the stream holds more than `max_decoded` bytes,
/// [`CodecError::Corrupt`] for bytes after its end, and the decompressor's error, as
/// [`CodecError::Decompress`].
pub fn decode<R: Read>(
    codec: &'static str,
    mut decoder: R,
    unread: impl Fn(&R) -> usize,
    hint: usize,
    max_decoded: u64,
) -> Result<AlignedBuffer> {
    let buf = read_bounded(codec, &mut decoder, hint, max_decoded)?;
    check_consumed(codec, unread(&decoder))?;
    Ok(buf)
}

/// Decodes a whole stream into `out`, which it must fill exactly; `unread` as for [`decode`].
///
/// # Errors
/// [`CodecError::SizeMismatch`] for a shorter stream, [`CodecError::ExceedsBound`] for a
/// longer one, [`CodecError::Corrupt`] for bytes after its end, and the decompressor's error.
pub fn decode_into<R: Read>(
    codec: &'static str,
    mut decoder: R,
    unread: impl Fn(&R) -> usize,
    out: &mut [u8],
) -> Result<()> {
    read_exact(codec, &mut decoder, out)?;
    check_consumed(codec, unread(&decoder))
}

/// Fails when the decoder left input unread after the end of the stream.
fn check_consumed(codec: &'static str, unread: usize) -> Result<()> {
    if unread == 0 {
        Ok(())
    } else {
        Err(CodecError::corrupt(
            codec,
            format!("{unread} trailing bytes after the stream"),
        ))
    }
}

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
fn read_bounded(
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
fn read_exact(codec: &'static str, reader: &mut dyn Read, out: &mut [u8]) -> Result<()> {
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
