//! The engine of `zarr_rs.CodecPipeline` (`python/zarr_rs/pipeline.py`), zarr-python's codec
//! pipeline on zarr-rs: [`ChunkCodec`] is the codec chain of one chunk representation (shape,
//! data type, fill value, codecs), built from the metadata document zarr-python's codecs
//! describe (a `zarr.json`, or a `.zarray` for a v2 array's filters and compressor), and
//! decodes and encodes batches of chunks with the GIL released, the chunks of a batch in
//! parallel. On a store the engine can open itself (a `LocalStore`'s directory; an
//! `ObjectStore` or `FsspecStore` over S3, GCS, Azure or HTTP) it reads and writes the chunks
//! itself ([`EngineStore`]: the `read_*` and `write_from` methods; on an object store every
//! request of a batch in flight together); elsewhere Python fetches and stores
//! the bytes (zarr-python's `ByteGetter` / `ByteSetter`) and a partial read of a stored chunk
//! (the inner chunks of a shard a selection meets) reads its byte ranges through a Python
//! callback. Chunks go straight into the output (`decode_into`, `read_into`) or, for a few
//! elements each, element by element (`decode_points`, `read_points`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use rayon::prelude::*;
use zarr_array::fetch::for_each_fetched;
use zarr_array::zarr_codecs::vlen::VlenChunk;
use zarr_array::zarr_codecs::Block;
use zarr_array::zarr_codecs::{
    BlockBuffer, BlockError, ByteRange, ByteRangeSource, ChunkIn, ChunkUpdate, CodecChain,
    CodecError, EncodeOptions, SourceBlock, SourceError,
};
use zarr_array::zarr_store::{
    FilesystemStore, MemoryStore, ObjectStoreBackend, RemoteOptions, Store, Write,
};
use zarr_array::{Array, ArrayError, DataType, Region, StoreSource};

use crate::error::{IntoPy, InvalidArgumentError, StoreError};
use crate::threads::detach as run;

/// Chunks decoded and encoded by [`ChunkCodec`] since the module was loaded (`stats()`), so
/// that a test can tell that zarr-python's arrays went through the engine.
static DECODED: AtomicU64 = AtomicU64::new(0);
static ENCODED: AtomicU64 = AtomicU64::new(0);
static PARTIAL: AtomicU64 = AtomicU64::new(0);
/// Of the decoded chunks, those decoded straight into the output (`decode_into`).
static DIRECT: AtomicU64 = AtomicU64::new(0);
/// Of the encoded chunks, those encoded straight from the value written (`encode_from`).
static FROM_VALUE: AtomicU64 = AtomicU64::new(0);
/// Chunks updated in part in the engine: through the chain's partial encoder (`encode_update`:
/// a shard of which only the inner chunks a write touches are re-encoded), not counted in
/// `encoded`, or decoded, updated and encoded in one call (`update_chunk`).
static UPDATED: AtomicU64 = AtomicU64::new(0);
/// Chunks the engine read or wrote itself, in a store it opened ([`EngineStore`]),
/// rather than through zarr-python's `ByteGetter` / `ByteSetter`.
static FILES: AtomicU64 = AtomicU64::new(0);

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

    /// The size of the chunks' elements, when they are of a fixed size (otherwise
    /// `InvalidArgumentError` with `refusal`, which names the call to use instead), with
    /// `fill` (one element's bytes, when given) checked against it.
    fn fixed_element_size(&self, fill: Option<&[u8]>, refusal: &'static str) -> PyResult<usize> {
        if self.elements != Elements::Fixed {
            return Err(InvalidArgumentError::new_err(refusal));
        }
        let elem = self.chain().repr().element_size();
        check_fill(fill, elem)?;
        Ok(elem)
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
        let array = run(py, || {
            let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
            store.set(name, document.as_bytes())?;
            Array::open(store, "")
        })?
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
    /// ([`PartialDecoder::reads_part`](zarr_array::zarr_codecs::PartialDecoder::reads_part)).
    #[getter]
    fn supports_partial_decode(&self) -> bool {
        self.chain().partial_decoder().reads_part()
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
                        .map(|c| {
                            c.map(|bytes| {
                                let mut chunk = VlenChunk::default();
                                chain.decode_into(bytes, &mut chunk).map(|()| chunk)
                            })
                            .transpose()
                        })
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
        let sources: Vec<PySource> = sources.into_iter().map(PySource).collect();
        self.regions_of(py, Sources::Given(&sources), regions)?
            .py_err()
    }

    /// [`ChunkCodec::decode_regions`] of the stored chunks at `keys` of `files` (a
    /// `LocalStore`'s directory, read by the engine itself: no Python call per byte range).
    fn read_regions<'py>(
        &self,
        py: Python<'py>,
        files: &EngineStore,
        keys: Vec<String>,
        regions: Vec<(Vec<u64>, Vec<u64>)>,
    ) -> PyResult<Vec<Option<Bound<'py, PyAny>>>> {
        let sources = KeySources::Keys {
            store: files.store(),
            keys: &keys,
        };
        self.regions_of(py, sources, regions)?.map_err(files_err)
    }

    /// Decodes stored chunks of fixed-size elements straight into `out`, the bytes of the
    /// output array (a C-contiguous `uint8` view of it; `out_shape` its shape in elements),
    /// in parallel with the GIL released and no intermediate array: chunk `i`'s box
    /// `placements[i] = (chunk_start, extent, out_start)` goes to the box of the same extent
    /// at `out_start`. The boxes in `out` must not overlap. Returns whether each chunk was
    /// stored (a chunk not stored, `None`, is left for the caller to fill).
    fn decode_into<'py>(
        &self,
        py: Python<'py>,
        chunks: Vec<Option<PyReadonlyArray1<'py, u8>>>,
        out: Bound<'py, PyArray1<u8>>,
        out_shape: Vec<u64>,
        placements: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>,
    ) -> PyResult<Vec<bool>> {
        let inputs: Vec<Option<&[u8]>> = chunks
            .iter()
            .map(|c| c.as_ref().map(slice).transpose())
            .collect::<PyResult<_>>()?;
        self.place_into(py, Stored::Fetched(&inputs), out, out_shape, placements)?
            .py_err()
    }

    /// [`ChunkCodec::decode_into`] of the stored chunks at `keys` of `files` (a `LocalStore`'s
    /// directory): each chunk read by the engine and decoded on the same worker thread.
    fn read_into<'py>(
        &self,
        py: Python<'py>,
        files: &EngineStore,
        keys: Vec<String>,
        out: Bound<'py, PyArray1<u8>>,
        out_shape: Vec<u64>,
        placements: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>,
    ) -> PyResult<Vec<bool>> {
        let stored = Stored::Files {
            store: files.store(),
            keys: &keys,
        };
        let got = self.place_into(py, stored, out, out_shape, placements)?;
        if let Ok(read) = &got {
            FILES.fetch_add(
                read.iter().filter(|s| **s).count() as u64,
                Ordering::Relaxed,
            );
        }
        got.map_err(files_err)
    }

    /// Decodes the elements at `points[i]` (a `uint64` array of shape `(n, rank)`: positions
    /// inside the chunk) of each stored chunk `chunks[i]` (`None`: not stored) into `out`,
    /// the bytes of the output array (a C-contiguous `uint8` view), at the elements
    /// `positions[i]` (an `int64` array of `n` flat element indices of the output): the
    /// chunks in parallel with the GIL released, each reading and decoding only what its
    /// points need ([`PartialDecoder::points`](zarr_array::zarr_codecs::PartialDecoder::points):
    /// a shard's inner chunks that hold them, a compressed chunk's prefix up to the last
    /// one). Returns whether each chunk was stored (a chunk not stored is left for the
    /// caller to fill).
    fn decode_points<'py>(
        &self,
        py: Python<'py>,
        chunks: Vec<Option<PyReadonlyArray1<'py, u8>>>,
        points: Vec<PyReadonlyArray2<'py, u64>>,
        out: Bound<'py, PyArray1<u8>>,
        positions: Vec<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<Vec<bool>> {
        let inputs: Vec<Option<&[u8]>> = chunks
            .iter()
            .map(|c| c.as_ref().map(slice).transpose())
            .collect::<PyResult<_>>()?;
        self.points_into(py, Sources::Given(&inputs), &points, out, &positions)?
            .py_err()
    }

    /// [`ChunkCodec::decode_points`] of the stored chunks at `keys` of `files` (a
    /// `LocalStore`'s directory, read by the engine itself: only the byte ranges the points
    /// need where the codecs allow).
    fn read_points<'py>(
        &self,
        py: Python<'py>,
        files: &EngineStore,
        keys: Vec<String>,
        points: Vec<PyReadonlyArray2<'py, u64>>,
        out: Bound<'py, PyArray1<u8>>,
        positions: Vec<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<Vec<bool>> {
        let sources = KeySources::Keys {
            store: files.store(),
            keys: &keys,
        };
        let got = self.points_into(py, sources, &points, out, &positions)?;
        if let Ok(read) = &got {
            FILES.fetch_add(
                read.iter().filter(|s| **s).count() as u64,
                Ordering::Relaxed,
            );
        }
        got.map_err(files_err)
    }

    /// Encodes chunks of fixed-size elements (each a NumPy `uint8` array of the chunk's
    /// bytes, native byte order, C order), in parallel with the GIL released; returns the
    /// stored bytes of each. When `fill` (the bytes of one element) is given, a chunk whose
    /// every element has those bytes is not encoded and comes back as `None` (an empty chunk,
    /// deleted rather than stored).
    #[pyo3(signature = (chunks, fill=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        chunks: Vec<PyReadonlyArray1<'py, u8>>,
        fill: Option<Vec<u8>>,
    ) -> PyResult<Vec<Option<Bound<'py, PyBytes>>>> {
        let elem = self.fixed_element_size(
            fill.as_deref(),
            "the chunks hold variable-size elements (use encode_vlen)",
        )?;
        let chain = self.chain();
        let inputs: Vec<&[u8]> = chunks.iter().map(slice).collect::<PyResult<_>>()?;
        let encoded: Vec<Option<Vec<u8>>> = run(py, || {
            inputs
                .par_iter()
                .map(|c| {
                    if let Some(f) = &fill {
                        if c.chunks_exact(elem).all(|e| e == f.as_slice()) {
                            return Ok(None);
                        }
                    }
                    encode_always(chain, ChunkIn::Slice(c)).map(Some)
                })
                .collect::<Result<_, CodecError>>()
        })?
        .map_err(|e| codec_err("encoding a chunk", e))
        .py_err()?;
        ENCODED.fetch_add(count(&encoded), Ordering::Relaxed);
        Ok(encoded
            .iter()
            .map(|e| e.as_ref().map(|b| PyBytes::new(py, b)))
            .collect())
    }

    /// Encodes whole chunks of fixed-size elements taken straight from `value`, the bytes of
    /// the value written (a C-contiguous `uint8` view; `value_shape` its shape in elements),
    /// in parallel with the GIL released: chunk `i` is the box `placements[i] = (chunk_start,
    /// extent, value_start)`, which must cover the chunk. When `fill` (the bytes of one
    /// element) is given, a chunk whose every element has those bytes is not encoded and
    /// comes back as `None` (an empty chunk, deleted rather than stored).
    fn encode_from<'py>(
        &self,
        py: Python<'py>,
        value: PyReadonlyArray1<'py, u8>,
        value_shape: Vec<u64>,
        placements: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>,
        fill: Option<Vec<u8>>,
    ) -> PyResult<Vec<Option<Bound<'py, PyBytes>>>> {
        let encoded = self
            .encode_boxes(py, &value, value_shape, placements, fill, |_, e| {
                Ok(e.map(|parts| parts.concat()))
            })?
            .py_err()?;
        Ok(encoded
            .iter()
            .map(|e| e.as_ref().map(|b| PyBytes::new(py, b)))
            .collect())
    }

    /// [`ChunkCodec::encode_from`] stored by the engine itself at `keys` of `files` (a
    /// `LocalStore`'s directory), each chunk written (or, when empty, deleted) by the worker
    /// thread that encoded it: no Python bytes per chunk.
    #[allow(clippy::too_many_arguments)] // encode_from's arguments and where to store them
    fn write_from<'py>(
        &self,
        py: Python<'py>,
        files: &EngineStore,
        keys: Vec<String>,
        value: PyReadonlyArray1<'py, u8>,
        value_shape: Vec<u64>,
        placements: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>,
        fill: Option<Vec<u8>>,
    ) -> PyResult<()> {
        if keys.len() != placements.len() {
            return Err(InvalidArgumentError::new_err(format!(
                "{} keys for {} placements",
                keys.len(),
                placements.len()
            )));
        }
        let store = files.store();
        if files.batched() {
            // an object store: the chunks encoded, then every request in flight together
            let encoded = self
                .encode_boxes(py, &value, value_shape, placements, fill, |_, e| {
                    Ok(e.map(|parts| parts.concat()))
                })?
                .py_err()?;
            let writes: Vec<Write<'_>> = keys
                .iter()
                .zip(&encoded)
                .map(|(k, e)| e.as_ref().map_or(Write::Delete(k), |b| Write::Set(k, b)))
                .collect();
            run(py, || store.write_each(&writes))?.map_err(|e| files_err(e.into()))?;
            FILES.fetch_add(writes.len() as u64, Ordering::Relaxed);
            return Ok(());
        }
        let written = self
            .encode_boxes(py, &value, value_shape, placements, fill, |i, e| {
                let key = &keys[i];
                match e {
                    Some(parts) => {
                        let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
                        store.set_parts(key, &parts)
                    }
                    None => store.delete(key),
                }
                .map_err(ArrayError::from)
            })?
            .map_err(files_err)?;
        FILES.fetch_add(written.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Whether the chain updates part of a stored chunk re-encoding only what the update
    /// touches (`encode_update`): a shard with no array -> array codec before it, of
    /// fixed-size elements.
    #[getter]
    fn supports_partial_encode(&self) -> bool {
        self.elements == Elements::Fixed && self.chain().partial_encoder().is_some()
    }

    /// The new encoding of the chunk stored as `stored` (`None`: not stored) with the box
    /// `placement = (chunk_start, extent, value_start)` of `value` (the bytes of the value
    /// written, a C-contiguous `uint8` view of shape `value_shape` in elements) written into
    /// it, through the chain's partial encoder: only the inner chunks of a shard the box
    /// touches are decoded and re-encoded. `keep_empty` keeps inner chunks that end up all
    /// fill value (`write_empty_chunks`). `None` when nothing of the chunk is left to store.
    fn encode_update<'py>(
        &self,
        py: Python<'py>,
        stored: Option<PyReadonlyArray1<'py, u8>>,
        value: PyReadonlyArray1<'py, u8>,
        value_shape: Vec<u64>,
        placement: (Vec<u64>, Vec<u64>, Vec<u64>),
        keep_empty: bool,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        if !self.supports_partial_encode() {
            return Err(InvalidArgumentError::new_err(
                "the chunks' codecs do not update part of a chunk (no partial encoder)",
            ));
        }
        let chain = self.chain();
        let elem = chain.repr().element_size();
        let chunk_shape = self.array.shape().to_vec();
        let (chunk_start, extent, value_start) = placement;
        // checks the box against the chunk and the value (rank, bounds)
        Placement::new(
            &chunk_shape,
            &value_shape,
            chunk_start.clone(),
            extent.clone(),
            value_start.clone(),
        )
        .map_err(InvalidArgumentError::new_err)?;
        let src = slice(&value)?;
        let stored = stored.as_ref().map(slice).transpose()?;
        let from = Region {
            start: value_start,
            shape: extent.clone(),
        };
        let at = Region {
            start: chunk_start,
            shape: extent,
        };
        let update = ChunkUpdate::new(src, &value_shape, elem, &from, at, keep_empty)
            .map_err(|e| InvalidArgumentError::new_err(e.to_string()))?;
        let encoder = chain.partial_encoder().ok_or_else(|| {
            InvalidArgumentError::new_err("the chunks' codecs have no partial encoder")
        })?;
        let new = run(py, || encoder.encode_update(stored, &update))?
            .map_err(|e| codec_err("updating part of a chunk", e))
            .py_err()?;
        UPDATED.fetch_add(1, Ordering::Relaxed);
        Ok(new.map(|b| PyBytes::new(py, &b)))
    }

    /// The new encoding of the chunk of fixed-size elements stored as `stored` (`None`: not
    /// stored, read as the fill value) with the box `placement = (chunk_start, extent,
    /// value_start)` of `value` (the bytes of the value written, a C-contiguous `uint8` view
    /// of shape `value_shape` in elements) written into it: decoded, updated and encoded with
    /// the GIL released, for a chain with no partial encoder (see `encode_update`). When
    /// `fill` (the bytes of one element) is given, a chunk left with every element equal to it
    /// comes back as `None` (empty: deleted rather than stored).
    fn update_chunk<'py>(
        &self,
        py: Python<'py>,
        stored: Option<PyReadonlyArray1<'py, u8>>,
        value: PyReadonlyArray1<'py, u8>,
        value_shape: Vec<u64>,
        placement: (Vec<u64>, Vec<u64>, Vec<u64>),
        fill: Option<Vec<u8>>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let elem =
            self.fixed_element_size(fill.as_deref(), "the chunk holds variable-size elements")?;
        let chain = self.chain();
        let chunk_shape = self.array.shape().to_vec();
        let (chunk_start, extent, value_start) = placement;
        // checks the box against the chunk and the value (rank, bounds)
        let place = Placement::new(&chunk_shape, &value_shape, chunk_start, extent, value_start)
            .map_err(InvalidArgumentError::new_err)?;
        let src = value_bytes(&value, &value_shape, elem)?;
        let stored = stored.as_ref().map(slice).transpose()?;
        let region = Region {
            start: place.chunk_start(),
            shape: place.extent.iter().map(|&x| x as u64).collect(),
        };
        let value_start: Vec<u64> = place.out.iter().map(|&x| x as u64).collect();
        let fill_value = crate::engine::fill_bytes(&self.array);
        if fill_value.len() != elem {
            return Err(InvalidArgumentError::new_err(format!(
                "a fill value of {} bytes for elements of {elem}",
                fill_value.len()
            )));
        }
        let encoded: Result<Option<Vec<u8>>, CodecError> = run(py, || {
            let mut chunk = vec![0u8; chain.decoded_len()];
            match stored {
                Some(bytes) => chain.decode_into(bytes, &mut chunk)?,
                None => {
                    for e in chunk.chunks_exact_mut(elem) {
                        e.copy_from_slice(&fill_value);
                    }
                }
            }
            {
                let mut buffer = BlockBuffer::new(&mut chunk, &chunk_shape, elem)?;
                let mut blocks = buffer.split_disjoint(std::slice::from_ref(&region))?;
                blocks[0].copy_from(src, &value_shape, &value_start)?;
            }
            if let Some(f) = &fill {
                if chunk.chunks_exact(elem).all(|e| e == f.as_slice()) {
                    return Ok(None);
                }
            }
            encode_always(chain, ChunkIn::Owned(chunk)).map(Some)
        })?;
        let encoded = encoded
            .map_err(|e| codec_err("updating part of a chunk", e))
            .py_err()?;
        DECODED.fetch_add(u64::from(stored.is_some()), Ordering::Relaxed);
        ENCODED.fetch_add(u64::from(encoded.is_some()), Ordering::Relaxed);
        UPDATED.fetch_add(1, Ordering::Relaxed);
        Ok(encoded.map(|b| PyBytes::new(py, &b)))
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
                .map(|c| encode_always(chain, ChunkIn::Vlen(&mut c.iter().map(Vec::as_slice))))
                .collect::<Result<_, CodecError>>()
        })?
        .map_err(|e| codec_err("encoding a chunk", e))
        .py_err()?;
        ENCODED.fetch_add(encoded.len() as u64, Ordering::Relaxed);
        Ok(encoded.iter().map(|e| PyBytes::new(py, e)).collect())
    }
}

/// Where the stored chunks of a batch come from.
enum Stored<'a> {
    /// Bytes zarr-python fetched through its `ByteGetter`s (`None`: not stored).
    Fetched(&'a [Option<&'a [u8]>]),
    /// The values at `keys` of a store the engine opened, read by the engine.
    Files {
        store: &'a dyn Store,
        keys: &'a [String],
    },
}

/// What [`Stored::each`] runs on each chunk: its bytes (`None`: not stored) and its item.
type ChunkTask<'f, T> = dyn Fn(Option<&[u8]>, &mut T) -> Result<(), ArrayError> + Sync + 'f;

impl Stored<'_> {
    fn len(&self) -> usize {
        match self {
            Stored::Fetched(chunks) => chunks.len(),
            Stored::Files { keys, .. } => keys.len(),
        }
    }

    /// `f(bytes of chunk i, items[i])` (`None`: not stored) for every chunk, in parallel: on
    /// an object store every chunk's request in flight together, each chunk's `f` run as its
    /// bytes arrive ([`for_each_fetched`]).
    fn each<T: Send>(&self, items: &mut [T], f: &ChunkTask<'_, T>) -> Result<(), ArrayError> {
        match *self {
            Stored::Fetched(chunks) => items
                .par_iter_mut()
                .zip(chunks.par_iter())
                .try_for_each(|(item, bytes)| f(*bytes, item)),
            Stored::Files { store, keys } => {
                let mut work: Vec<(&str, &mut T)> = keys
                    .iter()
                    .map(String::as_str)
                    .zip(items.iter_mut())
                    .collect();
                for_each_fetched(store, &mut work, &|store, (key, item)| {
                    f(store.get(key)?.as_deref(), item)
                })
            }
        }
    }
}

/// Where the chunks a partial read reads come from: byte range sources given, or the values
/// at `keys` of a store the engine opened.
enum Sources<'a, S> {
    Given(&'a [S]),
    Keys {
        store: &'a dyn Store,
        keys: &'a [String],
    },
}

/// [`Sources`] of a store's keys (the type of the sources not given is any).
type KeySources<'a> = Sources<'a, &'static [u8]>;

impl<S: ByteRangeSource + Sync> Sources<'_, S> {
    fn len(&self) -> usize {
        match self {
            Sources::Given(sources) => sources.len(),
            Sources::Keys { keys, .. } => keys.len(),
        }
    }

    /// `f(source of chunk i, i)` for every chunk, in parallel, its error in `context`: on an
    /// object store every chunk's requests in flight together, each chunk's `f` run as the
    /// bytes it reads arrive ([`for_each_fetched`]: a shard's index, then the inner chunks
    /// it needs).
    fn map<T: Send>(
        &self,
        f: impl Fn(&dyn ByteRangeSource, usize) -> Result<T, CodecError> + Sync,
        context: &str,
    ) -> Result<Vec<T>, ArrayError> {
        match self {
            Sources::Given(sources) => sources
                .par_iter()
                .enumerate()
                .map(|(i, source)| f(source, i))
                .collect::<Result<_, _>>()
                .map_err(|e| codec_err(context, e)),
            Sources::Keys { store, keys } => {
                let mut slots: Vec<(usize, Option<T>)> =
                    (0..keys.len()).map(|i| (i, None)).collect();
                for_each_fetched(*store, &mut slots, &|store, (i, slot)| {
                    let source = StoreSource::new(store, &keys[*i]);
                    *slot = Some(f(&source, *i).map_err(|e| codec_err(context, e))?);
                    Ok(())
                })?;
                Ok(slots.into_iter().filter_map(|(_, t)| t).collect())
            }
        }
    }
}

/// An engine error of a call on an [`EngineStore`]: a store failure (a file that cannot be
/// read or written, a key the engine's filesystem store refuses, a symbolic link, a request
/// an object store refuses), met directly or by a codec reading byte ranges, is a
/// `StoreError`, on which the pipeline redoes the batch through zarr-python's own store; any
/// other as [`crate::error::to_py`] makes it.
fn files_err(e: ArrayError) -> PyErr {
    match e {
        ArrayError::Store(_)
        | ArrayError::Codec {
            source: CodecError::Source { .. },
            ..
        } => StoreError::new_err(zarr_array::report(&e)),
        e => crate::error::to_py(e),
    }
}

impl ChunkCodec {
    /// The body of [`ChunkCodec::decode_regions`] and [`ChunkCodec::read_regions`]: the
    /// outer error is the arguments', the inner the engine's.
    fn regions_of<'py, S: ByteRangeSource + Sync>(
        &self,
        py: Python<'py>,
        sources: Sources<'_, S>,
        regions: Vec<(Vec<u64>, Vec<u64>)>,
    ) -> PyResult<Result<Vec<Option<Bound<'py, PyAny>>>, ArrayError>> {
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
        let chain = self.chain();
        let elem = chain.repr().element_size();
        match self.elements {
            Elements::Fixed => {
                let decoded: Vec<Option<Vec<u8>>> = match run(py, || {
                    sources.map(
                        |source, i| {
                            let region = &regions[i];
                            let n = region
                                .num_elements()
                                .and_then(|n| usize::try_from(n).ok())
                                .and_then(|n| n.checked_mul(elem))
                                .ok_or_else(|| CodecError::ChunkTooLarge {
                                    shape: region.shape.clone(),
                                    element_size: elem,
                                })?;
                            let mut out = vec![0u8; n];
                            let stored =
                                chain.partial_decoder().region(source, region, &mut out)?;
                            Ok(stored.then_some(out))
                        },
                        "decoding part of a chunk",
                    )
                })? {
                    Ok(d) => d,
                    Err(e) => return Ok(Err(e)),
                };
                PARTIAL.fetch_add(count(&decoded), Ordering::Relaxed);
                Ok(Ok(decoded
                    .into_iter()
                    .map(|d| d.map(|v| PyArray1::from_vec(py, v).into_any()))
                    .collect()))
            }
            Elements::Text | Elements::Bytes => {
                let decoded = match run(py, || {
                    sources.map(
                        |source, i| chain.partial_decoder().vlen_region(source, &regions[i]),
                        "decoding part of a chunk",
                    )
                })? {
                    Ok(d) => d,
                    Err(e) => return Ok(Err(e)),
                };
                PARTIAL.fetch_add(count(&decoded), Ordering::Relaxed);
                decoded
                    .into_iter()
                    .map(|d| d.map(|chunk| self.vlen_to_py(py, &chunk)).transpose())
                    .collect::<PyResult<_>>()
                    .map(Ok)
            }
        }
    }

    /// The body of [`ChunkCodec::decode_points`] and [`ChunkCodec::read_points`]: the outer
    /// error is the arguments', the inner the engine's.
    fn points_into<'py, S: ByteRangeSource + Sync>(
        &self,
        py: Python<'py>,
        sources: Sources<'_, S>,
        points: &[PyReadonlyArray2<'py, u64>],
        out: Bound<'py, PyArray1<u8>>,
        positions: &[PyReadonlyArray1<'py, i64>],
    ) -> PyResult<Result<Vec<bool>, ArrayError>> {
        let elem =
            self.fixed_element_size(None, "the chunks hold variable-size elements (use decode)")?;
        if sources.len() != points.len() || sources.len() != positions.len() {
            return Err(InvalidArgumentError::new_err(format!(
                "{} chunks for {} point lists and {} position lists",
                sources.len(),
                points.len(),
                positions.len()
            )));
        }
        let chain = self.chain();
        if elem == 0 {
            return Err(InvalidArgumentError::new_err("elements of no bytes"));
        }
        let rank = self.array.shape().len();
        let mut out = out.try_readwrite().map_err(|e| {
            InvalidArgumentError::new_err(format!("the output is not writeable: {e}"))
        })?;
        let out = out
            .as_slice_mut()
            .map_err(|e| InvalidArgumentError::new_err(format!("the output: {e}")))?;
        if out.len() % elem != 0 {
            return Err(InvalidArgumentError::new_err(format!(
                "the output holds {} bytes, not whole elements of {elem}",
                out.len()
            )));
        }
        let out_elements = out.len() / elem;
        // the points of each chunk as the partial decoder takes them, the positions checked
        // against the output (in bounds, as many as the points)
        let mut lists: Vec<Vec<Vec<u64>>> = Vec::with_capacity(points.len());
        let mut places: Vec<Vec<usize>> = Vec::with_capacity(points.len());
        for (i, (p, q)) in points.iter().zip(positions).enumerate() {
            let p = p.as_array();
            if p.ncols() != rank {
                return Err(InvalidArgumentError::new_err(format!(
                    "the points of chunk {i} have {} coordinates, not {rank}",
                    p.ncols()
                )));
            }
            let q = q.as_array();
            if q.len() != p.nrows() {
                return Err(InvalidArgumentError::new_err(format!(
                    "chunk {i} has {} points for {} output positions",
                    p.nrows(),
                    q.len()
                )));
            }
            lists.push(p.rows().into_iter().map(|r| r.to_vec()).collect());
            places.push(
                q.iter()
                    .map(|&k| {
                        usize::try_from(k)
                            .ok()
                            .filter(|&k| k < out_elements)
                            .ok_or_else(|| {
                                InvalidArgumentError::new_err(format!(
                                    "output position {k} of chunk {i} is outside the output \
                                     of {out_elements} elements"
                                ))
                            })
                    })
                    .collect::<PyResult<_>>()?,
            );
        }
        let decoded = run(py, || {
            sources.map(
                |source, i| {
                    let pts = &lists[i];
                    let mut buf = vec![0u8; pts.len() * elem];
                    let stored = chain.partial_decoder().points(source, pts, &mut buf)?;
                    Ok(stored.then_some(buf))
                },
                "decoding points of a chunk",
            )
        })?;
        let decoded = match decoded {
            Ok(d) => d,
            Err(e) => return Ok(Err(e)),
        };
        // the values to their places, one thread: a few elements per chunk
        for (buf, places) in decoded.iter().zip(&places) {
            let Some(buf) = buf else { continue };
            for (value, &k) in buf.chunks_exact(elem).zip(places) {
                out[k * elem..(k + 1) * elem].copy_from_slice(value);
            }
        }
        let n = count(&decoded);
        PARTIAL.fetch_add(n, Ordering::Relaxed);
        Ok(Ok(decoded.iter().map(Option::is_some).collect()))
    }

    /// The body of [`ChunkCodec::decode_into`] and [`ChunkCodec::read_into`]: the outer
    /// error is the arguments', the inner the engine's (decoding, or reading a file).
    fn place_into<'py>(
        &self,
        py: Python<'py>,
        stored: Stored<'_>,
        out: Bound<'py, PyArray1<u8>>,
        out_shape: Vec<u64>,
        placements: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>,
    ) -> PyResult<Result<Vec<bool>, ArrayError>> {
        let elem =
            self.fixed_element_size(None, "the chunks hold variable-size elements (use decode)")?;
        if stored.len() != placements.len() {
            return Err(InvalidArgumentError::new_err(format!(
                "{} chunks for {} placements",
                stored.len(),
                placements.len()
            )));
        }
        let chain = self.chain();
        let chunk_shape = self.array.shape().to_vec();
        let boxes: Vec<Placement> = placements
            .into_iter()
            .map(|(c, e, o)| Placement::new(&chunk_shape, &out_shape, c, e, o))
            .collect::<Result<_, String>>()
            .map_err(InvalidArgumentError::new_err)?;
        let mut out = out.try_readwrite().map_err(|e| {
            InvalidArgumentError::new_err(format!("the output is not writeable: {e}"))
        })?;
        let out = out
            .as_slice_mut()
            .map_err(|e| InvalidArgumentError::new_err(format!("the output: {e}")))?;
        let want = out_shape
            .iter()
            .try_fold(elem as u64, |n, &d| n.checked_mul(d))
            .and_then(|n| usize::try_from(n).ok());
        if want != Some(out.len()) {
            return Err(InvalidArgumentError::new_err(format!(
                "the output holds {} bytes, not those of shape {out_shape:?} ({elem} bytes an element)",
                out.len()
            )));
        }
        // each box a block of `out`: the split checks that they are disjoint (and inside
        // it), so that the threads below write bytes no other one writes
        let regions: Vec<Region> = boxes.iter().map(Placement::out_region).collect();
        let mut buffer = BlockBuffer::new(out, &out_shape, elem)
            .map_err(|e| InvalidArgumentError::new_err(format!("the output: {e}")))?;
        let blocks = buffer.split_disjoint(&regions).map_err(|e| match e {
            BlockError::Intersect { first, second } => InvalidArgumentError::new_err(format!(
                "placements {first} and {second} overlap in the output"
            )),
            e => InvalidArgumentError::new_err(format!("the placements: {e}")),
        })?;
        let decode = |e: CodecError| codec_err("decoding a chunk", e);
        let one = |bytes: Option<&[u8]>,
                   block: &mut Block<'_>,
                   place: &Placement|
         -> Result<bool, ArrayError> {
            let Some(bytes) = bytes else {
                return Ok(false);
            };
            if place.is_whole(&chunk_shape) {
                if let Some(dst) = block.as_contiguous_mut() {
                    // the chunk is one contiguous run of the output: decoded straight
                    // into it
                    chain.decode_into(bytes, dst).map_err(decode)?;
                    return Ok(true);
                }
                let mut tmp = vec![0u8; chain.decoded_len()];
                chain.decode_into(bytes, &mut tmp).map_err(decode)?;
                block
                    .copy_from(&tmp, &chunk_shape, &place.chunk_start())
                    .map_err(|e| decode(e.into()))?;
                return Ok(true);
            }
            // a box of the chunk: the partial decoder decodes what it needs (a compressed
            // chunk's prefix up to the box's last element, when that is at most three
            // quarters of it)
            let region = Region {
                start: place.chunk_start(),
                shape: place.extent.iter().map(|&x| x as u64).collect(),
            };
            let mut tmp = vec![0u8; place.extent.iter().product::<usize>() * elem];
            chain
                .partial_decoder()
                .region(&bytes, &region, &mut tmp)
                .map_err(decode)?;
            block
                .copy_from(&tmp, &region.shape, &vec![0; region.shape.len()])
                .map_err(|e| decode(e.into()))?;
            Ok(true)
        };
        let mut work: Vec<(Block<'_>, &Placement, bool)> = blocks
            .into_iter()
            .zip(&boxes)
            .map(|(block, place)| (block, place, false))
            .collect();
        let got: Result<Vec<bool>, ArrayError> = run(py, || {
            stored.each(&mut work, &|bytes, (block, place, got)| {
                *got = one(bytes, block, place)?;
                Ok(())
            })
        })?
        .map(|()| work.iter().map(|(_, _, got)| *got).collect());
        if let Ok(stored) = &got {
            let n = stored.iter().filter(|s| **s).count() as u64;
            DECODED.fetch_add(n, Ordering::Relaxed);
            DIRECT.fetch_add(n, Ordering::Relaxed);
        }
        Ok(got)
    }

    /// The body of [`ChunkCodec::encode_from`] and [`ChunkCodec::write_from`]: each chunk
    /// encoded (`None`: empty; else the parts of its encoding, one after the other: a shard's
    /// index and inner chunks are never joined) and handed to `then` with its position, on
    /// the worker thread that encoded it. A chunk that is not one contiguous run of the value
    /// is gathered by the chain from it (no copy of its own). The outer error is the
    /// arguments', the inner the engine's.
    fn encode_boxes<T: Send>(
        &self,
        py: Python<'_>,
        value: &PyReadonlyArray1<'_, u8>,
        value_shape: Vec<u64>,
        placements: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>,
        fill: Option<Vec<u8>>,
        then: impl Fn(usize, Option<Vec<Vec<u8>>>) -> Result<T, ArrayError> + Sync,
    ) -> PyResult<Result<Vec<T>, ArrayError>> {
        let elem = self.fixed_element_size(
            fill.as_deref(),
            "the chunks hold variable-size elements (use encode_vlen)",
        )?;
        let chain = self.chain();
        let chunk_shape = self.array.shape().to_vec();
        // the value's box of each chunk, in the value's coordinates (`out` of a Placement)
        let boxes: Vec<Placement> = placements
            .into_iter()
            .map(|(c, e, o)| {
                let p = Placement::new(&chunk_shape, &value_shape, c, e, o)?;
                if p.is_whole(&chunk_shape) {
                    Ok(p)
                } else {
                    Err(format!(
                        "the box {:?} + {:?} does not cover the chunk {chunk_shape:?}",
                        p.chunk, p.extent
                    ))
                }
            })
            .collect::<Result<_, String>>()
            .map_err(InvalidArgumentError::new_err)?;
        let src = value_bytes(value, &value_shape, elem)?;
        let encode = |e| codec_err("encoding a chunk", e);
        let got: Result<Vec<T>, ArrayError> = run(py, || {
            boxes
                .par_iter()
                .enumerate()
                .map(|(i, place)| {
                    let region;
                    let chunk = match place.contiguous_whole(&chunk_shape, &value_shape, elem) {
                        Some(range) => ChunkIn::Slice(&src[range]),
                        None => {
                            // gathered by the chain from the value, into its own buffer
                            region = place.out_region();
                            ChunkIn::Block(
                                SourceBlock::new(src, &value_shape, elem, &region)
                                    .map_err(|e| encode(e.into()))?,
                            )
                        }
                    };
                    if let Some(f) = &fill {
                        let empty = |row: &[u8]| row.chunks_exact(elem).all(|e| e == f.as_slice());
                        let is_empty = match &chunk {
                            ChunkIn::Slice(bytes) => empty(bytes),
                            _ => place.all_rows(src, &value_shape, elem, empty),
                        };
                        if is_empty {
                            return then(i, None);
                        }
                    }
                    let parts = chain
                        .encode_parts(chunk, EncodeOptions::ENCODE_EMPTY)
                        .map_err(encode)?
                        .ok_or_else(|| {
                            encode(CodecError::NotApplicable {
                                operation: "encoding a chunk",
                                reason: "the chain skipped a chunk it was asked to encode".into(),
                            })
                        })?;
                    ENCODED.fetch_add(1, Ordering::Relaxed);
                    FROM_VALUE.fetch_add(1, Ordering::Relaxed);
                    then(i, Some(parts))
                })
                .collect()
        })?;
        Ok(got)
    }
}

/// Refuses a fill value (the bytes of one element) of another size than the elements'.
fn check_fill(fill: Option<&[u8]>, elem: usize) -> PyResult<()> {
    match fill {
        Some(f) if f.len() != elem => Err(InvalidArgumentError::new_err(format!(
            "a fill value of {} bytes for elements of {elem}",
            f.len()
        ))),
        _ => Ok(()),
    }
}

/// The bytes of a value written (a C-contiguous `uint8` view), checked to hold the elements
/// of `value_shape`.
fn value_bytes<'a>(
    value: &'a PyReadonlyArray1<'_, u8>,
    value_shape: &[u64],
    elem: usize,
) -> PyResult<&'a [u8]> {
    let src = slice(value)?;
    let want = value_shape
        .iter()
        .try_fold(elem as u64, |n, &d| n.checked_mul(d))
        .and_then(|n| usize::try_from(n).ok());
    if want != Some(src.len()) {
        return Err(InvalidArgumentError::new_err(format!(
            "the value holds {} bytes, not those of shape {value_shape:?} ({elem} bytes an element)",
            src.len()
        )));
    }
    Ok(src)
}

/// A chunk encoded by `chain` even when it holds only the fill value (the bytes a codec call
/// returns: whether such a chunk is stored is the caller's choice).
fn encode_always(chain: &CodecChain, chunk: ChunkIn<'_>) -> Result<Vec<u8>, CodecError> {
    chain
        .encode(chunk, EncodeOptions::ENCODE_EMPTY)?
        .ok_or_else(|| CodecError::NotApplicable {
            operation: "encoding a chunk",
            reason: "the chain skipped a chunk it was asked to encode".into(),
        })
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

/// A box of a chunk (`chunk`, `extent`) and where it goes in the output (`out`).
struct Placement {
    chunk: Vec<usize>,
    extent: Vec<usize>,
    out: Vec<usize>,
}

fn usizes(v: Vec<u64>) -> Result<Vec<usize>, String> {
    v.into_iter()
        .map(|x| usize::try_from(x).map_err(|_| format!("{x} does not fit in memory")))
        .collect()
}

impl Placement {
    fn new(
        chunk_shape: &[u64],
        out_shape: &[u64],
        chunk: Vec<u64>,
        extent: Vec<u64>,
        out: Vec<u64>,
    ) -> Result<Self, String> {
        let n = chunk_shape.len();
        if chunk.len() != n || extent.len() != n || out.len() != n || out_shape.len() != n {
            return Err(format!(
                "a placement of rank {}/{}/{} in a chunk of rank {n} and an output of rank {}",
                chunk.len(),
                extent.len(),
                out.len(),
                out_shape.len()
            ));
        }
        for d in 0..n {
            let fits =
                |start: u64, dim: u64| start.checked_add(extent[d]).is_some_and(|e| e <= dim);
            if !fits(chunk[d], chunk_shape[d]) || !fits(out[d], out_shape[d]) {
                return Err(format!(
                    "placement {chunk:?} + {extent:?} -> {out:?} outside the chunk {chunk_shape:?} or the output {out_shape:?}"
                ));
            }
        }
        Ok(Placement {
            chunk: usizes(chunk)?,
            extent: usizes(extent)?,
            out: usizes(out)?,
        })
    }

    /// The box in the output (or the value), as a region of it.
    fn out_region(&self) -> Region {
        Region {
            start: self.out.iter().map(|&x| x as u64).collect(),
            shape: self.extent.iter().map(|&x| x as u64).collect(),
        }
    }

    /// The box's start in the chunk.
    fn chunk_start(&self) -> Vec<u64> {
        self.chunk.iter().map(|&x| x as u64).collect()
    }

    /// Whether the box covers the whole chunk.
    fn is_whole(&self, chunk_shape: &[u64]) -> bool {
        self.chunk.iter().all(|&x| x == 0)
            && self
                .extent
                .iter()
                .zip(chunk_shape)
                .all(|(&e, &d)| e as u64 == d)
    }

    /// The bytes of `out` the whole chunk goes to when they are one contiguous run (the
    /// chunk covers the output's trailing dimensions whole), else None.
    fn contiguous_whole(
        &self,
        chunk_shape: &[u64],
        out_shape: &[u64],
        elem: usize,
    ) -> Option<std::ops::Range<usize>> {
        let n = self.extent.len();
        if (0..n).any(|d| self.chunk[d] != 0 || self.extent[d] as u64 != chunk_shape[d]) {
            return None;
        }
        // past the first dimension of extent > 1, the box must span the output's dimensions
        let first = (0..n).find(|&d| self.extent[d] > 1).unwrap_or(n);
        if (first + 1..n).any(|d| self.extent[d] as u64 != out_shape[d]) {
            return None;
        }
        let start = offset(&self.out, out_shape) * elem;
        let len = self.extent.iter().product::<usize>() * elem;
        Some(start..start + len)
    }
}

impl Placement {
    /// Whether every row of the last dimension of the box of `src` (C order, `shape`) at
    /// `out` satisfies `f`, the rows in C order (stopping at the first that does not).
    fn all_rows(
        &self,
        src: &[u8],
        shape: &[u64],
        elem: usize,
        mut f: impl FnMut(&[u8]) -> bool,
    ) -> bool {
        let n = self.extent.len();
        let total = self.extent.iter().product::<usize>() * elem;
        if n == 0 || total == 0 {
            return f(&src[..total.min(src.len())]);
        }
        let row = self.extent[n - 1] * elem;
        let mut idx = vec![0usize; n - 1];
        let mut at: Vec<usize> = self.out.clone();
        loop {
            for d in 0..n - 1 {
                at[d] = self.out[d] + idx[d];
            }
            let s = offset(&at, shape) * elem;
            if !f(&src[s..s + row]) {
                return false;
            }
            let mut d = n - 1;
            loop {
                if d == 0 {
                    return true;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < self.extent[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }
}

/// The C-order element offset of `index` in an array of `shape`.
fn offset(index: &[usize], shape: &[u64]) -> usize {
    index
        .iter()
        .zip(shape)
        .fold(0usize, |acc, (&i, &d)| acc * d as usize + i)
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
/// was loaded: `{"decoded": n, "partial": n, "encoded": n, "direct": n, "from_value": n,
/// "updated": n, "files": n}`
/// (`direct`: of the decoded, those decoded straight into the output; `from_value`: of the
/// encoded, those encoded straight from the value written; `updated`: chunks updated in part
/// by the partial encoder, which re-encodes only the inner chunks of a shard it touches;
/// `files`: chunks the engine read or wrote itself in a `LocalStore`'s directory).
#[pyfunction]
pub(crate) fn pipeline_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("decoded", DECODED.load(Ordering::Relaxed))?;
    d.set_item("partial", PARTIAL.load(Ordering::Relaxed))?;
    d.set_item("encoded", ENCODED.load(Ordering::Relaxed))?;
    d.set_item("direct", DIRECT.load(Ordering::Relaxed))?;
    d.set_item("from_value", FROM_VALUE.load(Ordering::Relaxed))?;
    d.set_item("updated", UPDATED.load(Ordering::Relaxed))?;
    d.set_item("files", FILES.load(Ordering::Relaxed))?;
    Ok(d)
}

/// A store opened by the engine, so that the pipeline reads and writes the chunks of a batch
/// itself instead of through zarr-python's `ByteGetter` / `ByteSetter`, one Python call per
/// chunk: a `LocalStore`'s directory (each chunk read or written on the worker thread that
/// decodes or encodes it), or the location of an `ObjectStore` / `FsspecStore` over S3, GCS,
/// Azure or HTTP (every request of a batch in flight together, up to `ZARR_CONCURRENCY`, 256
/// by default, each chunk decoded as its bytes arrive). Keys are zarr-python's
/// (`StorePath.path`), below the location as zarr-python's store places them; a local write
/// is atomic (a temporary file renamed over the key), as `LocalStore`'s is. A store failure
/// is a `StoreError` (see [`files_err`]).
#[pyclass(frozen, module = "zarr_rs._core")]
pub(crate) struct EngineStore {
    store: Arc<dyn Store>,
}

impl EngineStore {
    fn store(&self) -> &dyn Store {
        &*self.store
    }

    /// Whether the store serves many requests at once to good effect (an object store).
    fn batched(&self) -> bool {
        zarr_array::fetch::batched(self.store())
    }
}

#[pymethods]
impl EngineStore {
    /// The existing directory `root` (a `LocalStore`'s `root`).
    #[new]
    fn new(py: Python<'_>, root: PathBuf) -> PyResult<Self> {
        run(py, || FilesystemStore::open(&root))?
            .map(|store| EngineStore {
                store: Arc::new(store),
            })
            .map_err(|e| files_err(e.into()))
    }

    /// The object store at `url` (`s3://bucket/prefix`, `gs://`, `az://`, `http(s)://host/path`)
    /// with `config`, its settings as `object_store` names them (`endpoint`, `region`,
    /// `access_key_id`, `skip_signature`, `allow_http`...: what obstore's stores report in
    /// their `config` and `client_options`), over the environment's; `read_only` refuses
    /// writes (an `http(s)://` store always does). Requests in flight: `ZARR_CONCURRENCY`.
    #[staticmethod]
    #[pyo3(signature = (url, config, read_only=false))]
    fn open_url(url: &str, config: Vec<(String, String)>, read_only: bool) -> PyResult<Self> {
        let options = RemoteOptions::from_env().map_err(|e| files_err(e.into()))?;
        let pairs = config.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let backend = ObjectStoreBackend::from_url_with_config(url, pairs, &options)
            .map_err(|e| files_err(e.into()))?;
        let read_only = read_only || backend.is_read_only();
        Ok(EngineStore {
            store: Arc::new(backend.read_only(read_only)),
        })
    }

    /// Whether the store is remote (an object store): its requests wait, many in flight.
    #[getter]
    fn remote(&self) -> bool {
        self.batched()
    }

    /// The stored bytes at each of `keys` as a NumPy `uint8` array (`None`: not stored),
    /// read in parallel with the GIL released.
    fn get_many<'py>(
        &self,
        py: Python<'py>,
        keys: Vec<String>,
    ) -> PyResult<Vec<Option<Bound<'py, PyArray1<u8>>>>> {
        // on an object store every request in flight together, else on the pool's threads
        let mut slots: Vec<(&str, Option<Vec<u8>>)> =
            keys.iter().map(|k| (k.as_str(), None)).collect();
        run(py, || {
            for_each_fetched(self.store(), &mut slots, &|store, (key, value)| {
                *value = store.get(key)?;
                Ok(())
            })
        })?
        .map_err(files_err)?;
        let got: Vec<Option<Vec<u8>>> = slots.into_iter().map(|(_, v)| v).collect();
        FILES.fetch_add(count(&got), Ordering::Relaxed);
        Ok(got
            .into_iter()
            .map(|g| g.map(|v| PyArray1::from_vec(py, v)))
            .collect())
    }

    /// Stores `values[i]` at `keys[i]` (`None` deletes the key), in parallel with the GIL
    /// released.
    fn set_many(
        &self,
        py: Python<'_>,
        keys: Vec<String>,
        values: Vec<Option<PyBackedBytes>>,
    ) -> PyResult<()> {
        if keys.len() != values.len() {
            return Err(InvalidArgumentError::new_err(format!(
                "{} keys for {} values",
                keys.len(),
                values.len()
            )));
        }
        let values: Vec<Option<&[u8]>> = values.iter().map(|v| v.as_deref()).collect();
        run(py, || {
            if self.batched() {
                // every request in flight together
                let writes: Vec<Write<'_>> = keys
                    .iter()
                    .zip(&values)
                    .map(|(k, v)| v.map_or(Write::Delete(k), |bytes| Write::Set(k, bytes)))
                    .collect();
                return self.store.write_each(&writes);
            }
            keys.par_iter()
                .zip(values.par_iter())
                .try_for_each(|(k, v)| match v {
                    Some(bytes) => self.store.set(k, bytes),
                    None => self.store.delete(k),
                })
        })?
        .map_err(|e| files_err(e.into()))?;
        FILES.fetch_add(keys.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}
