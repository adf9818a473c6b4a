//! `mac_mesh`: the integer MAC mesh of lab 0 (`docs/course/lab0.md`), the first design a
//! student reads: a 16-bit `seed` register stepping `seed <- 5 seed + 1` and a 4 x 4 mesh of
//! integer multiply-accumulate cells `pe_<row>_<col>` (A moves right, B moves down one cell a
//! cycle; row `r`'s left edge gets `seed + r`, column `c`'s top edge `3 seed + c`), with the
//! scopes the tensor core uses (`tensor_core.mesh.pe_<row>_<col>`).
//!
//! The testbench resets the mesh for one cycle and runs 50 cycles, checking after every edge
//! each cell's `a`, `b` and `acc` against a plain software model of the array (edge values
//! computed from the seed recurrence, one register hop per cell, wrapping 32-bit sums), and
//! `pe_0_0` against the table of lab 0 worked out by hand. The waveform (`seed` and row 0,
//! cycles 0 to 30, all values in decimal) is the one lab 0 opens.
//!
//! The design is public ([`MacMesh`]) for the engine's own tests and benchmark.

use crate::rtl::{Design, Display, Module, Reg, Result, Simulator, Visitor, Wire};
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "lab 0: 4 x 4 integer MAC mesh (seed-driven edges) vs a software array model";

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
            a: Reg::new("a", 16, 0)?
                .with_display(Display::Dec)
                .in_overview(),
            b: Reg::new("b", 16, 0)?.with_display(Display::Dec),
            acc: Reg::new("acc", 32, 0)?
                .with_display(Display::Dec)
                .in_overview(),
            prod: Wire::new("prod", 32, 0)?.with_display(Display::Dec),
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
            seed: Reg::new("seed", 16, 1)?
                .with_display(Display::Dec)
                .in_overview(),
            mesh: Mesh { pes },
        })
    }

    /// The accumulator of cell (`row`, `col`).
    pub fn acc(&self, row: usize, col: usize) -> u32 {
        self.mesh.pes[row * N + col].acc.q()
    }

    /// The registers `(a, b, acc)` of cell (`row`, `col`).
    pub fn cell(&self, row: usize, col: usize) -> (u16, u16, u32) {
        let pe = &self.mesh.pes[row * N + col];
        (pe.a.q(), pe.b.q(), pe.acc.q())
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

/// The software model's state after each cycle: `(a, b, acc)` per cell, row-major.
struct ArrayModel {
    seed: u16,
    a: [u16; 16],
    b: [u16; 16],
    acc: [u32; 16],
}

impl ArrayModel {
    /// The state after reset: seed 1, every register 0.
    fn new() -> Self {
        ArrayModel {
            seed: 1,
            a: [0; 16],
            b: [0; 16],
            acc: [0; 16],
        }
    }

    /// One clock: every cell takes its left (or edge) A and upper (or edge) B and adds their
    /// product; the seed steps.
    fn clock(&mut self) {
        let (old_a, old_b) = (self.a, self.b);
        for r in 0..4 {
            for c in 0..4 {
                let a_in = if c == 0 {
                    self.seed.wrapping_add(r as u16)
                } else {
                    old_a[r * 4 + c - 1]
                };
                let b_in = if r == 0 {
                    self.seed.wrapping_mul(3).wrapping_add(c as u16)
                } else {
                    old_b[(r - 1) * 4 + c]
                };
                let i = r * 4 + c;
                self.acc[i] = self.acc[i].wrapping_add(u32::from(a_in) * u32::from(b_in));
                self.a[i] = a_in;
                self.b[i] = b_in;
            }
        }
        self.seed = self.seed.wrapping_mul(5).wrapping_add(1);
    }
}

/// Lab 0's table, by hand: `pe_0_0.acc` in cycles 1 to 5 and 12 (`acc` of cycle c + 1 is
/// `acc + seed x 3 seed` of cycle c, mod 2^32).
const LAB0_ACC_0_0: [(u64, u32); 6] = [
    (1, 0),
    (2, 3),
    (3, 111),
    (4, 2994),
    (5, 76002),
    (12, 293_427_942),
];

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> std::result::Result<(), String> {
    tb.trace_only("seed");
    tb.trace_only("mesh.pe_0_*");
    let cfg = tb.trace().window(0, 30);
    let mut sim = Simulator::with_trace(MacMesh::<4>::new().map_err(|e| e.to_string())?, &cfg)
        .map_err(|e| e.to_string())?;
    sim.reset(1).map_err(|e| e.to_string())?;
    let mut model = ArrayModel::new();
    for _ in 0..50 {
        let cycle = sim.cycle();
        if let Some(&(_, want)) = LAB0_ACC_0_0.iter().find(|(c, _)| *c == cycle) {
            tb.check_eq(
                format!("cycle {cycle}: pe_0_0.acc (lab 0 table)"),
                sim.top().acc(0, 0),
                want,
            );
        }
        for r in 0..4 {
            for c in 0..4 {
                let i = r * 4 + c;
                let got = sim.top().cell(r, c);
                let want = (model.a[i], model.b[i], model.acc[i]);
                tb.check_eq(format!("cycle {cycle}: pe_{r}_{c} (a, b, acc)"), got, want);
            }
        }
        sim.step().map_err(|e| e.to_string())?;
        model.clock();
    }
    tb.add_cycles(sim.cycle());
    sim.finish().map_err(|e| e.to_string())?;
    Ok(())
}
