//! Progress bars on a terminal, nothing when stdout is not one; and writing to stdout
//! without panicking on a closed pipe.

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar drawn on stderr when stdout and stderr are terminals, else hidden.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar counting `len` items (`bytes`: shown as sizes) with a short label.
    pub fn new(len: u64, label: &str, bytes: bool) -> Self {
        let visible = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        let bar = if visible {
            ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        let template = if bytes {
            "{msg:>10} [{bar:30}] {bytes}/{total_bytes} ({eta})"
        } else {
            "{msg:>10} [{bar:30}] {pos}/{len} ({eta})"
        };
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(label.to_string());
        Progress { bar }
    }

    /// Advances by `n`.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Writes text to stdout; a closed pipe (`zarr tree | head`) ends the output quietly.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

/// Writes a line to stdout (see [`out`]).
pub fn outln(text: impl AsRef<str>) {
    let mut s = text.as_ref().to_string();
    s.push('\n');
    out(&s);
}
