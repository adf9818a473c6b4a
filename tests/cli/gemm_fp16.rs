//! `tcrtl gemm --out-format fp16` off the ideal dense path, through the built binary: with
//! `--memory tma` (D equals the ideal path's and the library's functional model, 2 bytes an
//! element stored), with `--sparse` (D equals the sparse functional model) and with `--memh`
//! (16-bit C and D words, the accumulator format named in the headers and the manifest).

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use crate::common::{softfloat_op, softfloat_round};
use softfloat_wrapper::{Float as _, F16};
use tensorcore_rtl::gemm::{run_functional, CoreConfig, Gemm};
use tensorcore_rtl::io::npy::{read_npy, Dtype};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, E4M3, FP16};
use tensorcore_rtl::numerics::RoundingMode;
use tensorcore_rtl::sparse::{run_functional_sparse, SparseGemm};

/// The three modes tried: CLI flags and the configuration they stand for.
fn modes() -> Vec<(Vec<&'static str>, CoreConfig)> {
    let c = |fmt: Format, mode: AccMode, width: usize| {
        CoreConfig::new(fmt, fmt, mode, width).with_acc(FP16)
    };
    let hopper = Preset::Hopper
        .params_for(E4M3, E4M3, FP16)
        .expect("hopper e4m3 fp16");
    vec![
        (vec!["--acc", "ieee"], c(FP16, AccMode::Ieee, 1)),
        (
            vec!["--acc", "fused", "--width", "4"],
            c(FP16, AccMode::Fused, 4),
        ),
        (
            vec![
                "--acc", "nvidia", "--preset", "hopper", "--format", "e4m3", "--width", "8",
            ],
            c(E4M3, AccMode::Nvidia(hopper), 8),
        ),
    ]
}

/// Runs `tcrtl gemm ARGS --json`, expecting success; returns the JSON summary.
fn gemm_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["gemm"];
    all.extend_from_slice(args);
    all.push("--json");
    let o = tcrtl(&all);
    assert!(o.status.success(), "{all:?}: {}", text(&o.stderr));
    serde_json::from_str(&text(&o.stdout)).expect("json")
}

fn d_words(path: &str) -> Vec<u32> {
    let arr = read_npy(std::path::Path::new(path)).expect("D .npy");
    assert_eq!(arr.dtype, Dtype::U16, "FP16 D is uint16");
    arr.words().iter().map(|&w| w as u32).collect()
}

#[test]
fn tma_fp16_d_equals_the_ideal_path_and_the_functional_model() {
    let dir = scratch("gemm-fp16", "tma");
    let (m, n, k) = (6usize, 13usize, 40usize);
    let dims = ["--m", "6", "--n", "13", "--k", "40", "--out-format", "fp16"];
    for (i, (flags, cfg)) in modes().into_iter().enumerate() {
        let (ideal, tma) = (p(&dir, &format!("i{i}.npy")), p(&dir, &format!("t{i}.npy")));
        let mut a: Vec<&str> = dims.to_vec();
        a.extend(&flags);
        let mut b = a.clone();
        a.extend(["--out", &ideal]);
        b.extend(["--memory", "tma", "--out", &tma]);
        let ji = gemm_json(&a);
        let jt = gemm_json(&b);
        // Every mode is checked against verify's independent FP16-output references.
        let reference = ["ieee_dot", "fused_dot", "nvidia_ref_dot"][i];
        for j in [&ji, &jt] {
            assert_eq!(j["out_format"], "fp16");
            assert_eq!(j["check"]["mismatches"], 0, "{flags:?}: {j}");
            assert_eq!(j["check"]["reference"], reference, "{flags:?}: {j}");
        }
        assert_eq!(jt["memory"]["path"], "tma");
        assert_eq!(jt["memory"]["bytes_stored"], (m * n * 2) as u64, "{jt}");
        let want = run_functional(&Gemm::random(m, n, k, cfg, 1).expect("problem"))
            .expect("functional")
            .d;
        assert_eq!(d_words(&ideal), want, "{flags:?}");
        assert_eq!(d_words(&tma), want, "{flags:?}");
    }
}

#[test]
fn sparse_fp16_d_equals_the_sparse_functional_model() {
    let dir = scratch("gemm-fp16", "sparse");
    let (m, n, k) = (5usize, 6usize, 16usize);
    for (i, (flags, cfg)) in modes().into_iter().enumerate() {
        let out = p(&dir, &format!("s{i}.npy"));
        let mut a = vec![
            "--sparse",
            "--m",
            "5",
            "--n",
            "6",
            "--k",
            "16",
            "--out-format",
            "fp16",
            "--out",
            &out,
        ];
        a.extend(&flags);
        let j = gemm_json(&a);
        assert_eq!(j["check"]["mismatches"], 0, "{flags:?}: {j}");
        let reference = [
            "sparse_reference ieee",
            "sparse_reference fused",
            "nvidia_ref_dot over the kept products",
        ][i];
        assert_eq!(j["check"]["reference"], reference, "{flags:?}: {j}");
        let g = SparseGemm::random(m, n, k, cfg, 1).expect("problem");
        let want = run_functional_sparse(&g).expect("functional").d;
        assert_eq!(d_words(&out), want, "{flags:?}");
    }
}

#[test]
fn memh_fp16_writes_sixteen_bit_c_and_d() {
    let dir = scratch("gemm-fp16", "memh");
    let out = p(&dir, "d.npy");
    let memh = dir.join("golden");
    std::fs::create_dir_all(&memh).expect("golden dir");
    let ms = memh.display().to_string();
    let base = ["gemm", "--m", "3", "--n", "5", "--k", "7", "--memh", &ms];
    // An FP32 run first writes 32-bit step accumulators; the FP16 run replaces them.
    let o = tcrtl(&base);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(memh.join("steps.hex").is_file());
    let mut args = base.to_vec();
    args.extend(["--out-format", "fp16", "--memory", "tma", "--out", &out]);
    let o = tcrtl(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    check_fp16_steps(&memh);
    let read = |name: &str| -> (Vec<String>, Vec<u64>) {
        let t = std::fs::read_to_string(memh.join(name)).expect("hex file");
        let (head, body): (Vec<&str>, Vec<&str>) = t.lines().partition(|l| l.starts_with("//"));
        for w in &body {
            assert_eq!(w.len(), 4, "{name}: 16-bit words are four hex digits: {w}");
        }
        (
            head.iter().map(|s| s.to_string()).collect(),
            body.iter()
                .map(|w| u64::from_str_radix(w, 16).expect("hex"))
                .collect(),
        )
    };
    let (ch, c) = read("c.hex");
    let (dh, d) = read("d.hex");
    for h in [&ch, &dh] {
        assert!(h[0].contains("16-bit words"), "{h:?}");
        assert!(h[1].contains("; accumulator fp16;"), "{h:?}");
    }
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1).with_acc(FP16);
    let g = Gemm::random(3, 5, 7, cfg, 1).expect("problem");
    assert_eq!(c, g.c.iter().map(|&w| u64::from(w)).collect::<Vec<_>>());
    let want = run_functional(&g).expect("functional").d;
    assert_eq!(d, want.iter().map(|&w| u64::from(w)).collect::<Vec<_>>());
    assert_eq!(d_words(&out), want);
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(memh.join("manifest.json")).expect("manifest"),
    )
    .expect("json");
    assert_eq!(manifest["acc_format"], "fp16");
    let files = manifest["files"].as_array().expect("files");
    for name in ["c.hex", "d.hex"] {
        let f = files.iter().find(|f| f["file"] == name).expect("listed");
        assert_eq!(f["bits"], 16, "{f}");
    }
    // tcrtl grade reads the FP16 D: the golden D grades clean; one word a step off is one
    // FP16 ulp; a 32-bit word is refused.
    let o = tcrtl(&["grade", "--golden", &ms, "--student", &ms, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).expect("json");
    assert_eq!(j["steps"]["compared"], 105, "{j}");
    assert_eq!(j["steps"]["mismatches"], 0, "{j}");
    let student = dir.join("student");
    std::fs::create_dir_all(&student).expect("student dir");
    let ss = student.display().to_string();
    let mut words: Vec<String> = d.iter().map(|w| format!("{w:04x}")).collect();
    let bumped = (d[4] as u16).wrapping_add(1);
    words[4] = format!("{bumped:04x}");
    std::fs::write(student.join("d.hex"), words.join("\n") + "\n").expect("student d.hex");
    // The student's step vectors: the golden records, the accumulator after step 3 of D[0][1]
    // one FP16 value further from zero (record 7 + 3; its low 16 bits are that accumulator).
    let steps_text = std::fs::read_to_string(memh.join("steps.hex")).expect("steps");
    let mut recs: Vec<u64> = steps_text
        .lines()
        .filter(|l| !l.starts_with("//"))
        .map(|l| u64::from_str_radix(l, 16).expect("hex"))
        .collect();
    let after = recs[10] as u16;
    assert!(after & 0x7FFF < 0x7BFF, "{after:04x}");
    recs[10] += 1;
    let lines: Vec<String> = recs.iter().map(|r| format!("{r:016x}")).collect();
    std::fs::write(student.join("steps.hex"), lines.join("\n") + "\n").expect("steps");
    let o = tcrtl(&["grade", "--golden", &ms, "--student", &ss, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).expect("json");
    assert_eq!(j["mismatches"], 1);
    let first = &j["first"][0];
    assert_eq!(
        (first["row"].as_u64(), first["col"].as_u64()),
        (Some(0), Some(4))
    );
    assert_eq!(first["golden"], format!("{:04x}", d[4]));
    assert_eq!(first["student"], format!("{bumped:04x}"));
    // D[0][4] of the seeded problem is finite and below the largest finite magnitude, so its
    // pattern plus one is the next FP16 value away from zero: one ulp.
    assert!(d[4] & 0x7FFF < 0x7BFF, "{:04x}", d[4]);
    assert_eq!(first["ulps"], 1, "{first}");
    let st = &j["steps"];
    assert_eq!(
        (st["compared"].as_u64(), st["mismatches"].as_u64()),
        (Some(105), Some(1))
    );
    let f = &st["first"][0];
    assert_eq!(
        (f["row"].as_u64(), f["col"].as_u64(), f["step"].as_u64()),
        (Some(0), Some(1), Some(3))
    );
    assert_eq!(f["golden"], format!("{after:04x}"));
    assert_eq!(f["ulps"], 1, "{f}");
    words[4] = "0001_0000".into();
    std::fs::write(student.join("d.hex"), words.join("\n") + "\n").expect("student d.hex");
    assert_error(
        &tcrtl(&["grade", "--golden", &ms, "--student", &ss]),
        "wider than 16 bits",
    );
    // The FP32 run names its accumulator too.
    let o = tcrtl(&base);
    assert!(o.status.success());
    let (dh, d) = read_fp32_d(&memh);
    assert!(dh.contains("; accumulator fp32;"), "{dh}");
    assert_eq!(d.len(), 15);
}

/// The FP16 step vectors of the seeded 3 x 5 x 7 FP16 `ieee` problem (w = 1): one 16-hex-digit
/// record per (row, column, step), `a | b | acc before | acc after`; the first `before` is C,
/// each `after` is SoftFloat's `f16_mulAdd(a, b, before)` and the next step's `before`, the
/// last is D.
fn check_fp16_steps(memh: &std::path::Path) {
    let t = std::fs::read_to_string(memh.join("steps.hex")).expect("steps.hex");
    assert!(t.contains("acc before (16) | acc after (16)"), "{t}");
    let recs: Vec<u64> = t
        .lines()
        .filter(|l| !l.starts_with("//"))
        .map(|l| {
            assert_eq!(l.len(), 16, "{l}");
            u64::from_str_radix(l, 16).expect("hex")
        })
        .collect();
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1).with_acc(FP16);
    let g = Gemm::random(3, 5, 7, cfg, 1).expect("problem");
    let d = run_functional(&g).expect("functional").d;
    assert_eq!(recs.len(), 3 * 5 * 7);
    for (e, steps) in recs.chunks(7).enumerate() {
        let (i, j) = (e / 5, e % 5);
        let mut acc = g.c[e] as u16;
        for (p, &r) in steps.iter().enumerate() {
            let field = |k: u32| (r >> (16 * k)) as u16;
            let (a, b, before, after) = (field(3), field(2), field(1), field(0));
            assert_eq!(u64::from(a), g.a[i * 7 + p]);
            assert_eq!(u64::from(b), g.b[p * 5 + j]);
            assert_eq!(before, acc, "d[{i}][{j}] step {p}");
            let (want, _) = softfloat_op(RoundingMode::NearestEven, || {
                let r = F16::from_bits(a).fused_mul_add(
                    F16::from_bits(b),
                    F16::from_bits(before),
                    softfloat_round(RoundingMode::NearestEven),
                );
                u64::from(r.to_bits())
            });
            assert_eq!(u64::from(after), want, "d[{i}][{j}] step {p}");
            acc = after;
        }
        assert_eq!(u32::from(acc), d[e]);
    }
}

/// The header line and the words of an FP32 `d.hex` (eight hex digits each).
fn read_fp32_d(dir: &std::path::Path) -> (String, Vec<u32>) {
    let t = std::fs::read_to_string(dir.join("d.hex")).expect("d.hex");
    let lines: Vec<&str> = t.lines().collect();
    let words = lines[2..]
        .iter()
        .map(|w| {
            assert_eq!(w.len(), 8, "{w}");
            u32::from_str_radix(w, 16).expect("hex")
        })
        .collect();
    (lines[1].to_string(), words)
}
