//! The filesystem store elsewhere than on unix: keys are walked as paths, checking each
//! component with `symlink_metadata` before using the joined path. A component swapped for a
//! link between the check and the use is not caught here (unix walks descriptors instead).

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

use super::MAX_ATTEMPTS;
use super::{keeps_changing, segments, split_key, symlink_error, temp_name, FilesystemStore};
use crate::error::{Result, StoreError};
use crate::key::{is_valid_segment, validate_key, validate_prefix};
use crate::range::{resolve_all, ByteRange};
use crate::store::{ListDir, Store};

impl FilesystemStore {
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
        let file = match OpenOptions::new().read(true).open(&path) {
            Ok(file) => file,
            Err(e) if is_missing(&e) => return Ok(None),
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
        for (slash, segment) in segments(parents) {
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
                return Err(keeps_changing(key));
            }
        }
        Ok(dir)
    }

    /// One attempt at `set`; a `NotFound` I/O error means a concurrent delete removed a
    /// directory and the attempt may be repeated.
    fn try_set(&self, key: &str, value: &[u8]) -> Result<()> {
        let dir = self.ensure_parent_dirs(key)?;
        let (_, name) = split_key(key);
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
        let resolved = resolve_all(key, ranges, size)?;
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
    loop {
        let path = dir.join(temp_name());
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}

/// Flushes the directory entry of `dir` (after a rename or a new entry) to disk.
fn sync_dir(dir: &Path) -> io::Result<()> {
    // Directories cannot be opened as files here; the rename itself is what we have.
    let _ = dir;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn temp_files_are_created_in_the_directory() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let (a, _) = create_temp_file(dir.path())?;
        let (b, _) = create_temp_file(dir.path())?;
        assert_ne!(a, b);
        assert!(a.is_file() && b.is_file());
        Ok(())
    }
}
