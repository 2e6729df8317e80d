//! Creating an array where an earlier one left chunks but no `zarr.json`: refused, or the
//! location cleared with `overwrite(true)`, so the new array reads as its fill value and never
//! shows the old chunks (reinterpreted under its own data type).

use std::sync::Arc;

use zarr_array::zarr_store::{FilesystemStore, MemoryStore, Store};
use zarr_array::{Array, ArrayBuilder, ArrayError, DataType, Region};

fn leftovers(store: &Arc<dyn Store>, path: &str) {
    let old = ArrayBuilder::new(vec![4, 4], DataType::UInt8)
        .chunk_shape(vec![2, 2])
        .create(store.clone(), path)
        .unwrap();
    old.write_region_bytes(&Region::whole(&[4, 4]), &[9u8; 16])
        .unwrap();
    store.delete(&format!("{}zarr.json", prefix(path))).unwrap();
    assert!(!store.list_prefix(&prefix(path)).unwrap().is_empty());
}

fn prefix(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{path}/")
    }
}

#[test]
fn create_over_leftover_chunks_is_refused_or_clears_them() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<Arc<dyn Store>> = vec![
        Arc::new(MemoryStore::new()),
        Arc::new(FilesystemStore::open(dir.path()).unwrap()),
    ];
    for store in stores {
        for path in ["", "a/b"] {
            leftovers(&store, path);
            let new = ArrayBuilder::new(vec![4, 4], DataType::Int16).chunk_shape(vec![2, 2]);
            let err = new.create(store.clone(), path).unwrap_err();
            assert!(matches!(err, ArrayError::NotEmpty { .. }), "{err}");
            assert!(err.to_string().contains("overwrite"), "{err}");
            // nothing was written or removed
            assert!(Array::open(store.clone(), path).is_err());
            assert!(!store.list_prefix(&prefix(path)).unwrap().is_empty());
            let a = new.overwrite(true).create(store.clone(), path).unwrap();
            assert_eq!(a.read_all::<i16>().unwrap().iter().sum::<i16>(), 0);
            assert!(a.stored_chunks().unwrap().is_empty());
            store.delete_prefix(&prefix(path)).unwrap();
        }
    }
}
