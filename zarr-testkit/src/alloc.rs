//! The counting global allocator: live bytes and their peak, huge requests refused, large
//! allocations recorded. This module holds every `unsafe` of the crate.
//!
//! A test binary that measures allocations installs one (a global allocator is one per
//! binary) and asks it:
//!
//! ```
//! use zarr_testkit::CountingAlloc;
//!
//! // requests above 8 GiB fail, as on a machine without that memory: a regression errors
//! // (or aborts) at once instead of paging
//! #[global_allocator]
//! static ALLOC: CountingAlloc = CountingAlloc::refusing_above(8 << 30);
//!
//! fn main() {
//!     let _serial = ALLOC.serial(); // in a test: one measuring test at a time
//!     let (chunk, peak) = ALLOC.peak_of(|| vec![0u8; 1 << 20]);
//!     assert!(peak >= chunk.len() && peak < 2 << 20);
//!     assert!(Vec::<u8>::new().try_reserve(16 << 30).is_err());
//! }
//! ```
//!
//! The counts are global to the process: everything any thread allocates while `f` runs
//! counts (the rayon threads working for a measured call should). Tests of one binary that
//! measure hold [`CountingAlloc::serial`] for their whole run, so that they do not count each
//! other's allocations.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// How many large allocations [`CountingAlloc::large_allocations_of`] records at most.
pub const TRACKED_SLOTS: usize = 64;

/// The system allocator, counting. See the [module documentation](self).
#[derive(Debug)]
pub struct CountingAlloc {
    /// Single requests larger than this return null (an allocation failure).
    refuse_above: usize,
    /// Bytes allocated and not freed.
    live: AtomicUsize,
    /// The highest `live` since the last reset.
    peak: AtomicUsize,
    /// Allocations at least this large are recorded (`usize::MAX`: none).
    track_threshold: AtomicUsize,
    /// How many large allocations were seen since tracking began (may exceed the slots).
    tracked: AtomicUsize,
    /// The addresses of the first [`TRACKED_SLOTS`] large allocations.
    slots: [AtomicUsize; TRACKED_SLOTS],
    /// Held by a measuring test for its whole run.
    serial: Mutex<()>,
}

impl CountingAlloc {
    /// A counting allocator that refuses nothing the system allocator grants.
    #[must_use]
    pub const fn new() -> Self {
        Self::refusing_above(usize::MAX)
    }

    /// A counting allocator under which every single request larger than `bytes` fails.
    #[must_use]
    pub const fn refusing_above(bytes: usize) -> Self {
        Self {
            refuse_above: bytes,
            live: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            track_threshold: AtomicUsize::new(usize::MAX),
            tracked: AtomicUsize::new(0),
            slots: [const { AtomicUsize::new(0) }; TRACKED_SLOTS],
            serial: Mutex::new(()),
        }
    }

    /// Bytes allocated now and not freed.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    /// Runs `f`, returning its result and the peak of live bytes above those live when it
    /// started (what `f` returns is live at its end, so it counts).
    pub fn peak_of<R>(&self, f: impl FnOnce() -> R) -> (R, usize) {
        let base = self.live.load(Ordering::SeqCst);
        self.peak.store(base, Ordering::SeqCst);
        let result = f();
        let peak = self.peak.load(Ordering::SeqCst).saturating_sub(base);
        (result, peak)
    }

    /// Runs `f`, returning its result and the addresses of the allocations of at least
    /// `threshold` bytes made meanwhile (reallocations included: their new address).
    ///
    /// # Panics
    ///
    /// When more than [`TRACKED_SLOTS`] such allocations were made.
    pub fn large_allocations_of<R>(
        &self,
        threshold: usize,
        f: impl FnOnce() -> R,
    ) -> (R, Vec<usize>) {
        self.tracked.store(0, Ordering::SeqCst);
        self.track_threshold.store(threshold, Ordering::SeqCst);
        let result = f();
        self.track_threshold.store(usize::MAX, Ordering::SeqCst);
        let n = self.tracked.load(Ordering::SeqCst);
        assert!(
            n <= TRACKED_SLOTS,
            "{n} allocations of at least {threshold} bytes: more than the {TRACKED_SLOTS} recorded"
        );
        let addresses = self.slots[..n]
            .iter()
            .map(|a| a.load(Ordering::SeqCst))
            .collect();
        (result, addresses)
    }

    /// The lock that measuring tests of one binary hold for their whole run. A test that
    /// panicked while holding it does not poison it for the others.
    pub fn serial(&self) -> MutexGuard<'_, ()> {
        self.serial.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn grew(&self, ptr: *mut u8, n: usize) {
        let live = self.live.fetch_add(n, Ordering::SeqCst) + n;
        self.peak.fetch_max(live, Ordering::SeqCst);
        if n >= self.track_threshold.load(Ordering::Relaxed) {
            let i = self.tracked.fetch_add(1, Ordering::SeqCst);
            if let Some(slot) = self.slots.get(i) {
                slot.store(ptr as usize, Ordering::SeqCst);
            }
        }
    }

    fn shrank(&self, n: usize) {
        self.live.fetch_sub(n, Ordering::SeqCst);
    }
}

impl Default for CountingAlloc {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every method hands the caller's arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract, and returns what `System` returned; the only other thing it does is
// update atomic counters, which never allocates (so the allocator never re-enters itself) and
// never panics. Refusing a request returns null, which the contract allows: it is how an
// allocator reports that it cannot satisfy a request, and no memory is handed out then.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > self.refuse_above {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract (a non-zero size), which
        // is `System.alloc`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.grew(p, layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > self.refuse_above {
            return std::ptr::null_mut();
        }
        // SAFETY: as for `alloc`: the caller's contract is `System.alloc_zeroed`'s.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.grew(p, layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller passes a block this allocator returned with this layout; every
        // block it returns came from `System` with the same layout.
        unsafe { System.dealloc(ptr, layout) };
        self.shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > self.refuse_above {
            // the old block stays valid and allocated, as the contract requires on failure
            return std::ptr::null_mut();
        }
        // SAFETY: `ptr` and `layout` describe a block `System` allocated (see `dealloc`), and
        // the caller guarantees `new_size` is non-zero and does not overflow when rounded up
        // to the alignment: `System.realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.shrank(layout.size());
            self.grew(p, new_size);
        }
        p
    }
}
