//! Small demonstration designs used by the engine's tests and benchmark, and the model for
//! writing blocks:
//!
//! - [`Demo`]: an LFSR feeding a shift register feeding a FIFO, plus a 512-bit history bus;
//! - [`MacMesh`]: an `N x N` systolic array of integer multiply-accumulate cells (A moves right,
//!   B moves down one cell per cycle) with the scopes the tensor core will use
//!   (`tensor_core.mesh.pe_<row>_<col>`).
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

/// One multiply-accumulate cell: `acc += a_in * b_in`, passing `a` right and `b` down.
pub struct MacPe {
    name: String,
    a: Reg<u16>,
    b: Reg<u16>,
    acc: Reg<u32>,
    prod: Wire<u32>,
}

impl MacPe {
    fn new(row: usize, col: usize) -> Result<Self> {
        Ok(Self {
            name: format!("pe_{row}_{col}"),
            a: Reg::new("a", 16, 0)?,
            b: Reg::new("b", 16, 0)?,
            acc: Reg::new("acc", 32, 0)?,
            prod: Wire::new("prod", 32, 0)?,
        })
    }

    #[inline]
    fn comb(&mut self, a_in: u16, b_in: u16) {
        let p = u32::from(a_in) * u32::from(b_in);
        self.prod.set(p);
        self.acc.set_d(self.acc.q().wrapping_add(p));
        self.a.set_d(a_in);
        self.b.set_d(b_in);
    }
}

impl Module for MacPe {
    fn name(&self) -> &str {
        &self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.a);
        v.reg(&mut self.b);
        v.reg(&mut self.acc);
        v.wire(&mut self.prod);
    }
}

/// The `N x N` mesh of [`MacPe`]s (scope `mesh`).
pub struct Mesh<const N: usize> {
    pes: Vec<MacPe>,
}

impl<const N: usize> Module for Mesh<N> {
    fn name(&self) -> &str {
        "mesh"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for pe in &mut self.pes {
            v.child(pe);
        }
    }
}

/// A top (`tensor_core`) with an operand generator and an `N x N` [`Mesh`]: row `r` receives
/// `seed + r` at its left edge, column `c` receives `seed * 3 + c` at its top edge.
pub struct MacMesh<const N: usize> {
    seed: Reg<u16>,
    mesh: Mesh<N>,
}

impl<const N: usize> MacMesh<N> {
    /// A fresh mesh.
    pub fn new() -> Result<Self> {
        let mut pes = Vec::with_capacity(N * N);
        for r in 0..N {
            for c in 0..N {
                pes.push(MacPe::new(r, c)?);
            }
        }
        Ok(Self {
            seed: Reg::new("seed", 16, 1)?,
            mesh: Mesh { pes },
        })
    }

    /// The accumulator of cell (`row`, `col`).
    pub fn acc(&self, row: usize, col: usize) -> u32 {
        self.mesh.pes[row * N + col].acc.q()
    }
}

impl<const N: usize> Module for MacMesh<N> {
    fn name(&self) -> &str {
        "tensor_core"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.seed);
        v.child(&mut self.mesh);
    }
}

impl<const N: usize> Design for MacMesh<N> {
    fn comb(&mut self) {
        let seed = self.seed.q();
        self.seed.set_d(seed.wrapping_mul(5).wrapping_add(1));
        let pes = &mut self.mesh.pes;
        for r in 0..N {
            for c in 0..N {
                // Neighbours' register outputs: stable during the phase.
                let a_in = if c == 0 {
                    seed.wrapping_add(r as u16)
                } else {
                    pes[r * N + c - 1].a.q()
                };
                let b_in = if r == 0 {
                    seed.wrapping_mul(3).wrapping_add(c as u16)
                } else {
                    pes[(r - 1) * N + c].b.q()
                };
                pes[r * N + c].comb(a_in, b_in);
            }
        }
    }
}
