//! `zarr conformance run DIR -- READER...`: every array fixture through another reader.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zarr_array::zarr_store::{Store, StoreUrl};
use zarr_array::Group;

use crate::cli::ConformanceRunArgs;
use crate::error::{chain, explain, CliError, Result};
use crate::layout::{REGULAR_BOUNDED, SPARSE_CODEC};
use crate::npy::{Npy, NpyStrings};
use crate::progress::{outln, Progress};
use crate::store::{store_url, Access, Ctx};

/// Where a corpus lives: a local directory (read as files), or a remote prefix (read
/// through its store; readers are given urls below it, like `s3://bucket/corpus/dtype_bool`).
#[derive(Debug)]
enum Corpus {
    Dir(PathBuf),
    Remote {
        /// The url, without a trailing `/`.
        url: String,
        store: Arc<dyn Store>,
    },
}

impl Corpus {
    fn open(ctx: &Ctx, location: &str) -> Result<Corpus> {
        match store_url(location)? {
            StoreUrl::Path(path) => Ok(Corpus::Dir(path)),
            _ => Ok(Corpus::Remote {
                url: location.trim_end_matches('/').to_string(),
                store: ctx.open_store(location, Access::Existing)?,
            }),
        }
    }

    /// How the corpus is shown.
    fn shown(&self) -> String {
        match self {
            Corpus::Dir(dir) => dir.display().to_string(),
            Corpus::Remote { url, .. } => url.clone(),
        }
    }

    /// The file (or object) `rel` of the corpus, as given to readers and shown in messages.
    fn child(&self, rel: &str) -> OsString {
        match self {
            Corpus::Dir(dir) => dir.join(rel).into_os_string(),
            Corpus::Remote { url, .. } => format!("{url}/{rel}").into(),
        }
    }

    /// The contents of `rel`: `Ok(None)` when it does not exist.
    fn read(&self, rel: &str) -> std::result::Result<Option<Vec<u8>>, String> {
        match self {
            Corpus::Dir(dir) => match std::fs::read(dir.join(rel)) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(chain(&e)),
            },
            Corpus::Remote { store, .. } => store.get(rel).map_err(|e| chain(&e)),
        }
    }
}

/// How one fixture came out.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// Read exactly the expected data, or refused a document to refuse.
    Pass,
    /// Read, but not the expected data.
    Wrong(String),
    /// Refused a fixture it should read.
    Refused(String),
    /// Read a document it should refuse.
    ShouldHaveRefused,
}

impl Outcome {
    fn name(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Wrong(_) => "wrong",
            Outcome::Refused(_) => "refused",
            Outcome::ShouldHaveRefused => "should-have-refused",
        }
    }

    fn detail(&self) -> &str {
        match self {
            Outcome::Wrong(d) | Outcome::Refused(d) => d,
            _ => "",
        }
    }
}

const OUTCOMES: [&str; 4] = ["pass", "wrong", "refused", "should-have-refused"];

/// One manifest entry.
#[derive(Debug, Clone)]
struct Fixture {
    path: String,
    node: String,
    expect: String,
    data: Option<String>,
    category: String,
}

fn load_manifest(corpus: &Corpus) -> Result<Vec<Fixture>> {
    let shown = corpus.child("manifest.json").to_string_lossy().into_owned();
    let text = corpus
        .read("manifest.json")
        .map_err(|e| CliError::input(format!("{shown}: {e}")))?
        .ok_or_else(|| {
            CliError::input(format!(
                "{shown}: no such file (is {} a corpus? `zarr conformance write DIR` makes one)",
                corpus.shown()
            ))
        })?;
    let bad = |why: String| CliError::input(format!("{shown}: {why}"));
    let manifest: Value =
        serde_json::from_slice(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let list = manifest
        .get("fixtures")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"fixtures\" list".into()))?;
    let mut out = Vec::new();
    for (i, f) in list.iter().enumerate() {
        let field = |k: &str| {
            f.get(k)
                .and_then(Value::as_str)
                .map(String::from)
                .ok_or_else(|| bad(format!("fixture {i} has no string {k:?}")))
        };
        let path = field("path")?;
        if path.split('/').any(|p| p.is_empty() || p == "..") {
            return Err(bad(format!("fixture {i}: path {path:?} leaves the corpus")));
        }
        let node = field("node")?;
        let expect = field("expect")?;
        if !["read", "reject"].contains(&expect.as_str()) {
            return Err(bad(format!(
                "fixture {path}: expect must be read or reject"
            )));
        }
        let data = f.get("data").and_then(Value::as_str).map(String::from);
        let requires: Vec<String> = match f.get("requires").and_then(Value::as_array) {
            Some(r) => r
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect(),
            None => scan_requires(corpus, &format!("{path}/zarr.json")),
        };
        let category = if requires.is_empty() {
            "core".to_string()
        } else {
            requires.join("+")
        };
        out.push(Fixture {
            path,
            node,
            expect,
            data,
            category,
        });
    }
    Ok(out)
}

/// The extensions of this project a `zarr.json` names (for manifests without "requires").
fn scan_requires(corpus: &Corpus, doc: &str) -> Vec<String> {
    let bytes = corpus.read(doc).ok().flatten().unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    [REGULAR_BOUNDED, SPARSE_CODEC]
        .iter()
        .filter(|n| text.contains(&format!("\"{n}\"")))
        .map(|n| n.to_string())
        .collect()
}

/// A fresh scratch directory for the readers' outputs.
fn scratch_dir() -> Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("zarr-conformance-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| CliError::io(dir.display(), e))?;
    Ok(dir)
}

/// Runs the reader on one array; `Ok(None)` when it timed out.
fn run_reader(
    reader: &[String],
    array: &OsString,
    out: &Path,
    err: &Path,
    timeout: Duration,
) -> std::io::Result<Option<bool>> {
    let stderr = File::create(err)?;
    let mut child = Command::new(&reader[0])
        .args(&reader[1..])
        .arg(array)
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr))
        .spawn()?;
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status.success()));
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn first_line(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("(no message)");
    let line: String = line.chars().take(200).collect();
    line.trim().to_string()
}

/// Compares what a reader wrote with the expected data: NumPy's fixed-width strings
/// (`<U<n>`, `|S<n>`) element by element, else the elements' bits.
fn compare(got: &[u8], corpus: &Corpus, expected: &str) -> Outcome {
    let exp_bytes = corpus
        .read(expected)
        .and_then(|b| b.ok_or_else(|| "no such file".to_string()));
    if let Ok(Ok(exp)) = exp_bytes.as_deref().map(NpyStrings::parse) {
        return compare_strings(got, &exp);
    }
    let exp = match exp_bytes.and_then(|b| Npy::parse(&b).map_err(|e| e.to_string())) {
        Ok(n) => n,
        Err(e) => {
            return Outcome::Wrong(format!(
                "the expected data {} is unreadable: {e}",
                corpus.child(expected).to_string_lossy()
            ))
        }
    };
    let got = match Npy::parse(got) {
        Ok(n) => n,
        Err(e) => return Outcome::Wrong(format!("the reader's .npy is unreadable: {e}")),
    };
    if got.data_type != exp.data_type {
        return Outcome::Wrong(format!(
            "data type {}, expected {}",
            got.data_type, exp.data_type
        ));
    }
    if got.shape != exp.shape {
        return Outcome::Wrong(format!("shape {:?}, expected {:?}", got.shape, exp.shape));
    }
    let size = exp.data_type.size();
    let differ: Vec<usize> = got
        .data
        .chunks_exact(size)
        .zip(exp.data.chunks_exact(size))
        .enumerate()
        .filter(|(_, (a, b))| !exp.data_type.elements_equal(a, b))
        .map(|(i, _)| i)
        .collect();
    match differ.first() {
        None => Outcome::Pass,
        Some(&i) => Outcome::Wrong(format!(
            "{} of {} elements differ (the first at flat index {i})",
            differ.len(),
            got.data.len() / size
        )),
    }
}

fn compare_strings(got: &[u8], exp: &NpyStrings) -> Outcome {
    let got = match NpyStrings::parse(got) {
        Ok(n) => n,
        Err(e) => return Outcome::Wrong(format!("the reader's .npy is unreadable: {e}")),
    };
    if (got.data_type, &got.shape) != (exp.data_type, &exp.shape) {
        return Outcome::Wrong(format!(
            "{} of shape {:?}, expected {} of shape {:?}",
            got.data_type, got.shape, exp.data_type, exp.shape
        ));
    }
    match got.items.iter().zip(&exp.items).position(|(a, b)| a != b) {
        None => Outcome::Pass,
        Some(i) => Outcome::Wrong(format!("element {i} differs (flat index)")),
    }
}

/// Checks one array fixture with the reader.
fn check_array(
    args: &ConformanceRunArgs,
    corpus: &Corpus,
    scratch: &Path,
    i: usize,
    f: &Fixture,
) -> std::io::Result<Outcome> {
    let out = scratch.join(format!("{i}.npy"));
    let err = scratch.join(format!("{i}.err"));
    let array = corpus.child(&f.path);
    let status = run_reader(
        &args.reader,
        &array,
        &out,
        &err,
        Duration::from_secs(args.timeout),
    )?;
    let outcome = match (status, f.expect.as_str()) {
        (None, "reject") => Outcome::Pass,
        (None, _) => Outcome::Refused(format!("timed out after {} s", args.timeout)),
        (Some(false), "reject") => Outcome::Pass,
        (Some(false), _) => Outcome::Refused(first_line(&err)),
        (Some(true), "reject") => Outcome::ShouldHaveRefused,
        (Some(true), _) => match &f.data {
            None => Outcome::Pass,
            Some(data) => match std::fs::read(&out) {
                Ok(bytes) => compare(&bytes, corpus, data),
                Err(_) => Outcome::Wrong("the reader exited 0 but wrote no .npy".into()),
            },
        },
    };
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&err);
    Ok(outcome)
}

/// Checks one group fixture with this project's library.
fn check_group(ctx: &Ctx, corpus: &Corpus, f: &Fixture, all: &[Fixture]) -> Outcome {
    let location = corpus.child(&f.path).to_string_lossy().into_owned();
    let opened = ctx
        .open_store(&location, Access::Existing)
        .map_err(|e| e.one_line())
        .and_then(|s| {
            Group::open_with(s, "", &ctx.extensions).map_err(|e| explain(&e, &["", "/"]))
        });
    match (opened, f.expect.as_str()) {
        (Err(_), "reject") => Outcome::Pass,
        (Err(e), _) => Outcome::Refused(e),
        (Ok(_), "reject") => Outcome::ShouldHaveRefused,
        (Ok(g), _) => {
            let members = match g.members() {
                Ok(m) => m,
                Err(e) => {
                    return Outcome::Wrong(format!(
                        "cannot list members: {}",
                        explain(&e, &["", "/"])
                    ))
                }
            };
            let prefix = format!("{}/", f.path);
            let missing: Vec<&str> = all
                .iter()
                .filter_map(|c| c.path.strip_prefix(&prefix))
                .filter(|rest| !rest.contains('/'))
                .filter(|name| !members.iter().any(|(m, _)| m == name))
                .collect();
            if missing.is_empty() {
                Outcome::Pass
            } else {
                Outcome::Wrong(format!(
                    "members missing from the listing: {}",
                    missing.join(", ")
                ))
            }
        }
    }
}

/// `zarr conformance run`
pub(crate) fn run(ctx: &Ctx, args: &ConformanceRunArgs) -> Result<()> {
    let corpus = Corpus::open(ctx, &args.dir)?;
    let fixtures = load_manifest(&corpus)?;
    let arrays: Vec<usize> = (0..fixtures.len())
        .filter(|&i| fixtures[i].node != "group")
        .collect();
    let scratch = scratch_dir()?;
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; fixtures.len()]);
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    let next = AtomicUsize::new(0);
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 64);
    let progress = Progress::new(arrays.len() as u64, "fixtures", false);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(arrays.len().max(1)) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = arrays.get(k) else { break };
                match check_array(args, &corpus, &scratch, i, &fixtures[i]) {
                    Ok(outcome) => {
                        if let Ok(mut r) = results.lock() {
                            r[i] = Some(outcome);
                        }
                    }
                    Err(e) => {
                        if let Ok(mut f) = failure.lock() {
                            f.get_or_insert(e);
                        }
                        break;
                    }
                }
                progress.inc(1);
            });
        }
    });
    progress.finish();
    let _ = std::fs::remove_dir_all(&scratch);
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(CliError::input(format!(
            "cannot run the reader {:?}: {e} (give the reader command after --, e.g. \
             -- python3 reader.py)",
            args.reader.join(" ")
        )));
    }
    let mut results = results.into_inner().unwrap_or_default();
    for (i, f) in fixtures.iter().enumerate() {
        if f.node == "group" {
            results[i] = Some(check_group(ctx, &corpus, f, &fixtures));
        }
    }
    let outcomes: Vec<Outcome> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Outcome::Refused("not run".into())))
        .collect();
    report(args, &fixtures, &outcomes)
}

fn report(args: &ConformanceRunArgs, fixtures: &[Fixture], outcomes: &[Outcome]) -> Result<()> {
    // category -> outcome -> count, arrays and groups apart
    let mut table: BTreeMap<(bool, String), BTreeMap<&str, usize>> = BTreeMap::new();
    for (f, o) in fixtures.iter().zip(outcomes) {
        let is_group = f.node == "group";
        *table
            .entry((is_group, f.category.clone()))
            .or_default()
            .entry(o.name())
            .or_default() += 1;
    }
    let failed = outcomes.iter().filter(|o| **o != Outcome::Pass).count();
    if args.json {
        let list: Vec<Value> = fixtures
            .iter()
            .zip(outcomes)
            .map(|(f, o)| {
                json!({
                    "path": f.path, "node": f.node, "expect": f.expect,
                    "category": f.category, "outcome": o.name(), "detail": o.detail(),
                })
            })
            .collect();
        let summary: Vec<Value> = table
            .iter()
            .map(|((g, c), counts)| {
                let mut m = serde_json::Map::new();
                m.insert("category".into(), json!(c));
                m.insert("node".into(), json!(if *g { "group" } else { "array" }));
                for o in OUTCOMES {
                    m.insert(o.into(), json!(counts.get(o).copied().unwrap_or(0)));
                }
                Value::Object(m)
            })
            .collect();
        outln(
            json!({
                "corpus": args.dir, "reader": args.reader,
                "summary": summary, "fixtures": list,
            })
            .to_string(),
        );
    } else {
        outln(format!("reader: {}", args.reader.join(" ")));
        outln(format!(
            "{:<32}{:>9}{:>7}{:>7}{:>9}{:>21}",
            "array fixtures", "fixtures", "pass", "wrong", "refused", "should-have-refused"
        ));
        let mut groups_line = Vec::new();
        for ((is_group, category), counts) in &table {
            let total: usize = counts.values().sum();
            let c = |o: &str| counts.get(o).copied().unwrap_or(0);
            if *is_group {
                groups_line.push(format!(
                    "{category}: {total} fixtures, {} pass, {} wrong, {} refused, {} should-have-refused",
                    c("pass"),
                    c("wrong"),
                    c("refused"),
                    c("should-have-refused")
                ));
                continue;
            }
            outln(format!(
                "{:<32}{:>9}{:>7}{:>7}{:>9}{:>21}",
                category,
                total,
                c("pass"),
                c("wrong"),
                c("refused"),
                c("should-have-refused")
            ));
        }
        if !groups_line.is_empty() {
            outln(format!(
                "group fixtures (checked by this project, not the reader): {}",
                groups_line.join("; ")
            ));
        }
        let mut first = true;
        for (f, o) in fixtures.iter().zip(outcomes) {
            if *o == Outcome::Pass {
                continue;
            }
            if first {
                outln("not passing:");
                first = false;
            }
            outln(format!("  {:<20} {:<36} {}", o.name(), f.path, o.detail()));
        }
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(CliError::Failed {
            summary: format!(
                "{failed} of {} fixtures did not pass with {}",
                fixtures.len(),
                args.reader.join(" ")
            ),
        })
    }
}
