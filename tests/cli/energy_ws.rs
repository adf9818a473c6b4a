//! `--energy` on the weight-stationary core (`--dataflow ws`): a hand-worked case whose every
//! arithmetic count this file derives itself (and checks against the waves), the counts of a
//! random run recomputed from its VCD, the properties the model must show (zero operands
//! cost less, narrower formats cost less, energy adds up over column tiles within the
//! counted boundary), the JSON in every mode the core runs, and the power in the waves.
//!
//! The ws blocks (`docs/energy.md`, "The weight-stationary core"): multipliers charged by
//! the toggles of each PE's multiplier operands `a_mul`, `w_mul` (energy probes, 0 when the
//! PE forms no product); the PEs' adders by `s1_prod` and the partial sum from above
//! `psum_in`; the accumulator block's adders (`accumulator`) by `add_psum_<j>` and
//! `add_acc_<j>`; registers by scope.

use super::energy::{
    block, close, energy_json, gemm, random_matrix, var_width, vcd_real_sums, vcd_toggles,
    FP16_MUL, FP32_ADD, REG_BIT,
};
use crate::common::cli::{p, scratch};
use crate::common::Rng;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The skews and delay lines of the ws core (charged to `skew`).
const WS_SKEWS: [&str; 8] = [
    "a_skew",
    "w_skew",
    "tag_delay",
    "acc_skew",
    "d_deskew",
    "meta_skew",
    "xa_skew",
    "xb_skew",
];

/// Toggles of the variables of `vars` (from [`vcd_toggles`]) whose name and register-ness
/// pass `f`.
fn sum(vars: &BTreeMap<String, (bool, u64)>, f: impl Fn(&str, bool) -> bool) -> u64 {
    vars.iter()
        .filter(|(n, (reg, _))| f(n, *reg))
        .map(|(_, (_, t))| t)
        .sum()
}

fn leaf(n: &str) -> &str {
    n.rsplit('.').next().unwrap()
}

fn in_pe(n: &str) -> bool {
    n.contains(".mesh.pe_")
}

fn in_skew(n: &str) -> bool {
    WS_SKEWS.iter().any(|s| n.contains(&format!(".{s}.")))
}

/// Every block's energy in the JSON, summed.
fn blocks_total(j: &Value) -> f64 {
    j["energy"]["by_block"]
        .as_object()
        .expect("by_block")
        .values()
        .map(|b| b["pj"].as_f64().expect("pj"))
        .sum()
}

/// The arithmetic energy (multipliers, the PEs' adders, the accumulator block's adders).
fn arithmetic(j: &Value) -> f64 {
    block(j, "multipliers").0 + block(j, "adders").0 + block(j, "accumulator").0
}

/// Worked by hand: A (4 x 8) and B (8 x 4) all FP16 1.0 (`0x3c00`, four bits set), C all
/// FP32 1.0 (`0x3f800000`, seven bits), on the 4 x 4 ws core: two folds of K, one pass each,
/// the second's rows right behind the first's, 128 products.
///
/// - Multipliers: each PE's `a_mul` goes 0 -> 1.0, holds for the 8 rows of both passes,
///   returns to 0 (8 toggles); `w_mul` the same (both passes' weights are 1.0): 16 x 16 =
///   256 operand toggles at 1.1 / ((16 + 16) / 2) pJ = 17.6 pJ, where 128 multiplies of
///   random operands would cost 140.8 pJ.
/// - The PEs' adders: `psum_in` of rows 1, 2, 3 carries 1.0, 2.0, 3.0 (`0x3f800000`,
///   `0x40000000`, `0x40400000`: 7, 1, 2 bits) for the 8 rows, there and back: 2 x 10 = 20
///   toggles a column, 80; row 0's is the identity, constant. Plus `s1_prod`'s toggles (the
///   product register's internal format: read from the waves), at 0.9 / ((64 + 32) / 2).
/// - The accumulator block, per column: `add_psum` carries 4.0 (`0x40800000`, 2 bits) for
///   both folds: 4 toggles; `add_acc` carries C = 1.0 on the first fold, then the stored
///   5.0 (`0x40a00000`, 3 bits): 7 + popcount(0x3f800000 ^ 0x40a00000) + 3 = 18. 4 x 22 =
///   88 toggles at 0.9 / 32 pJ.
/// - Registers: every register bit toggle at 0.03 / 8 pJ, by scope, counted from the waves.
#[test]
fn a_hand_worked_ws_gemm_costs_what_the_count_says() {
    let d = scratch("energy_ws", "hand");
    let row = |n: usize, v: &str| vec![v; n].join(" ");
    let mat = |r: usize, c: usize, v: &str| format!("{}\n", vec![row(c, v); r].join("\n"));
    std::fs::write(d.join("a.txt"), mat(4, 8, "0x3c00")).unwrap();
    std::fs::write(d.join("b.txt"), mat(8, 4, "0x3c00")).unwrap();
    std::fs::write(d.join("c.txt"), mat(4, 4, "1.0")).unwrap();
    let vcd = p(&d, "hand.vcd");
    let j = energy_json(&[
        "gemm",
        "--a",
        &p(&d, "a.txt"),
        "--b",
        &p(&d, "b.txt"),
        "--c",
        &p(&d, "c.txt"),
        "--dataflow",
        "ws",
        "--vcd",
        &vcd,
    ]);
    let vars = vcd_toggles(Path::new(&vcd));

    // The hand counts, and the waves agree with them signal by signal.
    let ones = |w: u32| w.count_ones() as u64;
    let mul_hand = 16 * (2 * 4 + 2 * 4);
    let psum_in_hand = 4 * 2 * (ones(0x3f80_0000) + ones(0x4000_0000) + ones(0x4040_0000));
    let add_psum_hand = 4 * 2 * ones(0x4080_0000);
    let add_acc_hand =
        4 * (ones(0x3f80_0000) + ones(0x3f80_0000 ^ 0x40a0_0000) + ones(0x40a0_0000));
    assert_eq!((mul_hand, psum_in_hand), (256, 80));
    assert_eq!((add_psum_hand, add_acc_hand), (16, 72));
    let waves = |names: &[&str]| sum(&vars, |n, _| names.contains(&leaf(n)));
    assert_eq!(waves(&["a_mul", "w_mul"]), mul_hand);
    assert_eq!(waves(&["psum_in"]), psum_in_hand);
    let add_psum = sum(&vars, |n, _| leaf(n).starts_with("add_psum_"));
    let add_acc = sum(&vars, |n, _| leaf(n).starts_with("add_acc_"));
    assert_eq!((add_psum, add_acc), (add_psum_hand, add_acc_hand));
    let s1_prod = sum(&vars, |n, _| in_pe(n) && leaf(n) == "s1_prod");
    assert!(s1_prod > 0);

    // Each block: its count times the figure this file derives from Horowitz's table.
    let product_bits = f64::from(var_width(Path::new(&vcd), "s1_prod"));
    assert_eq!(product_bits, 64.0);
    let mul_each = FP16_MUL / ((16.0 + 16.0) / 2.0);
    let add_each = FP32_ADD / ((product_bits + 32.0) / 2.0);
    let acc_each = FP32_ADD / 32.0;
    let pe_regs = sum(&vars, |n, reg| reg && n.contains(".mesh."));
    let skew = sum(&vars, |n, reg| reg && in_skew(n));
    let all_regs = sum(&vars, |_, reg| reg);
    let want: [(&str, u64, f64); 6] = [
        ("multipliers", mul_hand, mul_each),
        ("adders", psum_in_hand + s1_prod, add_each),
        ("accumulator", add_psum_hand + add_acc_hand, acc_each),
        ("pe_registers", pe_regs, REG_BIT),
        ("skew", skew, REG_BIT),
        ("controller", all_regs - pe_regs - skew, REG_BIT),
    ];
    let mut total = 0.0;
    for (name, count, each) in want {
        let (pj, n) = block(&j, name);
        assert_eq!(n, count, "{name}");
        assert!(close(pj, count as f64 * each), "{name}: {pj}");
        total += count as f64 * each;
    }
    assert!(close(block(&j, "multipliers").0, 17.6));
    assert!(close(block(&j, "accumulator").0, 88.0 * 0.9 / 32.0));
    for b in ["shared_memory", "global_memory", "tma", "memory_control"] {
        assert_eq!(block(&j, b), (0.0, 0), "{b}");
    }
    let e = &j["energy"];
    assert_eq!(e["macs"], 128);
    assert!(close(e["total_pj"].as_f64().unwrap(), total));
    assert!(close(e["pj_per_mac"].as_f64().unwrap(), total / 128.0));
    let cycles = j["cycles"].as_f64().unwrap();
    assert!(close(
        e["power_w"].as_f64().unwrap(),
        total * 1e-12 / (cycles * 1e-9)
    ));
    std::fs::remove_dir_all(&d).ok();
}

/// A random FP16 run on a 3 x 5 array (several column tiles and folds, K not a multiple of
/// R): every count of the estimate equals what this file's VCD reader adds up from the same
/// run's waves.
#[test]
fn ws_counts_match_the_vcd() {
    let d = scratch("energy_ws", "vcd");
    let vcd = p(&d, "run.vcd");
    let j = gemm(
        7,
        9,
        23,
        &[
            "--dataflow",
            "ws",
            "--rows",
            "3",
            "--cols",
            "5",
            "--vcd",
            &vcd,
        ],
    );
    let vars = vcd_toggles(Path::new(&vcd));
    let mul = sum(&vars, |n, _| {
        in_pe(n) && ["a_mul", "w_mul"].contains(&leaf(n))
    });
    let add = sum(&vars, |n, _| {
        in_pe(n) && ["s1_prod", "psum_in"].contains(&leaf(n))
    });
    let acc = sum(&vars, |n, _| {
        n.contains(".accum.")
            && (leaf(n).starts_with("add_psum_") || leaf(n).starts_with("add_acc_"))
    });
    let pe_regs = sum(&vars, |n, reg| reg && n.contains(".mesh."));
    let skew = sum(&vars, |n, reg| reg && in_skew(n));
    let all_regs = sum(&vars, |_, reg| reg);
    assert!(mul > 0 && add > 0 && acc > 0 && pe_regs > 0 && skew > 0);
    assert_eq!(block(&j, "multipliers").1, mul);
    assert_eq!(block(&j, "adders").1, add);
    assert_eq!(block(&j, "accumulator").1, acc);
    assert_eq!(block(&j, "pe_registers").1, pe_regs);
    assert_eq!(block(&j, "skew").1, skew);
    assert_eq!(block(&j, "controller").1, all_regs - pe_regs - skew);
    assert!(close(
        block(&j, "multipliers").0,
        mul as f64 * FP16_MUL / 16.0
    ));
    assert!(close(
        block(&j, "accumulator").0,
        acc as f64 * FP32_ADD / 32.0
    ));
    // The probes are in the waves of an energy run only: without --energy the VCD has none.
    let plain = p(&d, "plain.vcd");
    let o = crate::common::cli::tcrtl(&[
        "gemm",
        "--m",
        "7",
        "--n",
        "9",
        "--k",
        "23",
        "--dataflow",
        "ws",
        "--rows",
        "3",
        "--cols",
        "5",
        "--vcd",
        &plain,
    ]);
    assert!(o.status.success());
    let plain_vars = vcd_toggles(Path::new(&plain));
    assert!(plain_vars
        .keys()
        .all(|n| !["a_mul", "w_mul"].contains(&leaf(n)) && !leaf(n).starts_with("add_")));
    // Every design signal of the plain run is in the energy run with the same toggles.
    for (n, v) in &plain_vars {
        assert_eq!(vars.get(n), Some(v), "{n}");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Zero operands cost less datapath energy than random ones; FP8 < FP16 < TF32 in
/// arithmetic energy per MAC (random operands, the same shape); a weight held for a pass
/// makes the ws multipliers cheaper than the os ones on the same problem.
#[test]
fn ws_zero_and_narrow_operands_cost_less() {
    let shape = [
        "gemm",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "64",
        "--dataflow",
        "ws",
    ];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = shape.to_vec();
        a.extend(extra);
        energy_json(&a)
    };
    let per_mac = |j: &Value| arithmetic(j) / j["energy"]["macs"].as_f64().unwrap();
    let random = with(&[]);
    // A all zero, B random (files).
    let d = scratch("energy_ws", "zero");
    let mut rng = Rng(3);
    std::fs::write(
        d.join("z.txt"),
        vec![vec!["0x0000"; 64].join(" "); 8].join("\n"),
    )
    .unwrap();
    std::fs::write(d.join("b.txt"), random_matrix(&mut rng, 64, 8)).unwrap();
    std::fs::write(d.join("a.txt"), random_matrix(&mut rng, 8, 64)).unwrap();
    let files = |a: &str| {
        energy_json(&[
            "gemm",
            "--a",
            &p(&d, a),
            "--b",
            &p(&d, "b.txt"),
            "--dataflow",
            "ws",
        ])
    };
    let (zero, rand_files) = (files("z.txt"), files("a.txt"));
    assert!(
        per_mac(&zero) < 0.5 * per_mac(&rand_files),
        "{} {}",
        per_mac(&zero),
        per_mac(&rand_files)
    );
    // Zero A: no multiplier A toggles, and nothing leaves the products.
    assert!(block(&zero, "multipliers").1 < block(&rand_files, "multipliers").1 / 4);
    assert!(block(&zero, "pe_registers").0 < block(&rand_files, "pe_registers").0);
    let ones = with(&["--pattern", "ones"]);
    assert!(per_mac(&ones) < per_mac(&random));
    let fp8 = with(&["--format", "e4m3"]);
    let tf32 = with(&["--format", "tf32"]);
    let (f8, f16, t32) = (per_mac(&fp8), per_mac(&random), per_mac(&tf32));
    assert!(f8 < f16 && f16 < t32, "{f8} {f16} {t32}");
    // The same problem on the os core: its B operands stream every step.
    let os = gemm(8, 8, 64, &[]);
    assert!(block(&random, "multipliers").0 < block(&os, "multipliers").0);
    std::fs::remove_dir_all(&d).ok();
}

/// Two GEMMs with the same A and B's two column halves against one GEMM of the whole B (a
/// second column tile): the ws core runs a column tile's passes back to back, so the big run
/// is the two small ones joined at one pass boundary. Their arithmetic energy adds up within
/// that boundary: each arithmetic input of the array can differ there by at most all its
/// bits twice (into and out of the junction in the small runs, one change in the big one),
/// a bound this test counts from the array's input widths.
#[test]
fn ws_energy_adds_up_over_column_tiles() {
    let d = scratch("energy_ws", "additive");
    let mut rng = Rng(11);
    let (m, k) = (6, 64);
    let a = random_matrix(&mut rng, m, k);
    let b1 = random_matrix(&mut rng, k, 4);
    let b2 = random_matrix(&mut rng, k, 4);
    let join: String = b1
        .lines()
        .zip(b2.lines())
        .map(|(x, y)| format!("{x} {y}\n"))
        .collect();
    for (f, s) in [
        ("a.txt", &a),
        ("b1.txt", &b1),
        ("b2.txt", &b2),
        ("b.txt", &join),
    ] {
        std::fs::write(d.join(f), s).unwrap();
    }
    let run = |b: &str| {
        energy_json(&[
            "gemm",
            "--a",
            &p(&d, "a.txt"),
            "--b",
            &p(&d, b),
            "--dataflow",
            "ws",
        ])
    };
    let (j1, j2, both) = (run("b1.txt"), run("b2.txt"), run("b.txt"));
    let parts = arithmetic(&j1) + arithmetic(&j2);
    let whole = arithmetic(&both);
    // The boundary: 16 PEs' multiplier operands (16 + 16 bits) and adder inputs (64 + 32),
    // 4 accumulator columns' adder inputs (32 + 32), each bit at most twice.
    let bound = 2.0
        * (16.0 * 32.0 * FP16_MUL / 16.0
            + 16.0 * 96.0 * FP32_ADD / 48.0
            + 4.0 * 64.0 * FP32_ADD / 32.0);
    assert!(
        (whole - parts).abs() <= bound,
        "{whole} against {parts} (bound {bound})"
    );
    assert!(
        bound / whole < 0.1,
        "the bound {bound} is small beside {whole}"
    );
    std::fs::remove_dir_all(&d).ok();
}

/// `gemm --dataflow ws --energy --json` in every mode the ws core runs on the ideal port:
/// the `energy` object has its keys, the ws blocks (the accumulator's adders after the PEs'),
/// each with its count, and they add up to the total; integer modes charge the accumulator
/// an INT32 add per 32 input toggles, FP16 output an FP16 add per 16.
#[test]
fn ws_energy_json_in_every_mode() {
    let cases: [(&[&str], f64); 12] = [
        (&[], 0.9 / 32.0),
        (&["--format", "tf32"], 0.9 / 32.0),
        (&["--format", "bf16"], 0.9 / 32.0),
        (&["--format", "e4m3"], 0.9 / 32.0),
        (&["--format", "e5m2", "--acc", "fused"], 0.9 / 32.0),
        (&["--out-format", "fp16"], 0.4 / 16.0),
        (&["--format", "s8"], 0.1 / 32.0),
        (&["--format", "u4"], 0.1 / 32.0),
        (&["--sparse"], 0.9 / 32.0),
        (&["--sparse", "--format", "e4m3"], 0.9 / 32.0),
        (
            &["--acc", "nvidia", "--preset", "hopper", "--width", "16"],
            0.9 / 32.0,
        ),
        (
            &["--format", "tf32", "--tech", "7nm", "--clock-ghz", "1.5"],
            0.0,
        ),
    ];
    for (extra, acc_each) in cases {
        let j = gemm(8, 12, 40, &[&["--dataflow", "ws"][..], extra].concat());
        let e = &j["energy"];
        for key in [
            "tech",
            "clock_ghz",
            "total_pj",
            "pj_per_mac",
            "power_w",
            "macs",
            "cycles",
        ] {
            assert!(e.get(key).is_some(), "{extra:?}: {key}");
        }
        let by = e["by_block"].as_object().expect("by_block");
        let names: Vec<&str> = by.keys().map(String::as_str).collect();
        assert_eq!(by.len(), 10, "{extra:?}: {names:?}");
        for b in by.values() {
            for key in ["pj", "count", "unit", "pj_each"] {
                assert!(b.get(key).is_some(), "{extra:?}: {key}");
            }
        }
        let total = e["total_pj"].as_f64().unwrap();
        assert!(close(blocks_total(&j), total), "{extra:?}");
        assert!(total > 0.0);
        for b in [
            "multipliers",
            "adders",
            "accumulator",
            "pe_registers",
            "skew",
        ] {
            assert!(block(&j, b).1 > 0, "{extra:?}: {b}");
        }
        if acc_each > 0.0 {
            let each = by["accumulator"]["pj_each"].as_f64().unwrap();
            assert!(close(each, acc_each), "{extra:?}: {each}");
        }
        assert_eq!(e["cycles"], j["cycles"]);
    }
}

/// The text report of a ws run lists the accumulator block after the PEs' adders.
#[test]
fn ws_text_report_lists_the_accumulator() {
    let o = crate::common::cli::tcrtl(&[
        "gemm",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "16",
        "--dataflow",
        "ws",
        "--energy",
    ]);
    assert!(
        o.status.success(),
        "{}",
        crate::common::cli::text(&o.stderr)
    );
    let out = crate::common::cli::text(&o.stdout);
    let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("{s} in {out}"));
    assert!(at("energy (45nm, 1 GHz):") < at("  multipliers"));
    assert!(at("  adders") < at("  accumulator") && at("  accumulator") < at("  pe_registers"));
    assert!(out.contains("adder input bit toggles"));
}

/// `--energy --vcd` in ws: the waves hold each block's power (`tensor_core.power.*`,
/// `accumulator` among them), and summed over the cycles every block equals the report.
#[test]
fn ws_power_in_the_waves_adds_up_to_the_report() {
    let d = scratch("energy_ws", "power");
    let vcd = p(&d, "power.vcd");
    let j = gemm(
        8,
        8,
        16,
        &["--dataflow", "ws", "--clock-ghz", "2", "--vcd", &vcd],
    );
    let sums = vcd_real_sums(Path::new(&vcd));
    // A cycle is 0.5 ns at 2 GHz: watts x 0.5 ns = 500 pJ per watt-cycle.
    let pj = |b: &str| sums[&format!("tensor_core.power.{b}")] * 500.0;
    let by = j["energy"]["by_block"].as_object().unwrap();
    assert_eq!(sums.len(), by.len() + 1, "{sums:?}");
    for b in by.keys() {
        let (want, _) = block(&j, b);
        assert!(
            (pj(b) - want).abs() <= 1e-6 * want.max(1.0),
            "{b}: {} against {want}",
            pj(b)
        );
    }
    assert!(pj("accumulator") > 0.0);
    let total = j["energy"]["total_pj"].as_f64().unwrap();
    assert!((pj("total") - total).abs() <= 1e-6 * total);
    std::fs::remove_dir_all(&d).ok();
}
