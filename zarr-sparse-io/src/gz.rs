//! A gzip reader over zlib-rs (pure Rust, the zlib-ng design): one or more gzip members
//! read in sequence, as `flate2::read::MultiGzDecoder` reads them. The workspace's `flate2`
//! inflates with the C zlib when another crate asks for it (zarr-numcodecs does, for
//! byte-identical `zlib` streams), and that inflate was the largest single cost of a
//! `.mtx.gz` import; zlib-rs inflates the same stream in about half the CPU time (perf of
//! benches/sparse-convert.py's 163 MiB file: 1.7 s in zlib's `inflate_fast`, 0.9 s here).

use std::io::{Error, ErrorKind, Read};

use zlib_rs::{Inflate, InflateFlush, Status};

/// Window bits that make zlib expect a gzip header and trailer (15 + 16).
const GZIP_WINDOW_BITS: u8 = 31;

/// Decompresses every gzip member of `inner`, one after another.
pub(crate) struct GzReader<R> {
    inner: R,
    inflate: Inflate,
    buf: Box<[u8]>,
    /// The unread input is `buf[pos..len]`.
    pos: usize,
    len: usize,
    /// `inner` is at its end.
    eof: bool,
    /// The member being read ended; another may follow.
    member_done: bool,
}

impl<R: Read> GzReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        GzReader {
            inner,
            inflate: Inflate::new(true, GZIP_WINDOW_BITS),
            buf: vec![0; 1 << 17].into_boxed_slice(),
            pos: 0,
            len: 0,
            eof: false,
            member_done: false,
        }
    }

    /// Reads more input after the unread part; false at the end of `inner`.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.len, 0);
            self.len -= self.pos;
            self.pos = 0;
        }
        if self.len == self.buf.len() {
            // cannot happen: inflate consumes whatever input it is given
            return Err(Error::new(
                ErrorKind::InvalidData,
                "gzip input not consumed",
            ));
        }
        loop {
            match self.inner.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.len += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl<R: Read> Read for GzReader<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.member_done {
                if self.pos == self.len && !self.fill()? {
                    return Ok(0);
                }
                // another member follows
                self.inflate = Inflate::new(true, GZIP_WINDOW_BITS);
                self.member_done = false;
            }
            if self.pos == self.len && !self.fill()? {
                return Err(Error::new(
                    ErrorKind::UnexpectedEof,
                    "the gzip stream ends early",
                ));
            }
            let (in0, out0) = (self.inflate.total_in(), self.inflate.total_out());
            let status = self
                .inflate
                .decompress(&self.buf[self.pos..self.len], out, InflateFlush::NoFlush)
                .map_err(|e| Error::new(ErrorKind::InvalidData, e.as_str()))?;
            let consumed = (self.inflate.total_in() - in0) as usize;
            let produced = (self.inflate.total_out() - out0) as usize;
            self.pos += consumed;
            if status == Status::StreamEnd {
                self.member_done = true;
            }
            if produced > 0 {
                return Ok(produced);
            }
            if consumed == 0 && !self.member_done && !self.fill()? {
                return Err(Error::new(
                    ErrorKind::UnexpectedEof,
                    "the gzip stream ends early",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Reads through small output buffers of varying size (every read path taken).
    fn read_all(gz: &[u8], step: usize) -> std::io::Result<Vec<u8>> {
        let mut r = GzReader::new(gz);
        let mut got = Vec::new();
        let mut out = vec![0u8; 1 << 16];
        let mut k = 0;
        loop {
            let n = 1 + (k * 7919 + step) % out.len().min(step.max(1));
            k += 1;
            match r.read(&mut out[..n])? {
                0 => return Ok(got),
                m => got.extend_from_slice(&out[..m]),
            }
        }
    }

    #[test]
    fn agrees_with_flate2_on_members_and_damage() {
        let mut rng = zarr_testkit::Rng::new(40);
        for case in 0..40 {
            let len = rng.below(300_000) as usize;
            // text-like data (repeats) and noise, as Matrix Market files mix both
            let data: Vec<u8> = (0..len)
                .map(|i| {
                    if case % 3 == 0 {
                        rng.below(256) as u8
                    } else {
                        b"0123456789 .e\n"[(i * 31 + rng.below(3) as usize) % 14]
                    }
                })
                .collect();
            let members = 1 + rng.below(3) as usize;
            let mut gz = Vec::new();
            let mut plain = Vec::new();
            let mut last_start = 0;
            for m in 0..members {
                let part = &data[m * len / members..(m + 1) * len / members];
                last_start = gz.len();
                gz.extend(gzip(part, rng.below(10) as u32));
                plain.extend_from_slice(part);
            }
            let step = 1 + rng.below(70_000) as usize;
            assert_eq!(read_all(&gz, step).unwrap(), plain, "case {case}");
            let mut theirs = Vec::new();
            flate2::read::MultiGzDecoder::new(&gz[..])
                .read_to_end(&mut theirs)
                .unwrap();
            assert_eq!(theirs, plain);
            // truncated anywhere in the last member (a cut between members is a whole file):
            // an error, never a short success
            let cut = last_start + 1 + rng.below((gz.len() - last_start - 1) as u64) as usize;
            let err = read_all(&gz[..cut], step).unwrap_err();
            assert!(
                matches!(
                    err.kind(),
                    ErrorKind::UnexpectedEof | ErrorKind::InvalidData
                ),
                "case {case}: {err}"
            );
            // a damaged trailer (the CRC-32) is refused
            let mut bad = gzip(&data, 6);
            let at = bad.len() - 6;
            bad[at] ^= 0x55;
            assert_eq!(
                read_all(&bad, step).unwrap_err().kind(),
                ErrorKind::InvalidData
            );
        }
        // not gzip at all; an empty input has no member
        assert_eq!(
            read_all(b"%%MatrixMarket", 10).unwrap_err().kind(),
            ErrorKind::InvalidData
        );
        assert!(read_all(b"", 10).is_err());
    }
}
