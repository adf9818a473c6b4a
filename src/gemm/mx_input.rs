//! A block-scaled GEMM as the front doors take it (`tcrtl gemm --format mxfp8e4m3 ...` and the
//! Python package's `tcrtl.gemm(..., fmt="mxfp8e4m3", a_scales=..., b_scales=...)`): the
//! options MX refuses, the block formats and tensor scales, the width, and the element and
//! scale codes, checked here in one place with the command line's one-line messages. The
//! check of D that `--check` runs is `crate::io::mx_check` (it calls `verify`, a layer above
//! this one); [`check_fused`] and [`check_reference`] are doors to it at their former paths.
//!
//! An error about one of the four arrays names it ([`MxInputError::operand`]): the command line
//! prefixes that array's file, the Python package its argument.

use super::mx::MxGemm;
use super::problem::check_size;
use crate::hw::{CoreConfig, MxSpec};
use crate::numerics::dot::AccMode;
use crate::numerics::mx::BlockFormat;

/// One of the four arrays of a block-scaled problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MxOperand {
    /// A's element codes (`m x k`).
    A,
    /// B's element codes (`k x n`).
    B,
    /// A's block scale codes (`m x k/bs`).
    AScales,
    /// B's block scale codes (`k/bs x n`).
    BScales,
}

/// Why a block-scaled problem was refused: the command line's one-line message and, when it
/// is about one array, which.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct MxInputError {
    /// The array the message is about (the command line prefixes its file), if one.
    pub operand: Option<MxOperand>,
    /// The message.
    pub message: String,
}

impl MxInputError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            operand: None,
            message: message.into(),
        }
    }

    fn at(operand: MxOperand, message: impl Into<String>) -> Self {
        Self {
            operand: Some(operand),
            message: message.into(),
        }
    }
}

/// The block-format names, for messages.
pub fn format_names() -> String {
    BlockFormat::ALL.map(|f| f.name()).join(", ")
}

/// The refusal of block scales (`--a-scales`, `--b-scales`, the tensor scales) given with
/// the format `format`, which is not block-scaled.
pub fn scales_need_block_format(format: &str) -> MxInputError {
    MxInputError::new(format!(
        "--a-scales/--b-scales and the tensor scales need a block-scaled --format ({}), not \
         {format}",
        format_names()
    ))
}

/// The refusal of a missing input (`flag`: `--a`, `--b`, `--a-scales`, `--b-scales`).
pub fn missing(flag: &str) -> MxInputError {
    MxInputError::new(format!("block-scaled formats need {flag} (uint8 .npy)"))
}

/// The options of a GEMM request that MX formats do not take, as given.
#[derive(Clone, Copy, Debug, Default)]
pub struct MxOptions<'a> {
    /// The accumulation mode named (`None`: left out, i.e. the fused MX datapath).
    pub acc: Option<&'a str>,
    /// A GPU preset was named.
    pub preset: bool,
    /// A random problem (`--m/--n/--k`) was asked for.
    pub random: bool,
    /// 2:4 sparsity was asked for.
    pub sparse: bool,
    /// `$readmemh` golden images were asked for.
    pub memh: bool,
    /// Integer saturation was asked for.
    pub satfinite: bool,
    /// The output format named (`fp32` is the only one).
    pub out_format: &'a str,
}

impl MxOptions<'_> {
    /// Refuses the first option an MX GEMM does not take.
    pub fn check(&self) -> Result<(), MxInputError> {
        // Leaving the mode out means the fused MX datapath; any other mode named is refused
        // (an explicit `ieee` would otherwise run fused without a word).
        if let Some(acc) = self.acc {
            if !acc.eq_ignore_ascii_case("fused") {
                return Err(MxInputError::new(format!(
                    "--acc {acc}: MX GEMMs run the fused MX datapath (give --acc fused or leave it out)"
                )));
            }
        }
        let refused = [
            (self.preset, "--preset"),
            (
                self.random,
                "--m/--n/--k (MX takes --a, --b, --a-scales, --b-scales)",
            ),
            (self.sparse, "--sparse"),
            (self.memh, "--memh"),
            (self.satfinite, "--satfinite"),
            (
                !self.out_format.eq_ignore_ascii_case("fp32"),
                "--out-format other than fp32 (the MX datapath accumulates in FP32)",
            ),
        ];
        match refused.into_iter().find(|(given, _)| *given) {
            Some((_, what)) => Err(MxInputError::new(format!(
                "{what} is not available with MX formats"
            ))),
            None => Ok(()),
        }
    }
}

/// B's block format: `format_b` (a block-scaled name) or, without one, A's.
pub fn format_b(fa: BlockFormat, format_b: Option<&str>) -> Result<BlockFormat, MxInputError> {
    match format_b {
        Some(name) => BlockFormat::by_name(name).ok_or_else(|| {
            MxInputError::new(format!(
                "--format-b {name}: a block-scaled --format needs a block-scaled --format-b ({})",
                format_names()
            ))
        }),
        None => Ok(fa),
    }
}

/// Refuses a tensor scale (`flag`: `--a-tensor-scale` or `--b-tensor-scale`) for a format
/// other than NVFP4.
pub fn tensor_scale_allowed(fmt: BlockFormat, flag: &str) -> Result<(), MxInputError> {
    if fmt == BlockFormat::NvFp4 {
        Ok(())
    } else {
        Err(MxInputError::new(format!(
            "{flag} applies to nvfp4 only ({fmt} has none)"
        )))
    }
}

/// The spec of A's and B's block formats with their FP32 tensor scales (bits; NVFP4 only),
/// refusing formats that do not pair up.
pub fn spec(
    fa: BlockFormat,
    fb: BlockFormat,
    a_tensor: Option<u32>,
    b_tensor: Option<u32>,
) -> Result<MxSpec, MxInputError> {
    if a_tensor.is_some() {
        tensor_scale_allowed(fa, "--a-tensor-scale")?;
    }
    if b_tensor.is_some() {
        tensor_scale_allowed(fb, "--b-tensor-scale")?;
    }
    let spec = MxSpec::new(fa, fb).with_tensor_scales(a_tensor, b_tensor);
    spec.check()
        .map_err(|e| MxInputError::new(format!("--format {fa} --format-b {fb}: {e}")))?;
    Ok(spec)
}

/// The core configuration of `spec` at `width`: the lane formats and the fused mode, on the
/// default array (which the caller sizes); [`check_width`] refuses a width wider than a block.
pub fn core_config(spec: &MxSpec, width: usize) -> CoreConfig {
    CoreConfig::new(
        MxSpec::lane_format(spec.a),
        MxSpec::lane_format(spec.b),
        AccMode::Fused,
        width,
    )
}

/// Refuses a PE step wider than a block (a step must not straddle two).
pub fn check_width(spec: &MxSpec, width: usize) -> Result<(), MxInputError> {
    let bs = spec.block();
    if width > bs {
        return Err(MxInputError::new(format!(
            "--width {width}: {} blocks hold {bs} elements, and a PE step must not straddle two",
            spec.a
        )));
    }
    Ok(())
}

/// A matrix of codes as a front door read it: rows, columns and the codes, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Codes {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// The codes, row-major (`rows * cols` of them).
    pub codes: Vec<u64>,
}

/// Refuses a code that does not fit in `bits` bits (`name` names the matrix in the message).
fn check_fits(operand: MxOperand, name: &str, m: &Codes, bits: u32) -> Result<(), MxInputError> {
    if m.codes.len() != m.rows * m.cols {
        return Err(MxInputError::at(
            operand,
            format!(
                "{name} must be {} x {} ({} elements) but has {}",
                m.rows,
                m.cols,
                m.rows * m.cols,
                m.codes.len()
            ),
        ));
    }
    match m.codes.iter().position(|&w| w >> bits != 0) {
        Some(i) => Err(MxInputError::at(
            operand,
            format!(
                "{name}[{}][{}] = {:#04x} does not fit in {bits} bits",
                i / m.cols.max(1),
                i % m.cols.max(1),
                m.codes[i]
            ),
        )),
        None => Ok(()),
    }
}

/// Refuses NVFP4 scale codes with the sign bit set (UE4M3, PTX's unsigned E4M3).
fn check_scale_signs(fmt: BlockFormat, operand: MxOperand, s: &Codes) -> Result<(), MxInputError> {
    if fmt != BlockFormat::NvFp4 {
        return Ok(());
    }
    match s.codes.iter().position(|&x| x & 0x80 != 0) {
        Some(i) => Err(MxInputError::at(
            operand,
            format!(
                "scale [{}][{}] = {:#04x} has its sign bit set; NVFP4 block scales are \
                 unsigned E4M3 (UE4M3, as in PTX)",
                i / s.cols.max(1),
                i % s.cols.max(1),
                s.codes[i]
            ),
        )),
        None => Ok(()),
    }
}

/// A block-scaled problem's inputs before the checks.
#[derive(Clone, Debug)]
pub struct MxInput {
    /// The core: the lane formats and `fused` mode of [`core_config`], sized and with its
    /// dataflow.
    pub cfg: CoreConfig,
    /// The block formats and tensor scales ([`spec`]).
    pub spec: MxSpec,
    /// A's element codes, `m x k` (MXINT8: two's-complement bytes).
    pub a: Codes,
    /// B's element codes, `k x n`.
    pub b: Codes,
    /// A's scale codes, `m x k/bs`.
    pub a_scales: Codes,
    /// B's scale codes, `k/bs x n`.
    pub b_scales: Codes,
    /// C, `m x n` FP32 bits (`None`: zeros); its shape is the caller's to check.
    pub c: Option<Vec<u32>>,
}

impl MxInput {
    /// Checks the inputs in the command line's order and builds the problem: the width, the
    /// element codes within their lane format's bits, the inner dimensions, K a positive
    /// multiple of the block size, the size, each scale matrix's codes, shape and (NVFP4)
    /// sign bits, and C's length.
    pub fn build(self) -> Result<MxGemm, MxInputError> {
        let MxInput {
            cfg,
            spec,
            a,
            b,
            a_scales,
            b_scales,
            c,
        } = self;
        let (fa, fb) = (spec.a, spec.b);
        let (ea, eb) = (MxSpec::lane_format(fa), MxSpec::lane_format(fb));
        if (cfg.fmt_a, cfg.fmt_b, cfg.mode) != (ea, eb, AccMode::Fused) {
            return Err(MxInputError::new(format!(
                "the core runs {} x {} in {}, not the lanes of {fa} x {fb} in the fused MX mode",
                cfg.fmt_a,
                cfg.fmt_b,
                cfg.mode.name()
            )));
        }
        check_width(&spec, cfg.width)?;
        check_fits(MxOperand::A, "A", &a, ea.width())?;
        check_fits(MxOperand::B, "B", &b, eb.width())?;
        let (m, k, kb, n) = (a.rows, a.cols, b.rows, b.cols);
        if k != kb {
            return Err(MxInputError::new(format!(
                "inner dimensions differ: A is {m} x {k} but B is {kb} x {n}"
            )));
        }
        let bs = spec.block();
        if !k.is_multiple_of(bs) || k == 0 {
            return Err(MxInputError::new(format!(
                "K = {k}: {fa} GEMMs need K a multiple of {bs} (one scale per {bs} elements)"
            )));
        }
        check_size(m, n, k).map_err(|e| MxInputError::new(e.to_string()))?;
        let blocks = k / bs;
        check_fits(MxOperand::AScales, "A scales", &a_scales, 8)?;
        if (a_scales.rows, a_scales.cols) != (m, blocks) {
            return Err(MxInputError::at(
                MxOperand::AScales,
                format!(
                    "A scales are {} x {} but A ({m} x {k}) needs {m} x {blocks}",
                    a_scales.rows, a_scales.cols
                ),
            ));
        }
        check_scale_signs(fa, MxOperand::AScales, &a_scales)?;
        check_fits(MxOperand::BScales, "B scales", &b_scales, 8)?;
        if (b_scales.rows, b_scales.cols) != (blocks, n) {
            return Err(MxInputError::at(
                MxOperand::BScales,
                format!(
                    "B scales are {} x {} but B ({k} x {n}) needs {blocks} x {n}",
                    b_scales.rows, b_scales.cols
                ),
            ));
        }
        check_scale_signs(fb, MxOperand::BScales, &b_scales)?;
        let c = match c {
            Some(c) if c.len() != m * n => {
                return Err(MxInputError::new(format!(
                    "C must be {m} x {n} ({} elements) but has {}",
                    m * n,
                    c.len()
                )))
            }
            Some(c) => c,
            None => vec![0; m * n],
        };
        // Every code fits in 8 bits (checked above).
        let bytes = |s: Vec<u64>| s.into_iter().map(|x| x as u8).collect();
        Ok(MxGemm {
            cfg,
            spec,
            m,
            n,
            k,
            a: a.codes,
            b: b.codes,
            c,
            a_scales: bytes(a_scales.codes),
            b_scales: bytes(b_scales.codes),
        })
    }
}

pub use crate::io::mx_check::{check_fused, check_reference};
