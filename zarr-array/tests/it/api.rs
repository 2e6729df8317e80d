//! The twins of the naming rule (ARCHITECTURE.md, "API naming rule") give the same data: the
//! typed twin, the raw `_bytes` twin, and the `_into` twin writing into the caller's buffer.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(feature = "zstd")]

use std::sync::Arc;

use zarr_array::ndarray::{ArrayD, IxDyn};
use zarr_array::selection::{AxisSelection, BasicItem, Selection, Slice};
use zarr_array::zarr_store::MemoryStore;
use zarr_array::{Array, ArrayBuilder, ArrayError, DataType, ExtensionDef, Region};

fn array() -> Array {
    let store = Arc::new(MemoryStore::new());
    let a = ArrayBuilder::new(vec![7, 5], DataType::Int32)
        .chunk_shape(vec![3, 2])
        .create(store, "a")
        .unwrap();
    let data = ArrayD::from_shape_vec(IxDyn(&[7, 5]), (0..35).collect()).unwrap();
    a.write_region(&Region::whole(&[7, 5]), data.view())
        .unwrap();
    a
}

fn ne_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

#[test]
fn region_twins_agree() {
    let a = array();
    let region = Region::new(vec![1, 1], vec![4, 3]).unwrap();
    let typed = a.read_region::<i32>(&region).unwrap();
    assert_eq!(typed.shape(), &[4, 3]);
    let want: Vec<i32> = (1..5)
        .flat_map(|r| (1..4).map(move |c| r * 5 + c))
        .collect();
    assert_eq!(typed.iter().copied().collect::<Vec<_>>(), want);
    let bytes = a.read_region_bytes(&region).unwrap();
    assert_eq!(bytes, ne_bytes(&want));
    let mut into = vec![0xAAu8; bytes.len()];
    a.read_region_bytes_into(&region, &mut into).unwrap();
    assert_eq!(into, bytes);
    // a buffer of another length is refused, not truncated
    let mut short = vec![0u8; bytes.len() - 4];
    assert!(matches!(
        a.read_region_bytes_into(&region, &mut short),
        Err(ArrayError::InvalidArgument { .. })
    ));
    // write_region_bytes is write_region's raw twin
    a.write_region_bytes(&region, &ne_bytes(&[-1; 12])).unwrap();
    assert!(a
        .read_region::<i32>(&region)
        .unwrap()
        .iter()
        .all(|&v| v == -1));
}

#[test]
fn write_region_takes_data_of_the_region_shape() {
    let a = array();
    let region = Region::new(vec![0, 0], vec![2, 2]).unwrap();
    let wrong = ArrayD::from_elem(IxDyn(&[2, 3]), 9i32);
    match a.write_region(&region, wrong.view()) {
        Err(ArrayError::ShapeMismatch { expected, got }) => {
            assert_eq!(expected, vec![2, 2]);
            assert_eq!(got, vec![2, 3]);
        }
        other => panic!("expected a shape mismatch, got {other:?}"),
    }
    // nothing was written
    assert_eq!(a.read_region::<i32>(&region).unwrap()[[0, 1]], 1);
    let right = ArrayD::from_elem(IxDyn(&[2, 2]), 9i32);
    a.write_region(&region, right.view()).unwrap();
    assert!(a
        .read_region::<i32>(&region)
        .unwrap()
        .iter()
        .all(|&v| v == 9));
}

#[test]
fn selection_twins_agree() {
    let a = array();
    let selections = [
        // a contiguous region
        Selection::Basic(vec![BasicItem::Slice(Slice::new(2, 6))]),
        // strided and orthogonal: the scattered path
        Selection::Basic(vec![
            BasicItem::Slice(Slice {
                start: Some(0),
                stop: Some(7),
                step: Some(3),
            }),
            BasicItem::Index(4),
        ]),
        Selection::Orthogonal(vec![
            AxisSelection::Indices(vec![6, 0, 3]),
            AxisSelection::Mask(vec![true, false, true, true, false]),
        ]),
        Selection::Points(vec![vec![6, 4], vec![0, 0], vec![3, 2]]),
    ];
    for sel in &selections {
        let shape = a.selection_shape(sel).unwrap();
        let typed = a.read_selection::<i32>(sel).unwrap();
        let dims: Vec<u64> = typed.shape().iter().map(|&n| n as u64).collect();
        assert_eq!(dims, shape, "{sel:?}");
        let values: Vec<i32> = typed.iter().copied().collect();
        let bytes = a.read_selection_bytes(sel).unwrap();
        assert_eq!(bytes, ne_bytes(&values), "{sel:?}");
        let mut into = vec![0x55u8; bytes.len()];
        a.read_selection_bytes_into(sel, &mut into).unwrap();
        assert_eq!(into, bytes, "{sel:?}");
        let mut long = vec![0u8; bytes.len() + 4];
        assert!(matches!(
            a.read_selection_bytes_into(sel, &mut long),
            Err(ArrayError::InvalidArgument { .. })
        ));
    }
    // write_selection_bytes is write_selection's raw twin
    let points = Selection::Points(vec![vec![6, 4], vec![0, 0]]);
    a.write_selection_bytes(&points, &ne_bytes(&[100, 200]))
        .unwrap();
    let got = a.read_selection::<i32>(&points).unwrap();
    assert_eq!(got.iter().copied().collect::<Vec<_>>(), vec![100, 200]);
    let typed = ArrayD::from_shape_vec(IxDyn(&[2]), vec![7, 8]).unwrap();
    a.write_selection(&points, typed.view()).unwrap();
    assert_eq!(a.read_selection_bytes(&points).unwrap(), ne_bytes(&[7, 8]));
}

#[test]
fn the_builder_takes_typed_codec_configurations() {
    use zarr_array::zarr_codecs::bytes::{BytesConfig, Endian};
    use zarr_array::zarr_codecs::transpose::{TransposeConfig, TransposeOrder};
    use zarr_array::zarr_codecs::zstd::ZstdConfig;

    let store = Arc::new(MemoryStore::new());
    let zstd = ZstdConfig {
        level: 3,
        checksum: true,
    };
    let a = ArrayBuilder::new(vec![4, 6], DataType::Int32)
        .chunk_shape(vec![2, 3])
        .filters([TransposeConfig {
            order: TransposeOrder::Permutation(vec![1, 0]),
        }])
        .serializer(BytesConfig {
            endian: Some(Endian::Big),
        })
        .compressors([zstd])
        .create(store.clone(), "typed")
        .unwrap();
    let codecs = &a.metadata().codecs;
    assert_eq!(codecs.len(), 3);
    assert_eq!(codecs[0].name, "transpose");
    assert_eq!(
        codecs[1],
        ExtensionDef::from(BytesConfig {
            endian: Some(Endian::Big),
        })
    );
    assert_eq!(codecs[2], ExtensionDef::from(zstd));
    let data = ArrayD::from_shape_vec(IxDyn(&[4, 6]), (0..24).collect()).unwrap();
    a.write_region(&Region::whole(&[4, 6]), data.view())
        .unwrap();
    let back = Array::open(store, "typed").unwrap();
    assert_eq!(back.read_all::<i32>().unwrap(), data);
}
