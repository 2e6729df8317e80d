//! Reads and writes on an object store whose every request waits a round trip: what decides
//! speed on object storage is how many requests are in flight and how few are made, so each
//! row reports them next to the time, and the time a read or write would take with every
//! request of a round in flight at once (the rounds times the latency, the local work left
//! out: `limit`).
//!
//! The store is `object_store`'s in-memory store behind zarr-store's `ObjectStoreBackend`,
//! each GET and PUT held back `--latency-ms` on the runtime's timer (the request counter of
//! `zarr_store::testing`), so it measures the engine (requests in flight, requests made,
//! decoding overlapped with waiting), not a network. `shared/bench/compare_remote.py` is the
//! side-by-side run against the peers over HTTP.
//!
//! ```text
//! latency-bench [--n N] [--latency-ms MS] [--repeat R]
//! ```
//!
//! N^3 uint16 arrays (default 256, a multiple of 128): `chunks` of 32^3 (zstd) and `shards`
//! of 128^3 holding 32^3 inner chunks; for each, the whole array written, read whole, and the
//! plane `[N/2]` read. Prints a Markdown table, then one JSON line per row (`workload`, `op`,
//! `seconds` (median of R), `requests`, `peak_in_flight`, `rounds`, `limit_seconds`,
//! `checksum`).
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::object_store::memory::InMemory;
use zarr_array::zarr_store::testing::CountingObjectStore;
use zarr_array::zarr_store::{ObjectStoreBackend, Store};
use zarr_array::{Array, ArrayBuilder, DataType};
use zarr_benches::{checksum, make_data, zstd1};

type Error = Box<dyn std::error::Error + Send + Sync>;

struct Row {
    workload: &'static str,
    op: &'static str,
    seconds: f64,
    requests: u64,
    peak_in_flight: u64,
    rounds: u64,
    checksum: u64,
}

fn arg(args: &[String], name: &str, default: u64) -> Result<u64, Error> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => {
            let value = args
                .get(i + 1)
                .ok_or_else(|| format!("{name} needs a value"))?;
            Ok(value
                .parse()
                .map_err(|_| format!("{name} {value:?}: not a whole number"))?)
        }
    }
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Runs `op` `repeat` times, the counts those of the last run.
fn measure(
    requests: &CountingObjectStore,
    repeat: u64,
    mut op: impl FnMut() -> Result<u64, Error>,
) -> Result<(f64, u64, u64, u64), Error> {
    let mut times = Vec::new();
    let mut sum = 0;
    for _ in 0..repeat.max(1) {
        requests.reset();
        let start = Instant::now();
        sum = op()?;
        times.push(start.elapsed().as_secs_f64());
    }
    let c = requests.counts();
    Ok((median(times), c.total(), c.peak_in_flight, sum))
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = arg(&args, "--n", 256)?;
    let latency = Duration::from_millis(arg(&args, "--latency-ms", 20)?);
    let repeat = arg(&args, "--repeat", 3)?;
    if n == 0 || n % 128 != 0 {
        return Err(format!("--n {n}: a multiple of 128 is needed (the shards are 128^3)").into());
    }
    let data = make_data(n);
    let plane = (n / 2 * n * n) as usize..((n / 2 + 1) * n * n) as usize;
    let (store, requests) =
        ObjectStoreBackend::new(Arc::new(InMemory::new()), "bench")?.with_request_counter();
    let store: Arc<dyn Store> = Arc::new(store);
    requests.set_latency(latency);
    let mut rows = Vec::new();
    for (workload, builder) in [
        (
            "chunks",
            ArrayBuilder::new(vec![n; 3], DataType::UInt16)
                .chunk_shape(vec![32; 3])
                .compressors(vec![zstd1()]),
        ),
        (
            "shards",
            ArrayBuilder::new(vec![n; 3], DataType::UInt16)
                .chunk_shape(vec![32; 3])
                .shards(vec![128; 3])
                .compressors(vec![zstd1()]),
        ),
    ] {
        let whole = Region::whole(&[n; 3]);
        let array = builder.create(store.clone(), workload)?;
        let (seconds, reqs, peak, _) = measure(&requests, repeat, || {
            array.write_region_bytes(&whole, bytemuck::cast_slice(&data))?;
            Ok(checksum(&data))
        })?;
        rows.push(Row {
            workload,
            op: "write",
            seconds,
            requests: reqs,
            peak_in_flight: peak,
            rounds: 1,
            checksum: checksum(&data),
        });
        let (seconds, reqs, peak, sum) = measure(&requests, repeat, || {
            let array = Array::open(store.clone(), workload)?;
            let bytes = array.read_region_bytes(&whole)?;
            Ok(checksum(bytemuck::cast_slice(&bytes)))
        })?;
        rows.push(Row {
            workload,
            op: "read",
            seconds,
            requests: reqs,
            peak_in_flight: peak,
            // the metadata, then every chunk (or shard) at once
            rounds: 2,
            checksum: sum,
        });
        let (seconds, reqs, peak, sum) = measure(&requests, repeat, || {
            let array = Array::open(store.clone(), workload)?;
            let region = Region::new(vec![n / 2, 0, 0], vec![1, n, n])?;
            let bytes = array.read_region_bytes(&region)?;
            Ok(checksum(bytemuck::cast_slice(&bytes)))
        })?;
        rows.push(Row {
            workload,
            op: "plane",
            seconds,
            requests: reqs,
            peak_in_flight: peak,
            // the metadata, every chunk at once; for shards their indexes, then the inner
            // chunks
            rounds: if workload == "shards" { 3 } else { 2 },
            checksum: sum,
        });
    }
    let want = [checksum(&data), checksum(&data[plane])];
    println!(
        "latency-bench: N={n}, {} ms a request, median of {repeat}\n",
        latency.as_millis()
    );
    println!("| workload | op | seconds | limit | requests | peak in flight |");
    println!("|---|---|---|---|---|---|");
    for r in &rows {
        let limit = r.rounds as f64 * latency.as_secs_f64();
        println!(
            "| {} | {} | {:.3} | {:.3} | {} | {} |",
            r.workload, r.op, r.seconds, limit, r.requests, r.peak_in_flight
        );
    }
    for r in &rows {
        let expected = if r.op == "plane" { want[1] } else { want[0] };
        if r.checksum != expected {
            return Err(format!("{} {}: wrong values read", r.workload, r.op).into());
        }
        println!(
            "{}",
            serde_json::json!({
                "workload": r.workload,
                "op": r.op,
                "seconds": r.seconds,
                "requests": r.requests,
                "peak_in_flight": r.peak_in_flight,
                "rounds": r.rounds,
                "limit_seconds": r.rounds as f64 * latency.as_secs_f64(),
                "checksum": r.checksum,
            })
        );
    }
    Ok(())
}
