//! `zarr import` and `zarr export` of sparse matrices (zarr-sparse-io): Matrix Market, SciPy
//! `.npz`, anndata and binsparse groups, streamed within `--max-memory`, with a progress bar.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use zarr_array::zarr_layout_sparse::Format;
use zarr_array::Array;
use zarr_sparse_io::{
    ExportOptions, GroupKind, ImportOptions, Layout, Progress as Tell, Proposed, SparseIoError,
};

use crate::cli::{ExportArgs, FileFormat, ImportArgs, SparseLayout};
use crate::error::{CliError, Result};
use crate::layout::{self, SparseFormat};
use crate::progress::{outln, Progress};
use crate::store::{Access, Ctx};

/// The format of a file or location, from `--format` or its name; `None` for a name that
/// says nothing (a directory or url).
pub fn format_of(name: &str, flag: Option<FileFormat>) -> Option<FileFormat> {
    if flag.is_some() {
        return flag;
    }
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".npy") {
        Some(FileFormat::Npy)
    } else if lower.ends_with(".mtx") || lower.ends_with(".mtx.gz") {
        Some(FileFormat::Mtx)
    } else if lower.ends_with(".npz") {
        Some(FileFormat::Npz)
    } else {
        None
    }
}

/// A sparse conversion's error as the command shows it (exit code 1).
fn cli(e: SparseIoError) -> CliError {
    match e {
        SparseIoError::OverBudget {
            what,
            needed,
            budget,
        } => CliError::OverBudget {
            what,
            needed,
            budget,
        },
        other => CliError::input(other.to_string()),
    }
}

/// A progress bar made when the first report says the total.
fn bar(label: &'static str, bytes: bool) -> (Tell, Arc<OnceLock<Progress>>) {
    let cell: Arc<OnceLock<Progress>> = Arc::new(OnceLock::new());
    let held = cell.clone();
    let tell: Tell = Arc::new(move |n, total| {
        held.get_or_init(|| Progress::new(total, label, bytes))
            .inc(n);
    });
    (tell, cell)
}

/// `zarr import` of a sparse matrix.
///
/// # Errors
/// Bad input (naming its place), options that contradict the matrix, store errors; the
/// array is removed on error.
pub fn import(ctx: &Ctx, a: &ImportArgs, format: Option<FileFormat>, budget: u64) -> Result<()> {
    let src = a.npy.display().to_string();
    if a.dtype.is_some() && format != Some(FileFormat::Mtx) {
        return Err(CliError::usage(
            "--dtype applies to Matrix Market input only (other formats keep their values' type)",
        ));
    }
    let layout_of = |s: Option<SparseFormat>| match s {
        Some(SparseFormat::Coo) => Format::Coo,
        Some(SparseFormat::Csc) => Format::Csc,
        Some(SparseFormat::Csr) | None => Format::Csr,
    };
    let (tell, held) = bar("importing", format == Some(FileFormat::Mtx));
    let opts = ImportOptions {
        max_memory: budget,
        chunks: a.chunks.clone(),
        layout: layout_of(a.opts.sparse),
        data_type: a.dtype,
        temp_dir: a.temp_dir.clone(),
        progress: Some(tell),
    };
    let mut create = |p: &Proposed| -> std::result::Result<Array, zarr_sparse_io::CreateError> {
        let mut o = a.opts.clone();
        o.sparse = Some(match p.layout {
            Format::Coo => SparseFormat::Coo,
            Format::Csc => SparseFormat::Csc,
            Format::Csr => SparseFormat::Csr,
        });
        let mut b = layout::builder(&p.shape, p.data_type, Some(&p.chunks), &o)
            .map_err(|e| e.one_line())?;
        if o.codecs.is_empty() {
            // the import's own default (zstd level 1), not the other commands' zstd:0
            b = b.compressors(p.compressors());
        }
        ctx.create_array(&a.path, &b)
            .map_err(|e| e.one_line().into())
    };
    let result = match format {
        Some(FileFormat::Mtx) => zarr_sparse_io::import_mtx(&a.npy, &opts, &mut create),
        Some(FileFormat::Npz) => zarr_sparse_io::import_npz(&a.npy, &opts, &mut create),
        _ => {
            let store = ctx.open_store(&src, Access::Existing)?;
            zarr_sparse_io::import_group(store, "", &src, &opts, &mut create)
        }
    };
    if let Some(p) = held.get() {
        p.finish();
    }
    let array = result.map_err(cli)?;
    outln(format!(
        "imported {src} into {}: {}",
        a.path,
        crate::commands::summary(&array)
    ));
    Ok(())
}

/// `zarr export` of a 2-d sparse array.
///
/// # Errors
/// An array that is not 2-d and sparse, options that do not apply, store and file errors;
/// nothing is left at the output on error.
pub fn export(ctx: &Ctx, a: &ExportArgs, format: FileFormat, budget: u64) -> Result<()> {
    if a.region.is_some() {
        return Err(CliError::usage(
            "--region applies to .npy exports only (a sparse export writes the whole matrix)",
        ));
    }
    let array = ctx.open_array(&a.path)?;
    let layout = match a.layout {
        Some(SparseLayout::Csc) => Layout::Csc,
        Some(SparseLayout::Coo) => Layout::Coo,
        Some(SparseLayout::Csr) | None => Layout::Csr,
    };
    let group = matches!(format, FileFormat::Anndata | FileFormat::Binsparse);
    if a.element.is_some() && format != FileFormat::Anndata {
        return Err(CliError::usage(
            "--element applies to --format anndata only",
        ));
    }
    if a.zarr_format.is_some() && !group {
        return Err(CliError::usage(
            "--zarr-format applies to anndata and binsparse exports only",
        ));
    }
    if a.layout.is_some() && format == FileFormat::Mtx {
        return Err(CliError::usage(
            "--layout applies to .npz, anndata and binsparse exports (Matrix Market files are coordinate lists)",
        ));
    }
    let (tell, held) = bar("exporting", false);
    let opts = ExportOptions {
        max_memory: budget,
        temp_dir: a.temp_dir.clone(),
        progress: Some(tell),
    };
    let out = Path::new(&a.npy);
    let result = match format {
        FileFormat::Mtx => zarr_sparse_io::export_mtx(&array, out, &opts),
        FileFormat::Npz => zarr_sparse_io::export_npz(&array, out, layout, &opts),
        FileFormat::Anndata | FileFormat::Binsparse => {
            let kind = if format == FileFormat::Binsparse {
                GroupKind::Binsparse
            } else {
                GroupKind::Anndata {
                    element: a.element.clone().unwrap_or_else(|| "X".into()),
                }
            };
            let store = ctx.open_store(&a.npy, Access::Create)?;
            let zf = a.zarr_format.unwrap_or(3);
            zarr_sparse_io::export_group(&array, store, "", &kind, layout, zf, &opts)
        }
        FileFormat::Npy => {
            return Err(CliError::usage(
                "a .npy export is dense: it does not go through the sparse export",
            ))
        }
    };
    if let Some(p) = held.get() {
        p.finish();
    }
    result.map_err(cli)?;
    outln(format!("exported {} to {}", a.path, a.npy));
    Ok(())
}
