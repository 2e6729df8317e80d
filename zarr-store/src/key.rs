//! Key and prefix validation, shared by every store.

use crate::error::{Result, StoreError};

/// The name prefix of temporary files. No valid key has a segment that starts with it, so
/// listing can skip temporary files without ever hiding a key.
pub const TEMP_PREFIX: &str = ".tmp-";

/// Checks that `key` is a valid store key.
///
/// A key is a relative, `/`-separated path such as `a/b/zarr.json` or `arr/c/0/-1/2`. It is
/// refused (with [`StoreError::InvalidKey`]) when it
///
/// - is empty, or has an empty segment (`a//b`, a leading or a trailing `/`),
/// - has a `.` or `..` segment,
/// - contains a backslash or a NUL character,
/// - has a segment that starts with a drive prefix such as `C:` (absolute on Windows),
/// - has a segment that starts with [`TEMP_PREFIX`] (`.tmp-`), reserved for temporary files.
///
/// Every other character is allowed, so a valid key maps to a path under a store's root on
/// any platform and never leaves it.
///
/// ```
/// use zarr_store::validate_key;
///
/// assert!(validate_key("arr/c/0/-1/2").is_ok());
/// assert!(validate_key("arr/../../etc/passwd").is_err());
/// assert!(validate_key("/etc/passwd").is_err());
/// ```
pub fn validate_key(key: &str) -> Result<()> {
    match key_problem(key) {
        None => Ok(()),
        Some(reason) => Err(StoreError::InvalidKey {
            key: key.to_owned(),
            reason,
        }),
    }
}

/// Checks that `prefix` is a valid prefix: `""` (the whole store) or a valid key followed by
/// `/` (such as `a/b/`). Refused prefixes give [`StoreError::InvalidPrefix`].
///
/// ```
/// use zarr_store::validate_prefix;
///
/// assert!(validate_prefix("").is_ok());
/// assert!(validate_prefix("arr/c/").is_ok());
/// assert!(validate_prefix("arr/c").is_err());
/// assert!(validate_prefix("/").is_err());
/// ```
pub fn validate_prefix(prefix: &str) -> Result<()> {
    if prefix.is_empty() {
        return Ok(());
    }
    let problem = match prefix.strip_suffix('/') {
        None => Some("a non-empty prefix must end with '/'"),
        Some("") => Some("'/' alone is not a prefix (use \"\" for the whole store)"),
        Some(inner) => key_problem(inner),
    };
    match problem {
        None => Ok(()),
        Some(reason) => Err(StoreError::InvalidPrefix {
            prefix: prefix.to_owned(),
            reason,
        }),
    }
}

/// Why `key` is not a valid key, or `None` when it is.
fn key_problem(key: &str) -> Option<&'static str> {
    if key.is_empty() {
        return Some("it is empty");
    }
    if key.contains('\0') {
        return Some("NUL characters are not allowed");
    }
    if key.contains('\\') {
        return Some("backslashes are not allowed (use '/' to separate segments)");
    }
    if key.starts_with('/') {
        return Some("a leading '/' is not allowed (keys are relative)");
    }
    if key.ends_with('/') {
        return Some("a trailing '/' is not allowed");
    }
    key.split('/').find_map(segment_problem)
}

/// Why `segment` is not a valid key segment, or `None` when it is.
fn segment_problem(segment: &str) -> Option<&'static str> {
    if segment.is_empty() {
        return Some("empty segments ('//') are not allowed");
    }
    if segment == "." || segment == ".." {
        return Some("'.' and '..' segments are not allowed");
    }
    if segment.starts_with(TEMP_PREFIX) {
        return Some("segments starting with '.tmp-' are reserved for temporary files");
    }
    match segment.as_bytes() {
        [drive, b':', ..] if drive.is_ascii_alphabetic() => {
            Some("a drive prefix such as 'C:' is not allowed (keys are relative)")
        }
        _ => None,
    }
}

/// Whether a file or directory name found on disk may be part of a key (listing skips the
/// others, temporary files first of all).
pub(crate) fn is_valid_segment(name: &str) -> bool {
    !name.contains(['/', '\\', '\0']) && segment_problem(name).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_keys() {
        for key in [
            "a",
            "zarr.json",
            "a/b/zarr.json",
            "arr/c/0/-1/2",
            "arr/c/-1/-1",
            "a/.zarray",
            "a/0.0",
            "a/...",
            "a/.tmp",
            "a/tmp-1",
            "a/x.tmp-1",
            "a/__b",
            "ü/ñ",
            "with space/x",
            "ab:c",
            "1:x",
        ] {
            assert!(validate_key(key).is_ok(), "{key:?} should be valid");
        }
    }

    #[test]
    fn invalid_keys() {
        for key in [
            "",
            "/",
            "/a",
            "a/",
            "a//b",
            ".",
            "..",
            "a/..",
            "../a",
            "a/./b",
            "a\\b",
            "..\\a",
            "a\0b",
            ".tmp-1",
            "a/.tmp-x/b",
            "C:",
            "c:/x",
            "a/D:x",
            "a:b",
            "//server/share",
        ] {
            match validate_key(key) {
                Err(StoreError::InvalidKey { key: k, .. }) => assert_eq!(k, key),
                other => panic!("{key:?} should be refused, got {other:?}"),
            }
        }
    }

    #[test]
    fn prefixes() {
        for prefix in ["", "a/", "a/b/", "arr/c/-1/"] {
            assert!(
                validate_prefix(prefix).is_ok(),
                "{prefix:?} should be valid"
            );
        }
        for prefix in [
            "a", "/", "//", "a//", "/a/", "../", "a/../", ".tmp-x/", "a\\b/",
        ] {
            assert!(
                matches!(
                    validate_prefix(prefix),
                    Err(StoreError::InvalidPrefix { .. })
                ),
                "{prefix:?} should be refused"
            );
        }
    }

    #[test]
    fn messages_are_lower_case_without_period() {
        let Err(err) = validate_key("a//b") else {
            panic!("expected an error")
        };
        let message = err.to_string();
        assert_eq!(
            message,
            "invalid key \"a//b\": empty segments ('//') are not allowed"
        );
        assert!(!message.ends_with('.'));
    }

    #[test]
    fn on_disk_names() {
        assert!(is_valid_segment("zarr.json"));
        assert!(is_valid_segment("-1"));
        assert!(!is_valid_segment(".tmp-123-4-5"));
        assert!(!is_valid_segment(".."));
        assert!(!is_valid_segment("a\\b"));
    }
}
