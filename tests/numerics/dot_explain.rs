//! `dot --explain`: the stage-by-stage explanation ends on the same bits as the plain dot
//! product (library, over many random inputs in every mode, into FP32 and FP16, with the
//! stages of every step checked against each other), and the CLI prints the hand-computed
//! shift and dropped bits of a probe of docs/numerics.md and the FP16 k16 steps of the
//! Hopper FP8 rule.

use crate::common::cli::{tcrtl, text};
use tensorcore_rtl::numerics::dot::explain::{explain, explain_acc, StepExplained, StepStages};
use tensorcore_rtl::numerics::dot::{dot_acc, dot_rounded, AccMode, BlockRule, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32};
use tensorcore_rtl::numerics::RoundingMode;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn explained_bits_equal_the_plain_dot_in_every_mode() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut checked = 0;
    for fmt in [FP16, BF16, E4M3, E5M2] {
        let mut modes = vec![
            (AccMode::Ieee, RoundingMode::NearestEven),
            (AccMode::Ieee, RoundingMode::TowardZero),
            (AccMode::Fused, RoundingMode::NearestEven),
            (AccMode::Fused, RoundingMode::Up),
            (AccMode::Exact, RoundingMode::Down),
        ];
        for p in Preset::ALL {
            if let Ok(params) = p.params(fmt, fmt) {
                modes.push((AccMode::Nvidia(params), RoundingMode::NearestEven));
            }
        }
        for (mode, rm) in &modes {
            for _ in 0..60 {
                let k = 1 + (rng.next() % 32) as usize;
                let width = 1 + (rng.next() % 8) as usize;
                let mask = (1u64 << Format::width(&fmt)) - 1;
                let a: Vec<u64> = (0..k).map(|_| rng.next() & mask).collect();
                let b: Vec<u64> = (0..k).map(|_| rng.next() & mask).collect();
                let c = rng.next() as u32;
                let plain = dot_rounded(mode, *rm, fmt, fmt, &a, &b, c, width).expect("dot");
                let e = explain(mode, *rm, fmt, fmt, &a, &b, c, width).expect("explain");
                assert_eq!(e.result, plain);
                let last = e.steps.last().expect("a step");
                assert_eq!(
                    last.bits,
                    plain.bits,
                    "{} {fmt:?} a={a:x?} b={b:x?} c={c:#x} width {width}",
                    mode.name()
                );
                // Each step starts from the previous step's result, the first from c.
                let mut acc = c;
                for s in &e.steps {
                    assert_eq!(s.c, acc);
                    acc = s.bits;
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

/// A Volta alignment probe of docs/numerics.md, `1 - 2^-24`. By hand: c = 1 fixes the block's
/// max_exp at 0 and, with neab = 0, the grid LSB at 2^-23. The product -2^-12 x 2^-12 has the
/// significand 1024 x 1024 = 0x100000 with its LSB at 2^(-24 - 20) = 2^-44: it shifts right by 21
/// onto the grid, nothing is kept and all of 0x100000 is dropped, so D = c = 1.
#[test]
fn the_volta_probe_shows_its_shift_and_dropped_bits() {
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "nvidia",
        "--preset",
        "volta",
        "--c",
        "0x3f800000",
        "--a",
        "0x8c00",
        "--b",
        "0x0c00",
        "--explain",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for want in [
        "acc nvidia (volta)",
        "lane 0: a 0x8c00 (-0.00024414063) x b 0x0c00 (0.00024414063) = -0x100000 x 2^-44",
        "grid LSB 2^-23",
        "lane 0: shift 21, kept 0, dropped 0x100000",
        "c:      shift 0, kept 8388608, dropped 0x0",
        "bits:  0x3f800000",
    ] {
        assert!(out.contains(want), "{want:?} not in\n{out}");
    }
    // The same inputs without --explain give the same bits.
    let plain = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "nvidia",
        "--preset",
        "volta",
        "--c",
        "0x3f800000",
        "--a",
        "0x8c00",
        "--b",
        "0x0c00",
    ]);
    assert!(text(&plain.stdout).contains("bits:  0x3f800000"));
}

/// IEEE mode on the lab 4 input: 1 + 2^-24 is a tie, the guard bit is 1, nothing below it,
/// and round to nearest even does not increment (1 stays even).
#[test]
fn an_ieee_tie_shows_guard_set_and_no_increment() {
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "ieee",
        "--c",
        "0x3f800000",
        "--a",
        "0x0c00",
        "--b",
        "0x0c00",
        "--explain",
    ]);
    let out = text(&o.stdout);
    assert!(
        out.contains("guard 1, sticky 0, round_inc 0 -> 0x3f800000"),
        "{out}"
    );
    let j = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "fused",
        "--c",
        "0x3f800000",
        "--a",
        "0x0c00,0x0c00",
        "--b",
        "0x0c00,0x0c00",
        "--explain",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("json");
    // 1 + 2^-23 (two products of 2^-24 added exactly, one rounding).
    assert_eq!(v["bits"], "0x3f800001");
    assert_eq!(v["explain"][0]["bits"], "0x3f800001");
    assert!(v["explain"][0]["lines"]
        .as_array()
        .is_some_and(|l| l.len() > 4));
}

#[test]
fn explain_refuses_what_it_cannot_show() {
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "all",
        "--a",
        "0x3c00",
        "--b",
        "0x3c00",
        "--explain",
    ]);
    crate::common::cli::assert_error(&o, "--explain shows one mode");
}

/// The stages of one explained step hang together: the `ieee` FMAs chain from the step's `c`
/// to its result, a truncating block's sum is the sum of its kept terms and its rounding
/// gives the step's bits, and the k16 steps split the block by `k mod 4`, chain `+0 -> s1 ->
/// s2`, and the addition of `c` gives the step's bits.
fn assert_stages_consistent(s: &StepExplained, acc: Format, what: &str) {
    let truncating_block = |stages: &StepStages, bits: u32, what: &str| {
        if let StepStages::Nvidia {
            align, sum, round, ..
        } = stages
        {
            let kept: i64 = align.aligned.iter().sum::<i64>() + align.c_aligned;
            assert_eq!(sum.sum, kept, "{what}: block sum");
            assert_eq!(round.bits as u32, bits, "{what}: block rounding");
        }
    };
    match &s.stages {
        StepStages::Ieee(fmas) => {
            let mut acc_in = s.c;
            for (c, f) in fmas {
                assert_eq!(*c, acc_in, "{what}: FMA chain");
                acc_in = f.bits;
            }
            assert_eq!(acc_in, s.bits, "{what}: last FMA");
        }
        StepStages::Fused { round, .. } => {
            assert_eq!(round.bits as u32, s.bits, "{what}: fused rounding")
        }
        st @ StepStages::Nvidia { .. } => truncating_block(st, s.bits, what),
        StepStages::NvidiaK16Steps { s1, s2, add } => {
            assert_eq!(s1.c, 0, "{what}: s1 starts from +0");
            assert_eq!(s2.c, s1.bits, "{what}: s2 starts from s1");
            let mut lanes: Vec<usize> = s1.lanes.iter().chain(&s2.lanes).copied().collect();
            lanes.sort_unstable();
            assert_eq!(lanes, (0..s.multiply.lanes).collect::<Vec<_>>(), "{what}");
            assert!(s1.lanes.iter().all(|k| k % 4 < 2), "{what}: s1 lanes");
            assert!(s2.lanes.iter().all(|k| k % 4 >= 2), "{what}: s2 lanes");
            for st in [s1, s2] {
                assert_eq!(st.fmt, acc, "{what}: k16 steps round to the accumulator");
                truncating_block(&st.stages, st.bits, what);
            }
            let d = add.rounded.bits as u32;
            if acc.is_nan(u64::from(d)) {
                assert!(acc.is_nan(u64::from(s.bits)), "{what}: NaN");
            } else {
                assert_eq!(d, s.bits, "{what}: c + s2");
            }
        }
        StepStages::Special | StepStages::NvidiaExactThenRne | StepStages::NvidiaResultOnly(_) => {}
    }
}

/// Into FP16: for every mode that accumulates into FP16 (ieee, fused, exact in several
/// directions; every preset with an FP16-output rule, FP16 and FP8 inputs, mixed FP8 too)
/// the explanation ends on `dot_acc`'s bits, each step starts from the previous step's result
/// and its stages are consistent. FP32 runs the same checks on the FP8 `K16Steps` rule
/// (`h200`), whose steps are broken out too.
#[test]
fn explained_bits_equal_dot_acc_into_fp16_and_the_stages_agree() {
    let mut rng = Rng(0xF16E_C0DE_1234_5678);
    let mut checked = 0;
    let mut k16 = 0;
    for (fa, fb) in [
        (FP16, FP16),
        (BF16, BF16),
        (E4M3, E4M3),
        (E5M2, E5M2),
        (E4M3, E5M2),
    ] {
        for acc in [FP16, FP32] {
            let mut modes = Vec::new();
            if acc == FP16 {
                modes.extend([
                    (AccMode::Ieee, RoundingMode::NearestEven),
                    (AccMode::Ieee, RoundingMode::Up),
                    (AccMode::Fused, RoundingMode::NearestEven),
                    (AccMode::Fused, RoundingMode::TowardZero),
                    (AccMode::Exact, RoundingMode::NearestEven),
                    (AccMode::Exact, RoundingMode::Down),
                ]);
            }
            for p in Preset::ALL {
                if let Ok(params) = p.params_for(fa, fb, acc) {
                    if acc == FP16 || params.rule == BlockRule::K16Steps {
                        modes.push((AccMode::Nvidia(params), RoundingMode::NearestEven));
                    }
                }
            }
            for (mode, rm) in &modes {
                for _ in 0..60 {
                    let k = 1 + (rng.next() % 40) as usize;
                    let k = if matches!(mode, AccMode::Exact) {
                        k.min(32)
                    } else {
                        k
                    };
                    let width = 1 + (rng.next() % 8) as usize;
                    let a: Vec<u64> = (0..k).map(|_| rng.next() & fa.mask()).collect();
                    let b: Vec<u64> = (0..k).map(|_| rng.next() & fb.mask()).collect();
                    let c = (rng.next() & acc.mask()) as u32;
                    let what = format!(
                        "{} {rm:?} {fa:?}x{fb:?} into {acc} a={a:x?} b={b:x?} c={c:#x} width {width}",
                        mode.name()
                    );
                    let plain = dot_acc(mode, *rm, acc, fa, fb, &a, &b, c, width).expect("dot");
                    let e = explain_acc(mode, *rm, acc, fa, fb, &a, &b, c, width).expect("explain");
                    assert_eq!(e.result, plain, "{what}");
                    assert_eq!(e.acc, acc);
                    assert_eq!(e.steps.last().expect("a step").bits, plain.bits, "{what}");
                    let mut bits = c;
                    for s in &e.steps {
                        assert_eq!(s.c, bits, "{what}");
                        assert_stages_consistent(s, acc, &what);
                        k16 += usize::from(matches!(s.stages, StepStages::NvidiaK16Steps { .. }));
                        bits = s.bits;
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1500, "{checked}");
    assert!(k16 > 300, "{k16} K16Steps blocks");
}

/// The command into FP16: the Hopper FP8 `K16Steps` probe of `explain_stages.rs` shows both
/// k16 steps, their FP16 rounding and the addition of `c`, and ends on the bits the plain
/// command prints; the JSON steps carry FP16 patterns.
#[test]
fn the_command_explains_fp16_output_with_the_k16_steps() {
    let args = [
        "dot",
        "--format",
        "e4m3",
        "--acc",
        "nvidia",
        "--preset",
        "hopper",
        "--out-format",
        "fp16",
        "--a",
        "0x78,0x20,0x20,0x00",
        "--b",
        "0x38,0x38,0x38,0x38",
    ];
    let plain = tcrtl(&args);
    assert!(
        text(&plain.stdout).contains("bits:  0x5c00 (fp16)"),
        "{}",
        text(&plain.stdout)
    );
    let o = tcrtl(&[&args[..], &["--explain"]].concat());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for want in [
        "into fp16",
        "step k = 0..=3: c = 0x0000 (0.0)",
        "s1: k16 step over lanes 0, 1 (k mod 4 in {0,1}), c = 0x0000 (0.0)",
        "normalise, round to nearest even to fp16: ",
        "guard 1, sticky 0, round_inc 0 -> 0x5c00 (256.0)",
        "-> s1 0x5c00 (256.0)",
        "s2: k16 step over lanes 2, 3 (k mod 4 in {2,3}), c = 0x5c00 (256.0)",
        "-> s2 0x5c00 (256.0)",
        "add c: 0x0000 (0.0) + s2 0x5c00 (256.0) in fp16",
        "-> acc 0x5c00 (256.0)",
        "bits:  0x5c00 (fp16)",
    ] {
        assert!(out.contains(want), "{want:?} not in\n{out}");
    }
    // FP16 inputs, ieee into FP16 in JSON: 1 + 2^-11 is a tie that stays at 1 (0x3c00).
    let j = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--out-format",
        "fp16",
        "--c",
        "0x3c00",
        "--a",
        "0x3c00",
        "--b",
        "0x1000",
        "--explain",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("json");
    assert_eq!(v["bits"], "0x3c00");
    assert_eq!(v["out_format"], "fp16");
    assert_eq!(v["explain"][0]["c"], "0x3c00");
    assert_eq!(v["explain"][0]["bits"], "0x3c00");
    let lines = v["explain"][0]["lines"].to_string();
    assert!(
        lines.contains("normalise, round (rne, to fp16): ")
            && lines.contains("guard 1, sticky 0, round_inc 0 -> 0x3c00 (1.0)"),
        "{lines}"
    );
}
