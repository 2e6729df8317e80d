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

/// Window bits of a raw deflate stream (a zip member's), no header or trailer.
const RAW_WINDOW_BITS: u8 = 15;

/// Compressed input read ahead of an inflater, for both readers below.
struct Input<R> {
    inner: R,
    buf: Box<[u8]>,
    /// The unread input is `buf[pos..len]`.
    pos: usize,
    len: usize,
    /// `inner` is at its end.
    eof: bool,
}

impl<R: Read> Input<R> {
    fn new(inner: R, capacity: usize) -> Self {
        Input {
            inner,
            buf: vec![0; capacity].into_boxed_slice(),
            pos: 0,
            len: 0,
            eof: false,
        }
    }

    /// Every byte read so far is consumed.
    fn is_empty(&self) -> bool {
        self.pos == self.len
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
                "compressed input not consumed",
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

    /// Inflates the unread input into `out`: the input bytes consumed, the bytes made, and
    /// whether the stream ended.
    fn inflate(
        &mut self,
        inflate: &mut Inflate,
        out: &mut [u8],
    ) -> std::io::Result<(usize, usize, bool)> {
        let (in0, out0) = (inflate.total_in(), inflate.total_out());
        let status = inflate
            .decompress(&self.buf[self.pos..self.len], out, InflateFlush::NoFlush)
            .map_err(|e| Error::new(ErrorKind::InvalidData, e.as_str()))?;
        let consumed = (inflate.total_in() - in0) as usize;
        let made = (inflate.total_out() - out0) as usize;
        self.pos += consumed;
        Ok((consumed, made, status == Status::StreamEnd))
    }
}

/// Decompresses every gzip member of `inner`, one after another.
pub(crate) struct GzReader<R> {
    input: Input<R>,
    inflate: Inflate,
    /// The member being read ended; another may follow.
    member_done: bool,
}

impl<R: Read> GzReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        GzReader {
            input: Input::new(inner, 1 << 17),
            inflate: Inflate::new(true, GZIP_WINDOW_BITS),
            member_done: false,
        }
    }
}

impl<R: Read> Read for GzReader<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        let early = || Error::new(ErrorKind::UnexpectedEof, "the gzip stream ends early");
        loop {
            if self.member_done {
                if self.input.is_empty() && !self.input.fill()? {
                    return Ok(0);
                }
                // another member follows
                self.inflate = Inflate::new(true, GZIP_WINDOW_BITS);
                self.member_done = false;
            }
            if self.input.is_empty() && !self.input.fill()? {
                return Err(early());
            }
            let (consumed, made, end) = self.input.inflate(&mut self.inflate, out)?;
            self.member_done = end;
            if made > 0 {
                return Ok(made);
            }
            if consumed == 0 && !self.member_done && !self.input.fill()? {
                return Err(early());
            }
        }
    }
}

/// A zip member's bytes from its raw (still compressed) reader: inflated with zlib-rs when
/// deflated, passed through when stored; its CRC-32 and size checked against the central
/// directory's at its end, as the zip crate checks them.
pub(crate) struct ZipMember<R> {
    input: Input<R>,
    /// `None` for a stored member.
    inflate: Option<Inflate>,
    done: bool,
    crc: u32,
    size: u64,
    want_crc: u32,
    want_size: u64,
}

impl<R: Read> ZipMember<R> {
    /// `deflated` or stored; the member's CRC-32 and uncompressed size from the directory.
    pub(crate) fn new(inner: R, deflated: bool, want_crc: u32, want_size: u64) -> Self {
        ZipMember {
            input: Input::new(inner, if deflated { 1 << 17 } else { 0 }),
            inflate: deflated.then(|| Inflate::new(false, RAW_WINDOW_BITS)),
            done: false,
            crc: 0,
            size: 0,
            want_crc,
            want_size,
        }
    }

    /// The member is complete: its size and CRC-32 must be the directory's.
    fn check_end(&mut self) -> std::io::Result<usize> {
        self.done = true;
        if self.size != self.want_size || self.crc != self.want_crc {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!(
                    "{} bytes with CRC-32 {:08x} where the zip directory says {} bytes, {:08x}",
                    self.size, self.crc, self.want_size, self.want_crc
                ),
            ));
        }
        Ok(0)
    }

    /// Counts `n` bytes just produced into `out`.
    fn produced(&mut self, out: &[u8]) -> std::io::Result<usize> {
        self.crc = zlib_rs::crc32::crc32(self.crc, out);
        self.size += out.len() as u64;
        if self.size > self.want_size {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!(
                    "more than the {} bytes the zip directory says",
                    self.want_size
                ),
            ));
        }
        Ok(out.len())
    }
}

impl<R: Read> Read for ZipMember<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() || self.done {
            return Ok(0);
        }
        if self.inflate.is_none() {
            // stored
            let n = loop {
                match self.input.inner.read(out) {
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    r => break r?,
                }
            };
            if n == 0 {
                return self.check_end();
            }
            return self.produced(&out[..n]);
        }
        let early = || Error::new(ErrorKind::UnexpectedEof, "the deflate stream ends early");
        loop {
            if self.input.is_empty() && !self.input.fill()? {
                return Err(early());
            }
            let Some(inflate) = self.inflate.as_mut() else {
                return Ok(0);
            };
            let (consumed, made, end) = self.input.inflate(inflate, out)?;
            let n = if made > 0 {
                self.produced(&out[..made])?
            } else {
                0
            };
            if end {
                // the member is whole: checked now, its last bytes returned
                self.check_end()?;
                return Ok(n);
            }
            if n > 0 {
                return Ok(n);
            }
            if consumed == 0 && !self.input.fill()? {
                return Err(early());
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

    #[test]
    fn zip_members_agree_with_the_zip_crate() {
        use zip::write::SimpleFileOptions;
        let mut rng = zarr_testkit::Rng::new(41);
        for case in 0..30 {
            let len = rng.below(200_000) as usize;
            let data: Vec<u8> = (0..len)
                .map(|i| (i % 97) as u8 ^ rng.below(4) as u8)
                .collect();
            let method = if case % 3 == 0 {
                zip::CompressionMethod::Stored
            } else {
                zip::CompressionMethod::Deflated
            };
            let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
            w.start_file(
                "a.npy",
                SimpleFileOptions::default().compression_method(method),
            )
            .unwrap();
            w.write_all(&data).unwrap();
            let bytes = w.finish().unwrap().into_inner();
            let read = |bytes: &[u8]| -> std::io::Result<Vec<u8>> {
                let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
                let m = z.by_index_raw(0).unwrap();
                let deflated = m.compression() == zip::CompressionMethod::Deflated;
                let (crc, size) = (m.crc32(), m.size());
                let mut r = ZipMember::new(m, deflated, crc, size);
                let mut got = Vec::new();
                let mut out = vec![0u8; 1 + case * 977];
                loop {
                    match r.read(&mut out)? {
                        0 => return Ok(got),
                        n => got.extend_from_slice(&out[..n]),
                    }
                }
            };
            assert_eq!(read(&bytes).unwrap(), data, "case {case}");
            // a damaged byte inside the member's data: an error, never wrong bytes
            if let Some(room) = bytes.len().checked_sub(200).filter(|&r| r > 0 && len > 0) {
                let mut bad = bytes.clone();
                let at = 40 + rng.below(len.min(room) as u64) as usize;
                bad[at] ^= 0x20;
                assert!(read(&bad).is_err(), "case {case}: damage at {at} not seen");
            }
        }
    }
}
