//! The child-process harness, on this test binary.

use std::panic::catch_unwind;

use zarr_testkit::child;

#[test]
fn a_child_that_finishes_passes() {
    child::run_to_completion("child_roles", "finish");
    let c = child::command("child_roles", "finish")
        .spawn()
        .expect("starts");
    child::wait_done(c, "finish");
}

#[test]
fn a_child_that_aborts_or_does_not_run_fails_the_parent() {
    for (test, role) in [
        ("child_roles", "abort"),
        ("child_roles", "no_done"),
        ("no_such_test", "finish"),
    ] {
        let parent = catch_unwind(|| child::run_to_completion(test, role));
        assert!(parent.is_err(), "{test} {role} passed");
    }
}

#[test]
fn outside_a_child_the_role_is_an_error() {
    assert!(std::env::var_os(child::ROLE_VAR).is_none());
    assert!(catch_unwind(child::role).is_err());
}

#[test]
#[ignore = "the child process of the tests above (zarr_testkit::child), run by them"]
fn child_roles() {
    let role = child::role();
    match role.as_str() {
        "finish" => child::done(&role),
        "abort" => std::process::abort(),
        "no_done" => {}
        other => panic!("unknown role {other}"),
    }
}
