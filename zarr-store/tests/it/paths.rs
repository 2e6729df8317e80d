//! Keys that try to leave a store's root (`..`, absolute paths, NUL, backslashes, drive
//! prefixes, reserved temporary names) are refused by every method of every store, and a
//! filesystem store never follows a symbolic link under its root: nothing outside the root is
//! read, written or deleted.

use std::path::PathBuf;

use zarr_store::{ByteRange, FilesystemStore, MemoryStore, Store, StoreError};

const BAD_KEYS: [&str; 16] = [
    "",
    "..",
    "../outside/secret",
    "a/../../outside/secret",
    "a/./b",
    "a//b",
    "/etc/passwd",
    "/",
    "a/",
    "a\0b",
    "zarr.json\0",
    "..\\outside\\secret",
    "a\\b",
    "C:/Windows",
    "a/c:x",
    ".tmp-123-0-0",
];

const BAD_PREFIXES: [&str; 8] = [
    "/", "../", "a/../", "/etc/", "a", "a\0/", "a\\b/", ".tmp-x/",
];

/// A temporary folder with `root/` (the store) and `outside/` holding a secret file.
struct Sandbox {
    _dir: tempfile::TempDir,
    root: PathBuf,
    #[cfg(unix)]
    outside: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&root).expect("root");
        std::fs::create_dir_all(outside.join("sub")).expect("outside");
        std::fs::write(outside.join("secret"), b"secret").expect("secret");
        std::fs::write(outside.join("sub/zarr.json"), b"{}").expect("secret");
        Sandbox {
            _dir: dir,
            root,
            #[cfg(unix)]
            outside,
        }
    }

    fn store(&self) -> FilesystemStore {
        FilesystemStore::open(&self.root).expect("the store")
    }

    /// Every file and folder under the sandbox outside `root/`, with file contents.
    fn outside_state(&self) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        let parent = self.root.parent().expect("a parent").to_path_buf();
        let mut out = Vec::new();
        let mut pending = vec![parent.clone()];
        while let Some(dir) = pending.pop() {
            for e in std::fs::read_dir(&dir).expect("readable").flatten() {
                let p = e.path();
                if p == self.root {
                    continue;
                }
                let kind = e.file_type().expect("a type");
                let rel = p.strip_prefix(&parent).unwrap_or(&p).to_path_buf();
                if kind.is_dir() {
                    pending.push(p);
                    out.push((rel, None));
                } else {
                    out.push((rel, Some(std::fs::read(&p).unwrap_or_default())));
                }
            }
        }
        out.sort();
        out
    }
}

#[cfg(unix)]
fn symlink(target: &std::path::Path, link: &std::path::Path) {
    std::os::unix::fs::symlink(target, link).expect("a symbolic link");
}

/// Calls every method of `store` with `key` (and `key/` as a prefix), returning how many
/// calls succeeded.
fn every_method(store: &dyn Store, key: &str) -> Vec<(&'static str, bool)> {
    let prefix = format!("{key}/");
    vec![
        ("get", store.get(key).is_ok()),
        (
            "get_ranges",
            store.get_ranges(key, &[ByteRange::FromStart(0)]).is_ok(),
        ),
        ("size", store.size(key).is_ok()),
        ("set", store.set(key, b"x").is_ok()),
        ("delete", store.delete(key).is_ok()),
        ("delete_prefix", store.delete_prefix(&prefix).is_ok()),
        ("list_prefix", store.list_prefix(&prefix).is_ok()),
        ("list_dir", store.list_dir(&prefix).is_ok()),
    ]
}

#[test]
fn bad_keys_are_refused_by_every_method_of_every_store() {
    let sandbox = Sandbox::new();
    let before = sandbox.outside_state();
    let fs = sandbox.store();
    let memory = MemoryStore::new();
    for store in [&fs as &dyn Store, &memory] {
        for key in BAD_KEYS {
            for (method, ok) in every_method(store, key) {
                // `""` is the whole store as a prefix, and `"/"` + `/` is refused anyway
                if key.is_empty() && matches!(method, "delete_prefix" | "list_prefix" | "list_dir")
                {
                    continue;
                }
                assert!(!ok, "{store:?}: {method}({key:?}) was accepted");
            }
            assert!(
                matches!(store.set(key, b"x"), Err(StoreError::InvalidKey { .. })),
                "{key:?}"
            );
        }
        for prefix in BAD_PREFIXES {
            assert!(
                matches!(
                    store.list_prefix(prefix),
                    Err(StoreError::InvalidPrefix { .. })
                ),
                "{prefix:?}"
            );
            assert!(store.list_dir(prefix).is_err(), "{prefix:?}");
            assert!(store.delete_prefix(prefix).is_err(), "{prefix:?}");
        }
        assert_eq!(store.list_prefix("").expect("lists"), Vec::<String>::new());
    }
    assert_eq!(
        sandbox.outside_state(),
        before,
        "something outside the root changed"
    );
}

#[cfg(unix)]
#[test]
fn symbolic_links_under_the_root_are_never_followed() {
    let sandbox = Sandbox::new();
    let root = &sandbox.root;
    let outside = &sandbox.outside;
    symlink(outside, &root.join("dirlink"));
    symlink(&outside.join("secret"), &root.join("filelink"));
    std::fs::create_dir_all(root.join("arr/c")).expect("folders");
    symlink(&outside.join("secret"), &root.join("arr/c/0"));
    symlink(&outside.join("sub"), &root.join("arr/sublink"));
    symlink(&root.join("missing"), &root.join("dangling"));
    symlink(&root.join("loop"), &root.join("loop"));
    symlink(&root.join("filelink"), &root.join("chain"));
    let before = sandbox.outside_state();
    let store = sandbox.store();

    for key in [
        "dirlink/secret",
        "dirlink/sub/zarr.json",
        "filelink",
        "arr/c/0",
        "arr/sublink/zarr.json",
        "dangling",
        "dangling/x",
        "loop",
        "loop/x",
        "chain",
    ] {
        for (method, ok) in every_method(&store, key) {
            if matches!(method, "delete_prefix" | "list_prefix" | "list_dir") {
                continue; // `key/` below a link or a file: checked next
            }
            assert!(!ok, "{method}({key:?}) went through a symbolic link");
        }
        assert!(
            matches!(store.get(key), Err(StoreError::Symlink { .. })),
            "get({key:?}): {:?}",
            store.get(key)
        );
    }
    for prefix in ["dirlink/", "arr/sublink/", "dangling/", "loop/"] {
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
    // listing skips links; it shows no key that lies outside
    assert_eq!(store.list_prefix("").expect("lists"), Vec::<String>::new());
    let listing = store.list_dir("").expect("lists");
    assert!(listing.keys.is_empty(), "{listing:?}");
    assert!(listing.prefixes.is_empty(), "{listing:?}");
    // deleting everything removes the links themselves, never what they point to
    store.set("arr/zarr.json", b"{}").expect("a real key");
    store.delete_prefix("arr/").expect("deletes");
    store.delete_prefix("").expect("deletes");
    assert!(!root.join("dirlink").exists() && !root.join("filelink").exists());
    assert_eq!(
        sandbox.outside_state(),
        before,
        "something outside the root changed"
    );
    assert!(outside.join("secret").is_file());
}

#[cfg(unix)]
#[test]
fn a_hard_link_is_replaced_by_a_write_not_written_through() {
    let sandbox = Sandbox::new();
    // root/ and outside/ are folders of one temporary folder: one filesystem
    std::fs::hard_link(sandbox.outside.join("secret"), sandbox.root.join("h"))
        .expect("a hard link between two folders of one temporary folder");
    let before = sandbox.outside_state();
    let store = sandbox.store();
    // a hard link is a file of the root: it reads, but a write replaces it (atomic rename)
    assert_eq!(store.get("h").expect("reads"), Some(b"secret".to_vec()));
    store.set("h", b"mine").expect("writes");
    assert_eq!(store.get("h").expect("reads"), Some(b"mine".to_vec()));
    store.delete("h").expect("deletes");
    assert_eq!(
        sandbox.outside_state(),
        before,
        "the write went through the hard link"
    );
}

#[cfg(unix)]
#[test]
fn special_files_are_not_keys_and_never_block() {
    let sandbox = Sandbox::new();
    let fifo = sandbox.root.join("fifo");
    // the mkfifo(1) of every unix: no `unsafe` call of `mkfifo(3)` here
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("runs mkfifo");
    assert!(made.success(), "mkfifo: {made}");
    let store = sandbox.store();
    let start = std::time::Instant::now();
    assert_eq!(store.get("fifo").expect("no error"), None);
    assert_eq!(store.size("fifo").expect("no error"), None);
    assert!(store.list_prefix("").expect("lists").is_empty());
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn the_root_is_resolved_once_and_keys_stay_under_it() {
    let sandbox = Sandbox::new();
    let store = FilesystemStore::create(sandbox.root.join("../root/./nested")).expect("store");
    store.set("a/zarr.json", b"{}").expect("writes");
    assert!(sandbox.root.join("nested/a/zarr.json").is_file());
    assert!(store.root().is_absolute());
    // a root that is itself a link is followed once, when the store is opened
    #[cfg(unix)]
    {
        symlink(&sandbox.root, &sandbox.outside.join("rootlink"));
        let via = FilesystemStore::open(sandbox.outside.join("rootlink")).expect("store");
        assert_eq!(
            via.get("nested/a/zarr.json").expect("reads"),
            Some(b"{}".to_vec())
        );
    }
}

/// A folder swapped for a symbolic link (and back) while the store writes and reads under it
/// (time of check to time of use): nothing may land outside the root. The store walks every
/// key from a descriptor of the root with `openat(O_NOFOLLOW)`, one folder at a time, so it
/// either works in the real folder (wherever it has been renamed to, still under the root) or
/// refuses the link; it never resolves a path twice. (The path backend, built on unix with
/// the feature `portable-paths`, does not hold against this race: it is the reason for the
/// descriptor backend.)
#[cfg(all(unix, not(feature = "portable-paths")))]
#[test]
fn a_folder_swapped_for_a_link_during_writes_does_not_leak_outside() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let sandbox = Sandbox::new();
    let before = sandbox.outside_state();
    let store = sandbox.store();
    let root = sandbox.root.clone();
    store.set("d/seed", b"x").expect("writes");
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let (d, real) = (root.join("d"), root.join("d-real"));
            while !stop.load(Ordering::SeqCst) {
                if std::fs::rename(&d, &real).is_ok() {
                    let _ = std::os::unix::fs::symlink(&sandbox.outside, &d);
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(&d);
                    let _ = std::fs::rename(&real, &d);
                }
            }
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        let mut i = 0;
        while std::time::Instant::now() < deadline {
            let _ = store.set(&format!("d/k{i}"), b"leak");
            let _ = store.get(&format!("d/k{i}"));
            i += 1;
        }
        stop.store(true, Ordering::SeqCst);
    });
    let after = sandbox.outside_state();
    let leaked: Vec<_> = after.iter().filter(|e| !before.contains(e)).collect();
    assert!(leaked.is_empty(), "written outside the root: {leaked:?}");
}
