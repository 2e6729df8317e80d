#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod array;
mod consolidated;
pub mod data_type;
mod error;
pub mod ext;
mod fill_value;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod numpy;
mod pyjson;
pub mod v2;

pub use array::{ArrayMetadata, GroupMetadata, NodeMetadata};
pub use consolidated::ConsolidatedMetadata;
pub use data_type::{DataKind, DataType};
pub use error::{MetaError, Result};
pub use ext::{ExtensionDef, ExtensionPoint, Registry, Resolved};
pub use fill_value::FillValue;
