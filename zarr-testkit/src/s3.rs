//! The local S3 server of the object-store tests (`scripts/s3-server` starts one on the
//! loopback address and prints its environment; `scripts/test` starts it and then runs the
//! ignored S3 tests).
//!
//! The S3 tests are `#[ignore = "needs the local S3 server (scripts/test starts it)"]`: a plain
//! `cargo test` lists them as ignored. Run with `--ignored`, [`endpoint`] fails them when the
//! server is missing: they never pass without talking to it.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The endpoint of the local S3 server (`AWS_ENDPOINT_URL`), with `bucket` created.
///
/// # Panics
///
/// When `AWS_ENDPOINT_URL` is unset or not a loopback `http://` address, or when the server
/// does not answer: a missing server fails the test, it never skips it.
pub fn endpoint(bucket: &str) -> String {
    let endpoint = std::env::var("AWS_ENDPOINT_URL").unwrap_or_else(|_| {
        panic!(
            "AWS_ENDPOINT_URL is unset: this test needs the local S3 server; run it through \
             scripts/test, or start one with eval \"$(scripts/s3-server)\""
        )
    });
    let authority = endpoint
        .strip_prefix("http://")
        .map(|rest| rest.trim_end_matches('/'))
        .unwrap_or_else(|| panic!("AWS_ENDPOINT_URL={endpoint}: expected http://127.0.0.1:PORT"));
    let loopback = authority
        .to_socket_addrs()
        .map(|mut addrs| addrs.all(|a| a.ip().is_loopback()))
        .unwrap_or(false);
    assert!(
        loopback,
        "AWS_ENDPOINT_URL={endpoint}: the S3 tests only talk to a server on the loopback address"
    );
    create_bucket(authority, bucket);
    endpoint
}

/// Creates `bucket` with an unsigned `PUT /bucket` (which the local test server accepts); a
/// bucket that exists already is fine.
///
/// # Panics
///
/// When the server does not answer, or answers anything but 200 or 409.
pub fn create_bucket(authority: &str, bucket: &str) {
    let mut stream = TcpStream::connect(authority).unwrap_or_else(|e| {
        panic!(
            "no S3 server answers at {authority}: {e} (scripts/test starts one; by hand: \
             eval \"$(scripts/s3-server)\")"
        )
    });
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap_or_else(|e| panic!("set_read_timeout: {e}"));
    let request = format!(
        "PUT /{bucket} HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 0\r\n\
         Connection: close\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .unwrap_or_else(|e| panic!("creating bucket {bucket}: {e}"));
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .unwrap_or_else(|e| panic!("creating bucket {bucket}: {e}"));
    let status = response.split_whitespace().nth(1).unwrap_or("");
    // 409: the bucket exists already (created by another test)
    assert!(
        status == "200" || status == "409",
        "creating bucket {bucket}: unexpected answer {:?}",
        response.lines().next()
    );
}

/// An object prefix no other test run uses: `run-<process id>-<nanoseconds>/<test>`.
#[must_use]
pub fn unique_prefix(test: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("run-{}-{nanos}/{test}", std::process::id())
}
