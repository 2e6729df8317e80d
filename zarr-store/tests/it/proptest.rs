//! Property tests: key validation never panics and never lets a path escape; the memory and
//! filesystem stores agree on random sequences of operations.

use std::path::{Component, Path};

use proptest::prelude::*;
use zarr_store::{validate_key, validate_prefix, ByteRange, FilesystemStore, MemoryStore, Store};

/// Strings made of the characters that matter to key validation.
fn key_like() -> impl Strategy<Value = String> {
    proptest::string::string_regex(
        r"[a-c./\\:\x00 -]{0,12}|(\.tmp-)?[a-z0-9.]{0,4}(/[a-z.\-]{0,4}){0,3}",
    )
    .unwrap_or_else(|e| panic!("bad regex: {e}"))
}

proptest! {
    #[test]
    fn validate_key_never_panics(key in any::<String>()) {
        let _ = validate_key(&key);
        let _ = validate_prefix(&key);
    }

    #[test]
    fn valid_keys_stay_under_the_root(key in key_like()) {
        if validate_key(&key).is_ok() {
            prop_assert!(!key.is_empty());
            for segment in key.split('/') {
                prop_assert!(!segment.is_empty() && segment != "." && segment != "..");
                prop_assert!(!segment.starts_with(".tmp-"));
                let components: Vec<_> = Path::new(segment).components().collect();
                prop_assert!(
                    matches!(components[..], [Component::Normal(_)]),
                    "segment {:?} of {:?} is not a plain name", segment, key
                );
            }
            let as_prefix = format!("{key}/");
            prop_assert!(validate_prefix(&as_prefix).is_ok());
        } else {
            let as_prefix = format!("{key}/");
            prop_assert!(validate_prefix(&as_prefix).is_err());
        }
    }
}

/// One store operation.
#[derive(Clone, Debug)]
enum Op {
    Set(String, Vec<u8>),
    Get(String),
    Size(String),
    GetRanges(String, Vec<ByteRange>),
    Delete(String),
    DeletePrefix(String),
    ListPrefix(String),
    ListDir(String),
}

/// Keys from a small alphabet, so operations collide, nest and conflict often.
fn key() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "b", "-1", "0", "zarr.json"]),
        1..=3,
    )
    .prop_map(|segments| segments.join("/"))
}

fn prefix() -> impl Strategy<Value = String> {
    prop_oneof![1 => Just(String::new()), 4 => key().prop_map(|k| format!("{k}/"))]
}

fn byte_range() -> impl Strategy<Value = ByteRange> {
    prop_oneof![
        (0u64..12, 0u64..12).prop_map(|(start, end)| ByteRange::Range { start, end }),
        (0u64..12).prop_map(ByteRange::FromStart),
        (0u64..12).prop_map(ByteRange::Suffix),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (key(), prop::collection::vec(any::<u8>(), 0..10)).prop_map(|(k, v)| Op::Set(k, v)),
        1 => key().prop_map(Op::Get),
        1 => key().prop_map(Op::Size),
        1 => (key(), prop::collection::vec(byte_range(), 0..3)).prop_map(|(k, r)| Op::GetRanges(k, r)),
        2 => key().prop_map(Op::Delete),
        1 => prefix().prop_map(Op::DeletePrefix),
        1 => prefix().prop_map(Op::ListPrefix),
        1 => prefix().prop_map(Op::ListDir),
    ]
}

/// The outcome of `op` on `store`, errors compared by message.
fn apply(store: &dyn Store, op: &Op) -> String {
    fn show<T: std::fmt::Debug>(result: zarr_store::Result<T>) -> String {
        format!("{:?}", result.map_err(|e| e.to_string()))
    }
    match op {
        Op::Set(key, value) => show(store.set(key, value)),
        Op::Get(key) => show(store.get(key)),
        Op::Size(key) => show(store.size(key)),
        Op::GetRanges(key, ranges) => show(store.get_ranges(key, ranges)),
        Op::Delete(key) => show(store.delete(key)),
        Op::DeletePrefix(prefix) => show(store.delete_prefix(prefix)),
        Op::ListPrefix(prefix) => show(store.list_prefix(prefix)),
        Op::ListDir(prefix) => show(store.list_dir(prefix)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn memory_and_filesystem_stores_agree(ops in prop::collection::vec(op(), 1..40)) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let fs = FilesystemStore::open(dir.path()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let memory = MemoryStore::new();
        for (i, op) in ops.iter().enumerate() {
            let expected = apply(&memory, op);
            let got = apply(&fs, op);
            prop_assert_eq!(&got, &expected, "operation {} {:?}", i, op);
        }
        let keys = memory.list_prefix("").map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(apply(&fs, &Op::ListPrefix(String::new())), format!("Ok({keys:?})"));
        for key in keys {
            prop_assert_eq!(apply(&fs, &Op::Get(key.clone())), apply(&memory, &Op::Get(key)));
        }
    }
}
