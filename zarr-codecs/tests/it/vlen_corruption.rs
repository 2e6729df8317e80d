//! Corrupt variable-size chunks: random bytes, flipped bytes and cut or extended encodings fed
//! to the `vlen-utf8` / `vlen-bytes` chains (alone, under zstd, inside sharding) are errors or
//! chunks of exactly the chunk's element count, never panics. (That a chunk claiming more
//! elements than its shape is refused before allocating is a unit test of `vlen::decode`.)

#![cfg(all(feature = "vlen", feature = "zstd", feature = "sharding"))]

use proptest::prelude::*;
use zarr_codecs::vlen::VlenChunk;
use zarr_codecs::{default_registry, ChunkIn, ChunkRepr, CodecChain, CodecError, EncodeOptions};
use zarr_meta::{DataType, FillValue};

const COUNT: usize = 12;

fn chains() -> Vec<(&'static str, DataType, String)> {
    let zstd = r#"{"name": "zstd", "configuration": {"level": 1, "checksum": false}}"#;
    vec![
        (
            "vlen-utf8",
            DataType::String,
            r#"[{"name": "vlen-utf8"}]"#.into(),
        ),
        (
            "vlen-bytes",
            DataType::Bytes,
            r#"[{"name": "vlen-bytes"}]"#.into(),
        ),
        (
            "vlen-utf8 + zstd",
            DataType::String,
            format!(r#"[{{"name": "vlen-utf8"}}, {zstd}]"#),
        ),
        (
            "sharded vlen-utf8 + zstd",
            DataType::String,
            format!(
                r#"[{{"name": "sharding_indexed", "configuration": {{"chunk_shape": [2, 3],
                "codecs": [{{"name": "vlen-utf8"}}, {zstd}],
                "index_codecs": [{{"name": "bytes", "configuration": {{"endian": "little"}}}}]}}}}]"#
            ),
        ),
    ]
}

fn chain(t: DataType, json: &str) -> CodecChain {
    let repr = ChunkRepr::new(vec![4, 3], t, FillValue::zero(t));
    CodecChain::from_json(json, &repr, &default_registry()).unwrap()
}

fn items() -> Vec<Vec<u8>> {
    (0..COUNT)
        .map(|i| {
            "é".repeat(i % 4)
                .into_bytes()
                .into_iter()
                .chain([b'a' + i as u8])
                .collect()
        })
        .collect()
}

/// Decoding `bytes` gives an error or a chunk of the element count (and, for strings, UTF-8
/// is checked by the array layer, not here).
fn decodes_or_refuses(chain: &CodecChain, bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(chunk) = decode_vlen(chain, bytes) {
        prop_assert_eq!(chunk.len(), COUNT);
        for i in 0..COUNT {
            prop_assert!(chunk.get(i).is_some());
        }
    }
    Ok(())
}

#[test]
fn valid_chunks_round_trip() {
    for (name, t, json) in chains() {
        let c = chain(t, &json);
        let items = items();
        let encoded = c
            .encode(
                ChunkIn::Vlen(&mut items.iter().map(Vec::as_slice)),
                EncodeOptions::ENCODE_EMPTY,
            )
            .unwrap()
            .unwrap();
        let back = decode_vlen(&c, &encoded).unwrap();
        let got: Vec<&[u8]> = (0..COUNT).map(|i| back.get(i).unwrap()).collect();
        let want: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn every_cut_and_extension_is_handled() {
    for (_, t, json) in chains() {
        let c = chain(t, &json);
        let encoded = c
            .encode(
                ChunkIn::Vlen(&mut items().iter().map(Vec::as_slice)),
                EncodeOptions::ENCODE_EMPTY,
            )
            .unwrap()
            .unwrap();
        for n in 0..encoded.len() {
            decodes_or_refuses(&c, &encoded[..n]).unwrap();
        }
        let mut longer = encoded.clone();
        longer.extend_from_slice(&[0xff; 9]);
        decodes_or_refuses(&c, &longer).unwrap();
    }
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        for (_, t, json) in chains() {
            decodes_or_refuses(&chain(t, &json), &bytes)?;
        }
    }

    #[test]
    fn flipped_bytes_never_panic(at in any::<prop::sample::Index>(), with in any::<u8>()) {
        for (_, t, json) in chains() {
            let c = chain(t, &json);
            let mut encoded = c.encode(ChunkIn::Vlen(&mut items().iter().map(Vec::as_slice)), EncodeOptions::ENCODE_EMPTY).unwrap().unwrap();
            let i = at.index(encoded.len());
            encoded[i] = with;
            decodes_or_refuses(&c, &encoded)?;
        }
    }
}

/// The elements of a stored chunk of variable-size elements.
fn decode_vlen(chain: &CodecChain, bytes: &[u8]) -> Result<VlenChunk, CodecError> {
    let mut chunk = VlenChunk::default();
    chain.decode_into(bytes, &mut chunk)?;
    Ok(chunk)
}
