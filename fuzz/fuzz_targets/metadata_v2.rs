#![no_main]
//! Zarr v2 document bytes, parsed as `.zarray`, `.zgroup`, `.zattrs` and `.zmetadata` and
//! written back (`zarr_meta::fuzzing::metadata_v2`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    zarr_meta::fuzzing::metadata_v2::run(data);
});
