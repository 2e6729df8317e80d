//! The project side of the peers' benchmark harness `compare.py` (benches/README.md):
//!
//! ```text
//! peer-bench OP WORKLOAD PATH N [FORMAT]
//!   OP: write | read | slab | update | points    WORKLOAD: raw | zstd | blosc | shard
//! ```
//!
//! `FORMAT` is the Zarr format `write` creates: `3` (the default, what `compare.py` asks for)
//! or `2`, the workload's Zarr v2 form as zarr-python writes `zarr_format=2` (`.zarray` with
//! the same chunks and codecs as numcodecs configurations, keys `0.0.0`; `shard` has none).
//! `read` and `slab` open whichever format is there.
//!
//! - `write`: create the array (its `zarr.json`) at `PATH` (a filesystem store) and write the
//!   whole `N^3` uint16 array from memory;
//! - `read`: open the array and read the whole array into memory;
//! - `slab`: open the array and read the plane `[N/2, :, :]`;
//! - `update`: open the array and write back the block `[N/2..N/2+32]^3` with its own values
//!   (one 32^3 inner chunk of a shard, an eighth of a 64^3 chunk otherwise);
//! - `points`: open the array and read the 4096 points
//!   `((p*7919) % N, (p*104729) % N, (p*1299709) % N)`, `p = 0..4096`, in one call
//!   ([`Selection::Points`]).
//!
//! The data (compare.py's formula) is generated before the clock starts and the checksum is
//! summed after it stops: only the op is timed. Every op runs once before the clock
//! (`warm_then_time`; `write` beside PATH, then removed), as a Python peer's timed runs follow
//! its earlier ones in compare.py's one process. The last stdout line is
//! `{"seconds": S, "checksum": C}` (C = the sum of every value read or written). The peak
//! resident set size (`getrusage`) goes to stderr, with its ratio to the array's size (the
//! memory target of a whole-array read is at most 1.15 x the array's size).
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::sync::Arc;

use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::FilesystemStore;
use zarr_array::{Array, Selection};
use zarr_benches::{
    block_data, checksum, make_data, peak_rss_bytes, value, warm_then_time, warm_then_time_write,
    Workload,
};

type Error = Box<dyn std::error::Error>;

/// The number of points the `points` op reads.
const POINTS: u64 = 4096;

fn usage() -> String {
    "usage: peer-bench OP WORKLOAD PATH N [FORMAT]   \
     (OP: write|read|slab|update|points, WORKLOAD: raw|zstd|blosc|shard, FORMAT: 3 (default) or 2)"
        .to_string()
}

fn run(args: &[String]) -> Result<(f64, u64), Error> {
    let (op, workload, path, n, format) = match args {
        [op, workload, path, n] => (op, workload, path, n, 3),
        [op, workload, path, n, f] if f == "2" || f == "3" => {
            (op, workload, path, n, if f == "2" { 2 } else { 3 })
        }
        _ => return Err(usage().into()),
    };
    let workload: Workload = workload.parse()?;
    let n: u64 = n.parse().map_err(|e| format!("N: {e}"))?;
    // start the thread pool outside the clock, as process start is
    rayon::broadcast(|_| ());
    match op.as_str() {
        "write" => {
            let data = make_data(n);
            let bytes: &[u8] = bytemuck::cast_slice(&data);
            let write = |at: &str| -> Result<(), Error> {
                let store = Arc::new(FilesystemStore::create(at)?);
                let array = workload.builder(n).zarr_format(format).create(store, "")?;
                array.write_region_bytes(&Region::whole(&[n; 3]), bytes)?;
                Ok(())
            };
            let seconds = warm_then_time_write(path, write)?;
            Ok((seconds, checksum(&data)))
        }
        "read" | "slab" => {
            let region = if op == "read" {
                Region::whole(&[n; 3])
            } else {
                Region::new(vec![n / 2, 0, 0], vec![1, n, n])?
            };
            let len = region.num_elements().ok_or("region too large")? as usize;
            let op = |_| -> Result<Vec<u16>, Error> {
                let store = Arc::new(FilesystemStore::open(path)?);
                let array = Array::open(store, "")?;
                let mut out = vec![0u16; len];
                array.read_region_bytes_into(&region, bytemuck::cast_slice_mut(&mut out))?;
                Ok(out)
            };
            let (seconds, out) = warm_then_time(op)?;
            Ok((seconds, checksum(&out)))
        }
        "update" => {
            let h = n / 2;
            let side = 32u64.min(n - h);
            let data = block_data([h; 3], [side; 3]);
            let region = Region::new(vec![h; 3], vec![side; 3])?;
            let op = |_| -> Result<(), Error> {
                let store = Arc::new(FilesystemStore::open(path)?);
                let array = Array::open(store, "")?;
                array.write_region_bytes(&region, bytemuck::cast_slice(&data))?;
                Ok(())
            };
            let (seconds, ()) = warm_then_time(op)?;
            Ok((seconds, checksum(&data)))
        }
        "points" => {
            let points: Vec<Vec<i64>> = (0..POINTS)
                .map(|p| {
                    [7919, 104_729, 1_299_709]
                        .map(|m| ((p * m) % n) as i64)
                        .to_vec()
                })
                .collect();
            let selection = Selection::Points(points.clone());
            let op = |_| -> Result<Vec<u8>, Error> {
                let store = Arc::new(FilesystemStore::open(path)?);
                let array = Array::open(store, "")?;
                Ok(array.read_selection_bytes(&selection)?)
            };
            let (seconds, out) = warm_then_time(op)?;
            let values: &[u16] = bytemuck::try_cast_slice(&out).map_err(|e| format!("{e:?}"))?;
            // the values must be the formula's (compare.py checks only their sum)
            if let Some((p, _)) = points
                .iter()
                .zip(values)
                .find(|(p, &v)| v != value(p[0] as u64, p[1] as u64, p[2] as u64))
            {
                return Err(format!("point {p:?} read wrongly").into());
            }
            Ok((seconds, checksum(values)))
        }
        other => Err(format!("unknown op {other:?}; {}", usage()).into()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok((seconds, sum)) => {
            let n: u64 = args[3].parse().unwrap_or(0);
            let array_bytes = n * n * n * 2;
            if let Some(rss) = peak_rss_bytes() {
                eprintln!(
                    "peak_rss_mib {:.1} array_mib {:.1} ratio {:.3} ({} {})",
                    rss as f64 / f64::from(1 << 20),
                    array_bytes as f64 / f64::from(1 << 20),
                    rss as f64 / array_bytes.max(1) as f64,
                    args[0],
                    args[1],
                );
            }
            println!("{{\"seconds\": {seconds}, \"checksum\": {sum}}}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("peer-bench: {}", zarr_array::report(&*e));
            ExitCode::FAILURE
        }
    }
}
