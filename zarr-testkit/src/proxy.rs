//! A fault-injecting HTTP proxy on the loopback address, in front of the local S3 server (or
//! any HTTP/1.1 server): the object-store fault tests send their requests through it.
//!
//! Each request, at a seeded rate, meets one of the [`Fault`]s switched on: the connection
//! dropped before the request is forwarded or in the middle of the response's head, an
//! answer of 500, 503 or S3's 503 `SlowDown`, the response body cut short (the original
//! `Content-Length` kept, then the connection closed, as a cut connection does), or the
//! response held back longer than the client waits. Everything else passes through
//! unchanged: keep-alive towards the client (the proxy opens one upstream connection per
//! request, as the local server closes each one), `Content-Length` and chunked bodies in both
//! directions, HEAD responses without a body. [`FaultProxy::counts`] tells how many faults
//! of each kind were injected, so that a test can check they actually happened.
//!
//! **In process, on threads.** The proxy is a module the tests start (std threads and
//! blocking sockets, no dependency), not a program of its own: each test starts its own proxy
//! with its own faults, seed and rate on a free port, reads its counters directly, and the
//! proxy stops when the test drops it; nothing outlives the test and no port or process has
//! to be coordinated between parallel tests.
//!
//! **Seeded.** Whether a request meets a fault, which one and where a body is cut is drawn
//! from the seed, the request's method, target and `Range` header, and how many times the
//! same request came before (its attempt number): the same requests meet the same faults
//! whatever the order in which threads send them, and a retried request draws again. A
//! test's unique object prefix can be left out of the draws ([`ProxyConfig::unseeded`]),
//! so that every run of it meets the same faults.
//!
//! ```no_run
//! use zarr_testkit::proxy::{Fault, FaultProxy, ProxyConfig};
//!
//! let upstream = std::env::var("AWS_ENDPOINT_URL").unwrap();
//! let proxy = FaultProxy::start(ProxyConfig::new(&upstream, 7).rate(0.1).faults(&Fault::ALL))
//!     .unwrap();
//! // ... point the client at proxy.url() and work ...
//! let counts = proxy.counts();
//! assert!(counts.total_faults() > 0, "{counts}");
//! ```

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::Rng;

/// One kind of fault the proxy injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The request is read, never forwarded, and the connection closed without an answer
    /// (the server never sees the request).
    DropBeforeRequest,
    /// The request is forwarded (the server does it), and the connection is closed in the
    /// middle of the response's status line and headers.
    DropMidResponse,
    /// The request is forwarded (the server does it) and the answer replaced by a 500 with
    /// S3's `InternalError` document.
    Status500,
    /// The request is not forwarded; the answer is a bare 503 Service Unavailable.
    Status503,
    /// The request is not forwarded; the answer is S3's 503 `SlowDown` document.
    SlowDown,
    /// The request is forwarded and the response sent with its original head
    /// (`Content-Length` included) but only part of its body, then the connection is closed.
    /// Responses without a body pass unharmed (and are not counted).
    Truncate,
    /// The request is forwarded and its response held back for [`ProxyConfig::delay`]
    /// (longer than the client's timeout) before it is sent.
    Delay,
}

impl Fault {
    /// Every kind of fault.
    pub const ALL: [Fault; 7] = [
        Fault::DropBeforeRequest,
        Fault::DropMidResponse,
        Fault::Status500,
        Fault::Status503,
        Fault::SlowDown,
        Fault::Truncate,
        Fault::Delay,
    ];

    /// A short name (`drop-before-request`, `status-500`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Fault::DropBeforeRequest => "drop-before-request",
            Fault::DropMidResponse => "drop-mid-response",
            Fault::Status500 => "status-500",
            Fault::Status503 => "status-503",
            Fault::SlowDown => "slow-down",
            Fault::Truncate => "truncate",
            Fault::Delay => "delay",
        }
    }

    fn index(self) -> usize {
        Fault::ALL.iter().position(|&f| f == self).unwrap_or(0)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a [`FaultProxy`] forwards to and which faults it injects how often.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    upstream: String,
    seed: u64,
    rate: f64,
    faults: Vec<Fault>,
    delay: Duration,
    unseeded: Option<String>,
}

impl ProxyConfig {
    /// Forwarding to `upstream` (`http://host:port`, or `host:port`), with the fault draws
    /// seeded by `seed`; no fault until [`rate`](Self::rate) and [`faults`](Self::faults) say.
    #[must_use]
    pub fn new(upstream: &str, seed: u64) -> Self {
        let authority = upstream
            .strip_prefix("http://")
            .unwrap_or(upstream)
            .trim_end_matches('/');
        Self {
            upstream: authority.to_owned(),
            seed,
            rate: 0.0,
            faults: Vec::new(),
            delay: Duration::from_secs(2),
            unseeded: None,
        }
    }

    /// The share of requests that meet a fault, in `[0, 1]` (clamped).
    #[must_use]
    pub fn rate(mut self, rate: f64) -> Self {
        self.rate = rate.clamp(0.0, 1.0);
        self
    }

    /// The kinds of fault to inject, each as likely as the others.
    #[must_use]
    pub fn faults(mut self, faults: &[Fault]) -> Self {
        self.faults = faults.to_vec();
        self
    }

    /// Leaves `part` (a test run's unique object prefix, say) out of the request targets the
    /// draws are made from, so that another run with another prefix meets the same faults.
    #[must_use]
    pub fn unseeded(mut self, part: &str) -> Self {
        self.unseeded = (!part.is_empty()).then(|| part.to_owned());
        self
    }

    /// How long a [`Fault::Delay`] holds a response back (default 2 s): make it longer than
    /// the client's request timeout.
    #[must_use]
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// How many requests a proxy saw and how many faults of each kind it injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FaultCounts {
    /// Requests read from clients.
    pub requests: u64,
    /// Requests forwarded to the server.
    pub forwarded: u64,
    /// Faults injected, in the order of [`Fault::ALL`].
    pub faults: [u64; 7],
}

impl FaultCounts {
    /// Faults of `kind` injected.
    #[must_use]
    pub fn of(&self, kind: Fault) -> u64 {
        self.faults[kind.index()]
    }

    /// Faults injected, of every kind.
    #[must_use]
    pub fn total_faults(&self) -> u64 {
        self.faults.iter().sum()
    }
}

impl fmt::Display for FaultCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} requests, {} forwarded, faults:",
            self.requests, self.forwarded
        )?;
        for kind in Fault::ALL {
            write!(f, " {kind} {}", self.of(kind))?;
        }
        Ok(())
    }
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    forwarded: AtomicU64,
    faults: [AtomicU64; 7],
}

struct Shared {
    config: ProxyConfig,
    /// The fault rate now (f64 bits), changeable while the proxy runs.
    rate: AtomicU64,
    counters: Counters,
    /// How many times each request (method, target, range) was seen.
    attempts: Mutex<HashMap<u64, u64>>,
    stop: AtomicBool,
}

/// A running proxy: listens on `127.0.0.1` until dropped.
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl fmt::Debug for FaultProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultProxy")
            .field("addr", &self.addr)
            .field("upstream", &self.shared.config.upstream)
            .finish_non_exhaustive()
    }
}

/// How long an idle client connection waits between checks of the stop flag.
const IDLE_POLL: Duration = Duration::from_millis(100);
/// How long the proxy waits for the rest of a request or for the server's answer.
const IO_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest request or response head accepted.
const MAX_HEAD: usize = 64 * 1024;

impl FaultProxy {
    /// Starts a proxy on a free port of `127.0.0.1`.
    ///
    /// # Errors
    ///
    /// When the upstream address does not resolve or no port can be bound.
    pub fn start(config: ProxyConfig) -> io::Result<FaultProxy> {
        config.upstream.to_socket_addrs()?.next().ok_or_else(|| {
            io::Error::new(ErrorKind::InvalidInput, "the upstream has no address")
        })?;
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            rate: AtomicU64::new(config.rate.to_bits()),
            config,
            counters: Counters::default(),
            attempts: Mutex::new(HashMap::new()),
            stop: AtomicBool::new(false),
        });
        let accept_shared = shared.clone();
        let accept = std::thread::Builder::new()
            .name("fault-proxy-accept".into())
            .spawn(move || accept_loop(&listener, &accept_shared))?;
        Ok(FaultProxy {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:PORT`: the endpoint clients use in place of the server's.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address the proxy listens on.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Changes the fault rate from now on (clamped to `[0, 1]`).
    pub fn set_rate(&self, rate: f64) {
        self.shared
            .rate
            .store(rate.clamp(0.0, 1.0).to_bits(), Ordering::Relaxed);
    }

    /// The requests seen and the faults injected so far.
    #[must_use]
    pub fn counts(&self) -> FaultCounts {
        let c = &self.shared.counters;
        let mut faults = [0; 7];
        for (out, counter) in faults.iter_mut().zip(&c.faults) {
            *out = counter.load(Ordering::Relaxed);
        }
        FaultCounts {
            requests: c.requests.load(Ordering::Relaxed),
            forwarded: c.forwarded.load(Ordering::Relaxed),
            faults,
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        // wake the accept loop
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("fault-proxy-conn".into())
            .spawn(move || {
                // A connection's failure (the client went away, the server did) ends only it.
                let _ = serve(stream, &shared);
            });
        if spawned.is_err() {
            // No thread for it: the connection is dropped, as an overloaded server would.
            continue;
        }
    }
}

/// An HTTP message head: the start line and the headers, raw and parsed.
struct Head {
    raw: Vec<u8>,
    start: String,
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    }

    fn content_length(&self) -> io::Result<Option<u64>> {
        self.header("content-length")
            .map(|v| {
                v.trim()
                    .parse()
                    .map_err(|_| invalid(format!("bad Content-Length {v:?}")))
            })
            .transpose()
    }

    /// The head with `Connection` headers replaced by `connection`.
    fn with_connection(&self, connection: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.raw.len() + 32);
        out.extend_from_slice(self.start.as_bytes());
        out.extend_from_slice(b"\r\n");
        for (name, value) in &self.headers {
            if name.eq_ignore_ascii_case("connection") || name.eq_ignore_ascii_case("keep-alive") {
                continue;
            }
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        out.extend_from_slice(format!("Connection: {connection}\r\n\r\n").as_bytes());
        out
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(ErrorKind::InvalidData, message)
}

/// Reads a message head; `None` at a clean end of stream before any byte.
fn read_head(reader: &mut impl BufRead) -> io::Result<Option<Head>> {
    let mut raw = Vec::new();
    loop {
        let before = raw.len();
        let n = reader.read_until(b'\n', &mut raw)?;
        if n == 0 {
            if raw.is_empty() {
                return Ok(None);
            }
            return Err(io::Error::new(
                ErrorKind::UnexpectedEof,
                "the stream ended inside a message head",
            ));
        }
        if raw.len() > MAX_HEAD {
            return Err(invalid("a message head over 64 KiB".into()));
        }
        // A blank line (not the first) ends the head.
        if raw[before..] == *b"\r\n" || raw[before..] == *b"\n" {
            if before == 0 {
                raw.clear();
                continue;
            }
            break;
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let mut lines = text.lines();
    let start = lines.next().unwrap_or("").trim_end().to_owned();
    let headers = lines
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_owned(), value.trim().to_owned()))
        })
        .collect();
    Ok(Some(Head {
        raw,
        start,
        headers,
    }))
}

/// How a message's body is delimited.
enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// Reads a body as framed, returning its bytes on the wire (chunk framing included).
fn read_body(reader: &mut impl BufRead, framing: &Framing) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    match *framing {
        Framing::None => {}
        Framing::Length(n) => {
            reader.take(n).read_to_end(&mut body)?;
            if body.len() as u64 != n {
                return Err(io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "the body ended early",
                ));
            }
        }
        Framing::UntilClose => {
            reader.read_to_end(&mut body)?;
        }
        Framing::Chunked => loop {
            let start = body.len();
            if reader.read_until(b'\n', &mut body)? == 0 {
                return Err(io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "a chunked body ended early",
                ));
            }
            let line = String::from_utf8_lossy(&body[start..]).into_owned();
            let size_text = line.split(';').next().unwrap_or("").trim();
            let size = u64::from_str_radix(size_text, 16)
                .map_err(|_| invalid(format!("bad chunk size {size_text:?}")))?;
            if size == 0 {
                // trailers, up to the blank line
                loop {
                    let at = body.len();
                    if reader.read_until(b'\n', &mut body)? == 0 {
                        return Err(io::Error::new(
                            ErrorKind::UnexpectedEof,
                            "a chunked body ended in its trailers",
                        ));
                    }
                    if body[at..] == *b"\r\n" || body[at..] == *b"\n" {
                        return Ok(body);
                    }
                }
            }
            // the data and its CRLF
            let want = size + 2;
            let got = reader.take(want).read_to_end(&mut body)? as u64;
            if got != want {
                return Err(io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "a chunk ended early",
                ));
            }
        },
    }
    Ok(body)
}

fn request_framing(head: &Head) -> io::Result<Framing> {
    if head.chunked() {
        return Ok(Framing::Chunked);
    }
    Ok(match head.content_length()? {
        Some(0) | None => Framing::None,
        Some(n) => Framing::Length(n),
    })
}

fn response_framing(head: &Head, method: &str) -> io::Result<Framing> {
    let status: u16 = head
        .start
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid(format!("bad status line {:?}", head.start)))?;
    if method.eq_ignore_ascii_case("HEAD") || status / 100 == 1 || status == 204 || status == 304 {
        return Ok(Framing::None);
    }
    if head.chunked() {
        return Ok(Framing::Chunked);
    }
    Ok(match head.content_length()? {
        Some(n) => Framing::Length(n),
        None => Framing::UntilClose,
    })
}

/// FNV-1a: a stable hash of the request's identity (std's hasher may change between
/// releases, and the draws must not).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.as_bytes().iter().chain(b"\0") {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// The fault a request meets (if any) and the generator for the fault's own draws.
fn decide(shared: &Shared, head: &Head) -> (Option<Fault>, Rng) {
    let mut parts = head.start.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("");
    let range = head.header("range").unwrap_or("");
    let target = match &shared.config.unseeded {
        Some(part) => target.replace(part.as_str(), ""),
        None => target.to_owned(),
    };
    let identity = fnv1a(&[method, &target, range]);
    let attempt = {
        let mut attempts = shared
            .attempts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = attempts.entry(identity).or_insert(0);
        *n += 1;
        *n
    };
    let mut rng =
        Rng::new(shared.config.seed ^ identity ^ attempt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let rate = f64::from_bits(shared.rate.load(Ordering::Relaxed));
    let faults = &shared.config.faults;
    let fault = (!faults.is_empty() && rng.chance(rate)).then(|| faults[rng.index(faults.len())]);
    (fault, rng)
}

fn count(shared: &Shared, fault: Fault) {
    shared.counters.faults[fault.index()].fetch_add(1, Ordering::Relaxed);
}

/// A complete error response.
fn error_response(status: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: keep-alive\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn s3_error(code: &str, message: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code>\
         <Message>{message}</Message><RequestId>fault-proxy</RequestId></Error>"
    )
}

/// Serves one client connection, request after request (keep-alive), until it closes.
fn serve(client: TcpStream, shared: &Shared) -> io::Result<()> {
    client.set_nodelay(true)?;
    let mut writer = client.try_clone()?;
    let mut reader = BufReader::new(client);
    loop {
        // Idle: wait for the next request, checking the stop flag.
        reader.get_ref().set_read_timeout(Some(IDLE_POLL))?;
        loop {
            if shared.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            match reader.fill_buf() {
                Ok([]) => return Ok(()),
                Ok(_) => break,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        reader.get_ref().set_read_timeout(Some(IO_TIMEOUT))?;
        let Some(head) = read_head(&mut reader)? else {
            return Ok(());
        };
        let body = read_body(&mut reader, &request_framing(&head)?)?;
        shared.counters.requests.fetch_add(1, Ordering::Relaxed);
        let method = head
            .start
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_owned();
        let (fault, mut rng) = decide(shared, &head);

        match fault {
            Some(Fault::DropBeforeRequest) => {
                count(shared, Fault::DropBeforeRequest);
                let _ = writer.shutdown(Shutdown::Both);
                return Ok(());
            }
            Some(Fault::Status503) => {
                count(shared, Fault::Status503);
                writer.write_all(&error_response(
                    "503 Service Unavailable",
                    "text/plain",
                    "Service Unavailable",
                ))?;
                continue;
            }
            Some(Fault::SlowDown) => {
                count(shared, Fault::SlowDown);
                writer.write_all(&error_response(
                    "503 Slow Down",
                    "application/xml",
                    &s3_error("SlowDown", "Please reduce your request rate."),
                ))?;
                continue;
            }
            _ => {}
        }

        // Forward, on a connection of its own (the local server closes each one).
        let (response_head, response_body, framing) = forward(shared, &head, &body, &method)?;
        shared.counters.forwarded.fetch_add(1, Ordering::Relaxed);
        let keep_alive = !matches!(framing, Framing::UntilClose);
        let out_head =
            response_head.with_connection(if keep_alive { "keep-alive" } else { "close" });

        match fault {
            Some(Fault::Status500) => {
                count(shared, Fault::Status500);
                writer.write_all(&error_response(
                    "500 Internal Server Error",
                    "application/xml",
                    &s3_error(
                        "InternalError",
                        "We encountered an internal error. Please try again.",
                    ),
                ))?;
                continue;
            }
            Some(Fault::DropMidResponse) => {
                count(shared, Fault::DropMidResponse);
                // at least one byte of the head, never all of it
                let cut = 1 + rng.index(out_head.len() - 1);
                let _ = writer.write_all(&out_head[..cut]);
                let _ = writer.shutdown(Shutdown::Both);
                return Ok(());
            }
            Some(Fault::Truncate) if !response_body.is_empty() => {
                count(shared, Fault::Truncate);
                let cut = rng.index(response_body.len());
                let _ = writer.write_all(&out_head);
                let _ = writer.write_all(&response_body[..cut]);
                let _ = writer.shutdown(Shutdown::Both);
                return Ok(());
            }
            Some(Fault::Delay) => {
                count(shared, Fault::Delay);
                std::thread::sleep(shared.config.delay);
            }
            _ => {}
        }
        writer.write_all(&out_head)?;
        writer.write_all(&response_body)?;
        writer.flush()?;
        if !keep_alive {
            let _ = writer.shutdown(Shutdown::Both);
            return Ok(());
        }
    }
}

/// Sends the request to the server and reads its whole response.
fn forward(
    shared: &Shared,
    head: &Head,
    body: &[u8],
    method: &str,
) -> io::Result<(Head, Vec<u8>, Framing)> {
    let mut upstream = TcpStream::connect(&shared.config.upstream)?;
    upstream.set_read_timeout(Some(IO_TIMEOUT))?;
    upstream.set_nodelay(true)?;
    upstream.write_all(&head.with_connection("close"))?;
    upstream.write_all(body)?;
    upstream.flush()?;
    let mut reader = BufReader::new(upstream);
    let response = loop {
        let response = read_head(&mut reader)?.ok_or_else(|| {
            io::Error::new(
                ErrorKind::UnexpectedEof,
                "the server closed without an answer",
            )
        })?;
        // 100 Continue and other interim answers: skip to the real one
        if !response
            .start
            .split_whitespace()
            .nth(1)
            .is_some_and(|s| s.starts_with('1'))
        {
            break response;
        }
    };
    let framing = response_framing(&response, method)?;
    let response_body = read_body(&mut reader, &framing)?;
    Ok((response, response_body, framing))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-thread HTTP server answering every request with `body`, chunked or with a
    /// `Content-Length`, and closing each connection (as the local S3 server does).
    fn server(body: &'static [u8], chunked: bool) -> (SocketAddr, JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let handle = std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let Ok(Some(head)) = read_head(&mut reader) else {
                    continue;
                };
                if head.start.starts_with("QUIT") {
                    return;
                }
                let _ = read_body(&mut reader, &request_framing(&head).unwrap());
                let mut out = stream;
                let response = if chunked {
                    let (a, b) = body.split_at(body.len() / 2);
                    let mut r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
                    for part in [a, b] {
                        r.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
                        r.extend_from_slice(part);
                        r.extend_from_slice(b"\r\n");
                    }
                    r.extend_from_slice(b"0\r\n\r\n");
                    r
                } else {
                    let mut r = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    r.extend_from_slice(body);
                    r
                };
                let _ = out.write_all(&response);
            }
        });
        (addr, handle)
    }

    fn stop(addr: SocketAddr, handle: JoinHandle<()>) {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"QUIT / HTTP/1.1\r\n\r\n").unwrap();
        handle.join().unwrap();
    }

    /// Sends `count` GETs on one connection and returns each response (head, body).
    fn get_many(proxy: &FaultProxy, count: usize) -> Vec<io::Result<(Head, Vec<u8>)>> {
        let stream = TcpStream::connect(proxy.addr()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut writer = stream.try_clone().unwrap();
        let mut reader = BufReader::new(stream);
        let mut out = Vec::new();
        for i in 0..count {
            let request = format!("GET /k{i} HTTP/1.1\r\nHost: x\r\n\r\n");
            if let Err(e) = writer.write_all(request.as_bytes()) {
                out.push(Err(e));
                break;
            }
            let result = (|| {
                let head = read_head(&mut reader)?.ok_or_else(|| {
                    io::Error::new(ErrorKind::UnexpectedEof, "closed without an answer")
                })?;
                let body = read_body(&mut reader, &response_framing(&head, "GET")?)?;
                Ok((head, body))
            })();
            let failed = result.is_err();
            out.push(result);
            if failed {
                break;
            }
        }
        out
    }

    #[test]
    fn passes_keep_alive_and_chunked_bodies_through() {
        for chunked in [false, true] {
            let (addr, handle) = server(b"0123456789abcdef", chunked);
            let proxy = FaultProxy::start(ProxyConfig::new(&addr.to_string(), 1)).unwrap();
            let responses = get_many(&proxy, 3);
            assert_eq!(responses.len(), 3);
            for response in responses {
                let (head, body) = response.unwrap();
                assert_eq!(head.header("connection"), Some("keep-alive"));
                let body = if chunked {
                    let mut decoded = Vec::new();
                    let mut r = &body[..];
                    // "8\r\n01234567\r\n8\r\n89abcdef\r\n0\r\n\r\n"
                    while let Some(pos) = r.windows(2).position(|w| w == b"\r\n") {
                        let size =
                            usize::from_str_radix(std::str::from_utf8(&r[..pos]).unwrap(), 16)
                                .unwrap();
                        if size == 0 {
                            break;
                        }
                        decoded.extend_from_slice(&r[pos + 2..pos + 2 + size]);
                        r = &r[pos + 4 + size..];
                    }
                    decoded
                } else {
                    body
                };
                assert_eq!(body, b"0123456789abcdef");
            }
            let counts = proxy.counts();
            assert_eq!((counts.requests, counts.forwarded), (3, 3));
            assert_eq!(counts.total_faults(), 0);
            drop(proxy);
            stop(addr, handle);
        }
    }

    #[test]
    fn every_fault_happens_alone_and_is_counted() {
        let (addr, handle) = server(b"0123456789abcdef", false);
        for kind in Fault::ALL {
            let proxy = FaultProxy::start(
                ProxyConfig::new(&addr.to_string(), 2)
                    .rate(1.0)
                    .faults(&[kind])
                    .delay(Duration::from_millis(50)),
            )
            .unwrap();
            let responses = get_many(&proxy, 1);
            let counts = proxy.counts();
            assert_eq!(counts.of(kind), 1, "{kind}: {counts}");
            assert_eq!(counts.total_faults(), 1, "{kind}: {counts}");
            let response = &responses[0];
            match kind {
                Fault::DropBeforeRequest | Fault::DropMidResponse | Fault::Truncate => {
                    assert!(response.is_err(), "{kind}")
                }
                Fault::Status500 | Fault::Status503 | Fault::SlowDown => {
                    let (head, body) = response.as_ref().unwrap();
                    let status = if kind == Fault::Status500 {
                        " 500 "
                    } else {
                        " 503 "
                    };
                    assert!(head.start.contains(status), "{kind}: {}", head.start);
                    if kind == Fault::SlowDown {
                        assert!(String::from_utf8_lossy(body).contains("<Code>SlowDown</Code>"));
                    }
                }
                Fault::Delay => {
                    assert_eq!(response.as_ref().unwrap().1, b"0123456789abcdef");
                }
            }
            let forwarded = !matches!(
                kind,
                Fault::DropBeforeRequest | Fault::Status503 | Fault::SlowDown
            );
            assert_eq!(counts.forwarded, u64::from(forwarded), "{kind}");
        }
        stop(addr, handle);
    }

    #[test]
    fn the_rate_is_seeded_and_roughly_kept() {
        let shared = |seed| Shared {
            config: ProxyConfig::new("127.0.0.1:1", seed)
                .rate(0.1)
                .faults(&Fault::ALL),
            rate: AtomicU64::new(0.1f64.to_bits()),
            counters: Counters::default(),
            attempts: Mutex::new(HashMap::new()),
            stop: AtomicBool::new(false),
        };
        let draws = |seed| {
            let s = shared(seed);
            (0..2000)
                .map(|i| {
                    let head = Head {
                        raw: Vec::new(),
                        start: format!("GET /k{} HTTP/1.1", i % 500),
                        headers: Vec::new(),
                    };
                    decide(&s, &head).0
                })
                .collect::<Vec<_>>()
        };
        let a = draws(7);
        assert_eq!(a, draws(7), "the same seed, the same faults");
        let prefixed = |prefix: &str| {
            let mut s = shared(7);
            s.config = s.config.unseeded(prefix);
            (0..300)
                .map(|i| {
                    let head = Head {
                        raw: Vec::new(),
                        start: format!("GET /bucket/{prefix}/k{i} HTTP/1.1"),
                        headers: Vec::new(),
                    };
                    decide(&s, &head).0
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            prefixed("run-1"),
            prefixed("run-2"),
            "the prefix is left out"
        );
        assert_ne!(a, draws(8));
        let faults = a.iter().filter(|f| f.is_some()).count();
        assert!(
            (140..260).contains(&faults),
            "{faults} faults in 2000 at 10 %"
        );
        for kind in Fault::ALL {
            assert!(a.contains(&Some(kind)), "{kind} never drawn");
        }
    }
}
