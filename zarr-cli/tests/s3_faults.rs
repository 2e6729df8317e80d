//! The `zarr` command on a failing object store: `zarr info` and `zarr export` against the
//! local S3 server behind the fault-injecting proxy (`zarr_testkit::proxy`) failing every
//! request exit 1 with one line naming what failed and keeping the store's message (once),
//! after a time bounded by the retry options (`--retries`, `--retry-timeout`,
//! `--request-timeout` or their `ZARR_*` variables), never hang; so does `zarr info` where
//! nothing listens. The proxy tests are ignored by a plain `cargo test` (they need the
//! server); `scripts/test` runs them. By hand:
//!
//! ```text
//! eval "$(scripts/s3-server)"
//! cargo test -p zarr-cli --test s3_faults -- --ignored
//! ```
#![cfg(feature = "object-store")]

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use zarr_testkit::proxy::{Fault, FaultProxy, ProxyConfig};
use zarr_testkit::s3;

const BUCKET: &str = "zarr-cli-faults-test";

/// A generous bound: the options below give up after about 2 s of retries plus one request
/// timeout; a hang, or the defaults (60 s of retries) in place of the options, exceed it.
const LIMIT: Duration = Duration::from_secs(40);

/// Runs `zarr` with `AWS_ENDPOINT_URL` pointing at `endpoint` and `envs` set.
fn zarr_at(endpoint: &str, args: &[&str], envs: &[(&str, &str)]) -> (Run, Duration) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_zarr"))
        .args(args)
        .env("AWS_ENDPOINT_URL", endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_REGION", "us-east-1")
        .envs(envs.iter().copied())
        .output()
        .expect("run zarr");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    (run, start.elapsed())
}

/// Checks a failed run: exit 1, one line, the store's message once, within [`LIMIT`].
fn failed_cleanly(what: &str, run: &Run, took: Duration) -> String {
    assert_eq!(run.code, 1, "{what}: {run:?}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: one line on stderr: {:?}",
        run.stderr
    );
    let line = lines[0];
    assert!(line.starts_with("zarr: error: "), "{what}: {line}");
    assert!(line.contains("object store get"), "{what}: {line}");
    // the store's message is there, each of its parts once
    let parts: Vec<&str> = line.split(": ").collect();
    assert!(
        parts.len() >= 4,
        "{what}: the store's message is missing: {line}"
    );
    for part in &parts {
        assert!(
            part.len() < 12 || parts.iter().filter(|p| *p == part).count() == 1,
            "{what}: {part:?} twice: {line}"
        );
    }
    assert!(took < LIMIT, "{what}: {took:?} (limit {LIMIT:?}): {line}");
    line.to_owned()
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it)"]
fn s3_info_and_export_on_a_failing_server_exit_with_its_message() {
    let upstream = s3::endpoint(BUCKET);
    let url = format!("s3://{BUCKET}/{}", s3::unique_prefix("failing"));
    let (made, _) = zarr_at(
        &upstream,
        &[
            "create", &url, "--shape", "8", "--chunks", "4", "--dtype", "int32",
        ],
        &[],
    );
    assert_eq!(made.code, 0, "{made:?}");
    let dir = tempfile::tempdir().unwrap();
    // each kind of fault behind its own proxy, all at once: the commands spend their time
    // waiting for the retries and timeouts, not computing
    std::thread::scope(|scope| {
        let threads: Vec<_> = Fault::ALL
            .into_iter()
            .map(|kind| {
                let npy = dir.path().join(format!("{kind}.npy"));
                let (upstream, url) = (&upstream, &url);
                scope.spawn(move || fails_with_each_kind(upstream, url, &s(&npy), kind))
            })
            .collect();
        for thread in threads {
            thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
    });
}

/// `zarr info` and `zarr export` of `url` through a proxy in front of `upstream` failing
/// every request with `kind`.
fn fails_with_each_kind(upstream: &str, url: &str, npy: &str, kind: Fault) {
    let proxy = FaultProxy::start(
        ProxyConfig::new(upstream, 5)
            .rate(1.0)
            .faults(&[kind])
            .delay(Duration::from_secs(30)),
    )
    .unwrap();
    // the options as flags
    let (run, took) = zarr_at(
        &proxy.url(),
        &[
            "info",
            url,
            "--retries",
            "3",
            "--retry-timeout",
            "2s",
            "--request-timeout",
            "1s",
        ],
        &[],
    );
    let line = failed_cleanly(&format!("info, {kind}"), &run, took);
    match kind {
        Fault::Status500 => assert!(line.contains("500"), "{line}"),
        Fault::Status503 => assert!(line.contains("503"), "{line}"),
        Fault::SlowDown => assert!(line.contains("SlowDown"), "{line}"),
        Fault::Delay => assert!(line.contains("timed out"), "{line}"),
        _ => {}
    }
    // the same as environment variables
    let (run, took) = zarr_at(
        &proxy.url(),
        &["export", url, npy],
        &[
            ("ZARR_RETRIES", "3"),
            ("ZARR_RETRY_TIMEOUT", "2s"),
            ("ZARR_REQUEST_TIMEOUT", "1s"),
        ],
    );
    failed_cleanly(&format!("export, {kind}"), &run, took);
    assert!(
        !std::path::Path::new(npy).exists(),
        "{kind}: export left a file"
    );
    // retried: the first attempt and 3 retries of each command's first request, or as
    // many as 2 s allow when each takes the 1 s request timeout
    let counts = proxy.counts();
    let least = if kind == Fault::Delay { 4 } else { 8 };
    assert!(counts.of(kind) >= least, "{kind}: {counts}");
    eprintln!("{kind}: {line} ({took:?})");
}

/// Nothing listens: every connection is refused, and the command fails once the retries
/// are spent (needs no server: runs in a plain `cargo test`).
#[test]
fn s3_info_without_a_server_fails_in_bounded_time() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let (run, took) = zarr_at(
        &format!("http://127.0.0.1:{port}"),
        &[
            "info",
            &format!("s3://{BUCKET}/nothing"),
            "--retry-timeout",
            "2s",
        ],
        &[],
    );
    let line = failed_cleanly("refused", &run, took);
    assert!(
        line.contains("Connection refused") || line.contains("connect"),
        "{line}"
    );
}
