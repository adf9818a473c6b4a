//! `tcrtl grade --vcd`: a PE's waveform against the golden step vectors. The model's own VCD
//! and the Verilog reference's VCD (Icarus Verilog, `$dumpvars` through the testbench's
//! `+VCD=` plusarg) pass; a single flipped bit in an accumulator or an operand is found, with
//! the step and the field; a bad map is a one-line error.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};

/// Writes the golden images of a 4 x 4 x 6 FP16 problem (and the model's VCD) into `dir`.
fn golden(dir: &Path) {
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "6",
        "--seed",
        "3",
        "--memh",
        &p(dir, ""),
        "--vcd",
        &p(dir, "model.vcd"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// Runs `grade --vcd` for element (1, 2) with the signals of `pe` (a dotted scope).
fn grade(dir: &Path, vcd: &str, clk: &str, pe: &str, acc: &str) -> std::process::Output {
    tcrtl(&[
        "grade",
        "--golden",
        &p(dir, ""),
        "--vcd",
        &p(dir, vcd),
        "--pe",
        "1,2",
        "--map",
        &format!("clk={clk}"),
        "--map",
        &format!("a={pe}.a_in"),
        "--map",
        &format!("b={pe}.b_in"),
        "--map",
        &format!("acc_after={pe}.{acc}"),
        "--json",
    ])
}

/// A copy of `vcd` with bit 0 of the `nth` value change of `scope.name` flipped.
fn flip(dir: &Path, vcd: &str, scope: &[&str], name: &str, nth: usize) -> String {
    let text = std::fs::read_to_string(dir.join(vcd)).expect("vcd");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut stack: Vec<String> = Vec::new();
    let mut id = None;
    for l in &lines {
        let t: Vec<&str> = l.split_whitespace().collect();
        if l.starts_with("$scope") {
            stack.push(t[2].to_string());
        } else if l.starts_with("$upscope") {
            stack.pop();
        } else if l.starts_with("$var")
            && t[4] == name
            && stack.ends_with(&scope.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        {
            id = Some(t[3].to_string());
        }
    }
    let id = id.expect("signal in the VCD");
    let mut seen = 0;
    for l in lines.iter_mut() {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() == 2 && t[0].starts_with('b') && t[1] == id {
            seen += 1;
            if seen == nth {
                let mut bits: Vec<char> = t[0][1..].chars().collect();
                let last = bits.len() - 1;
                bits[last] = if bits[last] == '0' { '1' } else { '0' };
                *l = format!("b{} {id}", bits.iter().collect::<String>());
                break;
            }
        }
    }
    assert_eq!(seen, nth, "the signal changes fewer than {nth} times");
    let out = format!("fault_{nth}_{name}.vcd");
    std::fs::write(dir.join(&out), lines.join("\n") + "\n").expect("write");
    out
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o.stderr)))
}

#[test]
fn the_models_own_vcd_passes_and_a_flipped_operand_bit_is_found() {
    let dir = scratch("gradevcd", "model");
    golden(&dir);
    let pe = "tensor_core.mesh.pe_1_2";
    let o = grade(&dir, "model.vcd", "tensor_core.clk", pe, "acc_0");
    let v = json(&o);
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["compared"], 18);
    assert_eq!(v["mismatches"], 0);
    // The model's PE: stage 1 then the accumulator register, two edges after the operands.
    assert_eq!(v["acc_after_latency"], 2);

    let bad = flip(&dir, "model.vcd", &["mesh", "pe_1_2"], "a_in", 3);
    let o = grade(&dir, &bad, "tensor_core.clk", pe, "acc_0");
    let v = json(&o);
    assert_eq!(o.status.code(), Some(1), "{v}");
    assert_eq!(v["first"][0]["field"], "a", "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An FP16-output golden folder: the model's VCD (16-bit `acc_0`) grades clean against the
/// 16-bit step accumulators; a flipped accumulator bit is found, in FP16 ulps.
#[test]
fn an_fp16_accumulator_vcd_passes_and_a_flipped_bit_is_found() {
    let dir = scratch("gradevcd", "fp16");
    let o = tcrtl(&[
        "gemm",
        "--m",
        "4",
        "--n",
        "4",
        "--k",
        "6",
        "--seed",
        "3",
        "--out-format",
        "fp16",
        "--memh",
        &p(&dir, ""),
        "--vcd",
        &p(&dir, "model.vcd"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let pe = "tensor_core.mesh.pe_1_2";
    let o = grade(&dir, "model.vcd", "tensor_core.clk", pe, "acc_0");
    let v = json(&o);
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["compared"], 18);
    assert_eq!(v["mismatches"], 0);
    assert_eq!(v["acc_after_latency"], 2);

    // acc_0's sixth value is the accumulator after step 3 (the first ones are the reset and
    // the C load, which the grading does not sample).
    let bad = flip(&dir, "model.vcd", &["mesh", "pe_1_2"], "acc_0", 6);
    let o = grade(&dir, &bad, "tensor_core.clk", pe, "acc_0");
    let v = json(&o);
    assert_eq!(o.status.code(), Some(1), "{v}");
    assert_eq!(v["mismatches"], 1, "{v}");
    let first = &v["first"][0];
    assert_eq!(first["field"], "acc_after", "{v}");
    assert_eq!(first["step"], 3, "{v}");
    // Bit 0 flipped: one FP16 ulp (a 4-digit golden word).
    assert_eq!(first["ulps"], 1, "{v}");
    assert!(
        first["golden"].as_str().is_some_and(|g| g.len() <= 4),
        "{v}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn iverilog_ready() -> bool {
    Command::new("iverilog").arg("-V").output().is_ok()
        && Command::new("vvp").arg("-V").output().is_ok()
}

fn verilog(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testbenches/verilog")
        .join(rel)
}

#[test]
fn the_verilog_references_vcd_passes_and_a_flipped_accumulator_bit_is_found() {
    assert!(
        iverilog_ready(),
        "iverilog/vvp not found: install Icarus Verilog (apt-get install iverilog; .ci/run does)"
    );
    let dir = scratch("gradevcd", "verilog");
    golden(&dir);
    let vvp = dir.join("ref.vvp");
    let o = Command::new("iverilog")
        .current_dir(verilog(""))
        .args(["-g2005", "-Wall", "-o"])
        .arg(&vvp)
        .args(
            [
                "rtl/fp16_mul.v",
                "rtl/fp32_add.v",
                "rtl/pe.v",
                "rtl/mesh4x4.v",
                "tb/tb_mesh.v",
            ]
            .map(verilog),
        )
        .output()
        .expect("iverilog");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = Command::new("vvp")
        .arg(&vvp)
        .args(["+M=4", "+N=4", "+K=6"])
        .arg(format!("+DIR={}", dir.display()))
        .arg(format!("+VCD={}", dir.join("ref.vcd").display()))
        .output()
        .expect("vvp");
    assert!(
        text(&o.stdout).contains("RESULT 16 passed, 0 failed"),
        "{}",
        text(&o.stdout)
    );

    let pe = "tb_mesh.dut.row[1].col[2].u_pe";
    let o = grade(&dir, "ref.vcd", "tb_mesh.clk", pe, "acc");
    let v = json(&o);
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["mismatches"], 0);
    assert_eq!(v["compared"], 18);

    // The 4th value change of this PE's accumulator with its LSB flipped: one ulp off,
    // found on the accumulator at the step that shows it.
    let bad = flip(&dir, "ref.vcd", &["row[1]", "col[2]", "u_pe"], "acc", 4);
    let o = grade(&dir, &bad, "tb_mesh.clk", pe, "acc");
    let v = json(&o);
    assert_eq!(o.status.code(), Some(1), "{v}");
    assert!(v["mismatches"].as_u64().is_some_and(|m| m >= 1), "{v}");
    assert_eq!(v["first"][0]["field"], "acc_after", "{v}");
    assert_eq!(v["first"][0]["ulps"], 1, "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_map_is_a_one_line_error() {
    let dir = scratch("gradevcd", "badmap");
    golden(&dir);
    let run = |map: &[&str]| {
        let mut args = vec!["grade", "--golden", dir.to_str().expect("utf-8")];
        let vcd = p(&dir, "model.vcd");
        args.extend(["--vcd", vcd.as_str()]);
        for m in map {
            args.extend(["--map", m]);
        }
        tcrtl(&args)
    };
    assert_error(&run(&["clk=tensor_core.clk"]), "no 'a' signal");
    assert_error(
        &run(&[
            "clk=tensor_core.clk",
            "a=nope.a_in",
            "acc_after=tensor_core.mesh.pe_0_0.acc_0",
        ]),
        "no signal 'nope.a_in'",
    );
    assert_error(&run(&["clock=x"]), "unknown field 'clock'");
    let _ = std::fs::remove_dir_all(&dir);
}
