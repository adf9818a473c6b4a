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

mod vcd;

use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};
use tensorcore_rtl::io::bounded::read_golden;
use tensorcore_rtl::io::memh::parse_memh;
use tensorcore_rtl::verify::ulps::{fp16_ulps, fp32_ulps};

/// Arguments of `tcrtl grade`.
#[derive(Args, Debug)]
pub struct GradeArgs {
    /// Folder written by `tcrtl gemm --memh` (manifest.json, d.hex).
    #[arg(long)]
    golden: PathBuf,
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

/// The format of D's words: the golden run's accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Acc {
    /// 32-bit FP32 patterns.
    Fp32,
    /// 16-bit FP16 patterns (`--out-format fp16`).
    Fp16,
}

impl Acc {
    /// Bits of a word.
    fn bits(self) -> u32 {
        match self {
            Acc::Fp32 => 32,
            Acc::Fp16 => 16,
        }
    }

    /// The distance in ulps (`None` when a NaN is involved).
    fn ulps(self, a: u32, b: u32) -> Option<u64> {
        match self {
            Acc::Fp32 => fp32_ulps(a, b),
            Acc::Fp16 => fp16_ulps(a as u16, b as u16),
        }
    }

    /// The value of a word, in scientific notation (FP16 widened exactly to FP32).
    fn value(self, w: u32) -> String {
        match self {
            Acc::Fp32 => format!("{:e}", f32::from_bits(w)),
            Acc::Fp16 => format!("{:e}", half::f16::from_bits(w as u16).to_f32()),
        }
    }

    /// A word as fixed-width hex.
    fn hex(self, w: u32) -> String {
        match self {
            Acc::Fp32 => format!("{w:08x}"),
            Acc::Fp16 => format!("{w:04x}"),
        }
    }
}

/// One differing element (or step: `step` is `Some`).
struct Mismatch {
    row: usize,
    col: usize,
    step: Option<usize>,
    acc: Acc,
    golden: u32,
    student: u32,
}

impl Mismatch {
    /// The JSON object of the report's `first` lists.
    fn json(&self) -> serde_json::Value {
        let mut v = json!({
            "row": self.row, "col": self.col,
            "golden": self.acc.hex(self.golden),
            "student": self.acc.hex(self.student),
            "ulps": self.acc.ulps(self.golden, self.student),
        });
        if let Some(s) = self.step {
            v["step"] = json!(s);
        }
        v
    }

    /// One line of the text report.
    fn line(&self) -> String {
        let ulps = self
            .acc
            .ulps(self.golden, self.student)
            .map_or("NaN involved".to_string(), |u| format!("{u} ulps"));
        let step = self.step.map(|s| format!(" step {s}")).unwrap_or_default();
        format!(
            "  d[{}][{}]{step}: golden {} ({}), student {} ({}), {ulps}",
            self.row,
            self.col,
            self.acc.hex(self.golden),
            self.acc.value(self.golden),
            self.acc.hex(self.student),
            self.acc.value(self.student)
        )
    }
}

/// Reads a step-vector file: the low 32 bits (16 for FP16) of each hexadecimal word (any
/// width), skipping blank lines and `//` comments.
fn read_steps(path: &Path, who: &str, acc: Acc) -> Result<Vec<u32>, String> {
    let text = read_golden(path).map_err(|e| format!("{who} {}: {e}", path.display()))?;
    let mut words = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let digits: String = line.chars().filter(|&c| c != '_').collect();
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "{who} {} line {}: '{line}' is not one hexadecimal word",
                path.display(),
                i + 1
            ));
        }
        let low = &digits[digits.len().saturating_sub(acc.bits() as usize / 4)..];
        let w =
            u32::from_str_radix(low, 16).map_err(|e| format!("{who} {}: {e}", path.display()))?;
        words.push(w);
    }
    Ok(words)
}

/// The golden step vectors' steps per element, from the manifest (`None`: none written).
fn golden_steps(golden: &Path) -> Result<Option<usize>, String> {
    let path = golden.join("manifest.json");
    let text = read_golden(&path).map_err(|e| format!("golden {}: {e}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("golden {}: {e}", path.display()))?;
    let entry = v["files"]
        .as_array()
        .and_then(|f| f.iter().find(|e| e["file"] == "steps.hex"));
    match entry {
        None => Ok(None),
        Some(e) => match e["steps_per_element"].as_u64() {
            Some(t) if t > 0 => Ok(Some(t as usize)),
            _ => Err(format!(
                "golden {}: steps.hex has no steps_per_element",
                path.display()
            )),
        },
    }
}

/// Compares the student's step vectors with the golden ones, when both exist.
fn compare_steps(
    args: &GradeArgs,
    student_dir: &Path,
    cols: usize,
    elements: usize,
    acc: Acc,
) -> Result<Option<(usize, Vec<Mismatch>)>, String> {
    let student_path = student_dir.join("steps.hex");
    if args.no_steps {
        return Ok(None);
    }
    let (Some(steps), true) = (golden_steps(&args.golden)?, student_path.is_file()) else {
        return Ok(None);
    };
    let golden = read_steps(&args.golden.join("steps.hex"), "golden", acc)?;
    let student = read_steps(&student_path, "student", acc)?;
    if golden.len() != elements * steps {
        return Err(format!(
            "golden steps.hex has {} records, its manifest says {elements} x {steps}",
            golden.len()
        ));
    }
    if student.len() != golden.len() {
        return Err(format!(
            "student steps.hex has {} records, the golden one has {} ({steps} steps per element)",
            student.len(),
            golden.len()
        ));
    }
    let mismatches = golden
        .iter()
        .zip(&student)
        .enumerate()
        .filter(|(_, (g, s))| g != s)
        .map(|(i, (&golden, &student))| Mismatch {
            row: i / steps / cols,
            col: (i / steps) % cols,
            step: Some(i % steps),
            acc,
            golden,
            student,
        })
        .collect();
    Ok(Some((golden.len(), mismatches)))
}

/// Reads the `d.hex` of `dir` as words of `acc`.
fn read_d(dir: &Path, who: &str, acc: Acc) -> Result<Vec<u32>, String> {
    let path = dir.join("d.hex");
    let text = read_golden(&path).map_err(|e| format!("{who} {}: {e}", path.display()))?;
    let words = parse_memh(&text).map_err(|e| format!("{who} {}: {e}", path.display()))?;
    words
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            u32::try_from(w)
                .ok()
                .filter(|&x| u64::from(x) >> acc.bits() == 0)
                .ok_or_else(|| {
                    format!(
                        "{who} {}: word {i} ({w:x}) is wider than {} bits",
                        path.display(),
                        acc.bits()
                    )
                })
        })
        .collect()
}

/// D's shape (rows, columns) and word format from the golden manifest (`acc_format`: `fp32`,
/// also when absent, or `fp16`).
fn d_shape(golden: &Path) -> Result<(usize, usize, Acc), String> {
    let path = golden.join("manifest.json");
    let text = read_golden(&path).map_err(|e| {
        format!(
            "golden {}: {e} (write it with tcrtl gemm --memh)",
            path.display()
        )
    })?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("golden {}: {e}", path.display()))?;
    let acc = match v["acc_format"].as_str() {
        None | Some("fp32") => Acc::Fp32,
        Some("fp16") => Acc::Fp16,
        Some(other) => {
            return Err(format!(
                "golden {}: acc_format {other} (expected fp32 or fp16)",
                path.display()
            ))
        }
    };
    let entry = v["files"]
        .as_array()
        .and_then(|f| f.iter().find(|e| e["file"] == "d.hex"))
        .ok_or_else(|| format!("golden {}: no d.hex entry", path.display()))?;
    match (entry["rows"].as_u64(), entry["cols"].as_u64()) {
        (Some(r), Some(c)) if r > 0 && c > 0 => Ok((r as usize, c as usize, acc)),
        _ => Err(format!("golden {}: d.hex has no rows/cols", path.display())),
    }
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
    if let Some(vcd) = &args.vcd {
        if !args.golden.is_dir() {
            return Err(format!(
                "--golden {}: not an existing directory",
                args.golden.display()
            ));
        }
        return vcd::run(&vcd::VcdJob {
            golden: &args.golden,
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
    for (who, dir) in [("--golden", &args.golden), ("--student", student_dir)] {
        if !dir.is_dir() {
            return Err(format!(
                "{who} {}: not an existing directory",
                dir.display()
            ));
        }
    }
    let (rows, cols, acc) = d_shape(&args.golden)?;
    let golden = read_d(&args.golden, "golden", acc)?;
    let student = read_d(student_dir, "student", acc)?;
    if golden.len() != rows * cols {
        return Err(format!(
            "golden d.hex has {} words, its manifest says {rows} x {cols}",
            golden.len()
        ));
    }
    if student.len() != golden.len() {
        return Err(format!(
            "student d.hex has {} words, the golden D has {} ({rows} x {cols})",
            student.len(),
            golden.len()
        ));
    }
    let mismatches: Vec<Mismatch> = golden
        .iter()
        .zip(&student)
        .enumerate()
        .filter(|(_, (g, s))| g != s)
        .map(|(i, (&golden, &student))| Mismatch {
            row: i / cols,
            col: i % cols,
            step: None,
            acc,
            golden,
            student,
        })
        .collect();
    let steps = compare_steps(args, student_dir, cols, golden.len(), acc)?;
    let shown = &mismatches[..mismatches.len().min(args.show)];
    if args.json {
        let steps_json = steps.as_ref().map(|(compared, m)| {
            json!({
                "compared": compared,
                "mismatches": m.len(),
                "first": m.iter().take(args.show).map(Mismatch::json).collect::<Vec<_>>(),
            })
        });
        outln!(
            "{}",
            json!({
                "rows": rows, "cols": cols,
                "compared": golden.len(),
                "mismatches": mismatches.len(),
                "first": shown.iter().map(Mismatch::json).collect::<Vec<_>>(),
                "steps": steps_json,
            })
        );
    } else {
        outln!(
            "grade: {} compared ({rows} x {cols}), {} mismatches",
            golden.len(),
            mismatches.len()
        );
        for m in shown {
            outln!("{}", m.line());
        }
        if mismatches.len() > shown.len() {
            outln!("  ... and {} more", mismatches.len() - shown.len());
        }
        if let Some((compared, m)) = &steps {
            outln!("steps: {compared} compared, {} mismatches", m.len());
            for x in m.iter().take(args.show) {
                outln!("{}", x.line());
            }
            if m.len() > args.show {
                outln!("  ... and {} more", m.len() - args.show);
            }
        }
    }
    let step_mismatches = steps.as_ref().map_or(0, |(_, m)| m.len());
    Ok(if mismatches.is_empty() && step_mismatches == 0 {
        0
    } else {
        1
    })
}
