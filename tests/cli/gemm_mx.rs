//! `tcrtl gemm` with block-scaled formats (MX, MXINT8, NVFP4): elements and scales as .npy,
//! D from the clocked core in MX mode compared with the functional `mx_dot` (fused) on the
//! same quantised operands; bad inputs are one-line errors with exit code 2.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use crate::common::Rng;
use tensorcore_rtl::gemm::MxGemm;
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::mx::{quantise, BlockFormat, Quantised};
use tensorcore_rtl::numerics::mx_dot::{mx_dot, MxDotMode};

/// Random FP32 values with outliers and zeros, as bits.
fn values(rng: &mut Rng, count: usize) -> Vec<u64> {
    (0..count)
        .map(|_| {
            let v: f32 = match rng.below(20) {
                0 => 0.0,
                1 => 1000.0 * (rng.below(100) as f32 - 50.0),
                _ => (rng.below(20001) as f32 - 10000.0) / 997.0,
            };
            u64::from(v.to_bits())
        })
        .collect()
}

/// Writes A (m x k), B (k x n), their scales and C for `fmt`; returns A's rows and B's
/// columns as quantised rows, and C.
fn write_problem(
    dir: &std::path::Path,
    fmt: BlockFormat,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> (Quantised, Quantised, Vec<u32>) {
    let mut rng = Rng(seed);
    let qa = quantise(fmt, FP32, &values(&mut rng, m * k), k).expect("quantise A");
    let qb = quantise(fmt, FP32, &values(&mut rng, n * k), k).expect("quantise B^T");
    let kb = k / fmt.block_size();
    let c: Vec<u32> = (0..m * n)
        .map(|i| ((i as f32 - 3.0) * 0.37).to_bits())
        .collect();
    // B (k x n) and its scales (k/bs x n) laid out from B's quantised columns.
    let g = MxGemm::from_quantised(&qa, &qb, c.clone(), 1).expect("problem");
    let bytes = |v: &[u8]| v.iter().map(|&x| u64::from(x)).collect::<Vec<u64>>();
    let c_words: Vec<u64> = c.iter().map(|&w| u64::from(w)).collect();
    write_npy(&dir.join("a.npy"), &[m, k], Dtype::U8, &qa.elements).expect("a");
    write_npy(&dir.join("b.npy"), &[k, n], Dtype::U8, &g.b).expect("b");
    write_npy(&dir.join("sa.npy"), &[m, kb], Dtype::U8, &qa.scales).expect("sa");
    write_npy(
        &dir.join("sb.npy"),
        &[kb, n],
        Dtype::U8,
        &bytes(&g.b_scales),
    )
    .expect("sb");
    write_npy(&dir.join("c.npy"), &[m, n], Dtype::U32, &c_words).expect("c");
    (qa, qb, c)
}

/// D from the CLI equals fused `mx_dot` element by element, for FP8, FP6, FP4, MXINT8 and
/// NVFP4 (with the tensor scales the quantiser chose) elements.
#[test]
fn gemm_mx_matches_mx_dot() {
    let (m, n, k) = (5, 6, 64);
    for (s, fmt) in [
        BlockFormat::MxFp8E4M3,
        BlockFormat::MxFp6E3M2,
        BlockFormat::MxFp4,
        BlockFormat::MxInt8,
        BlockFormat::NvFp4,
    ]
    .into_iter()
    .enumerate()
    {
        let d = scratch("gemm-mx", fmt.name());
        let (qa, qb, c) = write_problem(&d, fmt, (m, n, k), 40 + s as u64);
        let width = ["1", "4", "32", "8", "16"][s];
        let tensor: Vec<String> = match (qa.tensor_scale, qb.tensor_scale) {
            (Some(ta), Some(tb)) => vec![
                "--a-tensor-scale".into(),
                format!("{ta:#010x}"),
                "--b-tensor-scale".into(),
                format!("{tb:#010x}"),
            ],
            _ => Vec::new(),
        };
        assert_eq!(fmt == BlockFormat::NvFp4, !tensor.is_empty());
        let files = ["a.npy", "b.npy", "sa.npy", "sb.npy", "c.npy", "d.npy"].map(|f| p(&d, f));
        let mut args = vec![
            "gemm",
            "--format",
            fmt.name(),
            "--a",
            &files[0],
            "--b",
            &files[1],
            "--a-scales",
            &files[2],
            "--b-scales",
            &files[3],
            "--c",
            &files[4],
            "--width",
            width,
            "--out",
            &files[5],
            "--check",
            "--json",
        ];
        args.extend(tensor.iter().map(String::as_str));
        let o = tcrtl(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(j["check"]["mismatches"], 0, "{j}");
        assert_eq!(j["format"], fmt.name());
        let out = read_npy(&d.join("d.npy")).expect("D");
        assert_eq!(out.shape, vec![m, n]);
        let mut nonzero = 0;
        for i in 0..m {
            for jj in 0..n {
                let want = mx_dot(&qa, i, &qb, jj, c[i * n + jj], MxDotMode::Fused).expect("dot");
                let got = out.word(i * n + jj) as u32;
                assert_eq!(got, want.bits as u32, "{fmt} D[{i}][{jj}]");
                nonzero += usize::from(f32::from_bits(got) != 0.0);
            }
        }
        assert!(nonzero > m * n / 2, "{fmt}: {nonzero} nonzero results");
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// Runs `fmt` (an MX and an NVFP4 format) on a `rows x cols` array of `dataflow` at `width`
/// through `--memory tma` and the ideal port, both with `--check`; asserts 0 mismatches, the
/// same D and flags, no fewer cycles through memory, and returns its `--json` and the problem
/// shape.
fn mx_through_memory(
    fmt: BlockFormat,
    (m, n, k): (usize, usize, usize),
    (rows, cols, width): (usize, usize, usize),
    dataflow: &str,
    seed: u64,
) -> serde_json::Value {
    let d = scratch(&format!("gemm-mx-{dataflow}-tma"), fmt.name());
    let (qa, qb, _) = write_problem(&d, fmt, (m, n, k), seed);
    let tensor: Vec<String> = match (qa.tensor_scale, qb.tensor_scale) {
        (Some(ta), Some(tb)) => vec![
            "--a-tensor-scale".into(),
            format!("{ta:#010x}"),
            "--b-tensor-scale".into(),
            format!("{tb:#010x}"),
        ],
        _ => Vec::new(),
    };
    let files = ["a.npy", "b.npy", "sa.npy", "sb.npy", "c.npy"].map(|f| p(&d, f));
    let (rows, cols, width) = (rows.to_string(), cols.to_string(), width.to_string());
    let run = |memory: &str| {
        let out = p(&d, &format!("d-{memory}.npy"));
        let mut args = vec![
            "gemm",
            "--format",
            fmt.name(),
            "--a",
            &files[0],
            "--b",
            &files[1],
            "--a-scales",
            &files[2],
            "--b-scales",
            &files[3],
            "--c",
            &files[4],
            "--width",
            &width,
            "--rows",
            &rows,
            "--cols",
            &cols,
            "--dataflow",
            dataflow,
            "--memory",
            memory,
            "--out",
            &out,
            "--check",
            "--json",
        ];
        args.extend(tensor.iter().map(String::as_str));
        let o = tcrtl(&args);
        assert_eq!(o.status.code(), Some(0), "{fmt}: {}", text(&o.stderr));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(j["check"]["mismatches"], 0, "{fmt}: {j}");
        (j, std::fs::read(&out).expect("D"))
    };
    let ((j, d_tma), (ideal, d_ideal)) = (run("tma"), run("ideal"));
    assert_eq!(
        d_tma, d_ideal,
        "{fmt}: D through memory against the ideal port"
    );
    assert_eq!(j["flags"], ideal["flags"], "{fmt}");
    assert_eq!(j["dataflow"], dataflow, "{fmt}");
    assert!(j["cycles"].as_u64() >= ideal["cycles"].as_u64(), "{fmt}");
    assert_eq!(j["memory"]["path"], "tma", "{fmt}");
    let _ = std::fs::remove_dir_all(&d);
    j
}

/// `gemm --dataflow ws --memory tma` with an MX and an NVFP4 format: the block scales
/// travel by TMA beside their operands; 0 mismatches against the `ws` reference, D equal to
/// the ideal `ws` run's, and the shared-memory reads of the closed form (each of the
/// `ceil(N / C) * ceil(K / (R w))` passes reads `R` weight rows of `w` elements by `C`
/// columns and `R` rows of `C` scales of B; each row of A once a pass, `R w` elements and
/// `R` scales; each row of C once a column tile, 4 bytes a word).
#[test]
fn gemm_mx_runs_through_the_ws_memory_path() {
    let (m, n, k, rows, cols) = (5, 7, 160, 2, 3);
    for (s, fmt) in [BlockFormat::MxFp8E4M3, BlockFormat::NvFp4]
        .into_iter()
        .enumerate()
    {
        let w = fmt.block_size();
        let j = mx_through_memory(fmt, (m, n, k), (rows, cols, w), "ws", 70 + s as u64);
        let passes = n.div_ceil(cols) * k.div_ceil(rows * w);
        let want = passes * rows * (w * cols + cols)
            + passes * m * (rows * w + rows)
            + m * n.div_ceil(cols) * cols * 4;
        assert_eq!(j["memory"]["smem_read_bytes"], want, "{fmt}");
    }
}

/// `gemm --memory tma` (the default `os` dataflow) with an MX and an NVFP4 format: the
/// scales travel by TMA into the same stages as their operands; 0 mismatches against the
/// reference, D and flags equal to the ideal run's, cycles no fewer, and the shared-memory
/// reads of the closed form (every tile reads each of its rows and columns inside the
/// problem: all K elements, and on each chunk of 128 elements its `128 / bs` scales; and its
/// `R x C` C words once, 4 bytes each).
#[test]
fn gemm_mx_runs_through_the_os_memory_path() {
    let (m, n, k) = (9, 6, 160);
    for (s, fmt) in [BlockFormat::MxFp8E4M3, BlockFormat::NvFp4]
        .into_iter()
        .enumerate()
    {
        let bs = fmt.block_size();
        let j = mx_through_memory(fmt, (m, n, k), (4, 4, bs / 2), "os", 90 + s as u64);
        let (tiles_m, tiles_n) = (m.div_ceil(4), n.div_ceil(4));
        let chunks = k.div_ceil(128);
        let want =
            (tiles_n * m + tiles_m * n) * (k + chunks * 128 / bs) + tiles_m * tiles_n * 16 * 4;
        assert_eq!(j["memory"]["smem_read_bytes"], want, "{fmt}");
    }
}

/// Wrong scale shapes, K not a multiple of 32, codes too wide for the element format, and
/// options MX does not take: one-line errors, exit code 2.
#[test]
fn gemm_mx_bad_input() {
    let d = scratch("gemm-mx", "bad");
    write_problem(&d, BlockFormat::MxFp6E2M3, (4, 4, 64), 3);
    let base = |fmt: &str, sa: &str, sb: &str| {
        vec![
            "gemm".to_string(),
            "--format".into(),
            fmt.into(),
            "--a".into(),
            p(&d, "a.npy"),
            "--b".into(),
            p(&d, "b.npy"),
            "--a-scales".into(),
            p(&d, sa),
            "--b-scales".into(),
            p(&d, sb),
        ]
    };
    let run = |args: Vec<String>, extra: &[&str], needle: &str| {
        let mut v: Vec<&str> = args.iter().map(String::as_str).collect();
        v.extend_from_slice(extra);
        assert_error(&tcrtl(&v), needle);
    };
    // Scales swapped: A's are 4 x 2 but B needs 2 x 4 and vice versa (shapes coincide here,
    // so write a truly wrong one).
    write_npy(&d.join("sa_bad.npy"), &[4, 3], Dtype::U8, &[127; 12]).expect("sa_bad");
    run(
        base("mxfp6e2m3", "sa_bad.npy", "sb.npy"),
        &[],
        "A scales are 4 x 3",
    );
    write_npy(&d.join("sb_bad.npy"), &[4, 4], Dtype::U8, &[127; 16]).expect("sb_bad");
    run(
        base("mxfp6e2m3", "sa.npy", "sb_bad.npy"),
        &[],
        "B scales are 4 x 4",
    );
    write_npy(&d.join("sf.npy"), &[4, 2], Dtype::F32, &[0; 8]).expect("sf");
    run(base("mxfp6e2m3", "sf.npy", "sb.npy"), &[], "expected uint8");
    // K = 48.
    write_npy(&d.join("a48.npy"), &[4, 48], Dtype::U8, &[1; 192]).expect("a48");
    write_npy(&d.join("b48.npy"), &[48, 4], Dtype::U8, &[1; 192]).expect("b48");
    let mut args = base("mxfp6e2m3", "sa.npy", "sb.npy");
    args[4] = p(&d, "a48.npy");
    args[6] = p(&d, "b48.npy");
    run(args, &[], "multiple of 32");
    // FP6 codes live in 6 bits; the FP8 file's bytes do not all fit in 4 (mxfp4).
    write_npy(&d.join("a8.npy"), &[4, 64], Dtype::U8, &[0x3F; 256]).expect("a8");
    let mut args = base("mxfp4", "sa.npy", "sb.npy");
    args[4] = p(&d, "a8.npy");
    run(args, &[], "does not fit in 4 bits");
    // Missing scales, options MX refuses, scales without an MX format.
    run(
        vec![
            "gemm".into(),
            "--format".into(),
            "mxfp8e5m2".into(),
            "--a".into(),
            p(&d, "a.npy"),
            "--b".into(),
            p(&d, "b.npy"),
        ],
        &[],
        "--a-scales",
    );
    run(
        base("mxfp6e2m3", "sa.npy", "sb.npy"),
        &["--acc", "nvidia", "--preset", "hopper"],
        "fused",
    );
    run(
        base("e4m3", "sa.npy", "sb.npy"),
        &[],
        "need a block-scaled --format",
    );
    run(
        base("mxfp4", "sa.npy", "sb.npy"),
        &["--satfinite"],
        "--satfinite",
    );
    run(
        base("mxfp4", "sa.npy", "sb.npy"),
        &["--out-format", "fp16"],
        "--out-format",
    );
    // Tensor scales belong to NVFP4; MXINT8 pairs with MXINT8 only; NVFP4 blocks of 16 do
    // not take 32-lane steps.
    run(
        base("mxfp4", "sa.npy", "sb.npy"),
        &["--a-tensor-scale", "2"],
        "applies to nvfp4 only",
    );
    run(
        base("mxint8", "sa.npy", "sb.npy"),
        &["--format-b", "mxfp8e4m3"],
        "MXINT8 pairs with MXINT8 only",
    );
    run(
        base("nvfp4", "sa.npy", "sb.npy"),
        &["--format-b", "mxfp4"],
        "one block size",
    );
    let n = scratch("gemm-mx", "bad-nvfp4");
    write_problem(&n, BlockFormat::NvFp4, (4, 4, 32), 5);
    let nv = |sa: &str| {
        vec![
            "gemm".to_string(),
            "--format".into(),
            "nvfp4".into(),
            "--a".into(),
            p(&n, "a.npy"),
            "--b".into(),
            p(&n, "b.npy"),
            "--a-scales".into(),
            p(&n, sa),
            "--b-scales".into(),
            p(&n, "sb.npy"),
        ]
    };
    run(nv("sa.npy"), &["--width", "32"], "blocks hold 16");
    run(
        nv("sa.npy"),
        &["--a-tensor-scale", "two"],
        "--a-tensor-scale",
    );
    write_npy(&n.join("sa_neg.npy"), &[4, 2], Dtype::U8, &[0xB8; 8]).expect("sa_neg");
    run(nv("sa_neg.npy"), &[], "unsigned E4M3");
    write_npy(&n.join("sa_32.npy"), &[4, 1], Dtype::U8, &[0x38; 4]).expect("sa_32");
    run(nv("sa_32.npy"), &[], "needs 4 x 2");
    let _ = std::fs::remove_dir_all(&n);
    let _ = std::fs::remove_dir_all(&d);
}

/// `--energy` on block-scaled GEMMs: the multipliers are charged the 45 nm table's FP
/// multiply for the element format (an exponent adder of the exponent's width at Horowitz's
/// 0.03 pJ per 8 bits, and a significand array interpolated log-log in `p_a * p_b` through
/// FP16 and FP32 less their exponent adders), per toggle of half the elements' bits; MXFP4's
/// arithmetic costs less per MAC than MXFP8's.
#[test]
fn gemm_mx_energy() {
    let mut per_mac = Vec::new();
    for (fmt, sig, e, bits) in [
        (BlockFormat::MxFp8E4M3, 4u32, 4u32, 8u32),
        (BlockFormat::MxFp4, 2, 2, 4),
    ] {
        let d = scratch("gemm_mx_energy", fmt.name());
        write_problem(&d, fmt, (8, 8, 64), 11);
        let o = tcrtl(&[
            "gemm",
            "--format",
            fmt.name(),
            "--a",
            &p(&d, "a.npy"),
            "--b",
            &p(&d, "b.npy"),
            "--a-scales",
            &p(&d, "sa.npy"),
            "--b-scales",
            &p(&d, "sb.npy"),
            "--energy",
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let exp_add = |bits: u32| 0.03 * f64::from(bits) / 8.0;
        let k = ((3.7 - exp_add(8)) / (1.1 - exp_add(5))).ln() / (576.0f64 / 121.0).ln();
        let mul = (1.1 - exp_add(5)) * (f64::from(sig * sig) / 121.0).powf(k) + exp_add(e);
        let each = j["energy"]["by_block"]["multipliers"]["pj_each"]
            .as_f64()
            .expect("pj_each");
        assert!(
            (each - mul / f64::from(bits)).abs() < 1e-12,
            "{fmt}: {each}"
        );
        let b = &j["energy"]["by_block"];
        let arith = b["multipliers"]["pj"].as_f64().unwrap() + b["adders"]["pj"].as_f64().unwrap();
        per_mac.push(arith / j["energy"]["macs"].as_f64().unwrap());
        let _ = std::fs::remove_dir_all(&d);
    }
    assert!(per_mac[1] < per_mac[0], "{per_mac:?}");
}

/// A block-scaled GEMM's estimate counts the same with no waveform (every register and the
/// arithmetic units' inputs, counted at the registers) as with a SAIF (every bit of every
/// signal, from snapshots), on both dataflows.
#[test]
fn mx_energy_counts_the_same_every_way() {
    let d = scratch("gemm_mx_energy", "every_way");
    write_problem(&d, BlockFormat::MxFp8E4M3, (8, 8, 64), 5);
    let (a, b, sa, sb) = (
        p(&d, "a.npy"),
        p(&d, "b.npy"),
        p(&d, "sa.npy"),
        p(&d, "sb.npy"),
    );
    let saif = p(&d, "run.saif");
    for dataflow in ["os", "ws"] {
        let run = |extra: &[&str]| -> serde_json::Value {
            let mut args = vec![
                "gemm",
                "--format",
                "mxfp8e4m3",
                "--a",
                &a,
                "--b",
                &b,
                "--a-scales",
                &sa,
                "--b-scales",
                &sb,
                "--dataflow",
                dataflow,
                "--width",
                "32",
                "--energy",
                "--json",
            ];
            args.extend(extra);
            let o = tcrtl(&args);
            assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
            serde_json::from_slice(&o.stdout).expect("json")
        };
        let plain = run(&[]);
        let full = run(&["--saif", &saif]);
        assert_eq!(
            plain["energy"]["by_block"], full["energy"]["by_block"],
            "{dataflow}"
        );
        let muls = plain["energy"]["by_block"]["multipliers"]["count"].as_u64();
        assert!(muls.is_some_and(|m| m > 0), "{dataflow}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `--energy` on block-scaled GEMMs in `--dataflow ws` (MXFP8, MXFP4 and MXINT8 at width
/// 32, NVFP4 at 16, its tensor scales given): the multipliers are charged the same figure as
/// in `os` (the element format's multiply per half the elements' bits; MXINT8 an INT8
/// multiply), the accumulator block's adders an FP32 add per 32 input toggles, every block
/// has events where the ws core has them, and the blocks add up to the total.
#[test]
fn gemm_mx_energy_in_ws() {
    let exp_add = |bits: u32| 0.03 * f64::from(bits) / 8.0;
    let k = ((3.7 - exp_add(8)) / (1.1 - exp_add(5))).ln() / (576.0f64 / 121.0).ln();
    let fp_mul =
        |sig: u32, e: u32| (1.1 - exp_add(5)) * (f64::from(sig * sig) / 121.0).powf(k) + exp_add(e);
    for (fmt, width, mul, bits) in [
        (BlockFormat::MxFp8E4M3, "32", fp_mul(4, 4), 8u32),
        (BlockFormat::MxFp4, "32", fp_mul(2, 2), 4),
        (BlockFormat::MxInt8, "32", 0.2, 8),
        (BlockFormat::NvFp4, "16", fp_mul(2, 2), 4),
    ] {
        let d = scratch("gemm_mx_energy_ws", fmt.name());
        let (qa, qb, _) = write_problem(&d, fmt, (6, 8, 64), 13);
        let mut args: Vec<String> = [
            "gemm",
            "--format",
            fmt.name(),
            "--a",
            &p(&d, "a.npy"),
            "--b",
            &p(&d, "b.npy"),
            "--a-scales",
            &p(&d, "sa.npy"),
            "--b-scales",
            &p(&d, "sb.npy"),
            "--width",
            width,
            "--dataflow",
            "ws",
            "--energy",
            "--json",
        ]
        .map(String::from)
        .to_vec();
        if let (Some(ta), Some(tb)) = (qa.tensor_scale, qb.tensor_scale) {
            args.extend([
                "--a-tensor-scale".into(),
                format!("{ta:#010x}"),
                "--b-tensor-scale".into(),
                format!("{tb:#010x}"),
            ]);
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = tcrtl(&argv);
        assert_eq!(o.status.code(), Some(0), "{fmt}: {}", text(&o.stderr));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let b = &j["energy"]["by_block"];
        let each = |block: &str| b[block]["pj_each"].as_f64().expect("pj_each");
        assert!(
            (each("multipliers") - mul / f64::from(bits)).abs() < 1e-12,
            "{fmt}: {}",
            each("multipliers")
        );
        assert!((each("accumulator") - 0.9 / 32.0).abs() < 1e-12, "{fmt}");
        for block in [
            "multipliers",
            "adders",
            "accumulator",
            "pe_registers",
            "skew",
        ] {
            assert!(b[block]["count"].as_u64().unwrap() > 0, "{fmt}: {block}");
        }
        let sum: f64 = b
            .as_object()
            .unwrap()
            .values()
            .map(|x| x["pj"].as_f64().unwrap())
            .sum();
        let total = j["energy"]["total_pj"].as_f64().unwrap();
        assert!(
            (sum - total).abs() <= 1e-9 * total,
            "{fmt}: {sum} against {total}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// `--dataflow ws` with a block-scaled format: the weight-stationary core at `--width` equal
/// to the block size; the check (in the ws order) finds no mismatch and D equals the library's
/// independent ws reference (`verify::mx_ref::ws_gemm`); another width is refused before
/// anything is written.
#[test]
fn gemm_mx_runs_weight_stationary() {
    use tensorcore_rtl::hw::{CoreConfig, Dataflow};
    let (m, n, k) = (5, 6, 160);
    let d = scratch("gemm-mx", "ws");
    let (qa, qb, c) = write_problem(&d, BlockFormat::MxFp8E4M3, (m, n, k), 77);
    let files = ["a.npy", "b.npy", "sa.npy", "sb.npy", "c.npy", "d.npy"].map(|f| p(&d, f));
    let args = |width: &'static str| {
        vec![
            "gemm".to_string(),
            "--format".into(),
            "mxfp8e4m3".into(),
            "--a".into(),
            files[0].clone(),
            "--b".into(),
            files[1].clone(),
            "--a-scales".into(),
            files[2].clone(),
            "--b-scales".into(),
            files[3].clone(),
            "--c".into(),
            files[4].clone(),
            "--width".into(),
            width.into(),
            "--rows".into(),
            "2".into(),
            "--cols".into(),
            "3".into(),
            "--dataflow".into(),
            "ws".into(),
            "--out".into(),
            files[5].clone(),
            "--check".into(),
            "--json".into(),
        ]
    };
    let run = |width| {
        let a = args(width);
        tcrtl(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run("32");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(j["dataflow"], "ws");
    assert_eq!(j["check"]["mismatches"], 0, "{j}");
    assert_eq!(
        j["check"]["reference"], "verify::mx_ref and mx_dot fused, in the ws order",
        "{j}"
    );
    // The same D as the library's ws reference on the problem the files hold.
    let mut g = MxGemm::from_quantised(&qa, &qb, c, 32).expect("problem");
    g.cfg = CoreConfig::new(g.cfg.fmt_a, g.cfg.fmt_b, g.cfg.mode, 32)
        .with_array(2, 3)
        .expect("array")
        .with_dataflow(Dataflow::Ws);
    let want = tensorcore_rtl::verify::mx_ref::ws_gemm(&g, 2, 32);
    let out = read_npy(&d.join("d.npy")).expect("D");
    for (i, w) in want.iter().enumerate() {
        assert_eq!(out.word(i) as u32, *w, "D[{i}]");
    }
    std::fs::remove_file(d.join("d.npy")).expect("clean");
    let o = run("8");
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("--width 32") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!d.join("d.npy").exists(), "a refused run wrote D");
    let _ = std::fs::remove_dir_all(&d);
}
