//! Waveform labels for the tensor core's packed signals: what the translate filter process
//! `tcrtl wave-filter <kind>` answers GTKWave for each value it is handed.
//!
//! GTKWave writes the value of a filtered trace as the hex text it would display (most
//! significant digit first, one value a line) and shows the line the filter answers instead.
//! [`translate`] turns that text into a label for one of these kinds:
//!
//! | kind | signals | label |
//! |---|---|---|
//! | a format name (`fp16`, `bf16`, `e4m3`, `e5m2`, `fp32`, ...) | operand buses (`a_in`, `b_out`, ...) | the lanes' decimal values, lane 0 first, separated by `\|` |
//! | `ctl` | the PE control word (`a_ctl`, `s1_ctl`, the A skew's tags) | `n=<lanes>` and the set bits: `valid`, `set1`, `fire`, `last`; `-` for 0 |
//! | `tag` | the output tag of the 4 x 4 array (`d_tag`, the drain de-skew's tags) | `tile <t> row <r>` and `last`; `-` when not valid |
//! | `meta` | 2:4 metadata (`meta_in`, `meta_out`) | one `{i0,i1}` pair of kept indices per 4-bit nibble, group 0 first |
//! | `prod` | the exact products of a floating-point or MX PE (`s1_prod`, 64 bits a lane; `gather_<k>`, one 46-bit word) | per lane its exact value, then sign, exponent sum, significand product and its fraction bits: `-12.5 (- e=3 sig=0x190 f=5)`; `-` for an empty lane |
//! | `iprod` | the exact products of an integer PE (`s1_prod`, a 17-bit two's-complement product in each 64-bit lane) | the signed decimal product of each lane |
//! | `blksum` | the MX block sum (`blk_sum`, 72-bit two's complement) | its fixed-point value and the integer it holds: `-15.25 (-65498251264 x 2^-32)` |
//!
//! The fields come from the hardware's own bundles ([`ACtl::unpack`],
//! [`DTag::unpack`], [`unpack_product`], [`unpack_int_product`],
//! [`BlockState::sum_from_bits`]); text GTKWave sends that is not plain hex (a value with `x`
//! or `z` bits) is answered unchanged. Lanes are separated by ` | `, lane 0 first.

use crate::hw::core::DTag;
use crate::hw::pe::fp::unpack_product;
use crate::hw::pe::int::unpack_int_product;
use crate::hw::pe::ACtl;
use crate::numerics::convert::to_fp32;
use crate::numerics::format::Format;
use crate::numerics::multiply::{Product, ProductClass};
use crate::numerics::mx_block::{BlockState, BLOCK_SUM_BITS, BLOCK_SUM_LSB};

/// The filter kinds besides the format names.
pub const KINDS: [&str; 10] = [
    "ctl", "tag", "tag_r1", "tag_r3", "tag_r4", "tag_r5", "meta", "prod", "iprod", "blksum",
];

/// The output-tag filters by the width of the tag's row field: `tag` for the default 4 x 4
/// array's 2 bits, `tag_r<bits>` for the other arrays' (1 bit for 1 or 2 rows, up to 5 for
/// 17 to 32).
const TAG_FILTERS: [&str; 5] = ["tag_r1", "tag", "tag_r3", "tag_r4", "tag_r5"];

/// The filter that decodes an output tag whose row field is `row_bits` wide
/// ([`crate::hw::controller::index_bits`] of the array's rows, 1 to 5).
pub fn tag_filter(row_bits: u32) -> &'static str {
    TAG_FILTERS[(row_bits.clamp(1, 5) - 1) as usize]
}

/// Bits a lane of the stage-1 register (`s1_prod`) takes in the waveform.
const STAGE1_LANE_BITS: usize = 64;

/// The most significant decimal digits an exact value is written with; a longer one is
/// written as its nearest double, marked `~`.
const EXACT_DIGITS: usize = 24;

/// What one filter process decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterKind {
    /// Lanes of a floating-point format.
    Lanes(Format),
    /// The PE control word.
    Ctl,
    /// The output tag, whose row field has this many bits.
    Tag(u32),
    /// 2:4 metadata nibbles.
    Meta,
    /// Exact floating-point products (`s1_prod` lanes, `gather_<k>` words).
    Product,
    /// Exact integer products (`s1_prod` lanes of an integer PE).
    IntProduct,
    /// The MX block sum (`blk_sum`).
    BlockSum,
}

impl FilterKind {
    /// The kind named `name` (a format name or one of [`KINDS`]); `None` if unknown.
    pub fn by_name(name: &str) -> Option<FilterKind> {
        match name {
            "ctl" => Some(FilterKind::Ctl),
            _ if TAG_FILTERS.contains(&name) => TAG_FILTERS
                .iter()
                .position(|&t| t == name)
                .map(|i| FilterKind::Tag(i as u32 + 1)),
            "meta" => Some(FilterKind::Meta),
            "prod" => Some(FilterKind::Product),
            "iprod" => Some(FilterKind::IntProduct),
            "blksum" => Some(FilterKind::BlockSum),
            _ => Format::by_name(name)
                .filter(|f| f.width() <= 32)
                .map(FilterKind::Lanes),
        }
    }
}

/// The hex text as little-endian nibbles; `None` if it is empty or not plain hex.
fn nibbles(hex: &str) -> Option<Vec<u8>> {
    let hex = hex.trim();
    if hex.is_empty() {
        return None;
    }
    hex.chars()
        .rev()
        .map(|c| c.to_digit(16).map(|d| d as u8))
        .collect()
}

/// Bits `lo .. lo + width` (`width` at most 64) of the value the nibbles hold.
fn field(nib: &[u8], lo: usize, width: usize) -> u64 {
    field128(nib, lo, width.min(64)) as u64
}

/// Bits `lo .. lo + width` (`width` at most 128) of the value the nibbles hold.
fn field128(nib: &[u8], lo: usize, width: usize) -> u128 {
    (0..width.min(128)).fold(0u128, |acc, i| {
        let bit = lo + i;
        let set = nib.get(bit / 4).is_some_and(|n| (n >> (bit % 4)) & 1 == 1);
        acc | (u128::from(set) << i)
    })
}

/// The lanes of `lane_bits` bits each that the nibbles hold (a partly shown top lane counts).
fn lane_count(nib: &[u8], lane_bits: usize) -> usize {
    (nib.len() * 4).div_ceil(lane_bits).max(1)
}

/// `magnitude x 2^exp` as an exact decimal (`12.5`, `0.0009765625`, `-3`), or, when that
/// takes more than [`EXACT_DIGITS`] significant digits (or leaves the range of a double), as
/// the nearest double marked `~` (`~3.552713678800501e-15`).
fn exact_decimal(negative: bool, magnitude: u128, exp: i32) -> String {
    let sign = if negative { "-" } else { "" };
    if magnitude == 0 {
        return format!("{sign}0");
    }
    // The same value with an odd magnitude (or a non-negative exponent): fewer digits to form.
    let zeros = magnitude.trailing_zeros().min(exp.unsigned_abs()) as i32;
    let (magnitude, exp) = if exp < 0 {
        (magnitude >> zeros, exp + zeros)
    } else {
        (magnitude, exp)
    };
    if exp >= 0 {
        if let Some(v) = magnitude
            .checked_shl(exp as u32)
            .filter(|v| v >> exp == magnitude)
        {
            return format!("{sign}{v}");
        }
    } else if let Ok(frac_digits) = usize::try_from(-exp) {
        // magnitude / 2^f = magnitude x 5^f / 10^f: f decimal places, exactly.
        let scaled = (0..frac_digits).try_fold(magnitude, |v, _| v.checked_mul(5));
        if let Some(scaled) = scaled {
            let digits = scaled.to_string();
            let padded = format!("{digits:0>width$}", width = frac_digits + 1);
            let (int, frac) = padded.split_at(padded.len() - frac_digits);
            let frac = frac.trim_end_matches('0');
            let significant = format!("{int}{frac}").trim_start_matches('0').len();
            if significant <= EXACT_DIGITS {
                return if frac.is_empty() {
                    format!("{sign}{int}")
                } else {
                    format!("{sign}{int}.{frac}")
                };
            }
        }
    }
    let v = (magnitude as f64) * 2f64.powi(exp);
    if v.is_finite() && v != 0.0 {
        format!("~{sign}{v:e}")
    } else {
        format!("{sign}{magnitude:#x} x 2^{exp}")
    }
}

/// The label of one product word ([`unpack_product`]): its exact value, then its fields.
fn product_label(word: u64) -> String {
    if word == 0 {
        return "-".into();
    }
    let p: Product = unpack_product(word);
    let s = if p.sign { "-" } else { "+" };
    let fields = format!("{s} e={} sig={:#x} f={}", p.exp_sum, p.sig, p.frac_bits);
    let value = match p.class {
        ProductClass::Zero => format!("{s}0"),
        ProductClass::Finite => exact_decimal(p.sign, u128::from(p.sig), p.lsb_exp()),
        ProductClass::Infinite => format!("{s}inf"),
        ProductClass::Nan => "NaN".into(),
    };
    let invalid = if p.flags.invalid { " invalid" } else { "" };
    format!("{value} ({fields}){invalid}")
}

/// The label of the value GTKWave shows as `hex`, for `kind`.
pub fn translate(kind: FilterKind, hex: &str) -> String {
    let Some(nib) = nibbles(hex) else {
        return hex.trim().to_string();
    };
    match kind {
        FilterKind::Lanes(fmt) => {
            let w = fmt.width() as usize;
            let lanes = (nib.len() * 4 / w).max(1);
            (0..lanes)
                .map(|k| format!("{:?}", f32::from_bits(to_fp32(fmt, field(&nib, k * w, w)))))
                .collect::<Vec<_>>()
                .join(" | ")
        }
        FilterKind::Ctl => {
            let ctl = field(&nib, 0, 16) as u16;
            if ctl == 0 {
                return "-".into();
            }
            let c = ACtl::unpack(ctl);
            let mut parts = vec![format!("n={}", c.lanes())];
            for (on, name) in [
                (c.valid(), "valid"),
                (c.set(), "set1"),
                (c.fire(), "fire"),
                (c.last(), "last"),
            ] {
                if on {
                    parts.push(name.into());
                }
            }
            parts.join(" ")
        }
        FilterKind::Tag(row_bits) => {
            let tag = DTag::unpack(field(&nib, 0, 64), row_bits);
            if !tag.valid {
                return "-".into();
            }
            let last = if tag.last { " last" } else { "" };
            format!("tile {} row {}{last}", tag.tile, tag.row)
        }
        FilterKind::Meta => (0..nib.len())
            .map(|g| format!("{{{},{}}}", nib[g] & 3, nib[g] >> 2))
            .collect::<Vec<_>>()
            .join(" "),
        FilterKind::Product => (0..lane_count(&nib, STAGE1_LANE_BITS))
            .map(|k| product_label(field(&nib, k * STAGE1_LANE_BITS, STAGE1_LANE_BITS)))
            .collect::<Vec<_>>()
            .join(" | "),
        FilterKind::IntProduct => (0..lane_count(&nib, STAGE1_LANE_BITS))
            .map(|k| {
                unpack_int_product(field(&nib, k * STAGE1_LANE_BITS, STAGE1_LANE_BITS)).to_string()
            })
            .collect::<Vec<_>>()
            .join(" | "),
        FilterKind::BlockSum => {
            let sum = BlockState::sum_from_bits(field128(&nib, 0, BLOCK_SUM_BITS as usize));
            let value = exact_decimal(sum < 0, sum.unsigned_abs(), BLOCK_SUM_LSB);
            format!("{value} ({sum} x 2^{BLOCK_SUM_LSB})")
        }
    }
}
