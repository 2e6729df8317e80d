//! Creates an array in a folder, writes it, grows it in front with `prepend`, reads it back.
//!
//! `cargo run --release -p zarr-array --example quickstart [DIR]` (default `demo`).

use std::sync::Arc;

use zarr_array::{ndarray, Array, ArrayBuilder, DataType, Extensions, Region};
use zarr_store::FilesystemStore;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "demo".into());
    let store = Arc::new(FilesystemStore::create(&dir)?);
    let mut z = ArrayBuilder::new(vec![6, 4], DataType::Int32)
        .chunk_shape(vec![4, 4])
        .overwrite(true)
        .create(store.clone(), "temperature")?;
    z.write_region(
        &Region::new(vec![0, 0], vec![6, 4])?,
        ndarray::ArrayD::from_elem(vec![6, 4], 1i32).view(),
    )?;
    println!(
        "created {dir}/temperature: shape {:?}, chunks {:?}",
        z.shape(),
        z.chunk_shape()
    );

    z.prepend(ndarray::ArrayD::from_elem(vec![3, 4], 2i32).view(), 0)?;
    println!(
        "prepended 3 rows: shape {:?}, domain {:?}, chunks stored {:?}",
        z.shape(),
        z.domain(),
        z.stored_chunks()?
    );

    let back = Array::open(store.clone(), "temperature")?.read_all::<i32>()?;
    println!("read back:\n{back}");
    match Array::open_with(store, "temperature", &Extensions::core()) {
        Err(e) => println!("a reader without regular_bounded refuses it: {e}"),
        Ok(_) => println!("unexpected: a core reader opened it"),
    }
    println!("look at it: ls -R {dir}/temperature; cat {dir}/temperature/zarr.json");
    Ok(())
}
