//! The independent `nvidia` reference (`verify::nvidia_ref`) against every vendored real-GPU
//! measurement set, FP32 and FP16 output (all rows must match bit for bit), the probes of
//! docs/numerics.md, and random vectors beside the datapath's `nvidia` mode (reference and datapath
//! written apart).

use std::path::PathBuf;
use tensorcore_rtl::gemm::problem::random_operand;
use tensorcore_rtl::gemm::rng::SplitMix64;
use tensorcore_rtl::numerics::dot::{dot, dot_acc, AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, TF32};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::measurements::{encode_word, load, load_acc};
use tensorcore_rtl::verify::nvidia_ref::{nvidia_ref_dot, ref_params, ref_params_acc, RefParams};

fn params(preset: &str, fmt: Format) -> RefParams {
    let p = Preset::by_name(preset).expect("a preset name of this test's table");
    ref_params(p, fmt, fmt).expect("preset supports format")
}

/// Returns (matched, total) for one set.
fn run_set(name: &str, fmt: Format, preset: &str, zero_c: bool) -> (usize, usize) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/tensor-core-measurements")
        .join(name);
    let data = load(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    let p = params(preset, fmt);
    let enc = |r: &[u32]| -> Vec<u64> {
        r.iter()
            .map(|&w| encode_word(fmt, w).expect("representable"))
            .collect()
    };
    let mut matched = 0;
    let mut first_bad = None;
    for i in 0..data.a.len() {
        let c = if zero_c { 0 } else { data.c[i] };
        let d = nvidia_ref_dot(&p, fmt, fmt, &enc(&data.a[i]), &enc(&data.b[i]), c);
        if d == data.d[i] {
            matched += 1;
        } else if first_bad.is_none() {
            first_bad = Some((i + 1, d, data.d[i]));
        }
    }
    assert_eq!(
        matched,
        data.a.len(),
        "{name}: first mismatch (row, ref, gpu) {first_bad:x?}"
    );
    (matched, data.a.len())
}

#[test]
fn every_measurement_set_matches() {
    let sets: [(&str, Format, &str, bool); 11] = [
        ("V100/fp16", FP16, "volta", false),
        ("A100/fp16", FP16, "ampere", false),
        ("A100/bf16", BF16, "ampere", false),
        ("H100/fp16", FP16, "hopper", false),
        ("H100/bf16", BF16, "hopper", false),
        ("H100/E4M3", E4M3, "hopper", true),
        ("H100/E5M2", E5M2, "hopper", true),
        ("B200/fp16", FP16, "blackwell", false),
        ("B200/bf16", BF16, "blackwell", false),
        ("B200/E4M3", E4M3, "blackwell", false),
        ("B200/E5M2", E5M2, "blackwell", false),
    ];
    let mut total = 0;
    for (name, fmt, preset, zero_c) in sets {
        let (m, t) = run_set(name, fmt, preset, zero_c);
        eprintln!("{name}: {m}/{t}");
        total += t;
    }
    assert!(total >= 3300);
}

fn h(v: f64) -> u64 {
    let x = half::f16::from_f64(v);
    assert_eq!(x.to_f64(), v);
    x.to_bits() as u64
}

fn s(v: f64) -> u32 {
    let x = v as f32;
    assert_eq!(x as f64, v);
    x.to_bits()
}

fn p2(e: i32) -> f64 {
    2f64.powi(e)
}

fn probe(preset: &str, a: &[f64], b: &[f64], c: f64) -> u32 {
    let p = params(preset, FP16);
    let mut av: Vec<u64> = a.iter().map(|&v| h(v)).collect();
    let mut bv: Vec<u64> = b.iter().map(|&v| h(v)).collect();
    av.resize(p.n.max(a.len()), 0);
    bv.resize(p.n.max(b.len()), 0);
    nvidia_ref_dot(&p, FP16, FP16, &av, &bv, s(c))
}

const PRESETS: [&str; 4] = ["volta", "ampere", "hopper", "blackwell"];

#[test]
fn numerics_md_probes() {
    for p in PRESETS {
        assert_eq!(probe(p, &[p2(-24)], &[4.0], 0.0), s(p2(-22)), "{p}");
        assert_eq!(probe(p, &[], &[], p2(-149)), s(p2(-149)), "{p}");
        let x = 1.0 - p2(-11);
        assert_eq!(probe(p, &[x], &[x], 0.0), s(1.0 - p2(-10) + p2(-22)), "{p}");
        let b = [2.0, p2(-23) + p2(-24)];
        assert_eq!(probe(p, &[1.0; 4], &b, 0.0), s(2.0), "{p}");
        let nb = [-2.0, -(p2(-23) + p2(-24))];
        assert_eq!(probe(p, &[1.0; 4], &nb, 0.0), s(-2.0), "{p}");
        let c = 1.0 + p2(-22) + p2(-23);
        assert_eq!(probe(p, &[1.0; 4], &[1.0; 4], c), s(5.0), "{p}");
        assert_eq!(probe(p, &[1.0; 4], &[-1.0; 4], -c), s(-5.0), "{p}");
        let b = [1.0, 1.5, 1.75, 1.875];
        assert_eq!(probe(p, &[1.0; 4], &b, 1.875), s(8.0), "{p}");
        let c = 1.0 + p2(-23) + p2(-22);
        assert_eq!(probe(p, &[1.0; 3], &[1.0; 3], c), s(4.0), "{p}");
    }
    let c = -(1.0 - p2(-24));
    assert_eq!(probe("volta", &[1.0], &[1.0], c), s(p2(-23)));
    for p in ["ampere", "hopper", "blackwell"] {
        assert_eq!(probe(p, &[1.0], &[1.0], c), s(p2(-24)), "{p}");
    }
    // Late normalisation.
    for p in PRESETS {
        let d = probe(p, &[1.0; 4], &[p2(-24); 4], 1.0 - p2(-24));
        assert_eq!(d, s(1.0 + p2(-23)), "{p}");
    }
    // Two extra bits (FTTN): hopper/blackwell >= 2 bits, ampere one.
    let c = -(p2(-3) + p2(-25));
    assert_eq!(probe("ampere", &[1.0], &[1.25], c), 0x3F90_0000);
    for p in ["hopper", "blackwell"] {
        assert_eq!(probe(p, &[1.0], &[1.25], c), 0x3F8F_FFFF, "{p}");
    }
    // Block size: raise j until D differs from 2 + 2^-22; n = that j.
    for (p, n) in [
        ("volta", 4),
        ("ampere", 8),
        ("hopper", 16),
        ("blackwell", 16),
    ] {
        let c = 1.0 + p2(-23);
        let found = (1..=32).find(|&j| {
            let mut a = vec![0.0; j + 1];
            let mut b = vec![0.0; j + 1];
            a[0] = 1.0;
            b[0] = 1.0;
            a[j] = p2(-23);
            b[j] = 1.0;
            probe(p, &a, &b, c) != s(2.0 + p2(-22))
        });
        assert_eq!(found, Some(n), "{p}");
    }
}

/// Random vectors (zeros, subnormals, both signs, K spanning several blocks) beside the
/// datapath's `nvidia` mode, which was written separately.
#[test]
fn random_vectors_agree_with_the_datapath() {
    let mut rng = SplitMix64::new(0x5eed);
    let cases: [(Preset, Format, Format); 16] = [
        (Preset::Cdna1, FP16, FP16),
        (Preset::Cdna1, BF16, BF16),
        (Preset::Cdna2, FP16, FP16),
        (Preset::Cdna2, BF16, BF16),
        (Preset::Cdna3, FP16, FP16),
        (Preset::Cdna3, BF16, BF16),
        (Preset::Cdna3, TF32, TF32),
        (Preset::Volta, FP16, FP16),
        (Preset::Ampere, FP16, FP16),
        (Preset::Ampere, BF16, BF16),
        (Preset::Hopper, FP16, FP16),
        (Preset::Hopper, BF16, BF16),
        (Preset::Hopper, E4M3, E5M2),
        (Preset::Blackwell, BF16, BF16),
        (Preset::Blackwell, E4M3, E4M3),
        (Preset::Blackwell, E5M2, E5M2),
    ];
    for (preset, fa, fb) in cases {
        let ours = ref_params(preset, fa, fb).expect("supported");
        let mode = AccMode::Nvidia(preset.params(fa, fb).expect("supported"));
        for _ in 0..300 {
            let k = 1 + rng.below(70) as usize;
            let a: Vec<u64> = (0..k).map(|_| random_operand(fa, &mut rng)).collect();
            let b: Vec<u64> = (0..k).map(|_| random_operand(fb, &mut rng)).collect();
            let c = random_operand(tensorcore_rtl::numerics::format::FP32, &mut rng) as u32;
            let want = nvidia_ref_dot(&ours, fa, fb, &a, &b, c);
            let got = dot(&mode, fa, fb, &a, &b, c, 1).expect("dot").bits;
            assert_eq!(got, want, "{preset} {fa}x{fb} a={a:x?} b={b:x?} c={c:#x}");
        }
    }
}

/// The FP16-output rules of the reference (`ref_params_acc`) against every vendored
/// FP16-output measurement file (C rounded to FP16 first, as the GPU test programs did): all
/// rows bit for bit.
#[test]
fn every_fp16_output_set_matches() {
    let sets: [(&str, Format, Preset); 11] = [
        ("V100/fp16", FP16, Preset::Volta),
        ("A100/fp16", FP16, Preset::Ampere),
        ("Ada/fp16", FP16, Preset::Ada),
        ("H100/fp16", FP16, Preset::Hopper),
        ("B200/fp16", FP16, Preset::Blackwell),
        ("Ada/E4M3", E4M3, Preset::Ada),
        ("Ada/E5M2", E5M2, Preset::Ada),
        ("H100/E4M3", E4M3, Preset::Hopper),
        ("H100/E5M2", E5M2, Preset::Hopper),
        ("B200/E4M3", E4M3, Preset::Blackwell),
        ("B200/E5M2", E5M2, Preset::Blackwell),
    ];
    let mut total = 0;
    for (name, fmt, preset) in sets {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("data/tensor-core-measurements")
            .join(name);
        let data = load_acc(&dir, None, FP16).unwrap_or_else(|e| panic!("{e}"));
        let p = ref_params_acc(preset, fmt, fmt, FP16).expect("an FP16-output rule");
        let enc = |r: &[u32]| -> Vec<u64> {
            r.iter()
                .map(|&w| encode_word(fmt, w).expect("representable"))
                .collect()
        };
        let mut bad = Vec::new();
        for i in 0..data.a.len() {
            let d = nvidia_ref_dot(
                &p,
                fmt,
                fmt,
                &enc(&data.a[i]),
                &enc(&data.b[i]),
                data.c_in(i, FP16),
            );
            if d != data.d[i] {
                bad.push((i + 1, d, data.d[i]));
            }
        }
        assert!(
            bad.is_empty(),
            "{name} (fp16 output): {} of {} rows differ, first (row, ref, gpu): {:x?}",
            bad.len(),
            data.a.len(),
            &bad[..bad.len().min(5)]
        );
        eprintln!("{name} fp16 output: {}/{}", data.a.len(), data.a.len());
        total += data.a.len();
    }
    assert!(total >= 3300, "{total} rows");
}

/// FP16 output: random vectors beside the datapath's `nvidia` mode into FP16 (`dot_acc`),
/// which was written separately; BF16 and TF32 have no FP16-output rule on either side.
#[test]
fn fp16_output_random_vectors_agree_with_the_datapath() {
    let mut rng = SplitMix64::new(0xf16);
    let cases: [(Preset, Format, Format); 8] = [
        (Preset::Volta, FP16, FP16),
        (Preset::Ampere, FP16, FP16),
        (Preset::Ada, FP16, FP16),
        (Preset::Ada, E4M3, E5M2),
        (Preset::Hopper, FP16, FP16),
        (Preset::Hopper, E4M3, E4M3),
        (Preset::Blackwell, E5M2, E5M2),
        (Preset::Blackwell, FP16, FP16),
    ];
    for (preset, fa, fb) in cases {
        let ours = ref_params_acc(preset, fa, fb, FP16).expect("supported");
        let params = preset.params_for(fa, fb, FP16).expect("supported");
        let mode = AccMode::Nvidia(params);
        for _ in 0..300 {
            let k = 1 + rng.below(70) as usize;
            let a: Vec<u64> = (0..k).map(|_| random_operand(fa, &mut rng)).collect();
            let b: Vec<u64> = (0..k).map(|_| random_operand(fb, &mut rng)).collect();
            let c = random_operand(FP16, &mut rng) as u32;
            let want = nvidia_ref_dot(&ours, fa, fb, &a, &b, c);
            let got = dot_acc(&mode, RoundingMode::NearestEven, FP16, fa, fb, &a, &b, c, 1)
                .expect("dot")
                .bits;
            assert_eq!(got, want, "{preset} {fa}x{fb} a={a:x?} b={b:x?} c={c:#x}");
        }
    }
    for (fa, p) in [(BF16, Preset::Hopper), (TF32, Preset::Ampere)] {
        assert!(ref_params_acc(p, fa, fa, FP16).is_none());
        assert!(p.params_for(fa, fa, FP16).is_err());
    }
}
