//! `zarr_rs._core.GroupCore`: the Rust half of `zarr_rs.Group`.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use zarr_array::Group;

use crate::array::{parse_json_map, ArrayCore};
use crate::engine::{self, Node};
use crate::error::{IntoPy, ReadOnlyError};
use crate::spec::{self, CreateArray};
use crate::threads::detach;

/// A Zarr group opened by the Rust engine (private: use `zarr_rs.Group`).
#[pyclass(module = "zarr_rs._core")]
#[derive(Debug)]
pub struct GroupCore {
    pub(crate) inner: Group,
    pub(crate) read_only: bool,
}

/// A node as its Python core object.
pub(crate) fn node_to_py(py: Python<'_>, node: Node, read_only: bool) -> PyResult<Py<PyAny>> {
    Ok(match node {
        Node::Array(a) => Py::new(py, ArrayCore::new(*a, read_only))?.into_any(),
        Node::Group(inner) => Py::new(py, GroupCore { inner, read_only })?.into_any(),
    })
}

impl GroupCore {
    fn writable(&self) -> PyResult<()> {
        if self.read_only {
            return Err(ReadOnlyError::new_err(format!(
                "group {:?} was opened read-only (open it with mode=\"r+\" or \"a\" to write)",
                engine::group_path(&self.inner)
            )));
        }
        Ok(())
    }
}

#[pymethods]
impl GroupCore {
    #[getter]
    fn path(&self) -> String {
        engine::group_path(&self.inner).to_string()
    }

    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    /// The user attributes as JSON text.
    fn attributes_json(&self) -> String {
        Value::Object(engine::group_attributes(&self.inner).clone()).to_string()
    }

    /// Replaces the user attributes (JSON text of an object) and writes the metadata.
    fn set_attributes_json(&mut self, py: Python<'_>, text: &str) -> PyResult<()> {
        self.writable()?;
        let map = parse_json_map(text)?;
        let g = &mut self.inner;
        detach(py, || engine::set_group_attributes(g, map))?.py_err()
    }

    /// The direct children: `[(name, kind, reason)]`, sorted by name; `kind` is `"array"`,
    /// `"group"` or `"unreadable"` (metadata this build cannot read; `reason` says why).
    fn members(&self, py: Python<'_>) -> PyResult<Vec<engine::Member>> {
        let g = &self.inner;
        detach(py, || engine::group_members(g))?.py_err()
    }

    /// Every node below the group, as `members` gives them, by relative path (`"a/b"`).
    fn members_recursive(&self, py: Python<'_>) -> PyResult<Vec<engine::Member>> {
        let g = &self.inner;
        detach(py, || engine::group_members_recursive(g))?.py_err()
    }

    /// Whether the group was opened through consolidated metadata.
    fn is_consolidated(&self) -> bool {
        self.inner.is_consolidated()
    }

    /// The Zarr format of the group's metadata: 3 (`zarr.json`) or 2 (`.zgroup`).
    fn zarr_format(&self) -> u8 {
        self.inner.zarr_format()
    }

    /// Opens the child `name` (an `ArrayCore` or a `GroupCore`).
    fn child(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let g = &self.inner;
        let node = detach(py, || engine::open_child(g, name))?.py_err()?;
        node_to_py(py, node, self.read_only)
    }

    /// Creates a child group of `zarr_format` (`None`: the group's).
    #[pyo3(signature = (name, attributes, zarr_format=None))]
    fn create_group(
        &self,
        py: Python<'_>,
        name: &str,
        attributes: Option<Bound<'_, PyDict>>,
        zarr_format: Option<u8>,
    ) -> PyResult<GroupCore> {
        self.writable()?;
        let attrs = spec::attributes(attributes.as_ref())?;
        let g = &self.inner;
        let inner = detach(py, || {
            engine::create_child_group(g, name, attrs, zarr_format)
        })?
        .py_err()?;
        Ok(GroupCore {
            inner,
            read_only: false,
        })
    }

    /// Creates a child array (`spec` as `zarr_rs._core.create_array` takes it).
    fn create_array(
        &self,
        py: Python<'_>,
        name: &str,
        spec: &Bound<'_, PyAny>,
    ) -> PyResult<ArrayCore> {
        self.writable()?;
        let spec = CreateArray::read(spec)?;
        let g = &self.inner;
        let a = detach(py, || engine::create_child_array(g, name, &spec))?.py_err()?;
        Ok(ArrayCore::new(a, false))
    }
}
