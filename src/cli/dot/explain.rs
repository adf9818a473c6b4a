//! `tcrtl dot --explain`: prints the stage outputs of
//! [`tensorcore_rtl::numerics::dot::explain::explain`] step by step (text, or a
//! JSON array of steps). Every number printed is a stage output or the value of one; nothing
//! is recomputed here.

use tensorcore_rtl::numerics::convert::to_fp32;
use tensorcore_rtl::numerics::dot::explain::{Explained, StepExplained, StepStages};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::Format;
use tensorcore_rtl::numerics::multiply::{Product, ProductClass};
use tensorcore_rtl::numerics::round::{RoundTrace, Unrounded};

/// A bit pattern of `fmt` as hex with the format's digits.
fn hex(fmt: Format, bits: u64) -> String {
    let digits = fmt.width().div_ceil(4) as usize;
    format!("0x{bits:0digits$x}")
}

/// A bit pattern of `fmt` as its decimal value.
fn value(fmt: Format, bits: u64) -> String {
    format!("{:?}", f32::from_bits(to_fp32(fmt, bits)))
}

/// An FP32 pattern as hex and value.
fn fp32(bits: u32) -> String {
    format!("0x{bits:08x} ({:?})", f32::from_bits(bits))
}

fn yes(b: bool) -> u8 {
    u8::from(b)
}

/// An exact product as sign, significand and the weight of its LSB.
fn product(p: &Product) -> String {
    let sign = if p.sign { "-" } else { "+" };
    match p.class {
        ProductClass::Finite => format!(
            "{sign}0x{:x} x 2^{} (exp_sum {}, {} fraction bits)",
            p.sig,
            p.lsb_exp(),
            p.exp_sum,
            p.frac_bits
        ),
        ProductClass::Zero => format!("{sign}0"),
        ProductClass::Infinite => format!("{sign}inf"),
        ProductClass::Nan => "NaN".into(),
    }
}

fn unrounded(u: &Unrounded) -> String {
    let sign = if u.sign { "-" } else { "+" };
    format!(
        "{sign}0x{:x} x 2^{} (sticky {})",
        u.sig,
        u.exp,
        yes(u.sticky)
    )
}

fn round_fields(r: &RoundTrace) -> String {
    format!(
        "lzc {}, leading one at 2^{}, shift {}, subnormal {}, guard {}, sticky {}, round_inc {}",
        r.lzc,
        r.norm_exp,
        r.shift,
        yes(r.subnormal),
        yes(r.guard),
        yes(r.sticky),
        yes(r.round_inc)
    )
}

/// The text lines of one step.
fn step_lines(s: &StepExplained, fmt_a: Format, fmt_b: Format, rounding: &str) -> Vec<String> {
    let mut out = Vec::new();
    let last = s.first + s.a.len().max(1) - 1;
    out.push(format!(
        "step k = {}..={}: c = {}",
        s.first,
        last,
        fp32(s.c)
    ));
    out.push("  multiply (exact):".into());
    for (k, p) in s.multiply.valid().iter().enumerate() {
        out.push(format!(
            "    lane {k}: a {} ({}) x b {} ({}) = {}",
            hex(fmt_a, s.a[k]),
            value(fmt_a, s.a[k]),
            hex(fmt_b, s.b[k]),
            value(fmt_b, s.b[k]),
            product(p)
        ));
    }
    if let Some(sp) = &s.special {
        match sp.result {
            Some(bits) => out.push(format!("  specials: decided, result {}", fp32(bits))),
            None => out.push("  specials: none (all terms finite)".into()),
        }
    }
    match &s.stages {
        StepStages::Special => {}
        StepStages::Ieee(fmas) => {
            for (k, (acc, f)) in fmas.iter().enumerate() {
                out.push(format!("  fma lane {k}: acc {} + product {k}", fp32(*acc)));
                let a = &f.align;
                out.push(format!(
                    "    align: larger term's leading one at 2^{}, exp_diff {}, align_shift {}, sticky (dropped bits) {}, subtract {}",
                    a.max_exp, a.exp_diff, a.align_shift, yes(a.sticky), yes(a.effective_sub)
                ));
                out.push(format!("    sum: {}", unrounded(&f.sum)));
                out.push(format!(
                    "    normalise, round ({rounding}): {} -> {}",
                    round_fields(&f.round),
                    fp32(f.bits)
                ));
            }
        }
        StepStages::Fused { align, sum, round } => {
            let shifts: Vec<String> = (0..s.multiply.lanes)
                .map(|k| format!("lane {k} {}", align.align_shift[k]))
                .collect();
            out.push(format!(
                "  align (exact, nothing dropped): largest leading one at 2^{}, left shifts into the wide register: c {}, {}",
                align.max_exp,
                align.c_shift,
                shifts.join(", ")
            ));
            out.push(format!(
                "  add: exact sum {}, wide register lzc {}",
                unrounded(&sum.sum),
                sum.wide_lzc
            ));
            out.push(format!(
                "  normalise, round ({rounding}): {} -> {}",
                round_fields(&round.trace),
                fp32(round.bits as u32)
            ));
        }
        StepStages::Nvidia {
            align,
            dropped,
            c_dropped,
            sum,
            round,
        } => {
            out.push(format!(
                "  align: max_exp {} (floored), grid LSB 2^{}; right shifts onto the grid, kept value, dropped bits:",
                align.max_exp, align.lsb_exp
            ));
            out.push(format!(
                "    c:      shift {}, kept {}, dropped 0x{:x}",
                align.c_shift, align.c_aligned, c_dropped
            ));
            for k in 0..s.multiply.lanes {
                out.push(format!(
                    "    lane {k}: shift {}, kept {}, dropped 0x{:x}",
                    align.align_shift[k], align.aligned[k], dropped[k]
                ));
            }
            out.push(format!(
                "  add: sum {} x 2^{} (a bit dropped: {})",
                sum.sum,
                sum.lsb_exp,
                yes(sum.dropped)
            ));
            out.push(format!(
                "  normalise, truncate: {} -> {}",
                round_fields(&round.trace),
                fp32(round.bits as u32)
            ));
        }
        StepStages::NvidiaExactThenRne => {
            out.push("  block: exact product sum truncated to FP32, then RNE32(c + it)".into());
        }
        StepStages::NvidiaK16Steps => {
            out.push(
                "  block: s1 = k16 step over k mod 4 in {0,1} from 0, s2 = k16 step over s1 and \
                 k mod 4 in {2,3} (each truncating, RZ to FP32), then RNE32(c + s2)"
                    .into(),
            );
        }
    }
    out.push(format!("  -> acc {} flags {}", fp32(s.bits), s.flags));
    out
}

/// Prints the explanation as text.
pub fn print_text(
    e: &Explained,
    mode: &AccMode,
    preset: Option<Preset>,
    fmt_a: Format,
    fmt_b: Format,
    rounding: &str,
) -> Result<(), String> {
    let preset = preset
        .map(|p| format!(" ({})", p.name()))
        .unwrap_or_default();
    // A step is one PE cycle over `w` lanes; say what it holds, so that a step listing several
    // FMAs (`ieee` chains one per lane) does not read as a miscount.
    let steps = e.steps.len();
    let lanes = e.steps.iter().map(|s| s.a.len()).max().unwrap_or(0);
    let per_step = match mode {
        AccMode::Ieee => ", one FMA per lane, chained in lane order",
        _ => "",
    };
    outln!(
        "explain: {} x {}, acc {}{preset}, rounding {rounding}, {steps} step(s) of up to {lanes} lane(s){per_step}",
        fmt_a.name,
        fmt_b.name,
        mode.name(),
    );
    for s in &e.steps {
        for l in step_lines(s, fmt_a, fmt_b, rounding) {
            outln!("{l}");
        }
    }
    Ok(())
}

/// The explanation as a JSON array of steps (each with its text lines and its result).
pub fn json(e: &Explained, fmt_a: Format, fmt_b: Format, rounding: &str) -> serde_json::Value {
    let steps: Vec<serde_json::Value> = e
        .steps
        .iter()
        .map(|s| {
            serde_json::json!({
                "first": s.first,
                "c": format!("0x{:08x}", s.c),
                "bits": format!("0x{:08x}", s.bits),
                "flags": s.flags.names(),
                "lines": step_lines(s, fmt_a, fmt_b, rounding),
            })
        })
        .collect();
    serde_json::Value::Array(steps)
}
