//! The command line: every subcommand and option (clap derive).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use zarr_array::zarr_store::RemoteOptions;
use zarr_array::DataType;

use crate::layout::{
    parse_codec, parse_data_type, parse_size, parse_u64_list, ArrayOpts, CodecSpec, Shape,
    SparseFormat,
};

/// Create, fill, grow, inspect, validate and convert Zarr v3 arrays.
///
/// PATH is a directory holding a Zarr node (its zarr.json) at its root, or a url: file:///dir,
/// s3://bucket/prefix, gs://bucket/prefix, az://container/prefix, http(s)://host/path
/// (read-only). Remote stores are configured from the environment (AWS_ENDPOINT_URL,
/// AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ALLOW_HTTP, GOOGLE_*, AZURE_*).
/// A failed request to a remote store (a 5xx answer, SlowDown, a dropped connection, a
/// timeout, a body cut short) is sent again after a growing wait (100 ms doubling up to 15 s)
/// until --retries retries were made or --retry-timeout has passed; then the command fails
/// with the store's message.
#[derive(Debug, Parser)]
#[command(name = "zarr", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    /// Open arrays with a registry lacking this extension, as an older reader would
    /// (repeatable; e.g. regular_bounded, sparse_layout, zstd)
    #[arg(long, global = true, value_name = "NAME")]
    pub without: Vec<String>,
    /// The longest one request to a remote store may take, its answer included (500ms, 30s, 2m)
    #[arg(long, global = true, value_name = "DURATION", env = "ZARR_REQUEST_TIMEOUT",
          default_value = "30s", value_parser = parse_duration, help_heading = "Remote stores")]
    pub request_timeout: Duration,
    /// The longest connecting to a remote store may take
    #[arg(long, global = true, value_name = "DURATION", env = "ZARR_CONNECT_TIMEOUT",
          default_value = "5s", value_parser = parse_duration, help_heading = "Remote stores")]
    pub connect_timeout: Duration,
    /// How many times a failed request is sent again (0: never)
    #[arg(
        long,
        global = true,
        value_name = "N",
        env = "ZARR_RETRIES",
        default_value = "10",
        help_heading = "Remote stores"
    )]
    pub retries: usize,
    /// No retry of a request starts later than this after its first attempt
    #[arg(long, global = true, value_name = "DURATION", env = "ZARR_RETRY_TIMEOUT",
          default_value = "60s", value_parser = parse_duration, help_heading = "Remote stores")]
    pub retry_timeout: Duration,
    /// The most requests a read of a remote store keeps in flight at once (1 up)
    #[arg(long, global = true, value_name = "N", env = "ZARR_CONCURRENCY",
          default_value_t = zarr_array::zarr_store::DEFAULT_REMOTE_CONCURRENCY,
          value_parser = parse_concurrency, help_heading = "Remote stores")]
    pub concurrency: usize,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The timeouts and retries of remote stores the options give.
    #[must_use]
    pub fn remote_options(&self) -> RemoteOptions {
        RemoteOptions::default()
            .with_request_timeout(self.request_timeout)
            .with_connect_timeout(self.connect_timeout)
            .with_max_retries(self.retries)
            .with_retry_timeout(self.retry_timeout)
            .with_concurrency(self.concurrency)
    }
}

/// A concurrency (`--concurrency`, `ZARR_CONCURRENCY`): a whole number from 1 up.
///
/// # Errors
/// Anything else.
pub fn parse_concurrency(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{text:?} is not a whole number from 1 up")),
    }
}

/// A duration: seconds (`30`, `1.5`), or a number with `ms`, `s` or `m` (`500ms`, `2m`); more
/// than zero.
///
/// # Errors
/// Anything else, or a duration of zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} (use ms, s or m, like 500ms, 30s, 2m)"
            ))
        }
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (like 500ms, 30s, 2m)"))?;
    let seconds = value * scale;
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(format!("{text:?}: a duration must be more than zero"));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("{text:?}: too long a duration"))
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create an empty array (every position reads as the fill value)
    Create(CreateArgs),
    /// Create an array from a .npy file
    Import(ImportArgs),
    /// Write the array, or a region of it, to a .npy file
    Export(ExportArgs),
    /// Write a block from a .npy file at a position
    Write(WriteArgs),
    /// Grow the array at the end of an axis with a .npy block
    Append(GrowArgs),
    /// Grow the array in front of position 0 of an axis (it becomes regular_bounded;
    /// existing chunks keep their keys)
    Prepend(GrowArgs),
    /// Change the shape (the upper end of every axis)
    Resize(ResizeArgs),
    /// Show metadata, shape, domain, chunks and storage
    Info(InfoArgs),
    /// List the groups and arrays below PATH
    Tree(PathArgs),
    /// Decode every stored chunk and check metadata, keys and checksums (and that a
    /// group's consolidated metadata agrees with its members' own)
    Validate(PathArgs),
    /// Write the consolidated metadata of the hierarchy below the group at PATH into its
    /// zarr.json, or a v2 group's .zmetadata (as zarr-python's consolidate_metadata does)
    Consolidate(PathArgs),
    /// Copy an array into a new one with another layout
    Convert(ConvertArgs),
    /// Write a small demo (a dense array, a prepend, a sparse array) and show how to look at it
    Quickstart(QuickstartArgs),
    /// Write a conformance corpus, or run another implementation's reader on one
    #[command(subcommand)]
    Conformance(ConformanceCommand),
}

/// `zarr create`
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The directory (or url) to create the array in
    pub path: String,
    /// The shape, like 6,4
    #[arg(long, value_name = "SHAPE", value_parser = parse_u64_list)]
    pub shape: Shape,
    /// The chunk shape (with --shards, the inner chunk shape), like 4,4
    #[arg(long, value_name = "SHAPE", value_parser = parse_u64_list)]
    pub chunks: Shape,
    /// The data type: bool, int8..int64, uint8..uint64, float16/32/64, complex64/128, r<bits>,
    /// datetime64[UNIT] or timedelta64[UNIT] (also M8[10ms], m8[s])
    #[arg(long, value_name = "TYPE", value_parser = parse_data_type)]
    pub dtype: DataType,
    /// Layout options.
    #[command(flatten)]
    pub opts: ArrayOpts,
}

/// `zarr import`
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The input: a .npy file (its shape and data type become the array's), or a sparse
    /// matrix (a sparse_layout array, CSR chunks of whole rows unless --sparse and --chunks
    /// say otherwise): Matrix Market .mtx / .mtx.gz, SciPy .npz, or the directory (or url)
    /// of an anndata element (X, layers/NAME: a csr_matrix / csc_matrix group) or a
    /// binsparse group
    pub npy: PathBuf,
    /// The directory (or url) to create the array in
    pub path: String,
    /// The chunk shape (with --shards, the inner chunk shape) [default: about 1 MiB chunks]
    #[arg(long, value_name = "SHAPE", value_parser = parse_u64_list)]
    pub chunks: Option<Shape>,
    /// The most memory the data may take at a time (bytes, or with K, M, G, T: 512M, 4G);
    /// larger arrays are moved piece by piece [default: 1G]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_memory: Option<u64>,
    /// Keep NumPy's fixed-width strings (<U<n>, |S<n>) fixed-width: a fixed_length_utf32 or
    /// null_terminated_bytes array, as zarr-python stores such a NumPy array [default: a
    /// string or variable_length_bytes array]
    #[arg(long)]
    pub fixed_width: bool,
    /// The input's format [default: from its name: .npy, .mtx, .mtx.gz, .npz; a directory
    /// or url is an anndata or binsparse group]
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<FileFormat>,
    /// The data type of a Matrix Market import [default: float64 for real and pattern,
    /// int64 for integer files]; other formats keep their values' type
    #[arg(long, value_name = "TYPE", value_parser = parse_data_type)]
    pub dtype: Option<DataType>,
    /// Where a sparse import or export spills its sort when its entries exceed half of
    /// --max-memory [default: the system's temporary directory]
    #[arg(long, value_name = "DIR")]
    pub temp_dir: Option<PathBuf>,
    /// Layout options.
    #[command(flatten)]
    pub opts: ArrayOpts,
}

/// The file formats of `zarr import` and `zarr export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FileFormat {
    /// A NumPy .npy file (dense).
    Npy,
    /// A Matrix Market coordinate file (.mtx, or gzip-compressed .mtx.gz).
    Mtx,
    /// A SciPy sparse .npz (scipy.sparse.save_npz / load_npz).
    Npz,
    /// An anndata store's sparse element (csr_matrix / csc_matrix group).
    Anndata,
    /// A binsparse Zarr group.
    Binsparse,
}

/// The layout of a sparse export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SparseLayout {
    /// Compressed sparse rows.
    Csr,
    /// Compressed sparse columns.
    Csc,
    /// Coordinates (.npz and binsparse only).
    Coo,
}

/// `zarr export`
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The array
    pub path: String,
    /// The file to write: a .npy file (little-endian, C order), or for a 2-d sparse array a
    /// Matrix Market .mtx / .mtx.gz or SciPy .npz file, or with --format anndata / binsparse
    /// the directory (or url) of the group to write
    pub npy: String,
    /// Zero-based positions per axis: START:STOP, START:, :STOP, : or one INDEX (drops the
    /// axis); missing trailing axes are whole, like 0:3,1:4
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// The most memory the data may take at a time (bytes, or with K, M, G, T: 512M, 4G);
    /// larger arrays are moved piece by piece [default: 1G]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_memory: Option<u64>,
    /// The output's format [default: from its name: .npy, .mtx, .mtx.gz, .npz]
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<FileFormat>,
    /// The sparse layout of a .npz, anndata or binsparse export [default: csr]
    #[arg(long, value_name = "LAYOUT")]
    pub layout: Option<SparseLayout>,
    /// The anndata element to write (X, layers/NAME, obsm/NAME): a new AnnData store is
    /// created with it, or it is added to the one there [default: X]
    #[arg(long, value_name = "PATH")]
    pub element: Option<String>,
    /// The Zarr format of an anndata or binsparse export [default: 3]
    #[arg(long, value_name = "2|3", value_parser = clap::value_parser!(u8).range(2..=3))]
    pub zarr_format: Option<u8>,
    /// Where a column-major export (csc, a .mtx of a CSC array) spills sorted runs
    /// [default: the system's temporary directory]
    #[arg(long, value_name = "DIR")]
    pub temp_dir: Option<PathBuf>,
}

/// `zarr write`
#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The array
    pub path: String,
    /// The block to write (same data type, same number of dimensions)
    pub npy: PathBuf,
    /// The zero-based position of the block's first element [default: 0 on every axis]
    #[arg(long, value_name = "POSITION", value_parser = parse_u64_list)]
    pub at: Option<Shape>,
}

/// `zarr append` / `zarr prepend`
#[derive(Debug, Args)]
pub struct GrowArgs {
    /// The array
    pub path: String,
    /// The block to add (the array's shape on every other axis)
    pub npy: PathBuf,
    /// The axis to grow
    #[arg(long, value_name = "A")]
    pub axis: usize,
}

/// `zarr resize`
#[derive(Debug, Args)]
pub struct ResizeArgs {
    /// The array
    pub path: String,
    /// The new shape
    #[arg(long, value_name = "SHAPE", value_parser = parse_u64_list)]
    pub shape: Shape,
}

/// `zarr info`
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The array or group
    pub path: String,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// Count the stored chunks and their bytes by listing the store (the default for a
    /// directory; on a remote store it costs a LIST request per 1000 keys)
    #[arg(long, conflicts_with = "no_list")]
    pub list: bool,
    /// Do not list the store: chunks and bytes stored are not shown (null in --json); the
    /// default for a remote url, where `info` then costs one GET
    #[arg(long)]
    pub no_list: bool,
}

impl InfoArgs {
    /// Whether `info` lists the store: `--list`, `--no-list`, or by default for local
    /// stores only.
    pub fn lists(&self) -> bool {
        if self.list || self.no_list {
            return self.list;
        }
        !crate::store::is_remote(&self.path)
    }
}

/// A subcommand that takes one PATH.
#[derive(Debug, Args)]
pub struct PathArgs {
    /// The array or group
    pub path: String,
}

/// `zarr convert`
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The array to copy (with --to-v3 / --to-v2: the array to convert where it is)
    pub src: String,
    /// The directory (or url) of the new array (not with --to-v3 / --to-v2)
    #[arg(required_unless_present_any = ["to_v3", "to_v2"])]
    pub dst: Option<String>,
    /// Convert the Zarr v2 array SRC to Zarr v3 where it is: writes zarr.json beside its
    /// .zarray (no chunk is rewritten; order F becomes a transpose, its keys the v2 key
    /// encoding), then deletes .zarray and .zattrs unless --keep
    #[arg(long, conflicts_with_all = ["dst", "to_v2", "chunks", "codecs", "shards", "no_shards", "sparse", "dense", "to_regular"])]
    pub to_v3: bool,
    /// Convert the Zarr v3 array SRC to Zarr v2 where it is (.zarray + .zattrs; chunks with
    /// default keys move to their v2 keys, bytes unchanged), then deletes zarr.json unless
    /// --keep; refused, naming the feature, for what v2 cannot hold (shards, regular_bounded,
    /// dimension names, crc32c, sparse_layout)
    #[arg(long, conflicts_with_all = ["dst", "chunks", "codecs", "shards", "no_shards", "sparse", "dense", "to_regular"])]
    pub to_v2: bool,
    /// With --to-v3 / --to-v2: keep the old format's metadata beside the new one
    #[arg(long)]
    pub keep: bool,
    /// A new chunk shape (with shards, the inner chunk shape)
    #[arg(long, value_name = "SHAPE", value_parser = parse_u64_list)]
    pub chunks: Option<Shape>,
    /// New compressors, replacing the source's (repeatable; as for create)
    #[arg(long = "codec", value_name = "CODEC", value_parser = parse_codec)]
    pub codecs: Vec<CodecSpec>,
    /// Store chunks in shards of this shape
    #[arg(long, value_name = "SHAPE", value_parser = parse_u64_list, conflicts_with = "no_shards")]
    pub shards: Option<Shape>,
    /// Store the (inner) chunks without shards
    #[arg(long)]
    pub no_shards: bool,
    /// Store each chunk in a sparse layout
    #[arg(long, value_name = "FORMAT", conflicts_with = "dense")]
    pub sparse: Option<SparseFormat>,
    /// Store each chunk densely (the bytes codec)
    #[arg(long)]
    pub dense: bool,
    /// Make a plain regular grid (same positions and data; the domain is kept in the
    /// attributes), readable by readers without regular_bounded
    #[arg(long)]
    pub to_regular: bool,
}

/// `zarr quickstart`
#[derive(Debug, Args)]
pub struct QuickstartArgs {
    /// A new (or empty) directory, or url
    pub dir: String,
}

/// `zarr conformance ...`
#[derive(Debug, Subcommand)]
pub enum ConformanceCommand {
    /// Write a corpus of fixtures (each array with its expected .npy) and a manifest.json
    Write(ConformanceWriteArgs),
    /// Run a reader (READER... ARRAY_PATH OUT.npy; non-zero exit = refused) on every array
    /// fixture of a corpus and print a table
    Run(ConformanceRunArgs),
}

/// `zarr conformance write`
#[derive(Debug, Args)]
pub struct ConformanceWriteArgs {
    /// A new (or empty) directory, or url
    pub dir: String,
}

/// `zarr conformance run`
#[derive(Debug, Args)]
pub struct ConformanceRunArgs {
    /// The corpus (a directory or url with manifest.json; readers get ARRAY_PATH below it)
    pub dir: String,
    /// Print one JSON object instead of the table
    #[arg(long)]
    pub json: bool,
    /// Readers run at the same time [default: the number of cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Seconds before a reader is stopped and counted as refused
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub timeout: u64,
    /// The reader command, after `--`
    #[arg(last = true, required = true, value_name = "READER")]
    pub reader: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn remote_options_default_to_the_library_s() {
        let cli = Cli::try_parse_from(["zarr", "info", "x"]).unwrap();
        assert_eq!(cli.remote_options(), RemoteOptions::default());
        let cli = Cli::try_parse_from([
            "zarr",
            "info",
            "x",
            "--retries",
            "2",
            "--retry-timeout",
            "1.5",
            "--request-timeout",
            "500ms",
            "--connect-timeout",
            "1m",
        ])
        .unwrap();
        let o = cli.remote_options();
        assert_eq!(o.max_retries, 2);
        assert_eq!(o.retry_timeout, Duration::from_millis(1500));
        assert_eq!(o.request_timeout, Duration::from_millis(500));
        assert_eq!(o.connect_timeout, Duration::from_secs(60));
        assert_eq!(o.concurrency, 256);
        let cli = Cli::try_parse_from(["zarr", "info", "x", "--concurrency", "64"]).unwrap();
        assert_eq!(cli.remote_options().concurrency, 64);
        for bad in ["0", "-1", "lots"] {
            let refused = Cli::try_parse_from(["zarr", "info", "x", "--concurrency", bad]);
            assert!(refused.is_err(), "{bad:?}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        for bad in ["", "0", "-1s", "NaN", "5h", "s", "1e300m", "inf"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }
}
