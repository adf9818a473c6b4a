//! A run's energy: the counted events (multiplier and adder input toggles, register bit
//! toggles, memory bytes and requests) times the table's energies ([`estimate`]).
//!
//! The rules (restated with their reasons in `docs/energy.md`):
//! - **Arithmetic scales with its input activity.** Dynamic energy is `C * V^2` per node
//!   transition, so a unit whose inputs do not change does (to first order) no work. The table's
//!   figures are for random operands, whose bits toggle half the time; a unit is charged its
//!   figure per *expected* random input toggle count: multipliers by the toggles of their
//!   operands, at `mul / ((bits_a + bits_b) / 2)` per toggle; an adder (align, add, normalise,
//!   round) by the toggles of its inputs, at `add / ((bits_x + bits_y) / 2)` per toggle. An
//!   operand held for K steps, or zero, costs almost nothing; random data costs the table's
//!   figure per operation.
//! - **Registers** are charged per bit toggle, by block (the scope they sit in).
//! - **Wires** other than the arithmetic inputs are not charged: their energy is part of the
//!   unit that drives them, already counted.
//! - **Memory** (with the TMA memory path): shared memory per byte read or written (64-bit
//!   SRAM reads at its capacity), global memory per byte moved, the TMA per request.
//!
//! Which signals are an arithmetic unit's inputs depends on the core (`toggle_blocks`):
//! - output-stationary: the PEs' operand inputs `a_in`, `b_in` (multipliers); the stage-1
//!   product register `s1_prod` and the accumulators `acc_0`, `acc_1` (adders);
//! - weight-stationary: the PEs' multiplier operands `a_mul`, `w_mul` (energy probes, 0 when
//!   the PE forms no product: the weight held for a pass toggles only when the pass changes);
//!   `s1_prod` and the partial sum from above `psum_in` (the PEs' adders, one a product); the
//!   accumulator block's adder inputs `add_psum_<j>`, `add_acc_<j>` (the block `accumulator`:
//!   the adds of the K-folds and C, two accumulator-format inputs).

use serde::Serialize;

use super::table::Tech;
use crate::hw::Dataflow;
use crate::rtl::ActivityReport;

/// What the multipliers multiply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MulKind {
    /// Floating-point significands of `p_a` and `p_b` bits (hidden bit included), exponents
    /// of at most `e` bits.
    Float {
        /// Significand bits of A.
        p_a: u32,
        /// Significand bits of B.
        p_b: u32,
        /// The wider exponent's bits.
        e: u32,
    },
    /// Integers of `a` and `b` bits.
    Int {
        /// Bits of A.
        a: u32,
        /// Bits of B.
        b: u32,
    },
}

/// The accumulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccKind {
    /// A floating-point accumulator of 16 or 32 bits.
    Float(u32),
    /// A 32-bit integer accumulator.
    Int32,
}

/// The memory path's events (with `--memory tma`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MemoryEvents {
    /// Bytes read from and written to global memory.
    pub gmem_bytes: u64,
    /// Bytes read from and written to shared memory.
    pub smem_bytes: u64,
    /// Shared memory's capacity in bytes (the SRAM size its reads are charged at).
    pub smem_capacity: u64,
    /// TMA requests to global memory.
    pub tma_requests: u64,
}

/// Everything an estimate reads from a run.
#[derive(Debug, Clone, Copy)]
pub struct EnergyInputs<'a> {
    /// Useful multiply-accumulates (`M * N * K`).
    pub macs: u64,
    /// Cycles the run took.
    pub cycles: u64,
    /// The multiplier and its operands' storage widths in bits (A, B).
    pub mul: MulKind,
    /// Storage bits of an A and of a B element.
    pub operand_bits: (u32, u32),
    /// The accumulator.
    pub acc: AccKind,
    /// Every signal's toggles (the run traced with activity counted).
    pub activity: &'a ActivityReport,
    /// The memory path's events, if the run went through it.
    pub memory: Option<MemoryEvents>,
    /// The core that ran (which signals are its arithmetic units' inputs, which blocks it
    /// has: [`blocks_of`]).
    pub dataflow: Dataflow,
}

/// One block's share.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockEnergy {
    /// The block (`multipliers`, `adders`, `pe_registers`, ...).
    pub block: &'static str,
    /// Its energy in picojoules.
    pub pj: f64,
    /// The count it was charged for.
    pub count: u64,
    /// What `count` counts (`operand bit toggles`, `register bit toggles`, `bytes`, ...).
    pub unit: &'static str,
    /// Picojoules per counted event.
    pub pj_each: f64,
}

/// A run's energy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnergyReport {
    /// The technology's name.
    pub tech: &'static str,
    /// The clock the power is given at, in GHz.
    pub clock_ghz: f64,
    /// Total energy in picojoules.
    pub total_pj: f64,
    /// Total energy per useful MAC.
    pub pj_per_mac: f64,
    /// Average power at the clock, in watts.
    pub power_w: f64,
    /// The MACs and cycles the figures are per.
    pub macs: u64,
    /// See [`EnergyReport::macs`].
    pub cycles: u64,
    /// The blocks of the core ([`blocks_of`]), in a fixed order (arithmetic, registers,
    /// memory); a block with no events is listed with zero.
    pub by_block: Vec<BlockEnergy>,
}

impl EnergyReport {
    /// The energy of the block named `block` (0 if absent).
    pub fn block(&self, block: &str) -> f64 {
        self.by_block
            .iter()
            .find(|b| b.block == block)
            .map_or(0.0, |b| b.pj)
    }

    /// The arithmetic energy (multipliers and adders, the weight-stationary accumulator
    /// block's adders included).
    pub fn arithmetic_pj(&self) -> f64 {
        self.block("multipliers") + self.block("adders") + self.block("accumulator")
    }

    /// The energy of several runs made one after another on one technology and clock (a
    /// testbench's GEMMs): every block's count and energy summed, its energy per event their
    /// ratio (runs of different formats charge different amounts), the MACs and cycles summed,
    /// and the power over the runs' total time. Blocks are matched by name: a block only some
    /// runs have (the weight-stationary `accumulator`) is listed where its first run lists
    /// it. `None` for no runs, or runs whose table or clock differ.
    pub fn combine(reports: &[EnergyReport]) -> Option<EnergyReport> {
        let first = reports.first()?;
        if reports
            .iter()
            .any(|r| r.tech != first.tech || r.clock_ghz != first.clock_ghz)
        {
            return None;
        }
        let mut by_block = first.by_block.clone();
        for r in &reports[1..] {
            for (i, b) in r.by_block.iter().enumerate() {
                match by_block.iter_mut().find(|s| s.block == b.block) {
                    Some(sum) => {
                        sum.pj += b.pj;
                        sum.count += b.count;
                    }
                    None => {
                        // After the block that precedes it in this run, if listed.
                        let at = i
                            .checked_sub(1)
                            .and_then(|p| {
                                let before = r.by_block[p].block;
                                by_block.iter().position(|s| s.block == before)
                            })
                            .map_or(by_block.len(), |p| p + 1);
                        by_block.insert(at, b.clone());
                    }
                }
            }
        }
        for b in &mut by_block {
            if b.count > 0 {
                b.pj_each = b.pj / b.count as f64;
            }
        }
        let macs: u64 = reports.iter().map(|r| r.macs).sum();
        let cycles: u64 = reports.iter().map(|r| r.cycles).sum();
        Some(Self::of_blocks(
            first.tech,
            first.clock_ghz,
            macs,
            cycles,
            by_block,
        ))
    }

    /// The report of `by_block` for `macs` MACs in `cycles` cycles at `clock_ghz`: the total,
    /// per MAC (0 without MACs) and the average power (0 without cycles).
    fn of_blocks(
        tech: &'static str,
        clock_ghz: f64,
        macs: u64,
        cycles: u64,
        by_block: Vec<BlockEnergy>,
    ) -> EnergyReport {
        let total_pj: f64 = by_block.iter().map(|b| b.pj).sum();
        let seconds = cycles as f64 / (clock_ghz * 1e9);
        EnergyReport {
            tech,
            clock_ghz,
            total_pj,
            pj_per_mac: if macs > 0 {
                total_pj / macs as f64
            } else {
                0.0
            },
            power_w: if seconds > 0.0 {
                total_pj * 1e-12 / seconds
            } else {
                0.0
            },
            macs,
            cycles,
            by_block,
        }
    }
}

/// Whether a signal's path lies in a block.
type InBlock = fn(&str) -> bool;

/// Every block of either core (indices: `block_index`); a core's report lists those of
/// [`blocks_of`], in that order.
pub const BLOCKS: [&str; 10] = [
    "multipliers",
    "adders",
    "pe_registers",
    "skew",
    "memory_control",
    "controller",
    "shared_memory",
    "global_memory",
    "tma",
    "accumulator",
];

/// Indices into [`BLOCKS`].
pub(crate) mod block_index {
    pub const MULTIPLIERS: usize = 0;
    pub const ADDERS: usize = 1;
    pub const FIRST_REGISTERS: usize = 2;
    pub const SHARED_MEMORY: usize = 6;
    pub const GLOBAL_MEMORY: usize = 7;
    pub const TMA: usize = 8;
    pub const ACCUMULATOR: usize = 9;
}

/// The blocks of a core's report, as indices into [`BLOCKS`], in the report's order: the
/// output-stationary core's nine; the weight-stationary core's the same with its
/// accumulator block's adders (`accumulator`) after the PEs' `adders`.
pub fn blocks_of(dataflow: Dataflow) -> &'static [usize] {
    match dataflow {
        Dataflow::Os => &[0, 1, 2, 3, 4, 5, 6, 7, 8],
        Dataflow::Ws | Dataflow::Is => &[0, 1, 9, 2, 3, 4, 5, 6, 7, 8],
    }
}

/// The register blocks (from [`block_index::FIRST_REGISTERS`] on), by the scope a register
/// sits in: the first whose test matches.
const REGISTER_BLOCKS: [InBlock; 4] = [
    |p| p.contains(".mesh."),
    |p| {
        in_any(
            p,
            &[
                "a_skew",
                "b_skew",
                "c_skew",
                "d_deskew",
                "meta_skew",
                "xa_skew",
                "xb_skew",
            ],
        )
    },
    |p| p.contains(".mem."),
    |_| true,
];

/// The stationary core's register blocks (`ws`, `is`), as [`REGISTER_BLOCKS`]: its skews
/// and delay lines are the streaming operand's row skew (`a_skew` in `ws`, `b_skew` in
/// `is`), the held operand's load skew (`w_skew`, `a_skew`), the row tag's delay, the tag
/// and C skew to the accumulator columns, the result de-skew, and what travels beside the
/// operands (2:4 selects, MX block scales).
const WS_REGISTER_BLOCKS: [InBlock; 4] = [
    |p| p.contains(".mesh."),
    |p| {
        in_any(
            p,
            &[
                "a_skew",
                "b_skew",
                "w_skew",
                "tag_delay",
                "acc_skew",
                "d_deskew",
                "meta_skew",
                "xa_skew",
                "xb_skew",
            ],
        )
    },
    |p| p.contains(".mem."),
    |_| true,
];

/// Whether `path` lies in a scope named one of `scopes`.
fn in_any(path: &str, scopes: &[&str]) -> bool {
    scopes.iter().any(|s| {
        path.match_indices(s)
            .any(|(i, _)| path[..i].ends_with('.') && path[i + s.len()..].starts_with('.'))
    })
}

/// The last component of a signal's path.
fn leaf(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// Whether `path` is a signal of a PE.
fn in_pe(path: &str) -> bool {
    path.contains(".mesh.pe_")
}

/// The output-stationary PEs' multiplier inputs and adder inputs (see the module's text).
const OS_MULTIPLIER_INPUTS: [&str; 2] = ["a_in", "b_in"];
const OS_ADDER_INPUTS: [&str; 3] = ["s1_prod", "acc_0", "acc_1"];
/// The stationary PEs' multiplier inputs (`a_mul` and `w_mul` in `ws`, `b_mul` and `a_mul`
/// in `is`) and adder inputs, and the prefixes of its accumulator block's adder inputs
/// (`add_psum_<j>`, `add_acc_<j>`).
const WS_MULTIPLIER_INPUTS: [&str; 3] = ["a_mul", "w_mul", "b_mul"];
const WS_ADDER_INPUTS: [&str; 2] = ["s1_prod", "psum_in"];
const WS_ACCUMULATOR_INPUTS: [&str; 2] = ["add_psum_", "add_acc_"];

/// The signals an estimate of a `dataflow` core charges besides its registers, as trace
/// globs ([`crate::rtl::TraceConfig::glob`]): every arithmetic unit's inputs (some of them
/// wires, the rest registers). A trace that selects every register and these
/// ([`crate::rtl::TraceConfig::registers`]) counts every toggle [`estimate`] reads.
pub fn charged_globs(dataflow: Dataflow) -> Vec<String> {
    let pe = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("mesh.pe_*.{n}"))
            .collect::<Vec<_>>()
    };
    match dataflow {
        Dataflow::Os => [pe(&OS_MULTIPLIER_INPUTS), pe(&OS_ADDER_INPUTS)].concat(),
        Dataflow::Ws | Dataflow::Is => [
            pe(&WS_MULTIPLIER_INPUTS),
            pe(&WS_ADDER_INPUTS),
            WS_ACCUMULATOR_INPUTS
                .iter()
                .map(|p| format!("accum.{p}*"))
                .collect(),
        ]
        .concat(),
    }
}

/// The blocks a toggle of signal `path` (a register or not) of a `dataflow` core is charged
/// to: an arithmetic unit's input (see the module's documentation), a register's block,
/// both, or none (every other wire).
pub(crate) fn toggle_blocks(
    path: &str,
    register: bool,
    dataflow: Dataflow,
) -> impl Iterator<Item = usize> {
    let name = leaf(path);
    let (arithmetic, registers) = match dataflow {
        Dataflow::Os => (
            match in_pe(path) {
                true if OS_MULTIPLIER_INPUTS.contains(&name) => Some(block_index::MULTIPLIERS),
                true if OS_ADDER_INPUTS.contains(&name) => Some(block_index::ADDERS),
                _ => None,
            },
            &REGISTER_BLOCKS,
        ),
        Dataflow::Ws | Dataflow::Is => (
            match in_pe(path) {
                true if WS_MULTIPLIER_INPUTS.contains(&name) => Some(block_index::MULTIPLIERS),
                true if WS_ADDER_INPUTS.contains(&name) => Some(block_index::ADDERS),
                false
                    if path.contains(".accum.")
                        && WS_ACCUMULATOR_INPUTS.iter().any(|p| name.starts_with(p)) =>
                {
                    Some(block_index::ACCUMULATOR)
                }
                _ => None,
            },
            &WS_REGISTER_BLOCKS,
        ),
    };
    let register = register
        .then(|| registers.iter().position(|f| f(path)))
        .flatten()
        .map(|i| block_index::FIRST_REGISTERS + i);
    arithmetic.into_iter().chain(register)
}

/// Picojoules per toggle of each toggle-charged block (see the module's rules): the
/// multipliers' per operand bit, the PEs' adders' per input bit (`product_bits`: the
/// stage-1 product register's width, beside an accumulator-format input), the accumulator
/// block's adders' per input bit (two accumulator-format inputs), a register bit's. The
/// memory blocks' entries are 0.
pub(crate) fn toggle_energies(
    tech: &Tech,
    mul: MulKind,
    operand_bits: (u32, u32),
    acc: AccKind,
    product_bits: u32,
) -> [f64; BLOCKS.len()] {
    let mul_pj = match mul {
        MulKind::Float { p_a, p_b, e } => tech.fp_mul(p_a, p_b, e),
        MulKind::Int { a, b } => tech.int_mul(a, b),
    };
    let (add_pj, acc_bits) = match acc {
        AccKind::Float(16) => (tech.fp16_add, 16),
        AccKind::Float(_) => (tech.fp32_add, 32),
        AccKind::Int32 => (tech.int32_add, 32),
    };
    let mut each = [0.0; BLOCKS.len()];
    // Random operands toggle half their bits per operation: the table's figure per half.
    each[block_index::MULTIPLIERS] = mul_pj / (f64::from(operand_bits.0 + operand_bits.1) / 2.0);
    each[block_index::ADDERS] = add_pj / (f64::from(product_bits + acc_bits) / 2.0);
    each[block_index::ACCUMULATOR] = add_pj / f64::from(acc_bits);
    for e in &mut each[block_index::FIRST_REGISTERS..block_index::SHARED_MEMORY] {
        *e = tech.reg_bit_toggle;
    }
    each
}

/// The estimate of a run at `clock_ghz` (> 0) with the energies of `tech`.
pub fn estimate(inputs: &EnergyInputs<'_>, tech: &Tech, clock_ghz: f64) -> EnergyReport {
    let act = inputs.activity;
    let each = toggle_energies(
        tech,
        inputs.mul,
        inputs.operand_bits,
        inputs.acc,
        product_width(act),
    );
    let mut counts = [0u64; BLOCKS.len()];
    for s in &act.signals {
        for b in toggle_blocks(&s.path, s.register, inputs.dataflow) {
            counts[b] += s.total_toggles();
        }
    }
    let mem = inputs.memory.unwrap_or(MemoryEvents {
        gmem_bytes: 0,
        smem_bytes: 0,
        smem_capacity: 0,
        tma_requests: 0,
    });
    let smem_byte = tech.sram_read64_at(mem.smem_capacity as f64) / 8.0;
    let by_block = blocks_of(inputs.dataflow)
        .iter()
        .map(|&i| (i, BLOCKS[i]))
        .map(|(i, name)| match i {
            block_index::MULTIPLIERS => block(name, counts[i], "operand bit toggles", each[i]),
            block_index::ADDERS | block_index::ACCUMULATOR => {
                block(name, counts[i], "adder input bit toggles", each[i])
            }
            block_index::SHARED_MEMORY => block(name, mem.smem_bytes, "bytes", smem_byte),
            block_index::GLOBAL_MEMORY => block(name, mem.gmem_bytes, "bytes", tech.dram_byte),
            block_index::TMA => block(name, mem.tma_requests, "requests", tech.tma_request),
            _ => block(name, counts[i], "register bit toggles", each[i]),
        })
        .collect::<Vec<_>>();
    EnergyReport::of_blocks(tech.name, clock_ghz, inputs.macs, inputs.cycles, by_block)
}

/// One block's entry.
fn block(block: &'static str, count: u64, unit: &'static str, pj_each: f64) -> BlockEnergy {
    BlockEnergy {
        block,
        pj: count as f64 * pj_each,
        count,
        unit,
        pj_each,
    }
}

/// The width of one PE's stage-1 product register (per PE: every PE's is the same), or 32
/// when the trace holds none.
fn product_width(act: &ActivityReport) -> u32 {
    act.signals
        .iter()
        .find(|s| in_pe(&s.path) && leaf(&s.path) == "s1_prod")
        .map_or(32, |s| s.width)
}
