//! The reports of a batch grading run: one CSV and one JSON with a row per student (points per
//! test, total, the first failure with its place), and a feedback text per student.

use crate::course::batch::StudentResult;
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

/// The CSV: `student`, one column per test (points), `total`, `max`, `first_failure`.
pub fn csv(spec: &Spec, results: &[StudentResult]) -> String {
    let max: u32 = spec.tests.iter().map(|t| t.points).sum();
    let mut out = String::from("student");
    for t in &spec.tests {
        out.push(',');
        out.push_str(&field(&t.name));
    }
    out.push_str(",total,max,first_failure\n");
    for r in results {
        out.push_str(&field(&r.student));
        for t in &r.tests {
            out.push_str(&format!(",{}", t.points));
        }
        let first = r
            .first_failure()
            .map(|f| format!("{}: {}", f.test, f.reason))
            .unwrap_or_default();
        out.push_str(&format!(",{},{max},{}\n", r.total(), field(&first)));
    }
    out
}

/// The JSON: the task, the tests and their points, and one object per student.
pub fn json(spec: &Spec, results: &[StudentResult]) -> serde_json::Value {
    let max: u32 = spec.tests.iter().map(|t| t.points).sum();
    json!({
        "task": spec.task.name(),
        "time_limit_s": spec.time_limit_s,
        "tests": spec.tests.iter().map(|t| json!({"name": t.name, "points": t.points})).collect::<Vec<_>>(),
        "max": max,
        "students": results.iter().map(|r| json!({
            "student": r.student,
            "submission": r.kind,
            "points": r.tests.iter().map(|t| (t.test.clone(), json!(t.points))).collect::<serde_json::Map<_, _>>(),
            "total": r.total(),
            "first_failure": r.first_failure().map(|f| json!({
                "test": f.test, "status": f.status.name(), "reason": f.reason,
            })),
            "tests": r.tests.iter().map(|t| json!({
                "name": t.test, "points": t.points, "max": t.max,
                "status": t.status.name(), "reason": t.reason,
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
    }
    out.push_str(&format!("\ntotal {} / {max}\n", r.total()));
    out
}
