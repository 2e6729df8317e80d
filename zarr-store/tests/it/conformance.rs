//! Every store in this crate passes the conformance suite.

use std::sync::Arc;

use zarr_store::testing::{run_store_conformance, CountingStore, FaultyStore, Unconditional};
use zarr_store::{FilesystemStore, MemoryStore, Store};

#[test]
fn memory_store() {
    run_store_conformance(&MemoryStore::new());
}

#[test]
fn filesystem_store() -> zarr_store::Result<()> {
    let dir = tempfile::tempdir().map_err(|e| zarr_store::StoreError::Root {
        path: std::env::temp_dir(),
        source: e,
    })?;
    let store = FilesystemStore::create(dir.path().join("store"))?;
    run_store_conformance(&store);
    Ok(())
}

#[test]
fn durable_filesystem_store() -> zarr_store::Result<()> {
    let dir = tempfile::tempdir().map_err(|e| zarr_store::StoreError::Root {
        path: std::env::temp_dir(),
        source: e,
    })?;
    let store = FilesystemStore::open(dir.path())?.durable(true);
    run_store_conformance(&store);
    Ok(())
}

#[test]
fn shared_pointers_forward() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    run_store_conformance(&store);
    let boxed: Box<dyn Store> = Box::new(MemoryStore::new());
    run_store_conformance(&boxed);
}

#[test]
fn wrappers_forward_conditional_writes() {
    let counting = CountingStore::new(MemoryStore::new());
    assert!(counting.conditional_writes());
    run_store_conformance(&counting);
    let faulty = FaultyStore::new(MemoryStore::new());
    assert!(faulty.conditional_writes());
    run_store_conformance(&faulty);
}

#[test]
fn a_store_without_conditional_writes_refuses_set_if() {
    let store = Unconditional::new(MemoryStore::new());
    assert!(!store.conditional_writes());
    run_store_conformance(&store);
}
