#![no_main]
//! `zarr.json` bytes: parsed as array and group metadata, then opened as an array in a memory
//! store and touched (see `targets_common/`).
use libfuzzer_sys::fuzz_target;

include!("../targets_common/metadata.rs");
include!("../targets_common/array_open.rs");

fuzz_target!(|data: &[u8]| {
    fuzz_metadata_parse(data);
    fuzz_array_open(data);
});
