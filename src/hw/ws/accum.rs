//! The accumulator block below a weight-stationary array (scope `accum`): one memory a
//! column (`col_<j>`, [`super::schedule::ACC_ROWS`] words of the accumulator format, with a
//! register-file read) and one adder a column, the mode's [`fold_add`].
//!
//! Each cycle column `j` may receive one partial sum from the bottom PE with its tag
//! ([`WsTag`]: which row, which fold). The first fold of an output block adds C (which
//! arrives beside the tag), later folds add the word the memory holds for the row; the sum
//! goes back to the memory, or, on the last fold, leaves as the column's word of D. So D
//! is `(((C + F_0) + F_1) + ...)`, one rounding an addition (`docs/numerics.md`).
//!
//! Energy probes ([`Accumulator::set_energy_probes`], on only in a run that estimates
//! energy): per column two wires showing its adder's inputs, `add_psum_<j>` (the partial
//! sum) and `add_acc_<j>` (C or the word the memory holds), each 0 in a cycle the column
//! adds nothing. Their toggles are the adder's input activity `--energy` charges
//! (`docs/energy.md`); without probes they are not declared, so the waves are unchanged.

use crate::hw::core::DTag;
use crate::numerics::dot::ws::fold_add;
use crate::numerics::dot::AccMode;
use crate::numerics::flags::Flags;
use crate::numerics::format::Format;
use crate::rtl::{Mem, Module, Reg, Result, Visitor, Wire};

/// The tag that travels beside a row's partial sums to the accumulator block, as typed
/// fields; [`WsTag::pack`] gives the traced 64-bit word:
///
/// | bits  | field   | meaning                                           |
/// |-------|---------|---------------------------------------------------|
/// | 0     | `valid` | a row's partial sum arrives                       |
/// | 1     | `first` | the first fold of its output block (add C)        |
/// | 2     | `last`  | the last fold (D leaves)                          |
/// | 3     | `end`   | the run's last row                                |
/// | 19:4  | `addr`  | the row's accumulator word (its row in the chunk) |
/// | 25:20 | `row`   | D's row in its output tile                        |
/// | 55:32 | `tile`  | D's output tile (`R x C` tiles, row-major)        |
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WsTag {
    /// A row's partial sum arrives.
    pub valid: bool,
    /// The first fold of its output block.
    pub first: bool,
    /// The last fold of its output block.
    pub last: bool,
    /// The run's last row.
    pub end: bool,
    /// The accumulator word of the row.
    pub addr: usize,
    /// D's row in its output tile.
    pub row: usize,
    /// D's output tile.
    pub tile: usize,
}

impl WsTag {
    /// The traced tag word (see the type's documentation).
    pub const fn pack(self) -> u64 {
        (self.valid as u64)
            | (self.first as u64) << 1
            | (self.last as u64) << 2
            | (self.end as u64) << 3
            | (self.addr as u64 & 0xFFFF) << 4
            | (self.row as u64 & 0x3F) << 20
            | (self.tile as u64 & 0xFF_FFFF) << 32
    }

    /// The tag of a word written by [`WsTag::pack`].
    pub const fn unpack(w: u64) -> WsTag {
        WsTag {
            valid: w & 1 != 0,
            first: w >> 1 & 1 != 0,
            last: w >> 2 & 1 != 0,
            end: w >> 3 & 1 != 0,
            addr: (w >> 4 & 0xFFFF) as usize,
            row: (w >> 20 & 0x3F) as usize,
            tile: (w >> 32 & 0xFF_FFFF) as usize,
        }
    }
}

/// The accumulator block.
pub struct Accumulator {
    mode: AccMode,
    acc: Format,
    cols: Vec<Mem<u32>>,
    flags: Reg<u8>,
    /// A partial sum and its tag disagreed on whether a row arrived (a timing bug; sticky).
    misaligned: Reg<bool>,
    /// The energy probes, per column: the adder's partial-sum and accumulated inputs
    /// (declared only with `probes`).
    add_psum: Vec<Wire<u32>>,
    add_acc: Vec<Wire<u32>>,
    probes: bool,
}

/// What enters column `j` of the accumulator block in one cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct AccIn {
    /// The tag word ([`WsTag::pack`]).
    pub tag: u64,
    /// The C word beside it (read on the first fold).
    pub c: u32,
    /// The bottom PE's partial sum and whether it carries a row.
    pub psum: (u32, bool),
}

impl Accumulator {
    /// The block of an array of `cols` columns, `depth` words a column, adding in `mode`
    /// into the accumulator format `acc`.
    pub fn new(mode: AccMode, acc: Format, cols: usize, depth: usize) -> Result<Self> {
        Ok(Self {
            mode,
            acc,
            cols: (0..cols)
                .map(|j| Mem::new(format!("col_{j}"), depth, acc.width()))
                .collect::<Result<Vec<_>>>()?,
            flags: Reg::new("flags", 4, 0)?,
            misaligned: Reg::new("misaligned", 1, false)?,
            add_psum: (0..cols)
                .map(|j| Wire::new(format!("add_psum_{j}"), acc.width(), 0))
                .collect::<Result<Vec<_>>>()?,
            add_acc: (0..cols)
                .map(|j| Wire::new(format!("add_acc_{j}"), acc.width(), 0))
                .collect::<Result<Vec<_>>>()?,
            probes: false,
        })
    }

    /// Declares (or not) the energy probes `add_psum_<j>` and `add_acc_<j>` (see the
    /// module's documentation); set before the design is elaborated.
    pub fn set_energy_probes(&mut self, on: bool) {
        self.probes = on;
    }

    /// The IEEE flags the adders raised (sticky).
    pub fn flags(&self) -> Flags {
        Flags::from_bits(self.flags.q())
    }

    /// True if a partial sum and its tag ever arrived apart.
    pub fn misaligned(&self) -> bool {
        self.misaligned.q()
    }

    /// The settle half of the combinational phase, from register outputs and settled inputs
    /// only: column `j` takes `inputs[j]` and drives `out[j]`, its word of D and the D tag
    /// ([`DTag`], row field `row_bits` wide) when a last fold completes a row, `(0, 0)`
    /// otherwise; what the block's registers and memories take at the edge goes to `next`
    /// ([`Accumulator::update`] posts it).
    pub fn settle(
        &self,
        inputs: &[AccIn],
        row_bits: u32,
        out: &mut [(u32, u64)],
        next: &mut AccNext,
    ) {
        let mut flags = Flags::from_bits(self.flags.q());
        next.misaligned = false;
        let probes = self.probes;
        if probes {
            next.adds.clear();
            next.adds.resize(self.cols.len(), (0, 0));
        }
        for (j, (((mem, i), o), w)) in self
            .cols
            .iter()
            .zip(inputs)
            .zip(out.iter_mut())
            .zip(next.writes.iter_mut())
            .enumerate()
        {
            let tag = WsTag::unpack(i.tag);
            next.misaligned |= tag.valid != i.psum.1;
            *o = (0, 0);
            *w = None;
            if !tag.valid {
                continue;
            }
            let x = if tag.first { i.c } else { mem.peek(tag.addr) };
            if probes {
                next.adds[j] = (i.psum.0, x);
            }
            let (sum, f) = fold_add(&self.mode, self.acc, x, i.psum.0);
            flags |= f;
            if tag.last {
                let d = DTag {
                    valid: true,
                    row: tag.row,
                    last: tag.end,
                    tile: tag.tile,
                };
                *o = (sum, d.pack(row_bits));
            } else {
                *w = Some((tag.addr, sum));
            }
        }
        next.flags = flags.to_bits();
    }

    /// The update half: posts the memory writes and the registers' next values that
    /// [`Accumulator::settle`] found.
    pub fn update(&mut self, next: &AccNext) {
        for (mem, w) in self.cols.iter_mut().zip(&next.writes) {
            if let Some((addr, sum)) = *w {
                mem.write(addr, &[sum]);
            }
        }
        if next.flags != self.flags.q() {
            self.flags.set_d(next.flags);
        }
        if next.misaligned {
            self.misaligned.set_d(true);
        }
        if self.probes {
            for ((p, a), &(psum, acc)) in self
                .add_psum
                .iter_mut()
                .zip(self.add_acc.iter_mut())
                .zip(&next.adds)
            {
                p.set(psum);
                a.set(acc);
            }
        }
    }
}

/// What the accumulator block takes at the next edge, settled before it updates: one
/// memory write a column (address, word) or none, the sticky flags, a misaligned arrival.
#[derive(Clone, Debug, Default)]
pub struct AccNext {
    writes: Vec<Option<(usize, u32)>>,
    flags: u8,
    misaligned: bool,
    /// Each column's adder inputs (partial sum, accumulated word), 0 without an addition;
    /// filled only with the energy probes.
    adds: Vec<(u32, u32)>,
}

impl AccNext {
    /// The buffer of a block of `cols` columns.
    pub fn new(cols: usize) -> Self {
        Self {
            writes: vec![None; cols],
            ..Self::default()
        }
    }
}

impl Module for Accumulator {
    fn name(&self) -> &str {
        "accum"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for m in &mut self.cols {
            v.mem(m);
        }
        v.reg(&mut self.flags);
        v.reg(&mut self.misaligned);
        if self.probes {
            for (p, a) in self.add_psum.iter_mut().zip(&mut self.add_acc) {
                v.wire(p);
                v.wire(a);
            }
        }
    }
}
