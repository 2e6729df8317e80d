//! The object store backend (cargo feature `object-store`): the conformance suite and request
//! counts on `object_store`'s in-memory store, calls from async contexts, urls, errors, and the
//! same against a real S3-compatible server: the `s3_*` tests, ignored by a plain `cargo test`
//! and run by `scripts/test` once it has started the server (by hand:
//! `eval "$(scripts/s3-server)"`, then
//! `cargo test -p zarr-store --features object-store --test object_store -- --ignored`). Run
//! without a server (`AWS_ENDPOINT_URL` unset, or nothing answering), they fail.
#![cfg(feature = "object-store")]

use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zarr_store::object_store::memory::InMemory;
use zarr_store::object_store::path::Path;
use zarr_store::object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use zarr_store::testing::{run_store_conformance, CountingObjectStore, RequestCounts};
use zarr_store::{
    open_url, ByteRange, Fetch, Fetched, ObjectStoreBackend, RemoteOptions, Store, StoreError,
    StoreExt,
};
use zarr_testkit::s3;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn in_memory(prefix: &str) -> (Arc<InMemory>, ObjectStoreBackend) {
    let memory = Arc::new(InMemory::new());
    let store = ObjectStoreBackend::new(memory.clone(), prefix)
        .unwrap_or_else(|e| panic!("prefix {prefix:?}: {e}"));
    (memory, store)
}

#[test]
fn conformance_in_memory() {
    let (_, store) = in_memory("");
    run_store_conformance(&store);
}

#[test]
fn conformance_in_memory_without_conditional_writes() {
    let (_, store) = in_memory("");
    assert!(store.conditional_writes());
    let store = store.with_conditional_writes(false);
    assert!(!store.conditional_writes());
    run_store_conformance(&store);
    // a read-only store has none either
    let (_, read_only) = in_memory("");
    assert!(!read_only.read_only(true).conditional_writes());
}

#[test]
fn conformance_in_memory_under_a_prefix() -> TestResult {
    let (memory, store) = in_memory("data/my.zarr");
    // Neighbours outside the prefix, which the store must neither see nor delete.
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    for outside in ["data/my.zarrx/k", "data/other", "my.zarr/k", "data/my.zarr"] {
        rt.block_on(memory.put(&Path::from(outside), PutPayload::from_static(b"x")))?;
    }
    run_store_conformance(&store);
    let left: Vec<String> = rt
        .block_on(async {
            use futures_util::TryStreamExt;
            memory.list(None).try_collect::<Vec<_>>().await
        })?
        .into_iter()
        .map(|meta| meta.location.to_string())
        .collect();
    let mut left = left;
    left.sort();
    assert_eq!(
        left,
        ["data/my.zarr", "data/my.zarrx/k", "data/other", "my.zarr/k"]
    );
    Ok(())
}

/// Keys are the object names, verbatim, under the prefix; objects whose names are not valid
/// keys are not listed.
#[test]
fn object_names_and_foreign_objects() -> TestResult {
    let (memory, store) = in_memory("p");
    store.set("a/c/0/-1", b"v")?;
    store.set("a/with space/ü", b"v")?;
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    let meta = rt.block_on(memory.head(&Path::parse("p/a/c/0/-1")?))?;
    assert_eq!(meta.size, 1);
    assert!(rt
        .block_on(memory.head(&Path::parse("p/a/with space/ü")?))
        .is_ok());
    // Written by someone else: not valid keys, so never listed.
    rt.block_on(memory.put(
        &Path::parse("p/a/.tmp-upload")?,
        PutPayload::from_static(b""),
    ))?;
    assert_eq!(store.list_prefix("")?, ["a/c/0/-1", "a/with space/ü"]);
    assert_eq!(store.list_dir("a/")?.keys, Vec::<String>::new());
    assert_eq!(store.list_dir("a/")?.prefixes, ["a/c/", "a/with space/"]);
    // A key that is also a prefix is fine on an object store.
    store.set("a/c", b"outer")?;
    assert_eq!(store.get("a/c")?, Some(b"outer".to_vec()));
    assert_eq!(store.list_dir("a/")?.keys, ["a/c"]);
    // Control characters are valid keys elsewhere but not object names.
    assert!(matches!(
        store.set("a/tab\there", b""),
        Err(StoreError::InvalidKey { .. })
    ));
    store.delete_prefix("")?;
    assert_eq!(
        rt.block_on(memory.head(&Path::parse("p/a/.tmp-upload")?))
            .map(|_| ())
            .map_err(|e| matches!(e, zarr_store::object_store::Error::NotFound { .. })),
        Err(true),
        "delete_prefix removes every object under the prefix"
    );
    Ok(())
}

/// The requests each operation costs, counted under the store.
fn check_request_counts(store: &ObjectStoreBackend, requests: &CountingObjectStore) -> TestResult {
    let value: Vec<u8> = (0..=255).cycle().take(3 << 20).collect();
    store.set("shard", &value)?;
    let len = value.len() as u64;
    let counted = |what: &str, run: &dyn Fn() -> TestResult| -> Result<RequestCounts, _> {
        requests.reset();
        run()?;
        let counts = requests.counts();
        eprintln!("requests: {what}: {counts:?}");
        Ok::<_, Box<dyn std::error::Error>>(counts)
    };

    let c = counted("suffix", &|| {
        let got = store.get_range("shard", ByteRange::Suffix(16))?;
        assert_eq!(got.as_deref(), Some(&value[value.len() - 16..]));
        Ok(())
    })?;
    assert_eq!(
        (c.get, c.total()),
        (1, 1),
        "a suffix read is one request, no HEAD"
    );

    let c = counted("from start", &|| {
        let got = store.get_range("shard", ByteRange::FromStart(len - 5))?;
        assert_eq!(got.as_deref(), Some(&value[value.len() - 5..]));
        Ok(())
    })?;
    assert_eq!((c.get, c.total()), (1, 1), "an offset read is one request");

    let c = counted("one range", &|| {
        let got = store.get_range("shard", ByteRange::from(1000..2000))?;
        assert_eq!(got.as_deref(), Some(&value[1000..2000]));
        Ok(())
    })?;
    assert_eq!((c.get, c.total()), (1, 1), "a range read is one request");

    // Reading one inner chunk of a shard: the index (a suffix), then the chunk (a range).
    let c = counted("inner chunk of a shard", &|| {
        store.get_range("shard", ByteRange::Suffix(16))?;
        store.get_range("shard", ByteRange::from(4096..8192))?;
        Ok(())
    })?;
    assert_eq!((c.get, c.total()), (2, 2), "an inner chunk costs 2 GETs");

    let c = counted("two close ranges", &|| {
        let got = store.get_ranges(
            "shard",
            &[ByteRange::from(10..20), ByteRange::from(5000..5100)],
        )?;
        assert_eq!(
            got,
            Some(vec![value[10..20].to_vec(), value[5000..5100].to_vec()])
        );
        Ok(())
    })?;
    assert_eq!(c.total(), 1, "two close ranges are merged into one request");

    let c = counted("two far ranges", &|| {
        let far = (2 << 20) + 7;
        let got = store.get_ranges(
            "shard",
            &[ByteRange::from(0..4), ByteRange::from(far..far + 4)],
        )?;
        assert_eq!(
            got,
            Some(vec![
                value[..4].to_vec(),
                value[far as usize..far as usize + 4].to_vec()
            ])
        );
        Ok(())
    })?;
    assert!(c.total() <= 2, "two ranges are at most two requests");

    let c = counted("suffix and range", &|| {
        let got = store.get_ranges("shard", &[ByteRange::Suffix(8), ByteRange::from(0..8)])?;
        assert_eq!(
            got,
            Some(vec![value[value.len() - 8..].to_vec(), value[..8].to_vec()])
        );
        Ok(())
    })?;
    assert_eq!((c.get, c.total()), (2, 2), "a suffix and a range: two GETs");

    let c = counted("missing key", &|| {
        assert_eq!(store.get_range("missing", ByteRange::Suffix(8))?, None);
        Ok(())
    })?;
    assert_eq!(
        c.total(),
        1,
        "a missing key is found out by the read itself"
    );

    let c = counted("out of bounds suffix", &|| {
        match store.get_range("shard", ByteRange::Suffix(len + 1)) {
            Err(StoreError::RangeOutOfBounds { size, .. }) => assert_eq!(size, len),
            other => panic!("expected RangeOutOfBounds, got {other:?}"),
        }
        Ok(())
    })?;
    assert_eq!(c.total(), 1, "the suffix response tells the size");

    let c = counted("range past the end", &|| {
        match store.get_range("shard", ByteRange::from(len - 1..len + 1)) {
            Err(StoreError::RangeOutOfBounds { size, .. }) => assert_eq!(size, len),
            other => panic!("expected RangeOutOfBounds, got {other:?}"),
        }
        Ok(())
    })?;
    assert_eq!(c.total(), 1, "the range response tells the size");

    // Edge cases a server may refuse (HTTP 416) cost one HEAD more, never more.
    let c = counted("range starting past the end", &|| {
        match store.get_range("shard", ByteRange::from(len + 1..len + 2)) {
            Err(StoreError::RangeOutOfBounds { size, .. }) => assert_eq!(size, len),
            other => panic!("expected RangeOutOfBounds, got {other:?}"),
        }
        Ok(())
    })?;
    assert!(c.total() <= 2, "{c:?}");
    let c = counted("empty range at the end", &|| {
        let got = store.get_ranges("shard", &[ByteRange::FromStart(len)])?;
        assert_eq!(got, Some(vec![vec![]]));
        Ok(())
    })?;
    assert!(c.total() <= 2, "{c:?}");
    let c = counted("empty ranges only", &|| {
        let got = store.get_ranges("shard", &[ByteRange::Suffix(0), ByteRange::from(len..len)])?;
        assert_eq!(got, Some(vec![vec![], vec![]]));
        Ok(())
    })?;
    assert_eq!(
        (c.head, c.total()),
        (1, 1),
        "empty ranges need only the size"
    );
    store.set("empty", b"")?;
    let c = counted("ranges of an empty value", &|| {
        let got = store.get_ranges("empty", &[ByteRange::FromStart(0), ByteRange::Suffix(0)])?;
        assert_eq!(got, Some(vec![vec![], vec![]]));
        Ok(())
    })?;
    assert!(c.total() <= 2, "{c:?}");
    store.delete("empty")?;

    let c = counted("get, size", &|| {
        assert_eq!(store.get("shard")?.map(|v| v.len()), Some(value.len()));
        assert_eq!(store.size("shard")?, Some(len));
        Ok(())
    })?;
    assert_eq!((c.get, c.head, c.total()), (1, 1, 2));

    let c = counted("set, list, delete", &|| {
        store.set("other", b"x")?;
        assert_eq!(store.list_prefix("")?, ["other", "shard"]);
        assert_eq!(store.list_dir("")?.keys, ["other", "shard"]);
        store.delete("other")?;
        store.delete_prefix("")?;
        Ok(())
    })?;
    assert_eq!(
        (c.put, c.list, c.list_with_delimiter, c.delete),
        (1, 2, 1, 2)
    );
    Ok(())
}

#[test]
fn request_counts_in_memory() -> TestResult {
    let (_, store) = in_memory("counted");
    let (store, requests) = store.with_request_counter();
    check_request_counts(&store, &requests)
}

/// The store blocks on its own runtime, so it can be called from plain threads and from inside
/// other runtimes (multi-thread and current-thread) without panicking.
/// `fetch_each` keeps its whole concurrency in flight on the runtime (no thread per request:
/// hundreds on a machine of 2 cores), bounded by `RemoteOptions`, and delivers every answer,
/// an error to the request that failed only.
#[test]
fn fetch_each_keeps_hundreds_in_flight() -> TestResult {
    let (_, store) = in_memory("p");
    let keys: Vec<String> = (0..300).map(|i| format!("c/{i}")).collect();
    for (i, key) in keys.iter().enumerate() {
        store.set(key, &[i as u8; 40])?;
    }
    let (store, requests) = store.with_request_counter();
    requests.set_latency(Duration::from_millis(200));
    let index = [ByteRange::Suffix(8)];
    let mut asked: Vec<Fetch<'_>> = keys.iter().map(|k| Fetch::Value(k)).collect();
    asked.push(Fetch::Ranges("c/7", &index));
    asked.push(Fetch::Value("missing"));
    asked.push(Fetch::Size("c/9"));
    asked.push(Fetch::Value("../bad"));
    let mut got: Vec<Option<zarr_store::Result<Fetched>>> =
        (0..asked.len()).map(|_| None).collect();
    store.fetch_each(&asked, &mut |i, answer| {
        assert!(
            got[i].replace(answer).is_none(),
            "request {i} answered twice"
        );
    })?;
    let got: Vec<_> = got
        .into_iter()
        .map(|a| a.expect("every request answered"))
        .collect();
    for (i, answer) in got.iter().take(300).enumerate() {
        assert_eq!(
            answer.as_ref().ok(),
            Some(&Fetched::Value(Some(vec![i as u8; 40])))
        );
    }
    assert_eq!(
        got[300].as_ref().ok(),
        Some(&Fetched::Ranges(Some(vec![vec![7; 8]])))
    );
    assert_eq!(got[301].as_ref().ok(), Some(&Fetched::Value(None)));
    assert_eq!(got[302].as_ref().ok(), Some(&Fetched::Size(Some(40))));
    assert!(matches!(got[303], Err(StoreError::InvalidKey { .. })));
    let counts = requests.counts();
    assert_eq!(counts.peak_in_flight, 256, "{counts:?}");
    assert_eq!(counts.get + counts.head, 303, "{counts:?}");

    // the options bound it: 8 at once; and by bytes, 3 ranges of 40 in a budget of 120
    let store = store.with_remote_options(&RemoteOptions::default().with_concurrency(8));
    assert_eq!(store.fetch_concurrency(), 8);
    requests.set_latency(Duration::from_millis(20));
    requests.reset();
    store.fetch_each(&asked[..40], &mut |_, answer| assert!(answer.is_ok()))?;
    assert_eq!(requests.counts().peak_in_flight, 8);
    let whole = [ByteRange::Range { start: 0, end: 40 }];
    let ranged: Vec<Fetch<'_>> = keys[..20]
        .iter()
        .map(|k| Fetch::Ranges(k, &whole))
        .collect();
    let store = store.with_remote_options(&RemoteOptions::default().with_max_bytes_in_flight(120));
    requests.reset();
    let mut delivered = 0;
    store.fetch_each(&ranged, &mut |_, answer| {
        assert_eq!(answer.map(|a| a.len()).ok(), Some(40));
        delivered += 1;
    })?;
    assert_eq!((delivered, requests.counts().peak_in_flight), (20, 3));
    Ok(())
}

#[test]
fn calls_from_async_contexts() -> TestResult {
    let (_, store) = in_memory("");
    let store = Arc::new(store);
    store.set("k", b"value")?;

    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let s = store.clone();
    let got = multi.block_on(async move {
        let direct = s.get("k");
        let spawned = tokio::spawn({
            let s = s.clone();
            async move { s.get_range("k", ByteRange::Suffix(3)) }
        })
        .await;
        let blocking = tokio::task::spawn_blocking({
            let s = s.clone();
            move || s.size("k")
        })
        .await;
        (direct, spawned, blocking)
    });
    assert_eq!(got.0?, Some(b"value".to_vec()));
    assert_eq!(got.1??, Some(b"lue".to_vec()));
    assert_eq!(got.2??, Some(5));

    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let s = store.clone();
    let got = current.block_on(async move { s.list_prefix("") });
    assert_eq!(got?, ["k"]);

    // Many plain threads at once (as rayon's workers call it).
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let store = &store;
                scope.spawn(move || store.set(&format!("t/{i}"), b"x"))
            })
            .collect();
        for handle in handles {
            handle.join().expect("thread panicked")?;
        }
        Ok::<_, StoreError>(())
    })?;
    assert_eq!(store.list_prefix("t/")?.len(), 8);
    Ok(())
}

#[test]
fn urls() -> TestResult {
    let memory = open_url("memory://")?;
    memory.set("a", b"1")?;
    assert_eq!(memory.get("a")?, Some(b"1".to_vec()));

    let dir = tempfile::tempdir()?;
    let path = dir.path().join("my data.zarr");
    let url = format!(
        "file://{}",
        path.to_str().ok_or("path")?.replace(' ', "%20")
    );
    let on_disk = open_url(&url)?;
    on_disk.set("zarr.json", b"{}")?;
    assert!(path.join("zarr.json").is_file());
    let plain = open_url(path.to_str().ok_or("path")?)?;
    assert_eq!(plain.get("zarr.json")?, Some(b"{}".to_vec()));

    // Remote urls build without contacting anything.
    let s3 = ObjectStoreBackend::from_url("s3://bucket/some/prefix")?;
    assert_eq!(s3.prefix(), "some/prefix");
    assert!(!s3.is_read_only());
    let s3 = ObjectStoreBackend::from_url("s3://bucket")?;
    assert_eq!(s3.prefix(), "");
    let encoded = ObjectStoreBackend::from_url("s3://bucket/a%20b/c/")?;
    assert_eq!(encoded.prefix(), "a b/c");

    let http = open_url("http://127.0.0.1:1/data/my.zarr")?;
    match http.set("zarr.json", b"{}") {
        Err(StoreError::ReadOnly { key }) => assert_eq!(key, "zarr.json"),
        other => panic!("expected ReadOnly, got {other:?}"),
    }
    assert!(matches!(
        http.delete_prefix(""),
        Err(StoreError::ReadOnly { .. })
    ));
    let https = ObjectStoreBackend::from_url("https://example.invalid/x.zarr")?;
    assert!(https.is_read_only());
    assert_eq!(https.prefix(), "x.zarr");

    for bad in [
        "s3://bucket/../escape",
        "s3://bucket/a//b",
        "s3://bucket/p?versionId=1",
        "s3:///no-bucket",
        "ftp://host/x",
    ] {
        match open_url(bad) {
            Err(StoreError::InvalidUrl { url, .. }) => assert_eq!(url, bad),
            Err(other) => panic!("{bad}: expected InvalidUrl, got {other:?}"),
            Ok(store) => panic!("{bad}: expected InvalidUrl, got {store:?}"),
        }
    }
    Ok(())
}

/// Serves `files` over HTTP/1.1 on the loopback address (GET and HEAD, `Range` when
/// `ranges`), one request per connection, for at most `max_requests` requests; returns the
/// base url and the count of requests answered. A file whose content is `redirect:<path>`
/// answers `301 Moved Permanently` to `<path>` on the same server.
fn serve_http(
    files: Vec<(&'static str, Vec<u8>)>,
    ranges: bool,
    max_requests: usize,
) -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local_addr");
    let answered = Arc::new(AtomicUsize::new(0));
    let counter = answered.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(max_requests) {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && head.len() < 16 << 10 {
                match stream.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let mut words = head.split_whitespace();
            let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            let range = head.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("range")
                    .then(|| value.trim().trim_start_matches("bytes=").to_owned())
            });
            let file = files
                .iter()
                .find(|(name, _)| path.strip_prefix('/') == Some(*name));
            let (status, headers, body): (&str, String, &[u8]) = match (file, range) {
                (None, _) => ("404 Not Found", String::new(), &[]),
                (Some((_, data)), _) if data.starts_with(b"redirect:") => {
                    let to = String::from_utf8_lossy(&data[b"redirect:".len()..]);
                    let headers = format!("Location: http://{addr}{to}\r\n");
                    ("301 Moved Permanently", headers, &[])
                }
                (Some((_, data)), Some(range)) if ranges => {
                    let len = data.len();
                    let (start, end) = match range.split_once('-') {
                        Some(("", n)) => (len.saturating_sub(n.parse().unwrap_or(0)), len),
                        Some((a, "")) => (a.parse().unwrap_or(usize::MAX), len),
                        Some((a, b)) => (
                            a.parse().unwrap_or(usize::MAX),
                            b.parse::<usize>().map_or(len, |b| (b + 1).min(len)),
                        ),
                        None => (usize::MAX, len),
                    };
                    if start >= end {
                        let headers = format!("Content-Range: bytes */{len}\r\n");
                        ("416 Range Not Satisfiable", headers, &[])
                    } else {
                        let headers = format!("Content-Range: bytes {start}-{}/{len}\r\n", end - 1);
                        ("206 Partial Content", headers, &data[start..end])
                    }
                }
                (Some((_, data)), _) => ("200 OK", String::new(), &data[..]),
            };
            let response = format!(
                "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            // counted before it is answered: a client that has the answer sees the count
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = stream.write_all(response.as_bytes());
            if method != "HEAD" {
                let _ = stream.write_all(body);
            }
        }
    });
    (format!("http://{addr}"), answered)
}

/// `http(s)://` urls give a read-only store that reads with plain GETs, with `Range` when the
/// server supports it and whole values when it does not.
#[test]
fn http_store_reads() -> TestResult {
    let chunk: Vec<u8> = (0..100).collect();
    for ranges in [true, false] {
        let (base, _) = serve_http(
            vec![
                ("data/x.zarr/arr/zarr.json", b"{}".to_vec()),
                ("data/x.zarr/arr/c/0/-1", chunk.clone()),
            ],
            ranges,
            64,
        );
        let (store, requests) =
            ObjectStoreBackend::from_url(&format!("{base}/data/x.zarr"))?.with_request_counter();
        assert!(store.is_read_only());
        assert_eq!(store.get("arr/zarr.json")?, Some(b"{}".to_vec()));
        assert_eq!(store.get("arr/c/0/0")?, None);
        assert_eq!(store.size("arr/c/0/-1")?, Some(100));
        requests.reset();
        assert_eq!(
            store.get_range("arr/c/0/-1", ByteRange::Suffix(10))?,
            Some(chunk[90..].to_vec())
        );
        let suffix = requests.counts();
        eprintln!("http (ranges: {ranges}): suffix read: {suffix:?}");
        if ranges {
            assert_eq!(suffix.total(), 1, "a suffix read is one request");
        } else {
            assert_eq!(suffix.get, 2, "a refused range, then the whole value");
        }
        assert_eq!(
            store.get_ranges(
                "arr/c/0/-1",
                &[ByteRange::from(3..5), ByteRange::FromStart(98)]
            )?,
            Some(vec![chunk[3..5].to_vec(), chunk[98..].to_vec()])
        );
        assert!(matches!(
            store.get_range("arr/c/0/-1", ByteRange::from(99..101)),
            Err(StoreError::RangeOutOfBounds { size: 100, .. })
        ));
        assert_eq!(store.get_range("arr/c/9/9", ByteRange::Suffix(1))?, None);
        assert!(matches!(
            store.set("arr/c/0/0", b""),
            Err(StoreError::ReadOnly { .. })
        ));
        assert!(matches!(
            store.delete("arr/zarr.json"),
            Err(StoreError::ReadOnly { .. })
        ));
    }
    Ok(())
}

/// An `http://` store reads through a client without TLS roots that follows no redirect;
/// a server that redirects gets each request again through `object_store`'s own client,
/// which follows it, as do the store's later requests (one request more, once).
#[test]
fn http_store_follows_redirects() -> TestResult {
    let (base, answered) = serve_http(
        vec![
            (
                "old/x.zarr/zarr.json",
                b"redirect:/new/x.zarr/zarr.json".to_vec(),
            ),
            ("old/x.zarr/c/0", b"redirect:/new/x.zarr/c/0".to_vec()),
            ("new/x.zarr/zarr.json", b"{}".to_vec()),
            ("new/x.zarr/c/0", b"0123456789".to_vec()),
            ("plain/zarr.json", b"{}".to_vec()),
        ],
        true,
        64,
    );
    let store = ObjectStoreBackend::from_url(&format!("{base}/old/x.zarr"))?;
    assert_eq!(store.get("zarr.json")?, Some(b"{}".to_vec()));
    // the plain client's request, then `object_store`'s two (the redirect followed)
    assert_eq!(answered.load(Ordering::SeqCst), 3);
    assert_eq!(
        store.get_range("c/0", ByteRange::from(2..5))?,
        Some(b"234".to_vec())
    );
    assert_eq!(store.get("c/1")?, None);
    assert_eq!(answered.load(Ordering::SeqCst), 6);
    // a store whose server does not redirect: one request a read
    let plain = ObjectStoreBackend::from_url(&format!("{base}/plain"))?;
    assert_eq!(plain.get("zarr.json")?, Some(b"{}".to_vec()));
    assert_eq!(answered.load(Ordering::SeqCst), 7);
    Ok(())
}

/// A failed request says which key and what failed, and keeps the `object_store` error.
#[test]
fn remote_errors_name_the_key() -> TestResult {
    use zarr_store::object_store::http::HttpBuilder;
    use zarr_store::object_store::{ClientOptions, RetryConfig};
    // Nothing listens on port 1 of the loopback address: the connection is refused at once.
    let unreachable = HttpBuilder::new()
        .with_url("http://127.0.0.1:1")
        .with_client_options(ClientOptions::new().with_allow_http(true))
        .with_retry(RetryConfig {
            max_retries: 0,
            ..RetryConfig::default()
        })
        .build()?;
    let store = ObjectStoreBackend::new(Arc::new(unreachable), "data")?;
    for (op, result) in [
        ("get", store.get("arr/zarr.json").map(drop)),
        (
            "get_ranges",
            store
                .get_range("arr/zarr.json", ByteRange::Suffix(4))
                .map(drop),
        ),
        ("size", store.size("arr/zarr.json").map(drop)),
    ] {
        match result {
            Err(StoreError::Remote {
                key,
                op: failed,
                source,
            }) => {
                assert_eq!((key.as_str(), failed), ("arr/zarr.json", op));
                assert!(source
                    .downcast_ref::<zarr_store::object_store::Error>()
                    .is_some());
                let message = zarr_testkit::report(&StoreError::Remote {
                    key,
                    op: failed,
                    source,
                });
                assert!(
                    message
                        .starts_with(&format!("object store {op} of \"arr/zarr.json\" failed: ")),
                    "{message}"
                );
            }
            other => panic!("{op}: expected Remote, got {other:?}"),
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Against a real S3-compatible server (scripts/s3-server; scripts/test starts it).

const BUCKET: &str = "zarr-test";

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_conformance() -> TestResult {
    s3::endpoint(BUCKET);
    let url = format!("s3://{BUCKET}/{}", s3::unique_prefix("conformance"));
    let store = open_url(&url)?;
    run_store_conformance(&store);
    Ok(())
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_request_counts() -> TestResult {
    s3::endpoint(BUCKET);
    let url = format!("s3://{BUCKET}/{}", s3::unique_prefix("counts"));
    let (store, requests) = ObjectStoreBackend::from_url(&url)?.with_request_counter();
    check_request_counts(&store, &requests)
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_keys_are_object_names() -> TestResult {
    s3::endpoint(BUCKET);
    let prefix = s3::unique_prefix("names");
    let store = ObjectStoreBackend::from_url(&format!("s3://{BUCKET}/{prefix}"))?;
    store.set("arr/c/0/-1", b"chunk")?;
    // The same object seen through a store on the whole bucket.
    let root = ObjectStoreBackend::from_url(&format!("s3://{BUCKET}"))?;
    assert_eq!(
        root.get(&format!("{prefix}/arr/c/0/-1"))?,
        Some(b"chunk".to_vec())
    );
    assert_eq!(
        root.list_prefix(&format!("{prefix}/"))?,
        [format!("{prefix}/arr/c/0/-1")]
    );
    store.delete_prefix("")?;
    assert!(root.list_prefix(&format!("{prefix}/"))?.is_empty());
    Ok(())
}
