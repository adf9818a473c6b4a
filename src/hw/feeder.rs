//! The operand supply behind a trait: per cycle, one A lane group per mesh row and one B
//! lane group per mesh column, and one row of C per shift-window cycle.
//!
//! [`TileBuffer`] serves them from whole matrices held in a buffer (an ideal shared memory
//! with one read port per edge lane). A TMA/shared-memory-fed feeder implements the same
//! trait. What a feeder serves beside A and B is its [`OperandFeeder::Extras`] type
//! ([`crate::hw::extras`]): nothing for a dense feeder; a 2:4 sparse feeder presents the
//! compressed A (`w` kept values a step), the selects beside it, and `2w` positions of B per
//! step (the PE's B-side select is [`crate::hw::pe::sparse::b_operand_select`]); a
//! block-scaled feeder the block scales beside A and B.

use std::cell::Cell;

use super::config::CoreConfig;
use super::extras::EdgeExtras;
use super::pe::set_lane;
pub(crate) use super::schedule::tile_origin;
use super::HwError;
use crate::rtl::Wide;

/// `lanes` operand bit patterns concatenated (lane `k` at bit `k * format width`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneGroup<const W: usize> {
    /// The lanes.
    pub bits: Wide<W>,
    /// Valid lanes; 0 means no data (a masked row or column).
    pub lanes: usize,
}

/// A source of operands for the mesh edges.
pub trait OperandFeeder<const W: usize> {
    /// What the feeder serves beside A and B (`()` for a dense feeder); its type chooses the
    /// core's datapath when the core is built.
    type Extras: EdgeExtras<W>;
    /// The problem's `(m, n, k)`.
    fn dims(&self) -> (usize, usize, usize);
    /// What the core is built for besides its configuration ([`EdgeExtras::Spec`]).
    fn spec(&self) -> <Self::Extras as EdgeExtras<W>>::Spec;
    /// A: lanes `k = step*w ..` of row `row` of tile `tile` (0 lanes past M).
    fn a(&self, tile: usize, row: usize, step: usize) -> LaneGroup<W>;
    /// B: lanes `k = step*w ..` of column `col` of tile `tile` (0 lanes past N).
    fn b(&self, tile: usize, col: usize, step: usize) -> LaneGroup<W>;
    /// C: row `row` of tile `tile` into `out`, one accumulator word (FP32, or FP16 in the low
    /// 16 bits) per mesh column (0 outside the problem).
    fn c_row(&self, tile: usize, row: usize, out: &mut [u32]);
    /// Writes the extras of step `step` of tile `tile` into `out` (every row and column of it).
    fn extras(&self, tile: usize, step: usize, out: &mut Self::Extras);
    /// Writes at least row `row`'s part of [`OperandFeeder::extras`] into `out` (what travels
    /// beside that row of A); the rest of `out` is unspecified. The weight-stationary core
    /// asks each array row for a different step, one row at a time. The default writes all.
    #[inline]
    fn row_extras(&self, tile: usize, row: usize, step: usize, out: &mut Self::Extras) {
        let _ = row;
        self.extras(tile, step, out);
    }
    /// What the store has served so far, if it counts it ([`Traffic`]; `None`, the default,
    /// for a store that does not). A monitor, not hardware: no register or wire of the core.
    fn traffic(&self) -> Option<Traffic> {
        None
    }
    /// The A lanes of every row (`a`, one per mesh row) and the B lanes of every column (`b`)
    /// of step `step` of tile `tile`: what [`OperandFeeder::a`] and [`OperandFeeder::b`]
    /// give row by row and column by column (the default), read in one pass, so a feeder
    /// may find the tile's origin and the step's lanes once rather than once per lane.
    #[inline]
    fn step_lanes(&self, tile: usize, step: usize, a: &mut [LaneGroup<W>], b: &mut [LaneGroup<W>]) {
        for (i, g) in a.iter_mut().enumerate() {
            *g = self.a(tile, i, step);
        }
        for (j, g) in b.iter_mut().enumerate() {
            *g = self.b(tile, j, step);
        }
    }
}

/// Operand-store traffic, in bits: what the array read of A, B and C and what left as D.
///
/// A and B count every lane group served (its valid lanes times the format's bits), C every
/// accumulator word inside the problem (the accumulator format's bits); D is counted by the
/// runner as the words of D inside the problem it collects. The byte figures round up to
/// whole bytes (a 4-bit format may read half a byte).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bits of A read.
    pub a_read_bits: u64,
    /// Bits of B read.
    pub b_read_bits: u64,
    /// Bits of C read.
    pub c_read_bits: u64,
    /// Bits of D written.
    pub d_write_bits: u64,
}

impl Traffic {
    /// Bytes of A read (rounded up).
    pub fn a_read_bytes(&self) -> u64 {
        self.a_read_bits.div_ceil(8)
    }

    /// Bytes of B read (rounded up).
    pub fn b_read_bytes(&self) -> u64 {
        self.b_read_bits.div_ceil(8)
    }

    /// Bytes of C read (rounded up).
    pub fn c_read_bytes(&self) -> u64 {
        self.c_read_bits.div_ceil(8)
    }

    /// Bytes of D written (rounded up).
    pub fn d_write_bytes(&self) -> u64 {
        self.d_write_bits.div_ceil(8)
    }

    /// The one-line summary `tcrtl gemm` prints: `operand store: A .. B .. C .. bytes read,
    /// D .. written`.
    pub fn line(&self) -> String {
        format!(
            "operand store: A {} B {} C {} bytes read, D {} written",
            self.a_read_bytes(),
            self.b_read_bytes(),
            self.c_read_bytes(),
            self.d_write_bytes()
        )
    }
}

/// Whole matrices in a buffer, served tile by tile. It counts what it serves ([`Traffic`]:
/// A and B lanes, C words inside the problem) in counters beside the matrices, not in the
/// design tree; every read counts, so a combinational phase evaluated twice in one cycle
/// (`Simulator::settle`, the repeatability check) counts twice. The runners evaluate it once
/// a cycle.
#[derive(Clone, Debug)]
pub struct TileBuffer {
    array: (usize, usize),
    m: usize,
    n: usize,
    k: usize,
    width: usize,
    bits_a: u32,
    bits_b: u32,
    bits_c: u32,
    a: Vec<u64>,
    b: Vec<u64>,
    c: Vec<u32>,
    a_bits_read: Cell<u64>,
    b_bits_read: Cell<u64>,
    c_bits_read: Cell<u64>,
}

impl TileBuffer {
    /// A buffer holding A (`m x k`), B (`k x n`) and C (`m x n`), row-major bit patterns.
    pub fn new(
        cfg: CoreConfig,
        m: usize,
        n: usize,
        k: usize,
        a: Vec<u64>,
        b: Vec<u64>,
        c: Vec<u32>,
    ) -> Result<Self, HwError> {
        check_dense_problem((m, n, k), (a.len(), b.len(), c.len()))?;
        Ok(Self {
            array: (cfg.rows(), cfg.cols()),
            m,
            n,
            k,
            width: cfg.width,
            bits_a: cfg.fmt_a.width(),
            bits_b: cfg.fmt_b.width(),
            bits_c: cfg.acc.width(),
            a,
            b,
            c,
            a_bits_read: Cell::new(0),
            b_bits_read: Cell::new(0),
            c_bits_read: Cell::new(0),
        })
    }

    fn origin(&self, tile: usize) -> (usize, usize) {
        tile_origin(self.array, self.n, tile)
    }

    /// The lanes of step `step` (its first `k`, and how many lanes it has: 0 past K).
    #[inline]
    fn step_k<const W: usize>(&self, step: usize) -> (usize, usize) {
        step_lanes::<W>(self.k, self.width, step)
    }

    /// Row `i` of A, `lanes` lanes from `k0` (0 lanes past M).
    #[inline]
    fn a_lanes<const W: usize>(&self, i: usize, k0: usize, lanes: usize) -> LaneGroup<W> {
        if i >= self.m || lanes == 0 {
            return LaneGroup::default();
        }
        add(&self.a_bits_read, lanes as u64 * u64::from(self.bits_a));
        let mut words = Wide::<W>::ZERO;
        for (l, &v) in self.a[i * self.k + k0..][..lanes].iter().enumerate() {
            set_lane(&mut words, l, self.bits_a, v);
        }
        LaneGroup { bits: words, lanes }
    }

    /// Column `j` of B, `lanes` lanes from `k0` (0 lanes past N).
    #[inline]
    fn b_lanes<const W: usize>(&self, j: usize, k0: usize, lanes: usize) -> LaneGroup<W> {
        if j >= self.n || lanes == 0 {
            return LaneGroup::default();
        }
        add(&self.b_bits_read, lanes as u64 * u64::from(self.bits_b));
        column_lanes(&self.b, self.n, self.bits_b, j, k0, lanes)
    }
}

/// Step `step` of a K of `k` at width `width`: its first K position, and how many of its `W`
/// lanes hold data (0 past K). Every operand store serves lanes by this rule.
#[inline]
pub(crate) fn step_lanes<const W: usize>(k: usize, width: usize, step: usize) -> (usize, usize) {
    let k0 = step * width;
    if k0 >= k {
        return (k0, 0);
    }
    (k0, width.min(k - k0).min(W))
}

/// Adds `bits` to a traffic counter.
#[inline]
fn add(counter: &Cell<u64>, bits: u64) {
    counter.set(counter.get() + bits);
}

/// Checks a problem handed to an operand store: no zero dimension, and every matrix
/// `(name, elements expected, elements held)` of the right size.
pub(crate) fn check_problem(
    (m, n, k): (usize, usize, usize),
    matrices: &[(&'static str, usize, usize)],
) -> Result<(), HwError> {
    if m == 0 || n == 0 || k == 0 {
        return Err(HwError::Unsupported("a zero dimension".into()));
    }
    for &(matrix, expected, len) in matrices {
        if expected != len {
            return Err(HwError::Shape {
                matrix,
                expected,
                len,
            });
        }
    }
    Ok(())
}

/// [`check_problem`] for a dense problem: A `m x k`, B `k x n` and C `m x n`, holding the
/// given numbers of elements.
pub(crate) fn check_dense_problem(
    (m, n, k): (usize, usize, usize),
    (a, b, c): (usize, usize, usize),
) -> Result<(), HwError> {
    check_problem(
        (m, n, k),
        &[("A", m * k, a), ("B", k * n, b), ("C", m * n, c)],
    )
}

/// `lanes` consecutive entries of column `j` of the row-major `? x n` matrix `b`, from row
/// `p0` on, packed `bits` wide into one lane group (the B read port of every feeder).
#[inline]
pub(crate) fn column_lanes<const W: usize>(
    b: &[u64],
    n: usize,
    bits: u32,
    j: usize,
    p0: usize,
    lanes: usize,
) -> LaneGroup<W> {
    let mut words = Wide::<W>::ZERO;
    for l in 0..lanes {
        set_lane(&mut words, l, bits, b[(p0 + l) * n + j]);
    }
    LaneGroup { bits: words, lanes }
}

/// Row `row` of output tile `tile` (of a `rows x cols` array) of the row-major `m x n`
/// matrix `c` into `out`, one word per column (zeros outside the matrix); returns the words
/// read from inside the matrix.
pub(crate) fn c_tile_row(
    c: &[u32],
    array: (usize, usize),
    (m, n): (usize, usize),
    (tile, row): (usize, usize),
    out: &mut [u32],
) -> usize {
    let (r0, c0) = tile_origin(array, n, tile);
    let i = r0 + row;
    let inside = i < m && tile < m.div_ceil(array.0) * n.div_ceil(array.1);
    let mut words = 0;
    for (j, o) in out.iter_mut().enumerate() {
        *o = if inside && c0 + j < n {
            words += 1;
            c[i * n + c0 + j]
        } else {
            0
        };
    }
    words
}

impl<const W: usize> OperandFeeder<W> for TileBuffer {
    type Extras = ();

    fn dims(&self) -> (usize, usize, usize) {
        (self.m, self.n, self.k)
    }

    fn spec(&self) {}

    #[inline]
    fn extras(&self, _tile: usize, _step: usize, _out: &mut ()) {}

    #[inline]
    fn a(&self, tile: usize, row: usize, step: usize) -> LaneGroup<W> {
        let (k0, lanes) = self.step_k::<W>(step);
        self.a_lanes(self.origin(tile).0 + row, k0, lanes)
    }

    #[inline]
    fn b(&self, tile: usize, col: usize, step: usize) -> LaneGroup<W> {
        let (k0, lanes) = self.step_k::<W>(step);
        self.b_lanes(self.origin(tile).1 + col, k0, lanes)
    }

    #[inline]
    fn step_lanes(&self, tile: usize, step: usize, a: &mut [LaneGroup<W>], b: &mut [LaneGroup<W>]) {
        // The tile's origin and the step's lanes once for every row and column.
        let (r0, c0) = self.origin(tile);
        let (k0, lanes) = self.step_k::<W>(step);
        for (i, g) in a.iter_mut().enumerate() {
            *g = self.a_lanes(r0 + i, k0, lanes);
        }
        for (j, g) in b.iter_mut().enumerate() {
            *g = self.b_lanes(c0 + j, k0, lanes);
        }
    }

    fn c_row(&self, tile: usize, row: usize, out: &mut [u32]) {
        let words = c_tile_row(&self.c, self.array, (self.m, self.n), (tile, row), out);
        add(&self.c_bits_read, words as u64 * u64::from(self.bits_c));
    }

    fn traffic(&self) -> Option<Traffic> {
        Some(Traffic {
            a_read_bits: self.a_bits_read.get(),
            b_read_bits: self.b_bits_read.get(),
            c_read_bits: self.c_bits_read.get(),
            d_write_bits: 0,
        })
    }
}
