//! Concurrent writers and readers of one array, in threads and in processes.
//!
//! - Writers of disjoint chunks (or whole shards) lose nothing.
//! - Writers of the same chunk key leave one whole version, never a torn one, and readers see
//!   the old or the new chunk, never a mix within a chunk.
//! - Writers of different inner chunks of one shard DO race: each rewrites the whole shard, so
//!   the last writer wins and other writes may be lost, but the shard stays one whole valid
//!   version. There is no locking between writers.
//!
//! Child processes are this test binary run again (`zarr_testkit::child`), filtered to the
//! ignored test `child_process`, which does their work.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(feature = "zstd", feature = "sharding"))]

use std::path::Path;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::{FilesystemStore, MemoryStore, Store};
use zarr_array::{Array, ArrayBuilder, DataType};
use zarr_testkit::child;

const PATH: &str = "arr";

fn two_d(a: zarr_array::ndarray::ArrayD<u32>) -> zarr_array::ndarray::Array2<u32> {
    a.into_dimensionality().expect("a 2-d array")
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn from_bytes(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// `[64, 64]` uint32 in `[8, 8]` chunks, or in `[16, 16]` shards of `[8, 8]` inner chunks.
fn create(store: Arc<dyn Store>, sharded: bool) -> Array {
    let mut b = ArrayBuilder::new(vec![64, 64], DataType::UInt32)
        .chunk_shape(vec![8, 8])
        .overwrite(true);
    if sharded {
        b = b.shards(vec![16, 16]);
    }
    b.create(store, PATH).expect("creates")
}

/// The value writer `w` stores at `(i, j)` in its step `s` (never the fill value 0).
fn value(w: u32, s: u32, i: u64, j: u64) -> u32 {
    ((w + 1) << 24) | ((s & 0xff) << 16) | ((i as u32) << 8) | j as u32
}

/// Writes the units (chunks, or shards when `unit` is 16) of the `[64, 64]` array that belong
/// to writer `w` of `n` (unit index modulo `n`), `steps` times over.
fn write_share(array: &Array, w: u32, n: u32, unit: u64, steps: u32) {
    let per_row = 64 / unit;
    for s in 0..steps {
        for u in 0..per_row * per_row {
            if u % u64::from(n) != u64::from(w) {
                continue;
            }
            let (ci, cj) = (u / per_row, u % per_row);
            let data: Vec<u32> = (0..unit)
                .flat_map(|i| (0..unit).map(move |j| value(w, s, ci * unit + i, cj * unit + j)))
                .collect();
            array
                .write_region_bytes(
                    &Region::new(vec![ci * unit, cj * unit], vec![unit, unit]).expect("r"),
                    &u32_bytes(&data),
                )
                .expect("writes");
        }
    }
}

/// Checks that every position holds what writer `u % n` stored in its last step.
fn check_disjoint(array: &Array, n: u32, unit: u64, steps: u32) {
    let all = two_d(array.read_all::<u32>().expect("reads"));
    let per_row = 64 / unit;
    for ((i, j), v) in all.indexed_iter() {
        let (i, j) = (i as u64, j as u64);
        let w = ((i / unit) * per_row + j / unit) % u64::from(n);
        assert_eq!(
            *v,
            value(w as u32, steps - 1, i, j),
            "lost write at ({i}, {j})"
        );
    }
}

fn stores() -> Vec<(Arc<dyn Store>, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let fs: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).expect("store"));
    vec![(Arc::new(MemoryStore::new()), None), (fs, Some(dir))]
}

#[test]
fn threads_writing_disjoint_chunks_lose_nothing() {
    for (store, _dir) in stores() {
        for (sharded, unit) in [(false, 8), (true, 16)] {
            let array = create(store.clone(), sharded);
            let n = 6;
            std::thread::scope(|scope| {
                for w in 0..n {
                    // each thread opens the array itself, as separate programs would
                    let store = store.clone();
                    scope.spawn(move || {
                        let a = Array::open(store, PATH).expect("opens");
                        write_share(&a, w, n, unit, 3);
                    });
                }
            });
            check_disjoint(&array, n, unit, 3);
        }
    }
}

#[test]
fn processes_writing_disjoint_chunks_lose_nothing() {
    for (sharded, unit) in [(false, 8u64), (true, 16)] {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).expect("store"));
        let array = create(store, sharded);
        let n = 4u32;
        let children: Vec<_> = (0..n)
            .map(|w| spawn("disjoint", dir.path(), w, n, unit))
            .collect();
        for c in children {
            child::wait_done(c, "disjoint");
        }
        check_disjoint(&array, n, unit, 2);
    }
}

fn spawn(role: &str, dir: &Path, w: u32, n: u32, unit: u64) -> std::process::Child {
    child::command("child_process", role)
        .env("ZARR_CONC_DIR", dir)
        .env("ZARR_CONC_ARGS", format!("{w} {n} {unit}"))
        .spawn()
        .expect("the child starts")
}

/// The child processes' work.
#[test]
#[ignore = "the child process of the process tests (zarr_testkit::child), run by them"]
fn child_process() {
    let role = child::role();
    let dir = std::env::var("ZARR_CONC_DIR").expect("a folder");
    let args: Vec<u64> = std::env::var("ZARR_CONC_ARGS")
        .expect("args")
        .split(' ')
        .map(|a| a.parse().expect("a number"))
        .collect();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir).expect("store"));
    let array = Array::open(store, PATH).expect("opens");
    let (w, n, unit) = (args[0] as u32, args[1] as u32, args[2]);
    match role.as_str() {
        "disjoint" => write_share(&array, w, n, unit, 2),
        "same_shard" => write_inner_chunk(&array, w, 40),
        other => panic!("unknown role {other}"),
    }
    child::done(&role);
}

/// Writes inner chunk `w` (of the four `[8, 8]` inner chunks of shard `[0, 0]`) `steps` times.
fn write_inner_chunk(array: &Array, w: u32, steps: u32) {
    let (ci, cj) = (u64::from(w) / 2, u64::from(w) % 2);
    for s in 0..steps {
        let data: Vec<u32> = (0..8)
            .flat_map(|i| (0..8).map(move |j| value(w, s, ci * 8 + i, cj * 8 + j)))
            .collect();
        array
            .write_region_bytes(
                &Region::new(vec![ci * 8, cj * 8], vec![8, 8]).expect("r"),
                &u32_bytes(&data),
            )
            .expect("writes");
    }
}

/// Checks that `block` (C order) is whole: all fill, or every element from one step of one
/// writer. Returns that `(writer, step)`, or `None` for fill.
fn whole_version(block: &[u32], what: &str) -> Option<(u32, u32)> {
    if block.iter().all(|&v| v == 0) {
        return None;
    }
    let first = block[0];
    let version = (first >> 24, (first >> 16) & 0xff);
    assert!(
        block
            .iter()
            .all(|&v| (v >> 24, (v >> 16) & 0xff) == version),
        "{what} is torn: it mixes versions"
    );
    Some(version)
}

#[test]
fn same_chunk_writers_leave_one_whole_version_and_readers_never_see_a_torn_chunk() {
    for (store, _dir) in stores() {
        let array = create(store.clone(), false);
        let region = Region::new(vec![8, 8], vec![8, 8]).expect("r");
        let writers = 4u32;
        let done = AtomicBool::new(false);
        let reads = AtomicUsize::new(0);
        let start = Barrier::new(writers as usize + 1);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..writers)
                .map(|w| {
                    let array = array.clone();
                    let (region, start, reads) = (&region, &start, &reads);
                    scope.spawn(move || {
                        start.wait();
                        for s in 0..60 {
                            // Halfway, wait for the reader to have read once, so that reads
                            // overlap writes however the threads are scheduled.
                            while s == 30 && reads.load(Ordering::SeqCst) == 0 {
                                std::thread::yield_now();
                            }
                            let data: Vec<u32> = (0..8)
                                .flat_map(|i| (0..8).map(move |j| value(w, s, 8 + i, 8 + j)))
                                .collect();
                            array
                                .write_region_bytes(region, &u32_bytes(&data))
                                .expect("writes");
                        }
                    })
                })
                .collect();
            let reader = scope.spawn(|| {
                start.wait();
                let mut out = vec![0u8; 8 * 8 * 4];
                while !done.load(Ordering::SeqCst) {
                    array
                        .read_region_bytes_into(&region, &mut out)
                        .expect("reads");
                    whole_version(&from_bytes(&out), "a chunk read during writes");
                    reads.fetch_add(1, Ordering::SeqCst);
                }
            });
            for h in handles {
                h.join().expect("a writer");
            }
            done.store(true, Ordering::SeqCst);
            reader.join().expect("the reader");
        });
        let mut out = vec![0u8; 8 * 8 * 4];
        array
            .read_region_bytes_into(&region, &mut out)
            .expect("reads");
        let last = whole_version(&from_bytes(&out), "the chunk after the writes");
        assert_eq!(
            last.map(|(_, s)| s),
            Some(59),
            "the last version is some writer's last"
        );
        assert!(reads.load(Ordering::SeqCst) > 0);
    }
}

#[test]
fn readers_during_whole_array_writes_see_each_chunk_old_or_new() {
    let (store, _dir) = stores().pop().expect("the filesystem store");
    let array = create(store, false);
    let whole = Region::new(vec![0, 0], vec![64, 64]).expect("r");
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            for s in 0..15 {
                let data: Vec<u32> = (0..64)
                    .flat_map(|i| (0..64).map(move |j| value(0, s, i, j)))
                    .collect();
                array
                    .write_region_bytes(&whole, &u32_bytes(&data))
                    .expect("writes");
            }
            done.store(true, Ordering::SeqCst);
        });
        while !done.load(Ordering::SeqCst) {
            let all = two_d(array.read_all::<u32>().expect("reads"));
            // chunk by chunk: one version each (chunks of one write need not agree)
            for ci in 0..8 {
                for cj in 0..8 {
                    let block: Vec<u32> = (0..8)
                        .flat_map(|i| (0..8).map(move |j| (ci * 8 + i, cj * 8 + j)))
                        .map(|(i, j)| all[[i, j]])
                        .collect();
                    whole_version(&block, &format!("chunk ({ci}, {cj})"));
                }
            }
        }
        writer.join().expect("the writer");
    });
}

/// The documented race: writers of different inner chunks of one shard each rewrite the whole
/// shard, so the last writer of the shard wins and other inner chunks may revert to an older
/// version, or to fill. The shard itself is always one whole valid version.
fn check_shard_race(array: &Array) {
    let all = two_d(array.read_all::<u32>().expect("the shard decodes"));
    for w in 0..4u64 {
        let (ci, cj) = (w / 2, w % 2);
        let block: Vec<u32> = (0..8)
            .flat_map(|i| (0..8).map(move |j| (ci * 8 + i, cj * 8 + j)))
            .map(|(i, j)| all[[i as usize, j as usize]])
            .collect();
        if let Some((writer, _)) = whole_version(&block, &format!("inner chunk {w}")) {
            assert_eq!(
                u64::from(writer),
                w + 1,
                "inner chunk {w} holds another writer's data"
            );
        }
    }
}

#[test]
fn threads_writing_inner_chunks_of_one_shard_race_but_the_shard_stays_whole() {
    for (store, _dir) in stores() {
        let array = create(store, true);
        let start = Barrier::new(4);
        std::thread::scope(|scope| {
            for w in 0..4 {
                let (array, start) = (&array, &start);
                scope.spawn(move || {
                    start.wait();
                    write_inner_chunk(array, w, 40);
                });
            }
        });
        check_shard_race(&array);
    }
}

#[test]
fn processes_writing_inner_chunks_of_one_shard_race_but_the_shard_stays_whole() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).expect("store"));
    let array = create(store, true);
    let children: Vec<_> = (0..4)
        .map(|w| spawn("same_shard", dir.path(), w, 4, 16))
        .collect();
    for c in children {
        child::wait_done(c, "same_shard");
    }
    check_shard_race(&array);
}
