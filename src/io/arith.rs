//! The arithmetic a front door names: operand formats, accumulation mode and GPU preset read
//! from their names and checked together, the same for the `tcrtl` command line and the
//! Python package (so both refuse a bad combination with the same one-line message).

use crate::io::values::{gpu, input_format, instr, preset};
use crate::numerics::dot::{AccMode, GpuRule, Preset};
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
    /// GPU, for `nvidia`: with `instr`, names the preset instead of `preset`
    /// ([`GpuRule::resolve`]).
    pub gpu: Option<&'a str>,
    /// Matrix instruction of `gpu` (its default when not given).
    pub instr: Option<&'a str>,
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
    /// The GPU and instruction whose rule nvidia runs: the ones named, or the preset's
    /// canonical pair when only a preset was ([`GpuRule::of_preset`]).
    pub rule: Option<GpuRule>,
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
        let (preset, rule) = self.selection()?;
        if let Some(r) = rule {
            r.check_formats(fmt_a, fmt_b).map_err(|e| e.to_string())?;
        }
        let mode = match (self.acc().to_ascii_lowercase().as_str(), preset) {
            ("nvidia", Some(p)) => {
                AccMode::Nvidia(p.params_for(fmt_a, fmt_b, acc).map_err(|e| match rule {
                    Some(r) if self.gpu.is_some() => format!("{} through {}: {e}", r.gpu, r.instr),
                    _ => e.to_string(),
                })?)
            }
            ("nvidia", None) => {
                return Err(
                    "the nvidia mode needs a preset, or a GPU (with its instruction)".into(),
                )
            }
            (_, Some(_)) => return Err("a preset or a GPU applies to the nvidia mode only".into()),
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
            rule,
        })
    }

    /// The preset and the rule named by `preset`, or by `gpu` and `instr`
    /// ([`GpuRule::resolve`]); a preset named alone takes its canonical pair
    /// ([`GpuRule::of_preset`]). Both `None` when neither is given. A preset and a GPU
    /// together, or an instruction without a GPU, are errors.
    pub fn selection(&self) -> Result<(Option<Preset>, Option<GpuRule>), String> {
        match (self.preset, self.gpu, self.instr) {
            (Some(p), Some(g), _) => Err(format!(
                "give a preset or a GPU, not both (preset {p:?}, GPU {g:?}): a GPU with its \
                 instruction names a preset"
            )),
            (Some(p), None, Some(i)) => Err(format!(
                "an instruction goes with a GPU, not a preset (preset {p:?}, instruction {i:?})"
            )),
            (None, None, Some(i)) => Err(format!("instruction {i:?} needs a GPU")),
            (Some(p), None, None) => {
                let p = preset(p)?;
                Ok((Some(p), GpuRule::of_preset(p)))
            }
            (None, Some(g), i) => {
                let i = i.map(instr).transpose()?;
                let rule = GpuRule::resolve(gpu(g)?, i).map_err(|e| e.to_string())?;
                Ok((Some(rule.preset), Some(rule)))
            }
            (None, None, None) => Ok((None, None)),
        }
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
        if self.preset.is_some() || self.gpu.is_some() || self.instr.is_some() || self.acc.is_some()
        {
            return Err("integer formats accumulate exactly in int32: drop --acc and --preset (use --satfinite to clamp instead of wrapping)".into());
        }
        Ok(Some((fa, fb)))
    }
}
