//! Block-scaled formats: OCP Microscaling (MX v1.0) and NVIDIA's NVFP4. Quantisation of
//! rows of values into blocks along the last axis, and dequantisation.
//!
//! MX (`mxfp8e4m3`, `mxfp8e5m2`, `mxfp6e2m3`, `mxfp6e3m2`, `mxfp4`, `mxint8`): each block of
//! 32 consecutive elements of a row shares one E8M0 scale `X = 2^s`, with
//! `s = floor(log2(max |v|)) - emax_elem`, clamped to the E8M0 range `[-127, 127]`; an
//! all-zero block takes `s = -127` (code `0x00`). Every element is `v / 2^s` rounded to
//! nearest even and clamped to the element format's largest finite value (the scaling by a
//! power of two is exact, so there is one rounding). `emax_elem` is the exponent of the
//! element format's largest binade: E4M3 8, E5M2 15, E2M3 2, E3M2 4, E2M1 2, INT8 0.
//! MXINT8 elements are two's-complement integers `q` of value `q * 2^-6`, clamped to
//! `[-127, 127]` (symmetric, as Microsoft's microxcaling reference code does; `-128` is never
//! produced). A block holding a NaN or an infinity has no finite shared exponent: its scale
//! is the E8M0 NaN `0xFF` (as microxcaling gives), which by the specification makes every
//! element of the block NaN; its elements are written as the element format's NaN where it
//! has one (E4M3 `0x7F`, E5M2 `0x7E`) and as `0` otherwise.
//!
//! NVFP4 (`nvfp4`): E2M1 elements in blocks of 16, one E4M3 scale per block and one FP32
//! scale per tensor, the two-level recipe of NVIDIA's TensorRT Model Optimizer
//! (`NVFP4QTensor`), computed in FP32 arithmetic (IEEE round to nearest even):
//! `t = amax / (6 * 448)` over the whole tensor (`t = 1` for an all-zero tensor);
//! per block `b = E4M3_rne_sat((amax_block / 6) / t)`; each element
//! `E2M1_rne_sat(v / (b * t))`; a block whose scale rounds to zero keeps scale `0` and
//! elements `±0`. A value decodes as `e2m1 * b * t`. NaN and infinite inputs are refused.
//!
//! Partial blocks: a row whose length is not a multiple of the block size ends in a shorter
//! block, which takes its own scale like any other.

use super::convert::convert;
use super::flags::RoundingMode;
use super::format::{Class, Format, E2M1, E2M3, E3M2, E4M3, E5M2, E8M0, FP32};
use super::round::{round_increment, round_pack, shift_right_loss, Overflow, Unrounded};
use super::unpack::{unpack, Unpacked};

/// The element type of a block format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Element {
    /// A floating-point element format (E4M3, E5M2, E2M3, E3M2, E2M1).
    Float(Format),
    /// MXINT8: an 8-bit two's-complement integer of value `q * 2^-6`.
    Int8,
}

/// A block-scaled format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockFormat {
    /// MXFP8 with E4M3 elements.
    MxFp8E4M3,
    /// MXFP8 with E5M2 elements.
    MxFp8E5M2,
    /// MXFP6 with E2M3 elements.
    MxFp6E2M3,
    /// MXFP6 with E3M2 elements.
    MxFp6E3M2,
    /// MXFP4: E2M1 elements.
    MxFp4,
    /// MXINT8: INT8 elements scaled by `2^-6`.
    MxInt8,
    /// NVFP4: E2M1 elements, an E4M3 scale per 16 and an FP32 scale per tensor.
    NvFp4,
}

/// Fraction bits of an MXINT8 element (`q * 2^-6`).
pub const INT8_FRAC_BITS: i32 = 6;

impl BlockFormat {
    /// Every block format, in table order.
    pub const ALL: [BlockFormat; 7] = [
        BlockFormat::MxFp8E4M3,
        BlockFormat::MxFp8E5M2,
        BlockFormat::MxFp6E2M3,
        BlockFormat::MxFp6E3M2,
        BlockFormat::MxFp4,
        BlockFormat::MxInt8,
        BlockFormat::NvFp4,
    ];

    /// The command-line name (`mxfp8e4m3`, ..., `nvfp4`).
    pub const fn name(self) -> &'static str {
        match self {
            BlockFormat::MxFp8E4M3 => "mxfp8e4m3",
            BlockFormat::MxFp8E5M2 => "mxfp8e5m2",
            BlockFormat::MxFp6E2M3 => "mxfp6e2m3",
            BlockFormat::MxFp6E3M2 => "mxfp6e3m2",
            BlockFormat::MxFp4 => "mxfp4",
            BlockFormat::MxInt8 => "mxint8",
            BlockFormat::NvFp4 => "nvfp4",
        }
    }

    /// Looks a block format up by name (case-insensitive).
    pub fn by_name(name: &str) -> Option<BlockFormat> {
        Self::ALL
            .iter()
            .copied()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }

    /// The element type.
    pub const fn element(self) -> Element {
        match self {
            BlockFormat::MxFp8E4M3 => Element::Float(E4M3),
            BlockFormat::MxFp8E5M2 => Element::Float(E5M2),
            BlockFormat::MxFp6E2M3 => Element::Float(E2M3),
            BlockFormat::MxFp6E3M2 => Element::Float(E3M2),
            BlockFormat::MxFp4 | BlockFormat::NvFp4 => Element::Float(E2M1),
            BlockFormat::MxInt8 => Element::Int8,
        }
    }

    /// Elements per block (32 for MX, 16 for NVFP4).
    pub const fn block_size(self) -> usize {
        match self {
            BlockFormat::NvFp4 => 16,
            _ => 32,
        }
    }

    /// The format of the per-block scale (E8M0 for MX, E4M3 for NVFP4).
    pub const fn scale_format(self) -> Format {
        match self {
            BlockFormat::NvFp4 => E4M3,
            _ => E8M0,
        }
    }

    /// Width of an element in bits.
    pub const fn element_bits(self) -> u32 {
        match self.element() {
            Element::Float(f) => f.width(),
            Element::Int8 => 8,
        }
    }

    /// Exponent of the element format's largest binade (`emax_elem` of the MX specification).
    pub const fn element_emax(self) -> i32 {
        match self.element() {
            Element::Float(f) => f.emax(),
            Element::Int8 => 0,
        }
    }
}

impl std::fmt::Display for BlockFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a tensor cannot be quantised.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MxError {
    /// NVFP4 takes finite values only.
    #[error("element {index} is {what}: nvfp4 takes finite values only")]
    NotFinite {
        /// Flat index of the value.
        index: usize,
        /// `NaN` or `Inf`.
        what: &'static str,
    },
    /// A row length of zero, or a value count that is not a whole number of rows.
    #[error("{count} values do not form rows of {row_len}")]
    Shape {
        /// Number of values.
        count: usize,
        /// Row length asked for.
        row_len: usize,
    },
}

/// A quantised tensor: element codes (row-major, as the input), one scale code per block
/// (row-major: `rows x ceil(row_len / block_size)`), and NVFP4's FP32 tensor scale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantised {
    /// The format.
    pub format: BlockFormat,
    /// Row length (the last axis).
    pub row_len: usize,
    /// Element codes in the low `element_bits()` bits (MXINT8: the two's-complement byte).
    pub elements: Vec<u64>,
    /// Scale codes (E8M0 or E4M3).
    pub scales: Vec<u64>,
    /// NVFP4's per-tensor FP32 scale (bits); `None` for MX.
    pub tensor_scale: Option<u32>,
}

impl Quantised {
    /// Scale blocks per row.
    pub fn blocks_per_row(&self) -> usize {
        self.row_len.div_ceil(self.format.block_size())
    }
}

/// `floor(log2 |x|)` of a nonzero finite unpacked value.
fn floor_log2(u: &Unpacked) -> i32 {
    u.lsb_exp() + 63 - u.sig.leading_zeros() as i32
}

/// Quantises the values `words` (encodings of `src`, e.g. FP32 or FP64) in rows of
/// `row_len` into `fmt` (see the module documentation).
pub fn quantise(
    fmt: BlockFormat,
    src: Format,
    words: &[u64],
    row_len: usize,
) -> Result<Quantised, MxError> {
    if row_len == 0 || !words.len().is_multiple_of(row_len) {
        return Err(MxError::Shape {
            count: words.len(),
            row_len,
        });
    }
    let unpacked: Vec<Unpacked> = words.iter().map(|&w| unpack(src, w)).collect();
    match fmt {
        BlockFormat::NvFp4 => quantise_nvfp4(&unpacked, src, words, row_len),
        _ => Ok(quantise_mx(fmt, &unpacked, row_len)),
    }
}

/// The MX path of [`quantise`].
fn quantise_mx(fmt: BlockFormat, values: &[Unpacked], row_len: usize) -> Quantised {
    let bs = fmt.block_size();
    let mut elements = Vec::with_capacity(values.len());
    let mut scales = Vec::new();
    for row in values.chunks(row_len) {
        for block in row.chunks(bs) {
            let special = block.iter().any(|u| u.is_nan() || u.is_inf());
            if special {
                scales.push(E8M0.canonical_nan());
                let nan = match fmt.element() {
                    Element::Float(f) if f.has_nan() => f.canonical_nan(),
                    _ => 0,
                };
                elements.extend(block.iter().map(|_| nan));
                continue;
            }
            let s = block
                .iter()
                .filter(|u| !u.is_zero())
                .map(floor_log2)
                .max()
                .map_or(-127, |e| (e - fmt.element_emax()).clamp(-127, 127));
            scales.push((s + E8M0.bias) as u64);
            elements.extend(block.iter().map(|u| quantise_element(fmt.element(), u, s)));
        }
    }
    Quantised {
        format: fmt,
        row_len,
        elements,
        scales,
        tensor_scale: None,
    }
}

/// One finite element `u / 2^s`, rounded to nearest even and clamped.
fn quantise_element(elem: Element, u: &Unpacked, s: i32) -> u64 {
    match elem {
        Element::Float(f) => {
            round_pack(
                f,
                Unrounded {
                    sign: u.sign,
                    exp: u.lsb_exp() - s,
                    sig: u.sig as u128,
                    sticky: false,
                },
                RoundingMode::NearestEven,
                Overflow::Saturate,
            )
            .bits
        }
        Element::Int8 => {
            // q = RNE(u * 2^(6 - s)), clamped to [-127, 127].
            let shift = s - INT8_FRAC_BITS - u.lsb_exp();
            let mag: u64 = if u.is_zero() {
                0
            } else if shift <= 0 {
                let up = (-shift) as u32;
                if up >= 8 || (u.sig << up) > 127 {
                    127
                } else {
                    u.sig << up
                }
            } else {
                let (kept, loss) = shift_right_loss(u.sig as u128, shift as u32);
                let inc = round_increment(RoundingMode::NearestEven, u.sign, kept, loss);
                (kept + inc as u128).min(127) as u64
            };
            let q = if u.sign { -(mag as i64) } else { mag as i64 };
            (q as u64) & 0xFF
        }
    }
}

/// The NVFP4 path of [`quantise`]: FP32 arithmetic throughout (see the module documentation).
fn quantise_nvfp4(
    values: &[Unpacked],
    src: Format,
    words: &[u64],
    row_len: usize,
) -> Result<Quantised, MxError> {
    let mut x = Vec::with_capacity(values.len());
    for (index, (u, &w)) in values.iter().zip(words).enumerate() {
        match u.class {
            Class::Nan => return Err(MxError::NotFinite { index, what: "NaN" }),
            Class::Infinite => return Err(MxError::NotFinite { index, what: "Inf" }),
            _ => {}
        }
        let bits = convert(src, FP32, w, RoundingMode::NearestEven, Overflow::Ieee).bits;
        let v = f32::from_bits(bits as u32);
        if !v.is_finite() {
            // A finite FP64 input beyond FP32's range.
            return Err(MxError::NotFinite { index, what: "Inf" });
        }
        x.push(v);
    }
    let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
    let t = if amax == 0.0 {
        1.0f32
    } else {
        amax / (6.0f32 * 448.0f32)
    };
    let fp32_to = |fmt: Format, v: f32| {
        convert(
            FP32,
            fmt,
            v.to_bits() as u64,
            RoundingMode::NearestEven,
            Overflow::Saturate,
        )
        .bits
    };
    let mut elements = Vec::with_capacity(x.len());
    let mut scales = Vec::new();
    for row in x.chunks(row_len) {
        for block in row.chunks(16) {
            let bmax = block.iter().fold(0f32, |m, v| m.max(v.abs()));
            let b_code = fp32_to(E4M3, (bmax / 6.0f32) / t);
            scales.push(b_code);
            let b = f32::from_bits(super::convert::to_fp32(E4M3, b_code));
            let d = b * t;
            for &v in block {
                if d == 0.0 {
                    elements.push(E2M1.zero(v.is_sign_negative()));
                } else {
                    elements.push(fp32_to(E2M1, v / d));
                }
            }
        }
    }
    Ok(Quantised {
        format: BlockFormat::NvFp4,
        row_len,
        elements,
        scales,
        tensor_scale: Some(t.to_bits()),
    })
}

/// The exact value of one element code of `elem`.
pub fn element_value(elem: Element, code: u64) -> f64 {
    match elem {
        Element::Float(f) => decode_f64(f, code),
        Element::Int8 => (code as u8 as i8) as f64 * 2f64.powi(-INT8_FRAC_BITS),
    }
}

/// The exact value of an encoding of `fmt` as an f64 (every format in the table fits).
pub fn decode_f64(fmt: Format, code: u64) -> f64 {
    let u = unpack(fmt, code);
    let sign = if u.sign { -1.0 } else { 1.0 };
    match u.class {
        Class::Nan => f64::NAN,
        Class::Infinite => sign * f64::INFINITY,
        _ => sign * u.sig as f64 * 2f64.powi(u.lsb_exp()),
    }
}

/// How many of the source values `words` (encodings of `src`, as given to [`quantise`])
/// exceeded the largest magnitude their block can hold (the largest element times the
/// block's scale and tensor scale) and were therefore set to it, as the MX rule clamps. A
/// report for the user, computed in `f64`; NaN inputs and NaN-scaled blocks are not counted.
pub fn clamped_count(q: &Quantised, src: Format, words: &[u64]) -> usize {
    let largest = match q.format.element() {
        Element::Float(f) => decode_f64(f, f.max_finite(false)),
        Element::Int8 => 127.0 * 2f64.powi(-INT8_FRAC_BITS),
    };
    let bs = q.format.block_size();
    let per_row = q.blocks_per_row();
    let sf = q.format.scale_format();
    let t = q.tensor_scale.map_or(1.0, |b| f32::from_bits(b) as f64);
    words
        .iter()
        .enumerate()
        .filter(|&(i, &w)| {
            let (row, col) = (i / q.row_len, i % q.row_len);
            let limit = largest * decode_f64(sf, q.scales[row * per_row + col / bs]) * t;
            decode_f64(src, w).abs() > limit.abs()
        })
        .count()
}

/// Dequantises `q`: every element times its block's scale (and NVFP4's tensor scale),
/// exactly, as f64. A NaN scale makes its whole block NaN.
pub fn dequantise(q: &Quantised) -> Vec<f64> {
    let bs = q.format.block_size();
    let per_row = q.blocks_per_row();
    let sf = q.format.scale_format();
    let t = q.tensor_scale.map_or(1.0, |b| f32::from_bits(b) as f64);
    q.elements
        .iter()
        .enumerate()
        .map(|(i, &code)| {
            let (row, col) = (i / q.row_len, i % q.row_len);
            let scale = decode_f64(sf, q.scales[row * per_row + col / bs]);
            element_value(q.format.element(), code) * scale * t
        })
        .collect()
}
