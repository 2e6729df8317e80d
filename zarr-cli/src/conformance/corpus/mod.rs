//! The fixtures `zarr conformance write` produces.
//!
//! Each fixture is a row of a table ([`cases`]): a small description ([`spec::Case`]) of a
//! node, its layout, the data written into it and the outcome a reader must reach. Each
//! readable array is written through the library, and its expected data is computed
//! independently, in memory ([`expected`]), then saved as `PATH.npy` beside it. Documents a
//! reader must refuse are written by hand. The random data comes from one seeded generator
//! drawn in table order, so the corpus is the same, byte for byte, on every run.

mod cases;
mod expected;
mod spec;

use std::sync::Arc;

use serde_json::{Map, Value};
use zarr_array::zarr_store::Store;
use zarr_array::{Array, ArrayError, Group};

use self::expected::{Dense, Rng};
use self::spec::{Case, Data, Document, Node};
use crate::error::{zarr, CliError, Result};
use crate::npy;
use crate::store::Ctx;

/// Writes every fixture whose extensions `ctx` has, each array with its expected `.npy`,
/// into `store` (at `location`, for messages); returns the manifest's fixtures.
///
/// # Errors
/// Library or store errors.
pub(super) fn write_corpus(ctx: &Ctx, store: Arc<dyn Store>, location: &str) -> Result<Vec<Value>> {
    let mut writer = Writer {
        ctx,
        store,
        location: location.to_string(),
        rng: Rng::new(1),
    };
    let mut fixtures = Vec::new();
    for case in cases::all() {
        if case.requires.iter().all(|name| ctx.has_extension(name)) {
            writer.write(&case)?;
            fixtures.push(case.entry());
        }
    }
    Ok(fixtures)
}

/// Writes fixtures into a store.
struct Writer<'a> {
    ctx: &'a Ctx,
    store: Arc<dyn Store>,
    /// The corpus, as given (for messages).
    location: String,
    rng: Rng,
}

impl Writer<'_> {
    fn write(&mut self, case: &Case) -> Result<()> {
        let path = case.path.as_str();
        match &case.node {
            Node::Array { layout, data } => {
                let array = layout
                    .builder(&self.context(path))?
                    .create_with(self.store.clone(), path, &self.ctx.extensions)
                    .map_err(self.err(path))?;
                self.fill(path, array, data)
            }
            Node::HandWrittenArray { doc, data } => {
                self.put_document(path, &pretty(doc))?;
                let array = Array::open_with(self.store.clone(), path, &self.ctx.extensions)
                    .map_err(self.err(path))?;
                self.fill(path, array, data)
            }
            Node::Group { attributes } => {
                let attributes = match attributes {
                    Value::Object(m) => m.clone(),
                    _ => Map::new(),
                };
                Group::create(self.store.clone(), path, attributes).map_err(self.err(path))?;
                Ok(())
            }
            Node::Reject { doc, .. } => match doc {
                Document::Json(doc) => self.put_document(path, &pretty(doc)),
                Document::Raw(bytes) => self.put_document(path, bytes),
            },
        }
    }

    /// Writes `data` into the array, then saves what it must read as beside it.
    fn fill(&mut self, path: &str, mut array: Array, data: &Data) -> Result<()> {
        let expected = data
            .write(&mut array, &mut self.rng)
            .map_err(self.err(path))?;
        self.save_npy(path, &expected)
    }

    /// Saves the expected data as `PATH.npy`, through the store (a file in a directory, an
    /// object under a remote prefix).
    fn save_npy(&self, path: &str, expected: &Dense) -> Result<()> {
        let key = format!("{path}.npy");
        let bytes = npy::to_bytes(expected.data_type, &expected.shape, &expected.data);
        self.store
            .set(&key, &bytes)
            .map_err(|e| zarr(self.context(&key), e.into()))
    }

    fn put_document(&self, path: &str, doc: &[u8]) -> Result<()> {
        let key = format!("{path}/zarr.json");
        self.store
            .set(&key, doc)
            .map_err(|e| zarr(self.context(&key), e.into()))
    }

    /// How `path` inside the corpus is shown in messages.
    fn context(&self, path: &str) -> String {
        format!("{}/{path}", self.location)
    }

    fn err(&self, path: &str) -> impl Fn(ArrayError) -> CliError {
        let context = self.context(path);
        move |e| zarr(&context, e)
    }
}

/// A document as pretty-printed JSON (serializing a `Value` cannot fail: its keys are
/// strings).
fn pretty(doc: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(doc).unwrap_or_default()
}
