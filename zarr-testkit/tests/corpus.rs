//! Corpus replay and the conformance corpora.

use std::panic::catch_unwind;
use std::path::PathBuf;

use zarr_testkit::corpus::{conformance_corpora, replay_dir, replay_fuzz_target, Inputs};

/// A fresh folder under the system's temporary folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("zarr-testkit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn replay_runs_every_selected_file_and_names_the_ones_that_panic() {
    let dir = TempDir::new("replay");
    for (name, data) in [
        ("a", &b"ok"[..]),
        ("b", b"boom"),
        ("c", b"ok"),
        ("skip", b"boom"),
    ] {
        std::fs::write(dir.0.join(name), data).expect("written");
    }
    std::fs::create_dir(dir.0.join("sub")).expect("a subfolder, not an input");
    let replayed = replay_dir(
        &dir.0,
        |name| name != "skip",
        |data| assert_ne!(data, b"boom", "the input that fails"),
    );
    assert_eq!(replayed.ran, 3);
    assert_eq!(replayed.panicked, [dir.0.join("b")]);
    // a missing folder replays nothing
    assert_eq!(replay_dir(&dir.0.join("none"), |_| true, |_| {}).ran, 0);
}

#[test]
fn a_fuzz_target_without_inputs_fails_and_one_with_inputs_runs_them() {
    let empty = catch_unwind(|| replay_fuzz_target("no_such_target", Inputs::Fixed, |_| {}));
    assert!(empty.is_err(), "an empty corpus is a failure");
    assert_eq!(
        replay_fuzz_target("no_such_target", Inputs::KnownFailures, |_| {}),
        0
    );
    let ran = replay_fuzz_target("chunk_key", Inputs::Fixed, |_| {});
    assert!(ran > 0);
    let failing = catch_unwind(|| replay_fuzz_target("chunk_key", Inputs::Fixed, |_| panic!()));
    assert!(failing.is_err(), "a panicking input fails the replay");
}

#[test]
fn the_repository_corpus_comes_first() {
    let corpora = conformance_corpora(&["v3"]);
    assert!(corpora[0].ends_with("conformance/v3"));
    assert!(corpora[0].join("manifest.json").is_file());
}
