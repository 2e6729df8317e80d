//! Chunk grids and chunk geometry for Zarr v3 (work in progress; see README).
pub mod geometry;
