//! The bytes of the waveforms the project writes, pinned: every testbench's VCD and a `gemm
//! --vcd` run of every mode, width class, output format and memory path (a block-scaled one
//! from fixed codes written here) are hashed and
//! compared with `tests/data/wave_digests.txt`, recorded from the design before its
//! restructuring (the refactor must not move one byte of any waveform).
//!
//! A deliberate change of the waves is recorded with `TCRTL_BLESS_WAVES=1 cargo test --test hw
//! wave_digests::`, and the commit that does it lists the signals that changed.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::cli::{scratch, tcrtl, text};
use tensorcore_rtl::io::npy::{write_npy, Dtype};

/// FNV-1a over the bytes, 64 bits, with the length beside it: a change detector (not a
/// cryptographic hash; the file is ours and nobody forges it).
fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x} {}", bytes.len())
}

/// The `gemm` runs whose waves are pinned: (name, arguments before `--vcd`).
const GEMM_RUNS: &[(&str, &[&str])] = &[
    ("fp16_ieee_w1", &["--m", "8", "--n", "8", "--k", "8"]),
    (
        "fp16_ieee_w4_odd",
        &["--m", "5", "--n", "7", "--k", "19", "--width", "4"],
    ),
    (
        "bf16_fused_w8",
        &[
            "--m", "8", "--n", "4", "--k", "32", "--format", "bf16", "--acc", "fused", "--width",
            "8",
        ],
    ),
    (
        "e4m3_nvidia_hopper_w1",
        &[
            "--m", "4", "--n", "4", "--k", "64", "--format", "e4m3", "--acc", "nvidia", "--preset",
            "hopper",
        ],
    ),
    (
        "e5m2_nvidia_ada_w16",
        &[
            "--m", "4", "--n", "8", "--k", "64", "--format", "e5m2", "--acc", "nvidia", "--preset",
            "ada", "--width", "16",
        ],
    ),
    (
        "tf32_ieee_w4",
        &[
            "--m", "4", "--n", "4", "--k", "16", "--format", "tf32", "--width", "4",
        ],
    ),
    (
        "fp16_out_fp16_w2",
        &[
            "--m",
            "8",
            "--n",
            "8",
            "--k",
            "16",
            "--width",
            "2",
            "--out-format",
            "fp16",
        ],
    ),
    (
        "s8_int_w4",
        &[
            "--m", "8", "--n", "8", "--k", "16", "--format", "s8", "--width", "4",
        ],
    ),
    (
        "u4_int_sat_w8",
        &[
            "--m",
            "4",
            "--n",
            "4",
            "--k",
            "32",
            "--format",
            "u4",
            "--width",
            "8",
            "--satfinite",
        ],
    ),
    (
        "sparse_fp16_w2",
        &[
            "--m", "8", "--n", "8", "--k", "32", "--sparse", "--width", "2",
        ],
    ),
    (
        "sparse_e4m3_nvidia_w8",
        &[
            "--m", "4", "--n", "4", "--k", "64", "--sparse", "--format", "e4m3", "--acc", "nvidia",
            "--preset", "hopper", "--width", "8",
        ],
    ),
    (
        "tma_fp16_w1",
        &["--m", "8", "--n", "8", "--k", "32", "--memory", "tma"],
    ),
    (
        "tma_fp16_out_w4",
        &[
            "--m",
            "8",
            "--n",
            "8",
            "--k",
            "32",
            "--memory",
            "tma",
            "--width",
            "4",
            "--out-format",
            "fp16",
            "--mem-latency",
            "7",
        ],
    ),
    (
        "tma_s8_w4",
        &[
            "--m", "8", "--n", "8", "--k", "32", "--memory", "tma", "--format", "s8", "--width",
            "4",
        ],
    ),
    (
        "fp16_ieee_w1_8x8",
        &[
            "--m", "16", "--n", "12", "--k", "9", "--rows", "8", "--cols", "8",
        ],
    ),
    (
        "e4m3_fused_w4_3x5",
        &[
            "--m", "7", "--n", "11", "--k", "12", "--format", "e4m3", "--acc", "fused", "--width",
            "4", "--rows", "3", "--cols", "5",
        ],
    ),
    (
        "fp16_ieee_w2_1x1",
        &[
            "--m", "2", "--n", "3", "--k", "5", "--width", "2", "--rows", "1", "--cols", "1",
        ],
    ),
    (
        "fp16_ieee_w1_ws",
        &["--m", "9", "--n", "6", "--k", "11", "--dataflow", "ws"],
    ),
    (
        "e4m3_fused_w4_ws_3x5",
        &[
            "--m",
            "7",
            "--n",
            "11",
            "--k",
            "30",
            "--format",
            "e4m3",
            "--acc",
            "fused",
            "--width",
            "4",
            "--rows",
            "3",
            "--cols",
            "5",
            "--dataflow",
            "ws",
        ],
    ),
    (
        "sparse_fp16_w2_ws",
        &[
            "--m",
            "9",
            "--n",
            "6",
            "--k",
            "24",
            "--sparse",
            "--width",
            "2",
            "--dataflow",
            "ws",
        ],
    ),
    (
        "tma_sparse_fp16_w2",
        &[
            "--m", "8", "--n", "8", "--k", "64", "--memory", "tma", "--sparse", "--width", "2",
        ],
    ),
    (
        "tma_fp16_w1_ws_3x5",
        &[
            "--m",
            "7",
            "--n",
            "9",
            "--k",
            "20",
            "--memory",
            "tma",
            "--dataflow",
            "ws",
            "--rows",
            "3",
            "--cols",
            "5",
            "--mem-latency",
            "40",
        ],
    ),
    // The os memory path beyond the sizes its 16-byte box rows held (issue 21): 3 x 5 FP32
    // (a box of four 5-column tiles, 80 bytes a row), 32 x 1 (a step of 33 lanes: two
    // beats), and 2:4 sparse on 3 x 6 (the tall stage).
    (
        "tma_fp16_w1_os_3x5",
        &[
            "--m",
            "7",
            "--n",
            "11",
            "--k",
            "20",
            "--memory",
            "tma",
            "--rows",
            "3",
            "--cols",
            "5",
            "--mem-latency",
            "40",
        ],
    ),
    (
        "tma_fp16_w1_os_32x1",
        &[
            "--m",
            "33",
            "--n",
            "2",
            "--k",
            "12",
            "--memory",
            "tma",
            "--rows",
            "32",
            "--cols",
            "1",
            "--mem-latency",
            "40",
        ],
    ),
    (
        "tma_sparse_fp16_w2_os_3x6",
        &[
            "--m",
            "5",
            "--n",
            "7",
            "--k",
            "32",
            "--memory",
            "tma",
            "--sparse",
            "--width",
            "2",
            "--rows",
            "3",
            "--cols",
            "6",
            "--mem-latency",
            "40",
        ],
    ),
    (
        "tma_sparse_fp16_w1_ws_3x5",
        &[
            "--m",
            "7",
            "--n",
            "9",
            "--k",
            "24",
            "--memory",
            "tma",
            "--sparse",
            "--dataflow",
            "ws",
            "--rows",
            "3",
            "--cols",
            "5",
            "--mem-latency",
            "40",
        ],
    ),
];

fn expected() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wave_digests.txt");
    let body = std::fs::read_to_string(&path).unwrap_or_default();
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn record(got: &BTreeMap<String, String>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wave_digests.txt");
    let mut body = String::from(
        "# name fnv1a64 bytes: the VCDs of tests/hw/wave_digests.rs (TCRTL_BLESS_WAVES=1 rewrites)\n",
    );
    for (k, v) in got {
        body.push_str(&format!("{k} {v}\n"));
    }
    std::fs::write(path, body).expect("write digests");
}

#[test]
fn waveform_bytes_are_unchanged() {
    let dir = scratch("digests", "all");
    let mut got = BTreeMap::new();

    let tb_dir = dir.join("tb");
    let o = tcrtl(&["tb", "run", "all", "--waves", tb_dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mut vcds: Vec<_> = std::fs::read_dir(&tb_dir)
        .expect("waves dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "vcd"))
        .collect();
    vcds.sort();
    assert!(vcds.len() >= 20, "{} testbench waveforms", vcds.len());
    for p in vcds {
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        got.insert(
            format!("tb/{name}"),
            digest(&std::fs::read(&p).expect("vcd")),
        );
    }

    for (name, args) in GEMM_RUNS {
        let vcd = dir.join(format!("{name}.vcd"));
        let mut all: Vec<&str> = vec!["gemm"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--vcd", vcd.to_str().unwrap()]);
        let o = tcrtl(&all);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o.stderr));
        got.insert(
            format!("gemm/{name}"),
            digest(&std::fs::read(&vcd).expect("vcd")),
        );
    }
    // A block-scaled run through the output-stationary memory port: MXFP8 (E4M3) 6 x 5 x 160
    // at w = 8, two chunks (the scales of each loaded beside its operands), from fixed codes.
    let (m, n, k) = (6usize, 5usize, 160usize);
    let code = |i: usize| ((i * 37 + 11) % 256) as u64 & !0x01;
    let files = [
        ("a", vec![m, k], (0..m * k).map(code).collect::<Vec<u64>>()),
        ("b", vec![k, n], (0..k * n).map(|i| code(i + 5)).collect()),
        (
            "sa",
            vec![m, k / 32],
            (0..m * k / 32).map(|i| 120 + (i % 13) as u64).collect(),
        ),
        (
            "sb",
            vec![k / 32, n],
            (0..k / 32 * n).map(|i| 122 + (i % 9) as u64).collect(),
        ),
    ];
    let mut paths = Vec::new();
    for (name, shape, codes) in &files {
        let path = dir.join(format!("mx_{name}.npy"));
        write_npy(&path, shape, Dtype::U8, codes).expect("npy");
        paths.push(path.to_str().unwrap().to_string());
    }
    let vcd = dir.join("tma_mxfp8_w8_os.vcd");
    let o = tcrtl(&[
        "gemm",
        "--format",
        "mxfp8e4m3",
        "--a",
        &paths[0],
        "--b",
        &paths[1],
        "--a-scales",
        &paths[2],
        "--b-scales",
        &paths[3],
        "--width",
        "8",
        "--memory",
        "tma",
        "--mem-latency",
        "40",
        "--vcd",
        vcd.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "mx: {}", text(&o.stderr));
    got.insert(
        "gemm/tma_mxfp8_w8_os".into(),
        digest(&std::fs::read(&vcd).expect("vcd")),
    );
    let _ = std::fs::remove_dir_all(&dir);

    if std::env::var_os("TCRTL_BLESS_WAVES").is_some() {
        record(&got);
        return;
    }
    let want = expected();
    let mut diffs = Vec::new();
    for (k, v) in &got {
        match want.get(k) {
            Some(w) if w == v => {}
            Some(w) => diffs.push(format!("{k}: got {v}, pinned {w}")),
            None => diffs.push(format!("{k}: not pinned (got {v})")),
        }
    }
    for k in want.keys().filter(|k| !got.contains_key(*k)) {
        diffs.push(format!("{k}: pinned but not produced"));
    }
    assert!(
        diffs.is_empty(),
        "waveform bytes changed:\n{}",
        diffs.join("\n")
    );
}
