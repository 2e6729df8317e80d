//! Re-running the test binary as a child process: for work that may abort the process (an
//! allocation failure), that is killed on purpose (crash tests), or that must run in several
//! processes at once (concurrent writers).
//!
//! The child's work is an ignored test of the same binary (so a normal run lists it as
//! ignored, never as a pass that did nothing); the parent runs the binary again filtered to
//! exactly that test, with `--ignored` and the role in [`ROLE_VAR`]:
//!
//! ```no_run
//! use zarr_testkit::child;
//!
//!
//! #[test]
//! fn huge_chunks_fail_cleanly() {
//!     child::run_to_completion("child_cases", "huge_chunk"); // panics with the child's output
//! }
//!
//! #[test]
//! #[ignore = "the child process of the tests above (zarr_testkit::child), run by them"]
//! fn child_cases() {
//!     let role = child::role();
//!     match role.as_str() {
//!         "huge_chunk" => { /* work that might abort */ }
//!         other => panic!("unknown role {other}"),
//!     }
//!     child::done(&role);
//! }
//! # fn main() {}
//! ```
//!
//! [`done`] prints a line the parent looks for, so a child that ran no test (a renamed
//! function, a filter matching nothing: libtest exits 0 then) fails the parent.

use std::process::{Child, Command, Output, Stdio};

/// The environment variable carrying the child's role.
pub const ROLE_VAR: &str = "ZARR_TESTKIT_CHILD_ROLE";

/// The line a child prints when its role is done.
fn done_line(role: &str) -> String {
    format!("zarr-testkit child: {role} done")
}

/// A command running this test binary again, filtered to exactly the (ignored) test `test`,
/// on one test thread, with `role` in [`ROLE_VAR`]. Add arguments of the role with `.env`;
/// stdout and stderr are piped (set them to `Stdio::null()` for a child that is killed).
///
/// # Panics
///
/// When the path of the running test binary is unknown.
#[must_use]
pub fn command(test: &str, role: &str) -> Command {
    let exe = std::env::current_exe().expect("the path of the test binary");
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        test,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(ROLE_VAR, role)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    cmd
}

/// Runs `role` of the child test `test` and waits for it.
///
/// # Panics
///
/// With the child's status and output, unless it exited successfully after [`done`].
pub fn run_to_completion(test: &str, role: &str) {
    let output = command(test, role)
        .output()
        .unwrap_or_else(|e| panic!("the child {test} ({role}) does not start: {e}"));
    check_done(role, &output);
}

/// Waits for a child started from [`command`] (stdout piped).
///
/// # Panics
///
/// With the child's status and output, unless it exited successfully after [`done`].
pub fn wait_done(child: Child, role: &str) {
    let output = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("waiting for the child ({role}): {e}"));
    check_done(role, &output);
}

fn check_done(role: &str, output: &Output) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(&done_line(role)),
        "the child process ({role}) did not finish cleanly ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
}

/// In the child test: the role the parent gave it.
///
/// # Panics
///
/// When the test was not started by [`command`] (someone ran the ignored child test by hand).
#[must_use]
pub fn role() -> String {
    std::env::var(ROLE_VAR).unwrap_or_else(|_| {
        panic!(
            "this test is the child process of other tests of this file and runs only when \
             they start it ({ROLE_VAR} is unset)"
        )
    })
}

/// In the child test: reports that `role` finished (the parent's [`run_to_completion`] and
/// [`wait_done`] look for this line).
pub fn done(role: &str) {
    // on a line of its own: libtest has printed `test <name> ... ` without a newline
    println!("\n{}", done_line(role));
}
