//! Filesystem-specific guarantees: atomic writes, hidden temporary files, confinement to the
//! root (invalid keys and symbolic links), concurrent writers, tidy deletes, partial reads.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use zarr_store::{ByteRange, FilesystemStore, Store, StoreError, StoreExt};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Every file and directory under `dir`, relative, sorted (links are not followed).
fn tree(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current)? {
            let entry = entry?;
            let path = entry.path();
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            found.push(rel.to_string_lossy().replace('\\', "/"));
            if entry.file_type()?.is_dir() {
                pending.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

#[test]
fn open_requires_a_directory_and_create_makes_one() -> TestResult {
    let dir = tempfile::tempdir()?;
    let missing = dir.path().join("missing");
    assert!(matches!(
        FilesystemStore::open(&missing),
        Err(StoreError::Root { .. })
    ));
    assert!(!missing.exists(), "open must not create the root");

    let file = dir.path().join("file");
    std::fs::write(&file, b"x")?;
    match FilesystemStore::open(&file) {
        Err(err @ StoreError::Root { .. }) => {
            let report = zarr_testkit::report(&err);
            assert!(report.contains("not a directory"), "{report}");
        }
        other => panic!("expected a Root error, got {other:?}"),
    }
    assert!(FilesystemStore::create(file.join("sub")).is_err());

    let nested = dir.path().join("a/b/store.zarr");
    let store = FilesystemStore::create(&nested)?;
    assert!(nested.is_dir());
    assert!(store.root().is_absolute());
    // Creating an existing root just opens it.
    store.set("k", b"v")?;
    let again = FilesystemStore::create(&nested)?;
    assert_eq!(again.get("k")?, Some(b"v".to_vec()));
    Ok(())
}

#[test]
fn keys_are_files_under_the_root() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = FilesystemStore::open(dir.path())?;
    store.set("grp/arr/c/0/-1", b"chunk")?;
    assert_eq!(
        std::fs::read(dir.path().join("grp/arr/c/0/-1"))?,
        b"chunk".to_vec()
    );
    // Files written by another implementation are keys too.
    std::fs::create_dir_all(dir.path().join("other/c"))?;
    std::fs::write(dir.path().join("other/zarr.json"), b"{}")?;
    std::fs::write(dir.path().join("other/c/0"), b"abc")?;
    assert_eq!(store.get("other/zarr.json")?, Some(b"{}".to_vec()));
    assert_eq!(
        store.list_prefix("")?,
        ["grp/arr/c/0/-1", "other/c/0", "other/zarr.json"]
    );
    Ok(())
}

#[test]
fn a_directory_is_not_a_key() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = FilesystemStore::open(dir.path())?;
    std::fs::create_dir_all(dir.path().join("d/empty"))?;
    assert_eq!(store.get("d")?, None);
    assert_eq!(store.size("d/empty")?, None);
    assert_eq!(store.get_ranges("d", &[ByteRange::FromStart(0)])?, None);
    store.delete("d")?; // not a key: nothing to delete
    assert!(dir.path().join("d/empty").is_dir());
    // Empty directories hold no keys, so they are not listed as prefixes.
    assert_eq!(store.list_dir("")?, Default::default());
    match store.set("d", b"x") {
        Err(StoreError::KeyConflict { key, existing }) => {
            assert_eq!((key.as_str(), existing.as_str()), ("d", "d/"));
        }
        other => panic!("expected KeyConflict, got {other:?}"),
    }
    Ok(())
}

#[test]
fn overwrites_are_atomic() -> TestResult {
    const SIZE: usize = 256 * 1024;
    const WRITERS: u8 = 3;
    const WRITES: usize = 40;
    let dir = tempfile::tempdir()?;
    let store = FilesystemStore::open(dir.path())?;
    let key = "arr/c/0/0";
    let value_of =
        |writer: u8, round: usize| vec![writer.wrapping_mul(64).wrapping_add(round as u8); SIZE];
    store.set(key, &value_of(0, 0))?;
    let done = AtomicBool::new(false);
    let reads = std::thread::scope(|scope| {
        let writers: Vec<_> = (1..=WRITERS)
            .map(|writer| {
                let store = &store;
                scope.spawn(move || -> zarr_store::Result<()> {
                    for round in 0..WRITES {
                        store.set(key, &value_of(writer, round))?;
                    }
                    Ok(())
                })
            })
            .collect();
        let reader = scope.spawn(|| -> zarr_store::Result<usize> {
            let mut reads = 0;
            while !done.load(Ordering::Acquire) {
                let value = store.get(key)?.unwrap_or_default();
                assert_eq!(value.len(), SIZE, "a read saw a value of the wrong size");
                assert!(
                    value.iter().all(|&b| b == value[0]),
                    "a read saw a torn value"
                );
                let parts = store
                    .get_ranges(
                        key,
                        &[ByteRange::Range { start: 0, end: 1 }, ByteRange::Suffix(1)],
                    )?
                    .unwrap_or_default();
                assert_eq!(parts.len(), 2);
                assert_eq!(parts[0], parts[1], "ranges of one call come from one value");
                reads += 1;
            }
            Ok(reads)
        });
        let written: zarr_store::Result<Vec<()>> = writers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        done.store(true, Ordering::Release);
        let reads = reader
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        written.and(reads)
    })?;
    assert!(reads > 0);
    let last = store.get(key)?.unwrap_or_default();
    assert_eq!(last.len(), SIZE);
    // Nothing but the key is left on disk: no temporary file survives a successful write.
    assert_eq!(tree(dir.path())?, ["arr", "arr/c", "arr/c/0", "arr/c/0/0"]);
    Ok(())
}

#[test]
fn temporary_files_are_never_listed() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = FilesystemStore::open(dir.path())?;
    store.set("g/arr/c/0", b"v")?;
    // Left-overs of crashed writers, at several levels, files and directories.
    std::fs::write(dir.path().join(".tmp-1-2-3"), b"torn")?;
    std::fs::write(dir.path().join("g/arr/c/.tmp-99-0-0"), b"torn")?;
    std::fs::create_dir_all(dir.path().join("g/.tmp-dir/x"))?;
    std::fs::write(dir.path().join("g/.tmp-dir/x/y"), b"torn")?;
    std::fs::create_dir_all(dir.path().join("h/.tmp-only"))?;
    std::fs::write(dir.path().join("h/.tmp-only/z"), b"torn")?;
    assert_eq!(store.list_prefix("")?, ["g/arr/c/0"]);
    let root = store.list_dir("")?;
    assert!(root.keys.is_empty());
    assert_eq!(root.prefixes, ["g/"], "h/ holds only temporary files");
    assert_eq!(store.list_dir("g/")?.prefixes, ["g/arr/"]);
    assert_eq!(store.list_dir("g/arr/c/")?.keys, ["g/arr/c/0"]);

    // Listing while writers are busy never shows their temporary files.
    let store = Arc::new(store);
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (store, done) = (Arc::clone(&store), Arc::clone(&done));
        std::thread::spawn(move || -> zarr_store::Result<()> {
            let value = vec![7u8; 64 * 1024];
            for i in 0..200 {
                store.set(&format!("g/arr/c/{}", i % 4), &value)?;
            }
            done.store(true, Ordering::Release);
            Ok(())
        })
    };
    while !done.load(Ordering::Acquire) {
        for key in store.list_prefix("")? {
            assert!(!key.contains(".tmp-"), "listed a temporary file: {key}");
        }
        for key in store.list_dir("g/arr/c/")?.keys {
            assert!(!key.contains(".tmp-"), "listed a temporary file: {key}");
        }
    }
    writer
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))?;
    assert_eq!(
        store.list_prefix("g/")?,
        ["g/arr/c/0", "g/arr/c/1", "g/arr/c/2", "g/arr/c/3"]
    );
    Ok(())
}

#[test]
fn keys_cannot_escape_the_root() -> TestResult {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside)?;
    std::fs::write(outside.join("secret"), b"secret")?;
    let store = FilesystemStore::create(&root)?;
    let absolute = outside.join("x").to_string_lossy().into_owned();
    let escapes = [
        "../outside/x",
        "../outside/secret",
        "a/../../outside/x",
        absolute.as_str(),
        "/etc/passwd",
        "..\\outside\\x",
        "a\\..\\..\\outside\\x",
        "x\0/../../outside/x",
        "a//x",
        "/",
        "",
        ".",
        "./x",
        "C:/outside/x",
    ];
    for key in escapes {
        let expect_invalid = |result: zarr_store::Result<()>, op: &str| match result {
            Err(StoreError::InvalidKey { .. }) => {}
            other => panic!("{op}({key:?}): expected InvalidKey, got {other:?}"),
        };
        expect_invalid(store.set(key, b"pwned"), "set");
        expect_invalid(store.get(key).map(drop), "get");
        expect_invalid(store.size(key).map(drop), "size");
        expect_invalid(store.delete(key), "delete");
        expect_invalid(
            store.get_ranges(key, &[ByteRange::FromStart(0)]).map(drop),
            "get_ranges",
        );
    }
    for prefix in ["../", "../outside/", "/", "a/../../"] {
        assert!(
            store.list_prefix(prefix).is_err(),
            "list_prefix({prefix:?})"
        );
        assert!(store.list_dir(prefix).is_err(), "list_dir({prefix:?})");
        assert!(
            store.delete_prefix(prefix).is_err(),
            "delete_prefix({prefix:?})"
        );
    }
    assert_eq!(
        tree(&outside)?,
        ["secret"],
        "nothing written or deleted outside"
    );
    assert_eq!(std::fs::read(outside.join("secret"))?, b"secret");
    assert!(tree(&root)?.is_empty(), "nothing written inside either");
    Ok(())
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_never_followed() -> TestResult {
    use std::os::unix::fs::symlink;

    let dir = tempfile::tempdir()?;
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(outside.join("sub"))?;
    std::fs::write(outside.join("secret"), b"secret")?;
    std::fs::write(outside.join("sub/deep"), b"deep")?;
    let store = FilesystemStore::create(&root)?;
    store.set("inside/k", b"v")?;
    symlink(&outside, root.join("dirlink"))?;
    symlink(outside.join("secret"), root.join("filelink"))?;
    symlink(outside.join("secret"), root.join("inside/filelink"))?;
    symlink(root.join("inside"), root.join("innerlink"))?; // even a link inside the root

    let expect_symlink = |result: zarr_store::Result<()>, what: &str| match result {
        Err(StoreError::Symlink { .. }) => {}
        other => panic!("{what}: expected a Symlink error, got {other:?}"),
    };
    for key in [
        "dirlink/secret",
        "dirlink/sub/deep",
        "filelink",
        "inside/filelink",
        "innerlink/k",
    ] {
        expect_symlink(store.get(key).map(drop), &format!("get({key:?})"));
        expect_symlink(store.size(key).map(drop), &format!("size({key:?})"));
        expect_symlink(
            store.get_ranges(key, &[ByteRange::Suffix(1)]).map(drop),
            &format!("get_ranges({key:?})"),
        );
        expect_symlink(store.set(key, b"pwned"), &format!("set({key:?})"));
        expect_symlink(store.delete(key), &format!("delete({key:?})"));
    }
    for key in ["dirlink/new", "dirlink/sub/new/x", "innerlink/new"] {
        expect_symlink(store.set(key, b"pwned"), &format!("set({key:?})"));
    }
    for prefix in ["dirlink/", "dirlink/sub/", "innerlink/"] {
        expect_symlink(
            store.list_prefix(prefix).map(drop),
            &format!("list_prefix({prefix:?})"),
        );
        expect_symlink(
            store.list_dir(prefix).map(drop),
            &format!("list_dir({prefix:?})"),
        );
        expect_symlink(
            store.delete_prefix(prefix),
            &format!("delete_prefix({prefix:?})"),
        );
    }
    // Listing the whole store skips the links instead of following them.
    assert_eq!(store.list_prefix("")?, ["inside/k"]);
    assert_eq!(store.list_dir("")?.prefixes, ["inside/"]);
    assert_eq!(store.list_dir("inside/")?.keys, ["inside/k"]);

    // Nothing outside the root was read, written or deleted.
    assert_eq!(tree(&outside)?, ["secret", "sub", "sub/deep"]);
    assert_eq!(std::fs::read(outside.join("secret"))?, b"secret");
    assert_eq!(std::fs::read(outside.join("sub/deep"))?, b"deep");

    // Deleting everything removes the links themselves, never their targets.
    store.delete_prefix("")?;
    assert!(tree(&root)?.is_empty());
    assert_eq!(tree(&outside)?, ["secret", "sub", "sub/deep"]);
    Ok(())
}

#[cfg(unix)]
#[test]
fn delete_prefix_does_not_follow_links_inside_the_tree() -> TestResult {
    use std::os::unix::fs::symlink;

    let dir = tempfile::tempdir()?;
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside)?;
    std::fs::write(outside.join("secret"), b"secret")?;
    let store = FilesystemStore::create(&root)?;
    store.set("arr/c/0", b"v")?;
    symlink(&outside, root.join("arr/c/link"))?;
    store.delete_prefix("arr/")?;
    assert!(tree(&root)?.is_empty());
    assert_eq!(tree(&outside)?, ["secret"]);
    Ok(())
}

#[test]
fn concurrent_writers_of_disjoint_keys_lose_nothing() -> TestResult {
    const THREADS: usize = 6;
    const KEYS: usize = 60;
    let dir = tempfile::tempdir()?;
    let store = FilesystemStore::open(dir.path())?;
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| -> zarr_store::Result<()> {
        // A churner creates and deletes keys in the same directories, so their (empty)
        // directories are created and removed under the writers' feet.
        let churner = scope.spawn(|| -> zarr_store::Result<()> {
            let mut i = 0usize;
            while !done.load(Ordering::Acquire) {
                let key = format!("arr/c/{}/churn/{}", i % 3, i % 2);
                store.set(&key, b"churn")?;
                store.delete(&key)?;
                store.set(&format!("arr/c/{}/only", i % 3), b"x")?;
                store.delete(&format!("arr/c/{}/only", i % 3))?;
                i += 1;
            }
            Ok(())
        });
        let writers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let store = &store;
                scope.spawn(move || -> zarr_store::Result<()> {
                    for i in 0..KEYS {
                        let key = format!("arr/c/{}/{thread}/{i}", i % 3);
                        store.set(&key, key.as_bytes())?;
                    }
                    Ok(())
                })
            })
            .collect();
        let mut result = Ok(());
        for writer in writers {
            let joined = writer
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            result = result.and(joined);
        }
        done.store(true, Ordering::Release);
        let churned = churner
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        result.and(churned)
    })?;
    let keys = store.list_prefix("")?;
    assert_eq!(keys.len(), THREADS * KEYS, "every write survives");
    for key in keys {
        assert_eq!(store.get_or_err(&key)?, key.as_bytes());
    }
    Ok(())
}

#[test]
fn deletes_remove_empty_directories() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = FilesystemStore::open(dir.path())?;
    store.set("a/b/c/d", b"1")?;
    store.set("a/x", b"2")?;
    store.delete("a/b/c/d")?;
    assert_eq!(tree(dir.path())?, ["a", "a/x"]);
    store.delete("a/x")?;
    assert!(tree(dir.path())?.is_empty());
    assert!(dir.path().is_dir(), "the root itself stays");

    store.set("g/arr/c/0/0", b"1")?;
    store.set("g/arr/c/0/1", b"1")?;
    store.delete_prefix("g/arr/")?;
    assert!(tree(dir.path())?.is_empty());

    store.set("g/keep", b"1")?;
    store.set("g/arr/c/0", b"1")?;
    store.delete_prefix("g/arr/c/")?;
    assert_eq!(tree(dir.path())?, ["g", "g/keep"]);
    store.delete_prefix("")?;
    assert!(tree(dir.path())?.is_empty());
    assert!(dir.path().is_dir(), "delete_prefix(\"\") keeps the root");
    Ok(())
}

#[test]
fn unlistable_names_are_skipped() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = FilesystemStore::open(dir.path())?;
    store.set("k", b"v")?;
    if cfg!(unix) {
        // Legal file names that are not valid key segments.
        std::fs::write(dir.path().join("back\\slash"), b"x")?;
        std::fs::write(dir.path().join("C:drive"), b"x")?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"not-utf8-\xff");
        std::fs::write(dir.path().join(name), b"x")?;
    }
    assert_eq!(store.list_prefix("")?, ["k"]);
    assert_eq!(store.list_dir("")?.keys, ["k"]);
    Ok(())
}

#[test]
fn ranges_read_only_what_they_need() -> TestResult {
    // A sparse 8 GiB file: reading it whole would take long and allocate 8 GiB, reading
    // its ranges must not.
    const LEN: u64 = 8 << 30;
    let dir = tempfile::tempdir()?;
    let store = FilesystemStore::open(dir.path())?;
    let path: PathBuf = dir.path().join("big");
    let file = std::fs::File::create(&path)?;
    if file.set_len(LEN).is_err() {
        return Ok(()); // the filesystem cannot hold it; nothing to test here
    }
    drop(file);
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut file = std::fs::OpenOptions::new().write(true).open(&path)?;
        file.seek(SeekFrom::Start(LEN - 4))?;
        file.write_all(b"tail")?;
        file.seek(SeekFrom::Start(1 << 30))?;
        file.write_all(b"middle")?;
    }
    assert_eq!(store.size("big")?, Some(LEN));
    let parts = store.get_ranges(
        "big",
        &[
            ByteRange::Suffix(4),
            ByteRange::Range {
                start: 1 << 30,
                end: (1 << 30) + 6,
            },
            ByteRange::Range { start: 0, end: 2 },
        ],
    )?;
    assert_eq!(
        parts,
        Some(vec![b"tail".to_vec(), b"middle".to_vec(), vec![0, 0]])
    );
    assert!(matches!(
        store.get_range("big", ByteRange::FromStart(LEN + 1)),
        Err(StoreError::RangeOutOfBounds { size: LEN, .. })
    ));
    Ok(())
}

#[test]
fn durable_writes_behave_the_same() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = FilesystemStore::open(dir.path())?.durable(true);
    store.set("a/b/c", b"durable")?;
    assert_eq!(store.get("a/b/c")?, Some(b"durable".to_vec()));
    assert_eq!(tree(dir.path())?, ["a", "a/b", "a/b/c"]);
    Ok(())
}
