//! Async reads and writes of regions, for callers that run an async executor (tokio or any
//! other): [`Array::read_region_async`] and friends.
//!
//! They run on the engine of the synchronous calls (a remote store's requests in flight on its
//! own runtime, chunks decoded on the rayon pool) from a thread of their own, and their
//! future only waits for the answer: the caller's executor is never blocked and no runtime is
//! started inside it.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use ndarray::ArrayD;
use zarr_grid::geometry::Region;

use crate::array::Array;
use crate::element::Element;
use crate::error::{ArrayError, Result};

/// The future of an async read or write: the call's answer once its thread has it.
///
/// Dropping it does not stop the call (a write goes on to its end); its answer is dropped.
#[must_use = "a future does nothing unless awaited (the call runs anyway; its answer is lost)"]
#[derive(Debug)]
pub struct Pending<T> {
    slot: Arc<Mutex<Slot<T>>>,
}

#[derive(Debug)]
struct Slot<T> {
    /// The answer, or the panic of the call (raised again where the future is polled).
    answer: Option<std::thread::Result<T>>,
    waker: Option<Waker>,
}

impl<T> Future for Pending<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        match slot.answer.take() {
            Some(Ok(answer)) => Poll::Ready(answer),
            Some(Err(panic)) => {
                drop(slot);
                std::panic::resume_unwind(panic)
            }
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Runs `call` on a thread of its own and returns the future of its answer.
fn spawn<T: Send + 'static>(
    call: impl FnOnce() -> Result<T> + Send + 'static,
) -> Pending<Result<T>> {
    let slot = Arc::new(Mutex::new(Slot {
        answer: None,
        waker: None,
    }));
    let filled = slot.clone();
    let deliver = move |answer: std::thread::Result<Result<T>>| {
        let mut slot = filled.lock().unwrap_or_else(PoisonError::into_inner);
        slot.answer = Some(answer);
        if let Some(waker) = slot.waker.take() {
            drop(slot);
            waker.wake();
        }
    };
    let (call_deliver, deliver) = (deliver.clone(), deliver);
    let spawned = std::thread::Builder::new()
        .name("zarr-async".into())
        .spawn(move || call_deliver(std::panic::catch_unwind(AssertUnwindSafe(call))));
    if let Err(e) = spawned {
        // no thread to be had: the future answers with the error at once
        deliver(Ok(Err(ArrayError::Unsupported {
            operation: "an async read or write",
            reason: format!("cannot start its thread: {e}"),
        })));
    }
    Pending { slot }
}

impl Array {
    /// [`Array::read_region_bytes`] as a future (C order, native byte order): for async
    /// callers, which it never blocks (see the [module](crate::nonblocking) documentation).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarr_array::{ArrayBuilder, DataType, Region};
    ///
    /// let a = ArrayBuilder::new(vec![4, 4], DataType::UInt8)
    ///     .chunk_shape(vec![2, 2])
    ///     .create(Arc::new(zarr_store::MemoryStore::new()), "a")?;
    /// let region = Region::new(vec![1, 1], vec![2, 2])?;
    /// // any executor: here a minimal one
    /// let write = a.write_region_bytes_async(region.clone(), vec![1, 2, 3, 4]);
    /// let read = async { write.await?; a.read_region_bytes_async(region).await };
    /// let bytes = block_on(read)?;
    /// assert_eq!(bytes, [1, 2, 3, 4]);
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     use std::task::{Context, Poll, Wake, Waker};
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl Wake for Unpark { fn wake(self: Arc<Self>) { self.0.unpark() } }
    /// #     let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop {
    /// #         if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) { return v }
    /// #         std::thread::park();
    /// #     }
    /// # }
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Array::read_region_bytes`].
    pub fn read_region_bytes_async(&self, region: Region) -> Pending<Result<Vec<u8>>> {
        let array = self.clone();
        spawn(move || array.read_region_bytes(&region))
    }

    /// [`Array::read_region`] as a future.
    ///
    /// # Errors
    /// As [`Array::read_region`].
    pub fn read_region_async<T: Element>(&self, region: Region) -> Pending<Result<ArrayD<T>>> {
        let array = self.clone();
        spawn(move || array.read_region::<T>(&region))
    }

    /// [`Array::write_region_bytes`] as a future: `data` is the region's bytes (C order,
    /// native byte order).
    ///
    /// # Errors
    /// As [`Array::write_region_bytes`].
    pub fn write_region_bytes_async(&self, region: Region, data: Vec<u8>) -> Pending<Result<()>> {
        let array = self.clone();
        spawn(move || array.write_region_bytes(&region, &data))
    }

    /// [`Array::write_region`] as a future.
    ///
    /// # Errors
    /// As [`Array::write_region`].
    pub fn write_region_async<T: Element>(
        &self,
        region: Region,
        data: ArrayD<T>,
    ) -> Pending<Result<()>> {
        let array = self.clone();
        spawn(move || array.write_region(&region, data.view()))
    }
}
