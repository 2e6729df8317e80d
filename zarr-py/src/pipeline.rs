//! The engine of `zarr_rs.CodecPipeline` (`python/zarr_rs/pipeline.py`), zarr-python's codec
//! pipeline on zarr-rs: [`ChunkCodec`] is the codec chain of one chunk representation (shape,
//! data type, fill value, codecs), built from the metadata document zarr-python's codecs
//! describe (a `zarr.json`, or a `.zarray` for a v2 array's filters and compressor), and
//! decodes and encodes batches of chunks with the GIL released, the chunks of a batch in
//! parallel. Python fetches and stores the bytes (zarr-python's `ByteGetter` / `ByteSetter`)
//! and places the chunks in the output; a partial read of a stored chunk (the inner chunks of
//! a shard a selection meets) reads its byte ranges through a Python callback.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use zarr_array::zarr_codecs::{ByteRange, ByteRangeSource, CodecChain, CodecError, SourceError};
use zarr_array::zarr_store::{MemoryStore, Store};
use zarr_array::{Array, ArrayError, DataType, Region};

use crate::error::{IntoPy, InvalidArgumentError};

/// Chunks decoded and encoded by [`ChunkCodec`] since the module was loaded (`stats()`), so
/// that a test can tell that zarr-python's arrays went through the engine.
static DECODED: AtomicU64 = AtomicU64::new(0);
static ENCODED: AtomicU64 = AtomicU64::new(0);
static PARTIAL: AtomicU64 = AtomicU64::new(0);

/// The thread pool batches are decoded and encoded on (the engine's own parallel work, such
/// as a shard's inner chunks, runs on it too), one per process: a process forked from one
/// that used it (`multiprocessing`'s fork) has none of its threads, so the first batch in the
/// child builds a new pool instead of waiting forever on the parent's.
static POOL: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);

fn pool() -> PyResult<Arc<ThreadPool>> {
    let pid = std::process::id();
    let mut guard = POOL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((owner, pool)) = guard.as_ref() {
        if *owner == pid {
            return Ok(pool.clone());
        }
    }
    let pool = ThreadPoolBuilder::new()
        .thread_name(|i| format!("zarr-rs-pipeline-{i}"))
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("starting the pipeline's threads: {e}")))?;
    let pool = Arc::new(pool);
    if let Some(inherited) = guard.replace((pid, pool.clone())) {
        // the parent's pool: its threads do not exist here, so it is never shut down
        std::mem::forget(inherited);
    }
    Ok(pool)
}

/// Runs `f` with the GIL released on the pipeline's thread pool ([`pool`]).
fn run<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let pool = pool()?;
    Ok(py.detach(|| pool.install(f)))
}

fn codec_err(context: &str, source: CodecError) -> ArrayError {
    ArrayError::Codec {
        context: context.to_string(),
        source,
    }
}

/// How a chunk's elements cross into Python.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elements {
    /// Fixed-size elements: the decoded chunk's bytes (native byte order, C order).
    Fixed,
    /// `string`: one `str` per element.
    Text,
    /// `variable_length_bytes`: one `bytes` per element.
    Bytes,
}

/// The codec chain of one chunk representation.
#[pyclass(frozen, module = "zarr_rs._core")]
pub(crate) struct ChunkCodec {
    /// The one-chunk array the document describes (its codec chain is the chunk's).
    array: Arc<Array>,
    elements: Elements,
}

impl ChunkCodec {
    fn chain(&self) -> &CodecChain {
        self.array.codecs()
    }
}

/// Borrows the bytes of a NumPy `uint8` array (C-contiguous).
fn slice<'a>(a: &'a PyReadonlyArray1<'_, u8>) -> PyResult<&'a [u8]> {
    a.as_slice()
        .map_err(|e| InvalidArgumentError::new_err(format!("chunk bytes: {e}")))
}

#[pymethods]
impl ChunkCodec {
    /// The chain of the one-chunk array whose metadata document `document` is (`name`:
    /// `"zarr.json"` or `".zarray"`): its shape is the chunk's, as is its grid's chunk shape.
    #[new]
    fn new(py: Python<'_>, name: &str, document: &str) -> PyResult<Self> {
        if name != "zarr.json" && name != ".zarray" {
            return Err(InvalidArgumentError::new_err(format!(
                "metadata document {name:?} (use \"zarr.json\" or \".zarray\")"
            )));
        }
        let array = py
            .detach(|| {
                let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
                store.set(name, document.as_bytes())?;
                Array::open(store, "")
            })
            .py_err()?;
        let elements = match array.data_type() {
            DataType::String => Elements::Text,
            DataType::Bytes => Elements::Bytes,
            _ => Elements::Fixed,
        };
        Ok(ChunkCodec {
            array: Arc::new(array),
            elements,
        })
    }

    /// The decoded chunk's size in bytes (0 for variable-size elements).
    #[getter]
    fn decoded_len(&self) -> usize {
        match self.elements {
            Elements::Fixed => self.chain().decoded_len(),
            _ => 0,
        }
    }

    /// Whether a region of a stored chunk is read without the whole of it
    /// ([`CodecChain::supports_partial_decode`]: a shard's inner chunks).
    #[getter]
    fn supports_partial_decode(&self) -> bool {
        match self.elements {
            Elements::Fixed => self.chain().supports_partial_decode(),
            _ => self.chain().reads_vlen_regions(),
        }
    }

    /// Decodes stored chunks (NumPy `uint8` arrays; `None` for a chunk not stored, decoded
    /// as `None`), in parallel with the GIL released. Fixed-size elements come back as a
    /// `uint8` array of the chunk's bytes (native byte order, C order), `string` elements as
    /// a list of `str`, `variable_length_bytes` ones as a list of `bytes`.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        chunks: Vec<Option<PyReadonlyArray1<'py, u8>>>,
    ) -> PyResult<Vec<Option<Bound<'py, PyAny>>>> {
        let inputs: Vec<Option<&[u8]>> = chunks
            .iter()
            .map(|c| c.as_ref().map(slice).transpose())
            .collect::<PyResult<_>>()?;
        let chain = self.chain();
        match self.elements {
            Elements::Fixed => {
                let decoded: Vec<Option<Vec<u8>>> = run(py, || {
                    inputs
                        .par_iter()
                        .map(|c| {
                            c.map(|bytes| {
                                let mut out = vec![0u8; chain.decoded_len()];
                                chain.decode_into(bytes, &mut out)?;
                                Ok(out)
                            })
                            .transpose()
                        })
                        .collect::<Result<_, CodecError>>()
                })?
                .map_err(|e| codec_err("decoding a chunk", e))
                .py_err()?;
                DECODED.fetch_add(count(&decoded), Ordering::Relaxed);
                Ok(decoded
                    .into_iter()
                    .map(|d| d.map(|v| PyArray1::from_vec(py, v).into_any()))
                    .collect())
            }
            Elements::Text | Elements::Bytes => {
                let decoded = run(py, || {
                    inputs
                        .par_iter()
                        .map(|c| c.map(|bytes| chain.decode_vlen(bytes)).transpose())
                        .collect::<Result<Vec<_>, CodecError>>()
                })?
                .map_err(|e| codec_err("decoding a chunk", e))
                .py_err()?;
                DECODED.fetch_add(count(&decoded), Ordering::Relaxed);
                decoded
                    .into_iter()
                    .map(|d| d.map(|chunk| self.vlen_to_py(py, &chunk)).transpose())
                    .collect()
            }
        }
    }

    /// Decodes the region (`start`, `shape`: of the chunk) of each stored chunk that a
    /// source reads: an object with `get_ranges(ranges)` (a list of `("range", start,
    /// end)`, `("offset", offset, 0)` or `("suffix", length, 0)`; returns a list of `bytes`,
    /// or `None` when the chunk is not stored) and `size()` (`None` when not stored). Each
    /// region comes back as for [`ChunkCodec::decode`] (the region's shape), or `None` when
    /// its chunk is not stored. Called from a worker thread (the sources call back into
    /// zarr-python's event loop, which must not be the calling thread).
    fn decode_regions<'py>(
        &self,
        py: Python<'py>,
        sources: Vec<Py<PyAny>>,
        regions: Vec<(Vec<u64>, Vec<u64>)>,
    ) -> PyResult<Vec<Option<Bound<'py, PyAny>>>> {
        if sources.len() != regions.len() {
            return Err(InvalidArgumentError::new_err(format!(
                "{} sources for {} regions",
                sources.len(),
                regions.len()
            )));
        }
        let regions: Vec<Region> = regions
            .into_iter()
            .map(|(start, shape)| Region::new(start, shape))
            .collect::<Result<_, _>>()
            .map_err(ArrayError::from)
            .py_err()?;
        let sources: Vec<PySource> = sources.into_iter().map(PySource).collect();
        let chain = self.chain();
        let elem = chain.repr().element_size();
        match self.elements {
            Elements::Fixed => {
                let decoded: Vec<Option<Vec<u8>>> = run(py, || {
                    sources
                        .par_iter()
                        .zip(regions.par_iter())
                        .map(|(source, region)| {
                            let n = region
                                .num_elements()
                                .and_then(|n| usize::try_from(n).ok())
                                .and_then(|n| n.checked_mul(elem))
                                .ok_or_else(|| CodecError::ChunkTooLarge {
                                    shape: region.shape.clone(),
                                    element_size: elem,
                                })?;
                            let mut out = vec![0u8; n];
                            let stored = chain.decode_region(source, region, &mut out)?;
                            Ok(stored.then_some(out))
                        })
                        .collect::<Result<_, CodecError>>()
                })?
                .map_err(|e| codec_err("decoding part of a chunk", e))
                .py_err()?;
                PARTIAL.fetch_add(count(&decoded), Ordering::Relaxed);
                Ok(decoded
                    .into_iter()
                    .map(|d| d.map(|v| PyArray1::from_vec(py, v).into_any()))
                    .collect())
            }
            Elements::Text | Elements::Bytes => {
                let decoded = run(py, || {
                    sources
                        .par_iter()
                        .zip(regions.par_iter())
                        .map(|(source, region)| chain.decode_vlen_region(source, region))
                        .collect::<Result<Vec<_>, CodecError>>()
                })?
                .map_err(|e| codec_err("decoding part of a chunk", e))
                .py_err()?;
                PARTIAL.fetch_add(count(&decoded), Ordering::Relaxed);
                decoded
                    .into_iter()
                    .map(|d| d.map(|chunk| self.vlen_to_py(py, &chunk)).transpose())
                    .collect()
            }
        }
    }

    /// Encodes chunks of fixed-size elements (each a NumPy `uint8` array of the chunk's
    /// bytes, native byte order, C order), in parallel with the GIL released; returns the
    /// stored bytes of each.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        chunks: Vec<PyReadonlyArray1<'py, u8>>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        if self.elements != Elements::Fixed {
            return Err(InvalidArgumentError::new_err(
                "the chunks hold variable-size elements (use encode_vlen)",
            ));
        }
        let inputs: Vec<&[u8]> = chunks.iter().map(slice).collect::<PyResult<_>>()?;
        let chain = self.chain();
        let encoded: Vec<Vec<u8>> = run(py, || {
            inputs
                .par_iter()
                .map(|c| chain.encode(c))
                .collect::<Result<_, CodecError>>()
        })?
        .map_err(|e| codec_err("encoding a chunk", e))
        .py_err()?;
        ENCODED.fetch_add(encoded.len() as u64, Ordering::Relaxed);
        Ok(encoded.iter().map(|e| PyBytes::new(py, e)).collect())
    }

    /// Encodes chunks of `string` or `variable_length_bytes` elements, each a list of the
    /// elements' `bytes` (UTF-8 for strings), C order.
    fn encode_vlen<'py>(
        &self,
        py: Python<'py>,
        chunks: Vec<Vec<Vec<u8>>>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        if self.elements == Elements::Fixed {
            return Err(InvalidArgumentError::new_err(
                "the chunks hold fixed-size elements (use encode)",
            ));
        }
        let chain = self.chain();
        let encoded: Vec<Vec<u8>> = run(py, || {
            chunks
                .par_iter()
                .map(|c| chain.encode_vlen(c.iter().map(Vec::as_slice)))
                .collect::<Result<_, CodecError>>()
        })?
        .map_err(|e| codec_err("encoding a chunk", e))
        .py_err()?;
        ENCODED.fetch_add(encoded.len() as u64, Ordering::Relaxed);
        Ok(encoded.iter().map(|e| PyBytes::new(py, e)).collect())
    }
}

impl ChunkCodec {
    fn vlen_to_py<'py>(
        &self,
        py: Python<'py>,
        chunk: &zarr_array::zarr_codecs::vlen::VlenChunk,
    ) -> PyResult<Bound<'py, PyAny>> {
        let list = PyList::empty(py);
        for item in chunk.iter() {
            match self.elements {
                Elements::Text => {
                    let s = std::str::from_utf8(item).map_err(|e| {
                        crate::error::to_py(codec_err(
                            "decoding a chunk",
                            CodecError::Corrupt {
                                codec: "vlen-utf8",
                                reason: format!("an element is not UTF-8: {e}"),
                            },
                        ))
                    })?;
                    list.append(PyString::new(py, s))?;
                }
                _ => list.append(PyBytes::new(py, item))?,
            }
        }
        Ok(list.into_any())
    }
}

fn count<T>(items: &[Option<T>]) -> u64 {
    items.iter().filter(|d| d.is_some()).count() as u64
}

/// A stored chunk read through a Python object (see [`ChunkCodec::decode_regions`]).
struct PySource(Py<PyAny>);

#[derive(Debug, thiserror::Error)]
#[error("reading the chunk through zarr-python's store: {0}")]
struct PySourceError(String);

fn source_err(e: PyErr) -> SourceError {
    SourceError::new(PySourceError(e.to_string()))
}

impl ByteRangeSource for PySource {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        Python::attach(|py| {
            let spec: Vec<(&str, u64, u64)> = ranges
                .iter()
                .map(|r| match *r {
                    ByteRange::Range { start, end } => ("range", start, end),
                    ByteRange::FromStart(offset) => ("offset", offset, 0),
                    ByteRange::Suffix(len) => ("suffix", len, 0),
                })
                .collect();
            let got = self
                .0
                .call_method1(py, "get_ranges", (spec,))
                .map_err(source_err)?;
            if got.is_none(py) {
                return Ok(None);
            }
            let parts: Vec<Vec<u8>> = got.extract(py).map_err(source_err)?;
            if parts.len() != ranges.len() {
                return Err(SourceError::new(PySourceError(format!(
                    "{} values for {} byte ranges",
                    parts.len(),
                    ranges.len()
                ))));
            }
            Ok(Some(parts))
        })
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        Python::attach(|py| {
            let got = self.0.call_method0(py, "size").map_err(source_err)?;
            got.extract(py).map_err(source_err)
        })
    }
}

/// The chunks decoded (whole and in part) and encoded by every `ChunkCodec` since the module
/// was loaded: `{"decoded": n, "partial": n, "encoded": n}`.
#[pyfunction]
pub(crate) fn pipeline_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("decoded", DECODED.load(Ordering::Relaxed))?;
    d.set_item("partial", PARTIAL.load(Ordering::Relaxed))?;
    d.set_item("encoded", ENCODED.load(Ordering::Relaxed))?;
    Ok(d)
}
