//! `tcrtl grade --vcd`: a student's PE, read from its VCD, against the model's step vectors.
//!
//! The golden folder's `steps.hex` gives, for the chosen element (`--pe ROW,COL`), the A and B
//! lanes, the accumulator before and after every step. `--map FIELD=SIGNAL` names the
//! student's signal for each field (`clk`, `a`, `b`, `acc_before`, `acc_after`; `clk`, `a`
//! and one accumulator are required), by its dotted VCD name (`tb.dut.u_pe.a_in`; a
//! `[msb:lsb]` suffix may be left out). Every signal is sampled at each rising edge of `clk`,
//! with the values it held just before that edge (what a register clocked there takes in).
//!
//! Alignment: the operands line up at the sample cycle `t0` from which the most of the
//! golden steps' A (and B) lanes follow one a cycle (the earliest such cycle on a tie); each
//! accumulator field then lags by the latency `L` (0..=[`MAX_LATENCY`]) at which the most of
//! its golden values appear at `t0 + step + L`. Both are reported; every step is then
//! compared field by field.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::json;
use tensorcore_rtl::numerics::format::Format;
use vcd::{Command, IdCode, ScopeItem, Value};

use tensorcore_rtl::io::bounded::{read_golden, LimitedReader, MAX_GRADE_VCD_BYTES};
use tensorcore_rtl::verify::ulps::{fp16_ulps, fp32_ulps};

/// The largest accumulator latency searched, in cycles after the operands.
pub const MAX_LATENCY: usize = 32;

/// The fields a map can name.
const FIELDS: [&str; 5] = ["clk", "a", "b", "acc_before", "acc_after"];

/// One golden step of the element.
#[derive(Clone, Copy, Debug)]
struct Step {
    a: u64,
    b: u64,
    before: u32,
    after: u32,
}

/// What the VCD mode needs from the command line.
pub struct VcdJob<'a> {
    /// The golden folder.
    pub golden: &'a Path,
    /// The student's VCD.
    pub vcd: &'a Path,
    /// The element (row, column) whose PE the VCD shows.
    pub pe: (usize, usize),
    /// `FIELD=SIGNAL` entries.
    pub map: &'a [String],
    /// A map file: one `FIELD SIGNAL` (or `FIELD=SIGNAL`) a line, `#` comments.
    pub map_file: Option<&'a PathBuf>,
    /// Mismatches to list.
    pub show: usize,
    /// JSON output.
    pub json: bool,
}

/// Parses the map entries into field -> signal name.
fn parse_map(job: &VcdJob) -> Result<HashMap<&'static str, String>, String> {
    let mut lines: Vec<String> = Vec::new();
    if let Some(f) = job.map_file {
        let text = tensorcore_rtl::io::bounded::read_text_bounded(
            f,
            tensorcore_rtl::io::bounded::MAX_TEXT_BYTES,
            "a map file",
        )
        .map_err(|e| format!("--map-file {}: {e}", f.display()))?;
        for l in text.lines() {
            let l = l.split('#').next().unwrap_or("").trim();
            if !l.is_empty() {
                lines.push(l.replacen(char::is_whitespace, "=", 1));
            }
        }
    }
    lines.extend(job.map.iter().cloned());
    let mut map = HashMap::new();
    for entry in &lines {
        let (field, signal) = entry
            .split_once('=')
            .ok_or_else(|| format!("map entry '{entry}': expected FIELD=SIGNAL"))?;
        let field = field.trim();
        let Some(&f) = FIELDS.iter().find(|&&f| f == field) else {
            return Err(format!(
                "map entry '{entry}': unknown field '{field}' (expected one of {})",
                FIELDS.join(", ")
            ));
        };
        map.insert(f, signal.trim().to_string());
    }
    for need in ["clk", "a"] {
        if !map.contains_key(need) {
            return Err(format!(
                "the map names no '{need}' signal (--map {need}=SIGNAL)"
            ));
        }
    }
    if !map.contains_key("acc_before") && !map.contains_key("acc_after") {
        return Err(
            "the map names no accumulator (--map acc_after=SIGNAL or acc_before=SIGNAL)".into(),
        );
    }
    Ok(map)
}

/// The golden steps of element `pe`, from the manifest and `steps.hex`, and whether the
/// accumulator is FP16 (the manifest's `acc_format`; FP32 otherwise).
fn golden_steps(golden: &Path, pe: (usize, usize)) -> Result<(Vec<Step>, bool), String> {
    let mpath = golden.join("manifest.json");
    let text = read_golden(&mpath).map_err(|e| format!("golden {}: {e}", mpath.display()))?;
    let m: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("golden {}: {e}", mpath.display()))?;
    let fmt = |key: &str| {
        m[key]
            .as_str()
            .and_then(Format::by_name)
            .ok_or_else(|| format!("golden {}: no {key}", mpath.display()))
    };
    let (fa, fb) = (fmt("format_a")?, fmt("format_b")?);
    let w = m["width"].as_u64().unwrap_or(1).max(1) as usize;
    let (rows, cols) = (
        m["m"].as_u64().unwrap_or(0) as usize,
        m["n"].as_u64().unwrap_or(0) as usize,
    );
    let entry = m["files"]
        .as_array()
        .and_then(|f| f.iter().find(|e| e["file"] == "steps.hex"))
        .ok_or_else(|| {
            format!(
                "golden {}: no steps.hex (step vectors are written for ieee and fused runs)",
                golden.display()
            )
        })?;
    let steps = entry["steps_per_element"].as_u64().unwrap_or(0) as usize;
    if pe.0 >= rows || pe.1 >= cols || steps == 0 {
        return Err(format!("--pe {},{}: D is {rows} x {cols}", pe.0, pe.1));
    }
    let (wa, wb) = (w * fa.width() as usize, w * fb.width() as usize);
    if wa > 64 || wb > 64 {
        return Err(format!(
            "grading a VCD takes operand buses of at most 64 bits (this problem: {wa} and {wb})"
        ));
    }
    let half = m["acc_format"] == "fp16";
    let dacc = if half { 4 } else { 8 };
    let spath = golden.join("steps.hex");
    let text = read_golden(&spath).map_err(|e| format!("golden {}: {e}", spath.display()))?;
    let records: Vec<&str> = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    let first = (pe.0 * cols + pe.1) * steps;
    let (da, db) = (wa.div_ceil(4), wb.div_ceil(4));
    let steps = records
        .get(first..first + steps)
        .ok_or_else(|| format!("golden {}: too few records", spath.display()))?
        .iter()
        .map(|r| {
            let bad = || format!("golden {}: bad record '{r}'", spath.display());
            if r.len() != da + db + 2 * dacc {
                return Err(bad());
            }
            let hex = |s: &str| u64::from_str_radix(s, 16).map_err(|_| bad());
            Ok(Step {
                a: hex(&r[..da])?,
                b: hex(&r[da..da + db])?,
                before: hex(&r[da + db..da + db + dacc])? as u32,
                after: hex(&r[da + db + dacc..])? as u32,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok((steps, half))
}

/// Every variable of the header by dotted name (scope identifiers, then the reference).
fn var_names(items: &[ScopeItem], prefix: &str, out: &mut Vec<(String, IdCode, u32)>) {
    for item in items {
        match item {
            ScopeItem::Scope(s) => {
                let p = format!("{prefix}{}.", s.identifier);
                var_names(&s.items, &p, out);
            }
            ScopeItem::Var(v) => out.push((format!("{prefix}{}", v.reference), v.code, v.size)),
            _ => {}
        }
    }
}

/// Per field, its value just before each rising edge of `clk` (`None` while x or z).
type Samples = HashMap<&'static str, Vec<Option<u64>>>;

/// Reads the VCD and samples the mapped signals at every rising clock edge.
fn sample(path: &Path, map: &HashMap<&'static str, String>) -> Result<Samples, String> {
    let file = LimitedReader::open(path, MAX_GRADE_VCD_BYTES, "a VCD to grade")
        .map_err(|e| format!("--vcd {}: {e}", path.display()))?;
    let mut parser = vcd::Parser::new(std::io::BufReader::new(file));
    let header = parser
        .parse_header()
        .map_err(|e| format!("--vcd {}: {e}", path.display()))?;
    let mut vars = Vec::new();
    var_names(&header.items, "", &mut vars);
    let mut code_of: HashMap<&'static str, IdCode> = HashMap::new();
    for (&field, name) in map {
        let found = vars.iter().find(|(n, _, _)| n == name).or_else(|| {
            let base = name.split('[').next().unwrap_or(name);
            vars.iter().find(|(n, _, _)| n == base)
        });
        let Some((_, code, size)) = found else {
            return Err(format!(
                "--vcd {}: no signal '{name}' (for {field})",
                path.display()
            ));
        };
        if *size > 64 {
            return Err(format!(
                "--vcd {}: '{name}' is {size} bits wide (at most 64)",
                path.display()
            ));
        }
        code_of.insert(field, *code);
    }
    let clk = code_of["clk"];
    let width_of: HashMap<IdCode, u32> =
        vars.iter().map(|(_, code, size)| (*code, *size)).collect();
    let mut last_time: Option<u64> = None;
    let mut now: HashMap<IdCode, Option<u64>> = HashMap::new();
    let mut at_time_start: HashMap<IdCode, Option<u64>> = HashMap::new();
    let mut samples: Samples = map.keys().map(|&f| (f, Vec::new())).collect();
    let mut clk_before = Some(0u64);
    let bits = |vals: &mut dyn Iterator<Item = Value>| -> Option<u64> {
        let mut v = 0u64;
        for b in vals {
            v = (v << 1)
                | match b {
                    Value::V0 => 0,
                    Value::V1 => 1,
                    _ => return None,
                };
        }
        Some(v)
    };
    // Changes of one timestamp are applied to `now`; a rising clock inside it samples the
    // values as they were when the timestamp began.
    let flush = |now: &HashMap<IdCode, Option<u64>>,
                 start: &HashMap<IdCode, Option<u64>>,
                 clk_before: &mut Option<u64>,
                 samples: &mut Samples| {
        let clk_now = now.get(&clk).copied().flatten();
        if *clk_before == Some(0) && clk_now == Some(1) {
            for (&field, code) in &code_of {
                if let Some(list) = samples.get_mut(field) {
                    list.push(start.get(code).copied().flatten());
                }
            }
        }
        *clk_before = clk_now;
    };
    for cmd in parser {
        let cmd = cmd.map_err(|e| format!("--vcd {}: {e}", path.display()))?;
        match cmd {
            Command::Timestamp(t) => {
                // Time only moves forward (IEEE 1364, 18.2.3.3).
                if let Some(last) = last_time.filter(|&last| t < last) {
                    return Err(format!(
                        "--vcd {}: timestamp #{t} goes back from #{last}",
                        path.display()
                    ));
                }
                last_time = Some(t);
                flush(&now, &at_time_start, &mut clk_before, &mut samples);
                at_time_start = now.clone();
            }
            Command::ChangeScalar(id, v) => {
                now.insert(id, bits(&mut std::iter::once(v)));
            }
            Command::ChangeVector(id, v) => {
                // A value may be shorter than its variable (it is extended) but never longer.
                if let Some(&width) = width_of.get(&id) {
                    if v.len() > width as usize {
                        return Err(format!(
                            "--vcd {}: a {}-bit value for the {width}-bit signal `{id}`",
                            path.display(),
                            v.len()
                        ));
                    }
                }
                now.insert(id, bits(&mut v.iter()));
            }
            _ => {}
        }
    }
    flush(&now, &at_time_start, &mut clk_before, &mut samples);
    Ok(samples)
}

/// The offset (and match count) at which the most of `want[s]` equal `got[start + s]`,
/// searched over `starts`; the earliest wins a tie. `None` when no offset matches any value.
fn best_offset(
    starts: impl Iterator<Item = usize>,
    want: &[u64],
    got: &[Option<u64>],
) -> Option<(usize, usize)> {
    let mut best = None;
    for t in starts {
        let hits = want
            .iter()
            .enumerate()
            .filter(|(s, w)| got.get(t + s).copied().flatten() == Some(**w))
            .count();
        if hits > best.map_or(0, |(_, h)| h) {
            best = Some((t, hits));
        }
    }
    best
}

/// One differing field of one step.
struct Miss {
    step: usize,
    field: &'static str,
    golden: u64,
    student: Option<u64>,
}

/// Runs the VCD comparison; exit 0 when every compared field matches, 1 otherwise.
pub fn run(job: &VcdJob) -> Result<i32, String> {
    let map = parse_map(job)?;
    let (steps, half) = golden_steps(job.golden, job.pe)?;
    let samples = sample(job.vcd, &map)?;
    let cycles = samples["clk"].len();
    if cycles == 0 {
        return Err(format!(
            "--vcd {}: the clock never rises",
            job.vcd.display()
        ));
    }
    // Operands: a (and b) one step a cycle from t0.
    let a_want: Vec<u64> = steps.iter().map(|s| s.a).collect();
    let b_want: Vec<u64> = steps.iter().map(|s| s.b).collect();
    let mut best = (0, 0);
    for t in 0..cycles {
        let hits = (0..steps.len())
            .filter(|&s| {
                samples["a"].get(t + s).copied().flatten() == Some(a_want[s])
                    && samples
                        .get("b")
                        .is_none_or(|b| b.get(t + s).copied().flatten() == Some(b_want[s]))
            })
            .count();
        if hits > best.1 {
            best = (t, hits);
        }
    }
    if best.1 == 0 {
        return Err(format!(
            "--vcd {}: the golden operands of d[{}][{}] never appear on the mapped signals",
            job.vcd.display(),
            job.pe.0,
            job.pe.1
        ));
    }
    let t0 = best.0;
    let mut misses = Vec::new();
    let mut compared = 0;
    // Field, sample offset, and the lag found (`None`: no golden value of the field appears
    // at any lag up to MAX_LATENCY; it is then compared at lag 0 and every step differs).
    let mut fields: Vec<(&'static str, usize, Option<usize>)> = Vec::new();
    fields.push(("a", t0, Some(0)));
    if samples.contains_key("b") {
        fields.push(("b", t0, Some(0)));
    }
    for (field, want) in [
        (
            "acc_before",
            steps
                .iter()
                .map(|s| u64::from(s.before))
                .collect::<Vec<_>>(),
        ),
        (
            "acc_after",
            steps.iter().map(|s| u64::from(s.after)).collect(),
        ),
    ] {
        if let Some(got) = samples.get(field) {
            match best_offset(t0..=t0 + MAX_LATENCY, &want, got) {
                Some((at, _)) => fields.push((field, at, at.checked_sub(t0))),
                None => fields.push((field, t0, None)),
            }
        }
    }
    for &(field, at, _) in &fields {
        let got = &samples[field];
        for (s, st) in steps.iter().enumerate() {
            let golden = match field {
                "a" => st.a,
                "b" => st.b,
                "acc_before" => u64::from(st.before),
                _ => u64::from(st.after),
            };
            let student = got.get(at + s).copied().flatten();
            compared += 1;
            if student != Some(golden) {
                misses.push(Miss {
                    step: s,
                    field,
                    golden,
                    student,
                });
            }
        }
    }
    misses.sort_by_key(|m| (m.step, FIELDS.iter().position(|&f| f == m.field)));
    let ulps = |m: &Miss| -> Option<u64> {
        if m.field.starts_with("acc") {
            m.student.and_then(|s| {
                if half {
                    // A student word wider than 16 bits is no FP16 value: no distance.
                    u16::try_from(s)
                        .ok()
                        .and_then(|s| fp16_ulps(m.golden as u16, s))
                } else {
                    fp32_ulps(m.golden as u32, s as u32)
                }
            })
        } else {
            None
        }
    };
    let lag_of = |f: &str| fields.iter().find(|x| x.0 == f).and_then(|x| x.2);
    let mapped = |f: &str| fields.iter().any(|x| x.0 == f);
    if job.json {
        let first: Vec<serde_json::Value> = misses
            .iter()
            .take(job.show)
            .map(|m| {
                json!({
                    "row": job.pe.0, "col": job.pe.1, "step": m.step, "field": m.field,
                    "golden": format!("{:x}", m.golden),
                    "student": m.student.map(|s| format!("{s:x}")),
                    "ulps": ulps(m),
                })
            })
            .collect();
        outln!(
            "{}",
            json!({
                "pe": [job.pe.0, job.pe.1],
                "steps": steps.len(),
                "operand_cycle": t0,
                "acc_before_latency": lag_of("acc_before"),
                "acc_after_latency": lag_of("acc_after"),
                "compared": compared,
                "mismatches": misses.len(),
                "first": first,
            })
        );
    } else {
        outln!(
            "grade vcd: d[{}][{}], {} steps; operands line up at clock edge {t0}",
            job.pe.0,
            job.pe.1,
            steps.len()
        );
        for f in ["acc_before", "acc_after"] {
            match lag_of(f) {
                Some(l) if f == "acc_after" => outln!(
                    "  {f} lags the operands by {l} cycles (latency {l}: the folder mode's \
                     tb_mesh +LAT={l})"
                ),
                Some(l) => outln!("  {f} lags the operands by {l} cycles"),
                None if mapped(f) => outln!(
                    "  {f}: no golden value appears within {MAX_LATENCY} cycles of the \
                     operands (compared at lag 0)"
                ),
                None => {}
            }
        }
        outln!("{compared} compared, {} mismatches", misses.len());
        if let Some((u, m)) = misses
            .iter()
            .filter_map(|m| ulps(m).map(|u| (u, m)))
            .max_by_key(|(u, _)| *u)
        {
            outln!("  max error: {u} ulps (at step {} {})", m.step, m.field);
        }
        for m in misses.iter().take(job.show) {
            let student = m.student.map_or("x".to_string(), |s| format!("{s:x}"));
            let u = ulps(m).map(|u| format!(", {u} ulps")).unwrap_or_default();
            outln!(
                "  step {} {}: golden {:x}, student {student}{u}",
                m.step,
                m.field,
                m.golden
            );
        }
        if misses.len() > job.show {
            outln!("  ... and {} more", misses.len() - job.show);
        }
    }
    Ok(if misses.is_empty() { 0 } else { 1 })
}
