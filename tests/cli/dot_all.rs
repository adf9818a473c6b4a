//! `tcrtl dot --acc all`: one row per mode and per preset that takes the formats (the preset
//! table of docs/numerics.md), each equal to the single-mode command; `exact` equal to the
//! big-integer reference in every rounding direction; refusals.

use std::process::{Command, Output};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, FP16};
use tensorcore_rtl::verify::exact::{exact_dot_rounding, RefRounding};

fn tcrtl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(args)
        .output()
        .expect("run tcrtl")
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = tcrtl(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("json")
}

/// (format, A, B, C, the presets docs/numerics.md lists for the format).
const CASES: [(&str, &str, &str, &str, &[&str]); 3] = [
    (
        "fp16",
        "0x3c00,0x3c00,0x3c00,0x3c00,0x3c00",
        "0x4000,0x0001,0x0003,0x3c00,0xbc00",
        "0x3f800001",
        &[
            "volta",
            "ampere",
            "ada",
            "hopper",
            "blackwell",
            "h200",
            "turing",
            "cdna1",
            "cdna2",
            "cdna3",
        ],
    ),
    (
        "bf16",
        "0x3f80,0x3f81,0x0001",
        "0x3f80,0xbf80,0x3f80",
        "0x33800000",
        &[
            "ampere",
            "ada",
            "hopper",
            "blackwell",
            "h200",
            "cdna1",
            "cdna2",
            "cdna3",
        ],
    ),
    (
        "e4m3",
        "0x38,0x01,0x7e,0xfe",
        "0x38,0x01,0x38,0x38",
        "0x3f800000",
        &["ada", "hopper", "blackwell", "h200"],
    ),
];

fn fmt(name: &str) -> Format {
    match name {
        "fp16" => FP16,
        "bf16" => BF16,
        _ => E4M3,
    }
}

fn words(list: &str) -> Vec<u64> {
    list.split(',')
        .map(|w| u64::from_str_radix(w.trim_start_matches("0x"), 16).expect("hex"))
        .collect()
}

#[test]
fn every_mode_and_supporting_preset_side_by_side() {
    for (format, a, b, c, presets) in CASES {
        for rounding in ["rne", "rtz", "rdn", "rup"] {
            let base = [
                "dot",
                "--format",
                format,
                "--a",
                a,
                "--b",
                b,
                "--c",
                c,
                "--rounding",
                rounding,
            ];
            let mut all = base.to_vec();
            all.extend(["--acc", "all", "--json"]);
            let list = json(&all);
            let list = list.as_array().expect("a JSON list");
            let names: Vec<(String, Option<String>)> = list
                .iter()
                .map(|r| {
                    (
                        r["acc"].as_str().unwrap().to_string(),
                        r["preset"].as_str().map(String::from),
                    )
                })
                .collect();
            let mut expect: Vec<(String, Option<String>)> = ["ieee", "fused", "exact"]
                .iter()
                .map(|m| (m.to_string(), None))
                .collect();
            expect.extend(
                presets
                    .iter()
                    .map(|p| ("nvidia".to_string(), Some(p.to_string()))),
            );
            assert_eq!(names, expect, "{format}");
            for row in list {
                let mut one = base.to_vec();
                let acc = row["acc"].as_str().unwrap();
                if let Some(p) = row["preset"].as_str() {
                    // The presets keep their own rounding: run them with the default.
                    one.truncate(one.len() - 2);
                    one.extend(["--acc", acc, "--preset", p, "--json"]);
                    assert_eq!(row["rounding"], "gpu");
                } else {
                    one.extend(["--acc", acc, "--json"]);
                    assert_eq!(row["rounding"], rounding);
                }
                let single = json(&one);
                assert_eq!(row["bits"], single["bits"], "{one:?}");
                assert_eq!(row["flags"], single["flags"], "{one:?}");
            }
            // exact, against the big-integer reference.
            let mode = match rounding {
                "rne" => RefRounding::NearestEven,
                "rtz" => RefRounding::TowardZero,
                "rdn" => RefRounding::Down,
                _ => RefRounding::Up,
            };
            let c = u32::from_str_radix(c.trim_start_matches("0x"), 16).unwrap();
            let (bits, _) =
                exact_dot_rounding(fmt(format), fmt(format), &words(a), &words(b), c, mode);
            assert_eq!(
                list[2]["bits"],
                format!("0x{bits:08x}"),
                "{format} {rounding}"
            );
        }
    }
}

#[test]
fn table_has_a_row_per_mode() {
    let o = tcrtl(&[
        "dot", "--acc", "all", "--format", "e5m2", "--a", "1,2", "--b", "3,4",
    ]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 7, "{text}"); // header, ieee, fused, exact, ada, hopper, blackwell, h200
    assert!(lines[0].starts_with("acc"));
    for l in &lines[1..] {
        assert!(l.contains("0x41300000"), "{l}"); // 1*3 + 2*4 = 11 exactly, in every mode
    }
}

#[test]
fn refusals() {
    for (args, needle) in [
        (
            vec![
                "dot", "--acc", "all", "--preset", "hopper", "--a", "1", "--b", "1",
            ],
            "drop --preset",
        ),
        (
            vec![
                "dot", "--acc", "all", "--a", "a.npy", "--b", "b.npy", "--c", "c.npy",
            ],
            "not .npy batches",
        ),
    ] {
        let o = tcrtl(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
        assert_eq!(err.lines().count(), 1);
    }
}
