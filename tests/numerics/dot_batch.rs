//! Batch dot products (`numerics::dot::dot_batch` and `tcrtl dot --a A.npy --b B.npy --c
//! C.npy --out D.npy`):
//! - every row equals the one-row `dot_rounded` (library) and the single-step command
//!   `tcrtl dot --a .. --b .. --c ..` (binary), for random modes, presets, roundings and formats;
//! - the same bits and flag counts with 1, 2 and 3 threads;
//! - the vendored real-GPU measurement rows, computed as one batch, equal the GPU's D;
//! - malformed batches are one-line errors with exit code 2.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};
use tensorcore_rtl::numerics::dot::{
    dot_acc, dot_batch, dot_batch_acc, dot_rounded, AccMode, Preset,
};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::verify::measurements::{encode_word, load};

const FORMATS: [(Format, Format); 5] = [
    (FP16, FP16),
    (BF16, BF16),
    (E4M3, E4M3),
    (E5M2, E5M2),
    (E4M3, E5M2),
];

const ROUNDINGS: [RoundingMode; 4] = [
    RoundingMode::NearestEven,
    RoundingMode::TowardZero,
    RoundingMode::Down,
    RoundingMode::Up,
];

/// A mode for the pair: ieee, fused, exact, or the nvidia preset `index` if it takes them.
fn mode_for(choice: usize, fa: Format, fb: Format) -> (AccMode, Option<Preset>) {
    match choice {
        0 => (AccMode::Ieee, None),
        1 => (AccMode::Fused, None),
        2 => (AccMode::Exact, None),
        n => {
            let p = Preset::ALL[(n - 3) % Preset::ALL.len()];
            match p.params(fa, fb) {
                Ok(params) => (AccMode::Nvidia(params), Some(p)),
                Err(_) => (AccMode::Fused, None),
            }
        }
    }
}

/// A random batch: rows x k patterns of each format (any pattern: specials included), C bits.
fn batch(
    seed: u64,
    rows: usize,
    k: usize,
    fa: Format,
    fb: Format,
) -> (Vec<u64>, Vec<u64>, Vec<u32>) {
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    // Exponents near the bias most of the time, so that rows carry, cancel and round.
    let value = |f: Format, r: u64| {
        if r.is_multiple_of(4) {
            r >> 8 & f.mask()
        } else {
            let e = (f.bias as u64 + (r >> 8) % 5).saturating_sub(2);
            ((r >> 20) & 1) << (f.width() - 1) | e << f.frac_bits | ((r >> 24) & f.frac_mask())
        }
    };
    let a = (0..rows * k).map(|_| value(fa, next())).collect();
    let b = (0..rows * k).map(|_| value(fb, next())).collect();
    let c = (0..rows)
        .map(|_| {
            let r = next();
            if r.is_multiple_of(4) {
                r as u32
            } else {
                0x3F00_0000 | (r as u32 & 0x80FF_FFFF)
            }
        })
        .collect();
    (a, b, c)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn batch_rows_equal_single_dots_for_any_thread_count(
        seed in any::<u64>(),
        fmt in 0..FORMATS.len(),
        choice in 0usize..7,
        rounding in 0..ROUNDINGS.len(),
        rows in 0usize..300,
        k in 0usize..70,
        width in 1usize..=32,
    ) {
        let (fa, fb) = FORMATS[fmt];
        let (mode, _) = mode_for(choice, fa, fb);
        let rm = if matches!(mode, AccMode::Nvidia(_)) {
            RoundingMode::NearestEven
        } else {
            ROUNDINGS[rounding]
        };
        let (a, b, c) = batch(seed, rows, k, fa, fb);
        let mut runs = Vec::new();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            runs.push(pool.install(|| dot_batch(&mode, rm, fa, fb, &a, &b, &c, k, width)).unwrap());
        }
        prop_assert_eq!(&runs[0], &runs[1]);
        prop_assert_eq!(&runs[0], &runs[2]);
        let mut inexact = 0;
        for r in 0..rows {
            let one = dot_rounded(&mode, rm, fa, fb, &a[r * k..(r + 1) * k], &b[r * k..(r + 1) * k], c[r], width).unwrap();
            prop_assert_eq!(runs[0].d[r], one.bits, "row {}", r);
            inexact += one.flags.inexact as u64;
        }
        prop_assert_eq!(runs[0].flags.inexact, inexact);
    }
}

/// FP16 accumulation: every row of `dot_batch_acc` into FP16 equals `dot_acc` into FP16, for
/// every mode (nvidia: each preset with an FP16-output rule for the pair), any thread count.
#[test]
fn fp16_batch_rows_equal_dot_acc() {
    let mut runs = 0;
    for (fi, &(fa, fb)) in FORMATS.iter().enumerate() {
        let (rows, k) = (300, 37);
        let (a, b, c32) = batch(0xF16 + fi as u64, rows, k, fa, fb);
        // C as FP16 patterns (any pattern, specials included).
        let c: Vec<u32> = c32.iter().map(|&w| w >> 16).collect();
        let mut modes = vec![AccMode::Ieee, AccMode::Fused, AccMode::Exact];
        for p in Preset::ALL {
            if let Ok(params) = p.params_for(fa, fb, FP16) {
                modes.push(AccMode::Nvidia(params));
            }
        }
        for mode in modes {
            let width = 8;
            let mut out = Vec::new();
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                out.push(
                    pool.install(|| {
                        dot_batch_acc(
                            &mode,
                            RoundingMode::NearestEven,
                            FP16,
                            fa,
                            fb,
                            &a,
                            &b,
                            &c,
                            k,
                            width,
                        )
                    })
                    .unwrap(),
                );
            }
            assert_eq!(out[0], out[1]);
            let mut inexact = 0;
            for r in 0..rows {
                let one = dot_acc(
                    &mode,
                    RoundingMode::NearestEven,
                    FP16,
                    fa,
                    fb,
                    &a[r * k..(r + 1) * k],
                    &b[r * k..(r + 1) * k],
                    c[r],
                    width,
                )
                .unwrap();
                assert_eq!(out[0].d[r], one.bits, "{fa} x {fb} {} row {r}", mode.name());
                assert!(out[0].d[r] <= 0xFFFF);
                inexact += one.flags.inexact as u64;
            }
            assert_eq!(out[0].flags.inexact, inexact);
            runs += 1;
        }
    }
    assert!(runs >= 20, "{runs} runs");
}

#[test]
fn many_tasks_match_row_by_row() {
    // More rows than one rayon task takes, so the batch is split; hopper FP16, K = 16.
    let mode = AccMode::Nvidia(Preset::Hopper.params(FP16, FP16).unwrap());
    let (rows, k) = (20_000, 16);
    let (a, b, c) = batch(99, rows, k, FP16, FP16);
    let r = dot_batch(
        &mode,
        RoundingMode::NearestEven,
        FP16,
        FP16,
        &a,
        &b,
        &c,
        k,
        16,
    )
    .unwrap();
    for i in (0..rows).step_by(7) {
        let one = dot_rounded(
            &mode,
            RoundingMode::NearestEven,
            FP16,
            FP16,
            &a[i * k..(i + 1) * k],
            &b[i * k..(i + 1) * k],
            c[i],
            16,
        )
        .unwrap();
        assert_eq!(r.d[i], one.bits, "row {i}");
    }
}

/// A whole measurement set as one batch: every row equals the GPU's D (`zero_c`: the set was
/// measured with C = 0, as the H100 FP8 sets were).
fn measured(name: &str, fmt: Format, preset: Preset, zero_c: bool) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/tensor-core-measurements")
        .join(name);
    let set = load(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    let enc = |rows: &[Vec<u32>]| -> Vec<u64> {
        rows.iter()
            .flatten()
            .map(|&w| encode_word(fmt, w).expect("representable"))
            .collect()
    };
    let (a, b) = (enc(&set.a), enc(&set.b));
    let c: Vec<u32> = if zero_c {
        vec![0; set.c.len()]
    } else {
        set.c.clone()
    };
    let mode = AccMode::Nvidia(preset.params(fmt, fmt).unwrap());
    let r = dot_batch(
        &mode,
        RoundingMode::NearestEven,
        fmt,
        fmt,
        &a,
        &b,
        &c,
        set.k,
        set.k.min(32),
    )
    .unwrap();
    let bad = r.d.iter().zip(&set.d).filter(|(x, y)| x != y).count();
    assert_eq!(bad, 0, "{name}: {bad} of {} rows differ", set.d.len());
    assert!(set.d.len() >= 300, "{name}: {} rows", set.d.len());
}

#[test]
fn every_vendored_measurement_set_as_one_batch() {
    for (name, fmt, preset, zero_c) in [
        ("V100/fp16", FP16, Preset::Volta, false),
        ("A100/fp16", FP16, Preset::Ampere, false),
        ("A100/bf16", BF16, Preset::Ampere, false),
        ("H100/fp16", FP16, Preset::Hopper, false),
        ("H100/bf16", BF16, Preset::Hopper, false),
        ("H100/E4M3", E4M3, Preset::Hopper, true),
        ("H100/E5M2", E5M2, Preset::Hopper, true),
        ("B200/fp16", FP16, Preset::Blackwell, false),
        ("B200/bf16", BF16, Preset::Blackwell, false),
        ("B200/E4M3", E4M3, Preset::Blackwell, false),
        ("B200/E5M2", E5M2, Preset::Blackwell, false),
    ] {
        measured(name, fmt, preset, zero_c);
    }
}

// ---- the command line ----

fn tcrtl(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(args)
        .output()
        .expect("run tcrtl")
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcrtl-dot-batch-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_batch(dir: &Path, fmt: Format, rows: usize, k: usize, a: &[u64], b: &[u64], c: &[u32]) {
    let dt = if fmt.width() == 8 {
        Dtype::U8
    } else {
        Dtype::U16
    };
    write_npy(&dir.join("a.npy"), &[rows, k], dt, a).unwrap();
    write_npy(&dir.join("b.npy"), &[rows, k], dt, b).unwrap();
    let cw: Vec<u64> = c.iter().map(|&x| x as u64).collect();
    write_npy(&dir.join("c.npy"), &[rows], Dtype::U32, &cw).unwrap();
}

fn arith_args(fmt: Format, choice: (AccMode, Option<Preset>), rm: RoundingMode) -> Vec<String> {
    let mut v = vec!["--format".to_string(), fmt.name.to_string()];
    v.extend(["--acc".to_string(), choice.0.name().to_string()]);
    if let Some(p) = choice.1 {
        v.extend(["--preset".to_string(), p.name().to_string()]);
    }
    v.extend(["--rounding".to_string(), rm.name().to_string()]);
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn command_batch_rows_equal_single_step_commands(
        seed in any::<u64>(),
        fmt in 0usize..4,
        choice in 0usize..7,
        rounding in 0..ROUNDINGS.len(),
        k in 1usize..40,
    ) {
        let (fa, _) = FORMATS[fmt];
        let m = mode_for(choice, fa, fa);
        let rm = if m.1.is_some() { RoundingMode::NearestEven } else { ROUNDINGS[rounding] };
        let rows = 5;
        let (a, b, c) = batch(seed, rows, k, fa, fa);
        let dir = tmp(&format!("{seed:x}"));
        write_batch(&dir, fa, rows, k, &a, &b, &c);
        let mut args = vec!["dot".to_string()];
        args.extend(arith_args(fa, m, rm));
        for (flag, file) in [("--a", "a.npy"), ("--b", "b.npy"), ("--c", "c.npy"), ("--out", "d.npy")] {
            args.extend([flag.to_string(), dir.join(file).display().to_string()]);
        }
        args.push("--json".into());
        let o = tcrtl(&args);
        prop_assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        prop_assert_eq!(summary["rows"].as_u64(), Some(rows as u64));
        let d = read_npy(&dir.join("d.npy")).unwrap();
        prop_assert_eq!(d.dtype, Dtype::U32);
        prop_assert_eq!(d.shape.clone(), vec![rows]);
        let mut inexact = 0;
        for r in 0..rows {
            let hex = |v: &[u64]| v.iter().map(|x| format!("{x:#x}")).collect::<Vec<_>>().join(",");
            let mut one = vec!["dot".to_string()];
            one.extend(arith_args(fa, m, rm));
            one.extend([
                "--a".to_string(), hex(&a[r * k..(r + 1) * k]),
                "--b".to_string(), hex(&b[r * k..(r + 1) * k]),
                "--c".to_string(), format!("{:#010x}", c[r]),
                "--json".to_string(),
            ]);
            let o = tcrtl(&one);
            prop_assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            prop_assert_eq!(v["bits"].as_str().unwrap(), format!("0x{:08x}", d.word(r)), "row {}", r);
            inexact += v["flags"].as_array().unwrap().iter().any(|f| f == "inexact") as u64;
        }
        prop_assert_eq!(summary["flags"]["inexact"].as_u64(), Some(inexact));
        std::fs::remove_dir_all(&dir).ok();
    }
}

fn assert_error(args: &[String], needle: &str) {
    let o = tcrtl(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
}

#[test]
fn malformed_batches_are_one_line_errors() {
    let dir = tmp("errors");
    let (a, b, c) = batch(1, 3, 4, FP16, FP16);
    write_batch(&dir, FP16, 3, 4, &a, &b, &c);
    let p = |f: &str| dir.join(f).display().to_string();
    let base = |a: &str, b: &str, c: &str| -> Vec<String> {
        ["dot", "--a", a, "--b", b, "--c", c]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    // FP8 needs uint8 patterns.
    let mut e4 = base(&p("a.npy"), &p("b.npy"), &p("c.npy"));
    e4.extend(["--format".into(), "e4m3".into()]);
    assert_error(&e4, "uint8");
    // C with the wrong number of rows.
    write_npy(&dir.join("c2.npy"), &[2], Dtype::U32, &[0, 0]).unwrap();
    assert_error(&base(&p("a.npy"), &p("b.npy"), &p("c2.npy")), "3 rows");
    // B of another shape.
    write_npy(&dir.join("b2.npy"), &[3, 5], Dtype::U16, &[0; 15]).unwrap();
    assert_error(&base(&p("a.npy"), &p("b2.npy"), &p("c.npy")), "must match");
    // A batch needs all three files; --out needs a batch.
    assert_error(&base(&p("a.npy"), &p("b.npy"), "0"), "--c all naming .npy");
    let mut out = base("1", "1", "0");
    out.extend(["--out".into(), p("d.npy")]);
    assert_error(&out, "batch mode only");
    assert_error(
        &base(&p("missing.npy"), &p("b.npy"), &p("c.npy")),
        "missing.npy",
    );
    std::fs::remove_dir_all(&dir).ok();
}
