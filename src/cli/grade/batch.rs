//! `tcrtl grade batch`: every submission of a class against hidden tests (library:
//! `course::batch`), with a CSV, a JSON and a feedback file per student.

use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use tensorcore_rtl::course::{batch, report, sim, spec};
use tensorcore_rtl::io::AtomicFile;

/// Arguments of `tcrtl grade batch`.
#[derive(Args, Debug)]
pub struct BatchArgs {
    /// Folder with one sub-folder per student: Verilog sources, or one result folder per
    /// test.
    #[arg(long)]
    submissions: PathBuf,
    /// The test specification (JSON: task, time_limit_s, tests with points and seeds, shapes
    /// or directed sets; see docs/course/rubric.md).
    #[arg(long)]
    tests: PathBuf,
    /// Folder for results.csv, results.json, feedback/STUDENT.txt, the golden folders and
    /// the work folders (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Simulators for Verilog submissions: icarus, verilator, both, or auto (both when
    /// verilator 5.002 or newer is on PATH, icarus alone otherwise). A test earns its points
    /// only when it passes under every simulator run.
    #[arg(long, default_value = "auto", value_parser = ["auto", "icarus", "verilator", "both"])]
    sim: String,
}

/// Writes `text` to `path` (atomically).
fn write(path: &Path, text: &str) -> Result<(), String> {
    let mut f = AtomicFile::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.commit().map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs `tcrtl grade batch`.
pub fn run(args: &BatchArgs) -> Result<i32, String> {
    let text = tensorcore_rtl::io::bounded::read_text_bounded(
        &args.tests,
        tensorcore_rtl::io::bounded::MAX_TEXT_BYTES,
        "a test spec",
    )
    .map_err(|e| format!("--tests {}: {e}", args.tests.display()))?;
    let spec = spec::parse(&text)?;
    let sims = sim::simulators(&args.sim, sim::verilator_ready())?;
    let subs = batch::submissions(&args.submissions)?;
    if subs.is_empty() {
        return Err(format!(
            "--submissions {}: no submission folders",
            args.submissions.display()
        ));
    }
    for sub in ["feedback", "work"] {
        let d = args.out.join(sub);
        std::fs::create_dir_all(&d).map_err(|e| format!("--out {}: {e}", d.display()))?;
    }
    batch::write_goldens(&spec, &args.out)?;
    // The golden folders are working data that the students' testbenches read during this
    // run: put them in place now; the feedback files and reports below are committed together
    // at the end, as every command's outputs are.
    tensorcore_rtl::io::output::commit_run()?;
    tensorcore_rtl::io::output::begin_run();
    let mut results = Vec::new();
    let max: u32 = spec.tests.iter().map(|t| t.points).sum();
    for sub in &subs {
        let name = sub
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let work = args.out.join("work").join(&name);
        let _ = std::fs::remove_dir_all(&work);
        let r = batch::grade_student(&spec, &sims, &args.out, sub, &work);
        write(
            &args.out.join("feedback").join(format!("{name}.txt")),
            &report::feedback(&spec, &r),
        )?;
        let first = r
            .first_failure()
            .map(|f| format!("; first failure {}: {}", f.test, f.reason))
            .unwrap_or_default();
        outln!("{name}: {} / {max}{first}", r.total());
        results.push(r);
    }
    write(
        &args.out.join("results.csv"),
        &report::csv(&spec, &sims, &results),
    )?;
    write(
        &args.out.join("results.json"),
        &format!("{:#}\n", report::json(&spec, &sims, &results)),
    )?;
    let names: Vec<&str> = sims.iter().map(|s| s.name()).collect();
    outln!(
        "{} submissions, {} tests, simulated with {}: {}",
        results.len(),
        spec.tests.len(),
        names.join(" and "),
        args.out.join("results.csv").display()
    );
    Ok(0)
}
