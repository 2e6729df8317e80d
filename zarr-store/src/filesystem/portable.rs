//! Directory access through paths, for targets other than unix: a directory is its path, and
//! each name is checked with `symlink_metadata` before its joined path is used. A name swapped
//! for a link between the check and the use is not caught here (the unix backend walks
//! descriptors instead).

use std::ffi::OsStr;
use std::fs::{self, File, FileType, OpenOptions, ReadDir};
use std::io::{self, ErrorKind, Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

use super::access::{DirAccess, Entry, Kind, Open, Stat};
use super::{is_missing, not_a_directory};

/// The path backend: the root directory's absolute path.
#[derive(Debug, Clone)]
pub(super) struct Paths {
    root: PathBuf,
}

/// A directory being read, with its path.
#[derive(Debug)]
pub(super) struct Listing {
    dir: PathBuf,
    entries: ReadDir,
}

/// `dir/name`, refusing a name that the platform would read as more than a plain file name (a
/// second line of defence behind `validate_key`).
fn join(dir: &Path, name: &OsStr) -> io::Result<PathBuf> {
    let mut components = Path::new(name).components();
    match (components.next(), components.next()) {
        (Some(Component::Normal(part)), None) if part == name => Ok(dir.join(name)),
        _ => Err(io::Error::new(
            ErrorKind::InvalidInput,
            "a key segment is not a plain file name on this platform",
        )),
    }
}

/// A directory on the way that stopped being one (removed or replaced meanwhile) makes the
/// name missing, as on unix.
fn lost(e: io::Error) -> io::Error {
    if e.kind() == ErrorKind::NotADirectory {
        io::Error::new(ErrorKind::NotFound, e)
    } else {
        e
    }
}

fn kind_of(file_type: FileType) -> Kind {
    if file_type.is_symlink() {
        Kind::Symlink
    } else if file_type.is_dir() {
        Kind::Dir
    } else if file_type.is_file() {
        Kind::File
    } else {
        Kind::Other
    }
}

/// The metadata of `path`, not following a link; `None` when it does not exist.
fn lstat_path(path: &Path) -> io::Result<Option<fs::Metadata>> {
    match fs::symlink_metadata(path).map_err(lost) {
        Ok(metadata) => Ok(Some(metadata)),
        Err(e) if is_missing(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

impl DirAccess for Paths {
    type Dir = PathBuf;
    type DirRef<'a> = &'a Path;
    type Stream = Listing;

    fn open_root(root: &Path) -> io::Result<Self> {
        if !fs::metadata(root)?.is_dir() {
            return Err(not_a_directory());
        }
        Ok(Self {
            root: root.to_path_buf(),
        })
    }

    fn root(&self) -> &Path {
        &self.root
    }

    fn borrow(dir: &PathBuf) -> &Path {
        dir
    }

    fn reopen(dir: &Path) -> io::Result<PathBuf> {
        Ok(dir.to_path_buf())
    }

    fn open_dirs_beneath(&self, _path: &str) -> Option<Open<PathBuf>> {
        None
    }

    fn open_file_beneath(&self, _path: &str) -> Option<Open<File>> {
        None
    }

    fn open_dir(dir: &Path, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<Open<PathBuf>> {
        let path = join(dir, name.as_ref())?;
        Ok(match lstat_path(&path)? {
            None => Open::Missing,
            // Not followed: `symlink_metadata` of a link is never a directory.
            Some(metadata) if metadata.is_dir() => Open::Opened(path),
            Some(_) => Open::NotFollowed,
        })
    }

    fn open_file(dir: &Path, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<Open<File>> {
        let path = join(dir, name.as_ref())?;
        match lstat_path(&path)? {
            Some(metadata) if metadata.file_type().is_symlink() => return Ok(Open::NotFollowed),
            // Never opened, so a FIFO cannot block.
            Some(metadata) if metadata.is_file() => {}
            Some(_) | None => return Ok(Open::Missing),
        }
        match File::open(&path).map_err(lost) {
            Ok(file) => Ok(Open::Opened(file)),
            Err(e) if is_missing(&e) => Ok(Open::Missing),
            Err(e) => Err(e),
        }
    }

    fn create_new_file(dir: &Path, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<File> {
        let path = join(dir, name.as_ref())?;
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(lost)
    }

    fn mkdir(dir: &Path, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<()> {
        fs::create_dir(join(dir, name.as_ref())?).map_err(lost)
    }

    fn rename(
        dir: &Path,
        from: &(impl AsRef<OsStr> + ?Sized),
        to: &(impl AsRef<OsStr> + ?Sized),
    ) -> io::Result<()> {
        fs::rename(join(dir, from.as_ref())?, join(dir, to.as_ref())?).map_err(lost)
    }

    fn unlink(dir: &Path, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<()> {
        let path = join(dir, name.as_ref())?;
        fs::remove_file(&path).map_err(lost).or_else(|e| {
            // Windows removes a link to a directory as a directory.
            let is_link = lstat_path(&path)?.is_some_and(|m| m.file_type().is_symlink());
            if cfg!(windows) && is_link {
                fs::remove_dir(&path).map_err(lost)
            } else {
                Err(e)
            }
        })
    }

    fn rmdir(dir: &Path, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<()> {
        fs::remove_dir(join(dir, name.as_ref())?).map_err(lost)
    }

    fn lstat(dir: &Path, name: &(impl AsRef<OsStr> + ?Sized)) -> io::Result<Option<Stat>> {
        Ok(
            lstat_path(&join(dir, name.as_ref())?)?.map(|metadata| Stat {
                kind: kind_of(metadata.file_type()),
                len: metadata.len(),
            }),
        )
    }

    fn sync(_dir: &Path) -> io::Result<()> {
        // Directories cannot be opened as files here: the rename itself is what we have.
        Ok(())
    }

    fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let mut file = file;
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }

    fn read_dir(dir: PathBuf) -> io::Result<Listing> {
        let entries = fs::read_dir(&dir).map_err(lost)?;
        Ok(Listing { dir, entries })
    }

    fn stream_dir(stream: &Listing) -> io::Result<&Path> {
        Ok(&stream.dir)
    }

    fn next_entry(stream: &mut Listing) -> io::Result<Option<Entry>> {
        match stream.entries.next() {
            None => Ok(None),
            Some(Err(e)) => Err(lost(e)),
            // `DirEntry::file_type` does not follow symbolic links.
            Some(Ok(entry)) => Ok(Some(Entry {
                name: entry.file_name(),
                kind: entry.file_type().ok().map(kind_of),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_refuses_non_plain_names() {
        let root = Path::new("root");
        for bad in ["..", ".", "a/b", ""] {
            let refused = join(root, OsStr::new(bad)).map_err(|e| e.kind());
            assert_eq!(refused, Err(ErrorKind::InvalidInput), "{bad:?}");
        }
        assert_eq!(
            join(root, OsStr::new("-1")).ok(),
            Some(Path::new("root/-1").to_path_buf())
        );
    }
}
