//! Replays the fuzz corpora and regressions of the numcodecs fuzz targets (`codec_<name>`) as
//! ordinary tests through their bodies, `zarr_numcodecs::fuzzing::run`: no cargo-fuzz needed.
//! See fuzz/README.md.

#![cfg(feature = "numcodecs")]

use zarr_numcodecs::fuzzing as codec;
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
fn every_codec_with_a_target_has_a_replay_test() {
    assert_eq!(REPLAYED, codec::CODECS);
}

#[test]
fn every_fixed_chain_builds() {
    for name in codec::CODECS {
        for i in 0..codec::chains(name).len() {
            codec::chain(name, i);
        }
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
}

/// Writes seed inputs for the numcodecs codec targets into `fuzz/corpus/` (then minimise with
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
                // a lossy codec may refuse a pattern (a delta first element out of range)
                match chain.encode(&data, zarr_codecs::EncodeOptions::ENCODE_EMPTY) {
                    Ok(Some(stored)) => write_seed(&target, &format!("enc{p}"), i, &stored),
                    Ok(None) => {}
                    Err(e) => assert!(codec::lossy(name), "{name}: {e}"),
                }
            }
        }
        let numcodecs_name = match name {
            "zfp" => "numcodecs.zfpy".to_string(),
            other => format!("numcodecs.{other}"),
        };
        let chunks = conformance_chunks(|zarr_json| {
            uses(zarr_json, name) || uses(zarr_json, &numcodecs_name)
        });
        for (seed_name, bytes) in chunks {
            for i in 0..chains.len() {
                write_seed(&target, &seed_name, i, &bytes);
            }
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
