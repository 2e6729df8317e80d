//! Typed codec configurations as codec definitions.
//!
//! Every configuration type of this crate converts into the [`ExtensionDef`] that names its
//! codec (`From<ZstdConfig> for ExtensionDef`, ...), so that a caller building a chain or an
//! array states a codec with the type the codec itself parses, never as hand-written JSON.
//! The definition is what the built codec writes back (`Codec::to_def`), so a configuration
//! and the metadata it produces cannot drift apart. The crate README shows it.

use serde::Serialize;
use zarr_meta::ExtensionDef;

/// The definition of codec `name` with `config` as its configuration object.
///
/// Every configuration type of this crate is a struct (or an internally tagged enum) of plain
/// fields, which serializes to a JSON object; the bare name is the fallback the codecs'
/// `to_def` always had, never reached.
pub(crate) fn def<T: Serialize>(name: &str, config: &T) -> ExtensionDef {
    ExtensionDef::from_config(name, config).unwrap_or_else(|_| ExtensionDef::new(name))
}

/// `impl From<$config> for ExtensionDef`: the definition of codec `$name` (an expression of
/// type `&str`) with the serialized configuration.
macro_rules! codec_def {
    ($($config:ty => $name:expr),* $(,)?) => {$(
        impl From<$config> for zarr_meta::ExtensionDef {
            fn from(config: $config) -> Self {
                $crate::config::def($name, &config)
            }
        }
    )*};
}
pub(crate) use codec_def;

#[cfg(test)]
mod tests {
    use zarr_meta::{DataType, ExtensionDef, FillValue};

    use crate::bytes::{BytesConfig, Endian};
    use crate::registry::default_registry;
    use crate::repr::ChunkRepr;
    use crate::CodecChain;

    /// Builds `defs` for chunks of `shape` of `data_type` and checks the chain writes them back.
    fn round_trip(defs: Vec<ExtensionDef>, shape: Vec<u64>, data_type: DataType) {
        let repr = ChunkRepr::new(shape, data_type, FillValue::zero(data_type));
        let chain = CodecChain::from_defs(&defs, &repr, &default_registry())
            .unwrap_or_else(|e| panic!("{defs:?}: {e}"));
        assert_eq!(chain.to_defs(), defs);
    }

    fn little() -> ExtensionDef {
        BytesConfig {
            endian: Some(Endian::Little),
        }
        .into()
    }

    #[test]
    fn typed_configurations_are_the_definitions_their_codecs_write() {
        // one-byte data: `bytes` without a byte order has no configuration object
        let bare = ExtensionDef::from(BytesConfig::default());
        assert_eq!(bare, ExtensionDef::new("bytes"));
        round_trip(vec![bare], vec![4], DataType::UInt8);
        round_trip(vec![little()], vec![4], DataType::Int32);
        let transpose = crate::transpose::TransposeConfig {
            order: crate::transpose::TransposeOrder::Permutation(vec![1, 0]),
        };
        round_trip(
            vec![transpose.into(), little()],
            vec![2, 3],
            DataType::Int16,
        );

        #[allow(unused_mut)] // with no codec feature, nothing is pushed
        let mut bytes_to_bytes: Vec<ExtensionDef> = Vec::new();
        #[cfg(feature = "zstd")]
        bytes_to_bytes.push(
            crate::zstd::ZstdConfig {
                level: 5,
                checksum: true,
            }
            .into(),
        );
        #[cfg(feature = "gzip")]
        bytes_to_bytes.push(crate::gzip::GzipConfig { level: 1 }.into());
        #[cfg(feature = "crc32c")]
        {
            let crc = ExtensionDef::from(crate::crc32c::Crc32cConfig {});
            assert_eq!(crc, ExtensionDef::new("crc32c"));
            bytes_to_bytes.push(crc);
        }
        for def in bytes_to_bytes {
            round_trip(vec![little(), def], vec![8], DataType::Float32);
        }
        #[cfg(feature = "blosc")]
        round_trip(
            vec![
                little(),
                crate::blosc::BloscConfig {
                    typesize: Some(4),
                    cname: crate::blosc::BloscCname::Lz4,
                    clevel: 3,
                    shuffle: Some(crate::blosc::BloscShuffle::Shuffle),
                    blocksize: 0,
                }
                .into(),
            ],
            vec![8],
            DataType::Float32,
        );
    }

    #[cfg(all(feature = "sharding", feature = "sparse"))]
    #[test]
    fn sharding_and_sparse_layout_configurations_nest() {
        use crate::sharding::{IndexLocation, ShardingConfig};
        use crate::sparse_layout::SparseLayoutConfig;
        use zarr_layout_sparse::{Format, Layout};

        let layout = Layout::smallest(Format::Csr, &[4, 4]).unwrap();
        let inner = [ExtensionDef::from(SparseLayoutConfig::from_layout(&layout))];
        let shards = ShardingConfig::new(vec![4, 4], inner.clone());
        assert_eq!(shards.index_location, IndexLocation::End);
        round_trip(vec![shards.into()], vec![8, 8], DataType::Float64);
        let start = ShardingConfig::new(vec![4, 4], inner)
            .with_index_codecs([little()])
            .with_index_location(IndexLocation::Start);
        let def = ExtensionDef::from(start);
        assert_eq!(
            def.configuration.as_ref().unwrap()["index_location"],
            "start"
        );
        round_trip(vec![def], vec![8, 8], DataType::Float64);
    }
}
