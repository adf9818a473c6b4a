//! `--promote-every N` of `tcrtl dot` (single and batch) and `tcrtl gemm`, through the built
//! binary: a hand-worked Hopper E4M3 case, batch rows against single runs, a GEMM's D against
//! the rule written here (`verify::nvidia_ref` chunks from +0 added with host `f32` `+`), the
//! JSON keys, and every refusal.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use crate::common::Rng;
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};
use tensorcore_rtl::numerics::dot::Preset;
use tensorcore_rtl::numerics::format::E4M3;
use tensorcore_rtl::verify::nvidia_ref::{nvidia_ref_dot, ref_params};

fn json(args: &[&str]) -> serde_json::Value {
    let o = tcrtl(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    serde_json::from_str(text(&o.stdout).trim()).expect("one JSON object")
}

/// 256 products 1 x 2^-5 into C = 4096 (E4M3, Hopper): the unpromoted chain cuts every term
/// (13 fraction bits at 2^12 keep a grid of 2^-1); promoted every 128, each chunk from +0 is
/// 4 exactly and D = 4096 + 4 + 4 = 4104.
#[test]
fn dot_hopper_e4m3_hand_case() {
    let a = vec!["0x38"; 256].join(",");
    let b = vec!["0x10"; 256].join(",");
    let base = [
        "dot", "--format", "e4m3", "--acc", "nvidia", "--preset", "hopper", "--c", "4096",
        "--json", "--a", &a, "--b", &b,
    ];
    let plain = json(&base);
    assert_eq!(plain["value"], 4096.0);
    assert!(plain.get("promote_every").is_none());
    let mut args = base.to_vec();
    args.extend(["--promote-every", "128"]);
    let promoted = json(&args);
    assert_eq!(promoted["value"], 4104.0);
    assert_eq!(promoted["bits"], "0x45804000");
    assert_eq!(promoted["promote_every"], 128);
    // N >= K: no promotion, the unpromoted bits.
    let mut args = base.to_vec();
    args.extend(["--promote-every", "256"]);
    assert_eq!(json(&args)["bits"], plain["bits"]);
}

#[test]
fn dot_batch_rows_equal_single_runs() {
    let dir = scratch("promote", "batch");
    let (rows, k) = (6, 100);
    let mut rng = Rng(0x9e0);
    let e4m3 = |rng: &mut Rng| {
        let sign = (rng.next_u64() & 1) << 7;
        sign | ((1 + rng.below(14)) << 3) | (rng.next_u64() & 7)
    };
    let a: Vec<u64> = (0..rows * k).map(|_| e4m3(&mut rng)).collect();
    let b: Vec<u64> = (0..rows * k).map(|_| e4m3(&mut rng)).collect();
    let c: Vec<u64> = (0..rows as u64)
        .map(|r| (r as f32 * 3.5).to_bits() as u64)
        .collect();
    write_npy(&dir.join("a.npy"), &[rows, k], Dtype::U8, &a).expect("a");
    write_npy(&dir.join("b.npy"), &[rows, k], Dtype::U8, &b).expect("b");
    write_npy(&dir.join("c.npy"), &[rows], Dtype::U32, &c).expect("c");
    let (pa, pb, pc, pd) = (
        p(&dir, "a.npy"),
        p(&dir, "b.npy"),
        p(&dir, "c.npy"),
        p(&dir, "d.npy"),
    );
    let mode = ["--format", "e4m3", "--acc", "nvidia", "--preset", "hopper"];
    let mut args = vec!["dot"];
    args.extend(mode);
    args.extend([
        "--a",
        &pa,
        "--b",
        &pb,
        "--c",
        &pc,
        "--out",
        &pd,
        "--promote-every",
        "32",
        "--json",
    ]);
    let summary = json(&args);
    assert_eq!(summary["promote_every"], 32);
    assert_eq!(summary["rows"], rows);
    let d = read_npy(&dir.join("d.npy")).expect("d").words();
    let hex = |w: &[u64]| {
        w.iter()
            .map(|x| format!("{x:#x}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    for r in 0..rows {
        let (ra, rb) = (hex(&a[r * k..(r + 1) * k]), hex(&b[r * k..(r + 1) * k]));
        let cr = format!("{:#x}", c[r]);
        let mut one = vec!["dot"];
        one.extend(mode);
        one.extend([
            "--a",
            &ra,
            "--b",
            &rb,
            "--c",
            &cr,
            "--promote-every",
            "32",
            "--json",
        ]);
        let want = json(&one)["bits"].as_str().expect("bits").to_string();
        assert_eq!(format!("{:#010x}", d[r]), want, "row {r}");
    }
}

/// A GEMM from .npy operands (K = 200, not a multiple of 64) promoted every 64: its D, read
/// back, against the rule computed here; the check and the JSON keys.
#[test]
fn gemm_promoted_d_follows_the_rule() {
    let dir = scratch("promote", "gemm");
    let (m, n, k, every) = (5, 6, 200, 64);
    let mut rng = Rng(0x6e3);
    let e4m3 = |rng: &mut Rng| {
        let sign = (rng.next_u64() & 1) << 7;
        sign | ((1 + rng.below(14)) << 3) | (rng.next_u64() & 7)
    };
    let a: Vec<u64> = (0..m * k).map(|_| e4m3(&mut rng)).collect();
    let b: Vec<u64> = (0..k * n).map(|_| e4m3(&mut rng)).collect();
    let c: Vec<u64> = (0..m * n)
        .map(|i| ((i as f32 - 10.0) * 0.75).to_bits() as u64)
        .collect();
    write_npy(&dir.join("a.npy"), &[m, k], Dtype::U8, &a).expect("a");
    write_npy(&dir.join("b.npy"), &[k, n], Dtype::U8, &b).expect("b");
    write_npy(&dir.join("c.npy"), &[m, n], Dtype::U32, &c).expect("c");
    let (pa, pb, pc, pd) = (
        p(&dir, "a.npy"),
        p(&dir, "b.npy"),
        p(&dir, "c.npy"),
        p(&dir, "d.npy"),
    );
    let every_s = every.to_string();
    let out = json(&[
        "gemm",
        "--a",
        &pa,
        "--b",
        &pb,
        "--c",
        &pc,
        "--format",
        "e4m3",
        "--acc",
        "nvidia",
        "--preset",
        "hopper",
        "--width",
        "4",
        "--promote-every",
        &every_s,
        "--check",
        "--out",
        &pd,
        "--json",
    ]);
    assert_eq!(out["promote_every"], every);
    assert_eq!(out["chunks"], 4);
    assert_eq!(out["check"]["mismatches"], 0);
    let d = read_npy(&dir.join("d.npy")).expect("d").words();
    let params = ref_params(Preset::Hopper, E4M3, E4M3).expect("table");
    for i in 0..m {
        for j in 0..n {
            let row = &a[i * k..(i + 1) * k];
            let col: Vec<u64> = (0..k).map(|q| b[q * n + j]).collect();
            let mut sum = f32::from_bits(c[i * n + j] as u32);
            for s in (0..k).step_by(every) {
                let e = (s + every).min(k);
                let part = nvidia_ref_dot(&params, E4M3, E4M3, &row[s..e], &col[s..e], 0);
                sum += f32::from_bits(part);
            }
            assert_eq!(d[i * n + j] as u32, sum.to_bits(), "D[{i}][{j}]");
        }
    }
}

#[test]
fn gemm_random_reports_promotion() {
    let out = json(&[
        "gemm",
        "--m",
        "8",
        "--n",
        "4",
        "--k",
        "300",
        "--format",
        "e5m2",
        "--acc",
        "nvidia",
        "--preset",
        "hopper",
        "--promote-every",
        "128",
        "--json",
    ]);
    assert_eq!(out["promote_every"], 128);
    assert_eq!(out["chunks"], 3);
    assert_eq!(out["check"]["mismatches"], 0);
    let cycles: u64 = out["chunk_cycles"]
        .as_array()
        .expect("chunk cycles")
        .iter()
        .map(|c| c.as_u64().expect("u64"))
        .sum();
    assert_eq!(out["cycles"].as_u64(), Some(cycles));
}

#[test]
fn refusals() {
    let dot = |extra: &[&str]| {
        let mut v = vec!["dot", "--format", "fp16", "--a", "1,2", "--b", "3,4"];
        v.extend(extra);
        tcrtl(&v)
    };
    assert_error(&dot(&["--promote-every", "0"]), "at least 1 product");
    assert_error(
        &dot(&["--promote-every", "2", "--out-format", "fp16"]),
        "fp32 accumulator, not fp16",
    );
    assert_error(&dot(&["--promote-every", "2", "--explain"]), "--explain");
    assert_error(
        &tcrtl(&[
            "dot",
            "--format",
            "e4m3",
            "--acc",
            "nvidia",
            "--preset",
            "hopper",
            "--a",
            "1",
            "--b",
            "1",
            "--promote-every",
            "48",
        ]),
        "every 48 products splits the preset's blocks of 32",
    );
    assert_error(
        &tcrtl(&[
            "dot",
            "--format",
            "s8",
            "--a",
            "1",
            "--b",
            "1",
            "--promote-every",
            "4",
        ]),
        "integer formats",
    );
    let gemm = |extra: &[&str]| {
        let mut v = vec![
            "gemm", "--m", "4", "--n", "4", "--k", "64", "--format", "fp16",
        ];
        v.extend(extra);
        tcrtl(&v)
    };
    assert_error(
        &gemm(&["--promote-every", "16", "--out-format", "fp16"]),
        "fp32 accumulator",
    );
    assert_error(&gemm(&["--promote-every", "16", "--sparse"]), "--sparse");
    assert_error(
        &gemm(&[
            "--promote-every",
            "24",
            "--acc",
            "nvidia",
            "--preset",
            "hopper",
        ]),
        "every 24 products splits the preset's blocks of 16",
    );
}
