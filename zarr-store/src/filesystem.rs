//! A store in a directory of the local filesystem.
//!
//! The struct, its constructors and what both implementations share live here; the
//! [`Store`](crate::Store) implementation is `unix` (directory descriptors, `openat`, with the
//! system calls wrapped in `sys`) or `portable` (paths, elsewhere).

use std::fs;
use std::io::{self, ErrorKind};
#[cfg(unix)]
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(unix)]
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Result, StoreError};
use crate::key::TEMP_PREFIX;

#[cfg(not(unix))]
mod portable;
#[cfg(unix)]
mod sys;
#[cfg(unix)]
mod unix;

/// How often an operation is retried when a concurrent delete removes a directory it is using.
const MAX_ATTEMPTS: usize = 16;

/// A store that keeps each key as a file under a root directory: key `a/c/0/-1` is the file
/// `<root>/a/c/0/-1`.
///
/// - **Atomic writes.** A value is written to a temporary file `.tmp-<pid>-<counter>-<nanos>`
///   in the key's directory, then renamed over the key. A reader sees the old value or the new
///   one, never a torn one, and a crash leaves the old value (and perhaps a temporary file,
///   which listing never returns since no key can start with `.tmp-`). With
///   [`durable(true)`](Self::durable) the data and the directory are also flushed to disk
///   (`fsync`) before `set` returns; by default they are not.
/// - **Confined to its root.** Keys are checked by [`validate_key`](crate::validate_key), so
///   none can name a path outside the root, and no symbolic link under the root is followed:
///   an operation whose key crosses a link fails with [`StoreError::Symlink`], and listing
///   skips links. On unix this holds even against someone renaming things under the root
///   while the store works (a folder swapped for a link between two system calls): the root
///   is opened once, by [`open`](Self::open), and every key is walked from that descriptor one
///   folder at a time (`openat` with `O_NOFOLLOW`; on Linux 5.6+ in a single `openat2` with
///   `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), its file then read, created, renamed or removed
///   relative to its folder's descriptor, so no path is ever resolved twice. Elsewhere
///   each folder is checked and then the joined path is used, so such a swap, made at the
///   right moment, could still redirect an operation.
/// - **Partial reads.** [`get_ranges`](crate::Store::get_ranges) opens the file once and
///   reads only the bytes asked for (`pread` on unix, seek and read elsewhere).
/// - **Tidy deletes.** Deleting a key removes the directories it leaves empty, up to the root.
///
/// The root is resolved once, when the store is opened: a root that is itself a link is
/// followed then. On unix the store keeps working in that directory even if it is later
/// renamed or moved ([`root`](Self::root) still tells the old path); once it is deleted, reads
/// find no keys and writes fail.
///
/// A key cannot also be a prefix of other keys (`a` and `a/b`): that would need `a` to be a
/// file and a directory at once, so it fails with [`StoreError::KeyConflict`].
///
/// ```
/// use zarr_store::{ByteRange, FilesystemStore, Store, StoreExt};
///
/// let dir = tempfile::tempdir()?;
/// let store = FilesystemStore::create(dir.path().join("data.zarr"))?;
/// store.set("arr/c/0/-1", b"0123456789")?;
/// assert!(dir.path().join("data.zarr/arr/c/0/-1").is_file());
/// assert_eq!(store.get_range("arr/c/0/-1", ByteRange::Suffix(3))?, Some(b"789".to_vec()));
/// assert_eq!(store.list_prefix("arr/")?, ["arr/c/0/-1"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FilesystemStore {
    root: PathBuf,
    durable: bool,
    /// The root directory, opened once (`O_DIRECTORY | O_CLOEXEC`); every key is reached from
    /// it. Shared by the clones of the store.
    #[cfg(unix)]
    root_dir: Arc<OwnedFd>,
}

impl FilesystemStore {
    /// Opens the store rooted at the existing directory `root`.
    pub fn open(root: impl AsRef<Path>) -> Result<Self> {
        let root = root.as_ref();
        let root_error = |source| StoreError::Root {
            path: root.to_path_buf(),
            source,
        };
        let not_a_directory = || io::Error::new(ErrorKind::NotADirectory, "not a directory");
        let root = std::path::absolute(root).map_err(root_error)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // std adds `O_CLOEXEC`; the root itself may be a link, followed here, once.
            let dir = fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY)
                .open(&root)
                .map_err(|e| {
                    root_error(if e.raw_os_error() == Some(libc::ENOTDIR) {
                        not_a_directory()
                    } else {
                        e
                    })
                })?;
            Ok(Self {
                root,
                durable: false,
                root_dir: Arc::new(OwnedFd::from(dir)),
            })
        }
        #[cfg(not(unix))]
        {
            let metadata = fs::metadata(&root).map_err(root_error)?;
            if !metadata.is_dir() {
                return Err(root_error(not_a_directory()));
            }
            Ok(Self {
                root,
                durable: false,
            })
        }
    }
    /// Opens the store rooted at `root`, creating the directory (and its parents) if needed.
    pub fn create(root: impl AsRef<Path>) -> Result<Self> {
        let root = root.as_ref();
        fs::create_dir_all(root).map_err(|source| StoreError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        Self::open(root)
    }

    /// Whether [`set`](crate::Store::set) flushes the value and its directory to disk (`fsync`)
    /// before returning. Off by default: writes are still atomic, but a crash may lose the
    /// latest ones.
    #[must_use]
    pub fn durable(mut self, durable: bool) -> Self {
        self.durable = durable;
        self
    }

    /// The root directory (absolute).
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// The folders of `key` (`""` for none) and its last segment.
fn split_key(key: &str) -> (&str, &str) {
    key.rsplit_once('/').unwrap_or(("", key))
}

/// The segments of `path` (`a/b/c`), each with the byte offset in `path` at which it ends.
fn segments(path: &str) -> impl Iterator<Item = (usize, &str)> + '_ {
    slash_positions(path).zip(path.split('/'))
}

/// The byte offsets in `key` at which each of its segments ends.
fn slash_positions(key: &str) -> impl Iterator<Item = usize> + '_ {
    key.match_indices('/')
        .map(|(slash, _)| slash)
        .chain(std::iter::once(key.len()))
}

/// A fresh name for a temporary file: `.tmp-<pid>-<counter>-<nanos>`, never a valid key
/// segment.
fn temp_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let counter = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    format!("{TEMP_PREFIX}{}-{counter}-{nanos}", std::process::id())
}

fn symlink_error(key: &str, path: PathBuf) -> StoreError {
    StoreError::Symlink {
        key: key.to_owned(),
        path,
    }
}

/// A directory that keeps changing under a concurrent writer, for longer than
/// [`MAX_ATTEMPTS`] looks.
fn keeps_changing(key: &str) -> StoreError {
    StoreError::io(
        key,
        io::Error::other("directory keeps changing under a concurrent writer"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::is_valid_segment;

    #[test]
    fn slash_positions_end_each_segment() {
        let positions: Vec<usize> = slash_positions("ab/c/def").collect();
        assert_eq!(positions, [2, 4, 8]);
        let key = "ab/c/def";
        let ancestors: Vec<&str> = positions.iter().map(|&end| &key[..end]).collect();
        assert_eq!(ancestors, ["ab", "ab/c", "ab/c/def"]);
        let walked: Vec<(usize, &str)> = segments("ab/c").collect();
        assert_eq!(walked, [(2, "ab"), (4, "c")]);
        assert_eq!(split_key("a/b/c"), ("a/b", "c"));
        assert_eq!(split_key("c"), ("", "c"));
    }

    #[test]
    fn temp_names_have_the_reserved_prefix_and_are_fresh() {
        let (a, b) = (temp_name(), temp_name());
        assert_ne!(a, b);
        for name in [a, b] {
            assert!(name.starts_with(TEMP_PREFIX), "{name}");
            assert!(!is_valid_segment(&name));
        }
    }
}
