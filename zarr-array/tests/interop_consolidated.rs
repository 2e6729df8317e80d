//! Consolidated metadata with zarr-python 3.1.6 and xarray: `Group::consolidate` writes the
//! document `zarr.consolidate_metadata` writes, and an append through this crate to an array of
//! an xarray-written group is what zarr-python and xarray then see through the group's
//! consolidated metadata.
//!
//! The same for Zarr v2's `.zmetadata`, and the xarray-written v2 hierarchies of
//! conformance/xarray consolidated again give their own `.zmetadata` byte for byte.
//!
//! The tests that run Python are ignored by a plain `cargo test`: `scripts/test` exports
//! `ZARR_PEERS_PYTHON_BIN` and runs them (`-- --ignored`); without the venv they fail.
#![cfg(feature = "zstd")]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use serde_json::Value;
use zarr_array::{ArrayBuilder, DataType, Group};
use zarr_store::{FilesystemStore, Store};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Runs `code` in the peers' python with `args` (`sys.argv[1:]`); its stdout.
fn python(code: &str, args: &[&Path]) -> String {
    let out = Command::new(zarr_testkit::peers::python())
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .expect("run the peers' python");
    assert!(
        out.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn store(dir: &Path) -> Result<Arc<dyn Store>, Box<dyn std::error::Error>> {
    Ok(Arc::new(FilesystemStore::open(dir)?))
}

/// The root `zarr.json` as JSON text with its keys in document order.
fn root_doc(dir: &Path) -> Result<String, Box<dyn std::error::Error>> {
    let v: Value = serde_json::from_slice(&std::fs::read(dir.join("zarr.json"))?)?;
    Ok(serde_json::to_string(&v)?)
}

#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn consolidate_writes_what_zarr_python_writes() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let (theirs, ours) = (tmp.path().join("theirs"), tmp.path().join("ours"));
    // a hierarchy written by zarr-python: nested groups, names whose case-insensitive order
    // differs from byte order, attributes, dimension names, several data types and codecs
    python(
        r#"
import sys, zarr, numpy as np
g = zarr.open_group(sys.argv[1], mode="w", attributes={"title": "root"})
s = g.create_group("sub", attributes={"k": 1})
s.create_array("x", shape=(4,), dtype="i4", chunks=(2,))
d = s.create_group("Deep")
d.create_array("z", shape=(2, 3), dtype="u1", chunks=(2, 2), fill_value=7)
g.create_array("Y", shape=(3, 2), dtype="f8", chunks=(2, 2), attributes={"a": "b"},
               dimension_names=["t", "u"], fill_value=float("nan"))
g.create_array("b", shape=(5,), dtype="bool", chunks=(5,), compressors=None)
g.create_array("c", shape=(6,), dtype="complex64", chunks=(3,), shards=(6,))
"#,
        &[&theirs],
    );
    copy_dir(&theirs, &ours)?;
    python(
        "import sys, zarr; zarr.consolidate_metadata(sys.argv[1])",
        &[&theirs],
    );
    Group::open(store(&ours)?, "")?.consolidate()?;
    assert_eq!(root_doc(&ours)?, root_doc(&theirs)?);
    // and zarr-python opens ours through it
    let listed = python(
        r#"
import sys, zarr
g = zarr.open_group(sys.argv[1], mode="r", use_consolidated=True)
print(sorted(k for k, _ in g.members(max_depth=None)))
"#,
        &[&ours],
    );
    assert_eq!(
        listed.trim(),
        "['Y', 'b', 'c', 'sub', 'sub/Deep', 'sub/Deep/z', 'sub/x']"
    );
    Ok(())
}

#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn an_append_to_an_xarray_group_is_seen_through_its_consolidated_metadata() -> TestResult {
    append_to_xarray_weather(3)
}

// xarray's v2 arrays are blosc-compressed
#[cfg(feature = "blosc")]
#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn an_append_to_an_xarray_v2_group_is_seen_through_its_zmetadata() -> TestResult {
    append_to_xarray_weather(2)
}

/// Appends to xarray's weather dataset of Zarr format `zarr_format` (copied to a temporary
/// directory) through this crate, and asks zarr-python and xarray what they see through its
/// consolidated metadata (`zarr.json`'s, or v2's `.zmetadata`).
fn append_to_xarray_weather(zarr_format: u8) -> TestResult {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../conformance/xarray/weather_v{zarr_format}"));
    let tmp = tempfile::tempdir()?;
    let dir = tmp.path().join("weather.zarr");
    copy_dir(&fixture, &dir)?;
    let root = Group::open(store(&dir)?, "")?;
    assert!(
        root.is_consolidated() && root.zarr_format() == zarr_format,
        "xarray writes consolidated metadata"
    );
    // three more time steps of every variable along time, and a new variable
    let mut time = root.open_array("time")?;
    time.append(
        ArrayD::from_shape_vec(IxDyn(&[3]), vec![10i64, 11, 12])?.view(),
        0,
    )?;
    let mut temperature = root.open_array("temperature")?;
    temperature.append(ArrayD::from_elem(IxDyn(&[3, 4, 5]), 280.5f32).view(), 0)?;
    let mut precipitation = root.open_array("precipitation")?;
    precipitation.append(ArrayD::from_elem(IxDyn(&[3, 4, 5]), 1.25f64).view(), 0)?;
    let mut attrs = serde_json::Map::new();
    attrs.insert("units".into(), "hPa".into());
    let pressure = ArrayBuilder::new(vec![13], DataType::Float32).chunk_shape(vec![13]);
    let pressure = if zarr_format == 2 {
        // v2 has no dimension names: xarray keeps them in an attribute
        attrs.insert("_ARRAY_DIMENSIONS".into(), serde_json::json!(["time"]));
        pressure.zarr_format(2)
    } else {
        pressure.dimension_names(vec![Some("time".into())])
    };
    root.create_array("pressure", &pressure.attributes(attrs))?;
    let seen = python(
        r#"
import sys, zarr, xarray as xr
g = zarr.open_group(sys.argv[1], mode="r", use_consolidated=True)
print(g["temperature"].shape, g["time"].shape, g["pressure"].attrs["units"])
ds = xr.open_zarr(sys.argv[1], consolidated=True)
print(dict(ds.sizes), ds["temperature"].shape, float(ds["temperature"][12, 0, 0]),
      str(ds["time"].values[-1])[:10], sorted(ds.data_vars))
"#,
        &[&dir],
    );
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(lines[0], "(13, 4, 5) (13,) hPa", "{seen}");
    assert_eq!(
        lines[1],
        "{'time': 13, 'lat': 4, 'lon': 5} (13, 4, 5) 280.5 2000-01-13 \
         ['precipitation', 'pressure', 'station', 'temperature']",
        "{seen}"
    );
    Ok(())
}

#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn consolidate_v2_writes_what_zarr_python_writes() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let (theirs, ours) = (tmp.path().join("theirs"), tmp.path().join("ours"));
    // a v2 hierarchy written by zarr-python: nested groups, names whose case-insensitive order
    // differs from byte order, attributes, several data types, codecs, orders, separators and
    // fill values
    python(
        r#"
import sys, zarr, numcodecs, numpy as np
g = zarr.open_group(sys.argv[1], mode="w", zarr_format=2, attributes={"title": "root"})
s = g.create_group("sub", attributes={"k": 1})
s.create_array("x", shape=(4,), dtype="i4", chunks=(2,))
d = s.create_group("Deep")
d.create_array("z", shape=(2, 3), dtype="u1", chunks=(2, 2), fill_value=7, order="F")
g.create_array("Y", shape=(3, 2), dtype=">f8", chunks=(2, 2), attributes={"a": "b", "n": [1.5, None]},
               fill_value=float("nan"), chunk_key_encoding={"name": "v2", "separator": "/"})
g.create_array("b", shape=(5,), dtype="bool", chunks=(5,), compressors=None)
g.create_array("c", shape=(6,), dtype="complex64", chunks=(3,),
               compressors=numcodecs.Zstd(level=3), filters=[numcodecs.Delta(dtype="<c8")])
g.create_group("empty")
"#,
        &[&theirs],
    );
    copy_dir(&theirs, &ours)?;
    python(
        "import sys, zarr; zarr.consolidate_metadata(sys.argv[1], zarr_format=2)",
        &[&theirs],
    );
    let mut root = Group::open(store(&ours)?, "")?;
    assert_eq!(root.zarr_format(), 2);
    root.consolidate()?;
    let (a, b) = (
        std::fs::read(ours.join(".zmetadata"))?,
        std::fs::read(theirs.join(".zmetadata"))?,
    );
    assert_eq!(
        String::from_utf8_lossy(&a),
        String::from_utf8_lossy(&b),
        "byte for byte"
    );
    // and zarr-python opens ours through it
    let listed = python(
        r#"
import sys, zarr
g = zarr.open_group(sys.argv[1], mode="r", use_consolidated=True, zarr_format=2)
print(sorted(k for k, _ in g.members(max_depth=None)), g["sub/Deep/z"].shape)
"#,
        &[&ours],
    );
    assert_eq!(
        listed.trim(),
        "['Y', 'b', 'c', 'empty', 'sub', 'sub/Deep', 'sub/Deep/z', 'sub/x'] (2, 3)"
    );
    Ok(())
}

/// xarray's v2 hierarchies (written by `Dataset.to_zarr(consolidated=True)` with zarr-python
/// 3.1.6) consolidated again: the `.zmetadata` xarray wrote, byte for byte.
#[test]
fn xarray_v2_hierarchies_consolidate_to_their_own_zmetadata() -> TestResult {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/xarray");
    let mut checked = 0;
    for entry in std::fs::read_dir(&fixtures)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with("_v2") {
            continue;
        }
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join(&name);
        copy_dir(&entry.path(), &dir)?;
        let original = std::fs::read(dir.join(".zmetadata"))?;
        let root = Group::open(store(&dir)?, "")?;
        assert!(root.is_consolidated(), "{name}");
        assert_eq!(root.check_consolidated()?, [], "{name}");
        std::fs::remove_file(dir.join(".zmetadata"))?;
        let mut root = Group::open(store(&dir)?, "")?;
        assert!(!root.is_consolidated(), "{name}");
        root.consolidate()?;
        assert_eq!(
            String::from_utf8_lossy(&std::fs::read(dir.join(".zmetadata"))?),
            String::from_utf8_lossy(&original),
            "{name}: consolidated again"
        );
        checked += 1;
    }
    assert_eq!(checked, 4, "labels_v2, nested_v2, packed_v2, weather_v2");
    Ok(())
}
