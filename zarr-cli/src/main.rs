//! The `zarr` command (see the crate README).

#![forbid(unsafe_code)]

fn main() {
    // a bug must still end with one line on stderr, never a backtrace
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("zarr: internal error (a bug, please report it): {what}{at}");
    }));
    std::process::exit(zarr_cli::run(std::env::args_os()));
}
