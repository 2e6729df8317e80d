//! Interrupted operations: every store call of create, write, append, prepend, resize and
//! attribute updates is made to fail in turn (once, or from then on as after a crash; reads
//! also cut short), and afterwards the array still opens, its metadata is the old or the new
//! document (never half-written), every stored key holds its old or its new value, and the
//! data read is the old array's or the new array's, except where the operation's order of
//! writes says otherwise: an append or prepend reserves its positions (the new metadata)
//! before it writes them, so the new metadata may come with some of them still at fill; a
//! shrink resets the cut-off positions before its metadata, so the old metadata may come
//! with some of them reset.
//!
//! Arrays with dense chunks, shards, sparse chunks (`sparse_layout`) and shards of sparse
//! chunks are covered, sparse writes (`SparseArray::write_coo`) included.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(feature = "zstd", feature = "sharding", feature = "sparse"))]

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::testing::{Fault, FaultOp, FaultyStore};
use zarr_array::zarr_store::{MemoryStore, Store};
use zarr_array::{Array, ArrayBuilder, DataType, FillValue, Result};
use zarr_testkit::Rng;

type Snapshot = BTreeMap<String, Vec<u8>>;

fn snapshot(store: &dyn Store) -> Snapshot {
    store
        .list_prefix("")
        .expect("lists")
        .into_iter()
        .map(|k| {
            let v = store.get(&k).expect("reads").expect("listed keys exist");
            (k, v)
        })
        .collect()
}

fn restore(snap: &Snapshot) -> Arc<MemoryStore> {
    let store = Arc::new(MemoryStore::new());
    for (k, v) in snap {
        store.set(k, v).expect("set");
    }
    store
}

/// `n` values from a seeded generator, so every run writes the same data: some zeros (the
/// fill value), so that chunks are also deleted.
fn data(seed: u64, n: usize) -> Vec<u16> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| match rng.below(5) {
            0 => 0,
            _ => rng.below(60_000) as u16 + 1,
        })
        .collect()
}

fn bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

const PATH: &str = "g/arr";

/// The array every operation starts from: `[10, 7]` uint16 in `[4, 3]` chunks (or shards of
/// `[4, 6]` with inner `[2, 3]` chunks), fill 0, zstd.
/// How the array's chunks are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Dense,
    Sharded,
    /// Each chunk in the `sparse_layout` codec (CSR).
    Sparse,
    /// Shards whose inner chunks are sparse (COO).
    SparseSharded,
}

fn initial(kind: Kind) -> (Snapshot, Vec<u16>) {
    use zarr_array::zarr_layout_sparse::Format;
    let store = Arc::new(MemoryStore::new());
    let sharded = matches!(kind, Kind::Sharded | Kind::SparseSharded);
    let mut builder = ArrayBuilder::new(vec![10, 7], DataType::UInt16)
        .chunk_shape(vec![if sharded { 2 } else { 4 }, 3])
        .fill_value(FillValue::zero(DataType::UInt16));
    if sharded {
        builder = builder.shards(vec![4, 6]);
    }
    match kind {
        Kind::Sparse => builder = builder.sparse(Format::Csr),
        Kind::SparseSharded => builder = builder.sparse(Format::Coo),
        Kind::Dense | Kind::Sharded => {}
    }
    let array = builder.create(store.clone(), PATH).expect("creates");
    let data = data(7, 70);
    array
        .write_region_bytes(
            &Region::new(vec![0, 0], vec![10, 7]).expect("r"),
            &bytes(&data),
        )
        .expect("writes");
    (snapshot(&*store), data)
}

/// One operation on an array opened over a (faulty) store.
type Op = fn(Arc<dyn Store>) -> Result<()>;

fn open(store: Arc<dyn Store>) -> Result<Array> {
    Array::open(store, PATH)
}

fn op_write_partial(s: Arc<dyn Store>) -> Result<()> {
    let a = open(s)?;
    let data = data(11, 6 * 5);
    a.write_region_bytes(&Region::new(vec![3, 1], vec![6, 5])?, &bytes(&data))
}

fn op_write_fill(s: Arc<dyn Store>) -> Result<()> {
    // all fill: chunks are deleted
    let a = open(s)?;
    a.write_region_bytes(&Region::new(vec![0, 0], vec![8, 6])?, &[0; 8 * 6 * 2])
}

fn op_write_sparse(s: Arc<dyn Store>) -> Result<()> {
    // entries across several chunks; a fill value removes an entry
    let a = open(s)?;
    let rows = [0u64, 1, 4, 5, 9, 9, 2];
    let cols = [0u64, 6, 3, 4, 0, 6, 2];
    let coords = zarr_array::ndarray::Array2::from_shape_fn((2, rows.len()), |(d, k)| {
        if d == 0 {
            rows[k]
        } else {
            cols[k]
        }
    });
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &[11u16, 0, 13, 14, 15, 0, 17])
}

fn op_append_0(s: Arc<dyn Store>) -> Result<()> {
    let mut a = open(s)?;
    a.append_bytes(&[5, 7], &bytes(&data(13, 35)), 0)
}

fn op_append_1(s: Arc<dyn Store>) -> Result<()> {
    let mut a = open(s)?;
    a.append_bytes(&[10, 4], &bytes(&data(17, 40)), 1)
}

fn op_prepend_0(s: Arc<dyn Store>) -> Result<()> {
    let mut a = open(s)?;
    a.prepend_bytes(&[3, 7], &bytes(&data(19, 21)), 0)
}

fn op_prepend_aligned(s: Arc<dyn Store>) -> Result<()> {
    let mut a = open(s)?;
    a.prepend_bytes(&[10, 3], &bytes(&data(23, 30)), 1)
}

fn op_shrink(s: Arc<dyn Store>) -> Result<()> {
    open(s)?.resize(&[6, 5])
}

fn op_grow(s: Arc<dyn Store>) -> Result<()> {
    open(s)?.resize(&[13, 9])
}

fn op_reshape(s: Arc<dyn Store>) -> Result<()> {
    open(s)?.resize(&[5, 11])
}

fn op_attributes(s: Arc<dyn Store>) -> Result<()> {
    let mut a = open(s)?;
    let mut m = serde_json::Map::new();
    m.insert("k".into(), serde_json::Value::from("v"));
    a.update_attributes(m)
}

fn op_create(s: Arc<dyn Store>) -> Result<()> {
    ArrayBuilder::new(vec![5, 5], DataType::UInt16)
        .chunk_shape(vec![2, 2])
        .create(s, "g/new")
        .map(|_| ())
}

fn op_create_overwrite(s: Arc<dyn Store>) -> Result<()> {
    ArrayBuilder::new(vec![5, 5], DataType::UInt16)
        .chunk_shape(vec![2, 2])
        .overwrite(true)
        .create(s, PATH)
        .map(|_| ())
}

/// What a reader finds at `PATH`: the metadata bytes and the whole array, or `None` when
/// there is no node.
fn read_state(store: Arc<dyn Store>) -> Option<State> {
    let meta = store.get(&format!("{PATH}/zarr.json")).expect("reads")?;
    let array = Array::open(store, PATH).expect("the array opens after any fault");
    let data = array
        .read_all::<u16>()
        .expect("every stored chunk decodes after any fault");
    Some(State {
        meta,
        shape: array.shape().to_vec(),
        domain: array.domain(),
        data: data.iter().copied().collect(),
    })
}

/// What a reader finds at `PATH`.
#[derive(Debug, PartialEq)]
struct State {
    meta: Vec<u8>,
    shape: Vec<u64>,
    /// `[start, end)` of every axis, in domain coordinates.
    domain: Vec<(i64, i64)>,
    data: Vec<u16>,
}

impl State {
    /// Whether the `i`-th position (C order) lies in `domain` as well.
    fn position_in(&self, i: usize, domain: &[(i64, i64)]) -> bool {
        let mut rest = i as u64;
        let mut inside = true;
        for axis in (0..self.shape.len()).rev() {
            let n = self.shape[axis].max(1);
            let coordinate = self.domain[axis].0 + (rest % n) as i64;
            rest /= n;
            inside &= domain[axis].0 <= coordinate && coordinate < domain[axis].1;
        }
        inside
    }

    /// Each position inside `domain` as in `full`, every other as in `full` or fill (0):
    /// what an operation leaves whose metadata is written but whose data (outside `domain`)
    /// is written in part.
    fn partly(&self, full: &State, domain: &[(i64, i64)]) -> bool {
        self.shape == full.shape
            && self.data.len() == full.data.len()
            && (0..self.data.len()).all(|i| {
                self.data[i] == full.data[i] || (!self.position_in(i, domain) && self.data[i] == 0)
            })
    }
}

/// What an interrupted operation may leave beyond the old or the new array whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Partial {
    /// Nothing: the old array, or the new one.
    Nothing,
    /// Append, prepend: the new metadata written first (the positions reserved), the new
    /// positions then written in part (the rest read as fill).
    Reserved,
    /// A shrinking resize: the cut-off positions reset before the metadata, so the old
    /// metadata may come with them reset in part.
    CutFirst,
}

/// Every fault that can hit an operation that made `counts` calls.
fn faults((writes, reads, lists): (u64, u64, u64)) -> Vec<Fault> {
    let mut all = Vec::new();
    for k in 0..writes {
        all.push(Fault::once(FaultOp::Write, k));
        all.push(Fault::from(FaultOp::Write, k));
    }
    for k in 0..reads {
        all.push(Fault::once(FaultOp::Read, k));
        all.push(Fault::short_read(k));
    }
    for k in 0..lists {
        all.push(Fault::once(FaultOp::List, k));
    }
    all
}

/// Drives `op` through every fault and checks what each leaves behind.
fn check_op(name: &str, op: Op, kind: Kind, overwrite_may_remove: bool, partial: Partial) {
    let (before, _) = initial(kind);
    let old_state = read_state(restore(&before));
    // the operation without a fault: its result and its number of calls
    let clean = Arc::new(FaultyStore::new(restore(&before)));
    op(clean.clone()).unwrap_or_else(|e| panic!("{name} without a fault: {e}"));
    let counts = clean.counts();
    let after_clean = snapshot(clean.inner().as_ref());
    let new_state = read_state(clean.inner().clone());
    assert!(counts.0 > 0, "{name} wrote nothing");
    let mut failures = 0;
    for fault in faults(counts) {
        let faulty = Arc::new(FaultyStore::with_fault(restore(&before), fault));
        let result = catch_unwind(AssertUnwindSafe(|| op(faulty.clone())))
            .unwrap_or_else(|_| panic!("{name} panicked under {fault:?}"));
        let after = snapshot(faulty.inner().as_ref());
        if result.is_err() {
            failures += 1;
        } else {
            assert_eq!(
                after, after_clean,
                "{name} succeeded under {fault:?} but stored other values"
            );
        }
        // every key holds its old or its new value
        let keys: std::collections::BTreeSet<&String> = before
            .keys()
            .chain(after_clean.keys())
            .chain(after.keys())
            .collect();
        for key in keys {
            let got = after.get(key);
            assert!(
                got == before.get(key)
                    || got == after_clean.get(key)
                    || (overwrite_may_remove && got.is_none()),
                "{name} under {fault:?}: key {key} holds neither its old nor its new value"
            );
        }
        let state = read_state(faulty.inner().clone());
        match &state {
            None => assert!(
                overwrite_may_remove,
                "{name} under {fault:?}: no node left at {PATH}"
            ),
            Some(got) => {
                let old = old_state.as_ref().expect("an old node");
                let new = new_state.as_ref().expect("a new node");
                if old.meta == new.meta {
                    // the metadata does not change (plain writes): chunks of one write are
                    // not atomic together, so the data may mix old and new chunks; the key
                    // check above holds them to one version each
                    assert!(
                        got.meta == old.meta,
                        "{name} under {fault:?}: metadata changed"
                    );
                } else if got.meta == old.meta {
                    if partial == Partial::CutFirst && got != old {
                        assert!(
                            got.partly(old, &new.domain),
                            "{name} under {fault:?}: old metadata, and data other than the \
                             old array's with cut-off positions reset"
                        );
                    } else {
                        assert_eq!(
                            (&got.shape, &got.data),
                            (&old.shape, &old.data),
                            "{name} under {fault:?}: old metadata but other data"
                        );
                    }
                } else if got.meta == new.meta {
                    if partial == Partial::Reserved && got != new {
                        assert!(
                            got.partly(new, &old.domain),
                            "{name} under {fault:?}: new metadata, and data other than the \
                             new array's with reserved positions at fill"
                        );
                    } else {
                        assert_eq!(
                            (&got.shape, &got.data),
                            (&new.shape, &new.data),
                            "{name} under {fault:?}: new metadata but other data"
                        );
                    }
                } else {
                    panic!(
                        "{name} under {fault:?}: metadata is neither the old nor the new document"
                    );
                }
            }
        }
    }
    assert!(failures > 0, "{name}: no fault made it fail");
}

macro_rules! fault_tests {
    ($($test:ident: $op:ident, $kind:ident, may_remove $remove:literal $(, $partial:ident)?;)*) => {$(
        #[test]
        fn $test() {
            #[allow(unused_mut, unused_assignments)]
            let mut partial = Partial::Nothing;
            $(partial = Partial::$partial;)?
            check_op(stringify!($op), $op, Kind::$kind, $remove, partial);
        }
    )*};
}

fault_tests! {
    write_partial_chunks: op_write_partial, Dense, may_remove false;
    write_partial_shards: op_write_partial, Sharded, may_remove false;
    write_fill_deletes_chunks: op_write_fill, Dense, may_remove false;
    append_axis_0: op_append_0, Dense, may_remove false, Reserved;
    append_axis_1: op_append_1, Dense, may_remove false, Reserved;
    append_sharded: op_append_0, Sharded, may_remove false, Reserved;
    prepend_axis_0: op_prepend_0, Dense, may_remove false, Reserved;
    prepend_chunk_aligned: op_prepend_aligned, Dense, may_remove false, Reserved;
    prepend_sharded: op_prepend_0, Sharded, may_remove false, Reserved;
    resize_shrink: op_shrink, Dense, may_remove false, CutFirst;
    resize_shrink_sharded: op_shrink, Sharded, may_remove false, CutFirst;
    resize_grow: op_grow, Dense, may_remove false;
    resize_shrink_one_axis_grow_another: op_reshape, Dense, may_remove false, CutFirst;
    update_attributes: op_attributes, Dense, may_remove false;
    write_sparse_entries: op_write_sparse, Sparse, may_remove false;
    write_sparse_entries_sharded: op_write_sparse, SparseSharded, may_remove false;
    write_dense_into_sparse_chunks: op_write_partial, Sparse, may_remove false;
    append_sparse: op_append_1, Sparse, may_remove false, Reserved;
    prepend_sparse_sharded: op_prepend_0, SparseSharded, may_remove false, Reserved;
    resize_shrink_sparse: op_shrink, Sparse, may_remove false, CutFirst;
    // overwriting deletes the old node first: an interruption may leave no node at all
    create_overwrite: op_create_overwrite, Dense, may_remove true;
}

#[test]
fn create_fresh_leaves_no_node_or_a_whole_one() {
    let (before, _) = initial(Kind::Dense);
    let clean = Arc::new(FaultyStore::new(restore(&before)));
    op_create(clean.clone()).expect("creates");
    let counts = clean.counts();
    for fault in faults(counts) {
        let faulty = Arc::new(FaultyStore::with_fault(restore(&before), fault));
        let result = op_create(faulty.clone());
        let meta = faulty.inner().get("g/new/zarr.json").expect("reads");
        match (result, meta) {
            (Ok(()), Some(_)) => {
                Array::open(faulty.inner().clone(), "g/new").expect("opens");
            }
            (Err(_), None) => {}
            (Err(_), Some(_)) => {
                Array::open(faulty.inner().clone(), "g/new").expect("whole metadata");
            }
            (Ok(()), None) => panic!("create succeeded under {fault:?} but wrote no metadata"),
        }
        // the old array is untouched
        assert_eq!(
            snapshot(faulty.inner().as_ref())
                .into_iter()
                .filter(|(k, _)| !k.starts_with("g/new/"))
                .collect::<Snapshot>(),
            before
        );
    }
}

/// A shrink that is interrupted after its metadata is written leaves chunks that still hold
/// the removed positions; growing the array again must show the fill value there, never the
/// old data (as `resize` documents for an uninterrupted shrink).
#[test]
fn interrupted_shrink_then_grow_shows_fill_not_stale_data() {
    let (before, _) = initial(Kind::Dense);
    let clean = Arc::new(FaultyStore::new(restore(&before)));
    op_shrink(clean.clone()).expect("shrinks");
    let (writes, _, _) = clean.counts();
    let mut stale = Vec::new();
    for k in 0..writes {
        let fault = Fault::from(FaultOp::Write, k);
        let faulty = Arc::new(FaultyStore::with_fault(restore(&before), fault));
        let _ = op_shrink(faulty.clone());
        let store: Arc<dyn Store> = faulty.inner().clone();
        let mut a = Array::open(store, PATH).expect("opens");
        if a.shape() != [6, 5] {
            continue; // the shrink did not take effect: the data beyond it is not stale
        }
        a.resize(&[10, 7]).expect("grows back");
        let data = a
            .read_all::<u16>()
            .expect("reads")
            .into_dimensionality::<zarr_array::ndarray::Ix2>()
            .expect("2-d");
        let leaked = data
            .indexed_iter()
            .filter(|((i, j), v)| (*i >= 6 || *j >= 5) && **v != 0)
            .count();
        if leaked > 0 {
            stale.push((fault, leaked));
        }
    }
    assert!(
        stale.is_empty(),
        "stale values visible after shrink+grow: {stale:?}"
    );
}
