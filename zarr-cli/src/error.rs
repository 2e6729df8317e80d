//! The error type of the `zarr` command and how it is shown: one line, exit code 1 for bad
//! input, 2 for bad usage.

use zarr_array::ArrayError;

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
    #[error("{path}: {source}")]
    Npy {
        /// The file.
        path: String,
        /// What is wrong.
        #[source]
        source: NpyError,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
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

    /// The message: one line, with the causes the top message does not already show.
    pub fn one_line(&self) -> String {
        chain(self)
    }
}

/// Wraps a library error with the path (or operation) it concerns, adding the fix where the
/// library's message has none.
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
        ArrayError::Metadata { path, source: meta } if path == "/" || path.is_empty() => {
            CliError::input(with_hint(format!("{context}: {}", chain(meta))))
        }
        _ => CliError::input(with_hint(format!("{context}: {}", chain(&source)))),
    }
}

/// An error and its causes on one line (causes the message already shows are left out).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        source = s.source();
    }
    msg.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Adds the fix to messages about extensions a reader lacks.
fn with_hint(message: String) -> String {
    let lacking = message.contains("unknown ") || message.contains("unsupported ");
    if lacking && message.contains("\"regular_bounded\"") {
        format!(
            "{message} (a reader without this chunk grid must refuse the array; \
             `zarr convert SRC DST --to-regular` writes a copy such readers can read)"
        )
    } else if lacking && message.contains("\"sparse_layout\"") {
        format!(
            "{message} (a reader without this codec must refuse the array; `zarr convert SRC \
             DST --dense` writes a copy such readers can read)"
        )
    } else {
        message
    }
}
