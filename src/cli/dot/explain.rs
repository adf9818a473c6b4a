//! `tcrtl dot --explain`: prints the stage outputs of
//! [`tensorcore_rtl::numerics::dot::explain::explain_acc`] step by step (text, or a
//! JSON array of steps), into FP32 or FP16. Every number printed is a stage output or the
//! value of one; nothing is recomputed here.

use super::result::{acc_hex, acc_value};
use tensorcore_rtl::numerics::add::AddResult;
use tensorcore_rtl::numerics::convert::to_fp32;
use tensorcore_rtl::numerics::dot::explain::explain_acc;
use tensorcore_rtl::numerics::dot::explain::{Explained, K16Step, StepExplained, StepStages};
use tensorcore_rtl::numerics::dot::{AccMode, DotError, NvidiaParams, Preset, MAX_LANES};
use tensorcore_rtl::numerics::format::{Format, FP32};
use tensorcore_rtl::numerics::multiply::{Product, ProductClass};
use tensorcore_rtl::numerics::round::{RoundTrace, Unrounded};
use tensorcore_rtl::numerics::RoundingMode;

/// A bit pattern of `fmt` as hex with the format's digits.
fn hex(fmt: Format, bits: u64) -> String {
    let digits = fmt.width().div_ceil(4) as usize;
    format!("0x{bits:0digits$x}")
}

/// A bit pattern of `fmt` as its decimal value.
fn value(fmt: Format, bits: u64) -> String {
    format!("{:?}", f32::from_bits(to_fp32(fmt, bits)))
}

/// An accumulator pattern (FP32 or FP16) as hex and value.
fn word(acc: Format, bits: u32) -> String {
    format!("{} ({:?})", acc_hex(acc, bits), acc_value(acc, bits))
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

/// How a truncating NVIDIA block rounds its sum into `fmt`: "truncate" into FP32 (toward
/// zero), "round to nearest even" into FP16, with the fraction bits kept where the preset
/// cuts below the format's own (the Hopper and Ada FP8 cut to 13).
fn block_rounding(p: &NvidiaParams, fmt: Format) -> String {
    let mut s = match p.out_rounding {
        RoundingMode::TowardZero => "truncate".to_string(),
        RoundingMode::NearestEven => "round to nearest even".to_string(),
        rm => format!("round ({})", rm.name()),
    };
    if p.out_frac_bits < fmt.frac_bits {
        s += &format!(" to {} fraction bits", p.out_frac_bits);
    }
    if fmt != FP32 {
        s += &format!(" to {}", fmt.name);
    }
    s
}

/// The lines of a truncating block's stages (`StepStages::Nvidia`), indented by `pad`, its
/// lanes named by `lane_names` and its result in `fmt`.
fn nvidia_lines(
    out: &mut Vec<String>,
    pad: &str,
    stages: &StepStages,
    lane_names: &[usize],
    p: &NvidiaParams,
    fmt: Format,
) {
    let StepStages::Nvidia {
        align,
        dropped,
        c_dropped,
        sum,
        round,
    } = stages
    else {
        return;
    };
    out.push(format!(
        "{pad}align: max_exp {} (floored), grid LSB 2^{}; right shifts onto the grid, kept value, dropped bits:",
        align.max_exp, align.lsb_exp
    ));
    out.push(format!(
        "{pad}  c:      shift {}, kept {}, dropped 0x{:x}",
        align.c_shift, align.c_aligned, c_dropped
    ));
    for (j, k) in lane_names.iter().enumerate() {
        out.push(format!(
            "{pad}  lane {k}: shift {}, kept {}, dropped 0x{:x}",
            align.align_shift[j], align.aligned[j], dropped[j]
        ));
    }
    out.push(format!(
        "{pad}add: sum {} x 2^{} (a bit dropped: {})",
        sum.sum,
        sum.lsb_exp,
        yes(sum.dropped)
    ));
    out.push(format!(
        "{pad}normalise, {}: {} -> {}",
        block_rounding(p, fmt),
        round_fields(&round.trace),
        word(fmt, round.bits as u32)
    ));
}

/// The lines of one k16 step (`s1` or `s2`) of the FP8 `K16Steps` rule.
fn k16_lines(out: &mut Vec<String>, name: &str, st: &K16Step, p: &NvidiaParams) {
    let lanes: Vec<String> = st.lanes.iter().map(|k| k.to_string()).collect();
    out.push(format!(
        "  {name}: k16 step over lanes {} (k mod 4 in {}), c = {}",
        if lanes.is_empty() {
            "none".into()
        } else {
            lanes.join(", ")
        },
        if name == "s1" { "{0,1}" } else { "{2,3}" },
        word(st.fmt, st.c)
    ));
    if let Some(sp) = &st.special {
        match sp.result {
            Some(_) => out.push(format!(
                "    specials: decided, result {}",
                word(st.fmt, st.bits)
            )),
            None => out.push("    specials: none (all terms finite)".into()),
        }
    }
    nvidia_lines(out, "    ", &st.stages, &st.lanes, p, st.fmt);
    out.push(format!(
        "    -> {name} {} flags {}",
        word(st.fmt, st.bits),
        st.flags
    ));
}

/// The line of the adder that adds `c` to `s2` (IEEE, round to nearest even, in `fmt`).
fn add_c_lines(out: &mut Vec<String>, c: u32, s2: &K16Step, r: &AddResult) {
    let fmt = s2.fmt;
    let finite = |b: u32| fmt.classify(u64::from(b)).is_finite();
    out.push(format!(
        "  add c: {} + s2 {} in {} (IEEE addition, round to nearest even)",
        word(fmt, c),
        word(fmt, s2.bits),
        fmt.name
    ));
    if !(finite(c) && finite(s2.bits)) {
        out.push(format!(
            "    specials: decided (IEEE), result {}",
            word(fmt, r.rounded.bits as u32)
        ));
        return;
    }
    let a = &r.align;
    out.push(format!(
        "    align: larger term's leading one at 2^{}, exp_diff {}, align_shift {}, sticky (dropped bits) {}, subtract {}",
        a.max_exp, a.exp_diff, a.align_shift, yes(a.sticky), yes(a.effective_sub)
    ));
    out.push(format!(
        "    normalise, round (rne): {} -> {}",
        round_fields(&r.rounded.trace),
        word(fmt, r.rounded.bits as u32)
    ));
}

/// The text lines of one step into the accumulator `acc`.
fn step_lines(
    s: &StepExplained,
    mode: &AccMode,
    acc: Format,
    fmt_a: Format,
    fmt_b: Format,
    rounding: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    let last = s.first + s.a.len().max(1) - 1;
    out.push(format!(
        "step k = {}..={}: c = {}",
        s.first,
        last,
        word(acc, s.c)
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
            Some(_) => out.push(format!("  specials: decided, result {}", word(acc, s.bits))),
            None => out.push("  specials: none (all terms finite)".into()),
        }
    }
    let params = match mode {
        AccMode::Nvidia(p) => Some(p),
        _ => None,
    };
    match (&s.stages, params) {
        (StepStages::Special, _) => {}
        (StepStages::Ieee(fmas), _) => {
            for (k, (c, f)) in fmas.iter().enumerate() {
                out.push(format!(
                    "  fma lane {k}: acc {} + product {k}",
                    word(acc, *c)
                ));
                let a = &f.align;
                out.push(format!(
                    "    align: larger term's leading one at 2^{}, exp_diff {}, align_shift {}, sticky (dropped bits) {}, subtract {}",
                    a.max_exp, a.exp_diff, a.align_shift, yes(a.sticky), yes(a.effective_sub)
                ));
                out.push(format!("    sum: {}", unrounded(&f.sum)));
                out.push(format!(
                    "    normalise, round ({rounding}{}): {} -> {}",
                    to_fmt(acc),
                    round_fields(&f.round),
                    word(acc, f.bits)
                ));
            }
        }
        (StepStages::Fused { align, sum, round }, _) => {
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
                "  normalise, round ({rounding}{}): {} -> {}",
                to_fmt(acc),
                round_fields(&round.trace),
                word(acc, round.bits as u32)
            ));
        }
        (stages @ StepStages::Nvidia { .. }, Some(p)) => {
            let lanes: Vec<usize> = (0..s.multiply.lanes).collect();
            nvidia_lines(&mut out, "  ", stages, &lanes, p, acc);
        }
        (StepStages::NvidiaExactThenRne, _) => {
            out.push("  block: exact product sum truncated to FP32, then RNE32(c + it)".into());
        }
        (StepStages::NvidiaResultOnly(rule), _) => {
            out.push(format!("  block ({rule:?}): only the result is shown"));
        }
        (StepStages::NvidiaK16Steps { s1, s2, add }, Some(p)) => {
            out.push(format!(
                "  block: s1 = k16 step over k mod 4 in {{0,1}} from +0, s2 = k16 step over s1 \
                 and k mod 4 in {{2,3}} (each a truncating block, {}), then d = RNE(c + s2) in {}",
                block_rounding(p, s1.fmt),
                s1.fmt.name
            ));
            k16_lines(&mut out, "s1", s1, p);
            k16_lines(&mut out, "s2", s2, p);
            add_c_lines(&mut out, s.c, s2, add);
        }
        (StepStages::Nvidia { .. } | StepStages::NvidiaK16Steps { .. }, None) => {}
    }
    out.push(format!("  -> acc {} flags {}", word(acc, s.bits), s.flags));
    out
}

/// ", to fp16" for an FP16 accumulator (nothing for FP32, as before FP16 output existed).
fn to_fmt(acc: Format) -> String {
    if acc == FP32 {
        String::new()
    } else {
        format!(", to {}", acc.name)
    }
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
        "explain: {} x {}, acc {}{preset}, rounding {rounding}, into {}, {steps} step(s) of up to {lanes} lane(s){per_step}",
        fmt_a.name,
        fmt_b.name,
        mode.name(),
        e.acc.name,
    );
    for s in &e.steps {
        for l in step_lines(s, mode, e.acc, fmt_a, fmt_b, rounding) {
            outln!("{l}");
        }
    }
    Ok(())
}

/// The explanation as a JSON array of steps (each with its text lines and its result).
pub fn json(
    e: &Explained,
    mode: &AccMode,
    fmt_a: Format,
    fmt_b: Format,
    rounding: &str,
) -> serde_json::Value {
    let steps: Vec<serde_json::Value> = e
        .steps
        .iter()
        .map(|s| {
            serde_json::json!({
                "first": s.first,
                "c": acc_hex(e.acc, s.c),
                "bits": acc_hex(e.acc, s.bits),
                "flags": s.flags.names(),
                "lines": step_lines(s, mode, e.acc, fmt_a, fmt_b, rounding),
            })
        })
        .collect();
    serde_json::Value::Array(steps)
}

/// One row's operands and arithmetic for [`run`].
pub struct ExplainJob<'a> {
    /// The accumulation mode (for nvidia, the preset's parameters for `acc`).
    pub mode: &'a AccMode,
    /// The preset, for nvidia.
    pub preset: Option<Preset>,
    /// The GPU and instruction whose rule nvidia runs.
    pub rule: Option<tensorcore_rtl::numerics::dot::GpuRule>,
    /// Rounding of ieee, fused and exact.
    pub rm: RoundingMode,
    /// The accumulator format: FP32 or FP16.
    pub acc: Format,
    /// Format of A.
    pub fmt_a: Format,
    /// Format of B.
    pub fmt_b: Format,
    /// A's patterns.
    pub a: &'a [u64],
    /// B's patterns.
    pub b: &'a [u64],
    /// C, an `acc` pattern.
    pub c: u32,
    /// Products per step of ieee and fused.
    pub width: usize,
    /// Print a JSON object instead of text.
    pub json: bool,
}

/// Runs `tcrtl dot --explain`: the stages of every step into FP32 or FP16, then the result as
/// without `--explain` (or its JSON object with `explain` added).
pub fn run(j: &ExplainJob) -> Result<i32, String> {
    let e = explain_acc(
        j.mode, j.rm, j.acc, j.fmt_a, j.fmt_b, j.a, j.b, j.c, j.width,
    )
    .map_err(|e| match e {
        DotError::BadWidth(k) if matches!(j.mode, AccMode::Exact) => {
            format!("--explain with --acc exact takes at most {MAX_LANES} products (got {k})")
        }
        e => e.to_string(),
    })?;
    let label = super::result::rounding_label(j.mode, j.rm);
    if j.json {
        let mut obj = super::result::result_json(
            j.mode,
            j.preset,
            j.rm,
            j.acc,
            j.fmt_a,
            j.fmt_b,
            j.a.len(),
            &e.result,
        );
        obj["explain"] = json(&e, j.mode, j.fmt_a, j.fmt_b, label);
        crate::cli::values::add_rule_keys(&mut obj, j.rule);
        outln!("{obj}");
    } else {
        print_text(&e, j.mode, j.preset, j.fmt_a, j.fmt_b, label)?;
        let value = acc_value(j.acc, e.result.bits);
        let fmt_note = if j.acc == FP32 {
            String::new()
        } else {
            format!(" ({})", j.acc.name)
        };
        outln!("bits:  {}{fmt_note}", acc_hex(j.acc, e.result.bits));
        outln!("value: {value:e} ({value})");
        outln!("flags: {}", e.result.flags);
        crate::cli::values::print_rule(j.rule)?;
    }
    Ok(0)
}
