//! FST sink, written with the `fst-writer` crate. Value changes are buffered in memory and
//! flushed to disk as a compressed block whenever the buffer passes [`FLUSH_AT`], so memory stays
//! bounded however long the run.

use std::fs::File;
use std::io::BufWriter;

use fst_writer::{
    FstBodyWriter, FstFileType, FstHeaderWriter, FstInfo, FstScopeType, FstSignalId, FstSignalType,
    FstVarDirection, FstVarType,
};

use super::sink::{walk_scopes, Decl, ScopeEvent, Sink, SinkError};
use crate::rtl::table::SignalKind;
use crate::rtl::value::BITS8;

/// Buffered value-change bytes before a block is written out.
const FLUSH_AT: usize = 8 << 20;

pub(super) struct FstSink {
    body: FstBodyWriter<BufWriter<File>>,
    /// Per slot (see [`super::Sink`]): its signal, or none.
    ids: Vec<Option<FstSignalId>>,
    /// A value's ASCII digits: sized once for the widest declaration plus a byte's slack.
    buf: Vec<u8>,
    time: u64,
}

fn fst(e: fst_writer::FstWriteError) -> SinkError {
    match e {
        fst_writer::FstWriteError::Io(io) => SinkError::Io("write FST", io),
        other => SinkError::Fst(other.to_string()),
    }
}

impl FstSink {
    /// The header of `decls`; `slots` gives each slot's declaration (`u32::MAX`: none).
    pub fn new(
        out: BufWriter<File>,
        decls: &[Decl],
        slots: &[u32],
        start_time: u64,
    ) -> Result<Self, SinkError> {
        let info = FstInfo {
            start_time,
            timescale_exponent: -9,
            version: concat!("tensorcore-rtl ", env!("CARGO_PKG_VERSION")).to_string(),
            date: String::new(),
            file_type: FstFileType::Verilog,
        };
        let mut h = FstHeaderWriter::new(out, &info).map_err(fst)?;
        let mut ids = Vec::with_capacity(decls.len());
        walk_scopes(decls, |ev| {
            match ev {
                ScopeEvent::Enter(name) => h.scope(name, "", FstScopeType::Module),
                ScopeEvent::Leave => h.up_scope(),
                ScopeEvent::Var(_, d) => {
                    let ty = match d.kind {
                        SignalKind::Reg => FstVarType::Reg,
                        SignalKind::Wire | SignalKind::Input => FstVarType::Wire,
                    };
                    h.var(
                        &d.name,
                        FstSignalType::bit_vec(d.width),
                        ty,
                        FstVarDirection::Implicit,
                        None,
                    )
                    .map(|id| ids.push(id))
                }
            }
            .map_err(fst)
        })?;
        let mut body = h.finish().map_err(fst)?;
        let ids = slots
            .iter()
            .map(|&d| ids.get(d as usize).copied())
            .collect();
        // The tracer hands over only values that changed: the writer's own comparison with
        // the last value would always find a difference.
        body.set_deduplicate(false);
        Ok(Self {
            body,
            ids,
            buf: vec![0; decls.iter().map(|d| d.width as usize).max().unwrap_or(1) + 8],
            time: start_time,
        })
    }
}

/// Writes the `width` (1..) bits of `words` (little-endian) as ASCII digits, most significant
/// first, into `buf` (at least `width + 8` long, else it is grown), eight at a time from
/// [`BITS8`]; returns the digits.
fn bits<'a>(words: &[u64], width: u32, buf: &'a mut Vec<u8>) -> &'a [u8] {
    let n = (width as usize).min(64 * words.len()).max(1);
    if buf.len() < n + 8 {
        buf.resize(n + 8, 0);
    }
    let byte = |k: usize| usize::from((words[k / 8] >> (8 * (k % 8))) as u8);
    // The top byte holds 1..=8 of the digits: shifted to its top, all eight stored, and the
    // ones past the digits overwritten by the next byte's.
    let top = (n - 1) / 8;
    let r = n - 8 * top;
    buf[..8].copy_from_slice(&BITS8[(byte(top) << (8 - r)) & 0xFF]);
    for (j, k) in (0..top).rev().enumerate() {
        let at = r + 8 * j;
        buf[at..at + 8].copy_from_slice(&BITS8[byte(k)]);
    }
    &buf[..n]
}

impl Sink for FstSink {
    fn time(&mut self, t: u64) -> Result<(), SinkError> {
        if t > self.time && self.body.size() >= FLUSH_AT {
            self.body.flush().map_err(fst)?;
        }
        self.time = t;
        self.body.time_change(t).map_err(fst)
    }
    fn begin_dump(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
    fn end_dump(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
    #[inline]
    fn change(&mut self, slot: usize, width: u32, words: &[u64]) -> Result<(), SinkError> {
        let Some(&Some(id)) = self.ids.get(slot) else {
            return Ok(());
        };
        let digits = bits(words, width, &mut self.buf);
        self.body.signal_change(id, digits).map_err(fst)
    }
    fn finish(mut self: Box<Self>, end_time: u64) -> Result<(), SinkError> {
        if end_time > self.time {
            self.body.time_change(end_time).map_err(fst)?;
        }
        let mut out = self.body.finish().map_err(fst)?;
        use std::io::Write;
        out.flush().map_err(|e| SinkError::Io("flush FST", e))
    }
}
