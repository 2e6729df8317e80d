//! The error type of the `zarr` command and how it is shown: one line, exit code 1 for bad
//! input, 2 for bad usage.

use zarr_array::zarr_codecs::CodecError;
use zarr_array::zarr_grid::GridError;
use zarr_array::zarr_meta::{ExtensionPoint, MetaError};
use zarr_array::ArrayError;

use crate::layout::{REGULAR_BOUNDED, SPARSE_CODEC};
use crate::npy::NpyError;

/// Everything a subcommand can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// Arguments that do not make sense together (exit code 2, like clap's usage errors).
    #[error("{message}")]
    Usage {
        /// What is wrong, and the fix.
        message: String,
    },
    /// Input that is wrong for the array or file at hand (exit code 1).
    #[error("{message}")]
    Input {
        /// What is wrong, and the fix.
        message: String,
    },
    /// A `.npy` file is malformed or unsupported.
    #[error("{path}")]
    Npy {
        /// The file.
        path: String,
        /// What is wrong.
        #[source]
        source: NpyError,
    },
    /// The library refused, about `context` (a PATH, a key, an option). The message shows the
    /// context; the causes are the source's chain, shown once by [`CliError::one_line`], with
    /// the fix when the error's variant has one.
    #[error("{context}")]
    Zarr {
        /// The PATH (or what was being done).
        context: String,
        /// The library's error.
        #[source]
        source: Box<ArrayError>,
    },
    /// Reading or writing a file failed.
    #[error("{path}")]
    Io {
        /// The file or directory.
        path: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// An operation would need more memory than its budget (`--max-memory`).
    #[error("{what} needs {} of memory, more than the budget of {} (raise it with --max-memory)", bytes(*needed), bytes(*budget))]
    OverBudget {
        /// What needs the memory.
        what: String,
        /// Bytes needed.
        needed: u64,
        /// The budget, in bytes.
        budget: u64,
    },
    /// An allocation failed (the system has not the memory, or the address space is limited).
    #[error("cannot allocate {} for {what}", bytes(*needed))]
    Alloc {
        /// What the memory was for.
        what: String,
        /// Bytes asked for.
        needed: u64,
    },
    /// A file to write would not fit on its filesystem.
    #[error("{path}: needs {} but its filesystem has {} free", bytes(*needed), bytes(*available))]
    NoSpace {
        /// The file.
        path: String,
        /// Bytes the file needs.
        needed: u64,
        /// Bytes free there.
        available: u64,
    },
    /// The command ran and found problems it has already reported (validate, conformance run).
    #[error("{summary}")]
    Failed {
        /// One line summing up.
        summary: String,
    },
}

/// Shorthand.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// `n` bytes for a message: exact below 1 KiB, else in KiB, MiB, GiB or TiB with two decimals
/// (and the exact count).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.2} {} ({n} bytes)", UNITS[unit])
}

/// A zeroed buffer of `needed` bytes, allocated fallibly (no abort when the memory is not
/// there); `zeroed: false` leaves it empty with that capacity.
///
/// The zeroed buffer comes from the allocator's zeroed allocation (`calloc`: fresh pages
/// of the system, zero already), not written with zeros here: an export's output buffer
/// (tens of MiB) is then not touched before its chunks are requested, and its pages are
/// first written by the threads that decode into it.
///
/// # Errors
/// [`CliError::Alloc`] naming `what` and the size.
pub fn try_alloc(needed: u64, what: &str, zeroed: bool) -> Result<Vec<u8>> {
    let alloc = || CliError::Alloc {
        what: what.to_string(),
        needed,
    };
    let n = usize::try_from(needed).map_err(|_| alloc())?;
    if zeroed {
        return bytemuck::allocation::try_zeroed_slice_box::<u8>(n)
            .map(Vec::from)
            .map_err(|()| alloc());
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| alloc())?;
    Ok(v)
}

impl CliError {
    /// A usage error.
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::Usage {
            message: message.into(),
        }
    }

    /// A bad-input error.
    pub fn input(message: impl Into<String>) -> Self {
        CliError::Input {
            message: message.into(),
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl std::fmt::Display, source: std::io::Error) -> Self {
        CliError::Io {
            path: path.to_string(),
            source,
        }
    }

    /// The process exit code.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage { .. } => 2,
            _ => 1,
        }
    }

    /// The message: one line, each cause once, then the fix where the error's variant has one.
    pub fn one_line(&self) -> String {
        match self {
            // the library's context is left out where it names the node at `context`
            CliError::Zarr { context, source } => {
                format!("{context}: {}", explain(source, &["", "/"]))
            }
            other => chain(other),
        }
    }
}

/// Wraps a library error with the path (or operation) it concerns. The errors a user meets
/// first (nothing there, something there already, a group for an array) get a message that
/// names the fix; the rest keep the library's error as their source.
pub fn zarr(context: impl std::fmt::Display, source: ArrayError) -> CliError {
    let context = context.to_string();
    match &source {
        ArrayError::NotFound { .. } => CliError::input(format!(
            "{context}: no Zarr array or group here (no zarr.json; create one with `zarr create` \
             or `zarr import`)"
        )),
        ArrayError::AlreadyExists { .. } => CliError::input(format!(
            "{context}: a Zarr array or group is already here (choose another path, or delete \
             it first)"
        )),
        ArrayError::WrongNodeType {
            expected, found, ..
        } => CliError::input(format!(
            "{context} is a {found}, not {} {expected} (`zarr tree {context}` lists what it holds)",
            if expected.starts_with('a') { "an" } else { "a" }
        )),
        _ => CliError::Zarr {
            context,
            source: Box::new(source),
        },
    }
}

/// An error and its causes on one line, each cause once ([`zarr_array::report`]).
pub fn chain(e: &dyn std::error::Error) -> String {
    zarr_array::report(e)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A library error on one line: its causes, each once, without the library's own context (a
/// node path, `/` for the root, or a chunk key) when it is one of `named`, which the caller
/// shows itself; then the fix, where the error's variant has one.
pub fn explain(e: &ArrayError, named: &[&str]) -> String {
    let causes = match e {
        ArrayError::Metadata { path, source } if named.contains(&path.as_str()) => chain(source),
        ArrayError::Codec { context, source } if named.contains(&context.as_str()) => chain(source),
        ArrayError::Sparse { context, source } if named.contains(&context.as_str()) => {
            chain(source)
        }
        other => chain(other),
    };
    match hint(e) {
        Some(hint) => format!("{causes} ({hint})"),
        None => causes,
    }
}

/// The fix for an error, chosen by its variant: an array that needs an extension of this
/// project which the registry lacks (`--without`, or a build without it) can be copied to a
/// layout without it.
fn hint(e: &ArrayError) -> Option<&'static str> {
    match lacking_extension(e)? {
        (ExtensionPoint::ChunkGrid, name) if name == REGULAR_BOUNDED => Some(
            "a reader without this chunk grid must refuse the array; `zarr convert SRC DST \
             --to-regular` writes a copy such readers can read",
        ),
        (ExtensionPoint::Codec, name) if name == SPARSE_CODEC => Some(
            "a reader without this codec must refuse the array; `zarr convert SRC DST --dense` \
             writes a copy such readers can read",
        ),
        _ => None,
    }
}

/// The extension point and name of an extension the registry does not know or this build
/// left out, when that is what `e` is about.
fn lacking_extension(e: &ArrayError) -> Option<(ExtensionPoint, &str)> {
    let meta = match e {
        ArrayError::Metadata { source, .. } | ArrayError::Grid(GridError::Meta(source)) => source,
        ArrayError::Codec { source, .. } => codec_metadata(source)?,
        _ => return None,
    };
    match meta {
        MetaError::UnknownExtension { point, name }
        | MetaError::CompiledOut { point, name, .. } => Some((*point, name.as_str())),
        _ => None,
    }
}

/// The metadata error a codec error is about (through the inner chunks of shards).
fn codec_metadata(e: &CodecError) -> Option<&MetaError> {
    match e {
        CodecError::Metadata(meta) => Some(meta),
        CodecError::InnerChunk { source, .. } => codec_metadata(source),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shows its source in its message, as thiserror's `"{context}: {source}"` does.
    #[derive(Debug, thiserror::Error)]
    #[error("gzip failed: {source}")]
    struct Embeds {
        #[source]
        source: std::io::Error,
    }

    /// Shows its source only through `source()`.
    #[derive(Debug, thiserror::Error)]
    #[error("reading c/0/0")]
    struct Links {
        #[source]
        source: Embeds,
    }

    fn disk() -> std::io::Error {
        std::io::Error::other("disk on fire")
    }

    #[test]
    fn chain_shows_each_cause_once() {
        assert_eq!(
            chain(&Embeds { source: disk() }),
            "gzip failed: disk on fire"
        );
        let linked = Links {
            source: Embeds { source: disk() },
        };
        assert_eq!(chain(&linked), "reading c/0/0: gzip failed: disk on fire");
    }

    fn unknown(point: ExtensionPoint, name: &str) -> MetaError {
        MetaError::UnknownExtension {
            point,
            name: name.into(),
        }
    }

    #[test]
    fn hints_by_variant() {
        let to_regular = "`zarr convert SRC DST --to-regular`";
        let dense = "`zarr convert SRC DST --dense`";
        let bounded = || unknown(ExtensionPoint::ChunkGrid, REGULAR_BOUNDED);
        let line = zarr(
            "z",
            ArrayError::Metadata {
                path: "".into(),
                source: bounded(),
            },
        )
        .one_line();
        assert!(
            line.starts_with("z: unknown chunk grid \"regular_bounded\" (a reader without"),
            "{line}"
        );
        assert!(line.contains(to_regular), "{line}");
        let line = zarr("z", ArrayError::Grid(GridError::Meta(bounded()))).one_line();
        assert!(line.contains(to_regular), "{line}");

        // through a shard's inner chain, compiled out rather than unknown; the root's "/" is
        // left out
        let compiled_out = CodecError::Metadata(MetaError::CompiledOut {
            point: ExtensionPoint::Codec,
            name: SPARSE_CODEC.into(),
            feature: "sparse",
        });
        let e = ArrayError::Codec {
            context: "/".into(),
            source: CodecError::InnerChunk {
                chunk: vec![0, 0],
                source: Box::new(compiled_out),
            },
        };
        let line = zarr("z", e).one_line();
        assert!(line.starts_with("z: inner chunk [0, 0]"), "{line}");
        assert!(line.contains(dense), "{line}");

        // the variant decides, not the text: the same words elsewhere get no hint
        let text = ArrayError::Unsupported {
            operation: "reading",
            reason: "unknown chunk grid \"regular_bounded\"".into(),
        };
        let line = zarr("z", text).one_line();
        assert!(!line.contains(to_regular), "{line}");
        let wrong_point = ArrayError::Metadata {
            path: "".into(),
            source: unknown(ExtensionPoint::Codec, REGULAR_BOUNDED),
        };
        let line = zarr("z", wrong_point).one_line();
        assert!(
            !line.contains(to_regular) && !line.contains(dense),
            "{line}"
        );
    }

    #[test]
    fn explain_leaves_out_only_the_named_context() {
        let corrupt = || ArrayError::Codec {
            context: "a/c/0/0".into(),
            source: CodecError::Corrupt {
                codec: "zstd",
                reason: "not a zstd frame".into(),
            },
        };
        assert_eq!(
            explain(&corrupt(), &["a/c/0/0"]),
            "zstd data is corrupt: not a zstd frame"
        );
        assert_eq!(
            zarr("z", corrupt()).one_line(),
            "z: a/c/0/0: zstd data is corrupt: not a zstd frame"
        );
    }

    /// Resident memory of this process, from `/proc/self/statm` (pages times 4 KiB: the
    /// comparison below needs no exact page size).
    #[cfg(target_os = "linux")]
    fn resident_bytes() -> u64 {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
        pages * 4096
    }

    /// A zeroed buffer is not written with zeros by the allocation (an export's output
    /// buffer of tens of MiB was, before its chunks were even requested): its pages are not
    /// resident until used, yet it reads as zeros.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_zeroed_buffer_is_not_written_by_its_allocation() {
        const N: u64 = 256 << 20;
        let before = resident_bytes();
        let buf = try_alloc(N, "a test buffer", true).unwrap();
        let grown = resident_bytes().saturating_sub(before);
        assert_eq!(buf.len() as u64, N);
        assert!(grown < N / 4, "{grown} bytes became resident");
        assert!(buf.iter().step_by(4093).all(|&b| b == 0));
        let empty = try_alloc(1 << 20, "a test buffer", false).unwrap();
        assert!(empty.is_empty() && empty.capacity() >= 1 << 20);
        let err = try_alloc(u64::MAX, "a huge buffer", true).unwrap_err();
        assert!(
            matches!(
                err,
                CliError::Alloc {
                    needed: u64::MAX,
                    ..
                }
            ),
            "{err:?}"
        );
    }
}
