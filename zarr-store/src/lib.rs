#![doc = include_str!("../README.md")]
// No `unsafe`: the filesystem store's system calls go through rustix (`filesystem/sys.rs`).
#![forbid(unsafe_code)]

#[cfg(feature = "testing")]
mod counting;
mod error;
#[cfg(feature = "testing")]
mod faulty;
mod fetch;
mod filesystem;
mod key;
mod memory;
#[cfg(feature = "object-store")]
mod object;
mod open;
mod range;
mod remote;
mod store;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "testing")]
mod unconditional;

pub use error::{Result, StoreError};
pub use fetch::{Deliver, Fetch, Fetched, Write};
pub use filesystem::{FilesystemStore, LOCK_FILE};
pub use key::{validate_key, validate_prefix, TEMP_PREFIX};
pub use memory::MemoryStore;
#[cfg(feature = "object-store")]
pub use object::{ObjectStoreBackend, MAX_CONCURRENT_REQUESTS};
/// The `object_store` crate this crate builds on (cargo feature `object-store`), re-exported so
/// that callers build their `Arc<dyn ObjectStore>` with the same version.
#[cfg(feature = "object-store")]
pub use object_store;
pub use open::{open_url, open_url_with, StoreUrl};
pub use range::ByteRange;
pub use remote::{parse_concurrency, RemoteOptions, CONCURRENCY_ENV, DEFAULT_REMOTE_CONCURRENCY};
pub use store::{Condition, ListDir, Outcome, Piece, Store, StoreExt, StoredValue, Version};
