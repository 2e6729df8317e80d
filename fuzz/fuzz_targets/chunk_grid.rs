#![no_main]
//! A `zarr.json` document's `shape` and `chunk_grid`, built by every grid and probed.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr_grid::fuzzing::chunk_grid::run(data));
