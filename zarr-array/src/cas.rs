//! Compare-and-swap updates of one stored value: the one loop behind every metadata update
//! (resize, append, prepend, attributes), the consolidated copies above a changed node, and
//! the chunks that two concurrent writers share.
//!
//! [`update`] reads the value with its version ([`Store::get_versioned`]), lets the caller
//! compute the new value from it, and writes that only if the value is still the one read
//! ([`Store::set_if`]). On a conflict (another writer came first) it reads again, computes
//! again (so the caller re-validates against what is there now) and tries again, waiting a
//! little longer each time, up to [`MAX_ATTEMPTS`] attempts; then it gives up with
//! [`ArrayError::Contended`]. A store without conditional writes
//! ([`Store::conditional_writes`] is `false`) gets one plain read and one plain write: the
//! last writer wins.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zarr_store::{Condition, Outcome, Store};

use crate::error::{ArrayError, Result};

/// How many times [`update`] reads, computes and writes before it gives up.
pub(crate) const MAX_ATTEMPTS: u32 = 100;

/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_millis(50);

/// What to do with the value read.
pub(crate) enum Apply<T> {
    /// Write these bytes (conditionally), then answer `T`.
    Write(Vec<u8>, T),
    /// Nothing to write: the value read is already right.
    Keep(T),
    /// Delete the key, then answer `T`. Not conditional (the stores have no conditional
    /// delete): only for a value whose content no other writer depends on.
    Delete(T),
}

/// Updates the value of `key` by compare-and-swap: `apply` gets the value now stored (`None`
/// when absent) and says what to do; on a conflict it is called again with the newer value.
///
/// # Errors
/// What `apply` returns, the store's errors, and [`ArrayError::Contended`] after
/// [`MAX_ATTEMPTS`] conflicts in a row.
pub(crate) fn update<T>(
    store: &dyn Store,
    key: &str,
    mut apply: impl FnMut(Option<&[u8]>) -> Result<Apply<T>>,
) -> Result<T> {
    if !store.conditional_writes() {
        let current = store.get(key)?;
        return match apply(current.as_deref())? {
            Apply::Write(bytes, out) => {
                store.set(key, &bytes)?;
                Ok(out)
            }
            Apply::Keep(out) => Ok(out),
            Apply::Delete(out) => {
                store.delete(key)?;
                Ok(out)
            }
        };
    }
    for attempt in 0..MAX_ATTEMPTS {
        let current = store.get_versioned(key)?;
        let (value, version) = match &current {
            Some((value, version)) => (Some(value.as_slice()), Some(version)),
            None => (None, None),
        };
        match apply(value)? {
            Apply::Keep(out) => return Ok(out),
            Apply::Delete(out) => {
                store.delete(key)?;
                return Ok(out);
            }
            Apply::Write(bytes, out) => {
                match store.set_if(key, &bytes, &Condition::still(version))? {
                    Outcome::Written(_) => return Ok(out),
                    // a conflict (or an outcome this build does not know): read again
                    _ => backoff(attempt),
                }
            }
        }
    }
    Err(ArrayError::Contended {
        key: key.to_owned(),
        attempts: MAX_ATTEMPTS,
    })
}

/// Waits before attempt `attempt + 1`: up to 2^attempt ms (at most [`MAX_BACKOFF`]), a
/// random part of it, so that writers that collided do not collide again in step.
fn backoff(attempt: u32) {
    let ceiling = Duration::from_millis(1u64 << attempt.min(6)).min(MAX_BACKOFF);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    // the clock's low digits, mixed with the thread, as the random part
    let salt = u64::from(nanos) ^ (thread_salt().wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let ceiling_nanos = ceiling.as_nanos().max(1) as u64;
    std::thread::sleep(Duration::from_nanos(salt % ceiling_nanos));
}

/// A number that differs between threads and processes.
fn thread_salt() -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::thread::current().id().hash(&mut hasher);
    std::process::id().hash(&mut hasher);
    hasher.finish()
}

/// Merges `updates` into `attributes` as `update_attributes` documents: a `null` value
/// removes its key, any other value replaces or adds it.
pub(crate) fn merge_attributes(
    attributes: &mut serde_json::Map<String, serde_json::Value>,
    updates: &serde_json::Map<String, serde_json::Value>,
) {
    for (k, v) in updates {
        if v.is_null() {
            attributes.shift_remove(k);
        } else {
            attributes.insert(k.clone(), v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarr_store::testing::Unconditional;
    use zarr_store::MemoryStore;

    #[test]
    fn update_retries_until_the_value_read_is_still_there() -> Result<()> {
        let store = MemoryStore::new();
        store.set("k", b"0")?;
        let mut calls = 0;
        let out = update(&store, "k", |current| {
            calls += 1;
            if calls == 1 {
                // another writer comes first: this attempt must conflict
                store.set("k", b"5")?;
            }
            let n: u32 = std::str::from_utf8(current.unwrap_or(b"0"))
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            Ok(Apply::Write((n + 1).to_string().into_bytes(), n))
        })?;
        assert_eq!((calls, out), (2, 5));
        assert_eq!(store.get("k")?, Some(b"6".to_vec()));
        Ok(())
    }

    #[test]
    fn update_gives_up_after_max_attempts() {
        let store = MemoryStore::new();
        let mut calls = 0u32;
        let result = update(&store, "k", |_| {
            calls += 1;
            store.set("k", calls.to_string().as_bytes())?; // always someone first
            Ok(Apply::Write(b"mine".to_vec(), ()))
        });
        assert!(
            matches!(&result, Err(ArrayError::Contended { key, attempts }) if key == "k" && *attempts == MAX_ATTEMPTS),
            "{result:?}"
        );
        assert_eq!(calls, MAX_ATTEMPTS);
    }

    #[test]
    fn without_conditional_writes_the_last_writer_wins() -> Result<()> {
        let store = Unconditional::new(MemoryStore::new());
        let mut calls = 0;
        update(&store, "k", |_| {
            calls += 1;
            store.set("k", b"other")?; // lost: the write below does not look
            Ok(Apply::Write(b"mine".to_vec(), ()))
        })?;
        assert_eq!(calls, 1);
        assert_eq!(store.get("k")?, Some(b"mine".to_vec()));
        Ok(())
    }
}
