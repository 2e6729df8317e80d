#![doc = include_str!("../README.md")]

mod error;
mod filesystem;
mod key;
mod memory;
mod range;
mod store;
#[cfg(feature = "testing")]
pub mod testing;

pub use error::{Result, StoreError};
pub use filesystem::FilesystemStore;
pub use key::{validate_key, validate_prefix, TEMP_PREFIX};
pub use memory::MemoryStore;
pub use range::ByteRange;
pub use store::{ListDir, Store, StoreExt};
