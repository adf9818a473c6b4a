//! Directed golden sets for the Verilog PE and mesh tasks: small FP16 x FP16 + FP32 problems
//! (`ieee`, w = 1) whose operands are the special cases random operands rarely reach. Each
//! set is written like `tcrtl gemm --memh` (`a.hex` .. `d.hex`, `steps.hex`,
//! `manifest.json`), its D from the clocked core and checked against the independent
//! reference of `verify` before it is written.
//!
//! The cases follow IEEE 754 as `docs/numerics.md` states it for the model: an exact zero sum
//! is +0 unless both addends are -0; FP16 subnormals have exponent 1 and no hidden bit; any
//! NaN, Inf x 0 and Inf - Inf give the canonical NaN `0x7FC00000`; results round to nearest,
//! ties to even. An FP16 product (at most 65504^2 < 2^32) cannot push a finite FP32 sum past
//! the largest finite value: the `overflow` set checks that such sums stay at +-FLT_MAX.

use crate::dispatch::{run, Problem};
use crate::gemm::Gemm;
use crate::hw::CoreConfig;
use crate::io::golden::{write_golden, Origin};
use crate::numerics::dot::AccMode;
use crate::numerics::format::FP16;
use std::path::Path;

/// One directed set: its name, what it covers, and the problem `(m, k, n, a, b, c)`.
pub struct DirectedSet {
    /// The folder name.
    pub name: &'static str,
    /// What the set exercises.
    pub about: &'static str,
    m: usize,
    k: usize,
    n: usize,
    a: &'static [u16],
    b: &'static [u16],
    c: &'static [u32],
}

/// FP16 -0, 1, -1.
const NZ: u16 = 0x8000;
const ONE: u16 = 0x3C00;
const M1: u16 = 0xBC00;

/// Every directed set, in the order they are written.
pub const SETS: [DirectedSet; 6] = [
    DirectedSet {
        name: "signed_zeros",
        about: "products and sums of +-0: -0 + -0 = -0, every other exact zero sum +0",
        m: 4,
        k: 2,
        n: 4,
        a: &[NZ, NZ, 0, 0, NZ, 0, ONE, M1],
        b: &[0, NZ, ONE, M1, 0, NZ, ONE, ONE],
        c: &[
            0x8000_0000,
            0x8000_0000,
            0x8000_0000,
            0x8000_0000,
            0x8000_0000,
            0,
            0x8000_0000,
            0,
            0x8000_0000,
            0x8000_0000,
            0,
            0,
            0x8000_0000,
            0,
            0x8000_0000,
            0,
        ],
    },
    DirectedSet {
        name: "subnormals",
        about: "FP16 subnormal operands (exponent 1, no hidden bit) and FP32 subnormal C kept",
        m: 4,
        k: 2,
        n: 4,
        a: &[0x0001, ONE, 0x03FF, 0x8200, 0x8001, 0x0400, 0x0200, 0x0200],
        b: &[ONE, 0x4000, 0x0001, 0, ONE, 0x0200, 0x03FF, 0],
        c: &[
            0,
            0,
            0,
            0x0000_0001,
            0x3F80_0000,
            0,
            0,
            0x807F_FFFF,
            0,
            0,
            0,
            0x0000_0001,
            0x8000_0001,
            0,
            0,
            0x0040_0000,
        ],
    },
    DirectedSet {
        name: "infinities",
        about: "Inf times finite values, Inf x 0, Inf - Inf, C = +-Inf",
        m: 4,
        k: 2,
        n: 4,
        a: &[0x7C00, ONE, 0xFC00, ONE, ONE, 0x7C00, 0, ONE],
        b: &[ONE, 0, 0xFC00, 0x4000, ONE, ONE, ONE, 0x7C00],
        c: &[
            0,
            0,
            0,
            0,
            0x7F80_0000,
            0,
            0,
            0,
            0,
            0,
            0,
            0xFF80_0000,
            0x7F80_0000,
            0xFF80_0000,
            0,
            0,
        ],
    },
    DirectedSet {
        name: "nans",
        about: "quiet and signalling NaN operands and C: the canonical NaN 0x7FC00000",
        m: 2,
        k: 2,
        n: 4,
        a: &[0x7E00, ONE, ONE, 0x7D01],
        b: &[ONE, 0xFE00, 0, ONE, ONE, ONE, ONE, 0],
        c: &[0, 0, 0x7FC0_0001, 0xFFC0_0000, 0x7F80_0001, 0, 0, 0],
    },
    DirectedSet {
        name: "overflow",
        about: "the largest magnitudes: +-65504 products, C at +-FLT_MAX (sums stay finite)",
        m: 2,
        k: 2,
        n: 2,
        a: &[0x7BFF, 0x7BFF, 0xFBFF, 0x7BFF],
        b: &[0x7BFF, 0xFBFF, 0x7BFF, 0x7BFF],
        c: &[0x7F7F_FFFF, 0xFF7F_FFFF, 0x4F80_0000, 0],
    },
    DirectedSet {
        name: "ties",
        about: "sums exactly halfway between two FP32 values: round to the even one",
        m: 4,
        k: 1,
        n: 4,
        a: &[0x0C00, ONE, 0x4200, 0x1400],
        b: &[0x0C00, ONE, 0x4200, 0x3800],
        c: &[
            0x3F80_0001,
            0x4580_0000,
            0x3F80_0000,
            0x3F80_0000,
            0x3F80_0000,
            0x4B80_0000,
            0x4B80_0001,
            0x4B80_0001,
            0x4B80_0000,
            0x4B80_0001,
            0x4B80_0000,
            0x4B80_0001,
            0x3F80_0000,
            0x3F80_0000,
            0x3F80_0000,
            0x3F80_0000,
        ],
    },
];

impl DirectedSet {
    /// The set's problem on the FP16 `ieee` w = 1 core with an FP32 accumulator.
    pub fn gemm(&self) -> Result<Gemm, String> {
        let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
        Gemm::new(
            self.m,
            self.n,
            self.k,
            cfg,
            self.a.iter().map(|&w| u64::from(w)).collect(),
            self.b.iter().map(|&w| u64::from(w)).collect(),
            self.c.to_vec(),
        )
        .map_err(|e| format!("directed set {}: {e}", self.name))
    }

    /// Runs the set on the clocked core, checks D against the `verify` reference and writes
    /// the golden folder `dir` (created if missing).
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let g = self.gemm()?;
        let problem = Problem::Dense(&g);
        let done = run(problem, None, None).map_err(|e| e.to_string())?;
        let d = &done.run.out.d;
        match crate::verify::check(problem, None, d)? {
            Some(c) if c.mismatches.is_empty() => {}
            Some(c) => {
                return Err(format!(
                    "directed set {}: the core differs from {} in {} elements",
                    self.name,
                    c.reference,
                    c.mismatches.len()
                ))
            }
            None => return Err(format!("directed set {}: no reference", self.name)),
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        write_golden(dir, &g, d, None, &Origin::Pattern(self.name), None)
    }
}

/// Looks a set up by name.
pub fn find(name: &str) -> Option<&'static DirectedSet> {
    SETS.iter().find(|s| s.name == name)
}
