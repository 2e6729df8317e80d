//! `zarr convert`: copy an array into a new one with another layout.
//!
//! The source's layout is taken apart into what [`ArrayBuilder`] takes (chunks, shards,
//! filters, serializer, compressors, key encoding, grid bounds), the options replace parts of
//! it, and the data is copied slab by slab. Without options the copy has the same metadata.

use serde_json::{json, Map, Value};
use zarr_array::zarr_store::StoreUrl;
use zarr_array::{Array, ArrayBuilder, DataType, ExtensionDef};

use crate::cli::ConvertArgs;
use crate::commands::fmt_domain;
use crate::error::{zarr, CliError, Result};
use crate::info::codec_summary;
use crate::layout::{compressors, sparse_def, SparseFormat, SPARSE_CODEC};
use crate::progress::outln;
use crate::store::Ctx;
use crate::transfer;

/// Array->array codecs this project knows (everything before the serializer).
const ARRAY_TO_ARRAY: [&str; 1] = ["transpose"];

/// A codec list taken apart.
#[derive(Debug, Clone)]
struct Codecs {
    filters: Vec<ExtensionDef>,
    serializer: ExtensionDef,
    compressors: Vec<ExtensionDef>,
}

fn bytes_codec(t: DataType) -> ExtensionDef {
    if t.endian_component_size().is_some() {
        let mut c = Map::new();
        c.insert("endian".into(), json!("little"));
        ExtensionDef::with_configuration("bytes", c)
    } else {
        ExtensionDef::new("bytes")
    }
}

fn split(defs: &[ExtensionDef], t: DataType) -> Codecs {
    let n_filters = defs
        .iter()
        .take_while(|d| ARRAY_TO_ARRAY.contains(&d.name.as_str()))
        .count();
    let filters = defs[..n_filters].to_vec();
    let serializer = defs
        .get(n_filters)
        .cloned()
        .unwrap_or_else(|| bytes_codec(t));
    let compressors = defs.get(n_filters + 1..).unwrap_or_default().to_vec();
    Codecs {
        filters,
        serializer,
        compressors,
    }
}

/// The source's layout as builder settings.
#[derive(Debug, Clone)]
struct Layout {
    chunks: Vec<u64>,
    shards: Option<Vec<u64>>,
    codecs: Codecs,
}

fn defs_of(config: &Map<String, Value>, key: &str) -> Option<Vec<ExtensionDef>> {
    config
        .get(key)?
        .as_array()?
        .iter()
        .map(|v| ExtensionDef::from_value(v, "codecs").ok())
        .collect()
}

/// Takes the source apart. A `sharding_indexed` codec as zarr-python writes it (index
/// `[bytes little, crc32c]` at the end, nothing before or after it) becomes `shards` plus
/// inner codecs; any other sharding stays one opaque serializer.
fn layout_of(array: &Array) -> Layout {
    let t = array.data_type();
    let meta = array.metadata();
    let outer = split(&meta.codecs, t);
    // a grid whose chunks differ (rectilinear) converts to regular chunks of its first
    // chunk's shape
    let grid_chunks = array
        .chunk_shape()
        .unwrap_or_else(|| array.codecs().repr().shape.clone());
    if outer.serializer.name == "sharding_indexed"
        && outer.filters.is_empty()
        && outer.compressors.is_empty()
    {
        if let Some(config) = &outer.serializer.configuration {
            let standard_index = defs_of(config, "index_codecs").is_some_and(|d| {
                let v: Vec<Value> = d.iter().map(ExtensionDef::to_value).collect();
                Value::Array(v)
                    == json!([
                        {"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "crc32c"}
                    ])
            });
            let at_end = config
                .get("index_location")
                .and_then(Value::as_str)
                .is_none_or(|l| l == "end");
            let inner_chunks: Option<Vec<u64>> = config
                .get("chunk_shape")
                .and_then(Value::as_array)
                .map(|v| v.iter().filter_map(Value::as_u64).collect());
            let inner = defs_of(config, "codecs");
            if let (true, true, Some(chunks), Some(inner)) =
                (standard_index, at_end, inner_chunks, inner)
            {
                return Layout {
                    chunks,
                    shards: Some(grid_chunks),
                    codecs: split(&inner, t),
                };
            }
        }
    }
    Layout {
        chunks: grid_chunks,
        shards: None,
        codecs: outer,
    }
}

fn sparse_format_of(def: &ExtensionDef) -> Option<SparseFormat> {
    if def.name != SPARSE_CODEC {
        return None;
    }
    def.configuration
        .as_ref()?
        .get("format")?
        .as_str()
        .and_then(SparseFormat::from_name)
}

fn grid_bounds(array: &Array) -> Option<(Vec<i64>, Vec<i64>)> {
    let def = &array.metadata().chunk_grid;
    if def.name != "regular_bounded" {
        return None;
    }
    let config = def.configuration.as_ref()?;
    let list = |k: &str| -> Option<Vec<i64>> {
        config
            .get(k)?
            .as_array()?
            .iter()
            .map(Value::as_i64)
            .collect()
    };
    Some((list("lower_bound")?, list("origin")?))
}

/// `zarr convert`
pub fn convert(ctx: &Ctx, a: &ConvertArgs) -> Result<()> {
    let src = ctx.open_array(&a.src)?;
    if a.to_v3 || a.to_v2 {
        return convert_format(&src, a);
    }
    let dst_loc = a.dst.as_deref().unwrap_or_default();
    let t = src.data_type();
    let meta = src.metadata();
    let mut layout = layout_of(&src);
    let old_chunks = layout.chunks.clone();
    let rank = src.rank();
    if let Some(chunks) = &a.chunks {
        if chunks.len() != rank {
            return Err(CliError::input(format!(
                "--chunks has {} dimensions but the array has {rank} (shape {:?})",
                chunks.len(),
                src.shape()
            )));
        }
        layout.chunks = chunks.clone();
    }
    if let Some(shards) = &a.shards {
        if shards.len() != rank {
            return Err(CliError::input(format!(
                "--shards has {} dimensions but the array has {rank}",
                shards.len()
            )));
        }
        layout.shards = Some(shards.clone());
    }
    if a.no_shards {
        layout.shards = None;
    }
    if let Some(c) = compressors(&a.codecs, t)? {
        layout.codecs.compressors = c;
    }
    if let Some(format) = a.sparse {
        layout.codecs.serializer = sparse_def(format, &layout.chunks)?;
    } else if a.dense {
        layout.codecs.serializer = bytes_codec(t);
    } else if let Some(format) = sparse_format_of(&layout.codecs.serializer) {
        if layout.chunks != old_chunks {
            // index types sized for the new chunk shape
            layout.codecs.serializer = sparse_def(format, &layout.chunks)?;
        }
    }
    if let Some(shards) = &layout.shards {
        if let Some(d) = (0..rank)
            .find(|&d| layout.chunks[d] == 0 || shards[d] == 0 || shards[d] % layout.chunks[d] != 0)
        {
            return Err(CliError::input(format!(
                "shards {shards:?} are not a multiple of chunks {:?} on axis {d} (give --chunks \
                 and --shards that divide)",
                layout.chunks
            )));
        }
    }

    let mut attributes = meta.attributes.clone();
    let mut b = ArrayBuilder::new(src.shape().to_vec(), t)
        .chunk_shape(layout.chunks.clone())
        .fill_value(src.fill_value().clone())
        .filters(layout.codecs.filters.clone())
        .serializer(layout.codecs.serializer.clone())
        .compressors(layout.codecs.compressors.clone())
        .key_encoding(meta.chunk_key_encoding.clone());
    if let Some(shards) = &layout.shards {
        b = b.shards(shards.clone());
    }
    if let Some(names) = &meta.dimension_names {
        b = b.dimension_names(names.clone());
    }
    match grid_bounds(&src) {
        Some(_) if a.to_regular => {
            let (name, note) = src.domain_note().map_err(|e| zarr(&a.src, e))?;
            attributes.insert(name.into(), note);
        }
        Some((lower, origin)) => b = b.lower_bound(lower).origin(origin),
        None => {}
    }
    b = b.attributes(attributes);
    // a directory this command makes, removed again if the copy fails
    let made_dir = match StoreUrl::parse(dst_loc) {
        Ok(StoreUrl::Path(dir)) if !dir.exists() => Some(dir),
        _ => None,
    };
    let dst = ctx.create_array(dst_loc, &b)?;
    if let Err(e) = transfer::copy_array(&src, &a.src, &dst, dst_loc) {
        // a failed convert leaves nothing behind: no node that reads as all fill value
        let _ = dst.store().delete_prefix("");
        if let Some(dir) = made_dir {
            let _ = std::fs::remove_dir(dir);
        }
        return Err(e);
    }
    outln(format!(
        "converted {} -> {}: {} {:?}, grid {}, {}, domain {}, codecs {}",
        a.src,
        dst_loc,
        t,
        dst.shape(),
        dst.metadata().chunk_grid.name,
        crate::info::chunking(&dst),
        fmt_domain(&dst.domain()),
        codecs_line(&dst)
    ));
    Ok(())
}

/// `zarr convert SRC --to-v3` / `--to-v2`: the array's metadata in the other Zarr format,
/// where it is.
fn convert_format(src: &zarr_array::Array, a: &ConvertArgs) -> Result<()> {
    let (want, done) = if a.to_v3 {
        (3, src.to_v3(!a.keep))
    } else {
        (2, src.to_v2(!a.keep))
    };
    if src.zarr_format() == want {
        outln(format!("{}: already Zarr v{want}, nothing to do", a.src));
        return Ok(());
    }
    let conv = done.map_err(|e| crate::error::zarr(&a.src, e))?;
    let (new, old) = if want == 3 {
        ("zarr.json", ".zarray and .zattrs")
    } else {
        (".zarray and .zattrs", "zarr.json")
    };
    let moved = match conv.chunks_moved {
        0 => "no chunk rewritten or moved".to_string(),
        n => format!("{n} chunks moved to their v2 keys (bytes unchanged), none rewritten"),
    };
    let kept = if conv.replaced {
        format!("{old} deleted")
    } else {
        format!("{old} kept beside it")
    };
    outln(format!(
        "converted {} to Zarr v{want}: wrote {new}, {moved}; {kept}; codecs {}",
        a.src,
        codecs_line(&conv.array)
    ));
    Ok(())
}

/// The array's codecs, `a -> b -> c`, for the line a conversion prints.
fn codecs_line(array: &Array) -> String {
    array
        .metadata()
        .codecs
        .iter()
        .map(codec_summary)
        .collect::<Vec<_>>()
        .join(" -> ")
}
