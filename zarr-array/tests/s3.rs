//! Arrays on object stores (cargo feature `object-store`): request counts of sharded reads (the
//! shard index asked for once per open array) on
//! `object_store`'s in-memory store, and, against a real S3-compatible server (the `s3_*`
//! tests), the same counts, create / write / read / append / prepend / resize round trips,
//! sparse round trips, the conformance corpus read back from the server, and the read time of
//! the 256^3 uint16 zstd workload next to the filesystem's. The `s3_*` tests are ignored by a
//! plain `cargo test`; `scripts/test` runs them once it has started the server. By hand:
//!
//! ```text
//! eval "$(scripts/s3-server)"
//! cargo test -p zarr-array --features object-store --test s3 -- --ignored --nocapture
//! scripts/s3-server stop
//! ```
//!
//! Without a server (`AWS_ENDPOINT_URL` unset, or nothing answering) they fail. Without the
//! feature this file is empty, so that `cargo test -p zarr-array` does not build the object
//! store client.
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
    feature = "vlen"
))]
#![cfg(feature = "object-store")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ndarray::{s, ArrayD, IxDyn};
use serde_json::{json, Value};
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_layout_sparse::Format;
use zarr_array::{Array, ArrayBuilder, DataType, ExtensionDef, Group};
use zarr_store::object_store::memory::InMemory;
use zarr_store::testing::{CountingObjectStore, RequestCounts};
use zarr_store::{open_url, FilesystemStore, ObjectStoreBackend, Store};
use zarr_testkit::s3;

type TestResult = Result<(), Box<dyn std::error::Error>>;

// ---------------------------------------------------------------------------------------------
// The S3 server (scripts/s3-server; scripts/test starts it).

const BUCKET: &str = "zarr-array-test";

/// An `s3://` url under a prefix no other test run uses.
fn unique_url(test: &str) -> String {
    format!("s3://{BUCKET}/{}", s3::unique_prefix(test))
}

// ---------------------------------------------------------------------------------------------
// Request counts.

/// The requests `run` makes.
fn counted<T>(
    requests: &CountingObjectStore,
    what: &str,
    run: impl FnOnce() -> T,
) -> (T, RequestCounts) {
    requests.reset();
    let out = run();
    let counts = requests.counts();
    eprintln!("requests: {what}: {counts:?}");
    (out, counts)
}

/// A 128x128 uint16 array in 64x64 shards of 16x16 inner chunks (zstd), every value
/// written, on `store`; then the requests of opening it and reading from it.
fn check_shard_requests(store: ObjectStoreBackend) -> TestResult {
    let (store, requests) = store.with_request_counter();
    let store: Arc<dyn Store> = Arc::new(store);
    let data = ArrayD::from_shape_fn(IxDyn(&[128, 128]), |i| (i[0] * 128 + i[1]) as u16);
    let array = ArrayBuilder::new(vec![128, 128], DataType::UInt16)
        .chunk_shape(vec![16, 16])
        .shards(vec![64, 64])
        .create(store.clone(), "sharded")?;
    let (written, c) = counted(&requests, "write 4 whole shards", || {
        array.write_region(&region_at(&[0, 0], &data), data.view())
    });
    written?;
    assert_eq!(c.put, 4, "one PUT per shard: {c:?}");

    let (array, c) = counted(&requests, "open", || Array::open(store.clone(), "sharded"));
    let array = array?;
    assert_eq!((c.get, c.total()), (1, 1), "opening reads zarr.json only");

    let (one, c) = counted(&requests, "one inner chunk of a shard", || {
        array.read_region::<u16>(&Region::new(vec![80, 16], vec![16, 16])?)
    });
    assert_eq!(one?, data.slice(s![80..96, 16..32]).into_dyn());
    assert_eq!(
        (c.get, c.head, c.total()),
        (2, 0, 2),
        "one inner chunk: the shard index (a suffix GET), then the chunk (a range GET)"
    );

    let (part, c) = counted(&requests, "part of one inner chunk", || {
        array.read_region::<u16>(&Region::new(vec![81, 17], vec![3, 5])?)
    });
    assert_eq!(part?, data.slice(s![81..84, 17..22]).into_dyn());
    assert_eq!(
        (c.get, c.total()),
        (1, 1),
        "part of an inner chunk of the same shard: the chunk alone, the shard's index is kept \
         (`Array::with_index_cache`; 2 GETs before the index cache): {c:?}"
    );

    let (four, c) = counted(&requests, "four inner chunks of one shard", || {
        array.read_region::<u16>(&Region::new(vec![0, 0], vec![32, 32])?)
    });
    assert_eq!(four?, data.slice(s![0..32, 0..32]).into_dyn());
    assert!(
        c.get <= 5 && c.head == 0,
        "four inner chunks: the index and at most one GET per chunk: {c:?}"
    );

    let (whole, c) = counted(&requests, "one whole shard", || {
        array.read_region::<u16>(&Region::new(vec![64, 0], vec![64, 64])?)
    });
    assert_eq!(whole?, data.slice(s![64..128, 0..64]).into_dyn());
    assert!(
        c.get <= 2 && c.total() == c.get,
        "a whole shard costs at most 2 GETs: {c:?}"
    );

    let (all, c) = counted(&requests, "the whole array (4 shards)", || {
        array.read_all::<u16>()
    });
    assert_eq!(all?, data);
    assert!(c.get <= 8 && c.total() == c.get, "{c:?}");

    // An inner chunk that the index marks missing: the index alone.
    let sparse = ArrayBuilder::new(vec![128, 128], DataType::UInt16)
        .chunk_shape(vec![16, 16])
        .shards(vec![64, 64])
        .create(store.clone(), "holes")?;
    sparse.write_region(
        &zarr_array::Region::new(vec![0, 0], vec![16, 16])?,
        ArrayD::from_elem(IxDyn(&[16, 16]), 7u16).view(),
    )?;
    let (hole, c) = counted(&requests, "a missing inner chunk of a stored shard", || {
        sparse.read_region::<u16>(&Region::new(vec![32, 32], vec![16, 16])?)
    });
    assert!(hole?.iter().all(|&v| v == 0));
    assert_eq!((c.get, c.total()), (1, 1), "the index says it is missing");
    let (hole, c) = counted(&requests, "the missing inner chunk again", || {
        sparse.read_region::<u16>(&Region::new(vec![32, 32], vec![16, 16])?)
    });
    assert!(hole?.iter().all(|&v| v == 0));
    assert_eq!(
        c.total(),
        0,
        "the kept index says it is missing (1 GET before)"
    );
    // written through the array: the kept index is dropped, the next read asks for it again
    sparse.write_region(
        &zarr_array::Region::new(vec![32, 32], vec![16, 16])?,
        ArrayD::from_elem(IxDyn(&[16, 16]), 9u16).view(),
    )?;
    let (filled, c) = counted(
        &requests,
        "the inner chunk written through the array",
        || sparse.read_region::<u16>(&Region::new(vec![36, 36], vec![4, 4])?),
    );
    assert!(filled?.iter().all(|&v| v == 9));
    assert_eq!(
        (c.get, c.total()),
        (2, 2),
        "the index again, then the chunk: {c:?}"
    );
    let (missing, c) = counted(&requests, "an inner chunk of a missing shard", || {
        sparse.read_region::<u16>(&Region::new(vec![96, 96], vec![16, 16])?)
    });
    assert!(missing?.iter().all(|&v| v == 0));
    assert_eq!((c.get, c.total()), (1, 1), "one GET, answered 404");
    let (missing, c) = counted(&requests, "the missing shard again", || {
        sparse.read_region::<u16>(&Region::new(vec![96, 96], vec![16, 16])?)
    });
    assert!(missing?.iter().all(|&v| v == 0));
    assert_eq!(
        (c.get, c.total()),
        (1, 1),
        "a shard's absence is not kept: another writer may store it"
    );
    Ok(())
}

/// Every fixed-size read path keeps all its requests in flight at once on an object store
/// whose requests wait (100 ms each, on the runtime's timer, so no thread waits): far more
/// than the 2 cores of the machine the tests run on, and the requests made are pinned: one
/// GET per chunk met, none twice.
/// The most threads the process had while `run` ran (sampled every 2 ms from
/// `/proc/self/status`; `None` where there is no such file), and its output.
fn most_threads_during<T>(run: impl FnOnce() -> T) -> (T, Option<u64>) {
    let threads = || -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("Threads:"))?;
        line["Threads:".len()..].trim().parse().ok()
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            let mut most = threads();
            while !done.load(Ordering::Relaxed) {
                most = most.max(threads());
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            most
        });
        let out = run();
        done.store(true, Ordering::Relaxed);
        (out, sampler.join().expect("the sampler"))
    })
}

#[test]
fn requests_in_flight_in_memory() -> TestResult {
    let (store, requests) =
        ObjectStoreBackend::new(Arc::new(InMemory::new()), "data")?.with_request_counter();
    let store: Arc<dyn Store> = Arc::new(store);
    // 8 x 96 x 96 in 4 x 8 x 8 chunks (zstd): 2 x 12 x 12 = 288 chunks
    let data = ArrayD::from_shape_fn(IxDyn(&[8, 96, 96]), |i| {
        (i[0] * 9216 + i[1] * 96 + i[2]) as u16
    });
    ArrayBuilder::new(vec![8, 96, 96], DataType::UInt16)
        .chunk_shape(vec![4, 8, 8])
        .create(store.clone(), "a")?
        .write_region(&region_at(&[0, 0, 0], &data), data.view())?;
    requests.set_latency(std::time::Duration::from_millis(100));
    let (array, c) = counted(&requests, "open", || Array::open(store.clone(), "a"));
    let array = array?;
    assert_eq!((c.get, c.total()), (1, 1), "{c:?}");

    let ((plane, threads), c) = counted(&requests, "a plane through 144 chunks", || {
        most_threads_during(|| {
            array.read_region::<u16>(&Region::new(vec![5, 0, 0], vec![1, 96, 96])?)
        })
    });
    assert_eq!(plane?, data.slice(s![5..6, .., ..]).into_dyn());
    assert_eq!((c.get, c.total()), (144, 144), "{c:?}");
    assert_eq!(
        c.peak_in_flight, 144,
        "every chunk of the plane at once: {c:?}"
    );
    // no thread waits on a request: the process' threads (the test harness', rayon's, the
    // runtime's) are far fewer than the requests in flight
    if let Some(threads) = threads {
        assert!(threads < 64, "{threads} threads for 144 requests in flight");
    }

    let (all, c) = counted(&requests, "the whole array, 288 chunks", || {
        array.read_all::<u16>()
    });
    assert_eq!(all?, data);
    assert_eq!((c.get, c.total()), (288, 288), "{c:?}");
    assert_eq!(c.peak_in_flight, 256, "the default concurrency: {c:?}");

    let rows: Vec<i64> = (0..96).step_by(8).collect();
    let sel = zarr_array::Selection::Orthogonal(vec![
        zarr_array::AxisSelection::Indices(vec![6]),
        zarr_array::AxisSelection::Indices(rows.clone()),
        zarr_array::AxisSelection::Indices((0..96).rev().collect()),
    ]);
    let (got, c) = counted(&requests, "orthogonal, 144 chunks", || {
        array.read_selection::<u16>(&sel)
    });
    let data_ref = &data;
    let want: Vec<u16> = rows
        .iter()
        .flat_map(|&r| (0..96).rev().map(move |k| data_ref[[6, r as usize, k]]))
        .collect();
    assert_eq!(got?.iter().copied().collect::<Vec<_>>(), want);
    assert_eq!((c.get, c.total()), (144, 144), "{c:?}");
    assert_eq!(c.peak_in_flight, 144, "{c:?}");

    let points: Vec<Vec<i64>> = (0..96).map(|i| vec![i % 8, i, (i * 37) % 96]).collect();
    let chunks: std::collections::BTreeSet<(i64, i64, i64)> = points
        .iter()
        .map(|p| (p[0] / 4, p[1] / 8, p[2] / 8))
        .collect();
    let (got, c) = counted(&requests, "96 points", || {
        array.read_selection::<u16>(&zarr_array::Selection::Points(points.clone()))
    });
    let want: Vec<u16> = points
        .iter()
        .map(|p| data[[p[0] as usize, p[1] as usize, p[2] as usize]])
        .collect();
    assert_eq!(got?.iter().copied().collect::<Vec<_>>(), want);
    assert_eq!(c.get, chunks.len() as u64, "one GET per chunk met: {c:?}");
    assert!(c.peak_in_flight >= 64, "{c:?}");

    // a small concurrency is kept to as well
    let few = Array::open(
        Arc::new(
            ObjectStoreBackend::new(requests.clone(), "data")?
                .with_remote_options(&zarr_store::RemoteOptions::default().with_concurrency(2)),
        ),
        "a",
    )?;
    let (plane, c) = counted(&requests, "a plane, two requests at a time", || {
        few.read_region::<u16>(&Region::new(vec![5, 0, 0], vec![1, 24, 24])?)
    });
    assert_eq!(plane?, data.slice(s![5..6, ..24, ..24]).into_dyn());
    assert_eq!((c.get, c.peak_in_flight), (9, 2), "{c:?}");

    // writes: every chunk's PUT in flight together too, and a plane written in part reads
    // its 144 chunks at once, then writes them at once
    let (written, c) = counted(&requests, "the whole array written, 288 chunks", || {
        array.write_region(&region_at(&[0, 0, 0], &data), data.view())
    });
    written?;
    assert_eq!((c.put, c.total()), (288, 288), "{c:?}");
    assert_eq!(c.peak_in_flight, 256, "{c:?}");
    let plane = ArrayD::from_elem(IxDyn(&[1, 96, 96]), 7u16);
    let (written, c) = counted(&requests, "a plane written through 144 chunks", || {
        array.write_region(&region_at(&[5, 0, 0], &plane), plane.view())
    });
    written?;
    assert_eq!((c.get, c.put, c.total()), (144, 144, 288), "{c:?}");
    assert_eq!(c.peak_in_flight, 144, "{c:?}");
    let mut want = data.clone();
    want.slice_mut(s![5..6, .., ..]).fill(7);
    assert_eq!(array.read_all::<u16>()?, want);

    // shards of 4 x 48 x 48: a plane is 4 shard indexes at once, then each shard's inner
    // chunks in one request
    let sharded = ArrayBuilder::new(vec![8, 96, 96], DataType::UInt16)
        .chunk_shape(vec![4, 8, 8])
        .shards(vec![4, 48, 48])
        .create(store.clone(), "s")?;
    requests.set_latency(std::time::Duration::ZERO);
    sharded.write_region(&region_at(&[0, 0, 0], &data), data.view())?;
    requests.set_latency(std::time::Duration::from_millis(100));
    let (plane, c) = counted(&requests, "a plane through 4 shards", || {
        sharded.read_region::<u16>(&Region::new(vec![5, 0, 0], vec![1, 96, 96])?)
    });
    assert_eq!(plane?, data.slice(s![5..6, .., ..]).into_dyn());
    assert_eq!((c.get, c.total(), c.peak_in_flight), (8, 8, 4), "{c:?}");
    // the next plane of the same shards: their indexes are kept, so each shard's inner chunks
    // alone, one round trip (8 GETs in two rounds before the index cache)
    let (plane, c) = counted(&requests, "the next plane through 4 shards", || {
        sharded.read_region::<u16>(&Region::new(vec![6, 0, 0], vec![1, 96, 96])?)
    });
    assert_eq!(plane?, data.slice(s![6..7, .., ..]).into_dyn());
    assert_eq!((c.get, c.total(), c.peak_in_flight), (4, 4, 4), "{c:?}");
    Ok(())
}

/// Listing a group's members on an object store whose requests wait: every child's metadata
/// requested at once (one round for v3 children; a v2 child's `.zarray` or `.zgroup` after
/// its missing `zarr.json`), the requests pinned.
#[test]
fn group_listing_in_flight_in_memory() -> TestResult {
    let (store, requests) =
        ObjectStoreBackend::new(Arc::new(InMemory::new()), "data")?.with_request_counter();
    let store: Arc<dyn Store> = Arc::new(store);
    let root = Group::create(store.clone(), "", serde_json::Map::new())?;
    for i in 0..40 {
        if i % 2 == 0 {
            root.create_group(&format!("g{i:02}"), serde_json::Map::new())?;
        } else {
            ArrayBuilder::new(vec![4], DataType::UInt8)
                .chunk_shape(vec![2])
                .create(store.clone(), &format!("a{i:02}"))?;
        }
    }
    Group::create_v2(store.clone(), "old", serde_json::Map::new())?;
    let root = Group::open(store.clone(), "")?;
    requests.set_latency(std::time::Duration::from_millis(100));
    let (members, c) = counted(&requests, "41 members", || root.members());
    let members = members?;
    requests.set_latency(std::time::Duration::ZERO);
    assert_eq!(members.len(), 41);
    for (name, kind) in &members {
        let want = if name.starts_with('a') {
            zarr_array::NodeKind::Array
        } else {
            zarr_array::NodeKind::Group
        };
        assert_eq!(kind, &want, "{name}");
    }
    // the listing, 41 zarr.json (one missing), then .zarray (missing), then .zgroup
    assert_eq!(
        (c.list_with_delimiter, c.get, c.total()),
        (1, 43, 44),
        "{c:?}"
    );
    assert_eq!(c.peak_in_flight, 41, "{c:?}");
    Ok(())
}

/// A sparse read of a region on an object store whose requests wait: every chunk of the
/// region requested at once.
#[test]
fn sparse_reads_in_flight_in_memory() -> TestResult {
    let (store, requests) =
        ObjectStoreBackend::new(Arc::new(InMemory::new()), "data")?.with_request_counter();
    let store: Arc<dyn Store> = Arc::new(store);
    // 8 x 8 chunks of 20 x 20, an entry or more in each
    let reference = ArrayD::from_shape_fn(IxDyn(&[160, 160]), |i| {
        if (i[0] * 7 + i[1] * 3) % 13 == 0 {
            (i[0] * 160 + i[1]) as f64 + 0.5
        } else {
            0.0
        }
    });
    let a = ArrayBuilder::new(vec![160, 160], DataType::Float64)
        .chunk_shape(vec![20, 20])
        .sparse(Format::Csr)
        .create(store.clone(), "csr")?;
    a.write_region(&region_at(&[0, 0], &reference), reference.view())?;
    requests.set_latency(std::time::Duration::from_millis(100));
    let (coo, c) = counted(&requests, "a sparse read of 64 chunks", || {
        a.sparse()?.read_coo::<f64>(&Region::whole(a.shape()))
    });
    requests.set_latency(std::time::Duration::ZERO);
    let coo = coo?;
    let mut back = ArrayD::from_elem(IxDyn(&[160, 160]), 0.0f64);
    for (at, v) in coo.coords().columns().into_iter().zip(coo.values()) {
        back[[at[0] as usize, at[1] as usize]] = *v;
    }
    let nnz = reference.iter().filter(|&&v| v != 0.0).count();
    let wrong: Vec<_> = back
        .indexed_iter()
        .filter(|(i, v)| **v != reference[i.clone()])
        .take(3)
        .map(|(i, v)| (i.clone(), *v, reference[i]))
        .collect();
    assert!(wrong.is_empty(), "{} of {nnz}: {wrong:?}", coo.nnz());
    assert_eq!((c.get, c.total()), (64, 64), "{c:?}");
    assert_eq!(c.peak_in_flight, 64, "{c:?}");
    Ok(())
}

#[test]
fn shard_requests_in_memory() -> TestResult {
    check_shard_requests(ObjectStoreBackend::new(Arc::new(InMemory::new()), "data")?)
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_shard_requests() -> TestResult {
    s3::endpoint(BUCKET);
    check_shard_requests(ObjectStoreBackend::from_url(&unique_url("requests"))?)
}

/// A consolidated hierarchy of 10 groups of 20 arrays each (attributes on every node), on
/// `store`, in Zarr format `zarr_format` (v3: the copy in the root's `zarr.json`; v2: the
/// root's `.zmetadata`); then the requests of opening the root, listing it, and opening every
/// array and reading its shape and attributes: the one GET of the document holding the copy,
/// no LIST (a v2 root opened without its format given looks for a `zarr.json` first: 2 GETs).
fn check_consolidated_requests(store: ObjectStoreBackend, zarr_format: u8) -> TestResult {
    let (store, requests) = store.with_request_counter();
    let store: Arc<dyn Store> = Arc::new(store);
    let mut root = if zarr_format == 2 {
        Group::create_v2(store.clone(), "", serde_json::Map::new())?
    } else {
        Group::create(store.clone(), "", serde_json::Map::new())?
    };
    for g in 0..10 {
        let group = root.create_group(&format!("g{g}"), json_map(json!({"g": g})))?;
        for a in 0..20 {
            group.create_array(
                &format!("a{a}"),
                &ArrayBuilder::new(vec![10 + a, 4], DataType::Float32)
                    .chunk_shape(vec![5, 4])
                    .attributes(json_map(json!({"index": g * 20 + a})))
                    .zarr_format(zarr_format),
            )?;
        }
    }
    root.consolidate()?;

    let open_all = |format: Option<u8>| {
        let root = Group::open_format(
            store.clone(),
            "",
            &zarr_array::Extensions::default(),
            zarr_array::UseConsolidated::IfPresent,
            format,
        )?;
        assert_eq!(root.zarr_format(), zarr_format);
        let groups = root.members()?;
        let all = root.members_recursive()?;
        let mut arrays = 0;
        for (path, kind) in &all {
            if *kind == zarr_array::NodeKind::Array {
                let array = root.open_array(path)?;
                let index = array.attributes()["index"].as_u64().unwrap_or(u64::MAX);
                assert_eq!(array.shape(), [10 + index % 20, 4], "{path}");
                assert_eq!(array.zarr_format(), zarr_format, "{path}");
                arrays += 1;
            }
        }
        Ok::<_, zarr_array::ArrayError>((groups.len(), arrays))
    };
    let (opened, c) = counted(&requests, "open 200 consolidated arrays", || {
        open_all(Some(zarr_format))
    });
    assert_eq!(opened?, (10, 200));
    assert_eq!(
        (c.get, c.list + c.list_with_delimiter, c.total()),
        (1, 0, 1),
        "the document holding the copy alone: {c:?}"
    );
    let (opened, c) = counted(&requests, "the same, format not given", || open_all(None));
    assert_eq!(opened?, (10, 200));
    let gets = if zarr_format == 2 { 2 } else { 1 };
    assert_eq!(
        (c.get, c.list + c.list_with_delimiter, c.total()),
        (gets, 0, gets),
        "zarr.json looked for, then the copy: {c:?}"
    );

    // the same without the copy: every node's own metadata, and a listing per group
    let (opened, c) = counted(&requests, "open 200 arrays ignoring the copy", || {
        let root = Group::open_consolidated(
            store.clone(),
            "",
            &zarr_array::Extensions::default(),
            zarr_array::UseConsolidated::Ignore,
        )?;
        let mut arrays = 0;
        for (path, kind) in root.members_recursive()? {
            if kind == zarr_array::NodeKind::Array {
                root.open_array(&path)?;
                arrays += 1;
            }
        }
        Ok::<_, zarr_array::ArrayError>(arrays)
    });
    assert_eq!(opened?, 200);
    assert!(c.get >= 211 && c.list_with_delimiter >= 11, "{c:?}");
    Ok(())
}

fn json_map(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

#[test]
fn consolidated_requests_in_memory() -> TestResult {
    for format in [3, 2] {
        check_consolidated_requests(
            ObjectStoreBackend::new(Arc::new(InMemory::new()), "data")?,
            format,
        )?;
    }
    Ok(())
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_consolidated_requests() -> TestResult {
    s3::endpoint(BUCKET);
    check_consolidated_requests(
        ObjectStoreBackend::from_url(&unique_url("consolidated"))?,
        3,
    )
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_consolidated_v2_requests() -> TestResult {
    s3::endpoint(BUCKET);
    check_consolidated_requests(
        ObjectStoreBackend::from_url(&unique_url("consolidated-v2"))?,
        2,
    )
}

// ---------------------------------------------------------------------------------------------
// Round trips.

/// Create, write, read, append, prepend, resize and reopen, checked against an ndarray.
fn check_round_trips(store: &Arc<dyn Store>) -> TestResult {
    // A plain array under a group, partial edge chunks.
    let root = Group::create(store.clone(), "", serde_json::Map::new())?;
    let mut a = root.create_array(
        "a",
        &ArrayBuilder::new(vec![10, 7], DataType::Int32).chunk_shape(vec![4, 3]),
    )?;
    let mut reference = ArrayD::from_shape_fn(IxDyn(&[10, 7]), |i| (i[0] * 7 + i[1]) as i32);
    a.write_region(&region_at(&[0, 0], &reference), reference.view())?;
    let block = ArrayD::from_elem(IxDyn(&[3, 2]), -5i32);
    a.write_region(&region_at(&[5, 4], &block), block.view())?;
    reference.slice_mut(s![5..8, 4..6]).assign(&block);
    assert_eq!(
        Array::open(store.clone(), "a")?.read_all::<i32>()?,
        reference
    );

    // Append 2 rows, prepend 3 rows (the grid becomes regular_bounded), prepend 1 column.
    let rows = ArrayD::from_elem(IxDyn(&[2, 7]), 11i32);
    a.append(rows.view(), 0)?;
    let front = ArrayD::from_elem(IxDyn(&[3, 7]), 22i32);
    a.prepend(front.view(), 0)?;
    let mut expected = ndarray::concatenate(
        ndarray::Axis(0),
        &[front.view(), reference.view(), rows.view()],
    )?;
    let column = ArrayD::from_shape_fn(IxDyn(&[15, 1]), |i| 100 + i[0] as i32);
    a.prepend(column.view(), 1)?;
    expected = ndarray::concatenate(ndarray::Axis(1), &[column.view(), expected.view()])?;
    let reopened = Array::open(store.clone(), "a")?;
    assert_eq!(reopened.shape(), &[15, 8]);
    assert_eq!(reopened.domain(), vec![(-3, 12), (-1, 7)]);
    assert_eq!(reopened.metadata().chunk_grid.name, "regular_bounded");
    assert_eq!(reopened.read_all::<i32>()?, expected);
    assert!(
        store.get("a/c/-1/-1")?.is_some(),
        "prepended chunks have negative keys"
    );

    // Resize down and up again: what was cut off reads as the fill value.
    let mut a = reopened;
    a.resize(&[6, 8])?;
    a.resize(&[15, 8])?;
    let back = Array::open(store.clone(), "a")?.read_all::<i32>()?;
    assert_eq!(back.slice(s![..6, ..]), expected.slice(s![..6, ..]));
    assert!(back.slice(s![6.., ..]).iter().all(|&v| v == 0));

    // A sharded float64 array, written in two overlapping blocks (read-modify-write of shards).
    let sharded = root.create_array(
        "sharded",
        &ArrayBuilder::new(vec![40, 30], DataType::Float64)
            .chunk_shape(vec![5, 5])
            .shards(vec![20, 15])
            .fill_value_json(&json!("NaN"))?,
    )?;
    let mut reference = ArrayD::from_elem(IxDyn(&[40, 30]), f64::NAN);
    let first = ArrayD::from_shape_fn(IxDyn(&[25, 20]), |i| (i[0] * 20 + i[1]) as f64 / 4.0);
    sharded.write_region(&region_at(&[3, 2], &first), first.view())?;
    reference.slice_mut(s![3..28, 2..22]).assign(&first);
    let second = ArrayD::from_elem(IxDyn(&[10, 10]), -1.5f64);
    sharded.write_region(&region_at(&[20, 18], &second), second.view())?;
    reference.slice_mut(s![20..30, 18..28]).assign(&second);
    let got = Array::open(store.clone(), "sharded")?.read_all::<f64>()?;
    assert!(
        got.iter()
            .zip(reference.iter())
            .all(|(x, y)| x == y || (x.is_nan() && y.is_nan())),
        "sharded round trip"
    );

    let members = Group::open(store.clone(), "")?.members()?;
    let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "sharded"]);
    Ok(())
}

#[test]
fn round_trips_in_memory() -> TestResult {
    let store: Arc<dyn Store> = Arc::new(ObjectStoreBackend::new(Arc::new(InMemory::new()), "")?);
    check_round_trips(&store)
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_round_trips() -> TestResult {
    s3::endpoint(BUCKET);
    // The way a user opens a remote array: a url, then the node path.
    let url = unique_url("round-trips");
    check_round_trips(&open_url(&url)?)?;
    let again = Array::open(open_url(&format!("{url}/a"))?, "")?;
    assert_eq!(again.shape(), &[15, 8]);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The async API under a user's tokio runtime.

/// An async write and reads of a 64 x 64 array on `store`, under a tokio runtime of the
/// caller's with one thread (the current-thread flavour, where a blocking call would stop
/// everything): no runtime is started inside it (tokio would panic), and its executor keeps
/// running while the calls wait, as a task ticking every 5 ms shows. `slow` makes the store's
/// requests wait 100 ms during the reads (when it is given).
fn check_async_round_trip(store: Arc<dyn Store>, slow: Option<&CountingObjectStore>) -> TestResult {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let data = ArrayD::from_shape_fn(IxDyn(&[64, 64]), |i| (i[0] * 64 + i[1]) as u16);
    let array = ArrayBuilder::new(vec![64, 64], DataType::UInt16)
        .chunk_shape(vec![8, 8])
        .create(store, "async")?;
    rt.block_on(async {
        array
            .write_region_async(region_at(&[0, 0], &data), data.clone())
            .await?;
        let ticks = Arc::new(AtomicUsize::new(0));
        let ticker = tokio::spawn({
            let ticks = ticks.clone();
            async move {
                loop {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    ticks.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        if let Some(requests) = slow {
            requests.set_latency(std::time::Duration::from_millis(100));
        }
        let back = array
            .read_region_async::<u16>(Region::new(vec![3, 5], vec![50, 40])?)
            .await?;
        assert_eq!(back, data.slice(s![3..53, 5..45]).into_dyn());
        let bytes = array
            .read_region_bytes_async(Region::new(vec![63, 62], vec![1, 2])?)
            .await?;
        assert_eq!(bytes, [4094u16, 4095].map(u16::to_ne_bytes).concat());
        let outside = array
            .read_region_async::<u16>(Region::new(vec![60, 0], vec![8, 8])?)
            .await;
        assert!(outside.is_err(), "a region outside the array: {outside:?}");
        let wrong_type = array
            .read_region_async::<f32>(Region::new(vec![0, 0], vec![8, 8])?)
            .await;
        assert!(
            matches!(
                wrong_type,
                Err(zarr_array::ArrayError::DataTypeMismatch { .. })
            ),
            "{wrong_type:?}"
        );
        ticker.abort();
        let ticks = ticks.load(Ordering::Relaxed);
        if slow.is_some() {
            // two reads of 100 ms at least: the ticker ran meanwhile
            assert!(ticks >= 10, "the executor was blocked: {ticks} ticks");
        }
        if let Some(requests) = slow {
            requests.set_latency(std::time::Duration::ZERO);
        }
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}

#[test]
fn async_round_trip_in_memory() -> TestResult {
    let (store, requests) =
        ObjectStoreBackend::new(Arc::new(InMemory::new()), "")?.with_request_counter();
    check_async_round_trip(Arc::new(store), Some(&requests))
}

#[test]
fn async_round_trip_on_the_filesystem() -> TestResult {
    let dir = tempfile::tempdir()?;
    check_async_round_trip(Arc::new(FilesystemStore::create(dir.path())?), None)
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_async_round_trip() -> TestResult {
    s3::endpoint(BUCKET);
    check_async_round_trip(open_url(&unique_url("async"))?, None)
}

/// Sparse arrays (the `sparse_layout` codec), plain and sharded, when this build has it.
fn check_sparse_round_trips(store: &Arc<dyn Store>) -> TestResult {
    // 2-d CSR, 3 x 3 chunks of 20 x 20, a few entries written densely then as triples.
    let a = ArrayBuilder::new(vec![60, 60], DataType::Float64)
        .chunk_shape(vec![20, 20])
        .sparse(Format::Csr)
        .create(store.clone(), "csr")?;
    let mut reference = ArrayD::from_elem(IxDyn(&[60, 60]), 0.0f64);
    for k in 0..60usize {
        reference[[k, (k * 7) % 60]] = k as f64 + 0.5;
    }
    a.write_region(&region_at(&[0, 0], &reference), reference.view())?;
    let coords = ndarray::arr2(&[[1u64, 59, 30], [2, 0, 30]]);
    a.sparse()?
        .write_coo(coords.view(), &[-1.0f64, -2.0, -3.0])?;
    reference[[1, 2]] = -1.0;
    reference[[59, 0]] = -2.0;
    reference[[30, 30]] = -3.0;
    let b = Array::open(store.clone(), "csr")?;
    assert_eq!(b.read_all::<f64>()?, reference);
    let coo = b.sparse()?.read_coo::<f64>(&Region::whole(b.shape()))?;
    assert_eq!(
        coo.nnz(),
        reference.iter().filter(|&&v| v != 0.0).count(),
        "entries read back as COO"
    );
    assert_eq!(b.sparse()?.nnz()?, coo.nnz() as u64);

    // 3-d COO inside shards.
    let c = ArrayBuilder::new(vec![16, 16, 16], DataType::Int32)
        .chunk_shape(vec![4, 4, 4])
        .shards(vec![8, 8, 8])
        .sparse(Format::Coo)
        .create(store.clone(), "coo-sharded")?;
    let reference = ArrayD::from_shape_fn(IxDyn(&[16, 16, 16]), |i| {
        if (i[0] + 2 * i[1] + 3 * i[2]) % 11 == 0 {
            (i[0] * 256 + i[1] * 16 + i[2]) as i32 + 1
        } else {
            0
        }
    });
    c.write_region(&region_at(&[0, 0, 0], &reference), reference.view())?;
    let d = Array::open(store.clone(), "coo-sharded")?;
    assert_eq!(d.read_all::<i32>()?, reference);
    let part = d.read_region::<i32>(&Region::new(vec![3, 5, 7], vec![6, 6, 6])?)?;
    assert_eq!(part, reference.slice(s![3..9, 5..11, 7..13]).into_dyn());
    Ok(())
}

#[test]
fn sparse_round_trips_in_memory() -> TestResult {
    let store: Arc<dyn Store> = Arc::new(ObjectStoreBackend::new(Arc::new(InMemory::new()), "")?);
    check_sparse_round_trips(&store)
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_sparse_round_trips() -> TestResult {
    s3::endpoint(BUCKET);
    check_sparse_round_trips(&open_url(&unique_url("sparse"))?)
}

// ---------------------------------------------------------------------------------------------
// The conformance corpus, uploaded to the server and read from there.

/// Every file under `dir`, as `/`-separated paths relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(dir.join(&rel)).unwrap() {
            let entry = entry.unwrap();
            let path = rel.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                let parts: Vec<String> = path
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
    }
    out.sort();
    out
}

/// Runs `work` on every item with 8 threads (requests to the server overlap).
fn parallel<T: Sync>(items: &[T], work: impl Fn(&T) + Sync) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                while let Some(item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
                    work(item);
                }
            });
        }
    });
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_conformance_corpus() -> TestResult {
    s3::endpoint(BUCKET);
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/v3");
    let files = files_under(&corpus);
    assert!(files.contains(&"manifest.json".to_string()));
    let url = unique_url("conformance-v3");
    let store = open_url(&url)?;
    let started = Instant::now();
    parallel(&files, |rel| {
        let bytes = std::fs::read(corpus.join(rel)).unwrap();
        store
            .set(rel, &bytes)
            .unwrap_or_else(|e| panic!("uploading {rel}: {e}"));
    });
    eprintln!(
        "uploaded {} files of {} to {url} in {:.1} s",
        files.len(),
        corpus.display(),
        started.elapsed().as_secs_f64()
    );

    // Everything from here on comes from the server: the manifest, the arrays, the .npy files.
    let started = Instant::now();
    let manifest: Value = serde_json::from_slice(&store.get("manifest.json")?.unwrap())?;
    let fixtures = manifest["fixtures"].as_array().unwrap().clone();
    let failures = Mutex::new(Vec::<String>::new());
    let (read, rejected, groups) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    parallel(&fixtures, |f| {
        let path = f["path"].as_str().unwrap();
        let fail = |why: String| failures.lock().unwrap().push(format!("{path}: {why}"));
        let expect = f["expect"].as_str().unwrap();
        if f["node"] == "group" {
            match (
                Group::open(store.clone(), path).and_then(|g| g.members()),
                expect,
            ) {
                (Ok(_), "read") => {
                    groups.fetch_add(1, Ordering::Relaxed);
                }
                (Err(_), "reject") => {
                    rejected.fetch_add(1, Ordering::Relaxed);
                }
                (Ok(_), _) => fail("a group to refuse opened".into()),
                (Err(e), _) => fail(format!("group: {e}")),
            }
            return;
        }
        match (Array::open(store.clone(), path), expect) {
            (Err(_), "reject") => {
                rejected.fetch_add(1, Ordering::Relaxed);
            }
            (Ok(a), "reject") => fail(format!("should be refused, opened {:?}", a.shape())),
            (Err(e), _) => fail(zarr_testkit::report(&e)),
            (Ok(array), _) => {
                let key = f["data"].as_str().unwrap();
                let npy = match store.get(key) {
                    Ok(Some(bytes)) => common::read_npy(&bytes),
                    other => return fail(format!("{key}: {other:?}")),
                };
                match common::check_whole(&array, &npy) {
                    Ok(()) => {
                        read.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(why) => fail(why),
                }
            }
        }
    });
    let failures = failures.into_inner().unwrap();
    let (read, rejected, groups) = (
        read.into_inner(),
        rejected.into_inner(),
        groups.into_inner(),
    );
    eprintln!(
        "conformance/v3 from {url}: {read} arrays read equal to their .npy, {rejected} \
         documents refused, {groups} groups opened, {} failures, in {:.1} s",
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let expected = |node: &str, expect: &str| {
        fixtures
            .iter()
            .filter(|f| f["node"] == node && f["expect"] == expect)
            .count()
    };
    assert_eq!(read, expected("array", "read"), "every read fixture");
    assert_eq!(
        rejected,
        expected("array", "reject") + expected("group", "reject")
    );
    assert_eq!(groups, expected("group", "read"));
    store.delete_prefix("")?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Timing: the `zstd` workload of the benchmarks, from the server and from the filesystem.

/// The benchmarks' value formula (`benches/src/lib.rs`).
fn bench_value(i: u64, j: u64, k: u64) -> u16 {
    let a = i
        .wrapping_add(j.wrapping_mul(2))
        .wrapping_add(k.wrapping_mul(3))
        & 4095;
    let b =
        (i.wrapping_mul(73_856_093) ^ j.wrapping_mul(19_349_663) ^ k.wrapping_mul(83_492_791)) & 15;
    (a + b) as u16
}

/// The `zstd` workload: `n^3` uint16 in 64^3 chunks, `[bytes little, zstd level 1]`.
fn zstd_workload(n: u64) -> ArrayBuilder {
    let def = |v: Value| ExtensionDef::from_value(&v, "codecs").unwrap();
    ArrayBuilder::new(vec![n; 3], DataType::UInt16)
        .chunk_shape(vec![64; 3])
        .serializer(def(
            json!({"name": "bytes", "configuration": {"endian": "little"}}),
        ))
        .compressors(vec![def(
            json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}}),
        )])
}

/// Best of `runs` reads of the whole array, in seconds.
fn time_reads(array: &Array, expected: &[u8], runs: usize) -> f64 {
    let mut out = vec![0u8; expected.len()];
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        out.fill(0);
        let started = Instant::now();
        array
            .read_region_bytes_into(&Region::whole(array.shape()), &mut out)
            .unwrap();
        best = best.min(started.elapsed().as_secs_f64());
        assert!(out == expected, "the data read back differs");
    }
    best
}

/// Prints (never asserts) the read time of the 256^3 uint16 zstd workload from the S3
/// server and from the filesystem (`ZARR_S3_TIMING_N` changes 256). Run it with
/// `--release --nocapture` for meaningful figures.
#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_timing_zstd_workload() -> TestResult {
    let endpoint = s3::endpoint(BUCKET);
    let n: u64 = std::env::var("ZARR_S3_TIMING_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let data: Vec<u16> = (0..n * n * n)
        .map(|x| bench_value(x / (n * n), x / n % n, x % n))
        .collect();
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let dir = tempfile::tempdir()?;
    let local: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path())?);
    let url = unique_url("timing");
    let (remote, requests) = ObjectStoreBackend::from_url(&url)?.with_request_counter();
    let remote: Arc<dyn Store> = Arc::new(remote);
    let mut figures = Vec::new();
    for (name, store) in [("filesystem", &local), ("s3 (moto)", &remote)] {
        let array = zstd_workload(n).create(store.clone(), "zstd")?;
        let started = Instant::now();
        array.write_region_bytes(&Region::whole(array.shape()), &bytes)?;
        let write = started.elapsed().as_secs_f64();
        let stored: u64 = store
            .list_prefix("zstd/c/")?
            .iter()
            .map(|k| store.size(k).unwrap().unwrap_or(0))
            .sum();
        let array = Array::open(store.clone(), "zstd")?;
        requests.reset();
        let read = time_reads(&array, &bytes, 3);
        figures.push((name, write, read, stored));
    }
    let per_read = requests.counts();
    println!(
        "zstd workload {n}^3 uint16 ({} MiB, 64^3 chunks, [bytes, zstd 1]), {} threads, \
         server {endpoint}:",
        bytes.len() >> 20,
        rayon::current_num_threads()
    );
    for (name, write, read, stored) in &figures {
        println!(
            "  {name:<12} write {write:>7.3} s   read (best of 3) {read:>7.3} s   \
             {:>7.1} MiB/s   stored {:.1} MiB",
            bytes.len() as f64 / (1 << 20) as f64 / read,
            *stored as f64 / (1 << 20) as f64
        );
    }
    println!(
        "  requests for 3 reads from the server: {} GETs, {} other",
        per_read.get,
        per_read.total() - per_read.get
    );
    remote.delete_prefix("")?;
    Ok(())
}

/// The region of `data` placed at `start`.
fn region_at<A>(start: &[u64], data: &ndarray::ArrayD<A>) -> zarr_array::Region {
    let shape = data.shape().iter().map(|&n| n as u64).collect();
    zarr_array::Region::new(start.to_vec(), shape).expect("a region")
}
