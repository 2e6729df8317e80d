//! The bodies of the numcodecs fuzz targets `codec_<name>` (cargo feature `fuzzing`; **not a
//! stable API**: it changes with the targets): stored chunks decoded by fixed chains of one
//! codec, checked by `zarr_codecs::fuzzing::codec::check`.
//!
//! `fuzz/fuzz_targets/codec_<name>.rs` calls [`run`] (the `fuzz` crate enables the feature),
//! and `tests/it/fuzz_corpus.rs` replays each target's corpus and regressions through it
//! under plain `cargo test`. A panic is a finding. The fixed chains name codecs of the default
//! features: with one of them compiled out, building its chains panics (naming the feature).

/// The codecs with a fuzz target `codec_<name>` (and a replayed corpus).
pub const CODECS: [&str; 16] = [
    "zlib",
    "bz2",
    "lz4",
    "lzma",
    "shuffle",
    "crc32",
    "adler32",
    "fletcher32",
    "delta",
    "fixedscaleoffset",
    "bitround",
    "quantize",
    "packbits",
    "astype",
    "pcodec",
    "zfp",
];

/// The codecs whose decoded chunks need not re-encode to themselves: lossy ones, and ones
/// whose encoder refuses values a decoder can produce (a `delta` first element out of range).
pub fn lossy(codec: &str) -> bool {
    matches!(
        codec,
        "delta" | "fixedscaleoffset" | "bitround" | "quantize" | "astype" | "zfp"
    )
}

/// The fixed chains each codec target decodes with: `(data type, chunk shape, codecs JSON)`.
pub fn chains(codec: &str) -> Vec<(zarr_meta::DataType, Vec<u64>, &'static str)> {
    use zarr_meta::DataType as T;
    match codec {
        "zlib" => vec![
            (
                T::UInt8,
                vec![64],
                r#"[{"name":"bytes"},{"name":"numcodecs.zlib","configuration":{"level":1}}]"#,
            ),
            (
                T::Float32,
                vec![8, 8],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.zlib","configuration":{"level":9}}]"#,
            ),
        ],
        "bz2" => vec![
            (
                T::UInt8,
                vec![64],
                r#"[{"name":"bytes"},{"name":"numcodecs.bz2","configuration":{"level":1}}]"#,
            ),
            (
                T::Int16,
                vec![4, 8],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.bz2","configuration":{"level":9}}]"#,
            ),
        ],
        "lz4" => vec![
            (
                T::UInt8,
                vec![64],
                r#"[{"name":"bytes"},{"name":"numcodecs.lz4","configuration":{}}]"#,
            ),
            (
                T::Float64,
                vec![16],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.lz4","configuration":{"acceleration":5}}]"#,
            ),
        ],
        "lzma" => vec![
            (
                T::UInt8,
                vec![64],
                r#"[{"name":"bytes"},{"name":"numcodecs.lzma","configuration":{"preset":1}}]"#,
            ),
            (
                T::Int32,
                vec![8, 8],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.lzma","configuration":{"format":2,"preset":0}}]"#,
            ),
            (
                T::UInt16,
                vec![32],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.lzma","configuration":{"format":3,"filters":[{"id":3,"dist":2},{"id":33,"preset":0}]}}]"#,
            ),
        ],
        "shuffle" => vec![
            (
                T::Int32,
                vec![8, 8],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.shuffle","configuration":{"elementsize":4}},{"name":"numcodecs.zlib","configuration":{"level":1}}]"#,
            ),
            (
                T::Float64,
                vec![16],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.shuffle","configuration":{"elementsize":8}}]"#,
            ),
        ],
        "crc32" => vec![
            (
                T::UInt32,
                vec![6],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.crc32","configuration":{}}]"#,
            ),
            (
                T::UInt8,
                vec![16],
                r#"[{"name":"bytes"},{"name":"numcodecs.crc32","configuration":{"location":"end"}}]"#,
            ),
        ],
        "adler32" => vec![
            (
                T::UInt32,
                vec![6],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.adler32","configuration":{}}]"#,
            ),
            (
                T::UInt8,
                vec![16],
                r#"[{"name":"bytes"},{"name":"numcodecs.lz4","configuration":{}},{"name":"numcodecs.adler32","configuration":{"location":"end"}}]"#,
            ),
        ],
        "fletcher32" => vec![
            (
                T::UInt8,
                vec![7],
                r#"[{"name":"bytes"},{"name":"numcodecs.fletcher32","configuration":{}}]"#,
            ),
            (
                T::Int16,
                vec![4, 4],
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.fletcher32","configuration":{}}]"#,
            ),
        ],
        "delta" => vec![
            (
                T::Int32,
                vec![8, 8],
                r#"[{"name":"numcodecs.delta","configuration":{"dtype":"<i4"}},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
            (
                T::Int16,
                vec![16],
                r#"[{"name":"numcodecs.delta","configuration":{"dtype":"<i2","astype":"<i1"}},{"name":"bytes"},{"name":"numcodecs.zlib","configuration":{"level":1}}]"#,
            ),
            (
                T::Float32,
                vec![4, 4],
                r#"[{"name":"numcodecs.delta","configuration":{"dtype":"<f4"}},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
        ],
        "fixedscaleoffset" => vec![
            (
                T::Float64,
                vec![16],
                r#"[{"name":"numcodecs.fixedscaleoffset","configuration":{"offset":1000,"scale":10,"dtype":"<f8","astype":"|u1"}},{"name":"bytes"}]"#,
            ),
            (
                T::Int32,
                vec![4, 4],
                r#"[{"name":"numcodecs.fixedscaleoffset","configuration":{"offset":10,"scale":2,"dtype":"<i4","astype":"<i2"}},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
        ],
        "bitround" => vec![
            (
                T::Float32,
                vec![8, 8],
                r#"[{"name":"numcodecs.bitround","configuration":{"keepbits":10}},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
            (
                T::Float64,
                vec![16],
                r#"[{"name":"numcodecs.bitround","configuration":{"keepbits":3}},{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.zlib","configuration":{}}]"#,
            ),
        ],
        "quantize" => vec![
            (
                T::Float64,
                vec![16],
                r#"[{"name":"numcodecs.quantize","configuration":{"digits":2,"dtype":"<f8"}},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
            (
                T::Float32,
                vec![4, 4],
                r#"[{"name":"numcodecs.quantize","configuration":{"digits":1,"dtype":"<f4","astype":"<f2"}},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
        ],
        "packbits" => vec![
            (
                T::Bool,
                vec![13],
                r#"[{"name":"numcodecs.packbits","configuration":{}},{"name":"bytes"}]"#,
            ),
            (
                T::Bool,
                vec![4, 4],
                r#"[{"name":"numcodecs.packbits","configuration":{}},{"name":"bytes"},{"name":"numcodecs.zlib","configuration":{"level":1}}]"#,
            ),
        ],
        "astype" => vec![
            (
                T::Float64,
                vec![16],
                r#"[{"name":"numcodecs.astype","configuration":{"encode_dtype":"<f4","decode_dtype":"<f8"}},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
            (
                T::Int64,
                vec![4, 4],
                r#"[{"name":"numcodecs.astype","configuration":{"encode_dtype":"<i2","decode_dtype":"<i8"}},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            ),
        ],
        "pcodec" => vec![
            (
                T::Int32,
                vec![64],
                r#"[{"name":"numcodecs.pcodec","configuration":{"level":8}}]"#,
            ),
            (
                T::Float64,
                vec![8, 8],
                r#"[{"name":"pcodec","configuration":{"level":3,"delta_spec":"try_consecutive","delta_encoding_order":2}}]"#,
            ),
            (
                T::UInt16,
                vec![16],
                r#"[{"name":"numcodecs.pcodec","configuration":{"mode_spec":"classic","equal_pages_up_to":4}}]"#,
            ),
        ],
        "zfp" => vec![
            (
                T::Float64,
                vec![6, 7],
                r#"[{"name":"numcodecs.zfpy","configuration":{"mode":4,"tolerance":0.01}}]"#,
            ),
            (
                T::Float32,
                vec![5, 5],
                r#"[{"name":"zfp","configuration":{"mode":"reversible"}}]"#,
            ),
            (
                T::Int32,
                vec![16],
                r#"[{"name":"zfp","configuration":{"mode":"fixed_rate","rate":8}}]"#,
            ),
            (
                T::Int64,
                vec![3, 4, 5],
                r#"[{"name":"zfpy","configuration":{"mode":3,"precision":20}}]"#,
            ),
        ],
        other => panic!("no chains for codec {other:?}"),
    }
}

/// Chain `i` of `codec`, built once (the chains are fixed, so building cannot fail).
pub fn chain(codec: &str, i: usize) -> &'static zarr_codecs::CodecChain {
    static CHAINS: std::sync::OnceLock<
        std::collections::BTreeMap<&'static str, Vec<zarr_codecs::CodecChain>>,
    > = std::sync::OnceLock::new();
    let all = CHAINS.get_or_init(|| {
        let registry = crate::default_registry();
        CODECS
            .iter()
            .copied()
            .map(|name| {
                let built = chains(name)
                    .into_iter()
                    .map(|(t, shape, json)| {
                        let repr =
                            zarr_codecs::ChunkRepr::new(shape, t, zarr_meta::FillValue::zero(t));
                        zarr_codecs::CodecChain::from_json(json, &repr, &registry)
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
/// `zarr_codecs::fuzzing::codec::check`.
pub fn run(codec: &str, data: &[u8]) {
    let Some((&selector, stored)) = data.split_first() else {
        return;
    };
    let n = chains(codec).len();
    zarr_codecs::fuzzing::codec::check(
        chain(codec, usize::from(selector) % n),
        lossy(codec),
        stored,
    );
}
