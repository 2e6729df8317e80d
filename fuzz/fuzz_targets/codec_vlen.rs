#![no_main]
//! vlen-utf8 / vlen-bytes chunks decoded (first byte: the element count expected).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr_codecs::fuzzing::vlen::run(data));
