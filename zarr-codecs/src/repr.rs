//! [`ChunkRepr`]: what a codec sees of a chunk.

use zarr_buffer::fill_pattern;
use zarr_grid::geometry::buffer_len;
use zarr_meta::{DataType, FillValue};

use crate::error::{CodecError, Result};

/// The representation of a decoded chunk: its shape, data type and fill value.
///
/// A decoded chunk is a C-order buffer of `shape` elements of `data_type` in native byte order.
/// Each codec of a chain sees the representation the codecs before it produce (a `transpose`
/// permutes the shape; a shard's inner codecs see the inner chunk shape).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChunkRepr {
    /// The chunk shape (every chunk of a regular grid has the full chunk shape, edge chunks
    /// included).
    pub shape: Vec<u64>,
    /// The element type.
    pub data_type: DataType,
    /// The fill value (native byte order).
    pub fill_value: FillValue,
}

impl ChunkRepr {
    /// A representation from its parts.
    pub fn new(shape: Vec<u64>, data_type: DataType, fill_value: FillValue) -> Self {
        ChunkRepr {
            shape,
            data_type,
            fill_value,
        }
    }

    /// The same data type and fill value with another shape.
    pub fn with_shape(&self, shape: Vec<u64>) -> Self {
        ChunkRepr {
            shape,
            data_type: self.data_type,
            fill_value: self.fill_value.clone(),
        }
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The element size in bytes.
    pub fn element_size(&self) -> usize {
        self.data_type.size()
    }

    /// The number of elements, or `None` on overflow.
    pub fn num_elements(&self) -> Option<u64> {
        zarr_grid::geometry::num_elements(&self.shape)
    }

    /// The decoded size in bytes.
    ///
    /// # Errors
    /// [`CodecError::ChunkTooLarge`] if it does not fit in memory.
    pub fn byte_len(&self) -> Result<usize> {
        buffer_len(&self.shape, self.element_size())
            .ok()
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| CodecError::ChunkTooLarge {
                shape: self.shape.clone(),
                element_size: self.element_size(),
            })
    }

    /// Checks that the fill value fits the data type and that the chunk fits in memory;
    /// returns the decoded size in bytes (0 for a variable-size data type, which has no
    /// fixed-size buffer and any fill value length).
    ///
    /// # Errors
    /// A fill value of another size than the data type, or a chunk too large to address.
    pub fn validate(&self) -> Result<usize> {
        if self.data_type.is_variable_size() {
            return Ok(0);
        }
        if self.fill_value.as_bytes().len() != self.element_size() {
            return Err(CodecError::BufferLength {
                what: "the fill value",
                expected: self.element_size() as u64,
                got: self.fill_value.as_bytes().len() as u64,
            });
        }
        self.byte_len()
    }

    /// Whether every element of `chunk` equals the fill value (bit patterns, every NaN equal
    /// to every NaN).
    pub fn is_fill(&self, chunk: &[u8]) -> bool {
        self.data_type.all_equal(chunk, self.fill_value.as_bytes())
    }

    /// Fills `out` with the fill value, element after element.
    pub fn fill(&self, out: &mut [u8]) {
        fill_pattern(out, self.fill_value.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_repeats_the_element() {
        let repr = ChunkRepr::new(
            vec![3],
            DataType::UInt16,
            FillValue::from_ne_bytes(DataType::UInt16, 0x0102u16.to_ne_bytes()).unwrap(),
        );
        let mut out = vec![0u8; 6];
        repr.fill(&mut out);
        assert!(repr.is_fill(&out));
        assert_eq!(
            out,
            [0x0102u16; 3]
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect::<Vec<_>>()
        );
        assert_eq!(repr.byte_len().unwrap(), 6);
        let huge = repr.with_shape(vec![u64::MAX, 4]);
        assert!(matches!(
            huge.byte_len(),
            Err(CodecError::ChunkTooLarge { .. })
        ));
    }
}
