//! Untrusted input at the array level: metadata with huge or overflowing shapes, sparse chunks
//! claiming more entries than their bytes hold, deep JSON, and node paths that try to leave a
//! filesystem store's root (`..`, absolute paths, NUL, symbolic links). Every case ends in an
//! error or a confined success, with bounded memory, and nothing outside the root is read or
//! written. Also replays the `metadata` fuzz corpus through `Array::open`
//! (`zarr_array::fuzzing::array_open`, the array half of the fuzz target).
//!
//! A counting global allocator measures peaks; every test holds one lock for its whole run.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(
    feature = "zstd",
    feature = "sharding",
    feature = "sparse",
    feature = "regular-bounded"
))]

use std::path::Path;
use std::sync::Arc;

use zarr_array::fuzzing::array_open;
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::{FilesystemStore, MemoryStore, Store, StoreError};
use zarr_array::{Array, ArrayBuilder, ArrayError, DataType, ExtensionDef, Group};
use zarr_testkit::corpus::{replay_fuzz_target, Inputs};
use zarr_testkit::{child, CountingAlloc};

/// Single requests above 8 GiB fail, so that a regression aborts quickly instead of paging.
#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::refusing_above(8 << 30);

/// An array document with `shape`, regular `chunks` and `[bytes, zstd]`.
fn doc(shape: &str, chunks: &str, data_type: &str) -> String {
    format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":{shape},"data_type":"{data_type}",
        "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":{chunks}}}}},
        "chunk_key_encoding":{{"name":"default","configuration":{{"separator":"/"}}}},
        "fill_value":0,"codecs":[{{"name":"bytes","configuration":{{"endian":"little"}}}},
        {{"name":"zstd","configuration":{{"level":0,"checksum":false}}}}]}}"#
    )
}

fn store_with(meta: &str) -> Arc<MemoryStore> {
    let store = Arc::new(MemoryStore::new());
    store.set("a/zarr.json", meta.as_bytes()).expect("set");
    store
}

#[test]
fn metadata_corpus_opens_cleanly() {
    let _serial = ALLOC.serial();
    replay_fuzz_target("metadata", Inputs::Fixed, array_open::run);
}

#[test]
#[ignore = "inputs of bugs not fixed yet (fuzz/regressions/KNOWN_FAILURES)"]
fn known_failures() {
    let _serial = ALLOC.serial();
    replay_fuzz_target("metadata", Inputs::KnownFailures, array_open::run);
}

#[test]
fn huge_chunk_shapes_are_refused_on_open_with_bounded_memory() {
    let _serial = ALLOC.serial();
    for (shape, chunks) in [
        (
            "[1099511627776,1099511627776]",
            "[1099511627776,1099511627776]",
        ),
        ("[10]", "[18446744073709551615]"),
        ("[4,4,4]", "[4294967296,4294967296,4294967296]"),
    ] {
        let store = store_with(&doc(shape, chunks, "float64"));
        let (result, peak) = ALLOC.peak_of(|| Array::open(store, "a").map(|a| a.chunk_shape()));
        assert!(result.is_err(), "chunk shape {chunks}: {result:?}");
        assert!(
            peak < 256 << 10,
            "chunk shape {chunks}: open allocated {peak} bytes"
        );
    }
}

#[test]
fn huge_shapes_with_small_chunks_open_and_read_cheaply() {
    let _serial = ALLOC.serial();
    // grid coordinates are i64, so shapes above i64::MAX are refused on open (not a panic)
    for (shape, chunks) in [
        ("[18446744073709551615]", "[2]"),
        ("[9223372036854775808,1]", "[2,2]"),
    ] {
        let store = store_with(&doc(shape, chunks, "uint8"));
        assert!(Array::open(store, "a").is_err(), "shape {shape}");
    }
    let max = i64::MAX as u64;
    for shape in [
        format!("[{max}]"),
        format!("[{max},{max}]"),
        format!("[{max},3]"),
    ] {
        let rank = shape.matches(',').count() + 1;
        let chunks = format!("[{}]", vec!["2"; rank].join(","));
        let store = store_with(&doc(&shape, &chunks, "uint8"));
        let (result, peak) = ALLOC.peak_of(|| -> Result<Vec<u8>, ArrayError> {
            let array = Array::open(store.clone(), "a")?;
            // the last element and the first
            let last: Vec<u64> = array.shape().iter().map(|&n| n - 1).collect();
            let mut out = [0u8; 1];
            array.read_region_bytes_into(&Region::new(last.clone(), vec![1; rank])?, &mut out)?;
            array.write_region_bytes(&Region::new(last, vec![1; rank])?, &[7])?;
            let mut back = [0u8; 1];
            let last: Vec<u64> = array.shape().iter().map(|&n| n - 1).collect();
            array.read_region_bytes_into(&Region::new(last, vec![1; rank])?, &mut back)?;
            assert_eq!(array.stored_chunks()?.len(), 1);
            Ok(vec![out[0], back[0]])
        });
        assert_eq!(result.ok(), Some(vec![0, 7]), "shape {shape}");
        assert!(peak < 1 << 20, "shape {shape}: allocated {peak} bytes");
    }
}

#[test]
fn growing_past_u64_is_an_error_not_a_panic() {
    let _serial = ALLOC.serial();
    let max = i64::MAX as u64;
    let store = store_with(&doc(&format!("[{}]", max - 1), "[4]", "uint8"));
    let mut array = Array::open(store.clone(), "a").expect("opens");
    assert!(array.append_bytes(&[2], &[1, 2], 0).is_err());
    assert!(array.resize(&[max, 1]).is_err(), "rank change");
    assert_eq!(array.shape(), &[max - 1]);
    let reopened = Array::open(store, "a").expect("still opens");
    assert_eq!(reopened.shape(), &[max - 1]);
    // prepending below i64::MIN
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut bounded = ArrayBuilder::new(vec![4], DataType::UInt8)
        .chunk_shape(vec![4])
        .lower_bound(vec![i64::MIN + 1])
        .create(store.clone(), "b")
        .expect("creates");
    assert!(bounded.prepend_bytes(&[2], &[1, 2], 0).is_err());
    assert_eq!(Array::open(store, "b").expect("opens").shape(), &[4]);
}

#[test]
fn deeply_nested_metadata_is_an_error() {
    let _serial = ALLOC.serial();
    for depth in [200usize, 100_000] {
        let attrs = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let meta = doc("[4]", "[2]", "uint8").replacen(
            r#""fill_value":0"#,
            &format!(r#""fill_value":0,"attributes":{{"x":{attrs}}}"#),
            1,
        );
        let store = store_with(&meta);
        let (result, peak) = ALLOC.peak_of(|| Array::open(store.clone(), "a").map(|_| ()));
        assert!(result.is_err(), "depth {depth}");
        assert!(
            peak < 16 * meta.len() + (1 << 20),
            "depth {depth}: allocated {peak}"
        );
        assert!(Group::open(store, "a").is_err());
    }
}

#[test]
fn sparse_chunks_claiming_more_entries_than_their_bytes_hold_are_refused() {
    use zarr_array::zarr_layout_sparse::{
        encode_dense_bytes, AlignedBuffer, ElementKind, IndexType, Layout, PointerType, SparseChunk,
    };
    let _serial = ALLOC.serial();
    let shape = [64u64, 64];
    let mut dense = vec![0u8; 64 * 64 * 4];
    for i in (0..dense.len()).step_by(4 * 37) {
        dense[i] = 1;
    }
    for layout in [
        Layout::coo(IndexType::U16),
        Layout::csr(IndexType::U16, PointerType::U32),
        Layout::csc(IndexType::U32, PointerType::U64),
    ] {
        let good = encode_dense_bytes(&layout, &shape, ElementKind::U32, &[0; 4], &dense)
            .expect("encodes");
        let real = SparseChunk::decode(
            AlignedBuffer::from_slice(&good).as_bytes(),
            &layout,
            &shape,
            4,
        )
        .expect("decodes")
        .nnz() as u64;
        for nnz in [real + 1, 64 * 64, 1 << 40, u64::MAX] {
            let mut bad = good.clone();
            bad[8..16].copy_from_slice(&nnz.to_le_bytes());
            let buf = AlignedBuffer::from_slice(&bad);
            let (result, peak) = ALLOC.peak_of(|| {
                SparseChunk::decode(buf.as_bytes(), &layout, &shape, 4)
                    .and_then(|c| c.to_dense_bytes(&[0; 4]))
                    .map(|d| d.len())
            });
            assert!(
                result.is_err(),
                "{layout:?} claiming {nnz} entries: {result:?}"
            );
            assert!(
                peak < 64 << 10,
                "{layout:?} claiming {nnz}: allocated {peak} bytes"
            );
        }
    }
}

/// Reading one element of an array whose chunks are 2^50 bytes, when a chunk of a few bytes is
/// stored, must fail on the stored size rather than allocate the chunk (which aborts).
#[test]
fn reading_a_tiny_chunk_of_a_huge_chunk_shape_fails_cleanly() {
    child_case("huge_chunk_read");
}

/// Writing one element of an array whose chunks are 2^50 bytes must be an error, not an abort.
#[test]
fn writing_into_a_huge_chunk_shape_fails_cleanly() {
    child_case("huge_chunk_write");
}

/// Runs one of the cases in `child_cases` in a child process, failing with its output if it
/// does not exit cleanly (an allocation failure aborts the process).
fn child_case(case: &str) {
    child::run_to_completion("child_cases", case);
}

/// The cases `child_case` runs, each in a child process of its own.
#[test]
#[ignore = "the child process of the tests above (zarr_testkit::child), run by them"]
fn child_cases() {
    let case = child::role();
    let _serial = ALLOC.serial();
    let chunks = "[33554432,33554432]";
    let store = store_with(&doc("[33554432,33554432]", chunks, "uint8"));
    let array = Array::open(store.clone(), "a").expect("a 2^50-byte chunk shape opens");
    let one = Region::new(vec![0, 0], vec![1, 1]).expect("a region");
    match case.as_str() {
        "huge_chunk_read" => {
            // a few stored bytes: not even a zstd frame
            store.set("a/c/0/0", b"abc").expect("set");
            let mut out = [0u8; 1];
            let (result, peak) = ALLOC.peak_of(|| array.read_region_bytes_into(&one, &mut out));
            assert!(result.is_err(), "{result:?}");
            assert!(peak < 1 << 20, "allocated {peak} bytes");
        }
        "huge_chunk_write" => {
            let (result, peak) = ALLOC.peak_of(|| array.write_region_bytes(&one, &[1]));
            assert!(result.is_err(), "{result:?}");
            assert!(peak < 1 << 20, "allocated {peak} bytes");
        }
        other => panic!("unknown case {other}"),
    }
    child::done(&case);
}

// ---------------------------------------------------------------------------------------------
// Paths: nothing outside a filesystem store's root is read or written.

/// A temporary folder with `root/` (the store) and `outside/` (which must stay untouched),
/// holding a secret array and a secret file.
struct Sandbox {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&root).expect("root");
        let secret = FilesystemStore::create(&outside).expect("outside");
        ArrayBuilder::new(vec![4], DataType::UInt8)
            .chunk_shape(vec![4])
            .compressors(Vec::<ExtensionDef>::new())
            .create(Arc::new(secret.clone()), "arr")
            .expect("a secret array")
            .write_region_bytes(
                &Region::new(vec![0], vec![4]).expect("region"),
                &[9, 9, 9, 9],
            )
            .expect("secret data");
        std::fs::write(outside.join("secret"), [9u8; 4]).expect("a secret file");
        Sandbox {
            _dir: dir,
            root,
            outside,
        }
    }

    fn store(&self) -> Arc<dyn Store> {
        Arc::new(FilesystemStore::open(&self.root).expect("the store"))
    }

    /// Every file under `outside/` with its contents.
    fn outside_snapshot(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut pending = vec![self.outside.clone()];
        while let Some(dir) = pending.pop() {
            for e in std::fs::read_dir(&dir).expect("readable").flatten() {
                let p = e.path();
                if p.is_dir() {
                    pending.push(p);
                } else {
                    out.push((
                        p.strip_prefix(&self.outside)
                            .unwrap_or(&p)
                            .display()
                            .to_string(),
                        std::fs::read(&p).expect("readable"),
                    ));
                }
            }
        }
        out.sort();
        out
    }

    /// Every entry of the sandbox that is neither under `root/` nor under `outside/`.
    fn strays(&self) -> Vec<String> {
        let parent = self.root.parent().expect("a parent");
        std::fs::read_dir(parent)
            .expect("readable")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "root" && n != "outside")
            .collect()
    }
}

fn symlink(target: &Path, link: &Path) {
    #[cfg(unix)]
    std::os::unix::fs::symlink(target, link).expect("a symbolic link");
    #[cfg(not(unix))]
    let _ = (target, link);
}

const BAD_PATHS: [&str; 12] = [
    "..",
    "../outside/arr",
    "a/../../outside/arr",
    "a/./b",
    "a//b",
    "a\0b",
    "..\\outside\\arr",
    "a\\b",
    "__reserved",
    "a/__b",
    "/../outside/arr",
    "/a/../../outside",
];

#[test]
fn bad_node_paths_are_refused_by_arrays_and_groups() {
    let _serial = ALLOC.serial();
    let sandbox = Sandbox::new();
    let before = sandbox.outside_snapshot();
    let store = sandbox.store();
    let builder = ArrayBuilder::new(vec![4], DataType::UInt8).chunk_shape(vec![4]);
    for path in BAD_PATHS {
        assert!(
            matches!(
                Array::open(store.clone(), path),
                Err(ArrayError::InvalidPath { .. })
            ),
            "Array::open({path:?})"
        );
        assert!(
            matches!(
                builder.create(store.clone(), path),
                Err(ArrayError::InvalidPath { .. })
            ),
            "ArrayBuilder::create({path:?})"
        );
        assert!(
            matches!(
                Group::create(store.clone(), path, Default::default()),
                Err(ArrayError::InvalidPath { .. })
            ),
            "Group::create({path:?})"
        );
        assert!(
            Group::open(store.clone(), path).is_err(),
            "Group::open({path:?})"
        );
    }
    let root = Group::create(store.clone(), "", Default::default()).expect("a root group");
    for name in ["..", "a/b", "", "x\0", "__x", "."] {
        assert!(
            root.create_group(name, Default::default()).is_err(),
            "{name:?}"
        );
        assert!(root.create_array(name, &builder).is_err(), "{name:?}");
        assert!(root.open_array(name).is_err(), "{name:?}");
    }
    // a name the store reserves for its temporary files
    let tmp = builder.create(store.clone(), "x/.tmp-1");
    assert!(
        matches!(
            tmp,
            Err(ArrayError::Store(
                StoreError::InvalidKey { .. } | StoreError::InvalidPrefix { .. }
            ))
        ),
        "{tmp:?}"
    );
    // a leading '/' is the root of the store, not of the filesystem
    builder
        .create(store.clone(), "/abs/arr")
        .expect("created under the root");
    assert!(sandbox.root.join("abs/arr/zarr.json").is_file());
    assert_eq!(sandbox.outside_snapshot(), before, "outside/ changed");
    assert!(
        sandbox.strays().is_empty(),
        "files left beside the root: {:?}",
        sandbox.strays()
    );
}

#[cfg(unix)]
#[test]
fn symbolic_links_out_of_the_root_are_not_followed() {
    let _serial = ALLOC.serial();
    let sandbox = Sandbox::new();
    let before = sandbox.outside_snapshot();
    let root = &sandbox.root;
    // a node folder that is a link to the secret array
    symlink(&sandbox.outside.join("arr"), &root.join("linked"));
    // a parent folder that is a link out of the root
    symlink(&sandbox.outside, &root.join("out"));
    // a real array whose zarr.json, and another whose chunk, are links to secret files
    let store = sandbox.store();
    let builder = ArrayBuilder::new(vec![4], DataType::UInt8)
        .chunk_shape(vec![4])
        .compressors(Vec::<ExtensionDef>::new());
    builder.create(store.clone(), "meta").expect("creates");
    std::fs::remove_file(root.join("meta/zarr.json")).expect("removed");
    symlink(
        &sandbox.outside.join("arr/zarr.json"),
        &root.join("meta/zarr.json"),
    );
    let chunky = builder.create(store.clone(), "chunky").expect("creates");
    std::fs::create_dir_all(root.join("chunky/c")).expect("chunk folder");
    symlink(&sandbox.outside.join("secret"), &root.join("chunky/c/0"));

    for path in ["linked", "out/arr", "meta"] {
        let err = Array::open(store.clone(), path).expect_err(path);
        assert!(
            matches!(err, ArrayError::Store(StoreError::Symlink { .. })),
            "Array::open({path:?}): {err}"
        );
        assert!(Group::open(store.clone(), path).is_err());
    }
    for path in ["linked/new", "out/new", "out/arr"] {
        assert!(
            builder
                .clone()
                .overwrite(true)
                .create(store.clone(), path)
                .is_err(),
            "create at {path:?}"
        );
        assert!(Group::create(store.clone(), path, Default::default()).is_err());
    }
    // the chunk that is a link reads as an error, never as the secret's bytes
    let whole = Region::new(vec![0], vec![4]).expect("region");
    let mut out = [0u8; 4];
    assert!(chunky.read_region_bytes_into(&whole, &mut out).is_err());
    assert_ne!(out, [9; 4]);
    assert!(chunky.write_region_bytes(&whole, &[1, 2, 3, 4]).is_err());
    assert!(chunky
        .write_region_bytes(&Region::new(vec![1], vec![1]).expect("r"), &[1])
        .is_err());
    // listing and resizing skip or refuse the link, never delete through it
    assert_eq!(
        chunky.stored_chunks().expect("lists"),
        Vec::<Vec<i64>>::new()
    );
    let mut chunky = chunky;
    chunky
        .resize(&[0])
        .expect("a resize that deletes nothing it can see");
    let root_group = Group::open(store.clone(), "").ok();
    if let Some(g) = root_group {
        let _ = g.members();
    }
    let _ = ArrayBuilder::new(vec![4], DataType::UInt8)
        .overwrite(true)
        .create(store.clone(), "chunky");
    assert_eq!(sandbox.outside_snapshot(), before, "outside/ changed");
    assert!(
        sandbox.strays().is_empty(),
        "files left beside the root: {:?}",
        sandbox.strays()
    );
}

/// Reads that allocate their output (`read_region`, `read_region_bytes`, `read_all`,
/// `read_selection`, sparse `read_csr`) allocate it fallibly: an output larger than the
/// system gives (here: above the test allocator's 8 GiB) is `OutOfMemory` naming the bytes,
/// not an abort.
#[test]
fn reads_whose_output_cannot_be_allocated_are_errors_not_aborts() {
    let _serial = ALLOC.serial();
    // 2^34 float32 = 64 GiB of output, 2^20 chunks of 2^14 (nothing stored)
    let store = store_with(&doc("[131072,131072]", "[128,128]", "float32"));
    let array = Array::open(store, "a").unwrap();
    let whole = Region::whole(array.shape());
    let expect = |e: ArrayError| {
        assert!(
            matches!(e, ArrayError::OutOfMemory { bytes, .. } if bytes == 64 << 30),
            "{e}"
        );
        assert!(e.to_string().contains("68719476736 bytes"), "{e}");
    };
    expect(array.read_region_bytes(&whole).unwrap_err());
    expect(array.read_region::<f32>(&whole).unwrap_err());
    expect(array.read_all::<f32>().unwrap_err());
    let all = zarr_array::Selection::all();
    expect(array.read_selection::<f32>(&all).unwrap_err());
    expect(array.read_selection_bytes(&all).unwrap_err());
    // a global CSR of 2^36 rows needs 2^36 + 1 row pointers (512 GiB)
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let sparse = ArrayBuilder::new(vec![1 << 36, 4], DataType::Float32)
        .chunk_shape(vec![1024, 4])
        .sparse(zarr_array::zarr_layout_sparse::Format::Csr)
        .create(store, "s")
        .unwrap();
    let e = sparse
        .sparse()
        .unwrap()
        .read_csr::<f32>(&Region::whole(sparse.shape()))
        .unwrap_err();
    assert!(matches!(e, ArrayError::OutOfMemory { .. }), "{e}");
    assert!(e.to_string().contains("row pointers"), "{e}");
}

/// A store that counts the calls made to it (every method, reads, writes and listings alike).
#[derive(Debug)]
struct Counted {
    inner: MemoryStore,
    calls: std::sync::atomic::AtomicU64,
}

impl Counted {
    fn new() -> Self {
        Self {
            inner: MemoryStore::new(),
            calls: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn tick(&self) -> &MemoryStore {
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        &self.inner
    }

    /// The calls made by `f`.
    fn calls_of<T>(&self, f: impl FnOnce() -> T) -> (T, u64) {
        let before = self.calls.load(std::sync::atomic::Ordering::Relaxed);
        let out = f();
        (
            out,
            self.calls.load(std::sync::atomic::Ordering::Relaxed) - before,
        )
    }
}

impl Store for Counted {
    fn get(&self, key: &str) -> zarr_array::zarr_store::Result<Option<Vec<u8>>> {
        self.tick().get(key)
    }
    fn get_ranges(
        &self,
        key: &str,
        ranges: &[zarr_array::zarr_store::ByteRange],
    ) -> zarr_array::zarr_store::Result<Option<Vec<Vec<u8>>>> {
        self.tick().get_ranges(key, ranges)
    }
    fn size(&self, key: &str) -> zarr_array::zarr_store::Result<Option<u64>> {
        self.tick().size(key)
    }
    fn set(&self, key: &str, value: &[u8]) -> zarr_array::zarr_store::Result<()> {
        self.tick().set(key, value)
    }
    fn delete(&self, key: &str) -> zarr_array::zarr_store::Result<()> {
        self.tick().delete(key)
    }
    fn delete_prefix(&self, prefix: &str) -> zarr_array::zarr_store::Result<()> {
        self.tick().delete_prefix(prefix)
    }
    fn list_prefix(&self, prefix: &str) -> zarr_array::zarr_store::Result<Vec<String>> {
        self.tick().list_prefix(prefix)
    }
    fn list_dir(
        &self,
        prefix: &str,
    ) -> zarr_array::zarr_store::Result<zarr_array::zarr_store::ListDir> {
        self.tick().list_dir(prefix)
    }
    fn list_prefix_sizes(
        &self,
        prefix: &str,
    ) -> zarr_array::zarr_store::Result<Vec<(String, u64)>> {
        self.tick().list_prefix_sizes(prefix)
    }
    fn get_many(&self, keys: &[&str]) -> zarr_array::zarr_store::Result<Vec<Option<Vec<u8>>>> {
        self.tick().get_many(keys)
    }
    fn conditional_writes(&self) -> bool {
        self.inner.conditional_writes()
    }
    fn get_versioned(
        &self,
        key: &str,
    ) -> zarr_array::zarr_store::Result<Option<(Vec<u8>, zarr_array::zarr_store::Version)>> {
        self.tick().get_versioned(key)
    }
    fn set_if(
        &self,
        key: &str,
        value: &[u8],
        condition: &zarr_array::zarr_store::Condition,
    ) -> zarr_array::zarr_store::Result<zarr_array::zarr_store::Outcome> {
        self.tick().set_if(key, value, condition)
    }
}

/// Issue "bounded time for nonsense": an array of 2^40 chunks with a handful stored costs
/// what is stored, not what the grid could hold. Listing, sizes, reads, resizes (shrinking
/// past stored chunks and growing), consolidation, conversion to v2, appends and prepends on
/// a `regular_bounded` grid and the copy onto a `regular` one each make a number of store
/// calls bounded by a constant plus a few per stored chunk (a walk of the grid, or of one of
/// its 2^20-chunk axes, would not finish or would blow the bound).
#[test]
fn arrays_of_2_pow_40_chunks_cost_what_is_stored() {
    let _serial = ALLOC.serial();
    let counted = Arc::new(Counted::new());
    let store: Arc<dyn Store> = counted.clone();
    let bound = |stored: usize| 24 + 8 * stored as u64;
    let side = 8u64 << 20; // 2^20 chunks of 8 along each axis: 2^40 chunks
    let mut group = Group::create(store.clone(), "g", serde_json::Map::new()).unwrap();
    let mut a = group
        .create_array(
            "a",
            &ArrayBuilder::new(vec![side, side], DataType::UInt8).chunk_shape(vec![8, 8]),
        )
        .unwrap();
    let corners = [[0, 0], [0, side - 8], [side - 8, 0], [side - 8, side - 8]];
    for (i, c) in corners.iter().enumerate() {
        let r = Region::new(c.to_vec(), vec![8, 8]).unwrap();
        a.write_region_bytes(&r, &[i as u8 + 1; 64]).unwrap();
    }
    let middle = Region::new(vec![side / 2 + 1, side / 2 + 1], vec![1, 1]).unwrap();
    a.write_region_bytes(&middle, &[9]).unwrap();

    let (listed, calls) = counted.calls_of(|| a.stored_chunks().unwrap());
    assert_eq!(listed.len(), 5);
    assert!(calls <= bound(0), "stored_chunks: {calls} calls");
    let (sizes, calls) = counted.calls_of(|| a.stored_chunk_sizes().unwrap());
    assert_eq!(sizes.len(), 5);
    assert!(calls <= bound(5), "stored_chunk_sizes: {calls} calls");
    let (opened, calls) = counted.calls_of(|| Array::open(store.clone(), "g/a").unwrap());
    assert_eq!(opened.shape(), &[side, side]);
    assert!(calls <= bound(0), "open: {calls} calls");

    // shrink past the last row of chunks and half of the middle one, then grow back: the cut
    // chunks are gone and the middle chunk reads as fill beyond the cut
    let (_, calls) = counted.calls_of(|| a.resize(&[side / 2 + 1, side]).unwrap());
    assert!(calls <= bound(5), "shrinking resize: {calls} calls");
    assert_eq!(a.stored_chunks().unwrap().len(), 3);
    let (_, calls) = counted.calls_of(|| a.resize(&[side, side]).unwrap());
    assert!(calls <= bound(3), "growing resize: {calls} calls");
    let (back, calls) = counted.calls_of(|| a.read_region_bytes(&middle).unwrap());
    assert_eq!(back, vec![0]);
    assert!(calls <= bound(1), "read: {calls} calls");
    let last = Region::new(vec![side - 8, side - 8], vec![8, 8]).unwrap();
    assert_eq!(a.read_region_bytes(&last).unwrap(), vec![0; 64]);

    let (_, calls) = counted.calls_of(|| group.consolidate().unwrap());
    assert!(calls <= bound(0), "consolidate: {calls} calls");
    let (v2, calls) = counted.calls_of(|| a.to_v2(false).unwrap());
    assert!(calls <= bound(3), "to_v2: {calls} calls");
    assert_eq!(v2.chunks_moved, 3);
    assert_eq!(v2.array.stored_chunks().unwrap().len(), 3);

    // one axis of 2^40 chunks on a regular_bounded grid: grow at both ends, copy to regular
    let length = 4u64 << 40;
    let mut b = ArrayBuilder::new(vec![length], DataType::UInt8)
        .chunk_shape(vec![4])
        .lower_bound(vec![-(1 << 50)])
        .create(store.clone(), "b")
        .unwrap();
    b.write_region_bytes(&Region::new(vec![0], vec![4]).unwrap(), &[1; 4])
        .unwrap();
    b.write_region_bytes(&Region::new(vec![length - 4], vec![4]).unwrap(), &[2; 4])
        .unwrap();
    let (_, calls) = counted.calls_of(|| b.prepend_bytes(&[6], &[3; 6], 0).unwrap());
    assert!(calls <= bound(2), "prepend: {calls} calls");
    let (_, calls) = counted.calls_of(|| b.append_bytes(&[6], &[4; 6], 0).unwrap());
    assert!(calls <= bound(2), "append: {calls} calls");
    assert_eq!(b.shape(), &[length + 12]);
    let (copy, calls) = counted.calls_of(|| b.to_regular(store.clone(), "b_regular").unwrap());
    assert!(calls <= bound(8), "to_regular: {calls} calls");
    assert_eq!(
        copy.read_region_bytes(&Region::new(vec![0], vec![12]).unwrap())
            .unwrap(),
        [[3u8; 6].as_slice(), &[1; 4], &[0; 2]].concat()
    );
    let end = Region::new(vec![length + 2], vec![10]).unwrap();
    assert_eq!(
        copy.read_region_bytes(&end).unwrap(),
        [[2u8; 4].as_slice(), &[4; 6]].concat()
    );
}
