//! The feature-detection algorithm (`verify::features`, after Khattak and Mikaitis, IEEE HPEC
//! 2025) run on every preset and input format, against the published parameters.
//!
//! The expected rows come from the models of Khattak and Mikaitis,
//! north-numerical-computing/MATLAB-tensor-core at commit b12b5a7 (models/V100TC.m,
//! A100TC.m, AdaTC.m, H100TC.m, B200TC.m, H200TC.m: `fma`, `neab`, `frmode`, `armode`,
//! `in_subnormals`, `out_subnormals`), and, for the T4 (no model there), from Fasi, Higham,
//! Mikaitis and Pranesh (PeerJ CS 2021), who found its binary16 tensor cores to behave as the
//! V100's. The carry bits follow the HPEC 2025 definition, `floor(log2(n (2 - 2^(1-p))))`,
//! worked out here with host `f64`. Where a preset deliberately differs from the published
//! model (`blackwell` and `h200` FP8), the test states what the algorithm reports instead.
//! The AMD CDNA presets are checked against models/MI100MC.m, MI210MC.m (at b12b5a7) and
//! MI300MC.m (at b4bf135): what the probes recover of them, and what they report where the
//! models' exact or pair-wise sums lie outside what a probe of the block-FMA shape can express.

use tensorcore_rtl::numerics::dot::{dot_acc, AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::features::{
    detect_features, Bound, FeatureReport, Normalisation, Observed, UnitFn, MAX_NEAB_PROBE,
};

/// The preset as a black box into `acc` (FP32 or FP16), or `None` where it lacks the path.
fn unit(p: Preset, fmt: Format, acc: Format) -> Option<impl Fn(&[u64], &[u64], u32) -> u32> {
    let params = p.params_for(fmt, fmt, acc).ok()?;
    Some(move |a: &[u64], b: &[u64], c: u32| {
        dot_acc(
            &AccMode::Nvidia(params),
            RoundingMode::NearestEven,
            acc,
            fmt,
            fmt,
            a,
            b,
            c,
            a.len().clamp(1, 32),
        )
        .unwrap()
        .bits
    })
}

fn detect(p: Preset, fmt: Format) -> Option<FeatureReport> {
    let f32_unit = unit(p, fmt, FP32)?;
    let f16_unit = unit(p, fmt, FP16);
    Some(detect_features(fmt, &f32_unit, f16_unit.as_ref()).unwrap())
}

fn preset(name: &str) -> Preset {
    Preset::by_name(name).unwrap_or_else(|| panic!("no preset {name}"))
}

/// HPEC 2025's carry bits for a block of `n` products of `p`-bit inputs (host f64).
fn carry(n: i32, p: u32) -> u32 {
    (n as f64 * (2.0 - 2f64.powi(1 - p as i32))).log2().floor() as u32
}

/// One published row: block size, extra alignment bits, kept fraction bits of c.
struct Published {
    preset: &'static str,
    fmt: Format,
    block: i32,
    neab: i32,
}

/// The published block-FMA rows (MATLAB-tensor-core models at b12b5a7; T4 per Fasi et al.).
const PUBLISHED: &[Published] = &[
    // V100TC.m: fma = 4, neab = 0, frmode = 'rz'.
    Published {
        preset: "volta",
        fmt: FP16,
        block: 4,
        neab: 0,
    },
    // No T4 model; Fasi et al. 2021: the T4 behaves as the V100 in binary16.
    Published {
        preset: "turing",
        fmt: FP16,
        block: 4,
        neab: 0,
    },
    // A100TC.m: fma = 8, neab = 1; tf32: fma = 4.
    Published {
        preset: "ampere",
        fmt: FP16,
        block: 8,
        neab: 1,
    },
    Published {
        preset: "ampere",
        fmt: BF16,
        block: 8,
        neab: 1,
    },
    Published {
        preset: "ampere",
        fmt: TF32,
        block: 4,
        neab: 1,
    },
    // AdaTC.m: fma = 8, neab = 1; tf32: fma = 4; fp8: fma = 16, neab = -10.
    Published {
        preset: "ada",
        fmt: FP16,
        block: 8,
        neab: 1,
    },
    Published {
        preset: "ada",
        fmt: BF16,
        block: 8,
        neab: 1,
    },
    Published {
        preset: "ada",
        fmt: TF32,
        block: 4,
        neab: 1,
    },
    Published {
        preset: "ada",
        fmt: E4M3,
        block: 16,
        neab: -10,
    },
    Published {
        preset: "ada",
        fmt: E5M2,
        block: 16,
        neab: -10,
    },
    // H100TC.m: fma = 16, neab = 2; tf32: fma = 8; fp8: fma = 32, neab = -10.
    Published {
        preset: "hopper",
        fmt: FP16,
        block: 16,
        neab: 2,
    },
    Published {
        preset: "hopper",
        fmt: BF16,
        block: 16,
        neab: 2,
    },
    Published {
        preset: "hopper",
        fmt: TF32,
        block: 8,
        neab: 2,
    },
    Published {
        preset: "hopper",
        fmt: E4M3,
        block: 32,
        neab: -10,
    },
    Published {
        preset: "hopper",
        fmt: E5M2,
        block: 32,
        neab: -10,
    },
    // B200TC.m: fma = 16, neab = 2; tf32: fma = 8 (fp8: see blackwell_fp8 below).
    Published {
        preset: "blackwell",
        fmt: FP16,
        block: 16,
        neab: 2,
    },
    Published {
        preset: "blackwell",
        fmt: BF16,
        block: 16,
        neab: 2,
    },
    Published {
        preset: "blackwell",
        fmt: TF32,
        block: 8,
        neab: 2,
    },
    // H200TC.m calls H100TC.m (fp8: see h200_fp8 below; our h200 FP8 rule is measured).
    Published {
        preset: "h200",
        fmt: FP16,
        block: 16,
        neab: 2,
    },
    Published {
        preset: "h200",
        fmt: BF16,
        block: 16,
        neab: 2,
    },
    Published {
        preset: "h200",
        fmt: TF32,
        block: 8,
        neab: 2,
    },
];

/// The features every published block-FMA row shares: subnormals in and out
/// (`in_subnormals = out_subnormals = 1`), truncating alignment (`armode = 'rz'`), one
/// normalisation per block, truncation into FP32 (`frmode = 'rz'`) and round to nearest into
/// FP16 (`frmode = 'rne'` for FP16 output).
fn check_block_fma(row: &Published, r: &FeatureReport) {
    let what = format!("{} {}", row.preset, row.fmt.name);
    assert!(r.subnormal_inputs, "{what}: subnormal inputs");
    assert!(r.subnormal_outputs, "{what}: subnormal outputs");
    assert_eq!(
        r.block_size,
        Bound::Exactly(row.block),
        "{what}: block size"
    );
    assert_eq!(
        r.extra_alignment_bits,
        Some(Bound::Exactly(row.neab)),
        "{what}: neab"
    );
    // 23 + neab fraction bits under the largest exponent, at most FP32's 23.
    assert_eq!(
        r.kept_fraction_bits,
        (23 + row.neab).min(23) as u32,
        "{what}"
    );
    assert_eq!(r.alignment_rounding, Some(Observed::TowardZero), "{what}");
    assert_eq!(r.normalisation, Normalisation::Late, "{what}");
    assert_eq!(r.output_rounding, Observed::TowardZero, "{what}");
    assert_eq!(r.chained_rounding, Some(Observed::TowardZero), "{what}");
    assert_eq!(
        r.carry_bits,
        Some(carry(row.block, row.fmt.precision())),
        "{what}: carry bits"
    );
    // FP16 output: `frmode = 'rne'` in every model that has it (FP16 inputs; Ada and H100
    // FP8). BF16 and TF32 have no FP16 output.
    if row.fmt == BF16 || row.fmt == TF32 {
        assert_eq!(r.fp16_output_rounding, None, "{what}");
    } else {
        assert_eq!(r.fp16_output_rounding, Some(Observed::ToNearest), "{what}");
    }
}

#[test]
fn recovers_the_published_block_fma_parameters() {
    for row in PUBLISHED {
        let r = detect(preset(row.preset), row.fmt)
            .unwrap_or_else(|| panic!("{} lacks {}", row.preset, row.fmt.name));
        check_block_fma(row, &r);
    }
}

#[test]
fn hpec_carry_bits_match_their_sample_output() {
    // The HPEC repository's README shows an A30 (sm_80) run: 3 carry bits for FP16 inputs
    // (n = 8) and 2 for TF32 (n = 4); the A30 shares the A100's parameters.
    assert_eq!(detect(Preset::Ampere, FP16).unwrap().carry_bits, Some(3));
    assert_eq!(detect(Preset::Ampere, TF32).unwrap().carry_bits, Some(2));
}

/// What both FP8 rules that cut the products' sum to FP32 before `c` joins and add `c` to
/// nearest (`blackwell`'s and `h200`'s) report: a block of 32, no extra alignment bit, 23 kept
/// bits, round to nearest at the output and between blocks. Returns the report for the
/// rule's own further checks.
fn assert_fp32_cut_then_rn(preset: Preset, fmt: Format) -> FeatureReport {
    let r = detect(preset, fmt).unwrap();
    assert_eq!(r.block_size, Bound::Exactly(32), "{}", fmt.name);
    assert_eq!(
        r.extra_alignment_bits,
        Some(Bound::Exactly(0)),
        "{}",
        fmt.name
    );
    assert_eq!(r.kept_fraction_bits, 23, "{}", fmt.name);
    assert_eq!(r.output_rounding, Observed::ToNearest, "{}", fmt.name);
    assert_eq!(
        r.chained_rounding,
        Some(Observed::ToNearest),
        "{}",
        fmt.name
    );
    r
}

/// Blackwell FP8 (`BlockRule::ExactThenRne`, `d = RNE32(c + RZ32(exact sum of products))`,
/// docs/numerics.md "Presets") departs from B200TC.m (fma = 32, neab = 2, frmode = 'rz') on
/// purpose. Worked out from the rule: the alignment probe's 2^E + 2^(E-23-n) is cut to FP32
/// before c = -2^E joins, so only n <= 0 survives (0 extra bits, 23 kept bits); c is added
/// to nearest, so the output and chained roundings read as round to nearest; the block of 32
/// shows as the point where a product stops joining the exact sum.
#[test]
fn blackwell_fp8_reports_its_own_rule() {
    for fmt in [E4M3, E5M2] {
        let r = assert_fp32_cut_then_rn(Preset::Blackwell, fmt);
        assert_eq!(r.normalisation, Normalisation::Late, "{}", fmt.name);
        assert_eq!(
            r.carry_bits,
            Some(carry(32, fmt.precision())),
            "{}",
            fmt.name
        );
        assert!(r.subnormal_inputs && r.subnormal_outputs, "{}", fmt.name);
    }
}

/// H200 FP8 (`BlockRule::K16Steps`, our own measurement) departs from H200TC.m (which calls
/// H100TC.m: fma = 32, neab = -10). Worked out from the rule: slots 0 and 1 form the first
/// k16 step, rounded toward zero to FP32, so the alignment probe's small term is cut to FP32
/// before c joins (0 extra bits, 23 kept bits); c is added last to nearest (output and chained
/// roundings: round to nearest); the 32 products of a block all reach the same `d`.
#[test]
fn h200_fp8_reports_its_own_rule() {
    for fmt in [E4M3, E5M2] {
        let r = assert_fp32_cut_then_rn(Preset::H200, fmt);
        assert_eq!(
            r.fp16_output_rounding,
            Some(Observed::ToNearest),
            "{}",
            fmt.name
        );
    }
}

#[test]
fn every_preset_format_pair_is_probed_without_error() {
    // Every NVIDIA preset and input format it supports yields a report (no probe value is out
    // of a format's reach).
    let mut n = 0;
    for p in Preset::NVIDIA {
        for fmt in [FP16, BF16, TF32, E4M3, E5M2] {
            if detect(p, fmt).is_some() {
                n += 1;
            }
        }
    }
    // volta 1, turing 1, ampere 3, ada 5, hopper 5, blackwell 5, h200 5.
    assert_eq!(n, 25);
}

/// The algorithm finds parameters no preset has: the truncating block FMA with a chosen block
/// size and number of extra alignment bits (the values set here are the expectation), so the
/// published rows above are not matched by construction.
#[test]
fn recovers_chosen_block_sizes_and_extra_bits() {
    use tensorcore_rtl::numerics::dot::{BlockRule, NvidiaParams};
    for (block, neab) in [
        (1, 0),
        (2, 3),
        (3, -4),
        (5, 1),
        (7, 5),
        (12, -7),
        (24, 2),
        (32, 0),
    ] {
        let params = NvidiaParams {
            block,
            neab,
            exp_floor: -133,
            // The output keeps what the alignment keeps, as in the FP8 models (neab = -10
            // with a 13-bit cut).
            out_frac_bits: (23 + neab).min(23) as u32,
            out_rounding: RoundingMode::TowardZero,
            rule: BlockRule::Truncating,
        };
        let f = |a: &[u64], b: &[u64], c: u32| {
            let mode = AccMode::Nvidia(params);
            let w = a.len().clamp(1, 32);
            dot_acc(
                &mode,
                RoundingMode::NearestEven,
                FP32,
                FP16,
                FP16,
                a,
                b,
                c,
                w,
            )
            .unwrap()
            .bits
        };
        let r = detect_features(FP16, &f, None::<&UnitFn>).unwrap();
        let what = format!("n = {block}, neab = {neab}");
        assert_eq!(r.block_size, Bound::Exactly(block as i32), "{what}");
        // Blocks of one product leave the extra bits unmeasured.
        let expect_neab = (block > 1).then_some(Bound::Exactly(neab));
        assert_eq!(r.extra_alignment_bits, expect_neab, "{what}");
        assert_eq!(r.kept_fraction_bits, (23 + neab).min(23) as u32, "{what}");
        assert_eq!(r.output_rounding, Observed::TowardZero, "{what}");
        // One product per block normalises after each addition; two or more add at once.
        let expect = if block == 1 {
            Normalisation::Immediate
        } else {
            Normalisation::Late
        };
        assert_eq!(r.normalisation, expect, "{what}");
    }
}

/// One AMD CDNA row: the parameters the published model sets (the expectation of the tests
/// below; north-numerical-computing/MATLAB-tensor-core, models/MI100MC.m and MI210MC.m at
/// b12b5a7, models/MI300MC.m at b4bf135).
struct CdnaModel {
    preset: &'static str,
    fmt: Format,
    /// `fma`.
    block: i32,
    /// `in_subnormals`.
    in_subnormals: bool,
    /// `out_subnormals`.
    out_subnormals: bool,
}

const CDNA_PUBLISHED: &[CdnaModel] = &[
    // MI100MC.m: fma = 4 (fp16), fma = 2 (bf16), in_subnormals = out_subnormals = 1.
    CdnaModel {
        preset: "cdna1",
        fmt: FP16,
        block: 4,
        in_subnormals: true,
        out_subnormals: true,
    },
    CdnaModel {
        preset: "cdna1",
        fmt: BF16,
        block: 2,
        in_subnormals: true,
        out_subnormals: true,
    },
    // MI210MC.m: fma = 4 (fp16 and bf16), in_subnormals = out_subnormals = 0.
    CdnaModel {
        preset: "cdna2",
        fmt: FP16,
        block: 4,
        in_subnormals: false,
        out_subnormals: false,
    },
    CdnaModel {
        preset: "cdna2",
        fmt: BF16,
        block: 4,
        in_subnormals: false,
        out_subnormals: false,
    },
    // MI300MC.m: fma = 8 (fp16, bf16), fma = 4 (tf32/xf32), in_subnormals = out_subnormals = 1.
    CdnaModel {
        preset: "cdna3",
        fmt: FP16,
        block: 8,
        in_subnormals: true,
        out_subnormals: true,
    },
    CdnaModel {
        preset: "cdna3",
        fmt: BF16,
        block: 8,
        in_subnormals: true,
        out_subnormals: true,
    },
    CdnaModel {
        preset: "cdna3",
        fmt: TF32,
        block: 4,
        in_subnormals: true,
        out_subnormals: true,
    },
];

/// The AMD CDNA presets, probed as black boxes. What the algorithm recovers of each published
/// model, and what it reports where its probes cannot express the model's structure (every
/// expectation worked out by hand from the model's rule, docs/numerics.md "AMD CDNA matrix
/// cores"):
///
/// - block size = the model's `fma`; subnormal inputs and outputs = `in_subnormals`,
///   `out_subnormals`; the FP32 output and the chained rounding read as round to nearest,
///   the models' `frmode = 'rne'`; 23 kept fraction bits (c passes a block of zero products
///   unchanged in all three); one normalisation per block; HPEC's carry bits for `fma`.
/// - cdna1 (`neab = Inf`, `correct_rounding = 1`: the block and c are summed exactly and
///   rounded once): the cancelling pair `2^E - 2^E` leaves every third term `2^(E-23-n)`
///   exact, so the extra bits are only bounded, `>= 8` (the probe's ceiling,
///   `MAX_NEAB_PROBE`), the nearest a finite probe gets to `Inf`; with no finite grid there is
///   no alignment rounding to read (`None`).
/// - cdna2 (`neab = Inf`, but `pair_wise_sum = 1`: FP32 additions `(p0 + p1) + (p2 + p3)`,
///   each rounded to nearest even, then `c`): the probe's `2^E + 2^(E-23-n)` is the first FP32
///   addition, exact for `n <= 0` and a tie rounded to the even `2^E` for `n = 1`, so it reports
///   0 extra bits, and the 3/4-grid term rounds up in that addition for either sign: alignment
///   "to nearest". Both are the rounding of a pair-wise FP32 sum, not of an alignment: the
///   published `neab = Inf` is not recovered, and cannot be by a probe of this shape.
/// - cdna3 (`neab = 1`, `global_alignment = 1`, `late_partial_sum = 1`): the products align
///   to their largest exponent with one extra bit and truncate (the model's multi-operand
///   alignment); `armode = 'rd'` (the two-operand alignment of a late `c`) never acts in the
///   probes (`c` has the products' exponent, or the operand moved already lies on the grid
///   it moves to), and the alignment reads as toward zero.
#[test]
fn cdna_presets_against_the_published_models() {
    for row in CDNA_PUBLISHED {
        let what = format!("{} {}", row.preset, row.fmt.name);
        let r = detect(preset(row.preset), row.fmt).unwrap_or_else(|| panic!("{what} missing"));
        // Recovered as published.
        assert_eq!(r.block_size, Bound::Exactly(row.block), "{what}: fma");
        assert_eq!(
            r.subnormal_inputs, row.in_subnormals,
            "{what}: in_subnormals"
        );
        assert_eq!(
            r.subnormal_outputs, row.out_subnormals,
            "{what}: out_subnormals"
        );
        assert_eq!(
            r.output_rounding,
            Observed::ToNearest,
            "{what}: frmode 'rne'"
        );
        assert_eq!(r.chained_rounding, Some(Observed::ToNearest), "{what}");
        assert_eq!(r.kept_fraction_bits, 23, "{what}");
        assert_eq!(r.normalisation, Normalisation::Late, "{what}");
        assert_eq!(
            r.carry_bits,
            Some(carry(row.block, row.fmt.precision())),
            "{what}: carry bits"
        );
        // The models return binary32 only.
        assert_eq!(r.fp16_output_rounding, None, "{what}");
        // Alignment, per model structure (see above).
        let (neab, align) = match row.preset {
            // neab = Inf, exact sum: bounded by the probe's ceiling, nothing to round.
            "cdna1" => (Bound::AtLeast(MAX_NEAB_PROBE), None),
            // neab = Inf, pair-wise FP32 sums: the first addition's RNE shows instead.
            "cdna2" => (Bound::Exactly(0), Some(Observed::ToNearest)),
            // MI300MC.m: neab = 1, multi-operand alignment truncates.
            _ => (Bound::Exactly(1), Some(Observed::TowardZero)),
        };
        assert_eq!(r.extra_alignment_bits, Some(neab), "{what}: neab");
        assert_eq!(r.alignment_rounding, align, "{what}: alignment rounding");
    }
}

#[test]
fn every_cdna_preset_format_pair_is_probed_without_error() {
    // cdna1 and cdna2: FP16, BF16; cdna3: FP16, BF16, TF32 (its FP8 is not modelled).
    let mut n = 0;
    for p in Preset::AMD {
        for fmt in [FP16, BF16, TF32, E4M3, E5M2] {
            if detect(p, fmt).is_some() {
                n += 1;
            }
        }
    }
    assert_eq!(n, CDNA_PUBLISHED.len());
    assert_eq!(n, 7);
}
