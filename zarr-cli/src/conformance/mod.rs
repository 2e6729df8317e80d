//! `zarr conformance write DIR` and `zarr conformance run DIR -- READER...`.
//!
//! The corpus format is the shared one (`conformance/v3` uses it too): a `manifest.json` with
//! `{"fixtures": [{"path", "node", "writer", "expect", "data", "why"}]}`, each readable array
//! beside its expected `PATH.npy`. This writer adds `"requires"`: the extensions of this
//! project a fixture needs (`regular_bounded`, `sparse_layout`), which `run` groups results
//! by (for corpora without it, `run` looks for those names in each `zarr.json`).

mod corpus;
mod run;

use std::sync::Arc;

use serde_json::{json, Value};
use zarr_array::zarr_store::Store;

use crate::error::{zarr, Result};
use crate::layout::{REGULAR_BOUNDED, SPARSE_CODEC};
use crate::progress::outln;
use crate::store::{Access, Ctx};

pub(crate) use run::run;

/// `zarr conformance write`
pub(crate) fn write(ctx: &Ctx, dir: &str) -> Result<()> {
    let store: Arc<dyn Store> = ctx.open_store(dir, Access::Empty)?;
    let fixtures = corpus::write_corpus(ctx, store.clone(), dir)?;
    let bounded = ctx.has_extension(REGULAR_BOUNDED);
    let sparse = ctx.has_extension(SPARSE_CODEC);
    let count = |node: &str, expect: &str| {
        fixtures
            .iter()
            .filter(|f| f["node"] == node && f["expect"] == expect)
            .count()
    };
    let (reads, rejects, groups) = (
        count("array", "read"),
        count("array", "reject"),
        count("group", "read") + count("group", "reject"),
    );
    let manifest = json!({
        "generator": "zarr conformance write",
        "zarr_cli": env!("CARGO_PKG_VERSION"),
        "seed": 1,
        "extensions": {REGULAR_BOUNDED: bounded, SPARSE_CODEC: sparse},
        "fixtures": fixtures,
    });
    let text = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    store
        .set("manifest.json", text.as_bytes())
        .map_err(|e| zarr(format!("{dir}/manifest.json"), e.into()))?;
    outln(format!(
        "wrote {} fixtures to {dir}: {reads} arrays to read, {rejects} array documents to \
         refuse, {groups} groups; manifest.json lists them",
        reads + rejects + groups
    ));
    for (name, have) in [(REGULAR_BOUNDED, bounded), (SPARSE_CODEC, sparse)] {
        let n = fixtures
            .iter()
            .filter(|f| {
                f["requires"]
                    .as_array()
                    .is_some_and(|r| r.contains(&Value::from(name)))
            })
            .count();
        if have {
            outln(format!("  {name}: {n} fixtures"));
        } else {
            outln(format!(
                "  {name}: skipped (this build or --without lacks the {name} extension)"
            ));
        }
    }
    outln(format!(
        "run a reader on it: zarr conformance run {dir} -- READER...   (READER ARRAY_PATH OUT.npy)"
    ));
    Ok(())
}
