//! The body of fuzz target `codec_vlen`: a stored vlen chunk decoded with bounded allocation.

use crate::vlen::{decode, encode, VLEN_BYTES, VLEN_UTF8};

/// The first byte is the element count the chunk must hold, the rest the stored chunk. A chunk
/// that decodes re-encodes to the stored bytes without what follows its last element, and its
/// UTF-8 check never panics.
pub fn run(data: &[u8]) {
    let Some((&expected, stored)) = data.split_first() else {
        return;
    };
    let Ok(chunk) = decode(stored, u64::from(expected), VLEN_BYTES) else {
        return;
    };
    assert_eq!(chunk.len(), usize::from(expected));
    let again = encode(chunk.iter(), VLEN_BYTES).expect("a decoded chunk re-encodes");
    assert_eq!(
        stored.get(..again.len()),
        Some(&again[..]),
        "re-encoding differs"
    );
    let _ = chunk.to_strings(VLEN_UTF8);
}
