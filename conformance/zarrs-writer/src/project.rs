//! `zarrs-writer --check-project DIR`: the other direction. This project (zarr-array, by path)
//! writes rectilinear arrays into DIR (a new directory): created with
//! `ArrayBuilder::chunk_edges`, written in part, grown by `append` (which lengthens the last
//! run of the listed edges) and by `resize`, shrunk by `resize`. zarrs then opens each one
//! from its `zarr.json` alone and must read exactly the values the formula gives, the fill
//! value where nothing was written. A mismatch or a refusal stops the program with an error.

use std::num::NonZeroU64;
use std::path::Path;
use std::sync::Arc;

use zarr_array::ndarray::{ArrayD, IxDyn};
use zarr_array::zarr_codecs::gzip::GzipConfig;
use zarr_array::zarr_codecs::zstd::ZstdConfig;
use zarr_array::zarr_grid::rectilinear::{AxisEdges, Edge};
use zarr_array::zarr_store::FilesystemStore;
use zarr_array::{ArrayBuilder, DataType, ExtensionDef, Region};

type Error = Box<dyn std::error::Error>;

fn n(v: u64) -> NonZeroU64 {
    NonZeroU64::new(v).expect("a positive edge")
}

fn listed(edges: &[u64]) -> AxisEdges {
    AxisEdges::Listed(edges.iter().map(|&e| Edge::Single(n(e))).collect())
}

/// The value the formula gives at flat index `i` of an array (C order).
fn value(i: usize) -> i32 {
    (i as i32).wrapping_mul(7919) - 1000
}

/// The values an array must hold: the fill value but where a block was written.
struct Expected {
    values: ArrayD<i32>,
}

impl Expected {
    fn new(shape: &[usize], fill: i32) -> Self {
        Self {
            values: ArrayD::from_elem(IxDyn(shape), fill),
        }
    }

    /// The formula's block of `region` (values from the position's flat index in `shape`),
    /// put into the expected array.
    fn block(&mut self, region: &Region, shape: &[usize]) -> ArrayD<i32> {
        let dims: Vec<usize> = region.shape.iter().map(|&d| d as usize).collect();
        let block = ArrayD::from_shape_fn(IxDyn(&dims), |ix| {
            let mut flat = 0;
            for d in 0..shape.len() {
                flat = flat * shape[d] + region.start[d] as usize + ix[d];
            }
            value(flat)
        });
        for (ix, v) in block.indexed_iter() {
            let at: Vec<usize> = (0..dims.len())
                .map(|d| region.start[d] as usize + ix[d])
                .collect();
            self.values[IxDyn(&at)] = *v;
        }
        block
    }

    /// The expected array cut or grown to `shape`, new positions at `fill`.
    fn reshaped(&self, shape: &[usize], fill: i32) -> Self {
        let mut out = ArrayD::from_elem(IxDyn(shape), fill);
        for (ix, v) in self.values.indexed_iter() {
            if (0..shape.len()).all(|d| ix[d] < shape[d]) {
                out[ix.clone()] = *v;
            }
        }
        Self { values: out }
    }
}

/// zarrs opens `path` in `dir` and reads the whole array; it must equal `want`.
fn zarrs_reads(dir: &Path, path: &str, want: &Expected) -> Result<(), Error> {
    let store = Arc::new(zarrs::filesystem::FilesystemStore::new(dir)?);
    let array = zarrs::array::Array::open(store, &format!("/{path}"))
        .map_err(|e| format!("{path}: zarrs refuses the array: {e}"))?;
    let got: Vec<i32> = array
        .retrieve_array_subset(&array.subset_all())
        .map_err(|e| format!("{path}: zarrs cannot read it: {e}"))?;
    let shape: Vec<usize> = array.shape().iter().map(|&d| d as usize).collect();
    if shape != want.values.shape() {
        return Err(format!(
            "{path}: zarrs sees shape {shape:?}, the project wrote {:?}",
            want.values.shape()
        )
        .into());
    }
    let want_flat: Vec<i32> = want.values.iter().copied().collect();
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want_flat[i]) {
        return Err(format!(
            "{path}: element {i} (C order) reads {} in zarrs, {} was written",
            got[i], want_flat[i]
        )
        .into());
    }
    let grid = std::fs::read_to_string(dir.join(path).join("zarr.json"))?;
    let grid: serde_json::Value = serde_json::from_str(&grid)?;
    println!(
        "ok  {path}: zarrs reads all {} elements; chunk_grid {}",
        got.len(),
        grid["chunk_grid"]
    );
    Ok(())
}

pub fn check(dir: &Path) -> Result<(), Error> {
    if dir.exists() {
        return Err(format!("{} exists: give a new directory", dir.display()).into());
    }
    let store = Arc::new(FilesystemStore::create(dir)?);
    let fill = -7;
    let int32 = |shape: Vec<u64>, edges: Vec<AxisEdges>| -> Result<ArrayBuilder, Error> {
        Ok(ArrayBuilder::new(shape, DataType::Int32)
            .chunk_edges(edges)
            .fill_value_json(&serde_json::json!(fill))?)
    };

    // 1. run-length edges [[4, 3], 10, 8] x 5, zstd, written whole
    let path = "rle_zstd";
    let a = int32(
        vec![30, 13],
        vec![
            AxisEdges::Listed(vec![
                Edge::Run {
                    size: n(4),
                    count: n(3),
                },
                Edge::Single(n(10)),
                Edge::Single(n(8)),
            ]),
            AxisEdges::Regular(n(5)),
        ],
    )?
    .compressors([ZstdConfig {
        level: 3,
        checksum: false,
    }])
    .create(store.clone(), path)?;
    let mut want = Expected::new(&[30, 13], fill);
    let whole = Region::whole(&[30, 13]);
    a.write_region(&whole, want.block(&whole, &[30, 13]).view())?;
    zarrs_reads(dir, path, &want)?;

    // 2. explicit edges, '.' keys, dimension names, gzip, written in part (missing chunks)
    let path = "explicit_part";
    let a = int32(vec![12, 10], vec![listed(&[1, 2, 3, 6]), listed(&[3, 7])])?
        .key_encoding(ExtensionDef::with_configuration(
            "default",
            serde_json::json!({"separator": "."})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ))
        .dimension_names(vec![Some("time".into()), Some("x".into())])
        .compressors([GzipConfig { level: 1 }])
        .create(store.clone(), path)?;
    let mut want = Expected::new(&[12, 10], fill);
    let part = Region::new(vec![2, 1], vec![5, 8])?;
    a.write_region(&part, want.block(&part, &[12, 10]).view())?;
    zarrs_reads(dir, path, &want)?;

    // 3. grown by append along axis 0 (past the listed edges: the last run lengthens), then
    // along axis 1 (a regular axis)
    let path = "appended";
    let mut a = int32(vec![6, 4], vec![listed(&[2, 4]), AxisEdges::Regular(n(3))])?
        .compressors(Vec::<ExtensionDef>::new())
        .create(store.clone(), path)?;
    let mut want = Expected::new(&[6, 4], fill);
    let first = Region::whole(&[6, 4]);
    a.write_region(&first, want.block(&first, &[6, 4]).view())?;
    let mut want = want.reshaped(&[15, 4], fill);
    let rows = Region::new(vec![6, 0], vec![9, 4])?;
    a.append(want.block(&rows, &[15, 4]).view(), 0)?;
    let mut want = want.reshaped(&[15, 6], fill);
    let cols = Region::new(vec![0, 4], vec![15, 2])?;
    a.append(want.block(&cols, &[15, 6]).view(), 1)?;
    zarrs_reads(dir, path, &want)?;

    // 4. shrunk by resize (cutting into a chunk), then grown back: the cut part reads as fill
    let path = "resized";
    let mut a = int32(vec![10, 6], vec![listed(&[3, 3, 4]), listed(&[2, 4])])?
        .compressors([ZstdConfig {
            level: 1,
            checksum: false,
        }])
        .create(store.clone(), path)?;
    let mut want = Expected::new(&[10, 6], fill);
    let whole = Region::whole(&[10, 6]);
    a.write_region(&whole, want.block(&whole, &[10, 6]).view())?;
    a.resize(&[5, 6])?;
    a.resize(&[14, 6])?;
    let want = want.reshaped(&[5, 6], fill).reshaped(&[14, 6], fill);
    zarrs_reads(dir, path, &want)?;

    // 5. shards on a rectilinear outer grid (inner chunks 2 x 3 dividing every edge)
    let path = "sharded";
    let sharding = serde_json::json!({
        "chunk_shape": [2, 3],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": "end"});
    let a = int32(
        vec![18, 12],
        vec![listed(&[8, 4, 4, 2]), AxisEdges::Regular(n(6))],
    )?
    .serializer(ExtensionDef::with_configuration(
        "sharding_indexed",
        sharding.as_object().cloned().unwrap_or_default(),
    ))
    .compressors(Vec::<ExtensionDef>::new())
    .create(store.clone(), path)?;
    let mut want = Expected::new(&[18, 12], fill);
    let part = Region::new(vec![0, 0], vec![17, 12])?;
    a.write_region(&part, want.block(&part, &[18, 12]).view())?;
    zarrs_reads(dir, path, &want)?;

    println!(
        "zarrs {} reads the 5 rectilinear arrays this project wrote in {}",
        "0.23.14",
        dir.display()
    );
    Ok(())
}
