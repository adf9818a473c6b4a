//! The GPU x instruction table (`numerics::dot::gpu`): every row resolves to its preset, every
//! preset named alone equals its canonical row, pairs that are not modelled (or not measured)
//! are errors naming what is, and the rows that differ run the rules real GPUs showed: the
//! H200 through `mma.sync` built with CUDA 13.0 (our capture) and through cuBLAS's `wgmma`
//! (our cuBLAS capture), on committed rows of data/tensor-core-measurements/H200.

use std::path::PathBuf;
use tensorcore_rtl::io::arith::ArithNames;
use tensorcore_rtl::numerics::dot::{
    dot_acc, AccMode, Gpu, GpuError, GpuRule, Instr, Preset, GPU_ROWS,
};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::measurements::{encode_word, load_acc};

#[test]
fn every_row_resolves_to_its_preset() {
    for r in GPU_ROWS {
        let got = GpuRule::resolve(r.gpu, Some(r.instr));
        match r.preset {
            Some(p) => assert_eq!(
                got,
                Ok(GpuRule {
                    gpu: r.gpu,
                    instr: r.instr,
                    preset: p
                }),
                "{} {}",
                r.gpu,
                r.instr
            ),
            None => assert!(
                matches!(got, Err(GpuError::Unmeasured { .. })),
                "{} {}: {got:?}",
                r.gpu,
                r.instr
            ),
        }
        assert!(!r.evidence.is_empty(), "{} {}: no evidence", r.gpu, r.instr);
    }
    // One row per pair.
    for (i, a) in GPU_ROWS.iter().enumerate() {
        for b in &GPU_ROWS[i + 1..] {
            assert!(
                (a.gpu, a.instr) != (b.gpu, b.instr),
                "{} {} twice",
                a.gpu,
                a.instr
            );
        }
    }
}

/// The formats and accumulators a preset's parameters depend on.
const PAIRS: [(Format, Format); 7] = [
    (FP16, FP16),
    (BF16, BF16),
    (TF32, TF32),
    (E4M3, E4M3),
    (E5M2, E5M2),
    (E4M3, E5M2),
    (E5M2, E4M3),
];

/// Every preset name keeps working and is its canonical row: the same preset, the same
/// parameters for every format pair and accumulator, through the front door's names too.
#[test]
fn every_preset_is_its_canonical_row() {
    for p in Preset::ALL {
        let canon: Vec<_> = GPU_ROWS
            .iter()
            .filter(|r| r.canonical && r.preset == Some(p))
            .collect();
        assert_eq!(canon.len(), 1, "{p}: one canonical row");
        let rule = GpuRule::of_preset(p).expect("canonical row");
        let by_gpu = GpuRule::resolve(rule.gpu, Some(rule.instr)).expect("resolves");
        assert_eq!(by_gpu.preset, p);
        for (fa, fb) in PAIRS {
            for acc in [FP32, FP16] {
                assert_eq!(
                    p.params_for(fa, fb, acc),
                    by_gpu.preset.params_for(fa, fb, acc),
                    "{p} {fa} x {fb} -> {acc}"
                );
                let names = |preset, gpu, instr| ArithNames {
                    format: fa.name,
                    format_b: Some(fb.name),
                    acc: Some("nvidia"),
                    preset,
                    gpu,
                    instr,
                };
                let by_preset = names(Some(p.name()), None, None).resolve_acc(acc);
                let by_pair =
                    names(None, Some(rule.gpu.name()), Some(rule.instr.name())).resolve_acc(acc);
                match (by_preset, by_pair) {
                    (Ok(x), Ok(y)) => {
                        assert_eq!(x.mode, y.mode, "{p} {fa} x {fb} -> {acc}");
                        assert_eq!((x.preset, y.preset), (Some(p), Some(p)));
                        assert_eq!((x.rule, y.rule), (Some(rule), Some(rule)));
                    }
                    (Err(_), Err(_)) => {}
                    (x, y) => panic!("{p} {fa} x {fb} -> {acc}: {x:?} against {y:?}"),
                }
            }
        }
    }
}

/// The rules the table must encode (docs/numerics.md, "GPUs and instructions"), written out
/// here rather than read from the table.
#[test]
fn hopper_blackwell_and_older_rules() {
    let get = |g, i| GpuRule::resolve(g, i).map(|r| (r.instr, r.preset));
    for g in [Gpu::H100, Gpu::H200] {
        assert_eq!(
            get(g, None),
            Ok((Instr::Wgmma, Preset::Hopper)),
            "{g} default"
        );
        assert_eq!(
            get(g, Some(Instr::Wgmma)),
            Ok((Instr::Wgmma, Preset::Hopper))
        );
        assert_eq!(
            get(g, Some(Instr::MmaSync)),
            Ok((Instr::MmaSync, Preset::H200))
        );
        assert_eq!(get(g, Some(Instr::Wmma)), Ok((Instr::Wmma, Preset::H200)));
    }
    assert_eq!(
        get(Gpu::B200, None),
        Ok((Instr::MmaSync, Preset::Blackwell))
    );
    assert_eq!(
        get(Gpu::B200, Some(Instr::MmaSync)),
        Ok((Instr::MmaSync, Preset::Blackwell))
    );
    // Consumer Blackwell (sm_120): the published RTX PRO 6000 model is the B200's.
    assert_eq!(
        get(Gpu::RtxPro6000, None),
        Ok((Instr::MmaSync, Preset::Blackwell))
    );
    assert_eq!(Gpu::by_name("rtx-pro-6000"), Some(Gpu::RtxPro6000));
    for (g, p) in [
        (Gpu::V100, Preset::Volta),
        (Gpu::A100, Preset::Ampere),
        (Gpu::A2, Preset::Ampere),
        (Gpu::L40S, Preset::Ada),
    ] {
        assert_eq!(get(g, None), Ok((Instr::MmaSync, p)), "{g}");
        assert_eq!(get(g, Some(Instr::Wmma)), Ok((Instr::Wmma, p)), "{g}");
        for i in [Instr::Wgmma, Instr::Tcgen05, Instr::Mfma] {
            assert_eq!(
                get(g, Some(i)),
                Err(GpuError::NotModelled { gpu: g, instr: i }),
                "{g} {i}"
            );
        }
    }
    // tcgen05 exists on the B200 but nobody we know of has measured it: an error that says
    // so, never a guess.
    let e = GpuRule::resolve(Gpu::B200, Some(Instr::Tcgen05)).unwrap_err();
    assert!(matches!(e, GpuError::Unmeasured { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("b200 through tcgen05 is not modelled"),
        "{text}"
    );
    assert!(text.contains("no measurement"), "{text}");
    assert!(text.contains("b200 mma.sync (blackwell)"), "{text}");
    // A pair that is not modelled lists the ones that are.
    let text = GpuRule::resolve(Gpu::H100, Some(Instr::Mfma))
        .unwrap_err()
        .to_string();
    for pair in [
        "h100 wgmma (hopper)",
        "h100 mma.sync (h200)",
        "v100 mma.sync (volta)",
    ] {
        assert!(text.contains(pair), "{text}");
    }
    assert!(!text.contains("--"), "no command-line flags: {text}");
}

#[test]
fn wmma_has_no_fp8() {
    let r = GpuRule::resolve(Gpu::H100, Some(Instr::Wmma)).unwrap();
    assert_eq!(r.check_formats(E4M3, E5M2), Err(GpuError::WmmaFp8));
    assert_eq!(r.check_formats(FP16, FP16), Ok(()));
    let r = GpuRule::resolve(Gpu::H100, Some(Instr::MmaSync)).unwrap();
    assert_eq!(r.check_formats(E4M3, E4M3), Ok(()));
}

#[test]
fn names_read_back() {
    for g in Gpu::all() {
        assert_eq!(Gpu::by_name(g.name()), Some(g));
        assert_eq!(Gpu::by_name(&g.name().to_uppercase()), Some(g));
    }
    assert_eq!(Gpu::by_name("RTX-4090"), Some(Gpu::Rtx4090));
    assert_eq!(Gpu::by_name("h300"), None);
    for i in Instr::all() {
        assert_eq!(Instr::by_name(i.name()), Some(i));
    }
    assert_eq!(Instr::by_name("mma"), Some(Instr::MmaSync));
    assert_eq!(Instr::by_name("tcgen05.mma"), Some(Instr::Tcgen05));
    assert_eq!(Instr::by_name("hmma"), None);
}

/// The front door's names: a preset and a GPU together, an instruction alone, an unknown
/// GPU or instruction, and an unmodelled pair are one-line errors without command-line flags.
#[test]
fn front_door_errors() {
    let names = |preset, gpu, instr| ArithNames {
        format: "e4m3",
        format_b: None,
        acc: Some("nvidia"),
        preset,
        gpu,
        instr,
    };
    for (n, needle) in [
        (names(Some("h200"), Some("h100"), None), "not both"),
        (names(Some("h200"), None, Some("wgmma")), "goes with a GPU"),
        (names(None, None, Some("wgmma")), "needs a GPU"),
        (names(None, Some("h300"), None), "unknown GPU \"h300\""),
        (
            names(None, Some("h100"), Some("hmma")),
            "unknown instruction",
        ),
        (
            names(None, Some("a100"), Some("wgmma")),
            "a100 through wgmma is not modelled",
        ),
        (names(None, Some("b200"), Some("tcgen05")), "not modelled"),
        (names(None, Some("h100"), Some("wmma")), "wmma has no FP8"),
        (
            names(None, Some("v100"), None),
            "v100 through mma.sync: preset volta does not support",
        ),
        (names(None, None, None), "needs a preset, or a GPU"),
    ] {
        let e = n.resolve_acc(FP32).unwrap_err();
        assert!(e.contains(needle), "{needle}: {e}");
        assert!(!e.contains("--"), "no command-line flags: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    let ieee = ArithNames {
        acc: None,
        ..names(None, Some("h100"), None)
    };
    let e = ieee.resolve_acc(FP32).unwrap_err();
    assert!(e.contains("nvidia mode only") && !e.contains("--"), "{e}");
}

fn h200_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/tensor-core-measurements/H200")
        .join(name)
}

fn enc(fmt: Format, r: &[u32]) -> Vec<u64> {
    r.iter()
        .map(|&w| encode_word(fmt, w).expect("value not representable"))
        .collect()
}

/// D of `rule` over the E4M3 rows, with the rows' C or with C = 0.
fn run_e4m3(rule: GpuRule, rows: usize, zero_c: bool) -> (Vec<u32>, Vec<u32>) {
    let data = load_acc(&h200_dir("E4M3"), Some(rows), FP32).expect("H200 E4M3 rows");
    let mode = AccMode::Nvidia(rule.preset.params_for(E4M3, E4M3, FP32).unwrap());
    let ours = (0..data.a.len())
        .map(|i| {
            let c = if zero_c { 0 } else { data.c_in(i, FP32) };
            let (a, b) = (enc(E4M3, &data.a[i]), enc(E4M3, &data.b[i]));
            dot_acc(
                &mode,
                RoundingMode::NearestEven,
                FP32,
                E4M3,
                E4M3,
                &a,
                &b,
                c,
                32,
            )
            .unwrap()
            .bits
        })
        .collect();
    (ours, data.d)
}

/// Through `mma.sync` (CUDA 13.0) the H100 and the H200 give the H200's measured D on every
/// committed E4M3 row checked; the native rule (`wgmma`) does not.
#[test]
fn mma_sync_rows_reproduce_the_h200_capture() {
    for g in [Gpu::H100, Gpu::H200] {
        let rule = GpuRule::resolve(g, Some(Instr::MmaSync)).unwrap();
        let (ours, gpu) = run_e4m3(rule, 256, false);
        assert_eq!(ours, gpu, "{g} mma.sync");
        let native = GpuRule::resolve(g, None).unwrap();
        let (ours, gpu) = run_e4m3(native, 256, false);
        let same = ours.iter().zip(&gpu).filter(|(x, y)| x == y).count();
        assert!(
            same < 128,
            "{g} wgmma matches {same}/256 of the mma.sync capture"
        );
    }
}

/// Through `wgmma` (cuBLAS's FP8 GEMM on the same H200, C = 0) the default rule of the H100
/// and H200 gives the GPU's FP32 D on every E4M3 row of the cuBLAS capture; the `mma.sync`
/// rule does not.
#[test]
fn wgmma_rows_reproduce_the_cublas_capture() {
    let text = std::fs::read_to_string(h200_dir("cublas").join("scaled_mm_fp8.txt"))
        .expect("the cuBLAS rows");
    let mut lines = text.lines().skip(1);
    let mut want = None;
    while let (Some(head), Some(words)) = (lines.next(), lines.next()) {
        if head == "E4M3 fast=False out=float32" {
            let w: Vec<u32> = words
                .split_whitespace()
                .map(|w| u32::from_str_radix(w, 16).expect("hex"))
                .collect();
            want = Some(w);
        }
    }
    let want = want.expect("E4M3 FP32 rows");
    let rows = 256.min(want.len());
    for g in [Gpu::H100, Gpu::H200] {
        let (ours, _) = run_e4m3(GpuRule::resolve(g, None).unwrap(), rows, true);
        assert_eq!(ours, want[..rows], "{g} wgmma");
        let mma = GpuRule::resolve(g, Some(Instr::MmaSync)).unwrap();
        let (ours, _) = run_e4m3(mma, rows, true);
        let same = ours.iter().zip(&want).filter(|(x, y)| x == y).count();
        assert!(
            same < rows / 2,
            "{g} mma.sync matches {same}/{rows} of cuBLAS"
        );
    }
}
