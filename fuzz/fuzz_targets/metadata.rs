#![no_main]
//! `zarr.json` bytes: parsed as array and group metadata (`zarr_meta::fuzzing::metadata`),
//! then opened as an array in a memory store and touched (`zarr_array::fuzzing::array_open`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    zarr_meta::fuzzing::metadata::run(data);
    zarr_array::fuzzing::array_open::run(data);
});
