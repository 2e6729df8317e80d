//! Reads of many chunks on a store whose requests have latency (an object store): every
//! request of a round in flight at once through [`Store::fetch_each`], each chunk decoded on
//! the compute pool (rayon) as soon as its bytes arrive, while the other requests wait.
//!
//! The decoding code stays synchronous and unaware of fetching: a task (one chunk's part of a
//! read) runs against a [`Replay`], a store that answers from the bytes fetched for the task
//! and records each read it cannot answer yet. A task that met such a read is fetched for
//! (with every other task's, in one batch) and run again; one that met none is done. A whole
//! chunk takes one round; a shard read in part two (its index, then the inner chunks it
//! needs, in the requests the sharding decoder joins), each round's requests all in flight
//! together.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rayon::prelude::*;
use zarr_store::{
    ByteRange, Condition, Fetch, Fetched, ListDir, Outcome, Store, StoreError, Version,
};

use crate::error::{ArrayError, Result};

/// Whether reads of `store` go through its batches ([`for_each_fetched`] on an object store):
/// it serves more than one request at once to good effect (an object store, whatever its
/// concurrency: the batches keep to it, where the pool's loops would keep a request per
/// thread in flight). Local stores keep the pool's loops, where each thread reads and
/// decodes; writes of many values follow the same rule ([`Store::write_each`]).
pub fn batched(store: &dyn Store) -> bool {
    store.fetch_concurrency() > 1
}

/// Runs `task` on every item, in parallel on the compute pool (rayon), each task reading
/// `store` through the store it is given: for a store that serves many requests at once (an
/// object store) every item's reads in flight together, each item's task run as soon as its
/// bytes arrive (see the [module documentation](self)); for a local store, the pool's threads
/// each reading and running their items. A task may be run more than once (its reads that
/// had not been fetched yet fail, and it is run again once they are): it should do nothing
/// but read and compute into its item. Stops at the first error.
///
/// This is how the engine reads many chunks; a caller with chunks of its own (decoding into
/// its own buffers, say) reads them the same way:
///
/// ```
/// use zarr_array::zarr_store::{MemoryStore, Store};
///
/// let store = MemoryStore::new();
/// store.set("c/0", b"abc")?;
/// let mut items = vec![("c/0", 0usize), ("c/1", 0)];
/// zarr_array::fetch::for_each_fetched(&store, &mut items, &|store, (key, len)| {
///     *len = store.get(key)?.map_or(0, |v| v.len());
///     Ok(())
/// })?;
/// assert_eq!(items, [("c/0", 3), ("c/1", 0)]);
/// # Ok::<(), zarr_array::ArrayError>(())
/// ```
///
/// # Errors
/// The first error of a task, or of a batch that cannot run.
pub fn for_each_fetched<T: Send>(
    store: &dyn Store,
    items: &mut [T],
    task: &(dyn Fn(&dyn Store, &mut T) -> Result<()> + Sync),
) -> Result<()> {
    if batched(store) {
        return run_fetched(store, items, task);
    }
    items.par_iter_mut().try_for_each(|item| task(store, item))
}

/// Runs `task` on every item, its reads of the store served by [`Store::fetch_each`]
/// batches of `store` (see the module documentation). Each item is run by one thread at a
/// time; a run that fetched nothing new is its last. Stops at the first error.
///
/// # Errors
/// The first error of a task, or of a batch that cannot run.
pub(crate) fn run_fetched<T: Send>(
    store: &dyn Store,
    items: &mut [T],
    task: &(dyn Fn(&dyn Store, &mut T) -> Result<()> + Sync),
) -> Result<()> {
    run_fetched_writes(store, items, task).map(drop)
}

/// What a task of [`run_fetched_writes`] wrote: each key with its new value (`None`:
/// deleted).
pub(crate) type Writes = Vec<(String, Option<Vec<u8>>)>;

/// [`run_fetched`] for tasks that write too (the read-modify-writes of a region write): their
/// writes are kept, not made, and returned (in no particular order) for the caller to make
/// together ([`Store::write_each`]).
///
/// # Errors
/// As [`run_fetched`]; nothing is written then.
pub(crate) fn run_fetched_writes<T: Send>(
    store: &dyn Store,
    items: &mut [T],
    task: &(dyn Fn(&dyn Store, &mut T) -> Result<()> + Sync),
) -> Result<Writes> {
    let tasks: Vec<Mutex<Task<'_, T>>> = items
        .iter_mut()
        .map(|item| {
            Mutex::new(Task {
                item,
                replay: Replay::default(),
                waiting: 0,
            })
        })
        .collect();
    // the first runs ask for what each task reads first
    tasks
        .par_iter()
        .try_for_each(|t| attempt(&mut lock(t), task))?;
    let budget = store.max_bytes_in_flight();
    loop {
        // every read a task is waiting for, in one batch
        let mut wanted: Vec<(usize, Request)> = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            let mut t = lock(t);
            let misses = std::mem::take(&mut *lock(&t.replay.misses));
            t.waiting = misses.len();
            wanted.extend(misses.into_iter().map(|m| (i, m)));
        }
        if wanted.is_empty() {
            return Ok(tasks
                .into_iter()
                .flat_map(|t| {
                    let t = t.into_inner().unwrap_or_else(PoisonError::into_inner);
                    t.replay
                        .writes
                        .into_inner()
                        .unwrap_or_else(PoisonError::into_inner)
                })
                .collect());
        }
        let fetches: Vec<Fetch<'_>> = wanted.iter().map(|(_, r)| r.as_fetch()).collect();
        let failed: Mutex<Option<ArrayError>> = Mutex::new(None);
        let decoding = AtomicU64::new(0);
        let run = |i: usize| {
            if lock(&failed).is_some() {
                return;
            }
            if let Err(e) = attempt(&mut lock(&tasks[i]), task) {
                lock(&failed).get_or_insert(e);
            }
        };
        rayon::in_place_scope(|scope| {
            store.fetch_each(&fetches, &mut |n, answer| {
                let (i, request) = &wanted[n];
                let len = answer.as_ref().map_or(0, Fetched::len);
                {
                    let mut t = lock(&tasks[*i]);
                    lock(&t.replay.answers).push((request.clone(), answer));
                    t.waiting -= 1;
                    if t.waiting > 0 {
                        return;
                    }
                }
                // all the task waited for is here: decode on the pool, unless the bytes
                // waiting there pass the store's bound (then here, which holds the next
                // answers back)
                if decoding.load(Ordering::Relaxed).saturating_add(len) > budget {
                    run(*i);
                    return;
                }
                decoding.fetch_add(len, Ordering::Relaxed);
                let (run, decoding, i) = (&run, &decoding, *i);
                scope.spawn(move |_| {
                    run(i);
                    decoding.fetch_sub(len, Ordering::Relaxed);
                });
            })
        })?;
        if let Some(e) = failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
            return Err(e);
        }
    }
}

/// One item of [`run_fetched`] and what was fetched for it.
struct Task<'a, T> {
    item: &'a mut T,
    replay: Replay,
    /// Answers of the current batch not yet arrived.
    waiting: usize,
}

/// Runs `task` on the item of `t` against its replay: done when it asked for nothing that
/// was not fetched yet, otherwise left with its misses recorded (and its answers kept for
/// the next run), whatever it returned.
fn attempt<T>(
    t: &mut Task<'_, T>,
    task: &(dyn Fn(&dyn Store, &mut T) -> Result<()> + Sync),
) -> Result<()> {
    let outcome = task(&t.replay, t.item);
    if lock(&t.replay.misses).is_empty() {
        // done: what it read is no longer needed
        lock(&t.replay.answers).clear();
        lock(&t.replay.used).clear();
        lock(&t.replay.moved).clear();
        return outcome;
    }
    // not all its bytes were here: the next run reads them all again, those it took
    // fetched again, and writes again
    lock(&t.replay.writes).clear();
    let used = std::mem::take(&mut *lock(&t.replay.used));
    lock(&t.replay.answers).extend(used);
    let moved = std::mem::take(&mut *lock(&t.replay.moved));
    lock(&t.replay.misses).extend(moved);
    Ok(())
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A read of a task, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Request {
    Value(String),
    Ranges(String, Vec<ByteRange>),
    Size(String),
}

impl Request {
    fn as_fetch(&self) -> Fetch<'_> {
        match self {
            Request::Value(key) => Fetch::Value(key),
            Request::Ranges(key, ranges) => Fetch::Ranges(key, ranges),
            Request::Size(key) => Fetch::Size(key),
        }
    }
}

/// The store a task of [`run_fetched`] reads: it answers the reads fetched for the task and
/// records the others (answering them with an error the run then ignores). It keeps the
/// task's writes ([`run_fetched_writes`]) and makes none; conditional writes it refuses.
#[derive(Debug, Default)]
struct Replay {
    /// Answers fetched and not yet read by the current run.
    answers: Mutex<Vec<(Request, zarr_store::Result<Fetched>)>>,
    /// Answers the current run has read (given back for the next run when it misses).
    used: Mutex<Vec<(Request, zarr_store::Result<Fetched>)>>,
    /// Answers the current run has read whose bytes moved to it (over [`KEEP_LIMIT`]).
    moved: Mutex<Vec<Request>>,
    /// Reads the current run asked for that were not fetched.
    misses: Mutex<Vec<Request>>,
    /// What the task wrote, each key with its new value (`None`: deleted).
    writes: Mutex<Writes>,
}

/// Answers up to this size are kept after a run reads them (copied to it), for a run that
/// must go again; larger ones (whole chunks) are moved to it, and fetched again in the rare
/// case that their run then misses another read.
const KEEP_LIMIT: u64 = 1 << 20;

/// A copy of an answer: the bytes cloned, an error as its message.
fn copy(answer: &zarr_store::Result<Fetched>, key: &str) -> zarr_store::Result<Fetched> {
    match answer {
        Ok(fetched) => Ok(fetched.clone()),
        Err(e) => Err(StoreError::Io {
            key: key.to_owned(),
            source: std::io::Error::other(error_line(e)),
        }),
    }
}

/// An error and its sources on one line.
fn error_line(e: &StoreError) -> String {
    let mut message = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        message.push_str(": ");
        message.push_str(&c.to_string());
        cause = c.source();
    }
    message
}

impl Replay {
    /// The answer to `request` if it was fetched, otherwise an error, the read recorded as a
    /// miss.
    fn answer(&self, request: Request) -> zarr_store::Result<Fetched> {
        let key = match &request {
            Request::Value(k) | Request::Ranges(k, _) | Request::Size(k) => k.clone(),
        };
        let mut answers = lock(&self.answers);
        if let Some(at) = answers.iter().position(|(r, _)| *r == request) {
            let (request, answer) = answers.swap_remove(at);
            drop(answers);
            return match answer {
                Ok(fetched) if fetched.len() > KEEP_LIMIT => {
                    lock(&self.moved).push(request);
                    Ok(fetched)
                }
                Ok(fetched) => {
                    lock(&self.used).push((request, Ok(fetched.clone())));
                    Ok(fetched)
                }
                Err(e) => {
                    // the error itself to the caller, a copy kept
                    let kept = StoreError::Io {
                        key: key.clone(),
                        source: std::io::Error::other(error_line(&e)),
                    };
                    lock(&self.used).push((request, Err(kept)));
                    Err(e)
                }
            };
        }
        drop(answers);
        if let Some((_, answer)) = lock(&self.used).iter().find(|(r, _)| *r == request) {
            return copy(answer, &key);
        }
        lock(&self.misses).push(request);
        Err(StoreError::Io {
            key,
            source: std::io::Error::other("not fetched yet"),
        })
    }
}

fn unexpected(key: &str) -> StoreError {
    StoreError::Io {
        key: key.to_owned(),
        source: std::io::Error::other("an answer of another kind than the read"),
    }
}

impl Store for Replay {
    fn get(&self, key: &str) -> zarr_store::Result<Option<Vec<u8>>> {
        match self.answer(Request::Value(key.to_owned()))? {
            Fetched::Value(value) => Ok(value),
            _ => Err(unexpected(key)),
        }
    }

    fn get_ranges(
        &self,
        key: &str,
        ranges: &[ByteRange],
    ) -> zarr_store::Result<Option<Vec<Vec<u8>>>> {
        match self.answer(Request::Ranges(key.to_owned(), ranges.to_vec()))? {
            Fetched::Ranges(parts) => Ok(parts),
            _ => Err(unexpected(key)),
        }
    }

    fn size(&self, key: &str) -> zarr_store::Result<Option<u64>> {
        match self.answer(Request::Size(key.to_owned()))? {
            Fetched::Size(size) => Ok(size),
            _ => Err(unexpected(key)),
        }
    }

    fn set(&self, key: &str, value: &[u8]) -> zarr_store::Result<()> {
        zarr_store::validate_key(key)?;
        lock(&self.writes).push((key.to_owned(), Some(value.to_vec())));
        Ok(())
    }

    fn delete(&self, key: &str) -> zarr_store::Result<()> {
        zarr_store::validate_key(key)?;
        lock(&self.writes).push((key.to_owned(), None));
        Ok(())
    }

    fn delete_prefix(&self, prefix: &str) -> zarr_store::Result<()> {
        Err(StoreError::ReadOnly {
            key: prefix.to_owned(),
        })
    }

    fn list_prefix(&self, prefix: &str) -> zarr_store::Result<Vec<String>> {
        Err(StoreError::InvalidPrefix {
            prefix: prefix.to_owned(),
            reason: "a chunk read lists nothing",
        })
    }

    fn list_dir(&self, prefix: &str) -> zarr_store::Result<ListDir> {
        Err(StoreError::InvalidPrefix {
            prefix: prefix.to_owned(),
            reason: "a chunk read lists nothing",
        })
    }

    fn set_if(&self, key: &str, _: &[u8], _: &Condition) -> zarr_store::Result<Outcome> {
        Err(StoreError::ReadOnly {
            key: key.to_owned(),
        })
    }

    fn get_versioned(&self, key: &str) -> zarr_store::Result<Option<(Vec<u8>, Version)>> {
        Err(StoreError::ReadOnly {
            key: key.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarr_store::testing::CountingStore;
    use zarr_store::{MemoryStore, StoreExt};

    /// Two rounds for a task that reads a value, then a range its bytes name; one batch of
    /// every task's reads per round, all in flight; an answer read twice in a run is fetched once.
    #[test]
    fn tasks_run_again_until_every_read_was_fetched() {
        let mem = MemoryStore::new();
        for i in 0..20u8 {
            mem.set(&format!("k{i}"), &[i, 1, 2, 3, 4, 5, 6, 7])
                .unwrap();
        }
        let store = CountingStore::new(mem)
            .with_fetch_concurrency(64)
            .with_latency(std::time::Duration::from_millis(10));
        let mut items: Vec<(u8, Vec<u8>)> = (0..21u8).map(|i| (i, Vec::new())).collect();
        let task = |s: &dyn Store, (i, out): &mut (u8, Vec<u8>)| -> Result<()> {
            let key = format!("k{i}");
            let Some(value) = s.get(&key)? else {
                out.push(99);
                return Ok(());
            };
            let again = s.get(&key)?.unwrap_or_default();
            let at = u64::from(value[0] % 7) + 1;
            let part = s.get_range(
                &key,
                ByteRange::Range {
                    start: at,
                    end: at + 1,
                },
            )?;
            *out = vec![value[0], again.len() as u8, part.unwrap_or_default()[0]];
            Ok(())
        };
        run_fetched(&store, &mut items, &task).unwrap();
        for (i, out) in &items {
            let want = if *i == 20 {
                vec![99]
            } else {
                vec![*i, 8, i % 7 + 1]
            };
            assert_eq!(out, &want, "item {i}");
        }
        let counts = store.counts();
        // per key: the value (read twice, fetched once) and the range
        assert_eq!((counts.get, counts.get_ranges), (21, 20), "{counts:?}");
        assert!(counts.peak_in_flight >= 20, "{counts:?}");
    }

    /// A task's error is the read's error, and a store error is the task's to report.
    #[test]
    fn the_first_error_is_returned() {
        let store = CountingStore::new(MemoryStore::new()).with_fetch_concurrency(64);
        let mut items = vec![0u8; 5];
        let task = |s: &dyn Store, i: &mut u8| -> Result<()> {
            s.get("../bad")?;
            *i = 1;
            Ok(())
        };
        let err = run_fetched(&store, &mut items, &task).unwrap_err();
        assert!(
            matches!(err, ArrayError::Store(StoreError::InvalidKey { .. })),
            "{err:?}"
        );
    }
}
