//! VCD sink, written with the `vcd` crate.
//!
//! The header (timescale, nested `$scope module`s, `$var`s with identifier codes allocated by
//! `vcd::Writer`) goes through `vcd::Writer`. The body (timestamps, `$dumpvars`/`$end` and
//! value changes) is formatted into one large reusable buffer in the same syntax
//! `vcd::Writer` emits (`#<time>`, `b<bits> <id>` with leading zeros dropped as the VCD standard
//! allows, scalars `0<id>`) and handed to the file in chunks of at least [`FLUSH_AT`] bytes:
//! the crate formats vectors one bit at a time and every call is a separate `write`.
//!
//! Value-change lines are written with fixed-size stores: binary digits eight at a time from a
//! 256-entry table, the `" <id>\n"` tail as one 16-byte block. A store may run past the end of
//! the line; the buffer keeps enough slack and the next line overwrites the excess. The
//! buffer is sized once for the longest possible cycle (every declared signal changing), so a
//! line never has to grow it; it is flushed at a timestamp once it holds [`FLUSH_AT`] bytes.
//! One-word signals (the tracer's common case) are formatted by [`VcdSink::word`], straight
//! from the sampling pass.

use std::fs::File;
use std::io::{BufWriter, Write};

use vcd::{IdCode, ScopeType, TimescaleUnit, VarType};

use super::sink::{walk_scopes, Decl, ScopeEvent, Sink, SinkError};
use crate::rtl::table::SignalKind;
use crate::rtl::value::BITS8;

/// Buffered body bytes before they are written to the file.
const FLUSH_AT: usize = 1 << 16;

/// Bytes a value-change line's fixed-size stores may need beyond its digits.
const SLACK: usize = 40;

/// The window a one-word line is written through: `b`, 64 digits, a 16-byte tail, rounded up.
const WORD_LINE: usize = 96;

/// Bytes reserved for a cycle's timestamps and dump markers.
const CYCLE_FIXED: usize = 2 * 24 + 16;

pub(super) struct VcdSink {
    w: vcd::Writer<BufWriter<File>>,
    /// Per slot (see [`super::Sink`]): its declaration's `" <id>\n"`, zero padded, with the
    /// tail's length in the last byte (an id code has at most 10 characters, so a tail has at
    /// most 12); all zero, length 0, for a slot with no declaration, whose changes are not
    /// written.
    tails: Vec<[u8; 16]>,
    /// The body buffer: `buf[..pos]` is pending output, the rest is scratch.
    buf: Vec<u8>,
    pos: usize,
}

fn io(action: &'static str) -> impl Fn(std::io::Error) -> SinkError {
    move |e| SinkError::Io(action, e)
}

impl VcdSink {
    /// The header of `decls`; `slots` gives each slot's declaration (`u32::MAX`: none).
    pub fn new(out: BufWriter<File>, decls: &[Decl], slots: &[u32]) -> Result<Self, SinkError> {
        let mut w = vcd::Writer::new(out);
        let hdr = io("write VCD header");
        w.version(concat!("tensorcore-rtl ", env!("CARGO_PKG_VERSION")))
            .map_err(&hdr)?;
        w.timescale(1, TimescaleUnit::NS).map_err(&hdr)?;
        let mut tails = vec![[0u8; 16]; decls.len()];
        let mut next = IdCode::FIRST;
        walk_scopes(decls, |ev| {
            match ev {
                ScopeEvent::Enter(name) => w.scope_def(ScopeType::Module, name),
                ScopeEvent::Leave => w.upscope(),
                ScopeEvent::Var(i, d) => {
                    let ty = match d.kind {
                        _ if d.real => VarType::Real,
                        SignalKind::Reg => VarType::Reg,
                        SignalKind::Wire | SignalKind::Input => VarType::Wire,
                    };
                    let id = next;
                    next = next.next();
                    let code = id.to_string();
                    let n = code.len();
                    // 94 symbols per character: 10 characters cover every usize id.
                    debug_assert!(n <= 13);
                    tails[i][0] = b' ';
                    tails[i][1..=n].copy_from_slice(code.as_bytes());
                    tails[i][n + 1] = b'\n';
                    tails[i][15] = (n + 2) as u8;
                    w.var_def(ty, d.width, id, &d.name, None)
                }
            }
            .map_err(&hdr)
        })?;
        w.enddefinitions().map_err(&hdr)?;
        let tails = slots
            .iter()
            .map(|&d| tails.get(d as usize).copied().unwrap_or([0; 16]))
            .collect();
        // The longest cycle: every signal changes, each line within its digits plus slack.
        let cycle: usize = decls
            .iter()
            .map(|d| d.width as usize + SLACK.max(WORD_LINE))
            .sum::<usize>()
            + CYCLE_FIXED;
        Ok(Self {
            w,
            tails,
            buf: vec![0; FLUSH_AT + cycle + 2 * WORD_LINE],
            pos: 0,
        })
    }

    /// Appends the value-change line of slot `slot`, a signal of `width` (1..=64) bits
    /// whose value `word` has no bit set at or above the width (nothing for a slot with no
    /// declaration).
    #[inline(always)]
    pub fn word(&mut self, slot: u32, width: u32, word: u64) {
        // The tail as one 16-byte value: its bytes in order, its length in the top byte.
        let Some(&tail) = self.tails.get(slot as usize) else {
            return;
        };
        let tail = u128::from_le_bytes(tail);
        let tail_len = (tail >> 120) as usize;
        if tail_len == 0 {
            return;
        }
        let p = self.pos;
        // One test: the buffer holds a whole cycle past FLUSH_AT, so `line_at` never grows it.
        let line = self.line_at(p);
        if width == 1 {
            // The tail starts with a space; the digit replaces it.
            line[..16].copy_from_slice(&tail.to_le_bytes());
            line[0] = b'0' + (word & 1) as u8;
            self.pos = p + tail_len;
            return;
        }
        // Digits from the highest set bit down; zero prints as "b0".
        let digits = (64 - (word | 1).leading_zeros()) as usize;
        // The top digit moved to bit 63: each byte from the top is eight digits, and the
        // zeros shifted in below the last digit are overwritten by the tail.
        let v = word << (64 - digits);
        line[0] = b'b';
        for i in 0..digits.div_ceil(8) {
            let byte = (v >> (56 - 8 * i)) as u8;
            line[1 + 8 * i..9 + 8 * i].copy_from_slice(&BITS8[usize::from(byte)]);
        }
        line[1 + digits..17 + digits].copy_from_slice(&tail.to_le_bytes());
        self.pos = p + 1 + digits + tail_len;
    }

    /// The [`WORD_LINE`] bytes of the buffer from `p` on (grown first if it is too short,
    /// which the buffer's size rules out).
    #[inline(always)]
    fn line_at(&mut self, p: usize) -> &mut [u8; WORD_LINE] {
        if self.buf.get(p..).is_none_or(|rest| rest.len() < WORD_LINE) {
            self.grow(p + WORD_LINE);
        }
        match self
            .buf
            .get_mut(p..)
            .and_then(|rest| rest.first_chunk_mut())
        {
            Some(line) => line,
            None => unreachable!("the buffer was grown to hold a line at {p}"),
        }
    }

    /// Makes room for `n` more bytes past `pos`.
    #[inline(always)]
    fn room(&mut self, n: usize) {
        if self.pos + n > self.buf.len() {
            self.grow(self.pos + n);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, len: usize) {
        self.buf.resize(len, 0);
    }

    /// Appends `bytes`.
    fn push_bytes(&mut self, bytes: &[u8]) {
        self.room(bytes.len());
        self.buf[self.pos..self.pos + bytes.len()].copy_from_slice(bytes);
        self.pos += bytes.len();
    }

    /// Appends one value-change line of a multi-word signal. Out of line: few signals are
    /// wider than a word, and a copy of this loop at each of them in every block's sampling
    /// pass was a large part of the library's compile time, for no measurable speed.
    #[inline(never)]
    fn push_change(&mut self, slot: usize, width: u32, words: &[u64]) {
        let Some(&tail) = self.tails.get(slot) else {
            return;
        };
        let tail_len = usize::from(tail[15]);
        if tail_len == 0 {
            return;
        }
        if width == 1 {
            self.room(SLACK);
            let p = self.pos;
            // The tail starts with a space; the digit replaces it.
            self.buf[p..p + 16].copy_from_slice(&tail);
            self.buf[p] = b'0' + (words[0] & 1) as u8;
            self.pos = p + tail_len;
            return;
        }
        // Digits down from the highest set bit within the width; all-zero prints as "b0".
        let mut top = 0usize;
        for (wi, &w) in words.iter().enumerate().rev() {
            if w != 0 {
                top = 64 * wi + 63 - w.leading_zeros() as usize;
                break;
            }
        }
        let digits = top.min(width as usize - 1) + 1;
        self.room(digits + SLACK);
        let b = &mut self.buf[self.pos..self.pos + digits + SLACK];
        b[0] = b'b';
        let mut p = 1;
        // Bytes from the top one down (byte `k` is bits `8k..8k+8`); the top byte holds 1..=8
        // digits: shift them to its top and store all eight.
        let kt = (digits - 1) / 8;
        let r = digits - 8 * kt;
        let mut wi = kt / 8;
        let mut w = words[wi];
        let mut sh = 8 * (kt % 8);
        b[p..p + 8].copy_from_slice(&BITS8[usize::from(((w >> sh) as u8) << (8 - r))]);
        p += r;
        loop {
            if sh == 0 {
                if wi == 0 {
                    break;
                }
                wi -= 1;
                w = words[wi];
                sh = 64;
            }
            sh -= 8;
            b[p..p + 8].copy_from_slice(&BITS8[usize::from((w >> sh) as u8)]);
            p += 8;
        }
        b[p..p + 16].copy_from_slice(&tail);
        self.pos += p + tail_len;
    }

    /// Appends the value-change line of slot `slot` (`width` bits in little-endian `words`,
    /// clear at and above the width), whatever its width.
    #[inline(always)]
    pub fn words(&mut self, slot: u32, width: u32, words: &[u64]) {
        if words.len() == 1 {
            self.word(slot, width, words[0]);
        } else {
            self.push_change(slot as usize, width, words);
        }
    }

    /// Appends the value-change line of slot `slot`, a real-valued signal, now `value`
    /// (`r<value> <id>`; nothing for a slot with no declaration).
    pub fn real(&mut self, slot: u32, value: f64) {
        let Some(&tail) = self.tails.get(slot as usize) else {
            return;
        };
        let tail_len = usize::from(tail[15]);
        if tail_len == 0 {
            return;
        }
        let text = format!("r{value}");
        self.push_bytes(text.as_bytes());
        self.push_bytes(&tail[..tail_len]);
    }

    /// Hands the buffered body to the file once it has grown past [`FLUSH_AT`].
    #[inline]
    fn maybe_flush(&mut self) -> Result<(), SinkError> {
        if self.pos >= FLUSH_AT {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> Result<(), SinkError> {
        let r = self.w.writer().write_all(&self.buf[..self.pos]);
        self.pos = 0;
        r.map_err(io("write VCD"))
    }
}

/// Formats `#<t>\n` into `out`, returning its length.
fn format_time(out: &mut [u8; 24], mut t: u64) -> usize {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (t % 10) as u8;
        t /= 10;
        if t == 0 {
            break;
        }
    }
    let n = digits.len() - i;
    out[0] = b'#';
    out[1..=n].copy_from_slice(&digits[i..]);
    out[n + 1] = b'\n';
    n + 2
}

impl Sink for VcdSink {
    fn time(&mut self, t: u64) -> Result<(), SinkError> {
        let mut line = [0u8; 24];
        let n = format_time(&mut line, t);
        self.push_bytes(&line[..n]);
        self.maybe_flush()
    }
    fn begin_dump(&mut self) -> Result<(), SinkError> {
        self.push_bytes(b"$dumpvars\n");
        Ok(())
    }
    fn end_dump(&mut self) -> Result<(), SinkError> {
        self.push_bytes(b"$end\n");
        Ok(())
    }
    #[inline]
    fn change(&mut self, slot: usize, width: u32, words: &[u64]) -> Result<(), SinkError> {
        self.words(slot as u32, width, words);
        Ok(())
    }
    fn finish(mut self: Box<Self>, end_time: u64) -> Result<(), SinkError> {
        let mut line = [0u8; 24];
        let n = format_time(&mut line, end_time);
        self.push_bytes(&line[..n]);
        self.flush_buf()?;
        self.w.flush().map_err(io("flush VCD"))
    }
}
