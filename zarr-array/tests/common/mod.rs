//! Test support: a small `.npy` reader and element-wise comparison with NaN equal to NaN.
#![allow(dead_code)] // each test binary uses a part of it

use zarr_array::{Array, DataType};

/// A parsed `.npy` file: shape, data type and the data in C order, native byte order.
#[derive(Debug)]
pub struct Npy {
    pub shape: Vec<u64>,
    pub data_type: Option<DataType>,
    pub data: Vec<u8>,
    /// The `descr` as written (`<i4`, `<U7`, `|S3`).
    pub descr: String,
}

impl Npy {
    /// The elements of a fixed-width NumPy string array (`<U<n>`: UTF-32LE, `|S<n>`: bytes),
    /// trailing NULs dropped as NumPy drops them; `None` for other data types.
    pub fn fixed_width_strings(&self) -> Option<Vec<Vec<u8>>> {
        let (kind, width) = match self.descr.as_bytes() {
            [b'<', b'U', ..] => ('U', self.descr[2..].parse::<usize>().ok()? * 4),
            [b'|', b'S', ..] => ('S', self.descr[2..].parse::<usize>().ok()?),
            _ => return None,
        };
        let items = self.data.chunks_exact(width.max(1)).map(|item| {
            let mut out: Vec<u8> = if kind == 'U' {
                item.chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .take_while(|&c| c != 0)
                    .filter_map(char::from_u32)
                    .collect::<String>()
                    .into_bytes()
            } else {
                item.to_vec()
            };
            if kind == 'S' {
                while out.last() == Some(&0) {
                    out.pop();
                }
            }
            out
        });
        Some(items.collect())
    }
}

/// Reads a `.npy` file (versions 1-3, C or Fortran order, either byte order).
pub fn read_npy(bytes: &[u8]) -> Npy {
    assert_eq!(&bytes[..6], b"\x93NUMPY", "not an npy file");
    let major = bytes[6];
    let (hlen, start) = if major == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&bytes[start..start + hlen]).unwrap();
    let descr = field(header, "'descr':")
        .trim()
        .trim_matches('\'')
        .to_string();
    let fortran = field(header, "'fortran_order':").trim().starts_with("True");
    let shape_text = header
        .split("'shape':")
        .nth(1)
        .unwrap()
        .split('(')
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap();
    let shape: Vec<u64> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let order = &descr[..1];
    let data_type = zarr_array::zarr_meta::numpy::NumpyDtype::parse(&descr)
        .ok()
        .map(|t| t.data_type);
    let mut data = bytes[start + hlen..].to_vec();
    if let Some(t) = data_type {
        if order == ">" {
            if let Some(w) = t.endian_component_size() {
                for c in data.chunks_exact_mut(w) {
                    c.reverse();
                }
            }
        }
        if fortran && shape.len() > 1 {
            data = fortran_to_c(&data, &shape, t.size());
        }
    }
    Npy {
        shape,
        data_type,
        data,
        descr,
    }
}

fn field<'a>(header: &'a str, name: &str) -> &'a str {
    header
        .split(name)
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
}

fn fortran_to_c(data: &[u8], shape: &[u64], elem: usize) -> Vec<u8> {
    let n: u64 = shape.iter().product();
    let mut out = vec![0u8; data.len()];
    for c_index in 0..n {
        // position of c_index in C order, then its Fortran offset
        let mut rem = c_index;
        let mut pos = vec![0u64; shape.len()];
        for d in (0..shape.len()).rev() {
            pos[d] = rem % shape[d];
            rem /= shape[d];
        }
        let mut f = 0u64;
        for d in (0..shape.len()).rev() {
            f = f * shape[d] + pos[d];
        }
        let (ci, fi) = (c_index as usize * elem, f as usize * elem);
        out[ci..ci + elem].copy_from_slice(&data[fi..fi + elem]);
    }
    out
}

/// Element-wise equality in the Zarr sense (bit patterns, NaN equal to NaN).
pub fn same_elements(t: DataType, a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && a.chunks_exact(t.size())
            .zip(b.chunks_exact(t.size()))
            .all(|(x, y)| t.elements_equal(x, y))
}

/// Reads `array` whole and compares it with the `.npy` it was written from: data type (when the
/// `.npy` names a Zarr one), shape and every element, the variable-size types as the NumPy
/// fixed-width strings zarr-python saves them as. `Err` says what differs.
pub fn check_whole(array: &Array, npy: &Npy) -> Result<(), String> {
    // the variable-size types are saved as NumPy's fixed-width strings
    let variable = array.data_type().is_variable_size();
    if !variable && npy.data_type.is_some_and(|t| t != array.data_type()) {
        return Err(format!(
            "data type {} vs {:?}",
            array.data_type(),
            npy.data_type
        ));
    }
    if npy.shape != array.shape() {
        return Err(format!("shape {:?} vs {:?}", array.shape(), npy.shape));
    }
    if variable {
        return check_whole_vlen(array, npy);
    }
    let bytes = array
        .read_selection_bytes(&zarr_array::Selection::all())
        .map_err(|e| format!("read: {e}"))?;
    if same_elements(array.data_type(), &bytes, &npy.data) {
        Ok(())
    } else {
        Err("data differs from the .npy".into())
    }
}

#[cfg(feature = "vlen")]
fn check_whole_vlen(array: &Array, npy: &Npy) -> Result<(), String> {
    let want = npy
        .fixed_width_strings()
        .ok_or_else(|| format!("{} is not a NumPy string type", npy.descr))?;
    let whole = zarr_array::Region::whole(array.shape());
    let got: Vec<Vec<u8>> = match array.data_type() {
        DataType::String => array
            .read_region_vlen::<String>(&whole)
            .map(|a| a.iter().map(|s| s.as_bytes().to_vec()).collect()),
        _ => array
            .read_region_vlen::<Vec<u8>>(&whole)
            .map(|a| a.iter().cloned().collect()),
    }
    .map_err(|e| format!("read: {e}"))?;
    if got == want {
        Ok(())
    } else {
        Err("data differs from the .npy".into())
    }
}

#[cfg(not(feature = "vlen"))]
fn check_whole_vlen(array: &Array, _: &Npy) -> Result<(), String> {
    Err(format!(
        "{} needs the vlen feature, and should not have opened",
        array.data_type()
    ))
}
