//! `tcrtl dot --rounding`, run as the built binary: every direction against Berkeley
//! SoftFloat's FMA chain (`f32_mulAdd`, results and flags) on FP16 vectors, and the refusals
//! (nvidia with a directed rounding, round-to-odd, an unknown name).

use crate::common::{softfloat_op, softfloat_round, Rng};
use softfloat_wrapper::{Float as _, F32};
use std::process::{Command, Output};
use tensorcore_rtl::numerics::RoundingMode;

fn tcrtl(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(args)
        .output()
        .expect("run tcrtl")
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// FP16 pattern to FP32 value (finite patterns only here).
fn fp16_to_f32(bits: u16) -> u32 {
    half::f16::from_bits(bits).to_f32().to_bits()
}

#[test]
fn every_direction_matches_softfloat_fma_chains() {
    let mut rng = Rng(7);
    for rm in [
        RoundingMode::NearestEven,
        RoundingMode::TowardZero,
        RoundingMode::Down,
        RoundingMode::Up,
    ] {
        for _ in 0..6 {
            let k = 1 + rng.below(6) as usize;
            // Finite FP16 values with exponents near the bias (products carry and cancel).
            let mut finite = || {
                let e = 13 + rng.below(5) as u16;
                ((rng.coin() as u16) << 15) | (e << 10) | (rng.next_u64() as u16 & 0x3FF)
            };
            let a: Vec<u16> = (0..k).map(|_| finite()).collect();
            let b: Vec<u16> = (0..k).map(|_| finite()).collect();
            let c = 0x3F00_0000 | (rng.next_u64() as u32 & 0x80FF_FFFF);
            let (sf, flags) = softfloat_op(rm, || {
                let mut acc = F32::from_bits(c);
                for (&x, &y) in a.iter().zip(&b) {
                    let (x, y) = (
                        F32::from_bits(fp16_to_f32(x)),
                        F32::from_bits(fp16_to_f32(y)),
                    );
                    acc = x.fused_mul_add(y, acc, softfloat_round(rm));
                }
                acc.to_bits() as u64
            });
            let hex = |v: &[u16]| {
                v.iter()
                    .map(|x| format!("{x:#06x}"))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let args = vec![
                "dot".to_string(),
                "--rounding".into(),
                rm.name().into(),
                "--width".into(),
                "1".into(),
                "--a".into(),
                hex(&a),
                "--b".into(),
                hex(&b),
                "--c".into(),
                format!("{c:#010x}"),
                "--json".into(),
            ];
            let o = tcrtl(&args);
            assert!(o.status.success(), "{args:?}");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
            assert_eq!(v["bits"], format!("0x{sf:08x}"), "{args:?}");
            assert_eq!(v["rounding"], rm.name());
            let names: Vec<&str> = v["flags"]
                .as_array()
                .expect("flags")
                .iter()
                .filter_map(|f| f.as_str())
                .collect();
            assert_eq!(names, flags.names(), "{args:?}");
        }
    }
}

/// One line `error: ...` with exit code 2.
fn assert_error(args: &[&str], needle: &str) {
    let o = tcrtl(&strings(args));
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
}

#[test]
fn refused_roundings_are_one_line_errors() {
    let nv = [
        "dot", "--acc", "nvidia", "--preset", "hopper", "--a", "1", "--b", "1",
    ];
    for r in ["rtz", "rdn", "rup"] {
        let mut args = nv.to_vec();
        args.extend(["--rounding", r]);
        assert_error(&args, "nvidia keeps the GPU's own rounding");
    }
    let mut args = nv.to_vec();
    args.extend(["--rounding", "rne"]);
    assert!(tcrtl(&strings(&args)).status.success());
    assert_error(
        &["dot", "--a", "1", "--b", "1", "--rounding", "rto"],
        "unknown rounding",
    );
    assert_error(
        &["dot", "--a", "1", "--b", "1", "--rounding", "up"],
        "unknown rounding",
    );
}
