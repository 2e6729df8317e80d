//! The `codec_<name>` targets: stored chunks decoded by fixed chains of one codec.

use zarr_grid::geometry;

/// The codecs with a fuzz target `codec_<name>` (and a replayed corpus).
pub const CODECS: [&str; 6] = ["bytes", "transpose", "gzip", "zstd", "blosc", "crc32c"];

/// The fixed chains each codec target decodes with: `(data type, chunk shape, codecs JSON)`.
pub fn chains(codec: &str) -> Vec<(zarr_meta::DataType, Vec<u64>, &'static str)> {
    use zarr_meta::DataType as T;
    match codec {
        "bytes" => vec![
            (T::UInt8, vec![7], r#"[{"name":"bytes"}]"#),
            (
                T::UInt16,
                vec![3, 5],
                r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
            (
                T::Float64,
                vec![4],
                r#"[{"name":"bytes","configuration":{"endian":"big"}}]"#,
            ),
            (
                T::Complex64,
                vec![2, 2],
                r#"[{"name":"bytes","configuration":{"endian":"big"}}]"#,
            ),
            (T::Bool, vec![5], r#"[{"name":"bytes"}]"#),
            (
                T::Int32,
                vec![],
                r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
        ],
        "transpose" => vec![
            (
                T::Int32,
                vec![3, 4],
                r#"[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
            (
                T::UInt16,
                vec![2, 3, 2],
                r#"[{"name":"transpose","configuration":{"order":[2,0,1]}},{"name":"bytes","configuration":{"endian":"big"}}]"#,
            ),
            (
                T::UInt8,
                vec![2, 2, 3],
                r#"[{"name":"transpose","configuration":{"order":[1,2,0]}},{"name":"transpose","configuration":{"order":[2,1,0]}},{"name":"bytes"}]"#,
            ),
        ],
        "gzip" => vec![
            (
                T::UInt8,
                vec![64],
                r#"[{"name":"bytes"},{"name":"gzip","configuration":{"level":1}}]"#,
            ),
            (
                T::Float32,
                vec![8, 8],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":5}}]"#,
            ),
            (
                T::UInt8,
                vec![16],
                r#"[{"name":"bytes"},{"name":"gzip","configuration":{"level":1}},{"name":"gzip","configuration":{"level":9}}]"#,
            ),
        ],
        "zstd" => vec![
            (
                T::UInt8,
                vec![64],
                r#"[{"name":"bytes"},{"name":"zstd","configuration":{"level":0,"checksum":false}}]"#,
            ),
            (
                T::Int64,
                vec![4, 4],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":3,"checksum":true}}]"#,
            ),
            (
                T::UInt16,
                vec![4, 4],
                r#"[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"big"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}]"#,
            ),
        ],
        "blosc" => vec![
            (
                T::UInt8,
                vec![64],
                r#"[{"name":"bytes"},{"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"bitshuffle","typesize":1,"blocksize":0}}]"#,
            ),
            (
                T::Int32,
                vec![8, 8],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"blosc","configuration":{"cname":"zstd","clevel":3,"shuffle":"shuffle","typesize":4,"blocksize":0}}]"#,
            ),
            (
                T::Float64,
                vec![16],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"blosc","configuration":{"cname":"blosclz","clevel":1,"shuffle":"noshuffle","typesize":8,"blocksize":0}}]"#,
            ),
            (
                T::UInt16,
                vec![32],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"blosc","configuration":{"cname":"zlib","clevel":1,"shuffle":"shuffle","typesize":2,"blocksize":0}}]"#,
            ),
        ],
        "crc32c" => vec![
            (
                T::UInt32,
                vec![6],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]"#,
            ),
            (
                T::UInt8,
                vec![16],
                r#"[{"name":"bytes"},{"name":"gzip","configuration":{"level":1}},{"name":"crc32c"}]"#,
            ),
            (
                T::UInt8,
                vec![3],
                r#"[{"name":"bytes"},{"name":"crc32c"},{"name":"crc32c"}]"#,
            ),
        ],
        other => panic!("no chains for codec {other:?}"),
    }
}

/// Chain `i` of `codec`, built once (the chains are fixed, so building cannot fail).
pub fn chain(codec: &str, i: usize) -> &'static crate::CodecChain {
    static CHAINS: std::sync::OnceLock<
        std::collections::BTreeMap<&'static str, Vec<crate::CodecChain>>,
    > = std::sync::OnceLock::new();
    let all = CHAINS.get_or_init(|| {
        CODECS
            .iter()
            .copied()
            .map(|name| {
                let built = chains(name)
                    .into_iter()
                    .map(|(t, shape, json)| {
                        let repr = crate::ChunkRepr::new(shape, t, zarr_meta::FillValue::zero(t));
                        crate::CodecChain::from_json(json, &repr, &crate::default_registry())
                            .unwrap_or_else(|e| panic!("chain {json}: {e}"))
                    })
                    .collect();
                (name, built)
            })
            .collect()
    });
    &all[codec][i]
}

/// The first byte picks one of the chains of `codec`; the rest is a stored chunk, checked by
/// [`check`]. None of these codecs is lossy.
pub fn run(codec: &str, data: &[u8]) {
    let Some((&selector, stored)) = data.split_first() else {
        return;
    };
    let n = chains(codec).len();
    check(chain(codec, usize::from(selector) % n), false, stored);
}

/// Decodes the stored chunk `stored` with `chain`: every way of decoding it must agree:
/// `decode`, `decode_into`, `decode_region` of the whole chunk and of a part. A chunk that
/// decodes re-encodes to a chunk that decodes to the same bytes, or for a `lossy` chain (one
/// whose decoded chunks need not re-encode to themselves) to a chunk that decodes.
pub fn check(chain: &crate::CodecChain, lossy: bool, stored: &[u8]) {
    let len = chain.decoded_len();
    let shape = chain.repr().shape.clone();
    let elem = chain.repr().element_size();
    // the first quarter of the chunk along its first axis: codecs that can stop early (zstd,
    // blosc) decode only that prefix, whatever the input; checked below when the chunk
    // decodes whole
    let head = (shape.first().is_some_and(|&d| d >= 4)).then(|| {
        let mut hshape = shape.clone();
        hshape[0] /= 4;
        let region = geometry::Region::new(vec![0; shape.len()], hshape).expect("a valid region");
        let hlen = region.shape.iter().product::<u64>() as usize * elem;
        let mut head_out = vec![0u8; hlen];
        let result = chain.decode_region(&stored, &region, &mut head_out);
        (region, result, head_out)
    });
    let decoded = chain.decode(stored);
    let mut out = vec![0u8; len];
    let into = chain.decode_into(stored, &mut out);
    let decoded = match (decoded, into) {
        (Ok(d), Ok(())) => d,
        (Err(_), Err(_)) => return,
        (d, i) => panic!(
            "decode and decode_into disagree: {:?} vs {:?}",
            d.map(|b| b.len()),
            i
        ),
    };
    assert_eq!(decoded.len(), len, "decoded length");
    assert_eq!(
        decoded.as_bytes(),
        &out[..],
        "decode and decode_into differ"
    );
    if let Some((region, result, head_out)) = head {
        assert!(
            matches!(result, Ok(true)),
            "the head of a chunk that decodes: {result:?}"
        );
        let mut expected = vec![0u8; head_out.len()];
        geometry::copy_region(
            &out,
            &shape,
            &region.start,
            &mut expected,
            &region.shape,
            &vec![0; shape.len()],
            &region.shape,
            elem,
        );
        assert_eq!(head_out, expected, "the head of a chunk differs");
    }
    let whole = geometry::Region::whole(&shape);
    let mut region_out = vec![0u8; len];
    let found = chain
        .decode_region(&stored, &whole, &mut region_out)
        .expect("decode_region of a chunk that decodes");
    assert!(found);
    assert_eq!(region_out, out, "decode_region of the whole chunk differs");
    if shape.iter().all(|&d| d >= 2) {
        let part =
            geometry::Region::new(vec![1; shape.len()], shape.iter().map(|&d| d - 1).collect())
                .expect("a valid region");
        let plen = part.shape.iter().product::<u64>() as usize * elem;
        let mut part_out = vec![0u8; plen];
        assert!(chain
            .decode_region(&stored, &part, &mut part_out)
            .expect("decode_region of part of a chunk that decodes"));
        let mut expected = vec![0u8; plen];
        geometry::copy_region(
            &out,
            &shape,
            &part.start,
            &mut expected,
            &part.shape,
            &vec![0; shape.len()],
            &part.shape,
            elem,
        );
        assert_eq!(part_out, expected, "decode_region of a part differs");
    }
    if lossy {
        // a lossy encoding may refuse or change the values, but what it writes decodes
        if let Ok(again) = chain.encode_slice(&out) {
            chain.decode(&again).expect("a re-encoded chunk decodes");
        }
        return;
    }
    let again = chain.encode_slice(&out).expect("a decoded chunk encodes");
    let round = chain.decode(&again).expect("a re-encoded chunk decodes");
    assert_eq!(round.as_bytes(), &out[..], "re-encoding changes the chunk");
}
