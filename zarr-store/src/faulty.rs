//! A store wrapper that injects faults, for tests of what an interrupted operation leaves
//! (cargo feature `testing`; `zarr_store::testing::FaultyStore`).

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::error::{Result, StoreError};
use crate::range::ByteRange;
use crate::store::{Condition, ListDir, Outcome, Store, Version};

/// Which calls a [`FaultyStore`] counts towards its fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaultOp {
    /// Calls that change the store: `set`, `delete`, `delete_prefix`.
    Write,
    /// Calls that read values: `get`, `get_ranges`, `size`.
    Read,
    /// Listing calls: `list_prefix`, `list_dir`.
    List,
}

/// What a [`FaultyStore`] does when its fault triggers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaultKind {
    /// Only the `k`-th call fails (with an I/O error, doing nothing); later calls succeed.
    Once,
    /// The `k`-th call and every later call of the same kind fail, as after a crash or a
    /// lost connection.
    From,
    /// The `k`-th read returns its value cut short (half of it, at least one byte less when
    /// it is not empty), as a buggy or racing backend might; later calls succeed. Only
    /// meaningful with [`FaultOp::Read`] (`size` calls are counted but answer truthfully).
    ShortRead,
}

/// The fault a [`FaultyStore`] injects: the `k`-th (0-based) call of kind `op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fault {
    /// Which calls are counted.
    pub op: FaultOp,
    /// The 0-based index of the call that fails first.
    pub at: u64,
    /// What happens then.
    pub kind: FaultKind,
}

impl Fault {
    /// Fails only the `at`-th call of kind `op`.
    #[must_use]
    pub fn once(op: FaultOp, at: u64) -> Self {
        Fault {
            op,
            at,
            kind: FaultKind::Once,
        }
    }

    /// Fails the `at`-th call of kind `op` and every later one.
    #[must_use]
    pub fn from(op: FaultOp, at: u64) -> Self {
        Fault {
            op,
            at,
            kind: FaultKind::From,
        }
    }

    /// Cuts the value of the `at`-th read short.
    #[must_use]
    pub fn short_read(at: u64) -> Self {
        Fault {
            op: FaultOp::Read,
            at,
            kind: FaultKind::ShortRead,
        }
    }
}

/// Wraps a store and makes chosen calls fail, so that tests can drive an operation through
/// every point where it can be interrupted.
///
/// Calls are counted by kind ([`FaultOp`]) from the moment the store is made or
/// [`set_fault`](Self::set_fault) is called; the fault triggers on the `k`-th call of its
/// kind. A failed call does nothing and returns [`StoreError::Io`] with the message
/// `injected fault`. Key validation happens in the wrapped store, and failed calls are still
/// counted. Typical use runs an operation once with no fault to count its calls, then once
/// for every `k`:
///
/// ```
/// use zarr_store::testing::{Fault, FaultOp, FaultyStore}; // cargo feature `testing`
/// use zarr_store::{MemoryStore, Store};
///
/// let store = FaultyStore::new(MemoryStore::new());
/// store.set("a", b"1")?;
/// store.set_fault(Some(Fault::once(FaultOp::Write, 1)));
/// store.set("b", b"2")?; // write 0
/// assert!(store.set("c", b"3").is_err()); // write 1 fails
/// store.set("d", b"4")?; // write 2
/// assert_eq!(store.inner().get("c")?, None);
/// assert_eq!(store.counts(), (3, 0, 0));
///
/// store.set_fault(Some(Fault::short_read(0)));
/// assert_eq!(store.get("a")?, Some(vec![]));
/// assert_eq!(store.get("a")?, Some(b"1".to_vec()));
/// # Ok::<(), zarr_store::StoreError>(())
/// ```
#[derive(Debug)]
pub struct FaultyStore<S> {
    inner: S,
    fault: Mutex<Option<Fault>>,
    writes: AtomicU64,
    reads: AtomicU64,
    lists: AtomicU64,
}

/// What one call is to do.
enum Verdict {
    Proceed,
    Fail,
    Short,
}

impl<S> FaultyStore<S> {
    /// Wraps `inner`, with no fault.
    pub fn new(inner: S) -> Self {
        FaultyStore {
            inner,
            fault: Mutex::new(None),
            writes: AtomicU64::new(0),
            reads: AtomicU64::new(0),
            lists: AtomicU64::new(0),
        }
    }

    /// Wraps `inner` with `fault` armed.
    pub fn with_fault(inner: S, fault: Fault) -> Self {
        let store = Self::new(inner);
        store.set_fault(Some(fault));
        store
    }

    /// Arms `fault` (or disarms with `None`) and sets every count back to zero.
    pub fn set_fault(&self, fault: Option<Fault>) {
        *self.fault.lock().unwrap_or_else(PoisonError::into_inner) = fault;
        for counter in [&self.writes, &self.reads, &self.lists] {
            counter.store(0, Ordering::SeqCst);
        }
    }

    /// The calls counted so far: `(writes, reads, lists)`.
    pub fn counts(&self) -> (u64, u64, u64) {
        (
            self.writes.load(Ordering::SeqCst),
            self.reads.load(Ordering::SeqCst),
            self.lists.load(Ordering::SeqCst),
        )
    }

    /// The wrapped store (calls to it are neither counted nor faulted).
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Unwraps the store.
    pub fn into_inner(self) -> S {
        self.inner
    }

    fn verdict(&self, op: FaultOp) -> Verdict {
        let counter = match op {
            FaultOp::Write => &self.writes,
            FaultOp::Read => &self.reads,
            FaultOp::List => &self.lists,
        };
        let n = counter.fetch_add(1, Ordering::SeqCst);
        let fault = *self.fault.lock().unwrap_or_else(PoisonError::into_inner);
        match fault {
            Some(f) if f.op == op => match f.kind {
                FaultKind::Once if n == f.at => Verdict::Fail,
                FaultKind::From if n >= f.at => Verdict::Fail,
                FaultKind::ShortRead if n == f.at => Verdict::Short,
                _ => Verdict::Proceed,
            },
            _ => Verdict::Proceed,
        }
    }
}

fn injected(key: &str) -> StoreError {
    StoreError::io(key, io::Error::other("injected fault"))
}

fn cut(mut value: Vec<u8>) -> Vec<u8> {
    let keep = value.len() / 2;
    value.truncate(keep);
    value
}

impl<S: Store> Store for FaultyStore<S> {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self.verdict(FaultOp::Read) {
            Verdict::Fail => Err(injected(key)),
            Verdict::Short => Ok(self.inner.get(key)?.map(cut)),
            Verdict::Proceed => self.inner.get(key),
        }
    }

    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
        match self.verdict(FaultOp::Read) {
            Verdict::Fail => Err(injected(key)),
            Verdict::Short => Ok(self
                .inner
                .get_ranges(key, ranges)?
                .map(|parts| parts.into_iter().map(cut).collect())),
            Verdict::Proceed => self.inner.get_ranges(key, ranges),
        }
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        match self.verdict(FaultOp::Read) {
            Verdict::Fail => Err(injected(key)),
            Verdict::Short | Verdict::Proceed => self.inner.size(key),
        }
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        match self.verdict(FaultOp::Write) {
            Verdict::Fail => Err(injected(key)),
            _ => self.inner.set(key, value),
        }
    }

    fn conditional_writes(&self) -> bool {
        self.inner.conditional_writes()
    }

    /// A read: a short read cuts the value (its version stays the stored value's).
    fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, Version)>> {
        match self.verdict(FaultOp::Read) {
            Verdict::Fail => Err(injected(key)),
            Verdict::Short => Ok(self
                .inner
                .get_versioned(key)?
                .map(|(value, version)| (cut(value), version))),
            Verdict::Proceed => self.inner.get_versioned(key),
        }
    }

    /// A write.
    fn set_if(&self, key: &str, value: &[u8], condition: &Condition) -> Result<Outcome> {
        match self.verdict(FaultOp::Write) {
            Verdict::Fail => Err(injected(key)),
            _ => self.inner.set_if(key, value, condition),
        }
    }

    fn delete(&self, key: &str) -> Result<()> {
        match self.verdict(FaultOp::Write) {
            Verdict::Fail => Err(injected(key)),
            _ => self.inner.delete(key),
        }
    }

    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        match self.verdict(FaultOp::Write) {
            Verdict::Fail => Err(injected(prefix)),
            _ => self.inner.delete_prefix(prefix),
        }
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        match self.verdict(FaultOp::List) {
            Verdict::Fail => Err(injected(prefix)),
            _ => self.inner.list_prefix(prefix),
        }
    }

    fn list_dir(&self, prefix: &str) -> Result<ListDir> {
        match self.verdict(FaultOp::List) {
            Verdict::Fail => Err(injected(prefix)),
            _ => self.inner.list_dir(prefix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;

    #[cfg(feature = "testing")]
    #[test]
    fn passes_the_conformance_suite_without_a_fault() {
        crate::testing::run_store_conformance(&FaultyStore::new(MemoryStore::new()));
    }

    #[test]
    fn from_fails_every_later_call() {
        let store = FaultyStore::with_fault(MemoryStore::new(), Fault::from(FaultOp::Write, 1));
        assert!(store.set("a", b"1").is_ok());
        assert!(store.set("b", b"1").is_err());
        assert!(store.delete("a").is_err());
        assert!(store.delete_prefix("").is_err());
        assert_eq!(store.inner().list_prefix("").ok(), Some(vec!["a".into()]));
        // reads are another kind and still work
        assert_eq!(store.get("a").ok(), Some(Some(b"1".to_vec())));
        let err = store.set("c", b"").unwrap_err();
        assert_eq!(
            zarr_testkit::report(&err),
            "i/o error on key \"c\": injected fault"
        );
    }

    #[test]
    fn short_reads_cut_ranges_too() {
        let store = FaultyStore::new(MemoryStore::new());
        store.set("k", b"0123456789").unwrap();
        store.set_fault(Some(Fault::short_read(0)));
        let got = store
            .get_ranges("k", &[ByteRange::Suffix(4), ByteRange::FromStart(0)])
            .unwrap();
        assert_eq!(got, Some(vec![b"67".to_vec(), b"01234".to_vec()]));
        assert_eq!(store.counts(), (0, 1, 0));
    }
}
