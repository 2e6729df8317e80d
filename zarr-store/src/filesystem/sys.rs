//! Safe wrappers around the few `*at` system calls of the filesystem store's descriptor
//! backend (unix only); every `unsafe` of the crate is here.
//!
//! Each function works on one name (a single path segment, never a path) inside a directory
//! given by its descriptor, and none follows a symbolic link in that name, so a caller that
//! walks a key one segment at a time from a descriptor of the root never leaves the root,
//! whatever is renamed meanwhile. Every descriptor is opened with `O_CLOEXEC`. Errors are
//! `io::Error::last_os_error()`.

use std::ffi::{c_char, CStr, CString, OsStr};
use std::fs::File;
use std::io;
use std::mem::{offset_of, MaybeUninit};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::ptr::NonNull;

use super::access::{Kind, Stat};

// Large-file variants on glibc, as std uses them: on 32-bit targets the plain ones fail with
// `EOVERFLOW` on files of 2 GiB or more. Elsewhere the plain ones are already 64-bit.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
use libc::{
    dirent as RawDirent, fstatat as raw_fstatat, openat as raw_openat, readdir as raw_readdir,
    stat as RawStat,
};
#[cfg(all(target_os = "linux", target_env = "gnu"))]
use libc::{
    dirent64 as RawDirent, fstatat64 as raw_fstatat, openat64 as raw_openat,
    readdir64 as raw_readdir, stat64 as RawStat,
};

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

/// `-1` as the last OS error.
fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `cvt`, calling again when interrupted by a signal.
fn cvt_retry(mut call: impl FnMut() -> libc::c_int) -> io::Result<libc::c_int> {
    loop {
        match cvt(call()) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            result => return result,
        }
    }
}

/// `openat(dir, name, flags | O_CLOEXEC, mode)`.
fn open_at(
    dir: BorrowedFd<'_>,
    name: &(impl Name + ?Sized),
    flags: libc::c_int,
    mode: libc::c_uint,
) -> io::Result<OwnedFd> {
    name.with_c_str(|name| {
        let fd = cvt_retry(|| {
            // SAFETY: `name` is a NUL-terminated string and `dir` an open descriptor, both
            // alive for the whole call; `openat` keeps neither.
            unsafe {
                raw_openat(
                    dir.as_raw_fd(),
                    name.as_ptr(),
                    flags | libc::O_CLOEXEC,
                    mode,
                )
            }
        })?;
        // SAFETY: `openat` succeeded, so `fd` is a new open descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    })
}

/// Opens the relative `path` (segments separated by `/`, no `.` or `..`) under `dir` in one
/// system call, refusing a symbolic link at any component (`ELOOP`) and anything that would
/// resolve outside `dir`: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (Linux 5.6
/// and later). `flags` are `openat` flags. `Ok(None)` when the kernel (or a seccomp filter)
/// refuses `openat2` itself: the caller then walks one segment at a time, as it does on other
/// systems.
#[cfg(target_os = "linux")]
pub(super) fn open_beneath(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: libc::c_int,
) -> io::Result<Option<OwnedFd>> {
    use std::sync::atomic::Ordering;

    /// `struct open_how` of `linux/openat2.h` (libc's is `non_exhaustive`).
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }

    if UNSUPPORTED.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let how = OpenHow {
        // `O_LARGEFILE`: as `open64` does on 32-bit targets (implied on 64-bit ones).
        flags: u64::from((flags | libc::O_CLOEXEC | libc::O_LARGEFILE).cast_unsigned()),
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS,
    };
    path.with_c_str(|path| loop {
        // SAFETY: `path` is NUL-terminated, `how` is an `open_how` of the size passed and
        // `dir` is open, all alive for the call; `openat2` keeps none of them.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                path.as_ptr(),
                &raw const how,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if let Ok(fd) = libc::c_int::try_from(fd) {
            if fd >= 0 {
                // SAFETY: `openat2` succeeded, so `fd` is a new descriptor nothing else owns.
                return Ok(Some(unsafe { OwnedFd::from_raw_fd(fd) }));
            }
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => {}
            // No `openat2` here (before Linux 5.6, or filtered out by a container runtime).
            Some(libc::ENOSYS | libc::EPERM) => {
                UNSUPPORTED.store(true, Ordering::Relaxed);
                return Ok(None);
            }
            _ => return Err(error),
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
    _flags: libc::c_int,
) -> io::Result<Option<OwnedFd>> {
    Ok(None)
}

/// The flags of [`open_dir_at`], for [`open_beneath`].
pub(super) const DIR_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;

/// The flags of [`open_file_at`], for [`open_beneath`].
pub(super) const FILE_FLAGS: libc::c_int =
    libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;

/// Opens the directory `name` of `dir` (for reading, `openat` relative to it, `fsync`);
/// `ENOTDIR` when `name` is a symbolic link or anything but a directory.
pub(super) fn open_dir_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<OwnedFd> {
    open_at(dir, name, DIR_FLAGS, 0)
}

/// Opens `name` of `dir` for reading; `ELOOP` (`EMLINK` on FreeBSD) when it is a symbolic
/// link. Never blocks on a FIFO (`O_NONBLOCK`, which does nothing to regular files).
pub(super) fn open_file_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<File> {
    open_at(dir, name, FILE_FLAGS, 0).map(File::from)
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
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_NOCTTY,
        0o666,
    )
    .map(File::from)
}

/// Creates the directory `name` in `dir` (mode 0777 less the umask).
pub(super) fn mkdir_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<()> {
    name.with_c_str(|name| {
        // SAFETY: `name` is NUL-terminated and `dir` open, both alive for the call.
        cvt(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) }).map(drop)
    })
}

/// Renames `from` to `to`, both in `dir`, replacing `to` atomically (a link named `to` is
/// replaced, never followed).
pub(super) fn rename_at(
    dir: BorrowedFd<'_>,
    from: &(impl Name + ?Sized),
    to: &(impl Name + ?Sized),
) -> io::Result<()> {
    from.with_c_str(|from| {
        to.with_c_str(|to| {
            let fd = dir.as_raw_fd();
            // SAFETY: both names are NUL-terminated and `dir` open, all alive for the call.
            cvt(unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) }).map(drop)
        })
    })
}

/// Removes the name `name` (not a directory) from `dir`; a link is removed, not its target.
pub(super) fn unlink_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<()> {
    unlinkat(dir, name, 0)
}

/// Removes the empty directory `name` from `dir`; `ENOTDIR` for a link.
pub(super) fn rmdir_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<()> {
    unlinkat(dir, name, libc::AT_REMOVEDIR)
}

fn unlinkat(
    dir: BorrowedFd<'_>,
    name: &(impl Name + ?Sized),
    flags: libc::c_int,
) -> io::Result<()> {
    name.with_c_str(|name| {
        // SAFETY: `name` is NUL-terminated and `dir` open, both alive for the call.
        cvt(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) }).map(drop)
    })
}

/// The kind and size of `name` in `dir`, not following a link.
pub(super) fn lstat_at(dir: BorrowedFd<'_>, name: &(impl Name + ?Sized)) -> io::Result<Stat> {
    name.with_c_str(|name| {
        let mut stat = MaybeUninit::<RawStat>::uninit();
        cvt_retry(|| {
            // SAFETY: `name` is NUL-terminated, `dir` open and `stat` a writable buffer of the
            // type `fstatat` fills, all alive for the call.
            unsafe {
                raw_fstatat(
                    dir.as_raw_fd(),
                    name.as_ptr(),
                    stat.as_mut_ptr(),
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            }
        })?;
        // SAFETY: `fstatat` succeeded, so it filled `stat`.
        let stat = unsafe { stat.assume_init() };
        let kind = match stat.st_mode & libc::S_IFMT {
            libc::S_IFREG => Kind::File,
            libc::S_IFDIR => Kind::Dir,
            libc::S_IFLNK => Kind::Symlink,
            _ => Kind::Other,
        };
        Ok(Stat {
            kind,
            len: u64::try_from(stat.st_size).unwrap_or(0),
        })
    })
}

/// Flushes the directory (or file) `fd` to disk: after a rename or a new entry in it.
pub(super) fn sync(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: `fd` is open for the call.
    cvt_retry(|| unsafe { libc::fsync(fd.as_raw_fd()) }).map(drop)
}

/// An entry of a directory stream.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) name: CString,
    /// `None` when the filesystem does not tell (ask [`lstat_at`]).
    pub(super) kind: Option<Kind>,
}

/// A directory stream (`fdopendir` / `readdir`) that owns its descriptor.
#[derive(Debug)]
pub(super) struct Dir(NonNull<libc::DIR>);

impl Dir {
    /// Reads the directory `fd`, which must be a descriptor of its own (one from
    /// [`open_dir_at`], not a `dup`: a duplicate shares its read position with the original).
    pub(super) fn new(fd: OwnedFd) -> io::Result<Self> {
        // SAFETY: `fd` is an open descriptor; on success the stream owns it and `closedir`
        // closes it, so it is released from `fd` below.
        let stream = unsafe { libc::fdopendir(fd.as_raw_fd()) };
        match NonNull::new(stream) {
            Some(stream) => {
                let _ = fd.into_raw_fd();
                Ok(Self(stream))
            }
            None => Err(io::Error::last_os_error()), // `fd` is closed after errno is read
        }
    }

    /// The descriptor of the directory, for the `*at` calls on its entries.
    pub(super) fn fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the stream stays open while `self` lives, and so does the descriptor that
        // `dirfd` returns (the stream owns it).
        unsafe { BorrowedFd::borrow_raw(libc::dirfd(self.0.as_ptr())) }
    }

    /// The next entry, skipping `.` and `..`; `None` at the end.
    pub(super) fn next_entry(&mut self) -> io::Result<Option<Entry>> {
        loop {
            let errno_cleared = clear_errno();
            // SAFETY: the stream is open, and `&mut self` keeps any other call off it.
            let entry = unsafe { raw_readdir(self.0.as_ptr()) };
            if entry.is_null() {
                let error = io::Error::last_os_error();
                return match error.raw_os_error() {
                    Some(code) if code != 0 && errno_cleared => Err(error),
                    _ => Ok(None),
                };
            }
            let entry = entry.cast::<u8>();
            // SAFETY: a non-null entry stays valid until the next `readdir` or `closedir` on
            // the stream (both need `self`, borrowed here), and its `d_name` is NUL-terminated.
            // The entry may be shorter than `RawDirent` (`d_name` is cut to the name), so only
            // offsets of fields are used, never a reference to the whole struct (as std does).
            let name = unsafe {
                CStr::from_ptr(entry.add(offset_of!(RawDirent, d_name)).cast::<c_char>())
            };
            if name == c"." || name == c".." {
                continue;
            }
            let kind = entry_kind(entry);
            return Ok(Some(Entry {
                name: name.to_owned(),
                kind,
            }));
        }
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: the stream is open and closed once, here; nothing uses it afterwards.
        unsafe { libc::closedir(self.0.as_ptr()) };
    }
}

/// The kind of a directory entry from its `d_type`, where the platform has one.
#[cfg(not(any(
    target_os = "solaris",
    target_os = "illumos",
    target_os = "aix",
    target_os = "haiku",
    target_os = "nto",
    target_os = "vxworks"
)))]
fn entry_kind(entry: *const u8) -> Option<Kind> {
    // SAFETY: `entry` is a live entry from `readdir` (see `next_entry`); `d_type` lies in the
    // fixed part of it.
    let d_type = unsafe { entry.add(offset_of!(RawDirent, d_type)).read() };
    match d_type {
        libc::DT_REG => Some(Kind::File),
        libc::DT_DIR => Some(Kind::Dir),
        libc::DT_LNK => Some(Kind::Symlink),
        libc::DT_UNKNOWN => None,
        _ => Some(Kind::Other),
    }
}

#[cfg(any(
    target_os = "solaris",
    target_os = "illumos",
    target_os = "aix",
    target_os = "haiku",
    target_os = "nto",
    target_os = "vxworks"
))]
fn entry_kind(_entry: *const u8) -> Option<Kind> {
    None
}

#[cfg(any(target_os = "solaris", target_os = "illumos"))]
use libc::___errno as errno_location;
#[cfg(any(
    target_os = "android",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "cygwin"
))]
use libc::__errno as errno_location;
#[cfg(any(
    target_os = "linux",
    target_os = "emscripten",
    target_os = "fuchsia",
    target_os = "hurd",
    target_os = "redox",
    target_os = "dragonfly"
))]
use libc::__errno_location as errno_location;
#[cfg(any(target_vendor = "apple", target_os = "freebsd"))]
use libc::__error as errno_location;

/// Sets `errno` to 0, so that a null `readdir` tells the end of a directory from an error.
/// Returns whether it could (on other platforms a null `readdir` is taken as the end).
#[cfg(any(
    target_os = "linux",
    target_os = "emscripten",
    target_os = "fuchsia",
    target_os = "hurd",
    target_os = "redox",
    target_os = "dragonfly",
    target_os = "android",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "cygwin",
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "solaris",
    target_os = "illumos"
))]
fn clear_errno() -> bool {
    // SAFETY: the function returns a valid pointer to the calling thread's `errno`.
    unsafe { *errno_location() = 0 };
    true
}

#[cfg(not(any(
    target_os = "linux",
    target_os = "emscripten",
    target_os = "fuchsia",
    target_os = "hurd",
    target_os = "redox",
    target_os = "dragonfly",
    target_os = "android",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "cygwin",
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "solaris",
    target_os = "illumos"
)))]
fn clear_errno() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// `errno` cleared and read back: what Miri checks of the system-call wrappers
    /// (`scripts/miri`), beside the C strings above.
    #[test]
    fn errno_is_cleared() {
        // SAFETY: `close(-1)` touches no memory; it only sets `errno` (EBADF)
        assert_eq!(unsafe { libc::close(-1) }, -1);
        assert_eq!(io::Error::last_os_error().raw_os_error(), Some(libc::EBADF));
        assert!(clear_errno());
        assert_eq!(io::Error::last_os_error().raw_os_error(), Some(0));
    }

    /// `openat` relative to a directory descriptor, its errors, and `errno`.
    #[test]
    #[cfg_attr(miri, ignore = "Miri (nightly 2026-05-19) has no openat")]
    fn directories_open_relative_to_their_parent() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir(dir.path().join("sub"))?;
        std::fs::write(dir.path().join("sub/file"), b"x")?;
        let root = File::open(dir.path())?;
        let sub = open_dir_at(root.as_fd(), "sub")?;
        assert!(File::from(sub.try_clone()?).metadata()?.is_dir());
        let errno = |e: io::Error| e.raw_os_error();
        assert_eq!(
            open_dir_at(root.as_fd(), "missing").map_err(errno).err(),
            Some(Some(libc::ENOENT))
        );
        assert_eq!(
            open_dir_at(sub.as_fd(), "file").map_err(errno).err(),
            Some(Some(libc::ENOTDIR))
        );
        assert!(clear_errno());
        assert_eq!(io::Error::last_os_error().raw_os_error(), Some(0));
        Ok(())
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri has no fdopendir")]
    fn directory_streams_list_every_entry_with_its_kind() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("file"), b"x")?;
        std::fs::create_dir(dir.path().join("sub"))?;
        std::os::unix::fs::symlink("file", dir.path().join("link"))?;
        let root = File::open(dir.path())?;
        let mut stream = Dir::new(open_dir_at(root.as_fd(), c".")?)?;
        let mut found = Vec::new();
        while let Some(entry) = stream.next_entry()? {
            let kind = match entry.kind {
                Some(kind) => kind,
                None => lstat_at(stream.fd(), entry.name.as_c_str())?.kind,
            };
            found.push((entry.name.into_string().unwrap_or_default(), kind));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            found,
            [
                ("file".to_owned(), Kind::File),
                ("link".to_owned(), Kind::Symlink),
                ("sub".to_owned(), Kind::Dir)
            ]
        );
        Ok(())
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri has no fstatat, no O_NOCTTY in openat")]
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
