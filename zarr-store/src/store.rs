//! The `Store` trait and its blanket extension `StoreExt`.

use std::fmt;
use std::sync::Arc;

use crate::error::{Result, StoreError};
use crate::fetch::{Deliver, Fetch, Write};
use crate::key::validate_key;
use crate::range::{resolve_all, ByteRange};

pub use zarr_buffer::Piece;

/// A key-value store: the storage layer under Zarr, which it knows nothing about.
///
/// Keys are relative `/`-separated paths (`a/b/zarr.json`, `arr/c/0/-1/2`) checked by
/// [`validate_key`]; prefixes are `""` or a key followed by `/` (`arr/c/`), checked by
/// [`validate_prefix`](crate::validate_prefix). Every method refuses an invalid key or prefix
/// with [`StoreError::InvalidKey`] or [`StoreError::InvalidPrefix`] before touching anything.
///
/// A missing key is not an error: reads return `Ok(None)` and deletes succeed. A store may
/// refuse a key that is also a prefix of other keys (`a` and `a/b`) with
/// [`StoreError::KeyConflict`]; [`MemoryStore`](crate::MemoryStore) and
/// [`FilesystemStore`](crate::FilesystemStore) both do, so they behave alike.
///
/// The trait is object safe (`&dyn Store`, `Arc<dyn Store>`, also stores themselves through
/// `&S`, `Box<S>` and `Arc<S>`); convenience methods live in [`StoreExt`], implemented for
/// every store. Stores are `Debug` so that types holding one can derive it. Every implementation should pass
/// `zarr_store::testing::run_store_conformance` (cargo feature `testing`).
pub trait Store: Send + Sync + fmt::Debug {
    /// The whole value of `key`, or `None` when it does not exist.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;

    /// Several byte ranges of the value of `key` in one call, in the order asked, or `None`
    /// when the key does not exist.
    ///
    /// Every range must lie inside the value, otherwise the call fails with
    /// [`StoreError::RangeOutOfBounds`] and returns nothing. Only the bytes asked for are read.
    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>>;

    /// The size of the value of `key` in bytes, or `None` when it does not exist.
    fn size(&self, key: &str) -> Result<Option<u64>>;

    /// Stores `value` under `key`, replacing any previous value atomically: a reader sees the
    /// old value or the new one, never a mix.
    fn set(&self, key: &str, value: &[u8]) -> Result<()>;

    /// Stores the value made of `parts`, one after the other, under `key`, as
    /// [`Store::set`] stores one value (a shard written as its inner chunks and its index).
    /// The default joins them and calls `set`; [`FilesystemStore`](crate::FilesystemStore)
    /// writes them with vectored writes, never joined in memory.
    ///
    /// # Errors
    /// As [`Store::set`].
    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        if let [value] = parts {
            return self.set(key, value);
        }
        validate_key(key)?;
        let len = parts
            .iter()
            .map(|p| p.len())
            .fold(0usize, usize::saturating_add);
        let mut value = Vec::new();
        value.try_reserve_exact(len).map_err(|e| {
            StoreError::io(key, std::io::Error::new(std::io::ErrorKind::OutOfMemory, e))
        })?;
        for part in parts {
            value.extend_from_slice(part);
        }
        self.set(key, &value)
    }

    /// Deletes `key`; deleting a missing key succeeds.
    fn delete(&self, key: &str) -> Result<()>;

    /// Deletes every key under `prefix` (`""` deletes everything); a prefix with no keys
    /// succeeds.
    fn delete_prefix(&self, prefix: &str) -> Result<()>;

    /// Every key under `prefix` (full keys, `""` lists the whole store), sorted by byte order.
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>>;

    /// One level under `prefix`, like an S3 listing with delimiter `/`: the keys directly under
    /// it and the prefixes (ending with `/`) that hold further keys, all full and sorted.
    fn list_dir(&self, prefix: &str) -> Result<ListDir>;

    /// Every key under `prefix` with the size of its value in bytes, sorted by key, as
    /// [`Store::list_prefix`] lists them. An object store has the sizes from the listing
    /// itself; the default asks for each size (a key deleted meanwhile is left out).
    fn list_prefix_sizes(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        let mut out = Vec::new();
        for key in self.list_prefix(prefix)? {
            if let Some(size) = self.size(&key)? {
                out.push((key, size));
            }
        }
        Ok(out)
    }

    /// The whole values of `keys`, in their order (`None` for a missing key). A store whose
    /// requests have latency (an object store) fetches them concurrently; the default gets
    /// them one after the other. Fails with the first error.
    fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>> {
        keys.iter().map(|key| self.get(key)).collect()
    }

    /// How many whole-value requests the store serves at once to good effect, for readers
    /// that batch their fetches through [`Store::fetch_each`] or [`Store::get_many`]: 1 (the
    /// default) for a local store, where the reader's own threads are enough; an object
    /// store's [`RemoteOptions::concurrency`](crate::RemoteOptions::concurrency) (256 by
    /// default).
    fn fetch_concurrency(&self) -> usize {
        1
    }

    /// The most bytes a reader of this store should hold fetched and not yet consumed
    /// (decoded) before it consumes them itself rather than hands them on: an object store's
    /// [`RemoteOptions::max_bytes_in_flight`](crate::RemoteOptions::max_bytes_in_flight).
    /// The default, 256 MiB.
    fn max_bytes_in_flight(&self) -> u64 {
        256 << 20
    }

    /// Reads every request of `requests` (whole values, byte ranges, sizes of any keys) and
    /// hands each answer to `deliver` as it arrives, with the request's index, in any order,
    /// never two at once. An error of one request is that request's answer; the others go on.
    ///
    /// A store whose requests have latency keeps many of them in flight at once, whatever
    /// the caller's threads: an object store runs them on its async runtime, up to its
    /// [`fetch_concurrency`](Store::fetch_concurrency) at once and, past its
    /// [`max_bytes_in_flight`](Store::max_bytes_in_flight), no further one until answers are
    /// delivered. `deliver` should be quick (hand the bytes to a decoding pool, say): the next
    /// answers wait while it runs. The default reads them one after the other on the calling
    /// thread, or for a store whose `fetch_concurrency` is above 1, on that many threads.
    ///
    /// ```
    /// use zarr_store::{ByteRange, Fetch, Fetched, MemoryStore, Store};
    ///
    /// let store = MemoryStore::new();
    /// store.set("a", b"0123456789")?;
    /// let index = [ByteRange::Suffix(2)];
    /// let mut sizes = [0u64; 2];
    /// store.fetch_each(&[Fetch::Ranges("a", &index), Fetch::Value("b")], &mut |i, answer| {
    ///     sizes[i] = answer.map_or(u64::MAX, |a| a.len());
    /// })?;
    /// assert_eq!(sizes, [2, 0]);
    /// # Ok::<(), zarr_store::StoreError>(())
    /// ```
    ///
    /// # Errors
    /// Only what keeps the batch from running at all (an object store's runtime that cannot
    /// start); each request's own errors go to `deliver`.
    fn fetch_each(&self, requests: &[Fetch<'_>], deliver: &mut Deliver<'_>) -> Result<()> {
        crate::fetch::fetch_each_on_threads(self, requests, deliver);
        Ok(())
    }

    /// Makes every write of `writes` (values of distinct keys stored or deleted, as
    /// [`Store::set`] and [`Store::delete`] make them), all of them, in any order; then
    /// returns the first error met, if any (the other writes are made all the same).
    ///
    /// A store whose requests have latency keeps many in flight at once, as
    /// [`Store::fetch_each`] does: an object store up to its
    /// [`fetch_concurrency`](Store::fetch_concurrency) PUTs and DELETEs on its runtime. The
    /// default makes them one after the other on the calling thread, or, for a store whose
    /// `fetch_concurrency` is above 1, on that many threads.
    ///
    /// # Errors
    /// The first error of a write (an invalid key, a read-only store, what the storage
    /// reports).
    fn write_each(&self, writes: &[Write<'_>]) -> Result<()> {
        crate::fetch::write_each_on_threads(self, writes)
    }

    /// Whether [`Store::open_value`] opens a value without reading it and then reads each
    /// byte range for little more than the cost of copying it (a local file read with
    /// positioned reads). A reader of many small ranges of one value (a shard's inner chunks)
    /// then opens it once and reads each range where it is decoded, in parallel, rather than
    /// joining them into one request and one value-sized buffer. `false` (the default): the
    /// default [`Store::open_value`] reads the whole value, and an object store's requests
    /// have latency.
    fn cheap_ranged_reads(&self) -> bool {
        false
    }

    /// Whether [`Store::set_if`] is atomic: `true` when a conditional write succeeds only if the
    /// value is still the one its condition names, even against writers in other processes
    /// (memory, filesystem, object stores with conditional puts). The default is `false`:
    /// `set_if` then fails with [`StoreError::NoConditionalWrites`], and callers fall back to
    /// plain [`Store::set`], where the last writer wins.
    fn conditional_writes(&self) -> bool {
        false
    }

    /// The whole value of `key` with its [`Version`], for a later [`Store::set_if`], or `None`
    /// when it does not exist. The default reads the value and versions it by its content,
    /// which is what [`Version::of_content`] compares.
    fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, Version)>> {
        Ok(self.get(key)?.map(|value| {
            let version = Version::of_content(&value);
            (value, version)
        }))
    }

    /// Stores `value` under `key` if `condition` still holds, atomically: `key` is still
    /// absent ([`Condition::Absent`]), or still holds the value of that version
    /// ([`Condition::Matches`], from [`Store::get_versioned`]). A condition that no longer holds
    /// is not an error: the answer is [`Outcome::Conflict`] and nothing is written; re-read,
    /// re-apply and try again.
    ///
    /// # Errors
    /// [`StoreError::NoConditionalWrites`] from a store that cannot write conditionally
    /// ([`Store::conditional_writes`] is `false`; the default), and the errors of
    /// [`Store::set`].
    fn set_if(&self, key: &str, value: &[u8], condition: &Condition) -> Result<Outcome> {
        let _ = (value, condition);
        validate_key(key)?;
        Err(StoreError::NoConditionalWrites {
            key: key.to_owned(),
        })
    }

    /// The value of `key` as it is now, or `None` when it does not exist: a handle to read
    /// some of its bytes and then to replace it with a value made of its own byte ranges and
    /// new bytes ([`StoredValue::replace`]), as a small update of a large value (one inner
    /// chunk of a shard) does. Every read and the kept ranges of the handle see this one
    /// version of the value, whatever is written meanwhile.
    ///
    /// The default reads the whole value now and replaces it with [`Store::set`].
    /// [`FilesystemStore`](crate::FilesystemStore) keeps the file open instead: it reads only
    /// the bytes asked for, and copies the kept ranges into the new value inside the kernel
    /// (`copy_file_range` on Linux), so they never pass through memory.
    ///
    /// ```
    /// use zarr_store::{MemoryStore, Piece, Store, StoreExt};
    ///
    /// let store = MemoryStore::new();
    /// store.set("k", b"0123456789")?;
    /// let value = store.open_value("k")?.expect("stored");
    /// assert_eq!(value.size(), 10);
    /// value.replace(&[Piece::Kept(0..4), Piece::New(b"ab".to_vec()), Piece::Kept(6..10)])?;
    /// assert_eq!(store.get_or_err("k")?, b"0123ab6789");
    /// # Ok::<(), zarr_store::StoreError>(())
    /// ```
    ///
    /// # Errors
    /// An invalid key, and the errors of [`Store::get`].
    fn open_value(&self, key: &str) -> Result<Option<Box<dyn StoredValue + '_>>> {
        Ok(self.get(key)?.map(|value| {
            Box::new(WholeValue {
                store: self,
                key: key.to_owned(),
                value,
            }) as Box<dyn StoredValue + '_>
        }))
    }
}

/// A value opened by [`Store::open_value`]: one version of it, read in part and then
/// replaced (or dropped, which changes nothing).
pub trait StoredValue: Send + Sync {
    /// The size of the value in bytes.
    fn size(&self) -> u64;

    /// Several byte ranges of the value, in the order asked; every range must lie inside it
    /// ([`StoreError::RangeOutOfBounds`] otherwise, before anything is read).
    ///
    /// # Errors
    /// A range outside the value, and what the storage reports.
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>>;

    /// Replaces the key's value, atomically as [`Store::set`] does, with the value `pieces`
    /// make: byte ranges of this version of the value ([`Piece::Kept`]) and new bytes. Every
    /// kept range is checked against the value before anything is written.
    ///
    /// # Errors
    /// [`StoreError::RangeOutOfBounds`] for a kept range outside the value, and the errors of
    /// [`Store::set`].
    fn replace(self: Box<Self>, pieces: &[Piece]) -> Result<()>;
}

/// The [`Store::open_value`] of a store that reads the whole value first.
struct WholeValue<'s, S: ?Sized> {
    store: &'s S,
    key: String,
    value: Vec<u8>,
}

impl<S: Store + ?Sized> StoredValue for WholeValue<'_, S> {
    fn size(&self) -> u64 {
        self.value.len() as u64
    }

    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>> {
        let resolved = resolve_all(&self.key, ranges, self.size())?;
        Ok(resolved
            .into_iter()
            .map(|r| self.value[r].to_vec())
            .collect())
    }

    fn replace(self: Box<Self>, pieces: &[Piece]) -> Result<()> {
        check_pieces(&self.key, pieces, self.size())?;
        // every kept range lies inside the value: only a length past the address space is left
        let value = Piece::join(pieces, &self.value).ok_or_else(|| {
            StoreError::io(
                &self.key,
                std::io::Error::new(
                    std::io::ErrorKind::OutOfMemory,
                    "the new value does not fit in this platform's address space",
                ),
            )
        })?;
        self.store.set(&self.key, &value)
    }
}

/// Refuses `pieces` whose kept ranges do not all lie inside a value of `size` bytes, naming
/// the first that does not.
pub(crate) fn check_pieces(key: &str, pieces: &[Piece], size: u64) -> Result<()> {
    match pieces.iter().find_map(|p| match p {
        Piece::Kept(r) if r.start > r.end || r.end > size => Some(r),
        _ => None,
    }) {
        Some(r) => Err(StoreError::RangeOutOfBounds {
            key: key.to_owned(),
            range: ByteRange::Range {
                start: r.start,
                end: r.end,
            },
            size,
        }),
        None => Ok(()),
    }
}

/// The version of a stored value, as [`Store::get_versioned`] read it, for a conditional write
/// ([`Condition::Matches`]).
///
/// Opaque: an object store's entity tag and object version (what S3, GCS and Azure compare in
/// `If-Match`), or, for memory and filesystem stores, the value itself: a conditional write
/// there succeeds when the stored value is still byte for byte the one read, which is what a
/// read-modify-write needs (a value changed and changed back is rightly the same value).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Version(Tag);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Tag {
    Content(Arc<[u8]>),
    Object {
        e_tag: Option<String>,
        version: Option<String>,
    },
}

impl Version {
    /// The version of a value compared by content (memory and filesystem stores).
    #[must_use]
    pub fn of_content(value: &[u8]) -> Self {
        Self(Tag::Content(Arc::from(value)))
    }

    /// The version of an object as an object store tells it: its entity tag and its version
    /// id (either may be missing).
    #[must_use]
    pub fn object(e_tag: Option<String>, version: Option<String>) -> Self {
        Self(Tag::Object { e_tag, version })
    }

    /// Whether `value` is the value of this version, for a version made by
    /// [`Version::of_content`] (`false` for an object version).
    #[must_use]
    pub fn is_content(&self, value: &[u8]) -> bool {
        matches!(&self.0, Tag::Content(content) if **content == *value)
    }

    /// The entity tag and version id of an object version (`None` for a content version).
    #[must_use]
    pub fn object_tags(&self) -> Option<(Option<&str>, Option<&str>)> {
        match &self.0 {
            Tag::Object { e_tag, version } => Some((e_tag.as_deref(), version.as_deref())),
            Tag::Content(_) => None,
        }
    }
}

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            // a value can be large: its size says enough
            Tag::Content(content) => write!(f, "Version(content of {} bytes)", content.len()),
            Tag::Object { e_tag, version } => f
                .debug_struct("Version")
                .field("e_tag", e_tag)
                .field("version", version)
                .finish(),
        }
    }
}

/// What a conditional write ([`Store::set_if`]) requires of the stored value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Condition {
    /// The key does not exist: create it.
    Absent,
    /// The key still holds the value of this version: replace it.
    Matches(Version),
}

impl Condition {
    /// The condition that `current` (what [`Store::get_versioned`] read) is still there:
    /// [`Condition::Matches`] its version, or [`Condition::Absent`] when there was nothing.
    #[must_use]
    pub fn still(current: Option<&Version>) -> Self {
        current.map_or(Condition::Absent, |version| {
            Condition::Matches(version.clone())
        })
    }

    /// Whether the condition holds for `current`, the stored value now, for stores that
    /// version by content.
    pub(crate) fn holds_for_content(&self, current: Option<&[u8]>) -> bool {
        match (self, current) {
            (Condition::Absent, None) => true,
            (Condition::Matches(version), Some(value)) => version.is_content(value),
            _ => false,
        }
    }
}

/// The answer of a conditional write ([`Store::set_if`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[must_use]
pub enum Outcome {
    /// The condition held and the value was written; this is its new version.
    Written(Version),
    /// The condition no longer held (another writer came first): nothing was written.
    Conflict,
}

/// The result of [`Store::list_dir`]: one level of the key hierarchy.
///
/// For keys `a/zarr.json`, `a/b/zarr.json` and `a/b/c/0`, `list_dir("a/")` gives the keys
/// `["a/zarr.json"]` and the prefixes `["a/b/"]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListDir {
    /// The keys directly under the prefix, sorted.
    pub keys: Vec<String>,
    /// The prefixes one level down that hold at least one key, each ending with `/`, sorted.
    pub prefixes: Vec<String>,
}

impl ListDir {
    /// Splits sorted keys that all start with `prefix` into one listing level.
    pub(crate) fn from_sorted_keys<'a>(
        prefix: &str,
        keys: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let mut listing = Self::default();
        for key in keys {
            let rest = key.get(prefix.len()..).unwrap_or_default();
            match rest.find('/') {
                None => listing.keys.push(key.to_owned()),
                Some(slash) => {
                    let sub = &key[..prefix.len() + slash + 1];
                    // Keys sharing a prefix are adjacent in sorted order.
                    if listing.prefixes.last().map(String::as_str) != Some(sub) {
                        listing.prefixes.push(sub.to_owned());
                    }
                }
            }
        }
        listing
    }
}

/// Conveniences on top of [`Store`], implemented for every store (`dyn Store` included).
pub trait StoreExt: Store {
    /// Whether `key` exists.
    fn exists(&self, key: &str) -> Result<bool> {
        Ok(self.size(key)?.is_some())
    }

    /// One byte range of the value of `key`, or `None` when the key does not exist.
    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>> {
        Ok(self
            .get_ranges(key, &[range])?
            .and_then(|mut parts| parts.pop()))
    }

    /// The value of `key`, with a missing key an error ([`StoreError::NotFound`]).
    fn get_or_err(&self, key: &str) -> Result<Vec<u8>> {
        self.get(key)?.ok_or_else(|| StoreError::NotFound {
            key: key.to_owned(),
        })
    }

    /// Stores several values. Every key is validated before anything is written; the writes
    /// then happen in order and stop at the first error (earlier writes stay).
    fn set_many<'a, I>(&self, items: I) -> Result<()>
    where
        I: IntoIterator<Item = (&'a str, &'a [u8])>,
    {
        let items: Vec<_> = items.into_iter().collect();
        for (key, _) in &items {
            validate_key(key)?;
        }
        items
            .into_iter()
            .try_for_each(|(key, value)| self.set(key, value))
    }

    /// Copies every key under `prefix` to `dest` (same keys), returning how many were copied.
    /// Keys deleted from `self` during the copy are skipped.
    fn copy_prefix_to<D: Store + ?Sized>(&self, prefix: &str, dest: &D) -> Result<usize> {
        let mut copied = 0;
        for key in self.list_prefix(prefix)? {
            if let Some(value) = self.get(&key)? {
                dest.set(&key, &value)?;
                copied += 1;
            }
        }
        Ok(copied)
    }
}

impl<S: Store + ?Sized> StoreExt for S {}

/// Forwards every method of `Store` to the store behind a pointer.
macro_rules! forward_store {
    ($($pointer:ty),*) => {$(
        impl<S: Store + ?Sized> Store for $pointer {
            fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
                (**self).get(key)
            }
            fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
                (**self).get_ranges(key, ranges)
            }
            fn size(&self, key: &str) -> Result<Option<u64>> {
                (**self).size(key)
            }
            fn set(&self, key: &str, value: &[u8]) -> Result<()> {
                (**self).set(key, value)
            }
            fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
                (**self).set_parts(key, parts)
            }
            fn delete(&self, key: &str) -> Result<()> {
                (**self).delete(key)
            }
            fn delete_prefix(&self, prefix: &str) -> Result<()> {
                (**self).delete_prefix(prefix)
            }
            fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
                (**self).list_prefix(prefix)
            }
            fn list_dir(&self, prefix: &str) -> Result<ListDir> {
                (**self).list_dir(prefix)
            }
            fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>> {
                (**self).get_many(keys)
            }
            fn list_prefix_sizes(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
                (**self).list_prefix_sizes(prefix)
            }
            fn fetch_concurrency(&self) -> usize {
                (**self).fetch_concurrency()
            }
            fn max_bytes_in_flight(&self) -> u64 {
                (**self).max_bytes_in_flight()
            }
            fn fetch_each(&self, requests: &[Fetch<'_>], deliver: &mut Deliver<'_>) -> Result<()> {
                (**self).fetch_each(requests, deliver)
            }
            fn write_each(&self, writes: &[Write<'_>]) -> Result<()> {
                (**self).write_each(writes)
            }
            fn cheap_ranged_reads(&self) -> bool {
                (**self).cheap_ranged_reads()
            }
            fn conditional_writes(&self) -> bool {
                (**self).conditional_writes()
            }
            fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, Version)>> {
                (**self).get_versioned(key)
            }
            fn set_if(&self, key: &str, value: &[u8], condition: &Condition) -> Result<Outcome> {
                (**self).set_if(key, value, condition)
            }
            fn open_value(&self, key: &str) -> Result<Option<Box<dyn StoredValue + '_>>> {
                (**self).open_value(key)
            }
        }
    )*};
}

forward_store!(&S, Box<S>, Arc<S>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_errors_are_shareable() {
        fn shareable<T: Send + Sync + 'static + ?Sized>() {}
        shareable::<dyn Store>();
        shareable::<crate::MemoryStore>();
        shareable::<crate::FilesystemStore>();
        shareable::<StoreError>();
        let store: Arc<dyn Store> = Arc::new(crate::MemoryStore::new());
        assert_eq!(store.exists("a").ok(), Some(false));
    }

    #[test]
    fn list_dir_from_sorted_keys() {
        let keys = ["g/a.x", "g/a/b", "g/a/c/d", "g/b", "g/c/0", "g/c/1"];
        let listing = ListDir::from_sorted_keys("g/", keys);
        assert_eq!(listing.keys, ["g/a.x", "g/b"]);
        assert_eq!(listing.prefixes, ["g/a/", "g/c/"]);
        let root = ListDir::from_sorted_keys("", keys);
        assert!(root.keys.is_empty());
        assert_eq!(root.prefixes, ["g/"]);
    }
}
