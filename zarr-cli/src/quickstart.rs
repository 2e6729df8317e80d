//! `zarr quickstart DIR`: a small demo hierarchy, and how to look at it.

use std::sync::Arc;

use serde_json::{json, Map};
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::Store;
use zarr_array::{ArrayBuilder, DataType, Group};

use crate::commands::fmt_domain;
use crate::error::{zarr, Result};
use crate::layout::{sparse_def, SparseFormat, SPARSE_CODEC};
use crate::progress::outln;
use crate::store::{Access, Ctx};

fn ne_bytes_i32(v: impl IntoIterator<Item = i32>) -> Vec<u8> {
    v.into_iter().flat_map(i32::to_ne_bytes).collect()
}

/// `zarr quickstart`
pub fn quickstart(ctx: &Ctx, dir: &str) -> Result<()> {
    let store: Arc<dyn Store> = ctx.open_store(dir, Access::Empty)?;
    let err = |e| zarr(dir, e);
    let mut attrs = Map::new();
    attrs.insert(
        "description".into(),
        json!("written by `zarr quickstart`: a dense array, a prepend, a sparse array"),
    );
    Group::create(store.clone(), "", attrs).map_err(err)?;
    let mut done = Vec::new();

    // 1. a dense array: 0..24 in 4x4 chunks, zstd
    let dense = ArrayBuilder::new(vec![6, 4], DataType::Int32)
        .chunk_shape(vec![4, 4])
        .dimension_names(vec![Some("y".into()), Some("x".into())])
        .create_with(store.clone(), "dense", &ctx.extensions)
        .map_err(err)?;
    dense
        .write_region_bytes(&Region::whole(&[6, 4]), &ne_bytes_i32(0..24))
        .map_err(err)?;
    done.push(format!(
        "{dir}/dense       int32 [6, 4] in 4x4 chunks (zstd), holding 0..23"
    ));

    // 2. a prepend: six rows of 1, then three rows of 2 in front of them
    let mut grown = ArrayBuilder::new(vec![6, 4], DataType::Int32)
        .chunk_shape(vec![4, 4])
        .create_with(store.clone(), "prepended", &ctx.extensions)
        .map_err(err)?;
    grown
        .write_region_bytes(&Region::whole(&[6, 4]), &ne_bytes_i32([1; 24]))
        .map_err(err)?;
    grown
        .prepend_bytes(&[3, 4], &ne_bytes_i32([2; 12]), 0)
        .map_err(err)?;
    done.push(format!(
        "{dir}/prepended   int32 {:?}, domain {}: six rows of 1, then three rows of 2 \
         prepended on axis 0 (new chunk c/-1/0; c/0/0 and c/1/0 untouched; the grid is now \
         regular_bounded)",
        grown.shape(),
        fmt_domain(&grown.domain())
    ));

    // 3. a sparse array: 1% of a 100x100 float64 matrix, each 50x50 chunk stored as CSR
    let sparse_note = if ctx.has_codec(SPARSE_CODEC) {
        let sparse = ArrayBuilder::new(vec![100, 100], DataType::Float64)
            .chunk_shape(vec![50, 50])
            .serializer(sparse_def(SparseFormat::Csr, &[50, 50])?)
            .create_with(store.clone(), "sparse", &ctx.extensions)
            .map_err(err)?;
        let mut data = vec![0f64; 100 * 100];
        for i in 0..100usize {
            data[(i * 7919) % 10_000] = i as f64 + 0.5;
        }
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).collect();
        sparse
            .write_region_bytes(&Region::whole(&[100, 100]), &bytes)
            .map_err(err)?;
        done.push(format!(
            "{dir}/sparse      float64 [100, 100], 100 non-zeros, 50x50 chunks in the \
             sparse_layout codec (CSR)"
        ));
        None
    } else {
        Some(format!(
            "skipped {dir}/sparse: this build has no \"{SPARSE_CODEC}\" codec"
        ))
    };

    outln(format!("wrote a demo group at {dir}:"));
    for line in &done {
        outln(format!("  {line}"));
    }
    if let Some(note) = sparse_note {
        outln(format!("  ({note})"));
    }
    outln("look at it:");
    for (cmd, what) in [
        (format!("zarr tree {dir}"), "the hierarchy"),
        (
            format!("zarr info {dir}/prepended"),
            "shape, domain, chunks, bytes",
        ),
        (
            format!("zarr export {dir}/prepended prepended.npy"),
            "then numpy.load(\"prepended.npy\")",
        ),
        (
            format!("zarr export {dir}/dense part.npy --region 0:3,1:4"),
            "a region, by zero-based positions",
        ),
        (
            format!("zarr info {dir}/prepended --without regular_bounded"),
            "refused, as by a reader without the grid",
        ),
        (
            format!("zarr convert {dir}/prepended {dir}-regular --to-regular"),
            "a copy older readers can read",
        ),
        (
            format!("zarr validate {dir}"),
            "decode and check every chunk",
        ),
    ] {
        outln(format!("  {cmd:<60} # {what}"));
    }
    Ok(())
}
