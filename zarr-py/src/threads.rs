//! The threads the engine's parallel work runs on.
//!
//! In the process that loaded the module, rayon's global pool, the call itself running on
//! the calling thread (a small read costs no hand-over to another thread). A process forked
//! from it (`multiprocessing`'s fork, the default on Linux before Python 3.14; a Dask
//! worker) inherits none of the parent's threads, so work handed to that pool there would
//! wait forever, and rayon's global pool cannot be built again: a forked child runs every
//! call on a pool of its own, built at its first call (the parent's is left as it is, never
//! shut down).

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

/// The process that loaded the module ([`loaded`]).
static LOADED_IN: OnceLock<u32> = OnceLock::new();

/// A forked child's pool, with the process it was built in.
static POOL: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);

/// Records the process that loads the module (its `PyInit`).
pub(crate) fn loaded() {
    LOADED_IN.get_or_init(std::process::id);
}

/// A forked child's pool, started at its first use.
fn child_pool(pid: u32) -> PyResult<Arc<ThreadPool>> {
    let mut guard = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((owner, pool)) = guard.as_ref() {
        if *owner == pid {
            return Ok(pool.clone());
        }
    }
    let pool = ThreadPoolBuilder::new()
        .thread_name(|i| format!("zarr-rs-{i}"))
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("starting the engine's threads: {e}")))?;
    let pool = Arc::new(pool);
    if let Some(inherited) = guard.replace((pid, pool.clone())) {
        // a parent's pool: its threads do not exist here, so it is never shut down
        std::mem::forget(inherited);
    }
    Ok(pool)
}

/// Runs `f` with the GIL released, its parallel work on this process's threads (see the
/// module documentation).
///
/// # Errors
/// In a forked child, when its pool cannot be started (no thread can be made).
pub(crate) fn detach<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let pid = std::process::id();
    if LOADED_IN.get().is_none_or(|&loader| loader == pid) {
        return Ok(py.detach(f));
    }
    let pool = child_pool(pid)?;
    Ok(py.detach(|| pool.install(f)))
}
