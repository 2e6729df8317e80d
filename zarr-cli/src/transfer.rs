//! Moving data between arrays and memory or `.npy` files, slab by slab.
//!
//! A slab is a range of positions along axis 0 (all of every other axis), cut at chunk
//! boundaries so that each chunk row is read or written once, and grouped up to a few MiB so
//! that the library decodes many chunks of a slab in parallel.

use std::fs::File;
use std::io::{BufWriter, Write};

use zarr_array::zarr_grid::geometry::{linear_index, Region};
use zarr_array::zarr_grid::ChunkGrid;
use zarr_array::{Array, DataType};

use crate::error::{try_alloc, zarr, CliError, Result};
use crate::npy;
use crate::progress::Progress;

/// The byte size slabs of imports and writes are grouped up to.
const SLAB_TARGET: u64 = 16 << 20;

/// The byte size an export's slabs are grouped up to within `budget`: a quarter of it (an
/// export holds a slab being read, one read ahead and one being written), at most 256 MiB
/// (what the default budget of 1 GiB gives). On an object store each slab waits a round
/// trip for its chunks, so an array of a few slabs exports in as few round trips.
fn export_slab_target(budget: u64) -> u64 {
    (budget / 4).min(256 << 20)
}

/// Position ranges `[a, b)` along axis 0 covering `[start, end)`, cut at the chunk boundaries
/// of `grid` and grouped up to `target` bytes (`row_bytes` bytes per position).
pub fn slabs(
    grid: &dyn ChunkGrid,
    start: u64,
    end: u64,
    row_bytes: u64,
    target: u64,
) -> Vec<(u64, u64)> {
    if start >= end {
        return Vec::new();
    }
    let ranges = grid.grid_range();
    if ranges.is_empty() || ranges.iter().skip(1).any(|r| r.start >= r.end) {
        // 0-d, or another axis has length 0: one slab
        return vec![(start, end)];
    }
    // only the chunk rows that [start, end) touches
    let row_of = |p: u64| {
        let mut pos = vec![0u64; ranges.len()];
        pos[0] = p;
        grid.chunk_of(&pos).ok().map(|(g, _)| g[0])
    };
    let (Some(first), Some(last)) = (row_of(start), row_of(end - 1)) else {
        return vec![(start, end)];
    };
    let mut index: Vec<i64> = ranges.iter().map(|r| r.start).collect();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for g in first..=last {
        index[0] = g;
        let Some(region) = grid.chunk_region(&index) else {
            continue;
        };
        let a = region.start[0].max(start);
        let b = (region.start[0] + region.shape[0]).min(end);
        if a >= b {
            continue;
        }
        // group consecutive chunk rows up to the target size
        match out.last_mut() {
            Some(last) if last.1 == a && (b - last.0).saturating_mul(row_bytes) <= target => {
                last.1 = b
            }
            _ => out.push((a, b)),
        }
    }
    // the slabs must cover [start, end) exactly; anything else means one slab
    let covered = out.first().is_some_and(|f| f.0 == start)
        && out.last().is_some_and(|l| l.1 == end)
        && out.windows(2).all(|w| w[0].1 == w[1].0);
    if covered {
        out
    } else {
        vec![(start, end)]
    }
}

/// Bytes of one position along axis 0 of a region of `shape`.
fn row_bytes(shape: &[u64], elem: usize) -> u64 {
    shape
        .iter()
        .skip(1)
        .fold(elem as u64, |acc, &n| acc.saturating_mul(n))
}

/// Checks that a region of `shape` fits in memory, returning its byte length.
pub fn byte_len(shape: &[u64], elem: usize) -> Result<usize> {
    shape
        .iter()
        .try_fold(elem as u64, |acc, &n| acc.checked_mul(n))
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| CliError::input(format!("a region of shape {shape:?} is too large")))
}

/// The memory budget of export, import and convert when `--max-memory` is not given.
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 30;

/// The pieces `region` is moved in, each read (or written) in one call: slabs of whole chunk
/// rows (see [`slabs`]) when a chunk row fits in `budget`, else each chunk's part of the
/// region (written to the file at its offsets).
enum Pieces {
    Slabs(Vec<(u64, u64)>),
    Parts,
}

/// How to move `region` of `array` within `budget` bytes of buffer.
///
/// # Errors
/// [`CliError::OverBudget`] when one chunk's part does not fit in the budget.
/// The largest chunk buffer's shape: the chunk shape, or on a grid whose chunks differ
/// (rectilinear), the longest edge of each axis.
fn largest_chunk(array: &Array) -> Vec<u64> {
    if let Some(shape) = array.chunk_shape() {
        return shape;
    }
    match array
        .grid()
        .as_any()
        .downcast_ref::<zarr_array::zarr_grid::RectilinearChunkGrid>()
    {
        Some(r) => r
            .config()
            .distinct_edges()
            .iter()
            .map(|sizes| sizes.last().copied().unwrap_or(1))
            .collect(),
        None => array.codecs().repr().shape.clone(),
    }
}

fn pieces(array: &Array, region: &Region, budget: u64) -> Result<Pieces> {
    let elem = array.data_type().size();
    let rb = row_bytes(&region.shape, elem);
    let s0 = region.start[0];
    let target = export_slab_target(budget);
    let slabs = slabs(array.grid(), s0, s0 + region.shape[0], rb, target);
    if slabs
        .iter()
        .all(|&(a, b)| (b - a).saturating_mul(rb) <= budget)
    {
        return Ok(Pieces::Slabs(slabs));
    }
    // one chunk's part of the region (at most a chunk) must fit
    let largest = largest_chunk(array);
    let chunk: Vec<u64> = largest
        .iter()
        .zip(&region.shape)
        .map(|(&c, &n)| c.min(n))
        .collect();
    let needed = chunk
        .iter()
        .fold(elem as u64, |acc, &n| acc.saturating_mul(n));
    if needed > budget {
        return Err(CliError::OverBudget {
            what: format!("one chunk (shape {largest:?})"),
            needed,
            budget,
        });
    }
    Ok(Pieces::Parts)
}

/// Refuses to write `needed` bytes to `path` when its filesystem has less free (counting the
/// space of a file at `path` that the write replaces).
fn check_space(path: &str, needed: u64) -> Result<()> {
    let dir = std::path::Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let free = fs4::available_space(dir).map_err(|e| CliError::io(path, e))?;
    // a file being replaced gives its space back when it is truncated
    let replaced = std::fs::metadata(path).map_or(0, |m| if m.is_file() { m.len() } else { 0 });
    let available = free.saturating_add(replaced);
    if needed > available {
        return Err(CliError::NoSpace {
            path: path.to_string(),
            needed,
            available,
        });
    }
    Ok(())
}

/// [`export_npy`] of a `string` or `variable_length_bytes` array: NumPy's fixed-width
/// `<U<n>` or `|S<n>` ([`npy::NpyStrings`]), read whole (its elements, counted at 32 bytes
/// each plus their text, must fit in `budget`).
fn export_strings(
    array: &Array,
    location: &str,
    region: &Region,
    out_shape: &[u64],
    out_path: &str,
    budget: u64,
) -> Result<()> {
    let count = region
        .shape
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n))
        .unwrap_or(u64::MAX);
    if count.saturating_mul(32) > budget {
        return Err(CliError::OverBudget {
            what: format!("the {count} strings of the export"),
            needed: count.saturating_mul(32),
            budget,
        });
    }
    let items: Vec<Vec<u8>> = match array.data_type() {
        DataType::String => array
            .read_region_vlen::<String>(region)
            .map_err(|e| zarr(location, e))?
            .into_iter()
            .map(String::into_bytes)
            .collect(),
        _ => array
            .read_region_vlen::<Vec<u8>>(region)
            .map_err(|e| zarr(location, e))?
            .into_iter()
            .collect(),
    };
    let file = npy::NpyStrings {
        data_type: array.data_type(),
        shape: out_shape.to_vec(),
        items,
    };
    // refused: an element ending in NUL, which NumPy would read back without it
    let bytes = file
        .to_bytes()
        .map_err(|e| CliError::input(format!("{location}: {e}")))?;
    check_space(out_path, bytes.len() as u64)?;
    std::fs::write(out_path, bytes).map_err(|e| CliError::io(out_path, e))
}

/// Reads `region` of `array` and writes it to the `.npy` file `out_path` with the shape
/// `out_shape` (the region's, less the axes selected by a single index), holding at most
/// `budget` bytes of the array at a time: whole chunk rows when one fits, else chunk by
/// chunk, each chunk's rows written at their offsets in the file. The file's size is checked
/// against the free space of its filesystem before anything is written.
///
/// # Errors
/// Library errors, the file's, [`CliError::NoSpace`], [`CliError::OverBudget`] (one chunk
/// larger than the budget), [`CliError::Input`] for a region whose size overflows.
pub fn export_npy(
    array: &Array,
    location: &str,
    region: &Region,
    out_shape: &[u64],
    out_path: &str,
    budget: u64,
) -> Result<()> {
    let t = array.data_type();
    if t.is_variable_size() {
        return export_strings(array, location, region, out_shape, out_path, budget);
    }
    let elem = t.size();
    let total = region
        .shape
        .iter()
        .try_fold(elem as u64, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| {
            CliError::input(format!(
                "a region of shape {:?} holds more than 2^64 bytes",
                region.shape
            ))
        })?;
    let header = npy::header(t, out_shape);
    check_space(out_path, total.saturating_add(header.len() as u64))?;
    let pieces = if region.rank() == 0 || total == 0 {
        Pieces::Slabs(Vec::new())
    } else {
        pieces(array, region, budget)?
    };
    let file = File::create(out_path).map_err(|e| CliError::io(out_path, e))?;
    let result = (|| -> Result<()> {
        let mut w = BufWriter::new(file);
        w.write_all(&header)
            .map_err(|e| CliError::io(out_path, e))?;
        let progress = Progress::new(total, "export", true);
        let read = |piece: &Region| -> Result<Vec<u8>> {
            let n = piece
                .shape
                .iter()
                .fold(elem as u64, |acc, &n| acc.saturating_mul(n));
            let mut buf = try_alloc(n, "a piece of the export", true)?;
            array
                .read_region_bytes_into(piece, &mut buf)
                .map_err(|e| zarr(location, e))?;
            Ok(buf)
        };
        match pieces {
            _ if region.rank() == 0 => {
                let buf = read(region)?;
                npy::write_le(&mut w, t, &buf).map_err(|e| CliError::io(out_path, e))?;
            }
            Pieces::Slabs(slabs) => {
                let slab_of = |(a, b): (u64, u64)| {
                    let mut slab = region.clone();
                    slab.start[0] = a;
                    slab.shape[0] = b - a;
                    slab
                };
                let mut write = |buf: Vec<u8>| -> Result<()> {
                    npy::write_le(&mut w, t, &buf).map_err(|e| CliError::io(out_path, e))?;
                    progress.inc(buf.len() as u64);
                    Ok(())
                };
                // the next slab is read (its chunks fetched and decoded) while this one is
                // written, when three slabs fit in the budget
                let rb = row_bytes(&region.shape, elem);
                let largest = slabs.iter().map(|&(a, b)| (b - a) * rb).max();
                if slabs.len() > 1 && largest.is_some_and(|n| n.saturating_mul(3) <= budget) {
                    std::thread::scope(|scope| -> Result<()> {
                        let (tx, rx) = std::sync::mpsc::sync_channel(1);
                        scope.spawn(move || {
                            for &piece in &slabs {
                                let read = read(&slab_of(piece));
                                let failed = read.is_err();
                                // the writer stopped (it failed): nothing more to read
                                if tx.send(read).is_err() || failed {
                                    return;
                                }
                            }
                        });
                        for buf in rx {
                            write(buf?)?;
                        }
                        Ok(())
                    })?;
                } else {
                    for piece in slabs {
                        write(read(&slab_of(piece))?)?;
                    }
                }
            }
            Pieces::Parts => {
                let mut file = w
                    .into_inner()
                    .map_err(|e| CliError::io(out_path, e.into_error()))?;
                file.set_len(header.len() as u64 + total)
                    .map_err(|e| CliError::io(out_path, e))?;
                let parts = array
                    .grid()
                    .chunks_in_region(region)
                    .map_err(|e| zarr(location, e.into()))?;
                for part in parts {
                    // in_region is relative to the region's start
                    let mut piece = part.in_region.clone();
                    for (p, s) in piece.start.iter_mut().zip(&region.start) {
                        *p += s;
                    }
                    let mut buf = read(&piece)?;
                    npy::native_to_le(t, &mut buf);
                    let at = header.len() as u64;
                    write_part(&mut file, at, &region.shape, &part.in_region, &buf, elem)
                        .map_err(|e| CliError::io(out_path, e))?;
                    progress.inc(buf.len() as u64);
                }
                w = BufWriter::new(file);
            }
        }
        progress.finish();
        w.flush().map_err(|e| CliError::io(out_path, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(out_path);
    }
    result
}

/// Writes `data` (the C-order elements of `part`, a region of an array of shape `whole`) into
/// the C-order file of that array whose elements start at byte `offset`: one write per run
/// along the last axis.
fn write_part(
    file: &mut File,
    offset: u64,
    whole: &[u64],
    part: &Region,
    data: &[u8],
    elem: usize,
) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let rank = whole.len();
    let run = part.shape[rank - 1] as usize * elem;
    if run == 0 {
        return Ok(());
    }
    let mut pos = part.start.clone();
    for piece in data.chunks_exact(run) {
        let at = linear_index(&pos, whole) * elem as u64;
        file.seek(SeekFrom::Start(offset + at))?;
        file.write_all(piece)?;
        // the next run: the axes before the last, in C order
        for d in (0..rank - 1).rev() {
            pos[d] += 1;
            if pos[d] < part.start[d] + part.shape[d] {
                break;
            }
            pos[d] = part.start[d];
        }
    }
    Ok(())
}

/// Refuses a `.npy` file that cannot be read within `budget`: one position along the axis it
/// stores slowest is the least [`import_npy`] reads at a time.
///
/// # Errors
/// [`CliError::OverBudget`].
pub fn check_import_budget(npy: &npy::NpyFile, budget: u64) -> Result<()> {
    let rb = npy.slab_row_bytes();
    if rb > budget {
        return Err(CliError::OverBudget {
            what: format!(
                "one position along axis {} of a .npy of shape {:?}",
                npy.slow_axis(),
                npy.shape
            ),
            needed: rb,
            budget,
        });
    }
    Ok(())
}

/// Writes the `.npy` file `npy` (already open) into `array` (of its shape and
/// data type) at the origin, reading at most `budget` bytes of the file at a time: slabs along
/// the axis the file stores slowest (axis 0 in C order, the last in Fortran order), cut at
/// the array's chunk boundaries on axis 0 when they fit.
///
/// # Errors
/// The file's, the library's, [`CliError::OverBudget`] when one position along the slow axis
/// is larger than the budget.
pub fn import_npy(
    array: &Array,
    location: &str,
    npy: &mut npy::NpyFile,
    budget: u64,
) -> Result<()> {
    let shape = npy.shape.clone();
    let total = shape
        .iter()
        .fold(npy.data_type.size() as u64, |acc, &n| acc.saturating_mul(n));
    let progress = Progress::new(total, "import", true);
    if total == 0 {
        // an empty axis: nothing to write
        progress.finish();
        return Ok(());
    }
    if shape.is_empty() {
        // 0-d: one element
        let data = npy.read_slab(0, 1)?;
        array
            .write_region_bytes(&Region::whole(&shape), &data)
            .map_err(|e| zarr(location, e))?;
        progress.finish();
        return Ok(());
    }
    check_import_budget(npy, budget)?;
    let slow = npy.slow_axis();
    let rb = npy.slab_row_bytes();
    let len = shape[slow];
    let cuts: Vec<(u64, u64)> = if slow == 0 {
        slabs(array.grid(), 0, len, rb, SLAB_TARGET)
    } else {
        vec![(0, len)]
    };
    let step = (budget / rb).max(1);
    for (a, b) in cuts {
        let mut at = a;
        while at < b {
            let end = b.min(at + step);
            let data = npy.read_slab(at, end)?;
            let mut piece = Region::whole(&shape);
            piece.start[slow] = at;
            piece.shape[slow] = end - at;
            array
                .write_region_bytes(&piece, &data)
                .map_err(|e| zarr(location, e))?;
            progress.inc(data.len() as u64);
            at = end;
        }
    }
    progress.finish();
    Ok(())
}

/// Writes `data` (C order, native byte order, shape `shape`) into `array` at `start`.
///
/// # Errors
/// Library errors (a block outside the array, store or codec failures).
pub fn write_block(
    array: &Array,
    location: &str,
    start: &[u64],
    shape: &[u64],
    data: &[u8],
    label: &str,
) -> Result<()> {
    let elem = array.data_type().size();
    let region =
        Region::new(start.to_vec(), shape.to_vec()).map_err(|e| zarr(location, e.into()))?;
    let progress = Progress::new(data.len() as u64, label, true);
    if shape.is_empty() || data.is_empty() {
        array
            .write_region_bytes(&region, data)
            .map_err(|e| zarr(location, e))?;
    } else {
        let rb = row_bytes(shape, elem);
        for (a, b) in slabs(array.grid(), start[0], start[0] + shape[0], rb, SLAB_TARGET) {
            let mut slab = region.clone();
            slab.start[0] = a;
            slab.shape[0] = b - a;
            let lo = ((a - start[0]) * rb) as usize;
            let hi = ((b - start[0]) * rb) as usize;
            array
                .write_region_bytes(&slab, &data[lo..hi])
                .map_err(|e| zarr(location, e))?;
            progress.inc((hi - lo) as u64);
        }
    }
    progress.finish();
    Ok(())
}

/// Copies the data of `src` into `dst` (same shape and data type): each of `dst`'s chunks
/// that meets a stored chunk of `src`, whole ([`Array::copy_to`]; the others hold the fill
/// value both share).
///
/// # Errors
/// Library errors.
pub fn copy_array(src: &Array, src_loc: &str, dst: &Array, dst_loc: &str) -> Result<()> {
    let elem = src.data_type().size();
    let total = src
        .shape()
        .iter()
        .fold(elem as u64, |acc, &n| acc.saturating_mul(n));
    // an upper bound: the chunks holding only the fill value are not copied
    let progress = Progress::new(total, "convert", true);
    src.copy_to_with(dst, &|bytes| progress.inc(bytes))
        .map_err(|e| zarr(format!("{src_loc} -> {dst_loc}"), e))?;
    progress.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarr_array::zarr_grid::{build_grid, default_registry};
    use zarr_array::ExtensionDef;

    fn grid(json: &str, shape: &[u64]) -> Box<dyn ChunkGrid> {
        let def: ExtensionDef = serde_json::from_str(json).unwrap();
        build_grid(&default_registry(), &def, shape).unwrap()
    }

    #[test]
    fn slabs_follow_chunk_rows() {
        let g = grid(
            r#"{"name": "regular", "configuration": {"chunk_shape": [4, 4]}}"#,
            &[10, 4],
        );
        assert_eq!(slabs(&*g, 0, 10, 16, SLAB_TARGET), vec![(0, 10)]);
        assert_eq!(
            slabs(&*g, 0, 10, SLAB_TARGET, SLAB_TARGET),
            vec![(0, 4), (4, 8), (8, 10)]
        );
        assert_eq!(
            slabs(&*g, 3, 9, SLAB_TARGET, SLAB_TARGET),
            vec![(3, 4), (4, 8), (8, 9)]
        );
        assert_eq!(slabs(&*g, 5, 5, 16, SLAB_TARGET), Vec::<(u64, u64)>::new());
        let b = grid(
            r#"{"name": "regular_bounded", "configuration": {"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": [-3, 0]}}"#,
            &[9, 4],
        );
        assert_eq!(
            slabs(&*b, 0, 9, SLAB_TARGET, SLAB_TARGET),
            vec![(0, 3), (3, 7), (7, 9)]
        );
        // a small region of a huge axis visits only its own chunk rows
        let h = grid(
            r#"{"name": "regular", "configuration": {"chunk_shape": [10]}}"#,
            &[1 << 50],
        );
        assert_eq!(slabs(&*h, 5, 25, 1, SLAB_TARGET), vec![(5, 25)]);
    }
}
