//! Resource limits of decoding untrusted chunks with the numcodecs compressors (the limits of
//! zarr-codecs' own codecs are in its tests/limits.rs): decompression bombs and headers that
//! claim huge sizes fail with errors, and decoding allocates no more than a small multiple of
//! the real input and output sizes.
//!
//! A counting global allocator tracks the bytes live and their peak; every test holds one lock
//! for its whole run, so the counts of one test are not mixed with another's (rayon threads
//! working for the measured call are counted, as they should be).

#![cfg(feature = "numcodecs")]

use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
use zarr_meta::{DataType, FillValue};
use zarr_numcodecs::default_registry;
use zarr_testkit::CountingAlloc;

/// Single requests above 8 GiB fail (as on a machine without that much memory), so that a
/// regression aborts quickly instead of paging.
#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::refusing_above(8 << 30);

/// What decoding may allocate: a small multiple of the stored and decoded sizes, plus a fixed
/// allowance for codec state (a compressor's context, error values, rayon bookkeeping).
fn allowance(input: usize, output: usize) -> usize {
    4 * (input + output) + (512 << 10)
}

fn chain(t: DataType, shape: Vec<u64>, json: &str) -> CodecChain {
    let repr = ChunkRepr::new(shape, t, FillValue::zero(t));
    CodecChain::from_json(json, &repr, &default_registry()).expect("a valid chain")
}

/// Decodes `stored` with `decode` and `decode_into`, expecting errors within the allowance.
#[track_caller]
fn assert_refused_within_bounds(chain: &CodecChain, stored: &[u8], what: &str) {
    // warm up per-thread codec contexts, which are allocated once
    let _ = chain.decode(&[0u8; 16]);
    let _ = chain.decode_into(&[0u8; 16], &mut vec![0u8; chain.decoded_len()]);
    let limit = allowance(stored.len(), chain.decoded_len());
    let (result, peak) = ALLOC.peak_of(|| chain.decode(stored).map(|b| b.len()));
    assert!(
        result.is_err(),
        "{what}: decode should fail, got {result:?}"
    );
    assert!(
        peak <= limit,
        "{what}: decode allocated {peak} bytes (input {}, output {}, limit {limit})",
        stored.len(),
        chain.decoded_len()
    );
    let mut out = vec![0u8; chain.decoded_len()];
    let (result, peak) = ALLOC.peak_of(|| chain.decode_into(stored, &mut out));
    assert!(result.is_err(), "{what}: decode_into should fail");
    assert!(
        peak <= limit,
        "{what}: decode_into allocated {peak} bytes (limit {limit})"
    );
}

/// 64 MiB of zeros, the payload of every bomb.
const BOMB: usize = 64 << 20;

/// A bomb for a numcodecs compressor: 64 MiB of zeros, written by the codec itself.
fn numcodecs_bomb(codec: &str) -> Vec<u8> {
    let json = format!(r#"[{{"name":"bytes"}},{codec}]"#);
    let big = chain(DataType::UInt8, vec![BOMB as u64], &json);
    big.encode(vec![0u8; BOMB], EncodeOptions::ENCODE_EMPTY)
        .expect("compresses")
        .expect("encoded")
}

#[test]
fn numcodecs_bombs_are_refused_within_bounds() {
    let _serial = ALLOC.serial();
    for codec in [
        r#"{"name":"numcodecs.zlib","configuration":{"level":9}}"#,
        r#"{"name":"numcodecs.lzma","configuration":{"preset":1}}"#,
        r#"{"name":"numcodecs.lz4","configuration":{}}"#,
        r#"{"name":"numcodecs.shuffle","configuration":{"elementsize":4}},{"name":"numcodecs.zlib","configuration":{"level":1}}"#,
    ] {
        let bomb = numcodecs_bomb(codec);
        assert!(bomb.len() < BOMB / 100, "{codec}: {}", bomb.len());
        let c = chain(
            DataType::UInt8,
            vec![4096],
            &format!(r#"[{{"name":"bytes"}},{codec}]"#),
        );
        assert_refused_within_bounds(&c, &bomb, codec);
    }
    // an lz4 header claiming 4 GiB is refused before allocating
    let c = chain(
        DataType::UInt8,
        vec![4096],
        r#"[{"name":"bytes"},{"name":"numcodecs.lz4","configuration":{}}]"#,
    );
    let mut lie = u32::MAX.to_le_bytes().to_vec();
    lie.extend_from_slice(&[0x1f; 16]);
    assert_refused_within_bounds(&c, &lie, "lz4 header claiming 4 GiB");
}

/// bzip2's decoder holds a fixed state of up to 3.6 MB (block size 900k, as the header says),
/// whatever the chunk; past that, decoding stays within the usual allowance.
#[test]
fn bz2_bombs_are_refused_within_a_fixed_state() {
    let _serial = ALLOC.serial();
    let codec = r#"{"name":"numcodecs.bz2","configuration":{"level":9}}"#;
    let bomb = numcodecs_bomb(codec);
    assert!(bomb.len() < BOMB / 100, "{}", bomb.len());
    let c = chain(
        DataType::UInt8,
        vec![4096],
        &format!(r#"[{{"name":"bytes"}},{codec}]"#),
    );
    let _ = c.decode(&[0u8; 16]);
    let limit = allowance(bomb.len(), c.decoded_len()) + (4 << 20);
    let (result, peak) = ALLOC.peak_of(|| c.decode(&bomb).map(|b| b.len()));
    assert!(result.is_err());
    assert!(
        peak <= limit,
        "bz2 bomb: decode allocated {peak} bytes (limit {limit})"
    );
    let mut out = vec![0u8; c.decoded_len()];
    let (result, peak) = ALLOC.peak_of(|| c.decode_into(&bomb, &mut out));
    assert!(result.is_err());
    assert!(
        peak <= limit,
        "bz2 bomb: decode_into allocated {peak} bytes (limit {limit})"
    );
}
