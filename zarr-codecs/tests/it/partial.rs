//! Partial reads of shards through a counting byte-range source: the index costs one request,
//! the inner chunks a region needs one more, whatever their number.

#![cfg(all(feature = "zstd", feature = "crc32c", feature = "sharding"))]

use std::sync::Mutex;

use proptest::prelude::*;
use zarr_codecs::EncodeOptions;
use zarr_codecs::{
    default_registry, ByteRange, ByteRangeSource, ChunkRepr, CodecChain, SourceError,
};
use zarr_grid::geometry::{copy_region, Region};
use zarr_meta::{DataType, FillValue};

/// A stored value that records every request.
struct Counting {
    value: Option<Vec<u8>>,
    requests: Mutex<Vec<Vec<ByteRange>>>,
}

impl Counting {
    fn new(value: Option<Vec<u8>>) -> Self {
        Counting {
            value,
            requests: Mutex::new(Vec::new()),
        }
    }

    fn requests(&self) -> Vec<Vec<ByteRange>> {
        self.requests.lock().unwrap().clone()
    }
}

impl ByteRangeSource for Counting {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        self.requests.lock().unwrap().push(ranges.to_vec());
        match &self.value {
            Some(v) => v.as_slice().get_ranges(ranges),
            None => Ok(None),
        }
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        Ok(self.value.as_ref().map(|v| v.len() as u64))
    }
}

fn shard_chain(location: &str, inner_codecs: &str) -> CodecChain {
    let repr = ChunkRepr::new(
        vec![8, 8],
        DataType::UInt16,
        FillValue::zero(DataType::UInt16),
    );
    let json = format!(
        r#"[{{"name": "sharding_indexed", "configuration": {{
            "chunk_shape": [2, 4], "codecs": {inner_codecs},
            "index_codecs": [{{"name": "bytes", "configuration": {{"endian": "little"}}}}, {{"name": "crc32c"}}],
            "index_location": "{location}"}}}}]"#
    );
    CodecChain::from_json(&json, &repr, &default_registry()).unwrap()
}

const ZSTD: &str = r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]"#;

fn chunk() -> Vec<u8> {
    (1..=64u16).flat_map(|v| v.to_ne_bytes()).collect()
}

fn read(chain: &CodecChain, src: &Counting, start: [u64; 2], shape: [u64; 2]) -> Vec<u8> {
    let region = Region::new(start.to_vec(), shape.to_vec()).unwrap();
    let mut out = vec![0u8; (shape[0] * shape[1] * 2) as usize];
    assert!(chain
        .partial_decoder()
        .region(src, &region, &mut out)
        .unwrap());
    let mut want = vec![0u8; out.len()];
    let full = chain.repr().shape.clone();
    copy_region(
        &chunk(),
        &full,
        &start,
        &mut want,
        &shape,
        &[0, 0],
        &shape,
        2,
    );
    assert_eq!(out, want, "region {start:?} {shape:?}");
    out
}

#[test]
fn one_inner_chunk_costs_two_requests() {
    for location in ["end", "start"] {
        let chain = shard_chain(location, ZSTD);
        assert!(chain.partial_decoder().reads_part());
        let src = Counting::new(Some(
            chain
                .encode(chunk(), EncodeOptions::ENCODE_EMPTY)
                .unwrap()
                .unwrap(),
        ));
        read(&chain, &src, [2, 4], [2, 4]); // inner chunk (1, 1) exactly
        let req = src.requests();
        assert_eq!(req.len(), 2, "{req:?}");
        let index_len = 4 * 2 * 16 + 4;
        match location {
            "end" => assert_eq!(req[0], [ByteRange::Suffix(index_len)]),
            _ => assert_eq!(
                req[0],
                [ByteRange::Range {
                    start: 0,
                    end: index_len
                }]
            ),
        }
        assert_eq!(req[1].len(), 1);
    }
}

#[test]
fn neighbouring_inner_chunks_are_one_range() {
    let chain = shard_chain("end", ZSTD);
    let src = Counting::new(Some(
        chain
            .encode(chunk(), EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap(),
    ));
    // inner chunks (0, 0) and (1, 0) follow each other in Morton order
    read(&chain, &src, [0, 0], [4, 4]);
    let req = src.requests();
    assert_eq!(req.len(), 2);
    assert_eq!(req[1].len(), 1, "{req:?}");
    // (0, 0), (1, 0), (0, 1), (1, 1): the first four in Morton order, one range
    let src = Counting::new(Some(
        chain
            .encode(chunk(), EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap(),
    ));
    read(&chain, &src, [1, 1], [3, 6]);
    let req = src.requests();
    assert_eq!(req.len(), 2);
    assert_eq!(req[1].len(), 1, "{req:?}");
    // (0, 0) and (2, 0) are not neighbours: two ranges, still one request
    let src = Counting::new(Some(
        chain
            .encode(chunk(), EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap(),
    ));
    read(&chain, &src, [1, 0], [4, 2]);
    let req = src.requests();
    assert_eq!(req.len(), 2);
    assert_eq!(req[1].len(), 2, "{req:?}");
}

#[test]
fn whole_shard_is_one_request_and_missing_shard_is_not_found() {
    let chain = shard_chain("end", ZSTD);
    let src = Counting::new(Some(
        chain
            .encode(chunk(), EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap(),
    ));
    read(&chain, &src, [0, 0], [8, 8]);
    assert_eq!(src.requests(), [vec![ByteRange::FromStart(0)]]);

    let missing = Counting::new(None);
    let region = Region::new(vec![0, 0], vec![2, 2]).unwrap();
    let mut out = vec![9u8; 8];
    assert!(!chain
        .partial_decoder()
        .region(&missing, &region, &mut out)
        .unwrap());
    assert_eq!(out, [9; 8]);
    assert_eq!(missing.requests().len(), 1);
}

#[test]
fn missing_inner_chunks_read_as_fill_without_a_second_request() {
    let repr = ChunkRepr::new(
        vec![8, 8],
        DataType::UInt16,
        FillValue::from_ne_bytes(DataType::UInt16, 7u16.to_ne_bytes()).unwrap(),
    );
    let json = r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]"#;
    let chain = CodecChain::from_json(json, &repr, &default_registry()).unwrap();
    let mut data: Vec<u8> = [7u16; 64].iter().flat_map(|v| v.to_ne_bytes()).collect();
    data[0] = 1; // only inner chunk (0, 0) is stored
    let stored = chain
        .encode(&data, EncodeOptions::SKIP_EMPTY)
        .unwrap()
        .unwrap();
    assert_eq!(stored.len(), 32 + 4 * 16 + 4);
    let src = Counting::new(Some(stored));
    let region = Region::new(vec![4, 0], vec![4, 8]).unwrap();
    let mut out = vec![0u8; 64];
    assert!(chain
        .partial_decoder()
        .region(&src, &region, &mut out)
        .unwrap());
    assert!(out.chunks_exact(2).all(|e| e == 7u16.to_ne_bytes()));
    assert_eq!(src.requests().len(), 1);
}

#[test]
fn zarr_python_shard_reads_partially() {
    // tests/data/golden/shard_end.stored: a shard written by zarr-python 3.1.6
    let stored = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/golden/shard_end.stored"
    ))
    .unwrap();
    let chain = shard_chain("end", ZSTD);
    let whole = chain.decode(&stored).unwrap();
    for (start, shape) in [
        ([0, 0], [1, 1]),
        ([3, 2], [4, 5]),
        ([7, 7], [1, 1]),
        ([0, 4], [8, 4]),
    ] {
        let src = Counting::new(Some(stored.clone()));
        let region = Region::new(start.to_vec(), shape.to_vec()).unwrap();
        let mut out = vec![0u8; (shape[0] * shape[1] * 2) as usize];
        assert!(chain
            .partial_decoder()
            .region(&src, &region, &mut out)
            .unwrap());
        let mut want = vec![0u8; out.len()];
        copy_region(
            &whole,
            &[8, 8],
            &start,
            &mut want,
            &shape,
            &[0, 0],
            &shape,
            2,
        );
        assert_eq!(out, want);
        assert_eq!(src.requests().len(), 2);
    }
}

#[test]
fn an_index_pointing_outside_the_shard_is_an_error() {
    let chain = shard_chain(
        "end",
        r#"[{"name": "bytes", "configuration": {"endian": "little"}}]"#,
    );
    let mut stored = chain
        .encode(chunk(), EncodeOptions::ENCODE_EMPTY)
        .unwrap()
        .unwrap();
    // rewrite entry 0's offset past the end and fix the index checksum
    let n = stored.len();
    let index_start = n - (8 * 16 + 4);
    stored[index_start..index_start + 8].copy_from_slice(&10_000u64.to_le_bytes());
    let sum = crc32c::crc32c(&stored[index_start..n - 4]);
    stored[n - 4..].copy_from_slice(&sum.to_le_bytes());
    let err = chain.decode(&stored).unwrap_err();
    assert!(
        zarr_testkit::report(&err).contains("it points outside the shard"),
        "{err}"
    );
    // the partial path asks the source, which refuses the range
    let region = Region::new(vec![0, 0], vec![1, 1]).unwrap();
    let mut out = [0u8; 2];
    assert!(chain
        .partial_decoder()
        .region(&stored, &region, &mut out)
        .is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn regions_match_the_full_decode(
        start in (0u64..8, 0u64..8),
        len in (1u64..9, 1u64..9),
        location in prop::sample::select(vec!["start", "end"]),
        holes in any::<u16>(),
    ) {
        let chain = shard_chain(location, ZSTD);
        let mut data = chunk();
        // blank out some inner chunks so that they are not stored
        for i in 0..8usize {
            if holes >> i & 1 == 1 {
                let (r, c) = (i / 2 * 2, i % 2 * 4);
                for y in r..r + 2 {
                    for x in c..c + 4 {
                        data[(y * 8 + x) * 2] = 0;
                        data[(y * 8 + x) * 2 + 1] = 0;
                    }
                }
            }
        }
        let stored = chain.encode(&data, EncodeOptions::ENCODE_EMPTY).unwrap().unwrap();
        let shape = [len.0.min(8 - start.0), len.1.min(8 - start.1)];
        let region = Region::new(vec![start.0, start.1], shape.to_vec()).unwrap();
        let src = Counting::new(Some(stored));
        let mut out = vec![0u8; (shape[0] * shape[1] * 2) as usize];
        prop_assert!(chain.partial_decoder().region(&src, &region, &mut out).unwrap());
        let mut want = vec![0u8; out.len()];
        copy_region(&data, &[8, 8], &[start.0, start.1], &mut want, &shape, &[0, 0], &shape, 2);
        prop_assert_eq!(out, want);
        prop_assert!(src.requests().len() <= 2);
    }
}

fn plain_chain(codecs: &str, shape: Vec<u64>) -> CodecChain {
    let repr = ChunkRepr::new(shape, DataType::UInt16, FillValue::zero(DataType::UInt16));
    CodecChain::from_json(codecs, &repr, &default_registry()).unwrap()
}

/// A 64x64x64 uint16 chunk of distinct-ish values.
fn cube() -> Vec<u8> {
    (0..64u32 * 64 * 64)
        .flat_map(|i| ((i * 7 + i / 97) as u16).to_ne_bytes())
        .collect()
}

fn read_cube(chain: &CodecChain, src: &dyn ByteRangeSource, start: [u64; 3], shape: [u64; 3]) {
    let region = Region::new(start.to_vec(), shape.to_vec()).unwrap();
    let mut out = vec![0u8; (shape.iter().product::<u64>() * 2) as usize];
    assert!(chain
        .partial_decoder()
        .region(src, &region, &mut out)
        .unwrap());
    let mut want = vec![0u8; out.len()];
    copy_region(
        &cube(),
        &[64, 64, 64],
        &start,
        &mut want,
        &shape,
        &[0; 3],
        &shape,
        2,
    );
    assert_eq!(out, want, "region {start:?} {shape:?}");
}

#[test]
fn uncompressed_chunks_read_only_the_span_of_the_region() {
    for endian in ["little", "big"] {
        let chain = plain_chain(
            &format!(r#"[{{"name": "bytes", "configuration": {{"endian": "{endian}"}}}}]"#),
            vec![64, 64, 64],
        );
        assert!(chain.partial_decoder().reads_part());
        assert_eq!(chain.partial_decoder().inner_chunk_shape(), None);
        let src = Counting::new(Some(
            chain
                .encode(cube(), EncodeOptions::ENCODE_EMPTY)
                .unwrap()
                .unwrap(),
        ));
        // the first plane: 8 KiB of the 512 KiB chunk, one request
        read_cube(&chain, &src, [0, 0, 0], [1, 64, 64]);
        // a plane in the middle and a small box
        read_cube(&chain, &src, [31, 0, 0], [1, 64, 64]);
        read_cube(&chain, &src, [5, 6, 7], [3, 4, 5]);
        let spans: Vec<u64> = src
            .requests()
            .iter()
            .map(|r| match r.as_slice() {
                [ByteRange::Range { start, end }] => end - start,
                other => panic!("one range per read, got {other:?}"),
            })
            .collect();
        // from the first element to the last: 8 KiB, 8 KiB, 2 planes + 3 rows + 5 elements
        assert_eq!(spans, vec![8192, 8192, 2 * (2 * 4096 + 3 * 64 + 5)]);
    }
    // a value of the wrong size is an error, a missing one reads as absent
    let chain = plain_chain(
        r#"[{"name": "bytes", "configuration": {"endian": "little"}}]"#,
        vec![64, 64, 64],
    );
    let mut short = chain
        .encode(cube(), EncodeOptions::ENCODE_EMPTY)
        .unwrap()
        .unwrap();
    short.truncate(10_000);
    let region = Region::new(vec![1, 0, 0], vec![1, 64, 64]).unwrap();
    let mut out = vec![0u8; 8192];
    assert!(chain
        .partial_decoder()
        .region(&short.as_slice(), &region, &mut out)
        .is_err());
    assert!(!chain
        .partial_decoder()
        .region(&Counting::new(None), &region, &mut out)
        .unwrap());
}

#[test]
fn zstd_chunks_decode_only_the_prefix_a_region_needs() {
    // a frame without checksum takes the prefix path, one with a checksum the whole one: the
    // data is the same either way
    for (checksum, level) in [(false, 1), (true, 1), (false, 5)] {
        let chain = plain_chain(
            &format!(
                r#"[{{"name": "bytes", "configuration": {{"endian": "little"}}}},
                    {{"name": "zstd", "configuration": {{"level": {level}, "checksum": {checksum}}}}}]"#
            ),
            vec![64, 64, 64],
        );
        let stored = chain
            .encode(cube(), EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap();
        let src = stored.as_slice();
        read_cube(&chain, &src, [0, 0, 0], [1, 64, 64]);
        read_cube(&chain, &src, [3, 10, 20], [2, 30, 40]);
        read_cube(&chain, &src, [20, 0, 0], [4, 64, 64]);
        read_cube(&chain, &src, [60, 0, 0], [4, 64, 64]); // past 3/4: the whole frame
                                                          // a frame cut before the bytes the region needs is an error, never a panic or short
                                                          // data; one cut after them may still give the region (the prefix read does not look
                                                          // further, as a byte-range read would not), but never wrong data
        let region = Region::new(vec![0, 0, 0], vec![8, 64, 64]).unwrap();
        let mut want = vec![0u8; 8 * 64 * 64 * 2];
        copy_region(
            &cube(),
            &[64, 64, 64],
            &[0; 3],
            &mut want,
            &[8, 64, 64],
            &[0; 3],
            &[8, 64, 64],
            2,
        );
        for cut in [5, 20, 100, 1000, stored.len() / 2, stored.len() - 1] {
            let mut out = vec![0u8; want.len()];
            let got = chain
                .partial_decoder()
                .region(&&stored[..cut], &region, &mut out);
            if !checksum && cut == stored.len() - 1 {
                // proof that the prefix path ran: the whole-frame decode refuses this cut
                assert!(got.is_ok(), "{got:?}");
            }
            match got {
                Err(_) => {}
                Ok(found) => {
                    assert!(
                        cut >= stored.len() / 2 && !checksum,
                        "cut {cut} of {}",
                        stored.len()
                    );
                    assert!(found && out == want, "cut {cut}: wrong data");
                }
            }
        }
    }
}

#[cfg(feature = "blosc")]
#[test]
fn blosc_chunks_decode_only_the_blocks_a_region_needs() {
    for (cname, shuffle, typesize, blocksize) in [
        ("lz4", "shuffle", 2, 0),
        ("zstd", "bitshuffle", 2, 16384),
        ("lz4", "noshuffle", 4, 8192), // type size 4 over uint16 data: items of 2 elements
        ("blosclz", "shuffle", 2, 4096),
    ] {
        let chain = plain_chain(
            &format!(
                r#"[{{"name": "bytes", "configuration": {{"endian": "little"}}}},
                    {{"name": "blosc", "configuration": {{"cname": "{cname}", "clevel": 5,
                      "shuffle": "{shuffle}", "typesize": {typesize}, "blocksize": {blocksize}}}}}]"#
            ),
            vec![64, 64, 64],
        );
        let stored = chain
            .encode(cube(), EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap();
        let src = stored.as_slice();
        read_cube(&chain, &src, [0, 0, 0], [1, 64, 64]);
        read_cube(&chain, &src, [3, 10, 20], [2, 30, 40]);
        read_cube(&chain, &src, [0, 0, 0], [1, 1, 1]); // 2 bytes: half an item of 4
        read_cube(&chain, &src, [20, 5, 0], [4, 50, 64]);
        // a damaged buffer is an error, never a panic
        let region = Region::new(vec![0, 0, 0], vec![8, 64, 64]).unwrap();
        let mut out = vec![0u8; 8 * 64 * 64 * 2];
        for cut in [3, 16, 40, stored.len() - 1] {
            assert!(
                chain
                    .partial_decoder()
                    .region(&&stored[..cut], &region, &mut out)
                    .is_err(),
                "cut {cut}"
            );
        }
        if stored[2] & 0x02 == 0 {
            // compressed (not stored as a plain copy): bytes 16.. are the block offsets
            let mut bad = stored.clone();
            for b in bad.iter_mut().skip(16).take(64) {
                *b = 0xFF;
            }
            let got = chain
                .partial_decoder()
                .region(&bad.as_slice(), &region, &mut out);
            assert!(got.is_err(), "{cname} {shuffle}: {got:?}");
        }
    }
}
