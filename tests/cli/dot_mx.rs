//! `tcrtl dot` with block-scaled formats: results worked out by hand from the OCP MX and
//! NVFP4 definitions (value = scales x sum of element products, plus C), and one-line errors
//! (exit 2) for malformed operands and scales.

use crate::common::cli::{assert_error, tcrtl};

/// Runs `dot` and returns the FP32 result of its JSON line.
fn value(args: &[&str]) -> f64 {
    let mut all = vec!["dot", "--json"];
    all.extend_from_slice(args);
    let o = tcrtl(&all);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("one JSON object on stdout");
    v["value"].as_f64().expect("a finite value")
}

#[test]
fn hand_worked_block_scaled_dot_products() {
    // MXFP8 E4M3, one block of 32: A = 1 (scale 2^0), B = 0x40 = 2 (scale 2): 32 x 2 x 2 + 0.5.
    let ones = vec!["1"; 32].join(",");
    let twos = vec!["0x40"; 32].join(",");
    let d = value(&[
        "--format",
        "mxfp8e4m3",
        "--acc",
        "fused",
        "--a",
        &ones,
        "--b",
        &twos,
        "--a-scales",
        "0x7f",
        "--b-scales",
        "2",
        "--c",
        "0.5",
    ]);
    assert_eq!(d, 128.5);
    // MXFP4: (6 x 6 + (-0.5) x 1) x 2^0 x 2^-2.
    let d = value(&[
        "--format",
        "mxfp4",
        "--acc",
        "exact",
        "--a",
        "6,-0.5",
        "--b",
        "6,1",
        "--a-scales",
        "0x7f",
        "--b-scales",
        "0.25",
    ]);
    assert_eq!(d, 8.875);
    // MXINT8 codes are q x 2^-6: (64 x 64 + (-128) x 1) / 4096.
    let d = value(&[
        "--format",
        "mxint8",
        "--acc",
        "exact",
        "--a",
        "64,-128",
        "--b",
        "64,1",
        "--a-scales",
        "0x7f",
        "--b-scales",
        "0x7f",
    ]);
    assert_eq!(d, 0.96875);
    // NVFP4: E4M3 block scales 2 and 0.5, tensor scale 4 on A: (1 x 3 + 2 x 4) x 2 x 0.5 x 4.
    let d = value(&[
        "--format",
        "nvfp4",
        "--acc",
        "fused",
        "--a",
        "1,2",
        "--b",
        "3,4",
        "--a-scales",
        "2",
        "--b-scales",
        "0.5",
        "--a-tensor-scale",
        "4",
    ]);
    assert_eq!(d, 44.0);
    // MXFP6 E2M3, block-rz: (7.5 x 0.125 + (-0) x 3) x 2^1 x 2^-1 - 1.
    let d = value(&[
        "--format",
        "mxfp6e2m3",
        "--acc",
        "block-rz",
        "--a",
        "7.5,-0",
        "--b",
        "0.125,3",
        "--a-scales",
        "0x80",
        "--b-scales",
        "0x7e",
        "--c",
        "-1",
    ]);
    assert_eq!(d, -0.0625);
    // Two blocks of MXFP8 E5M2 (K = 33), the second scaled by 2^3: 32 x 1 + 1 x 8.
    let a = vec!["1"; 33].join(",");
    let d = value(&[
        "--format",
        "mxfp8e5m2",
        "--acc",
        "fused",
        "--a",
        &a,
        "--b",
        &a,
        "--a-scales",
        "1,8",
        "--b-scales",
        "1,1",
    ]);
    assert_eq!(d, 40.0);
}

#[test]
fn malformed_block_scaled_input_is_a_clear_error() {
    let base = ["dot", "--format", "mxfp4", "--acc", "fused"];
    let case = |extra: &[&str], needle: &str| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        assert_error(&tcrtl(&args), needle);
    };
    case(
        &[
            "--a",
            "1,nan",
            "--b",
            "1,1",
            "--a-scales",
            "1",
            "--b-scales",
            "1",
        ],
        "no NaN",
    );
    case(
        &[
            "--a",
            "0.7",
            "--b",
            "1",
            "--a-scales",
            "1",
            "--b-scales",
            "1",
        ],
        "not exactly",
    );
    case(
        &[
            "--a",
            "1,1",
            "--b",
            "1,1",
            "--a-scales",
            "1,1",
            "--b-scales",
            "1",
        ],
        "1 scale(s)",
    );
    case(
        &["--a", "1", "--b", "1", "--a-scales", "3", "--b-scales", "1"],
        "power of two",
    );
    case(
        &[
            "--a",
            "1",
            "--b",
            "1",
            "--a-scales",
            "0x1ff",
            "--b-scales",
            "1",
        ],
        "E8M0",
    );
    case(
        &[
            "--a",
            "1",
            "--b",
            "1,1",
            "--a-scales",
            "1",
            "--b-scales",
            "1",
        ],
        "--b has 2",
    );
    case(
        &[
            "--a",
            "1",
            "--b",
            "1",
            "--a-scales",
            "1",
            "--b-scales",
            "1",
            "--preset",
            "hopper",
        ],
        "--preset does not apply",
    );
    case(
        &[
            "--a",
            "1",
            "--b",
            "1",
            "--a-scales",
            "1",
            "--b-scales",
            "1",
            "--a-tensor-scale",
            "2",
        ],
        "nvfp4 only",
    );
    assert_error(
        &tcrtl(&[
            "dot",
            "--format",
            "mxfp4",
            "--a",
            "1",
            "--b",
            "1",
            "--a-scales",
            "1",
            "--b-scales",
            "1",
        ]),
        "--acc exact, fused or block-rz",
    );
    // NVFP4 block scales are unsigned E4M3 (as gemm requires too).
    assert_error(
        &tcrtl(&[
            "dot",
            "--format",
            "nvfp4",
            "--acc",
            "fused",
            "--a",
            "1",
            "--b",
            "1",
            "--a-scales",
            "-2",
            "--b-scales",
            "1",
        ]),
        "unsigned E4M3",
    );
    assert_error(
        &tcrtl(&[
            "dot",
            "--format",
            "fp16",
            "--a",
            "1",
            "--b",
            "1",
            "--a-scales",
            "1",
        ]),
        "apply to block-scaled formats",
    );
    assert_error(
        &tcrtl(&[
            "dot",
            "--format",
            "mxfp4",
            "--format-b",
            "fp16",
            "--acc",
            "fused",
            "--a",
            "1",
            "--b",
            "1",
        ]),
        "pairs only with another block-scaled format",
    );
}
