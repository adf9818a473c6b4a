//! How a tensor core is built, as one value: [`CoreConfig`] (operand formats, accumulation
//! mode, products per PE step, accumulator format, mesh geometry) and, for block-scaled cores,
//! [`MxSpec`]. Every block takes its shape from these values; only this module writes a
//! `CoreConfig` field by field (the others use [`CoreConfig::new`] and its `with_*` methods).

use super::{HwError, COLS, ROWS};
use crate::numerics::dot::AccMode;
use crate::numerics::format::{Format, FP32};
use crate::numerics::mx::{BlockFormat, Element};
use crate::numerics::mx_block::ScaleFactor;
use crate::rtl::Display;

/// The largest array side [`CoreConfig::with_array`] builds: 32 PEs (a 32 x 32 array holds
/// 1,024 PEs; the row and column indices of the traced words then take 5 bits).
pub const MAX_ARRAY: usize = 32;

/// Which values stay in the PEs while the others move (`docs/hardware.md`, "Dataflows").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dataflow {
    /// Output-stationary (the default): each PE holds an element of D in its accumulator; A
    /// moves right, B moves down, C is preloaded and D drained through the column shift path.
    #[default]
    Os,
    /// Weight-stationary: each PE holds `w` elements of B (double-buffered weight registers
    /// preloaded down the columns); A moves right, partial sums move down, and an accumulator
    /// block below the array adds the K-folds and C.
    Ws,
    /// Input-stationary: each PE column holds `w` elements of a row of A (held registers
    /// preloaded down the columns); the columns of B move right, partial sums move down, and
    /// the accumulator block adds the K-folds and C (the array computes `D^T`).
    Is,
}

impl Dataflow {
    /// Every dataflow.
    pub const ALL: [Dataflow; 3] = [Dataflow::Os, Dataflow::Ws, Dataflow::Is];

    /// `os`, `ws` or `is`.
    pub const fn name(self) -> &'static str {
        match self {
            Dataflow::Os => "os",
            Dataflow::Ws => "ws",
            Dataflow::Is => "is",
        }
    }

    /// `output-stationary`, `weight-stationary` or `input-stationary`.
    pub const fn title(self) -> &'static str {
        match self {
            Dataflow::Os => "output-stationary",
            Dataflow::Ws => "weight-stationary",
            Dataflow::Is => "input-stationary",
        }
    }

    /// The list a message offers: `os (output-stationary), ws (...), is (...)`.
    pub fn choices() -> String {
        Dataflow::ALL
            .map(|d| format!("{} ({})", d.name(), d.title()))
            .join(", ")
    }

    /// Whether an operand stays in the PEs while partial sums move down the columns (`ws`,
    /// `is`): K is cut into folds of `R * w` elements, each a column's partial sum, which the
    /// accumulator block adds to C one by one (`crate::numerics::dot::ws`'s order).
    pub const fn folds_k(self) -> bool {
        matches!(self, Dataflow::Ws | Dataflow::Is)
    }

    /// The dataflow named `name` (`os`, `ws`, `is`), if any.
    pub fn by_name(name: &str) -> Option<Dataflow> {
        Dataflow::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl std::fmt::Display for Dataflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a tensor core is built: operand formats, accumulation mode, products per PE step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreConfig {
    /// Format of A.
    pub fmt_a: Format,
    /// Format of B.
    pub fmt_b: Format,
    /// Accumulation mode (`exact` is a reference only and cannot be built).
    pub mode: AccMode,
    /// Products per PE step `w` (1, 2, 4, 8, 16 or 32).
    pub width: usize,
    /// The accumulator (output) format: FP32, or FP16 (C and D are FP16 patterns; the
    /// accumulator registers are 16 bits wide).
    pub acc: Format,
    /// Rows of the PE mesh (4 by default; set only here, so no struct literal of the
    /// configuration exists outside this module).
    rows: usize,
    /// Columns of the PE mesh (4 by default).
    cols: usize,
    /// The dataflow (output-stationary by default).
    dataflow: Dataflow,
}

impl CoreConfig {
    /// A 4 x 4 core with `fmt_a` x `fmt_b` operands, accumulation `mode`, `width` products
    /// per PE step and an FP32 accumulator. [`CoreConfig::with_acc`] changes the
    /// accumulator format.
    pub const fn new(fmt_a: Format, fmt_b: Format, mode: AccMode, width: usize) -> Self {
        Self {
            fmt_a,
            fmt_b,
            mode,
            width,
            acc: FP32,
            rows: ROWS,
            cols: COLS,
            dataflow: Dataflow::Os,
        }
    }

    /// The same core with `acc` as the accumulator (output) format (FP32 or FP16).
    pub const fn with_acc(self, acc: Format) -> Self {
        Self { acc, ..self }
    }

    /// The same core with `width` products per PE step.
    pub const fn with_width(self, width: usize) -> Self {
        Self { width, ..self }
    }

    /// The same core with accumulation `mode`.
    pub const fn with_mode(self, mode: AccMode) -> Self {
        Self { mode, ..self }
    }

    /// The same core on an array of `rows x cols` PEs, each from 1 to [`MAX_ARRAY`] (the
    /// default is 4 x 4). A size outside that range is refused with the reason.
    pub fn with_array(self, rows: usize, cols: usize) -> Result<Self, HwError> {
        for (what, n) in [("rows", rows), ("cols", cols)] {
            if !(1..=MAX_ARRAY).contains(&n) {
                return Err(HwError::Unsupported(format!(
                    "{n} {what} (an array has 1 to {MAX_ARRAY} rows and 1 to {MAX_ARRAY} columns)"
                )));
            }
        }
        Ok(Self { rows, cols, ..self })
    }

    /// The same core with dataflow `dataflow`.
    pub const fn with_dataflow(self, dataflow: Dataflow) -> Self {
        Self { dataflow, ..self }
    }

    /// The dataflow.
    pub const fn dataflow(&self) -> Dataflow {
        self.dataflow
    }

    /// Rows of the PE mesh.
    pub const fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the PE mesh.
    pub const fn cols(&self) -> usize {
        self.cols
    }

    /// The NVIDIA block size `n` (0 for other modes).
    pub fn block(&self) -> usize {
        match self.mode {
            AccMode::Nvidia(p) => p.block,
            _ => 0,
        }
    }

    /// How the waves show an operand bus of format `fmt`: decoded lane values through the
    /// `tcrtl wave-filter` process for floating-point lanes, hex for integer lanes (their
    /// `Format` is only a lane container, see [`crate::numerics::int::IntFormat::container`]).
    pub fn operand_display(&self, fmt: Format) -> Display {
        match self.mode {
            AccMode::Int(_) => Display::Hex,
            _ => Display::Filter(fmt.name),
        }
    }

    /// How the waves show an accumulator word (`acc_*`): an FP32 real, FP16 values through
    /// the `tcrtl wave-filter fp16` process for an FP16 accumulator, or a signed decimal int32
    /// in the integer mode.
    pub fn acc_display(&self) -> Display {
        match self.mode {
            AccMode::Int(_) => Display::SignedDec,
            _ if self.acc.width() == 16 => Display::Filter(self.acc.name),
            _ => Display::Real,
        }
    }

    /// How the waves show the stage-1 register `s1_prod` (and the block buffer's products):
    /// through the `tcrtl wave-filter iprod` process (a signed integer a lane) in the integer
    /// mode, `prod` (each lane's exact value, sign, exponent sum and significand product)
    /// otherwise.
    pub fn product_display(&self) -> Display {
        match self.mode {
            AccMode::Int(_) => Display::Filter("iprod"),
            _ => Display::Filter("prod"),
        }
    }

    /// True if an NVIDIA block spans several steps (`w < n`), so the PE gathers products in
    /// its block buffer and fires the block FMA on the block's last step.
    pub fn gathers(&self) -> bool {
        self.block() > self.width
    }
}

/// What a block-scaled core is built for: the block formats of A and B and their FP32
/// tensor scales (NVFP4's second-level scale; `None` is 1).
///
/// A and B share one block size and one scale format, and either both hold MXINT8 integers
/// or both hold floating-point elements (MXFP8/6/4 may be mixed); [`MxSpec::check`] says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MxSpec {
    /// A's block format.
    pub a: BlockFormat,
    /// B's block format.
    pub b: BlockFormat,
    /// A's FP32 tensor scale (bits), if any.
    pub a_tensor: Option<u32>,
    /// B's FP32 tensor scale (bits), if any.
    pub b_tensor: Option<u32>,
}

impl MxSpec {
    /// A spec without tensor scales.
    pub const fn new(a: BlockFormat, b: BlockFormat) -> Self {
        Self {
            a,
            b,
            a_tensor: None,
            b_tensor: None,
        }
    }

    /// The spec with these FP32 tensor scales.
    pub const fn with_tensor_scales(self, a_tensor: Option<u32>, b_tensor: Option<u32>) -> Self {
        Self {
            a_tensor,
            b_tensor,
            ..self
        }
    }

    /// Elements per K-block.
    pub const fn block(&self) -> usize {
        self.a.block_size()
    }

    /// The block scales' format (E8M0, or E4M3 for NVFP4).
    pub const fn scale_format(&self) -> Format {
        self.a.scale_format()
    }

    /// The elements are MXINT8 integers (stage 1 multiplies integers).
    pub const fn int8(&self) -> bool {
        matches!(self.a.element(), Element::Int8)
    }

    /// The format whose lane width carries `f`'s elements on the operand buses (the element
    /// format, or an 8-bit container for MXINT8, as [`crate::numerics::int::IntFormat::container`]).
    pub const fn lane_format(f: BlockFormat) -> Format {
        match f.element() {
            Element::Float(e) => e,
            Element::Int8 => crate::numerics::int::S8.container(),
        }
    }

    /// The product of the two tensor scales (formed once per core, exact: 48-bit
    /// significand), or 1.
    pub fn tensor_product(&self) -> ScaleFactor {
        let t = |x: Option<u32>| {
            x.map_or(ScaleFactor::ONE, |b| {
                ScaleFactor::decode(FP32, u64::from(b))
            })
        };
        t(self.a_tensor) * t(self.b_tensor)
    }

    /// Checks the width of a weight-stationary core (and of the functional model's `ws`
    /// order, [`crate::gemm::MxGemm::functional`]): a K-block's scaled sum is fired into the
    /// partial sum at once, so each PE must hold whole blocks, i.e. `width` is the block size
    /// (the MX checks already ask `width <= block`).
    pub fn check_ws_width(&self, width: usize) -> Result<(), HwError> {
        if width != self.block() {
            return Err(HwError::Unsupported(format!(
                "{} in ws at width {width} (each PE must hold one whole K-block of {}: a block \
                 spread over several PEs down a column would need its exact sum carried \
                 between them; use --width {})",
                self.a,
                self.block(),
                self.block()
            )));
        }
        Ok(())
    }

    /// Checks that A and B pair up: one block size, one scale format, integer elements on
    /// both sides or on neither.
    pub fn check(&self) -> Result<(), HwError> {
        let (a, b) = (self.a, self.b);
        if a.block_size() != b.block_size() || a.scale_format() != b.scale_format() {
            return Err(HwError::Unsupported(format!(
                "{a} x {b} (A and B need one block size and one scale format)"
            )));
        }
        if matches!(a.element(), Element::Int8) != matches!(b.element(), Element::Int8) {
            return Err(HwError::Unsupported(format!(
                "{a} x {b} (MXINT8 pairs with MXINT8 only)"
            )));
        }
        Ok(())
    }
}
