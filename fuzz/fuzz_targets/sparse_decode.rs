#![no_main]
//! Sparse chunks (COO, CSR, CSC) validated and densified (first byte: which layout and shape).
use libfuzzer_sys::fuzz_target;

include!("../targets_common/sparse.rs");

fuzz_target!(|data: &[u8]| fuzz_sparse(data));
