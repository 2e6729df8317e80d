//! The crate's tests. The unit-test binary installs the counting allocator (one global
//! allocator per binary; this crate's tests need no binary of their own for it), and every
//! test holds [`serial`] so that a measuring test counts only its own allocations.

use std::path::Path;
use std::sync::{Arc, MutexGuard};

use zarr_array::zarr_store::{FilesystemStore, MemoryStore, Store};
use zarr_array::{Array, Region};
use zarr_testkit::{CountingAlloc, Rng};

use crate::*;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::refusing_above(8 << 30);

/// One test at a time (see the module documentation).
pub(crate) fn serial() -> MutexGuard<'static, ()> {
    ALLOC.serial()
}

fn mem() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

fn imp_mtx(path: &Path, store: &Arc<dyn Store>, opts: &ImportOptions) -> Result<Array> {
    let s = store.clone();
    import_mtx(path, opts, &mut |p| {
        Ok(p.builder().create(s.clone(), "m")?)
    })
}

fn imp_npz(path: &Path, store: &Arc<dyn Store>, opts: &ImportOptions) -> Result<Array> {
    let s = store.clone();
    import_npz(path, opts, &mut |p| {
        Ok(p.builder().create(s.clone(), "m")?)
    })
}

/// The dense form of an array.
fn dense(a: &Array) -> Vec<f64> {
    a.read_all::<f64>().unwrap().iter().copied().collect()
}

/// A random matrix as row-major sorted triples.
fn random(rng: &mut Rng, rows: u64, cols: u64, nnz: usize) -> Vec<(u64, u64, f64)> {
    let mut m = std::collections::BTreeMap::new();
    for _ in 0..nnz {
        let v = (rng.below(2000) as f64 - 1000.0) / 8.0;
        m.insert(
            (rng.below(rows), rng.below(cols)),
            if v == 0.0 { 1.0 } else { v },
        );
    }
    m.into_iter().map(|((r, c), v)| (r, c, v)).collect()
}

fn write_mtx(path: &Path, rows: u64, cols: u64, entries: &[(u64, u64, f64)]) {
    let mut s = format!(
        "%%MatrixMarket matrix coordinate real general\n% a comment\n{rows} {cols} {}\n",
        entries.len()
    );
    for (r, c, v) in entries {
        s.push_str(&format!("{} {} {v}\n", r + 1, c + 1));
    }
    std::fs::write(path, s).unwrap();
}

fn dense_of(rows: u64, cols: u64, entries: &[(u64, u64, f64)]) -> Vec<f64> {
    let mut d = vec![0.0; (rows * cols) as usize];
    for &(r, c, v) in entries {
        d[(r * cols + c) as usize] = v;
    }
    d
}

#[test]
fn mtx_imports_unsorted_and_exports_row_major() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(1);
    let mut e = random(&mut rng, 37, 23, 200);
    let want = dense_of(37, 23, &e);
    // column-major, as 10x Genomics writes
    e.sort_by_key(|x| (x.1, x.0));
    let p = dir.path().join("m.mtx");
    write_mtx(&p, 37, 23, &e);
    let store = mem();
    let opts = ImportOptions {
        chunks: Some(vec![5, 7]),
        ..Default::default()
    };
    let a = imp_mtx(&p, &store, &opts).unwrap();
    assert_eq!(dense(&a), want);
    // the proposed builder's compressor: zstd at the import's level
    let codecs = a.codecs().to_defs();
    assert_eq!(codecs.len(), 2);
    assert_eq!(codecs[1].name, "zstd");
    let level = codecs[1].configuration.as_ref().map(|c| c["level"].clone());
    assert_eq!(level, Some(serde_json::json!(IMPORT_ZSTD_LEVEL)));
    let back = dir.path().join("b.mtx.gz");
    export_mtx(&a, &back, &ExportOptions::default()).unwrap();
    let store2 = mem();
    let b = imp_mtx(&back, &store2, &ImportOptions::default()).unwrap();
    assert_eq!(dense(&b), want);
}

#[test]
fn npz_round_trips_in_every_layout() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(2);
    let e = random(&mut rng, 30, 41, 150);
    let want = dense_of(30, 41, &e);
    let p = dir.path().join("m.mtx");
    write_mtx(&p, 30, 41, &e);
    let a = imp_mtx(
        &p,
        &mem(),
        &ImportOptions {
            chunks: Some(vec![4, 9]),
            ..Default::default()
        },
    )
    .unwrap();
    for layout in [Layout::Csr, Layout::Csc, Layout::Coo] {
        let z = dir.path().join(format!("m-{}.npz", layout.name()));
        export_npz(&a, &z, layout, &ExportOptions::default()).unwrap();
        let b = imp_npz(&z, &mem(), &ImportOptions::default()).unwrap();
        assert_eq!(dense(&b), want, "{layout:?}");
    }
}

#[test]
fn bad_mtx_input_is_refused_with_its_place_and_leaves_nothing() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str)] = &[
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 2\n",
            "truncated: 2 entries of the 3",
        ),
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n",
            "more entries than the 1",
        ),
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n3 1 2\n",
            "line 4: entry (2, 0) lies outside the 2x2 matrix",
        ),
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 1 2\n",
            "entry (0, 0) is given twice",
        ),
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n",
            "line 3: \"0 1 1\": indices start at 1",
        ),
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 x\n",
            "line 3: \"x\" is not a value of float64",
        ),
        (
            "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n",
            "the field \"complex\" is not supported",
        ),
        (
            "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
            "the \"array\" format",
        ),
        (
            "%%MatrixMarket matrix coordinate real general\n2 2 99999999999\n",
            "99999999999 entries cannot fit a 2x2 matrix",
        ),
        ("not a banner\n", "line 1: not a Matrix Market banner"),
        ("", "an empty file"),
        (
            "%%MatrixMarket matrix coordinate real general\n",
            "ends before its size line",
        ),
    ];
    for (i, (text, msg)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("bad{i}.mtx"));
        std::fs::write(&p, text).unwrap();
        let store = mem();
        let err = imp_mtx(&p, &store, &ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(msg), "case {i}: {err}");
        assert!(err.contains(&format!("bad{i}.mtx")), "case {i}: {err}");
        assert!(
            store.list_prefix("").unwrap().is_empty(),
            "case {i} left {:?}",
            store.list_prefix("").unwrap()
        );
    }
    // a truncated gzip stream
    let good = dir.path().join("g.mtx");
    let mut rng = Rng::new(3);
    write_mtx(&good, 100, 100, &random(&mut rng, 100, 100, 2000));
    let a = imp_mtx(&good, &mem(), &ImportOptions::default()).unwrap();
    let gz = dir.path().join("g.mtx.gz");
    export_mtx(&a, &gz, &ExportOptions::default()).unwrap();
    let bytes = std::fs::read(&gz).unwrap();
    let cut = dir.path().join("cut.mtx.gz");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let store = mem();
    let err = imp_mtx(&cut, &store, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cut.mtx.gz") && (err.contains("truncated") || err.contains("damaged")),
        "{err}"
    );
    assert!(store.list_prefix("").unwrap().is_empty());
}

#[test]
fn a_bad_line_deep_in_a_file_of_many_blocks_is_named_by_its_number() {
    // 300000 entries in blocks of 64 KiB (the smallest budget), each block parsed in pieces
    // on several threads: every line number counted where its piece is parsed
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols, n) = (1000u64, 1000u64, 300_000usize);
    for bad in [3 + 17, 3 + 123_457, 3 + n - 1] {
        let mut text =
            format!("%%MatrixMarket matrix coordinate real general\n{rows} {cols} {n}\n");
        for k in 0..n {
            let line = 3 + k;
            if line == bad {
                text.push_str("1 1 x\n");
            } else {
                let k = k as u64;
                text.push_str(&format!("{} {} 0.5\n", k % rows + 1, (k / rows) % cols + 1));
            }
        }
        let p = dir.path().join("deep.mtx");
        std::fs::write(&p, &text).unwrap();
        let err = imp_mtx(
            &p,
            &mem(),
            &ImportOptions {
                max_memory: MIN_MAX_MEMORY,
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(&format!("line {bad}: \"x\" is not a value of float64")),
            "{bad}: {err}"
        );
    }
}

#[test]
fn symmetric_and_pattern_and_integer_files() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.mtx");
    std::fs::write(
        &p,
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1.5\n3 1 2\n3 2 -4\n",
    )
    .unwrap();
    let a = imp_mtx(&p, &mem(), &ImportOptions::default()).unwrap();
    assert_eq!(
        dense(&a),
        vec![1.5, 0.0, 2.0, 0.0, 0.0, -4.0, 2.0, -4.0, 0.0]
    );
    std::fs::write(
        &p,
        "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n",
    )
    .unwrap();
    let a = imp_mtx(&p, &mem(), &ImportOptions::default()).unwrap();
    assert_eq!(dense(&a), vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
    std::fs::write(
        &p,
        "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -7\n2 1 9007199254740993\n",
    )
    .unwrap();
    let a = imp_mtx(&p, &mem(), &ImportOptions::default()).unwrap();
    assert_eq!(a.data_type(), zarr_array::DataType::Int64);
    let v = a.read_all::<i64>().unwrap();
    assert_eq!(
        v.iter().copied().collect::<Vec<_>>(),
        vec![0, -7, 9007199254740993, 0]
    );
    let out = dir.path().join("i.mtx");
    export_mtx(&a, &out, &ExportOptions::default()).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("%%MatrixMarket matrix coordinate integer general\n"),
        "{text}"
    );
    assert!(
        text.ends_with("2 2 2\n1 2 -7\n2 1 9007199254740993\n"),
        "{text}"
    );
}

#[test]
fn a_matrix_eight_times_the_memory_limit_converts_within_it() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let limit: u64 = 4 << 20;
    // 2000 x 3000 at ~3 %: 180 000 entries, 24 bytes each sorted = 4.3 MB, and the text is
    // ~3.5 MB; as float64 CSR in memory (12 bytes + 8 per entry) ~ 8x the limit once the
    // writer's and sorter's working sets are counted
    let (rows, cols) = (2000u64, 3000u64);
    let mut rng = Rng::new(9);
    let p = dir.path().join("big.mtx");
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        let n = 1_500_000u64;
        writeln!(
            f,
            "%%MatrixMarket matrix coordinate real general\n{rows} {cols} {n}"
        )
        .unwrap();
        // column-major, one entry per (col, row-step) so there are no duplicates
        let mut k = 0;
        'outer: for c in 0..cols {
            for r in (0..rows).step_by(4) {
                let r = r + rng.below(4);
                writeln!(f, "{} {} {}", r + 1, c + 1, (k % 1000) as f64 + 0.5).unwrap();
                k += 1;
                if k == n {
                    break 'outer;
                }
            }
        }
    }
    let size = std::fs::metadata(&p).unwrap().len();
    let entries_bytes = 1_500_000u64 * 24;
    assert!(entries_bytes >= 8 * limit, "{entries_bytes}");
    let zdir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(zdir.path()).unwrap());
    let opts = ImportOptions {
        max_memory: limit,
        temp_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let (a, peak) = ALLOC.peak_of(|| imp_mtx(&p, &store, &opts).unwrap());
    eprintln!("import of {size} bytes of text, {entries_bytes} bytes of entries: peak {peak}");
    assert!(
        peak < limit as usize,
        "import peak {peak} over the limit {limit} (file {size} bytes)"
    );
    let s = a.sparse().unwrap();
    assert_eq!(s.nnz().unwrap(), 1_500_000);
    // a spot check against the file's first column
    let col = s
        .read_csr::<f64>(&Region::new(vec![0, 0], vec![rows, 1]).unwrap())
        .unwrap();
    assert_eq!(col.nnz(), 500);
    let out = dir.path().join("out.mtx");
    let eopts = ExportOptions {
        max_memory: limit,
        temp_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let ((), peak) = ALLOC.peak_of(|| export_mtx(&a, &out, &eopts).unwrap());
    eprintln!("export to .mtx: peak {peak}");
    assert!(
        peak < limit as usize,
        "export peak {peak} over the limit {limit}"
    );
    let z = dir.path().join("out.npz");
    let ((), peak) = ALLOC.peak_of(|| export_npz(&a, &z, Layout::Csc, &eopts).unwrap());
    eprintln!("export to a CSC .npz: peak {peak}");
    assert!(
        peak < limit as usize,
        "csc export peak {peak} over the limit {limit}"
    );
    let store2: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let b = imp_npz(
        &z,
        &store2,
        &ImportOptions {
            max_memory: limit,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(b.sparse().unwrap().nnz().unwrap(), 1_500_000);
}

#[test]
fn groups_round_trip_as_anndata_and_binsparse() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(4);
    let e = random(&mut rng, 25, 19, 120);
    let want = dense_of(25, 19, &e);
    let p = dir.path().join("m.mtx");
    write_mtx(&p, 25, 19, &e);
    let a = imp_mtx(
        &p,
        &mem(),
        &ImportOptions {
            chunks: Some(vec![6, 5]),
            ..Default::default()
        },
    )
    .unwrap();
    let kinds = [
        GroupKind::Anndata {
            element: "X".into(),
        },
        GroupKind::Anndata {
            element: "layers/counts".into(),
        },
        GroupKind::Binsparse,
    ];
    for kind in &kinds {
        for layout in [Layout::Csr, Layout::Csc, Layout::Coo] {
            if layout == Layout::Coo && *kind != GroupKind::Binsparse {
                continue;
            }
            for format in [2u8, 3] {
                let store = mem();
                export_group(
                    &a,
                    store.clone(),
                    "g",
                    kind,
                    layout,
                    format,
                    &ExportOptions::default(),
                )
                .unwrap();
                let elem = match kind {
                    GroupKind::Anndata { element } => format!("g/{element}"),
                    GroupKind::Binsparse => "g".into(),
                };
                let s2 = store.clone();
                let b = import_group(
                    store.clone(),
                    &elem,
                    &elem,
                    &ImportOptions::default(),
                    &mut |p| Ok(p.builder().create(s2.clone(), "back")?),
                )
                .unwrap();
                assert_eq!(dense(&b), want, "{kind:?} {layout:?} v{format}");
            }
        }
    }
}

#[test]
fn bad_npz_and_group_input_is_refused_with_its_place() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.mtx");
    write_mtx(&p, 4, 5, &[(0, 1, 1.0), (2, 3, 2.0), (3, 0, 3.0)]);
    let a = imp_mtx(&p, &mem(), &ImportOptions::default()).unwrap();
    // a group whose indptr decreases, whose indices leave the matrix, whose lengths differ
    let cases: &[(&str, &str, Vec<i64>, &str)] = &[
        (
            "indptr",
            "<i8",
            vec![0, 1, 0, 2, 3],
            "g/X/indptr: pointer 2 is 0 after 1",
        ),
        (
            "indices",
            "<i8",
            vec![1, 3, 9],
            "g/X/indices element 2: entry (3, 9) lies outside the 4x5 matrix",
        ),
        (
            "indices",
            "<i8",
            vec![1, 3],
            "g/X/indices: 2 indices but 3 values",
        ),
        (
            "indptr",
            "<i8",
            vec![0, 1, 1, 2],
            "g/X/indptr: 4 pointers for 4 rows (want 5)",
        ),
        (
            "indices",
            "<i8",
            vec![1, -3, 0],
            "g/X/indices: element 1 is the negative index -3",
        ),
    ];
    for (name, _, values, msg) in cases {
        let store = mem();
        export_group(
            &a,
            store.clone(),
            "g",
            &GroupKind::Anndata {
                element: "X".into(),
            },
            Layout::Csr,
            3,
            &ExportOptions::default(),
        )
        .unwrap();
        let g = zarr_array::Group::open(store.clone(), "g/X").unwrap();
        g.delete_member(name).unwrap();
        let arr = g
            .create_array(
                name,
                &zarr_array::ArrayBuilder::new(
                    vec![values.len() as u64],
                    zarr_array::DataType::Int64,
                )
                .chunk_shape(vec![2]),
            )
            .unwrap();
        arr.write_region(
            &Region::whole(&[values.len() as u64]),
            zarr_array::ndarray::ArrayD::from_shape_vec(
                zarr_array::ndarray::IxDyn(&[values.len()]),
                values.clone(),
            )
            .unwrap()
            .view(),
        )
        .unwrap();
        let s2 = store.clone();
        let err = import_group(
            store.clone(),
            "g/X",
            "g/X",
            &ImportOptions::default(),
            &mut |p| Ok(p.builder().create(s2.clone(), "back")?),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(msg), "{msg}: {err}");
        assert!(store.list_prefix("back/").unwrap().is_empty());
    }
    // an unsupported binsparse format and version
    let store = mem();
    export_group(
        &a,
        store.clone(),
        "b",
        &GroupKind::Binsparse,
        Layout::Csr,
        3,
        &ExportOptions::default(),
    )
    .unwrap();
    let mut g = zarr_array::Group::open(store.clone(), "b").unwrap();
    let mut desc = g.attributes().clone();
    desc["binsparse"]["binsparse"]["format"] = serde_json::json!("custom");
    g.set_attributes(desc.clone()).unwrap();
    let s2 = store.clone();
    let err = import_group(
        store.clone(),
        "b",
        "b",
        &ImportOptions::default(),
        &mut |p| Ok(p.builder().create(s2.clone(), "back")?),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("b: the binsparse descriptor: the format \"custom\" is not supported"),
        "{err}"
    );
    desc["binsparse"]["binsparse"]["format"] = serde_json::json!("CSR");
    desc["binsparse"]["binsparse"]["number_of_stored_values"] = serde_json::json!(7);
    g.set_attributes(desc).unwrap();
    let err = import_group(
        store.clone(),
        "b",
        "b",
        &ImportOptions::default(),
        &mut |p| Ok(p.builder().create(s2.clone(), "back")?),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("b/values: shape [3] but number_of_stored_values is 7"),
        "{err}"
    );
    // npz: a data member whose header lies about its length, a missing member
    let z = dir.path().join("m.npz");
    export_npz(&a, &z, Layout::Csr, &ExportOptions::default()).unwrap();
    let bytes = std::fs::read(&z).unwrap();
    // data.npy is the first member, stored: its header's shape (3,) becomes (9,)
    let at = bytes.windows(5).position(|w| w == b"(3,),").unwrap();
    let mut lied = bytes.clone();
    lied[at + 1] = b'9';
    let zl = dir.path().join("lied.npz");
    std::fs::write(&zl, &lied).unwrap();
    let store = mem();
    let err = imp_npz(&zl, &store, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("lied.npz: data.npy") && err.contains("announces 9 elements"),
        "{err}"
    );
    assert!(store.list_prefix("").unwrap().is_empty());
    let cut = dir.path().join("cut.npz");
    std::fs::write(&cut, &bytes[..bytes.len() - 30]).unwrap();
    let err = imp_npz(&cut, &mem(), &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("cut.npz"), "{err}");
}

#[test]
fn conversions_never_touch_other_keys_of_their_destination() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.mtx");
    std::fs::write(
        &bad,
        "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1\n2 2 2\n",
    )
    .unwrap();
    // a store's root that holds another file: the array is refused before anything is
    // written, and the file stays
    let store = mem();
    store.set("notes.txt", b"mine").unwrap();
    let s = store.clone();
    let opts = ImportOptions {
        chunks: Some(vec![1, 4]),
        ..Default::default()
    };
    let err = import_mtx(&bad, &opts, &mut |p| {
        Ok(p.builder().create(s.clone(), "")?)
    })
    .unwrap_err();
    assert!(
        err.to_string().contains("holds keys but no node metadata"),
        "{err}"
    );
    assert_eq!(
        store.list_prefix("").unwrap(),
        vec!["notes.txt".to_string()]
    );
    // an import that fails after writing chunks (a duplicate met last, in the merge of
    // spilled runs, after the writer's flushes of 5461 entries) removes the array whole
    let dup = dir.path().join("dup.mtx");
    let mut text = String::from("%%MatrixMarket matrix coordinate real general\n301 100 30001\n");
    for r in 1..=300 {
        for c in 1..=100 {
            text.push_str(&format!("{r} {c} 1.5\n"));
        }
    }
    text.push_str("300 100 2.5\n");
    std::fs::write(&dup, text).unwrap();
    let store = mem();
    let s = store.clone();
    let small = ImportOptions {
        chunks: Some(vec![10, 100]),
        max_memory: MIN_MAX_MEMORY,
        ..Default::default()
    };
    let err = import_mtx(&dup, &small, &mut |p| {
        Ok(p.builder().create(s.clone(), "m")?)
    })
    .unwrap_err();
    assert!(
        err.to_string().contains("entry (299, 99) is given twice"),
        "{err}"
    );
    assert!(
        store.list_prefix("").unwrap().is_empty(),
        "{:?}",
        store.list_prefix("")
    );
    // a group export refused (a 1-d array) leaves the destination's keys as they were
    let a = zarr_array::ArrayBuilder::new(vec![4], zarr_array::DataType::Float64)
        .chunk_shape(vec![2])
        .sparse(zarr_array::zarr_layout_sparse::Format::Coo)
        .create(mem(), "v")
        .unwrap();
    let dest = mem();
    dest.set("keep/me", b"x").unwrap();
    let err = export_group(
        &a,
        dest.clone(),
        "",
        &GroupKind::Binsparse,
        Layout::Csr,
        3,
        &ExportOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("1-d"), "{err}");
    assert_eq!(dest.list_prefix("").unwrap(), vec!["keep/me".to_string()]);
}

#[test]
fn column_major_and_shuffled_files_import_through_the_band_sort() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(40);
    for case in 0..12u64 {
        let (rows, cols) = (100 + rng.below(300), 50 + rng.below(250));
        let n = 8000 + rng.below(20000) as usize;
        let mut e = random(&mut rng, rows, cols, n);
        let want = dense_of(rows, cols, &e);
        match case % 3 {
            // row-major, column-major (10x Genomics), shuffled
            0 => {}
            1 => e.sort_by_key(|x| (x.1, x.0)),
            _ => {
                for i in (1..e.len()).rev() {
                    e.swap(i, rng.below(i as u64 + 1) as usize);
                }
            }
        }
        let p = dir.path().join(format!("m{case}.mtx"));
        write_mtx(&p, rows, cols, &e);
        let p = if case % 2 == 1 {
            // through the gzip reader
            let gz = dir.path().join(format!("m{case}.mtx.gz"));
            let mut w = flate2::write::GzEncoder::new(
                std::fs::File::create(&gz).unwrap(),
                flate2::Compression::new(1),
            );
            std::io::Write::write_all(&mut w, &std::fs::read(&p).unwrap()).unwrap();
            w.finish().unwrap();
            gz
        } else {
            p
        };
        // the smallest limit: the sort spills its bands
        let opts = ImportOptions {
            max_memory: MIN_MAX_MEMORY,
            temp_dir: Some(dir.path().to_path_buf()),
            chunks: Some(vec![1 + rng.below(40), 1 + rng.below(80)]),
            ..Default::default()
        };
        let a = imp_mtx(&p, &mem(), &opts).unwrap();
        assert_eq!(dense(&a), want, "case {case}");
        // an entry given twice, anywhere in the file: refused, nothing left behind
        let k = rng.below(e.len() as u64) as usize;
        let mut twice = e.clone();
        twice.insert(rng.below(e.len() as u64) as usize, (e[k].0, e[k].1, 7.0));
        let p2 = dir.path().join(format!("d{case}.mtx"));
        write_mtx(&p2, rows, cols, &twice);
        let store = mem();
        let err = imp_mtx(&p2, &store, &opts).unwrap_err();
        assert!(
            matches!(err, SparseIoError::Duplicate { row, col, .. } if (row, col) == (e[k].0, e[k].1)),
            "case {case}: {err}"
        );
        assert!(store
            .list_prefix("")
            .unwrap()
            .iter()
            .all(|k| !k.contains("/c/")));
    }
}
