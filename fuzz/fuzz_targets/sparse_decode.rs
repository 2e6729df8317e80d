#![no_main]
//! Sparse chunks (COO, CSR, CSC) validated and densified (first byte: which layout and shape).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr_layout_sparse::fuzzing::decode::run(data));
