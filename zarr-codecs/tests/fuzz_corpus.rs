//! Replays the fuzz corpora and regressions of the codec fuzz targets (`codec_*`, `shard`) as
//! ordinary tests: no cargo-fuzz needed. See `fuzz/targets_common/README.md`.

#![cfg(all(
    feature = "zstd",
    feature = "gzip",
    feature = "blosc",
    feature = "crc32c",
    feature = "sharding",
    feature = "numcodecs"
))]

include!("../../fuzz/targets_common/codecs.rs");
include!("../../fuzz/targets_common/shard.rs");
include!("../../fuzz/targets_common/replay.rs");

macro_rules! codec_replay {
    ($($test:ident: $codec:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            let ran = replay_corpus(concat!("codec_", $codec), false, |d| fuzz_codec($codec, d));
            assert!(ran > 0, concat!("the codec_", $codec, " corpus is empty"));
        }
    )*};
}

codec_replay! {
    bytes_corpus_replays_cleanly: "bytes",
    transpose_corpus_replays_cleanly: "transpose",
    gzip_corpus_replays_cleanly: "gzip",
    zstd_corpus_replays_cleanly: "zstd",
    blosc_corpus_replays_cleanly: "blosc",
    crc32c_corpus_replays_cleanly: "crc32c",
    zlib_corpus_replays_cleanly: "zlib",
    bz2_corpus_replays_cleanly: "bz2",
    lz4_corpus_replays_cleanly: "lz4",
    lzma_corpus_replays_cleanly: "lzma",
    shuffle_corpus_replays_cleanly: "shuffle",
    crc32_corpus_replays_cleanly: "crc32",
    adler32_corpus_replays_cleanly: "adler32",
    fletcher32_corpus_replays_cleanly: "fletcher32",
    delta_corpus_replays_cleanly: "delta",
    fixedscaleoffset_corpus_replays_cleanly: "fixedscaleoffset",
    bitround_corpus_replays_cleanly: "bitround",
    quantize_corpus_replays_cleanly: "quantize",
    packbits_corpus_replays_cleanly: "packbits",
    astype_corpus_replays_cleanly: "astype",
    pcodec_corpus_replays_cleanly: "pcodec",
    zfp_corpus_replays_cleanly: "zfp",
}

#[test]
fn shard_corpus_replays_cleanly() {
    let ran = replay_corpus("shard", false, fuzz_shard);
    assert!(ran > 0, "the shard corpus is empty");
}

#[test]
fn every_fixed_chain_builds() {
    for codec in CODECS {
        for i in 0..codec_chains(codec).len() {
            codec_chain(codec, i);
        }
    }
    for i in 0..shard_chains().len() {
        shard_chain(i);
    }
}

#[test]
#[ignore = "inputs of bugs not fixed yet (fuzz/regressions/KNOWN_FAILURES)"]
fn known_failures() {
    for codec in CODECS {
        // a function pointer per codec: replay_corpus takes a plain fn
        let known = |name: &str| -> fn(&[u8]) {
            macro_rules! each {
                ($($c:literal),*) => {
                    match name {
                        $($c => |d| fuzz_codec($c, d),)*
                        _ => unreachable!("every codec of CODECS is listed"),
                    }
                };
            }
            each!(
                "bytes",
                "transpose",
                "gzip",
                "zstd",
                "blosc",
                "crc32c",
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
                "zfp"
            )
        };
        replay_corpus(&format!("codec_{codec}"), true, known(codec));
    }
    replay_corpus("shard", true, fuzz_shard);
}

/// Test data of `len` bytes: all zero, a ramp, or pseudo-random (`bool` chunks get 0/1).
fn pattern(kind: usize, len: usize, is_bool: bool) -> Vec<u8> {
    let mut rng = zarr_testkit::Rng::new(1);
    (0..len)
        .map(|i| {
            let b = match kind {
                0 => 0,
                1 => (i / 3) as u8,
                _ => rng.byte(),
            };
            if is_bool {
                b & 1
            } else {
                b
            }
        })
        .collect()
}

/// Chunk files (`c/...`) of the conformance fixtures whose top-level codecs include `name`,
/// at most two per fixture.
fn conformance_chunks(name: &str) -> Vec<(String, Vec<u8>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/v3");
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&root) else {
        return out;
    };
    let mut fixtures: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    fixtures.sort();
    for fixture in fixtures {
        let Ok(text) = std::fs::read_to_string(fixture.join("zarr.json")) else {
            continue;
        };
        let Ok(meta) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let uses = meta["codecs"]
            .as_array()
            .is_some_and(|codecs| codecs.iter().any(|c| c["name"] == name));
        if !uses {
            continue;
        }
        let mut files = Vec::new();
        let mut pending = vec![fixture.join("c")];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.filter_map(Result::ok) {
                let p = e.path();
                if p.is_dir() {
                    pending.push(p);
                } else {
                    files.push(p);
                }
            }
        }
        files.sort();
        let fname = fixture
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("x")
            .to_owned();
        for (k, f) in files.iter().take(2).enumerate() {
            if let Ok(bytes) = std::fs::read(f) {
                out.push((format!("{fname}-{k}"), bytes));
            }
        }
    }
    out
}

fn write_seed(target: &str, name: &str, selector: usize, bytes: &[u8]) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    std::fs::create_dir_all(&dir).expect("corpus folder");
    let mut data = vec![selector as u8];
    data.extend_from_slice(bytes);
    std::fs::write(dir.join(format!("seed-{name}-{selector}")), data).expect("seed written");
}

/// Writes seed inputs for the codec and shard targets into `fuzz/corpus/` (then minimise with
/// `cargo fuzz cmin`): chunks encoded by the fixed chains, and chunk files of the conformance
/// fixtures that use the codec.
#[test]
#[ignore = "writes seeds into fuzz/corpus; run by hand when the fixed chains change"]
fn generate_seeds() {
    for codec in CODECS {
        let target = format!("codec_{codec}");
        let chains = codec_chains(codec);
        for (i, (t, _, _)) in chains.iter().enumerate() {
            let chain = codec_chain(codec, i);
            for p in 0..3 {
                let data = pattern(p, chain.decoded_len(), *t == zarr_meta::DataType::Bool);
                // a lossy codec may refuse a pattern (a delta first element out of range)
                match chain.encode(&data) {
                    Ok(stored) => write_seed(&target, &format!("enc{p}"), i, &stored),
                    Err(e) => assert!(lossy(codec), "{codec}: {e}"),
                }
            }
        }
        let numcodecs_name = match codec {
            "zfp" => "numcodecs.zfpy".to_string(),
            other => format!("numcodecs.{other}"),
        };
        let mut chunks = conformance_chunks(codec);
        chunks.extend(conformance_chunks(&numcodecs_name));
        for (name, bytes) in chunks {
            for i in 0..chains.len() {
                write_seed(&target, &name, i, &bytes);
            }
        }
    }
    for (i, _) in shard_chains().iter().enumerate() {
        let chain = shard_chain(i);
        for p in 0..3 {
            let data = pattern(p, chain.decoded_len(), false);
            write_seed(
                "shard",
                &format!("enc{p}"),
                i,
                &chain.encode(&data).expect("encodes"),
            );
        }
        // only the first inner chunk stored
        let mut data = vec![0u8; chain.decoded_len()];
        data[0] = 1;
        write_seed("shard", "one", i, &chain.encode(&data).expect("encodes"));
    }
    for (name, bytes) in conformance_chunks("sharding_indexed") {
        for i in 0..shard_chains().len() {
            write_seed("shard", &name, i, &bytes);
        }
    }
}
