//! The arithmetic a front door names: operand formats, accumulation mode and GPU preset read
//! from their names and checked together, the same for the `tcrtl` command line and the
//! Python package (so both refuse a bad combination with the same one-line message).

use crate::io::values::{input_format, preset};
use crate::numerics::dot::{AccMode, Preset};
use crate::numerics::format::Format;
use crate::numerics::int::{pair_ok, IntFormat};

/// The names of the arithmetic as typed: `--format`, `--format-b`, `--acc`, `--preset`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ArithNames<'a> {
    /// Format of A (and of B unless `format_b`).
    pub format: &'a str,
    /// Format of B, if it differs from A's.
    pub format_b: Option<&'a str>,
    /// Accumulation mode (`ieee` when not given).
    pub acc: Option<&'a str>,
    /// GPU preset, for `nvidia`.
    pub preset: Option<&'a str>,
}

/// What [`ArithNames`] resolve to.
#[derive(Clone, Copy, Debug)]
pub struct Arith {
    /// Format of A.
    pub fmt_a: Format,
    /// Format of B.
    pub fmt_b: Format,
    /// The accumulation mode (with the preset's parameters for nvidia).
    pub mode: AccMode,
    /// The preset, for nvidia.
    pub preset: Option<Preset>,
}

impl ArithNames<'_> {
    /// The accumulation mode's name: `acc`, or `ieee` when it was not given.
    pub fn acc(&self) -> &str {
        self.acc.unwrap_or("ieee")
    }

    /// Checks the names and builds the mode for the accumulator format `acc` (the nvidia
    /// parameters are the preset's for that output); a preset is required by, and only
    /// allowed with, `nvidia`.
    pub fn resolve_acc(&self, acc: Format) -> Result<Arith, String> {
        let fmt_a = input_format(self.format)?;
        let fmt_b = match self.format_b {
            Some(name) => input_format(name)?,
            None => fmt_a,
        };
        let preset = self.preset.map(preset).transpose()?;
        let mode = match (self.acc().to_ascii_lowercase().as_str(), preset) {
            ("nvidia", Some(p)) => {
                AccMode::Nvidia(p.params_for(fmt_a, fmt_b, acc).map_err(|e| e.to_string())?)
            }
            ("nvidia", None) => return Err("--acc nvidia needs --preset".into()),
            (_, Some(_)) => return Err("--preset only applies to --acc nvidia".into()),
            ("ieee", None) => AccMode::Ieee,
            ("fused", None) => AccMode::Fused,
            ("exact", None) => AccMode::Exact,
            (other, None) => {
                return Err(format!(
                    "unknown accumulation mode {other:?} (expected ieee, fused, exact or nvidia)"
                ))
            }
        };
        Ok(Arith {
            fmt_a,
            fmt_b,
            mode,
            preset,
        })
    }

    /// [`ArithNames::resolve_acc`] for the clocked tensor core, which has no `exact` datapath
    /// (`exact` rounds once over all of K: a reference, offered by the dot product only).
    pub fn resolve_datapath(&self, acc: Format) -> Result<Arith, String> {
        let arith = self.resolve_acc(acc)?;
        if arith.mode == AccMode::Exact {
            return Err(
                "--acc exact is a reference, not a datapath: the tensor core runs ieee, fused or nvidia"
                    .into(),
            );
        }
        Ok(arith)
    }

    /// The integer formats of A and B if `format` (or `format_b`) names one (`s8`, `u8`,
    /// `s4`, `u4`); `None` for floating-point formats. Integers take no accumulation mode or
    /// preset (their accumulator is an exact int32), both operands must be integers, and
    /// 8-bit pairs with 8-bit and 4-bit with 4-bit, as in PTX.
    pub fn int_formats(&self) -> Result<Option<(IntFormat, IntFormat)>, String> {
        let fa = IntFormat::input_by_name(self.format);
        let fb = self.format_b.map(IntFormat::input_by_name);
        let (fa, fb) = match (fa, fb) {
            (None, None | Some(None)) => return Ok(None),
            (Some(a), None) => (a, a),
            (Some(a), Some(Some(b))) => (a, b),
            (Some(a), Some(None)) => {
                return Err(format!(
                    "cannot pair integer format {a} with {:?}: both operands must be integers (s8, u8, s4, u4)",
                    self.format_b.unwrap_or_default()
                ))
            }
            (None, Some(Some(b))) => {
                return Err(format!(
                    "cannot pair {:?} with integer format {b}: both operands must be integers (s8, u8, s4, u4)",
                    self.format
                ))
            }
        };
        if !pair_ok(fa, fb) {
            return Err(format!(
                "cannot pair {fa} with {fb}: 8-bit integers pair with 8-bit, 4-bit with 4-bit"
            ));
        }
        if self.preset.is_some() || self.acc.is_some() {
            return Err("integer formats accumulate exactly in int32: drop --acc and --preset (use --satfinite to clamp instead of wrapping)".into());
        }
        Ok(Some((fa, fb)))
    }
}
