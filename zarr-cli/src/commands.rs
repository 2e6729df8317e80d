//! The subcommands that create arrays and move data: create, import, export, write, append,
//! prepend, resize.

use std::path::Path;

use zarr_array::ndarray::{ArrayD, IxDyn};
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_meta::DataKind;
use zarr_array::{Array, DataType};

use crate::cli::{CreateArgs, ExportArgs, FileFormat, GrowArgs, ImportArgs, ResizeArgs, WriteArgs};
use crate::error::{zarr, CliError, Result};
use crate::layout;
use crate::npy::{Npy, NpyFile, NpyStrings};
use crate::progress::outln;
use crate::sparse;
use crate::store::Ctx;
use crate::transfer;

/// Reads and parses a `.npy` file.
///
/// # Errors
/// A missing or unreadable file, or a malformed one.
pub fn read_npy(path: &Path) -> Result<Npy> {
    Npy::parse(&read_file(path)?).map_err(|source| CliError::Npy {
        path: path.display().to_string(),
        source,
    })
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        let shown = path.display().to_string();
        if e.kind() == std::io::ErrorKind::NotFound {
            CliError::input(format!("{shown}: no such file"))
        } else {
            CliError::io(&shown, e)
        }
    })
}

/// A block of data to write into an array: fixed-size elements, or the strings / byte strings
/// of a `string` / `variable_length_bytes` array.
enum Block {
    Fixed(Npy),
    Strings(ArrayD<String>),
    Bytes(ArrayD<Vec<u8>>),
}

impl Block {
    fn shape(&self) -> Vec<u64> {
        let dims = |d: &[usize]| d.iter().map(|&n| n as u64).collect();
        match self {
            Block::Fixed(npy) => npy.shape.clone(),
            Block::Strings(d) => dims(d.shape()),
            Block::Bytes(d) => dims(d.shape()),
        }
    }

    /// Writes the block into `region` of `array` (the block's shape), in memory at once.
    fn write_into(&self, array: &Array, region: &Region) -> zarr_array::Result<()> {
        match self {
            Block::Fixed(npy) => array.write_region_bytes(region, &npy.data),
            Block::Strings(d) => array.write_region_vlen(region, d.view()),
            Block::Bytes(d) => array.write_region_vlen(region, d.view()),
        }
    }

    /// NumPy's fixed-width strings as the elements of a variable-size array.
    fn from_strings(npy: NpyStrings, shown: &str) -> Result<Block> {
        let dims: Vec<usize> = npy.shape.iter().map(|&n| n as usize).collect();
        let bad = |e: zarr_array::ndarray::ShapeError| CliError::input(format!("{shown}: {e}"));
        if npy.data_type == DataType::String {
            // the elements of a `U` file are UTF-8 (made from code points)
            let items: Vec<String> = npy
                .items
                .into_iter()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .collect();
            ArrayD::from_shape_vec(IxDyn(&dims), items)
                .map(Block::Strings)
                .map_err(bad)
        } else {
            ArrayD::from_shape_vec(IxDyn(&dims), npy.items)
                .map(Block::Bytes)
                .map_err(bad)
        }
    }
}

/// The `.npy` at `npy_path` as a block for `array`: of its data type, or for a `string` /
/// `variable_length_bytes` array NumPy's `<U<n>` / `|S<n>` (read whole).
fn read_block(npy_path: &Path, array: &Array, location: &str) -> Result<Block> {
    if !array.data_type().is_variable_size() {
        let npy = read_npy(npy_path)?;
        check_dtype(&npy, npy_path, array, location)?;
        return Ok(Block::Fixed(npy));
    }
    let shown = npy_path.display().to_string();
    let npy = NpyStrings::parse(&read_file(npy_path)?).map_err(|source| CliError::Npy {
        path: shown.clone(),
        source,
    })?;
    if npy.data_type != array.data_type() {
        return Err(CliError::input(format!(
            "{shown} holds {} but the array at {location} holds {} (strings go into string \
             arrays as <U<n>, byte strings into variable_length_bytes arrays as |S<n>)",
            if npy.data_type == DataType::String {
                "strings (<U)"
            } else {
                "byte strings (|S)"
            },
            array.data_type()
        )));
    }
    Block::from_strings(npy, &shown)
}

/// `[a, b) x [c, d)`
pub fn fmt_domain(domain: &[(i64, i64)]) -> String {
    if domain.is_empty() {
        return "a single element (0-d)".into();
    }
    domain
        .iter()
        .map(|(a, b)| format!("[{a}, {b})"))
        .collect::<Vec<_>>()
        .join(" x ")
}

fn check_dtype(npy: &Npy, npy_path: &Path, array: &Array, location: &str) -> Result<()> {
    if npy.data_type != array.data_type() {
        return Err(CliError::input(format!(
            "{} holds {} but the array at {location} holds {} (convert the data first, e.g. \
             numpy's astype(\"{}\"))",
            npy_path.display(),
            npy.data_type,
            array.data_type(),
            array.data_type()
        )));
    }
    Ok(())
}

pub(crate) fn summary(array: &Array) -> String {
    format!(
        "{} {:?}, {}, domain {}",
        array.data_type(),
        array.shape(),
        crate::info::chunking(array),
        fmt_domain(&array.domain())
    )
}

/// `zarr create`
pub fn create(ctx: &Ctx, a: &CreateArgs) -> Result<()> {
    let b = layout::builder(&a.shape, a.dtype, Some(&a.chunks), &a.opts)?;
    let array = ctx.create_array(&a.path, &b)?;
    outln(format!("created {}: {}", a.path, summary(&array)));
    Ok(())
}

/// `zarr import`
pub fn import(ctx: &Ctx, a: &ImportArgs) -> Result<()> {
    let budget = a.max_memory.unwrap_or(transfer::DEFAULT_MAX_MEMORY);
    // a name without a known extension: a file is a .npy (as before sparse formats), a
    // directory or url an anndata or binsparse group
    let format = sparse::format_of(&a.npy.display().to_string(), a.format)
        .or_else(|| a.npy.is_file().then_some(FileFormat::Npy));
    if format != Some(FileFormat::Npy) {
        return sparse::import(ctx, a, format, budget);
    }
    if a.dtype.is_some() {
        return Err(CliError::usage(
            "--dtype applies to Matrix Market input only (a .npy file keeps its type)",
        ));
    }
    let mut npy = NpyFile::open(&a.npy)?;
    if matches!(
        npy.data_type.kind(),
        DataKind::FixedLengthUtf32 | DataKind::NullTerminatedBytes
    ) && !a.fixed_width
    {
        return import_strings(ctx, a, budget);
    }
    transfer::check_import_budget(&npy, budget)?;
    npy.check_data(budget)?;
    let b = layout::builder(&npy.shape, npy.data_type, a.chunks.as_deref(), &a.opts)?;
    let array = ctx.create_array(&a.path, &b)?;
    transfer::import_npy(&array, &a.path, &mut npy, budget)?;
    outln(format!(
        "imported {} into {}: {}",
        a.npy.display(),
        a.path,
        summary(&array)
    ));
    Ok(())
}

/// `zarr import` of NumPy's fixed-width strings (`<U<n>`, `|S<n>`) into a `string` or
/// `variable_length_bytes` array (codec `vlen-utf8` / `vlen-bytes`), read whole: the file
/// must fit in the memory budget.
fn import_strings(ctx: &Ctx, a: &ImportArgs, budget: u64) -> Result<()> {
    let shown = a.npy.display().to_string();
    let size = std::fs::metadata(&a.npy)
        .map_err(|e| CliError::io(&shown, e))?
        .len();
    if size > budget {
        return Err(CliError::OverBudget {
            what: format!("the strings of {shown}"),
            needed: size,
            budget,
        });
    }
    let bytes = std::fs::read(&a.npy).map_err(|e| CliError::io(&shown, e))?;
    let npy = NpyStrings::parse(&bytes).map_err(|source| CliError::Npy {
        path: shown.clone(),
        source,
    })?;
    let b = layout::builder(&npy.shape, npy.data_type, a.chunks.as_deref(), &a.opts)?;
    let array = ctx.create_array(&a.path, &b)?;
    let whole = Region::whole(&npy.shape);
    Block::from_strings(npy, &shown)?
        .write_into(&array, &whole)
        .map_err(|e| zarr(&a.path, e))?;
    outln(format!(
        "imported {} into {}: {}",
        a.npy.display(),
        a.path,
        summary(&array)
    ));
    Ok(())
}

/// One axis of `--region`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RegionItem {
    Range(Option<u64>, Option<u64>),
    Index(u64),
}

fn parse_region_items(spec: &str) -> Result<Vec<RegionItem>> {
    let bad = |item: &str| {
        CliError::usage(format!(
            "--region {spec}: {item:?} is not START:STOP, START:, :STOP, : or an INDEX \
             (zero-based positions, like 0:3,1:4)"
        ))
    };
    if spec.trim().is_empty() {
        return Ok(Vec::new());
    }
    spec.split(',')
        .map(|item| {
            let item = item.trim();
            let num = |s: &str| -> Result<Option<u64>> {
                let s = s.trim();
                if s.is_empty() {
                    Ok(None)
                } else {
                    s.parse::<u64>().map(Some).map_err(|_| bad(item))
                }
            };
            match item.split_once(':') {
                Some((a, b)) => Ok(RegionItem::Range(num(a)?, num(b)?)),
                None => num(item)?.map(RegionItem::Index).ok_or_else(|| bad(item)),
            }
        })
        .collect()
}

/// The region `--region` selects and the exported shape (single indices drop their axis).
fn resolve_region(spec: Option<&str>, shape: &[u64]) -> Result<(Region, Vec<u64>)> {
    let items = match spec {
        Some(s) => parse_region_items(s)?,
        None => Vec::new(),
    };
    if items.len() > shape.len() {
        return Err(CliError::input(format!(
            "--region has {} axes but the array has {} (shape {shape:?})",
            items.len(),
            shape.len()
        )));
    }
    let mut start = Vec::with_capacity(shape.len());
    let mut size = Vec::with_capacity(shape.len());
    let mut out_shape = Vec::new();
    for (d, &len) in shape.iter().enumerate() {
        match items
            .get(d)
            .copied()
            .unwrap_or(RegionItem::Range(None, None))
        {
            RegionItem::Range(a, b) => {
                let (a, b) = (a.unwrap_or(0), b.unwrap_or(len));
                if a > b || b > len {
                    return Err(CliError::input(format!(
                        "--region: {a}:{b} does not fit axis {d} of length {len} (positions are \
                         zero-based, 0 to {len})"
                    )));
                }
                start.push(a);
                size.push(b - a);
                out_shape.push(b - a);
            }
            RegionItem::Index(i) => {
                if i >= len {
                    return Err(CliError::input(format!(
                        "--region: index {i} is out of bounds for axis {d} of length {len}"
                    )));
                }
                start.push(i);
                size.push(1);
            }
        }
    }
    let region = Region::new(start, size).map_err(|e| zarr("--region", e.into()))?;
    Ok((region, out_shape))
}

/// `zarr export`
pub fn export(ctx: &Ctx, a: &ExportArgs) -> Result<()> {
    let format = sparse::format_of(&a.npy, a.format).unwrap_or(FileFormat::Npy);
    if format != FileFormat::Npy {
        let budget = a.max_memory.unwrap_or(transfer::DEFAULT_MAX_MEMORY);
        return sparse::export(ctx, a, format, budget);
    }
    if a.layout.is_some() || a.element.is_some() || a.zarr_format.is_some() {
        return Err(CliError::usage(
            "--layout, --element and --zarr-format apply to sparse exports only",
        ));
    }
    let array = ctx.open_array(&a.path)?;
    let (region, out_shape) = resolve_region(a.region.as_deref(), array.shape())?;
    let budget = a.max_memory.unwrap_or(transfer::DEFAULT_MAX_MEMORY);
    transfer::export_npy(&array, &a.path, &region, &out_shape, &a.npy, budget)?;
    Ok(())
}

/// `zarr write`
pub fn write(ctx: &Ctx, a: &WriteArgs) -> Result<()> {
    let array = ctx.open_array(&a.path)?;
    let block = read_block(&a.npy, &array, &a.path)?;
    let block_shape = block.shape();
    let rank = array.rank();
    if block_shape.len() != rank {
        return Err(CliError::input(format!(
            "{} has {} dimensions (shape {:?}) but the array has {rank} (shape {:?})",
            a.npy.display(),
            block_shape.len(),
            block_shape,
            array.shape()
        )));
    }
    let at = a.at.clone().unwrap_or_else(|| vec![0; rank]);
    if at.len() != rank {
        return Err(CliError::input(format!(
            "--at has {} axes but the array has {rank}",
            at.len()
        )));
    }
    let fits = (0..rank).all(|d| {
        at[d]
            .checked_add(block_shape[d])
            .is_some_and(|end| end <= array.shape()[d])
    });
    if !fits {
        return Err(CliError::input(format!(
            "a block of shape {:?} at {at:?} does not fit the array of shape {:?} (grow it first \
             with `zarr resize` or `zarr append`)",
            block_shape,
            array.shape()
        )));
    }
    match &block {
        Block::Fixed(npy) => {
            transfer::write_block(&array, &a.path, &at, &block_shape, &npy.data, "write")?
        }
        vlen => vlen
            .write_into(
                &array,
                &Region::new(at.clone(), block_shape.clone())
                    .map_err(|e| CliError::input(e.to_string()))?,
            )
            .map_err(|e| zarr(&a.path, e))?,
    }
    outln(format!("wrote {:?} at {at:?} into {}", block_shape, a.path));
    Ok(())
}

/// `zarr append` (`front = false`) and `zarr prepend` (`front = true`).
pub fn grow(ctx: &Ctx, a: &GrowArgs, front: bool) -> Result<()> {
    let mut array = ctx.open_array_for_update(&a.path)?;
    let block = read_block(&a.npy, &array, &a.path)?;
    let block_shape = block.shape();
    let rank = array.rank();
    let verb = if front { "prepend" } else { "append" };
    if rank == 0 {
        return Err(CliError::input(format!(
            "--axis {}: the array at {} is 0-d and has no axes, so it cannot grow (to {verb} \
             values, keep them in an array of one or more dimensions)",
            a.axis, a.path
        )));
    }
    if a.axis >= rank {
        let axes = if rank == 1 {
            "1 dimension (axis 0)".to_string()
        } else {
            format!("{rank} dimensions (axes 0 to {})", rank - 1)
        };
        return Err(CliError::input(format!(
            "--axis {}: the array has {axes}",
            a.axis
        )));
    }
    let mut expected = array.shape().to_vec();
    if block_shape.len() == rank {
        expected[a.axis] = block_shape[a.axis];
    }
    if block_shape != expected {
        return Err(CliError::input(format!(
            "{} has shape {:?} but {} on axis {} needs shape {} (the array's shape {:?} on \
             every other axis)",
            a.npy.display(),
            block_shape,
            verb,
            a.axis,
            fmt_wildcard(array.shape(), a.axis),
            array.shape(),
        )));
    }
    let result = match (&block, front) {
        (Block::Fixed(npy), true) => array.prepend_bytes(&block_shape, &npy.data, a.axis),
        (Block::Fixed(npy), false) => array.append_bytes(&block_shape, &npy.data, a.axis),
        (Block::Strings(d), true) => array.prepend_vlen(d.view(), a.axis),
        (Block::Strings(d), false) => array.append_vlen(d.view(), a.axis),
        (Block::Bytes(d), true) => array.prepend_vlen(d.view(), a.axis),
        (Block::Bytes(d), false) => array.append_vlen(d.view(), a.axis),
    };
    result.map_err(|e| zarr(&a.path, e))?;
    outln(format!(
        "{} {} positions on axis {}: {}",
        if front { "prepended" } else { "appended" },
        block_shape.get(a.axis).copied().unwrap_or(0),
        a.axis,
        summary(&array)
    ));
    Ok(())
}

fn fmt_wildcard(shape: &[u64], axis: usize) -> String {
    let items: Vec<String> = shape
        .iter()
        .enumerate()
        .map(|(d, n)| if d == axis { "k".into() } else { n.to_string() })
        .collect();
    format!("[{}]", items.join(", "))
}

/// `zarr resize`
pub fn resize(ctx: &Ctx, a: &ResizeArgs) -> Result<()> {
    let mut array = ctx.open_array_for_update(&a.path)?;
    if a.shape.len() != array.rank() {
        return Err(CliError::input(format!(
            "--shape has {} dimensions but the array has {} (shape {:?})",
            a.shape.len(),
            array.rank(),
            array.shape()
        )));
    }
    array.resize(&a.shape).map_err(|e| zarr(&a.path, e))?;
    outln(format!("resized {}: {}", a.path, summary(&array)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions() {
        let (r, s) = resolve_region(Some("0:3,1:4"), &[9, 4]).unwrap();
        assert_eq!((r.start, r.shape, s), (vec![0, 1], vec![3, 3], vec![3, 3]));
        let (r, s) = resolve_region(Some("2"), &[9, 4]).unwrap();
        assert_eq!((r.start, r.shape, s), (vec![2, 0], vec![1, 4], vec![4]));
        let (r, _) = resolve_region(Some(":,2:"), &[9, 4]).unwrap();
        assert_eq!((r.start, r.shape), (vec![0, 2], vec![9, 2]));
        assert_eq!(
            resolve_region(Some("0:10"), &[9]).unwrap_err().exit_code(),
            1
        );
        assert_eq!(
            resolve_region(Some("a:b"), &[9]).unwrap_err().exit_code(),
            2
        );
        assert!(resolve_region(Some("0,0,0"), &[9, 4]).is_err());
        assert!(resolve_region(Some("9"), &[9]).is_err());
    }
}
