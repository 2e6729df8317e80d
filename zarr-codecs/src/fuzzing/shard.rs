//! The `shard` target: stored shards read whole and by regions through a slice source.

use zarr_grid::geometry::{copy_region, Region};

/// The fixed sharding chains: `(data type, shard shape, codecs JSON)`.
pub fn chains() -> Vec<(zarr_meta::DataType, Vec<u64>, &'static str)> {
    use zarr_meta::DataType as T;
    vec![
        // zarr-python's defaults: index at the end with crc32c
        (
            T::UInt16,
            vec![4, 6],
            r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,3],"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"}}]"#,
        ),
        // no checksum, index at the start: easier for the fuzzer to forge indices
        (
            T::UInt8,
            vec![8],
            r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"start"}}]"#,
        ),
        // compressed inner chunks
        (
            T::Int32,
            vec![4, 4],
            r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":0,"checksum":false}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"end"}}]"#,
        ),
        // nested shards
        (
            T::UInt8,
            vec![4, 4],
            r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,4],"codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[1,2],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"end"}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"start"}}]"#,
        ),
        // gzip inner chunks, transposed
        (
            T::UInt16,
            vec![4, 4],
            r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],"codecs":[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"big"}},{"name":"gzip","configuration":{"level":1}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"}}]"#,
        ),
    ]
}

/// Sharding chain `i`, built once.
pub fn chain(i: usize) -> &'static crate::CodecChain {
    static CHAINS: std::sync::OnceLock<Vec<crate::CodecChain>> = std::sync::OnceLock::new();
    let all = CHAINS.get_or_init(|| {
        chains()
            .into_iter()
            .map(|(t, shape, json)| {
                let repr = crate::ChunkRepr::new(shape, t, zarr_meta::FillValue::zero(t));
                crate::CodecChain::from_json(json, &repr, &crate::default_registry())
                    .unwrap_or_else(|e| panic!("chain {json}: {e}"))
            })
            .collect()
    });
    &all[i]
}

/// The first byte picks a sharding chain; the rest is a stored shard, read whole and by
/// regions through a slice source. A region read must agree with the whole shard whenever the
/// whole shard decodes; a region read of a shard that does not decode may succeed (it reads
/// only the inner chunks it needs) but never panics.
pub fn run(data: &[u8]) {
    let Some((&selector, stored)) = data.split_first() else {
        return;
    };
    let n = chains().len();
    let chain = self::chain(usize::from(selector) % n);
    let shape = chain.repr().shape.clone();
    let elem = chain.repr().element_size();
    let whole = chain.decode(stored).ok();
    let rank = shape.len();
    let mut regions = vec![
        Region::whole(&shape),
        Region::new(vec![0; rank], vec![1; rank]).expect("a region"),
        Region::new(
            shape.iter().map(|&d| d / 2).collect(),
            shape.iter().map(|&d| d - d / 2).collect(),
        )
        .expect("a region"),
        Region::new(vec![0; rank], vec![0; rank]).expect("a region"),
    ];
    if rank == 2 {
        regions.push(Region::new(vec![1, 1], vec![2, 2]).expect("a region"));
    }
    for region in regions {
        let len = region.shape.iter().product::<u64>() as usize * elem;
        let mut out = vec![0u8; len];
        let got = chain.decode_region(&stored, &region, &mut out);
        if let Some(whole) = &whole {
            assert_eq!(got.ok(), Some(true), "a region of a shard that decodes");
            let mut expected = vec![0u8; len];
            copy_region(
                whole.as_bytes(),
                &shape,
                &region.start,
                &mut expected,
                &region.shape,
                &vec![0; rank],
                &region.shape,
                elem,
            );
            assert_eq!(
                out, expected,
                "region {region:?} differs from the whole shard"
            );
        }
    }
    if let Some(whole) = whole {
        let again = chain
            .encode_slice(whole.as_bytes())
            .expect("a decoded shard encodes");
        let round = chain.decode(&again).expect("a re-encoded shard decodes");
        assert_eq!(
            round.as_bytes(),
            whole.as_bytes(),
            "re-encoding changes the shard"
        );
    }
}
