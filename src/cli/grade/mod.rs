//! `tcrtl grade`: compares a student's D image with the golden one of `tcrtl gemm --memh`.
//!
//! The golden folder holds `manifest.json` (for D's shape and its accumulator format) and
//! `d.hex`; the student folder a `d.hex` of the same length (FP32 bit patterns, or FP16 ones
//! when the manifest's `acc_format` is `fp16`; row-major, one word a line, `//` comments
//! allowed, as Verilog's `$writememh` writes it). Every element is compared bit for bit; the
//! report gives the count, the mismatches and the first of them with row, column, both words
//! and their distance in ulps of the accumulator format. When the golden folder has step
//! vectors (`steps.hex`, listed in its manifest) and the student folder has a `steps.hex` too,
//! the accumulator after every step of every element is compared as well: one line per (row,
//! column, step) in the golden order, whose low 32 bits (16 for FP16) are that accumulator (a
//! full golden-format record or just the accumulator word). Exit 0 when all match, 1 otherwise,
//! 2 on bad input.

mod batch;
mod vcd;

use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use tensorcore_rtl::course::compare::{self, Finding, Grade};

/// Arguments of `tcrtl grade`.
#[derive(Args, Debug)]
#[command(subcommand_negates_reqs = true, args_conflicts_with_subcommands = true)]
pub struct GradeArgs {
    /// `batch`: grade a class (see `tcrtl grade batch --help`).
    #[command(subcommand)]
    command: Option<GradeCommand>,
    /// Folder written by `tcrtl gemm --memh` (manifest.json, d.hex), `tcrtl course directed`
    /// or `tcrtl course mac-golden`.
    #[arg(long, required = true)]
    golden: Option<PathBuf>,
    /// Folder holding the student's d.hex (FP32 words, or FP16 for an FP16-output golden
    /// folder; row-major).
    #[arg(long, required_unless_present = "vcd")]
    student: Option<PathBuf>,
    /// Second mode: a VCD of the student's PE, compared with the golden step vectors of
    /// the element --pe (needs --map or --map-file).
    #[arg(long, conflicts_with = "student")]
    vcd: Option<PathBuf>,
    /// The element ROW,COL of D whose PE the VCD shows (with --vcd).
    #[arg(long, requires = "vcd", default_value = "0,0")]
    pe: String,
    /// FIELD=SIGNAL: the student's signal for clk, a, b, acc_before or acc_after, by its
    /// dotted VCD name (repeatable; with --vcd).
    #[arg(long, requires = "vcd")]
    map: Vec<String>,
    /// A file of `FIELD SIGNAL` lines (`#` comments), read before --map (with --vcd).
    #[arg(long, requires = "vcd")]
    map_file: Option<PathBuf>,
    /// How many mismatches to list.
    #[arg(long, default_value_t = 10)]
    show: usize,
    /// Compare D only, even when both folders hold step vectors.
    #[arg(long)]
    no_steps: bool,
    /// Print one JSON object (`compared`, `mismatches`, `first`: row, col, golden, student,
    /// ulps) instead of text.
    #[arg(long)]
    json: bool,
}

/// The subcommands of `tcrtl grade`.
#[derive(clap::Subcommand, Debug)]
enum GradeCommand {
    /// Grades every submission of a class against hidden tests (Icarus Verilog, and Verilator
    /// where installed): CSV, JSON and a feedback file per student.
    Batch(batch::BatchArgs),
}

/// Parses `--pe ROW,COL`.
fn parse_pe(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--pe '{text}': expected ROW,COL (e.g. 1,2)");
    let (r, c) = text.split_once(',').ok_or_else(bad)?;
    Ok((
        r.trim().parse().map_err(|_| bad())?,
        c.trim().parse().map_err(|_| bad())?,
    ))
}

/// Runs `tcrtl grade`.
pub fn run(args: &GradeArgs) -> Result<i32, String> {
    if let Some(GradeCommand::Batch(b)) = &args.command {
        return batch::run(b);
    }
    let golden = args.golden.as_ref().ok_or("--golden DIR is required")?;
    if let Some(vcd) = &args.vcd {
        if !golden.is_dir() {
            return Err(format!(
                "--golden {}: not an existing directory",
                golden.display()
            ));
        }
        return vcd::run(&vcd::VcdJob {
            golden,
            vcd,
            pe: parse_pe(&args.pe)?,
            map: &args.map,
            map_file: args.map_file.as_ref(),
            show: args.show,
            json: args.json,
        });
    }
    let Some(student_dir) = &args.student else {
        return Err("--student DIR or --vcd FILE is required".into());
    };
    let g = compare::grade(golden, student_dir, !args.no_steps)?;
    if args.json {
        print_json(&g, args.show)?;
    } else {
        print_text(&g, args.show)?;
    }
    Ok(if g.passed() { 0 } else { 1 })
}

/// The JSON report (one object).
fn print_json(g: &Grade, show: usize) -> Result<(), String> {
    let first = |m: &[Finding]| m.iter().take(show).map(Finding::json).collect::<Vec<_>>();
    let max = |m: &[Finding]| compare::max_ulps(m).map(|(u, _)| u);
    let steps_json = g.steps.as_ref().map(|s| {
        json!({
            "compared": s.compared,
            "mismatches": s.mismatches.len(),
            "max_ulps": max(&s.mismatches),
            "first": first(&s.mismatches),
            "shift": s.shift.as_ref().map(|sh| json!({
                "by": sh.by, "matching": sh.matching, "of": sh.of, "advice": sh.advice,
            })),
        })
    });
    let mut v = json!({
        "task": g.task,
        "compared": g.compared,
        "mismatches": g.mismatches.len(),
        "max_ulps": max(&g.mismatches),
        "first": first(&g.mismatches),
        "steps": steps_json,
    });
    if g.task == "mac_mesh" {
        v["cycles"] = json!(g.shape.0);
    } else {
        v["rows"] = json!(g.shape.0);
        v["cols"] = json!(g.shape.1);
    }
    outln!("{v}");
    Ok(())
}

/// The text report: counts, the largest error in ulps, the first mismatches.
fn print_text(g: &Grade, show: usize) -> Result<(), String> {
    let list = |what: &str, compared: usize, shape: &str, m: &[Finding]| -> Result<(), String> {
        outln!("{what}: {compared} compared{shape}, {} mismatches", m.len());
        if let Some((u, at)) = compare::max_ulps(m) {
            outln!("  max error: {u} ulps (at {at})");
        }
        for f in m.iter().take(show) {
            outln!("  {}", f.line());
        }
        if m.len() > show {
            outln!("  ... and {} more", m.len() - show);
        }
        Ok(())
    };
    let shape = if g.task == "mac_mesh" {
        format!(
            " (mac_mesh: {} cycles x {} cells, fields a b acc)",
            g.shape.0, g.shape.1
        )
    } else {
        format!(" ({} x {})", g.shape.0, g.shape.1)
    };
    list("grade", g.compared, &shape, &g.mismatches)?;
    if let Some(s) = &g.steps {
        if let Some(sh) = &s.shift {
            outln!("steps: {}", sh.advice);
            outln!(
                "  ({} of {} comparable records match when displaced)",
                sh.matching,
                sh.of
            );
        }
        list("steps", s.compared, "", &s.mismatches)?;
    }
    Ok(())
}
