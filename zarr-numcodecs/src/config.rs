//! Typed configurations as codec definitions, as in zarr-codecs: every configuration type
//! of this crate converts into the [`ExtensionDef`] that names its codec, the one the built
//! codec writes back (`Codec::to_def`).

use serde::Serialize;
use zarr_meta::ExtensionDef;

/// The definition of codec `name` with `config` as its configuration object (every
/// configuration type of this crate serializes to a JSON object; the bare name is the fallback
/// never reached).
#[allow(dead_code)] // a build without any codec feature uses neither this nor the macro
pub(crate) fn def<T: Serialize>(name: &str, config: &T) -> ExtensionDef {
    ExtensionDef::from_config(name, config).unwrap_or_else(|_| ExtensionDef::new(name))
}

/// `impl From<$config> for ExtensionDef`: the definition of codec `$name` (an expression of
/// type `&str`) with the serialized configuration.
// a build without any codec feature uses neither the macro nor `def`
#[allow(unused_macros)]
macro_rules! codec_def {
    ($($config:ty => $name:expr),* $(,)?) => {$(
        impl From<$config> for zarr_meta::ExtensionDef {
            fn from(config: $config) -> Self {
                $crate::config::def($name, &config)
            }
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use codec_def;

#[cfg(test)]
mod tests {
    use zarr_codecs::bytes::{BytesConfig, Endian};
    use zarr_codecs::{ChunkRepr, CodecChain};
    use zarr_meta::{DataType, ExtensionDef, FillValue};

    use crate::default_registry;

    /// Builds `defs` for chunks of `shape` of `data_type` and checks the chain writes them back.
    #[allow(dead_code)]
    fn round_trip(defs: Vec<ExtensionDef>, shape: Vec<u64>, data_type: DataType) {
        let repr = ChunkRepr::new(shape, data_type, FillValue::zero(data_type));
        let chain = CodecChain::from_defs(&defs, &repr, &default_registry())
            .unwrap_or_else(|e| panic!("{defs:?}: {e}"));
        assert_eq!(chain.to_defs(), defs);
    }

    #[allow(dead_code)]
    fn little() -> ExtensionDef {
        BytesConfig {
            endian: Some(Endian::Little),
        }
        .into()
    }

    #[test]
    #[allow(clippy::vec_init_then_push)] // each push has its own cfg
    fn typed_configurations_are_the_definitions_their_codecs_write() {
        #[allow(unused_mut)] // with no codec feature, nothing is pushed
        let mut bytes_to_bytes: Vec<ExtensionDef> = Vec::new();
        #[cfg(feature = "zlib")]
        bytes_to_bytes.push(crate::zlib::ZlibConfig { level: Some(3) }.into());
        #[cfg(feature = "bz2")]
        bytes_to_bytes.push(crate::bz2::Bz2Config::default().into());
        #[cfg(feature = "lz4")]
        bytes_to_bytes.push(crate::lz4::Lz4Config::default().into());
        #[cfg(feature = "lzma")]
        bytes_to_bytes.push(crate::lzma::LzmaConfig::default().into());
        #[cfg(feature = "fletcher32")]
        bytes_to_bytes.push(crate::fletcher32::Fletcher32Config {}.into());
        #[cfg(feature = "jenkins_lookup3")]
        bytes_to_bytes.push(
            crate::jenkins_lookup3::JenkinsLookup3Config {
                initval: Some(5),
                prefix: None,
            }
            .into(),
        );
        #[cfg(feature = "crc32")]
        bytes_to_bytes.push(
            crate::checksum32::Crc32Config {
                location: Some(crate::checksum32::Location::End),
            }
            .into(),
        );
        #[cfg(feature = "adler32")]
        bytes_to_bytes.push(crate::checksum32::Adler32Config::default().into());
        for def in bytes_to_bytes {
            round_trip(vec![little(), def], vec![8], DataType::Float32);
        }
        // the fields zarr-python fills in from the data type are written back filled in
        #[cfg(feature = "shuffle")]
        round_trip(
            vec![
                little(),
                crate::shuffle::ShuffleConfig {
                    elementsize: Some(4),
                }
                .into(),
            ],
            vec![8],
            DataType::Float32,
        );
        #[cfg(feature = "delta")]
        round_trip(
            vec![
                crate::delta::DeltaConfig {
                    dtype: "<i4".into(),
                    astype: None,
                }
                .into(),
                little(),
            ],
            vec![8],
            DataType::Int32,
        );
        #[cfg(feature = "pcodec")]
        {
            let def = ExtensionDef::from(crate::pcodec::PcodecConfig::default());
            assert_eq!(def.name, "numcodecs.pcodec");
            round_trip(vec![def], vec![8], DataType::Float32);
        }
        #[cfg(feature = "zfp")]
        {
            let def = ExtensionDef::from(crate::zfp::ZfpConfig::Reversible {});
            assert_eq!(def.name, "zfp");
            round_trip(vec![def], vec![8], DataType::Float32);
        }
    }
}
