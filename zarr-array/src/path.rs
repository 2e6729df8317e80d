//! Node paths inside a store.

use crate::error::{ArrayError, Result};

/// A validated node path: `""` for the root, else `/`-separated names (`"a/b"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct NodePath(String);

impl NodePath {
    /// The root node.
    pub fn root() -> Self {
        NodePath(String::new())
    }

    /// Validates a path. Leading and trailing `/` are removed; names must be non-empty, not
    /// `.` or `..`, must not begin with `__` (reserved by Zarr), and hold no `\` or NUL.
    ///
    /// # Errors
    /// [`ArrayError::InvalidPath`] saying what is wrong.
    pub fn new(path: &str) -> Result<Self> {
        let trimmed = path.trim_matches('/');
        let bad = |reason| ArrayError::InvalidPath {
            path: path.to_string(),
            reason,
        };
        if trimmed.is_empty() {
            return Ok(NodePath::root());
        }
        for name in trimmed.split('/') {
            if name.is_empty() {
                return Err(bad("empty name"));
            }
            if name == "." || name == ".." {
                return Err(bad("'.' and '..' are not node names"));
            }
            if name.starts_with("__") {
                return Err(bad("names beginning with '__' are reserved"));
            }
            if name.contains(['\\', '\0']) {
                return Err(bad("backslash and NUL are not allowed"));
            }
        }
        Ok(NodePath(trimmed.to_string()))
    }

    /// The path as a string (`""` for the root).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key of a child key under this node (`"zarr.json"` -> `"a/b/zarr.json"`).
    pub fn key(&self, suffix: &str) -> String {
        if self.0.is_empty() {
            suffix.to_string()
        } else {
            format!("{}/{suffix}", self.0)
        }
    }

    /// The prefix under which this node's keys lie (`""` or `"a/b/"`).
    pub fn prefix(&self) -> String {
        if self.0.is_empty() {
            String::new()
        } else {
            format!("{}/", self.0)
        }
    }

    /// A child path.
    ///
    /// # Errors
    /// If `name` is not a valid node name.
    pub fn child(&self, name: &str) -> Result<Self> {
        if name.contains('/') {
            return Err(ArrayError::InvalidPath {
                path: name.to_string(),
                reason: "a child name holds no '/'",
            });
        }
        NodePath::new(&self.key(name))
    }

    /// The parent node (`None` for the root).
    pub fn parent(&self) -> Option<NodePath> {
        if self.0.is_empty() {
            return None;
        }
        Some(match self.0.rsplit_once('/') {
            Some((parent, _)) => NodePath(parent.to_string()),
            None => NodePath::root(),
        })
    }

    /// The last name (`""` for the root).
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or("")
    }
}

impl std::fmt::Display for NodePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            f.write_str("/")
        } else {
            f.write_str(&self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_validated() {
        assert_eq!(
            NodePath::new("/a/b/").unwrap().key("zarr.json"),
            "a/b/zarr.json"
        );
        assert_eq!(NodePath::new("").unwrap().key("zarr.json"), "zarr.json");
        for bad in ["a//b", "a/../b", "./a", "__x", "a\\b", "a\0"] {
            assert!(NodePath::new(bad).is_err(), "{bad}");
        }
        assert!(NodePath::root().child("x/y").is_err());
        assert_eq!(NodePath::new("a/b").unwrap().name(), "b");
        assert_eq!(
            NodePath::new("a/b").unwrap().parent(),
            NodePath::new("a").ok()
        );
        assert_eq!(NodePath::new("a").unwrap().parent(), Some(NodePath::root()));
        assert_eq!(NodePath::root().parent(), None);
    }
}
