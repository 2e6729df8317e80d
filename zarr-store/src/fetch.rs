//! Batched fetches ([`Store::fetch_each`]): the reads of many keys in flight at once, each
//! answer handed over as it arrives.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::error::Result;
use crate::range::ByteRange;
use crate::store::Store;

/// One read of a batch given to [`Store::fetch_each`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fetch<'a> {
    /// The whole value of a key, as [`Store::get`] reads it.
    Value(&'a str),
    /// Byte ranges of the value of a key, as one [`Store::get_ranges`] call reads them.
    Ranges(&'a str, &'a [ByteRange]),
    /// The size of the value of a key, as [`Store::size`] tells it.
    Size(&'a str),
}

impl Fetch<'_> {
    /// The key read.
    #[must_use]
    pub fn key(&self) -> &str {
        match self {
            Fetch::Value(key) | Fetch::Ranges(key, _) | Fetch::Size(key) => key,
        }
    }

    /// The bytes the answer holds, when they are known before the request is made (the
    /// bounded ranges of [`Fetch::Ranges`]); 0 otherwise.
    #[must_use]
    pub fn known_len(&self) -> u64 {
        match self {
            Fetch::Ranges(_, ranges) => ranges
                .iter()
                .map(|r| match *r {
                    ByteRange::Range { start, end } => end.saturating_sub(start),
                    ByteRange::Suffix(len) => len,
                    ByteRange::FromStart(_) => 0,
                })
                .fold(0, u64::saturating_add),
            Fetch::Value(_) | Fetch::Size(_) => 0,
        }
    }

    /// Reads it from `store`, one call.
    ///
    /// # Errors
    /// The store's.
    pub fn read_from<S: Store + ?Sized>(&self, store: &S) -> Result<Fetched> {
        Ok(match *self {
            Fetch::Value(key) => Fetched::Value(store.get(key)?),
            Fetch::Ranges(key, ranges) => Fetched::Ranges(store.get_ranges(key, ranges)?),
            Fetch::Size(key) => Fetched::Size(store.size(key)?),
        })
    }
}

/// The answer to a [`Fetch`], of the same kind (`None`: the key does not exist).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetched {
    /// The whole value.
    Value(Option<Vec<u8>>),
    /// The byte ranges, in the order asked.
    Ranges(Option<Vec<Vec<u8>>>),
    /// The size in bytes.
    Size(Option<u64>),
}

impl Fetched {
    /// The bytes it holds.
    #[must_use]
    pub fn len(&self) -> u64 {
        match self {
            Fetched::Value(value) => value.as_ref().map_or(0, |v| v.len() as u64),
            Fetched::Ranges(parts) => parts.iter().flatten().map(|p| p.len() as u64).sum(),
            Fetched::Size(_) => 0,
        }
    }

    /// Whether it holds no bytes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One write of a batch given to [`Store::write_each`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write<'a> {
    /// Stores the value under the key, as [`Store::set`].
    Set(&'a str, &'a [u8]),
    /// Deletes the key, as [`Store::delete`].
    Delete(&'a str),
}

impl Write<'_> {
    /// The key written.
    #[must_use]
    pub fn key(&self) -> &str {
        match self {
            Write::Set(key, _) | Write::Delete(key) => key,
        }
    }

    /// Makes it on `store`, one call.
    ///
    /// # Errors
    /// The store's.
    pub fn apply_to<S: Store + ?Sized>(&self, store: &S) -> Result<()> {
        match *self {
            Write::Set(key, value) => store.set(key, value),
            Write::Delete(key) => store.delete(key),
        }
    }
}

/// The default [`Store::write_each`]: as [`fetch_each_on_threads`] runs reads.
pub(crate) fn write_each_on_threads<S: Store + ?Sized>(
    store: &S,
    writes: &[Write<'_>],
) -> Result<()> {
    let threads = store.fetch_concurrency().min(writes.len());
    if threads <= 1 {
        return writes.iter().try_for_each(|w| w.apply_to(store));
    }
    let next = AtomicUsize::new(0);
    let failed = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(write) = writes.get(i) else {
                    break;
                };
                if let Err(e) = write.apply_to(store) {
                    let mut failed = failed.lock().unwrap_or_else(PoisonError::into_inner);
                    failed.get_or_insert(e);
                }
            });
        }
    });
    match failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Where [`Store::fetch_each`] hands each answer over: the index of its request in the
/// batch, and the answer or the error of that one request.
pub type Deliver<'d> = dyn FnMut(usize, Result<Fetched>) + Send + 'd;

/// The default [`Store::fetch_each`]: the requests in order on the calling thread, or, for a
/// store that serves more than one request at once ([`Store::fetch_concurrency`]), on that
/// many threads of its own, each answer delivered (one at a time) by the thread that read it.
pub(crate) fn fetch_each_on_threads<S: Store + ?Sized>(
    store: &S,
    requests: &[Fetch<'_>],
    deliver: &mut Deliver<'_>,
) {
    let threads = store.fetch_concurrency().min(requests.len());
    if threads <= 1 {
        for (i, request) in requests.iter().enumerate() {
            deliver(i, request.read_from(store));
        }
        return;
    }
    let next = AtomicUsize::new(0);
    let deliver = Mutex::new(deliver);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(request) = requests.get(i) else {
                    break;
                };
                let answer = request.read_from(store);
                let mut deliver = deliver.lock().unwrap_or_else(PoisonError::into_inner);
                (*deliver)(i, answer);
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;

    #[test]
    fn known_lengths_and_answers() {
        let r = [ByteRange::Range { start: 2, end: 5 }, ByteRange::Suffix(4)];
        assert_eq!(Fetch::Ranges("k", &r).known_len(), 7);
        assert_eq!(Fetch::Value("k").known_len(), 0);
        let store = MemoryStore::new();
        store.set("k", b"0123456789").unwrap();
        let mut got = Vec::new();
        let requests = [Fetch::Value("k"), Fetch::Ranges("k", &r), Fetch::Size("x")];
        store
            .fetch_each(&requests, &mut |i, answer| got.push((i, answer.unwrap())))
            .unwrap();
        assert_eq!(
            got,
            [
                (0, Fetched::Value(Some(b"0123456789".to_vec()))),
                (
                    1,
                    Fetched::Ranges(Some(vec![b"234".to_vec(), b"6789".to_vec()]))
                ),
                (2, Fetched::Size(None)),
            ]
        );
        assert_eq!(got[1].1.len(), 7);
    }
}
