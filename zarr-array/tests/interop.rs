//! Interop with zarr-python 3.1.6 and TensorStore 0.1.86: arrays this project writes (every
//! data type, codecs, sharding, both key encodings, groups) are read by both peers with
//! identical data; both refuse an array after `prepend`, and both read its `regular` copy.
//! Zarr v2 arrays this project writes (every data type, order F, both separators, a few
//! codecs) are read by zarr-python (`zarr_format=2`) and TensorStore's `zarr` driver, and
//! zarr-python reads them again, with the metadata we wrote, after `Array::to_v3`. Zarr v2
//! filter chains (Delta, FixedScaleOffset, AsType, Quantize, either byte order) differentially:
//! 300 seeded random arrays zarr-python writes are read here, and written here for zarr-python.
//!
//! The tests are ignored by a plain `cargo test`: `scripts/test` creates the peers' venv,
//! exports `ZARR_PEERS_PYTHON_BIN` and runs them (`-- --ignored`); run without the venv, or
//! with a peer missing, they fail.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(
    feature = "zstd",
    feature = "gzip",
    feature = "blosc",
    feature = "crc32c",
    feature = "sharding",
    feature = "sparse",
    feature = "numcodecs",
    feature = "regular-bounded"
))]

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use serde_json::json;
use zarr_array::{Array, ArrayBuilder, DataType, ExtensionDef, Group};
use zarr_meta::data_type::CORE_DATA_TYPES;
use zarr_store::{FilesystemStore, Store};

/// What a peer made of one array: `Ok((bytes of the .npy, the metadata the peer reports))`,
/// or `Err((exit code, message))` (3: the peer refused to open the array).
type PeerRead = Result<(Vec<u8>, String), (i32, String)>;

/// Reads each `(peer, array directory)` of `jobs` with `conformance/peers/read_with.py`, all
/// in one Python process (`--batch`): starting Python and importing zarr-python or
/// TensorStore costs about a second, which one process per array paid a few hundred times.
fn peer_reads(py: &Path, jobs: &[(&str, &Path)]) -> Vec<PeerRead> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/peers/read_with.py");
    let tmp = tempfile::tempdir().unwrap();
    let outs: Vec<_> = (0..jobs.len())
        .map(|i| tmp.path().join(format!("{i}.npy")))
        .collect();
    let listed: Vec<_> = jobs
        .iter()
        .zip(&outs)
        .map(|((peer, array), out)| json!([peer, array, out]))
        .collect();
    let jobs_file = tmp.path().join("jobs.json");
    let results_file = tmp.path().join("results.json");
    std::fs::write(&jobs_file, serde_json::to_vec(&listed).unwrap()).unwrap();
    let run = Command::new(py)
        .arg(script)
        .arg("--batch")
        .arg(&jobs_file)
        .arg(&results_file)
        .output()
        .expect("run the peer reader");
    assert!(
        run.status.success(),
        "read_with.py --batch failed ({}): {}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    let results: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&results_file).unwrap()).unwrap();
    assert_eq!(results.len(), jobs.len(), "one result per job");
    results
        .iter()
        .zip(&outs)
        .map(|(r, out)| match r["exit"].as_i64() {
            Some(0) => Ok((std::fs::read(out).unwrap(), r["meta"].to_string())),
            code => Err((
                code.map_or(-1, |c| c as i32),
                r["message"].as_str().unwrap_or_default().to_string(),
            )),
        })
        .collect()
}

/// Each array is read by each of its peers as we read it; with `metadata`, zarr-python's
/// view of the metadata is also the same document as ours (for Zarr v2 arrays the peers
/// report their own v2 form: compare the data only).
fn expect_same(py: &Path, arrays: &[(&Array, &[&str])], root: &Path, metadata: bool) {
    let paths: Vec<_> = arrays.iter().map(|(a, _)| root.join(a.path())).collect();
    let jobs: Vec<(&str, &Path)> = arrays
        .iter()
        .zip(&paths)
        .flat_map(|((_, peers), path)| peers.iter().map(move |peer| (*peer, path.as_path())))
        .collect();
    let mut reads = peer_reads(py, &jobs).into_iter();
    for (array, peers) in arrays {
        let ours = array
            .read_selection_bytes(&zarr_array::Selection::all())
            .unwrap();
        for peer in *peers {
            let (npy, meta) = reads.next().unwrap().unwrap_or_else(|(code, message)| {
                panic!(
                    "{peer} could not read {} (exit {code}): {message}",
                    array.path()
                )
            });
            if metadata && *peer == "zarr-python" {
                // zarr-python's view of the metadata is the same document as ours
                let theirs = zarr_meta::ArrayMetadata::from_slice(meta.trim().as_bytes())
                    .unwrap_or_else(|e| {
                        panic!("zarr-python metadata of {}: {e}\n{meta}", array.path())
                    });
                assert_eq!(
                    &theirs,
                    array.metadata(),
                    "zarr-python sees other metadata for {}",
                    array.path()
                );
            }
            let npy = common::read_npy(&npy);
            assert_eq!(npy.shape, array.shape(), "{peer} {}", array.path());
            assert!(
                common::same_elements(array.data_type(), &npy.data, &ours),
                "{peer} reads {} differently",
                array.path()
            );
        }
    }
}

/// `(array, peers)` pairs as [`expect_same`] takes them.
fn as_jobs<'a>(arrays: &'a [(Array, Vec<&'a str>)]) -> Vec<(&'a Array, &'a [&'a str])> {
    arrays.iter().map(|(a, p)| (a, p.as_slice())).collect()
}

fn random_bytes(n: usize, t: DataType, seed: u64) -> Vec<u8> {
    let mut out = zarr_testkit::Rng::new(seed).bytes(n * t.size());
    match t {
        DataType::Bool => out.iter_mut().for_each(|b| *b &= 1),
        // keep floats finite and not NaN so both sides compare exactly
        DataType::Float16 => out.chunks_exact_mut(2).for_each(|c| c[1] &= 0x3f),
        DataType::Float32 | DataType::Complex64 => {
            out.chunks_exact_mut(4).for_each(|c| c[3] &= 0x3f)
        }
        DataType::Float64 | DataType::Complex128 => {
            out.chunks_exact_mut(8).for_each(|c| c[7] &= 0x3f)
        }
        _ => {}
    }
    out
}

fn def(name: &str, config: serde_json::Value) -> ExtensionDef {
    match config {
        serde_json::Value::Object(m) => ExtensionDef::with_configuration(name, m),
        _ => ExtensionDef::new(name),
    }
}

#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn peers_read_what_we_write() {
    let py = zarr_testkit::peers::python();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).unwrap());
    let both = ["zarr-python", "tensorstore"];
    let mut arrays = Vec::new();
    // every core data type, default codecs (bytes + zstd)
    for (i, t) in CORE_DATA_TYPES.iter().enumerate() {
        let a = ArrayBuilder::new(vec![11, 7], *t)
            .chunk_shape(vec![4, 3])
            .create(store.clone(), &format!("dtype_{}", t.name()))
            .unwrap();
        a.write_region_bytes(
            &zarr_grid::geometry::Region::whole(&[11, 7]),
            &random_bytes(77, *t, i as u64 + 1),
        )
        .unwrap();
        arrays.push((a, both.to_vec()));
    }
    let codecs: Vec<(&str, Vec<ExtensionDef>, Vec<ExtensionDef>)> = vec![
        ("raw", vec![], vec![]),
        ("gzip", vec![], vec![def("gzip", json!({"level": 5}))]),
        (
            "zstd_checksum",
            vec![],
            vec![def("zstd", json!({"level": 3, "checksum": true}))],
        ),
        (
            "blosc",
            vec![],
            vec![def(
                "blosc",
                json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}),
            )],
        ),
        ("crc32c", vec![], vec![def("crc32c", json!(null))]),
        (
            "transpose",
            vec![def("transpose", json!({"order": [1, 0]}))],
            vec![def("zstd", json!({"level": 1, "checksum": false}))],
        ),
    ];
    for (i, (name, filters, compressors)) in codecs.into_iter().enumerate() {
        let a = ArrayBuilder::new(vec![13, 9], DataType::Int32)
            .chunk_shape(vec![5, 4])
            .filters(filters)
            .compressors(compressors)
            .create(store.clone(), &format!("codec_{name}"))
            .unwrap();
        a.write_region_bytes(
            &zarr_grid::geometry::Region::whole(&[13, 9]),
            &random_bytes(117, DataType::Int32, 100 + i as u64),
        )
        .unwrap();
        arrays.push((a, both.to_vec()));
    }
    // sharding, partial edge shards, an empty inner chunk
    let a = ArrayBuilder::new(vec![20, 13], DataType::Float32)
        .chunk_shape(vec![4, 4])
        .shards(vec![8, 8])
        .create(store.clone(), "shard")
        .unwrap();
    a.write_region_bytes(
        &zarr_grid::geometry::Region::new(vec![0, 0], vec![12, 13]).unwrap(),
        &random_bytes(156, DataType::Float32, 7),
    )
    .unwrap();
    arrays.push((a, both.to_vec()));
    // key encodings
    for (name, enc) in [
        (
            "keys_default_dot",
            def("default", json!({"separator": "."})),
        ),
        ("keys_v2_dot", def("v2", json!({"separator": "."}))),
        ("keys_v2_slash", def("v2", json!({"separator": "/"}))),
    ] {
        let a = ArrayBuilder::new(vec![6, 5], DataType::UInt16)
            .chunk_shape(vec![4, 2])
            .key_encoding(enc)
            .create(store.clone(), name)
            .unwrap();
        a.write_region_bytes(
            &zarr_grid::geometry::Region::whole(&[6, 5]),
            &random_bytes(30, DataType::UInt16, 9),
        )
        .unwrap();
        arrays.push((a, both.to_vec()));
    }
    // groups with attributes, an array inside
    let mut attrs = serde_json::Map::new();
    attrs.insert("title".into(), json!("root"));
    let g = Group::create(store.clone(), "grp", attrs).unwrap();
    let leaf = g
        .create_group("sub", Default::default())
        .unwrap()
        .create_array(
            "leaf",
            &ArrayBuilder::new(vec![4], DataType::Float64)
                .fill_value_json(&json!("NaN"))
                .unwrap(),
        )
        .unwrap();
    leaf.write_region_bytes(
        &zarr_grid::geometry::Region::new(vec![1], vec![2]).unwrap(),
        &random_bytes(2, DataType::Float64, 3),
    )
    .unwrap();
    arrays.push((leaf, both.to_vec()));

    expect_same(&py, &as_jobs(&arrays), dir.path(), true);
}

#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn peers_refuse_prepended_arrays_and_read_the_regular_copy() {
    let py = zarr_testkit::peers::python();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).unwrap());
    let mut z = ArrayBuilder::new(vec![6, 4], DataType::Int32)
        .chunk_shape(vec![4, 4])
        .create(store.clone(), "z")
        .unwrap();
    z.write_region(
        &zarr_array::Region::new(vec![0, 0], vec![6, 4]).unwrap(),
        ndarray::ArrayD::from_elem(vec![6, 4], 1i32).view(),
    )
    .unwrap();
    z.prepend(ndarray::ArrayD::from_elem(vec![3, 4], 2i32).view(), 0)
        .unwrap();
    let both = ["zarr-python", "tensorstore"];
    let prepended = dir.path().join("z");
    let reads = peer_reads(&py, &both.map(|peer| (peer, prepended.as_path())));
    for (peer, read) in both.iter().zip(reads) {
        assert_eq!(
            read.err().map(|(code, _)| code),
            Some(3),
            "{peer} must refuse"
        );
    }
    let copy = z.to_regular(store.clone(), "z_regular").unwrap();
    expect_same(&py, &[(&copy, &both)], dir.path(), true);
    let reopened = Array::open(store, "z_regular").unwrap();
    assert_eq!(
        reopened.read_all::<i32>().unwrap(),
        z.read_all::<i32>().unwrap()
    );
}

#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn peers_read_our_v2_arrays_and_their_v3_conversions() {
    use zarr_array::zarr_codecs::transpose::{TransposeConfig, TransposeOrder};
    let py = zarr_testkit::peers::python();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).unwrap());
    let both = ["zarr-python", "tensorstore"];
    let f_order = || TransposeConfig {
        order: TransposeOrder::Named("F".into()),
    };
    let sep = |s: &str| def("v2", json!({"separator": s}));
    let mut arrays = Vec::new();
    // every core data type, order C and F, both separators, zarr-python's v2 default (zstd 0)
    for (i, t) in CORE_DATA_TYPES.iter().enumerate() {
        for (j, (order_f, separator)) in [(false, "."), (true, "/")].into_iter().enumerate() {
            let mut b = ArrayBuilder::new(vec![11, 7], *t)
                .chunk_shape(vec![4, 3])
                .key_encoding(sep(separator))
                .zarr_format(2);
            if order_f {
                b = b.filters([f_order()]);
            }
            let a = b
                .create(store.clone(), &format!("v2_{}_{j}", t.name()))
                .unwrap();
            a.write_region_bytes(
                &zarr_grid::geometry::Region::whole(&[11, 7]),
                &random_bytes(77, *t, (i * 2 + j) as u64 + 1),
            )
            .unwrap();
            arrays.push((a, both.to_vec()));
        }
    }
    // a few codecs; TensorStore's zarr driver has no filters, lz4 or checksums
    // name, filters, compressors, the peers that read it
    type Case<'a> = (&'a str, Vec<ExtensionDef>, Vec<ExtensionDef>, Vec<&'a str>);
    let codecs: Vec<Case<'_>> = vec![
        ("raw", vec![], vec![], both.to_vec()),
        (
            "gzip",
            vec![],
            vec![def("gzip", json!({"level": 5}))],
            both.to_vec(),
        ),
        (
            "blosc",
            vec![],
            vec![def(
                "blosc",
                json!({"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "blocksize": 0}),
            )],
            both.to_vec(),
        ),
        (
            "zlib",
            vec![],
            vec![def("numcodecs.zlib", json!({"level": 1}))],
            both.to_vec(),
        ),
        (
            "delta_lz4",
            vec![def("numcodecs.delta", json!({"dtype": "<i4"}))],
            vec![def("numcodecs.lz4", json!({"acceleration": 1}))],
            vec!["zarr-python"],
        ),
        (
            "crc32_zstd",
            vec![],
            vec![
                def("numcodecs.crc32", json!({})),
                def("zstd", json!({"level": 1, "checksum": false})),
            ],
            vec!["zarr-python"],
        ),
    ];
    for (name, filters, compressors, peers) in codecs {
        let a = ArrayBuilder::new(vec![20, 13], DataType::Int32)
            .chunk_shape(vec![8, 5])
            .filters(filters)
            .compressors(compressors)
            .zarr_format(2)
            .create(store.clone(), &format!("v2_codec_{name}"))
            .unwrap();
        a.write_region_bytes(
            &zarr_grid::geometry::Region::whole(&[20, 13]),
            &random_bytes(260, DataType::Int32, 99),
        )
        .unwrap();
        arrays.push((a, peers));
    }
    expect_same(&py, &as_jobs(&arrays), dir.path(), false);
    // converted to v3 where they are (no chunk rewritten): zarr-python reads them the same,
    // and sees the metadata we wrote
    let converted: Vec<Array> = arrays
        .iter()
        .map(|(a, _)| a.to_v3(true).unwrap().array)
        .collect();
    let zarr_python: &[&str] = &["zarr-python"];
    let jobs: Vec<_> = converted.iter().map(|a| (a, zarr_python)).collect();
    expect_same(&py, &jobs, dir.path(), true);
}

#[cfg(feature = "vlen")]
#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn zarr_python_reads_our_strings_and_byte_strings() {
    // plain, with the fill value in missing chunks, and sharded
    use zarr_array::ndarray::{ArrayD, IxDyn};
    use zarr_array::Region;
    let py = zarr_testkit::peers::python();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FilesystemStore::open(dir.path()).unwrap());
    let vlen = |name: &str| ExtensionDef::with_configuration(name, Default::default());
    // zarr-python's defaults (vlen + zstd 0), partial edge chunks, some chunks left missing
    let s = ArrayBuilder::new(vec![5, 3], DataType::String)
        .chunk_shape(vec![2, 2])
        .serializer(vlen("vlen-utf8"))
        .fill_value_json(&json!("-"))
        .unwrap()
        .create(store.clone(), "s")
        .unwrap();
    let items = ["a", "", "héllo", "中文", "\u{1F600}", "x\ny", "\"q\"", "-"];
    let data = ArrayD::from_shape_vec(
        IxDyn(&[4, 2]),
        items.iter().map(|s| s.to_string()).collect(),
    )
    .unwrap();
    s.write_region_vlen(&Region::new(vec![1, 1], vec![4, 2]).unwrap(), data.view())
        .unwrap();
    let b = ArrayBuilder::new(vec![4], DataType::Bytes)
        .chunk_shape(vec![3])
        .serializer(vlen("vlen-bytes"))
        .fill_value_json(&json!("AHo="))
        .unwrap()
        .create(store.clone(), "b")
        .unwrap();
    let bytes: Vec<Vec<u8>> = vec![vec![0, 255, 1], vec![], b"abc".to_vec()];
    b.write_region_vlen(
        &Region::new(vec![1], vec![3]).unwrap(),
        ArrayD::from_shape_vec(IxDyn(&[3]), bytes).unwrap().view(),
    )
    .unwrap();
    let sh = ArrayBuilder::new(vec![5, 7], DataType::String)
        .chunk_shape(vec![2, 2])
        .shards(vec![4, 4])
        .serializer(vlen("vlen-utf8"))
        .create(store.clone(), "sh")
        .unwrap();
    let items: Vec<String> = (0..35).map(|i| format!("{i}é")).collect();
    let data = ArrayD::from_shape_vec(IxDyn(&[5, 7]), items).unwrap();
    sh.write_region_vlen(&Region::whole(&[5, 7]), data.view())
        .unwrap();
    let arrays = [&s, &b, &sh];
    let paths = arrays.map(|a| dir.path().join(a.path()));
    let reads = peer_reads(&py, &paths.each_ref().map(|p| ("zarr-python", p.as_path())));
    for (array, read) in arrays.into_iter().zip(reads) {
        let (npy, meta) = read.unwrap_or_else(|(code, message)| {
            panic!(
                "zarr-python could not read {} (exit {code}): {message}",
                array.path()
            )
        });
        let theirs = zarr_meta::ArrayMetadata::from_slice(meta.trim().as_bytes()).unwrap();
        assert_eq!(&theirs, array.metadata(), "{}", array.path());
        let got = common::read_npy(&npy).fixed_width_strings().unwrap();
        let whole = Region::whole(array.shape());
        let ours: Vec<Vec<u8>> = if array.data_type() == DataType::String {
            array
                .read_region_vlen::<String>(&whole)
                .unwrap()
                .iter()
                .map(|s| s.as_bytes().to_vec())
                .collect()
        } else {
            array
                .read_region_vlen::<Vec<u8>>(&whole)
                .unwrap()
                .iter()
                .map(|b| {
                    // NumPy's 'S' drops trailing NULs
                    let mut b = b.clone();
                    while b.last() == Some(&0) {
                        b.pop();
                    }
                    b
                })
                .collect()
        };
        assert_eq!(got, ours, "zarr-python reads {} differently", array.path());
    }
}

/// As `zarr_python_reads_our_partial_shard_writes` for `string` arrays (issue 37, item 3):
/// 250 seeded random partial writes and appends of strings into sharded arrays (inner
/// chunks compressed or not, fill values "" and "-", with and without
/// `write_empty_chunks`), which sharding's partial encoder applies re-encoding only the
/// inner chunks touched (appends by compare-and-swap), each checked against a model, and
/// zarr-python reads every array as we do.
#[cfg(feature = "vlen")]
#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn zarr_python_reads_our_partial_string_shard_writes() {
    use zarr_array::ndarray::{ArrayD, IxDyn};
    use zarr_array::{Region, WriteOptions};

    let py = zarr_testkit::peers::python();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).unwrap());
    let mut rng = zarr_testkit::Rng::new(3738);
    let vlen = ExtensionDef::with_configuration("vlen-utf8", Default::default());
    let zstd = def("zstd", json!({"level": 1, "checksum": false}));
    let crc32c = def("crc32c", json!(null));
    // (name, inner compressors, fill value, write_empty_chunks)
    let configs: Vec<(&str, Vec<ExtensionDef>, &str, bool)> = vec![
        ("raw", vec![], "", false),
        ("raw", vec![], "-", true),
        ("zstd", vec![zstd.clone()], "-", false),
        ("zstd", vec![zstd], "", true),
        ("crc32c", vec![crc32c], "-", false),
    ];
    let words = ["a", "é", "héllo", "中文", "-", "xyz", "\u{1F600}", "q\"q"];
    let mut writes = 0;
    // (directory, name, model) of each array, read by zarr-python at the end
    let mut written = Vec::new();
    for (name, compressors, fill, keep_empty) in configs {
        let shape = [rng.range(10..30), rng.range(10..30)];
        let inner = [rng.range(1..5), rng.range(1..5)];
        let shard = [inner[0] * rng.range(1..4), inner[1] * rng.range(1..4)];
        let path = format!("s_{name}_{}_{keep_empty}", fill.len());
        let mut a = ArrayBuilder::new(shape.to_vec(), DataType::String)
            .chunk_shape(inner.to_vec())
            .shards(shard.to_vec())
            .serializer(vlen.clone())
            .compressors(compressors)
            .fill_value_json(&json!(fill))
            .unwrap()
            .write_options(WriteOptions {
                write_empty_chunks: keep_empty,
            })
            .create(store.clone(), &path)
            .unwrap();
        let mut rows = shape[0];
        let mut model: Vec<String> = vec![fill.to_string(); (shape[0] * shape[1]) as usize];
        for step in 0..50 {
            let value = |rng: &mut zarr_testkit::Rng| {
                if rng.chance(0.4) {
                    fill.to_string()
                } else {
                    words[rng.below(words.len() as u64) as usize].repeat(rng.range(1..4) as usize)
                }
            };
            if step % 8 == 7 {
                // an append along the first axis: the shards it shares with the rows above
                // it are updated by compare-and-swap
                let n = rng.range(1..4);
                let block: Vec<String> = (0..n * shape[1]).map(|_| value(&mut rng)).collect();
                let data =
                    ArrayD::from_shape_vec(IxDyn(&[n as usize, shape[1] as usize]), block.clone())
                        .unwrap();
                a.append_vlen(data.view(), 0).unwrap();
                model.extend(block);
                rows += n;
            } else {
                let start = [rng.below(rows), rng.below(shape[1])];
                let size = [
                    rng.range(1..(rows - start[0]).min(9) + 1),
                    rng.range(1..(shape[1] - start[1]).min(9) + 1),
                ];
                let region = Region::new(start.to_vec(), size.to_vec()).unwrap();
                let block: Vec<String> = (0..size[0] * size[1]).map(|_| value(&mut rng)).collect();
                let data = ArrayD::from_shape_vec(
                    IxDyn(&[size[0] as usize, size[1] as usize]),
                    block.clone(),
                )
                .unwrap();
                a.write_region_vlen(&region, data.view()).unwrap();
                for i in 0..size[0] {
                    for j in 0..size[1] {
                        model[((start[0] + i) * shape[1] + start[1] + j) as usize] =
                            block[(i * size[1] + j) as usize].clone();
                    }
                }
            }
            writes += 1;
            let got = a
                .read_region_vlen::<String>(&Region::whole(&[rows, shape[1]]))
                .unwrap();
            assert!(
                got.as_slice().unwrap() == model.as_slice(),
                "{path} step {step}: reads other values than written"
            );
        }
        written.push((dir.path().join(a.path()), path, model));
    }
    assert_eq!(writes, 250);
    let jobs: Vec<_> = written
        .iter()
        .map(|(dir, ..)| ("zarr-python", dir.as_path()))
        .collect();
    for ((_, path, model), read) in written.iter().zip(peer_reads(&py, &jobs)) {
        let (npy, _) = read.unwrap_or_else(|(code, message)| {
            panic!("zarr-python could not read {path} (exit {code}): {message}")
        });
        let theirs = common::read_npy(&npy).fixed_width_strings().unwrap();
        let ours: Vec<Vec<u8>> = model.iter().map(|s| s.as_bytes().to_vec()).collect();
        assert_eq!(theirs, ours, "zarr-python reads {path} differently");
    }
}

/// Differential test of Zarr v2 filter chains against zarr-python 3.1.6: it writes 300 seeded
/// random v2 arrays (`conformance/peers/v2_filters.py`: dtypes of either byte order, one or
/// two of Delta, FixedScaleOffset, AsType, Quantize with either byte order on their `dtype`
/// and `astype`, order C or F, edge chunks, no compressor or zstd). We read each as
/// zarr-python reads it; we write the same values into the same array left empty, convert it
/// to v3 and back (the same `.zarray` dtype and filters), and zarr-python reads it as its own,
/// with the very chunks it stores when there is no compressor. A chain in which numcodecs
/// reinterprets bytes (a filter's `dtype` in the other byte order than the values it
/// receives) is refused, by name, and only such a chain.
#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn v2_filter_chains_against_zarr_python() {
    let py = zarr_testkit::peers::python();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/peers/v2_filters.py");
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(&py)
            .arg(&script)
            .args(args)
            .output()
            .expect("run v2_filters.py")
    };
    let root = dir.path().to_str().unwrap();
    let out = run(&["write", root, "38", "300"]);
    assert!(
        out.status.success(),
        "v2_filters.py write: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |name: String| std::fs::read(dir.path().join(name)).unwrap();
    let cases: Vec<serde_json::Value> = serde_json::from_slice(&read("cases.json".into())).unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path()).unwrap());
    let mut failures = Vec::new();
    let mut written = Vec::new();
    let mut refused = 0;
    for (i, case) in cases.iter().enumerate() {
        if !case["skip"].is_null() {
            continue;
        }
        let what = format!("case {i} {} {}", case["dtype"], case["filters"]);
        let (a, b) = (
            Array::open(store.clone(), &format!("a{i}")),
            Array::open(store.clone(), &format!("b{i}")),
        );
        if case["reinterprets"] == json!(true) {
            for opened in [a, b] {
                match opened {
                    Err(e) if zarr_testkit::report(&e).contains("reinterpreting their bytes") => {}
                    Err(e) => failures.push(format!(
                        "{what}: refused, but not as a reinterpretation: {}",
                        zarr_testkit::report(&e)
                    )),
                    Ok(_) => failures.push(format!(
                        "{what}: opened, though numcodecs reinterprets its bytes"
                    )),
                }
            }
            refused += 1;
            continue;
        }
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                failures.push(format!("{what}: refused: {}", zarr_testkit::report(&e)));
                continue;
            }
        };
        let theirs = common::read_npy(&read(format!("r{i}.npy")));
        match a.read_selection_bytes(&zarr_array::Selection::all()) {
            Ok(ours)
                if theirs.shape == a.shape()
                    && common::same_elements(a.data_type(), &ours, &theirs.data) => {}
            Ok(_) => failures.push(format!("{what}: we read zarr-python's array differently")),
            Err(e) => failures.push(format!("{what}: read: {}", zarr_testkit::report(&e))),
        }
        let zarray = |store: &dyn Store| -> serde_json::Value {
            serde_json::from_slice(&store.get(&format!("b{i}/.zarray")).unwrap().unwrap()).unwrap()
        };
        let before = zarray(&*store);
        let x = common::read_npy(&read(format!("x{i}.npy")));
        let region = zarr_grid::geometry::Region::whole(b.shape());
        let converted = b
            .write_region_bytes(&region, &x.data)
            .and_then(|()| b.to_v3(true))
            .and_then(|c| c.array.to_v2(true));
        match converted {
            Ok(_) => {
                let after = zarray(&*store);
                if (&after["dtype"], &after["filters"]) != (&before["dtype"], &before["filters"]) {
                    failures.push(format!(
                        "{what}: to v3 and back writes dtype {} and filters {}",
                        after["dtype"], after["filters"]
                    ));
                }
                written.push(i);
            }
            Err(e) => failures.push(format!(
                "{what}: write or convert: {}",
                zarr_testkit::report(&e)
            )),
        }
    }
    std::fs::write(
        dir.path().join("written.json"),
        serde_json::to_vec(&written).unwrap(),
    )
    .unwrap();
    let out = run(&["check", root]);
    if !out.status.success() {
        failures.push(format!(
            "zarr-python reads what we wrote differently:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // the draw covers both kinds of chains
    assert!(
        written.len() >= 150 && refused >= 20,
        "{} written, {refused} refused",
        written.len()
    );
}

/// Issue 37: partial writes of shards go through sharding's partial encoder (only the inner
/// chunks a write touches re-encoded, the others' bytes kept). Seeded random writes (and
/// appends, which update the shards they share by compare-and-swap) into sharded arrays of
/// several inner chains, fill values and `write_empty_chunks`; after every write the array
/// reads as its model, and at the end zarr-python reads every array as we do.
#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn zarr_python_reads_our_partial_shard_writes() {
    use zarr_array::{FillValue, Region, WriteOptions};

    let py = zarr_testkit::peers::python();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).unwrap());
    let mut rng = zarr_testkit::Rng::new(3737);
    let transpose = def("transpose", json!({"order": [1, 0]}));
    let zstd = def("zstd", json!({"level": 1, "checksum": false}));
    let crc32c = def("crc32c", json!(null));
    let mut written = Vec::new();
    // (name, inner filters, inner compressors, fill value, write_empty_chunks)
    type Config = (
        &'static str,
        Vec<ExtensionDef>,
        Vec<ExtensionDef>,
        i32,
        bool,
    );
    let configs: Vec<Config> = vec![
        ("raw", vec![], vec![], 0, false),
        ("raw", vec![], vec![], -3, true),
        ("zstd", vec![], vec![zstd.clone()], 5, false),
        ("transpose", vec![transpose.clone()], vec![zstd], -3, true),
        ("transpose", vec![transpose.clone()], vec![], 0, false),
        ("crc32c", vec![transpose], vec![crc32c], 5, true),
    ];
    let mut writes = 0;
    for (name, filters, compressors, fill, keep_empty) in configs {
        let shape = [rng.range(10..30), rng.range(10..30)];
        let inner = [rng.range(1..5), rng.range(1..5)];
        let shard = [inner[0] * rng.range(1..4), inner[1] * rng.range(1..4)];
        let path = format!("{name}_{}_{keep_empty}", fill.unsigned_abs());
        let mut a = ArrayBuilder::new(shape.to_vec(), DataType::Int32)
            .chunk_shape(inner.to_vec())
            .shards(shard.to_vec())
            .filters(filters)
            .compressors(compressors)
            .fill_value(FillValue::from_ne_bytes(DataType::Int32, fill.to_ne_bytes()).unwrap())
            .write_options(WriteOptions {
                write_empty_chunks: keep_empty,
            })
            .create(store.clone(), &path)
            .unwrap();
        let mut rows = shape[0];
        let mut model: Vec<i32> = vec![fill; (shape[0] * shape[1]) as usize];
        for step in 0..50 {
            let value = |rng: &mut zarr_testkit::Rng| {
                if rng.chance(0.4) {
                    fill
                } else {
                    rng.below(1000) as i32
                }
            };
            if step % 8 == 7 {
                // an append along the first axis: the shards it shares with the rows
                // above it are updated by compare-and-swap
                let n = rng.range(1..4);
                let block: Vec<i32> = (0..n * shape[1]).map(|_| value(&mut rng)).collect();
                let bytes: Vec<u8> = block.iter().flat_map(|v| v.to_ne_bytes()).collect();
                a.append_bytes(&[n, shape[1]], &bytes, 0).unwrap();
                model.extend(block);
                rows += n;
            } else {
                let start = [rng.below(rows), rng.below(shape[1])];
                let size = [
                    rng.range(1..(rows - start[0]).min(9) + 1),
                    rng.range(1..(shape[1] - start[1]).min(9) + 1),
                ];
                let region = Region::new(start.to_vec(), size.to_vec()).unwrap();
                let block: Vec<i32> = (0..size[0] * size[1]).map(|_| value(&mut rng)).collect();
                let bytes: Vec<u8> = block.iter().flat_map(|v| v.to_ne_bytes()).collect();
                a.write_region_bytes(&region, &bytes).unwrap();
                for i in 0..size[0] {
                    for j in 0..size[1] {
                        model[((start[0] + i) * shape[1] + start[1] + j) as usize] =
                            block[(i * size[1] + j) as usize];
                    }
                }
            }
            writes += 1;
            let want: Vec<u8> = model.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let got = a
                .read_region_bytes(&Region::whole(&[rows, shape[1]]))
                .unwrap();
            assert!(
                got == want,
                "{path} step {step}: reads other values than written"
            );
        }
        written.push(a);
    }
    assert_eq!(writes, 300);
    let zarr_python: &[&str] = &["zarr-python"];
    let jobs: Vec<_> = written.iter().map(|a| (a, zarr_python)).collect();
    expect_same(&py, &jobs, dir.path(), true);
}
