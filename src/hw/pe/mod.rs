//! The processing element: operands in from the left (A) and the top (B), passed on through
//! registers; a two-stage dot-product datapath of width `W` into one of two accumulators; a
//! column shift path through the idle accumulator for C preload and drain.
//!
//! The PE is generic over its datapath ([`Datapath`]): what stage 1 multiplies, what its
//! register holds, what stage 2 adds into the accumulator, and what travels beside A and B.
//! The datapath is chosen once, when the core is built (as the lane count `W` is), so no PE
//! tests its mode in the clock loop:
//!
//! | datapath             | mode                          | beside A       | beside B  |
//! |----------------------|-------------------------------|----------------|-----------|
//! | [`fp::FpPath`]       | `ieee`, `fused`, `nvidia`     | -              | -         |
//! | [`int::IntPath`]     | integer MMA                   | -              | -         |
//! | [`sparse::Sparse`]   | 2:4 sparse over `FpPath`      | metadata       | -         |
//! | [`mx::MxPath`]       | MX block-scaled (`fused`)     | A block scale  | B's scale |
//!
//! Pipeline (`L` = [`crate::hw::PIPELINE_LATENCY`] = 1):
//! - cycle `t` (stage 1): `a_in`/`b_in` enter; the datapath multiplies the `W` lanes exactly
//!   and the products are latched in `s1_prod` (a typed register: the products unpacked, the
//!   packed layout only its trace encoding) with the control word in `s1_ctl`; `a_in`/`b_in`
//!   are latched in `a_out`/`b_out` for the right/lower neighbour.
//! - cycle `t + 1` (stage 2): the datapath adds the registered products into accumulator
//!   `acc_<set>`; the result is latched at the edge.
//!
//! A PE does not know where it sits: the mesh wires its inputs.

pub mod fp;
pub mod harness;
pub mod int;
pub mod mx;
pub mod sparse;

use crate::numerics::flags::Flags;
use crate::rtl::{Display, Link, Module, NextWire, RegBank, Result, Value, Visitor, Wide, Wire};

pub use fp::FpPath;
pub use int::IntPath;
pub use mx::MxPath;
pub use sparse::{sparse_b_lanes, Sparse};

/// Control word travelling with A: number of valid lanes (0..=32).
pub const CTL_LANES: u16 = 0x3F;
/// Control bit: the last step of a tile.
pub const CTL_LAST: u16 = 1 << 6;
/// Control bit: the last step of an NVIDIA block (fire the block FMA).
pub const CTL_FIRE: u16 = 1 << 7;
/// Control bit: the accumulator set of this tile.
pub const CTL_SET: u16 = 1 << 8;
/// Control bit: this row carries data (the A row is inside the problem).
pub const CTL_VALID: u16 = 1 << 9;
/// Width of the control word.
pub const CTL_BITS: u32 = 10;

/// The control bundle travelling with A (`a_ctl`, and `s1_ctl` in stage 1): its fields read
/// through accessors from the 10-bit word the registers hold and the waves show
/// ([`CTL_BITS`]), so passing it on, or clearing `valid`, is one word's move:
///
/// | bits | field   | constant      |
/// |------|---------|---------------|
/// | 5:0  | `lanes` | [`CTL_LANES`] |
/// | 6    | `last`  | [`CTL_LAST`]  |
/// | 7    | `fire`  | [`CTL_FIRE`]  |
/// | 8    | `set`   | [`CTL_SET`]   |
/// | 9    | `valid` | [`CTL_VALID`] |
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct ACtl(u16);

impl ACtl {
    /// The bundle of these fields: `lanes` valid lanes of this step (0..=32; the word keeps
    /// its low 6 bits), the last step of a tile, the last step of an NVIDIA block (fire the
    /// block FMA), the accumulator set of this tile, and whether the row carries data.
    pub const fn new(lanes: u8, last: bool, fire: bool, set: bool, valid: bool) -> ACtl {
        ACtl(
            (lanes as u16 & CTL_LANES)
                | if last { CTL_LAST } else { 0 }
                | if fire { CTL_FIRE } else { 0 }
                | if set { CTL_SET } else { 0 }
                | if valid { CTL_VALID } else { 0 },
        )
    }

    /// Valid lanes of this step (0..=32).
    #[inline(always)]
    pub const fn lanes(self) -> u8 {
        (self.0 & CTL_LANES) as u8
    }

    /// The last step of a tile.
    #[inline(always)]
    pub const fn last(self) -> bool {
        self.0 & CTL_LAST != 0
    }

    /// The last step of an NVIDIA block: fire the block FMA.
    #[inline(always)]
    pub const fn fire(self) -> bool {
        self.0 & CTL_FIRE != 0
    }

    /// The accumulator set of this tile.
    #[inline(always)]
    pub const fn set(self) -> bool {
        self.0 & CTL_SET != 0
    }

    /// This row carries data (the A row is inside the problem).
    #[inline(always)]
    pub const fn valid(self) -> bool {
        self.0 & CTL_VALID != 0
    }

    /// The same bundle with `valid` replaced.
    #[inline(always)]
    pub const fn with_valid(self, valid: bool) -> ACtl {
        ACtl((self.0 & !CTL_VALID) | if valid { CTL_VALID } else { 0 })
    }

    /// The traced control word.
    #[inline(always)]
    pub const fn pack(self) -> u16 {
        self.0
    }

    /// The bundle of a control word written by [`ACtl::pack`] (bits above [`CTL_BITS`]
    /// dropped).
    #[inline(always)]
    pub const fn unpack(w: u16) -> ACtl {
        ACtl(w & ((1 << CTL_BITS) - 1))
    }
}

impl std::fmt::Debug for ACtl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ACtl")
            .field("lanes", &self.lanes())
            .field("last", &self.last())
            .field("fire", &self.fire())
            .field("set", &self.set())
            .field("valid", &self.valid())
            .finish()
    }
}

/// A register or skew stage holds the bundle; the tracer sees [`ACtl::pack`].
impl Value for ACtl {
    const CAPACITY: u32 = CTL_BITS;
    const WORDS: usize = 1;
    #[inline(always)]
    fn mask(self, _width: u32) -> Self {
        // Every field fits its bits: the constructors mask them.
        self
    }
    #[inline]
    fn to_words(&self, out: &mut [u64]) {
        out[0] = u64::from(self.pack());
    }
    #[inline]
    fn from_words(words: &[u64]) -> Self {
        ACtl::unpack(words.first().copied().unwrap_or(0) as u16)
    }
}

/// The column shift path's input to a PE this cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShiftIn {
    /// Shift this cycle: the idle accumulator `acc_<set>` takes `value`.
    pub en: bool,
    /// Which accumulator set shifts.
    pub set: bool,
    /// The value from above (the PE above's `acc_<set>`, or C at the top edge).
    pub value: u32,
}

/// Everything entering a PE in one cycle: A with its control word and side value from the
/// left, B with its valid bit and side value from above, and the shift path.
#[derive(Clone, Copy, Debug, Default)]
pub struct PeIn<const W: usize, SA, SB> {
    /// A lanes (the left neighbour's `a_out`, or the edge).
    pub a: Wide<W>,
    /// A's control bundle.
    pub a_ctl: ACtl,
    /// What travels beside A ([`Datapath::SideA`]).
    pub side_a: SA,
    /// B lanes (the upper neighbour's `b_out`, or the edge).
    pub b: Wide<W>,
    /// B carries data.
    pub b_vld: bool,
    /// What travels beside B ([`Datapath::SideB`]).
    pub side_b: SB,
    /// The column shift path.
    pub shift: ShiftIn,
}

/// The input bundle of a PE with datapath `D`.
pub type PeInput<const W: usize, D> = PeIn<W, <D as Datapath<W>>::SideA, <D as Datapath<W>>::SideB>;

/// What stage 2 did to the accumulator in one cycle, with the wires it shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stage2Out {
    /// The new accumulator bits.
    pub acc: u32,
    /// IEEE flags raised (packed as [`Flags::to_bits`]).
    pub flags: u8,
    /// Alignment reference exponent (`max_exp`).
    pub max_exp: u16,
    /// Alignment shift (`align_shift`).
    pub align_shift: u16,
    /// Bits dropped by the alignment (`sticky`).
    pub sticky: bool,
    /// Leading-zero count (`lzc`).
    pub lzc: u16,
    /// The rounding incremented (`round_inc`).
    pub round_inc: bool,
    /// NaN or infinity decided the result (`special`).
    pub special: bool,
}

/// Stage 2's traced wires every PE shows, in their wave order: the alignment's reference
/// exponent and shift, the sticky (or dropped) bits, the leading-zero count, the rounding
/// increment and the specials' decision ([`Stage2Out`]'s fields).
pub struct Stage2Wires {
    max_exp: Wire<u16>,
    align_shift: Wire<u16>,
    sticky: Wire<bool>,
    lzc: Wire<u16>,
    round_inc: Wire<bool>,
    special: Wire<bool>,
}

impl Stage2Wires {
    /// The wires, reading 0.
    pub fn new() -> Result<Self> {
        Ok(Self {
            max_exp: Wire::new("max_exp", 16, 0)?,
            align_shift: Wire::new("align_shift", 16, 0)?.with_display(Display::Dec),
            sticky: Wire::new("sticky", 1, false)?,
            lzc: Wire::new("lzc", 16, 0)?.with_display(Display::Dec),
            round_inc: Wire::new("round_inc", 1, false)?,
            special: Wire::new("special", 1, false)?,
        })
    }

    /// Drives the wires from what stage 2 did this cycle.
    #[inline]
    pub fn show(&mut self, o: &Stage2Out) {
        self.max_exp.set(o.max_exp);
        self.align_shift.set(o.align_shift);
        self.sticky.set(o.sticky);
        self.lzc.set(o.lzc);
        self.round_inc.set(o.round_inc);
        self.special.set(o.special);
    }

    /// Visits the wires in their wave order.
    pub fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.wire(&mut self.max_exp);
        v.wire(&mut self.align_shift);
        v.wire(&mut self.sticky);
        v.wire(&mut self.lzc);
        v.wire(&mut self.round_inc);
        v.wire(&mut self.special);
    }

    /// Whether any of the wires is observed.
    pub fn is_observed(&self) -> bool {
        self.max_exp.is_observed()
            || self.align_shift.is_observed()
            || self.sticky.is_observed()
            || self.lzc.is_observed()
            || self.round_inc.is_observed()
            || self.special.is_observed()
    }
}

/// The lanes of a stage-1 register as its traced wires show them: each lane's exponent sum
/// (`exp_sum`, 16 bits a lane) and significand product (`sig_product`, 32 bits a lane).
pub trait Stage1Lanes: Copy + PartialEq + Default + std::fmt::Debug + 'static {
    /// Lanes of the bundle (`W`).
    const LANES: usize;
    /// Lane `k`'s exponent sum as the `exp_sum` wire shows it (0 for an empty lane).
    fn exp_sum(&self, k: usize) -> u64;
    /// Lane `k`'s significand product as the `sig_product` wire shows it (0 if empty).
    fn sig(&self, k: usize) -> u64;
}

/// The `exp_sum` wire: a view of the stage-1 products (encoded only for the tracer).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExpSums<S>(pub S);

/// The `sig_product` wire: a view of the stage-1 products (encoded only for the tracer).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SigProducts<S>(pub S);

macro_rules! lane_view {
    ($ty:ident, $bits:expr, $get:ident) => {
        impl<S: Stage1Lanes> Value for $ty<S> {
            const CAPACITY: u32 = ($bits * S::LANES) as u32;
            const WORDS: usize = ($bits * S::LANES).div_ceil(64);
            #[inline(always)]
            fn mask(self, _width: u32) -> Self {
                self
            }
            fn to_words(&self, out: &mut [u64]) {
                out.fill(0);
                for k in 0..S::LANES {
                    let v = self.0.$get(k) & ((1u64 << $bits) - 1);
                    let lo = k * $bits;
                    out[lo / 64] |= v << (lo % 64);
                }
            }
            /// A view carries no register of its own: its words are not read back.
            fn from_words(_words: &[u64]) -> Self {
                Self::default()
            }
        }
    };
}
lane_view!(ExpSums, 16, exp_sum);
lane_view!(SigProducts, 32, sig);

/// One PE datapath: stage 1 (the exact products into the stage-1 register), stage 2 (the
/// registered products into the accumulator) and the registers travelling beside A and B.
/// Its own registers and wires are visited at two places of the PE's signal list, so the
/// waveform keeps the order of the signals.
pub trait Datapath<const W: usize>: Sized {
    /// What travels right beside A (through a register of this datapath), `()` if nothing.
    type SideA: Copy + Default;
    /// What travels down beside B, `()` if nothing.
    type SideB: Copy + Default;
    /// The stage-1 register's contents (`s1_prod`).
    type Stage1: Stage1Lanes + Value;

    /// Lanes of the B bus (`W`; more for a B-side select).
    fn b_lanes() -> usize {
        W
    }
    /// True if the operand lanes show as hex in the waves (integer lanes).
    fn hex_lanes(&self) -> bool {
        false
    }
    /// True if something travels beside B that a weight-stationary PE must hold with its
    /// weights (an MX block scale, 8 bits).
    const HOLDS_B_SCALE: bool = false;
    /// The side value beside B from the 8-bit code a weight-stationary PE holds with its
    /// weights (`()` for a datapath with nothing beside B).
    fn side_b(code: u8) -> Self::SideB;
    /// The side value beside A from its code (a 2:4 row's selects, an MX block scale; `()`
    /// for a datapath with nothing beside A): how a stationary PE reads the side value it
    /// holds or takes at the array's edge.
    fn side_a(code: u64) -> Self::SideA;
    /// What the side value beside A is and its width, for a PE that holds it in a register
    /// of its own (`("meta", 2w)` for a 2:4 row's selects, `("scale", 8)` for an MX block
    /// scale); `None` for a datapath with nothing beside A.
    fn side_a_reg() -> Option<(&'static str, u32)> {
        None
    }
    /// The side registers take this cycle's side inputs.
    fn pass(&mut self, side_a: Self::SideA, side_b: Self::SideB);
    /// The side values leaving right and down (register outputs).
    fn side_out(&self) -> (Self::SideA, Self::SideB);
    /// Stage 1 of a valid step of `lanes` lanes: the products for the stage-1 register.
    fn stage1(
        &mut self,
        a: &Wide<W>,
        b: &Wide<W>,
        lanes: usize,
        side_a: Self::SideA,
    ) -> Self::Stage1;
    /// Whether the PE has stage 1 build its products in the stage-1 register
    /// ([`Datapath::stage1_into`]) when no wire shows them, rather than return them.
    const BUILDS_IN_PLACE: bool = true;
    /// [`Datapath::stage1`] written into `out`, the stage-1 register's next value (every
    /// part of it: the register then holds exactly what `stage1` returns, but for lanes
    /// `lanes..`, which no reader looks at). The default stores `stage1`'s result.
    #[inline(always)]
    fn stage1_into(
        &mut self,
        a: &Wide<W>,
        b: &Wide<W>,
        lanes: usize,
        side_a: Self::SideA,
        out: &mut Self::Stage1,
    ) {
        *out = self.stage1(a, b, lanes, side_a);
    }
    /// Stage 1 idle this cycle: its own wires read 0.
    fn stage1_idle(&mut self);
    /// Stage 2 of a valid step: `s1` (the stage-1 register) added into `acc` (the
    /// accumulator of the step's set). `None` if the accumulator is not written.
    fn stage2(&mut self, s1: &Self::Stage1, ctl: ACtl, acc: u32) -> Option<Stage2Out>;
    /// Stage 2 of a valid step when none of the PE's stage-2 wires is observed: only what the
    /// registers take, `(accumulator bits, flags)` (as [`Stage2Out::acc`] and
    /// [`Stage2Out::flags`]). The same arithmetic as [`Datapath::stage2`] (the default calls
    /// it); a datapath may skip the trace fields no wire shows.
    #[inline]
    fn stage2_acc(&mut self, s1: &Self::Stage1, ctl: ACtl, acc: u32) -> Option<(u32, u8)> {
        self.stage2(s1, ctl, acc).map(|o| (o.acc, o.flags))
    }
    /// Stage 2 idle this cycle: its own wires read 0.
    fn stage2_idle(&mut self);
    /// The registers and wires beside A (visited after `a_ctl`).
    fn visit_a_side<V: Visitor>(&mut self, _v: &mut V) {}
    /// The registers and wires beside B and of stage 2's block state (after `b_vld`).
    fn visit_b_side<V: Visitor>(&mut self, _v: &mut V) {}
    /// The block buffer registers (after `special`; at least `gather_n`).
    fn visit_gather<V: Visitor>(&mut self, v: &mut V);
    /// The engine decided which wires are observed ([`Module::observed`]): a datapath with
    /// wires of its own may note it here.
    fn observed(&mut self) {}
}

/// The registers every PE has, as one record (a [`RegBank`]: committed with one copy at the
/// edge). Each field is a register of the waves, named as listed in [`Pe::new`].
#[derive(Clone, Copy, Debug)]
struct PeRegs<const W: usize, S1: Copy> {
    /// A passed on to the right (`a_out`).
    a_out: Wide<W>,
    /// B passed on downwards (`b_out`).
    b_out: Wide<W>,
    /// Stage 1's products (`s1_prod`).
    s1_prod: S1,
    /// The two accumulators (`acc_0`, `acc_1`), indexed by set.
    acc: [u32; 2],
    /// A's control bundle passed on (`a_ctl`).
    a_ctl: ACtl,
    /// Stage 1's control bundle (`s1_ctl`).
    s1_ctl: ACtl,
    /// Sticky IEEE flags (`flags`).
    flags: u8,
    /// B carries data (`b_vld`).
    b_vld: bool,
    /// Stage 2 finished a tile's last step (`done`).
    done: bool,
    /// An accumulator hazard was seen (`hazard`).
    hazard: bool,
}

/// The positions of the bank's fields, in declaration order.
mod field {
    pub const A_OUT: usize = 0;
    pub const A_CTL: usize = 1;
    pub const B_OUT: usize = 2;
    pub const B_VLD: usize = 3;
    pub const S1_PROD: usize = 4;
    pub const S1_CTL: usize = 5;
    pub const ACC_0: usize = 6;
    pub const ACC_1: usize = 7;
    pub const FLAGS: usize = 8;
    pub const DONE: usize = 9;
    pub const HAZARD: usize = 10;
}

/// One processing element with `W` lanes and datapath `D`.
pub struct Pe<const W: usize, D: Datapath<W>> {
    name: String,
    /// The operands entering: the D inputs of `a_out` and `b_out`.
    a_in: NextWire<Wide<W>>,
    b_in: NextWire<Wide<W>>,
    regs: RegBank<PeRegs<W, D::Stage1>>,
    exp_sum: Wire<ExpSums<D::Stage1>>,
    sig_product: Wire<SigProducts<D::Stage1>>,
    acc: Wire<u32>,
    stage2: Stage2Wires,
    path: D,
    shows: Shows,
    links: PeLinks,
}

/// The PE's operand registers as stages of the array's shift chains ([`Link`]): `a_out` and
/// `a_ctl` take, at every edge, what the PE to the left passes on (A moves right), `b_out`
/// and `b_vld` what the PE above passes on (B moves down). Only the toggle counter reads
/// them; a PE on its own heads all four chains. Held as the PE's place in its array and the
/// array's width (four bytes, so the PE, which the clock loop walks, does not grow).
#[derive(Clone, Copy, Debug)]
pub struct PeLinks {
    /// The PE's number in its array, row-major.
    index: u16,
    /// PEs a row (0: a PE on its own).
    cols: u16,
}

impl PeLinks {
    /// A PE on its own: it heads its chains.
    pub const ALONE: PeLinks = PeLinks { index: 0, cols: 0 };

    /// The links of the PE at (`row`, `col`) of an array `cols` PEs wide: fed from the left
    /// and from above where it has such neighbours; ids `4 * (row * cols + col)` to
    /// `4 * (row * cols + col) + 3`. An array of more than 65,535 PEs is not linked (its PEs
    /// head their chains, and are counted by walking their values).
    pub fn in_array(row: usize, col: usize, cols: usize) -> Self {
        let place = row
            .checked_mul(cols)
            .and_then(|p| p.checked_add(col))
            .and_then(|p| u16::try_from(p).ok());
        match (place, u16::try_from(cols)) {
            (Some(index), Ok(cols)) if index < u16::MAX => Self { index, cols },
            _ => Self::ALONE,
        }
    }

    /// The link of operand register `k` (0 `a_out`, 1 `a_ctl`, 2 `b_out`, 3 `b_vld`).
    #[inline(always)]
    fn link(self, k: u32) -> Link {
        let (index, cols) = (u32::from(self.index), u32::from(self.cols));
        let id = |pe: u32| 4 * pe + k;
        let from = match (k < 2, cols) {
            (_, 0) => None,
            (true, _) => (index % cols != 0).then(|| index - 1),
            (false, _) => index.checked_sub(cols),
        };
        Link {
            id: id(index),
            from: from.map(id),
        }
    }
}

/// Which groups of a PE's wave-only wires anything observes, noted when the engine decides
/// ([`Module::observed`]), so the clock loop tests one flag per group.
#[derive(Clone, Copy, Debug)]
struct Shows {
    /// `exp_sum`, `sig_product`.
    stage1: bool,
    /// `acc`, `max_exp`, `align_shift`, `sticky`, `lzc`, `round_inc`, `special`.
    stage2: bool,
}

impl<const W: usize, D: Datapath<W>> Pe<W, D> {
    /// A PE named `name` (the mesh names them `pe_<row>_<col>`) around `path`, built for
    /// `cfg` (operand and accumulator formats).
    pub fn new(name: String, cfg: &crate::hw::CoreConfig, path: D) -> Result<Self> {
        let w = W as u32;
        let (disp_a, disp_b) = if path.hex_lanes() {
            (Display::Hex, Display::Hex)
        } else {
            (
                cfg.operand_display(cfg.fmt_a),
                cfg.operand_display(cfg.fmt_b),
            )
        };
        let b_lanes = D::b_lanes() as u32;
        let acc_bits = cfg.acc.width();
        let regs = RegBank::new(PeRegs {
            a_out: Wide::ZERO,
            b_out: Wide::ZERO,
            s1_prod: D::Stage1::default(),
            acc: [0; 2],
            a_ctl: ACtl::default(),
            s1_ctl: ACtl::default(),
            flags: 0,
            b_vld: false,
            done: false,
            hazard: false,
        })
        // Declared in the order of `field`.
        .field("a_out", cfg.fmt_a.width() * w, |r| &r.a_out)?
        .with_display(disp_a)
        .field("a_ctl", CTL_BITS, |r| &r.a_ctl)?
        .with_display(Display::Filter("ctl"))
        .field("b_out", cfg.fmt_b.width() * b_lanes, |r| &r.b_out)?
        .with_display(disp_b)
        .field("b_vld", 1, |r| &r.b_vld)?
        .field("s1_prod", 64 * w, |r| &r.s1_prod)?
        .with_display(cfg.product_display())
        .field("s1_ctl", CTL_BITS, |r| &r.s1_ctl)?
        .with_display(Display::Filter("ctl"))
        // The accumulator registers are as wide as the accumulator format (32 or 16).
        .field("acc_0", acc_bits, |r| &r.acc[0])?
        .with_display(cfg.acc_display())
        .in_overview()
        .field("acc_1", acc_bits, |r| &r.acc[1])?
        .with_display(cfg.acc_display())
        .in_overview()
        .field("flags", 4, |r| &r.flags)?
        .field("done", 1, |r| &r.done)?
        .field("hazard", 1, |r| &r.hazard)?;
        Ok(Self {
            name,
            a_in: NextWire::new("a_in", cfg.fmt_a.width() * w)?
                .with_display(disp_a)
                .in_overview(),
            b_in: NextWire::new("b_in", cfg.fmt_b.width() * b_lanes)?
                .with_display(disp_b)
                .in_overview(),
            regs,
            exp_sum: Wire::new("exp_sum", 16 * w, ExpSums::default())?,
            sig_product: Wire::new("sig_product", 32 * w, SigProducts::default())?,
            acc: Wire::new("acc", cfg.acc.width(), 0)?.with_display(cfg.acc_display()),
            stage2: Stage2Wires::new()?,
            path,
            // A wire outside a simulator is observed.
            shows: Shows {
                stage1: true,
                stage2: true,
            },
            links: PeLinks::ALONE,
        })
    }

    /// The PE with its operand registers linked into the array's shift chains (`links`).
    pub fn with_links(mut self, links: PeLinks) -> Self {
        self.links = links;
        self
    }

    /// The datapath (read-only).
    pub fn path(&self) -> &D {
        &self.path
    }

    /// A leaving to the right: data and control bundle (register outputs).
    #[inline]
    pub fn a_out(&self) -> (Wide<W>, ACtl) {
        let q = self.regs.q();
        (q.a_out, q.a_ctl)
    }

    /// B leaving downwards: data and valid (register outputs).
    #[inline]
    pub fn b_out(&self) -> (Wide<W>, bool) {
        let q = self.regs.q();
        (q.b_out, q.b_vld)
    }

    /// The side values leaving right (beside A) and down (beside B) (register outputs).
    #[inline]
    pub fn side_out(&self) -> (D::SideA, D::SideB) {
        self.path.side_out()
    }

    /// Accumulator `set` (register output): what the shift path passes down.
    #[inline]
    pub fn acc_q(&self, set: bool) -> u32 {
        self.regs.q().acc[usize::from(set)]
    }

    /// High for one cycle after stage 2 handled the last step of a tile.
    pub fn done(&self) -> bool {
        self.regs.q().done
    }

    /// The IEEE flags raised so far (sticky).
    pub fn flags(&self) -> Flags {
        let f = self.regs.q().flags;
        Flags {
            invalid: f & 8 != 0,
            overflow: f & 4 != 0,
            underflow: f & 2 != 0,
            inexact: f & 1 != 0,
        }
    }

    /// True if the shift path and stage 2 ever wrote the same accumulator in one cycle.
    pub fn hazard(&self) -> bool {
        self.regs.q().hazard
    }

    /// The combinational phase: stage 1 on the inputs, stage 2 on the stage-1 register, the
    /// pass-through registers and the shift path.
    #[inline]
    pub fn comb(&mut self, i: PeInput<W, D>) {
        self.comb_as::<true>(i);
    }

    /// Whether any of the PE's wave-only wires is observed (see [`Pe::comb_as`]).
    pub fn shows_any(&self) -> bool {
        let s = self.shows;
        s.stage1 || s.stage2
    }

    /// [`Pe::comb`] for an array that knows, once per cycle, whether any of its PEs'
    /// wave-only wires is observed: with `SHOWS` false (no PE's is: [`Pe::shows_any`] false
    /// for every PE, as in an untraced run) the PE tests none of its groups; with `SHOWS`
    /// true it tests each group's flag.
    #[inline]
    pub fn comb_as<const SHOWS: bool>(&mut self, i: PeInput<W, D>) {
        debug_assert!(SHOWS || !self.shows_any());
        let shows = Shows {
            stage1: SHOWS && self.shows.stage1,
            stage2: SHOWS && self.shows.stage2,
        };
        self.path.pass(i.side_a, i.side_b);
        // Operands pass on to the neighbours through registers (whose D inputs the `a_in` and
        // `b_in` wires show).
        let regs = &mut self.regs;
        regs.set(|r| &mut r.a_out, i.a);
        regs.set(|r| &mut r.a_ctl, i.a_ctl);
        regs.set(|r| &mut r.b_out, i.b);
        regs.set(|r| &mut r.b_vld, i.b_vld);

        // Stage 1: multiply (only when both operands carry data).
        let ctl = i.a_ctl;
        let lanes = usize::from(ctl.lanes());
        let valid = ctl.valid() && i.b_vld && lanes > 0;
        regs.set(|r| &mut r.s1_ctl, ctl.with_valid(valid));
        if valid && D::BUILDS_IN_PLACE && !shows.stage1 {
            // The products built where the register holds them.
            let (path, regs) = (&mut self.path, &mut self.regs);
            regs.set_in_place(
                |r| &mut r.s1_prod,
                |s1| path.stage1_into(&i.a, &i.b, lanes, i.side_a, s1),
            );
        } else if valid {
            let s1 = self.path.stage1(&i.a, &i.b, lanes, i.side_a);
            self.regs.set(|r| &mut r.s1_prod, s1);
            if shows.stage1 {
                self.exp_sum.set(ExpSums(s1));
                self.sig_product.set(SigProducts(s1));
            }
        } else {
            // Operand isolation: an idle stage's combinational outputs read 0 (in hardware the
            // inputs are gated), so no wire shows a stale value from an earlier cycle.
            self.path.stage1_idle();
            if shows.stage1 {
                self.exp_sum.set(ExpSums::default());
                self.sig_product.set(SigProducts::default());
            }
        }

        // Stage 2: accumulate the registered products.
        let (c1, flags_q) = {
            let q = self.regs.q();
            (q.s1_ctl, q.flags)
        };
        self.regs.set(|r| &mut r.done, c1.last());
        let set = usize::from(c1.set());
        let out = if !c1.valid() {
            self.path.stage2_idle();
            if shows.stage2 {
                self.show_stage2(Stage2Out::default());
            }
            None
        } else if shows.stage2 {
            let q = self.regs.q();
            let out = self.path.stage2(&q.s1_prod, c1, q.acc[set]);
            // Stage-2 wires read 0 unless the accumulation drove them this cycle.
            self.show_stage2(out.unwrap_or_default());
            out.map(|o| (o.acc, o.flags))
        } else {
            let q = self.regs.q();
            self.path.stage2_acc(&q.s1_prod, c1, q.acc[set])
        };
        let writes_acc = out.is_some();
        let regs = &mut self.regs;
        if let Some((acc, flags)) = out {
            regs.set(|r| &mut r.acc[set], acc);
            if flags != 0 {
                regs.set(|r| &mut r.flags, flags_q | flags);
            }
        }

        // Column shift path through the idle accumulator set.
        let shift = i.shift;
        if shift.en {
            let shift_set = usize::from(shift.set);
            if writes_acc && shift_set == set {
                regs.set(|r| &mut r.hazard, true);
            }
            regs.set(|r| &mut r.acc[shift_set], shift.value);
        }
    }

    /// Drives the stage-2 wires from what stage 2 did this cycle.
    #[inline]
    fn show_stage2(&mut self, o: Stage2Out) {
        self.acc.set(o.acc);
        self.stage2.show(&o);
    }
}

impl<const W: usize, D: Datapath<W>> Module for Pe<W, D> {
    fn name(&self) -> &str {
        &self.name
    }
    #[inline]
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        use field::*;
        let (regs, links) = (&mut self.regs, self.links);
        v.bank_next_linked(regs, &mut self.a_in, |r| &r.a_out, links.link(0));
        v.bank_next_linked(regs, &mut self.b_in, |r| &r.b_out, links.link(2));
        v.bank_reg_linked(regs, A_OUT, |r| &r.a_out, links.link(0));
        v.bank_reg_linked(regs, A_CTL, |r| &r.a_ctl, links.link(1));
        self.path.visit_a_side(v);
        v.bank_reg_linked(regs, B_OUT, |r| &r.b_out, links.link(2));
        v.bank_reg_linked(regs, B_VLD, |r| &r.b_vld, links.link(3));
        self.path.visit_b_side(v);
        v.bank_reg(regs, S1_PROD, |r| &r.s1_prod);
        v.bank_reg(regs, S1_CTL, |r| &r.s1_ctl);
        // A pass that reads only observed wires is spared the wave-only groups nobody
        // observes (`Shows`, kept by `observed`).
        if !V::OBSERVED_WIRES_ONLY || self.shows.stage1 {
            v.wire(&mut self.exp_sum);
            v.wire(&mut self.sig_product);
        }
        v.bank_reg(regs, ACC_0, |r| &r.acc[0]);
        v.bank_reg(regs, ACC_1, |r| &r.acc[1]);
        if !V::OBSERVED_WIRES_ONLY || self.shows.stage2 {
            v.wire(&mut self.acc);
            self.stage2.visit(v);
        }
        self.path.visit_gather(v);
        v.bank_reg(regs, FLAGS, |r| &r.flags);
        v.bank_reg(regs, DONE, |r| &r.done);
        v.bank_reg(regs, HAZARD, |r| &r.hazard);
        v.bank(regs);
    }
    fn observed(&mut self) {
        self.shows = Shows {
            stage1: self.exp_sum.is_observed() || self.sig_product.is_observed(),
            stage2: self.acc.is_observed() || self.stage2.is_observed(),
        };
        self.path.observed();
    }
}

/// Lane `k` of a bus of `bits`-wide lanes (1..=64 bits; a lane may cross a 64-bit word,
/// as 6-bit FP6 and 19-bit TF32 lanes do), read through [`Wide::field`].
#[inline]
pub fn lane<const N: usize>(bus: &Wide<N>, k: usize, bits: u32) -> u64 {
    bus.field(k * bits as usize, bits as usize)
}

/// [`lane`] given also `mask`, the mask of the low `bits` bits (computed once per bus by a
/// lane decoder), through [`Wide::field_masked`].
#[inline(always)]
pub fn lane_masked<const N: usize>(bus: &Wide<N>, k: usize, bits: u32, mask: u64) -> u64 {
    bus.field_masked(k * bits as usize, bits as usize, mask)
}

/// Writes lane `k` of a bus of `bits`-wide lanes (the low `bits` bits of `v`) through
/// [`Wide::set_field`].
#[inline]
pub fn set_lane<const N: usize>(bus: &mut Wide<N>, k: usize, bits: u32, v: u64) {
    bus.set_field(k * bits as usize, bits as usize, v);
}
