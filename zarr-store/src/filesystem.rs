//! A store in a directory of the local filesystem.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Result, StoreError};
use crate::key::{is_valid_segment, validate_key, validate_prefix, TEMP_PREFIX};
use crate::range::ByteRange;
use crate::store::{ListDir, Store};

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
///   skips links.
/// - **Partial reads.** [`get_ranges`](Store::get_ranges) opens the file once, seeks, and reads
///   only the bytes asked for.
/// - **Tidy deletes.** Deleting a key removes the directories it leaves empty, up to the root.
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
        let metadata = fs::metadata(&root).map_err(root_error)?;
        if !metadata.is_dir() {
            return Err(root_error(io::Error::new(
                ErrorKind::NotADirectory,
                "not a directory",
            )));
        }
        Ok(Self {
            root,
            durable: false,
        })
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

    /// Whether [`set`](Store::set) flushes the value and its directory to disk (`fsync`)
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

    /// Walks the path of `rel` (a valid key, or a prefix without its `/`) from the root,
    /// refusing symbolic links. Returns the path and metadata of the last component, or `None`
    /// when a component is missing or an intermediate one is not a directory.
    fn walk(&self, name: &str, rel: &str) -> Result<Option<(PathBuf, Metadata)>> {
        let mut path = self.root.clone();
        let mut segments = rel.split('/').peekable();
        while let Some(segment) = segments.next() {
            push_segment(&mut path, name, segment)?;
            let metadata = match fs::symlink_metadata(&path) {
                Ok(metadata) => metadata,
                Err(e) if is_missing(&e) => return Ok(None),
                Err(e) => return Err(StoreError::io(name, e)),
            };
            if metadata.file_type().is_symlink() {
                return Err(symlink_error(name, path));
            }
            if segments.peek().is_none() {
                return Ok(Some((path, metadata)));
            }
            if !metadata.is_dir() {
                return Ok(None);
            }
        }
        Ok(None)
    }

    /// The regular file holding `key`, if any.
    fn find_file(&self, key: &str) -> Result<Option<(PathBuf, Metadata)>> {
        validate_key(key)?;
        Ok(self
            .walk(key, key)?
            .filter(|(_, metadata)| metadata.is_file()))
    }

    /// The directory holding the keys under `prefix`, if any.
    fn find_dir(&self, prefix: &str) -> Result<Option<PathBuf>> {
        validate_prefix(prefix)?;
        let Some(rel) = prefix.strip_suffix('/') else {
            return Ok(Some(self.root.clone()));
        };
        Ok(self
            .walk(prefix, rel)?
            .filter(|(_, metadata)| metadata.is_dir())
            .map(|(path, _)| path))
    }

    /// Opens `key` for reading, or `None` when it does not exist (any more).
    fn open_key(&self, key: &str) -> Result<Option<File>> {
        let Some((path, _)) = self.find_file(key)? else {
            return Ok(None);
        };
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // Do not follow a link swapped in since `find_file`, nor block on a FIFO.
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let file = match options.open(&path) {
            Ok(file) => file,
            Err(e) if is_missing(&e) => return Ok(None),
            Err(e) if is_symlink_refusal(&e) => return Err(symlink_error(key, path)),
            Err(e) => return Err(StoreError::io(key, e)),
        };
        let metadata = file.metadata().map_err(|e| StoreError::io(key, e))?;
        Ok(metadata.is_file().then_some(file))
    }

    /// Makes sure every directory above `key` exists, returning the innermost one.
    fn ensure_parent_dirs(&self, key: &str) -> Result<PathBuf> {
        let mut dir = self.root.clone();
        let Some((parents, _)) = key.rsplit_once('/') else {
            return Ok(dir);
        };
        for (slash, segment) in slash_positions(parents).zip(parents.split('/')) {
            push_segment(&mut dir, key, segment)?;
            let ancestor = &key[..slash];
            let mut ready = false;
            for _ in 0..MAX_ATTEMPTS {
                match fs::symlink_metadata(&dir) {
                    Ok(metadata) if metadata.file_type().is_symlink() => {
                        return Err(symlink_error(key, dir));
                    }
                    Ok(metadata) if metadata.is_dir() => {
                        ready = true;
                        break;
                    }
                    Ok(_) => {
                        return Err(StoreError::KeyConflict {
                            key: key.to_owned(),
                            existing: ancestor.to_owned(),
                        });
                    }
                    Err(e) if e.kind() == ErrorKind::NotFound => match fs::create_dir(&dir) {
                        Ok(()) => {
                            if self.durable {
                                sync_parent(key, &dir)?;
                            }
                            ready = true;
                            break;
                        }
                        // Created by someone else meanwhile: look again.
                        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(StoreError::io(key, e)),
                    },
                    Err(e) => return Err(StoreError::io(key, e)),
                }
            }
            if !ready {
                return Err(StoreError::io(
                    key,
                    io::Error::other("directory keeps changing under a concurrent writer"),
                ));
            }
        }
        Ok(dir)
    }

    /// One attempt at `set`; a `NotFound` I/O error means a concurrent delete removed a
    /// directory and the attempt may be repeated.
    fn try_set(&self, key: &str, value: &[u8]) -> Result<()> {
        let dir = self.ensure_parent_dirs(key)?;
        let name = key.rsplit('/').next().unwrap_or(key);
        let target = dir.join(name);
        match fs::symlink_metadata(&target) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(symlink_error(key, target));
            }
            Ok(metadata) if metadata.is_dir() => {
                return Err(StoreError::KeyConflict {
                    key: key.to_owned(),
                    existing: format!("{key}/"),
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io(key, e)),
        }
        let temp =
            write_temp_file(&dir, value, self.durable).map_err(|e| StoreError::io(key, e))?;
        if let Err(e) = fs::rename(&temp, &target) {
            let _ = fs::remove_file(&temp);
            return Err(if target.is_dir() {
                StoreError::KeyConflict {
                    key: key.to_owned(),
                    existing: format!("{key}/"),
                }
            } else {
                StoreError::io(key, e)
            });
        }
        if self.durable {
            sync_dir(&dir).map_err(|e| StoreError::io(key, e))?;
        }
        Ok(())
    }

    /// Removes the empty directories from `dir` up to (not including) the root.
    fn prune_empty_dirs(&self, mut dir: Option<&Path>) {
        while let Some(path) = dir {
            if path == self.root || !path.starts_with(&self.root) || fs::remove_dir(path).is_err() {
                break;
            }
            dir = path.parent();
        }
    }
}

impl Store for FilesystemStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let Some(mut file) = self.open_key(key)? else {
            return Ok(None);
        };
        let mut read = || -> io::Result<Vec<u8>> {
            let len = usize::try_from(file.metadata()?.len()).map_err(io::Error::other)?;
            let mut value = Vec::new();
            value.try_reserve_exact(len).map_err(io::Error::other)?;
            file.read_to_end(&mut value)?;
            Ok(value)
        };
        read().map(Some).map_err(|e| StoreError::io(key, e))
    }

    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
        let Some(mut file) = self.open_key(key)? else {
            return Ok(None);
        };
        let size = file.metadata().map_err(|e| StoreError::io(key, e))?.len();
        let resolved = ByteRange::resolve_all(key, ranges, size)?;
        let mut read = || -> io::Result<Vec<Vec<u8>>> {
            let mut parts = Vec::with_capacity(resolved.len());
            for range in &resolved {
                let mut part = Vec::new();
                part.try_reserve_exact(range.len())
                    .map_err(io::Error::other)?;
                part.resize(range.len(), 0);
                if !part.is_empty() {
                    file.seek(SeekFrom::Start(range.start as u64))?;
                    file.read_exact(&mut part)?;
                }
                parts.push(part);
            }
            Ok(parts)
        };
        read().map(Some).map_err(|e| StoreError::io(key, e))
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        Ok(self.find_file(key)?.map(|(_, metadata)| metadata.len()))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        let mut attempt = 1;
        loop {
            match self.try_set(key, value) {
                Err(StoreError::Io { source, .. })
                    if source.kind() == ErrorKind::NotFound && attempt < MAX_ATTEMPTS =>
                {
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    fn delete(&self, key: &str) -> Result<()> {
        let Some((path, _)) = self.find_file(key)? else {
            return Ok(());
        };
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if is_missing(&e) => return Ok(()),
            Err(e) => return Err(StoreError::io(key, e)),
        }
        self.prune_empty_dirs(path.parent());
        Ok(())
    }

    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        let Some(dir) = self.find_dir(prefix)? else {
            return Ok(());
        };
        let io_error = |e| StoreError::io(prefix, e);
        if dir == self.root {
            // Empty the root but keep it.
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if is_missing(&e) => return Ok(()),
                Err(e) => return Err(io_error(e)),
            };
            for entry in entries {
                let entry = entry.map_err(io_error)?;
                let path = entry.path();
                let removed = if entry.file_type().map_err(io_error)?.is_dir() {
                    fs::remove_dir_all(&path)
                } else {
                    fs::remove_file(&path)
                };
                match removed {
                    Err(e) if !is_missing(&e) => return Err(io_error(e)),
                    _ => {}
                }
            }
            return Ok(());
        }
        // `remove_dir_all` removes links found inside without following them.
        match fs::remove_dir_all(&dir) {
            Err(e) if !is_missing(&e) => return Err(io_error(e)),
            _ => {}
        }
        self.prune_empty_dirs(dir.parent());
        Ok(())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let Some(dir) = self.find_dir(prefix)? else {
            return Ok(Vec::new());
        };
        let mut keys = Vec::new();
        let mut pending = vec![(dir, prefix.to_owned())];
        while let Some((dir, dir_prefix)) = pending.pop() {
            for (name, kind) in read_entries(&dir).map_err(|e| StoreError::io(prefix, e))? {
                let key = format!("{dir_prefix}{name}");
                match kind {
                    EntryKind::File => keys.push(key),
                    EntryKind::Dir => pending.push((dir.join(&name), key + "/")),
                }
            }
        }
        keys.sort_unstable();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<ListDir> {
        let Some(dir) = self.find_dir(prefix)? else {
            return Ok(ListDir::default());
        };
        let io_error = |e| StoreError::io(prefix, e);
        let mut listing = ListDir::default();
        for (name, kind) in read_entries(&dir).map_err(io_error)? {
            match kind {
                EntryKind::File => listing.keys.push(format!("{prefix}{name}")),
                EntryKind::Dir => {
                    if holds_a_key(dir.join(&name)).map_err(io_error)? {
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

/// What listing makes of a directory entry.
enum EntryKind {
    File,
    Dir,
}

/// The entries of `dir` that can be part of a key: regular files and directories whose names
/// are valid key segments. Temporary files, symbolic links, other kinds of files and names
/// that are not UTF-8 are skipped. A directory deleted meanwhile has no entries.
fn read_entries(dir: &Path) -> io::Result<Vec<(String, EntryKind)>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if is_missing(&e) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) if is_missing(&e) => continue,
            Err(e) => return Err(e),
        };
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if !is_valid_segment(&name) {
            continue;
        }
        // `DirEntry::file_type` does not follow symbolic links.
        let file_type = match entry.file_type() {
            Ok(file_type) => file_type,
            Err(e) if is_missing(&e) => continue,
            Err(e) => return Err(e),
        };
        if file_type.is_file() {
            found.push((name, EntryKind::File));
        } else if file_type.is_dir() {
            found.push((name, EntryKind::Dir));
        }
    }
    Ok(found)
}

/// Whether the directory `dir` holds at least one key, at any depth.
fn holds_a_key(dir: PathBuf) -> io::Result<bool> {
    let mut pending = vec![dir];
    while let Some(dir) = pending.pop() {
        for (name, kind) in read_entries(&dir)? {
            match kind {
                EntryKind::File => return Ok(true),
                EntryKind::Dir => pending.push(dir.join(name)),
            }
        }
    }
    Ok(false)
}

/// Appends one key segment to `path`, refusing a segment that the platform would read as more
/// than a plain file name (a second line of defence behind `validate_key`).
fn push_segment(path: &mut PathBuf, name: &str, segment: &str) -> Result<()> {
    let mut components = Path::new(segment).components();
    match (components.next(), components.next()) {
        (Some(Component::Normal(part)), None) if part == segment => {
            path.push(segment);
            Ok(())
        }
        _ => Err(StoreError::InvalidKey {
            key: name.to_owned(),
            reason: "a segment is not a plain file name on this platform",
        }),
    }
}

/// The byte offsets in `key` at which each of its segments ends.
fn slash_positions(key: &str) -> impl Iterator<Item = usize> + '_ {
    key.match_indices('/')
        .map(|(slash, _)| slash)
        .chain(std::iter::once(key.len()))
}

/// Writes `value` to a new temporary file in `dir`, returning its path. The file is removed
/// again if anything fails.
fn write_temp_file(dir: &Path, value: &[u8], durable: bool) -> io::Result<PathBuf> {
    let (path, mut file) = create_temp_file(dir)?;
    let written = file
        .write_all(value)
        .and_then(|()| if durable { file.sync_all() } else { Ok(()) });
    drop(file);
    match written {
        Ok(()) => Ok(path),
        Err(e) => {
            let _ = fs::remove_file(&path);
            Err(e)
        }
    }
}

/// Creates a temporary file with a fresh name in `dir` (never an existing file).
fn create_temp_file(dir: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let counter = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos());
        let path = dir.join(format!(
            "{TEMP_PREFIX}{}-{counter}-{nanos}",
            std::process::id()
        ));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}

/// Flushes the directory entry of `dir` (after a rename or a new entry) to disk.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        // Directories cannot be opened as files here; the rename itself is what we have.
        let _ = dir;
        Ok(())
    }
}

/// Flushes the parent of the new directory `dir`.
fn sync_parent(key: &str, dir: &Path) -> Result<()> {
    match dir.parent() {
        Some(parent) => sync_dir(parent).map_err(|e| StoreError::io(key, e)),
        None => Ok(()),
    }
}

/// Whether `e` means the path (or one of its directories) does not exist (any more).
fn is_missing(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

/// Whether `e` is an `O_NOFOLLOW` open refusing a symbolic link.
fn is_symlink_refusal(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(code) if code == libc::ELOOP || code == libc::EMLINK)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

fn symlink_error(key: &str, path: PathBuf) -> StoreError {
    StoreError::Symlink {
        key: key.to_owned(),
        path,
    }
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
    }

    #[test]
    fn push_segment_refuses_non_plain_names() {
        let mut path = PathBuf::from("root");
        assert!(push_segment(&mut path, "k", "..").is_err());
        assert!(push_segment(&mut path, "k", "a/b").is_err());
        assert!(push_segment(&mut path, "k", "").is_err());
        assert!(push_segment(&mut path, "k", "-1").is_ok());
        assert_eq!(path, Path::new("root/-1"));
    }

    #[test]
    fn temp_files_have_the_reserved_prefix_and_fresh_names() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let (a, _) = create_temp_file(dir.path())?;
        let (b, _) = create_temp_file(dir.path())?;
        assert_ne!(a, b);
        for path in [a, b] {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            assert!(name.starts_with(TEMP_PREFIX), "{name}");
            assert!(!is_valid_segment(name));
        }
        Ok(())
    }
}
