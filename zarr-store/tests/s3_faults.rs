//! The object store backend against the local S3 server through the fault-injecting proxy
//! (`zarr_testkit::proxy`): requests pass through it unchanged when it injects nothing; each
//! kind of fault at a 10 % rate is retried away (every value read back exact); with retries
//! off, every fault is a clear `StoreError::Remote` keeping `object_store`'s message, never
//! wrong data; a response body cut short is never returned short. Ignored by a plain
//! `cargo test` (they need the server); `scripts/test` runs them. By hand:
//!
//! ```text
//! eval "$(scripts/s3-server)"
//! cargo test -p zarr-store --features object-store --test s3_faults -- --ignored
//! ```
#![cfg(feature = "object-store")]

use std::time::Duration;

use zarr_store::testing::{fault_test_options, run_store_conformance, s3_store_at};
use zarr_store::{ByteRange, ObjectStoreBackend, RemoteOptions, Store, StoreError};
use zarr_testkit::proxy::{Fault, FaultCounts, FaultProxy, ProxyConfig};
use zarr_testkit::{s3, Rng};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const BUCKET: &str = "zarr-faults-test";

/// A proxy in front of the server injecting `faults` at `rate`, answers delayed past the
/// request timeout of [`options`], the draws independent of the run's `prefix`.
fn proxy(seed: u64, rate: f64, faults: &[Fault], prefix: &str) -> FaultProxy {
    let upstream = s3::endpoint(BUCKET);
    FaultProxy::start(
        ProxyConfig::new(&upstream, seed)
            .unseeded(prefix)
            .rate(rate)
            .faults(faults)
            .delay(Duration::from_millis(1000)),
    )
    .unwrap_or_else(|e| panic!("starting the proxy: {e}"))
}

/// The bucket under `prefix`, reached at `endpoint` (the proxy's or the server's).
fn store_at(endpoint: &str, prefix: &str, options: &RemoteOptions) -> ObjectStoreBackend {
    s3_store_at(endpoint, BUCKET, prefix, options)
}

/// The server itself, no proxy in between.
fn direct(prefix: &str) -> ObjectStoreBackend {
    store_at(&s3::endpoint(BUCKET), prefix, &fault_test_options(10))
}

/// Values of a few sizes, a body large enough to be cut in the middle included.
fn values(seed: u64) -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng::new(seed);
    [1usize, 100, 4096, 70_000, 300_000]
        .iter()
        .enumerate()
        .map(|(i, &len)| (format!("a/c/{i}"), rng.bytes(len)))
        .collect()
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_the_proxy_passes_every_request_through() {
    let prefix = s3::unique_prefix("passthrough");
    let proxy = proxy(1, 0.0, &Fault::ALL, &prefix);
    let store = store_at(&proxy.url(), &prefix, &fault_test_options(0));
    // Every operation of the suite through the proxy, retries off: nothing may go wrong.
    run_store_conformance(&store);
    let counts = proxy.counts();
    assert!(counts.requests > 50, "{counts}");
    assert_eq!(counts.forwarded, counts.requests, "{counts}");
    assert_eq!(counts.total_faults(), 0, "{counts}");
}

/// Writes and reads `values` through a proxy injecting `faults` at 10 %, with retries on:
/// every operation succeeds and every value read is exact.
fn retried_away(seed: u64, faults: &[Fault]) -> Result<FaultCounts, StoreError> {
    let prefix = s3::unique_prefix("retried");
    let proxy = proxy(seed, 0.1, faults, &prefix);
    let store = store_at(&proxy.url(), &prefix, &fault_test_options(10));
    let values = values(seed);
    for _round in 0..2 {
        for (key, value) in &values {
            store.set(key, value)?;
        }
        for (key, value) in &values {
            assert_eq!(store.get(key)?.as_ref(), Some(value), "{key}");
            assert_eq!(store.size(key)?, Some(value.len() as u64), "{key}");
            let half = value.len() as u64 / 2;
            assert_eq!(
                store.get_ranges(key, &[ByteRange::from(0..half), ByteRange::Suffix(half)])?,
                Some(vec![
                    value[..half as usize].to_vec(),
                    value[value.len() - half as usize..].to_vec()
                ]),
                "{key}"
            );
        }
        let keys: Vec<&str> = values.iter().map(|(k, _)| k.as_str()).collect();
        let all = store.get_many(&keys)?;
        for ((key, value), got) in values.iter().zip(all) {
            assert_eq!(got.as_ref(), Some(value), "{key}");
        }
        assert_eq!(store.list_prefix("a/")?, {
            let mut k = keys.clone();
            k.sort_unstable();
            k
        });
    }
    // what the server holds, read without the proxy
    let server = direct(&prefix);
    for (key, value) in &values {
        assert_eq!(server.get(key)?.as_ref(), Some(value), "{key}");
    }
    Ok(proxy.counts())
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_each_fault_alone_at_10_percent_is_retried_away() -> TestResult {
    for (i, kind) in Fault::ALL.into_iter().enumerate() {
        let counts = retried_away(100 + i as u64, &[kind])
            .map_err(|e| format!("{kind}: {}", zarr_testkit::report(&e)))?;
        assert!(counts.of(kind) > 0, "{kind} never injected: {counts}");
        assert_eq!(counts.total_faults(), counts.of(kind), "{kind}: {counts}");
    }
    Ok(())
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_every_fault_mixed_at_10_percent_is_retried_away() -> TestResult {
    let mut injected = FaultCounts::default();
    for seed in 200..203 {
        let counts = retried_away(seed, &Fault::ALL).map_err(|e| zarr_testkit::report(&e))?;
        for (sum, n) in injected.faults.iter_mut().zip(counts.faults) {
            *sum += n;
        }
    }
    let kinds = Fault::ALL.iter().filter(|&&k| injected.of(k) > 0).count();
    assert!(kinds >= 4, "few kinds injected: {injected}");
    Ok(())
}

/// With retries off, a fault on every request: each operation fails with
/// [`StoreError::Remote`] naming the key and the operation, and `object_store`'s error
/// (with what the server said) as its source.
#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_without_retries_every_fault_is_a_clear_error() -> TestResult {
    let prefix = s3::unique_prefix("unretried");
    direct(&prefix).set("a/c/0", &Rng::new(3).bytes(5000))?;
    for kind in Fault::ALL {
        let proxy = proxy(300, 1.0, &[kind], &prefix);
        let store = store_at(&proxy.url(), &prefix, &fault_test_options(0));
        let results: [(&str, Result<(), StoreError>); 4] = [
            ("get", store.get("a/c/0").map(drop)),
            (
                "get_ranges",
                store
                    .get_ranges("a/c/0", &[ByteRange::from(10..4000)])
                    .map(drop),
            ),
            ("set", store.set("a/c/1", b"new").map(drop)),
            ("list", store.list_prefix("a/").map(drop)),
        ];
        for (op, result) in results {
            // HEAD and PUT answers have no body to cut: they pass a truncating proxy.
            if kind == Fault::Truncate && op == "set" {
                assert!(result.is_ok(), "{kind} {op}: {result:?}");
                continue;
            }
            let Err(error) = result else {
                panic!("{kind} {op}: succeeded through a proxy that fails every request");
            };
            let message = zarr_testkit::report(&error);
            let StoreError::Remote {
                op: failed, source, ..
            } = &error
            else {
                panic!("{kind} {op}: expected Remote, got {message}");
            };
            assert_eq!(*failed, op, "{kind}: {message}");
            assert!(
                source
                    .downcast_ref::<zarr_store::object_store::Error>()
                    .is_some(),
                "{kind} {op}: {message}"
            );
            match kind {
                Fault::Status500 => assert!(message.contains("500"), "{message}"),
                Fault::Status503 => assert!(message.contains("503"), "{message}"),
                Fault::SlowDown => assert!(message.contains("SlowDown"), "{message}"),
                _ => {}
            }
        }
        assert!(proxy.counts().of(kind) >= 3, "{kind}: {}", proxy.counts());
    }
    Ok(())
}

/// A body cut short (the connection closed before `Content-Length` bytes came) is never
/// returned as the value: `object_store` resumes it with a ranged request for the rest when
/// it may retry, and fails the read when it may not.
#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_a_truncated_body_never_reads_short() -> TestResult {
    let prefix = s3::unique_prefix("truncated");
    let value = Rng::new(4).bytes(256 * 1024);
    direct(&prefix).set("v", &value)?;
    let range = ByteRange::from(1000..200_000);
    // every response cut: never a value, with retries or without
    let always = proxy(400, 1.0, &[Fault::Truncate], &prefix);
    for retries in [0, 3] {
        let store = store_at(&always.url(), &prefix, &fault_test_options(retries));
        let got = store.get("v");
        assert!(
            got.is_err(),
            "retries {retries}: {:?}",
            got.map(|v| v.map(|v| v.len()))
        );
        let got = store.get_ranges("v", &[range]);
        assert!(got.is_err(), "retries {retries}: {got:?}");
        let got = store.get_many(&["v"]);
        assert!(got.is_err(), "retries {retries}");
    }
    assert!(
        always.counts().of(Fault::Truncate) >= 6,
        "{}",
        always.counts()
    );
    // half of them cut: retried (resumed) into the exact value
    let half = proxy(401, 0.5, &[Fault::Truncate], &prefix);
    let store = store_at(&half.url(), &prefix, &fault_test_options(10));
    for _ in 0..10 {
        assert!(store.get("v")? == Some(value.clone()), "a wrong value");
        assert_eq!(
            store.get_ranges("v", &[range])?,
            Some(vec![value[1000..200_000].to_vec()])
        );
    }
    assert!(half.counts().of(Fault::Truncate) >= 5, "{}", half.counts());
    Ok(())
}
