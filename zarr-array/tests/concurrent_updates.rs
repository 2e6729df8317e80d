//! Concurrent metadata updates lose no writer (issue 19, item 3).
//!
//! - 4 processes each appending 25 blocks to one array, on the filesystem (dense chunks, and
//!   shards) and on the local S3 server (ignored: needs the server), end with all 100 blocks
//!   present, each whole, once, in consecutive rows. Blocks have 1 to 3 rows, so appends
//!   share boundary chunks and shards.
//! - The same 4 x 25 appends to a `string` array (dense chunks and shards, on the filesystem
//!   and on the local S3 server): every block whole, no row read as the fill value `""`
//!   (issue 38, item 1: a chunk two appends shared lost one of them).
//! - Appends and prepends from threads at once: every block lands whole.
//! - Concurrent attribute updates of different keys (arrays and groups, memory and
//!   filesystem) all land.
//! - A resize racing appends: the resize is kept, every append before it and after it lands
//!   (and the resize's clearing of the positions it exposes clears none of theirs); an
//!   append whose shape a resize made wrong is refused, writing nothing.
//! - A store without conditional writes: what it promises (a single writer works as on any
//!   store; concurrent appenders leave a valid array whose every element is fill or a value
//!   some appender wrote, but appends may be lost: the last writer of `zarr.json` wins).
//!
//! Child processes are this test binary run again (`zarr_testkit::child`), filtered to the
//! ignored test `child_appender`, which does their work.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(feature = "zstd", feature = "sharding", feature = "regular-bounded"))]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};
use zarr_array::zarr_store::testing::Unconditional;
use zarr_array::zarr_store::{open_url, FilesystemStore, MemoryStore, Store};
use zarr_array::{Array, ArrayBuilder, ArrayError, DataType, Group};
use zarr_testkit::child;

const PATH: &str = "g/arr";
const COLS: u64 = 5;
const WRITERS: u32 = 4;
const BLOCKS: u32 = 25;

/// The value of row `r`, column `c` of block `b` of writer `w`: never the fill value 0, and
/// it names its block and its place in it.
fn value(w: u32, b: u32, r: u64, c: u64) -> u32 {
    ((w + 1) << 24) | ((b + 1) << 16) | ((r as u32) << 8) | c as u32
}

/// The rows of block `b` of writer `w`: 1 to 3, so that blocks end inside chunks.
fn rows_of(w: u32, b: u32) -> u64 {
    1 + u64::from((w + b) % 3)
}

fn block(w: u32, b: u32, cols: u64) -> Vec<u8> {
    let rows = rows_of(w, b);
    (0..rows)
        .flat_map(|r| (0..cols).map(move |c| value(w, b, r, c)))
        .flat_map(u32::to_ne_bytes)
        .collect()
}

/// A `[0, COLS]` uint32 array in `[4, COLS]` chunks (or `[8, COLS]` shards of them) in a group
/// with consolidated metadata, so that the copy is kept true concurrently too.
fn create(store: Arc<dyn Store>, sharded: bool) -> Array {
    let mut root = Group::create(store.clone(), "", Map::new()).expect("the root group");
    root.create_group("g", Map::new()).expect("the group");
    let mut builder = ArrayBuilder::new(vec![0, COLS], DataType::UInt32).chunk_shape(vec![4, COLS]);
    if sharded {
        builder = builder.shards(vec![8, COLS]);
    }
    let array = builder.create(store, PATH).expect("creates");
    root.consolidate().expect("consolidates");
    array
}

/// Appends the blocks of writer `w` (`blocks` of them) to the array at `PATH` of `store`.
fn append_blocks(store: Arc<dyn Store>, w: u32, blocks: u32) {
    let mut array = Array::open(store, PATH).expect("opens");
    for b in 0..blocks {
        let rows = rows_of(w, b);
        array
            .append_bytes(&[rows, COLS], &block(w, b, COLS), 0)
            .unwrap_or_else(|e| panic!("writer {w} block {b}: {}", zarr_array::report(&e)));
    }
}

/// The blocks found in rows order: `(writer, block)` of each, after checking that every row
/// of the array belongs to a block whose rows are consecutive and whole, columns `0..cols` of
/// it as written and columns `cols..` fill.
fn blocks_found(array: &Array, cols: u64) -> Vec<(u32, u32)> {
    let data = array.read_all::<u32>().expect("reads");
    let width = array.shape()[1];
    let values: Vec<u32> = data.iter().copied().collect();
    let mut found = Vec::new();
    let mut row = 0u64;
    let rows = array.shape()[0];
    while row < rows {
        let first = values[(row * width) as usize];
        assert_ne!(first, 0, "row {row} is fill: a block was lost or torn");
        let (w, b) = ((first >> 24) - 1, ((first >> 16) & 0xff) - 1);
        for r in 0..rows_of(w, b) {
            for c in 0..width {
                let got = values.get(((row + r) * width + c) as usize).copied();
                let want = if c < cols { value(w, b, r, c) } else { 0 };
                assert_eq!(
                    got,
                    Some(want),
                    "block {b} of writer {w} is not whole at its row {r}, column {c} \
                     (array row {})",
                    row + r
                );
            }
        }
        found.push((w, b));
        row += rows_of(w, b);
    }
    found
}

/// Every block of every writer exactly once; each writer's blocks in the order it appended.
fn check_all_blocks(array: &Array, writers: u32, blocks: u32) {
    let found = blocks_found(array, COLS);
    let mut per_writer: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (w, b) in &found {
        per_writer.entry(*w).or_default().push(*b);
    }
    for w in 0..writers {
        assert_eq!(
            per_writer.get(&w).map(Vec::as_slice),
            Some((0..blocks).collect::<Vec<_>>().as_slice()),
            "writer {w}'s blocks, in the order found"
        );
    }
    assert_eq!(found.len(), (writers * blocks) as usize, "blocks found");
    let rows: u64 = (0..writers)
        .flat_map(|w| (0..blocks).map(move |b| rows_of(w, b)))
        .sum();
    assert_eq!(array.shape(), [rows, COLS]);
}

/// The group's consolidated copy lists the array with the shape its own metadata has.
fn check_consolidated(store: Arc<dyn Store>) {
    let root = Group::open(store, "").expect("the root opens");
    assert!(root.is_consolidated());
    let disagreements = root.check_consolidated().expect("checks");
    assert!(disagreements.is_empty(), "{disagreements:?}");
}

fn processes_append(url: &str, sharded: bool) {
    let store = open_url(url).expect("the store");
    create(store.clone(), sharded);
    run_appenders(url, "append");
    let array = Array::open(store.clone(), PATH).expect("opens");
    check_all_blocks(&array, WRITERS, BLOCKS);
    check_consolidated(store);
}

/// Starts the `WRITERS` child processes in `role` on the store at `url` and waits for them.
fn run_appenders(url: &str, role: &str) {
    let children: Vec<_> = (0..WRITERS)
        .map(|w| {
            child::command("child_appender", role)
                .env("ZARR_CAS_URL", url)
                .env("ZARR_CAS_WRITER", w.to_string())
                .spawn()
                .expect("the child starts")
        })
        .collect();
    for c in children {
        child::wait_done(c, role);
    }
}

/// Row `r`, column `c` of the string block `b` of writer `w`: never the fill value `""`.
#[cfg(feature = "vlen")]
fn string_value(w: u32, b: u32, r: u64, c: u64) -> String {
    format!("w{w}b{b}r{r}c{c}")
}

/// A `[0, COLS]` `string` array (fill value `""`) in `[4, COLS]` chunks (or `[8, COLS]`
/// shards of them) in a group with consolidated metadata.
#[cfg(feature = "vlen")]
fn create_strings(store: Arc<dyn Store>, sharded: bool) -> Array {
    let mut root = Group::create(store.clone(), "", Map::new()).expect("the root group");
    root.create_group("g", Map::new()).expect("the group");
    let mut builder = ArrayBuilder::new(vec![0, COLS], DataType::String)
        .chunk_shape(vec![4, COLS])
        .fill_value_json(&Value::from(""))
        .expect("the fill value");
    if sharded {
        builder = builder.shards(vec![8, COLS]);
    }
    let array = builder.create(store, PATH).expect("creates");
    root.consolidate().expect("consolidates");
    array
}

/// Appends the string blocks of writer `w` (`blocks` of them) to the array at `PATH`.
#[cfg(feature = "vlen")]
fn append_string_blocks(store: Arc<dyn Store>, w: u32, blocks: u32) {
    let mut array = Array::open(store, PATH).expect("opens");
    for b in 0..blocks {
        let rows = rows_of(w, b);
        let data =
            zarr_array::ndarray::Array2::from_shape_fn((rows as usize, COLS as usize), |(r, c)| {
                string_value(w, b, r as u64, c as u64)
            })
            .into_dyn();
        array
            .append_vlen(data.view(), 0)
            .unwrap_or_else(|e| panic!("writer {w} block {b}: {}", zarr_array::report(&e)));
    }
}

/// Every string block of every writer exactly once, whole, in consecutive rows, each
/// writer's in the order it appended; no row is the fill value.
#[cfg(feature = "vlen")]
fn check_all_string_blocks(array: &Array) {
    let rows = array.shape()[0];
    let data: zarr_array::ndarray::ArrayD<String> = array
        .read_region_vlen(&zarr_array::Region::whole(array.shape()))
        .expect("reads");
    let cell = |row: u64, c: u64| data[[row as usize, c as usize]].as_str();
    let mut per_writer: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let mut row = 0u64;
    while row < rows {
        let first = cell(row, 0);
        assert_ne!(first, "", "row {row} is fill: a block was lost or torn");
        let (w, b) = first
            .strip_prefix('w')
            .and_then(|s| s.split_once('b'))
            .and_then(|(w, rest)| Some((w.parse().ok()?, rest.split_once('r')?.0.parse().ok()?)))
            .unwrap_or_else(|| panic!("row {row} starts with {first:?}, no block's first row"));
        for r in 0..rows_of(w, b) {
            for c in 0..COLS {
                assert!(
                    row + r < rows,
                    "block {b} of writer {w} is cut at its row {r}"
                );
                assert_eq!(
                    cell(row + r, c),
                    string_value(w, b, r, c),
                    "block {b} of writer {w} is not whole at its row {r}, column {c} \
                     (array row {})",
                    row + r
                );
            }
        }
        per_writer.entry(w).or_default().push(b);
        row += rows_of(w, b);
    }
    for w in 0..WRITERS {
        assert_eq!(
            per_writer.get(&w).map(Vec::as_slice),
            Some((0..BLOCKS).collect::<Vec<_>>().as_slice()),
            "writer {w}'s blocks, in the order found"
        );
    }
    let want: u64 = (0..WRITERS)
        .flat_map(|w| (0..BLOCKS).map(move |b| rows_of(w, b)))
        .sum();
    assert_eq!(array.shape(), [want, COLS]);
}

#[cfg(feature = "vlen")]
fn processes_append_strings(url: &str, sharded: bool) {
    let store = open_url(url).expect("the store");
    create_strings(store.clone(), sharded);
    run_appenders(url, "append-strings");
    let array = Array::open(store.clone(), PATH).expect("opens");
    check_all_string_blocks(&array);
    check_consolidated(store);
}

/// The child processes' work: one writer's 25 appends.
#[test]
#[ignore = "the child process of the process tests (zarr_testkit::child), run by them"]
fn child_appender() {
    let role = child::role();
    let url = std::env::var("ZARR_CAS_URL").expect("a store url");
    let w: u32 = std::env::var("ZARR_CAS_WRITER")
        .expect("a writer")
        .parse()
        .expect("a number");
    match role.as_str() {
        "append" => append_blocks(open_url(&url).expect("the store"), w, BLOCKS),
        #[cfg(feature = "vlen")]
        "append-strings" => append_string_blocks(open_url(&url).expect("the store"), w, BLOCKS),
        other => panic!("unknown role {other}"),
    }
    child::done(&role);
}

#[test]
fn four_processes_appending_25_blocks_each_on_the_filesystem_all_land() {
    for sharded in [false, true] {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let url = dir.path().to_str().expect("a UTF-8 path").to_owned();
        processes_append(&url, sharded);
    }
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn four_processes_appending_25_blocks_each_on_s3_all_land() {
    const BUCKET: &str = "zarr-test";
    zarr_testkit::s3::endpoint(BUCKET);
    let url = format!(
        "s3://{BUCKET}/{}",
        zarr_testkit::s3::unique_prefix("concurrent-appends")
    );
    processes_append(&url, false);
}

#[cfg(feature = "vlen")]
#[test]
fn four_processes_appending_25_string_blocks_each_on_the_filesystem_all_land() {
    for sharded in [false, true] {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let url = dir.path().to_str().expect("a UTF-8 path").to_owned();
        processes_append_strings(&url, sharded);
    }
}

#[cfg(feature = "vlen")]
#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn four_processes_appending_25_string_blocks_each_on_s3_all_land() {
    const BUCKET: &str = "zarr-test";
    zarr_testkit::s3::endpoint(BUCKET);
    for sharded in [false, true] {
        let url = format!(
            "s3://{BUCKET}/{}",
            zarr_testkit::s3::unique_prefix("concurrent-string-appends")
        );
        processes_append_strings(&url, sharded);
    }
}

#[test]
fn threads_appending_and_prepending_all_land() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    create(store.clone(), false);
    const BLOCKS: u32 = 8;
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let store = store.clone();
            scope.spawn(move || {
                let mut array = Array::open(store, PATH).expect("opens");
                for b in 0..BLOCKS {
                    let (rows, data) = (rows_of(w, b), block(w, b, COLS));
                    let result = if w % 2 == 0 {
                        array.append_bytes(&[rows, COLS], &data, 0)
                    } else {
                        array.prepend_bytes(&[rows, COLS], &data, 0)
                    };
                    result.unwrap_or_else(|e| panic!("writer {w}: {}", zarr_array::report(&e)));
                }
            });
        }
    });
    let array = Array::open(store.clone(), PATH).expect("opens");
    let found = blocks_found(&array, COLS);
    assert_eq!(found.len(), (WRITERS * BLOCKS) as usize, "{found:?}");
    for w in 0..WRITERS {
        let mine: Vec<u32> = found
            .iter()
            .filter(|(fw, _)| *fw == w)
            .map(|(_, b)| *b)
            .collect();
        // appenders' blocks in their order; a prepender's last block comes first
        let mut want: Vec<u32> = (0..BLOCKS).collect();
        if w % 2 == 1 {
            want.reverse();
        }
        assert_eq!(mine, want, "writer {w}");
    }
    check_consolidated(store);
}

fn attribute_stores() -> Vec<(Arc<dyn Store>, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let fs: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).expect("the store"));
    vec![(Arc::new(MemoryStore::new()), None), (fs, Some(dir))]
}

/// A store of its own per thread on the filesystem (its own descriptors, as another process
/// would have), the shared one in memory.
fn reopen(store: &Arc<dyn Store>, dir: Option<&tempfile::TempDir>) -> Arc<dyn Store> {
    match dir {
        Some(dir) => Arc::new(FilesystemStore::open(dir.path()).expect("reopens")),
        None => store.clone(),
    }
}

#[test]
fn concurrent_attribute_updates_of_different_keys_all_land() {
    const KEYS: usize = 10;
    for (store, dir) in attribute_stores() {
        create(store.clone(), false);
        std::thread::scope(|scope| {
            for w in 0..WRITERS {
                let store = reopen(&store, dir.as_ref());
                scope.spawn(move || {
                    let mut array = Array::open(store.clone(), PATH).expect("opens");
                    let mut group = Group::open(store, "g").expect("opens");
                    for k in 0..KEYS {
                        let mut update = Map::new();
                        update.insert(format!("w{w}k{k}"), Value::from(k));
                        array
                            .update_attributes(update.clone())
                            .expect("array attributes");
                        group.update_attributes(update).expect("group attributes");
                    }
                });
            }
        });
        let array = Array::open(store.clone(), PATH).expect("opens");
        let group = Group::open(store.clone(), "g").expect("opens");
        for attributes in [array.attributes(), group.attributes()] {
            assert_eq!(attributes.len(), WRITERS as usize * KEYS, "{attributes:?}");
            for w in 0..WRITERS {
                for k in 0..KEYS {
                    assert_eq!(attributes.get(&format!("w{w}k{k}")), Some(&Value::from(k)));
                }
            }
        }
        check_consolidated(store);
    }
}

#[test]
fn a_resize_racing_appends_is_kept_and_no_append_is_lost() {
    const BLOCKS: u32 = 30;
    // far beyond the rows the blocks take: the resize grows the array, leaving a gap of fill
    const GROWN: u64 = 200;
    for (store, dir) in attribute_stores() {
        create(store.clone(), false);
        let appender_store = reopen(&store, dir.as_ref());
        let resizer_store = reopen(&store, dir.as_ref());
        std::thread::scope(|scope| {
            scope.spawn(move || append_blocks(appender_store, 0, BLOCKS));
            scope.spawn(move || {
                // wait for a few appends, then grow the array under the appender
                let mut array = Array::open(resizer_store.clone(), PATH).expect("opens");
                while array.shape()[0] < 10 {
                    std::thread::yield_now();
                    array = Array::open(resizer_store.clone(), PATH).expect("opens");
                }
                array.resize(&[GROWN, COLS]).expect("resizes");
            });
        });
        let array = Array::open(store.clone(), PATH).expect("opens");
        let values: Vec<u32> = array
            .read_all::<u32>()
            .expect("reads")
            .iter()
            .copied()
            .collect();
        // the blocks appended before the resize, fill up to GROWN, the blocks appended after
        let mut row = 0u64;
        let mut gap = None;
        for b in 0..BLOCKS {
            if gap.is_none() && values[(row * COLS) as usize] == 0 {
                gap = Some(row);
                assert!(row <= GROWN, "fill at row {row}, beyond the grown shape");
                assert!(
                    values[(row * COLS) as usize..(GROWN * COLS) as usize]
                        .iter()
                        .all(|v| *v == 0),
                    "rows {row}..{GROWN} are not all fill"
                );
                row = GROWN;
            }
            for r in 0..rows_of(0, b) {
                for c in 0..COLS {
                    assert_eq!(
                        values.get(((row + r) * COLS + c) as usize).copied(),
                        Some(value(0, b, r, c)),
                        "block {b} (row {r}, column {c}) at array row {}",
                        row + r
                    );
                }
            }
            row += rows_of(0, b);
        }
        match gap {
            // the resize came between two appends: the appends after it start at GROWN
            Some(_) => assert_eq!(array.shape()[0], row, "no rows but the blocks' and the gap"),
            // the resize came after the last append
            None => assert_eq!(array.shape()[0], GROWN),
        }
        assert!(array.shape()[0] >= GROWN, "the resize is kept");
        check_consolidated(store);
    }
}

#[test]
fn an_append_that_a_resize_made_wrong_is_refused_and_writes_nothing() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    create(store.clone(), false);
    append_blocks(store.clone(), 0, 2);
    let mut stale = Array::open(store.clone(), PATH).expect("opens");
    let mut other = Array::open(store.clone(), PATH).expect("opens");
    let rows = other.shape()[0];
    other.resize(&[rows, COLS + 1]).expect("widens");
    let before: Vec<(String, Vec<u8>)> = store
        .list_prefix("")
        .expect("lists")
        .into_iter()
        .map(|k| {
            let v = store.get(&k).expect("reads").expect("exists");
            (k, v)
        })
        .collect();
    // this handle still thinks the array is COLS wide: the append is checked again against
    // the metadata in the store, and refused
    let result = stale.append_bytes(&[1, COLS], &block(1, 0, COLS)[..(COLS * 4) as usize], 0);
    assert!(
        matches!(result, Err(ArrayError::ShapeMismatch { .. })),
        "{result:?}"
    );
    let after: Vec<(String, Vec<u8>)> = store
        .list_prefix("")
        .expect("lists")
        .into_iter()
        .map(|k| {
            let v = store.get(&k).expect("reads").expect("exists");
            (k, v)
        })
        .collect();
    assert_eq!(before, after, "a refused append writes nothing");
}

#[test]
fn without_conditional_writes_one_writer_works_and_concurrent_ones_leave_a_valid_array() {
    // One writer: appends, prepends, resizes and attribute updates as on any store.
    let store: Arc<dyn Store> = Arc::new(Unconditional::new(MemoryStore::new()));
    assert!(!store.conditional_writes());
    create(store.clone(), false);
    append_blocks(store.clone(), 0, 6);
    let mut array = Array::open(store.clone(), PATH).expect("opens");
    let mut update = Map::new();
    update.insert("k".into(), Value::from(1));
    array.update_attributes(update).expect("attributes");
    check_all_blocks(&Array::open(store.clone(), PATH).expect("opens"), 1, 6);
    check_consolidated(store);

    // Concurrent appenders: no promise that every append lands (the last writer of
    // `zarr.json` wins, and appends may write the same positions), but the array stays
    // valid: it opens, every chunk decodes, and every element is fill or a value some
    // appender wrote, in a position of the block it was written for.
    let store: Arc<dyn Store> = Arc::new(Unconditional::new(MemoryStore::new()));
    create(store.clone(), false);
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let store = store.clone();
            scope.spawn(move || append_blocks(store, w, 8));
        }
    });
    let array = Array::open(store, PATH).expect("opens");
    let most: u64 = (0..WRITERS)
        .flat_map(|w| (0..8).map(move |b| rows_of(w, b)))
        .sum();
    assert!(array.shape()[0] <= most && array.shape()[1] == COLS);
    let data = array.read_all::<u32>().expect("every chunk decodes");
    for (i, v) in data.iter().enumerate() {
        if *v != 0 {
            let (w, b, r, c) = (
                (v >> 24) - 1,
                ((v >> 16) & 0xff) - 1,
                (v >> 8) & 0xff,
                v & 0xff,
            );
            assert!(
                w < WRITERS && b < 8 && u64::from(r) < rows_of(w, b),
                "{v:#x}"
            );
            assert_eq!(u64::from(c), i as u64 % COLS, "{v:#x} in its column");
        }
    }
}

/// What compare-and-swap costs an append, in store calls: one read of `zarr.json` with its
/// version and one conditional write of it; a boundary chunk one read and one conditional
/// write; per ancestor group one read, and for one that holds a consolidated copy one more
/// read (the member's metadata as stored) and one conditional write.
#[test]
fn the_store_calls_of_an_append() {
    use zarr_array::zarr_store::testing::CountingStore;
    let store = Arc::new(CountingStore::new(MemoryStore::new()));
    create(store.clone(), false);
    let mut array = Array::open(store.clone(), PATH).expect("opens");
    // a whole chunk (4 rows): written plainly
    let rows = |n: u64| -> Vec<u8> { (1..=(n * COLS) as u32).flat_map(u32::to_ne_bytes).collect() };
    store.reset();
    array
        .append_bytes(&[4, COLS], &rows(4), 0)
        .expect("appends");
    let whole = store.counts();
    // 2 rows into a new chunk the next append will share: a conditional write of the chunk
    store.reset();
    array
        .append_bytes(&[2, COLS], &rows(2), 0)
        .expect("appends");
    let boundary = store.counts();
    eprintln!("whole-chunk append: {whole:?}\nboundary append: {boundary:?}");
    // zarr.json: 1 get + 1 set; g: 1 get; the root (with the copy): 2 gets + 1 set
    assert_eq!(
        (whole.get, whole.set, whole.lists()),
        (4, 3, 0),
        "{whole:?}"
    );
    // the boundary chunk adds 1 get (absent: nothing to decode) to the same
    assert_eq!(
        (boundary.get, boundary.set, boundary.lists()),
        (5, 3, 0),
        "{boundary:?}"
    );
}
