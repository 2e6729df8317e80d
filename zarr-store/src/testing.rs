//! The store conformance suite and the store test doubles (cargo feature `testing`; **not a
//! stable API**: it changes with the tests that use it).
//!
//! Every [`Store`] implementation runs [`run_store_conformance`] in its tests, so all stores
//! agree on the semantics the rest of the library relies on: missing keys, overwrites, empty
//! values, byte ranges and their errors, deletes, sorted listings, one-level listings, key
//! validation, keys with negative chunk indices, concurrent writers, and conditional writes
//! (read-modify-writes of concurrent threads all land; a store without them refuses `set_if`).
//!
//! The test doubles: [`FaultyStore`] injects faults (failed, cut-short or every later call),
//! for tests of what an interrupted operation leaves; [`CountingStore`] counts the calls made
//! to a store and the bytes moved; with cargo feature `object-store`, `CountingObjectStore`
//! counts the HTTP requests under an `ObjectStoreBackend`
//! (`ObjectStoreBackend::with_request_counter`); [`Unconditional`] hides a store's conditional
//! writes, for tests of what holds without them.
//!
//! ```
//! use zarr_store::{testing::run_store_conformance, MemoryStore};
//!
//! run_store_conformance(&MemoryStore::new());
//! ```
//!
//! The functions panic (like `assert!`) with a message naming the failed expectation.

use std::fmt::Debug;

use crate::{ByteRange, Condition, MemoryStore, Outcome, Result, Store, StoreError, StoreExt};

pub use crate::counting::{CountingStore, StoreCounts};
pub use crate::faulty::{Fault, FaultKind, FaultOp, FaultyStore};
#[cfg(feature = "object-store")]
pub use crate::object::{CountingObjectStore, RequestCounts};
pub use crate::unconditional::Unconditional;

/// A store over `bucket` of the S3(-compatible) server at `endpoint` (`http://` allowed),
/// under `prefix`, with the timeouts and retries of `options`; credentials and region from
/// the environment (`AWS_*`), the endpoint given here (the fault tests point it at their
/// proxy, or at the local server itself).
///
/// # Panics
///
/// When the client cannot be built or the prefix is invalid.
#[cfg(feature = "object-store")]
pub fn s3_store_at(
    endpoint: &str,
    bucket: &str,
    prefix: &str,
    options: &crate::RemoteOptions,
) -> crate::ObjectStoreBackend {
    let s3 = object_store::aws::AmazonS3Builder::from_env()
        .with_endpoint(endpoint)
        .with_bucket_name(bucket)
        .with_client_options(options.client_options().with_allow_http(true))
        .with_retry(options.retry_config())
        .build()
        .unwrap_or_else(|e| panic!("building the S3 client for {endpoint}: {e}"));
    crate::ObjectStoreBackend::new(std::sync::Arc::new(s3), prefix)
        .unwrap_or_else(|e| panic!("{prefix}: {e}"))
        .with_remote_options(options)
}

/// The timeouts and retries of the fault tests: short timeouts and backoffs, so that delayed
/// answers and retries cost little time (a request the loaded server answers late is retried
/// like a delayed one, or is an error without retries), `max_retries` retries within 20 s.
#[cfg(feature = "object-store")]
pub fn fault_test_options(max_retries: usize) -> crate::RemoteOptions {
    crate::RemoteOptions::default()
        .with_request_timeout(std::time::Duration::from_millis(600))
        .with_connect_timeout(std::time::Duration::from_secs(1))
        .with_max_retries(max_retries)
        .with_retry_timeout(std::time::Duration::from_secs(20))
        .with_backoff(
            std::time::Duration::from_millis(10),
            std::time::Duration::from_millis(200),
            2.0,
        )
}

/// Runs every check against `store`, which must be empty; it is left empty again.
///
/// # Panics
///
/// When the store does not behave as [`Store`] documents; the message says where.
pub fn run_store_conformance(store: &dyn Store) {
    assert_empty(
        store,
        "at the start (the conformance suite needs an empty store)",
    );
    check_missing_keys(store);
    check_set_get_overwrite(store);
    check_get_many(store);
    check_empty_value(store);
    check_byte_ranges(store);
    check_delete(store);
    check_delete_prefix(store);
    check_list_prefix(store);
    check_list_dir(store);
    check_negative_chunk_indices(store);
    check_unusual_valid_keys(store);
    check_invalid_keys(store);
    check_invalid_prefixes(store);
    check_key_conflicts(store);
    check_large_value(store);
    check_open_value(store);
    check_set_parts(store);
    check_extension_methods(store);
    check_concurrent_disjoint_writes(store);
    check_conditional_writes(store);
    check_concurrent_conditional_writes(store);
    assert_empty(store, "at the end");
}

/// Unwraps `result`, panicking with `what` and the error.
#[track_caller]
fn ok<T>(result: Result<T>, what: &str) -> T {
    match result {
        Ok(value) => value,
        Err(e) => panic!("{what}: unexpected error: {e}"),
    }
}

/// Asserts that `result` holds the expected value.
#[track_caller]
fn expect_eq<T: PartialEq + Debug>(result: Result<T>, expected: T, what: &str) {
    let got = ok(result, what);
    assert_eq!(got, expected, "{what}");
}

#[track_caller]
fn assert_empty(store: &dyn Store, when: &str) {
    let keys = ok(store.list_prefix(""), "list_prefix(\"\")");
    assert!(
        keys.is_empty(),
        "store must be empty {when}, found keys {keys:?}"
    );
}

/// Deletes everything and checks that it worked.
#[track_caller]
fn clear(store: &dyn Store) {
    ok(store.delete_prefix(""), "delete_prefix(\"\")");
    assert_empty(store, "after delete_prefix(\"\")");
}

fn bytes(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn check_missing_keys(store: &dyn Store) {
    let key = "missing/zarr.json";
    expect_eq(store.get(key), None, "get of a missing key");
    expect_eq(store.size(key), None, "size of a missing key");
    expect_eq(
        store.get_ranges(key, &[ByteRange::FromStart(0), ByteRange::Suffix(1000)]),
        None,
        "get_ranges of a missing key (ranges are not checked)",
    );
    ok(store.delete(key), "delete of a missing key");
    ok(
        store.delete_prefix("missing/"),
        "delete_prefix of a missing prefix",
    );
    expect_eq(
        store.list_prefix("missing/"),
        vec![],
        "list_prefix of a missing prefix",
    );
    expect_eq(
        store.list_dir("missing/"),
        Default::default(),
        "list_dir of a missing prefix",
    );
    expect_eq(
        store.list_dir(""),
        Default::default(),
        "list_dir of an empty store",
    );
    assert_empty(store, "after operations on missing keys");
}

fn check_get_many(store: &dyn Store) {
    assert!(
        store.fetch_concurrency() >= 1,
        "fetch_concurrency is at least 1"
    );
    expect_eq(store.get_many(&[]), vec![], "get_many of no keys");
    let keys: Vec<String> = (0..40).map(|i| format!("many/c/{i}")).collect();
    for (i, key) in keys
        .iter()
        .enumerate()
        .filter(|(i, _)| !i.is_multiple_of(3))
    {
        ok(store.set(key, format!("value {i}").as_bytes()), "set");
    }
    // every third key is missing; the answers come in the order asked, with repeats
    let mut asked: Vec<&str> = keys.iter().rev().map(String::as_str).collect();
    asked.push("many/c/1");
    let expected: Vec<Option<Vec<u8>>> = asked
        .iter()
        .map(|key| {
            let i: usize = key
                .rsplit('/')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            (!i.is_multiple_of(3)).then(|| bytes(&format!("value {i}")))
        })
        .collect();
    expect_eq(store.get_many(&asked), expected.clone(), "get_many");
    assert!(
        store.get_many(&["many/c/1", "../escape"]).is_err(),
        "get_many with an invalid key fails"
    );
    // fetch_each: every request answered once, each kind of answer as its one call gives it
    let whole = [crate::ByteRange::Suffix(1)];
    let requests: Vec<crate::Fetch<'_>> = asked
        .iter()
        .map(|key| crate::Fetch::Value(key))
        .chain([
            crate::Fetch::Ranges("many/c/2", &whole),
            crate::Fetch::Size("many/c/4"),
        ])
        .chain([crate::Fetch::Value("../escape")])
        .collect();
    let mut answers: Vec<Option<Result<crate::Fetched>>> = requests.iter().map(|_| None).collect();
    ok(
        store.fetch_each(&requests, &mut |i, answer| {
            assert!(
                answers[i].replace(answer).is_none(),
                "fetch_each answers once"
            );
        }),
        "fetch_each",
    );
    for (i, want) in expected.iter().enumerate() {
        match &answers[i] {
            Some(Ok(crate::Fetched::Value(got))) => assert_eq!(got, want, "fetch_each {i}"),
            other => panic!("fetch_each {i}: {other:?}"),
        }
    }
    let n = expected.len();
    assert!(
        matches!(&answers[n], Some(Ok(crate::Fetched::Ranges(Some(p)))) if p == &[b"2".to_vec()]),
        "fetch_each of a range: {:?}",
        answers[n]
    );
    assert!(
        matches!(answers[n + 1], Some(Ok(crate::Fetched::Size(Some(7))))),
        "fetch_each of a size: {:?}",
        answers[n + 1]
    );
    assert!(
        matches!(answers[n + 2], Some(Err(StoreError::InvalidKey { .. }))),
        "fetch_each of an invalid key: {:?}",
        answers[n + 2]
    );
    // write_each: every write made; an invalid key fails
    ok(
        store.write_each(&[
            crate::Write::Set("many/w/0", b"w0"),
            crate::Write::Set("many/w/1", b"w1"),
            crate::Write::Delete("many/c/1"),
        ]),
        "write_each",
    );
    expect_eq(store.get("many/w/1"), Some(bytes("w1")), "write_each set");
    expect_eq(store.get("many/c/1"), None, "write_each delete");
    assert!(
        store
            .write_each(&[crate::Write::Set("../escape", b"x")])
            .is_err(),
        "write_each with an invalid key fails"
    );
    ok(store.delete("many/w/0"), "delete");
    ok(store.delete("many/w/1"), "delete");
    ok(store.set("many/c/1", b"value 1"), "set");
    // listing with sizes: the same keys as list_prefix, each with its value's size
    let listed = ok(store.list_prefix_sizes("many/"), "list_prefix_sizes");
    let keys_only: Vec<String> = listed.iter().map(|(k, _)| k.clone()).collect();
    expect_eq(
        store.list_prefix("many/"),
        keys_only,
        "list_prefix_sizes lists list_prefix's keys",
    );
    for (key, size) in &listed {
        expect_eq(
            store.size(key),
            Some(*size),
            "list_prefix_sizes gives each size",
        );
    }
    assert_eq!(listed.len(), 26, "list_prefix_sizes of the stored keys");
    ok(store.delete_prefix("many/"), "delete_prefix");
    expect_eq(
        store.list_prefix_sizes("many/"),
        vec![],
        "list_prefix_sizes of a missing prefix",
    );
}

fn check_set_get_overwrite(store: &dyn Store) {
    let key = "a/b/zarr.json";
    ok(store.set(key, b"first value"), "set");
    expect_eq(store.get(key), Some(bytes("first value")), "get after set");
    expect_eq(store.size(key), Some(11), "size after set");
    ok(store.set(key, b"second, a longer value"), "overwrite");
    expect_eq(
        store.get(key),
        Some(bytes("second, a longer value")),
        "get after overwrite",
    );
    ok(store.set(key, b"short"), "overwrite with a shorter value");
    expect_eq(
        store.get(key),
        Some(bytes("short")),
        "get after a shorter overwrite",
    );
    expect_eq(store.size(key), Some(5), "size after a shorter overwrite");
    ok(store.set("zarr.json", b"root"), "set of a top-level key");
    expect_eq(
        store.get("zarr.json"),
        Some(bytes("root")),
        "get of a top-level key",
    );
    expect_eq(store.get("a/b"), None, "get of a prefix that is not a key");
    expect_eq(store.size("a"), None, "size of a prefix that is not a key");
    expect_eq(
        store.list_prefix(""),
        vec!["a/b/zarr.json".to_owned(), "zarr.json".to_owned()],
        "list after overwrites holds each key once",
    );
    clear(store);
}

fn check_empty_value(store: &dyn Store) {
    let key = "e/empty";
    ok(store.set(key, b""), "set of an empty value");
    expect_eq(store.get(key), Some(vec![]), "get of an empty value");
    expect_eq(store.size(key), Some(0), "size of an empty value");
    expect_eq(
        store.get_ranges(
            key,
            &[
                ByteRange::FromStart(0),
                ByteRange::Suffix(0),
                ByteRange::Range { start: 0, end: 0 },
            ],
        ),
        Some(vec![vec![], vec![], vec![]]),
        "empty ranges of an empty value",
    );
    expect_range_error(store, key, ByteRange::Range { start: 0, end: 1 }, 0);
    expect_range_error(store, key, ByteRange::Suffix(1), 0);
    expect_range_error(store, key, ByteRange::FromStart(1), 0);
    expect_eq(
        store.list_prefix("e/"),
        vec![key.to_owned()],
        "an empty value is listed",
    );
    clear(store);
}

#[track_caller]
fn expect_range_error(store: &dyn Store, key: &str, range: ByteRange, size: u64) {
    match store.get_ranges(key, &[ByteRange::FromStart(0), range]) {
        Err(StoreError::RangeOutOfBounds {
            key: k,
            range: r,
            size: s,
        }) => {
            assert_eq!(
                (k.as_str(), r, s),
                (key, range, size),
                "RangeOutOfBounds fields"
            );
        }
        other => panic!(
            "range {range} of {key:?} ({size} bytes): expected RangeOutOfBounds, got {other:?}"
        ),
    }
}

fn check_byte_ranges(store: &dyn Store) {
    let key = "r/c/0";
    let value: Vec<u8> = (0..100).collect();
    ok(store.set(key, &value), "set");
    let range = |start, end| ByteRange::Range { start, end };
    let cases: [(ByteRange, &[u8]); 9] = [
        (range(10, 20), &value[10..20]),
        (range(0, 100), &value[..]),
        (range(0, 0), &[]),
        (range(100, 100), &[]),
        (range(99, 100), &value[99..]),
        (ByteRange::FromStart(90), &value[90..]),
        (ByteRange::FromStart(100), &[]),
        (ByteRange::Suffix(5), &value[95..]),
        (ByteRange::Suffix(100), &value[..]),
    ];
    for (range, expected) in cases {
        expect_eq(
            store.get_ranges(key, &[range]),
            Some(vec![expected.to_vec()]),
            &format!("range {range}"),
        );
    }
    // Several ranges in one call come back in the order asked, duplicates and overlaps included.
    let ranges = [
        ByteRange::Suffix(3),
        range(0, 4),
        range(2, 6),
        range(2, 6),
        ByteRange::FromStart(98),
    ];
    expect_eq(
        store.get_ranges(key, &ranges),
        Some(vec![
            value[97..].to_vec(),
            value[..4].to_vec(),
            value[2..6].to_vec(),
            value[2..6].to_vec(),
            value[98..].to_vec(),
        ]),
        "several ranges in one call",
    );
    expect_eq(
        store.get_ranges(key, &[]),
        Some(vec![]),
        "no ranges of an existing key",
    );
    for bad in [
        range(0, 101),
        range(100, 101),
        range(101, 101),
        range(50, 40),
        range(u64::MAX - 1, u64::MAX),
        ByteRange::FromStart(101),
        ByteRange::FromStart(u64::MAX),
        ByteRange::Suffix(101),
        ByteRange::Suffix(u64::MAX),
    ] {
        expect_range_error(store, key, bad, 100);
    }
    expect_eq(
        store.get(key),
        Some(value),
        "value unchanged by range reads",
    );
    clear(store);
}

fn check_delete(store: &dyn Store) {
    for key in ["d/a/0", "d/a/1", "d/b", "d2"] {
        ok(store.set(key, key.as_bytes()), "set");
    }
    ok(store.delete("d/a/0"), "delete");
    expect_eq(store.get("d/a/0"), None, "get after delete");
    expect_eq(store.size("d/a/0"), None, "size after delete");
    expect_eq(
        store.get("d/a/1"),
        Some(bytes("d/a/1")),
        "sibling kept by delete",
    );
    ok(store.delete("d/a/0"), "second delete of the same key");
    ok(
        store.delete("d/a/1"),
        "delete of the last key under a prefix",
    );
    expect_eq(
        store.list_prefix(""),
        vec!["d/b".to_owned(), "d2".to_owned()],
        "list after deletes",
    );
    expect_eq(
        store.list_dir("d/").map(|l| (l.keys, l.prefixes)),
        (vec!["d/b".to_owned()], vec![]),
        "list_dir after the last key under a prefix was deleted",
    );
    ok(
        store.delete("d"),
        "delete of a prefix name that is not a key",
    );
    expect_eq(
        store.get("d/b"),
        Some(bytes("d/b")),
        "delete(\"d\") keeps keys under d/",
    );
    ok(store.set("d/a/0", b"again"), "set after delete");
    expect_eq(
        store.get("d/a/0"),
        Some(bytes("again")),
        "get after set after delete",
    );
    clear(store);
}

fn check_delete_prefix(store: &dyn Store) {
    let keys = [
        "arr/zarr.json",
        "arr/c/0/0",
        "arr/c/0/1",
        "arr/c/1/0",
        "arr2/zarr.json",
        "arr.x",
        "other/arr/x",
    ];
    for key in keys {
        ok(store.set(key, key.as_bytes()), "set");
    }
    ok(
        store.delete_prefix("arr/c/0/"),
        "delete_prefix of a nested prefix",
    );
    expect_eq(
        store.list_prefix("arr/"),
        vec!["arr/c/1/0".to_owned(), "arr/zarr.json".to_owned()],
        "list after delete_prefix(\"arr/c/0/\")",
    );
    ok(store.delete_prefix("arr/"), "delete_prefix");
    expect_eq(
        store.list_prefix(""),
        vec![
            "arr.x".to_owned(),
            "arr2/zarr.json".to_owned(),
            "other/arr/x".to_owned(),
        ],
        "delete_prefix(\"arr/\") keeps arr2/, arr.x and other/arr/",
    );
    ok(
        store.delete_prefix("arr/"),
        "delete_prefix of a prefix already deleted",
    );
    ok(store.delete_prefix("arr.x/"), "delete_prefix under a key");
    expect_eq(
        store.get("arr.x"),
        Some(bytes("arr.x")),
        "delete_prefix(\"arr.x/\") keeps arr.x",
    );
    clear(store);
}

fn check_list_prefix(store: &dyn Store) {
    // Written out of order; listed in byte order.
    let keys = [
        "b/zarr.json",
        "a/c/1",
        "a/zarr.json",
        "a/c/0",
        "a.b",
        "ab/x",
        "a/c/10",
        "a/c/2",
        "A/upper",
        "a/c/-1",
    ];
    for key in keys {
        ok(store.set(key, b"v"), "set");
    }
    let mut sorted: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
    sorted.sort();
    expect_eq(store.list_prefix(""), sorted, "list_prefix(\"\") is sorted");
    expect_eq(
        store.list_prefix("a/"),
        vec!["a/c/-1", "a/c/0", "a/c/1", "a/c/10", "a/c/2", "a/zarr.json"]
            .into_iter()
            .map(String::from)
            .collect(),
        "list_prefix(\"a/\") excludes a.b and ab/",
    );
    expect_eq(
        store.list_prefix("a/c/"),
        vec!["a/c/-1", "a/c/0", "a/c/1", "a/c/10", "a/c/2"]
            .into_iter()
            .map(String::from)
            .collect(),
        "list_prefix(\"a/c/\")",
    );
    expect_eq(store.list_prefix("a.b/"), vec![], "list_prefix under a key");
    clear(store);
}

fn check_list_dir(store: &dyn Store) {
    for key in [
        "zarr.json",
        "g/zarr.json",
        "g/b.txt",
        "g/arr/zarr.json",
        "g/arr/c/0/0",
        "g/arr/c/1/0",
        "h/deep/er/key",
    ] {
        ok(store.set(key, b"v"), "set");
    }
    let level = |keys: &[&str], prefixes: &[&str]| crate::ListDir {
        keys: keys.iter().map(|k| (*k).to_owned()).collect(),
        prefixes: prefixes.iter().map(|p| (*p).to_owned()).collect(),
    };
    expect_eq(
        store.list_dir(""),
        level(&["zarr.json"], &["g/", "h/"]),
        "list_dir(\"\")",
    );
    expect_eq(
        store.list_dir("g/"),
        level(&["g/b.txt", "g/zarr.json"], &["g/arr/"]),
        "list_dir(\"g/\")",
    );
    expect_eq(
        store.list_dir("g/arr/"),
        level(&["g/arr/zarr.json"], &["g/arr/c/"]),
        "list_dir(\"g/arr/\")",
    );
    expect_eq(
        store.list_dir("g/arr/c/"),
        level(&[], &["g/arr/c/0/", "g/arr/c/1/"]),
        "list_dir(\"g/arr/c/\")",
    );
    expect_eq(
        store.list_dir("h/"),
        level(&[], &["h/deep/"]),
        "list_dir(\"h/\")",
    );
    expect_eq(
        store.list_dir("zarr.json/"),
        level(&[], &[]),
        "list_dir under a key",
    );
    ok(store.delete("h/deep/er/key"), "delete");
    expect_eq(
        store.list_dir(""),
        level(&["zarr.json"], &["g/"]),
        "list_dir(\"\") after the only key under h/ was deleted",
    );
    clear(store);
}

fn check_negative_chunk_indices(store: &dyn Store) {
    let keys = ["a/c/-1/0", "a/c/0/-1", "a/c/-1/-1", "a/c/-10/5", "a/c/0/0"];
    for key in keys {
        ok(
            store.set(key, key.as_bytes()),
            "set of a key with negative indices",
        );
    }
    for key in keys {
        expect_eq(
            store.get(key),
            Some(bytes(key)),
            "get of a key with negative indices",
        );
    }
    expect_eq(
        store.list_prefix("a/c/-1/"),
        vec!["a/c/-1/-1".to_owned(), "a/c/-1/0".to_owned()],
        "list_prefix(\"a/c/-1/\")",
    );
    expect_eq(
        store.list_dir("a/c/").map(|l| l.prefixes),
        vec![
            "a/c/-1/".to_owned(),
            "a/c/-10/".to_owned(),
            "a/c/0/".to_owned(),
        ],
        "list_dir(\"a/c/\") prefixes",
    );
    ok(store.delete_prefix("a/c/-1/"), "delete_prefix(\"a/c/-1/\")");
    expect_eq(
        store.list_prefix("a/"),
        vec![
            "a/c/-10/5".to_owned(),
            "a/c/0/-1".to_owned(),
            "a/c/0/0".to_owned(),
        ],
        "list after delete_prefix(\"a/c/-1/\")",
    );
    clear(store);
}

fn check_unusual_valid_keys(store: &dyn Store) {
    let keys = [
        "v/.zarray",
        "v/.zattrs",
        "v/0.0",
        "v/...",
        "v/.tmp",
        "v/x.tmp-1",
        "v/__meta",
        "v/with space",
        "v/ünï-çødé",
        "v/-",
        "v/ab:c",
    ];
    for key in keys {
        ok(store.set(key, key.as_bytes()), &format!("set({key:?})"));
    }
    for key in keys {
        expect_eq(store.get(key), Some(bytes(key)), &format!("get({key:?})"));
    }
    let mut sorted: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
    sorted.sort();
    expect_eq(store.list_prefix("v/"), sorted, "list of unusual keys");
    clear(store);
}

/// Keys every store must refuse.
const INVALID_KEYS: [&str; 20] = [
    "",
    "/",
    "/abs",
    "/etc/passwd",
    "a/",
    "a//b",
    ".",
    "..",
    "../escape",
    "a/../../escape",
    "a/./b",
    "a\\b",
    "..\\escape",
    "a\0b",
    ".tmp-1",
    "a/.tmp-x/b",
    "a/.tmp-",
    "C:/windows",
    "c:",
    "//server/share",
];

fn check_invalid_keys(store: &dyn Store) {
    ok(store.set("keep", b"kept"), "set");
    for key in INVALID_KEYS {
        #[track_caller]
        fn refused<T: Debug>(result: Result<T>, op: &str, key: &str) {
            match result {
                Err(StoreError::InvalidKey { key: k, .. }) => {
                    assert_eq!(k, key, "{op}: InvalidKey names the key");
                }
                other => panic!("{op}({key:?}): expected InvalidKey, got {other:?}"),
            }
        }
        refused(store.get(key), "get", key);
        refused(
            store.get_ranges(key, &[ByteRange::FromStart(0)]),
            "get_ranges",
            key,
        );
        refused(store.size(key), "size", key);
        refused(store.set(key, b"x"), "set", key);
        refused(store.delete(key), "delete", key);
    }
    expect_eq(
        store.list_prefix(""),
        vec!["keep".to_owned()],
        "invalid keys wrote nothing",
    );
    expect_eq(
        store.get("keep"),
        Some(bytes("kept")),
        "invalid keys deleted nothing",
    );
    clear(store);
}

fn check_invalid_prefixes(store: &dyn Store) {
    ok(store.set("p/k", b"v"), "set");
    for prefix in [
        "p", "/", "//", "/p/", "p//", "../", "p/../", ".tmp-1/", "p\\q/", "a\0/",
    ] {
        #[track_caller]
        fn refused<T: Debug>(result: Result<T>, op: &str, prefix: &str) {
            match result {
                Err(StoreError::InvalidPrefix { prefix: p, .. }) => {
                    assert_eq!(p, prefix, "{op}: InvalidPrefix names the prefix");
                }
                other => panic!("{op}({prefix:?}): expected InvalidPrefix, got {other:?}"),
            }
        }
        refused(store.list_prefix(prefix), "list_prefix", prefix);
        refused(store.list_dir(prefix), "list_dir", prefix);
        refused(store.delete_prefix(prefix), "delete_prefix", prefix);
    }
    expect_eq(
        store.get("p/k"),
        Some(bytes("v")),
        "invalid prefixes deleted nothing",
    );
    clear(store);
}

/// A key that is also a prefix of other keys may be refused with `KeyConflict`; if so, nothing
/// changes. A store that accepts it must keep both.
fn check_key_conflicts(store: &dyn Store) {
    ok(store.set("k/v", b"inner"), "set");
    match store.set("k", b"outer") {
        Ok(()) => expect_eq(
            store.get("k"),
            Some(bytes("outer")),
            "get of an accepted conflict",
        ),
        Err(StoreError::KeyConflict { key, existing }) => {
            assert_eq!(
                (key.as_str(), existing.as_str()),
                ("k", "k/"),
                "KeyConflict fields"
            );
            expect_eq(
                store.get("k"),
                None,
                "a refused conflicting key is not stored",
            );
        }
        Err(e) => panic!("set(\"k\") over \"k/v\": expected Ok or KeyConflict, got {e:?}"),
    }
    expect_eq(
        store.get("k/v"),
        Some(bytes("inner")),
        "a conflict keeps the existing key",
    );
    match store.set("k/v/w", b"deeper") {
        Ok(()) => expect_eq(
            store.get("k/v/w"),
            Some(bytes("deeper")),
            "accepted conflict",
        ),
        Err(StoreError::KeyConflict { key, existing }) => {
            assert_eq!(
                (key.as_str(), existing.as_str()),
                ("k/v/w", "k/v"),
                "KeyConflict fields"
            );
            expect_eq(
                store.get("k/v/w"),
                None,
                "a refused conflicting key is not stored",
            );
        }
        Err(e) => panic!("set(\"k/v/w\") under \"k/v\": expected Ok or KeyConflict, got {e:?}"),
    }
    expect_eq(
        store.get("k/v"),
        Some(bytes("inner")),
        "a conflict keeps the existing key",
    );
    clear(store);
}

fn check_large_value(store: &dyn Store) {
    let key = "big/c/0";
    let len: u64 = (1 << 20) + 17;
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let value: Vec<u8> = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    ok(store.set(key, &value), "set of a large value");
    expect_eq(store.size(key), Some(len), "size of a large value");
    let got = ok(store.get(key), "get of a large value");
    assert!(
        got.as_deref() == Some(&value[..]),
        "get of a large value returns it whole"
    );
    let mid = (len / 2) as usize;
    expect_eq(
        store.get_ranges(
            key,
            &[
                ByteRange::Suffix(10),
                ByteRange::Range {
                    start: 1000,
                    end: 1010,
                },
                ByteRange::FromStart(len - 3),
            ],
        ),
        Some(vec![
            value[value.len() - 10..].to_vec(),
            value[1000..1010].to_vec(),
            value[value.len() - 3..].to_vec(),
        ]),
        "ranges of a large value",
    );
    expect_eq(
        store.get_range(
            key,
            ByteRange::Range {
                start: mid as u64,
                end: mid as u64 + 4096,
            },
        ),
        Some(value[mid..mid + 4096].to_vec()),
        "a middle range of a large value",
    );
    clear(store);
}

fn check_open_value(store: &dyn Store) {
    use crate::Piece;
    expect_eq(
        store.open_value("spliced/c/0").map(|v| v.is_none()),
        true,
        "open_value of a missing key",
    );
    assert!(
        matches!(store.open_value("/bad"), Err(StoreError::InvalidKey { .. })),
        "open_value of an invalid key is refused"
    );
    let key = "spliced/c/0";
    // large enough for the filesystem store's in-kernel copy to take more than one call
    let old: Vec<u8> = (0..(3u32 << 20) + 5).map(|i| (i % 251) as u8).collect();
    ok(store.set(key, &old), "set before open_value");
    let value = ok(store.open_value(key), "open_value").expect("the value is stored");
    assert_eq!(value.size(), old.len() as u64, "open_value size");
    expect_eq(
        value.get_ranges(&[ByteRange::Suffix(4), ByteRange::Range { start: 1, end: 3 }]),
        vec![old[old.len() - 4..].to_vec(), old[1..3].to_vec()],
        "ranges of an opened value",
    );
    assert!(
        matches!(
            value.get_ranges(&[ByteRange::Suffix(old.len() as u64 + 1)]),
            Err(StoreError::RangeOutOfBounds { .. })
        ),
        "a range outside an opened value is refused"
    );
    // a writer replaces the value meanwhile: the opened version is what the kept ranges hold
    ok(store.set(key, b"someone else"), "set while a value is open");
    let n = old.len() as u64;
    let pieces = [
        Piece::New(b"head".to_vec()),
        Piece::Kept(0..10),
        Piece::Kept(10..(2 << 20)),
        Piece::New(Vec::new()),
        Piece::New(b"mid".to_vec()),
        Piece::Kept(n - 7..n),
        Piece::Kept(5..5),
    ];
    ok(value.replace(&pieces), "replace of an opened value");
    let mut want = b"head".to_vec();
    want.extend_from_slice(&old[..2 << 20]);
    want.extend_from_slice(b"mid");
    want.extend_from_slice(&old[old.len() - 7..]);
    let got = ok(store.get(key), "get after replace").expect("replaced");
    assert!(got == want, "replace writes the pieces in order");
    // a kept range outside the value: refused, nothing written
    let value = ok(store.open_value(key), "open_value again").expect("stored");
    let size = value.size();
    assert!(
        matches!(
            value.replace(&[Piece::New(b"x".to_vec()), Piece::Kept(size - 1..size + 1)]),
            Err(StoreError::RangeOutOfBounds { .. })
        ),
        "a kept range outside the value is refused"
    );
    expect_eq(
        store.get(key),
        Some(want),
        "a refused replace writes nothing",
    );
    // an opened value dropped without replace changes nothing; replacing with nothing kept
    drop(ok(store.open_value(key), "open_value to drop"));
    let value = ok(store.open_value(key), "open_value to empty").expect("stored");
    ok(value.replace(&[]), "replace with no pieces");
    expect_eq(store.get(key), Some(Vec::new()), "replace with no pieces");
    expect_eq(
        store.list_prefix("spliced/"),
        vec![key.to_owned()],
        "no temporary files listed",
    );
    clear(store);
}

fn check_set_parts(store: &dyn Store) {
    let key = "parts/c/0";
    // more parts than one vectored write takes, some empty
    let parts: Vec<Vec<u8>> = (0..1500u32)
        .map(|i| vec![(i % 256) as u8; (i % 7) as usize])
        .collect();
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    ok(store.set_parts(key, &refs), "set_parts");
    expect_eq(
        store.get(key),
        Some(parts.concat()),
        "set_parts writes the parts in order",
    );
    ok(store.set_parts(key, &[b"one"]), "set_parts of one part");
    expect_eq(
        store.get(key),
        Some(b"one".to_vec()),
        "set_parts of one part",
    );
    ok(store.set_parts(key, &[]), "set_parts of no parts");
    expect_eq(store.get(key), Some(Vec::new()), "set_parts of no parts");
    assert!(
        matches!(
            store.set_parts("/bad", &[b"x", b"y"]),
            Err(StoreError::InvalidKey { .. })
        ),
        "set_parts of an invalid key is refused"
    );
    clear(store);
}

fn check_extension_methods(store: &dyn Store) {
    expect_eq(store.exists("x/a"), false, "exists of a missing key");
    match store.get_or_err("x/a") {
        Err(StoreError::NotFound { key }) => assert_eq!(key, "x/a", "NotFound names the key"),
        other => panic!("get_or_err of a missing key: expected NotFound, got {other:?}"),
    }
    expect_eq(
        store.get_range("x/a", ByteRange::Suffix(1)),
        None,
        "get_range of a missing key",
    );
    match store.set_many([("x/a", &b"1"[..]), ("x/../b", &b"2"[..])]) {
        Err(StoreError::InvalidKey { key, .. }) => assert_eq!(key, "x/../b"),
        other => panic!("set_many with an invalid key: expected InvalidKey, got {other:?}"),
    }
    assert_empty(
        store,
        "after set_many refused an invalid key (it must write nothing)",
    );
    ok(
        store.set_many([
            ("x/a", &b"1"[..]),
            ("x/b/c", &b"22"[..]),
            ("y", &b"333"[..]),
        ]),
        "set_many",
    );
    expect_eq(store.exists("x/a"), true, "exists after set_many");
    expect_eq(store.get_or_err("x/b/c"), bytes("22"), "get_or_err");
    expect_eq(
        store.get_range("y", ByteRange::Range { start: 1, end: 3 }),
        Some(bytes("33")),
        "get_range",
    );
    let copy = MemoryStore::new();
    expect_eq(store.copy_prefix_to("x/", &copy), 2, "copy_prefix_to count");
    expect_eq(
        copy.list_prefix(""),
        vec!["x/a".to_owned(), "x/b/c".to_owned()],
        "copy_prefix_to keys",
    );
    expect_eq(
        copy.get("x/b/c"),
        Some(bytes("22")),
        "copy_prefix_to values",
    );
    clear(store);
}

fn check_concurrent_disjoint_writes(store: &dyn Store) {
    const THREADS: usize = 4;
    const KEYS: usize = 25;
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            scope.spawn(move || {
                for i in 0..KEYS {
                    let key = format!("conc/c/{}/{}", i % 5, thread * KEYS + i);
                    ok(store.set(&key, key.as_bytes()), "concurrent set");
                }
            });
        }
    });
    let keys = ok(store.list_prefix("conc/"), "list after concurrent writes");
    assert_eq!(
        keys.len(),
        THREADS * KEYS,
        "concurrent writers of disjoint keys lose nothing"
    );
    for key in keys {
        expect_eq(
            store.get(&key),
            Some(bytes(&key)),
            "value of a concurrent write",
        );
    }
    clear(store);
}

/// `set_if` as [`Store::set_if`] documents it: with conditional writes, a condition that holds
/// writes and one that does not is a conflict that writes nothing; without them, an error.
fn check_conditional_writes(store: &dyn Store) {
    let key = "cas/zarr.json";
    if !store.conditional_writes() {
        match store.set_if(key, b"x", &Condition::Absent) {
            Err(StoreError::NoConditionalWrites { key: k }) => assert_eq!(k, key),
            other => panic!("set_if without conditional writes: {other:?}"),
        }
        assert_empty(store, "after a refused set_if");
        return;
    }
    expect_eq(
        store.get_versioned(key),
        None,
        "get_versioned of a missing key",
    );
    let first = match ok(store.set_if(key, b"one", &Condition::Absent), "create") {
        Outcome::Written(version) => version,
        Outcome::Conflict => panic!("set_if(Absent) of a missing key conflicts"),
    };
    expect_eq(
        store.get(key),
        Some(bytes("one")),
        "value created by set_if",
    );
    expect_eq(
        store.set_if(key, b"two", &Condition::Absent),
        Outcome::Conflict,
        "set_if(Absent) of an existing key",
    );
    let (value, read) = ok(store.get_versioned(key), "get_versioned").expect("the key exists");
    assert_eq!(value, b"one", "get_versioned's value");
    let second = ok(
        store.set_if(key, b"two", &Condition::Matches(read.clone())),
        "update with the version read",
    );
    assert!(matches!(second, Outcome::Written(_)), "update: {second:?}");
    expect_eq(
        store.get(key),
        Some(bytes("two")),
        "value updated by set_if",
    );
    // Both the version read and the version the first write returned are stale now.
    for stale in [read, first] {
        expect_eq(
            store.set_if(key, b"three", &Condition::Matches(stale)),
            Outcome::Conflict,
            "update with a stale version",
        );
    }
    expect_eq(
        store.get(key),
        Some(bytes("two")),
        "a conflict writes nothing",
    );
    let (_, now) = ok(store.get_versioned(key), "get_versioned").expect("the key exists");
    ok(store.delete(key), "delete");
    expect_eq(
        store.set_if(key, b"four", &Condition::Matches(now)),
        Outcome::Conflict,
        "update of a deleted key",
    );
    expect_eq(store.get(key), None, "a conflict creates nothing");
    clear(store);
}

/// Threads that each add to one counter by read-modify-write with `set_if`, retrying on a
/// conflict, lose no increment.
fn check_concurrent_conditional_writes(store: &dyn Store) {
    const THREADS: usize = 4;
    const INCREMENTS: usize = 10;
    if !store.conditional_writes() {
        return;
    }
    let key = "cas/counter";
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(move || {
                for _ in 0..INCREMENTS {
                    loop {
                        let current = ok(store.get_versioned(key), "get_versioned");
                        let n: usize = current.as_ref().map_or(0, |(value, _)| {
                            String::from_utf8_lossy(value).parse().expect("a number")
                        });
                        let condition = Condition::still(current.as_ref().map(|(_, v)| v));
                        let next = (n + 1).to_string();
                        match ok(store.set_if(key, next.as_bytes(), &condition), "set_if") {
                            Outcome::Written(_) => break,
                            Outcome::Conflict => std::thread::yield_now(),
                        }
                    }
                }
            });
        }
    });
    expect_eq(
        store.get(key),
        Some(bytes(&(THREADS * INCREMENTS).to_string())),
        "every increment of concurrent read-modify-writes lands",
    );
    clear(store);
}
