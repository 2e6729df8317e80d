//! Corpora of test inputs: the fuzz inputs replayed by plain `cargo test`, and the conformance
//! corpora the table-driven tests read.
//!
//! # Fuzz inputs
//!
//! `fuzz/corpus/<target>/` (the minimised corpus) and `fuzz/regressions/<target>/` (crash
//! inputs) are replayed through the body of the fuzz target, which each crate exposes behind
//! its `fuzzing` feature:
//!
//! ```no_run
//! use zarr_testkit::corpus::{replay_fuzz_target, Inputs};
//!
//! // zarr-grid/tests/it/fuzz_corpus.rs: `zarr_grid::fuzzing::chunk_key::run` is the body of the
//! // `chunk_key` fuzz target
//! # mod zarr_grid { pub mod fuzzing { pub mod chunk_key { pub fn run(_: &[u8]) {} } } }
//! #[test]
//! fn chunk_key_corpus_replays_cleanly() {
//!     replay_fuzz_target("chunk_key", Inputs::Fixed, zarr_grid::fuzzing::chunk_key::run);
//! }
//! # fn main() {}
//! ```
//!
//! Inputs listed in `fuzz/regressions/KNOWN_FAILURES` (`<target>/<file>` per line, `#`
//! comments), whose bugs are not fixed yet, are left out of [`Inputs::Fixed`] and are all of
//! [`Inputs::KnownFailures`].
//!
//! # Conformance corpora
//!
//! [`conformance_corpora`]: the repository's own `conformance/v3`, and a shared corpus only
//! when `ZARR_CONFORMANCE_DIR` names one. No test reads anything outside the repository by
//! default.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use crate::repo_root;

/// Which inputs of a fuzz target to replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inputs {
    /// Every input except those of bugs not fixed yet (the normal test).
    Fixed,
    /// Only the inputs listed in `fuzz/regressions/KNOWN_FAILURES`.
    KnownFailures,
}

/// What [`replay_dir`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replayed {
    /// How many inputs ran.
    pub ran: usize,
    /// The paths of the inputs whose run panicked.
    pub panicked: Vec<PathBuf>,
}

/// Runs `run` on the bytes of every file directly in `dir` (in name order) for which `select`
/// (given the file name) is true, catching panics. A missing `dir` replays nothing. The panic
/// messages go to stderr as usual, each followed by a line naming its input.
///
/// # Panics
///
/// When `dir` or one of its files cannot be read.
pub fn replay_dir(dir: &Path, select: impl Fn(&str) -> bool, run: impl Fn(&[u8])) -> Replayed {
    let mut out = Replayed::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| {
            e.unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path()
        })
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for file in files {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !select(name) {
            continue;
        }
        let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        out.ran += 1;
        if catch_unwind(AssertUnwindSafe(|| run(&data))).is_err() {
            eprintln!("(the panic above: input {})", file.display());
            out.panicked.push(file);
        }
    }
    out
}

/// The inputs of fuzz target `target` listed in `fuzz/regressions/KNOWN_FAILURES`.
fn known_failures(fuzz: &Path, target: &str) -> Vec<String> {
    let list = match std::fs::read_to_string(fuzz.join("regressions/KNOWN_FAILURES")) {
        Ok(list) => list,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => panic!("fuzz/regressions/KNOWN_FAILURES: {e}"),
    };
    list.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter_map(|l| l.strip_prefix(target)?.strip_prefix('/'))
        .map(str::to_owned)
        .collect()
}

/// Replays the inputs of fuzz target `target` (`fuzz/corpus/<target>/`, then
/// `fuzz/regressions/<target>/`) through `run`, the target's body. Returns how many ran.
///
/// # Panics
///
/// Naming every input whose run panicked (and how to replay one under cargo-fuzz); for
/// [`Inputs::Fixed`], also when no input ran (an empty or misnamed corpus).
pub fn replay_fuzz_target(target: &str, inputs: Inputs, run: impl Fn(&[u8])) -> usize {
    let fuzz = repo_root().join("fuzz");
    let known = known_failures(&fuzz, target);
    let select = |name: &str| known.iter().any(|k| k == name) == (inputs == Inputs::KnownFailures);
    let mut ran = 0;
    let mut panicked = Vec::new();
    for dir in ["corpus", "regressions"] {
        let replayed = replay_dir(&fuzz.join(dir).join(target), select, &run);
        ran += replayed.ran;
        panicked.extend(replayed.panicked);
    }
    let names: Vec<String> = panicked
        .iter()
        .map(|p| {
            p.strip_prefix(repo_root())
                .unwrap_or(p)
                .display()
                .to_string()
        })
        .collect();
    assert!(
        names.is_empty(),
        "{} input(s) of fuzz target {target:?} panicked (replay one with \
         `cargo fuzz run {target} <file>` in fuzz/): {names:?}",
        names.len()
    );
    assert!(
        ran > 0 || inputs == Inputs::KnownFailures,
        "no input of fuzz target {target:?} ran: fuzz/corpus/{target}/ is empty or missing"
    );
    ran
}

/// The environment variable naming a shared conformance corpus: a folder holding sets
/// (`v3/`, `extensions/`), each with its `manifest.json`.
pub const CONFORMANCE_DIR_VAR: &str = "ZARR_CONFORMANCE_DIR";

/// The conformance corpora a test reads, each a folder with a `manifest.json`: the
/// repository's own `conformance/v3`, then each set of `shared_sets` (`"v3"`,
/// `"extensions"`) that the corpus named by `ZARR_CONFORMANCE_DIR` holds, when it is set.
///
/// # Panics
///
/// When the repository's corpus is missing, or `ZARR_CONFORMANCE_DIR` is set but holds none
/// of `shared_sets`.
#[must_use]
pub fn conformance_corpora(shared_sets: &[&str]) -> Vec<PathBuf> {
    conformance_corpora_of(&["v3"], shared_sets)
}

/// As [`conformance_corpora`], with the repository's own sets `own_sets` (`"v3"`, `"v2"`:
/// Zarr v2 by zarr-python, `"xarray"`: xarray's hierarchies, v2 and v3).
///
/// # Panics
///
/// When one of the repository's sets is missing, or as [`conformance_corpora`].
#[must_use]
pub fn conformance_corpora_of(own_sets: &[&str], shared_sets: &[&str]) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for set in own_sets {
        let own = repo_root().join("conformance").join(set);
        assert!(
            own.join("manifest.json").is_file(),
            "the repository's conformance corpus is missing: {}",
            own.display()
        );
        all.push(own);
    }
    if let Some(dir) = std::env::var_os(CONFORMANCE_DIR_VAR) {
        let root = PathBuf::from(dir);
        let sets: Vec<PathBuf> = shared_sets
            .iter()
            .map(|set| root.join(set))
            .filter(|p| p.join("manifest.json").is_file())
            .collect();
        assert!(
            !sets.is_empty(),
            "{CONFORMANCE_DIR_VAR}={}: no {shared_sets:?} folder with a manifest.json there",
            root.display()
        );
        all.extend(sets);
    }
    all
}

/// Seed data of `len` bytes for a fuzz corpus: all zero (`kind` 0), a ramp (1), or
/// pseudo-random (`bool` chunks get 0/1).
pub fn seed_pattern(kind: usize, len: usize, is_bool: bool) -> Vec<u8> {
    let mut rng = crate::Rng::new(1);
    (0..len)
        .map(|i| {
            let b = match kind {
                0 => 0,
                1 => (i / 3) as u8,
                _ => rng.byte(),
            };
            if is_bool {
                b & 1
            } else {
                b
            }
        })
        .collect()
}

/// Chunk files (`c/...`) of the conformance fixtures (conformance/v3/) whose `zarr.json` text
/// `uses` accepts, at most two per fixture, named `<fixture>-<k>`.
pub fn conformance_chunks(uses: impl Fn(&str) -> bool) -> Vec<(String, Vec<u8>)> {
    let root = repo_root().join("conformance/v3");
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&root) else {
        return out;
    };
    let mut fixtures: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    fixtures.sort();
    for fixture in fixtures {
        let Ok(text) = std::fs::read_to_string(fixture.join("zarr.json")) else {
            continue;
        };
        if !uses(&text) {
            continue;
        }
        let mut files = Vec::new();
        let mut pending = vec![fixture.join("c")];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.filter_map(Result::ok) {
                let p = e.path();
                if p.is_dir() {
                    pending.push(p);
                } else {
                    files.push(p);
                }
            }
        }
        files.sort();
        let fname = fixture
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("x")
            .to_owned();
        for (k, f) in files.iter().take(2).enumerate() {
            if let Ok(bytes) = std::fs::read(f) {
                out.push((format!("{fname}-{k}"), bytes));
            }
        }
    }
    out
}

/// Writes `fuzz/corpus/<target>/seed-<name>-<selector>`: the selector byte, then `bytes`.
pub fn write_seed(target: &str, name: &str, selector: usize, bytes: &[u8]) {
    let dir = repo_root().join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&dir).expect("corpus folder");
    let mut data = vec![selector as u8];
    data.extend_from_slice(bytes);
    std::fs::write(dir.join(format!("seed-{name}-{selector}")), data).expect("seed written");
}
