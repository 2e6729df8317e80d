//! Sparse matrices kept as Zarr groups of 1-d arrays, v2 or v3:
//!
//! - **anndata** (`encoding-type` `csr_matrix` / `csc_matrix`, `encoding-version` `0.1.0`,
//!   `shape`; arrays `data`, `indices`, `indptr`): any element of an AnnData store (`X`,
//!   `layers/<name>`, `obsm/<name>`). Export writes an AnnData store that
//!   `anndata.read_zarr` opens (the root's `encoding-type` `anndata`, `obs` and `var` frames
//!   indexed `0`, `1`, ...) or adds the element to one.
//! - **binsparse** (the group attribute `binsparse` holding the descriptor document
//!   `{"binsparse": {version 0.1, format, shape, number_of_stored_values, data_types}}`, as
//!   the reference implementation binsparse-python stores it; a bare descriptor is read
//!   too): CSR, CSC, DCSR, DCSC, COO / COOR, COOC in; CSR, CSC, COOR out.
//!
//! The arrays are read in blocks of whole chunks and written a chunk at a time.

use std::sync::Arc;

use serde_json::{json, Map, Value};
use zarr_array::ndarray::{ArrayD, IxDyn};
use zarr_array::zarr_store::Store;
use zarr_array::{Array, ArrayBuilder, DataType, Group, Region};

use crate::core::{
    check_budget, column_major, import, matrix_shape, nnz_of, prefix_of, row_major, Create,
    EntrySource, ExportOptions, ImportOptions, Progress, Reject, Snapshot,
};
use crate::error::{array, malformed, Result, SparseIoError};
use crate::npz::{index_descr, Elements, Layout, Triple};
use crate::value::{with_value_type, IoValue};

/// A 1-d Zarr array read in blocks of whole chunks, a thread of its own reading (and
/// decoding) a block ahead.
struct ZarrStream {
    rx: std::sync::mpsc::Receiver<Result<Vec<u8>>>,
    len: u64,
    read: u64,
    buf: Vec<u8>,
    at: usize,
    kind: DataType,
    size: usize,
    place: String,
}

impl ZarrStream {
    fn open(group: &Group, name: &str, place: String, budget: u64) -> Result<Self> {
        let array = group
            .open_array(name)
            .map_err(|_| malformed(&place, "missing, or not an array"))?;
        let [len] = array.shape()[..] else {
            return Err(malformed(
                &place,
                format!("shape {:?} is not 1-d", array.shape()),
            ));
        };
        let kind = array.data_type();
        let known =
            with_value_type!(kind, T => { let _ = std::marker::PhantomData::<T>; true }, false);
        if !known {
            return Err(SparseIoError::Unsupported {
                place,
                what: format!("the data type {kind}"),
            });
        }
        let size = kind.size();
        let chunk = array.chunk_shape().map_or(1 << 16, |c| c[0].max(1));
        // three streams, each with a block read, one queued and one being consumed
        let most = (budget / 64 / size as u64).max(1);
        let block = (most / chunk).max(1) * chunk;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let at = place.clone();
        std::thread::spawn(move || {
            let mut fetched = 0;
            while fetched < len {
                let n = block.min(len - fetched);
                let got = Region::new(vec![fetched], vec![n])
                    .map_err(|e| crate::error::array(&at)(e.into()))
                    .and_then(|r| {
                        array
                            .read_region_bytes(&r)
                            .map_err(crate::error::array(&at))
                    });
                let failed = got.is_err();
                if tx.send(got).is_err() || failed {
                    return;
                }
                fetched += n;
            }
        });
        Ok(ZarrStream {
            rx,
            len,
            read: 0,
            buf: Vec::new(),
            at: 0,
            kind,
            size,
            place,
        })
    }

    /// The next block from the reader thread once the one at hand is used up.
    fn refill(&mut self) -> Result<()> {
        if self.at == self.buf.len() {
            self.buf = self
                .rx
                .recv()
                .map_err(|_| malformed(&self.place, "ended early"))??;
            self.at = 0;
        }
        Ok(())
    }
}

impl Elements for ZarrStream {
    fn next_raw(&mut self) -> Result<Option<[u8; 8]>> {
        if self.read == self.len {
            return Ok(None);
        }
        self.refill()?;
        let mut b = [0u8; 8];
        b[..self.size].copy_from_slice(&self.buf[self.at..self.at + self.size]);
        self.at += self.size;
        self.read += 1;
        Ok(Some(b))
    }
    fn next_raws(&mut self, n: usize, out: &mut Vec<u8>) -> Result<usize> {
        let mut got = 0;
        while got < n && self.read < self.len {
            self.refill()?;
            // whole elements of the block at hand (blocks hold whole elements)
            let want = (n - got).min((self.len - self.read) as usize);
            let k = want.min((self.buf.len() - self.at) / self.size);
            if k == 0 {
                match self.next_raw()? {
                    Some(b) => out.extend_from_slice(&b[..self.size]),
                    None => break,
                }
                got += 1;
                continue;
            }
            out.extend_from_slice(&self.buf[self.at..self.at + k * self.size]);
            self.at += k * self.size;
            self.read += k as u64;
            got += k;
        }
        Ok(got)
    }
    fn kind(&self) -> DataType {
        self.kind
    }
    fn place(&self) -> &str {
        &self.place
    }
    fn position(&self) -> u64 {
        self.read
    }
    fn len(&self) -> u64 {
        self.len
    }
}

/// A shape attribute: two non-negative integers.
fn shape_attr(v: Option<&Value>, place: &str) -> Result<[u64; 2]> {
    let dims: Option<Vec<u64>> = v
        .and_then(Value::as_array)
        .map(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
        .unwrap_or(None);
    match dims.as_deref() {
        Some(&[r, c]) if r < 1 << 62 && c < 1 << 62 => Ok([r, c]),
        _ => Err(malformed(
            place,
            format!(
                "the shape {} is not two non-negative integers",
                v.unwrap_or(&Value::Null)
            ),
        )),
    }
}

/// A sparse group opened: which convention, its layout, shape and arrays.
struct GroupSource {
    group: Group,
    shown: String,
    layout: Layout,
    /// binsparse's doubly compressed layouts.
    doubly: bool,
    shape: [u64; 2],
    data_type: DataType,
    nnz: u64,
    /// Array names: pointers (or row indices), minor indices (or column indices), values,
    /// the nonempty lines of a doubly compressed layout.
    names: [&'static str; 3],
    majors: Option<&'static str>,
    budget: u64,
}

fn open_group_source(
    store: Arc<dyn Store>,
    path: &str,
    shown: &str,
    budget: u64,
) -> Result<GroupSource> {
    let group = Group::open(store, path).map_err(array(format!("opening the group {shown}")))?;
    let attrs = group.attributes().clone();
    let at = |name: &str| format!("{shown}/{name}");
    if let Some(desc) = attrs.get("binsparse") {
        let place = format!("{shown}: the binsparse descriptor");
        let d = desc
            .as_object()
            .ok_or_else(|| malformed(&place, "not a JSON object"))?;
        // the reference implementation's Zarr container stores the whole descriptor
        // document (`{"binsparse": {...}}`) under the attribute `binsparse`; a bare
        // descriptor is read too
        let d = match d.get("binsparse").and_then(Value::as_object) {
            Some(inner) => inner,
            None => d,
        };
        let version = d.get("version").and_then(Value::as_str).unwrap_or("");
        let mut parts = version.split('.');
        if (parts.next(), parts.next()) != (Some("0"), Some("1")) {
            return Err(SparseIoError::Unsupported {
                place,
                what: format!(
                    "binsparse version {} (0.1 is)",
                    d.get("version").unwrap_or(&Value::Null)
                ),
            });
        }
        if d.get("fill").and_then(Value::as_bool) == Some(true) {
            return Err(SparseIoError::Unsupported {
                place,
                what: "a stored fill value".into(),
            });
        }
        let format = d.get("format").and_then(Value::as_str).unwrap_or("");
        let (layout, doubly, names, majors) = match format {
            "CSR" => (
                Layout::Csr,
                false,
                ["pointers_to_1", "indices_1", "values"],
                None,
            ),
            "CSC" => (
                Layout::Csc,
                false,
                ["pointers_to_1", "indices_1", "values"],
                None,
            ),
            "DCSR" => (
                Layout::Csr,
                true,
                ["pointers_to_1", "indices_1", "values"],
                Some("indices_0"),
            ),
            "DCSC" => (
                Layout::Csc,
                true,
                ["pointers_to_1", "indices_1", "values"],
                Some("indices_0"),
            ),
            "COO" | "COOR" => (
                Layout::Coo,
                false,
                ["indices_0", "indices_1", "values"],
                None,
            ),
            "COOC" => (
                Layout::Coo,
                false,
                ["indices_1", "indices_0", "values"],
                None,
            ),
            _ => {
                return Err(SparseIoError::Unsupported {
                    place,
                    what: format!("the format {}", d.get("format").unwrap_or(&Value::Null)),
                })
            }
        };
        let shape = shape_attr(d.get("shape"), &place)?;
        let nnz = d
            .get("number_of_stored_values")
            .and_then(Value::as_u64)
            .ok_or_else(|| malformed(&place, "no number_of_stored_values"))?;
        let types = d
            .get("data_types")
            .and_then(Value::as_object)
            .ok_or_else(|| malformed(&place, "no data_types object"))?;
        let mut data_type = DataType::Float64;
        for name in names.iter().copied().chain(majors) {
            let declared = types
                .get(name)
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(&place, format!("data_types names no type for {name}")))?;
            let a = group
                .open_array(name)
                .map_err(|_| malformed(at(name), "missing, or not an array"))?;
            if a.data_type().name() != declared {
                return Err(if declared.contains('[') {
                    SparseIoError::Unsupported {
                        place: place.clone(),
                        what: format!("the type {declared:?} of {name}"),
                    }
                } else {
                    malformed(
                        at(name),
                        format!(
                            "holds {} but the descriptor says {declared}",
                            a.data_type().name()
                        ),
                    )
                });
            }
            if name == "values" {
                data_type = a.data_type();
                if a.shape() != [nnz] {
                    return Err(malformed(
                        at(name),
                        format!("shape {:?} but number_of_stored_values is {nnz}", a.shape()),
                    ));
                }
            }
        }
        return Ok(GroupSource {
            group,
            shown: shown.to_string(),
            layout,
            doubly,
            shape,
            data_type,
            nnz,
            names,
            majors,
            budget,
        });
    }
    let kind = attrs.get("encoding-type").and_then(Value::as_str);
    let layout = match kind {
        Some("csr_matrix") => Layout::Csr,
        Some("csc_matrix") => Layout::Csc,
        Some(other) => {
            return Err(SparseIoError::Unsupported {
                place: shown.to_string(),
                what: format!("the anndata encoding-type {other:?} (csr_matrix and csc_matrix are)"),
            })
        }
        None => {
            return Err(malformed(
                shown,
                "neither an anndata sparse group (encoding-type) nor a binsparse group (binsparse attribute)",
            ))
        }
    };
    let shape = shape_attr(attrs.get("shape"), &format!("{shown}: the shape attribute"))?;
    let data = group
        .open_array("data")
        .map_err(|_| malformed(at("data"), "missing, or not an array"))?;
    let nnz = data.shape().first().copied().unwrap_or(0);
    Ok(GroupSource {
        group,
        shown: shown.to_string(),
        layout,
        doubly: false,
        shape,
        data_type: data.data_type(),
        nnz,
        names: ["indptr", "indices", "data"],
        majors: None,
        budget,
    })
}

impl EntrySource for GroupSource {
    fn place(&self) -> String {
        self.shown.clone()
    }
    fn shape(&self) -> [u64; 2] {
        self.shape
    }
    fn data_type(&self) -> DataType {
        self.data_type
    }
    fn nnz_hint(&self) -> u64 {
        self.nnz
    }
    fn row_major(&self) -> bool {
        self.layout == Layout::Csr
    }
    fn feed<T: IoValue>(
        &mut self,
        sink: &mut (impl FnMut(u64, u64, T) -> Result<(), Reject> + Send),
        progress: Option<&Progress>,
    ) -> Result<()> {
        let open = |name: &str| {
            ZarrStream::open(
                &self.group,
                name,
                format!("{}/{name}", self.shown),
                self.budget,
            )
        };
        let mut t = Triple {
            layout: self.layout,
            shape: self.shape,
            first: open(self.names[0])?,
            second: open(self.names[1])?,
            data: open(self.names[2])?,
            majors: match self.majors.filter(|_| self.doubly) {
                Some(n) => Some(open(n)?),
                None => None,
            },
            budget: self.budget,
        };
        t.check_lengths()?;
        t.feed(sink, progress)
    }
}

/// Imports an anndata sparse element (`X`, `layers/<name>`, ...: the group with
/// `encoding-type` `csr_matrix` / `csc_matrix`) or a binsparse group at `path` of `store`
/// into an array made by `create`. `shown` names the group in messages.
///
/// # Errors
/// See [`SparseIoError`]; on error the array is removed.
pub fn import_group(
    store: Arc<dyn Store>,
    path: &str,
    shown: &str,
    opts: &ImportOptions,
    create: Create<'_>,
) -> Result<Array> {
    check_budget(opts.max_memory)?;
    let src = open_group_source(store, path, shown, opts.max_memory)?;
    import(src, opts, create)
}

/// A 1-d Zarr array written a chunk at a time.
struct ZarrOut {
    array: Array,
    buf: Vec<u8>,
    chunk_bytes: usize,
    written: u64,
    size: usize,
}

impl ZarrOut {
    fn create(
        group: &Group,
        name: &str,
        dt: DataType,
        len: u64,
        chunk: u64,
        format: u8,
    ) -> Result<Self> {
        let b = ArrayBuilder::new(vec![len], dt)
            .chunk_shape(vec![chunk.clamp(1, len.max(1))])
            .zarr_format(format);
        let array = group
            .create_array(name, &b)
            .map_err(array(format!("creating {}/{name}", group.path())))?;
        let size = dt.size();
        Ok(ZarrOut {
            array,
            buf: Vec::new(),
            chunk_bytes: chunk.clamp(1, len.max(1)) as usize * size,
            written: 0,
            size,
        })
    }

    fn push(&mut self, bytes: &[u8]) -> Result<()> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= self.chunk_bytes {
            self.flush()?;
        }
        Ok(())
    }

    fn index(&mut self, i: u64) -> Result<()> {
        if self.size == 4 {
            self.push(&(i as i32).to_le_bytes())
        } else {
            self.push(&(i as i64).to_le_bytes())
        }
    }

    fn flush(&mut self) -> Result<()> {
        let n = (self.buf.len() / self.size) as u64;
        if n == 0 {
            return Ok(());
        }
        let ctx = format!("writing {}", self.array.path());
        let region = Region::new(vec![self.written], vec![n]).map_err(|e| array(&ctx)(e.into()))?;
        self.array
            .write_region_bytes(&region, &self.buf)
            .map_err(array(&ctx))?;
        self.written += n;
        self.buf.clear();
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.flush()?;
        let len = self.array.shape()[0];
        if self.written != len {
            return Err(malformed(
                self.array.path(),
                format!("{} of {len} elements written", self.written),
            ));
        }
        Ok(())
    }
}

/// Which convention a group export follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupKind {
    /// An anndata element at this path inside the store (`X`, `layers/counts`).
    Anndata {
        /// The element's path from the AnnData root.
        element: String,
    },
    /// A binsparse group.
    Binsparse,
}

/// Exports a 2-d sparse array as a Zarr group at `path` of `store` (Zarr `format` 2 or 3):
/// an AnnData store (created with `obs` and `var` when there is none at `path`, else the
/// element is added to it) or a binsparse group, in `layout` (anndata: CSR or CSC).
///
/// # Errors
/// See [`SparseIoError`]; on error what the export created is removed.
pub fn export_group(
    array: &Array,
    store: Arc<dyn Store>,
    path: &str,
    kind: &GroupKind,
    layout: Layout,
    format: u8,
    opts: &ExportOptions,
) -> Result<()> {
    check_budget(opts.max_memory)?;
    if format != 2 && format != 3 {
        return Err(SparseIoError::Unsupported {
            place: path.into(),
            what: format!("Zarr format {format}"),
        });
    }
    if matches!(kind, GroupKind::Anndata { .. }) && layout == Layout::Coo {
        return Err(SparseIoError::Unsupported {
            place: path.into(),
            what: "an anndata element in COO (csr_matrix and csc_matrix are)".into(),
        });
    }
    let dt = array.data_type();
    with_value_type!(
        dt,
        T => export_as::<T>(array, store, path, kind, layout, format, opts),
        Err(SparseIoError::Unsupported { place: array.path().to_string(), what: format!("the data type {dt}") })
    )
}

fn new_group(
    store: &Arc<dyn Store>,
    path: &str,
    attrs: Map<String, Value>,
    format: u8,
    what: &str,
) -> Result<Group> {
    let made = if format == 2 {
        Group::create_v2(store.clone(), path, attrs)
    } else {
        Group::create(store.clone(), path, attrs)
    };
    made.map_err(array(format!("creating {what}")))
}

fn attrs(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn join(a: &str, b: &str) -> String {
    let a = a.trim_matches('/');
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}/{b}")
    }
}

/// An anndata dataframe of `n` rows indexed `0`, `1`, ... (`obs`, `var`).
fn write_frame(store: &Arc<dyn Store>, path: &str, n: u64, format: u8, budget: u64) -> Result<()> {
    let g = new_group(
        store,
        path,
        attrs(
            json!({"_index": "_index", "column-order": [], "encoding-type": "dataframe", "encoding-version": "0.2.0"}),
        ),
        format,
        path,
    )?;
    let chunk = n.clamp(1, 1 << 16);
    let b = ArrayBuilder::new(vec![n], DataType::String)
        .chunk_shape(vec![chunk])
        .attributes(attrs(
            json!({"encoding-type": "string-array", "encoding-version": "0.2.0"}),
        ))
        .zarr_format(format);
    let a = g
        .create_array("_index", &b)
        .map_err(array(format!("creating {path}/_index")))?;
    let step = chunk.min((budget / 64).max(1));
    let mut start = 0;
    while start < n {
        let len = step.min(n - start);
        let names: Vec<String> = (start..start + len).map(|i| i.to_string()).collect();
        let data = ArrayD::from_shape_vec(IxDyn(&[len as usize]), names)
            .map_err(|e| malformed(path, e.to_string()))?;
        let region = Region::new(vec![start], vec![len]).map_err(|e| array(path)(e.into()))?;
        a.write_region_vlen(&region, data.view())
            .map_err(array(format!("writing {path}/_index")))?;
        start += len;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn export_as<T: IoValue>(
    array: &Array,
    store: Arc<dyn Store>,
    path: &str,
    kind: &GroupKind,
    layout: Layout,
    format: u8,
    opts: &ExportOptions,
) -> Result<()> {
    let shape = matrix_shape(array)?;
    // what this export creates, removed again on error
    let (group_path, created) = match kind {
        GroupKind::Binsparse => (path.to_string(), prefix_of(path)),
        GroupKind::Anndata { element } => {
            let element = element.trim_matches('/');
            if element.is_empty() {
                return Err(malformed(path, "an empty anndata element path"));
            }
            match Group::open(store.clone(), path) {
                Ok(root) => {
                    if root
                        .attributes()
                        .get("encoding-type")
                        .and_then(Value::as_str)
                        != Some("anndata")
                    {
                        return Err(malformed(
                            path,
                            "exists but is not an AnnData store (encoding-type anndata)",
                        ));
                    }
                    (join(path, element), prefix_of(&join(path, element)))
                }
                Err(_) => (join(path, element), prefix_of(path)),
            }
        }
    };
    let before = Snapshot::take(&store, &created)?;
    let result = export_into::<T>(
        array,
        &store,
        path,
        &group_path,
        kind,
        layout,
        format,
        shape,
        opts,
    );
    if result.is_err() {
        before.restore(&store);
    }
    result
}

#[allow(clippy::too_many_arguments)]
fn export_into<T: IoValue>(
    array: &Array,
    store: &Arc<dyn Store>,
    root: &str,
    group_path: &str,
    kind: &GroupKind,
    layout: Layout,
    format: u8,
    shape: [u64; 2],
    opts: &ExportOptions,
) -> Result<()> {
    let nnz = nnz_of(array)?;
    let idx_dt = if index_descr(nnz, shape) == "<i4" {
        DataType::Int32
    } else {
        DataType::Int64
    };
    let (names, group_attrs) = match kind {
        GroupKind::Anndata { element } => {
            if Group::open(store.clone(), root).is_err() {
                new_group(
                    store,
                    root,
                    attrs(json!({"encoding-type": "anndata", "encoding-version": "0.1.0"})),
                    format,
                    root,
                )?;
                write_frame(store, &join(root, "obs"), shape[0], format, opts.max_memory)?;
                write_frame(store, &join(root, "var"), shape[1], format, opts.max_memory)?;
            }
            // the element's parents (`layers`, `obsm`) as anndata dicts
            let parts: Vec<&str> = element.trim_matches('/').split('/').collect();
            let mut at = root.trim_matches('/').to_string();
            for p in &parts[..parts.len() - 1] {
                at = join(&at, p);
                if Group::open(store.clone(), &at).is_err() {
                    new_group(
                        store,
                        &at,
                        attrs(json!({"encoding-type": "dict", "encoding-version": "0.1.0"})),
                        format,
                        &at,
                    )?;
                }
            }
            let enc = if layout == Layout::Csr {
                "csr_matrix"
            } else {
                "csc_matrix"
            };
            (
                ["indptr", "indices", "data"],
                json!({"encoding-type": enc, "encoding-version": "0.1.0", "shape": shape}),
            )
        }
        GroupKind::Binsparse => {
            let (fmt, names) = match layout {
                Layout::Csr => ("CSR", ["pointers_to_1", "indices_1", "values"]),
                Layout::Csc => ("CSC", ["pointers_to_1", "indices_1", "values"]),
                Layout::Coo => ("COOR", ["indices_0", "indices_1", "values"]),
            };
            let it = idx_dt.name();
            let mut types = Map::new();
            types.insert(names[0].into(), json!(it));
            types.insert(names[1].into(), json!(it));
            types.insert(
                "values".into(),
                json!(<T as zarr_array::Element>::DATA_TYPE.name()),
            );
            (
                names,
                // as the reference implementation (binsparse-python) stores it in Zarr: the
                // descriptor document under the attribute `binsparse`
                json!({"binsparse": {"binsparse": {"version": "0.1.0", "format": fmt,
                    "shape": shape, "number_of_stored_values": nnz, "data_types": types}}}),
            )
        }
    };
    let g = new_group(store, group_path, attrs(group_attrs), format, group_path)?;
    let size = std::mem::size_of::<T>() as u64;
    let chunk = (opts.max_memory / 32 / 8).clamp(1 << 10, 1 << 20);
    let first_len = match layout {
        Layout::Csr => shape[0] + 1,
        Layout::Csc => shape[1] + 1,
        Layout::Coo => nnz,
    };
    let mut a = ZarrOut::create(&g, names[0], idx_dt, first_len, chunk, format)?;
    let mut b = ZarrOut::create(&g, names[1], idx_dt, nnz, chunk, format)?;
    let mut v = ZarrOut::create(
        &g,
        names[2],
        <T as zarr_array::Element>::DATA_TYPE,
        nnz,
        (chunk * 8 / size).max(1),
        format,
    )?;
    let mut written = 0u64;
    let tell = |n: u64| {
        if let Some(p) = &opts.progress {
            p(n, nnz);
        }
    };
    let mut ptr = 0u64;
    let mut cur = 0u64;
    if layout != Layout::Coo {
        a.index(0)?;
    }
    let mut put = |major: u64,
                   minor: u64,
                   val: T,
                   a: &mut ZarrOut,
                   b: &mut ZarrOut,
                   v: &mut ZarrOut|
     -> Result<()> {
        v.push(bytemuck::bytes_of(&val))?;
        b.index(minor)?;
        if layout == Layout::Coo {
            a.index(major)?;
        } else {
            while cur < major {
                a.index(ptr)?;
                cur += 1;
            }
        }
        ptr += 1;
        written += 1;
        if written.is_multiple_of(1 << 16) {
            tell(1 << 16);
        }
        Ok(())
    };
    if layout == Layout::Csc {
        for e in column_major::<T>(array, opts)? {
            let (c, r, val) = e?;
            put(c, r, val, &mut a, &mut b, &mut v)?;
        }
    } else {
        row_major::<T>(array, opts.max_memory / 2, |(r, c, val)| {
            put(r, c, val, &mut a, &mut b, &mut v)
        })?;
    }
    let major_len = if layout == Layout::Csc {
        shape[1]
    } else {
        shape[0]
    };
    if layout != Layout::Coo {
        while cur < major_len {
            a.index(ptr)?;
            cur += 1;
        }
    }
    tell(written % (1 << 16));
    if written != nnz {
        return Err(malformed(
            array.path(),
            format!("the array changed during the export ({nnz} entries counted, {written} read)"),
        ));
    }
    a.finish()?;
    b.finish()?;
    v.finish()
}
