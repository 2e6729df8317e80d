#![doc = include_str!("../README.md")]
// Only `alloc` holds `unsafe` (the `GlobalAlloc` impl); it allows it for itself.
#![deny(unsafe_code)]

pub mod alloc;
pub mod child;
pub mod corpus;
pub mod peers;
pub mod proxy;
mod report;
pub mod rng;
pub mod s3;

pub use alloc::CountingAlloc;
pub use report::report;
pub use rng::Rng;

use std::path::PathBuf;

/// The root of the repository (the workspace folder this crate sits in).
#[must_use]
pub fn repo_root() -> PathBuf {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// The only files of the repository whose code may say `unsafe` (issue 37): zarr-codecs'
    /// disjoint writes into one buffer and blosc's C calls, zarr-layout-sparse's casts,
    /// zarr-store's system calls (what rustix does not cover) and this crate's counting
    /// allocator (a `GlobalAlloc` is an unsafe trait).
    const UNSAFE_HOMES: [&str; 5] = [
        "zarr-codecs/src/block.rs",
        "zarr-codecs/src/blosc/mod.rs",
        "zarr-layout-sparse/src/cast.rs",
        "zarr-store/src/filesystem/sys.rs",
        "zarr-testkit/src/alloc.rs",
    ];

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                rust_files(&path, out);
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }

    /// The code lines of `text` that say `unsafe`: not in comments, string literals or the
    /// lint name `unsafe_code` (`#![forbid(unsafe_code)]`, a module's `#[allow(unsafe_code)]`).
    fn unsafe_lines(text: &str) -> Vec<(usize, &str)> {
        text.lines()
            .enumerate()
            .filter(|(_, line)| {
                let code = line.trim_start();
                if code.starts_with("//") {
                    return false;
                }
                let code = code.split(" //").next().unwrap_or(code);
                // outside string literals (every other piece between quotes)
                code.split('"')
                    .step_by(2)
                    .flat_map(|piece| piece.split(|c: char| !(c.is_alphanumeric() || c == '_')))
                    .any(|word| word == "unsafe")
            })
            .map(|(i, line)| (i + 1, line))
            .collect()
    }

    #[test]
    fn unsafe_stays_in_its_homes() {
        assert_eq!(
            unsafe_lines("let x = unsafe { f() };\n// unsafe here\n#![forbid(unsafe_code)]\n"),
            [(1, "let x = unsafe { f() };")]
        );
        assert_eq!(
            unsafe_lines("    unsafe impl Send for P {}\nlet y = 1; // no unsafe\n"),
            [(1, "    unsafe impl Send for P {}")]
        );
        let quoted = format!("let y = {q}unsafe{q};", q = '"');
        assert!(unsafe_lines(&quoted).is_empty());
        let root = super::repo_root();
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        assert!(
            files.len() > 100,
            "{} Rust files under {}",
            files.len(),
            root.display()
        );
        let mut found = Vec::new();
        for path in &files {
            let rel = path.strip_prefix(&root).expect("under the root");
            let rel = rel.to_string_lossy().replace('\\', "/");
            if UNSAFE_HOMES.contains(&rel.as_str()) {
                continue;
            }
            let text = std::fs::read_to_string(path).expect("a UTF-8 source file");
            for (line, code) in unsafe_lines(&text) {
                found.push(format!("{rel}:{line}: {}", code.trim()));
            }
        }
        assert!(
            found.is_empty(),
            "`unsafe` outside {UNSAFE_HOMES:?}:\n{}",
            found.join("\n")
        );
    }
}
