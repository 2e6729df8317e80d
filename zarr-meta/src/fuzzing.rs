//! The bodies of the fuzz targets that exercise this crate (cargo feature `fuzzing`; **not a
//! stable API**: it changes with the targets).
//!
//! `fuzz/fuzz_targets/<target>.rs` calls them (the `fuzz` crate enables the feature), and
//! `tests/fuzz_corpus.rs` replays the target's corpus and regressions through the same
//! functions under plain `cargo test`. A panic is a finding.

/// The parsing half of the `metadata` target (zarr-array's `fuzzing::array_open` is the other).
pub mod metadata {
    /// Parses `data` as a `zarr.json` of every kind. Whatever parses must write back to a
    /// document that parses to the same metadata, and writing is idempotent.
    pub fn run(data: &[u8]) {
        let registry = crate::data_type::default_registry();
        let _ = crate::NodeMetadata::from_slice_with(data, &registry);
        if let Ok(group) = crate::GroupMetadata::from_slice(data) {
            let written = group.to_vec_pretty();
            let again = crate::GroupMetadata::from_slice(&written)
                .expect("a group document written back must parse");
            assert_eq!(
                again, group,
                "group metadata changes in a write/read round trip"
            );
        }
        if let Ok(meta) = crate::ArrayMetadata::from_slice(data) {
            let written = meta.to_vec_pretty();
            let again = crate::ArrayMetadata::from_slice(&written)
                .expect("an array document written back must parse");
            assert_eq!(
                again.to_vec_pretty(),
                written,
                "writing array metadata is not idempotent"
            );
            assert_eq!(again.shape, meta.shape);
            assert_eq!(again.data_type, meta.data_type);
            assert_eq!(again.fill_value.as_bytes(), meta.fill_value.as_bytes());
            assert_eq!(again.codecs, meta.codecs);
        }
    }
}
