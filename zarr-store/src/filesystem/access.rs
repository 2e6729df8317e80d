//! The directory access that the filesystem store is written against, and that each backend
//! implements: `unix` with descriptors, `portable` with paths.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::Path;

/// What a name in a directory is, not following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket, device...
    Other,
}

/// The kind and size of a name, not following a link.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stat {
    pub(super) kind: Kind,
    pub(super) len: u64,
}

/// An entry of a directory being read (never `.` or `..`).
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) name: OsString,
    /// `None` when the directory does not tell (ask [`DirAccess::lstat`]).
    pub(super) kind: Option<Kind>,
}

/// The outcome of opening a name without following a link.
#[derive(Debug)]
pub(super) enum Open<T> {
    /// Opened. A file may still turn out not to be a regular one (its metadata tells).
    Opened(T),
    /// Nothing by that name (any more); for a file, also nothing that can be read as one.
    Missing,
    /// A symbolic link, or (opening a directory) anything but a directory: look with
    /// [`DirAccess::lstat`] to tell which.
    NotFollowed,
}

/// Access to the directories of a store, one name at a time.
///
/// Every name is a single path segment (a key segment, or a name read from a directory) inside
/// a directory given by a handle the backend opened, and no operation follows a symbolic link
/// in that name. A name that does not exist (any more) is an error of kind
/// [`io::ErrorKind::NotFound`] (or `None`, [`Open::Missing`]); every other answer is left to
/// the store. The root is opened once, by [`open_root`](Self::open_root).
pub(super) trait DirAccess: Sized {
    /// An open directory: a descriptor, or a path.
    type Dir;
    /// A borrowed [`Dir`](Self::Dir), or the root.
    type DirRef<'a>: Copy;
    /// A directory being read, with the handle of its directory.
    type Stream;

    /// Opens the existing directory `root` (a link is followed here, once).
    fn open_root(root: &Path) -> io::Result<Self>;
    /// The root directory.
    fn root(&self) -> Self::DirRef<'_>;
    /// Borrows an open directory.
    fn borrow(dir: &Self::Dir) -> Self::DirRef<'_>;
    /// A handle of its own to `dir`, to read it (on unix a new open file description, since a
    /// `dup` would share its read position).
    fn reopen(dir: Self::DirRef<'_>) -> io::Result<Self::Dir>;
    /// Opens the folders `path` (`a/b`) below the root in one call, when the backend can
    /// (Linux 5.6+); `None` when it cannot or meets anything but a plain folder on the way, in
    /// which case the store walks one segment at a time, which tells the cases apart.
    fn open_dirs_beneath(&self, path: &str) -> Option<Open<Self::Dir>>;
    /// Opens the key `path` below the root for reading in one call: as
    /// [`open_dirs_beneath`](Self::open_dirs_beneath).
    fn open_file_beneath(&self, path: &str) -> Option<Open<File>>;
    /// Opens the directory `name` of `dir`.
    fn open_dir(
        dir: Self::DirRef<'_>,
        name: &(impl AsRef<OsStr> + ?Sized),
    ) -> io::Result<Open<Self::Dir>>;
    /// Opens `name` of `dir` for reading, without blocking on a FIFO.
    fn open_file(
        dir: Self::DirRef<'_>,
        name: &(impl AsRef<OsStr> + ?Sized),
    ) -> io::Result<Open<File>>;
    /// Creates the new file `name` in `dir` for writing; [`io::ErrorKind::AlreadyExists`] when the
    /// name exists, whatever it is.
    fn create_new_file(
        dir: Self::DirRef<'_>,
        name: &(impl AsRef<OsStr> + ?Sized),
    ) -> io::Result<File>;
    /// Creates the directory `name` in `dir`; [`io::ErrorKind::AlreadyExists`] when the name exists.
    fn mkdir(dir: Self::DirRef<'_>, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<()>;
    /// Renames `from` to `to`, both in `dir`, replacing a file `to` atomically.
    fn rename(
        dir: Self::DirRef<'_>,
        from: &(impl AsRef<OsStr> + ?Sized),
        to: &(impl AsRef<OsStr> + ?Sized),
    ) -> io::Result<()>;
    /// Removes `name` (not a directory; a link is removed, not its target) from `dir`.
    fn unlink(dir: Self::DirRef<'_>, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<()>;
    /// Removes the empty directory `name` from `dir`.
    fn rmdir(dir: Self::DirRef<'_>, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<()>;
    /// The kind and size of `name` in `dir`, or `None` when there is no such name.
    fn lstat(
        dir: Self::DirRef<'_>,
        name: &(impl AsRef<OsStr> + ?Sized),
    ) -> io::Result<Option<Stat>>;
    /// Flushes the entries of `dir` (after a rename or a new entry) to disk, where the
    /// platform can.
    fn sync(dir: Self::DirRef<'_>) -> io::Result<()>;
    /// Reads exactly `buf.len()` bytes of `file` from `offset`.
    fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Starts reading the directory `dir`.
    fn read_dir(dir: Self::Dir) -> io::Result<Self::Stream>;
    /// The directory that `stream` reads, for the operations on its entries (fallible where
    /// the stream is a C `DIR`: `dirfd`).
    fn stream_dir(stream: &Self::Stream) -> io::Result<Self::DirRef<'_>>;
    /// The next entry of `stream`, `None` at the end.
    fn next_entry(stream: &mut Self::Stream) -> io::Result<Option<Entry>>;
}
