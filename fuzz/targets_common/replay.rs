// The corpus replay used by every `<crate>/tests/fuzz_corpus.rs` (see README.md).

/// Runs `run` on every file of `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/`,
/// catching panics, and fails naming every input that panicked. Inputs listed in
/// `fuzz/regressions/KNOWN_FAILURES` (`<target>/<file>` per line, `#` comments), whose bugs are
/// not fixed yet, are skipped unless `known` is set, when only they run. Returns how many
/// inputs ran.
pub fn replay_corpus(target: &str, known: bool, run: fn(&[u8])) -> usize {
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let known_list =
        std::fs::read_to_string(fuzz.join("regressions/KNOWN_FAILURES")).unwrap_or_default();
    let is_known = |name: &str| {
        known_list
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .any(|l| l == format!("{target}/{name}"))
    };
    let mut ran = 0;
    let mut failed = Vec::new();
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(dir).join(target)) else {
            continue;
        };
        let mut files: Vec<std::path::PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for file in files {
            let name = file
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_owned();
            if is_known(&name) != known {
                continue;
            }
            let data = std::fs::read(&file).expect("a readable corpus file");
            ran += 1;
            if std::panic::catch_unwind(|| run(&data)).is_err() {
                failed.push(format!("{dir}/{target}/{name}"));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} input(s) of fuzz target {target:?} panicked (replay one with \
         `cargo fuzz run {target} fuzz/<file>`): {failed:?}",
        failed.len()
    );
    ran
}
