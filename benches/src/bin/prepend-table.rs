//! Reproduces the prepend cost table of the shared design note `regular_bounded.md` on this
//! machine: two chunk rows prepended on axis 0 to a uint8 array of 64x64x64 chunks
//! (`[bytes]`, 256 KiB per chunk file) on a grid of G x G x G chunks in a `FilesystemStore`
//! in a temporary directory. Columns, wall seconds (medians of `--repeat` runs):
//!
//! - **rename every chunk file**: what a `regular` array needs to grow in front: every chunk
//!   file `c/i/j/k` renamed to `c/(i+2)/j/k` (rows from the last down, each row's renames in
//!   parallel, directories created as needed);
//! - **store get/set/delete**: the same shift through the store API, key by key (get the
//!   value, set it under the new key, delete the old key; each row in parallel);
//! - **copy to a new array**: read every chunk row of the array and write it, after the two
//!   new rows, into a new array through zarr-array;
//! - **prepend's metadata step**: the grid arithmetic of a prepend (`zarr_grid::prepend` and
//!   building the new grid) plus writing the new `zarr.json` through the store (measured as
//!   `update_attributes` with no change, which writes the same document), measured after
//!   `sync` so that the writeback of the chunks written before does not compete; median of 21
//!   per run;
//! - **our prepend (whole)**: `Array::prepend_bytes` of the two rows: the new chunks, then
//!   the metadata; afterwards the program checks that no existing chunk file changed;
//! - **new chunks alone**: writing the same two rows of chunks into a fresh
//!   `regular_bounded` array of the prepended geometry (`write_region_bytes`), no metadata.
//!
//! Both writes are timed after a `sync`, so neither competes with the writeback of what the
//! columns before them wrote.
//!
//! ```text
//! prepend-table [--grids 8,16] [--repeat 3] [--dir /tmp]
//! ```
#![forbid(unsafe_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use rayon::prelude::*;
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::{FilesystemStore, Store};
use zarr_array::{Array, ArrayBuilder, DataType, ExtensionDef};

type Error = Box<dyn std::error::Error + Send + Sync>;
type Result<T> = std::result::Result<T, Error>;

const C: u64 = 64;
const K: u64 = 2 * C;

struct Options {
    grids: Vec<u64>,
    repeat: usize,
    dir: PathBuf,
}

fn parse_args() -> Result<Options> {
    let mut o = Options {
        grids: vec![8, 16],
        repeat: 3,
        dir: std::env::temp_dir(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--grids" => {
                o.grids = value()?
                    .split(',')
                    .map(str::parse)
                    .collect::<std::result::Result<_, _>>()?;
            }
            "--repeat" => o.repeat = value()?.parse()?,
            "--dir" => o.dir = value()?.into(),
            _ => {
                return Err(format!(
                    "unknown argument {a:?}; prepend-table [--grids 8,16] [--repeat 3] [--dir DIR]"
                )
                .into())
            }
        }
    }
    Ok(o)
}

/// Rows `rows` (of axis 0) of the data: never 0, the fill value, so every chunk is stored.
fn rows_data(first: u64, rows: u64, n: u64, salt: u64) -> Vec<u8> {
    let plane = (n * n) as usize;
    let mut out = vec![0u8; plane * rows as usize];
    out.par_chunks_mut(plane).enumerate().for_each(|(r, p)| {
        let i = first + r as u64;
        for (x, v) in p.iter_mut().enumerate() {
            let x = x as u64;
            *v = ((i * 7 + (x / n) * 3 + x % n + salt) % 255 + 1) as u8;
        }
    });
    out
}

fn time<T>(f: impl FnOnce() -> Result<T>) -> Result<(f64, T)> {
    let t = Instant::now();
    let r = f()?;
    Ok((t.elapsed().as_secs_f64(), r))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn chunk_file(root: &Path, i: i64, j: u64, k: u64) -> PathBuf {
    root.join("c")
        .join(i.to_string())
        .join(j.to_string())
        .join(k.to_string())
}

/// Renames every chunk file of rows `0..g` to row `+2` (rows from the last down).
fn rename_all(root: &Path, g: u64) -> Result<()> {
    let jk: Vec<(u64, u64)> = (0..g).flat_map(|j| (0..g).map(move |k| (j, k))).collect();
    for i in (0..g as i64).rev() {
        (0..g).into_par_iter().try_for_each(|j| {
            fs::create_dir_all(chunk_file(root, i + 2, j, 0).parent().expect("a parent"))
        })?;
        jk.par_iter().try_for_each(|&(j, k)| {
            fs::rename(chunk_file(root, i, j, k), chunk_file(root, i + 2, j, k))
        })?;
    }
    Ok(())
}

/// Moves every chunk of rows `2..g+2` to row `-2` through the store API (rows from the
/// first up).
fn get_set_delete_all(store: &dyn Store, g: u64) -> Result<()> {
    let jk: Vec<(u64, u64)> = (0..g).flat_map(|j| (0..g).map(move |k| (j, k))).collect();
    for i in 2..g as i64 + 2 {
        jk.par_iter().try_for_each(|&(j, k)| -> Result<()> {
            let from = format!("c/{i}/{j}/{k}");
            let value = store.get(&from)?.ok_or_else(|| format!("no {from}"))?;
            store.set(&format!("c/{}/{j}/{k}", i - 2), &value)?;
            store.delete(&from)?;
            Ok(())
        })?;
    }
    Ok(())
}

/// Reads every chunk row of `src` and writes it, after two new rows, into a new array.
fn copy_to_new(src_store: Arc<dyn Store>, dst_root: &Path, n: u64, new: &[u8]) -> Result<()> {
    let src = Array::open(src_store, "")?;
    let dst_store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dst_root)?);
    let dst = ArrayBuilder::new(vec![n + K, n, n], DataType::UInt8)
        .chunk_shape(vec![C; 3])
        .compressors(Vec::<ExtensionDef>::new())
        .create(dst_store, "")?;
    dst.write_region_bytes(&Region::new(vec![0, 0, 0], vec![K, n, n])?, new)?;
    let mut buf = vec![0u8; (C * n * n) as usize];
    for r in 0..n / C {
        src.read_region_bytes_into(&Region::new(vec![r * C, 0, 0], vec![C, n, n])?, &mut buf)?;
        dst.write_region_bytes(&Region::new(vec![K + r * C, 0, 0], vec![C, n, n])?, &buf)?;
    }
    Ok(())
}

fn mtimes(root: &Path, g: u64) -> Result<Vec<SystemTime>> {
    let mut out = Vec::new();
    for i in 0..g as i64 {
        for j in 0..g {
            for k in 0..g {
                out.push(fs::metadata(chunk_file(root, i, j, k))?.modified()?);
            }
        }
    }
    Ok(out)
}

#[derive(Default)]
struct Row {
    rename: Vec<f64>,
    get_set_delete: Vec<f64>,
    copy: Vec<f64>,
    metadata: Vec<f64>,
    grid: Vec<f64>,
    prepend: Vec<f64>,
    new_chunks: Vec<f64>,
}

fn measure(g: u64, repeat: usize, dir: &Path) -> Result<Row> {
    let n = g * C;
    let tmp = tempfile::Builder::new()
        .prefix("prepend-table-")
        .tempdir_in(dir)?;
    let root = tmp.path().join("a.zarr");
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(&root)?);
    let array = ArrayBuilder::new(vec![n; 3], DataType::UInt8)
        .chunk_shape(vec![C; 3])
        .compressors(Vec::<ExtensionDef>::new())
        .create(store.clone(), "")?;
    eprintln!(
        "grid {g}^3: writing {} chunks ({} MiB)...",
        g * g * g,
        (n * n * n) >> 20
    );
    for r in 0..g {
        let data = rows_data(r * C, C, n, 0);
        array.write_region_bytes(&Region::new(vec![r * C, 0, 0], vec![C, n, n])?, &data)?;
    }
    let original_meta = store.get("zarr.json")?.ok_or("no zarr.json")?;
    let new = rows_data(0, K, n, 17);
    let mut row = Row::default();
    for rep in 0..repeat {
        eprintln!("grid {g}^3: run {}/{repeat}", rep + 1);
        // copy into a new array
        let copy_root = tmp.path().join("copy.zarr");
        let (t, ()) = time(|| copy_to_new(store.clone(), &copy_root, n, &new))?;
        row.copy.push(t);
        fs::remove_dir_all(&copy_root)?;

        // shift every chunk by two rows: by renaming files, then back through the store
        let (t, ()) = time(|| rename_all(&root, g))?;
        row.rename.push(t);
        let (t, ()) = time(|| get_set_delete_all(&*store, g))?;
        row.get_set_delete.push(t);
        if store.list_prefix("c/")?.len() as u64 != g * g * g {
            return Err("the shifts lost chunks".into());
        }

        // our prepend, after the shifts' writes are flushed (as for the new chunks alone
        // below), so that their writeback does not compete with it
        rustix::fs::sync();
        let before = mtimes(&root, g)?;
        let mut a = Array::open(store.clone(), "")?;
        let (t, ()) = time(|| Ok(a.prepend_bytes(&[K, n, n], &new, 0)?))?;
        row.prepend.push(t);
        if a.stored_chunks()?.len() as u64 != g * g * g + 2 * g * g {
            return Err("prepend stored the wrong number of chunks".into());
        }
        if mtimes(&root, g)? != before {
            return Err("prepend modified an existing chunk file".into());
        }
        let mut first = vec![0u8; new.len()];
        a.read_region_bytes_into(&Region::new(vec![0; 3], vec![K, n, n])?, &mut first)?;
        if first != new {
            return Err("the prepended data reads back wrongly".into());
        }

        // the metadata step, on the prepended array (its chunk count included), after the
        // data written so far has been flushed, so that writeback does not compete with it
        rustix::fs::sync();
        for _ in 0..21 {
            let (t_grid, ()) = time(|| {
                let (config, shape) =
                    zarr_array::zarr_grid::prepend(&a.metadata().chunk_grid, a.shape(), 0, K)?;
                let grid = zarr_array::zarr_grid::build_grid(
                    &a.extensions().chunk_grids,
                    &config.to_def(),
                    &shape,
                )?;
                std::hint::black_box(grid);
                Ok(())
            })?;
            let (t_write, ()) = time(|| Ok(a.update_attributes(serde_json::Map::new())?))?;
            row.grid.push(t_grid);
            row.metadata.push(t_grid + t_write);
        }

        // undo the prepend (untimed): drop the new rows, restore the metadata
        store.delete_prefix("c/-2/")?;
        store.delete_prefix("c/-1/")?;
        store.set("zarr.json", &original_meta)?;

        // the new chunks alone, into a fresh array of the prepended geometry
        let fresh_root = tmp.path().join("fresh.zarr");
        let fresh = ArrayBuilder::new(vec![n + K, n, n], DataType::UInt8)
            .chunk_shape(vec![C; 3])
            .compressors(Vec::<ExtensionDef>::new())
            .lower_bound(vec![-(K as i64), 0, 0])
            .create(Arc::new(FilesystemStore::create(&fresh_root)?), "")?;
        rustix::fs::sync();
        let (t, ()) =
            time(|| Ok(fresh.write_region_bytes(&Region::new(vec![0; 3], vec![K, n, n])?, &new)?))?;
        row.new_chunks.push(t);
        fs::remove_dir_all(&fresh_root)?;
    }
    Ok(row)
}

fn main() -> std::process::ExitCode {
    let run = || -> Result<()> {
        let o = parse_args()?;
        let mut rows = Vec::new();
        for &g in &o.grids {
            rows.push((g, measure(g, o.repeat.max(1), &o.dir)?));
        }
        println!(
            "Two chunk rows prepended on axis 0, uint8, 64x64x64 chunks ([bytes], 256 KiB files), \
             FilesystemStore; wall seconds, medians of {} runs ({} rayon threads)\n",
            o.repeat.max(1),
            rayon::current_num_threads()
        );
        println!("| chunks | rename every chunk file | store get/set/delete | copy to a new array | prepend's metadata step | our prepend (whole) | new chunks alone |");
        println!("|---|---|---|---|---|---|---|");
        let mut notes = Vec::new();
        for (g, r) in rows {
            notes.push(format!(
                "{} chunks: {:.1} µs",
                g * g * g,
                median(r.grid.clone()) * 1e6
            ));
            println!(
                "| {} | {:.3} | {:.3} | {:.3} | {:.5} | {:.3} | {:.3} |",
                g * g * g,
                median(r.rename),
                median(r.get_set_delete),
                median(r.copy),
                median(r.metadata),
                median(r.prepend),
                median(r.new_chunks),
            );
        }
        println!(
            "\nOf the metadata step, the grid arithmetic alone (median): {}; the rest is \
             writing zarr.json (temporary file + rename). The metadata step is measured \
             after `sync`.",
            notes.join(", ")
        );
        Ok(())
    };
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("prepend-table: {}", zarr_array::report(&*e));
            std::process::ExitCode::FAILURE
        }
    }
}
