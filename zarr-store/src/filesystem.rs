//! A store in a directory of the local filesystem.
//!
//! [`FilesystemStore`] and its one [`Store`] implementation live here, written against
//! [`DirAccess`]: operations on a single name inside a directory the store has opened, none of
//! which follows a symbolic link in that name. Walking keys segment by segment, atomic writes
//! through temporary files, listing, deleting, key validation and error mapping are therefore
//! written once, for two backends:
//!
//! - `unix`: directory descriptors. Every key is reached from a descriptor of the root
//!   (`openat` one folder at a time, or one `openat2` call on Linux), so nothing renamed
//!   meanwhile can lead an operation outside the root. The system calls are wrapped in `sys`
//!   (through rustix: the crate has no `unsafe`).
//! - `portable`: paths, on every other target. Each name is checked with `symlink_metadata`
//!   and then used through its joined path.
//!
//! The cargo feature `portable-paths` selects the path backend on unix too, so that its tests
//! run there (`scripts/check-platforms` does).

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use self::access::{DirAccess, Kind, Open};
use crate::error::{Result, StoreError};
use crate::key::{is_valid_segment, validate_key, validate_prefix, TEMP_PREFIX};
use crate::range::{resolve_all, ByteRange};
use crate::store::{check_pieces, Condition, ListDir, Outcome, Piece, Store, StoredValue, Version};

mod access;
#[cfg(any(not(unix), feature = "portable-paths"))]
mod portable;
#[cfg(all(unix, not(feature = "portable-paths")))]
mod sys;
#[cfg(all(unix, not(feature = "portable-paths")))]
mod unix;

/// The backend of this build: descriptors on unix, paths elsewhere.
#[cfg(all(unix, not(feature = "portable-paths")))]
type Native = unix::Descriptors;
/// The backend of this build: descriptors on unix, paths elsewhere.
#[cfg(any(not(unix), feature = "portable-paths"))]
type Native = portable::Paths;

/// An open directory of the backend.
type Dir = <Native as DirAccess>::Dir;
/// A borrowed open directory of the backend.
type DirRef<'a> = <Native as DirAccess>::DirRef<'a>;
/// A directory being read.
type Stream = <Native as DirAccess>::Stream;

/// The lock file of a folder in which a conditional write happened: a name listing never
/// shows (no key segment starts with [`TEMP_PREFIX`]) and that no temporary file takes.
pub const LOCK_FILE: &str = ".tmp-lock";

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
/// - **Confined to its root.** Keys are checked by [`validate_key`], so
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
/// - **Tidy deletes.** Deleting a key removes the directories it leaves empty, up to the root
///   (a folder that holds only the lock file below stays, and lists as nothing).
/// - **Conditional writes**, safe across processes ([`Store::set_if`]; versions compare the
///   value itself, see [`Version`](crate::Version)). The writer takes an exclusive OS file
///   lock (`flock` on unix, `LockFileEx` on Windows) on the lock file [`LOCK_FILE`] of the
///   key's folder (`.tmp-lock`, created on first use and left in place), then reads the
///   value, checks the condition and replaces the value by the usual temporary file and
///   rename, then closes the lock file. Two conditional writers of one folder, in any
///   processes, thus never interleave, and a reader still sees the old value or the new one.
///   The lock belongs to the open file: the OS releases it when the holder exits or is
///   killed, so a crashed writer blocks nobody, and the file it leaves is the one the next
///   writer locks. The lock file is never deleted by a writer (deleting a lock file others may
///   be waiting on would let two writers hold "the" lock at once); it is invisible to
///   listings, `list_dir` and node detection, and [`delete_prefix`](Store::delete_prefix)
///   removes it with the rest. Plain [`set`](Store::set) takes no lock: it is atomic, but a
///   plain write racing conditional ones of the same key may be overwritten by them, or
///   overwrite them (the last writer wins). Deleting a folder while conditional writes go on
///   in it is not guarded either.
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
    /// The root directory, opened once; every key is reached from it. Shared by the clones of
    /// the store.
    dirs: Native,
}

/// A directory reached from the root without following a link: the root itself, or a folder
/// below it.
enum Reached {
    Root,
    Below(Dir),
}

impl FilesystemStore {
    /// Opens the store rooted at the existing directory `root`.
    pub fn open(root: impl AsRef<Path>) -> Result<Self> {
        let root = root.as_ref();
        let root_error = |source| StoreError::Root {
            path: root.to_path_buf(),
            source,
        };
        let root = std::path::absolute(root).map_err(root_error)?;
        let dirs = Native::open_root(&root).map_err(root_error)?;
        Ok(Self {
            root,
            durable: false,
            dirs,
        })
    }

    /// Opens the store rooted at `root`, creating the directory (and its parents) if needed.
    pub fn create(root: impl AsRef<Path>) -> Result<Self> {
        let root = root.as_ref();
        std::fs::create_dir_all(root).map_err(|source| StoreError::Root {
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

    /// The handle of a directory reached from the root.
    fn at<'a>(&'a self, dir: &'a Reached) -> DirRef<'a> {
        match dir {
            Reached::Root => self.dirs.root(),
            Reached::Below(dir) => Native::borrow(dir),
        }
    }

    /// The innermost folder of `chain` (from [`open_chain`](Self::open_chain)), or the root.
    fn innermost<'a>(&'a self, chain: &'a [Dir]) -> DirRef<'a> {
        chain.last().map_or(self.dirs.root(), Native::borrow)
    }

    /// Opens the folder `segment` of `parent`, where `rel` is its path under the root and
    /// `name` the key or prefix of the operation. `Ok(None)` when it is missing or not a
    /// folder; [`StoreError::Symlink`] when it is a symbolic link.
    fn open_folder(
        &self,
        parent: DirRef<'_>,
        segment: &str,
        name: &str,
        rel: &str,
    ) -> Result<Option<Dir>> {
        for _ in 0..MAX_ATTEMPTS {
            match Native::open_dir(parent, segment) {
                Ok(Open::Opened(dir)) => return Ok(Some(dir)),
                Ok(Open::Missing) => return Ok(None),
                // Rare: tell a link from a file (the same error on Linux).
                Ok(Open::NotFollowed) => match Native::lstat(parent, segment) {
                    Ok(Some(stat)) if stat.kind == Kind::Symlink => {
                        return Err(symlink_error(name, self.root.join(rel)));
                    }
                    Ok(Some(stat)) if stat.kind == Kind::Dir => {} // swapped back meanwhile
                    Ok(_) => return Ok(None),
                    Err(e) => return Err(StoreError::io(name, e)),
                },
                Err(e) => return Err(StoreError::io(name, e)),
            }
        }
        Err(keeps_changing(name))
    }

    /// Opens the folders of `folders` (`a/b`, or `""` for the root) one below the other.
    /// `Ok(None)` when one is missing or not a folder.
    fn open_folders(&self, name: &str, folders: &str) -> Result<Option<Reached>> {
        if folders.is_empty() {
            return Ok(Some(Reached::Root));
        }
        // The common case in one system call; a link, a file or a race on the way (or no
        // `openat2`) falls back to the walk below, which tells them apart.
        match self.dirs.open_dirs_beneath(folders) {
            Some(Open::Opened(dir)) => return Ok(Some(Reached::Below(dir))),
            Some(Open::Missing) => return Ok(None),
            Some(Open::NotFollowed) | None => {}
        }
        let mut dir = Reached::Root;
        for (end, segment) in segments(folders) {
            match self.open_folder(self.at(&dir), segment, name, &folders[..end])? {
                Some(folder) => dir = Reached::Below(folder),
                None => return Ok(None),
            }
        }
        Ok(Some(dir))
    }

    /// Like [`open_folders`](Self::open_folders), keeping every folder open (the innermost
    /// last), for removing the empty ones afterwards.
    fn open_chain(&self, name: &str, folders: &str) -> Result<Option<Vec<Dir>>> {
        let mut chain: Vec<Dir> = Vec::new();
        if folders.is_empty() {
            return Ok(Some(chain));
        }
        for (end, segment) in segments(folders) {
            match self.open_folder(self.innermost(&chain), segment, name, &folders[..end])? {
                Some(folder) => chain.push(folder),
                None => return Ok(None),
            }
        }
        Ok(Some(chain))
    }

    /// A handle of its own (not shared with another reader) to the folder of `prefix`, or
    /// `None` when it is missing or not a folder.
    fn prefix_dir(&self, prefix: &str) -> Result<Option<Dir>> {
        validate_prefix(prefix)?;
        let folders = prefix.strip_suffix('/').unwrap_or("");
        match self.open_folders(prefix, folders)? {
            Some(Reached::Below(dir)) => Ok(Some(dir)),
            Some(Reached::Root) => match Native::reopen(self.dirs.root()) {
                Ok(dir) => Ok(Some(dir)),
                Err(e) if is_missing(&e) => Ok(None),
                Err(e) => Err(StoreError::io(prefix, e)),
            },
            None => Ok(None),
        }
    }

    /// Opens `key` for reading, with its size, or `None` when it is not a regular file.
    fn open_key(&self, key: &str) -> Result<Option<(File, u64)>> {
        validate_key(key)?;
        // The whole key in one system call when the kernel can; see `open_folders`.
        let file = match self.dirs.open_file_beneath(key) {
            Some(Open::Opened(file)) => file,
            Some(Open::Missing) => return Ok(None),
            Some(Open::NotFollowed) | None => match self.walk_to_file(key)? {
                Some(file) => file,
                None => return Ok(None),
            },
        };
        let metadata = file.metadata().map_err(|e| StoreError::io(key, e))?;
        Ok(metadata.is_file().then_some((file, metadata.len())))
    }

    /// Opens `key` for reading one segment at a time, or `None` when there is no file to read.
    fn walk_to_file(&self, key: &str) -> Result<Option<File>> {
        let (folders, file_name) = split_key(key);
        let Some(dir) = self.open_folders(key, folders)? else {
            return Ok(None);
        };
        match Native::open_file(self.at(&dir), file_name) {
            Ok(Open::Opened(file)) => Ok(Some(file)),
            Ok(Open::Missing) => Ok(None),
            Ok(Open::NotFollowed) => Err(symlink_error(key, self.root.join(key))),
            Err(e) => Err(StoreError::io(key, e)),
        }
    }

    /// Opens (creating them as needed) the folders above `key`, returning the innermost one.
    fn make_folders(&self, key: &str) -> Result<Reached> {
        let (folders, _) = split_key(key);
        if folders.is_empty() {
            return Ok(Reached::Root);
        }
        // Folders that exist already (the common case) in one system call.
        if let Some(Open::Opened(dir)) = self.dirs.open_dirs_beneath(folders) {
            return Ok(Reached::Below(dir));
        }
        let mut dir = Reached::Root;
        for (end, segment) in segments(folders) {
            let ancestor = &key[..end];
            let parent = self.at(&dir);
            let mut opened = None;
            for _ in 0..MAX_ATTEMPTS {
                match Native::open_dir(parent, segment) {
                    Ok(Open::Opened(folder)) => {
                        opened = Some(folder);
                        break;
                    }
                    // A `NotFound` error when `parent` itself was removed by a concurrent
                    // delete: `set` then starts again from the root.
                    Ok(Open::Missing) => match Native::mkdir(parent, segment) {
                        Ok(()) => {
                            if self.durable {
                                Native::sync(parent).map_err(|e| StoreError::io(key, e))?;
                            }
                        }
                        // Created by someone else meanwhile: open it.
                        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(StoreError::io(key, e)),
                    },
                    Ok(Open::NotFollowed) => match Native::lstat(parent, segment) {
                        Ok(Some(stat)) if stat.kind == Kind::Symlink => {
                            return Err(symlink_error(key, self.root.join(ancestor)));
                        }
                        // Swapped back, or removed, meanwhile: look again.
                        Ok(Some(stat)) if stat.kind == Kind::Dir => {}
                        Ok(None) => {}
                        Ok(Some(_)) => {
                            return Err(StoreError::KeyConflict {
                                key: key.to_owned(),
                                existing: ancestor.to_owned(),
                            });
                        }
                        Err(e) => return Err(StoreError::io(key, e)),
                    },
                    Err(e) => return Err(StoreError::io(key, e)),
                }
            }
            match opened {
                Some(folder) => dir = Reached::Below(folder),
                None => return Err(keeps_changing(key)),
            }
        }
        Ok(dir)
    }

    /// One attempt at `set`; a `NotFound` I/O error means a concurrent delete removed a
    /// folder and the attempt may be repeated.
    fn try_set(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        let folder = self.make_folders(key)?;
        let (_, name) = split_key(key);
        self.replace_in(self.at(&folder), key, name, |file| write_parts(file, parts))
    }

    /// One attempt at `set_if`, as [`try_set`](Self::try_set): under the lock of the key's
    /// folder, the value is read, the condition checked and the value replaced.
    fn try_set_if(&self, key: &str, value: &[u8], condition: &Condition) -> Result<Outcome> {
        let folder = self.make_folders(key)?;
        let dir = self.at(&folder);
        let (_, name) = split_key(key);
        // Held until the end of this function: closing the file releases the lock.
        let _lock = lock_folder(dir).map_err(|e| StoreError::io(key, e))?;
        let current = match Native::open_file(dir, name) {
            Ok(Open::Opened(file)) => {
                let metadata = file.metadata().map_err(|e| StoreError::io(key, e))?;
                if metadata.is_file() {
                    Some(read_whole(&file, metadata.len()).map_err(|e| StoreError::io(key, e))?)
                } else {
                    None // a folder: `replace_in` refuses it
                }
            }
            Ok(Open::Missing) => None,
            Ok(Open::NotFollowed) => return Err(symlink_error(key, self.root.join(key))),
            Err(e) => return Err(StoreError::io(key, e)),
        };
        if !condition.holds_for_content(current.as_deref()) {
            return Ok(Outcome::Conflict);
        }
        self.replace_in(dir, key, name, |file| file.write_all(value))?;
        Ok(Outcome::Written(Version::of_content(value)))
    }

    /// Replaces the file `name` of `dir` (the folder of `key`) atomically by what `write`
    /// writes into a new temporary file, then renamed over it.
    fn replace_in(
        &self,
        dir: DirRef<'_>,
        key: &str,
        name: &str,
        write: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> Result<()> {
        let conflict = || StoreError::KeyConflict {
            key: key.to_owned(),
            existing: format!("{key}/"),
        };
        match Native::lstat(dir, name) {
            Ok(Some(stat)) if stat.kind == Kind::Symlink => {
                return Err(symlink_error(key, self.root.join(key)));
            }
            Ok(Some(stat)) if stat.kind == Kind::Dir => return Err(conflict()),
            Ok(_) => {}
            Err(e) => return Err(StoreError::io(key, e)),
        }
        let temp = write_temp_file(dir, self.durable, write).map_err(|e| StoreError::io(key, e))?;
        if let Err(e) = Native::rename(dir, temp.as_str(), name) {
            let _ = Native::unlink(dir, temp.as_str());
            let is_dir =
                matches!(Native::lstat(dir, name), Ok(Some(stat)) if stat.kind == Kind::Dir);
            return Err(if is_dir {
                conflict()
            } else {
                StoreError::io(key, e)
            });
        }
        if self.durable {
            Native::sync(dir).map_err(|e| StoreError::io(key, e))?;
        }
        Ok(())
    }

    /// Removes the empty folders of `folders` (opened as `chain`), innermost first, up to (not
    /// including) the root. Each is removed by name from its parent, so only an empty
    /// directory under the root can go, never a link.
    fn prune_empty_dirs(&self, chain: &[Dir], folders: &str) {
        if folders.is_empty() {
            return;
        }
        for (up, segment) in folders.rsplit('/').enumerate() {
            let depth = chain.len().saturating_sub(up + 1);
            if Native::rmdir(self.innermost(&chain[..depth]), segment).is_err() {
                break;
            }
        }
    }
}

impl Store for FilesystemStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let Some((file, len)) = self.open_key(key)? else {
            return Ok(None);
        };
        read_whole(&file, len)
            .map(Some)
            .map_err(|e| StoreError::io(key, e))
    }

    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
        let Some((file, size)) = self.open_key(key)? else {
            return Ok(None);
        };
        let resolved = resolve_all(key, ranges, size)?;
        read_ranges(&file, &resolved)
            .map(Some)
            .map_err(|e| StoreError::io(key, e))
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        let (folders, file_name) = split_key(key);
        let Some(dir) = self.open_folders(key, folders)? else {
            return Ok(None);
        };
        match Native::lstat(self.at(&dir), file_name) {
            Ok(Some(stat)) => match stat.kind {
                Kind::Symlink => Err(symlink_error(key, self.root.join(key))),
                Kind::File => Ok(Some(stat.len)),
                Kind::Dir | Kind::Other => Ok(None),
            },
            Ok(None) => Ok(None),
            Err(e) => Err(StoreError::io(key, e)),
        }
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.set_parts(key, &[value])
    }

    /// The parts written to the temporary file with vectored writes (`writev`), so a shard
    /// of many inner chunks is never joined in memory.
    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        validate_key(key)?;
        let mut attempt = 1;
        loop {
            match self.try_set(key, parts) {
                Err(StoreError::Io { source, .. })
                    if is_missing(&source) && attempt < MAX_ATTEMPTS =>
                {
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    /// Always `true`: see [`FilesystemStore`], "Conditional writes".
    fn conditional_writes(&self) -> bool {
        true
    }

    /// `true`: [`Store::open_value`] opens the file once, and each range is one positioned
    /// read (`pread`) from the page cache.
    fn cheap_ranged_reads(&self) -> bool {
        true
    }

    fn set_if(&self, key: &str, value: &[u8], condition: &Condition) -> Result<Outcome> {
        validate_key(key)?;
        let mut attempt = 1;
        loop {
            match self.try_set_if(key, value, condition) {
                Err(StoreError::Io { source, .. })
                    if is_missing(&source) && attempt < MAX_ATTEMPTS =>
                {
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    /// The file kept open: reads are `pread`s of the bytes asked for, and
    /// [`StoredValue::replace`] copies the kept ranges from it into the new temporary file in
    /// the kernel (`copy_file_range` on Linux, through `std::io::copy`), then renames that over
    /// the key. Writers replace files by rename and never change one in place, so the open
    /// file stays the version opened. After the rename, on unix, the replaced file is closed
    /// on a background thread, where the kernel frees it (at most 16 wait; see
    /// `close_later`).
    fn open_value(&self, key: &str) -> Result<Option<Box<dyn StoredValue + '_>>> {
        validate_key(key)?;
        let (folders, name) = split_key(key);
        let Some(folder) = self.open_folders(key, folders)? else {
            return Ok(None);
        };
        let file = match Native::open_file(self.at(&folder), name) {
            Ok(Open::Opened(file)) => file,
            Ok(Open::Missing) => return Ok(None),
            Ok(Open::NotFollowed) => return Err(symlink_error(key, self.root.join(key))),
            Err(e) => return Err(StoreError::io(key, e)),
        };
        let metadata = file.metadata().map_err(|e| StoreError::io(key, e))?;
        if !metadata.is_file() {
            return Ok(None);
        }
        Ok(Some(Box::new(OpenValue {
            store: self,
            key: key.to_owned(),
            folder,
            file,
            size: metadata.len(),
        })))
    }

    fn delete(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        let (folders, file_name) = split_key(key);
        let Some(chain) = self.open_chain(key, folders)? else {
            return Ok(());
        };
        let dir = self.innermost(&chain);
        match Native::lstat(dir, file_name) {
            Ok(Some(stat)) if stat.kind == Kind::Symlink => {
                return Err(symlink_error(key, self.root.join(key)));
            }
            Ok(Some(stat)) if stat.kind == Kind::File => {}
            Ok(_) => return Ok(()), // not a key
            Err(e) => return Err(StoreError::io(key, e)),
        }
        match Native::unlink(dir, file_name) {
            Ok(()) => {}
            Err(e) if is_missing(&e) => return Ok(()),
            Err(e) => return Err(StoreError::io(key, e)),
        }
        self.prune_empty_dirs(&chain, folders);
        Ok(())
    }

    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        validate_prefix(prefix)?;
        let io_error = |e| StoreError::io(prefix, e);
        let Some(folders) = prefix.strip_suffix('/') else {
            // Empty the root but keep it.
            return match self.prefix_dir(prefix)? {
                Some(root) => remove_contents(root).map_err(io_error),
                None => Ok(()),
            };
        };
        let Some(mut chain) = self.open_chain(prefix, folders)? else {
            return Ok(());
        };
        let Some(dir) = chain.pop() else {
            return Ok(());
        };
        remove_contents(dir).map_err(io_error)?;
        let (parents, name) = split_key(folders);
        match Native::rmdir(self.innermost(&chain), name) {
            Err(e) if !is_missing(&e) => return Err(io_error(e)),
            _ => {}
        }
        self.prune_empty_dirs(&chain, parents);
        Ok(())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let Some(dir) = self.prefix_dir(prefix)? else {
            return Ok(Vec::new());
        };
        let mut keys = Vec::new();
        visit_keys(dir, prefix, &mut |key| {
            keys.push(key);
            false
        })
        .map_err(|e| StoreError::io(prefix, e))?;
        keys.sort_unstable();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<ListDir> {
        let Some(dir) = self.prefix_dir(prefix)? else {
            return Ok(ListDir::default());
        };
        let io_error = |e| StoreError::io(prefix, e);
        let Some(mut stream) = read_dir(dir).map_err(io_error)? else {
            return Ok(ListDir::default());
        };
        let mut listing = ListDir::default();
        for (name, kind) in read_entries(&mut stream).map_err(io_error)? {
            match kind {
                EntryKind::File => listing.keys.push(format!("{prefix}{name}")),
                EntryKind::Dir => {
                    let sub = match Native::stream_dir(&stream)
                        .and_then(|dir| Native::open_dir(dir, &name))
                    {
                        Ok(Open::Opened(sub)) => sub,
                        Ok(Open::Missing | Open::NotFollowed) => continue,
                        Err(e) => return Err(io_error(e)),
                    };
                    if holds_a_key(sub).map_err(io_error)? {
                        listing.prefixes.push(format!("{prefix}{name}/"));
                    }
                }
            }
        }
        listing.keys.sort_unstable();
        listing.prefixes.sort_unstable();
        Ok(listing)
    }
}

/// Whether `e` means the name (or a directory on its way) does not exist (any more).
fn is_missing(e: &io::Error) -> bool {
    e.kind() == ErrorKind::NotFound
}

/// The error of a root that is not a directory.
fn not_a_directory() -> io::Error {
    io::Error::new(ErrorKind::NotADirectory, "not a directory")
}

/// Starts reading `dir`, or `None` when it was removed meanwhile.
fn read_dir(dir: Dir) -> io::Result<Option<Stream>> {
    match Native::read_dir(dir) {
        Ok(stream) => Ok(Some(stream)),
        Err(e) if is_missing(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// What listing makes of a directory entry.
enum EntryKind {
    File,
    Dir,
}

/// The entries of `stream` that can be part of a key: regular files and directories whose
/// names are valid key segments. Temporary files, symbolic links, other kinds of files and
/// names that are not UTF-8 are skipped. A directory deleted meanwhile has no entries.
fn read_entries(stream: &mut Stream) -> io::Result<Vec<(String, EntryKind)>> {
    let mut found = Vec::new();
    loop {
        let entry = match Native::next_entry(stream) {
            Ok(Some(entry)) => entry,
            Ok(None) => break,
            Err(e) if is_missing(&e) => break, // Linux: reading a removed directory
            Err(e) => return Err(e),
        };
        let Ok(name) = entry.name.into_string() else {
            continue;
        };
        if !is_valid_segment(&name) {
            continue;
        }
        let kind = match entry.kind {
            Some(kind) => kind,
            None => match Native::lstat(Native::stream_dir(stream)?, name.as_str())? {
                Some(stat) => stat.kind,
                None => continue,
            },
        };
        match kind {
            Kind::File => found.push((name, EntryKind::File)),
            Kind::Dir => found.push((name, EntryKind::Dir)),
            Kind::Symlink | Kind::Other => {}
        }
    }
    Ok(found)
}

/// Calls `visit` with every key under the directory `top`, whose keys start with `prefix`,
/// depth first; stops early when `visit` returns `true`. Each folder is opened from its
/// parent without following links; folders removed or swapped meanwhile are skipped. At
/// most one directory per level of the tree is open at a time.
fn visit_keys(top: Dir, prefix: &str, visit: &mut dyn FnMut(String) -> bool) -> io::Result<()> {
    // Folders still to read: their parent (kept open), their name and their prefix.
    let mut pending: Vec<(Rc<Stream>, String, String)> = Vec::new();
    let mut next = read_dir(top)?.map(|stream| (stream, prefix.to_owned()));
    loop {
        let (mut stream, dir_prefix) = match next.take() {
            Some(next) => next,
            None => {
                let Some((parent, name, sub_prefix)) = pending.pop() else {
                    return Ok(());
                };
                let dir = match Native::open_dir(Native::stream_dir(&parent)?, name.as_str())? {
                    Open::Opened(dir) => dir,
                    Open::Missing | Open::NotFollowed => continue,
                };
                match read_dir(dir)? {
                    Some(stream) => (stream, sub_prefix),
                    None => continue,
                }
            }
        };
        let entries = read_entries(&mut stream)?;
        let stream = Rc::new(stream);
        for (name, kind) in entries {
            let key = format!("{dir_prefix}{name}");
            match kind {
                EntryKind::File => {
                    if visit(key) {
                        return Ok(());
                    }
                }
                EntryKind::Dir => pending.push((Rc::clone(&stream), name, key + "/")),
            }
        }
    }
}

/// Whether the directory `dir` holds at least one key, at any depth.
fn holds_a_key(dir: Dir) -> io::Result<bool> {
    let mut found = false;
    visit_keys(dir, "", &mut |_| {
        found = true;
        true
    })?;
    Ok(found)
}

/// Removes everything in the directory `top` (which stays), without following links: each
/// entry is removed by name from its directory, and folders are opened from their parent
/// without following a link. Entries removed meanwhile are skipped.
fn remove_contents(top: Dir) -> io::Result<()> {
    // The folders being emptied, outermost first, each with its name in the one before.
    let mut stack: Vec<(Stream, Option<OsString>)> = match read_dir(top)? {
        Some(stream) => vec![(stream, None)],
        None => return Ok(()),
    };
    while let Some((stream, _)) = stack.last_mut() {
        let entry = match Native::next_entry(stream) {
            Ok(entry) => entry,
            Err(e) if is_missing(&e) => None,
            Err(e) => return Err(e),
        };
        let Some(entry) = entry else {
            // Emptied: remove it from its parent.
            if let Some((_, Some(name))) = stack.pop() {
                if let Some((parent, _)) = stack.last() {
                    match Native::stream_dir(parent).and_then(|dir| Native::rmdir(dir, &name)) {
                        Err(e) if !is_missing(&e) => return Err(e),
                        _ => {}
                    }
                }
            }
            continue;
        };
        let name = entry.name;
        let dir = Native::stream_dir(stream)?;
        let kind = match entry.kind {
            Some(kind) => kind,
            None => match Native::lstat(dir, &name)? {
                Some(stat) => stat.kind,
                None => continue,
            },
        };
        if kind == Kind::Dir {
            match Native::open_dir(dir, &name)? {
                Open::Opened(sub) => {
                    if let Some(sub) = read_dir(sub)? {
                        stack.push((sub, Some(name)));
                    }
                    continue;
                }
                Open::Missing => continue,
                Open::NotFollowed => {} // no longer a folder: unlink it
            }
        }
        match Native::unlink(dir, &name) {
            Err(e) if !is_missing(&e) => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// The whole content of `file`, of `len` bytes, allocated fallibly.
/// A value of a [`FilesystemStore`] opened by [`Store::open_value`]: its file, open.
struct OpenValue<'s> {
    store: &'s FilesystemStore,
    key: String,
    /// The key's folder, opened when the value was.
    folder: Reached,
    file: File,
    size: u64,
}

impl StoredValue for OpenValue<'_> {
    fn size(&self) -> u64 {
        self.size
    }

    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>> {
        let resolved = resolve_all(&self.key, ranges, self.size)?;
        read_ranges(&self.file, &resolved).map_err(|e| StoreError::io(&self.key, e))
    }

    fn replace(self: Box<Self>, pieces: &[Piece]) -> Result<()> {
        check_pieces(&self.key, pieces, self.size)?;
        let (_, name) = split_key(&self.key);
        let dir = self.store.at(&self.folder);
        let mut source = &self.file;
        let replaced = self.store.replace_in(dir, &self.key, name, |temp| {
            for piece in pieces {
                match piece {
                    Piece::New(bytes) => temp.write_all(bytes)?,
                    Piece::Kept(range) => {
                        let len = range.end - range.start;
                        source.seek(SeekFrom::Start(range.start))?;
                        // `File` to `File`: the kernel copies (std's `io::copy` specialisation)
                        let copied = io::copy(&mut source.take(len), temp)?;
                        if copied != len {
                            return Err(io::Error::new(
                                ErrorKind::UnexpectedEof,
                                "the value opened became shorter",
                            ));
                        }
                    }
                }
            }
            Ok(())
        });
        // the old file, now unlinked, is freed when this last descriptor closes (elsewhere
        // than on unix, here: an open handle there keeps a file's folder from being removed)
        #[cfg(unix)]
        if replaced.is_ok() {
            close_later(self.file);
        }
        replaced
    }
}

/// The replaced files [`close_later`] holds at most, waiting for its thread.
#[cfg(unix)]
const CLOSE_QUEUE: usize = 16;

/// Closes `file`, the last descriptor of a value just replaced (unlinked by the rename), on a
/// background thread: the kernel frees an unlinked file's blocks and cached pages when its
/// last descriptor closes, there and then (5 ms for a 6.4 MB shard on ext4 here, half of a
/// one-inner-chunk shard update), and the caller need not wait for that. At most
/// [`CLOSE_QUEUE`] files wait; past that, or without the thread, it is closed here.
#[cfg(unix)]
fn close_later(file: File) {
    use std::sync::mpsc::{sync_channel, SyncSender};
    use std::sync::OnceLock;
    static CLOSER: OnceLock<Option<SyncSender<File>>> = OnceLock::new();
    let closer = CLOSER.get_or_init(|| {
        let (tx, rx) = sync_channel::<File>(CLOSE_QUEUE);
        std::thread::Builder::new()
            .name("zarr-store-close".into())
            .spawn(move || rx.into_iter().for_each(drop))
            .ok()
            .map(|_| tx)
    });
    if let Some(tx) = closer {
        // a full queue or a gone thread hands the file back, and it closes here
        let _ = tx.try_send(file);
    }
}

/// Writes `parts` to `file`, one after the other, with as few vectored writes as the system
/// takes (at most 1024 buffers each, Linux's `IOV_MAX`).
fn write_parts(file: &mut File, parts: &[&[u8]]) -> io::Result<()> {
    if let [value] = parts {
        return file.write_all(value);
    }
    let mut slices: Vec<io::IoSlice<'_>> = parts
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| io::IoSlice::new(p))
        .collect();
    let mut bufs = &mut slices[..];
    while !bufs.is_empty() {
        let batch = bufs.len().min(1024);
        match file.write_vectored(&bufs[..batch]) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => io::IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The byte ranges `ranges` of `file` (each inside it), read with one positioned read each.
fn read_ranges(file: &File, ranges: &[std::ops::Range<usize>]) -> io::Result<Vec<Vec<u8>>> {
    let mut parts = Vec::with_capacity(ranges.len());
    for range in ranges {
        let mut part = Vec::new();
        part.try_reserve_exact(range.len())
            .map_err(io::Error::other)?;
        part.resize(range.len(), 0);
        if !part.is_empty() {
            Native::read_exact_at(file, &mut part, range.start as u64)?;
        }
        parts.push(part);
    }
    Ok(parts)
}

fn read_whole(file: &File, len: u64) -> io::Result<Vec<u8>> {
    let len = usize::try_from(len).map_err(io::Error::other)?;
    let mut value = Vec::new();
    value.try_reserve_exact(len).map_err(io::Error::other)?;
    // `File::read_to_end` would ask for the size and the position again (`statx`, `lseek`);
    // through `Take` it reads into the space reserved for the size known, then once more to
    // see the end.
    file.take(u64::MAX).read_to_end(&mut value)?;
    Ok(value)
}

/// Takes the lock of the folder `dir` for a conditional write: an exclusive OS file lock
/// (`flock`, `LockFileEx`) on its lock file [`LOCK_FILE`], created when missing. The lock is
/// released when the returned file is closed, also when the process dies.
fn lock_folder(dir: DirRef<'_>) -> io::Result<File> {
    for _ in 0..MAX_ATTEMPTS {
        let file = match Native::open_file(dir, LOCK_FILE)? {
            Open::Opened(file) => file,
            Open::Missing => match Native::create_new_file(dir, LOCK_FILE) {
                Ok(file) => file,
                // created by another writer meanwhile: open that one
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            },
            Open::NotFollowed => {
                return Err(io::Error::other(
                    "the folder's lock file is a symbolic link or not a file",
                ))
            }
        };
        fs4::FileExt::lock(&file)?;
        return Ok(file);
    }
    Err(io::Error::other(
        "the folder's lock file cannot be opened or created",
    ))
}

/// Writes `value` to a new temporary file in `dir`, returning its name. The file is removed
/// again if anything fails.
fn write_temp_file(
    dir: DirRef<'_>,
    durable: bool,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<String> {
    let (name, mut file) = create_temp_file(dir)?;
    let written = write(&mut file).and_then(|()| if durable { file.sync_all() } else { Ok(()) });
    drop(file);
    match written {
        Ok(()) => Ok(name),
        Err(e) => {
            let _ = Native::unlink(dir, name.as_str());
            Err(e)
        }
    }
}

/// Creates a temporary file with a fresh name in `dir` (never an existing file or link).
fn create_temp_file(dir: DirRef<'_>) -> io::Result<(String, File)> {
    loop {
        let name = temp_name();
        match Native::create_new_file(dir, name.as_str()) {
            Ok(file) => return Ok((name, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
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

    #[test]
    fn temp_files_are_created_in_the_directory() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let dirs = Native::open_root(dir.path())?;
        let (a, _) = create_temp_file(dirs.root())?;
        let (b, _) = create_temp_file(dirs.root())?;
        assert_ne!(a, b);
        assert!(dir.path().join(&a).is_file() && dir.path().join(&b).is_file());
        Ok(())
    }

    #[test]
    fn pruning_stops_at_the_first_folder_still_in_use() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| StoreError::io("", e))?;
        let store = FilesystemStore::open(dir.path())?;
        store.set("a/keep", b"1")?;
        std::fs::create_dir_all(dir.path().join("a/b/c")).map_err(|e| StoreError::io("", e))?;
        let chain = store.open_chain("a/b/c/k", "a/b/c")?.unwrap_or_default();
        assert_eq!(chain.len(), 3);
        store.prune_empty_dirs(&chain, "a/b/c");
        assert!(!dir.path().join("a/b").exists());
        assert!(dir.path().join("a/keep").is_file());
        Ok(())
    }

    /// Replacing a value many times over, faster than one thread may close the replaced files:
    /// every replacement reads back, and the replaced files' descriptors never pile up past
    /// the queue of the closing thread.
    #[cfg(unix)]
    #[test]
    fn replaced_values_are_closed_in_the_background_within_bounds() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| StoreError::io("", e))?;
        let store = FilesystemStore::open(dir.path())?;
        store.set("k", &[0u8; 4096])?;
        #[cfg(target_os = "linux")]
        let open_fds = || std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count);
        #[cfg(target_os = "linux")]
        let before = open_fds();
        for i in 1..=100u8 {
            let value = store
                .open_value("k")?
                .ok_or(StoreError::io("k", io::ErrorKind::NotFound.into()))?;
            value.replace(&[Piece::New(vec![i]), Piece::Kept(1..4096)])?;
            let got = store.get("k")?.unwrap_or_default();
            assert_eq!((got.len(), got[0]), (4096, i));
            // other tests of this binary open files too: a margin beside the queue
            #[cfg(target_os = "linux")]
            assert!(
                open_fds() <= before + CLOSE_QUEUE + 16,
                "{} > {before}",
                open_fds()
            );
        }
        Ok(())
    }
}
