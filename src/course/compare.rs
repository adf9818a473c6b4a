//! Comparing a student's result folder with a golden one: the library side of `tcrtl grade`
//! (folder mode) and of batch grading.
//!
//! Two kinds of golden folder, told apart by `manifest.json`:
//! - a GEMM (`tcrtl gemm --memh`, `tcrtl course directed`): the student's `d.hex` (FP32
//!   words, or FP16 when `acc_format` is `fp16`) element by element, and, when both folders
//!   hold `steps.hex`, the accumulator after every step of every element (the low 32 or 16
//!   bits of each golden record). A step sequence that matches the golden one shifted by one
//!   or two cycles is reported as a [`Shift`], with the sampling setting that fixes it (read
//!   from the student folder's `sampling.txt`, written by `tb_mesh.v`).
//! - lab 0's MAC mesh (`task` = `mac_mesh`, `tcrtl course mac-golden`): the student's
//!   `cells.hex` (`a` | `b` | `acc` of every cell in every cycle) field by field.
//!
//! Every finding names where it is (element and step, or cycle, cell and field), both words
//! and, for floating-point words, the distance in ulps.

use crate::course::mac_golden;
use crate::io::bounded::read_golden;
use crate::io::memh::parse_memh;
use crate::verify::ulps::{fp16_ulps, fp32_ulps};
use serde_json::json;
use std::path::Path;

/// The format of the compared words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    /// FP32 bit patterns.
    Fp32,
    /// FP16 bit patterns.
    Fp16,
    /// A MAC mesh register (an unsigned integer of the field's width).
    Int,
}

impl Word {
    /// Bits of an accumulator word (32 for integers).
    pub fn bits(self) -> u32 {
        match self {
            Word::Fp16 => 16,
            _ => 32,
        }
    }

    /// The distance in ulps (`None` for integers or when a NaN is involved).
    pub fn ulps(self, a: u64, b: u64) -> Option<u64> {
        match self {
            Word::Fp32 => fp32_ulps(a as u32, b as u32),
            Word::Fp16 => fp16_ulps(a as u16, b as u16),
            Word::Int => None,
        }
    }

    /// A word for the text report: hex and value.
    fn show(self, w: u64) -> String {
        match self {
            Word::Fp32 => format!("{w:08x} ({:e})", f32::from_bits(w as u32)),
            Word::Fp16 => format!("{w:04x} ({:e})", half::f16::from_bits(w as u16).to_f32()),
            Word::Int => format!("{w}"),
        }
    }

    /// A word for JSON.
    fn hex(self, w: u64) -> String {
        match self {
            Word::Fp32 => format!("{w:08x}"),
            Word::Fp16 => format!("{w:04x}"),
            Word::Int => format!("{w:x}"),
        }
    }
}

/// Where a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Element (row, col) of D, and the step when it is a step record.
    Element {
        /// Row of D.
        row: usize,
        /// Column of D.
        col: usize,
        /// The step (`None`: the final D).
        step: Option<usize>,
    },
    /// A MAC mesh register: cycle (from 1), cell row and column, field.
    Cell {
        /// Cycle (after that many clock edges).
        cycle: usize,
        /// Cell row.
        row: usize,
        /// Cell column.
        col: usize,
        /// `a`, `b` or `acc`.
        field: &'static str,
    },
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Element { row, col, step } => {
                write!(f, "d[{row}][{col}]")?;
                if let Some(s) = step {
                    write!(f, " step {s}")?;
                }
                Ok(())
            }
            Place::Cell {
                cycle,
                row,
                col,
                field,
            } => write!(f, "cycle {cycle} pe_{row}_{col}.{field}"),
        }
    }
}

/// One differing word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Where.
    pub place: Place,
    /// Its word format.
    pub word: Word,
    /// The golden word.
    pub golden: u64,
    /// The student's word (`None`: unknown, it held x or z bits).
    pub student: Option<u64>,
}

impl Finding {
    /// The distance in ulps (`None` for integers or NaNs).
    pub fn ulps(&self) -> Option<u64> {
        self.student.and_then(|s| self.word.ulps(self.golden, s))
    }

    /// The student's word for a text report.
    fn student_text(&self) -> String {
        match self.student {
            Some(w) => self.word.show(w),
            None => "x (unknown: x or z bits, never written)".to_string(),
        }
    }

    /// One line of a text report.
    pub fn line(&self) -> String {
        let dist = match (self.word, self.student, self.ulps()) {
            (Word::Int, _, _) | (_, None, _) => String::new(),
            (_, _, Some(u)) => format!(", {u} ulps"),
            (_, _, None) => ", NaN involved".to_string(),
        };
        format!(
            "{}: golden {}, student {}{dist}",
            self.place,
            self.word.show(self.golden),
            self.student_text()
        )
    }

    /// The JSON object of a report's `first` list.
    pub fn json(&self) -> serde_json::Value {
        let mut v = match self.place {
            Place::Element { row, col, step } => {
                let mut v = json!({ "row": row, "col": col });
                if let Some(s) = step {
                    v["step"] = json!(s);
                }
                v
            }
            Place::Cell {
                cycle,
                row,
                col,
                field,
            } => json!({ "cycle": cycle, "row": row, "col": col, "field": field }),
        };
        v["golden"] = json!(self.word.hex(self.golden));
        v["student"] = json!(self.student.map_or("x".to_string(), |w| self.word.hex(w)));
        v["ulps"] = json!(self.ulps());
        v
    }
}

/// The largest distance in ulps among `findings` (`None` when none has one).
pub fn max_ulps(findings: &[Finding]) -> Option<(u64, Place)> {
    findings
        .iter()
        .filter_map(|f| f.ulps().map(|u| (u, f.place)))
        .max_by_key(|(u, _)| *u)
}

/// A step sequence that matches the golden one displaced in time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shift {
    /// Cycles by which the student's accumulator lags the sampling: +1 when each sampled
    /// word is the golden word of the step before (sampled one cycle too early).
    pub by: i64,
    /// Records that match when displaced, out of `of` comparable ones.
    pub matching: usize,
    /// Comparable records.
    pub of: usize,
    /// What to change, in the testbench's terms.
    pub advice: String,
}

/// The comparison of the step records.
#[derive(Clone, Debug)]
pub struct StepGrade {
    /// Records compared.
    pub compared: usize,
    /// The differing ones, in golden order.
    pub mismatches: Vec<Finding>,
    /// A detected displacement in time.
    pub shift: Option<Shift>,
}

/// What a student folder's comparison found.
#[derive(Clone, Debug)]
pub struct Grade {
    /// What was graded: `gemm` (D) or `mac_mesh`.
    pub task: &'static str,
    /// Rows and columns of D (for `mac_mesh`: cycles and 16 cells).
    pub shape: (usize, usize),
    /// Words compared.
    pub compared: usize,
    /// The differing ones, in order.
    pub mismatches: Vec<Finding>,
    /// The step records, when both folders hold them.
    pub steps: Option<StepGrade>,
}

impl Grade {
    /// True when nothing differs.
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty() && self.steps.as_ref().is_none_or(|s| s.mismatches.is_empty())
    }

    /// The first finding to tell a student about: a time shift, else the first wrong step
    /// (it precedes the wrong D it causes), else the first wrong word.
    pub fn first_failure(&self) -> Option<String> {
        if let Some(s) = &self.steps {
            if let Some(sh) = &s.shift {
                return Some(sh.advice.clone());
            }
            if let Some(f) = s.mismatches.first() {
                return Some(f.line());
            }
        }
        self.mismatches.first().map(Finding::line)
    }
}

/// Reads the manifest of a golden folder.
fn manifest(golden: &Path) -> Result<serde_json::Value, String> {
    let path = golden.join("manifest.json");
    let text = read_golden(&path).map_err(|e| {
        format!(
            "golden {}: {e} (write it with tcrtl gemm --memh)",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| format!("golden {}: {e}", path.display()))
}

/// Reads a `$readmemh` file of words at most `bits` wide.
fn read_words(path: &Path, who: &str, bits: u32) -> Result<Vec<u64>, String> {
    let text = read_golden(path).map_err(|e| format!("{who} {}: {e}", path.display()))?;
    let words = parse_memh(&text).map_err(|e| format!("{who} {}: {e}", path.display()))?;
    for (i, &w) in words.iter().enumerate() {
        if bits < 64 && w >> bits != 0 {
            return Err(format!(
                "{who} {}: word {i} ({w:x}) is wider than {bits} bits",
                path.display()
            ));
        }
    }
    Ok(words)
}

/// Reads a student's `$readmemh`-style file: one hexadecimal word a line (blank lines, `//`
/// comments and `_` skipped); a word of exactly `bits / 4` digits with x or z among them (a
/// register never written, as a simulator's `$writememh` prints it) is `None`. `low`: keep only the low `bits` bits of a wider word (step records); otherwise a
/// wider word is refused.
fn read_student(path: &Path, bits: u32, low: bool) -> Result<Vec<Option<u64>>, String> {
    let text = read_golden(path).map_err(|e| format!("student {}: {e}", path.display()))?;
    let mut words = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let digits: String = line.chars().filter(|&c| c != '_').collect();
        let bad = || {
            format!(
                "student {} line {}: '{line}' is not one hexadecimal word",
                path.display(),
                i + 1
            )
        };
        if digits.chars().any(|c| "xXzZ".contains(c)) {
            // As a simulator writes it: exactly the word's digits, some of them x or z.
            if digits.len() != bits.div_ceil(4) as usize
                || !digits
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || "xXzZ".contains(c))
            {
                return Err(bad());
            }
            words.push(None);
            continue;
        }
        if !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let keep = if low {
            &digits[digits.len().saturating_sub(bits as usize / 4)..]
        } else {
            digits.trim_start_matches('0')
        };
        if keep.len() > 16 {
            return Err(format!(
                "student {} line {}: word {i} is wider than {bits} bits",
                path.display(),
                i + 1
            ));
        }
        let w =
            u64::from_str_radix(if keep.is_empty() { "0" } else { keep }, 16).map_err(|_| bad())?;
        if bits < 64 && w >> bits != 0 {
            return Err(format!(
                "student {} line {}: word {w:x} is wider than {bits} bits",
                path.display(),
                i + 1
            ));
        }
        words.push(Some(w));
    }
    Ok(words)
}

/// Reads step records: the low `bits` bits of each hexadecimal word (any width).
fn read_steps(path: &Path, who: &str, bits: u32) -> Result<Vec<u64>, String> {
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
        let low = &digits[digits.len().saturating_sub(bits as usize / 4)..];
        let w =
            u64::from_str_radix(low, 16).map_err(|e| format!("{who} {}: {e}", path.display()))?;
        words.push(w);
    }
    Ok(words)
}

/// Compares `student` with `golden`; `steps`: also the step records when both have them.
pub fn grade(golden: &Path, student: &Path, steps: bool) -> Result<Grade, String> {
    for (who, dir) in [("--golden", golden), ("--student", student)] {
        if !dir.is_dir() {
            return Err(format!(
                "{who} {}: not an existing directory",
                dir.display()
            ));
        }
    }
    let m = manifest(golden)?;
    if m["task"] == "mac_mesh" {
        return grade_mac(golden, student, &m);
    }
    let word = match m["acc_format"].as_str() {
        None | Some("fp32") => Word::Fp32,
        Some("fp16") => Word::Fp16,
        Some(other) => {
            return Err(format!(
                "golden manifest: acc_format {other} (expected fp32 or fp16)"
            ))
        }
    };
    let entry = m["files"]
        .as_array()
        .and_then(|f| f.iter().find(|e| e["file"] == "d.hex"))
        .ok_or("golden manifest: no d.hex entry")?;
    let (rows, cols) = match (entry["rows"].as_u64(), entry["cols"].as_u64()) {
        (Some(r), Some(c)) if r > 0 && c > 0 => (r as usize, c as usize),
        _ => return Err("golden manifest: d.hex has no rows/cols".into()),
    };
    let g = read_words(&golden.join("d.hex"), "golden", word.bits())?;
    let s = read_student(&student.join("d.hex"), word.bits(), false)?;
    let shape = format!("{rows} x {cols}");
    same_counts(
        ("d.hex", "words"),
        (g.len(), s.len()),
        (rows * cols, &shape),
        ("the golden D", &shape),
    )?;
    let mismatches = differ(&g, &s, word, |i| Place::Element {
        row: i / cols,
        col: i % cols,
        step: None,
    });
    let steps = if steps {
        grade_steps(golden, student, &m, cols, g.len(), word)?
    } else {
        None
    };
    Ok(Grade {
        task: "gemm",
        shape: (rows, cols),
        compared: g.len(),
        mismatches,
        steps,
    })
}

/// Checks the entry counts of a golden `file` and the student's (`unit`s each): the golden
/// `golden` must be the `expected` count its manifest gives (`shape`), the student's
/// `student` the golden's (`golden_as` names the golden list, `note` its shape).
fn same_counts(
    (file, unit): (&str, &str),
    (golden, student): (usize, usize),
    (expected, shape): (usize, &str),
    (golden_as, note): (&str, &str),
) -> Result<(), String> {
    if golden != expected {
        return Err(format!(
            "golden {file} has {golden} {unit}, its manifest says {shape}"
        ));
    }
    if student != golden {
        return Err(format!(
            "student {file} has {student} {unit}, {golden_as} has {golden} ({note})"
        ));
    }
    Ok(())
}

/// The differing words of two equally long lists.
fn differ(
    g: &[u64],
    s: &[Option<u64>],
    word: Word,
    place: impl Fn(usize) -> Place,
) -> Vec<Finding> {
    g.iter()
        .zip(s)
        .enumerate()
        .filter(|(_, (a, b))| Some(**a) != **b)
        .map(|(i, (&golden, &student))| Finding {
            place: place(i),
            word,
            golden,
            student,
        })
        .collect()
}

/// Compares the step records when both folders hold them.
fn grade_steps(
    golden: &Path,
    student: &Path,
    m: &serde_json::Value,
    cols: usize,
    elements: usize,
    word: Word,
) -> Result<Option<StepGrade>, String> {
    let entry = m["files"]
        .as_array()
        .and_then(|f| f.iter().find(|e| e["file"] == "steps.hex"));
    let per = match entry {
        None => return Ok(None),
        Some(e) => match e["steps_per_element"].as_u64() {
            Some(t) if t > 0 => t as usize,
            _ => return Err("golden manifest: steps.hex has no steps_per_element".into()),
        },
    };
    let spath = student.join("steps.hex");
    if !spath.is_file() {
        return Ok(None);
    }
    let g = read_steps(&golden.join("steps.hex"), "golden", word.bits())?;
    let s = read_student(&spath, word.bits(), true)?;
    same_counts(
        ("steps.hex", "records"),
        (g.len(), s.len()),
        (elements * per, &format!("{elements} x {per}")),
        ("the golden one", &format!("{per} steps per element")),
    )?;
    let mismatches = differ(&g, &s, word, |i| Place::Element {
        row: i / per / cols,
        col: (i / per) % cols,
        step: Some(i % per),
    });
    let shift = if mismatches.is_empty() {
        None
    } else {
        detect_shift(&g, &s, per, student)
    };
    Ok(Some(StepGrade {
        compared: g.len(),
        mismatches,
        shift,
    }))
}

/// Looks for a displacement of one or two cycles: every student step `s` equal to golden
/// step `s - by` of the same element (where both exist), for at least 90% of the comparable
/// records while fewer than half match undisplaced.
fn detect_shift(g: &[u64], s: &[Option<u64>], per: usize, student: &Path) -> Option<Shift> {
    let direct = g.iter().zip(s).filter(|(a, b)| Some(**a) == **b).count();
    if direct * 2 >= g.len() || per < 2 {
        return None;
    }
    let sampling = read_golden(&student.join("sampling.txt")).ok();
    for by in [1i64, -1, 2, -2] {
        let (mut matching, mut of) = (0, 0);
        for e in 0..g.len() / per {
            for st in 0..per as i64 {
                let from = st - by;
                if from < 0 || from >= per as i64 {
                    continue;
                }
                of += 1;
                if s[e * per + st as usize] == Some(g[e * per + from as usize]) {
                    matching += 1;
                }
            }
        }
        if of > 0 && matching * 10 >= of * 9 {
            return Some(Shift {
                by,
                matching,
                of,
                advice: advice(by, sampling.as_deref()),
            });
        }
    }
    None
}

/// What to change when the sampled accumulator is displaced by `by` cycles.
fn advice(by: i64, sampling: Option<&str>) -> String {
    let (when, cycles) = if by > 0 { ("early", by) } else { ("late", -by) };
    let plural = if cycles == 1 { "" } else { "s" };
    let head = format!(
        "the steps match the golden ones displaced by {cycles} cycle{plural}: each step was \
         sampled {cycles} cycle{plural} too {when}"
    );
    let fields: Vec<&str> = sampling.unwrap_or("").split_whitespace().collect();
    let lat = fields.get(2).and_then(|l| l.parse::<i64>().ok());
    match (fields.get(1).copied(), lat) {
        (Some("lat"), Some(l)) => format!(
            "{head}: the PE's latency is {}, rerun with +LAT={}",
            l + by,
            l + by
        ),
        (Some("acc_vld"), Some(l)) if l > 0 => format!(
            "{head}: acc_vld is high {cycles} cycle{plural} {} the accumulator shows the sum; \
             move it by {cycles} stage{plural} (or sample with +LAT={})",
            if by > 0 { "before" } else { "after" },
            l + by
        ),
        _ => format!(
            "{head}: the PE's latency is {cycles} more than sampled; fix acc_vld or +LAT by {by}"
        ),
    }
}

/// Compares lab 0's MAC mesh trace.
fn grade_mac(golden: &Path, student: &Path, m: &serde_json::Value) -> Result<Grade, String> {
    let cycles = m["cycles"]
        .as_u64()
        .filter(|&c| c > 0)
        .ok_or("golden manifest: mac_mesh without cycles")? as usize;
    let g = read_words(&golden.join("cells.hex"), "golden", 64)?;
    let s = read_student(&student.join("cells.hex"), 64, false)?;
    let cells = mac_golden::CELLS;
    if g.len() != cycles * cells {
        return Err(format!(
            "golden cells.hex has {} records, its manifest says {cycles} cycles x {cells}",
            g.len()
        ));
    }
    if s.len() != g.len() {
        return Err(format!(
            "student cells.hex has {} records, the golden one has {} ({cycles} cycles x {cells} cells): run tb_mac_mesh with +CYCLES={cycles}",
            s.len(),
            g.len()
        ));
    }
    let mut mismatches = Vec::new();
    for (i, (&gw, &sw)) in g.iter().zip(&s).enumerate() {
        let (ga, gb, gacc) = mac_golden::unpack(gw);
        let fields = sw.map(mac_golden::unpack);
        let (cycle, row, col) = (i / cells + 1, (i % cells) / 4, i % 4);
        for (field, gv, sv) in [
            ("a", u64::from(ga), fields.map(|f| u64::from(f.0))),
            ("b", u64::from(gb), fields.map(|f| u64::from(f.1))),
            ("acc", u64::from(gacc), fields.map(|f| u64::from(f.2))),
        ] {
            if Some(gv) != sv {
                mismatches.push(Finding {
                    place: Place::Cell {
                        cycle,
                        row,
                        col,
                        field,
                    },
                    word: Word::Int,
                    golden: gv,
                    student: sv,
                });
            }
        }
    }
    Ok(Grade {
        task: "mac_mesh",
        shape: (cycles, cells),
        compared: g.len() * 3,
        mismatches,
        steps: None,
    })
}
