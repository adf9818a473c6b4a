//! A small demonstration design used by the engine's tests and benchmark, and the model for
//! writing blocks: [`Demo`], an LFSR feeding a shift register feeding a FIFO, plus a 512-bit
//! history bus. (The integer MAC mesh of lab 0 is the `mac_mesh` testbench,
//! [`crate::tb::mac_mesh`].)
//!
//! Each block keeps its registers and wires as private fields, reads its own `q`s and the
//! arguments of its `comb` method, and writes its own `d`s and wires.

use super::error::Result;
use super::module::{Design, Module, Visitor};
use super::reg::Reg;
use super::value::Wide;
use super::wire::{Input, Wire};

/// A 16-bit Galois LFSR (taps 0xB400, maximal length).
pub struct Lfsr {
    state: Reg<u16>,
    feedback: Wire<bool>,
}

impl Lfsr {
    fn new() -> Result<Self> {
        Ok(Self {
            state: Reg::new("state", 16, 0xACE1)?,
            feedback: Wire::new("feedback", 1, false)?,
        })
    }

    /// Advances when `enable`.
    fn comb(&mut self, enable: bool) {
        let s = self.state.q();
        let fb = s & 1 == 1;
        self.feedback.set(fb);
        if enable {
            self.state.set_d((s >> 1) ^ if fb { 0xB400 } else { 0 });
        }
    }

    /// The current pseudo-random word.
    pub fn value(&self) -> u16 {
        self.state.q()
    }
}

impl Module for Lfsr {
    fn name(&self) -> &str {
        "lfsr"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.state);
        v.wire(&mut self.feedback);
    }
}

/// A chain of 16-bit registers, one stage per cycle.
pub struct ShiftReg {
    stages: Vec<Reg<u16>>,
}

impl ShiftReg {
    fn new(depth: usize) -> Result<Self> {
        let stages = (0..depth)
            .map(|i| Reg::new(format!("stage_{i}"), 16, 0))
            .collect::<Result<_>>()?;
        Ok(Self { stages })
    }

    fn comb(&mut self, enable: bool, input: u16) {
        if !enable {
            return;
        }
        // Each stage reads its predecessor's q (stable this cycle): any order gives the same d.
        for i in (0..self.stages.len()).rev() {
            let v = if i == 0 {
                input
            } else {
                self.stages[i - 1].q()
            };
            self.stages[i].set_d(v);
        }
    }

    /// The last stage's output.
    pub fn out(&self) -> u16 {
        self.stages.last().map_or(0, Reg::q)
    }
}

impl Module for ShiftReg {
    fn name(&self) -> &str {
        "shift"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for s in &mut self.stages {
            v.reg(s);
        }
    }
}

/// A 4-entry, 16-bit FIFO with a registered output.
pub struct Fifo {
    mem: [Reg<u16>; 4],
    wr_ptr: Reg<u8>,
    rd_ptr: Reg<u8>,
    count: Reg<u8>,
    dout: Reg<u16>,
    popped: Reg<u32>,
    full: Wire<bool>,
    empty: Wire<bool>,
}

impl Fifo {
    fn new() -> Result<Self> {
        Ok(Self {
            mem: [
                Reg::new("mem_0", 16, 0)?,
                Reg::new("mem_1", 16, 0)?,
                Reg::new("mem_2", 16, 0)?,
                Reg::new("mem_3", 16, 0)?,
            ],
            wr_ptr: Reg::new("wr_ptr", 2, 0)?,
            rd_ptr: Reg::new("rd_ptr", 2, 0)?,
            count: Reg::new("count", 3, 0)?,
            dout: Reg::new("dout", 16, 0)?,
            popped: Reg::new("popped", 32, 0)?,
            full: Wire::new("full", 1, false)?,
            empty: Wire::new("empty", 1, true)?,
        })
    }

    fn comb(&mut self, push: bool, pop: bool, din: u16) {
        let count = self.count.q();
        let full = count == 4;
        let empty = count == 0;
        self.full.set(full);
        self.empty.set(empty);
        let do_push = push && !full;
        let do_pop = pop && !empty;
        if do_push {
            let w = self.wr_ptr.q();
            self.mem[usize::from(w & 3)].set_d(din);
            self.wr_ptr.set_d(w.wrapping_add(1));
        }
        if do_pop {
            let r = self.rd_ptr.q();
            self.dout.set_d(self.mem[usize::from(r & 3)].q());
            self.rd_ptr.set_d(r.wrapping_add(1));
            self.popped.set_d(self.popped.q().wrapping_add(1));
        }
        self.count
            .set_d(count + u8::from(do_push) - u8::from(do_pop));
    }

    /// Entries held.
    pub fn count(&self) -> u8 {
        self.count.q()
    }

    /// Words popped so far.
    pub fn popped(&self) -> u32 {
        self.popped.q()
    }
}

impl Module for Fifo {
    fn name(&self) -> &str {
        "fifo"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for m in &mut self.mem {
            v.reg(m);
        }
        v.reg(&mut self.wr_ptr);
        v.reg(&mut self.rd_ptr);
        v.reg(&mut self.count);
        v.reg(&mut self.dout);
        v.reg(&mut self.popped);
        v.wire(&mut self.full);
        v.wire(&mut self.empty);
    }
}

/// The demo top: LFSR -> shift register -> FIFO (pushed when LFSR bit 0 is set, popped when
/// bit 1 is set), and a 512-bit `history` bus that shifts in each LFSR word.
///
/// `order` sets the order in which the children's combinational phases run; any permutation
/// of `[0, 1, 2]` gives identical results, which the engine's tests check.
pub struct Demo {
    name: String,
    enable: Input<bool>,
    lfsr: Lfsr,
    shift: ShiftReg,
    fifo: Fifo,
    history: Reg<Wide<8>>,
    order: [usize; 3],
}

impl Demo {
    /// A demo design named `name` with a `depth`-stage shift register.
    pub fn new(name: &str, depth: usize) -> Result<Self> {
        Ok(Self {
            name: name.to_string(),
            enable: Input::new("enable", 1, true)?,
            lfsr: Lfsr::new()?,
            shift: ShiftReg::new(depth.max(1))?,
            fifo: Fifo::new()?,
            history: Reg::new("history", 512, Wide::ZERO)?,
            order: [0, 1, 2],
        })
    }

    /// Sets the evaluation order of the children's combinational phases (a permutation of
    /// `0..3`; other values are ignored).
    pub fn set_order(&mut self, order: [usize; 3]) {
        self.order = order;
    }

    /// Drives the `enable` input (when low nothing moves).
    pub fn set_enable(&mut self, on: bool) {
        self.enable.set(on);
    }

    /// The FIFO.
    pub fn fifo(&self) -> &Fifo {
        &self.fifo
    }

    /// The LFSR.
    pub fn lfsr(&self) -> &Lfsr {
        &self.lfsr
    }

    /// The 512-bit history bus.
    pub fn history(&self) -> Wide<8> {
        self.history.q()
    }
}

impl Module for Demo {
    fn name(&self) -> &str {
        &self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.input(&mut self.enable);
        v.reg(&mut self.history);
        v.child(&mut self.lfsr);
        v.child(&mut self.shift);
        v.child(&mut self.fifo);
    }
}

impl Design for Demo {
    fn comb(&mut self) {
        let en = self.enable.get();
        // Inputs of every child come from register outputs, stable for the whole phase.
        let rnd = self.lfsr.value();
        let din = self.shift.out();
        let (push, pop) = (en && rnd & 1 == 1, en && rnd & 2 == 2);
        for &k in &self.order {
            match k {
                0 => self.lfsr.comb(en),
                1 => self.shift.comb(en, rnd),
                2 => self.fifo.comb(push, pop, din),
                _ => {}
            }
        }
        if en {
            let mut h = self.history.q();
            h.bits_mut().shift_end(16);
            h.set_field(0, 16, u64::from(rnd));
            self.history.set_d(h);
        }
    }

    fn state(&self) -> String {
        format!(
            "enable={} lfsr={:#06x} fifo.count={} fifo.popped={}",
            self.enable.get(),
            self.lfsr.value(),
            self.fifo.count(),
            self.fifo.popped()
        )
    }
}
