//! An in-memory store.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::error::{Result, StoreError};
use crate::key::{validate_key, validate_prefix};
use crate::range::{resolve_all, ByteRange};
use crate::store::{Condition, ListDir, Outcome, Store, Version};

/// A store that keeps every value in memory, in a sorted map behind a read-write lock.
///
/// Cheap to create, safe to share between threads (`Arc<MemoryStore>`), and gone when dropped.
/// Like the filesystem store, it refuses a key that is also a prefix of other keys
/// ([`StoreError::KeyConflict`]). Conditional writes ([`Store::set_if`]) are checked and
/// done under the map's lock, so they are atomic between threads.
///
/// ```
/// use zarr_store::{MemoryStore, Store};
///
/// let store = MemoryStore::new();
/// store.set("a/zarr.json", b"{}")?;
/// assert_eq!(store.get("a/zarr.json")?, Some(b"{}".to_vec()));
/// assert!(store.set("a/zarr.json/x", b"").is_err()); // "a/zarr.json" is a key, not a prefix
/// # Ok::<(), zarr_store::StoreError>(())
/// ```
#[derive(Debug, Default)]
pub struct MemoryStore {
    map: RwLock<BTreeMap<String, Vec<u8>>>,
}

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of keys.
    #[must_use]
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether the store holds no key.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    // No operation panics while holding the lock with the map half-updated, so a poisoned lock
    // (a panic elsewhere in the holding thread) still guards a consistent map.
    fn read(&self) -> RwLockReadGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.map.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.map.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Stores `value` under `key` in `map`, refusing a key that is also a prefix of other keys.
fn insert(map: &mut BTreeMap<String, Vec<u8>>, key: &str, value: &[u8]) -> Result<()> {
    // An ancestor that is a key (`a` when writing `a/b`)...
    for (slash, _) in key.match_indices('/') {
        let ancestor = &key[..slash];
        if map.contains_key(ancestor) {
            return Err(StoreError::KeyConflict {
                key: key.to_owned(),
                existing: ancestor.to_owned(),
            });
        }
    }
    // ...or keys under this one (`a/b` when writing `a`).
    let as_prefix = format!("{key}/");
    if range_of(map, &as_prefix).next().is_some() {
        return Err(StoreError::KeyConflict {
            key: key.to_owned(),
            existing: as_prefix,
        });
    }
    match map.get_mut(key) {
        Some(old) => value.clone_into(old),
        None => {
            map.insert(key.to_owned(), value.to_vec());
        }
    }
    Ok(())
}

/// The entries of `map` whose keys start with `prefix`, in order.
fn range_of<'a>(
    map: &'a BTreeMap<String, Vec<u8>>,
    prefix: &'a str,
) -> impl Iterator<Item = (&'a String, &'a Vec<u8>)> + 'a {
    map.range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
        .take_while(move |(key, _)| key.starts_with(prefix))
}

impl Store for MemoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        validate_key(key)?;
        Ok(self.read().get(key).cloned())
    }

    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
        validate_key(key)?;
        let map = self.read();
        let Some(value) = map.get(key) else {
            return Ok(None);
        };
        let resolved = resolve_all(key, ranges, value.len() as u64)?;
        Ok(Some(
            resolved
                .into_iter()
                .map(|range| value.get(range).map(<[u8]>::to_vec).unwrap_or_default())
                .collect(),
        ))
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        Ok(self.read().get(key).map(|value| value.len() as u64))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        insert(&mut self.write(), key, value)
    }

    /// Always `true`: the condition is checked and the value written under the map's lock.
    fn conditional_writes(&self) -> bool {
        true
    }

    fn set_if(&self, key: &str, value: &[u8], condition: &Condition) -> Result<Outcome> {
        validate_key(key)?;
        let mut map = self.write();
        if !condition.holds_for_content(map.get(key).map(Vec::as_slice)) {
            return Ok(Outcome::Conflict);
        }
        insert(&mut map, key, value)?;
        Ok(Outcome::Written(Version::of_content(value)))
    }

    fn delete(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        self.write().remove(key);
        Ok(())
    }

    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        validate_prefix(prefix)?;
        let mut map = self.write();
        if prefix.is_empty() {
            map.clear();
        } else {
            let doomed: Vec<String> = range_of(&map, prefix).map(|(k, _)| k.clone()).collect();
            for key in doomed {
                map.remove(&key);
            }
        }
        Ok(())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(range_of(&self.read(), prefix)
            .map(|(key, _)| key.clone())
            .collect())
    }

    fn list_dir(&self, prefix: &str) -> Result<ListDir> {
        validate_prefix(prefix)?;
        let map = self.read();
        Ok(ListDir::from_sorted_keys(
            prefix,
            range_of(&map, prefix).map(|(key, _)| key.as_str()),
        ))
    }
}
