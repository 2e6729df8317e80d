//! An error and its sources on one line.

use std::error::Error;

/// The `Display` of `error` and of each error in its [`source`](Error::source) chain, joined
/// with `": "`: what a user sees of a failure, with each cause once (the errors of the
/// workspace do not repeat their source in their own message). Tests compare reports, so a
/// cause that goes missing from the chain, or shows twice, fails them.
///
/// ```
/// let e = std::io::Error::other("disk full");
/// assert_eq!(zarr_testkit::report(&e), "disk full");
/// ```
#[must_use]
pub fn report(error: &dyn Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        out.push_str(": ");
        out.push_str(&e.to_string());
        source = e.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::report;
    use std::fmt;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    #[test]
    fn every_cause_shows_once_in_order() {
        let e = Layer(
            "opening array a",
            Some(Box::new(Layer(
                "reading a/zarr.json",
                Some(Box::new(Layer("permission denied", None))),
            ))),
        );
        assert_eq!(
            report(&e),
            "opening array a: reading a/zarr.json: permission denied"
        );
        assert_eq!(report(&Layer("alone", None)), "alone");
    }
}
