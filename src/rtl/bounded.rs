//! Reading a whole input file with a bound: at most `limit + 1` bytes are ever held, so a
//! file that is endless (`/dev/zero`, a FIFO) or far larger than any input of its kind is
//! refused instead of filling memory. The limits per input are listed in
//! docs/reliability.md ("Limits").

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Text inputs a person writes or a run produces for a small problem: text matrices,
/// measurement files, `--map-file`, sweep summaries (64 MiB).
pub const MAX_TEXT_BYTES: u64 = 1 << 26;

/// A golden folder's files (`d.hex`, `steps.hex`, `manifest.json`) and a student's step
/// files (256 MiB: a D of 2^24 FP32 words, or 2^20 step records).
pub const MAX_GOLDEN_BYTES: u64 = 1 << 28;

/// The error for an input larger than `limit` bytes; `what` names the kind of input.
fn too_large(limit: u64, what: &str) -> io::Error {
    io::Error::other(format!("larger than the {limit}-byte limit for {what}"))
}

/// Opens `path`, refusing a regular file whose size is already over `limit` before a byte
/// of it is read (a device or a FIFO has no size to go by and is refused as it is read).
fn open_within(path: &Path, limit: u64, what: &str) -> io::Result<File> {
    let file = File::open(path)?;
    match file.metadata() {
        Ok(m) if m.is_file() && m.len() > limit => Err(too_large(limit, what)),
        _ => Ok(file),
    }
}

/// The bytes of `path`; once more than `limit` bytes have been read, an error saying that the
/// file is larger than the limit for `what` (the kind of input, e.g. "a text matrix"). A
/// regular file over the limit is refused from its size, without reading it.
pub fn read_bounded(path: &Path, limit: u64, what: &str) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    // `take` (not a LimitedReader) lets `read_to_end` stop growing the buffer at the limit:
    // a stream over it costs `limit + 1` bytes, not the next power of two.
    open_within(path, limit, what)?
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit, what));
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_text_bounded(path: &Path, limit: u64, what: &str) -> io::Result<String> {
    String::from_utf8(read_bounded(path, limit, what)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// A golden folder's (or a student's) file as text, read with [`MAX_GOLDEN_BYTES`].
pub fn read_golden(path: &Path) -> io::Result<String> {
    read_text_bounded(path, MAX_GOLDEN_BYTES, "a golden file")
}

/// The largest VCD `tcrtl grade --vcd` reads (128 MiB): a PE's waveform over a small
/// problem is far smaller; a larger file is refused from its size, a larger stream as it is
/// read.
pub const MAX_GRADE_VCD_BYTES: u64 = 1 << 27;

/// A reader that fails once more than `limit` bytes have come through it, for inputs read as
/// a stream (a VCD parsed as it is read).
pub struct LimitedReader<R> {
    inner: R,
    left: u64,
    limit: u64,
    what: &'static str,
}

impl<R: Read> LimitedReader<R> {
    /// Reads `inner`, refusing more than `limit` bytes; `what` names the input in the error.
    pub fn new(inner: R, limit: u64, what: &'static str) -> Self {
        Self {
            inner,
            left: limit,
            limit,
            what,
        }
    }
}

impl<R: Read> Read for LimitedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // One byte past the limit is asked for, so that a file of exactly `limit` bytes
        // passes and one byte more fails.
        let room = usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX);
        let take = buf.len().min(room);
        let n = self.inner.read(&mut buf[..take])?;
        if n as u64 > self.left {
            return Err(too_large(self.limit, self.what));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

impl LimitedReader<File> {
    /// Opens `path` to be read with at most `limit` bytes; a regular file over the limit is
    /// refused here, from its size, instead of after `limit` bytes have been parsed.
    pub fn open(path: &Path, limit: u64, what: &'static str) -> io::Result<Self> {
        Ok(Self::new(open_within(path, limit, what)?, limit, what))
    }
}
