//! The filesystem store on unix: every key is reached from the descriptor of the root without
//! following a symbolic link, and its file is then opened, created, renamed or removed
//! relative to the descriptor of its folder. On Linux 5.6 and later the folders (or the whole
//! key, for reads) are opened in one `openat2` call with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS`; elsewhere, and whenever that call fails for another reason than a
//! missing name, they are walked one at a time with `openat(O_NOFOLLOW | O_DIRECTORY)`, which
//! also tells a link (an error) from a file in the way (no such key). No path is ever resolved
//! twice, so nothing renamed meanwhile (a folder swapped for a link) can lead an operation out
//! of the root.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::rc::Rc;

use super::sys::{self, Dir, Kind};
use super::MAX_ATTEMPTS;
use super::{keeps_changing, segments, split_key, symlink_error, temp_name, FilesystemStore};
use crate::error::{Result, StoreError};
use crate::key::{is_valid_segment, validate_key, validate_prefix};
use crate::range::{resolve_all, ByteRange};
use crate::store::{ListDir, Store};

/// A directory reached from the root without following a link: the root itself, or a folder
/// below it.
enum DirFd<'a> {
    Root(BorrowedFd<'a>),
    Folder(OwnedFd),
}

impl AsFd for DirFd<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            DirFd::Root(fd) => *fd,
            DirFd::Folder(fd) => fd.as_fd(),
        }
    }
}

fn has_errno(e: &io::Error, code: libc::c_int) -> bool {
    e.raw_os_error() == Some(code)
}

/// Whether `e` means the name does not exist (any more).
fn is_missing(e: &io::Error) -> bool {
    has_errno(e, libc::ENOENT)
}

/// Whether opening a file for reading failed because there is none: nothing by that name
/// (`ENOENT`) or a socket (`ENXIO`).
fn is_not_a_file(e: &io::Error) -> bool {
    is_missing(e) || has_errno(e, libc::ENXIO)
}

/// Whether an `O_NOFOLLOW` open failed because the name is a symbolic link (`ELOOP`, `EMLINK`
/// on FreeBSD) or, with `O_DIRECTORY`, a link or anything but a directory (`ENOTDIR`).
fn is_link_or_not_dir(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(code) if code == libc::ELOOP || code == libc::EMLINK || code == libc::ENOTDIR)
}

impl FilesystemStore {
    fn root_fd(&self) -> BorrowedFd<'_> {
        self.root_dir.as_fd()
    }

    /// Opens the folder `segment` of `parent`, where `rel` is its path under the root and
    /// `name` the key or prefix of the operation. `Ok(None)` when it is missing or not a
    /// folder; [`StoreError::Symlink`] when it is a symbolic link.
    fn open_folder(
        &self,
        parent: BorrowedFd<'_>,
        segment: &str,
        name: &str,
        rel: &str,
    ) -> Result<Option<OwnedFd>> {
        for _ in 0..MAX_ATTEMPTS {
            match sys::open_dir_at(parent, segment) {
                Ok(fd) => return Ok(Some(fd)),
                Err(e) if is_missing(&e) => return Ok(None),
                // Rare: tell a link from a file (the same error on Linux).
                Err(e) if is_link_or_not_dir(&e) => match sys::lstat_at(parent, segment) {
                    Ok(stat) if stat.kind == Kind::Symlink => {
                        return Err(symlink_error(name, self.root.join(rel)));
                    }
                    Ok(stat) if stat.kind == Kind::Dir => {} // swapped back meanwhile
                    Ok(_) => return Ok(None),
                    Err(e) if is_missing(&e) => return Ok(None),
                    Err(e) => return Err(StoreError::io(name, e)),
                },
                Err(e) => return Err(StoreError::io(name, e)),
            }
        }
        Err(keeps_changing(name))
    }

    /// Opens the folders of `folders` (`a/b`, or `""` for the root) one below the other.
    /// `Ok(None)` when one is missing or not a folder.
    fn open_folders(&self, name: &str, folders: &str) -> Result<Option<DirFd<'_>>> {
        let mut dir = DirFd::Root(self.root_fd());
        if folders.is_empty() {
            return Ok(Some(dir));
        }
        // The common case in one system call; a link, a file or a race on the way (or no
        // `openat2`) falls back to the walk below, which tells them apart.
        match sys::open_beneath(self.root_fd(), folders, sys::DIR_FLAGS) {
            Ok(Some(fd)) => return Ok(Some(DirFd::Folder(fd))),
            Err(e) if is_missing(&e) => return Ok(None),
            Ok(None) | Err(_) => {}
        }
        for (end, segment) in segments(folders) {
            match self.open_folder(dir.as_fd(), segment, name, &folders[..end])? {
                Some(fd) => dir = DirFd::Folder(fd),
                None => return Ok(None),
            }
        }
        Ok(Some(dir))
    }

    /// Like [`open_folders`](Self::open_folders), keeping every folder open (the innermost
    /// last), for removing the empty ones afterwards.
    fn open_chain(&self, name: &str, folders: &str) -> Result<Option<Vec<OwnedFd>>> {
        let mut chain: Vec<OwnedFd> = Vec::new();
        if folders.is_empty() {
            return Ok(Some(chain));
        }
        for (end, segment) in segments(folders) {
            let parent = chain.last().map_or(self.root_fd(), AsFd::as_fd);
            match self.open_folder(parent, segment, name, &folders[..end])? {
                Some(fd) => chain.push(fd),
                None => return Ok(None),
            }
        }
        Ok(Some(chain))
    }

    /// A descriptor of its own (not shared with another reader) of the folder of `prefix`,
    /// or `None` when it is missing or not a folder.
    fn prefix_dir(&self, prefix: &str) -> Result<Option<OwnedFd>> {
        validate_prefix(prefix)?;
        let folders = prefix.strip_suffix('/').unwrap_or("");
        match self.open_folders(prefix, folders)? {
            Some(DirFd::Folder(fd)) => Ok(Some(fd)),
            // The root: a new open file description, since a `dup` would share the read
            // position with the store's descriptor (and any other thread listing it).
            Some(DirFd::Root(root)) => match sys::open_dir_at(root, c".") {
                Ok(fd) => Ok(Some(fd)),
                Err(e) if is_missing(&e) => Ok(None),
                Err(e) => Err(StoreError::io(prefix, e)),
            },
            None => Ok(None),
        }
    }

    /// Opens `key` for reading, with its size, or `None` when it is not a regular file.
    fn open_key(&self, key: &str) -> Result<Option<(std::fs::File, u64)>> {
        validate_key(key)?;
        // The whole key in one system call when the kernel can; see `open_folders`.
        let file = match sys::open_beneath(self.root_fd(), key, sys::FILE_FLAGS) {
            Ok(Some(fd)) => std::fs::File::from(fd),
            Err(e) if is_not_a_file(&e) => return Ok(None),
            Ok(None) | Err(_) => match self.walk_to_file(key)? {
                Some(file) => file,
                None => return Ok(None),
            },
        };
        let metadata = file.metadata().map_err(|e| StoreError::io(key, e))?;
        Ok(metadata.is_file().then_some((file, metadata.len())))
    }

    /// Opens `key` for reading one segment at a time, or `None` when there is no file to read.
    fn walk_to_file(&self, key: &str) -> Result<Option<std::fs::File>> {
        let (folders, file_name) = split_key(key);
        let Some(dir) = self.open_folders(key, folders)? else {
            return Ok(None);
        };
        match sys::open_file_at(dir.as_fd(), file_name) {
            Ok(file) => Ok(Some(file)),
            Err(e) if is_not_a_file(&e) => Ok(None),
            Err(e) if is_link_or_not_dir(&e) => Err(symlink_error(key, self.root.join(key))),
            Err(e) => Err(StoreError::io(key, e)),
        }
    }

    /// Opens (creating them as needed) the folders above `key`, returning the innermost one.
    fn make_folders(&self, key: &str) -> Result<DirFd<'_>> {
        let (folders, _) = split_key(key);
        let mut dir = DirFd::Root(self.root_fd());
        if folders.is_empty() {
            return Ok(dir);
        }
        // Folders that exist already (the common case) in one system call.
        if let Ok(Some(fd)) = sys::open_beneath(self.root_fd(), folders, sys::DIR_FLAGS) {
            return Ok(DirFd::Folder(fd));
        }
        for (end, segment) in segments(folders) {
            let ancestor = &key[..end];
            let mut opened = None;
            for _ in 0..MAX_ATTEMPTS {
                match sys::open_dir_at(dir.as_fd(), segment) {
                    Ok(fd) => {
                        opened = Some(fd);
                        break;
                    }
                    // A `NotFound` error when `dir` itself was removed by a concurrent delete:
                    // `set` then starts again from the root.
                    Err(e) if is_missing(&e) => match sys::mkdir_at(dir.as_fd(), segment) {
                        Ok(()) => {
                            if self.durable {
                                sys::sync(dir.as_fd()).map_err(|e| StoreError::io(key, e))?;
                            }
                        }
                        // Created by someone else meanwhile: open it.
                        Err(e) if has_errno(&e, libc::EEXIST) => {}
                        Err(e) => return Err(StoreError::io(key, e)),
                    },
                    Err(e) if is_link_or_not_dir(&e) => {
                        match sys::lstat_at(dir.as_fd(), segment) {
                            Ok(stat) if stat.kind == Kind::Symlink => {
                                return Err(symlink_error(key, self.root.join(ancestor)));
                            }
                            // Swapped back, or removed, meanwhile: look again.
                            Ok(stat) if stat.kind == Kind::Dir => {}
                            Err(e) if is_missing(&e) => {}
                            Ok(_) => {
                                return Err(StoreError::KeyConflict {
                                    key: key.to_owned(),
                                    existing: ancestor.to_owned(),
                                });
                            }
                            Err(e) => return Err(StoreError::io(key, e)),
                        }
                    }
                    Err(e) => return Err(StoreError::io(key, e)),
                }
            }
            match opened {
                Some(fd) => dir = DirFd::Folder(fd),
                None => return Err(keeps_changing(key)),
            }
        }
        Ok(dir)
    }

    /// One attempt at `set`; a `NotFound` I/O error means a concurrent delete removed a
    /// folder and the attempt may be repeated.
    fn try_set(&self, key: &str, value: &[u8]) -> Result<()> {
        let dir = self.make_folders(key)?;
        let dir = dir.as_fd();
        let (_, name) = split_key(key);
        let conflict = || StoreError::KeyConflict {
            key: key.to_owned(),
            existing: format!("{key}/"),
        };
        match sys::lstat_at(dir, name) {
            Ok(stat) if stat.kind == Kind::Symlink => {
                return Err(symlink_error(key, self.root.join(key)));
            }
            Ok(stat) if stat.kind == Kind::Dir => return Err(conflict()),
            Ok(_) => {}
            Err(e) if is_missing(&e) => {}
            Err(e) => return Err(StoreError::io(key, e)),
        }
        let temp = write_temp_file(dir, value, self.durable).map_err(|e| StoreError::io(key, e))?;
        if let Err(e) = sys::rename_at(dir, temp.as_str(), name) {
            let _ = sys::unlink_at(dir, temp.as_str());
            let is_dir = sys::lstat_at(dir, name).is_ok_and(|stat| stat.kind == Kind::Dir);
            return Err(if is_dir {
                conflict()
            } else {
                StoreError::io(key, e)
            });
        }
        if self.durable {
            sys::sync(dir).map_err(|e| StoreError::io(key, e))?;
        }
        Ok(())
    }

    /// Removes the empty folders of `folders` (opened as `chain`), innermost first, up to (not
    /// including) the root. Each is removed by name from its parent's descriptor, so only an
    /// empty directory under the root can go, never a link.
    fn prune_empty_dirs(&self, chain: &[OwnedFd], folders: &str) {
        if folders.is_empty() {
            return;
        }
        for (up, segment) in folders.rsplit('/').enumerate() {
            let depth = chain.len().saturating_sub(up + 1);
            let parent = match depth.checked_sub(1) {
                Some(i) => chain[i].as_fd(),
                None => self.root_fd(),
            };
            if sys::rmdir_at(parent, segment).is_err() {
                break;
            }
        }
    }
}

impl Store for FilesystemStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let Some((mut file, len)) = self.open_key(key)? else {
            return Ok(None);
        };
        let mut read = || -> io::Result<Vec<u8>> {
            let len = usize::try_from(len).map_err(io::Error::other)?;
            let mut value = Vec::new();
            value.try_reserve_exact(len).map_err(io::Error::other)?;
            file.read_to_end(&mut value)?;
            Ok(value)
        };
        read().map(Some).map_err(|e| StoreError::io(key, e))
    }

    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
        let Some((file, size)) = self.open_key(key)? else {
            return Ok(None);
        };
        let resolved = resolve_all(key, ranges, size)?;
        let read = || -> io::Result<Vec<Vec<u8>>> {
            let mut parts = Vec::with_capacity(resolved.len());
            for range in &resolved {
                let mut part = Vec::new();
                part.try_reserve_exact(range.len())
                    .map_err(io::Error::other)?;
                part.resize(range.len(), 0);
                if !part.is_empty() {
                    // `pread`: one system call per range, no seek.
                    file.read_exact_at(&mut part, range.start as u64)?;
                }
                parts.push(part);
            }
            Ok(parts)
        };
        read().map(Some).map_err(|e| StoreError::io(key, e))
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        let (folders, file_name) = split_key(key);
        let Some(dir) = self.open_folders(key, folders)? else {
            return Ok(None);
        };
        match sys::lstat_at(dir.as_fd(), file_name) {
            Ok(stat) => match stat.kind {
                Kind::Symlink => Err(symlink_error(key, self.root.join(key))),
                Kind::File => Ok(Some(stat.len)),
                Kind::Dir | Kind::Other => Ok(None),
            },
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(StoreError::io(key, e)),
        }
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        let mut attempt = 1;
        loop {
            match self.try_set(key, value) {
                Err(StoreError::Io { source, .. })
                    if source.kind() == io::ErrorKind::NotFound && attempt < MAX_ATTEMPTS =>
                {
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    fn delete(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        let (folders, file_name) = split_key(key);
        let Some(chain) = self.open_chain(key, folders)? else {
            return Ok(());
        };
        let dir = chain.last().map_or(self.root_fd(), AsFd::as_fd);
        match sys::lstat_at(dir, file_name) {
            Ok(stat) if stat.kind == Kind::Symlink => {
                return Err(symlink_error(key, self.root.join(key)));
            }
            Ok(stat) if stat.kind == Kind::File => {}
            Ok(_) => return Ok(()), // not a key
            Err(e) if is_missing(&e) => return Ok(()),
            Err(e) => return Err(StoreError::io(key, e)),
        }
        match sys::unlink_at(dir, file_name) {
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
        let parent = chain.last().map_or(self.root_fd(), AsFd::as_fd);
        match sys::rmdir_at(parent, name) {
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
        let mut dir = Dir::new(dir).map_err(io_error)?;
        let mut listing = ListDir::default();
        for (name, kind) in read_entries(&mut dir).map_err(io_error)? {
            match kind {
                EntryKind::File => listing.keys.push(format!("{prefix}{name}")),
                EntryKind::Dir => {
                    let sub = match sys::open_dir_at(dir.fd(), name.as_str()) {
                        Ok(sub) => sub,
                        Err(e) if is_missing(&e) || is_link_or_not_dir(&e) => continue,
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

/// What listing makes of a directory entry.
enum EntryKind {
    File,
    Dir,
}

/// The entries of `dir` that can be part of a key: regular files and directories whose names
/// are valid key segments. Temporary files, symbolic links, other kinds of files and names
/// that are not UTF-8 are skipped. A directory deleted meanwhile has no entries.
fn read_entries(dir: &mut Dir) -> io::Result<Vec<(String, EntryKind)>> {
    let mut found = Vec::new();
    loop {
        let entry = match dir.next_entry() {
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
            None => match sys::lstat_at(dir.fd(), name.as_str()) {
                Ok(stat) => stat.kind,
                Err(e) if is_missing(&e) => continue,
                Err(e) => return Err(e),
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
/// parent's descriptor without following links; folders removed or swapped meanwhile are
/// skipped. At most one descriptor per level of the tree is open at a time.
fn visit_keys(top: OwnedFd, prefix: &str, visit: &mut dyn FnMut(String) -> bool) -> io::Result<()> {
    // Folders still to read: their parent (kept open), their name and their prefix.
    let mut pending: Vec<(Rc<Dir>, String, String)> = Vec::new();
    let mut next = Some((Dir::new(top)?, prefix.to_owned()));
    loop {
        let (mut dir, dir_prefix) = match next.take() {
            Some(next) => next,
            None => {
                let Some((parent, name, sub_prefix)) = pending.pop() else {
                    return Ok(());
                };
                match sys::open_dir_at(parent.fd(), name.as_str()) {
                    Ok(fd) => (Dir::new(fd)?, sub_prefix),
                    Err(e) if is_missing(&e) || is_link_or_not_dir(&e) => continue,
                    Err(e) => return Err(e),
                }
            }
        };
        let entries = read_entries(&mut dir)?;
        let dir = Rc::new(dir);
        for (name, kind) in entries {
            let key = format!("{dir_prefix}{name}");
            match kind {
                EntryKind::File => {
                    if visit(key) {
                        return Ok(());
                    }
                }
                EntryKind::Dir => pending.push((Rc::clone(&dir), name, key + "/")),
            }
        }
    }
}

/// Whether the directory `dir` holds at least one key, at any depth.
fn holds_a_key(dir: OwnedFd) -> io::Result<bool> {
    let mut found = false;
    visit_keys(dir, "", &mut |_| {
        found = true;
        true
    })?;
    Ok(found)
}

/// Removes everything in the directory `top` (which stays), without following links: each
/// entry is removed by name from its directory's descriptor, and folders are opened with
/// `O_NOFOLLOW` from their parent's. Entries removed meanwhile are skipped.
fn remove_contents(top: OwnedFd) -> io::Result<()> {
    // The open folders, outermost first, each with its name in the one before.
    let mut stack: Vec<(Dir, Option<std::ffi::CString>)> = vec![(Dir::new(top)?, None)];
    while let Some((dir, _)) = stack.last_mut() {
        let entry = match dir.next_entry() {
            Ok(entry) => entry,
            Err(e) if is_missing(&e) => None,
            Err(e) => return Err(e),
        };
        let Some(entry) = entry else {
            // Emptied: remove it from its parent.
            if let Some((_, Some(name))) = stack.pop() {
                if let Some((parent, _)) = stack.last() {
                    match sys::rmdir_at(parent.fd(), name.as_c_str()) {
                        Err(e) if !is_missing(&e) => return Err(e),
                        _ => {}
                    }
                }
            }
            continue;
        };
        let name = entry.name;
        let kind = match entry.kind {
            Some(kind) => kind,
            None => match sys::lstat_at(dir.fd(), name.as_c_str()) {
                Ok(stat) => stat.kind,
                Err(e) if is_missing(&e) => continue,
                Err(e) => return Err(e),
            },
        };
        if kind == Kind::Dir {
            match sys::open_dir_at(dir.fd(), name.as_c_str()) {
                Ok(fd) => {
                    let sub = Dir::new(fd)?;
                    stack.push((sub, Some(name)));
                    continue;
                }
                Err(e) if is_missing(&e) => continue,
                Err(e) if is_link_or_not_dir(&e) => {} // no longer a folder: unlink it
                Err(e) => return Err(e),
            }
        }
        match sys::unlink_at(dir.fd(), name.as_c_str()) {
            Err(e) if !is_missing(&e) => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Writes `value` to a new temporary file in `dir`, returning its name. The file is removed
/// again if anything fails.
fn write_temp_file(dir: BorrowedFd<'_>, value: &[u8], durable: bool) -> io::Result<String> {
    let (name, mut file) = create_temp_file(dir)?;
    let written = file
        .write_all(value)
        .and_then(|()| if durable { file.sync_all() } else { Ok(()) });
    drop(file);
    match written {
        Ok(()) => Ok(name),
        Err(e) => {
            let _ = sys::unlink_at(dir, name.as_str());
            Err(e)
        }
    }
}

/// Creates a temporary file with a fresh name in `dir` (never an existing file or link).
fn create_temp_file(dir: BorrowedFd<'_>) -> io::Result<(String, std::fs::File)> {
    loop {
        let name = temp_name();
        match sys::create_new_file_at(dir, name.as_str()) {
            Ok(file) => return Ok((name, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_files_are_created_in_the_directory_of_the_descriptor() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let fd = std::fs::File::open(dir.path())?;
        let (a, _) = create_temp_file(fd.as_fd())?;
        let (b, _) = create_temp_file(fd.as_fd())?;
        assert_ne!(a, b);
        assert!(dir.path().join(&a).is_file() && dir.path().join(&b).is_file());
        Ok(())
    }

    /// The walk one segment at a time alone (a kernel without `openat2`): the store passes the
    /// conformance suite and still refuses links. (Other tests of this process may then run
    /// without `openat2` too; both ways are correct.)
    #[cfg(feature = "testing")]
    #[test]
    fn the_walk_alone_is_a_conforming_store_that_refuses_links() -> Result<()> {
        sys::disable_open_beneath();
        assert!(matches!(
            sys::open_beneath(
                std::fs::File::open("/")
                    .map_err(|e| StoreError::io("", e))?
                    .as_fd(),
                "tmp",
                sys::DIR_FLAGS
            ),
            Ok(None)
        ));
        let dir = tempfile::tempdir().map_err(|e| StoreError::io("", e))?;
        let root = dir.path().join("root");
        let store = FilesystemStore::create(&root)?;
        crate::testing::run_store_conformance(&store);
        std::fs::create_dir(dir.path().join("outside")).map_err(|e| StoreError::io("", e))?;
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("link"))
            .map_err(|e| StoreError::io("", e))?;
        store.set("real/k", b"v")?;
        std::os::unix::fs::symlink(root.join("real/k"), root.join("real/l"))
            .map_err(|e| StoreError::io("", e))?;
        for key in ["link/k", "link/a/b", "real/l"] {
            assert!(
                matches!(store.get(key), Err(StoreError::Symlink { .. })),
                "get {key}"
            );
            assert!(
                matches!(store.size(key), Err(StoreError::Symlink { .. })),
                "size {key}"
            );
            assert!(
                matches!(store.set(key, b"x"), Err(StoreError::Symlink { .. })),
                "set {key}"
            );
            assert!(
                matches!(store.delete(key), Err(StoreError::Symlink { .. })),
                "delete {key}"
            );
        }
        assert!(matches!(
            store.list_prefix("link/"),
            Err(StoreError::Symlink { .. })
        ));
        assert_eq!(store.get("real/k")?, Some(b"v".to_vec()));
        assert_eq!(store.list_prefix("")?, ["real/k"]);
        assert!(std::fs::read_dir(dir.path().join("outside"))
            .map_err(|e| StoreError::io("", e))?
            .next()
            .is_none());
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
}
