//! Parallel loops in which the calling thread takes part.
//!
//! A rayon parallel iterator started on a thread outside rayon's pool hands the whole loop to
//! the pool's workers and puts the caller to sleep until they are done. On a virtual machine
//! whose scheduler gathers idle threads onto one vCPU, the workers woken after a pause then
//! share that vCPU for the whole of a short loop: measured on this project's 2-vCPU machines,
//! 64 items of 0.125 ms each took 8.2 ms (the work of one core) after a pause of 20 ms or more,
//! against 4.2 ms right after another loop. Here the calling thread takes items too, from a
//! shared counter, beside one task per pool worker: it keeps running where it runs, the
//! workers join it as they wake, and the same loop took 4.2-4.3 ms after pauses of 2 to
//! 60 ms.
//!
//! Inside the pool (a loop nested in another) these are rayon's own loops, whose work
//! stealing already keeps the calling worker busy; with one item, or one thread, they run on
//! the calling thread alone.
//!
//! ```
//! use zarr_codecs::parallel;
//!
//! let items: Vec<u64> = (1..=100).collect();
//! let squares = parallel::try_map(&items, |_, &x| Ok::<u64, String>(x * x))?;
//! assert_eq!(squares[9], 100);
//! assert_eq!(parallel::try_map(&items, |_, &x| if x == 50 { Err(x) } else { Ok(x) }), Err(50));
//!
//! let mut sums = vec![0u64; 10];
//! parallel::try_for_each_mut(&mut sums, Vec::<u64>::new, |scratch, i, sum| {
//!     scratch.clear();
//!     scratch.extend(0..=i as u64);
//!     *sum = scratch.iter().sum();
//!     Ok::<(), String>(())
//! })?;
//! assert_eq!(sums[4], 10);
//! # Ok::<(), String>(())
//! ```

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;

/// Whether a loop of `len` items runs on the calling thread alone.
fn serial(len: usize) -> bool {
    len <= 1 || rayon::current_num_threads() <= 1
}

/// Runs `work` on the calling thread and in one task per pool worker (no more than the
/// `len - 1` items the caller leaves), and returns when all have returned. A panic in any of
/// them is resumed on the caller once all have stopped.
fn run_helping(len: usize, work: &(dyn Fn() + Sync)) {
    let helpers = rayon::current_num_threads().min(len.saturating_sub(1));
    rayon::in_place_scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|_| work());
        }
        work();
    });
}

/// `f(i, &items[i])` for every item, in parallel (the calling thread taking part), the
/// results in the order of `items`. After an error no further item is started, and an error
/// is returned: from outside the pool, that of the first failing item in the order of
/// `items` (every item before it ran).
///
/// # Errors
/// The first error `f` returns.
pub fn try_map<T, R, E, F>(items: &[T], f: F) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
    F: Fn(usize, &T) -> Result<R, E> + Sync,
{
    if serial(items.len()) {
        return items.iter().enumerate().map(|(i, t)| f(i, t)).collect();
    }
    if rayon::current_thread_index().is_some() {
        return items.par_iter().enumerate().map(|(i, t)| f(i, t)).collect();
    }
    map_with(items, f, &|len, work| run_helping(len, work))
}

/// As [`try_map`], but on the calling thread and up to `threads - 1` threads of its own, for
/// items that mostly wait on a store that serves many requests at once (see
/// [`try_for_each_mut_on_threads`]).
///
/// # Errors
/// The first error `f` returns.
pub fn try_map_on_threads<T, R, E, F>(items: &[T], threads: usize, f: F) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
    F: Fn(usize, &T) -> Result<R, E> + Sync,
{
    map_with(items, f, &|len, work| on_threads(threads, len, work))
}

/// The loop of [`try_map`] and [`try_map_on_threads`]: `run(len, work)` runs `work` on each
/// participant, which draw the items' indices from one counter.
fn map_with<T, R, E, F>(
    items: &[T],
    f: F,
    run: &dyn Fn(usize, &(dyn Fn() + Sync)),
) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
    F: Fn(usize, &T) -> Result<R, E> + Sync,
{
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let done: Mutex<Vec<(usize, Result<R, E>)>> = Mutex::new(Vec::with_capacity(items.len()));
    run(items.len(), &|| {
        let mut mine = Vec::new();
        while !failed.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                break;
            };
            let result = f(i, item);
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            mine.push((i, result));
        }
        done.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(mine);
    });
    let mut done = done.into_inner().unwrap_or_else(PoisonError::into_inner);
    done.sort_unstable_by_key(|(i, _)| *i);
    // with no error every item ran; with one, the first error in order ends the collection
    done.into_iter().map(|(_, result)| result).collect()
}

/// Runs `work` on the calling thread and on up to `threads - 1` scoped threads of its own (no
/// more than the `len - 1` items the caller leaves), and returns when all have returned.
fn on_threads(threads: usize, len: usize, work: &(dyn Fn() + Sync)) {
    let extra = threads.saturating_sub(1).min(len.saturating_sub(1));
    std::thread::scope(|scope| {
        for _ in 0..extra {
            scope.spawn(work);
        }
        work();
    });
}

/// `f(state, i, &mut items[i])` for every item, in parallel (the calling thread taking part),
/// each participant with its own `state` from `init` (a scratch buffer). After an error no
/// further item is started, and one of the errors is returned.
///
/// # Errors
/// An error `f` returned.
pub fn try_for_each_mut<T, S, E, I, F>(items: &mut [T], init: I, f: F) -> Result<(), E>
where
    T: Send,
    E: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, usize, &mut T) -> Result<(), E> + Sync,
{
    if serial(items.len()) {
        let mut state = init();
        return items
            .iter_mut()
            .enumerate()
            .try_for_each(|(i, t)| f(&mut state, i, t));
    }
    if rayon::current_thread_index().is_some() {
        return items
            .par_iter_mut()
            .enumerate()
            .try_for_each_init(&init, |state, (i, t)| f(state, i, t));
    }
    each_cell(items, init, f, &|len, work| run_helping(len, work))
}

/// As [`try_for_each_mut`], but on the calling thread and up to `threads - 1` threads of its
/// own, for items that mostly wait (a read from a store that serves many requests at once:
/// an object store). rayon's pool has a thread per core, so a loop on it keeps only as many
/// requests in flight as there are cores; here `threads` of them are.
///
/// ```
/// use zarr_codecs::parallel;
///
/// let mut waited = vec![0u32; 32];
/// parallel::try_for_each_mut_on_threads(&mut waited, 16, || (), |_, _, w| {
///     std::thread::sleep(std::time::Duration::from_millis(10)); // a request in flight
///     *w = 1;
///     Ok::<(), ()>(())
/// })?;
/// assert!(waited.iter().all(|&w| w == 1));
/// # Ok::<(), ()>(())
/// ```
///
/// # Errors
/// An error `f` returned.
pub fn try_for_each_mut_on_threads<T, S, E, I, F>(
    items: &mut [T],
    threads: usize,
    init: I,
    f: F,
) -> Result<(), E>
where
    T: Send,
    E: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, usize, &mut T) -> Result<(), E> + Sync,
{
    each_cell(items, init, f, &|len, work| on_threads(threads, len, work))
}

/// The loop of [`try_for_each_mut`] and [`try_for_each_mut_on_threads`]: `run(len, work)`
/// runs `work` on each participant, which draw the items' indices from one counter, so each
/// item is taken once.
fn each_cell<T, S, E, I, F>(
    items: &mut [T],
    init: I,
    f: F,
    run: &dyn Fn(usize, &(dyn Fn() + Sync)),
) -> Result<(), E>
where
    T: Send,
    E: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, usize, &mut T) -> Result<(), E> + Sync,
{
    // each item is taken once, by whoever draws its index: its lock is never contended
    let cells: Vec<Mutex<&mut T>> = items.iter_mut().map(Mutex::new).collect();
    let next = AtomicUsize::new(0);
    let error: Mutex<Option<E>> = Mutex::new(None);
    let failed = AtomicBool::new(false);
    run(cells.len(), &|| {
        let mut state = None;
        while !failed.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(cell) = cells.get(i) else {
                break;
            };
            let mut item = cell.lock().unwrap_or_else(PoisonError::into_inner);
            let state = state.get_or_insert_with(&init);
            if let Err(e) = f(state, i, &mut item) {
                failed.store(true, Ordering::Relaxed);
                error
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert(e);
            }
        }
    });
    match error.into_inner().unwrap_or_else(PoisonError::into_inner) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_runs_once_in_order_from_outside_and_inside_the_pool() {
        let items: Vec<usize> = (0..1000).collect();
        let got = try_map(&items, |i, &x| {
            assert_eq!(i, x);
            Ok::<_, ()>(x * 2)
        })
        .unwrap();
        assert_eq!(got, (0..1000).map(|x| x * 2).collect::<Vec<_>>());
        // nested: inside a pool worker, rayon's own loop
        let nested = rayon::scope(|_| try_map(&items, |_, &x| Ok::<_, ()>(x + 1))).unwrap();
        assert_eq!(nested[999], 1000);
        let mut marks = vec![0u32; 1000];
        try_for_each_mut(
            &mut marks,
            || (),
            |_, i, m| {
                *m += 1 + i as u32;
                Ok::<_, ()>(())
            },
        )
        .unwrap();
        assert!(marks.iter().enumerate().all(|(i, &m)| m == 1 + i as u32));
    }

    #[test]
    fn the_first_error_in_order_is_returned_and_no_item_starts_after_it_is_seen() {
        let items: Vec<usize> = (0..10_000).collect();
        let started = AtomicUsize::new(0);
        let got = try_map(&items, |_, &x| {
            started.fetch_add(1, Ordering::Relaxed);
            if x % 100 == 7 {
                Err(x)
            } else {
                Ok(x)
            }
        });
        // items are drawn in order, so every item before a failing one ran: 7 is the error
        assert_eq!(got, Err(7));
        assert!(started.load(Ordering::Relaxed) < items.len());
        let mut items = items;
        let got = try_for_each_mut(
            &mut items,
            || (),
            |_, _, x| {
                if *x == 5000 {
                    Err("five thousand")
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(got, Err("five thousand"));
    }

    #[test]
    fn a_panic_in_an_item_reaches_the_caller() {
        let items: Vec<usize> = (0..64).collect();
        let caught = std::panic::catch_unwind(|| {
            try_map(&items, |_, &x| {
                assert!(x != 33, "item 33");
                Ok::<_, ()>(x)
            })
        });
        assert!(caught.is_err());
    }
}
