//! `zarr validate`: every node's metadata, every key, every stored chunk decoded (checksums
//! included), below PATH.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use zarr_array::zarr_meta::NodeMetadata;
use zarr_array::zarr_store::Store;
use zarr_array::{Array, DataType, Group, NodePath, UseConsolidated};

use crate::error::{chain, explain, CliError, Result};
use crate::progress::{outln, Progress};
use crate::store::{Access, Ctx};

#[derive(Debug, Default)]
struct Report {
    problems: Vec<String>,
    notes: Vec<String>,
    arrays: usize,
    groups: usize,
    chunks: usize,
}

/// `zarr validate`
pub fn validate(ctx: &Ctx, path: &str) -> Result<()> {
    let store = ctx.open_store(path, Access::Existing)?;
    let mut report = Report::default();
    node(ctx, &store, &NodePath::root(), &mut report)?;
    for note in &report.notes {
        outln(format!("note: {note}"));
    }
    for problem in &report.problems {
        outln(format!("problem: {problem}"));
    }
    let checked = format!(
        "{} array{}, {} group{}, {} chunk{} decoded",
        report.arrays,
        plural(report.arrays),
        report.groups,
        plural(report.groups),
        report.chunks,
        plural(report.chunks)
    );
    if report.problems.is_empty() {
        outln(format!("{path}: ok ({checked})"));
        Ok(())
    } else {
        Err(CliError::Failed {
            summary: format!(
                "{path}: {} problem{} found ({checked})",
                report.problems.len(),
                plural(report.problems.len())
            ),
        })
    }
}

/// A problem for every way the group's consolidated copy (if any) disagrees with its
/// members' own metadata.
fn consolidated(ctx: &Ctx, store: &Arc<dyn Store>, path: &NodePath, report: &mut Report) {
    let (checked, document) = check_consolidated(ctx, store, path);
    match checked {
        Ok(found) => {
            for d in found {
                report.problems.push(format!(
                    "{}: {d} (`zarr consolidate` rewrites it)",
                    shown(path, document)
                ));
            }
        }
        Err(e) => report.problems.push(format!(
            "{}: consolidated metadata: {}",
            shown(path, document),
            chain(&e)
        )),
    }
}

/// The group's disagreements, and the document holding its copy (`zarr.json`, or a v2
/// group's `.zmetadata`).
fn check_consolidated(
    ctx: &Ctx,
    store: &Arc<dyn Store>,
    path: &NodePath,
) -> (
    std::result::Result<Vec<zarr_array::Disagreement>, zarr_array::ArrayError>,
    &'static str,
) {
    let group = Group::open_consolidated(
        store.clone(),
        path.as_str(),
        &ctx.extensions,
        UseConsolidated::Ignore,
    );
    match group {
        Ok(g) => {
            let document = if g.zarr_format() == 2 {
                ".zmetadata"
            } else {
                "zarr.json"
            };
            (g.check_consolidated(), document)
        }
        Err(e) => (Err(e), "zarr.json"),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn shown(path: &NodePath, rel: &str) -> String {
    if path.as_str().is_empty() {
        rel.to_string()
    } else {
        format!("{}/{rel}", path.as_str())
    }
}

/// The metadata key of the node at `path`: `zarr.json`, else `.zarray` or `.zgroup` (Zarr v2);
/// `None` where there is none.
fn metadata_key(
    store: &dyn Store,
    path: &NodePath,
) -> std::result::Result<Option<(String, Vec<u8>)>, zarr_array::zarr_store::StoreError> {
    for name in ["zarr.json", ".zarray", ".zgroup"] {
        let key = path.key(name);
        if let Some(doc) = store.get(&key)? {
            return Ok(Some((key, doc)));
        }
    }
    Ok(None)
}

fn node(ctx: &Ctx, store: &Arc<dyn Store>, path: &NodePath, report: &mut Report) -> Result<()> {
    let (key, doc) = match metadata_key(&**store, path) {
        Ok(Some(found)) => found,
        Ok(None) => {
            report.problems.push(format!(
                "{}: no zarr.json, .zarray or .zgroup (not a Zarr node)",
                shown(path, "")
            ));
            return Ok(());
        }
        Err(e) => {
            report
                .problems
                .push(format!("{}: {}", shown(path, ""), chain(&e)));
            return Ok(());
        }
    };
    let is_group = if key.ends_with(".zgroup") {
        // the group's .zgroup and .zattrs, checked by opening it (its .zmetadata below)
        match Group::open_consolidated(
            store.clone(),
            path.as_str(),
            &ctx.extensions,
            UseConsolidated::Ignore,
        ) {
            Ok(_) => true,
            Err(e) => {
                report.problems.push(format!("{key}: {}", chain(&e)));
                return Ok(());
            }
        }
    } else if key.ends_with(".zarray") {
        false
    } else {
        match NodeMetadata::from_slice_with(&doc, &ctx.extensions.data_types) {
            Err(e) => {
                report.problems.push(format!("{key}: {}", chain(&e)));
                return Ok(());
            }
            Ok(NodeMetadata::Group(_)) => true,
            Ok(NodeMetadata::Array(_)) => false,
        }
    };
    if is_group {
        report.groups += 1;
        consolidated(ctx, store, path, report);
        let listing = match store.list_dir(&path.prefix()) {
            Ok(l) => l,
            Err(e) => {
                report.problems.push(format!("{key}: {}", chain(&e)));
                return Ok(());
            }
        };
        for child in listing.prefixes {
            let name = child.trim_end_matches('/').rsplit('/').next().unwrap_or("");
            let Ok(child_path) = path.child(name) else {
                report
                    .notes
                    .push(format!("{child}: not a valid node name, skipped"));
                continue;
            };
            match metadata_key(&**store, &child_path) {
                Ok(Some(_)) => node(ctx, store, &child_path, report)?,
                Ok(None) => report.notes.push(format!(
                    "{child}: a directory without zarr.json, .zarray or .zgroup (not a node), \
                     skipped"
                )),
                Err(e) => report.problems.push(format!("{child}: {}", chain(&e))),
            }
        }
    } else {
        report.arrays += 1;
        match Array::open_with(store.clone(), path.as_str(), &ctx.extensions) {
            Err(e) => report.problems.push(format!(
                "{key}: {}",
                explain(&e, &[path.to_string().as_str()])
            )),
            Ok(array) => chunks(ctx, &array, path, report)?,
        }
    }
    Ok(())
}

fn chunks(ctx: &Ctx, array: &Array, path: &NodePath, report: &mut Report) -> Result<()> {
    let store = array.store();
    let prefix = path.prefix();
    let keys = match store.list_prefix(&prefix) {
        Ok(k) => k,
        Err(e) => {
            report
                .problems
                .push(format!("{}: {}", shown(path, ""), chain(&e)));
            return Ok(());
        }
    };
    let encoding = match zarr_array::zarr_grid::build_key_encoding(
        &ctx.extensions.chunk_key_encodings,
        &array.metadata().chunk_key_encoding,
    ) {
        Ok(e) => e,
        Err(e) => {
            report
                .problems
                .push(format!("{}: {}", path.key("zarr.json"), chain(&e)));
            return Ok(());
        }
    };
    let rank = array.rank();
    let mut todo: Vec<(String, Vec<i64>)> = Vec::new();
    for key in keys {
        let rel = &key[prefix.len()..];
        if matches!(rel, "zarr.json" | ".zarray" | ".zattrs") {
            continue;
        }
        match encoding.decode(rel, rank) {
            Err(e) => report.problems.push(format!(
                "{key}: not a chunk key of this array ({}); delete it or move it away",
                chain(&e)
            )),
            Ok(idx) if !array.grid().contains_chunk(&idx) => report.notes.push(format!(
                "{key}: chunk {idx:?} lies outside the array's grid and is never read (a \
                 leftover of an interrupted write; harmless, may be deleted)"
            )),
            Ok(idx) => todo.push((key, idx)),
        }
    }
    report.chunks += todo.len();
    let problems = Mutex::new(Vec::<(usize, String)>::new());
    let next = AtomicUsize::new(0);
    let progress = Progress::new(todo.len() as u64, "validate", false);
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(todo.len().max(1));
    let is_bool = array.data_type() == DataType::Bool;
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((key, idx)) = todo.get(i) else { break };
                if array.data_type().is_variable_size() {
                    let problem = match array.read_chunk_vlen(idx) {
                        Err(e) => Some(format!("{key}: {}", explain(&e, &[key.as_str()]))),
                        Ok(None) => Some(format!("{key}: listed but could not be read")),
                        Ok(Some(_)) => None,
                    };
                    if let Some(p) = problem {
                        if let Ok(mut v) = problems.lock() {
                            v.push((i, p));
                        }
                    }
                    progress.inc(1);
                    continue;
                }
                let problem = match array.read_chunk_bytes(idx) {
                    Err(e) => Some(format!("{key}: {}", explain(&e, &[key.as_str()]))),
                    Ok(None) => Some(format!("{key}: listed but could not be read")),
                    Ok(Some(buf)) if is_bool => {
                        buf.as_bytes().iter().position(|&b| b > 1).map(|p| {
                            format!(
                                "{key}: element {p} is {} (a bool must be 0 or 1)",
                                buf.as_bytes()[p]
                            )
                        })
                    }
                    Ok(Some(_)) => None,
                };
                if let Some(p) = problem {
                    if let Ok(mut v) = problems.lock() {
                        v.push((i, p));
                    }
                }
                progress.inc(1);
            });
        }
    });
    progress.finish();
    let mut found = problems.into_inner().unwrap_or_default();
    found.sort();
    report.problems.extend(found.into_iter().map(|(_, p)| p));
    Ok(())
}
