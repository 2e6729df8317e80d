//! Regions of the variable-size data types: `string` arrays as `String`s and
//! `variable_length_bytes` arrays as `Vec<u8>`s ([`Array::read_region_vlen`],
//! [`Array::write_region_vlen`]).
//!
//! Their chunks go through the bytes->bytes codecs and then the `vlen-utf8` / `vlen-bytes`
//! format (zarr-codecs' [`vlen`](zarr_codecs::vlen)), each chunk holding every element of the
//! chunk shape, the edge chunks padded with the fill value, as zarr-python writes them.
//! Region and selection reads and writes, appends, prepends and resizes run the code of
//! fixed-size elements (`Array::read_region_as`, `Array::read_indexed_as`,
//! `Array::write_region_as`, `Array::write_selection_as`, `Array::edit_chunk`): their batches
//! of requests to object stores, threads, partial reads of shards (a shard's index and the
//! inner chunks met) and compare-and-swap. They move element indices (one `u64` each)
//! instead of elements: a write's chunk buffer names, for each element, one of the stored
//! chunk, one of the data or the fill value (`write::Elements::Variable`), and is made of
//! them when encoded; a read's output names the elements its sink kept of each part or
//! chunk (`read::ReadInto::Variable`), moved into the result at the end (on an object store,
//! every chunk's requests in flight at once through the remote engine, `fetch`, as for
//! numbers). A chunk a write covers
//! in part is read, changed and stored, by compare-and-swap where a neighbouring append may
//! share it; a shard is updated by sharding's partial encoder, which re-encodes only the inner
//! chunks the write touches. This module keeps the typed entry points and the conversions
//! of elements.
//!
//! ```
//! use std::sync::Arc;
//! use zarr_array::ndarray::{arr1, ArrayD};
//! use zarr_array::zarr_store::MemoryStore;
//! use zarr_array::{ArrayBuilder, DataType, ExtensionDef, Region};
//!
//! let store = Arc::new(MemoryStore::new());
//! let a = ArrayBuilder::new(vec![5], DataType::String)
//!     .chunk_shape(vec![2])
//!     .serializer(ExtensionDef::new("vlen-utf8"))
//!     .fill_value_json(&serde_json::json!("-"))?
//!     .create(store, "names")?;
//! let names = arr1(&["ab".to_string(), "é".into()]).into_dyn();
//! a.write_region_vlen(&Region::new(vec![1], vec![2])?, names.view())?;
//! let all: ArrayD<String> = a.read_region_vlen(&Region::whole(&[5]))?;
//! assert_eq!(all.as_slice().unwrap(), ["-", "ab", "é", "-", "-"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ndarray::{ArrayD, ArrayViewD};
use zarr_buffer::{fill_pattern, AlignedBuffer};
use zarr_codecs::vlen::VlenChunk;
use zarr_codecs::{ChunkIn, CodecChain, CodecError, EncodeOptions};
use zarr_grid::geometry::Region;
use zarr_meta::DataType;

use crate::array::{to_ndarray, Array, ChunkCodec};
use crate::error::{ArrayError, Result};
use crate::read::{ReadInto, VlenSink};
use crate::selection::Selection;
use crate::write::{index_run, ChunkBuf, Elements, DATA_INDEX, FILL_INDEX, INDEX};

/// An element type of a variable-size data type: `String` for `string` arrays, `Vec<u8>` for
/// `variable_length_bytes` arrays.
pub trait VlenElement: Clone + Send + Sync + 'static {
    /// The data type an array must have.
    const DATA_TYPE: DataType;
    /// The Rust name, for errors.
    const NAME: &'static str;

    /// The element from its stored bytes (UTF-8 for `String`, checked when decoded).
    ///
    /// # Errors
    /// Bytes that are not a value of the type (a `String` that is not UTF-8).
    fn from_stored(bytes: &[u8]) -> std::result::Result<Self, std::str::Utf8Error>;

    /// The bytes the element is stored as.
    fn as_stored(&self) -> &[u8];
}

impl VlenElement for String {
    const DATA_TYPE: DataType = DataType::String;
    const NAME: &'static str = "String";
    fn from_stored(bytes: &[u8]) -> std::result::Result<Self, std::str::Utf8Error> {
        std::str::from_utf8(bytes).map(str::to_owned)
    }
    fn as_stored(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl VlenElement for Vec<u8> {
    const DATA_TYPE: DataType = DataType::Bytes;
    const NAME: &'static str = "Vec<u8>";
    fn from_stored(bytes: &[u8]) -> std::result::Result<Self, std::str::Utf8Error> {
        Ok(bytes.to_vec())
    }
    fn as_stored(&self) -> &[u8] {
        self
    }
}

/// Element `src` of a decoded chunk stored under `key`, as `T`.
fn element_of<T: VlenElement>(
    chunk: &zarr_codecs::vlen::VlenChunk,
    src: usize,
    codec: &'static str,
    key: &str,
) -> Result<T> {
    let codec_err = |reason| ArrayError::Codec {
        context: key.to_string(),
        source: CodecError::Corrupt { codec, reason },
    };
    let stored = chunk
        .get(src)
        .ok_or_else(|| codec_err(format!("no element {src}")))?;
    T::from_stored(stored).map_err(|e| codec_err(format!("element {src} is not UTF-8 ({e})")))
}

/// The number of elements of a chunk of `shape`.
fn chunk_count(shape: &[u64]) -> Result<usize> {
    zarr_grid::geometry::num_elements(shape)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| ArrayError::TooLarge {
            what: "a chunk",
            shape: shape.to_vec(),
        })
}

fn try_vec<T>(n: usize, what: &'static str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| ArrayError::OutOfMemory {
            what,
            bytes: (n as u64).saturating_mul(std::mem::size_of::<T>() as u64),
        })?;
    Ok(v)
}

/// The stored bytes of the elements of `data` (of `shape`) in C order, and the buffer of
/// their indices ([`Elements::Variable`]: element `i` is [`DATA_INDEX`] `| i`), as the write
/// paths of fixed-size elements take their data.
fn element_indices<'d, T: VlenElement>(
    data: &'d ArrayViewD<'_, T>,
    shape: &[u64],
) -> Result<(Vec<&'d [u8]>, Vec<u8>)> {
    let items: Vec<&[u8]> = data.iter().map(VlenElement::as_stored).collect();
    let len = items
        .len()
        .checked_mul(INDEX)
        .ok_or_else(|| ArrayError::TooLarge {
            what: "a write",
            shape: shape.to_vec(),
        })?;
    let mut indices = try_vec::<u8>(len, "the element indices of a write")?;
    indices.resize(len, 0);
    index_run(&mut indices, DATA_INDEX);
    Ok((items, indices))
}

/// The elements of a region read, as [`ReadInto::Variable`]'s sink keeps them: each part's
/// in C order, in a vector of its own, so that element `k` of part `p` has the index
/// `p << 32 | k` (an element count of the `vlen` format is a `u32`).
struct Kept<T> {
    parts: std::sync::Mutex<Vec<Vec<T>>>,
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept {
            parts: std::sync::Mutex::new(Vec::new()),
        }
    }
}

impl<T> Kept<T> {
    fn into_parts(self) -> Vec<Vec<T>> {
        self.parts
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<T: VlenElement> VlenSink for Kept<T> {
    fn keep(
        &self,
        key: &str,
        codec: &'static str,
        chunk: &VlenChunk,
        shape: &[u64],
        at: &Region,
    ) -> Result<u64> {
        let too_many = || ArrayError::TooLarge {
            what: "a region read's parts",
            shape: at.shape.clone(),
        };
        // converted before the lock is taken: the parts convert in parallel
        let count = chunk_count(&at.shape)?;
        if u32::try_from(count).is_err() {
            return Err(too_many());
        }
        let mut part = try_vec::<T>(count, "a chunk's elements")?;
        if at.shape == shape {
            for src in 0..count {
                part.push(element_of::<T>(chunk, src, codec, key)?);
            }
        } else {
            // the part's runs of positions in the chunk, in C order (linear indices: 1-byte
            // "elements")
            let zero = vec![0; at.rank()];
            let mut failed = None;
            let runs = |src: usize, _, n: usize| {
                for src in src..src + n {
                    if failed.is_some() {
                        return;
                    }
                    match element_of::<T>(chunk, src, codec, key) {
                        Ok(e) => part.push(e),
                        Err(e) => failed = Some(e),
                    }
                }
            };
            zarr_grid::geometry::block_runs(shape, &at.start, &at.shape, &zero, &at.shape, 1, runs);
            if let Some(e) = failed {
                return Err(e);
            }
        }
        self.push(part).ok_or_else(too_many)?
    }

    fn keep_at(
        &self,
        key: &str,
        codec: &'static str,
        chunk: &VlenChunk,
        srcs: &[usize],
    ) -> Result<u64> {
        let too_many = || ArrayError::TooLarge {
            what: "a selection read's parts",
            shape: vec![srcs.len() as u64],
        };
        if u32::try_from(srcs.len()).is_err() {
            return Err(too_many());
        }
        let mut part = try_vec::<T>(srcs.len(), "a chunk's elements")?;
        for &src in srcs {
            part.push(element_of::<T>(chunk, src, codec, key)?);
        }
        self.push(part).ok_or_else(too_many)?
    }
}

impl<T> Kept<T> {
    /// Keeps the elements of one part (fewer than 2^32): the index of the first, `None`
    /// when there are 2^32 - 1 parts already (the last index is the fill value's).
    fn push(&self, part: Vec<T>) -> Option<Result<u64>> {
        let mut parts = self
            .parts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let p = u32::try_from(parts.len()).ok().filter(|&p| p < u32::MAX)?;
        if parts.try_reserve(1).is_err() {
            return Some(Err(ArrayError::OutOfMemory {
                what: "a read's parts",
                bytes: std::mem::size_of::<Vec<T>>() as u64,
            }));
        }
        parts.push(part);
        Some(Ok(u64::from(p) << 32))
    }

    /// The elements the indices of `indices` name (the fill value for the fill's index),
    /// moved out of what was kept: by runs of consecutive indices (a part's row, or the
    /// whole part), each moved from where the part's elements still left begin, or, out of
    /// that order (a selection's), one by one.
    fn take(self, indices: &[u8], fill: &T) -> Result<Vec<T>>
    where
        T: Clone,
    {
        let index = |at: usize| {
            let mut i = [0; INDEX];
            i.copy_from_slice(&indices[at * INDEX..][..INDEX]);
            u64::from_ne_bytes(i)
        };
        let bad = |i: u64| ArrayError::InvalidArgument {
            what: "a read",
            reason: format!("element index {i} names no element read"),
        };
        // each part's elements not moved yet (`as_mut_slice`: those after the first left),
        // the number moved from its front, and which of the others were moved one by one
        // (empty until one is)
        let mut parts: Vec<(std::vec::IntoIter<T>, usize, Vec<bool>)> = self
            .into_parts()
            .into_iter()
            .map(|part| (part.into_iter(), 0, Vec::new()))
            .collect();
        let count = indices.len() / INDEX;
        let mut items = try_vec::<T>(count, "the elements read")?;
        let mut at = 0;
        while at < count {
            let i = index(at);
            if i == u64::MAX {
                items.push(fill.clone());
                at += 1;
                continue;
            }
            let (p, k) = ((i >> 32) as usize, (i & u64::from(u32::MAX)) as usize);
            let (left, front, moved) = parts.get_mut(p).ok_or_else(|| bad(i))?;
            // the run of indices `i, i + 1, ...`, within the part
            let part_end = *front + left.len();
            if k >= part_end {
                return Err(bad(i));
            }
            let end = part_end.min(k + (count - at));
            let mut run = 1;
            while k + run < end && index(at + run) == i + run as u64 {
                run += 1;
            }
            // every index names one element kept, once: it is moved out, and an index
            // naming one moved already is an error
            if moved.get(k..k + run).is_some_and(|m| m.contains(&true)) {
                return Err(bad(i));
            }
            if k == *front {
                items.extend(left.by_ref().take(run));
                *front += run;
            } else {
                let elements = left
                    .as_mut_slice()
                    .get_mut(k.wrapping_sub(*front)..)
                    .and_then(|rest| rest.get_mut(..run))
                    .ok_or_else(|| bad(i))?;
                items.extend(
                    elements
                        .iter_mut()
                        .map(|e| std::mem::replace(e, fill.clone())),
                );
                if moved.is_empty() {
                    moved.resize(part_end, false);
                }
                moved[k..k + run].fill(true);
            }
            at += run;
        }
        Ok(items)
    }
}

impl Array {
    /// The elements of `stored`, the stored value of a chunk of `cc` under `key` (`None`:
    /// not stored), decoded: every element of its chunk shape, `count` of them (checked).
    fn decode_vlen_stored(
        &self,
        cc: &ChunkCodec,
        key: &str,
        stored: Option<&[u8]>,
        count: usize,
    ) -> Result<Option<VlenChunk>> {
        let Some(bytes) = stored else {
            return Ok(None);
        };
        let codec_err = |source| ArrayError::Codec {
            context: key.to_owned(),
            source,
        };
        let chunk = decode_vlen(&cc.chain, bytes).map_err(codec_err)?;
        if chunk.len() != count {
            return Err(codec_err(CodecError::Corrupt {
                codec: cc.chain.array_to_bytes().name(),
                reason: format!("{} elements for a chunk of {count}", chunk.len()),
            }));
        }
        Ok(Some(chunk))
    }

    /// The chunk buffer of variable-size elements ([`Elements::Variable`]) of a chunk of
    /// `cc`: the indices of the elements of `stored`, its stored value under `key` decoded
    /// (their count checked), or of the fill value for each when it is `None`.
    pub(crate) fn vlen_buf(
        &self,
        cc: &ChunkCodec,
        key: &str,
        stored: Option<&[u8]>,
    ) -> Result<ChunkBuf> {
        let count = chunk_count(&cc.shape)?;
        let too_large = || ArrayError::TooLarge {
            what: "a chunk",
            shape: cc.shape.clone(),
        };
        let len = count.checked_mul(INDEX).ok_or_else(too_large)?;
        let mut buf = AlignedBuffer::try_zeroed(len).ok_or_else(too_large)?;
        let stored = self.decode_vlen_stored(cc, key, stored, count)?;
        let bytes = buf.as_bytes_mut();
        if stored.is_some() {
            index_run(bytes, 0);
        } else {
            fill_pattern(bytes, &FILL_INDEX);
        }
        Ok(ChunkBuf { buf, stored })
    }

    /// The encoding of the chunk `chunk` of `cc` (stored under `key`), the elements its
    /// indices name, `data` those of the data written: `None` (nothing to store) when they
    /// are all the fill value, unless `keep` (a compare-and-swap write of a stored chunk,
    /// which cannot delete it) or [`WriteOptions::write_empty_chunks`](crate::WriteOptions)
    /// is set.
    pub(crate) fn encode_vlen_buf(
        &self,
        cc: &ChunkCodec,
        key: &str,
        chunk: &ChunkBuf,
        data: &[&[u8]],
        keep: bool,
    ) -> Result<Option<Vec<u8>>> {
        let fill = self.meta.fill_value.as_bytes();
        let codec = cc.chain.array_to_bytes().name();
        let stored = chunk.stored.as_ref();
        let element = |index: &[u8]| {
            let mut i = [0; INDEX];
            i.copy_from_slice(index);
            let i = u64::from_ne_bytes(i);
            let item = if i == u64::MAX {
                Some(fill)
            } else if i & DATA_INDEX != 0 {
                usize::try_from(i & !DATA_INDEX)
                    .ok()
                    .and_then(|i| data.get(i).copied())
            } else {
                usize::try_from(i).ok().and_then(|i| stored?.get(i))
            };
            item.ok_or(i)
        };
        // every index checked first, and whether all are the fill value, so that the
        // encoder takes the elements straight from where they are
        let indices = chunk.buf.as_bytes().chunks_exact(INDEX);
        let mut all_fill = true;
        for index in indices.clone() {
            let item = element(index).map_err(|i| ArrayError::Codec {
                context: key.to_owned(),
                source: CodecError::Corrupt {
                    codec,
                    reason: format!("no element {i}"),
                },
            })?;
            all_fill = all_fill && item == fill;
        }
        if all_fill && !keep && !self.options.write_empty_chunks {
            return Ok(None);
        }
        // (checked above: no index falls back to the fill value)
        let mut items = indices.map(|index| element(index).unwrap_or(fill));
        cc.chain
            .encode(ChunkIn::Vlen(&mut items), EncodeOptions::ENCODE_EMPTY)
            .map_err(|source| ArrayError::Codec {
                context: key.to_owned(),
                source,
            })
    }

    /// The fill value as an element.
    fn vlen_fill<T: VlenElement>(&self) -> Result<T> {
        T::from_stored(self.meta.fill_value.as_bytes()).map_err(|e| ArrayError::Codec {
            context: format!("{}: the fill value", self.path),
            source: CodecError::Corrupt {
                codec: zarr_codecs::vlen::VLEN_UTF8,
                reason: e.to_string(),
            },
        })
    }

    fn check_vlen_type<T: VlenElement>(&self) -> Result<()> {
        if self.meta.data_type != T::DATA_TYPE {
            return Err(ArrayError::DataTypeMismatch {
                expected: self.meta.data_type,
                got: T::NAME,
            });
        }
        Ok(())
    }

    /// Reads and decodes the stored chunk `chunk` of a `string` or `variable_length_bytes`
    /// array (`None`: not stored): every element of its chunk shape, edge padding included.
    ///
    /// # Errors
    /// A fixed-size data type, a chunk outside the grid, the store's errors, a corrupt chunk.
    pub fn read_chunk_vlen(&self, chunk: &[i64]) -> Result<Option<zarr_codecs::vlen::VlenChunk>> {
        if !self.meta.data_type.is_variable_size() {
            return Err(ArrayError::DataTypeMismatch {
                expected: self.meta.data_type,
                got: "a chunk of variable-size elements",
            });
        }
        let value = self.store.get(&self.chunk_key(chunk))?;
        self.decode_chunk_vlen(chunk, value)
    }

    /// Decodes `value`, the stored value of the chunk `chunk` (`None`: not stored).
    fn decode_chunk_vlen(
        &self,
        chunk: &[i64],
        value: Option<Vec<u8>>,
    ) -> Result<Option<VlenChunk>> {
        let Some(bytes) = value else {
            return Ok(None);
        };
        decode_vlen(&self.chunk_codec(chunk)?.chain, &bytes)
            .map(Some)
            .map_err(|source| ArrayError::Codec {
                context: self.chunk_key(chunk),
                source,
            })
    }

    /// Reads a region of a `string` (`T = String`) or `variable_length_bytes`
    /// (`T = Vec<u8>`) array; positions of missing chunks read as the fill value.
    ///
    /// # Errors
    /// Another data type, a region outside the array, the store's errors, a corrupt chunk
    /// (truncated, another element count than the chunk shape, an element of a `string`
    /// array that is not UTF-8).
    pub fn read_region_vlen<T: VlenElement>(&self, region: &Region) -> Result<ArrayD<T>> {
        self.check_vlen_type::<T>()?;
        region.check_inside(&self.meta.shape)?;
        let too_large = || ArrayError::TooLarge {
            what: "a region",
            shape: region.shape.clone(),
        };
        let n = region
            .num_elements()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(too_large)?;
        let fill = self.vlen_fill::<T>()?;
        // The read path of fixed-size elements reads the chunks (in batches, in parallel, a
        // shard's part as its index and the inner chunks met): `kept` converts each part's
        // elements, and the region's buffer names them by index.
        let len = n.checked_mul(INDEX).ok_or_else(too_large)?;
        let mut indices = try_vec::<u8>(len, "the region read")?;
        indices.resize(len, 0);
        let kept = Kept::<T>::default();
        self.read_region_as(region, &mut indices, ReadInto::Variable(&kept))?;
        let items = kept.take(&indices, &fill)?;
        to_ndarray(&region.shape, items)
    }

    /// Writes `data` (the region's shape) into a region of a `string` (`T = String`) or
    /// `variable_length_bytes` (`T = Vec<u8>`) array. A chunk that ends up all fill value is
    /// deleted unless [`WriteOptions::write_empty_chunks`](crate::WriteOptions) is set.
    ///
    /// # Errors
    /// Another data type, data of another shape, a region outside the array, the store's
    /// errors, a corrupt chunk the write must read (one it covers in part), an element too
    /// large for the format (4 GiB).
    pub fn write_region_vlen<T: VlenElement>(
        &self,
        region: &Region,
        data: ArrayViewD<'_, T>,
    ) -> Result<()> {
        self.write_region_vlen_in(region, data, false)
    }

    /// As [`Array::write_region_vlen`]; with `shared`, every chunk the region covers only in
    /// part is updated by a compare-and-swap read-modify-write of the chunk itself (of a
    /// shard, only the inner chunks the region touches re-encoded), so that a concurrent writer of another part of it (a
    /// neighbouring append) loses nothing; chunks covered whole are written plainly. As
    /// `Array::write_region_in` does for fixed-size elements.
    fn write_region_vlen_in<T: VlenElement>(
        &self,
        region: &Region,
        data: ArrayViewD<'_, T>,
        shared: bool,
    ) -> Result<()> {
        self.check_vlen_type::<T>()?;
        region.check_inside(&self.meta.shape)?;
        let data_shape: Vec<u64> = data.shape().iter().map(|&n| n as u64).collect();
        if data_shape != region.shape {
            return Err(ArrayError::ShapeMismatch {
                expected: region.shape.clone(),
                got: data_shape,
            });
        }
        let (data, indices) = element_indices(&data, &region.shape)?;
        self.write_region_as(region, &indices, shared, Elements::Variable(&data))
    }

    /// Appends `data` after the end of `axis` of a `string` (`T = String`) or
    /// `variable_length_bytes` (`T = Vec<u8>`) array (its other axes match the array's):
    /// the grown shape is reserved by compare-and-swap as [`Array::append_bytes`] does, then
    /// the data is written with [`Array::write_region_vlen`], a chunk (or shard) it covers in
    /// part, one a concurrent append may share, by compare-and-swap: every append lands
    /// whole, as [`Array::append_bytes`] promises.
    ///
    /// # Errors
    /// As [`Array::append_bytes`] and [`Array::write_region_vlen`].
    pub fn append_vlen<T: VlenElement>(
        &mut self,
        data: ArrayViewD<'_, T>,
        axis: usize,
    ) -> Result<()> {
        let shape: Vec<u64> = data.shape().iter().map(|&n| n as u64).collect();
        self.append_with(&shape, axis, Array::check_vlen_type::<T>, |next, region| {
            next.write_region_vlen_in(region, data.view(), true)
        })
    }

    /// Prepends `data` before position 0 of `axis` of a `string` or `variable_length_bytes`
    /// array, as [`Array::prepend_bytes`] does (the grid becomes `regular_bounded`), the data
    /// written with [`Array::write_region_vlen`], a chunk it covers in part by
    /// compare-and-swap (as [`Array::append_vlen`]).
    ///
    /// # Errors
    /// As [`Array::prepend_bytes`] and [`Array::write_region_vlen`].
    pub fn prepend_vlen<T: VlenElement>(
        &mut self,
        data: ArrayViewD<'_, T>,
        axis: usize,
    ) -> Result<()> {
        let shape: Vec<u64> = data.shape().iter().map(|&n| n as u64).collect();
        self.prepend_with(&shape, axis, Array::check_vlen_type::<T>, |next, region| {
            next.write_region_vlen_in(region, data.view(), true)
        })
    }

    /// Reads a selection ([`Selection`]: NumPy semantics, as [`Array::read_selection`]) of a
    /// `string` (`T = String`) or `variable_length_bytes` (`T = Vec<u8>`) array, of the
    /// shape [`Array::selection_shape`] gives; positions of missing chunks read as the fill
    /// value. Each chunk the selection meets is decoded once, in parallel.
    ///
    /// # Errors
    /// Another data type, a selection that does not fit, the store's errors, a corrupt chunk
    /// (as [`Array::read_region_vlen`]).
    pub fn read_selection_vlen<T: VlenElement>(&self, sel: &Selection) -> Result<ArrayD<T>> {
        self.check_vlen_type::<T>()?;
        let ix = self.indexer(sel)?;
        let out_shape = ix.output_shape();
        let n = zarr_grid::geometry::num_elements(&out_shape)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| ArrayError::TooLarge {
                what: "a selection",
                shape: out_shape.clone(),
            })?;
        let fill = self.vlen_fill::<T>()?;
        // the selection read of fixed-size elements, on element indices (as regions)
        let len = n.checked_mul(INDEX).ok_or_else(|| ArrayError::TooLarge {
            what: "a selection",
            shape: out_shape.clone(),
        })?;
        let mut indices = try_vec::<u8>(len, "the selection read")?;
        indices.resize(len, 0);
        let kept = Kept::<T>::default();
        self.read_indexed_as(&ix, &mut indices, ReadInto::Variable(&kept))?;
        let items = kept.take(&indices, &fill)?;
        to_ndarray(&out_shape, items)
    }

    /// Writes `data` (the shape [`Array::selection_shape`] gives) through a selection of a
    /// `string` (`T = String`) or `variable_length_bytes` (`T = Vec<u8>`) array, as
    /// [`Array::write_selection`]: repeated positions take the last value, as NumPy. Each
    /// chunk the selection meets is read, changed, encoded and stored once, in parallel.
    ///
    /// # Errors
    /// Another data type, a selection that does not fit, data of another shape, the store's
    /// errors, a corrupt chunk the write must read, an element too large for the format.
    pub fn write_selection_vlen<T: VlenElement>(
        &self,
        sel: &Selection,
        data: ArrayViewD<'_, T>,
    ) -> Result<()> {
        self.check_vlen_type::<T>()?;
        let ix = self.indexer(sel)?;
        let out_shape = ix.output_shape();
        let data_shape: Vec<u64> = data.shape().iter().map(|&n| n as u64).collect();
        if data_shape != out_shape {
            return Err(ArrayError::ShapeMismatch {
                expected: out_shape,
                got: data_shape,
            });
        }
        let (data, indices) = element_indices(&data, &out_shape)?;
        self.write_selection_as(sel, &indices, Elements::Variable(&data))
    }
}

/// The elements of a stored chunk of variable-size elements, decoded whole.
pub(crate) fn decode_vlen(
    chain: &CodecChain,
    bytes: &[u8],
) -> std::result::Result<VlenChunk, CodecError> {
    let mut chunk = VlenChunk::default();
    chain.decode_into(bytes, &mut chunk)?;
    Ok(chunk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn indices(list: &[u64]) -> Vec<u8> {
        list.iter().flat_map(|i| i.to_ne_bytes()).collect()
    }

    /// `Kept::take` moves each element named once into its place: by runs in the parts'
    /// order, one by one out of it, the fill value for the fill's index; an index naming no
    /// element, or one moved already, is an error.
    #[test]
    fn kept_elements_move_out_in_any_order() {
        let kept = Kept::<String>::default();
        let part = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(kept.push(part(&["a", "b", "c", "d"])).unwrap().unwrap(), 0);
        assert_eq!(kept.push(part(&["x", "y"])).unwrap().unwrap(), 1 << 32);
        let p1 = 1u64 << 32;
        let order = [2, p1 + 1, u64::MAX, 0, 1, p1, 3];
        let got = kept.take(&indices(&order), &"·".to_string()).unwrap();
        assert_eq!(got, ["c", "y", "·", "a", "b", "x", "d"]);

        for bad in [vec![0, 0], vec![5], vec![2 << 32], vec![1, 2, 0, 1]] {
            let kept = Kept::<String>::default();
            kept.push(part(&["a", "b", "c", "d"])).unwrap().unwrap();
            let got = kept.take(&indices(&bad), &String::new());
            assert!(
                matches!(got, Err(ArrayError::InvalidArgument { .. })),
                "{bad:?}: {got:?}"
            );
        }
    }
}
