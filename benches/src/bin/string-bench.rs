//! The project's side of `benches/string-table.py`: reads and writes a one-dimensional
//! `string` array through [`Array::read_region_vlen`] / [`Array::write_region_vlen`].
//!
//! ```text
//! string-bench read PATH        # open the array at PATH, read it whole
//! string-bench write SRC DST    # read SRC (untimed), write it whole into a new array at DST
//!                               # (same shape and chunks, the builder's default codecs for
//!                               # strings: vlen-utf8 + zstd)
//! ```
//!
//! Prints one JSON line: `seconds` (the timed step: opening and reading, or creating and
//! writing) and `checksum`, the array's [`checksum`] (of what was read, or of what was
//! written), which the script compares with the one it computes with NumPy.
#![forbid(unsafe_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use zarr_array::ndarray::ArrayD;
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::{FilesystemStore, Store};
use zarr_array::{Array, ArrayBuilder, DataType};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The checksum the script computes too: the UTF-8 byte count, the sum of every byte, and
/// the sum of `position * byte length` (so that order counts), each modulo 2^64, folded.
fn checksum(items: &ArrayD<String>) -> u64 {
    let (mut len, mut bytes, mut weighted) = (0u64, 0u64, 0u64);
    for (i, s) in items.iter().enumerate() {
        let n = s.len() as u64;
        len = len.wrapping_add(n);
        weighted = weighted.wrapping_add((i as u64).wrapping_mul(n));
        bytes = s
            .bytes()
            .fold(bytes, |acc, b| acc.wrapping_add(u64::from(b)));
    }
    len.wrapping_mul(1_000_003)
        .wrapping_add(bytes.wrapping_mul(10_007))
        .wrapping_add(weighted)
}

fn open(path: &str) -> Result<Array, Error> {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(Path::new(path))?);
    Ok(Array::open(store, "")?)
}

fn run(args: &[String]) -> Result<(f64, u64), Error> {
    match args {
        [op, path] if op == "read" => {
            let t = Instant::now();
            let a = open(path)?;
            let items: ArrayD<String> = a.read_region_vlen(&Region::whole(a.shape()))?;
            let seconds = t.elapsed().as_secs_f64();
            Ok((seconds, checksum(&items)))
        }
        [op, src, dst] if op == "write" => {
            let a = open(src)?;
            let items: ArrayD<String> = a.read_region_vlen(&Region::whole(a.shape()))?;
            let chunks = a
                .chunk_shape()
                .ok_or("the source array has no regular chunks")?;
            let t = Instant::now();
            let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(Path::new(dst))?);
            let b = ArrayBuilder::new(a.shape().to_vec(), DataType::String)
                .chunk_shape(chunks)
                .create(store, "")?;
            b.write_region_vlen(&Region::whole(a.shape()), items.view())?;
            let seconds = t.elapsed().as_secs_f64();
            Ok((seconds, checksum(&items)))
        }
        _ => Err("usage: string-bench read PATH | string-bench write SRC DST".into()),
    }
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok((seconds, checksum)) => {
            println!("{{\"seconds\": {seconds}, \"checksum\": {checksum}}}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("string-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
