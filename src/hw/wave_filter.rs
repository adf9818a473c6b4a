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
//!
//! The fields come from the hardware's own bundles ([`ACtl::unpack`],
//! [`DTag::unpack`]); text GTKWave sends that is not plain hex (a value with `x` or `z` bits)
//! is answered unchanged.

use crate::hw::controller::index_bits;
use crate::hw::pe::ACtl;
use crate::hw::tensor_core::DTag;
use crate::hw::ROWS;
use crate::numerics::convert::to_fp32;
use crate::numerics::format::Format;

/// The filter kinds besides the format names.
pub const KINDS: [&str; 3] = ["ctl", "tag", "meta"];

/// What one filter process decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterKind {
    /// Lanes of a floating-point format.
    Lanes(Format),
    /// The PE control word.
    Ctl,
    /// The output tag.
    Tag,
    /// 2:4 metadata nibbles.
    Meta,
}

impl FilterKind {
    /// The kind named `name` (a format name or one of [`KINDS`]); `None` if unknown.
    pub fn by_name(name: &str) -> Option<FilterKind> {
        match name {
            "ctl" => Some(FilterKind::Ctl),
            "tag" => Some(FilterKind::Tag),
            "meta" => Some(FilterKind::Meta),
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
    (0..width).fold(0u64, |acc, i| {
        let bit = lo + i;
        let set = nib.get(bit / 4).is_some_and(|n| (n >> (bit % 4)) & 1 == 1);
        acc | (u64::from(set) << i)
    })
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
            let mut parts = vec![format!("n={}", c.lanes)];
            for (on, name) in [
                (c.valid, "valid"),
                (c.set, "set1"),
                (c.fire, "fire"),
                (c.last, "last"),
            ] {
                if on {
                    parts.push(name.into());
                }
            }
            parts.join(" ")
        }
        FilterKind::Tag => {
            let tag = DTag::unpack(field(&nib, 0, 64), index_bits(ROWS));
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
    }
}
