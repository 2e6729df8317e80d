//! The few `*at` system calls of the filesystem store's descriptor backend (unix only),
//! through `rustix`, which makes them without `unsafe` of ours: the crate has none.
//!
//! Each function works on one name (a single path segment, never a path) inside a directory
//! given by its descriptor, and none follows a symbolic link in that name, so a caller that
//! walks a key one segment at a time from a descriptor of the root never leaves the root,
//! whatever is renamed meanwhile. Every descriptor is opened with `O_CLOEXEC`. Errors are the
//! call's `errno`, as an `io::Error` (`raw_os_error`).

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::retry_on_intr;

use super::access::{Kind, Stat};

/// A single file name (no `/`): a key segment, or a name read from a directory.
pub(super) trait Name {
    /// Calls `f` with the name as a C string; a name holding NUL is an `InvalidInput` error.
    fn with_c_str<T>(&self, f: impl FnOnce(&CStr) -> io::Result<T>) -> io::Result<T>;
}

impl Name for str {
    fn with_c_str<T>(&self, f: impl FnOnce(&CStr) -> io::Result<T>) -> io::Result<T> {
        bytes_with_c_str(self.as_bytes(), f)
    }
}

impl Name for OsStr {
    fn with_c_str<T>(&self, f: impl FnOnce(&CStr) -> io::Result<T>) -> io::Result<T> {
        bytes_with_c_str(self.as_bytes(), f)
    }
}

/// Calls `f` with `bytes` as a C string.
fn bytes_with_c_str<T>(bytes: &[u8], f: impl FnOnce(&CStr) -> io::Result<T>) -> io::Result<T> {
    // Key segments are short: copy them to the stack rather than allocate on the hot path.
    const ON_STACK: usize = 256;
    let nul = || io::Error::new(io::ErrorKind::InvalidInput, "a file name holds NUL");
    if bytes.len() < ON_STACK {
        let mut buf = [0u8; ON_STACK];
        buf[..bytes.len()].copy_from_slice(bytes);
        f(CStr::from_bytes_with_nul(&buf[..=bytes.len()]).map_err(|_| nul())?)
    } else {
        f(&CString::new(bytes).map_err(|_| nul())?)
    }
}

impl Name for CStr {
    fn with_c_str<T>(&self, f: impl FnOnce(&CStr) -> io::Result<T>) -> io::Result<T> {
        f(self)
    }
}

/// `openat(dir, name, flags | O_CLOEXEC, mode)` (and `O_LARGEFILE`, which rustix adds as
/// `open64` does).
fn open_at(
    dir: BorrowedFd<'_>,
    name: &(impl Name + ?Sized),
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    name.with_c_str(|name| {
        Ok(retry_on_intr(|| {
            rustix::fs::openat(dir, name, flags | OFlags::CLOEXEC, mode)
        })?)
    })
}

/// Opens the relative `path` (segments separated by `/`, no `.` or `..`) under `dir` in one
/// system call, refusing a symbolic link at any component (`ELOOP`) and anything that would
/// resolve outside `dir`: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (Linux 5.6
/// and later). `flags` are `openat` flags (`O_CLOEXEC` and `O_LARGEFILE` are added). `Ok(None)`
/// when the kernel (or a seccomp filter) refuses `openat2` itself: the caller then walks one
/// segment at a time, as it does on other systems.
#[cfg(target_os = "linux")]
pub(super) fn open_beneath(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
) -> io::Result<Option<OwnedFd>> {
    use rustix::fs::ResolveFlags;
    use rustix::io::Errno;
    use std::sync::atomic::Ordering;

    if UNSUPPORTED.load(Ordering::Relaxed) {
        return Ok(None);
    }
    path.with_c_str(|path| loop {
        let opened = rustix::fs::openat2(
            dir,
            path,
            flags | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
        );
        match opened {
            Ok(fd) => return Ok(Some(fd)),
            Err(Errno::INTR) => {}
            // No `openat2` here (before Linux 5.6, or filtered out by a container runtime).
            Err(Errno::NOSYS | Errno::PERM) => {
                UNSUPPORTED.store(true, Ordering::Relaxed);
                return Ok(None);
            }
            Err(error) => return Err(error.into()),
        }
    })
}

/// Set once `openat2` is known to be missing: [`open_beneath`] then answers `Ok(None)`.
#[cfg(target_os = "linux")]
static UNSUPPORTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes [`open_beneath`] answer `Ok(None)` from now on in this process, as on a kernel without
/// `openat2`, so that tests cover the walk one segment at a time.
#[cfg(test)]
pub(super) fn disable_open_beneath() {
    #[cfg(target_os = "linux")]
    UNSUPPORTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// No single-call resolution here: the caller walks one segment at a time.
#[cfg(not(target_os = "linux"))]
pub(super) fn open_beneath(
    _dir: BorrowedFd<'_>,
    _path: &str,
    _flags: OFlags,
) -> io::Result<Option<OwnedFd>> {
    Ok(None)
}

/// The flags of [`open_dir_at`], for [`open_beneath`].
pub(super) const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW);

/// The flags of [`open_file_at`], for [`open_beneath`].
pub(super) const FILE_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY);

/// Opens the directory `name` of `dir` (for reading, `openat` relative to it, `fsync`);
/// `ENOTDIR` when `name` is a symbolic link or anything but a directory.
pub(super) fn open_dir_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<OwnedFd> {
    open_at(dir, name, DIR_FLAGS, Mode::empty())
}

/// Opens `name` of `dir` for reading; `ELOOP` (`EMLINK` on FreeBSD) when it is a symbolic
/// link. Never blocks on a FIFO (`O_NONBLOCK`, which does nothing to regular files).
pub(super) fn open_file_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<File> {
    open_at(dir, name, FILE_FLAGS, Mode::empty()).map(File::from)
}

/// Creates the new file `name` in `dir` for writing (mode 0666 less the umask); `EEXIST` when
/// the name exists, whatever it is, even a dangling symbolic link.
pub(super) fn create_new_file_at(
    dir: BorrowedFd<'_>,
    name: &(impl Name + ?Sized),
) -> io::Result<File> {
    open_at(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::NOCTTY,
        Mode::from_raw_mode(0o666),
    )
    .map(File::from)
}

/// Creates the directory `name` in `dir` (mode 0777 less the umask).
pub(super) fn mkdir_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<()> {
    name.with_c_str(|name| Ok(rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777))?))
}

/// Renames `from` to `to`, both in `dir`, replacing `to` atomically (a link named `to` is
/// replaced, never followed).
pub(super) fn rename_at(
    dir: BorrowedFd<'_>,
    from: &(impl Name + ?Sized),
    to: &(impl Name + ?Sized),
) -> io::Result<()> {
    from.with_c_str(|from| to.with_c_str(|to| Ok(rustix::fs::renameat(dir, from, dir, to)?)))
}

/// Removes the name `name` (not a directory) from `dir`; a link is removed, not its target.
pub(super) fn unlink_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<()> {
    unlinkat(dir, name, AtFlags::empty())
}

/// Removes the empty directory `name` from `dir`; `ENOTDIR` for a link.
pub(super) fn rmdir_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<()> {
    unlinkat(dir, name, AtFlags::REMOVEDIR)
}

fn unlinkat(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized), flags: AtFlags) -> io::Result<()> {
    name.with_c_str(|name| Ok(rustix::fs::unlinkat(dir, name, flags)?))
}

/// The kind and size of `name` in `dir`, not following a link (`fstatat`).
pub(super) fn lstat_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<Stat> {
    name.with_c_str(|name| {
        let stat = retry_on_intr(|| rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW))?;
        Ok(Stat {
            kind: kind_of(FileType::from_raw_mode(stat.st_mode)),
            len: u64::try_from(stat.st_size).unwrap_or(0),
        })
    })
}

/// What the store makes of a file type.
fn kind_of(file_type: FileType) -> Kind {
    match file_type {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    }
}

/// The kind of a directory entry from its `d_type`; `None` for `DT_UNKNOWN` (the filesystem
/// does not tell).
#[cfg(not(any(
    target_os = "solaris",
    target_os = "illumos",
    target_os = "aix",
    target_os = "haiku",
    target_os = "nto",
    target_os = "vita"
)))]
fn entry_kind(file_type: FileType) -> Option<Kind> {
    match file_type {
        FileType::Unknown => None,
        file_type => Some(kind_of(file_type)),
    }
}

/// Flushes the directory (or file) `fd` to disk: after a rename or a new entry in it.
pub(super) fn sync(fd: BorrowedFd<'_>) -> io::Result<()> {
    Ok(retry_on_intr(|| rustix::fs::fsync(fd))?)
}

/// An entry of a directory stream.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) name: CString,
    /// `None` when the filesystem does not tell (ask [`lstat_at`]).
    pub(super) kind: Option<Kind>,
}

/// Whether `name` is `.` or `..`, which a directory stream skips.
fn is_dot(name: &CStr) -> bool {
    name == c"." || name == c".."
}

/// A directory being read, which owns its descriptor: `getdents64` into a buffer of 32 KiB
/// (`rustix::fs::RawDir`), as glibc's `readdir` does, without its `fstat` and `fcntl` calls of
/// `fdopendir`. The entries of one buffer are taken at once (a `RawDir` borrows the buffer, so
/// it lives for one refill), each name copied once, as `readdir` and `to_owned` did.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) struct Dir {
    fd: OwnedFd,
    buf: Box<[std::mem::MaybeUninit<u8>]>,
    /// The entries of the last buffer not yet returned.
    pending: std::collections::VecDeque<Entry>,
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl std::fmt::Debug for Dir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dir")
            .field("fd", &self.fd)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl Dir {
    /// glibc's buffer for a directory whose `st_blksize` is at most 32 KiB (ext4, xfs, tmpfs).
    const BUFFER: usize = 32 * 1024;

    /// Reads the directory `fd`, which must be a descriptor of its own (one from
    /// [`open_dir_at`], not a `dup`: a duplicate shares its read position with the original).
    pub(super) fn new(fd: OwnedFd) -> io::Result<Self> {
        Ok(Self {
            fd,
            buf: Box::new_uninit_slice(Self::BUFFER),
            pending: std::collections::VecDeque::new(),
        })
    }

    /// The descriptor of the directory, for the `*at` calls on its entries.
    pub(super) fn fd(&self) -> io::Result<BorrowedFd<'_>> {
        Ok(std::os::fd::AsFd::as_fd(&self.fd))
    }

    /// The next entry, skipping `.` and `..`; `None` at the end.
    pub(super) fn next_entry(&mut self) -> io::Result<Option<Entry>> {
        loop {
            if let Some(entry) = self.pending.pop_front() {
                return Ok(Some(entry));
            }
            if !self.refill()? {
                return Ok(None);
            }
        }
    }

    /// Reads one buffer of entries (one `getdents64` call) into `pending`; `false` at the end.
    /// `ENOENT` (the directory was removed) is the end, as glibc's `readdir` takes it.
    fn refill(&mut self) -> io::Result<bool> {
        use rustix::io::Errno;

        let mut raw = rustix::fs::RawDir::new(&self.fd, &mut self.buf);
        loop {
            match raw.next() {
                None | Some(Err(Errno::NOENT)) => return Ok(false),
                Some(Err(error)) => return Err(error.into()),
                Some(Ok(entry)) => {
                    let name = entry.file_name();
                    if !is_dot(name) {
                        self.pending.push_back(Entry {
                            name: name.to_owned(),
                            kind: entry_kind(entry.file_type()),
                        });
                    }
                }
            }
            if raw.is_buffer_empty() {
                return Ok(true);
            }
        }
    }
}

/// A directory stream (`fdopendir` / `readdir`, through `rustix::fs::Dir`) that owns its
/// descriptor: the calls of the libc version it replaces, and one more copy of each name
/// (rustix's entry owns one, which `next_entry` copies).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
#[derive(Debug)]
pub(super) struct Dir(rustix::fs::Dir);

#[cfg(not(any(target_os = "linux", target_os = "android")))]
impl Dir {
    /// Reads the directory `fd`, which must be a descriptor of its own (one from
    /// [`open_dir_at`], not a `dup`: a duplicate shares its read position with the original).
    pub(super) fn new(fd: OwnedFd) -> io::Result<Self> {
        Ok(Self(rustix::fs::Dir::new(fd)?))
    }

    /// The descriptor of the directory (`dirfd`), for the `*at` calls on its entries.
    pub(super) fn fd(&self) -> io::Result<BorrowedFd<'_>> {
        Ok(self.0.fd()?)
    }

    /// The next entry, skipping `.` and `..`; `None` at the end.
    pub(super) fn next_entry(&mut self) -> io::Result<Option<Entry>> {
        loop {
            let Some(entry) = self.0.read().transpose()? else {
                return Ok(None);
            };
            let name = entry.file_name();
            if is_dot(name) {
                continue;
            }
            #[cfg(not(any(
                target_os = "solaris",
                target_os = "illumos",
                target_os = "aix",
                target_os = "haiku",
                target_os = "nto",
                target_os = "vita"
            )))]
            let kind = entry_kind(entry.file_type());
            #[cfg(any(
                target_os = "solaris",
                target_os = "illumos",
                target_os = "aix",
                target_os = "haiku",
                target_os = "nto",
                target_os = "vita"
            ))]
            let kind = None;
            return Ok(Some(Entry {
                name: name.to_owned(),
                kind,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::io::Errno;
    use std::os::fd::AsFd;

    #[test]
    fn names_become_c_strings_on_the_stack_or_the_heap() -> io::Result<()> {
        let long = "x".repeat(300);
        for name in ["a", "-1", long.as_str()] {
            let back = name.with_c_str(|c| Ok(c.to_str().map(str::to_owned)))?;
            assert_eq!(back.as_deref(), Ok(name));
        }
        assert!("a\0b".with_c_str(|_| Ok(())).is_err());
        Ok(())
    }

    fn errno(e: io::Error) -> Option<Errno> {
        Errno::from_io_error(&e)
    }

    /// `openat` relative to a directory descriptor, and its errors.
    #[test]
    fn directories_open_relative_to_their_parent() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir(dir.path().join("sub"))?;
        std::fs::write(dir.path().join("sub/file"), b"x")?;
        let root = File::open(dir.path())?;
        let sub = open_dir_at(root.as_fd(), "sub")?;
        assert!(File::from(sub.try_clone()?).metadata()?.is_dir());
        assert_eq!(
            open_dir_at(root.as_fd(), "missing").map_err(errno).err(),
            Some(Some(Errno::NOENT))
        );
        assert_eq!(
            open_dir_at(sub.as_fd(), "file").map_err(errno).err(),
            Some(Some(Errno::NOTDIR))
        );
        Ok(())
    }

    /// Every entry of `stream` with its kind (asking `fstatat` where `d_type` does not tell),
    /// sorted by name.
    fn read_all(stream: &mut Dir) -> io::Result<Vec<(String, Kind)>> {
        let mut found = Vec::new();
        while let Some(entry) = stream.next_entry()? {
            let kind = match entry.kind {
                Some(kind) => kind,
                None => lstat_at(stream.fd()?, entry.name.as_c_str())?.kind,
            };
            found.push((entry.name.into_string().unwrap_or_default(), kind));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(found)
    }

    #[test]
    fn directory_streams_list_every_entry_with_its_kind() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("file"), b"x")?;
        std::fs::create_dir(dir.path().join("sub"))?;
        std::os::unix::fs::symlink("file", dir.path().join("link"))?;
        let root = File::open(dir.path())?;
        let mut stream = Dir::new(open_dir_at(root.as_fd(), c".")?)?;
        assert_eq!(
            read_all(&mut stream)?,
            [
                ("file".to_owned(), Kind::File),
                ("link".to_owned(), Kind::Symlink),
                ("sub".to_owned(), Kind::Dir)
            ]
        );
        // the end stays the end
        assert!(stream.next_entry()?.is_none());
        Ok(())
    }

    /// A directory whose entries fill many reads of the stream's buffer (about 180 KiB of
    /// `dirent64` records): each entry comes once, none is lost between two reads.
    #[test]
    fn a_directory_larger_than_one_read_lists_every_entry_once() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let names: Vec<String> = (0..3000)
            .map(|i| format!("chunk.{i:04}.{:0>30}", i % 7))
            .collect();
        for name in &names {
            File::create(dir.path().join(name))?;
        }
        let root = File::open(dir.path())?;
        let mut stream = Dir::new(open_dir_at(root.as_fd(), c".")?)?;
        let found = read_all(&mut stream)?;
        let mut expected: Vec<(String, Kind)> =
            names.into_iter().map(|name| (name, Kind::File)).collect();
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(found, expected);
        Ok(())
    }

    /// A directory removed while it is read ends its stream (Linux answers `ENOENT`), as
    /// glibc's `readdir` has it.
    #[test]
    fn a_removed_directory_reads_as_empty() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir(dir.path().join("sub"))?;
        let root = File::open(dir.path())?;
        let mut stream = Dir::new(open_dir_at(root.as_fd(), "sub")?)?;
        rmdir_at(root.as_fd(), "sub")?;
        assert!(stream.next_entry()?.is_none());
        Ok(())
    }

    #[test]
    fn links_are_refused_not_followed() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir(dir.path().join("sub"))?;
        std::os::unix::fs::symlink("sub", dir.path().join("link"))?;
        let root = File::open(dir.path())?;
        let root = root.as_fd();
        assert!(open_dir_at(root, "link").is_err());
        assert!(open_file_at(root, "link").is_err());
        assert!(create_new_file_at(root, "link").is_err());
        assert_eq!(lstat_at(root, "link")?.kind, Kind::Symlink);
        assert_eq!(lstat_at(root, "sub")?.kind, Kind::Dir);
        Ok(())
    }
}
