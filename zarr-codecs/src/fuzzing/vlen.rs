//! The bodies of fuzz targets `codec_vlen` (a stored vlen chunk decoded with bounded
//! allocation) and `shard_vlen` (a shard of strings decoded whole and by regions).

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

/// The chains of target `shard_vlen`: a 4x4 shard of `string`s in 2x2 inner `vlen-utf8`
/// chunks, its index `[bytes]` (so that the fuzzer reaches inner chunks) or `[bytes,
/// crc32c]`, at the end or the start.
#[cfg(feature = "sharding")]
pub fn shard_chains() -> [&'static str; 3] {
    [
        r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],"codecs":[{"name":"vlen-utf8","configuration":{}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"end"}}]"#,
        r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],"codecs":[{"name":"vlen-utf8","configuration":{}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"start"}}]"#,
        r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],"codecs":[{"name":"vlen-utf8","configuration":{}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"}}]"#,
    ]
}

/// The chain `i` (modulo their count) of [`shard_chains`] (fill value `"-"`), built once.
#[cfg(feature = "sharding")]
pub fn shard_chain(i: usize) -> &'static crate::CodecChain {
    use zarr_meta::{DataType, FillValue};
    static CHAINS: std::sync::OnceLock<Vec<crate::CodecChain>> = std::sync::OnceLock::new();
    let all = CHAINS.get_or_init(|| {
        let fill = FillValue::from_json(&serde_json::json!("-"), DataType::String)
            .expect("a string fill value");
        let repr = crate::ChunkRepr::new(vec![4, 4], DataType::String, fill);
        shard_chains()
            .iter()
            .map(|json| {
                crate::CodecChain::from_json(json, &repr, &crate::default_registry())
                    .unwrap_or_else(|e| panic!("chain {json}: {e}"))
            })
            .collect()
    });
    &all[i % all.len()]
}

/// Target `shard_vlen`: the first byte picks a chain of [`shard_chains`], the rest is a
/// stored shard. Decoding it whole and by regions (each read through a byte-range source:
/// the index, then the inner chunks the region meets) must agree element by element, or all
/// fail; a shard that decodes re-encodes to one that decodes to the same elements.
#[cfg(feature = "sharding")]
pub fn run_shard(data: &[u8]) {
    use zarr_grid::geometry::Region;
    let Some((&selector, stored)) = data.split_first() else {
        return;
    };
    let chain = shard_chain(usize::from(selector));
    let stored = stored.to_vec();
    let whole = chain.decode_vlen(&stored);
    let regions = [
        ([0, 0], [4, 4]),
        ([1, 1], [2, 2]),
        ([0, 2], [4, 2]),
        ([3, 0], [1, 4]),
    ];
    for (start, shape) in regions {
        let region = Region::new(start.to_vec(), shape.to_vec()).expect("a region");
        let Ok(Some(part)) = chain.decode_vlen_region(&stored, &region) else {
            continue;
        };
        // a region that decodes holds its elements, those of the whole shard when it decodes
        assert_eq!(part.len(), (shape[0] * shape[1]) as usize);
        if let Ok(whole) = &whole {
            for i in 0..shape[0] {
                for j in 0..shape[1] {
                    let k = ((start[0] + i) * 4 + start[1] + j) as usize;
                    assert_eq!(
                        part.get((i * shape[1] + j) as usize),
                        whole.get(k),
                        "element {k} of region {region:?}"
                    );
                }
            }
        }
    }
    if let Ok(whole) = whole {
        let items: Vec<&[u8]> = whole.iter().collect();
        let again = chain
            .encode_vlen(items)
            .expect("decoded elements re-encode");
        let back = chain
            .decode_vlen(&again)
            .expect("a re-encoded shard decodes");
        assert_eq!(back, whole, "re-encoding changed the elements");
    }
}
