//! `zarr info` and `zarr tree`.

use std::sync::Arc;

use serde_json::{json, Value};
use zarr_array::zarr_store::Store;
use zarr_array::{Array, ArrayError, ExtensionDef, Group, NodeKind};

use crate::cli::InfoArgs;
use crate::commands::fmt_domain;
use crate::error::{zarr, CliError, Result};
use crate::progress::outln;
use crate::store::{Access, Ctx};

/// Storage figures of an array.
#[derive(Debug, Clone, Copy)]
pub struct Storage {
    /// Stored chunks (shards, for a sharded array); `None` when the store was not listed.
    pub chunks_stored: Option<u64>,
    /// Every chunk of the grid (`None` beyond u64).
    pub chunks_total: Option<u64>,
    /// Bytes of the stored chunks; `None` when the store was not listed.
    pub bytes_stored: Option<u64>,
    /// Bytes of the whole array, uncompressed (`None` beyond u64).
    pub nbytes: Option<u64>,
}

/// The storage figures of an array; with `list`, the stored chunks are counted and their
/// bytes summed (`Array::stored_chunk_sizes`: one listing of the array's prefix, which on a
/// remote store carries the sizes; a `size` per chunk on a directory); without, they are
/// `None` and the store is not touched.
///
/// # Errors
/// The store's.
pub fn storage(array: &Array, location: &str, list: bool) -> Result<Storage> {
    // (none for variable-size elements, whose decoded size the metadata does not give)
    let nbytes = array.data_type().fixed_size().and_then(|size| {
        array
            .shape()
            .iter()
            .try_fold(size as u64, |acc, &n| acc.checked_mul(n))
    });
    let (chunks_stored, bytes_stored) = if list {
        let stored = array.stored_chunk_sizes().map_err(|e| zarr(location, e))?;
        let bytes = stored.iter().map(|(_, size)| size).sum();
        (Some(stored.len() as u64), Some(bytes))
    } else {
        (None, None)
    };
    Ok(Storage {
        chunks_stored,
        chunks_total: array.grid().num_chunks(),
        bytes_stored,
        nbytes,
    })
}

/// A codec in one line: `zstd(level=0, checksum=false)`, shards with their inner codecs.
pub fn codec_summary(def: &ExtensionDef) -> String {
    let Some(config) = &def.configuration else {
        return def.name.clone();
    };
    if def.name == "sharding_indexed" {
        let list = |key: &str| -> String {
            config
                .get(key)
                .and_then(Value::as_array)
                .map(|v| {
                    v.iter()
                        .filter_map(|c| ExtensionDef::from_value(c, "codecs").ok())
                        .map(|d| codec_summary(&d))
                        .collect::<Vec<_>>()
                        .join(" -> ")
                })
                .unwrap_or_default()
        };
        return format!(
            "sharding_indexed(chunks {}, codecs [{}], index [{}] at {})",
            config
                .get("chunk_shape")
                .map(Value::to_string)
                .unwrap_or_default(),
            list("codecs"),
            list("index_codecs"),
            config
                .get("index_location")
                .and_then(Value::as_str)
                .unwrap_or("end")
        );
    }
    let items: Vec<String> = config
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect();
    format!("{}({})", def.name, items.join(", "))
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {} ({n} B)", UNITS[u])
    }
}

fn ratio(s: &Storage) -> Option<f64> {
    match (s.nbytes, s.bytes_stored) {
        (Some(n), Some(b)) if b > 0 => Some(n as f64 / b as f64),
        _ => None,
    }
}

/// The inner chunk shape of a sharded array (`None` when the first codec is not
/// `sharding_indexed`).
pub fn inner_chunk_shape(array: &Array) -> Option<Vec<u64>> {
    let first = array.metadata().codecs.first()?;
    if first.name != "sharding_indexed" {
        return None;
    }
    first
        .configuration
        .as_ref()?
        .get("chunk_shape")?
        .as_array()?
        .iter()
        .map(Value::as_u64)
        .collect()
}

/// The chunking in words: `chunks [4, 4]` or `shards [8, 8] of chunks [4, 4]`.
/// A grid whose chunks differ says `rectilinear` and its edges as the metadata lists them:
/// `chunks rectilinear [[2,[3,4]],4]`.
pub fn chunking(array: &Array) -> String {
    let grid = match array.chunk_shape() {
        Some(shape) => format!("{shape:?}"),
        None => {
            let edges = array
                .metadata()
                .chunk_grid
                .configuration
                .as_ref()
                .and_then(|c| c.get("chunk_shapes"))
                .map(Value::to_string)
                .unwrap_or_default();
            format!("{} {edges}", array.grid().name())
        }
    };
    match inner_chunk_shape(array) {
        Some(inner) => format!("shards {grid} of chunks {inner:?}"),
        None => format!("chunks {grid}"),
    }
}

/// The JSON object `info --json` prints for an array.
pub fn array_json(array: &Array, location: &str, s: &Storage) -> Value {
    let meta = array.metadata();
    json!({
        "path": location,
        "node_type": "array",
        "zarr_format": array.zarr_format(),
        "shape": array.shape(),
        "domain": array.domain().iter().map(|(a, b)| json!([a, b])).collect::<Vec<_>>(),
        "data_type": array.data_type().to_def().to_value(),
        "fill_value": array.fill_value().to_json(array.data_type()),
        "chunk_grid": meta.chunk_grid.to_value(),
        "chunk_shape": array.chunk_shape(),
        "inner_chunk_shape": inner_chunk_shape(array),
        "chunk_key_encoding": meta.chunk_key_encoding.to_value(),
        "codecs": meta.codecs.iter().map(ExtensionDef::to_value).collect::<Vec<_>>(),
        "dimension_names": meta.dimension_names,
        "attributes": Value::Object(meta.attributes.clone()),
        "chunks_stored": s.chunks_stored,
        "chunks_total": s.chunks_total,
        "bytes_stored": s.bytes_stored,
        "nbytes": s.nbytes,
        "ratio": ratio(s),
    })
}

/// `3 (zarr.json)` or `2 (.zarray / .zgroup; ...)`.
fn zarr_format_text(format: u8) -> String {
    match format {
        2 => "2 (.zarray / .zgroup + .zattrs; codecs shown as their v3 equivalents)".into(),
        n => format!("{n} (zarr.json)"),
    }
}

fn grid_text(def: &ExtensionDef) -> String {
    let config = def.configuration.clone().unwrap_or_default();
    let get = |k: &str| config.get(k).map(Value::to_string).unwrap_or_default();
    match def.name.as_str() {
        "regular_bounded" => format!(
            "regular_bounded, chunk shape {}, origin {}, lower bound {}",
            get("chunk_shape"),
            get("origin"),
            get("lower_bound")
        ),
        "regular" => format!("regular, chunk shape {}", get("chunk_shape")),
        other => format!("{other} {}", Value::Object(config)),
    }
}

/// `zarr info`
pub fn info(ctx: &Ctx, a: &InfoArgs) -> Result<()> {
    let store = ctx.open_store(&a.path, Access::Existing)?;
    info_in(ctx, store, a)
}

/// `zarr info` on the store `a.path` names, opened already (tests pass a store that counts
/// its requests).
///
/// An array costs one `get` (its `zarr.json`), plus, when [`InfoArgs::lists`], one listing
/// of the array and one `size` per stored chunk. A group costs two `get`s, one listing of
/// one level and one `get` per child (to tell arrays from groups).
///
/// # Errors
/// No node, metadata this build refuses, the store's errors.
pub fn info_in(ctx: &Ctx, store: Arc<dyn Store>, a: &InfoArgs) -> Result<()> {
    let array = match Array::open_with(store.clone(), "", &ctx.extensions) {
        Ok(array) => array,
        Err(ArrayError::WrongNodeType { found: "group", .. }) => return group_info(ctx, store, a),
        Err(ArrayError::NotFound { .. }) => {
            return Err(CliError::input(format!(
                "{}: no Zarr array or group here (no zarr.json, .zarray or .zgroup; `zarr \
                 tree` on a parent directory shows what is where)",
                a.path
            )))
        }
        Err(e) => return Err(zarr(&a.path, e)),
    };
    let s = storage(&array, &a.path, a.lists())?;
    if a.json {
        outln(array_json(&array, &a.path, &s).to_string());
        return Ok(());
    }
    let meta = array.metadata();
    let mut lines = vec![
        ("path", a.path.clone()),
        ("node", "array".into()),
        ("zarr format", zarr_format_text(array.zarr_format())),
        ("data type", array.data_type().to_string()),
        ("shape", format!("{:?}", array.shape())),
        ("domain", fmt_domain(&array.domain())),
        ("chunk grid", grid_text(&meta.chunk_grid)),
        (
            "chunk keys",
            format!(
                "{} {}",
                meta.chunk_key_encoding.name,
                meta.chunk_key_encoding
                    .configuration
                    .as_ref()
                    .and_then(|c| c.get("separator"))
                    .map(Value::to_string)
                    .unwrap_or_default()
            ),
        ),
        (
            "fill value",
            array.fill_value().to_json(array.data_type()).to_string(),
        ),
        (
            "codecs",
            meta.codecs
                .iter()
                .map(codec_summary)
                .collect::<Vec<_>>()
                .join(" -> "),
        ),
    ];
    if let Some(names) = &meta.dimension_names {
        let names: Vec<String> = names
            .iter()
            .map(|n| n.clone().unwrap_or_else(|| "-".into()))
            .collect();
        lines.push(("dimensions", names.join(", ")));
    }
    if !meta.attributes.is_empty() {
        lines.push((
            "attributes",
            Value::Object(meta.attributes.clone()).to_string(),
        ));
    }
    let total = s
        .chunks_total
        .map_or_else(|| "more than 2^64".into(), |n| n.to_string());
    match (s.chunks_stored, s.bytes_stored) {
        (Some(stored), Some(bytes)) => {
            lines.push(("chunks", format!("{stored} stored of {total}")));
            lines.push(("bytes stored", human_bytes(bytes)));
        }
        _ => lines.push((
            "chunks",
            format!("{total} in the grid (stored chunks not counted: --list counts them)"),
        )),
    }
    if let Some(n) = s.nbytes {
        lines.push(("bytes", format!("{} uncompressed", human_bytes(n))));
    }
    if let Some(r) = ratio(&s) {
        lines.push(("ratio", format!("{r:.2}")));
    }
    for (k, v) in lines {
        outln(format!("{:<14}{v}", format!("{k}:")));
    }
    Ok(())
}

fn group_info(ctx: &Ctx, store: Arc<dyn Store>, a: &InfoArgs) -> Result<()> {
    let group = Group::open_with(store, "", &ctx.extensions).map_err(|e| zarr(&a.path, e))?;
    let members = group.members().map_err(|e| zarr(&a.path, e))?;
    if a.json {
        let list: Vec<Value> = members
            .iter()
            .map(|(name, kind)| match kind {
                NodeKind::Unreadable { reason } => json!({
                    "name": name,
                    "node_type": kind.name(),
                    "error": zarr_array::report(&**reason),
                }),
                _ => json!({"name": name, "node_type": kind.name()}),
            })
            .collect();
        outln(
            json!({
                "path": a.path,
                "node_type": "group",
                "zarr_format": group.zarr_format(),
                "attributes": Value::Object(group.attributes().clone()),
                "members": list,
            })
            .to_string(),
        );
        return Ok(());
    }
    outln(format!("{:<14}{}", "path:", a.path));
    outln(format!("{:<14}group", "node:"));
    outln(format!(
        "{:<14}{}",
        "zarr format:",
        zarr_format_text(group.zarr_format())
    ));
    if !group.attributes().is_empty() {
        outln(format!(
            "{:<14}{}",
            "attributes:",
            Value::Object(group.attributes().clone())
        ));
    }
    let names: Vec<String> = members
        .iter()
        .map(|(n, k)| match k {
            NodeKind::Unreadable { reason } => {
                format!("{n} (unreadable: {})", zarr_array::report(&**reason))
            }
            _ => format!("{n} ({})", k.name()),
        })
        .collect();
    outln(format!(
        "{:<14}{}",
        "members:",
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    ));
    Ok(())
}

/// One line about a node, from its raw `zarr.json` (so that nodes this build cannot open are
/// still listed).
fn describe(doc: &[u8]) -> String {
    let v: Value = match serde_json::from_slice(doc) {
        Ok(v) => v,
        Err(e) => return format!("(invalid zarr.json: {e})"),
    };
    match v.get("node_type").and_then(Value::as_str) {
        Some("group") => "group".into(),
        Some("array") => {
            let dtype = match v.get("data_type") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => "?".into(),
            };
            let shape = v.get("shape").map(Value::to_string).unwrap_or_default();
            let mut tags = Vec::new();
            let grid = v.get("chunk_grid");
            if let Some(name) = grid.and_then(|g| g.get("name")).and_then(Value::as_str) {
                if name != "regular" {
                    tags.push(name.to_string());
                }
            }
            let text = v.get("codecs").map(Value::to_string).unwrap_or_default();
            if text.contains("\"sharding_indexed\"") {
                tags.push("sharded".into());
            }
            if text.contains("\"sparse_layout\"") {
                tags.push("sparse".into());
            }
            let mut out = format!("{dtype} {}", shape.replace(',', ", "));
            if !tags.is_empty() {
                out.push_str(&format!(" ({})", tags.join(", ")));
            }
            out
        }
        _ => "(not a Zarr v3 node)".into(),
    }
}

/// `zarr tree`: every node below PATH, from the group's consolidated copy when it holds one
/// (one request), else by a walk; nodes this build cannot read are listed with the reason.
pub fn tree(ctx: &Ctx, path: &str) -> Result<()> {
    let store = ctx.open_store(path, Access::Existing)?;
    let err = |e| zarr(path, zarr_array::ArrayError::Store(e));
    let Some(root) = node_line(&*store, "").map_err(err)? else {
        return Err(CliError::input(format!(
            "{path}: no Zarr array or group here (no zarr.json, .zarray or .zgroup)"
        )));
    };
    outln(format!("{path}  {root}"));
    if !root.starts_with("group") {
        return Ok(());
    }
    let group = Group::open_with(store, "", &ctx.extensions).map_err(|e| zarr(path, e))?;
    let mut nodes = group.members_recursive().map_err(|e| zarr(path, e))?;
    // parents before children, siblings by name
    nodes.sort_by(|a, b| a.0.split('/').cmp(b.0.split('/')));
    let parent = |p: &str| {
        p.rsplit_once('/')
            .map_or("", |(parent, _)| parent)
            .to_string()
    };
    let mut last_child = std::collections::HashMap::new();
    for (p, _) in &nodes {
        last_child.insert(parent(p), p.clone());
    }
    let is_last = |p: &str| last_child.get(&parent(p)).is_some_and(|l| l == p);
    for (p, kind) in &nodes {
        let mut indent = String::new();
        let names: Vec<&str> = p.split('/').collect();
        for depth in 1..names.len() {
            let ancestor = names[..depth].join("/");
            indent.push_str(if is_last(&ancestor) { "    " } else { "│   " });
        }
        let line = match kind {
            NodeKind::Group => match group.open_group(p) {
                Ok(g) if g.zarr_format() == 2 => "group (v2)".to_string(),
                Ok(_) => "group".to_string(),
                Err(e) => format!("(unreadable: {})", zarr_array::report(&e)),
            },
            NodeKind::Array => match group.open_array(p) {
                Ok(a) => match a.metadata_v2() {
                    Some(v2) => describe_v2(&v2.to_vec_pretty()),
                    None => describe(&a.metadata().to_vec_pretty()),
                },
                Err(e) => format!("(unreadable: {})", zarr_array::report(&e)),
            },
            NodeKind::Unreadable { reason } => {
                format!("(unreadable: {})", zarr_array::report(&**reason))
            }
        };
        let name = names.last().copied().unwrap_or_default();
        outln(format!(
            "{indent}{}{name}  {line}",
            if is_last(p) {
                "└── "
            } else {
                "├── "
            }
        ));
    }
    Ok(())
}

/// `zarr consolidate`: writes the consolidated copy of the hierarchy below the group at PATH
/// into its `zarr.json` (a v2 group: its `.zmetadata`), as zarr-python's
/// `zarr.consolidate_metadata` does.
pub fn consolidate(ctx: &Ctx, path: &str) -> Result<()> {
    let store = ctx.open_store(path, Access::Existing)?;
    let mut group = zarr_array::Group::open_consolidated(
        store,
        "",
        &ctx.extensions,
        zarr_array::UseConsolidated::Ignore,
    )
    .map_err(|e| zarr(path, e))?;
    group.consolidate().map_err(|e| zarr(path, e))?;
    let nodes = group.members_recursive().map_err(|e| zarr(path, e))?;
    outln(format!(
        "consolidated {path}: {} node{} below the group",
        nodes.len(),
        if nodes.len() == 1 { "" } else { "s" }
    ));
    Ok(())
}

/// The line about the node at `prefix` (`""` or `"a/b/"`), from its raw `zarr.json`, or else
/// its v2 `.zarray` or `.zgroup`; `None` where there is no node.
fn node_line(
    store: &dyn Store,
    prefix: &str,
) -> std::result::Result<Option<String>, zarr_array::zarr_store::StoreError> {
    if let Some(doc) = store.get(&format!("{prefix}zarr.json"))? {
        return Ok(Some(describe(&doc)));
    }
    if let Some(doc) = store.get(&format!("{prefix}.zarray"))? {
        return Ok(Some(describe_v2(&doc)));
    }
    Ok(store
        .get(&format!("{prefix}.zgroup"))?
        .map(|_| "group (v2)".to_string()))
}

/// The line about a v2 array whose `.zarray` is `doc`: `<dtype> <shape> (v2)`.
fn describe_v2(doc: &[u8]) -> String {
    match serde_json::from_slice::<Value>(doc) {
        Ok(v) => format!(
            "{} {} (v2)",
            v.get("dtype")
                .map(Value::to_string)
                .unwrap_or_default()
                .trim_matches('"'),
            v.get("shape")
                .map(Value::to_string)
                .unwrap_or_default()
                .replace(',', ", ")
        ),
        Err(e) => format!("(invalid .zarray: {e})"),
    }
}
