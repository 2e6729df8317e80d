//! The Python venv with the peer implementations (zarr-python, TensorStore, and what the
//! interop tests import), which `scripts/peers-venv` creates and `scripts/test` exports as
//! `ZARR_PEERS_PYTHON_BIN`.
//!
//! The interop tests are `#[ignore = "needs the peers' Python venv (scripts/test provides it
//! and runs this)"]`: a plain `cargo test` lists them as ignored. Run with `--ignored`,
//! [`python`] fails them when the venv is missing: they never pass without the peers.

use std::path::PathBuf;

/// The environment variable naming the venv's python.
pub const PYTHON_VAR: &str = "ZARR_PEERS_PYTHON_BIN";

/// The python of the peers' venv.
///
/// # Panics
///
/// When `ZARR_PEERS_PYTHON_BIN` is unset or names no file.
#[must_use]
pub fn python() -> PathBuf {
    let py = std::env::var_os(PYTHON_VAR).unwrap_or_else(|| {
        panic!(
            "{PYTHON_VAR} is unset: this test needs the peers' Python venv; run it through \
             scripts/test, or set {PYTHON_VAR}=\"$(scripts/peers-venv | tail -n 1)\""
        )
    });
    let py = PathBuf::from(py);
    assert!(
        py.is_file(),
        "{PYTHON_VAR}={}: no such file (scripts/peers-venv creates the venv)",
        py.display()
    );
    py
}
