//! JSON text as Python's `json.dumps` writes it, which is how zarr-python writes every metadata
//! document: `indent=2` (`.zarray`, `.zgroup`, `.zattrs`) or no indent (`.zmetadata`, whose
//! separators are then `", "` and `": "`), `ensure_ascii` (every character outside ASCII's
//! printable range as `\uXXXX`, surrogate pairs above the BMP) and floats in Python's `repr`
//! (`1e-05`, `1e+20`, `0.1`, `1.0`).

use std::io;

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter, Serializer};
use serde_json::Value;

/// How the document is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `json.dumps(value, indent=2)`.
    Indent2,
    /// `json.dumps(value)`: one line, `", "` between items and `": "` after keys.
    OneLine,
}

/// `value` as Python's `json.dumps` writes it in `layout` (no trailing newline).
pub(crate) fn to_vec(value: &Value, layout: Layout) -> Vec<u8> {
    let mut out = Vec::new();
    let mut ser = Serializer::with_formatter(&mut out, PythonFormatter::new(layout));
    // Serializing a `Value` into memory cannot fail: every number in a `Value` is finite.
    let _ = value.serialize(&mut ser);
    out
}

struct PythonFormatter {
    layout: Layout,
    depth: usize,
    has_value: bool,
}

impl PythonFormatter {
    fn new(layout: Layout) -> Self {
        PythonFormatter {
            layout,
            depth: 0,
            has_value: false,
        }
    }

    fn newline_indent<W: ?Sized + io::Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn item<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        match self.layout {
            Layout::Indent2 => {
                if !first {
                    w.write_all(b",")?;
                }
                self.newline_indent(w)
            }
            Layout::OneLine if first => Ok(()),
            Layout::OneLine => w.write_all(b", "),
        }
    }

    fn close<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value && self.layout == Layout::Indent2 {
            self.newline_indent(w)?;
        }
        // the enclosing container, if any, has a value now
        self.has_value = true;
        w.write_all(bracket)
    }
}

impl Formatter for PythonFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(python_float_repr(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // serde_json escapes quotes, backslashes and C0 controls itself; ensure_ascii escapes
        // everything from DEL (0x7f) up as well
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if (c as u32) < 0x7f {
                continue;
            }
            w.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(w, "\\u{unit:04x}")?;
            }
            start = i + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        let s: &[u8] = match escape {
            CharEscape::Quote => b"\\\"",
            CharEscape::ReverseSolidus => b"\\\\",
            CharEscape::Solidus => b"/",
            CharEscape::Backspace => b"\\b",
            CharEscape::FormFeed => b"\\f",
            CharEscape::LineFeed => b"\\n",
            CharEscape::CarriageReturn => b"\\r",
            CharEscape::Tab => b"\\t",
            CharEscape::AsciiControl(byte) => return write!(w, "\\u{byte:04x}"),
        };
        w.write_all(s)
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip, in positional notation for
/// decimal exponents -4 to 15 (`0.0001`, `1e+16` is the first in exponent form) and otherwise
/// `d.ddde±XX` with at least two exponent digits; integral values keep a `.0`.
pub(crate) fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Rust's `{:e}` gives the same shortest round-trip digits: "-1.2345e-5", "0e0"
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..16).contains(&exp) {
        let (head, tail) = digits.split_at(1);
        let dot = if tail.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{head}{dot}{tail}e{esign}{:02}", exp.abs());
    }
    if exp < 0 {
        let zeros = "0".repeat((-exp - 1) as usize);
        return format!("{sign}0.{zeros}{digits}");
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        let zeros = "0".repeat(int_len - digits.len());
        format!("{sign}{digits}{zeros}.0")
    } else {
        let (int, frac) = digits.split_at(int_len);
        format!("{sign}{int}.{frac}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_as_python_repr() {
        for (x, s) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1.5e-7, "1.5e-07"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345.6, "123456789012345.6"),
            (1e20, "1e+20"),
            (1e100, "1e+100"),
            (-2.5e-300, "-2.5e-300"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (f64::from(0.1f32), "0.10000000149011612"),
            (12.0, "12.0"),
            (1234.5, "1234.5"),
        ] {
            assert_eq!(python_float_repr(x), s, "{x:e}");
        }
    }

    #[test]
    fn layouts_and_escapes_as_json_dumps() {
        let v = json!({"a": [1, 2.5, []], "b": {}, "c": {"d": null, "e": true},
                       "u": "Zürich – 東京 ✓ 🎉", "q": "\"\\\n\t\u{7f}/\u{1}"});
        assert_eq!(
            String::from_utf8(to_vec(&v, Layout::OneLine)).unwrap(),
            r#"{"a": [1, 2.5, []], "b": {}, "c": {"d": null, "e": true}, "u": "Z\u00fcrich \u2013 \u6771\u4eac \u2713 \ud83c\udf89", "q": "\"\\\n\t\u007f/\u0001"}"#
        );
        assert_eq!(
            String::from_utf8(to_vec(
                &json!({"s": [3, 4], "x": {}, "f": null}),
                Layout::Indent2
            ))
            .unwrap(),
            "{\n  \"s\": [\n    3,\n    4\n  ],\n  \"x\": {},\n  \"f\": null\n}"
        );
        assert_eq!(to_vec(&json!({}), Layout::Indent2), b"{}");
        assert_eq!(
            to_vec(&json!([[], [[]], {}]), Layout::Indent2),
            b"[\n  [],\n  [\n    []\n  ],\n  {}\n]"
        );
    }
}
