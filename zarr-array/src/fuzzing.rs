//! The bodies of the fuzz targets that exercise this crate (cargo feature `fuzzing`; **not a
//! stable API**: it changes with the targets).
//!
//! `fuzz/fuzz_targets/<target>.rs` calls them (the `fuzz` crate enables the feature), and the
//! crate's tests replay the target's corpus and regressions through the same functions under
//! plain `cargo test` (`tests/limits.rs`). A panic is a finding.

/// The array half of the `metadata` target (zarr-meta's `fuzzing::metadata` is the parsing
/// half): a `zarr.json` opened as an array and a group, and touched.
pub mod array_open {
    use std::sync::Arc;

    use zarr_grid::geometry::Region;
    use zarr_store::{MemoryStore, Store};

    /// Opens an array (and a group) from `data` as the `zarr.json` of a node in a memory store,
    /// then touches it cheaply: one element read, chunk listing, a metadata write and re-open,
    /// and, for arrays whose chunks are small, a one-element write and read back.
    pub fn run(data: &[u8]) {
        let store = Arc::new(MemoryStore::new());
        store
            .set("node/zarr.json", data)
            .expect("a memory store takes any value");
        let _ = crate::Group::open(store.clone(), "node");
        let Ok(array) = crate::Array::open(store.clone(), "node") else {
            return;
        };
        let elem = array.data_type().size();
        let _ = array.stored_chunks();
        let _ = array.domain();
        // chunk keys of the first and last chunk encode and decode
        // the first chunk's shape (chunks differ on a rectilinear grid)
        let chunk_bytes = array
            .chunk_shape()
            .or_else(|| array.chunk_shape_of(&vec![0; array.rank()]))
            .unwrap_or_default()
            .iter()
            .try_fold(elem as u64, |acc, &n| acc.checked_mul(n));
        let one: Vec<u64> = array.shape().iter().map(|&n| n.min(1)).collect();
        let first = Region::new(vec![0; array.rank()], one.clone()).expect("a valid region");
        let n_one: u64 = one.iter().product();
        if n_one > 0 && chunk_bytes.is_some_and(|n| n <= 1 << 20) {
            let mut out = vec![0u8; elem];
            array
                .read_region_bytes_into(&first, &mut out)
                .expect("reading a missing chunk gives the fill value");
            assert_eq!(
                out,
                array.fill_value().as_bytes(),
                "a missing chunk reads as fill"
            );
            // write one element that is not the fill value, read it back
            let mut value = array.fill_value().as_bytes().to_vec();
            value[0] ^= 1;
            if array.write_region_bytes(&first, &value).is_ok() {
                array
                    .read_region_bytes_into(&first, &mut out)
                    .expect("a chunk just written reads back");
                // a value equal to the fill value (every NaN equals every NaN) is not stored
                let fill = array.fill_value().as_bytes();
                let expected = if array.data_type().all_equal(&value, fill) {
                    fill
                } else {
                    &value[..]
                };
                assert_eq!(out, expected, "a written element reads back");
            }
        }
        // metadata written back opens again as the same array
        let meta = array.metadata().clone();
        store
            .set("again/zarr.json", &meta.to_vec_pretty())
            .expect("a memory store takes any value");
        let again = crate::Array::open(store, "again")
            .expect("metadata written back by an array that opened must open");
        assert_eq!(again.shape(), array.shape());
        assert_eq!(again.chunk_shape(), array.chunk_shape());
    }
}
