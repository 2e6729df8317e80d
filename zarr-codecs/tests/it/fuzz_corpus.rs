//! Replays the fuzz corpora and regressions of the codec fuzz targets (`codec_*`, `shard`) as
//! ordinary tests through their bodies, `zarr_codecs::fuzzing::{codec, shard}::run`: no
//! cargo-fuzz needed. See fuzz/README.md.

#![cfg(all(
    feature = "zstd",
    feature = "gzip",
    feature = "blosc",
    feature = "crc32c",
    feature = "sharding"
))]

use zarr_codecs::fuzzing::{codec, shard};
use zarr_codecs::{ChunkIn, EncodeOptions};
use zarr_testkit::corpus::{
    conformance_chunks, replay_fuzz_target, seed_pattern, write_seed, Inputs,
};

macro_rules! codec_replay {
    ($($test:ident: $codec:literal),* $(,)?) => {
        /// The codecs with a replay test below.
        const REPLAYED: &[&str] = &[$($codec),*];
        $(
            #[test]
            fn $test() {
                replay_fuzz_target(concat!("codec_", $codec), Inputs::Fixed, |d| codec::run($codec, d));
            }
        )*
    };
}

codec_replay! {
    bytes_corpus_replays_cleanly: "bytes",
    transpose_corpus_replays_cleanly: "transpose",
    gzip_corpus_replays_cleanly: "gzip",
    zstd_corpus_replays_cleanly: "zstd",
    blosc_corpus_replays_cleanly: "blosc",
    crc32c_corpus_replays_cleanly: "crc32c",
}

#[test]
fn every_codec_with_a_target_has_a_replay_test() {
    assert_eq!(REPLAYED, codec::CODECS);
}

#[test]
fn shard_corpus_replays_cleanly() {
    replay_fuzz_target("shard", Inputs::Fixed, shard::run);
}

/// The `codec_vlen` seeds are written by hand (fuzz/corpus/codec_vlen/: a numcodecs chunk of
/// three strings, bytes, an empty chunk, trailing bytes, a count of 2^32 - 1, an element longer
/// than the chunk).
#[cfg(feature = "vlen")]
#[test]
fn vlen_corpus_replays_cleanly() {
    let ran = replay_fuzz_target("codec_vlen", Inputs::Fixed, zarr_codecs::fuzzing::vlen::run);
    assert!(ran >= 6, "{ran} inputs");
}

/// The `shard_vlen` corpus: seeded with shards of strings each fixed chain encodes (some inner
/// chunks all fill, so left out; the ignored `generate_shard_vlen_seeds`), grown by libFuzzer.
#[cfg(feature = "vlen")]
#[test]
fn shard_vlen_corpus_replays_cleanly() {
    let ran = replay_fuzz_target(
        "shard_vlen",
        Inputs::Fixed,
        zarr_codecs::fuzzing::vlen::run_shard,
    );
    assert!(ran >= 6, "{ran} inputs");
}

#[cfg(feature = "vlen")]
#[test]
#[ignore = "writes fuzz/corpus/shard_vlen"]
fn generate_shard_vlen_seeds() {
    use zarr_codecs::fuzzing::vlen::{shard_chain, shard_chains};
    let dir = zarr_testkit::repo_root().join("fuzz/corpus/shard_vlen");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..shard_chains().len() {
        let chain = shard_chain(i);
        for (k, items) in [
            (0..16).map(|e| format!("é{e}")).collect::<Vec<_>>(),
            (0..16)
                .map(|e| {
                    if e % 4 < 2 && e < 8 {
                        "-".into()
                    } else {
                        "x".repeat(e)
                    }
                })
                .collect(),
            vec!["-".to_string(); 16],
        ]
        .iter()
        .enumerate()
        {
            let stored = chain
                .encode(
                    ChunkIn::Vlen(&mut items.iter().map(|s| s.as_bytes())),
                    EncodeOptions::ENCODE_EMPTY,
                )
                .unwrap()
                .unwrap();
            let mut input = vec![i as u8];
            input.extend(stored);
            std::fs::write(dir.join(format!("seed-{i}-{k}")), input).unwrap();
        }
    }
}

#[test]
fn every_fixed_chain_builds() {
    for name in codec::CODECS {
        for i in 0..codec::chains(name).len() {
            codec::chain(name, i);
        }
    }
    for i in 0..shard::chains().len() {
        shard::chain(i);
    }
}

#[test]
#[ignore = "inputs of bugs not fixed yet (fuzz/regressions/KNOWN_FAILURES)"]
fn known_failures() {
    for name in codec::CODECS {
        replay_fuzz_target(&format!("codec_{name}"), Inputs::KnownFailures, |d| {
            codec::run(name, d)
        });
    }
    replay_fuzz_target("shard", Inputs::KnownFailures, shard::run);
}

/// Writes seed inputs for the codec and shard targets into `fuzz/corpus/` (then minimise with
/// `cargo fuzz cmin`): chunks encoded by the fixed chains, and chunk files of the conformance
/// fixtures that use the codec.
#[test]
#[ignore = "writes seeds into fuzz/corpus; run by hand when the fixed chains change"]
fn generate_seeds() {
    for name in codec::CODECS {
        let target = format!("codec_{name}");
        let chains = codec::chains(name);
        for (i, (t, _, _)) in chains.iter().enumerate() {
            let chain = codec::chain(name, i);
            for p in 0..3 {
                let data = seed_pattern(p, chain.decoded_len(), *t == zarr_meta::DataType::Bool);
                let stored = chain
                    .encode(&data, EncodeOptions::ENCODE_EMPTY)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                // a codec that stores no empty chunk (`sparse_layout`) has no seed for one
                if let Some(stored) = stored {
                    write_seed(&target, &format!("enc{p}"), i, &stored);
                }
            }
        }
        for (seed_name, bytes) in conformance_chunks(|zarr_json| uses(zarr_json, name)) {
            for i in 0..chains.len() {
                write_seed(&target, &seed_name, i, &bytes);
            }
        }
    }
    for (i, _) in shard::chains().iter().enumerate() {
        let chain = shard::chain(i);
        for p in 0..3 {
            let data = seed_pattern(p, chain.decoded_len(), false);
            write_seed(
                "shard",
                &format!("enc{p}"),
                i,
                &chain
                    .encode(&data, EncodeOptions::ENCODE_EMPTY)
                    .expect("encodes")
                    .expect("encodes"),
            );
        }
        // only the first inner chunk stored
        let mut data = vec![0u8; chain.decoded_len()];
        data[0] = 1;
        write_seed(
            "shard",
            "one",
            i,
            &chain
                .encode(&data, EncodeOptions::ENCODE_EMPTY)
                .expect("encodes")
                .expect("encodes"),
        );
    }
    for (name, bytes) in conformance_chunks(|zarr_json| uses(zarr_json, "sharding_indexed")) {
        for i in 0..shard::chains().len() {
            write_seed("shard", &name, i, &bytes);
        }
    }
}

/// Whether the array metadata `zarr_json` names the codec `name` among its top-level codecs.
fn uses(zarr_json: &str, name: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(zarr_json).is_ok_and(|meta| {
        meta["codecs"]
            .as_array()
            .is_some_and(|codecs| codecs.iter().any(|c| c["name"] == name))
    })
}
