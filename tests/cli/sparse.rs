//! `tcrtl sparse compress`, `tcrtl sparse check` and `tcrtl gemm --sparse`, run as the built
//! binary.

use crate::common::cli::{p, scratch, tcrtl, text};
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};

/// Exit code `code` and exactly one stderr line `error: ...` containing `needle`.
fn assert_fails(args: &[&str], code: i32, needle: &str) {
    let o = tcrtl(args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.starts_with("error: ") && err.contains(needle),
        "{args:?}: {err}"
    );
}

const ONE: u64 = 0x3C00;
const TWO: u64 = 0x4000;

#[test]
fn compress_then_check_fp16() {
    let d = scratch("sparse", "ok");
    // 2 x 8: row 0 groups (0,1,0,2) and (0,0,0,0); row 1 groups (0,0,0,-1) and (1,1,0,0).
    let a = [0, ONE, 0, TWO, 0, 0, 0, 0, 0, 0, 0, 0xBC00, ONE, ONE, 0, 0];
    write_npy(&d.join("a.npy"), &[2, 8], Dtype::F16, &a).unwrap();
    let o = tcrtl(&[
        "sparse",
        "compress",
        "--a",
        &p(&d, "a.npy"),
        "--format",
        "fp16",
        "--values",
        &p(&d, "v.npy"),
        "--meta",
        &p(&d, "m.npy"),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["m"], 2);
    assert_eq!(j["k"], 8);
    assert_eq!(j["pruned_groups"], 0);
    let v = read_npy(&d.join("v.npy")).unwrap();
    assert_eq!(v.shape, vec![2, 4]);
    assert_eq!(v.dtype, Dtype::F16);
    assert_eq!(v.words(), vec![ONE, TWO, 0, 0, 0, 0xBC00, ONE, ONE]);
    let m = read_npy(&d.join("m.npy")).unwrap();
    assert_eq!(m.shape, vec![2, 2]);
    assert_eq!(m.dtype, Dtype::U8);
    assert_eq!(m.words(), vec![0b1101, 0b0100, 0b1110, 0b0100]);
    let o = tcrtl(&[
        "sparse",
        "check",
        "--a-values",
        &p(&d, "v.npy"),
        "--a-meta",
        &p(&d, "m.npy"),
        "--format",
        "fp16",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with("valid: 2 x 8 fp16 A"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn compress_rejects_or_prunes_overfull_groups() {
    let d = scratch("sparse", "prune");
    // uint8 E4M3 bit patterns; row 1, group 0 has three nonzeros.
    let a = [0x38, 0, 0, 0, 0x38, 0x40, 0x48, 0];
    write_npy(&d.join("a.npy"), &[2, 4], Dtype::U8, &a).unwrap();
    let base = [
        "sparse",
        "compress",
        "--a",
        &p(&d, "a.npy"),
        "--format",
        "e4m3",
        "--values",
        &p(&d, "v.npy"),
        "--meta",
        &p(&d, "m.npy"),
    ];
    assert_fails(&base, 2, "A row 1, group 0 (columns 0..=3) has 3 nonzeros");
    let mut pruned = base.to_vec();
    pruned.extend(["--prune", "--json"]);
    let o = tcrtl(&pruned);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["pruned_groups"], 1);
    let v = read_npy(&d.join("v.npy")).unwrap();
    assert_eq!(v.dtype, Dtype::U8);
    assert_eq!(v.words(), vec![0x38, 0, 0x40, 0x48]);
    assert_eq!(
        read_npy(&d.join("m.npy")).unwrap().words(),
        vec![0b0100, 0b1001]
    );
}

#[test]
fn compress_input_errors() {
    let d = scratch("sparse", "inerr");
    write_npy(&d.join("k6.npy"), &[1, 6], Dtype::U16, &[0; 6]).unwrap();
    write_npy(&d.join("u8.npy"), &[1, 4], Dtype::U8, &[0; 4]).unwrap();
    write_npy(
        &d.join("f64.npy"),
        &[1, 4],
        Dtype::F64,
        &[0.1f64.to_bits(), 0, 0, 0],
    )
    .unwrap();
    write_npy(&d.join("vec.npy"), &[4], Dtype::U16, &[0; 4]).unwrap();
    let run = |file: &str, fmt: &str, needle: &str| {
        assert_fails(
            &[
                "sparse",
                "compress",
                "--a",
                &p(&d, file),
                "--format",
                fmt,
                "--values",
                &p(&d, "v.npy"),
                "--meta",
                &p(&d, "m.npy"),
            ],
            2,
            needle,
        )
    };
    run("k6.npy", "bf16", "K = 6 is not a multiple of 4");
    run(
        "u8.npy",
        "fp16",
        "uint8 holds 8-bit patterns, but fp16 is 16 bits wide",
    );
    run(
        "f64.npy",
        "fp16",
        "element [0][0] = 0.1 is not exactly representable in fp16",
    );
    run("vec.npy", "fp16", "expected a 2-D array");
    run("missing.npy", "fp16", "missing.npy");
    run("k6.npy", "fp32", "unknown input format \"fp32\"");
    run("k6.npy", "fp17", "unknown input format \"fp17\"");
}

#[test]
fn check_reports_invalid_metadata() {
    let d = scratch("sparse", "check");
    write_npy(&d.join("v.npy"), &[2, 4], Dtype::U16, &[0; 8]).unwrap();
    write_npy(&d.join("m.npy"), &[2, 2], Dtype::U8, &[4, 8, 12, 0b0110]).unwrap();
    write_npy(&d.join("m16.npy"), &[2, 2], Dtype::U16, &[4; 4]).unwrap();
    write_npy(&d.join("m3.npy"), &[2, 3], Dtype::U8, &[4; 6]).unwrap();
    let run = |meta: &str, code: i32, needle: &str| {
        assert_fails(
            &[
                "sparse",
                "check",
                "--a-values",
                &p(&d, "v.npy"),
                "--a-meta",
                &p(&d, meta),
                "--format",
                "bf16",
            ],
            code,
            needle,
        )
    };
    run(
        "m.npy",
        1,
        "metadata row 1, group 1: invalid 2:4 nibble 0b0110: first index 2 is above second index 1",
    );
    run("m16.npy", 2, "metadata must be uint8");
    run(
        "m3.npy",
        2,
        "metadata is 2 x 3 but values are 2 x 4; expected 2 x 2",
    );
}

#[test]
fn sparse_gemm_dense_and_precompressed_agree() {
    let d = scratch("sparse", "gemm");
    // A 2 x 8 fp16 (2:4-valid), B 8 x 2 with b[p][j] = p + 1 + j, C = 0.5.
    let a = [0, ONE, 0, TWO, 0, 0, 0, 0, 0, 0, 0, 0xBC00, ONE, ONE, 0, 0];
    write_npy(&d.join("a.npy"), &[2, 8], Dtype::F16, &a).unwrap();
    let b: Vec<u64> = (0..16)
        .map(|i| half::f16::from_f64((i / 2 + 1 + i % 2) as f64).to_bits() as u64)
        .collect();
    write_npy(&d.join("b.npy"), &[8, 2], Dtype::F16, &b).unwrap();
    write_npy(&d.join("c.npy"), &[2, 2], Dtype::F32, &[0x3F00_0000; 4]).unwrap();
    let o = tcrtl(&[
        "gemm",
        "--sparse",
        "--a",
        &p(&d, "a.npy"),
        "--b",
        &p(&d, "b.npy"),
        "--c",
        &p(&d, "c.npy"),
        "--format",
        "fp16",
        "--out",
        &p(&d, "d1.npy"),
        "--check",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["sparse"], true);
    assert_eq!(j["macs"], 2 * 2 * 4);
    assert_eq!(j["check"]["mismatches"], 0);
    assert_eq!(j["check"]["reference"], "sparse_reference ieee");
    // K = 8, w = 1: 4 kept steps a tile against 8 dense ones.
    assert_eq!(j["steps_per_tile"], 4);
    assert_eq!(j["dense_steps_per_tile"], 8);
    assert_eq!(j["cycles"], j["dense_cycles"].as_u64().unwrap() - 4);
    let d1 = read_npy(&d.join("d1.npy")).unwrap();
    let vals: Vec<f64> = (0..4).map(|i| d1.value_f64(i)).collect();
    // Row 0: 1*b[1] + 2*b[3] + 0.5; row 1: -1*b[3] + 1*b[4] + 1*b[5] + 0.5.
    assert_eq!(
        vals,
        vec![
            2.0 + 8.0 + 0.5,
            3.0 + 10.0 + 0.5,
            -4.0 + 5.0 + 6.0 + 0.5,
            -5.0 + 6.0 + 7.0 + 0.5
        ]
    );
    assert!(tcrtl(&[
        "sparse",
        "compress",
        "--a",
        &p(&d, "a.npy"),
        "--format",
        "fp16",
        "--values",
        &p(&d, "v.npy"),
        "--meta",
        &p(&d, "m.npy"),
    ])
    .status
    .success());
    let o = tcrtl(&[
        "gemm",
        "--sparse",
        "--a-values",
        &p(&d, "v.npy"),
        "--a-meta",
        &p(&d, "m.npy"),
        "--b",
        &p(&d, "b.npy"),
        "--c",
        &p(&d, "c.npy"),
        "--format",
        "fp16",
        "--acc",
        "fused",
        "--width",
        "2",
        "--out",
        &p(&d, "d2.npy"),
        "--check",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("check against sparse_reference fused: 0 mismatches"),
        "{out}"
    );
    assert!(
        out.contains("2:4 sparse: 2 steps a tile (dense 4)"),
        "{out}"
    );
    assert_eq!(read_npy(&d.join("d2.npy")).unwrap().words(), d1.words());
}

#[test]
fn sparse_gemm_errors() {
    let d = scratch("sparse", "gemmerr");
    let a = [ONE, ONE, ONE, 0];
    write_npy(&d.join("a.npy"), &[1, 4], Dtype::F16, &a).unwrap();
    write_npy(&d.join("b.npy"), &[4, 1], Dtype::F16, &[ONE; 4]).unwrap();
    write_npy(&d.join("b5.npy"), &[5, 1], Dtype::F16, &[ONE; 5]).unwrap();
    let (ap, bp, b5) = (p(&d, "a.npy"), p(&d, "b.npy"), p(&d, "b5.npy"));
    let base = ["gemm", "--sparse", "--format", "fp16", "--b"];
    let with = |extra: &[&str], b: &str| {
        let mut v: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        v.push(b.to_string());
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |args: Vec<String>, code: i32, needle: &str| {
        let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        assert_fails(&refs, code, needle);
    };
    run(
        with(&["--a", &ap], &bp),
        2,
        "A row 0, group 0 (columns 0..=3) has 3 nonzeros",
    );
    run(
        with(&["--a", &ap, "--prune"], &b5),
        2,
        "inner dimensions differ: A is 1 x 4 but B is 5 x 1",
    );
    run(
        with(&["--a", &ap, "--prune", "--acc", "exact"], &bp),
        2,
        "--acc exact is a reference",
    );
    let o = tcrtl(
        &with(
            &[
                "--a", &ap, "--prune", "--acc", "nvidia", "--preset", "hopper", "--check",
            ],
            &bp,
        )
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("nvidia_ref_dot over the kept products: 0 mismatches"));
    // Compressed input needs --sparse; a random sparse K must be a multiple of 4.
    let o = tcrtl(&["gemm", "--a-values", &ap, "--a-meta", &ap, "--b", &bp]);
    assert_eq!(o.status.code(), Some(2));
    assert_fails(
        &["gemm", "--sparse", "--m", "4", "--n", "4", "--k", "6"],
        2,
        "K = 6 is not a multiple of 4",
    );
    run(
        with(&["--a", &ap, "--prune", "--width", "3"], &bp),
        2,
        "width 3 is not one of",
    );
    let o = tcrtl(
        &with(&["--a", &ap, "--prune", "--check"], &bp)
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// `--sparse --dataflow ws`: the weight-stationary core in 2:4 sparse mode. The text line
/// counts folds of K (`ceil((K/2) / (R w))` against the dense `ceil(K / (R w))`) and rows fed;
/// the check is the `ws` reference over the kept products; the JSON carries the same figures
/// and says where the dense cycles come from.
#[test]
fn sparse_gemm_runs_weight_stationary() {
    let args = [
        "gemm",
        "--sparse",
        "--dataflow",
        "ws",
        "--m",
        "11",
        "--n",
        "6",
        "--k",
        "40",
        "--rows",
        "3",
        "--cols",
        "5",
        "--width",
        "2",
        "--check",
    ];
    let o = tcrtl(&args);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(out.contains(", 3 x 5 array, ws):"), "{out}");
    // K / 2 = 20 kept positions on 3 rows of 2 lanes: 4 folds; dense K = 40: 7 folds.
    assert!(
        out.contains("2:4 sparse: 4 folds of K (dense 7); rows fed "),
        "{out}"
    );
    assert!(
        out.contains("check against ws_ref(ieee_dot) over the kept products: 0 mismatches"),
        "{out}"
    );
    let mut json_args = args[..args.len() - 1].to_vec();
    json_args.push("--json");
    let j = tcrtl(&json_args);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("json");
    assert_eq!(v["dataflow"], "ws");
    assert_eq!(v["sparse"], true);
    assert_eq!(v["steps_per_tile"], 4);
    assert_eq!(v["dense_steps_per_tile"], 7);
    // 4 folds x 2 column tiles (N = 6 on 5 columns), one row chunk of all 11 rows: 8 passes
    // of 11 rows, one row fed a cycle.
    assert_eq!(v["compute_cycles"], 8 * 11);
    assert!(v["dense_cycles_source"]
        .as_str()
        .is_some_and(|s| s.contains("WsSchedule")));
}
