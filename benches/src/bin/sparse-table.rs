//! Sparse chunks against dense chunks: the same float32 data stored twice in a
//! `FilesystemStore` (a: `sparse_layout` CSR, COO for 3-d, + zstd 3; b: dense bytes + zstd 3),
//! at several densities, random and clustered. Prints a markdown table of stored bytes, write
//! time, read time (sparse read to CSR/COO vs dense read + conversion), peak extra memory of
//! each read (a counting global allocator) and SpMV (sparse chunks vs densify and multiply),
//! each with the ratio b/a. Medians of 3 runs.
//!
//! `cargo run --release -p zarr-benches --bin sparse-table`
#![forbid(unsafe_code)]

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use zarr_array::ndarray::Array2;
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_layout_sparse::Format;
use zarr_array::zarr_store::FilesystemStore;
use zarr_array::{ArrayBuilder, DataType};
use zarr_benches::{bytes_little, dense_to_csr, zstd3};
use zarr_testkit::{CountingAlloc, Rng};

/// The system allocator, counting live bytes and their peak.
#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Runs `f`, returning its result, the time it took and the peak of live bytes above those
/// live when it started (what it returns counts: it is live at the end).
fn measure<R>(f: impl FnOnce() -> Res<R>) -> Res<(R, Duration, usize)> {
    let ((r, dt), peak) = ALLOC.peak_of(|| {
        let t = Instant::now();
        let r = f();
        (r, t.elapsed())
    });
    Ok((r?, dt, peak))
}

/// Medians over `RUNS` runs of time and peak memory (the result of the last run is dropped).
const RUNS: usize = 3;

fn median_of<R>(mut f: impl FnMut() -> Res<R>) -> Res<(Duration, usize)> {
    let mut times = Vec::new();
    let mut peaks = Vec::new();
    for _ in 0..RUNS {
        let (r, dt, peak) = measure(&mut f)?;
        drop(black_box(r));
        times.push(dt);
        peaks.push(peak);
    }
    times.sort();
    peaks.sort_unstable();
    Ok((times[RUNS / 2], peaks[RUNS / 2]))
}

/// A nonzero value in [1, 2).
fn value(rng: &mut Rng) -> f32 {
    1.0 + rng.unit() as f32
}

#[derive(Clone, Copy)]
enum Pattern {
    Random,
    /// Nonzeros in 4 dense square blocks, one in each quadrant.
    Clustered,
}

/// The dense data (C order) of `shape` at `density`.
fn make(shape: &[u64], density: f64, pattern: Pattern, seed: u64) -> Vec<f32> {
    let n: u64 = shape.iter().product();
    let mut rng = Rng::new(seed);
    let mut data = vec![0f32; n as usize];
    match pattern {
        Pattern::Random => {
            for v in &mut data {
                if rng.unit() < density {
                    *v = value(&mut rng);
                }
            }
        }
        Pattern::Clustered => {
            assert_eq!(shape.len(), 2, "clustered data is 2-d");
            let (rows, cols) = (shape[0], shape[1]);
            let side = ((density * n as f64 / 4.0).sqrt().round() as u64).min(rows / 2);
            for q in 0..4u64 {
                let (qr, qc) = ((q / 2) * rows / 2, (q % 2) * cols / 2);
                // `%`, not `below`: the same data as the figures of benches/README.md
                let r0 = qr + rng.next_u64() % (rows / 2 - side + 1);
                let c0 = qc + rng.next_u64() % (cols / 2 - side + 1);
                for r in r0..r0 + side {
                    for c in c0..c0 + side {
                        data[(r * cols + c) as usize] = value(&mut rng);
                    }
                }
            }
        }
    }
    data
}

/// The nonzeros of `data` as COO: `(ndim, nnz)` positions and values.
fn to_coo(shape: &[u64], data: &[f32]) -> (Array2<u64>, Vec<f32>) {
    let nnz = data.iter().filter(|v| **v != 0.0).count();
    let ndim = shape.len();
    let mut coords = Array2::zeros((ndim, nnz));
    let mut values = Vec::with_capacity(nnz);
    let mut k = 0;
    for (i, &v) in data.iter().enumerate() {
        if v != 0.0 {
            let mut rest = i as u64;
            for d in (0..ndim).rev() {
                coords[[d, k]] = rest % shape[d];
                rest /= shape[d];
            }
            values.push(v);
            k += 1;
        }
    }
    (coords, values)
}

fn dir_bytes(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(p) {
        for e in entries.flatten() {
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                total += dir_bytes(&e.path());
            } else if e.file_name() != "zarr.json" {
                total += meta.len();
            }
        }
    }
    total
}

struct Row {
    case: String,
    nnz: usize,
    bytes: (u64, u64),
    write: (Duration, Duration),
    read: (Duration, Duration),
    mem: (usize, usize),
    /// time and peak memory of `SparseArray::chunks` (zero-copy views of the decoded chunks)
    views: (Duration, usize),
    spmv: Option<(Duration, Duration)>,
}

fn case(
    root: &Path,
    name: &str,
    shape: &[u64],
    chunks: &[u64],
    density: f64,
    pattern: Pattern,
) -> Res<Row> {
    let data = make(shape, density, pattern, 0x5eed ^ (density * 1e6) as u64);
    let (coords, values) = to_coo(shape, &data);
    let nnz = values.len();
    let two_d = shape.len() == 2;
    let format = if two_d { Format::Csr } else { Format::Coo };
    let dir = root.join(name);
    let store = Arc::new(FilesystemStore::create(&dir)?);
    let sparse = ArrayBuilder::new(shape.to_vec(), DataType::Float32)
        .chunk_shape(chunks.to_vec())
        .sparse(format)
        .compressors([zstd3()])
        .create(store.clone(), "sparse")?;
    let dense = ArrayBuilder::new(shape.to_vec(), DataType::Float32)
        .chunk_shape(chunks.to_vec())
        .serializer(bytes_little())
        .compressors([zstd3()])
        .create(store.clone(), "dense")?;
    let whole = Region::whole(shape);
    let bytes: &[u8] = bytemuck::cast_slice(&data);

    let (w_a, _) = median_of(|| Ok(sparse.sparse()?.write_coo(coords.view(), &values)?))?;
    let (w_b, _) = median_of(|| Ok(dense.write_region_bytes(&whole, bytes)?))?;
    let stored = (
        dir_bytes(&dir.join("sparse")),
        dir_bytes(&dir.join("dense")),
    );
    drop(data);

    let (r_a, m_a, r_b, m_b) = if two_d {
        let (rows, cols) = (shape[0] as usize, shape[1] as usize);
        let check_a = sparse.sparse()?.read_csr::<f32>(&whole)?;
        let check_b = dense_to_csr(
            rows,
            cols,
            dense.read_all::<f32>()?.as_slice().ok_or("C order")?,
        );
        assert!(check_a == check_b, "{name}: the two reads agree");
        let check_c = sparse.sparse()?.read_coo::<f32>(&whole)?.to_csr()?;
        assert!(check_a == check_c, "{name}: read_csr and read_coo agree");
        drop((check_a, check_b, check_c));
        let (r_a, m_a) = median_of(|| Ok(sparse.sparse()?.read_csr::<f32>(&whole)?))?;
        let (r_b, m_b) = median_of(|| {
            let d = dense.read_all::<f32>()?;
            Ok(dense_to_csr(rows, cols, d.as_slice().ok_or("C order")?))
        })?;
        (r_a, m_a, r_b, m_b)
    } else {
        let (r_a, m_a) = median_of(|| Ok(sparse.sparse()?.read_coo::<f32>(&whole)?.into_parts()))?;
        let (r_b, m_b) = median_of(|| {
            let d = dense.read_all::<f32>()?;
            Ok(to_coo(shape, d.as_slice().ok_or("C order")?))
        })?;
        (r_a, m_a, r_b, m_b)
    };

    let views = median_of(|| {
        let chunks = sparse.sparse()?.chunks()?;
        let mut s = 0f32;
        for c in &chunks {
            s += c.values::<f32>()?.iter().sum::<f32>();
        }
        Ok((chunks, s))
    })?;

    let spmv = if two_d {
        let (rows, cols) = (shape[0] as usize, shape[1] as usize);
        let mut rng = Rng::new(7);
        let x: Vec<f32> = (0..cols).map(|_| value(&mut rng)).collect();
        let (s_a, _) = median_of(|| Ok(sparse.sparse()?.spmv(&x)?))?;
        let (s_b, _) = median_of(|| {
            let d = dense.read_all::<f32>()?;
            let d = d.as_slice().ok_or("C order")?;
            let y: Vec<f32> = (0..rows)
                .map(|r| {
                    d[r * cols..(r + 1) * cols]
                        .iter()
                        .zip(&x)
                        .map(|(a, b)| a * b)
                        .sum()
                })
                .collect();
            Ok(y)
        })?;
        Some((s_a, s_b))
    } else {
        None
    };
    std::fs::remove_dir_all(&dir)?;
    Ok(Row {
        case: name.to_string(),
        nnz,
        bytes: stored,
        write: (w_a, w_b),
        read: (r_a, r_b),
        mem: (m_a, m_b),
        views,
        spmv,
    })
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn kib(b: u64) -> String {
    format!("{:.0}", b as f64 / 1024.0)
}

fn ratio(b: f64, a: f64) -> String {
    if a > 0.0 {
        format!("{:.1}x", b / a)
    } else {
        "-".into()
    }
}

fn main() -> Res<()> {
    let tmp = tempfile::tempdir()?;
    let shape2 = [2000u64, 2000];
    let chunks2 = [1000u64, 1000];
    let mut rows = Vec::new();
    for (pattern, pname) in [
        (Pattern::Random, "random"),
        (Pattern::Clustered, "clustered"),
    ] {
        for (density, dname) in [
            (0.001, "0.1 %"),
            (0.01, "1 %"),
            (0.1, "10 %"),
            (0.5, "50 %"),
        ] {
            let name = format!("2-d {dname} {pname}");
            eprintln!("{name}");
            let dir_name = format!("{pname}-{}", (density * 1000.0) as u64);
            let mut row = case(tmp.path(), &dir_name, &shape2, &chunks2, density, pattern)?;
            row.case = name;
            rows.push(row);
        }
    }
    eprintln!("3-d 1 % random");
    let mut row = case(
        tmp.path(),
        "coo3",
        &[200, 200, 200],
        &[100, 100, 100],
        0.01,
        Pattern::Random,
    )?;
    row.case = "3-d 200^3 COO 1 % random".into();
    rows.push(row);

    println!(
        "a = sparse_layout CSR (COO for 3-d) + zstd 3, b = dense bytes + zstd 3; float32, \
         2-d 2000x2000 in 1000x1000 chunks; FilesystemStore; medians of {RUNS} runs; \
         ratios b/a (higher favours sparse). read a = `read_csr(whole)` (one global \
         CSR; for 3-d `read_coo(whole)`, a global COO), read a' = `chunks()` (zero-copy CSR/COO views of \
         the decoded chunks, values summed), read b = `read_all` + CSR (COO for 3-d) built \
         by hand; mem = peak live heap bytes above the start during the read, result \
         included; spmv a = `SparseArray::spmv`, spmv b = `read_all` + dense product\n"
    );
    println!(
        "| case | nnz | stored a KiB | stored b KiB | b/a | write a ms | write b ms | b/a \
         | read a ms | read a' ms | read b ms | b/a | b/a' \
         | mem a MiB | mem a' MiB | mem b MiB | b/a | b/a' \
         | spmv a ms | spmv b ms | b/a |"
    );
    println!(
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    let mib = |b: usize| format!("{:.2}", b as f64 / (1024.0 * 1024.0));
    for r in &rows {
        let spmv = match r.spmv {
            Some((a, b)) => format!(
                "{} | {} | {}",
                ms(a),
                ms(b),
                ratio(b.as_secs_f64(), a.as_secs_f64())
            ),
            None => "- | - | -".into(),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.case,
            r.nnz,
            kib(r.bytes.0),
            kib(r.bytes.1),
            ratio(r.bytes.1 as f64, r.bytes.0 as f64),
            ms(r.write.0),
            ms(r.write.1),
            ratio(r.write.1.as_secs_f64(), r.write.0.as_secs_f64()),
            ms(r.read.0),
            ms(r.views.0),
            ms(r.read.1),
            ratio(r.read.1.as_secs_f64(), r.read.0.as_secs_f64()),
            ratio(r.read.1.as_secs_f64(), r.views.0.as_secs_f64()),
            mib(r.mem.0),
            mib(r.views.1),
            mib(r.mem.1),
            ratio(r.mem.1 as f64, r.mem.0 as f64),
            ratio(r.mem.1 as f64, r.views.1 as f64),
            spmv,
        );
    }
    Ok(())
}
