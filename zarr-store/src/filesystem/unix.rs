//! Directory access through descriptors (unix): the store's root is opened once, and every
//! other directory is opened relative to the descriptor of its parent with
//! `openat(O_NOFOLLOW | O_DIRECTORY)`, its files read, created, renamed or removed relative to
//! its descriptor. On Linux 5.6 and later the folders of a key (or the whole key, for reads)
//! are opened in one `openat2` call with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`. No path is
//! ever resolved twice, so nothing renamed meanwhile (a folder swapped for a link) can lead an
//! operation out of the root. The system calls are wrapped in `sys`.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

use rustix::fs::OFlags;
use rustix::io::Errno;

use super::access::{DirAccess, Entry, Open, Stat};
use super::not_a_directory;
use super::sys;

/// The descriptor backend: the root directory, opened once (`O_DIRECTORY | O_CLOEXEC`) and
/// shared by the clones of the store.
#[derive(Debug, Clone)]
pub(super) struct Descriptors {
    root: Arc<OwnedFd>,
}

fn has_errno(e: &io::Error, code: Errno) -> bool {
    Errno::from_io_error(e) == Some(code)
}

/// Whether opening a directory failed because there is nothing by that name.
fn is_missing(e: &io::Error) -> bool {
    has_errno(e, Errno::NOENT)
}

/// Whether opening a file for reading failed because there is none: nothing by that name
/// (`ENOENT`) or a socket (`ENXIO`).
fn is_not_a_file(e: &io::Error) -> bool {
    is_missing(e) || has_errno(e, Errno::NXIO)
}

/// Sorts the outcome of an `O_NOFOLLOW` open, where `missing` tells the errors that mean there
/// is nothing to open: a symbolic link fails with `ELOOP` (`EMLINK` on FreeBSD) and, with
/// `O_DIRECTORY`, a link or anything but a directory with `ENOTDIR`.
fn sort<T>(opened: io::Result<T>, missing: fn(&io::Error) -> bool) -> io::Result<Open<T>> {
    match opened {
        Ok(opened) => Ok(Open::Opened(opened)),
        Err(e) if missing(&e) => Ok(Open::Missing),
        Err(e)
            if matches!(
                Errno::from_io_error(&e),
                Some(Errno::LOOP | Errno::MLINK | Errno::NOTDIR)
            ) =>
        {
            Ok(Open::NotFollowed)
        }
        Err(e) => Err(e),
    }
}

/// [`sort`] for an `openat2` in one call: `None` (walk instead) when the kernel has none, or
/// for a link, anything else on the way or another error.
fn sort_beneath<T>(
    opened: io::Result<Option<T>>,
    missing: fn(&io::Error) -> bool,
) -> Option<Open<T>> {
    match sort(opened.transpose()?, missing) {
        Ok(Open::NotFollowed) | Err(_) => None,
        Ok(open) => Some(open),
    }
}

impl DirAccess for Descriptors {
    type Dir = OwnedFd;
    type DirRef<'a> = BorrowedFd<'a>;
    type Stream = sys::Dir;

    fn open_root(root: &Path) -> io::Result<Self> {
        // std adds `O_CLOEXEC`; the root itself may be a link, followed here, once.
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(OFlags::DIRECTORY.bits().cast_signed())
            .open(root)
            .map_err(|e| {
                if has_errno(&e, Errno::NOTDIR) {
                    not_a_directory()
                } else {
                    e
                }
            })?;
        Ok(Self {
            root: Arc::new(OwnedFd::from(dir)),
        })
    }

    fn root(&self) -> BorrowedFd<'_> {
        self.root.as_fd()
    }

    fn borrow(dir: &OwnedFd) -> BorrowedFd<'_> {
        dir.as_fd()
    }

    fn reopen(dir: BorrowedFd<'_>) -> io::Result<OwnedFd> {
        sys::open_dir_at(dir, c".")
    }

    fn open_dirs_beneath(&self, path: &str) -> Option<Open<OwnedFd>> {
        sort_beneath(
            sys::open_beneath(self.root(), path, sys::DIR_FLAGS),
            is_missing,
        )
    }

    fn open_file_beneath(&self, path: &str) -> Option<Open<File>> {
        let opened = sys::open_beneath(self.root(), path, sys::FILE_FLAGS);
        sort_beneath(opened.map(|fd| fd.map(File::from)), is_not_a_file)
    }

    fn open_dir(
        dir: BorrowedFd<'_>,
        name: &(impl AsRef<OsStr> + ?Sized),
    ) -> io::Result<Open<OwnedFd>> {
        sort(sys::open_dir_at(dir, name.as_ref()), is_missing)
    }

    fn open_file(
        dir: BorrowedFd<'_>,
        name: &(impl AsRef<OsStr> + ?Sized),
    ) -> io::Result<Open<File>> {
        sort(sys::open_file_at(dir, name.as_ref()), is_not_a_file)
    }

    fn create_new_file(
        dir: BorrowedFd<'_>,
        name: &(impl AsRef<OsStr> + ?Sized),
    ) -> io::Result<File> {
        sys::create_new_file_at(dir, name.as_ref())
    }

    fn mkdir(dir: BorrowedFd<'_>, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<()> {
        sys::mkdir_at(dir, name.as_ref())
    }

    fn rename(
        dir: BorrowedFd<'_>,
        from: &(impl AsRef<OsStr> + ?Sized),
        to: &(impl AsRef<OsStr> + ?Sized),
    ) -> io::Result<()> {
        sys::rename_at(dir, from.as_ref(), to.as_ref())
    }

    fn unlink(dir: BorrowedFd<'_>, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<()> {
        sys::unlink_at(dir, name.as_ref())
    }

    fn rmdir(dir: BorrowedFd<'_>, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<()> {
        sys::rmdir_at(dir, name.as_ref())
    }

    fn lstat(dir: BorrowedFd<'_>, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<Option<Stat>> {
        match sys::lstat_at(dir, name.as_ref()) {
            Ok(stat) => Ok(Some(stat)),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn sync(dir: BorrowedFd<'_>) -> io::Result<()> {
        sys::sync(dir)
    }

    fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
        // `pread`: one system call per range, no seek.
        file.read_exact_at(buf, offset)
    }

    fn read_dir(dir: OwnedFd) -> io::Result<sys::Dir> {
        sys::Dir::new(dir)
    }

    fn stream_dir(stream: &sys::Dir) -> io::Result<BorrowedFd<'_>> {
        stream.fd()
    }

    fn next_entry(stream: &mut sys::Dir) -> io::Result<Option<Entry>> {
        Ok(stream.next_entry()?.map(|entry| Entry {
            name: OsString::from_vec(entry.name.into_bytes()),
            kind: entry.kind,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::FilesystemStore;
    use super::*;
    use crate::error::{Result, StoreError};
    use crate::store::Store;

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
}
