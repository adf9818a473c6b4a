//! The published tensor-core models of Khattak and Mikaitis (repository
//! north-numerical-computing/MATLAB-tensor-core, `models/`, BSD 2-Clause), run under GNU
//! Octave on the same random rows for every GPU, format and output
//! (`scripts/published_models/generate.sh`; the rows and the models' outputs are vendored in
//! data/published-models/, 128 rows a set). Each preset must give the model's D bit for bit,
//! except where the project's rule departs from the model on purpose (each case named below
//! with the evidence, docs/numerics.md "The published models"). Plus the directed
//! vectors, whose model outputs were read off the same Octave runs.

use std::path::PathBuf;
use tensorcore_rtl::numerics::dot::{dot_acc, AccMode, DotError, Preset};
use tensorcore_rtl::numerics::format::{Class, Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::measurements::{encode_word, load_acc, MeasurementSet};
use tensorcore_rtl::verify::nvidia_ref::{nvidia_ref_dot, ref_params};

fn fmt_named(name: &str) -> Format {
    match name {
        "fp16" => FP16,
        "bf16" => BF16,
        "tf32" => TF32,
        "e4m3" => E4M3,
        "e5m2" => E5M2,
        _ => panic!("no format {name}"),
    }
}

fn set(model: &str, fmt: &str, acc: Format) -> MeasurementSet {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/published-models")
        .join(model)
        .join(fmt);
    load_acc(&dir, None, acc).unwrap_or_else(|e| panic!("{e}"))
}

/// Rows where `preset` differs from the model: (row from 1, ours, model's).
fn differing(model: &str, fmt_name: &str, preset: Preset, acc: Format) -> Vec<(usize, u32, u32)> {
    let data = set(model, fmt_name, acc);
    assert_eq!(data.a.len(), 128, "{model}/{fmt_name}: rows");
    let fmt = fmt_named(fmt_name);
    let params = preset.params_for(fmt, fmt, acc).unwrap();
    let mode = AccMode::Nvidia(params);
    let enc = |r: &[u32]| -> Vec<u64> { r.iter().map(|&w| encode_word(fmt, w).unwrap()).collect() };
    let mut out = Vec::new();
    for (i, (ra, rb)) in data.a.iter().zip(&data.b).enumerate() {
        let c = data.c_in(i, acc);
        let d = dot_acc(
            &mode,
            RoundingMode::NearestEven,
            acc,
            fmt,
            fmt,
            &enc(ra),
            &enc(rb),
            c,
            params.block,
        )
        .unwrap();
        if d.bits != data.d[i] {
            out.push((i + 1, d.bits, data.d[i]));
        }
    }
    out
}

/// Every set of `model` whose rule the project takes unchanged, FP32 output, and FP16 output
/// for FP16 inputs.
fn check_model(model: &str, preset: Preset, formats: &[&str]) {
    for &f in formats {
        let bad = differing(model, f, preset, FP32);
        assert!(
            bad.is_empty(),
            "{model}/{f} under {preset}, FP32 output: {} rows differ, first (row, ours, model): {:x?}",
            bad.len(),
            &bad[..bad.len().min(4)]
        );
    }
    // FP16 inputs into FP16: the same, except rows where a block's FP16 result overflows. The
    // models carry a block result past FP16's range on to the next block as a wide value; an
    // FP16 accumulator register holds the infinity, which the next blocks keep (the project's
    // rule, and what the measured FP16-output rows show where a block overflows).
    let bad = differing(model, "fp16", preset, FP16);
    for &(row, ours, model_d) in &bad {
        assert!(
            FP16.classify(ours as u64) == Class::Infinite
                || FP16.classify(model_d as u64) == Class::Infinite,
            "{model}/fp16 under {preset}, FP16 output, row {row}: ours {ours:#06x}, model \
             {model_d:#06x}, and neither overflowed"
        );
    }
    assert!(
        bad.len() <= 2,
        "{model}: {} overflowing FP16 rows",
        bad.len()
    );
}

#[test]
fn volta_is_the_v100_model() {
    check_model("V100TC", Preset::Volta, &["fp16"]);
}

#[test]
fn turing_is_the_v100_model() {
    // No published T4 model: Fasi et al. found the T4's binary16 tensor cores to behave as the
    // V100's, and the preset is Volta's.
    check_model("V100TC", Preset::Turing, &["fp16"]);
}

#[test]
fn ampere_is_the_a100_model() {
    check_model("A100TC", Preset::Ampere, &["fp16", "bf16", "tf32"]);
}

#[test]
fn ada_is_the_ada_and_l40s_models() {
    let all = ["fp16", "bf16", "tf32", "e4m3", "e5m2"];
    check_model("AdaTC", Preset::Ada, &all);
    check_model("L40STC", Preset::Ada, &all);
}

#[test]
fn hopper_is_the_h100_model() {
    check_model(
        "H100TC",
        Preset::Hopper,
        &["fp16", "bf16", "tf32", "e4m3", "e5m2"],
    );
}

#[test]
fn blackwell_is_the_b200_model_but_for_fp8() {
    check_model("B200TC", Preset::Blackwell, &["fp16", "bf16", "tf32"]);
    // FP8: the measured B200 rows rule out the model's truncating block of 32 (it reproduces
    // about two thirds of them); the preset's `RNE32(c + RZ32(sum))` reproduces them all. So
    // the two must differ here too.
    for f in ["e4m3", "e5m2"] {
        assert!(
            !differing("B200TC", f, Preset::Blackwell, FP32).is_empty(),
            "{f}"
        );
    }
}

#[test]
fn h200_departs_from_the_h100_model_only_for_fp8() {
    // `h200` is mma.sync as CUDA 13.0 builds it (FP8 through two FP16 steps); the model is
    // Hopper's native FP8 path. FP16, BF16 and TF32 agree.
    for f in ["fp16", "bf16", "tf32"] {
        let bad = differing("H100TC", f, Preset::H200, FP32);
        assert!(bad.is_empty(), "{f}: {bad:x?}");
    }
    for f in ["e4m3", "e5m2"] {
        assert!(
            !differing("H100TC", f, Preset::H200, FP32).is_empty(),
            "{f}"
        );
    }
}

#[test]
fn fp8_into_fp16_follows_the_measurements_not_the_models() {
    // The models cut FP8 blocks to 23 + neab = 13 fraction bits for FP32 output and take
    // 10 + neab = 0 bits for FP16 output, which no measured FP16-output row shows: the presets
    // keep the rules that reproduce every measured Ada, H100, H200 and B200 FP8 row into FP16
    // (docs/numerics.md "FP16 output"). Here the two differ on most rows.
    for (model, preset) in [
        ("AdaTC", Preset::Ada),
        ("L40STC", Preset::Ada),
        ("H100TC", Preset::Hopper),
    ] {
        for f in ["e4m3", "e5m2"] {
            let bad = differing(model, f, preset, FP16);
            assert!(
                bad.len() > 64,
                "{model}/{f}: only {} rows differ",
                bad.len()
            );
        }
    }
}

/// One dot product under `preset` into `acc`.
fn one(preset: Preset, fmt: Format, acc: Format, a: &[u64], b: &[u64], c: u32) -> u32 {
    let params = preset.params_for(fmt, fmt, acc).unwrap();
    dot_acc(
        &AccMode::Nvidia(params),
        RoundingMode::NearestEven,
        acc,
        fmt,
        fmt,
        a,
        b,
        c,
        params.block,
    )
    .unwrap()
    .bits
}

#[test]
fn tf32_blocks_of_eight_on_hopper_and_blackwell() {
    // c = 1 + 2^-23, a = (1, 0, 0, 0, 2^-23, 0, 0, 0), b = (1, 0, 0, 0, 1, 0, 0, 0).
    // models/H100TC.m and B200TC.m (Octave): 0x40000001: the 2^-23 product shares a block with
    // the first and c. Blocks of 4 would give 0x40000000 (the second block's 2^-23 falls below
    // the grid of c = 2).
    let tf32 = |w: u32| (w >> 13) as u64;
    let a: Vec<u64> = [0x3f80_0000, 0, 0, 0, 0x3400_0000, 0, 0, 0]
        .map(tf32)
        .to_vec();
    let b: Vec<u64> = [0x3f80_0000, 0, 0, 0, 0x3f80_0000, 0, 0, 0]
        .map(tf32)
        .to_vec();
    for p in [Preset::Hopper, Preset::Blackwell, Preset::H200] {
        assert_eq!(one(p, TF32, FP32, &a, &b, 0x3f80_0001), 0x4000_0001, "{p}");
    }
    // Ampere keeps blocks of 4 (models/A100TC.m): the second block sees c = 2 and drops 2^-23.
    assert_eq!(
        one(Preset::Ampere, TF32, FP32, &a, &b, 0x3f80_0001),
        0x4000_0000
    );
}

#[test]
fn fp16_output_floor_and_subnormal_c() {
    // models/H100TC.m (Octave): a = (2^-14, 2^-24), b = (2^-11, 2^-24), c = 0 into FP16 gives
    // 0x0000: the alignment exponent is floored at -21, so 2^-48 is truncated and 2^-25 is an
    // exact tie that rounds to even 0.
    assert_eq!(
        one(
            Preset::Hopper,
            FP16,
            FP16,
            &[0x0400, 0x0001],
            &[0x1000, 0x0001],
            0
        ),
        0
    );
    // a = (2^-14, 2^-20), b = (2^-11, 2^-20), c = 2^-23 (0x0002): the model reads c at its true
    // exponent -23 (floored to -21), keeps 2^-40 and rounds 2.5 + 2^-16 ulps up: 0x0003.
    assert_eq!(
        one(
            Preset::Hopper,
            FP16,
            FP16,
            &[0x0400, 0x0010],
            &[0x1000, 0x0010],
            0x0002
        ),
        0x0003
    );
    // The floors of the other generations (models/V100TC.m -19, A100TC.m and AdaTC.m -20):
    // a product of 2^-25 + 2^-48 keeps its 2^-48 only if the grid reaches it.
    for p in [
        Preset::Volta,
        Preset::Turing,
        Preset::Ampere,
        Preset::Ada,
        Preset::Blackwell,
    ] {
        assert_eq!(
            one(p, FP16, FP16, &[0x0400, 0x0001], &[0x1000, 0x0001], 0),
            0,
            "{p}"
        );
    }
}

/// An AMD model's sets, FP32 output (the CDNA models return binary32 only): every row bit for
/// bit, from the datapath and from the independent reference (`verify::nvidia_ref`); FP16
/// output is refused.
fn check_amd_model(model: &str, preset: Preset, formats: &[&str]) {
    for &f in formats {
        let bad = differing(model, f, preset, FP32);
        assert!(
            bad.is_empty(),
            "{model}/{f} under {preset}: {} rows differ, first (row, ours, model): {:x?}",
            bad.len(),
            &bad[..bad.len().min(4)]
        );
        let fmt = fmt_named(f);
        let data = set(model, f, FP32);
        let rp = ref_params(preset, fmt, fmt).expect("the reference has this row");
        let enc =
            |r: &[u32]| -> Vec<u64> { r.iter().map(|&w| encode_word(fmt, w).unwrap()).collect() };
        for (i, (ra, rb)) in data.a.iter().zip(&data.b).enumerate() {
            let d = nvidia_ref_dot(&rp, fmt, fmt, &enc(ra), &enc(rb), data.c_in(i, FP32));
            assert_eq!(d, data.d[i], "{model}/{f} row {}: reference", i + 1);
        }
        assert!(
            matches!(
                preset.params_for(fmt, fmt, FP16),
                Err(DotError::UnsupportedOutput { .. })
            ),
            "{preset} {f} into FP16"
        );
    }
}

#[test]
fn cdna1_is_the_mi100_model() {
    check_amd_model("MI100MC", Preset::Cdna1, &["fp16", "bf16"]);
}

#[test]
fn cdna2_is_the_mi210_model() {
    check_amd_model("MI210MC", Preset::Cdna2, &["fp16", "bf16"]);
}

#[test]
fn cdna3_is_the_mi300_model() {
    check_amd_model("MI300XMC", Preset::Cdna3, &["fp16", "bf16", "tf32"]);
}

/// Each CDNA rule is visible in its sets: the rows it reproduces would not all come out under
/// a neighbouring rule (so the three tests above could fail).
#[test]
fn the_cdna_rules_differ_on_their_sets() {
    for (model, f, own, other) in [
        ("MI100MC", "fp16", Preset::Cdna1, Preset::Cdna2),
        ("MI210MC", "fp16", Preset::Cdna2, Preset::Cdna1),
        ("MI300XMC", "fp16", Preset::Cdna3, Preset::Cdna1),
        ("MI300XMC", "bf16", Preset::Cdna3, Preset::Cdna2),
    ] {
        assert!(differing(model, f, own, FP32).is_empty());
        assert!(
            !differing(model, f, other, FP32).is_empty(),
            "{model}/{f}: {other} reproduces every row too"
        );
    }
}

/// Directed vectors for each CDNA rule, with the models' outputs read off Octave runs of
/// models/MI100MC.m, MI210MC.m and MI300MC.m (commit b4bf135) on the same inputs (FP16 in,
/// FP32 out), checked on the datapath and on the reference; each also differs from a
/// neighbouring rule.
#[test]
fn cdna_directed_vectors() {
    // FP16 patterns: 1 = 0x3c00, 2^-10 = 0x1400, 2^-11 = 0x1000, 2^-12 = 0x0c00,
    // 2^-13 = 0x0800, 2^-15 = 0x0200 (subnormal), 2^-24 = 0x0001, 2^10 = 0x6400.
    let pad = |v: &[u64], n: usize| {
        let mut v = v.to_vec();
        v.resize(n, 0);
        v
    };
    // (preset, A, B, C, the model's D)
    type Case = (Preset, Vec<u64>, Vec<u64>, u32, u32);
    let cases: [Case; 6] = [
        // cdna3: c = -2^-30 lies below the product's grid 2^-24 and is floored to -2^-24:
        // 1 - 2^-24 (a truncating block would keep 1.0).
        (
            Preset::Cdna3,
            pad(&[0x3c00], 8),
            pad(&[0x3c00], 8),
            0xb080_0000,
            0x3f7f_ffff,
        ),
        // The same c positive floors to 0: 1.0.
        (
            Preset::Cdna3,
            pad(&[0x3c00], 8),
            pad(&[0x3c00], 8),
            0x3080_0000,
            0x3f80_0000,
        ),
        // c = -1 above the product 2^-10: -1 + 2^-10 exactly.
        (
            Preset::Cdna3,
            pad(&[0x1400], 8),
            pad(&[0x3c00], 8),
            0xbf80_0000,
            0xbf7f_c000,
        ),
        // cdna2: the subnormal 2^-15 reads as zero, so 2^-15 x 2^10 contributes nothing (cdna1
        // would give 2^-5).
        (Preset::Cdna2, pad(&[0x0200], 4), pad(&[0x6400], 4), 0, 0),
        // cdna1: 1 + 2^-24 + 2^-30 summed exactly, rounded once: 1 + 2^-23.
        (
            Preset::Cdna1,
            pad(&[0x3c00, 0x0c00, 0x0200], 4),
            pad(&[0x3c00, 0x0c00, 0x0200], 4),
            0,
            0x3f80_0001,
        ),
        // cdna1: 1 + 2^-24 is a tie, to even: 1.0.
        (
            Preset::Cdna1,
            pad(&[0x3c00, 0x0c00], 4),
            pad(&[0x3c00, 0x0c00], 4),
            0,
            0x3f80_0000,
        ),
    ];
    for (preset, a, b, c, model) in &cases {
        assert_eq!(
            one(*preset, FP16, FP32, a, b, *c),
            *model,
            "{preset} {a:x?} c={c:#x}"
        );
        let rp = ref_params(*preset, FP16, FP16).unwrap();
        assert_eq!(
            nvidia_ref_dot(&rp, FP16, FP16, a, b, *c),
            *model,
            "reference {preset}"
        );
    }
    assert_eq!(
        one(Preset::Cdna1, FP16, FP32, &cases[3].1, &cases[3].2, 0),
        0x3d00_0000
    );
    assert_eq!(
        one(
            Preset::Hopper,
            FP16,
            FP32,
            &cases[0].1,
            &cases[0].2,
            0xb080_0000
        ),
        0x3f80_0000
    );
    assert_eq!(
        one(Preset::Cdna3, FP16, FP32, &cases[4].1, &cases[4].2, 0),
        0x3f80_0000
    );
}
