//! A process killed with SIGKILL in the middle of long writes, appends and prepends to a
//! filesystem store leaves an array that opens and whose every stored chunk decodes. An
//! append or prepend reserves its positions (the grown shape, by compare-and-swap) before it
//! writes them, so a killed one may leave the array grown with fill values where its data was
//! going: every element read is fill or a whole value some writer stored. The lock files of
//! the conditional writes (`.tmp-lock`) that killed children leave behind block nobody: the
//! next child takes the lock and goes on appending.
//!
//! The writer is this test binary itself, run again as a child (`zarr_testkit::child`)
//! filtered to the ignored test `child_writer`, which does the work, so no separate binary has
//! to be built. The parent kills it after seeded random delays, several times over the
//! same array, and validates the array after each kill by reading every chunk.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(feature = "zstd")]
#![cfg(unix)]

use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::{FilesystemStore, Store, LOCK_FILE, TEMP_PREFIX};
use zarr_array::{Array, ArrayBuilder, DataType};
use zarr_testkit::{child, Rng};

const PATH: &str = "arr";
const ROWS: u64 = 8;
const COLS: u64 = 64;

/// The value a writer stores at a position in step `round`: the round (never 0) in the high
/// 12 bits, so that a reader can tell which write each element came from.
fn value(round: u32, row: u64, col: u64) -> u32 {
    ((round % 4095 + 1) << 20) | ((row as u32 & 0xff) << 12) | (col as u32 & 0xfff)
}

fn spawn(role: &str, dir: &Path, round: u32) -> Child {
    child::command("child_writer", role)
        .env("ZARR_KILL_DIR", dir)
        .env("ZARR_KILL_ROUND", round.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the child starts")
}

/// The child: writes, appends or prepends in a loop until killed (or for 10 s at most).
#[test]
#[ignore = "the child process of the kill tests (zarr_testkit::child), run and killed by them"]
fn child_writer() {
    let role = child::role();
    let dir = std::env::var("ZARR_KILL_DIR").expect("a folder");
    let round: u32 = std::env::var("ZARR_KILL_ROUND")
        .expect("a round")
        .parse()
        .expect("a number");
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(&dir).expect("the store"));
    let mut array = Array::open(store, PATH).expect("the array opens in the child");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut step = 0u32;
    while Instant::now() < deadline {
        step += 1;
        let r = round * 1000 + step;
        match role.as_str() {
            "write" => {
                // rewrite the whole array, chunk by chunk in parallel
                let shape = array.shape().to_vec();
                let data: Vec<u32> = (0..shape[0])
                    .flat_map(|i| (0..shape[1]).map(move |j| value(r, i, j)))
                    .collect();
                array
                    .write_region_bytes(
                        &Region::new(vec![0, 0], shape).expect("r"),
                        bytemuck::cast_slice(&data),
                    )
                    .expect("writes");
            }
            "append" | "prepend" => {
                let k = 1 + (step as u64 % 5);
                let data: Vec<u32> = (0..ROWS)
                    .flat_map(|i| (0..k).map(move |j| value(r, i, j)))
                    .collect();
                let bytes = bytemuck::cast_slice(&data);
                if role == "append" {
                    array.append_bytes(&[ROWS, k], bytes, 1).expect("appends");
                } else {
                    array.prepend_bytes(&[ROWS, k], bytes, 1).expect("prepends");
                }
            }
            other => panic!("unknown role {other}"),
        }
    }
}

/// Opens the array and reads every chunk (whole, and then the array), checking that the
/// store holds no key an interrupted write could have left torn.
/// With `whole_chunks`, every chunk was written whole by one write, so all its elements inside
/// the array come from the same round.
fn validate(dir: &Path, whole_chunks: bool) -> (Vec<u64>, usize) {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir).expect("the store"));
    let array = Array::open(store.clone(), PATH).expect("the array opens after a kill");
    let chunks = array.stored_chunks().expect("lists");
    for chunk in &chunks {
        let bytes = array
            .read_chunk_bytes(chunk)
            .expect("every stored chunk decodes after a kill")
            .expect("listed chunks exist");
        if whole_chunks {
            let rounds: std::collections::BTreeSet<u32> = bytes
                .as_bytes()
                .chunks_exact(4)
                .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) >> 20)
                .collect();
            assert_eq!(
                rounds.len(),
                1,
                "chunk {chunk:?} mixes writes: rounds {rounds:?}"
            );
        }
    }
    let data = array.read_all::<u32>().expect("the whole array reads");
    // every element is fill (0) or a whole value some writer stored
    for v in data.iter() {
        assert!(
            *v == 0 || (v >> 20) > 0,
            "an element that no writer stored: {v:#x}"
        );
    }
    // listing never shows temporary files
    for key in store.list_prefix("").expect("lists") {
        assert!(!key.split('/').any(|s| s.starts_with(TEMP_PREFIX)), "{key}");
    }
    (array.shape().to_vec(), chunks.len())
}

/// The temporary files (`.tmp-*`, lock files aside) under `dir`: what killed writers leave
/// behind, invisible to listing and never cleaned up by the store.
fn temp_files(dir: &Path) -> usize {
    let mut n = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).expect("readable").flatten() {
            let p = e.path();
            if p.is_dir() {
                pending.push(p);
            } else if e.file_name().to_string_lossy().starts_with(TEMP_PREFIX)
                && e.file_name() != LOCK_FILE
            {
                n += 1;
            }
        }
    }
    n
}

fn kill_rounds(role: &str, seed: u64, rounds: u32) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).expect("the store"));
    ArrayBuilder::new(vec![ROWS, COLS], DataType::UInt32)
        .chunk_shape(vec![2, 4])
        .create(store, PATH)
        .expect("creates");
    let mut rng = Rng::new(seed);
    let mut shapes = Vec::new();
    for round in 1..=rounds {
        let mut child = spawn(role, dir.path(), round);
        // 20 to 220 ms: long enough to be mid-write (process start included)
        let delay = 20 + rng.below(200);
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().expect("SIGKILL");
        let status = child.wait().expect("reaped");
        assert!(!status.success(), "the child finished before it was killed");
        shapes.push(validate(dir.path(), role == "write"));
    }
    // the children got to work before they were killed: the array was written or grew
    eprintln!("{role}: (shape, stored chunks) after each kill: {shapes:?}");
    eprintln!(
        "{role}: temporary files left on disk: {}",
        temp_files(dir.path())
    );
    let (shape, chunks) = shapes.last().expect("rounds");
    match role {
        "write" => assert!(*chunks > 0, "no chunk was written before the kills"),
        _ => assert!(shape[1] > COLS, "the array never grew before the kills"),
    }
}

#[test]
fn killed_writes_leave_a_valid_array() {
    kill_rounds("write", 1, 5);
}

#[test]
fn killed_appends_leave_a_valid_array() {
    kill_rounds("append", 2, 5);
}

#[test]
fn killed_prepends_leave_a_valid_array() {
    kill_rounds("prepend", 3, 5);
}
