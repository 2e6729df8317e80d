//! Arrays on the local S3 server written and read through the fault-injecting proxy
//! (`zarr_testkit::proxy`) at a 10 % fault rate, each kind of fault alone and all mixed,
//! seeded: an unsharded zstd array, a sharded one and a sparse (`sparse_layout`) one. Every
//! chunk (or shard) is first written directly, then rewritten through the proxy; afterwards,
//! read directly from the server, every one holds its old or its new data (never torn, never
//! missing), the new data wherever the write reported success; and every read through the
//! proxy returned the server's data or an error, never wrong data. With retries on
//! (`RemoteOptions`) every write and read succeeds; with retries off the faults come through
//! as errors, and still no read is wrong.
//!
//! Ignored by a plain `cargo test` (they need the server); `scripts/test` runs them. By hand:
//!
//! ```text
//! eval "$(scripts/s3-server)"
//! cargo test -p zarr-array --features object-store --test s3_faults -- --ignored
//! ```
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(feature = "zstd", feature = "sharding", feature = "sparse"))]
#![cfg(feature = "object-store")]

use std::sync::Arc;
use std::time::Duration;

use zarr_array::zarr_codecs::zstd::ZstdConfig;
use zarr_array::zarr_layout_sparse::Format;
use zarr_array::{Array, ArrayBuilder, DataType, Region};
use zarr_store::testing::{fault_test_options, s3_store_at};
use zarr_store::{RemoteOptions, Store};
use zarr_testkit::proxy::{Fault, FaultCounts, FaultProxy, ProxyConfig};
use zarr_testkit::{s3, Rng};

const BUCKET: &str = "zarr-array-faults-test";
const SIDE: u64 = 24;

/// The bucket under `prefix`, reached at `endpoint` (the proxy's or the server's).
fn store_at(endpoint: &str, prefix: &str, options: &RemoteOptions) -> Arc<dyn Store> {
    Arc::new(s3_store_at(endpoint, BUCKET, prefix, options))
}

/// How the array is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// 8 x 8 chunks, zstd.
    Zstd,
    /// 12 x 12 shards of 4 x 4 inner chunks.
    Sharded,
    /// 8 x 8 chunks in the `sparse_layout` codec (CSR), a tenth of the values set.
    Sparse,
}

impl Layout {
    const ALL: [Layout; 3] = [Layout::Zstd, Layout::Sharded, Layout::Sparse];

    fn builder(self) -> ArrayBuilder {
        let b = ArrayBuilder::new(vec![SIDE, SIDE], DataType::UInt16);
        match self {
            Layout::Zstd => b.chunk_shape(vec![8, 8]).compressors([ZstdConfig {
                level: 3,
                checksum: false,
            }]),
            Layout::Sharded => b.chunk_shape(vec![4, 4]).shards(vec![12, 12]),
            Layout::Sparse => b.chunk_shape(vec![8, 8]).sparse(Format::Csr),
        }
    }

    /// The side of one stored object (a chunk, or a shard).
    fn unit(self) -> u64 {
        match self {
            Layout::Zstd | Layout::Sparse => 8,
            Layout::Sharded => 12,
        }
    }

    /// The regions of the stored objects, each written in one PUT.
    fn units(self) -> Vec<Region> {
        let n = self.unit();
        (0..SIDE / n)
            .flat_map(|i| (0..SIDE / n).map(move |j| (i, j)))
            .map(|(i, j)| Region::new(vec![i * n, j * n], vec![n, n]).expect("a region"))
            .collect()
    }

    /// Values for `region`, drawn from `seed` (sparse: nine in ten are the fill value 0).
    fn data(self, region: &Region, seed: u64) -> Vec<u8> {
        let mut rng = Rng::new(seed);
        let count = region.shape.iter().product::<u64>();
        (0..count)
            .flat_map(|_| {
                let v = if self == Layout::Sparse && !rng.chance(0.1) {
                    0
                } else {
                    1 + (rng.next_u32() % 60_000) as u16
                };
                v.to_le_bytes()
            })
            .collect()
    }
}

/// What one scenario saw.
#[derive(Debug, Default)]
struct Seen {
    writes_failed: usize,
    reads_failed: usize,
    reads_ok: usize,
}

/// One array of `layout`: written directly, rewritten and read through a proxy injecting
/// `faults` at 10 %, then checked directly.
fn scenario(layout: Layout, faults: &[Fault], seed: u64, retries: usize) -> (Seen, FaultCounts) {
    let what = format!("{layout:?}, {faults:?}, retries {retries}");
    let upstream = s3::endpoint(BUCKET);
    let prefix = s3::unique_prefix(&format!("{layout:?}-{seed}-{retries}"));
    let direct = store_at(&upstream, &prefix, &RemoteOptions::default());
    let units = layout.units();
    let old: Vec<Vec<u8>> = (0..units.len())
        .map(|u| layout.data(&units[u], seed * 1000 + u as u64))
        .collect();
    let new: Vec<Vec<u8>> = (0..units.len())
        .map(|u| layout.data(&units[u], seed * 1000 + 500 + u as u64))
        .collect();
    let array = layout
        .builder()
        .create(direct.clone(), "a")
        .expect("creates");
    for (region, data) in units.iter().zip(&old) {
        array
            .write_region_bytes(region, data)
            .expect("writes directly");
    }

    let proxy = FaultProxy::start(
        ProxyConfig::new(&upstream, seed)
            .unseeded(&prefix)
            .rate(0.1)
            .faults(faults)
            .delay(Duration::from_millis(1000)),
    )
    .expect("starts the proxy");
    let faulty = store_at(&proxy.url(), &prefix, &fault_test_options(retries));
    let mut seen = Seen::default();
    // opening reads zarr.json: without retries it may fail; it never opens something else
    let opened = (0..20).find_map(|_| Array::open(faulty.clone(), "a").ok());
    let through = opened.unwrap_or_else(|| panic!("{what}: never opened in 20 tries"));
    assert_eq!(through.shape(), array.shape(), "{what}");

    let mut wrote = vec![false; units.len()];
    for (u, region) in units.iter().enumerate() {
        match through.write_region_bytes(region, &new[u]) {
            Ok(()) => wrote[u] = true,
            Err(_) => seen.writes_failed += 1,
        }
    }

    // the truth, read without the proxy: every object old or new, new where written
    let reopened = Array::open(direct.clone(), "a").expect("opens directly");
    let mut truth = vec![0u8; (SIDE * SIDE * 2) as usize];
    for (u, region) in units.iter().enumerate() {
        let got = reopened
            .read_region_bytes(region)
            .unwrap_or_else(|e| panic!("{what}: unit {u} unreadable: {e}"));
        if wrote[u] {
            assert!(got == new[u], "{what}: unit {u} written (Ok) but not new");
        } else {
            assert!(
                got == old[u] || got == new[u],
                "{what}: unit {u} neither old nor new"
            );
        }
        copy_into(&mut truth, region, &got);
    }

    // reads through the proxy: the truth or an error
    let mut check = |region: &Region, got: zarr_array::Result<Vec<u8>>| match got {
        Ok(bytes) => {
            assert!(
                bytes == cut(&truth, region),
                "{what}: wrong data read for {region:?}"
            );
            seen.reads_ok += 1;
        }
        Err(_) => seen.reads_failed += 1,
    };
    for region in &units {
        check(region, through.read_region_bytes(region));
    }
    let straddling = Region::new(vec![5, 3], vec![15, 17]).expect("a region");
    check(&straddling, through.read_region_bytes(&straddling));
    let whole = Region::new(vec![0, 0], vec![SIDE, SIDE]).expect("a region");
    check(&whole, through.read_region_bytes(&whole));
    (seen, proxy.counts())
}

/// `data` (row-major, u16) of `region` into `whole` (SIDE x SIDE).
fn copy_into(whole: &mut [u8], region: &Region, data: &[u8]) {
    let (start, shape) = (&region.start, &region.shape);
    let row = (shape[1] * 2) as usize;
    for r in 0..shape[0] {
        let at = (((start[0] + r) * SIDE + start[1]) * 2) as usize;
        whole[at..at + row].copy_from_slice(&data[r as usize * row..(r as usize + 1) * row]);
    }
}

/// The bytes of `region` cut out of `whole`.
fn cut(whole: &[u8], region: &Region) -> Vec<u8> {
    let (start, shape) = (&region.start, &region.shape);
    let row = (shape[1] * 2) as usize;
    (0..shape[0])
        .flat_map(|r| {
            let at = (((start[0] + r) * SIDE + start[1]) * 2) as usize;
            whole[at..at + row].iter().copied()
        })
        .collect()
}

/// The value a scoped thread returned; its panic, with its message, if it panicked.
fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Every layout, with retries on (everything succeeds) and off (faults surface as errors).
/// The six scenarios run at once, each with its own proxy and prefix: they spend their time
/// waiting (delayed answers, request timeouts, backoffs), not computing.
fn run(faults: &[Fault], seed: u64) {
    let start = std::time::Instant::now();
    let mut injected = FaultCounts::default();
    let mut failures = 0;
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let threads: Vec<_> = Layout::ALL
            .into_iter()
            .map(|layout| {
                let retried = s.spawn(move || scenario(layout, faults, seed, 10));
                let not = s.spawn(move || scenario(layout, faults, seed + 1, 0));
                (layout, retried, not)
            })
            .collect();
        threads
            .into_iter()
            .map(|(layout, retried, not)| (layout, joined(retried), joined(not)))
            .collect()
    });
    for (layout, (seen, counts), (unretried, more)) in outcomes {
        assert_eq!(
            (seen.writes_failed, seen.reads_failed),
            (0, 0),
            "{layout:?}, {faults:?}, retried: {seen:?} ({counts})"
        );
        eprintln!(
            "{layout:?}, {faults:?}, retries off: {unretried:?}; retried: {counts}; not: {more}"
        );
        assert!(
            unretried.reads_ok > 0,
            "{layout:?}, {faults:?}: {unretried:?} ({more})"
        );
        failures += unretried.writes_failed + unretried.reads_failed;
        for (sum, (a, b)) in injected
            .faults
            .iter_mut()
            .zip(counts.faults.iter().zip(&more.faults))
        {
            *sum += a + b;
        }
    }
    if let [kind] = faults {
        assert!(injected.of(*kind) > 0, "{kind} never injected: {injected}");
    } else {
        let kinds = faults.iter().filter(|&&k| injected.of(k) > 0).count();
        assert!(kinds >= 5, "few kinds injected: {injected}");
    }
    // without retries at least one fault came through as an error
    assert!(
        failures > 0,
        "{faults:?}: no failure without retries ({injected})"
    );
    eprintln!("{faults:?}: {:?}", start.elapsed());
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_arrays_survive_dropped_connections() {
    run(&[Fault::DropBeforeRequest], 10);
    run(&[Fault::DropMidResponse], 15);
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_arrays_survive_server_errors() {
    run(&[Fault::Status500], 20);
    run(&[Fault::Status503], 30);
    run(&[Fault::SlowDown], 40);
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_arrays_survive_truncated_bodies() {
    run(&[Fault::Truncate], 50);
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_arrays_survive_delays_beyond_the_timeout() {
    run(&[Fault::Delay], 60);
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_arrays_survive_every_fault_mixed() {
    run(&Fault::ALL, 70);
}
