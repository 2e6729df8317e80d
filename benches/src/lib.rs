#![doc = include_str!("../README.md")]
// No `unsafe`: the peak RSS comes from /proc, `sync` and the disjoint writes of the benches
// go through rustix and zarr-codecs' `BlockBuffer`.
#![forbid(unsafe_code)]

// The shared pieces of the benchmarks: the data formula and the four workloads of
// the peers' harness `compare.py` (benches/README.md), seeded chunk data for the codec benches, and the peak
// resident set size.

use std::fmt;
use std::str::FromStr;

use rayon::prelude::*;
use zarr_array::zarr_codecs::blosc::{BloscCname, BloscConfig, BloscShuffle};
use zarr_array::zarr_codecs::bytes::{BytesConfig, Endian};
use zarr_array::zarr_codecs::zstd::ZstdConfig;
use zarr_array::{ArrayBuilder, DataType, ExtensionDef};

/// `compare.py`'s value at `(i, j, k)`: computed in wrapping u64 arithmetic, stored as u16.
#[inline]
pub fn value(i: u64, j: u64, k: u64) -> u16 {
    let a = i
        .wrapping_add(j.wrapping_mul(2))
        .wrapping_add(k.wrapping_mul(3))
        & 4095;
    let b =
        (i.wrapping_mul(73_856_093) ^ j.wrapping_mul(19_349_663) ^ k.wrapping_mul(83_492_791)) & 15;
    (a + b) as u16
}

/// The whole `n x n x n` array of the formula, C order (generated in parallel).
pub fn make_data(n: u64) -> Vec<u16> {
    let plane = (n * n) as usize;
    let mut data = vec![0u16; plane * n as usize];
    data.par_chunks_mut(plane.max(1))
        .enumerate()
        .for_each(|(i, p)| {
            for (idx, v) in p.iter_mut().enumerate() {
                let j = idx as u64 / n;
                let k = idx as u64 % n;
                *v = value(i as u64, j, k);
            }
        });
    data
}

/// The formula over a block of `shape` starting at `start` (C order): deterministic
/// ("seeded") data with the compressibility of the peer workloads.
pub fn block_data(start: [u64; 3], shape: [u64; 3]) -> Vec<u16> {
    let mut out = Vec::with_capacity((shape[0] * shape[1] * shape[2]) as usize);
    for i in 0..shape[0] {
        for j in 0..shape[1] {
            for k in 0..shape[2] {
                out.push(value(start[0] + i, start[1] + j, start[2] + k));
            }
        }
    }
    out
}

/// Sum of all values, as `compare.py`'s checksum.
pub fn checksum(values: &[u16]) -> u64 {
    values
        .par_chunks(1 << 16)
        .map(|c| c.iter().map(|&v| u64::from(v)).sum::<u64>())
        .sum()
}

/// The four workloads of `compare.py`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// chunks 64^3, codecs `[bytes little]`
    Raw,
    /// chunks 64^3, `[bytes little, zstd level 1 checksum false]`
    Zstd,
    /// chunks 64^3, `[bytes little, blosc lz4 clevel 5 shuffle typesize 2 blocksize 0]`
    Blosc,
    /// shards 256^3 of 32^3 inner chunks, inner `[bytes little, zstd 1]`, index
    /// `[bytes little, crc32c]` at the end
    Shard,
}

impl Workload {
    /// All four, in `compare.py`'s order.
    pub const ALL: [Workload; 4] = [
        Workload::Raw,
        Workload::Zstd,
        Workload::Blosc,
        Workload::Shard,
    ];

    /// The name `compare.py` uses.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Raw => "raw",
            Workload::Zstd => "zstd",
            Workload::Blosc => "blosc",
            Workload::Shard => "shard",
        }
    }

    /// The builder of the workload's `n^3` uint16 array (the metadata `compare.py` writes:
    /// regular grid, `default` keys with `/`, fill value 0).
    pub fn builder(self, n: u64) -> ArrayBuilder {
        let b = ArrayBuilder::new(vec![n; 3], DataType::UInt16).serializer(bytes_little());
        match self {
            Workload::Raw => b
                .chunk_shape(vec![64; 3])
                .compressors(Vec::<ExtensionDef>::new()),
            Workload::Zstd => b.chunk_shape(vec![64; 3]).compressors(vec![zstd1()]),
            Workload::Blosc => b.chunk_shape(vec![64; 3]).compressors([BloscConfig {
                cname: BloscCname::Lz4,
                clevel: 5,
                shuffle: Some(BloscShuffle::Shuffle),
                typesize: Some(2),
                blocksize: 0,
            }]),
            // the builder's sharding index is [bytes little, crc32c] at the end
            Workload::Shard => b
                .chunk_shape(vec![32; 3])
                .shards(vec![256; 3])
                .compressors(vec![zstd1()]),
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| format!("unknown workload {s:?} (raw, zstd, blosc or shard)"))
    }
}

/// `{"name": "zstd", "configuration": {"level": 1, "checksum": false}}`
pub fn zstd1() -> ZstdConfig {
    ZstdConfig {
        level: 1,
        checksum: false,
    }
}

/// `{"name": "zstd", "configuration": {"level": 3, "checksum": false}}`
pub fn zstd3() -> ZstdConfig {
    ZstdConfig {
        level: 3,
        checksum: false,
    }
}

/// `{"name": "bytes", "configuration": {"endian": "little"}}`
pub fn bytes_little() -> BytesConfig {
    BytesConfig {
        endian: Some(Endian::Little),
    }
}

/// An extension definition from its JSON form.
///
/// # Panics
/// On JSON that is not a definition (the benches only pass literals).
pub fn def(v: serde_json::Value) -> ExtensionDef {
    serde_json::from_value(v).expect("a valid extension definition")
}

/// The peak resident set size of this process so far, in bytes: the kernel's high-water mark
/// `VmHWM` of `/proc/self/status` (what `getrusage`'s `ru_maxrss` reports, read without
/// `unsafe`); `None` where there is no such file (other systems than Linux).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    vm_hwm_bytes(&status)
}

/// The `VmHWM` line of a `/proc/<pid>/status` text, in bytes (the kernel writes kB).
fn vm_hwm_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let kib = line.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
    kib.checked_mul(1024)
}

/// The array edge N of the benchmarks: `ZARR_BENCH_N`, else 256.
pub fn bench_n() -> u64 {
    std::env::var("ZARR_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

/// MiB per second for `bytes` processed in `seconds`.
pub fn mib_s(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / (1 << 20) as f64 / seconds
}

/// Runs `op(true)` once before the clock, then times `op(false)`: the seconds and its result.
///
/// The bench programs compare.py and compare_sparse.py call are a new process for every run,
/// while the harnesses run each Python peer in their own process, one run after another, and
/// take the median: the peers' timed runs find their code mapped, their heap grown and their
/// threads awake. A run before the clock puts this process in the same state, so that the time
/// is that of the op alone. `op` is told which run it is (a write goes elsewhere the first
/// time).
///
/// ```
/// let runs = std::cell::Cell::new(0);
/// let (seconds, last) = zarr_benches::warm_then_time(|first| {
///     runs.set(runs.get() + 1);
///     Ok::<bool, String>(first)
/// })?;
/// assert_eq!((runs.get(), last), (2, false));
/// assert!(seconds >= 0.0);
/// # Ok::<(), String>(())
/// ```
///
/// # Errors
/// The first error of `op`.
pub fn warm_then_time<T, E>(op: impl Fn(bool) -> Result<T, E>) -> Result<(f64, T), E> {
    drop(op(true)?);
    let t = std::time::Instant::now();
    let out = op(false)?;
    Ok((t.elapsed().as_secs_f64(), out))
}

/// [`warm_then_time`] for a write that creates its array at `path`: the run before the clock
/// writes beside it (at `path.warm`, removed before and after), so that the timed run still
/// creates the array. The seconds of the timed write.
///
/// # Errors
/// The first error of `write`, or of removing the first run's directory.
pub fn warm_then_time_write<E: From<std::io::Error>>(
    path: &str,
    write: impl Fn(&str) -> Result<(), E>,
) -> Result<f64, E> {
    let warm = format!("{}.warm", path.trim_end_matches('/'));
    let (seconds, ()) = warm_then_time(|first| {
        if !first {
            return write(path);
        }
        let _ = std::fs::remove_dir_all(&warm);
        write(&warm)?;
        Ok(std::fs::remove_dir_all(&warm)?)
    })?;
    Ok(seconds)
}

/// The median wall time of 9 runs of `f`, in seconds (its result kept from the optimiser):
/// the summary lines of the limit benchmarks.
pub fn median_seconds(mut f: impl FnMut() -> u64) -> f64 {
    let mut t: Vec<f64> = (0..9)
        .map(|_| {
            let start = std::time::Instant::now();
            std::hint::black_box(f());
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// CSR of a dense C-order `rows x cols` float32 matrix, built by hand (count, then fill):
/// the dense side of the sparse benchmarks.
pub fn dense_to_csr(
    rows: usize,
    cols: usize,
    data: &[f32],
) -> zarr_array::zarr_layout_sparse::sprs::CsMat<f32> {
    let nnz = data.iter().filter(|v| **v != 0.0).count();
    let mut indptr = Vec::with_capacity(rows + 1);
    let mut indices = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    indptr.push(0);
    for row in data.chunks_exact(cols) {
        for (c, &v) in row.iter().enumerate() {
            if v != 0.0 {
                indices.push(c);
                values.push(v);
            }
        }
        indptr.push(indices.len());
    }
    zarr_array::zarr_layout_sparse::sprs::CsMat::new((rows, cols), indptr, indices, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_matches_compare_py() {
        // values computed with compare.py's NumPy formula
        assert_eq!(value(0, 0, 0), 0);
        assert_eq!(value(1, 0, 0), 14); // 1 + (73856093 & 15)
        let d = make_data(4);
        assert_eq!(d.len(), 64);
        assert_eq!(d[4 * 4 + 2 * 4 + 3], value(1, 2, 3));
        assert_eq!(block_data([1, 2, 3], [1, 1, 1]), vec![value(1, 2, 3)]);
        assert_eq!(checksum(&d), d.iter().map(|&v| u64::from(v)).sum::<u64>());
    }

    #[test]
    fn workloads_build_compare_py_metadata() {
        for w in Workload::ALL {
            assert_eq!(w.name().parse::<Workload>(), Ok(w));
            let meta = w.builder(256).metadata().unwrap();
            assert_eq!(meta.shape, vec![256; 3]);
            assert_eq!(meta.data_type, DataType::UInt16);
        }
        let shard = Workload::Shard.builder(512).metadata().unwrap();
        assert_eq!(shard.codecs.len(), 1);
        assert_eq!(shard.codecs[0].name, "sharding_indexed");
        assert!("lz4".parse::<Workload>().is_err());
    }

    #[test]
    fn peak_rss_is_reported() {
        // 64 MiB touched page by page raise the high-water mark past them (while they are
        // resident: the kernel updates its recorded mark lazily, so it may read lower once
        // they are unmapped, as `ru_maxrss` does)
        let mut big = vec![0u8; 64 << 20];
        for page in big.chunks_mut(4096) {
            page[0] = 1;
        }
        std::hint::black_box(&big);
        let peak = peak_rss_bytes().unwrap();
        assert!(peak >= 64 << 20, "{peak}");
        drop(big);
        assert_eq!(
            vm_hwm_bytes("VmPeak:\t  9000 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 1000 kB\n"),
            Some(1234 * 1024)
        );
        assert_eq!(vm_hwm_bytes("VmRSS:\t 1000 kB\n"), None);
        assert_eq!(vm_hwm_bytes("VmHWM:\t lots kB\n"), None);
    }
}
