//! One table-driven test over the conformance corpora: the project's own `conformance/v3`,
//! `conformance/v2` (Zarr v2 by zarr-python 3.1.6), `conformance/xarray` (xarray's
//! hierarchies, v2 and v3) and `conformance/zarrs` (rectilinear arrays by zarrs), and the `v3` and `extensions` sets of a shared corpus when `ZARR_CONFORMANCE_DIR` names one
//! (`zarr_testkit::corpus::conformance_corpora`). Every
//! `read` fixture decodes exactly to its `.npy`; every `reject` fixture is refused with an
//! error; every group opens with its attributes and children.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(
    feature = "zstd",
    feature = "gzip",
    feature = "blosc",
    feature = "crc32c",
    feature = "sharding",
    feature = "sparse",
    feature = "numcodecs",
    feature = "regular-bounded",
    feature = "rectilinear",
    feature = "vlen"
))]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use zarr_array::{Array, Group};
use zarr_store::{FilesystemStore, Store};

fn corpora() -> Vec<PathBuf> {
    zarr_testkit::corpus::conformance_corpora_of(
        &["v3", "v2", "xarray", "zarrs"],
        &["v3", "extensions"],
    )
}

#[derive(Default, Debug)]
struct Tally {
    read: usize,
    rejected: usize,
    groups: usize,
    refused_unsupported: usize,
    v2_written_back: usize,
    failures: Vec<String>,
}

fn run_fixture(dir: &Path, f: &Value, tally: &mut Tally) {
    let path = f["path"].as_str().unwrap();
    let store = Arc::new(FilesystemStore::open(dir).unwrap());
    let expect = f["expect"].as_str().unwrap();
    let node = f["node"].as_str().unwrap_or("array");
    let name = format!("{}:{path}", dir.display());
    if node == "group" {
        match Group::open(store, path) {
            Ok(g) if expect == "read" => {
                // children open too, and attributes are an object
                match g.members() {
                    Ok(_) => tally.groups += 1,
                    Err(e) => tally.failures.push(format!("{name}: members: {e}")),
                }
            }
            Ok(_) => tally
                .failures
                .push(format!("{name}: group should be refused")),
            Err(e) if expect == "reject" => {
                assert!(!e.to_string().is_empty());
                tally.rejected += 1;
            }
            Err(e) => tally.failures.push(format!("{name}: {e}")),
        }
        return;
    }
    let opened = Array::open(store, path);
    match (expect, opened) {
        ("reject", Ok(a)) => {
            // some faults only show when data is read (none expected); count as failure
            tally
                .failures
                .push(format!("{name}: should be refused, opened {:?}", a.shape()));
        }
        ("reject", Err(e)) => {
            assert!(!e.to_string().is_empty());
            tally.rejected += 1;
        }
        // a build without an extension must refuse its arrays by name, never misread them
        (_, Err(e))
            if uses_missing_extension(dir, path).is_some_and(|n| e.to_string().contains(&n)) =>
        {
            tally.refused_unsupported += 1;
        }
        (_, Err(e)) => tally
            .failures
            .push(format!("{name}: {}", zarr_testkit::report(&e))),
        (_, Ok(array)) => {
            let npy_path = dir.join(f["data"].as_str().unwrap());
            let npy = crate::common::read_npy(&std::fs::read(&npy_path).unwrap());
            match crate::common::check_whole(&array, &npy) {
                Ok(()) => {
                    tally.read += 1;
                    check_v2_written_back(dir, path, &array, tally);
                }
                Err(why) => tally.failures.push(format!("{name}: {why}")),
            }
        }
    }
}

/// A v2 array writes back the `.zarray` and `.zattrs` it was read from, byte for byte, unless
/// zarr-python did not write them (the hand-written `accept_*` documents, which it
/// normalises too).
fn check_v2_written_back(dir: &Path, path: &str, array: &Array, tally: &mut Tally) {
    let Some(doc) = array.metadata_v2() else {
        return;
    };
    tally.v2_written_back += 1;
    if path.starts_with("accept_") {
        return;
    }
    let zarray = std::fs::read(dir.join(path).join(".zarray")).unwrap();
    let zattrs = std::fs::read(dir.join(path).join(".zattrs")).ok();
    if doc.to_vec_pretty() != zarray {
        tally
            .failures
            .push(format!("{path}: .zarray is not written back as read"));
    }
    // through the array's own write path: the metadata alone, in a memory store
    let store = Arc::new(zarr_store::MemoryStore::new());
    store.set("a/.zarray", &zarray).unwrap();
    if let Some(z) = &zattrs {
        store.set("a/.zattrs", z).unwrap();
    }
    let mut copy = Array::open(store.clone(), "a").unwrap();
    copy.set_attributes(array.attributes().clone()).unwrap();
    let written = |key: &str| store.get(key).unwrap().unwrap_or_default();
    if written("a/.zarray") != zarray || zattrs.is_some_and(|z| written("a/.zattrs") != z) {
        tally.failures.push(format!(
            "{path}: set_attributes does not write back what it read"
        ));
    }
}

/// The name of a codec the array uses that this build's registry lacks.
fn uses_missing_extension(dir: &Path, path: &str) -> Option<String> {
    if let Ok(text) = std::fs::read_to_string(dir.join(path).join(".zarray")) {
        let meta: Value = serde_json::from_str(&text).ok()?;
        let registry = zarr_array::Extensions::default().codecs_v2;
        let filters = meta["filters"].as_array().cloned().unwrap_or_default();
        return std::iter::once(&meta["compressor"])
            .chain(filters.iter())
            .filter_map(|c| c["id"].as_str())
            .find(|id| !registry.contains(id))
            .map(String::from);
    }
    let text = std::fs::read_to_string(dir.join(path).join("zarr.json")).ok()?;
    let meta: Value = serde_json::from_str(&text).ok()?;
    let registry = zarr_array::Extensions::default().codecs;
    let mut names = Vec::new();
    collect_codec_names(&meta["codecs"], &mut names);
    names.into_iter().find(|n| !registry.contains(n))
}

fn collect_codec_names(codecs: &Value, out: &mut Vec<String>) {
    for c in codecs.as_array().into_iter().flatten() {
        if let Some(n) = c["name"].as_str() {
            out.push(n.to_string());
        }
        collect_codec_names(&c["configuration"]["codecs"], out);
    }
}

#[test]
fn every_fixture_reads_exactly_or_is_refused() {
    let mut tally = Tally::default();
    for dir in corpora() {
        let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
        let manifest: Value = serde_json::from_str(&text).unwrap();
        for f in manifest["fixtures"].as_array().unwrap() {
            run_fixture(&dir, f, &mut tally);
        }
    }
    eprintln!(
        "{} arrays read exactly, {} documents refused, {} groups opened, {} arrays refused for a codec this build lacks, {} v2 arrays written back as read",
        tally.read, tally.rejected, tally.groups, tally.refused_unsupported, tally.v2_written_back
    );
    assert!(
        tally.failures.is_empty(),
        "{} failures:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
    assert!(
        tally.read > 300
            && tally.rejected > 100
            && tally.groups > 20
            && tally.v2_written_back > 130,
        "{tally:?}"
    );
}
