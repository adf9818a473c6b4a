//! `--energy`: the estimate's counts recomputed from the same run's VCD by this file's own
//! reader, its energies from Horowitz's 45 nm figures by this file's own arithmetic, a
//! hand-worked 4 x 4 x 4 case, the properties the model must show (held or zero operands cost
//! less, narrower formats cost less, less reuse moves more global memory, energy adds up over
//! tiles), and bad input.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use crate::common::Rng;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Horowitz, ISSCC 2014, 45 nm: FP16 multiply 1.1 pJ, FP32 add 0.9 pJ, an 8-bit add 0.03 pJ
/// (a register bit's toggle is charged one adder bit of it).
pub(crate) const FP16_MUL: f64 = 1.1;
pub(crate) const FP32_ADD: f64 = 0.9;
pub(crate) const REG_BIT: f64 = 0.03 / 8.0;

/// `tcrtl gemm ARGS --energy --json`, its JSON.
pub(crate) fn energy_json(args: &[&str]) -> Value {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--energy", "--json"]);
    let o = tcrtl(&all);
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("json")
}

/// `tcrtl gemm --m M --n N --k K EXTRA... --energy --json`, its JSON.
pub(crate) fn gemm(m: usize, n: usize, k: usize, extra: &[&str]) -> Value {
    let dims = [m.to_string(), n.to_string(), k.to_string()];
    let mut args = vec!["gemm", "--m", &dims[0], "--n", &dims[1], "--k", &dims[2]];
    args.extend(extra);
    energy_json(&args)
}

/// Block `name` of the JSON `energy` object: (pJ, count).
pub(crate) fn block(j: &Value, name: &str) -> (f64, u64) {
    let b = &j["energy"]["by_block"][name];
    (
        b["pj"].as_f64().expect("pj"),
        b["count"].as_u64().expect("count"),
    )
}

/// The arithmetic energy (multipliers and adders) per MAC.
fn arithmetic_per_mac(j: &Value) -> f64 {
    let macs = j["energy"]["macs"].as_f64().expect("macs");
    (block(j, "multipliers").0 + block(j, "adders").0) / macs
}

pub(crate) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Reads a VCD: per variable (`scope.name`), whether it is a register, and its toggles (the
/// bits that differ between consecutive values, after the first).
pub(crate) fn vcd_toggles(path: &Path) -> BTreeMap<String, (bool, u64)> {
    let body = std::fs::read_to_string(path).expect("read vcd");
    let mut scope: Vec<String> = Vec::new();
    let mut by_id: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut out: BTreeMap<String, (bool, u64)> = BTreeMap::new();
    let mut tokens = body.split_whitespace();
    while let Some(tok) = tokens.next() {
        match tok {
            "$scope" => {
                tokens.next();
                scope.push(tokens.next().expect("scope").to_string());
            }
            "$upscope" => {
                scope.pop();
            }
            "$var" => {
                let kind = tokens.next().expect("type");
                tokens.next(); // width
                let id = tokens.next().expect("id").to_string();
                let name = format!("{}.{}", scope.join("."), tokens.next().expect("name"));
                out.insert(name.clone(), (kind == "reg", 0));
                by_id.entry(id).or_default().push(name);
            }
            "$enddefinitions" => break,
            _ => {}
        }
    }
    let mut last: BTreeMap<String, u128> = BTreeMap::new();
    let rest = body.split("$enddefinitions").nth(1).expect("body");
    for line in rest.lines().map(str::trim) {
        let (value, id) = match line.as_bytes().first() {
            Some(b'b') => {
                let (v, id) = line[1..].split_once(' ').expect("vector change");
                (u128::from_str_radix(v, 2).expect("binary"), id)
            }
            Some(b'0') | Some(b'1') => (u128::from(line.as_bytes()[0] - b'0'), &line[1..]),
            _ => continue,
        };
        let Some(names) = by_id.get(id) else { continue };
        if let Some(old) = last.insert(id.to_string(), value) {
            for n in names {
                out.get_mut(n).expect("declared").1 += u64::from((old ^ value).count_ones());
            }
        }
    }
    out
}

/// Every count of a dense FP16 run's estimate equals the one this file reads from the same
/// run's VCD, and every energy the product of that count and Horowitz's figure.
#[test]
fn counts_match_the_vcd_and_energies_the_table() {
    let d = scratch("energy", "vcd");
    let vcd = p(&d, "run.vcd");
    let j = gemm(8, 8, 24, &["--vcd", &vcd]);
    let vars = vcd_toggles(Path::new(&vcd));
    let sum = |f: &dyn Fn(&str, bool) -> bool| -> u64 {
        vars.iter()
            .filter(|(n, (reg, _))| f(n, *reg))
            .map(|(_, (_, t))| t)
            .sum()
    };
    let leaf = |n: &str| n.rsplit('.').next().unwrap().to_string();
    let pe = |n: &str| n.contains(".mesh.pe_");
    let mul = sum(&|n, _| pe(n) && ["a_in", "b_in"].contains(&leaf(n).as_str()));
    let add = sum(&|n, _| pe(n) && ["s1_prod", "acc_0", "acc_1"].contains(&leaf(n).as_str()));
    let pe_regs = sum(&|n, reg| reg && n.contains(".mesh."));
    let skew = sum(&|n, reg| {
        reg && ["a_skew", "b_skew", "c_skew", "d_deskew"]
            .iter()
            .any(|s| n.contains(&format!(".{s}.")))
    });
    let all_regs = sum(&|_, reg| reg);
    assert!(mul > 0 && add > 0 && pe_regs > 0 && skew > 0);
    assert_eq!(block(&j, "multipliers").1, mul);
    assert_eq!(block(&j, "adders").1, add);
    assert_eq!(block(&j, "pe_registers").1, pe_regs);
    assert_eq!(block(&j, "skew").1, skew);
    assert_eq!(block(&j, "controller").1, all_regs - pe_regs - skew);
    // FP16 operands: a multiply of random operands toggles (16 + 16) / 2 input bits; the
    // product register here is s1_prod's width, read from the VCD header.
    assert!(close(
        block(&j, "multipliers").0,
        mul as f64 * FP16_MUL / 16.0
    ));
    assert!(close(block(&j, "pe_registers").0, pe_regs as f64 * REG_BIT));
    let total: f64 = [
        "multipliers",
        "adders",
        "pe_registers",
        "skew",
        "controller",
    ]
    .iter()
    .map(|b| block(&j, b).0)
    .sum();
    let e = &j["energy"];
    assert!(close(e["total_pj"].as_f64().unwrap(), total));
    assert!(close(
        e["pj_per_mac"].as_f64().unwrap(),
        total / (8.0 * 8.0 * 24.0)
    ));
    let cycles = j["cycles"].as_f64().unwrap();
    // 1 GHz by default: cycles ns.
    assert!(close(
        e["power_w"].as_f64().unwrap(),
        total * 1e-12 / (cycles * 1e-9)
    ));
    assert_eq!(e["tech"], "45nm");
    std::fs::remove_dir_all(&d).ok();
}

/// Worked by hand: a 4 x 4 x 4 GEMM of ones. Each of the 16 PEs sees A's operand go from 0
/// to FP16 1.0 (0x3c00, four bits set), hold for the four steps and return to 0, and B's the
/// same: 16 x 2 x 2 x 4 = 256 operand toggles, 256 x 1.1 / 16 = 17.6 pJ of multiplier energy,
/// where 64 multiplies of random operands would cost 64 x 1.1 = 70.4 pJ. An adder's inputs
/// are charged 0.9 pJ per half of a product word and a 32-bit accumulator.
#[test]
fn a_gemm_of_ones_costs_what_the_hand_count_says() {
    let d = scratch("energy", "ones");
    let vcd = p(&d, "ones.vcd");
    let j = gemm(4, 4, 4, &["--pattern", "ones", "--vcd", &vcd]);
    let (mul_pj, mul_count) = block(&j, "multipliers");
    assert_eq!(mul_count, 256);
    assert!(close(mul_pj, 17.6), "{mul_pj}");
    let (add_pj, add_count) = block(&j, "adders");
    let product_bits = var_width(Path::new(&vcd), "s1_prod");
    let per_toggle = FP32_ADD / ((product_bits + 32) as f64 / 2.0);
    assert!(close(add_pj, add_count as f64 * per_toggle));
    // Nothing of the memory path on the ideal port.
    for b in ["shared_memory", "global_memory", "tma", "memory_control"] {
        assert_eq!(block(&j, b), (0.0, 0), "{b}");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// The width the VCD declares for the first variable named `name`.
pub(crate) fn var_width(vcd: &Path, name: &str) -> u32 {
    let body = std::fs::read_to_string(vcd).expect("read vcd");
    body.lines()
        .find_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            (t.first() == Some(&"$var") && t.get(4) == Some(&name)).then(|| t[2].parse().unwrap())
        })
        .expect("declared")
}

/// Operands that hold or are zero cost less than random ones; FP8 < FP16 < TF32 in
/// arithmetic energy per MAC (random operands, the same shape).
#[test]
fn held_zero_and_narrow_operands_cost_less() {
    let shape = ["gemm", "--m", "8", "--n", "8", "--k", "64"];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = shape.to_vec();
        a.extend(extra);
        arithmetic_per_mac(&energy_json(&a))
    };
    let random = with(&["--pattern", "random"]);
    let identity = with(&["--pattern", "identity"]);
    let ones = with(&["--pattern", "ones"]);
    assert!(
        identity < random && ones < random,
        "{identity} {ones} {random}"
    );
    let fp8 = with(&["--format", "e4m3"]);
    let tf32 = with(&["--format", "tf32"]);
    assert!(fp8 < random && random < tf32, "{fp8} {random} {tf32}");
}

/// Through the memory path, global memory's share of the energy grows when shared memory is
/// too small to keep A's panel for a row of tiles (each tile then loads A again).
#[test]
fn less_reuse_moves_more_global_memory() {
    let run = |smem: &str| {
        let j = gemm(8, 16, 256, &["--memory", "tma", "--smem-bytes", smem]);
        let total = j["energy"]["total_pj"].as_f64().unwrap();
        let reuse = j["memory"]["a_panel_reuse"].as_bool().unwrap();
        (
            block(&j, "global_memory").0 / total,
            reuse,
            block(&j, "tma").1,
        )
    };
    let (share_reuse, reuse_on, requests_on) = run("65536");
    let (share_none, reuse_off, requests_off) = run("8192");
    assert!(reuse_on && !reuse_off);
    assert!(share_none > share_reuse, "{share_none} {share_reuse}");
    assert!(requests_off > requests_on);
}

/// FP16 patterns of random finite values, `rows` x `cols`, as a text matrix.
pub(crate) fn random_matrix(rng: &mut Rng, rows: usize, cols: usize) -> String {
    let mut s = String::new();
    for _ in 0..rows {
        let row: Vec<String> = (0..cols)
            .map(|_| {
                let sign = rng.below(2) << 15;
                let exp = 10 + rng.below(8);
                format!("0x{:04x}", sign | exp << 10 | rng.below(1024))
            })
            .collect();
        s.push_str(&row.join(" "));
        s.push('\n');
    }
    s
}

/// Two 4 x 4 GEMMs against their concatenation (A stacked, one 8 x 4 run): the arithmetic
/// energy adds up, within the operand transitions at the tile boundary.
#[test]
fn energy_adds_up_over_tiles() {
    let d = scratch("energy", "additive");
    let mut rng = Rng(7);
    let k = 64;
    let (a1, a2, b) = (
        random_matrix(&mut rng, 4, k),
        random_matrix(&mut rng, 4, k),
        random_matrix(&mut rng, k, 4),
    );
    std::fs::write(d.join("a1.txt"), &a1).unwrap();
    std::fs::write(d.join("a2.txt"), &a2).unwrap();
    std::fs::write(d.join("a.txt"), format!("{a1}{a2}")).unwrap();
    std::fs::write(d.join("b.txt"), &b).unwrap();
    let arith = |a: &str| {
        let j = energy_json(&["gemm", "--a", &p(&d, a), "--b", &p(&d, "b.txt")]);
        block(&j, "multipliers").0 + block(&j, "adders").0
    };
    let (e1, e2, both) = (arith("a1.txt"), arith("a2.txt"), arith("a.txt"));
    let rel = (both - (e1 + e2)).abs() / both;
    assert!(rel < 0.03, "{both} against {} ({rel})", e1 + e2);
    std::fs::remove_dir_all(&d).ok();
}

/// Bad energy options: one line, exit 2, nothing written (a narrowed trace included: the
/// estimate needs every signal).
#[test]
fn bad_energy_options_are_refused() {
    let d = scratch("energy", "bad");
    let out = p(&d, "d.npy");
    let base = ["gemm", "--m", "4", "--n", "4", "--k", "4", "--out", &out];
    let run = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(extra);
        tcrtl(&a)
    };
    assert_error(&run(&["--energy", "--tech", "3nm"]), "unknown --tech");
    assert_error(&run(&["--energy", "--clock-ghz", "-1"]), "--clock-ghz");
    assert_error(&run(&["--energy", "--clock-ghz", "0"]), "--clock-ghz");
    assert_error(&run(&["--tech", "7nm"]), "--energy");
    // The estimate needs every signal over the whole run.
    let vcd = p(&d, "w.vcd");
    let glob = ["--energy", "--vcd", &vcd, "--trace-glob", "mesh.*"];
    assert_error(&run(&glob), "--trace-glob");
    let window = ["--energy", "--vcd", &vcd, "--trace-window", "0:5"];
    assert_error(&run(&window), "--trace-window");
    assert!(!d.join("d.npy").exists() && !d.join("w.vcd").exists());
    // Without --energy nothing is counted and no `energy` key appears.
    let o = tcrtl(&["gemm", "--m", "4", "--n", "4", "--k", "4", "--json"]);
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(j.get("energy").is_none());
    std::fs::remove_dir_all(&d).ok();
}

/// Integer and 7 nm: an INT8 multiply is charged 0.2 pJ per 8 toggles at 45 nm, and the
/// 7 nm table is the 45 nm logic scaled by (7 / 45) x (0.75 / 0.9)^2.
#[test]
fn integer_and_scaled_tables() {
    let j = gemm(8, 8, 32, &["--format", "s8"]);
    let (pj, n) = block(&j, "multipliers");
    assert!(close(pj, n as f64 * 0.2 / 8.0));
    let j7 = gemm(
        8,
        8,
        32,
        &["--format", "s8", "--tech", "7nm", "--clock-ghz", "2"],
    );
    let scale = (7.0 / 45.0) * (0.75f64 / 0.9).powi(2);
    let (pj7, n7) = block(&j7, "multipliers");
    assert_eq!(n7, n);
    assert!(close(pj7, pj * scale));
    assert_eq!(j7["energy"]["tech"], "7nm");
    assert_eq!(j7["energy"]["clock_ghz"], 2.0);
}

/// `tcrtl energy`: the study at its smallest size (the format and data studies: the memory
/// path's cases take longest in a debug build) writes its five files, prints a row for every
/// case, and its rows agree with `gemm --energy` on the same problem (the FP16 format case is
/// `gemm --m 32 --n 32 --k 32 --format fp16 --seed 1`).
/// The study's `energy.json` in `dir`, and its `formats` study's fp16 case.
fn fp16_case(dir: &Path) -> (Value, Value) {
    let study: Value =
        serde_json::from_slice(&std::fs::read(dir.join("energy.json")).expect("energy.json"))
            .expect("JSON");
    let case = study["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["study"] == "formats" && c["case"] == "fp16")
        .expect("fp16 case")
        .clone();
    (study, case)
}

#[test]
fn the_energy_study_runs_and_agrees_with_gemm() {
    let d = scratch("energy", "study");
    let out = d.join("study");
    let out_dir = out.display().to_string();
    let o = tcrtl(&[
        "energy",
        "--size",
        "32",
        "--studies",
        "formats,data",
        "--out",
        &out_dir,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    for name in [
        "energy.csv",
        "energy.json",
        "energy_formats.svg",
        "energy_memory.svg",
    ] {
        let bytes = std::fs::read(out.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!bytes.is_empty(), "{name}");
    }
    for row in [
        "| fp16 |",
        "| e4m3 |",
        "| mxfp4 |",
        "| nvfp4 |",
        "| s4 |",
        "2:4 pruned A, sparse",
    ] {
        assert!(stdout.contains(row), "{row} in {stdout}");
    }
    let (_, fp16) = fp16_case(&out);
    let j = gemm(32, 32, 32, &["--format", "fp16"]);
    assert_eq!(fp16["energy"], j["energy"]);
    // Bad input: one line, exit 2.
    assert_error(
        &tcrtl(&["energy", "--size", "48", "--out", &p(&d, "x")]),
        "--size",
    );
    assert_error(
        &tcrtl(&["energy", "--tech", "1nm", "--out", &p(&d, "x")]),
        "unknown --tech",
    );
    // On another array (--rows/--cols): the same case equals `gemm --energy` on that array,
    // the JSON names the array, and the memory studies run there too (the output-stationary
    // memory path feeds every size).
    let out8 = d.join("study8");
    let o = tcrtl(&[
        "energy",
        "--size",
        "32",
        "--studies",
        "formats",
        "--rows",
        "8",
        "--cols",
        "8",
        "--out",
        &out8.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (study, fp16_8) = fp16_case(&out8);
    assert_eq!(
        (study["rows"].as_u64(), study["cols"].as_u64()),
        (Some(8), Some(8))
    );
    let j8 = gemm(
        32,
        32,
        32,
        &["--format", "fp16", "--rows", "8", "--cols", "8"],
    );
    assert_eq!(fp16_8["energy"], j8["energy"]);
    assert_ne!(
        fp16_8["energy"], fp16["energy"],
        "another array, other toggles"
    );
    let o = tcrtl(&[
        "energy",
        "--size",
        "32",
        "--studies",
        "memory",
        "--rows",
        "8",
        "--cols",
        "8",
        "--out",
        &p(&d, "y"),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        d.join("y").join("energy.json").exists(),
        "the memory study on 8 x 8"
    );
    assert_error(
        &tcrtl(&["energy", "--rows", "0", "--cols", "4", "--out", &p(&d, "z")]),
        "--rows 0",
    );
    std::fs::remove_dir_all(&d).ok();
}

/// Reads the real-valued variables of a VCD (`scope.name` to id) and sums each one's value
/// over the cycles (a value holds until it changes; a cycle starts at each multiple of 10 ns).
pub(crate) fn vcd_real_sums(path: &Path) -> BTreeMap<String, f64> {
    let body = std::fs::read_to_string(path).expect("read vcd");
    let (head, rest) = body.split_once("$enddefinitions").expect("header");
    let mut scope: Vec<&str> = Vec::new();
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    let mut tokens = head.split_whitespace();
    while let Some(tok) = tokens.next() {
        match tok {
            "$scope" => {
                tokens.next();
                scope.push(tokens.next().expect("scope"));
            }
            "$upscope" => {
                scope.pop();
            }
            "$var" => {
                let kind = tokens.next().expect("type");
                tokens.next();
                let id = tokens.next().expect("id").to_string();
                let name = format!("{}.{}", scope.join("."), tokens.next().expect("name"));
                if kind == "real" {
                    ids.insert(id, name);
                }
            }
            _ => {}
        }
    }
    let mut value: BTreeMap<&str, f64> = ids.keys().map(|i| (i.as_str(), 0.0)).collect();
    let mut sums: BTreeMap<String, f64> = ids.values().map(|n| (n.clone(), 0.0)).collect();
    let mut started = false;
    let close = |value: &BTreeMap<&str, f64>, sums: &mut BTreeMap<String, f64>| {
        for (id, v) in value {
            *sums.get_mut(&ids[*id]).expect("declared") += v;
        }
    };
    for line in rest.lines() {
        if let Some(t) = line.strip_prefix('#') {
            if t.parse::<u64>().expect("time") % 10 == 0 {
                if started {
                    close(&value, &mut sums);
                }
                started = true;
            }
        } else if let Some(r) = line.strip_prefix('r') {
            let (v, id) = r.split_once(' ').expect("real change");
            if let Some(slot) = value.get_mut(id) {
                *slot = v.parse().expect("real");
            }
        }
    }
    sums
}

/// `--energy` beside `--vcd` writes each cycle's power per block as real signals
/// `tensor_core.power.*` (watts): summed over the cycles and times the cycle time, every
/// toggle-charged block and global memory and the TMA equal the report's energy; shared
/// memory in the waves has only the TMA's landing writes (the core's operand reads have no
/// counter), so it is at most the report's. Without `--energy` the VCD has no real signals.
#[test]
fn power_in_the_waves_adds_up_to_the_report() {
    let d = scratch("energy", "power");
    let vcd = p(&d, "power.vcd");
    let j = gemm(
        8,
        8,
        16,
        &["--memory", "tma", "--clock-ghz", "2", "--vcd", &vcd],
    );
    let sums = vcd_real_sums(Path::new(&vcd));
    // A cycle is 0.5 ns at 2 GHz: watts x 0.5 ns = 500 pJ per watt-cycle.
    let pj = |block: &str| sums[&format!("tensor_core.power.{block}")] * 500.0;
    for b in [
        "multipliers",
        "adders",
        "pe_registers",
        "skew",
        "memory_control",
        "controller",
        "global_memory",
        "tma",
    ] {
        let (want, _) = block(&j, b);
        assert!(
            (pj(b) - want).abs() <= 1e-6 * want.max(1.0),
            "{b}: {} against {want}",
            pj(b)
        );
    }
    let smem = block(&j, "shared_memory").0;
    assert!(pj("shared_memory") > 0.0 && pj("shared_memory") <= smem);
    let parts: f64 = sums
        .keys()
        .filter(|k| !k.ends_with(".total"))
        .map(|k| sums[k] * 500.0)
        .sum();
    assert!((pj("total") - parts).abs() <= 1e-6 * parts);
    // Without --energy: no real variable.
    let plain = p(&d, "plain.vcd");
    let o = tcrtl(&["gemm", "--m", "8", "--n", "8", "--k", "16", "--vcd", &plain]);
    assert!(o.status.success());
    assert!(vcd_real_sums(Path::new(&plain)).is_empty());
    std::fs::remove_dir_all(&d).ok();
}

/// The estimate without a waveform counts only every register and the arithmetic units'
/// inputs, each register's toggles at the register itself (`docs/energy.md`, "Cost"); with
/// `--fst` every signal is counted that way, and with `--saif` every bit of every signal is
/// counted from snapshots of the whole design. In every dense and sparse mode of `gemm`, both
/// dataflows and both ports, the three give the same count and energy for every block
/// (block-scaled runs: `gemm_mx::mx_energy_counts_the_same_every_way`).
#[test]
fn every_way_of_counting_gives_the_same_estimate() {
    let d = scratch("energy", "counting_paths");
    let cases: [&[&str]; 9] = [
        &[],
        &["--width", "4"],
        &["--format", "e4m3", "--acc", "nvidia", "--preset", "hopper"],
        &["--sparse", "--format", "bf16"],
        &["--format", "s8"],
        &["--memory", "tma"],
        &["--dataflow", "ws"],
        &["--dataflow", "ws", "--sparse"],
        &["--dataflow", "ws", "--memory", "tma", "--format", "e5m2"],
    ];
    for (i, extra) in cases.iter().enumerate() {
        let (fst, saif) = (p(&d, &format!("{i}.fst")), p(&d, &format!("{i}.saif")));
        let plain = gemm(8, 8, 64, extra);
        let with_fst = gemm(8, 8, 64, &[&["--fst", &fst][..], extra].concat());
        let with_saif = gemm(8, 8, 64, &[&["--saif", &saif][..], extra].concat());
        let blocks = plain["energy"]["by_block"].as_object().expect("blocks");
        assert!(blocks.len() >= 9, "{extra:?}");
        for (name, b) in blocks {
            for other in [&with_fst, &with_saif] {
                assert_eq!(other["energy"]["by_block"][name], *b, "{name} {extra:?}");
            }
        }
        assert!(block(&plain, "multipliers").1 > 0 && block(&plain, "pe_registers").1 > 0);
        assert_eq!(plain["energy"]["total_pj"], with_saif["energy"]["total_pj"]);
    }
    std::fs::remove_dir_all(&d).ok();
}
