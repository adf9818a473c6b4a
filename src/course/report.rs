//! The reports of a batch grading run: one CSV and one JSON with a row per student (points per
//! test, total, the first failure with its place), and a feedback text per student. When the
//! run used more than one simulator, the CSV adds the points each simulator alone would give
//! (`total_icarus`, `total_verilator`; empty for result folders) and the feedback a line per
//! simulator for each test that failed under one of them; the JSON always names the
//! simulators and gives every test's outcome under each (`by_sim`).

use crate::course::batch::{Status, StudentResult};
use crate::course::sim::Sim;
use crate::course::spec::Spec;
use serde_json::json;

/// One CSV field, quoted when it holds a comma, a quote or a line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV: `student`, one column per test (points), `total`, `max`, `first_failure`, and with
/// several simulators `total_<sim>` for each.
pub fn csv(spec: &Spec, sims: &[Sim], results: &[StudentResult]) -> String {
    let per_sim = if sims.len() > 1 { sims } else { &[] };
    let max: u32 = spec.tests.iter().map(|t| t.points).sum();
    let mut out = String::from("student");
    for t in &spec.tests {
        out.push(',');
        out.push_str(&field(&t.name));
    }
    out.push_str(",total,max,first_failure");
    for sim in per_sim {
        out.push_str(&format!(",total_{}", sim.name()));
    }
    out.push('\n');
    for r in results {
        out.push_str(&field(&r.student));
        for t in &r.tests {
            out.push_str(&format!(",{}", t.points));
        }
        let first = r
            .first_failure()
            .map(|f| format!("{}: {}", f.test, f.reason))
            .unwrap_or_default();
        out.push_str(&format!(",{},{max},{}", r.total(), field(&first)));
        for &sim in per_sim {
            out.push(',');
            if let Some(p) = r.total_under(sim) {
                out.push_str(&p.to_string());
            }
        }
        out.push('\n');
    }
    out
}

/// The JSON: the task, the simulators, the tests and their points, and one object per student.
pub fn json(spec: &Spec, sims: &[Sim], results: &[StudentResult]) -> serde_json::Value {
    let max: u32 = spec.tests.iter().map(|t| t.points).sum();
    json!({
        "task": spec.task.name(),
        "simulators": sims.iter().map(|s| s.name()).collect::<Vec<_>>(),
        "time_limit_s": spec.time_limit_s,
        "tests": spec.tests.iter().map(|t| json!({"name": t.name, "points": t.points})).collect::<Vec<_>>(),
        "max": max,
        "students": results.iter().map(|r| json!({
            "student": r.student,
            "submission": r.kind,
            "points": r.tests.iter().map(|t| (t.test.clone(), json!(t.points))).collect::<serde_json::Map<_, _>>(),
            "total": r.total(),
            "total_by_sim": sims.iter().map(|&s| (s.name().to_string(), json!(r.total_under(s)))).collect::<serde_json::Map<_, _>>(),
            "first_failure": r.first_failure().map(|f| json!({
                "test": f.test, "status": f.status.name(), "reason": f.reason,
            })),
            "tests": r.tests.iter().map(|t| json!({
                "name": t.test, "points": t.points, "max": t.max,
                "status": t.status.name(), "reason": t.reason,
                "by_sim": t.by_sim.iter().map(|o| json!({
                    "sim": o.sim.name(), "status": o.status.name(), "reason": o.reason,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// One student's feedback: a line per test, then the total.
pub fn feedback(spec: &Spec, r: &StudentResult) -> String {
    let max: u32 = spec.tests.iter().map(|t| t.points).sum();
    let mut out = format!(
        "{}: task {}, {} submission\n\n",
        r.student,
        spec.task.name(),
        r.kind
    );
    for t in &r.tests {
        out.push_str(&format!(
            "{:<20} {:>4} / {:<4} {}\n",
            t.test,
            t.points,
            t.max,
            t.status.name()
        ));
        if !t.reason.is_empty() {
            out.push_str(&format!("    {}\n", t.reason));
        }
        // With several simulators, each one's verdict when they are not all passes.
        if t.by_sim.len() > 1 && t.status != Status::Pass {
            for o in &t.by_sim {
                out.push_str(&format!("    {:<9} {}\n", o.sim.name(), o.status.name()));
            }
        }
    }
    out.push_str(&format!("\ntotal {} / {max}\n", r.total()));
    out
}
