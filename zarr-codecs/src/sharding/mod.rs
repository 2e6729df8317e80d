//! The `sharding_indexed` codec (array -> bytes): a shard holds a grid of inner chunks, each
//! encoded with its own codec chain, and an index of where each one lies.
//!
//! Name: `sharding_indexed`. Configuration:
//!
//! - `chunk_shape`: the inner chunk shape; it has the shard's rank and divides the shard
//!   shape on every axis;
//! - `codecs`: the inner chunks' codec chain (any valid chain, sharding included);
//! - `index_codecs`: the index's codec chain, which must encode to a fixed size (`bytes`,
//!   usually followed by `crc32c`);
//! - `index_location`: `"start"` or `"end"` (default `"end"`).
//!
//! `codecs` and `index_codecs` default as in zarr-python (`[bytes little]` and
//! `[bytes little, crc32c]`). See the
//! [Zarr v3 spec](https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html).
//!
//! The index is a C-order array of `(offset, nbytes)` pairs of `uint64`, one per inner chunk,
//! offsets counted from the start of the shard; `(2^64-1, 2^64-1)` marks an inner chunk that is
//! not stored and reads as the fill value.
//!
//! Writing follows zarr-python, so that shards with deterministic inner codecs are
//! byte-identical: inner chunks whose elements all equal the fill value are not stored, the
//! others are written back to back in Morton (Z) order of their grid positions, and a shard
//! with no stored inner chunk is not written at all
//! ([`crate::CodecChain::encode`] returns `None`). Inner chunks are encoded and decoded
//! in parallel (rayon). Reading a region ([`crate::PartialDecoder::region`]) fetches the
//! index with one request and the inner chunks it needs with one more.
//!
//! ```
//! use zarr_codecs::{default_registry, ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![4, 4], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "sharding_indexed", "configuration": {
//!     "chunk_shape": [2, 2],
//!     "codecs": [{"name": "bytes"}],
//!     "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
//!     "index_location": "end"}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let mut chunk = vec![0u8; 16];
//! chunk[0] = 1; // only the first inner chunk holds data
//! let shard = chain.encode(&chunk, EncodeOptions::SKIP_EMPTY)?.expect("not all fill");
//! assert_eq!(shard.len(), 4 + 4 * 16 + 4); // one inner chunk, the index, its checksum
//! assert_eq!(chain.decode(&shard)?.as_bytes(), &chunk[..]);
//! assert!(chain.encode(&[0; 16], EncodeOptions::SKIP_EMPTY)?.is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod decode;
mod encode;
mod index;
mod morton;
mod partial;

use serde::{Deserialize, Serialize};
use zarr_grid::geometry::{linear_index, unravel_index, Region};
use zarr_meta::{DataType, ExtensionDef, ExtensionPoint, FillValue};

use crate::block::{Block, SourceBlock};
use crate::bytes::{BytesConfig, Endian};
use crate::chain::{check_region, CodecChain};
use crate::codec::{ArrayToBytesCodec, Codec, InnerChunks, PartialEncoder};
use crate::crc32c::Crc32cConfig;
use crate::error::{CodecError, Result};
use crate::registry::CodecRegistry;
use crate::repr::ChunkRepr;
use crate::source::ByteRangeSource;

use index::MISSING;

#[cfg(feature = "vlen")]
mod vlen;

/// The codec's name.
pub const NAME: &str = "sharding_indexed";

/// Where the index lies in the shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexLocation {
    /// Before the inner chunks.
    Start,
    /// After the inner chunks.
    #[default]
    End,
}

fn bytes_little() -> ExtensionDef {
    BytesConfig {
        endian: Some(Endian::Little),
    }
    .into()
}

fn default_codecs() -> Vec<ExtensionDef> {
    vec![bytes_little()]
}

fn default_index_codecs() -> Vec<ExtensionDef> {
    vec![bytes_little(), Crc32cConfig {}.into()]
}

/// The configuration of `sharding_indexed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardingConfig {
    /// The inner chunk shape.
    pub chunk_shape: Vec<u64>,
    /// The inner chunks' codecs.
    #[serde(default = "default_codecs")]
    pub codecs: Vec<ExtensionDef>,
    /// The index's codecs (fixed-size encoding).
    #[serde(default = "default_index_codecs")]
    pub index_codecs: Vec<ExtensionDef>,
    /// Where the index lies.
    #[serde(default)]
    pub index_location: IndexLocation,
}

crate::config::codec_def!(ShardingConfig => NAME);

impl ShardingConfig {
    /// Shards of inner chunks of `chunk_shape`, each stored through `codecs`, with the index
    /// as zarr-python writes it: `[bytes little, crc32c]`, at the end
    /// ([`ShardingConfig::with_index_codecs`] and [`ShardingConfig::with_index_location`] change
    /// that).
    ///
    /// ```
    /// # #[cfg(feature = "zstd")]
    /// # fn main() {
    /// use zarr_codecs::bytes::{BytesConfig, Endian};
    /// use zarr_codecs::sharding::ShardingConfig;
    /// use zarr_codecs::zstd::ZstdConfig;
    /// use zarr_meta::ExtensionDef;
    ///
    /// let little = BytesConfig { endian: Some(Endian::Little) };
    /// let shard = ShardingConfig::new(
    ///     vec![32, 32],
    ///     [ExtensionDef::from(little), ZstdConfig::default().into()],
    /// );
    /// let def = ExtensionDef::from(shard);
    /// assert_eq!(def.name, "sharding_indexed");
    /// assert_eq!(def.configuration.unwrap()["index_location"], "end");
    /// # }
    /// # #[cfg(not(feature = "zstd"))]
    /// # fn main() {}
    /// ```
    pub fn new(
        chunk_shape: Vec<u64>,
        codecs: impl IntoIterator<Item = impl Into<ExtensionDef>>,
    ) -> Self {
        ShardingConfig {
            chunk_shape,
            codecs: codecs.into_iter().map(Into::into).collect(),
            index_codecs: default_index_codecs(),
            index_location: IndexLocation::default(),
        }
    }

    /// The same configuration with the index stored through `codecs` (they must encode to a
    /// fixed size).
    #[must_use]
    pub fn with_index_codecs(
        mut self,
        codecs: impl IntoIterator<Item = impl Into<ExtensionDef>>,
    ) -> Self {
        self.index_codecs = codecs.into_iter().map(Into::into).collect();
        self
    }

    /// The same configuration with the index at `location`.
    #[must_use]
    pub fn with_index_location(mut self, location: IndexLocation) -> Self {
        self.index_location = location;
        self
    }
}

/// The `sharding_indexed` codec, built for one shard representation.
#[derive(Debug)]
pub struct ShardingCodec {
    repr: ChunkRepr,
    len: usize,
    inner_shape: Vec<u64>,
    chunks_per_shard: Vec<u64>,
    n_chunks: usize,
    inner: CodecChain,
    inner_len: usize,
    inner_bound: u64,
    index: CodecChain,
    index_len: usize,
    location: IndexLocation,
    /// C-order linear indices of the inner chunks, in Morton order: computed on the first
    /// encode, so that opening an array (which builds the codec) costs nothing per inner chunk.
    morton: std::sync::OnceLock<Vec<usize>>,
}

impl ShardingCodec {
    /// The Morton order of the inner chunks (C-order linear indices).
    fn morton(&self) -> &[usize] {
        self.morton
            .get_or_init(|| morton::morton_order(&self.chunks_per_shard))
    }

    /// The codec for shards of `repr`; nested codec definitions resolve through `registry`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for an inner chunk shape of another rank,
    /// with a zero, or that does not divide the shard shape, and for index codecs without a
    /// fixed-size encoding; any error of the nested chains.
    pub fn new(config: &ShardingConfig, repr: ChunkRepr, registry: &CodecRegistry) -> Result<Self> {
        let len = repr.validate()?;
        let invalid = |reason: String| -> CodecError {
            ExtensionDef::new(NAME)
                .invalid_configuration(ExtensionPoint::Codec, reason)
                .into()
        };
        let inner_shape = config.chunk_shape.clone();
        if inner_shape.len() != repr.rank() {
            return Err(invalid(format!(
                "chunk_shape {inner_shape:?} has {} dimensions but the shard has {}",
                inner_shape.len(),
                repr.rank()
            )));
        }
        if inner_shape.contains(&0) {
            return Err(invalid(format!("chunk_shape {inner_shape:?} has a zero")));
        }
        if repr.shape.iter().zip(&inner_shape).any(|(s, c)| s % c != 0) {
            return Err(invalid(format!(
                "chunk_shape {inner_shape:?} does not divide the shard shape {:?}",
                repr.shape
            )));
        }
        let chunks_per_shard: Vec<u64> = repr
            .shape
            .iter()
            .zip(&inner_shape)
            .map(|(s, c)| s / c)
            .collect();
        let inner_repr = repr.with_shape(inner_shape.clone());
        let inner = CodecChain::from_defs(&config.codecs, &inner_repr, registry)?;
        let mut index_shape = chunks_per_shard.clone();
        index_shape.push(2);
        let index_repr = ChunkRepr::new(
            index_shape,
            DataType::UInt64,
            FillValue::from_ne_bytes(DataType::UInt64, MISSING.to_ne_bytes())?,
        );
        let index = CodecChain::from_defs(&config.index_codecs, &index_repr, registry)?;
        let index_len = index
            .fixed_encoded_size()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                invalid(
                    "index_codecs must encode to a fixed size (bytes, optionally followed by crc32c)"
                        .into(),
                )
            })?;
        let n_chunks = index.decoded_len() / 16;
        Ok(ShardingCodec {
            len,
            inner_len: inner.decoded_len(),
            inner_bound: inner.encoded_size_bound(),
            morton: std::sync::OnceLock::new(),
            repr,
            inner_shape,
            chunks_per_shard,
            n_chunks,
            inner,
            index,
            index_len,
            location: config.index_location,
        })
    }

    /// The configuration, with the nested chains as they are written back.
    pub fn config(&self) -> ShardingConfig {
        ShardingConfig {
            chunk_shape: self.inner_shape.clone(),
            codecs: self.inner.to_defs(),
            index_codecs: self.index.to_defs(),
            index_location: self.location,
        }
    }

    /// The inner chunk shape.
    pub fn inner_chunk_shape(&self) -> &[u64] {
        &self.inner_shape
    }

    /// The number of inner chunks along each axis.
    pub fn chunks_per_shard(&self) -> &[u64] {
        &self.chunks_per_shard
    }

    /// The inner chunks' codec chain.
    pub fn inner_chain(&self) -> &CodecChain {
        &self.inner
    }

    /// The encoded index size in bytes.
    pub fn index_len(&self) -> usize {
        self.index_len
    }

    /// Where the index lies.
    pub fn index_location(&self) -> IndexLocation {
        self.location
    }

    /// Refuses the byte-buffer paths for shards of variable-size elements.
    fn check_fixed_size(&self, operation: &'static str) -> Result<()> {
        if self.repr.data_type.is_variable_size() {
            return Err(CodecError::NotApplicable {
                operation,
                reason: format!(
                    "shards of {} hold variable-size elements, which have no fixed-size buffer",
                    self.repr.data_type
                ),
            });
        }
        Ok(())
    }

    /// The inner chunk grid position of C-order index `lin`.
    fn unravel(&self, lin: usize) -> Vec<u64> {
        let mut idx = vec![0u64; self.chunks_per_shard.len()];
        unravel_index(lin as u64, &self.chunks_per_shard, &mut idx);
        idx
    }

    /// The C-order index of the inner chunk at grid index `chunk` (never negative: the inner
    /// grid starts at 0).
    fn ravel(&self, chunk: &[i64]) -> usize {
        let idx: Vec<u64> = chunk.iter().map(|&g| g as u64).collect();
        linear_index(&idx, &self.chunks_per_shard) as usize
    }
}

impl InnerChunks for ShardingCodec {
    fn shape(&self) -> &[u64] {
        &self.inner_shape
    }

    fn chain(&self) -> &CodecChain {
        &self.inner
    }

    fn stored<'a>(&self, encoded: &'a [u8]) -> Result<Vec<Option<&'a [u8]>>> {
        self.inner_chunk_bytes(encoded)
    }

    fn assemble(&self, inner: &[Option<&[u8]>]) -> Result<Option<Vec<u8>>> {
        self.assemble_shard(inner)
    }
}

/// Builds `sharding_indexed` from its definition.
pub(crate) fn factory(
    def: &ExtensionDef,
    repr: &ChunkRepr,
    registry: &CodecRegistry,
) -> Result<Codec> {
    let config: ShardingConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    let codec = ShardingCodec::new(&config, repr.clone(), registry)?;
    Ok(Codec::ArrayToBytes(Box::new(codec)))
}

impl ArrayToBytesCodec for ShardingCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config().into()
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.repr
    }

    fn encoded_size_bound(&self) -> u64 {
        (self.n_chunks as u64)
            .saturating_mul(self.inner_bound)
            .saturating_add(self.index_len as u64)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        self.check_fixed_size("encoding a byte buffer")?;
        match self.encode_shard(input)? {
            Some(shard) => Ok(shard),
            // a shard with every inner chunk missing: just the index
            None => self.assemble(std::iter::repeat_n(None, self.n_chunks)),
        }
    }

    fn encode_or_skip(&self, input: &[u8]) -> Result<Option<Vec<u8>>> {
        self.check_fixed_size("encoding a byte buffer")?;
        self.encode_shard(input)
    }

    fn encode_or_skip_block(&self, src: SourceBlock<'_>) -> Result<Option<Vec<u8>>> {
        self.check_fixed_size("encoding a byte buffer")?;
        src.check_chunk(&self.repr)?;
        let encoded = self.encode_inner(src)?;
        if encoded.iter().all(Option::is_none) {
            return Ok(None);
        }
        self.assemble(encoded.iter().map(Option::as_deref))
            .map(Some)
    }

    fn encode_or_skip_block_parts(&self, src: SourceBlock<'_>) -> Result<Option<Vec<Vec<u8>>>> {
        src.check_chunk(&self.repr)?;
        let encoded = self.encode_inner(src)?;
        if encoded.iter().all(Option::is_none) {
            return Ok(None);
        }
        self.assemble_parts(encoded).map(Some)
    }

    fn decode_into_block(&self, input: &[u8], out: &mut Block<'_>) -> Result<()> {
        self.check_fixed_size("decoding into a byte buffer")?;
        out.check_chunk(&self.repr)?;
        self.decode_shard_block(input, out)
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        self.check_fixed_size("decoding into a byte buffer")?;
        self.decode_shard(input, out)
    }

    fn inner_chunks(&self) -> Option<&dyn InnerChunks> {
        Some(self)
    }

    fn partial_encoder(&self) -> Option<&dyn PartialEncoder> {
        Some(self)
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }

    #[cfg(feature = "vlen")]
    fn decode_vlen(&self, input: &[u8]) -> Result<crate::vlen::VlenChunk> {
        self.decode_shard_vlen(input)
    }

    #[cfg(feature = "vlen")]
    fn encode_vlen(&self, items: &mut dyn ExactSizeIterator<Item = &[u8]>) -> Result<Vec<u8>> {
        let items: Vec<&[u8]> = items.collect();
        self.encode_shard_vlen(&items)
    }

    #[cfg(feature = "vlen")]
    fn decode_vlen_region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
    ) -> Result<Option<crate::vlen::VlenChunk>> {
        self.decode_shard_vlen_region(source, region)
    }

    fn decode_region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
        out: &mut [u8],
    ) -> Result<bool> {
        self.check_fixed_size("decoding into a byte buffer")?;
        check_region(&self.repr, region, out.len())?;
        if region.shape == self.repr.shape {
            let Some(bytes) = source.get()? else {
                return Ok(false);
            };
            self.decode_shard(&bytes, out)?;
            return Ok(true);
        }
        if region.is_empty() {
            return Ok(source.size()?.is_some());
        }
        self.decode_partial(source, region, out)
    }

    fn decode_points(
        &self,
        source: &dyn ByteRangeSource,
        points: &[Vec<u64>],
        out: &mut [u8],
    ) -> Result<bool> {
        self.check_fixed_size("decoding into a byte buffer")?;
        self.decode_points_partial(source, points, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::default_registry;

    fn repr() -> ChunkRepr {
        ChunkRepr::new(
            vec![4, 6],
            DataType::UInt16,
            FillValue::zero(DataType::UInt16),
        )
    }

    fn build(config: &str) -> Result<Codec> {
        let def: ExtensionDef = serde_json::from_str(&format!(
            r#"{{"name": "sharding_indexed", "configuration": {config}}}"#
        ))
        .unwrap();
        factory(&def, &repr(), &default_registry())
    }

    fn sharding(config: &str) -> Box<dyn ArrayToBytesCodec> {
        match build(config).unwrap() {
            Codec::ArrayToBytes(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn config_is_written_back_with_defaults() {
        let c = build(r#"{"chunk_shape": [2, 3]}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&c.to_def()).unwrap(),
            concat!(
                r#"{"name":"sharding_indexed","configuration":{"chunk_shape":[2,3],"#,
                r#""codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"#,
                r#""index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"#,
                r#""index_location":"end"}}"#
            )
        );
    }

    #[test]
    fn invalid_configurations_are_refused() {
        for (config, message) in [
            (
                r#"{"chunk_shape": [2, 4]}"#,
                "does not divide the shard shape [4, 6]",
            ),
            (
                r#"{"chunk_shape": [2]}"#,
                "has 1 dimensions but the shard has 2",
            ),
            (r#"{"chunk_shape": [0, 3]}"#, "has a zero"),
            (
                r#"{"chunk_shape": [2, 3], "index_location": "middle"}"#,
                "unknown variant",
            ),
            (r#"{"chunk_shape": [2, 3], "extra": 1}"#, "unknown field"),
            (
                r#"{"chunk_shape": [2, 3], "codecs": [{"name": "bytes"}]}"#,
                "\"endian\" is required",
            ),
        ] {
            let err = zarr_testkit::report(&build(config).unwrap_err());
            assert!(err.contains(message), "{config}: {err}");
        }
    }

    /// Runs `f` on a pool of one thread whose scratch buffer is taken, so that every inner
    /// chunk `f` encodes (rayon runs them on that thread) takes the allocating path.
    fn with_scratch_taken<R: Send>(f: impl FnOnce() -> R + Send) -> R {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        pool.install(|| {
            let taken = crate::scratch::with_scratch(1, |_| {
                // the buffer is this thread's, and taken
                assert!(crate::scratch::with_scratch(1, |_| ()).is_none());
                f()
            });
            taken.expect("the scratch buffer of a new thread is free")
        })
    }

    #[test]
    fn a_shard_encoded_as_parts_joins_to_the_shard() {
        // a 4 x 6 shard of 2 x 3 inner chunks, one of them all fill, in a larger 6 x 8 buffer
        let data: Vec<u8> = (0..48u16)
            .flat_map(|i| {
                if (8..16).contains(&(i % 16)) {
                    0
                } else {
                    i + 1
                }
                .to_ne_bytes()
            })
            .chain(std::iter::repeat_n(0u8, 6 * 8 * 2 - 48 * 2))
            .collect();
        let block = Region {
            start: vec![1, 2],
            shape: vec![4, 6],
        };
        let src = || SourceBlock::new(&data, &[6, 8], 2, &block).unwrap();
        for location in ["start", "end"] {
            let c = sharding(&format!(
                r#"{{"chunk_shape": [2, 3], "index_location": "{location}"}}"#
            ));
            let whole = c.encode_or_skip_block(src()).unwrap().unwrap();
            let parts = c.encode_or_skip_block_parts(src()).unwrap().unwrap();
            // the index and every stored inner chunk, each a part of its own
            assert!(parts.len() >= 2, "{location}: {}", parts.len());
            assert_eq!(parts.concat(), whole, "{location}");
            // the same shard while the scratch buffer of the one thread that encodes it is
            // taken (as by an outer shard): each inner chunk is gathered into its own buffer
            let busy = with_scratch_taken(|| c.encode_or_skip_block(src()));
            assert_eq!(busy.unwrap().unwrap(), whole, "{location}");
        }
        #[cfg(feature = "zstd")]
        {
            // inner chunks compressed straight from the scratch buffer, or from their own
            let c = sharding(
                r#"{"chunk_shape": [2, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}]}"#,
            );
            let free = c.encode_or_skip_block(src()).unwrap().unwrap();
            let busy = with_scratch_taken(|| c.encode_or_skip_block(src()));
            assert_eq!(busy.unwrap().unwrap(), free);
            let mut out = vec![0u8; 4 * 6 * 2];
            c.decode_into(&free, &mut out).unwrap();
            let mut want = vec![0u8; 4 * 6 * 2];
            src()
                .copy_part_to(&Region::whole(&[4, 6]), &mut want)
                .unwrap();
            assert_eq!(out, want);
        }
        let zeros = vec![0u8; 6 * 8 * 2];
        let c = sharding(r#"{"chunk_shape": [2, 3]}"#);
        let src = SourceBlock::new(&zeros, &[6, 8], 2, &block).unwrap();
        assert_eq!(c.encode_or_skip_block_parts(src).unwrap(), None);
    }

    #[test]
    fn all_fill_shards_are_not_stored() {
        let c = sharding(r#"{"chunk_shape": [2, 3]}"#);
        let zeros = vec![0u8; 48];
        assert_eq!(c.encode_or_skip(&zeros).unwrap(), None);
        // `encode` still produces a valid shard: the index alone
        let empty = c.encode(&zeros).unwrap();
        assert_eq!(empty.len(), 4 * 16 + 4);
        let mut out = vec![1u8; 48];
        c.decode_into(&empty, &mut out).unwrap();
        assert_eq!(out, zeros);
    }

    #[test]
    fn an_inner_chunk_of_the_wrong_size_is_an_error() {
        let c = sharding(
            r#"{"chunk_shape": [2, 3], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}"#,
        );
        let data: Vec<u8> = (0..48).collect();
        let mut shard = c.encode(&data).unwrap();
        let n = shard.len();
        // shorten inner chunk (0, 0) by one byte in the index
        let at = n - 4 * 16 + 8;
        shard[at..at + 8].copy_from_slice(&11u64.to_le_bytes());
        let mut out = vec![0u8; 48];
        let err = c.decode_into(&shard, &mut out).unwrap_err();
        assert!(
            matches!(&err, CodecError::InnerChunk { chunk, source }
            if chunk == &[0, 0] && matches!(**source, CodecError::SizeMismatch { .. })),
            "{err}"
        );
        assert_eq!(
            zarr_testkit::report(&err),
            "inner chunk [0, 0] of the shard: bytes decoded to 11 bytes, expected 12"
        );
        // an entry longer than any inner chunk's encoding
        shard[at..at + 8].copy_from_slice(&13u64.to_le_bytes());
        let err = c.decode_into(&shard, &mut out).unwrap_err();
        assert!(matches!(err, CodecError::InvalidShardIndex { .. }), "{err}");
        // a truncated shard
        assert!(matches!(
            c.decode_into(&shard[..10], &mut out),
            Err(CodecError::Truncated { .. })
        ));
    }
}
