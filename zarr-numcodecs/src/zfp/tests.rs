use super::*;
use crate::default_registry;
use proptest::prelude::*;
use zarr_meta::FillValue;

fn repr(t: DataType, shape: Vec<u64>) -> ChunkRepr {
    ChunkRepr::new(shape, t, FillValue::zero(t))
}

fn codec(json: &str, r: &ChunkRepr) -> Result<Codec> {
    let def: ExtensionDef = serde_json::from_str(json).unwrap();
    let registry = default_registry();
    registry.get(&def.name).unwrap().build(&def, r, &registry)
}

fn a2b(json: &str, r: &ChunkRepr) -> Box<dyn ArrayToBytesCodec> {
    match codec(json, r).unwrap() {
        Codec::ArrayToBytes(c) => c,
        _ => panic!("array -> bytes"),
    }
}

fn bytes_of<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

#[test]
fn configs_round_trip_and_bad_ones_are_refused() {
    let r = repr(DataType::Float32, vec![4, 4]);
    for json in [
        r#"{"name":"numcodecs.zfpy","configuration":{"mode":4,"tolerance":0.01}}"#,
        r#"{"name":"numcodecs.zfpy","configuration":{"mode":2,"rate":16}}"#,
        r#"{"name":"numcodecs.zfpy","configuration":{"mode":3,"tolerance":-1,"rate":-1,"precision":12}}"#,
        r#"{"name":"numcodecs.zfpy","configuration":{}}"#,
        r#"{"name":"zfpy","configuration":{"mode":4,"tolerance":0.5}}"#,
        r#"{"name":"zfp","configuration":{"mode":"fixed_accuracy","tolerance":0.05}}"#,
        r#"{"name":"zfp","configuration":{"mode":"fixed_rate","rate":10.5}}"#,
        r#"{"name":"zfp","configuration":{"mode":"fixed_precision","precision":19}}"#,
        r#"{"name":"zfp","configuration":{"mode":"reversible"}}"#,
        r#"{"name":"zfp","configuration":{"mode":"expert","minbits":1,"maxbits":16658,"maxprec":64,"minexp":-1074}}"#,
    ] {
        let back = serde_json::to_string(&codec(json, &r).unwrap().to_def()).unwrap();
        assert_eq!(back, json);
    }
    for bad in [
        r#"{"name":"numcodecs.zfpy","configuration":{"mode":5}}"#,
        r#"{"name":"numcodecs.zfpy","configuration":{"mode":4,"accuracy":1}}"#,
        r#"{"name":"zfp","configuration":{"mode":"fixed_rate"}}"#,
        r#"{"name":"zfp","configuration":{"mode":"fast"}}"#,
        r#"{"name":"zfp","configuration":{"mode":"reversible","rate":1}}"#,
        r#"{"name":"zfp","configuration":{"mode":"expert","minbits":10,"maxbits":5,"maxprec":64,"minexp":0}}"#,
        r#"{"name":"zfp","configuration":{"tolerance":1}}"#,
    ] {
        let err = zarr_testkit::report(&codec(bad, &r).unwrap_err());
        assert!(
            err.starts_with("invalid configuration for codec"),
            "{bad}: {err}"
        );
    }
    for (t, shape) in [
        (DataType::Float16, vec![4]),
        (DataType::UInt32, vec![4]),
        (DataType::Float32, vec![1, 1, 1, 1, 2]),
    ] {
        assert!(codec(
            r#"{"name":"zfp","configuration":{"mode":"reversible"}}"#,
            &repr(t, shape)
        )
        .is_err());
    }
    // zfpy cannot write a 0-d chunk; zfp takes it as one value
    let scalar = repr(DataType::Float64, vec![]);
    assert!(codec(r#"{"name":"numcodecs.zfpy","configuration":{}}"#, &scalar).is_err());
    let c = a2b(
        r#"{"name":"zfp","configuration":{"mode":"reversible"}}"#,
        &scalar,
    );
    let enc = c.encode(&2.5f64.to_ne_bytes()).unwrap();
    let mut out = [0u8; 8];
    c.decode_into(&enc, &mut out).unwrap();
    assert_eq!(f64::from_ne_bytes(out), 2.5);
}

#[test]
fn modes_are_coded_as_zfp_codes_them() {
    for p in [
        rate_params(16.0, None, 2),
        precision_params(20),
        accuracy_params(0.01),
        reversible_params(),
        Params {
            minbits: 3,
            maxbits: 9000,
            maxprec: 30,
            minexp: -40,
        },
    ] {
        let (m, size) = mode_word(&p);
        assert!(size == 12 || size == 64);
        assert_eq!(params_of_mode(m), Some(p));
    }
    assert_eq!(
        mode_word(&accuracy_params(0.01)).0,
        (-7i32 - MIN_EXP) as u64 + 2177
    );
    assert_eq!(frexp_exponent(0.01), -6);
    assert_eq!(frexp_exponent(1.0), 1);
    assert_eq!(frexp_exponent(f64::from_bits(1)), -1073);
}

/// Reversible mode gives back every bit, for every type and rank, partial blocks included.
#[test]
fn reversible_is_lossless() {
    for shape in [vec![7], vec![5, 6], vec![3, 5, 2], vec![2, 3, 5, 4]] {
        let n: u64 = shape.iter().product();
        let floats: Vec<f64> = (0..n)
            .map(|i| match i % 7 {
                0 => f64::NAN,
                1 => -0.0,
                2 => f64::from_bits(1),
                3 => 1e300,
                _ => (i as f64 * 0.37).sin() * 1e3,
            })
            .collect();
        for (t, chunk) in [
            (DataType::Float64, bytes_of(&floats)),
            (
                DataType::Float32,
                bytes_of(&floats.iter().map(|&v| v as f32).collect::<Vec<_>>()),
            ),
            (
                DataType::Int32,
                bytes_of(
                    &(0..n)
                        .map(|i| (i as i32).wrapping_mul(-1_234_567))
                        .collect::<Vec<_>>(),
                ),
            ),
            (
                DataType::Int64,
                bytes_of(
                    &(0..n)
                        .map(|i| (i as i64).wrapping_mul(-98_765_432_123))
                        .collect::<Vec<_>>(),
                ),
            ),
        ] {
            for json in [
                r#"{"name":"zfp","configuration":{"mode":"reversible"}}"#,
                r#"{"name":"numcodecs.zfpy","configuration":{"mode":4}}"#,
            ] {
                let r = repr(t, shape.clone());
                let c = a2b(json, &r);
                let enc = c.encode(&chunk).unwrap();
                assert!(enc.len() as u64 <= c.encoded_size_bound(), "{t} {shape:?}");
                assert_eq!(enc.len() % 8, 0);
                let mut out = vec![0u8; chunk.len()];
                c.decode_into(&enc, &mut out).unwrap();
                assert_eq!(out, chunk, "{t} {shape:?} {json}");
            }
        }
    }
}

#[test]
fn corrupt_and_truncated_streams_are_errors() {
    let r = repr(DataType::Float64, vec![6, 7]);
    let c = a2b(
        r#"{"name":"numcodecs.zfpy","configuration":{"mode":4,"tolerance":0.001}}"#,
        &r,
    );
    let values: Vec<f64> = (0..42).map(|i| f64::from(i).cos()).collect();
    let enc = c.encode(&bytes_of(&values)).unwrap();
    let mut out = vec![0u8; 42 * 8];
    for cut in [0, 4, 8, 16, enc.len() / 2, enc.len() - 8] {
        assert!(c.decode_into(&enc[..cut], &mut out).is_err(), "{cut}");
    }
    let mut bad = enc.clone();
    bad[0] = b'x';
    assert!(c.decode_into(&bad, &mut out).is_err());
    // a header for another shape or type
    let other = a2b(
        r#"{"name":"numcodecs.zfpy","configuration":{"mode":4,"tolerance":0.001}}"#,
        &repr(DataType::Float64, vec![7, 6]),
    );
    assert!(other.decode_into(&enc, &mut out).is_err());
    let f32s = a2b(
        r#"{"name":"numcodecs.zfpy","configuration":{"mode":4,"tolerance":0.001}}"#,
        &repr(DataType::Float32, vec![6, 7]),
    );
    assert!(f32s.decode_into(&enc, &mut out[..42 * 4]).is_err());
    // garbage never panics and never reads past the chunk
    for seed in 0..50u64 {
        let mut garbage = enc[..16].to_vec();
        garbage.extend(zarr_testkit::Rng::new(seed).bytes(200));
        let _ = c.decode_into(&garbage, &mut out);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn fixed_accuracy_is_within_tolerance(values in prop::collection::vec(-1000.0f64..1000.0, 1..120),
                                          tolerance in prop::sample::select(vec![1e-6, 1e-3, 0.5, 10.0]),
                                          cols in 1u64..9) {
        let rows = (values.len() as u64).div_ceil(cols);
        let mut values = values;
        values.resize((rows * cols) as usize, 0.5);
        let r = repr(DataType::Float64, vec![rows, cols]);
        let c = ZfpCodec::zfp(ZfpConfig::FixedAccuracy { tolerance }, &r).unwrap();
        let enc = c.encode(&bytes_of(&values)).unwrap();
        prop_assert!(enc.len() as u64 <= c.encoded_size_bound());
        let mut out = vec![0u8; values.len() * 8];
        c.decode_into(&enc, &mut out).unwrap();
        let back: Vec<f64> = bytemuck::pod_collect_to_vec(&out);
        for (a, b) in values.iter().zip(&back) {
            prop_assert!((a - b).abs() <= tolerance, "{a} -> {b}");
        }
    }

    #[test]
    fn fixed_rate_streams_have_their_size(values in prop::collection::vec(any::<f32>(), 16..64), rate in 1u32..40) {
        let n = values.len() as u64;
        let r = repr(DataType::Float32, vec![n]);
        let c = ZfpCodec::zfp(ZfpConfig::FixedRate { rate: f64::from(rate) }, &r).unwrap();
        let enc = c.encode(&bytes_of(&values)).unwrap();
        let bits_per_block = u64::from((4 * rate).max(9));
        prop_assert_eq!(enc.len() as u64, (n.div_ceil(4) * bits_per_block).div_ceil(64) * 8);
        let mut out = vec![0u8; values.len() * 4];
        c.decode_into(&enc, &mut out).unwrap();
    }
}

/// The `compression_kwargs` numcodecs 0.16 writes in the configuration (and zarr-python in
/// its v3 `numcodecs.zfpy`) are accepted and left out of what the codec writes back; one that
/// contradicts the configuration is refused.
#[test]
fn numcodecs_compression_kwargs_are_accepted() {
    let r = repr(DataType::Float64, vec![4, 4]);
    for (name, json, back) in [
        (
            "numcodecs.zfpy",
            r#"{"mode":2,"rate":16,"compression_kwargs":{"rate":16}}"#,
            r#"{"mode":2,"rate":16}"#,
        ),
        (
            "numcodecs.zfpy",
            r#"{"mode":4,"tolerance":0.001,"rate":-1,"precision":-1,"compression_kwargs":{"tolerance":0.001}}"#,
            r#"{"mode":4,"tolerance":0.001,"rate":-1,"precision":-1}"#,
        ),
        (
            "zfpy",
            r#"{"mode":3,"precision":12,"compression_kwargs":{"precision":12}}"#,
            r#"{"mode":3,"precision":12}"#,
        ),
    ] {
        let json = format!(r#"{{"name":"{name}","configuration":{json}}}"#);
        let got = serde_json::to_string(&codec(&json, &r).unwrap().to_def()).unwrap();
        assert_eq!(
            got,
            format!(r#"{{"name":"{name}","configuration":{back}}}"#)
        );
    }
    for bad in [
        r#"{"mode":2,"rate":16,"compression_kwargs":{"rate":8}}"#,
        r#"{"mode":2,"rate":16,"compression_kwargs":[16]}"#,
    ] {
        let json = format!(r#"{{"name":"numcodecs.zfpy","configuration":{bad}}}"#);
        let err = zarr_testkit::report(&codec(&json, &r).unwrap_err());
        assert!(
            err.starts_with("invalid configuration for codec \"numcodecs.zfpy\"")
                && err.contains("compression_kwargs"),
            "{bad}: {err}"
        );
    }
}
