//! The NumPy time data types `numpy.datetime64` and `numpy.timedelta64`.
//!
//! Specified in zarr-extensions (`data-types/numpy.datetime64`, `data-types/numpy.timedelta64`)
//! and written by zarr-python 3.1.6 as an object with a unit and a scale factor:
//!
//! ```
//! use zarr_meta::data_type::{default_registry, TimeUnit};
//! use zarr_meta::{DataType, ExtensionDef, FillValue};
//! use serde_json::json;
//!
//! let def: ExtensionDef = serde_json::from_value(json!(
//!     {"name": "numpy.datetime64", "configuration": {"unit": "ms", "scale_factor": 10}}
//! )).unwrap();
//! let t = DataType::from_def(&def, &default_registry()).unwrap();
//! let DataType::DateTime64(scale) = t else { unreachable!() };
//! assert_eq!((scale.unit(), scale.scale_factor()), (TimeUnit::Millisecond, 10));
//! assert_eq!(t.size(), 8);
//! assert_eq!(t.to_def(), def); // written back exactly
//! // "NaT" (Not a Time) is the smallest i64; zarr-python writes it as that integer
//! let nat = FillValue::from_json(&json!("NaT"), t).unwrap();
//! assert_eq!(nat.as_bytes(), i64::MIN.to_ne_bytes());
//! assert_eq!(nat.to_json(t), json!(i64::MIN));
//! ```
//!
//! Each element is a signed 64-bit count of `scale_factor` units since the Unix epoch
//! (datetimes) or of elapsed time (timedeltas); `i64::MIN` is `NaT`. The `bytes` codec's
//! endianness applies to it as to an `int64`.

use std::fmt;
use std::num::NonZeroU32;

use serde::Deserialize;

use crate::error::Result;
use crate::ext::{ExtensionDef, ExtensionPoint};

/// The metadata name of [`DataType::DateTime64`](super::DataType::DateTime64).
pub const DATETIME64: &str = "numpy.datetime64";
/// The metadata name of [`DataType::TimeDelta64`](super::DataType::TimeDelta64).
pub const TIMEDELTA64: &str = "numpy.timedelta64";

/// The `NaT` (Not a Time) value of both time types.
pub const NAT: i64 = i64::MIN;

/// A NumPy time unit, as the `unit` of the configuration spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeUnit {
    /// `Y`
    Year,
    /// `M`
    Month,
    /// `W`
    Week,
    /// `D`
    Day,
    /// `h`
    Hour,
    /// `m`
    Minute,
    /// `s`
    Second,
    /// `ms`
    Millisecond,
    /// `us`
    Microsecond,
    /// `μs`: NumPy's other spelling of `us`, the same unit; kept apart so that a document is
    /// written back as it was read.
    MicrosecondMicroSign,
    /// `ns`
    Nanosecond,
    /// `ps`
    Picosecond,
    /// `fs`
    Femtosecond,
    /// `as`
    Attosecond,
    /// `generic`: a count without a unit (NumPy's `M8` without brackets).
    Generic,
}

/// Every unit, in the order of the specification.
pub const TIME_UNITS: [TimeUnit; 15] = [
    TimeUnit::Year,
    TimeUnit::Month,
    TimeUnit::Week,
    TimeUnit::Day,
    TimeUnit::Hour,
    TimeUnit::Minute,
    TimeUnit::Second,
    TimeUnit::Millisecond,
    TimeUnit::Microsecond,
    TimeUnit::MicrosecondMicroSign,
    TimeUnit::Nanosecond,
    TimeUnit::Picosecond,
    TimeUnit::Femtosecond,
    TimeUnit::Attosecond,
    TimeUnit::Generic,
];

impl TimeUnit {
    /// The spelling in metadata (`"ms"`, `"generic"`).
    pub fn as_str(self) -> &'static str {
        match self {
            TimeUnit::Year => "Y",
            TimeUnit::Month => "M",
            TimeUnit::Week => "W",
            TimeUnit::Day => "D",
            TimeUnit::Hour => "h",
            TimeUnit::Minute => "m",
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::MicrosecondMicroSign => "μs",
            TimeUnit::Nanosecond => "ns",
            TimeUnit::Picosecond => "ps",
            TimeUnit::Femtosecond => "fs",
            TimeUnit::Attosecond => "as",
            TimeUnit::Generic => "generic",
        }
    }

    /// The unit spelled `text` (case-sensitive: `M` is months, `m` minutes).
    pub fn from_str_exact(text: &str) -> Option<TimeUnit> {
        TIME_UNITS.into_iter().find(|u| u.as_str() == text)
    }

    /// The spelling NumPy's `dtype.str` uses (`us` for both microsecond spellings).
    pub fn numpy_str(self) -> &'static str {
        match self {
            TimeUnit::MicrosecondMicroSign => "us",
            other => other.as_str(),
        }
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The largest scale factor NumPy allows (`2^31 - 1`).
pub const MAX_SCALE_FACTOR: u32 = i32::MAX as u32;

/// The configuration of a time type: the unit and how many of it one step counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeScale {
    unit: TimeUnit,
    scale_factor: NonZeroU32,
}

/// Why a unit and scale factor do not make a [`TimeScale`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeScaleError {
    /// A scale factor outside `1..=2^31-1`.
    #[error("scale_factor {0} is out of range (expected 1 to 2147483647)")]
    ScaleFactorOutOfRange(u64),
    /// The `generic` unit with a scale factor other than 1 (NumPy has no such type).
    #[error("the unit \"generic\" takes scale_factor 1, got {0}")]
    GenericScaled(u32),
}

impl TimeScale {
    /// A unit with scale factor 1.
    pub const fn of(unit: TimeUnit) -> Self {
        TimeScale {
            unit,
            scale_factor: NonZeroU32::MIN,
        }
    }

    /// A unit and a scale factor (`1..=2^31-1`; 1 for the `generic` unit).
    ///
    /// # Errors
    /// [`TimeScaleError`] for a scale factor out of range.
    pub fn try_new(unit: TimeUnit, scale_factor: u64) -> std::result::Result<Self, TimeScaleError> {
        let scale = u32::try_from(scale_factor)
            .ok()
            .filter(|&s| s <= MAX_SCALE_FACTOR)
            .and_then(NonZeroU32::new)
            .ok_or(TimeScaleError::ScaleFactorOutOfRange(scale_factor))?;
        if unit == TimeUnit::Generic && scale.get() != 1 {
            return Err(TimeScaleError::GenericScaled(scale.get()));
        }
        Ok(TimeScale {
            unit,
            scale_factor: scale,
        })
    }

    /// The unit.
    pub fn unit(&self) -> TimeUnit {
        self.unit
    }

    /// The scale factor (at least 1).
    pub fn scale_factor(&self) -> u32 {
        self.scale_factor.get()
    }

    /// What goes between NumPy's brackets: `10ms`, `s`; empty for `generic`.
    pub fn numpy_suffix(&self) -> String {
        match (self.unit, self.scale_factor.get()) {
            (TimeUnit::Generic, _) => String::new(),
            (u, 1) => format!("[{}]", u.numpy_str()),
            (u, n) => format!("[{n}{}]", u.numpy_str()),
        }
    }

    /// Parses NumPy's bracket suffix (`""`, `"[s]"`, `"[10ms]"`, `"[generic]"`).
    pub fn from_numpy_suffix(suffix: &str) -> Option<Self> {
        if suffix.is_empty() {
            return Some(TimeScale::of(TimeUnit::Generic));
        }
        let inner = suffix.strip_prefix('[')?.strip_suffix(']')?;
        let digits = inner.bytes().take_while(u8::is_ascii_digit).count();
        let (n, unit) = inner.split_at(digits);
        let unit = TimeUnit::from_str_exact(unit)?;
        let n = match n {
            "" => 1,
            n if n.starts_with('0') => return None,
            n => n.parse().ok()?,
        };
        TimeScale::try_new(unit, n).ok()
    }

    /// The configuration object written in metadata.
    pub fn to_configuration(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("unit".into(), self.unit.as_str().into());
        m.insert("scale_factor".into(), self.scale_factor.get().into());
        m
    }

    /// Reads the configuration of a time type definition: exactly `unit` and `scale_factor`.
    ///
    /// # Errors
    /// A missing, unknown or mistyped field ([`MetaError::ConfigurationShape`](crate::MetaError::ConfigurationShape)); an unknown
    /// unit or a scale factor out of range ([`MetaError::InvalidConfiguration`](crate::MetaError::InvalidConfiguration)).
    pub fn from_def(def: &ExtensionDef) -> Result<Self> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Config {
            unit: String,
            scale_factor: u64,
        }
        let point = ExtensionPoint::DataType;
        let config: Config = def.parse_configuration(point)?;
        let unit = TimeUnit::from_str_exact(&config.unit).ok_or_else(|| {
            let known: Vec<&str> = TIME_UNITS.iter().map(|u| u.as_str()).collect();
            def.invalid_configuration(
                point,
                format!(
                    "unknown unit {:?} (expected one of {})",
                    config.unit,
                    known.join(", ")
                ),
            )
        })?;
        TimeScale::try_new(unit, config.scale_factor)
            .map_err(|e| def.invalid_configuration(point, e.to_string()))
    }
}

impl fmt::Display for TimeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scale_factor.get() {
            1 => write!(f, "{}", self.unit),
            n => write!(f, "{n}{}", self.unit),
        }
    }
}
