//! Leaf chunks: a chunk as the innermost array -> bytes codec that is not sharding stores it.
//!
//! An unsharded chain has one leaf, the chunk itself (leaf grid index all zeros). A sharded
//! chain (any nesting) stores a regular grid of leaves of [`CodecChain::leaf_shape`] over the
//! chunk: each level's inner chunk shape divides its outer shape, so the leaves of every shard
//! line up. [`CodecChain::visit_stored_leaves`] reads the stored leaves of one stored value
//! (its encoded bytes, as the leaf chain stores them), and [`CodecChain::rewrite_leaves`]
//! replaces some of them, keeping every other leaf's bytes as they are and re-assembling each
//! shard level (Morton order, index, the level's bytes -> bytes codecs). No leaf is decoded by
//! either: what a leaf's bytes mean is the caller's business (`sparse_layout` chunks read as
//! sparse views and written as sparse chunks). Dense updates of part of a shard go through
//! sharding's partial encoder ([`CodecChain::partial_encoder`]) instead.
//!
//! A shard level is the array -> bytes codec's [`InnerChunks`]
//! ([`ArrayToBytesCodec::inner_chunks`]: the inner chain, the stored inner chunks of an
//! encoding, the encoding of a list of them); this module walks the levels, in parallel
//! (rayon). Chains with array -> array codecs at any level are refused
//! ([`CodecError::NotApplicable`]): their leaves would not be blocks of the chunk.
//!
//! [`ArrayToBytesCodec::inner_chunks`]: crate::ArrayToBytesCodec::inner_chunks

use std::collections::BTreeMap;

use zarr_grid::geometry::{linear_index, regular_chunks_in_region, Region};

use crate::chain::CodecChain;
use crate::codec::InnerChunks;
use crate::error::{CodecError, Result};

impl CodecChain {
    /// The inner chunks of one level below, when this chain's array -> bytes codec stores
    /// inner chunks and no array -> array codec comes before it.
    fn inner_level(&self) -> Option<&dyn InnerChunks> {
        if self.has_array_to_array() {
            return None;
        }
        self.array_to_bytes().inner_chunks()
    }

    /// The chain that stores the leaves: the innermost chain reached through sharding levels
    /// (a level with array -> array codecs ends the descent); the chain itself when it is not
    /// sharded. Its array -> bytes codec may be downcast
    /// (`SparseLayoutCodec::of(chain.leaf_chain())`).
    pub fn leaf_chain(&self) -> &CodecChain {
        let mut chain = self;
        while let Some(level) = chain.inner_level() {
            chain = level.chain();
        }
        chain
    }

    /// Whether the chunk is stored as more than itself: a grid of leaves under one or more
    /// sharding levels.
    pub fn is_sharded(&self) -> bool {
        self.inner_level().is_some()
    }

    /// The shape of a leaf (the chunk shape when the chain is not sharded).
    pub fn leaf_shape(&self) -> &[u64] {
        &self.leaf_chain().repr().shape
    }

    /// The number of leaves along each axis of the chunk (all ones when not sharded).
    pub fn leaf_grid_shape(&self) -> Vec<u64> {
        self.repr()
            .shape
            .iter()
            .zip(self.leaf_shape())
            .map(|(&c, &l)| c / l)
            .collect()
    }

    /// Refuses chains with array -> array codecs at any level, the leaf chain's included.
    fn check_leaf_levels(&self, operation: &'static str) -> Result<()> {
        let mut chain = self;
        loop {
            if chain.has_array_to_array() {
                return Err(CodecError::NotApplicable {
                    operation,
                    reason: format!(
                        "the chain has array -> array codecs before {:?} (leaves must be blocks \
                         of the chunk)",
                        chain.array_to_bytes().name()
                    ),
                });
            }
            match chain.array_to_bytes().inner_chunks() {
                Some(level) => chain = level.chain(),
                None => return Ok(()),
            }
        }
    }

    /// Calls `f(leaf grid index, leaf bytes)` for every stored leaf of the stored value
    /// `stored` that meets `region` (chunk-local positions; `None`: the whole chunk), in
    /// parallel (rayon), and returns the results in C order of each level's grid (the inner
    /// chunks of a shard in C order, each one's leaves before the next one's). A leaf's bytes
    /// are as the leaf chain stores them: before its own bytes -> bytes decoders
    /// (`leaf_chain().decode_to_array_bytes(bytes)` runs them). The leaf at grid index `i`
    /// covers the chunk positions `i * leaf_shape()` onwards.
    ///
    /// Every shard level's index is decoded and checked; no leaf is decoded.
    ///
    /// # Errors
    /// [`CodecError::NotApplicable`] for chains with array -> array codecs,
    /// [`CodecError::RegionOutOfBounds`], a corrupt or truncated shard, and `f`'s errors.
    pub fn visit_stored_leaves<R, E, F>(
        &self,
        stored: &[u8],
        region: Option<&Region>,
        f: F,
    ) -> Result<Vec<R>, E>
    where
        R: Send,
        E: From<CodecError> + Send,
        F: Fn(&[u64], &[u8]) -> Result<R, E> + Sync,
    {
        self.check_leaf_levels("visiting the leaf chunks")?;
        let whole;
        let region = match region {
            Some(r) => {
                r.check_inside(&self.repr().shape)
                    .map_err(|_| CodecError::RegionOutOfBounds {
                        start: r.start.clone(),
                        shape: r.shape.clone(),
                        chunk_shape: self.repr().shape.clone(),
                    })?;
                r
            }
            None => {
                whole = Region::whole(&self.repr().shape);
                &whole
            }
        };
        if region.is_empty() {
            return Ok(Vec::new());
        }
        let base = vec![0u64; self.repr().rank()];
        self.visit_level(stored, region, &base, &f)
    }

    /// One level of [`CodecChain::visit_stored_leaves`]: `base` is the leaf grid index of
    /// this level's first position, `region` a non-empty region in it.
    fn visit_level<R, E, F>(
        &self,
        stored: &[u8],
        region: &Region,
        base: &[u64],
        f: &F,
    ) -> Result<Vec<R>, E>
    where
        R: Send,
        E: From<CodecError> + Send,
        F: Fn(&[u64], &[u8]) -> Result<R, E> + Sync,
    {
        let Some(walker) = self.inner_level() else {
            return Ok(vec![f(base, stored)?]);
        };
        let encoded = self.decode_bytes_codecs(stored)?;
        let (inner, level) = (walker.chain(), Level::new(self, walker));
        let chunks = level.stored(encoded.as_slice())?;
        let jobs: Vec<(Vec<u64>, Region, &[u8])> =
            regular_chunks_in_region(level.inner_shape, region)
                .filter_map(|part| {
                    let idx: Vec<u64> = part.chunk.iter().map(|&g| g as u64).collect();
                    let bytes = chunks[level.lin(&idx)]?;
                    Some((level.base_of(base, &idx), part.in_chunk, bytes))
                })
                .collect();
        let parts = try_map(jobs, |(b, r, bytes)| inner.visit_level(bytes, &r, &b, f))?;
        Ok(parts.into_iter().flatten().collect())
    }

    /// Rewrites the leaves `leaves` (leaf grid indices) of the stored value `stored` (`None`:
    /// not stored) and returns the new stored value, or `None` when no leaf is left.
    ///
    /// `f(leaf grid index, its stored bytes or None)` gives each listed leaf's new bytes as
    /// the leaf chain stores them (encoded with [`CodecChain::leaf_chain`], its bytes -> bytes
    /// codecs included), or `None` for a leaf not to store; it runs in parallel (rayon). Every
    /// other leaf keeps its encoded bytes exactly and is not decoded; each shard level is
    /// re-assembled (Morton order, index, the level's bytes -> bytes codecs). A leaf listed
    /// twice is rewritten once.
    ///
    /// # Errors
    /// [`CodecError::NotApplicable`] for chains with array -> array codecs,
    /// [`CodecError::LeafOutOfGrid`] for a leaf index outside
    /// [`CodecChain::leaf_grid_shape`], a corrupt or truncated shard, an encoder's failure,
    /// and `f`'s errors.
    pub fn rewrite_leaves<E, F>(
        &self,
        stored: Option<&[u8]>,
        leaves: &[Vec<u64>],
        f: F,
    ) -> Result<Option<Vec<u8>>, E>
    where
        E: From<CodecError> + Send,
        F: Fn(&[u64], Option<&[u8]>) -> Result<Option<Vec<u8>>, E> + Sync,
    {
        let leaves = self.sorted_leaves(leaves)?;
        if leaves.is_empty() {
            return Ok(stored.map(<[u8]>::to_vec));
        }
        let base = vec![0u64; self.repr().rank()];
        self.rewrite_level(stored, &leaves, &base, &f)
    }

    /// `leaves` sorted and without repeats, each checked against the leaf grid, for a chain
    /// whose leaves may be rewritten.
    fn sorted_leaves<'l>(&self, leaves: &'l [Vec<u64>]) -> Result<Vec<&'l [u64]>> {
        self.check_leaf_levels("rewriting leaf chunks")?;
        let grid = self.leaf_grid_shape();
        if let Some(bad) = leaves
            .iter()
            .find(|l| l.len() != grid.len() || l.iter().zip(&grid).any(|(&i, &n)| i >= n))
        {
            return Err(CodecError::LeafOutOfGrid {
                leaf: bad.clone(),
                grid,
            });
        }
        let mut leaves: Vec<&[u64]> = leaves.iter().map(Vec::as_slice).collect();
        leaves.sort_unstable();
        leaves.dedup();
        Ok(leaves)
    }

    /// One level of [`CodecChain::rewrite_leaves`]: `base` is the leaf grid index of this
    /// level's first position, `leaves` (non-empty, sorted, unique) lie in this level.
    fn rewrite_level<E, F>(
        &self,
        stored: Option<&[u8]>,
        leaves: &[&[u64]],
        base: &[u64],
        f: &F,
    ) -> Result<Option<Vec<u8>>, E>
    where
        E: From<CodecError> + Send,
        F: Fn(&[u64], Option<&[u8]>) -> Result<Option<Vec<u8>>, E> + Sync,
    {
        let Some(walker) = self.inner_level() else {
            // a leaf level holds the one leaf `base`
            return f(base, stored);
        };
        let encoded = stored.map(|b| self.decode_bytes_codecs(b)).transpose()?;
        let (inner, level) = (walker.chain(), Level::new(self, walker));
        let mut chunks: Vec<Option<&[u8]>> = match &encoded {
            Some(e) => level.stored(e.as_slice())?,
            None => vec![None; level.n_inner],
        };
        // the listed leaves by inner chunk (C order of the inner grid; each group stays sorted)
        let mut groups: BTreeMap<usize, (Vec<u64>, Vec<&[u64]>)> = BTreeMap::new();
        for &leaf in leaves {
            let idx: Vec<u64> = leaf
                .iter()
                .zip(base)
                .zip(&level.ratio)
                .map(|((&l, &b), &r)| (l - b) / r)
                .collect();
            let group = groups.entry(level.lin(&idx)).or_default();
            if group.1.is_empty() {
                group.0 = level.base_of(base, &idx);
            }
            group.1.push(leaf);
        }
        let groups: Vec<_> = groups.into_iter().collect();
        let rewritten = try_map(groups, |(lin, (b, ls))| {
            inner
                .rewrite_level(chunks[lin], &ls, &b, f)
                .map(|new| (lin, new))
        })?;
        for (lin, new) in &rewritten {
            chunks[*lin] = new.as_deref();
        }
        match level.codec.assemble(&chunks)? {
            Some(bytes) => Ok(Some(self.encode_from_array_bytes(bytes)?)),
            None => Ok(None),
        }
    }
}

/// The geometry of one shard level: its inner chunk grid and how many leaves each inner chunk
/// holds along each axis.
struct Level<'c> {
    codec: &'c dyn InnerChunks,
    /// The name of the codec that stores the level.
    name: &'static str,
    inner_shape: &'c [u64],
    /// Inner chunks along each axis.
    grid: Vec<u64>,
    n_inner: usize,
    /// Leaves per inner chunk along each axis.
    ratio: Vec<u64>,
}

impl<'c> Level<'c> {
    fn new(outer: &'c CodecChain, codec: &'c dyn InnerChunks) -> Self {
        let inner = codec.chain();
        let inner_shape = inner.repr().shape.as_slice();
        let grid: Vec<u64> = outer
            .repr()
            .shape
            .iter()
            .zip(inner_shape)
            .map(|(&o, &i)| o / i)
            .collect();
        // the grid's extents multiply to the shard's inner chunk count, which its index holds
        let n_inner = grid.iter().product::<u64>() as usize;
        let ratio = inner_shape
            .iter()
            .zip(inner.leaf_shape())
            .map(|(&i, &l)| i / l)
            .collect();
        Level {
            codec,
            name: outer.array_to_bytes().name(),
            inner_shape,
            grid,
            n_inner,
            ratio,
        }
    }

    /// The stored inner chunks of `encoded`, one per inner chunk of the grid.
    fn stored<'a>(&self, encoded: &'a [u8]) -> Result<Vec<Option<&'a [u8]>>> {
        let chunks = self.codec.stored(encoded)?;
        if chunks.len() != self.n_inner {
            return Err(CodecError::SizeMismatch {
                codec: self.name,
                expected: self.n_inner as u64,
                got: chunks.len() as u64,
            });
        }
        Ok(chunks)
    }

    /// The C-order index of inner chunk `idx`.
    fn lin(&self, idx: &[u64]) -> usize {
        linear_index(idx, &self.grid) as usize
    }

    /// The leaf grid index of inner chunk `idx`'s first position, for a level at `base`.
    fn base_of(&self, base: &[u64], idx: &[u64]) -> Vec<u64> {
        base.iter()
            .zip(idx)
            .zip(&self.ratio)
            .map(|((&b, &i), &r)| b + i * r)
            .collect()
    }
}

/// `items.map(f)`, in parallel (rayon) when there are several and the `sharding` feature (which
/// brings in rayon) is on; the first error wins.
fn try_map<T, R, E>(items: Vec<T>, f: impl Fn(T) -> Result<R, E> + Sync + Send) -> Result<Vec<R>, E>
where
    T: Send,
    R: Send,
    E: Send,
{
    #[cfg(feature = "sharding")]
    if items.len() > 1 {
        use rayon::prelude::*;
        return items.into_par_iter().map(f).collect();
    }
    items.into_iter().map(f).collect()
}
