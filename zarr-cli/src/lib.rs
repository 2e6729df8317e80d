#![doc = include_str!("../README.md")]
//!
//! The binary is a thin `main` over [`run`]; most modules are public so that tests can use the
//! `.npy` reader and writer and drive `info` on a store. The conformance corpus (its
//! generator and runner) is private: `zarr conformance write` and `zarr conformance run` are
//! its only surface.

#![forbid(unsafe_code)]

pub mod cli;
pub mod commands;
mod conformance;
pub mod convert;
pub mod error;
pub mod info;
pub mod layout;
pub mod npy;
pub mod progress;
pub mod quickstart;
pub mod sparse;
pub mod store;
pub mod transfer;
pub mod validate;

use std::ffi::OsString;

use clap::Parser;

use crate::cli::{Cli, Command, ConformanceCommand};
use crate::error::{CliError, Result};
use crate::store::Ctx;

/// Parses the arguments, runs the subcommand and returns the exit code: 0 on success, 1 for
/// bad input or problems found, 2 for bad usage. Errors are reported on stderr as one line.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // usage errors exit with 2, --help and --version with 0
        Err(e) => e.exit(),
    };
    match dispatch(&cli) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("zarr: error: {}", e.one_line());
            e.exit_code()
        }
    }
}

fn dispatch(cli: &Cli) -> Result<()> {
    let ctx = Ctx::new(&cli.without)?.with_remote(cli.remote_options());
    match &cli.command {
        Command::Create(a) => commands::create(&ctx, a),
        Command::Import(a) => commands::import(&ctx, a),
        Command::Export(a) => commands::export(&ctx, a),
        Command::Write(a) => commands::write(&ctx, a),
        Command::Append(a) => commands::grow(&ctx, a, false),
        Command::Prepend(a) => commands::grow(&ctx, a, true),
        Command::Resize(a) => commands::resize(&ctx, a),
        Command::Info(a) => info::info(&ctx, a),
        Command::Tree(a) => info::tree(&ctx, &a.path),
        Command::Validate(a) => validate::validate(&ctx, &a.path),
        Command::Consolidate(a) => info::consolidate(&ctx, &a.path),
        Command::Convert(a) => convert::convert(&ctx, a),
        Command::Quickstart(a) => quickstart::quickstart(&ctx, &a.dir),
        Command::Conformance(ConformanceCommand::Write(a)) => conformance::write(&ctx, &a.dir),
        Command::Conformance(ConformanceCommand::Run(a)) => conformance::run(&ctx, a),
    }
}

/// Refuses to write into a directory that exists and is not empty.
///
/// # Errors
/// A non-empty directory, a file, or an unreadable directory.
pub fn require_empty_dir(dir: impl AsRef<std::path::Path>) -> Result<()> {
    let path = dir.as_ref();
    let dir = path.display();
    if path.is_file() {
        return Err(CliError::input(format!(
            "{dir} is a file (give a new directory)"
        )));
    }
    if path.is_dir() {
        let mut entries = std::fs::read_dir(path).map_err(|e| CliError::io(&dir, e))?;
        if entries.next().is_some() {
            return Err(CliError::input(format!(
                "{dir} is not empty (give a new or empty directory)"
            )));
        }
    }
    Ok(())
}
