//! The threads the engine's parallel work runs on: one rayon pool per process, which every
//! call into the engine installs.
//!
//! A process forked from one that used a pool (`multiprocessing`'s fork, the default on
//! Linux before Python 3.14; a Dask worker) inherits none of its threads, so parallel work
//! there would wait forever on threads that do not exist. rayon's global pool cannot be
//! built again, so the engine runs on a pool of its own instead, built again in the child
//! at its first call (the parent's is left as it is, never shut down).

use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

static POOL: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);

/// This process's pool, started at its first use.
pub(crate) fn pool() -> PyResult<Arc<ThreadPool>> {
    let pid = std::process::id();
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
        // the parent's pool: its threads do not exist here, so it is never shut down
        std::mem::forget(inherited);
    }
    Ok(pool)
}

/// Runs `f` with the GIL released, its parallel work on this process's pool ([`pool`]).
///
/// # Errors
/// When the pool cannot be started (no thread can be made).
pub(crate) fn detach<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let pool = pool()?;
    Ok(py.detach(|| pool.install(f)))
}
