//! The H200 sets this project measured (data/tensor-core-measurements/H200, scripts/gpu/
//! capture.cu, 2026-12-04, CUDA 13.0, `mma.sync`): every committed row of every set, FP32
//! and FP16 output, against the `h200` preset through the datapath (`dot_acc`), the
//! independent reference (`nvidia_ref`) and the clocked core; `hopper` on the sets it
//! reproduces (FP16, BF16, TF32 with K = 4); the NaN encoding; and the rules the data rules
//! out (docs/numerics.md, "Checked on an H200").

use std::path::PathBuf;
use tensorcore_rtl::gemm::clocked::run_clocked;
use tensorcore_rtl::gemm::functional::run_functional;
use tensorcore_rtl::gemm::{CoreConfig, Gemm};
use tensorcore_rtl::numerics::dot::nvidia::nvidia_nan;
use tensorcore_rtl::numerics::dot::{dot_acc, AccMode, BlockRule, NvidiaParams, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::measurements::{encode_word, load_acc, MeasurementSet};
use tensorcore_rtl::verify::nvidia_ref::{nvidia_ref_dot, ref_params_acc};

/// Every H200 set: (directory, format of A, format of B, whether the GPU also accumulated
/// into FP16).
const SETS: [(&str, Format, Format, bool); 9] = [
    ("fp16", FP16, FP16, true),
    ("fp16_k8", FP16, FP16, true),
    ("bf16", BF16, BF16, false),
    ("tf32", TF32, TF32, false),
    ("tf32_k8", TF32, TF32, false),
    ("E4M3", E4M3, E4M3, true),
    ("E5M2", E5M2, E5M2, true),
    ("E4M3xE5M2", E4M3, E5M2, true),
    ("E5M2xE4M3", E5M2, E4M3, true),
];

/// The FP8 sets.
const FP8_SETS: [(&str, Format, Format); 4] = [
    ("E4M3", E4M3, E4M3),
    ("E5M2", E5M2, E5M2),
    ("E4M3xE5M2", E4M3, E5M2),
    ("E5M2xE4M3", E5M2, E4M3),
];

fn load(name: &str, acc: Format) -> MeasurementSet {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/tensor-core-measurements/H200")
        .join(name);
    let data = load_acc(&dir, None, acc).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        data.a.len(),
        1024,
        "H200/{name}: the committed sets hold 1,024 rows"
    );
    data
}

fn enc(fmt: Format, r: &[u32]) -> Vec<u64> {
    r.iter()
        .map(|&w| encode_word(fmt, w).expect("value not representable"))
        .collect()
}

/// Rows where `params` (through `dot_acc`) differs from the GPU: (row, ours, gpu).
fn mismatches(
    name: &str,
    fa: Format,
    fb: Format,
    acc: Format,
    params: NvidiaParams,
) -> Vec<(usize, u32, u32)> {
    let data = load(name, acc);
    let mode = AccMode::Nvidia(params);
    let mut bad = Vec::new();
    for i in 0..data.a.len() {
        let d = dot_acc(
            &mode,
            RoundingMode::NearestEven,
            acc,
            fa,
            fb,
            &enc(fa, &data.a[i]),
            &enc(fb, &data.b[i]),
            data.c_in(i, acc),
            params.block,
        )
        .unwrap()
        .bits;
        if d != data.d[i] {
            bad.push((i + 1, d, data.d[i]));
        }
    }
    bad
}

fn outputs(fp16: bool) -> Vec<Format> {
    if fp16 {
        vec![FP32, FP16]
    } else {
        vec![FP32]
    }
}

#[test]
fn every_h200_set_matches_the_h200_preset() {
    for (name, fa, fb, fp16) in SETS {
        for acc in outputs(fp16) {
            let params = Preset::H200.params_for(fa, fb, acc).unwrap();
            let bad = mismatches(name, fa, fb, acc, params);
            assert!(
                bad.is_empty(),
                "H200/{name} ({acc} output): {} rows differ, first (row, ours, gpu): {:x?}",
                bad.len(),
                &bad[..bad.len().min(5)]
            );
        }
    }
}

/// The independent reference (`verify::nvidia_ref`, written apart from the datapath) gives
/// the GPU's word on every row too.
#[test]
fn every_h200_set_matches_the_reference() {
    for (name, fa, fb, fp16) in SETS {
        for acc in outputs(fp16) {
            let data = load(name, acc);
            let p = ref_params_acc(Preset::H200, fa, fb, acc).expect("h200 has this path");
            for i in 0..data.a.len() {
                let d = nvidia_ref_dot(
                    &p,
                    fa,
                    fb,
                    &enc(fa, &data.a[i]),
                    &enc(fb, &data.b[i]),
                    data.c_in(i, acc),
                );
                assert_eq!(
                    d,
                    data.d[i],
                    "H200/{name} ({acc} output) row {}: ref {d:#x}, gpu {:#x}",
                    i + 1,
                    data.d[i]
                );
            }
        }
    }
}

/// `hopper` (the H100 rules) reproduces every H200 row of FP16, BF16 and TF32 with K = 4.
#[test]
fn hopper_matches_the_h200_fp16_bf16_tf32_k4_sets() {
    for (name, fa, fb, fp16) in SETS {
        if name == "tf32_k8" || fa == E4M3 || fa == E5M2 {
            continue;
        }
        for acc in outputs(fp16) {
            let params = Preset::Hopper.params_for(fa, fb, acc).unwrap();
            let bad = mismatches(name, fa, fb, acc, params);
            assert!(bad.is_empty(), "H200/{name} ({acc}): {bad:x?}");
        }
    }
}

/// NaN results are NVIDIA's canonical NaN, all fraction bits set: the sets hold such rows
/// (so the encoding is measured, not assumed) and no other NaN pattern.
#[test]
fn nan_results_are_0x7fffffff_and_0x7fff() {
    let (mut fp32_nans, mut fp16_nans) = (0, 0);
    for (name, _, _, fp16) in SETS {
        for acc in outputs(fp16) {
            let data = load(name, acc);
            for &d in &data.d {
                if acc.is_nan(u64::from(d)) {
                    let want = if acc == FP32 { 0x7FFF_FFFF } else { 0x7FFF };
                    assert_eq!(d, want, "H200/{name} ({acc})");
                    assert_eq!(nvidia_nan(acc), want);
                    if acc == FP32 {
                        fp32_nans += 1
                    } else {
                        fp16_nans += 1
                    }
                }
            }
        }
    }
    assert!(
        fp32_nans >= 20 && fp16_nans >= 20,
        "{fp32_nans} {fp16_nans}"
    );
}

/// TF32 `m16n8k8` is one block of 8 (as `hopper` and `h200` now take it, with the published
/// models): blocks of 4 chained miss rows of tf32_k8.
#[test]
fn tf32_k8_is_one_block_of_8() {
    let hopper = Preset::Hopper.params(TF32, TF32).unwrap();
    assert_eq!(hopper.block, 8);
    assert!(mismatches("tf32_k8", TF32, TF32, FP32, hopper).is_empty());
    let fours = NvidiaParams { block: 4, ..hopper };
    assert!(!mismatches("tf32_k8", TF32, TF32, FP32, fours).is_empty());
    assert_eq!(Preset::H200.params(TF32, TF32).unwrap().block, 8);
}

/// The FP8 rules the H200 data rule out: Hopper's 13-bit cut into FP32, the half steps with
/// the whole block's specials decided first into FP16 (the rule Hopper and Blackwell used
/// before these data; they now share the H200's), Blackwell's `RNE32(c + RZ32(exact sum))`,
/// and the plain truncating block of 32 with C inside.
#[test]
fn h200_fp8_is_none_of_the_other_rules() {
    for (name, fa, fb) in FP8_SETS {
        for acc in [FP32, FP16] {
            let h200 = Preset::H200.params_for(fa, fb, acc).unwrap();
            assert_eq!(h200.rule, BlockRule::K16Steps);
            let mut others = vec![NvidiaParams {
                rule: BlockRule::Truncating,
                ..h200
            }];
            if acc == FP32 {
                others.push(Preset::Hopper.params_for(fa, fb, acc).unwrap());
                others.push(Preset::Blackwell.params_for(fa, fb, acc).unwrap());
            } else {
                // Into FP16 every FP8 preset of Hopper and Blackwell takes the H200's steps.
                for p in [Preset::Hopper, Preset::Blackwell] {
                    assert_eq!(p.params_for(fa, fb, acc).unwrap(), h200);
                }
                others.push(NvidiaParams {
                    rule: BlockRule::HalfSteps,
                    ..h200
                });
            }
            for other in others {
                assert!(
                    !mismatches(name, fa, fb, acc, other).is_empty(),
                    "H200/{name} ({acc}): {other:?} matches every row"
                );
            }
        }
    }
}

/// The clocked core (PE datapath) gives the functional model's D on H200 rows, and the GPU's
/// word on the diagonal: 16 samples per GEMM (sample i in row i of A, column i of B and
/// C[i][i]), at a width that gathers a block over several steps and at one block per step.
#[test]
fn clocked_core_equals_the_model_on_h200_rows() {
    let mut sets: Vec<(&str, Format, Format, Format)> = FP8_SETS
        .iter()
        .flat_map(|&(n, fa, fb)| [(n, fa, fb, FP32), (n, fa, fb, FP16)])
        .collect();
    sets.push(("tf32_k8", TF32, TF32, FP32));
    for (name, fa, fb, acc) in sets {
        let data = load(name, acc);
        // The first 48 rows and 16 rows whose result is NaN or an infinity.
        let mut rows: Vec<usize> = (0..48).collect();
        rows.extend(
            (48..data.a.len())
                .filter(|&i| !acc.classify(u64::from(data.d[i])).is_finite())
                .take(16),
        );
        let params = Preset::H200.params_for(fa, fb, acc).unwrap();
        for width in [4, 32] {
            let cfg = CoreConfig::new(fa, fb, AccMode::Nvidia(params), width).with_acc(acc);
            for chunk in rows.chunks(16) {
                let (n, k) = (chunk.len(), data.k);
                let mut a = Vec::with_capacity(n * k);
                for &i in chunk {
                    a.extend(enc(fa, &data.a[i]));
                }
                let cols: Vec<Vec<u64>> = chunk.iter().map(|&i| enc(fb, &data.b[i])).collect();
                let mut b = Vec::with_capacity(k * n);
                for kk in 0..k {
                    b.extend(cols.iter().map(|col| col[kk]));
                }
                let mut c = vec![0u32; n * n];
                for (j, &i) in chunk.iter().enumerate() {
                    c[j * n + j] = data.c_in(i, acc);
                }
                let g = Gemm::new(n, n, k, cfg, a, b, c).expect("problem");
                let model = run_functional(&g).expect("functional");
                let core = run_clocked(&g, None).expect("clocked");
                assert_eq!(core.out.d, model.d, "H200/{name} ({acc}) w = {width}");
                for (j, &i) in chunk.iter().enumerate() {
                    assert_eq!(
                        core.out.d[j * n + j],
                        data.d[i],
                        "H200/{name} ({acc}) w = {width} row {}",
                        i + 1
                    );
                }
            }
        }
    }
}

/// cuBLAS's FP8 GEMM on the same H200 (`torch._scaled_mm`, the native Hopper FP8 path;
/// data/tensor-core-measurements/H200/cublas/scaled_mm_fp8.txt, no C): into FP32 every row is
/// the `hopper` preset with C = 0 (the 13-bit cut of the H100 sets), not `h200`'s `mma.sync`
/// steps; its FP16 and BF16 outputs are that FP32 result rounded to nearest even (an epilogue
/// conversion, not an FP16 accumulator).
#[test]
fn cublas_fp8_is_the_hopper_rule() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/tensor-core-measurements/H200/cublas/scaled_mm_fp8.txt");
    let text = std::fs::read_to_string(&path).expect("the cuBLAS rows");
    let mut lines = text.lines().skip(1);
    let mut fp32: std::collections::HashMap<String, Vec<u32>> = Default::default();
    let mut checked = 0;
    while let (Some(head), Some(words)) = (lines.next(), lines.next()) {
        let words: Vec<u32> = words
            .split_whitespace()
            .map(|w| u32::from_str_radix(w, 16).expect("hex"))
            .collect();
        let mut it = head.split_whitespace();
        let (name, fast, out) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
        let (fa, fb) = FP8_SETS
            .iter()
            .find(|s| s.0 == name)
            .map(|s| (s.1, s.2))
            .expect("an FP8 set");
        let key = format!("{name} {fast}");
        if out == "out=float32" {
            let data = load(name, FP32);
            let hopper = AccMode::Nvidia(Preset::Hopper.params_for(fa, fb, FP32).unwrap());
            for (i, &gpu) in words.iter().enumerate() {
                let ours = dot_acc(
                    &hopper,
                    RoundingMode::NearestEven,
                    FP32,
                    fa,
                    fb,
                    &enc(fa, &data.a[i]),
                    &enc(fb, &data.b[i]),
                    0,
                    32,
                )
                .unwrap()
                .bits;
                assert_eq!(ours, gpu, "cuBLAS {key} row {}: hopper {ours:#010x}", i + 1);
            }
            fp32.insert(key, words);
        } else {
            // The narrow outputs, as FP32 words: the FP32 result rounded to nearest even
            // (host conversions by the `half` crate, a reference).
            let wide = &fp32[&key];
            for (i, (&w, &n)) in wide.iter().zip(&words).enumerate() {
                let x = f32::from_bits(w);
                let want = if out == "out=float16" {
                    half::f16::from_f32(x).to_f32()
                } else {
                    half::bf16::from_f32(x).to_f32()
                };
                let got = f32::from_bits(n);
                assert!(
                    want.to_bits() == got.to_bits() || (want.is_nan() && got.is_nan()),
                    "cuBLAS {key} {out} row {}: {got} against RNE {want}",
                    i + 1
                );
            }
        }
        checked += 1;
    }
    // Three sets, two accumulation modes, three outputs.
    assert_eq!(checked, 18);
}
