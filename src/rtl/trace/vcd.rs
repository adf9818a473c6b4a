//! VCD sink, written with the `vcd` crate.
//!
//! The header (timescale, nested `$scope module`s, `$var`s with identifier codes allocated by
//! `vcd::Writer`), `$dumpvars` and timestamps go through `vcd::Writer`. Value-change lines are
//! formatted into a reusable buffer in the same syntax `vcd::Writer::change_vector` emits
//! (`b<bits> <id>`, leading zeros dropped as the VCD standard allows; scalars `0<id>`), because
//! the crate writes vectors one formatted bit at a time.

use std::fs::File;
use std::io::{BufWriter, Write};

use vcd::{IdCode, ScopeType, SimulationCommand, TimescaleUnit, VarType};

use super::{walk_scopes, Decl, ScopeEvent, Sink, SinkError};
use crate::rtl::table::SignalKind;

pub(super) struct VcdSink {
    w: vcd::Writer<BufWriter<File>>,
    ids: Vec<Box<[u8]>>,
    buf: Vec<u8>,
}

fn io(action: &'static str) -> impl Fn(std::io::Error) -> SinkError {
    move |e| SinkError::Io(action, e)
}

impl VcdSink {
    pub fn new(out: BufWriter<File>, decls: &[Decl]) -> Result<Self, SinkError> {
        let mut w = vcd::Writer::new(out);
        let hdr = io("write VCD header");
        w.version(concat!("tensorcore-rtl ", env!("CARGO_PKG_VERSION")))
            .map_err(&hdr)?;
        w.timescale(1, TimescaleUnit::NS).map_err(&hdr)?;
        let mut ids = vec![Box::<[u8]>::default(); decls.len()];
        let mut next = IdCode::FIRST;
        walk_scopes(decls, |ev| {
            match ev {
                ScopeEvent::Enter(name) => w.scope_def(ScopeType::Module, name),
                ScopeEvent::Leave => w.upscope(),
                ScopeEvent::Var(i, d) => {
                    let ty = match d.kind {
                        SignalKind::Reg => VarType::Reg,
                        SignalKind::Wire | SignalKind::Input => VarType::Wire,
                    };
                    let id = next;
                    next = next.next();
                    ids[i] = id.to_string().into_bytes().into_boxed_slice();
                    w.var_def(ty, d.width, id, &d.name, None)
                }
            }
            .map_err(&hdr)
        })?;
        w.enddefinitions().map_err(&hdr)?;
        Ok(Self {
            w,
            ids,
            buf: Vec::with_capacity(1100),
        })
    }
}

impl Sink for VcdSink {
    fn time(&mut self, t: u64) -> Result<(), SinkError> {
        self.w.timestamp(t).map_err(io("write VCD"))
    }
    fn begin_dump(&mut self) -> Result<(), SinkError> {
        self.w
            .begin(SimulationCommand::Dumpvars)
            .map_err(io("write VCD"))
    }
    fn end_dump(&mut self) -> Result<(), SinkError> {
        self.w.end().map_err(io("write VCD"))
    }
    #[inline]
    fn change(&mut self, id: usize, width: u32, words: &[u64]) -> Result<(), SinkError> {
        let b = &mut self.buf;
        b.clear();
        if width == 1 {
            b.push(b'0' + (words[0] & 1) as u8);
        } else {
            b.push(b'b');
            // Highest set bit within the width; all-zero prints as "b0".
            let mut top = 0usize;
            for (wi, &w) in words.iter().enumerate().rev() {
                if w != 0 {
                    top = 64 * wi + 63 - w.leading_zeros() as usize;
                    break;
                }
            }
            let top = top.min(width as usize - 1);
            for i in (0..=top).rev() {
                b.push(b'0' + ((words[i / 64] >> (i % 64)) & 1) as u8);
            }
            b.push(b' ');
        }
        b.extend_from_slice(&self.ids[id]);
        b.push(b'\n');
        self.w.writer().write_all(b).map_err(io("write VCD"))
    }
    fn finish(mut self: Box<Self>, end_time: u64) -> Result<(), SinkError> {
        self.w.timestamp(end_time).map_err(io("write VCD"))?;
        self.w.flush().map_err(io("flush VCD"))
    }
}
