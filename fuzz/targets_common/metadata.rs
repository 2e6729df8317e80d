// Shared by fuzz/fuzz_targets/metadata.rs and zarr-meta/tests/fuzz_corpus.rs (see README.md).

/// Parses `data` as a `zarr.json` of every kind. Whatever parses must write back to a document
/// that parses to the same metadata, and writing is idempotent.
pub fn fuzz_metadata_parse(data: &[u8]) {
    let registry = zarr_meta::data_type::default_registry();
    let _ = zarr_meta::NodeMetadata::from_slice_with(data, &registry);
    if let Ok(group) = zarr_meta::GroupMetadata::from_slice(data) {
        let written = group.to_vec_pretty();
        let again = zarr_meta::GroupMetadata::from_slice(&written)
            .expect("a group document written back must parse");
        assert_eq!(
            again, group,
            "group metadata changes in a write/read round trip"
        );
    }
    if let Ok(meta) = zarr_meta::ArrayMetadata::from_slice(data) {
        let written = meta.to_vec_pretty();
        let again = zarr_meta::ArrayMetadata::from_slice(&written)
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
