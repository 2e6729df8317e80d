//! The bodies of the fuzz targets that exercise this crate (cargo feature `fuzzing`; **not a
//! stable API**: it changes with the targets).
//!
//! `fuzz/fuzz_targets/<target>.rs` calls them (the `fuzz` crate enables the feature), and
//! `tests/it/fuzz_corpus.rs` replays the target's corpus and regressions through the same
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

/// The body of the `metadata_v2` target: Zarr v2 documents.
pub mod metadata_v2 {
    use crate::v2::{ArrayMetadataV2, Attributes, ConsolidatedMetadataV2, GroupMetadataV2};

    /// Parses `data` as a `.zarray`, a `.zgroup`, a `.zattrs` and a `.zmetadata`. Whatever
    /// parses must write back to a document that parses to the same metadata, and writing is
    /// idempotent; the members of a `.zmetadata` that parse do the same.
    pub fn run(data: &[u8]) {
        if let Ok(meta) = ArrayMetadataV2::from_slice(data) {
            array(&meta);
        }
        if let Ok(group) = GroupMetadataV2::from_slice(data) {
            let written = group.to_vec_pretty();
            let again =
                GroupMetadataV2::from_slice(&written).expect("a .zgroup written back must parse");
            assert_eq!(again, group, ".zgroup changes in a write/read round trip");
        }
        if let Ok(attrs) = Attributes::from_slice(data) {
            let written = attrs.to_vec_pretty();
            let again =
                Attributes::from_slice(&written).expect("a .zattrs written back must parse");
            assert_eq!(
                again.to_vec_pretty(),
                written,
                "writing .zattrs is not idempotent"
            );
        }
        if let Ok(c) = ConsolidatedMetadataV2::from_slice(data) {
            let written = c.to_vec();
            let again = ConsolidatedMetadataV2::from_slice(&written)
                .expect("a .zmetadata written back must parse");
            assert_eq!(
                again.to_vec(),
                written,
                "writing .zmetadata is not idempotent"
            );
            let paths: Vec<&str> = c.node_paths().collect();
            for p in paths {
                if let Some(Ok(meta)) = c.array(p) {
                    array(&meta);
                }
                if let Some(Ok(group)) = c.group(p) {
                    let mut c2 = c.clone();
                    c2.set_group(p, &group);
                    assert_eq!(c2.group(p).map(Result::ok), Some(Some(group)));
                }
                let _ = c.attributes(p);
            }
        }
    }

    fn array(meta: &ArrayMetadataV2) {
        let written = meta.to_vec_pretty();
        let again =
            ArrayMetadataV2::from_slice(&written).expect("a .zarray written back must parse");
        assert_eq!(
            again.to_vec_pretty(),
            written,
            "writing .zarray is not idempotent"
        );
        assert_eq!(again.shape, meta.shape);
        assert_eq!(again.chunks, meta.chunks);
        assert_eq!(again.dtype, meta.dtype);
        assert_eq!(again.compressor, meta.compressor);
        assert_eq!(again.filters, meta.filters);
        assert_eq!(again.order, meta.order);
        assert_eq!(again.dimension_separator, meta.dimension_separator);
        assert_eq!(
            again.fill_value.as_ref().map(|f| f.as_bytes().to_vec()),
            meta.fill_value.as_ref().map(|f| f.as_bytes().to_vec()),
            "the fill value changes in a write/read round trip"
        );
    }
}
