//! The Verilog reference (`testbenches/verilog/`) against the model, under Icarus Verilog.
//!
//! `tcrtl gemm --memh DIR` writes the model's golden `$readmemh` images; the Verilog testbench
//! `tb_mesh` loads A, B and C, runs the GEMM tile by tile on its own FP16 PE mesh (an integer
//! datapath written from IEEE 754, independent of the Rust numerics) and compares every element
//! of D with the model's `d.hex`, bit for bit. Cases: several seeds and ragged shapes (M, N, K
//! not multiples of 4), operands full of specials (NaN, Inf, signed zeros, FP16 and FP32
//! subnormals, the largest values), a corrupted golden image (the testbench must see the flipped
//! bit) and the student skeleton (it must fail every element, also through `tcrtl grade` on
//! the D and the step vectors the testbench writes with `+OUT`, `+STEPS`).
//!
//! Needs `iverilog` and `vvp` (`.ci/run` installs them). When they are missing the test fails
//! if `CI=true` and otherwise skips with a printed reason.

use crate::verilog_util::{iverilog_ready, scratch, verilog};
use std::path::{Path, PathBuf};
use std::process::Command;
use tensorcore_rtl::io::npy::{write_npy, Dtype};

/// Compiles the testbench with the given PE sources into `dir/NAME.vvp`.
fn compile(dir: &Path, name: &str, pe_sources: &[&str]) -> PathBuf {
    let out = dir.join(format!("{name}.vvp"));
    // From the Verilog folder: the testbench includes "tb/golden_io.vh" relative to it.
    let mut cmd = Command::new("iverilog");
    cmd.current_dir(verilog(""))
        .args(["-g2005", "-Wall", "-o"])
        .arg(&out);
    for s in pe_sources {
        cmd.arg(verilog(s));
    }
    cmd.arg(verilog("rtl/mesh4x4.v"))
        .arg(verilog("tb/tb_mesh.v"));
    let o = cmd.output().expect("run iverilog");
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "iverilog: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// The reference PE: the two datapath units and the PE.
const REFERENCE_PE: [&str; 3] = ["rtl/fp16_mul.v", "rtl/fp32_add.v", "rtl/pe.v"];

/// Runs the testbench on the images in `dir`; returns (passed, failed, mismatch lines).
fn simulate(vvp: &Path, dir: &Path, m: usize, n: usize, k: usize) -> (usize, usize, Vec<String>) {
    let o = Command::new("vvp")
        .arg("-n")
        .arg(vvp)
        .arg(format!("+M={m}"))
        .arg(format!("+N={n}"))
        .arg(format!("+K={k}"))
        .arg(format!("+DIR={}", dir.display()))
        .output()
        .expect("run vvp");
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "vvp: {text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!text.contains("WARNING"), "vvp warned: {text}");
    let result = text
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT line in: {text}"));
    let nums: Vec<usize> = result
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("count"))
        .collect();
    let mism = text
        .lines()
        .filter(|l| l.starts_with("MISMATCH"))
        .map(str::to_string)
        .collect();
    (nums[0], nums[1], mism)
}

/// Runs `tcrtl gemm` with `args` and `--memh dir`; returns its stdout.
fn golden(dir: &Path, args: &[String]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .arg("gemm")
        .args(args)
        .arg("--memh")
        .arg(dir)
        .output()
        .expect("run tcrtl");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn random_args(m: usize, n: usize, k: usize, seed: u64) -> Vec<String> {
    [
        "--m",
        &m.to_string(),
        "--n",
        &n.to_string(),
        "--k",
        &k.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(["--seed".to_string(), seed.to_string()])
    .collect()
}

#[test]
fn verilog_mesh_matches_the_model_on_seeds_and_ragged_shapes() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("verilog", "random");
    let vvp = compile(&dir, "reference", &REFERENCE_PE);
    let shapes = [
        (4, 4, 4),
        (1, 1, 1),
        (5, 7, 9),
        (13, 3, 17),
        (6, 10, 33),
        (9, 9, 2),
        (3, 14, 20),
        (8, 8, 24),
    ];
    let mut total = 0;
    for (i, &(m, n, k)) in shapes.iter().enumerate() {
        for seed in [1 + i as u64, 100 + i as u64] {
            let out = golden(&dir, &random_args(m, n, k, seed));
            // The model's D itself equals the independent reference (ieee_dot).
            assert!(
                out.contains("check against ieee_dot: 0 mismatches"),
                "{out}"
            );
            let (passed, failed, mism) = simulate(&vvp, &dir, m, n, k);
            assert_eq!(
                (passed, failed),
                (m * n, 0),
                "{m} x {n} x {k} seed {seed}: {mism:?}"
            );
            total += passed;
        }
    }
    assert_eq!(
        total,
        2 * shapes.iter().map(|&(m, n, _)| m * n).sum::<usize>()
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// FP16 encodings that exercise every special path of the PE.
const SPECIAL_FP16: [u16; 16] = [
    0x0000, 0x8000, // signed zeros
    0x0001, 0x83FF, 0x0200, // subnormals
    0x0400, 0x7BFF, 0xFBFF, // smallest normal, +-65504
    0x3C00, 0xBC00, 0x3555, // 1, -1, ~1/3
    0x7C00, 0xFC00, // +-Inf
    0x7E00, 0xFD01, // quiet NaN, signalling NaN
    0x1C00, // 2^-8
];

/// FP32 encodings for C: zeros, subnormals, extremes, Inf, NaN.
const SPECIAL_FP32: [u32; 10] = [
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x807F_FFFF,
    0x7F7F_FFFF,
    0x3F80_0000,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0x0080_0000,
];

/// SplitMix64, for the specials problems.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[test]
fn verilog_mesh_matches_the_model_on_specials() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("verilog", "specials");
    let vvp = compile(&dir, "reference", &REFERENCE_PE);
    // `rate`: one element in `rate` is a special (NaN and Inf included only when `inf_nan`).
    for (seed, rate, inf_nan) in [
        (1u64, 2u64, false),
        (2, 3, false),
        (3, 12, true),
        (4, 24, true),
    ] {
        let (m, n, k) = (7, 6, 9);
        let mut rng = Rng(seed);
        let fp16 = |rng: &mut Rng| -> u64 {
            let r = rng.next();
            if r.is_multiple_of(rate) {
                let pick = SPECIAL_FP16[((r >> 8) % 16) as usize];
                if !inf_nan && (pick & 0x7C00) == 0x7C00 {
                    0x3800
                } else {
                    u64::from(pick)
                }
            } else {
                // A normal value with exponent -6..=6, either sign.
                let e = 9 + (r >> 8) % 13;
                ((r >> 4) & 1) << 15 | e << 10 | (r >> 20) & 0x3FF
            }
        };
        let a: Vec<u64> = (0..m * k).map(|_| fp16(&mut rng)).collect();
        let b: Vec<u64> = (0..k * n).map(|_| fp16(&mut rng)).collect();
        let c: Vec<u64> = (0..m * n)
            .map(|_| {
                let r = rng.next();
                let pick = SPECIAL_FP32[(r % 10) as usize];
                if !inf_nan && (pick & 0x7F80_0000) == 0x7F80_0000 {
                    0x4000_0000
                } else {
                    u64::from(pick)
                }
            })
            .collect();
        run_npy(&dir, &vvp, (m, n, k), &a, &b, &c);
        if inf_nan {
            // The case really reaches the special results.
            let d = std::fs::read_to_string(dir.join("d.hex")).expect("d.hex");
            assert!(d.contains("7fc00000"), "seed {seed}: no NaN in D");
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// Writes A, B (FP16 bits) and C (FP32 bits) as `.npy`, runs `tcrtl gemm --check --memh` on
/// them and the Verilog testbench on the images; asserts the model equals its reference and
/// the Verilog equals the model; returns D from `d.hex`.
fn run_npy(
    dir: &Path,
    vvp: &Path,
    (m, n, k): (usize, usize, usize),
    a: &[u64],
    b: &[u64],
    c: &[u64],
) -> Vec<u32> {
    let (pa, pb, pc) = (dir.join("a.npy"), dir.join("b.npy"), dir.join("c.npy"));
    write_npy(&pa, &[m, k], Dtype::U16, a).expect("a.npy");
    write_npy(&pb, &[k, n], Dtype::U16, b).expect("b.npy");
    write_npy(&pc, &[m, n], Dtype::U32, c).expect("c.npy");
    let args: Vec<String> = ["--a", &pa.display().to_string(), "--b"]
        .iter()
        .map(|s| s.to_string())
        .chain([
            pb.display().to_string(),
            "--c".into(),
            pc.display().to_string(),
        ])
        .chain(["--check".to_string()])
        .collect();
    let out = golden(dir, &args);
    assert!(
        out.contains("check against ieee_dot: 0 mismatches"),
        "{out}"
    );
    let (passed, failed, mism) = simulate(vvp, dir, m, n, k);
    assert_eq!((passed, failed), (m * n, 0), "{mism:?}");
    std::fs::read_to_string(dir.join("d.hex"))
        .expect("d.hex")
        .lines()
        .filter(|l| !l.starts_with("//"))
        .map(|l| u32::from_str_radix(l, 16).expect("word"))
        .collect()
}

#[test]
fn verilog_mesh_signed_zeros_and_rounding_facts() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("verilog", "facts");
    let vvp = compile(&dir, "reference", &REFERENCE_PE);
    // Row 0 of A is -0, row 1 +0; column 0 of B is +0, column 1 -0; C is -0 everywhere. IEEE:
    // a sum of -0 products with C = -0 is -0; with any +0 product it is +0.
    let k = 3;
    let a: Vec<u64> = [0x8000u64; 3].into_iter().chain([0x0000; 3]).collect();
    let b: Vec<u64> = (0..k).flat_map(|_| [0x0000u64, 0x8000]).collect();
    let d = run_npy(&dir, &vvp, (2, 2, k), &a, &b, &[0x8000_0000; 4]);
    assert_eq!(d, [0x8000_0000, 0x0000_0000, 0x0000_0000, 0x8000_0000]);
    // Ties to even: C = 1 + 2^-23 (odd last bit) plus 2^-24 rounds up to 1 + 2^-22; C = 1 plus
    // 2^-24 stays 1. 2^-24 is the product 2^-12 x 2^-12 (FP16 0x0C00).
    let d = run_npy(
        &dir,
        &vvp,
        (2, 1, 1),
        &[0x0C00, 0x0C00],
        &[0x0C00],
        &[0x3F80_0001, 0x3F80_0000],
    );
    assert_eq!(d, [0x3F80_0002, 0x3F80_0000]);
    // A = (+Inf, -Inf, 0), B = (0, 1): Inf x 0 is the canonical NaN, +Inf + -Inf is NaN,
    // -Inf + -Inf is -Inf; 0 x B + 2^-149 (the smallest FP32 subnormal) keeps C.
    let d = run_npy(
        &dir,
        &vvp,
        (3, 2, 1),
        &[0x7C00, 0xFC00, 0x0000],
        &[0x0000, 0x3C00],
        &[0x3F80_0000, 0xFF80_0000, 0x3F80_0000, 0xFF80_0000, 1, 1],
    );
    assert_eq!(
        d,
        [
            0x7FC0_0000,
            0x7FC0_0000,
            0x7FC0_0000,
            0xFF80_0000,
            0x0000_0001,
            0x0000_0001
        ]
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn verilog_testbench_sees_a_flipped_bit_and_the_skeleton_fails() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("verilog", "faults");
    let vvp = compile(&dir, "reference", &REFERENCE_PE);
    let (m, n, k) = (5, 6, 7);
    golden(&dir, &random_args(m, n, k, 7));
    let d_path = dir.join("d.hex");
    let text = std::fs::read_to_string(&d_path).expect("d.hex");
    // Flip bit 0 of element (2, 3) and bit 31 of element (4, 5) of the golden D.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let words = lines
        .iter()
        .position(|l| !l.starts_with("//"))
        .expect("words");
    for (index, bit) in [(2 * n + 3, 0), (4 * n + 5, 31)] {
        let w = u32::from_str_radix(&lines[words + index], 16).expect("word") ^ (1 << bit);
        lines[words + index] = format!("{w:08x}");
    }
    std::fs::write(&d_path, lines.join("\n") + "\n").expect("write d.hex");
    let (passed, failed, mism) = simulate(&vvp, &dir, m, n, k);
    assert_eq!((passed, failed), (m * n - 2, 2));
    assert!(mism[0].starts_with("MISMATCH d[2][3]"), "{mism:?}");
    assert!(mism[1].starts_with("MISMATCH d[4][5]"), "{mism:?}");

    // The skeleton (datapath left out) compiles, runs and fails every element.
    golden(&dir, &random_args(m, n, k, 7));
    let skel = compile(&dir, "skeleton", &["skeleton/pe.v"]);
    let (passed, failed, _) = simulate(&skel, &dir, m, n, k);
    assert_eq!((passed, failed), (0, m * n));

    // The grading loop: the testbench writes the design's D (+OUT) and the accumulator after
    // every step (+STEPS, sampled when acc_vld is high, or by the latency +LAT: edges from the
    // one that takes the operands to the one after which acc shows the sum), and `tcrtl grade`
    // compares both with the golden images: the reference passes (by acc_vld, and with its
    // latency, 2), the skeleton fails every element of D, and the reference sampled with the
    // wrong latency fails the steps but not D.
    let steps = (m * n * k) as u64;
    for (vvp, lat, code, d_mismatches, steps_ok) in [
        (&vvp, None, 0, 0, true),
        (&vvp, Some(2), 0, 0, true),
        (&skel, None, 1, m * n, false),
        (&vvp, Some(1), 1, 0, false),
    ] {
        let student = dir.join("student");
        let _ = std::fs::remove_dir_all(&student);
        std::fs::create_dir_all(&student).expect("student folder");
        let o = Command::new("vvp")
            .arg("-n")
            .arg(vvp)
            .args([format!("+M={m}"), format!("+N={n}"), format!("+K={k}")])
            .arg(format!("+DIR={}", dir.display()))
            .arg(format!("+OUT={}", student.display()))
            .arg("+STEPS")
            .args(lat.map(|l| format!("+LAT={l}")))
            .output()
            .expect("run vvp");
        assert!(o.status.success());
        let o = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
            .args(["grade", "--json", "--golden"])
            .arg(&dir)
            .arg("--student")
            .arg(&student)
            .output()
            .expect("run tcrtl grade");
        assert_eq!(
            o.status.code(),
            Some(code),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(v["compared"].as_u64(), Some((m * n) as u64));
        assert_eq!(v["mismatches"].as_u64(), Some(d_mismatches as u64));
        assert_eq!(v["steps"]["compared"].as_u64(), Some(steps));
        let step_mismatches = v["steps"]["mismatches"].as_u64().unwrap_or(u64::MAX);
        assert_eq!(
            step_mismatches == 0,
            steps_ok,
            "lat {lat:?}: {step_mismatches}"
        );
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}
