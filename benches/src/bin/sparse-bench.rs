//! The project side of the sparse matrix harness `compare_sparse.py` (benches/README.md):
//!
//! ```text
//! sparse-bench OP PATH INPUT      OP: write | csr | rows | cols | box
//! ```
//!
//! INPUT holds the matrix as compare_sparse.py writes it: `indptr.npy` (int64), `indices.npy`
//! (int32), `data.npy` (float32) and `shape.json`. PATH is a filesystem store holding one 2-d
//! float32 array (fill value 0) with this program's layout, the same for every op: chunks of
//! [`CHUNK`] (rows x columns), each stored as a `sparse_layout` CSR chunk (the narrowest index
//! and pointer types: uint16 column indices, uint32 row pointers), then `zstd` level 3 (the
//! level anndata's CSR arrays get in the harness). Square chunks let a column slab or a box
//! read only the chunks it meets, and a row slab read whole rows of chunks.
//!
//! - `write`: read INPUT (outside the clock), then create the array at PATH and write the whole
//!   matrix (`SparseArray::write_sprs`);
//! - `csr`: open the array and read the whole matrix into one CSR matrix
//!   (`SparseArray::read_csr`);
//! - `rows`: rows 5000..6000, all columns, as CSR;
//! - `cols`: columns 2000..2500, all rows, as CSR;
//! - `box`: rows 8000..9000, columns 2000..3000, as CSR.
//!
//! Every op runs once before the clock (`warm_then_time`; `write` beside PATH, then removed),
//! as anndata's timed runs follow its earlier ones in compare_sparse.py's one process.
//! The last stdout line is `{"seconds": S, "nnz": N, "checksum": C}` (C the sum of the values
//! read or written, as an integer).
#![forbid(unsafe_code)]

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_layout_sparse::sprs::CsMat;
use zarr_array::zarr_layout_sparse::Format;
use zarr_array::zarr_store::FilesystemStore;
use zarr_array::{Array, ArrayBuilder, DataType};
use zarr_benches::{warm_then_time, warm_then_time_write, zstd3};

type Error = Box<dyn std::error::Error>;

/// The chunk shape (rows, columns).
const CHUNK: [u64; 2] = [1000, 1000];

fn usage() -> String {
    "usage: sparse-bench OP PATH INPUT   (OP: write|csr|rows|cols|box)".to_string()
}

/// The data of a little-endian `.npy` file of one dimension whose `descr` is `descr`.
fn read_npy(path: &Path, descr: &str) -> Result<Vec<u8>, Error> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let bad = |why: &str| format!("{}: {why}", path.display());
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy file").into());
    }
    let (header_len, start): (usize, usize) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return Err(bad("an unknown .npy version").into()),
    };
    let end = start
        .checked_add(header_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("a truncated header"))?;
    let header = String::from_utf8_lossy(&bytes[start..end]);
    if !header.contains(&format!("'descr': '{descr}'")) {
        return Err(bad(&format!("not of dtype {descr}: {header}")).into());
    }
    if header.contains("'fortran_order': True") {
        return Err(bad("Fortran order").into());
    }
    Ok(bytes[end..].to_vec())
}

/// The matrix in INPUT.
fn read_input(input: &str) -> Result<CsMat<f32>, Error> {
    let dir = Path::new(input);
    let shape: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("shape.json"))?)?;
    let dim = |i: usize| -> Result<usize, Error> {
        shape["shape"][i]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("shape.json: no shape[{i}]").into())
    };
    let (rows, cols) = (dim(0)?, dim(1)?);
    let indptr: Vec<usize> = read_npy(&dir.join("indptr.npy"), "<i8")?
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
        .map(|v| usize::try_from(v).map_err(|_| "indptr: a negative pointer"))
        .collect::<Result<_, _>>()?;
    let indices: Vec<usize> = read_npy(&dir.join("indices.npy"), "<i4")?
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
        .map(|v| usize::try_from(v).map_err(|_| "indices: a negative index"))
        .collect::<Result<_, _>>()?;
    let data: Vec<f32> = read_npy(&dir.join("data.npy"), "<f4")?
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
        .collect();
    CsMat::try_new((rows, cols), indptr, indices, data)
        .map_err(|(_, _, _, e)| format!("the input is not a CSR matrix: {e}").into())
}

fn stats(m: &CsMat<f32>) -> (usize, u64) {
    let sum: f64 = m.data().iter().map(|&v| f64::from(v)).sum();
    (m.nnz(), sum as u64)
}

fn run(args: &[String]) -> Result<(f64, usize, u64), Error> {
    let [op, path, input] = args else {
        return Err(usage().into());
    };
    // start the thread pool outside the clock, as process start is
    rayon::broadcast(|_| ());
    if op == "write" {
        let m = read_input(input)?;
        let (rows, cols) = (m.rows() as u64, m.cols() as u64);
        let write = |at: &str| -> Result<(), Error> {
            let store = Arc::new(FilesystemStore::create(at)?);
            let array = ArrayBuilder::new(vec![rows, cols], DataType::Float32)
                .chunk_shape(CHUNK.to_vec())
                .sparse(Format::Csr)
                .compressors(vec![zstd3()])
                .create(store, "")?;
            array.sparse()?.write_sprs(&m, &[0, 0])?;
            Ok(())
        };
        let seconds = warm_then_time_write(path, write)?;
        let (nnz, sum) = stats(&m);
        return Ok((seconds, nnz, sum));
    }
    if !["csr", "rows", "cols", "box"].contains(&op.as_str()) {
        return Err(format!("unknown op {op:?}; {}", usage()).into());
    }
    let read = |_| -> Result<CsMat<f32>, Error> {
        let store = Arc::new(FilesystemStore::open(path)?);
        let array = Array::open(store, "")?;
        let [rows, cols] = [array.shape()[0], array.shape()[1]];
        let region = match op.as_str() {
            "csr" => Region::whole(&[rows, cols]),
            "rows" => Region::new(vec![5000, 0], vec![1000, cols])?,
            "cols" => Region::new(vec![0, 2000], vec![rows, 500])?,
            _ => Region::new(vec![8000, 2000], vec![1000, 1000])?,
        };
        Ok(array.sparse()?.read_csr::<f32>(&region)?)
    };
    let (seconds, m) = warm_then_time(read)?;
    let (nnz, sum) = stats(&m);
    Ok((seconds, nnz, sum))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok((seconds, nnz, sum)) => {
            println!("{{\"seconds\": {seconds}, \"nnz\": {nnz}, \"checksum\": {sum}}}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("sparse-bench: {}", zarr_array::report(&*e));
            ExitCode::FAILURE
        }
    }
}
