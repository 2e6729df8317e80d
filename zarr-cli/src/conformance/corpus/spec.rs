//! What a fixture is: a small description (node, layout, data written, expected outcome)
//! that the writer turns into a node of the corpus and an entry of its manifest.

use serde_json::{json, Map, Value};
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::{Array, ArrayBuilder, DataType, ExtensionDef};

use super::expected::{element_from_i64, Dense, Rng};
use crate::error::{zarr, Result};
use crate::layout::{sparse_def, SparseFormat};

/// One fixture.
#[derive(Debug)]
pub(super) struct Case {
    /// Where it lives in the corpus.
    pub(super) path: String,
    /// What it checks, for the manifest.
    pub(super) why: String,
    /// The extensions of this project it needs; it is written only when the registry has
    /// every one of them.
    pub(super) requires: &'static [&'static str],
    /// What is written there.
    pub(super) node: Node,
}

/// What a fixture writes.
#[derive(Debug)]
pub(super) enum Node {
    /// An array the library creates, then writes as `data` says: a reader must read it.
    Array {
        /// The array's settings (boxed: the largest variant by far).
        layout: Box<Layout>,
        /// What is written into it.
        data: Data,
    },
    /// A hand-written array document that the library opens, then writes as `data` says:
    /// a reader must read it.
    HandWrittenArray {
        /// The `zarr.json`.
        doc: Value,
        /// What is written into it.
        data: Data,
    },
    /// A group the library creates, with these attributes: a reader must read it.
    Group {
        /// The attributes (a JSON object).
        attributes: Value,
    },
    /// A hand-written `zarr.json` a reader must refuse.
    Reject {
        /// `"array"` or `"group"`.
        node_type: &'static str,
        /// The document.
        doc: Document,
    },
}

/// A hand-written `zarr.json`.
#[derive(Debug)]
pub(super) enum Document {
    /// JSON, written pretty-printed.
    Json(Value),
    /// Bytes that are not JSON.
    Raw(&'static [u8]),
}

impl Case {
    /// An array the library creates.
    pub(super) fn array(path: impl Into<String>, why: impl Into<String>, layout: Layout) -> Case {
        Case::new(
            path,
            why,
            Node::Array {
                layout: Box::new(layout),
                data: Data::random(),
            },
        )
    }

    /// A hand-written readable array document.
    pub(super) fn hand_written(path: &str, why: &str, doc: Value) -> Case {
        Case::new(
            path,
            why,
            Node::HandWrittenArray {
                doc,
                data: Data::random(),
            },
        )
    }

    /// A group.
    pub(super) fn group(path: &str, why: &str, attributes: Value) -> Case {
        Case::new(path, why, Node::Group { attributes })
    }

    /// An array document to refuse.
    pub(super) fn reject(path: &str, why: &str, doc: Value) -> Case {
        Case::new(
            path,
            why,
            Node::Reject {
                node_type: "array",
                doc: Document::Json(doc),
            },
        )
    }

    fn new(path: impl Into<String>, why: impl Into<String>, node: Node) -> Case {
        Case {
            path: path.into(),
            why: why.into(),
            requires: &[],
            node,
        }
    }

    /// The same fixture, needing these extensions.
    pub(super) fn requires(mut self, requires: &'static [&'static str]) -> Case {
        self.requires = requires;
        self
    }

    /// The same fixture with other data written (arrays only; others are unchanged).
    pub(super) fn data(mut self, new: Data) -> Case {
        if let Node::Array { data, .. } | Node::HandWrittenArray { data, .. } = &mut self.node {
            *data = new;
        }
        self
    }

    /// The manifest entry.
    pub(super) fn entry(&self) -> Value {
        let (node, writer, expect) = match &self.node {
            Node::Array { .. } => ("array", "zarr-cli", "read"),
            Node::HandWrittenArray { .. } => ("array", "hand-written", "read"),
            Node::Group { .. } => ("group", "zarr-cli", "read"),
            Node::Reject { node_type, .. } => (*node_type, "hand-written", "reject"),
        };
        let data = match &self.node {
            Node::Array { .. } | Node::HandWrittenArray { .. } => {
                Value::String(format!("{}.npy", self.path))
            }
            Node::Group { .. } | Node::Reject { .. } => Value::Null,
        };
        json!({
            "path": self.path,
            "node": node,
            "writer": writer,
            "expect": expect,
            "data": data,
            "why": self.why,
            "requires": self.requires,
        })
    }
}

/// The settings of an array the library creates.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    pub(super) data_type: DataType,
    pub(super) shape: Vec<u64>,
    /// The chunk shape (with `shards`, the inner chunk shape).
    pub(super) chunks: Vec<u64>,
    /// Chunks stored in shards of this shape.
    pub(super) shards: Option<Vec<u64>>,
    /// `regular` unless a lower bound is given.
    pub(super) grid: Grid,
    /// Array->array codecs.
    pub(super) filters: Vec<ExtensionDef>,
    pub(super) serializer: Serializer,
    /// Bytes->bytes codecs; `None` for the library's default (zstd level 0).
    pub(super) compressors: Option<Vec<ExtensionDef>>,
    /// The fill value as JSON; `None` for the data type's zero.
    pub(super) fill_value: Option<Value>,
    /// `None` for `default` with `/`.
    pub(super) key_encoding: Option<ExtensionDef>,
    pub(super) dimension_names: Option<Vec<Option<String>>>,
    pub(super) attributes: Map<String, Value>,
}

/// The chunk grid an array is created with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Grid {
    /// `regular`.
    Regular,
    /// `regular_bounded`.
    Bounded {
        lower_bound: Vec<i64>,
        /// `None` for the grid's default (all zeros).
        origin: Option<Vec<i64>>,
    },
}

/// The array->bytes codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Serializer {
    /// `bytes`, little endian (the library's default).
    Bytes,
    /// `bytes`, big endian.
    BytesBig,
    /// `sparse_layout` in this format, with the narrowest index types for the chunk.
    Sparse(SparseFormat),
}

impl Layout {
    /// `shape` of `data_type` in chunks of `chunks`, every other setting the default.
    pub(super) fn new(data_type: DataType, shape: &[u64], chunks: &[u64]) -> Layout {
        Layout {
            data_type,
            shape: shape.to_vec(),
            chunks: chunks.to_vec(),
            shards: None,
            grid: Grid::Regular,
            filters: Vec::new(),
            serializer: Serializer::Bytes,
            compressors: None,
            fill_value: None,
            key_encoding: None,
            dimension_names: None,
            attributes: Map::new(),
        }
    }

    /// The builder that creates the array (`context` names it in errors).
    ///
    /// # Errors
    /// A fill value that does not fit the data type, a sparse format that does not fit the
    /// chunk.
    pub(super) fn builder(&self, context: &str) -> Result<ArrayBuilder> {
        let mut b = ArrayBuilder::new(self.shape.clone(), self.data_type)
            .chunk_shape(self.chunks.clone())
            .filters(self.filters.clone())
            .attributes(self.attributes.clone());
        if let Some(shards) = &self.shards {
            b = b.shards(shards.clone());
        }
        if let Grid::Bounded {
            lower_bound,
            origin,
        } = &self.grid
        {
            b = b.lower_bound(lower_bound.clone());
            if let Some(origin) = origin {
                b = b.origin(origin.clone());
            }
        }
        match self.serializer {
            Serializer::Bytes => {}
            Serializer::BytesBig => b = b.serializer(def("bytes", json!({"endian": "big"}))),
            Serializer::Sparse(format) => b = b.serializer(sparse_def(format, &self.chunks)?),
        }
        if let Some(compressors) = &self.compressors {
            b = b.compressors(compressors.clone());
        }
        if let Some(fill) = &self.fill_value {
            b = b.fill_value_json(fill).map_err(|e| zarr(context, e))?;
        }
        if let Some(encoding) = &self.key_encoding {
            b = b.key_encoding(encoding.clone());
        }
        if let Some(names) = &self.dimension_names {
            b = b.dimension_names(names.clone());
        }
        Ok(b)
    }
}

/// An extension with a configuration object (or none, for any other JSON value).
pub(super) fn def(name: &str, config: Value) -> ExtensionDef {
    match config {
        Value::Object(m) => ExtensionDef::with_configuration(name, m),
        _ => ExtensionDef::new(name),
    }
}

/// What is written into an array, in order; the expected data follows from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Data {
    /// The first write, into the array as created.
    pub(super) first: First,
    /// Then the array grows (or shrinks), step by step.
    pub(super) then: Vec<Grow>,
}

/// The first write into a new array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum First {
    /// Nothing: every element reads as the fill value.
    Nothing,
    /// The whole array.
    Whole(Content),
    /// A random block at `start`; the rest reads as the fill value.
    Block { start: Vec<u64>, shape: Vec<u64> },
}

/// The elements of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Content {
    /// Random over the type's whole range (floats start with NaN, infinities, -0.0 and a
    /// subnormal).
    Random,
    /// The fill value, with about `permille`/1000 of the elements small random values.
    Sparse { permille: u64 },
    /// Every element this small integer.
    Constant(i64),
}

/// A change of shape after the first write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Grow {
    /// `len` positions in front of `axis`.
    Prepend {
        axis: usize,
        len: u64,
        content: Content,
    },
    /// `len` positions at the end of `axis`.
    Append {
        axis: usize,
        len: u64,
        content: Content,
    },
    /// A new shape (the upper ends move).
    Resize(Vec<u64>),
}

impl Data {
    /// One random block over the whole array.
    pub(super) fn random() -> Data {
        Data::first(First::Whole(Content::Random))
    }

    /// The first write, then nothing.
    pub(super) fn first(first: First) -> Data {
        Data {
            first,
            then: Vec::new(),
        }
    }

    /// The same, then `step`.
    pub(super) fn then(mut self, step: Grow) -> Data {
        self.then.push(step);
        self
    }

    /// Writes into `array`, drawing random elements from `rng`; returns what the array
    /// must read as.
    pub(super) fn write(&self, array: &mut Array, rng: &mut Rng) -> zarr_array::Result<Dense> {
        let mut expected = self.first.write(array, rng)?;
        for step in &self.then {
            expected = step.apply(array, expected, rng)?;
        }
        Ok(expected)
    }
}

impl First {
    fn write(&self, array: &Array, rng: &mut Rng) -> zarr_array::Result<Dense> {
        let t = array.data_type();
        let shape = array.shape().to_vec();
        let fill = array.fill_value().as_bytes();
        match self {
            First::Nothing => Ok(Dense::filled(t, &shape, fill)),
            First::Whole(content) => {
                let data = content.generate(t, &shape, fill, rng);
                array.write_region_bytes(&Region::whole(&shape), &data.data)?;
                Ok(data)
            }
            First::Block { start, shape: size } => {
                let mut expected = Dense::filled(t, &shape, fill);
                let block = Dense::random(t, size, rng);
                let region = Region::new(start.clone(), size.clone())?;
                array.write_region_bytes(&region, &block.data)?;
                expected.paste(start, &block);
                Ok(expected)
            }
        }
    }
}

impl Content {
    fn generate(self, t: DataType, shape: &[u64], fill: &[u8], rng: &mut Rng) -> Dense {
        match self {
            Content::Random => Dense::random(t, shape, rng),
            Content::Sparse { permille } => Dense::sparse(t, shape, fill, permille, rng),
            Content::Constant(v) => Dense::filled(t, shape, &element_from_i64(t, v)),
        }
    }
}

impl Grow {
    /// Applies the step to `array`, whose data is `current`; returns the data after it.
    fn apply(&self, array: &mut Array, current: Dense, rng: &mut Rng) -> zarr_array::Result<Dense> {
        let t = array.data_type();
        let block_shape = |axis: usize, len: u64| {
            let mut shape = current.shape.clone();
            shape[axis] = len;
            shape
        };
        match self {
            Grow::Prepend { axis, len, content } => {
                let shape = block_shape(*axis, *len);
                let block = content.generate(t, &shape, array.fill_value().as_bytes(), rng);
                array.prepend_bytes(&shape, &block.data, *axis)?;
                Ok(Dense::concat(&block, &current, *axis))
            }
            Grow::Append { axis, len, content } => {
                let shape = block_shape(*axis, *len);
                let block = content.generate(t, &shape, array.fill_value().as_bytes(), rng);
                array.append_bytes(&shape, &block.data, *axis)?;
                Ok(Dense::concat(&current, &block, *axis))
            }
            Grow::Resize(shape) => {
                array.resize(shape)?;
                Ok(current.resized(shape, array.fill_value().as_bytes()))
            }
        }
    }
}
