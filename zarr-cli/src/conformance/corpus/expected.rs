//! The data a fixture must read as, computed in memory independently of the library: random
//! blocks from a seeded generator, pasted, concatenated and cropped.

use zarr_array::DataType;

/// A small deterministic generator (xorshift64*).
#[derive(Debug, Clone)]
pub(super) struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub(super) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub(super) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// `n` random bytes.
    pub(super) fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

/// An N-d block in C order, native byte order: the data a fixture must read as.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Dense {
    /// The data type.
    pub(super) data_type: DataType,
    /// The shape.
    pub(super) shape: Vec<u64>,
    /// The elements.
    pub(super) data: Vec<u8>,
}

fn count(shape: &[u64]) -> usize {
    shape.iter().product::<u64>() as usize
}

impl Dense {
    /// Every element `fill`.
    pub(super) fn filled(data_type: DataType, shape: &[u64], fill: &[u8]) -> Dense {
        Dense {
            data_type,
            shape: shape.to_vec(),
            data: fill.repeat(count(shape)),
        }
    }

    /// Random elements over the type's whole range; floats start with NaN, +Infinity,
    /// -Infinity, -0.0 and a subnormal.
    pub(super) fn random(data_type: DataType, shape: &[u64], rng: &mut Rng) -> Dense {
        let n = count(shape);
        let mut data = rng.bytes(n * data_type.size());
        if data_type == DataType::Bool {
            data.iter_mut().for_each(|b| *b &= 1);
        }
        if let Some(w) = data_type.float_component_size() {
            // the first elements' components (complex: real, then imaginary)
            for (i, s) in float_specials(w).iter().enumerate() {
                if (i + 1) * w <= data.len() {
                    data[i * w..(i + 1) * w].copy_from_slice(s);
                }
            }
        }
        Dense {
            data_type,
            shape: shape.to_vec(),
            data,
        }
    }

    /// Mostly `fill`, with about `permille`/1000 of the elements random (never equal to fill).
    pub(super) fn sparse(
        data_type: DataType,
        shape: &[u64],
        fill: &[u8],
        permille: u64,
        rng: &mut Rng,
    ) -> Dense {
        let mut d = Dense::filled(data_type, shape, fill);
        let size = data_type.size();
        for i in 0..count(shape) {
            if rng.next_u64() % 1000 < permille {
                // a small finite value, as the type's bytes
                let v = (rng.next_u64() % 200) as i64 - 100;
                let v = if v == 0 { 7 } else { v };
                let bytes = element_from_i64(data_type, v);
                if !data_type.elements_equal(&bytes, fill) {
                    d.data[i * size..(i + 1) * size].copy_from_slice(&bytes);
                }
            }
        }
        d
    }

    /// Copies `block` into this array at `at`.
    pub(super) fn paste(&mut self, at: &[u64], block: &Dense) {
        let rank = self.shape.len();
        let size = self.data_type.size();
        if count(&block.shape) == 0 {
            return;
        }
        if rank == 0 {
            self.data.copy_from_slice(&block.data);
            return;
        }
        let row = block.shape[rank - 1] as usize * size;
        let outer: Vec<u64> = block.shape[..rank - 1].to_vec();
        let mut idx = vec![0u64; rank - 1];
        for r in 0..count(&outer) {
            // destination offset of this row
            let mut off = 0u64;
            for d in 0..rank {
                let p = if d < rank - 1 { at[d] + idx[d] } else { at[d] };
                off = off * self.shape[d] + p;
            }
            let off = off as usize * size;
            self.data[off..off + row].copy_from_slice(&block.data[r * row..(r + 1) * row]);
            for d in (0..rank - 1).rev() {
                idx[d] += 1;
                if idx[d] < outer[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    /// `front` then `back` along `axis`.
    pub(super) fn concat(front: &Dense, back: &Dense, axis: usize) -> Dense {
        let mut shape = back.shape.clone();
        shape[axis] += front.shape[axis];
        let mut out = Dense::filled(back.data_type, &shape, &vec![0; back.data_type.size()]);
        out.paste(&vec![0; shape.len()], front);
        let mut at = vec![0; shape.len()];
        at[axis] = front.shape[axis];
        out.paste(&at, back);
        out
    }

    /// The block `[0, shape)`, extended with `fill` where `shape` is larger.
    pub(super) fn resized(&self, shape: &[u64], fill: &[u8]) -> Dense {
        let mut out = Dense::filled(self.data_type, shape, fill);
        let common: Vec<u64> = shape
            .iter()
            .zip(&self.shape)
            .map(|(a, b)| *a.min(b))
            .collect();
        let mut part = Dense::filled(self.data_type, &common, fill);
        // the common part of self
        let rank = shape.len();
        let size = self.data_type.size();
        if count(&common) > 0 {
            for (i, pos) in positions(&common).enumerate() {
                let mut off = 0u64;
                for (d, p) in pos.iter().enumerate() {
                    off = off * self.shape[d] + p;
                }
                let off = off as usize * size;
                part.data[i * size..(i + 1) * size].copy_from_slice(&self.data[off..off + size]);
            }
        }
        out.paste(&vec![0; rank], &part);
        out
    }
}

/// NaN, +Infinity, -Infinity, -0.0 and the smallest subnormal, as floats of `width` bytes.
fn float_specials(width: usize) -> Vec<Vec<u8>> {
    match width {
        2 => [0x7e00u16, 0x7c00, 0xfc00, 0x8000, 0x0001]
            .iter()
            .map(|v| v.to_ne_bytes().to_vec())
            .collect(),
        4 => [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 1e-45]
            .iter()
            .map(|v| v.to_ne_bytes().to_vec())
            .collect(),
        _ => [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 5e-324]
            .iter()
            .map(|v| v.to_ne_bytes().to_vec())
            .collect(),
    }
}

/// Every position of a shape, in C order.
fn positions(shape: &[u64]) -> impl Iterator<Item = Vec<u64>> + '_ {
    let n = count(shape);
    (0..n).map(move |mut i| {
        let mut pos = vec![0u64; shape.len()];
        for d in (0..shape.len()).rev() {
            pos[d] = (i as u64) % shape[d];
            i /= shape[d] as usize;
        }
        pos
    })
}

pub(super) fn element_from_i64(t: DataType, v: i64) -> Vec<u8> {
    match t {
        DataType::Bool => vec![u8::from(v != 0)],
        DataType::Int8 | DataType::UInt8 => vec![v as u8],
        DataType::Int16 | DataType::UInt16 => (v as i16).to_ne_bytes().to_vec(),
        DataType::Int32 | DataType::UInt32 => (v as i32).to_ne_bytes().to_vec(),
        DataType::Int64 | DataType::UInt64 => v.to_ne_bytes().to_vec(),
        DataType::Float32 => (v as f32 * 0.25).to_ne_bytes().to_vec(),
        DataType::Float64 => (v as f64 * 0.25).to_ne_bytes().to_vec(),
        DataType::Complex64 => [(v as f32).to_ne_bytes(), (-v as f32).to_ne_bytes()].concat(),
        DataType::Complex128 => [(v as f64).to_ne_bytes(), (-v as f64).to_ne_bytes()].concat(),
        // float16: small integers are exact; build the bits by hand
        DataType::Float16 => f16_bits(v as f32).to_ne_bytes().to_vec(),
        other => vec![v as u8; other.size()],
    }
}

/// float16 bits of a small integer-valued float (|v| < 2048, exact).
fn f16_bits(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let sign: u16 = if v < 0.0 { 0x8000 } else { 0 };
    let mut m = v.abs();
    let mut e: i32 = 0;
    while m >= 2.0 {
        m /= 2.0;
        e += 1;
    }
    let frac = ((m - 1.0) * 1024.0) as u16;
    sign | (((e + 15) as u16) << 10) | frac
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_helpers() {
        let t = DataType::UInt8;
        let a = Dense {
            data_type: t,
            shape: vec![2, 3],
            data: vec![1, 2, 3, 4, 5, 6],
        };
        let b = Dense {
            data_type: t,
            shape: vec![1, 3],
            data: vec![7, 8, 9],
        };
        assert_eq!(
            Dense::concat(&b, &a, 0).data,
            vec![7, 8, 9, 1, 2, 3, 4, 5, 6]
        );
        let c = Dense {
            data_type: t,
            shape: vec![2, 1],
            data: vec![0, 0],
        };
        assert_eq!(Dense::concat(&c, &a, 1).data, vec![0, 1, 2, 3, 0, 4, 5, 6]);
        assert_eq!(a.resized(&[3, 2], &[9]).data, vec![1, 2, 4, 5, 9, 9]);
        let mut z = Dense::filled(t, &[3, 3], &[0]);
        z.paste(
            &[1, 1],
            &Dense {
                data_type: t,
                shape: vec![2, 2],
                data: vec![1, 2, 3, 4],
            },
        );
        assert_eq!(z.data, vec![0, 0, 0, 0, 1, 2, 0, 3, 4]);
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(-2.0), 0xc000);
        assert_eq!(f16_bits(100.0), 0x5640);
    }
}
