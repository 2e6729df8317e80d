//! An independent check against the conformance corpora: the repository's own
//! `conformance/v3`, and the `v3` and `extensions` sets of a shared corpus when
//! `ZARR_CONFORMANCE_DIR` names one (`zarr_testkit::corpus::conformance_corpora`). Every chunk
//! file of every readable array decodes to a chunk of its grid and encodes back to the same
//! key, and the documents this crate must refuse are refused.

use std::path::Path;

use serde_json::Value;
use zarr_grid::key_encoding::{build_key_encoding, default_key_encoding_registry};
use zarr_grid::{build_grid, default_registry, GridError};
use zarr_meta::ArrayMetadata;

/// Fixtures whose refusal lies with the grid or the key encoding.
const REFUSED_HERE: [&str; 6] = [
    "reject_unknown_grid",
    "reject_regular_bounded_unknown_reader",
    "reject_unknown_key_encoding",
    "reject_chunk_rank",
    "reject_zero_chunk",
    "rbx_must_understand_false",
];

/// Relative `/`-joined paths of every file under `dir`.
fn files_under(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if entry.path().is_dir() {
            files_under(&entry.path(), &rel, out);
        } else {
            out.push(rel);
        }
    }
}

/// A parsed document with its grid and key encoding.
type Opened = (
    ArrayMetadata,
    Box<dyn zarr_grid::ChunkGrid>,
    Box<dyn zarr_grid::ChunkKeyEncoding>,
);

fn open(doc: &[u8]) -> Result<Opened, GridError> {
    let meta = ArrayMetadata::from_slice(doc)?;
    let grid = build_grid(&default_registry(), &meta.chunk_grid, &meta.shape)?;
    let keys = build_key_encoding(&default_key_encoding_registry(), &meta.chunk_key_encoding)?;
    Ok((meta, grid, keys))
}

#[test]
fn corpus_keys_decode_into_their_grids() {
    let mut checked = 0;
    for corpus in zarr_testkit::corpus::conformance_corpora(&["v3", "extensions"]) {
        let text = std::fs::read_to_string(corpus.join("manifest.json")).expect("a manifest");
        let manifest: Value = serde_json::from_str(&text).expect("manifest parses");
        let fixtures = manifest["fixtures"].as_array().cloned().unwrap_or_default();
        for fixture in fixtures {
            let path = fixture["path"].as_str().unwrap_or_default();
            let dir = corpus.join(path);
            let Ok(doc) = std::fs::read(dir.join("zarr.json")) else {
                continue;
            };
            let outcome = open(&doc);
            if REFUSED_HERE.contains(&path) {
                if path.starts_with("rb") && !cfg!(feature = "regular-bounded") {
                    assert!(outcome.is_err(), "{path}");
                } else {
                    let err = outcome.err().unwrap_or_else(|| panic!("{path} accepted"));
                    assert!(
                        matches!(
                            err,
                            GridError::Meta(_) | GridError::DimensionMismatch { .. }
                        ),
                        "{path}: {err}"
                    );
                }
                checked += 1;
                continue;
            }
            if fixture["expect"] != "read" || fixture["node"] != "array" {
                continue; // refused elsewhere (codecs, metadata) or a group
            }
            let (meta, grid, keys) = match outcome {
                Ok(opened) => opened,
                Err(err) => {
                    let bounded = String::from_utf8_lossy(&doc).contains("regular_bounded");
                    assert!(
                        bounded && !cfg!(feature = "regular-bounded"),
                        "{path}: {err}"
                    );
                    continue;
                }
            };
            let mut files = Vec::new();
            files_under(&dir, "", &mut files);
            for key in files.iter().filter(|f| *f != "zarr.json") {
                let chunk = keys
                    .decode(key, meta.rank())
                    .unwrap_or_else(|e| panic!("{path}: {e}"));
                assert!(
                    grid.contains_chunk(&chunk),
                    "{path}: {key} outside {:?}",
                    grid.grid_range()
                );
                assert_eq!(&keys.encode(&chunk), key, "{path}");
            }
            checked += 1;
        }
    }
    eprintln!("checked {checked} fixtures");
    assert!(checked > 100, "only {checked} fixtures checked");
}
