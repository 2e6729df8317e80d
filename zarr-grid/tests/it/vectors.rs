//! Table-driven tests over the vector files in `tests/data/`.

use serde::Deserialize;
use serde_json::Value;
use zarr_grid::key_encoding::{build_key_encoding, default_key_encoding_registry};
use zarr_grid::{build_grid, default_registry};
use zarr_meta::ExtensionDef;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GridCase {
    why: String,
    shape: Vec<u64>,
    chunk_grid: Value,
    expect: String,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    domain: Option<Vec<(i64, i64)>>,
    #[serde(default)]
    keys: Option<Vec<String>>,
    #[serde(default)]
    first_offset: Option<Vec<u64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyCase {
    encoding: Value,
    rank: usize,
    key: String,
    #[serde(default)]
    chunk: Option<Vec<i64>>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct File<T> {
    #[allow(dead_code)] // documents the file
    note: String,
    cases: Vec<T>,
}

#[test]
fn grid_vectors() {
    let file: File<GridCase> =
        serde_json::from_str(include_str!("../data/grids.json")).expect("grids.json parses");
    let registry = default_registry();
    let keys = build_key_encoding(
        &default_key_encoding_registry(),
        &ExtensionDef::new("default"),
    )
    .expect("default encoding");
    for case in &file.cases {
        let def = ExtensionDef::from_value(&case.chunk_grid, "chunk_grid").expect(&case.why);
        let result = build_grid(&registry, &def, &case.shape);
        let compiled_out = (def.name == "regular_bounded" && !cfg!(feature = "regular-bounded"))
            || (def.name == "rectilinear" && !cfg!(feature = "rectilinear"));
        match (case.expect.as_str(), result) {
            (_, Err(err)) if compiled_out => {
                assert!(
                    zarr_testkit::report(&err).contains(&def.name),
                    "{}: {err}",
                    case.why
                );
            }
            (_, Ok(_)) if compiled_out => panic!("{}: accepted without the feature", case.why),
            ("accept", Ok(grid)) => {
                if let Some(domain) = &case.domain {
                    assert_eq!(&grid.domain(), domain, "{}", case.why);
                }
                if let Some(expected) = &case.keys {
                    let listed: Vec<String> =
                        grid.chunk_indices().map(|g| keys.encode(&g)).collect();
                    assert_eq!(&listed, expected, "{}", case.why);
                }
                if let Some(offset) = &case.first_offset {
                    let first: Vec<i64> = grid.grid_range().iter().map(|r| r.start).collect();
                    assert_eq!(&grid.buffer_offset(&first), offset, "{}", case.why);
                }
                // the definition written back builds the same grid
                let again = build_grid(&registry, &grid.to_def(), &case.shape).expect(&case.why);
                assert_eq!(again.grid_range(), grid.grid_range(), "{}", case.why);
            }
            ("accept", Err(err)) => panic!("{}: refused: {err}", case.why),
            ("reject", Ok(grid)) => panic!("{}: accepted: {grid:?}", case.why),
            ("reject", Err(err)) => {
                let reason = case.reason.as_deref().expect("a reject names its reason");
                assert!(
                    zarr_testkit::report(&err).contains(reason),
                    "{}: {err}",
                    case.why
                );
            }
            (other, _) => panic!("{}: unknown expectation {other:?}", case.why),
        }
    }
}

#[test]
fn key_vectors() {
    let file: File<KeyCase> =
        serde_json::from_str(include_str!("../data/keys.json")).expect("keys.json parses");
    let registry = default_key_encoding_registry();
    for case in &file.cases {
        let def = ExtensionDef::from_value(&case.encoding, "chunk_key_encoding").expect(&case.key);
        let outcome = build_key_encoding(&registry, &def).and_then(|enc| {
            let chunk = enc.decode(&case.key, case.rank)?;
            assert_eq!(enc.encode(&chunk), case.key, "decoding is canonical");
            Ok(chunk)
        });
        match (&case.chunk, &case.error, outcome) {
            (Some(expected), None, Ok(chunk)) => assert_eq!(&chunk, expected, "{:?}", case.key),
            (None, Some(reason), Err(err)) => {
                assert!(
                    zarr_testkit::report(&err).contains(reason.as_str()),
                    "{:?}: {err}",
                    case.key
                )
            }
            (_, _, outcome) => panic!("{:?}: unexpected {outcome:?}", case.key),
        }
    }
}
