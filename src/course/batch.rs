//! Grading a class: every submission folder against every test of a [`Spec`].
//!
//! A submission is a folder under the submissions folder (its name is the student's). When it
//! holds `.v` files, they are compiled with the course's testbench and the given parts of the
//! design (for the PE task the reference mesh, for the mesh task the reference PE, for the
//! sparse PE task the reference sparse mesh and the reference FP16 multiplier and FP32 adder;
//! a given file is left out when the submission has a file of the same name) under each
//! simulator of the run ([`Sim`]: Icarus Verilog, `iverilog -g2012`, and Verilator, `verilator
//! --binary --timing`), and the simulation runs once per test and simulator with a time limit.
//! A test earns its points only when it passes under every simulator of the run; each
//! simulator's outcome is kept ([`TestResult::by_sim`]). Otherwise the folder must hold one
//! result folder per test, named after the test (`d.hex` and `steps.hex`, or `cells.hex`), as
//! the testbench's `+OUT` writes them. Each test is then graded with [`compare::grade`]: the
//! points when everything matches, zero otherwise, with the reason: a compile error (its first
//! line), a time-out, output that is not a result (the parse error), a refusal of the
//! testbench (`ERROR` line), or the first finding with its place.
//!
//! Nothing depends on timing or the order of the file system: students are taken in name order,
//! tests in spec order, and the reports hold no durations, so a spec gives the same results on
//! every run.

use crate::course::compare;
use crate::course::sim::Sim;
use crate::course::spec::{Golden, Spec, Task, TestCase};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The course's Verilog the batch compiles with a submission: (file name, text).
const GIVEN_MESH_TB: (&str, &str) = (
    "tb_mesh.v",
    include_str!("../../testbenches/verilog/tb/tb_mesh.v"),
);
const GIVEN_MAC_TB: (&str, &str) = (
    "tb_mac_mesh.v",
    include_str!("../../testbenches/verilog/tb/tb_mac_mesh.v"),
);
const GIVEN_MESH: (&str, &str) = (
    "mesh4x4.v",
    include_str!("../../testbenches/verilog/rtl/mesh4x4.v"),
);
const GIVEN_SPARSE_TB: (&str, &str) = (
    "tb_mesh_sparse.v",
    include_str!("../../testbenches/verilog/tb/tb_mesh_sparse.v"),
);
const GIVEN_SPARSE_MESH: (&str, &str) = (
    "mesh4x4_sparse.v",
    include_str!("../../testbenches/verilog/rtl/mesh4x4_sparse.v"),
);
/// What the GEMM testbenches include, as `tb/<name>.vh` relative to the folder they are
/// compiled in.
const GIVEN_INCLUDES: [(&str, &str); 2] = [
    (
        "tb/golden_io.vh",
        include_str!("../../testbenches/verilog/tb/golden_io.vh"),
    ),
    (
        "tb/mesh_steps.vh",
        include_str!("../../testbenches/verilog/tb/mesh_steps.vh"),
    ),
];
const GIVEN_PE: [(&str, &str); 3] = [
    ("pe.v", include_str!("../../testbenches/verilog/rtl/pe.v")),
    (
        "fp16_mul.v",
        include_str!("../../testbenches/verilog/rtl/fp16_mul.v"),
    ),
    (
        "fp32_add.v",
        include_str!("../../testbenches/verilog/rtl/fp32_add.v"),
    ),
];

/// Seconds a compilation may take under Icarus Verilog.
const COMPILE_LIMIT_S: u64 = 60;

/// Seconds a Verilator build (Verilog to C++ to a binary) may take.
const VERILATOR_BUILD_LIMIT_S: u64 = 600;

/// How a test ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Everything matched.
    Pass,
    /// A wrong value (the reason names where).
    Fail,
    /// The sources did not compile.
    CompileError,
    /// The simulation ran past the time limit.
    Timeout,
    /// The output is not a result (missing, unparsable, wrong length) or the testbench refused.
    BadOutput,
}

impl Status {
    /// The name in the reports.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::CompileError => "compile_error",
            Status::Timeout => "timeout",
            Status::BadOutput => "bad_output",
        }
    }
}

/// How one test ended under one simulator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimOutcome {
    /// The simulator.
    pub sim: Sim,
    /// How it ended.
    pub status: Status,
    /// Why (empty on a pass).
    pub reason: String,
}

/// One test's result for one student.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestResult {
    /// The test's name.
    pub test: String,
    /// Points earned.
    pub points: u32,
    /// Points possible.
    pub max: u32,
    /// How it ended.
    pub status: Status,
    /// Why (empty on a pass; with several simulators, prefixed by the name of the one that
    /// failed first).
    pub reason: String,
    /// The outcome under each simulator, in the run's order (empty for result folders).
    pub by_sim: Vec<SimOutcome>,
}

/// One student's results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StudentResult {
    /// The submission folder's name.
    pub student: String,
    /// How the submission was taken: `verilog` or `results`.
    pub kind: &'static str,
    /// Per test, in spec order.
    pub tests: Vec<TestResult>,
}

impl StudentResult {
    /// Points earned in all.
    pub fn total(&self) -> u32 {
        self.tests.iter().map(|t| t.points).sum()
    }

    /// The first test that did not pass.
    pub fn first_failure(&self) -> Option<&TestResult> {
        self.tests.iter().find(|t| t.status != Status::Pass)
    }

    /// The points the submission earns under `sim` alone (`None` for result folders, which
    /// no simulator ran).
    pub fn total_under(&self, sim: Sim) -> Option<u32> {
        if self.kind != "verilog" {
            return None;
        }
        Some(
            self.tests
                .iter()
                .filter(|t| {
                    t.by_sim
                        .iter()
                        .any(|o| o.sim == sim && o.status == Status::Pass)
                })
                .map(|t| t.max)
                .sum(),
        )
    }
}

/// Writes every test's golden folder under `dir/golden/NAME`.
pub fn write_goldens(spec: &Spec, dir: &Path) -> Result<(), String> {
    for t in &spec.tests {
        t.write_golden(&dir.join("golden").join(&t.name))?;
    }
    Ok(())
}

/// The submission folders under `dir`, in name order.
pub fn submissions(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("--submissions {}: {e}", dir.display()))?;
    for e in entries {
        let e = e.map_err(|e| format!("--submissions {}: {e}", dir.display()))?;
        if e.path().is_dir() {
            out.push(e.path());
        }
    }
    out.sort();
    Ok(out)
}

/// Runs `cmd` with its output into `log`, killing it after `limit`; `Ok(true)` when it
/// finished in time. On Unix the command runs in a process group of its own, and the whole
/// group is killed: a Verilator build leaves no `make` or compiler behind.
fn run_limited(mut cmd: Command, log: &Path, limit: Duration) -> Result<bool, String> {
    let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return Ok(true),
            Ok(None) if start.elapsed() >= limit => {
                #[cfg(unix)]
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                return Ok(false);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for {:?}: {e}", cmd.get_program())),
        }
    }
}

/// The first line of `log` that looks like an error (Verilator's `%Error` lines first), or
/// its first line.
fn first_error(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let line = text
        .lines()
        .find(|l| l.starts_with("%Error"))
        .or_else(|| {
            text.lines()
                .find(|l| l.contains("error") || l.contains("ERROR") || l.contains("syntax"))
        })
        .or_else(|| text.lines().next())
        .unwrap_or("(no output)");
    // Paths of the work folder say nothing to the student.
    let line = line.strip_prefix("%Error: ").unwrap_or(line);
    line.rsplit_once('/')
        .map_or(line, |(_, tail)| tail)
        .trim()
        .to_string()
}

/// Grades one submission against every test under the simulators `sims` (in that order);
/// `work` is a fresh scratch folder for it.
pub fn grade_student(
    spec: &Spec,
    sims: &[Sim],
    root: &Path,
    sub: &Path,
    work: &Path,
) -> StudentResult {
    let student = sub
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(sub)
        .map(|r| {
            r.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "v"))
                .collect()
        })
        .unwrap_or_default();
    sources.sort();
    if sources.is_empty() {
        let tests = spec
            .tests
            .iter()
            .map(|t| {
                judge(
                    t,
                    &root.join("golden").join(&t.name),
                    &sub.join(&t.name),
                    None,
                )
            })
            .collect();
        return StudentResult {
            student,
            kind: "results",
            tests,
        };
    }
    // Per simulator, per test.
    let runs: Vec<Vec<TestResult>> = sims
        .iter()
        .map(|&sim| {
            let work = work.join(sim.name());
            match compile(sim, spec.task, &sources, &work) {
                Err(reason) => spec
                    .tests
                    .iter()
                    .map(|t| result(t, Status::CompileError, reason.clone()))
                    .collect(),
                Ok(exe) => spec
                    .tests
                    .iter()
                    .map(|t| simulate_and_judge(spec, t, sim, root, &exe, &work))
                    .collect(),
            }
        })
        .collect();
    let tests = spec
        .tests
        .iter()
        .enumerate()
        .map(|(i, t)| combine(t, sims, runs.iter().map(|r| &r[i])))
        .collect();
    StudentResult {
        student,
        kind: "verilog",
        tests,
    }
}

/// One test's result over every simulator: the points when it passed under each, otherwise
/// the first failure (named by its simulator when there are several).
fn combine<'a>(
    t: &TestCase,
    sims: &[Sim],
    runs: impl Iterator<Item = &'a TestResult>,
) -> TestResult {
    let by_sim: Vec<SimOutcome> = sims
        .iter()
        .zip(runs)
        .map(|(&sim, r)| SimOutcome {
            sim,
            status: r.status,
            reason: r.reason.clone(),
        })
        .collect();
    let mut out = match by_sim.iter().find(|o| o.status != Status::Pass) {
        None => result(t, Status::Pass, String::new()),
        Some(o) if sims.len() > 1 => result(t, o.status, format!("{}: {}", o.sim.name(), o.reason)),
        Some(o) => result(t, o.status, o.reason.clone()),
    };
    out.by_sim = by_sim;
    out
}

/// The testbench's top module for `task`.
fn top(task: Task) -> &'static str {
    match task {
        Task::Pe | Task::Mesh => "tb_mesh",
        Task::MacMesh => "tb_mac_mesh",
        Task::PeSparse => "tb_mesh_sparse",
    }
}

/// What a compiled submission is run as.
enum Exe {
    /// An Icarus Verilog image, run with `vvp -n`.
    Vvp(PathBuf),
    /// A Verilator binary.
    Binary(PathBuf),
}

/// Compiles the submission's sources with the given files under `sim`, in `work` (where the
/// testbenches' include files are put).
fn compile(sim: Sim, task: Task, sources: &[PathBuf], work: &Path) -> Result<Exe, String> {
    std::fs::create_dir_all(work.join("tb")).map_err(|e| format!("{}: {e}", work.display()))?;
    // Absolute paths: the compiler runs in the work folder.
    let work = &std::fs::canonicalize(work).map_err(|e| format!("{}: {e}", work.display()))?;
    for (inc, text) in GIVEN_INCLUDES {
        let p = work.join(inc);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let mut given: Vec<(&str, &str)> = match task {
        Task::Pe => vec![GIVEN_MESH, GIVEN_MESH_TB],
        Task::Mesh => GIVEN_PE.iter().copied().chain([GIVEN_MESH_TB]).collect(),
        Task::MacMesh => vec![GIVEN_MAC_TB],
        Task::PeSparse => GIVEN_PE[1..]
            .iter()
            .copied()
            .chain([GIVEN_SPARSE_MESH, GIVEN_SPARSE_TB])
            .collect(),
    };
    let names: Vec<String> = sources
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
        .collect();
    given.retain(|(n, _)| !names.iter().any(|s| s == n));
    let mut files: Vec<PathBuf> = sources
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    for (name, text) in given {
        let p = work.join(format!("given_{name}"));
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
        files.push(p);
    }
    let log = work.join("compile.log");
    let (mut cmd, exe, limit) = match sim {
        Sim::Icarus => {
            let vvp = work.join("sim.vvp");
            let mut cmd = Command::new("iverilog");
            cmd.args(["-g2012", "-o"]).arg(&vvp).args(&files);
            (cmd, Exe::Vvp(vvp), COMPILE_LIMIT_S)
        }
        Sim::Verilator => {
            // Warnings (style, lint) do not fail the build; errors do.
            let obj = work.join("obj");
            let mut cmd = Command::new("verilator");
            cmd.args([
                "--binary",
                "--timing",
                "-Wno-fatal",
                "-Wno-lint",
                "-Wno-style",
            ])
            .args(["-j", "2", "--top-module", top(task), "-Mdir"])
            .arg(&obj)
            .args(["-o", "sim"])
            .args(&files);
            (cmd, Exe::Binary(obj.join("sim")), VERILATOR_BUILD_LIMIT_S)
        }
    };
    cmd.current_dir(work);
    let done = run_limited(cmd, &log, Duration::from_secs(limit))?;
    if !done {
        return Err(format!(
            "compile error: {} ran past {limit} s",
            match sim {
                Sim::Icarus => "iverilog",
                Sim::Verilator => "verilator",
            }
        ));
    }
    let built = match &exe {
        Exe::Vvp(p) | Exe::Binary(p) => p.is_file(),
    };
    if !built {
        return Err(format!("compile error: {}", first_error(&log)));
    }
    Ok(exe)
}

/// Runs one test's simulation and judges its output.
fn simulate_and_judge(
    spec: &Spec,
    t: &TestCase,
    sim: Sim,
    root: &Path,
    exe: &Exe,
    work: &Path,
) -> TestResult {
    let golden = root.join("golden").join(&t.name);
    let out = work.join(&t.name);
    let _ = std::fs::remove_dir_all(&out);
    if let Err(e) = std::fs::create_dir_all(&out) {
        return result(t, Status::BadOutput, format!("{}: {e}", out.display()));
    }
    let mut cmd = match exe {
        Exe::Vvp(vvp) => {
            let mut cmd = Command::new("vvp");
            cmd.arg("-n").arg(vvp);
            cmd
        }
        Exe::Binary(bin) => Command::new(bin),
    };
    match t.golden {
        Golden::Cycles(c) => {
            cmd.arg(format!("+CYCLES={c}"));
        }
        _ => {
            cmd.arg(format!("+DIR={}", golden.display())).arg("+STEPS");
        }
    }
    cmd.arg(format!("+OUT={}", out.display()));
    let log = work.join(format!("{}.log", t.name));
    match run_limited(cmd, &log, Duration::from_secs(spec.time_limit_s)) {
        Err(e) => result(t, Status::BadOutput, e),
        Ok(false) => result(
            t,
            Status::Timeout,
            format!(
                "time-out: the simulation ran past {} s under {} (a combinational loop, or a design that never finishes)",
                spec.time_limit_s,
                sim.name()
            ),
        ),
        Ok(true) => {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            judge(t, &golden, &out, Some(&text))
        }
    }
}

/// A result with zero points.
fn result(t: &TestCase, status: Status, reason: String) -> TestResult {
    TestResult {
        test: t.name.clone(),
        points: if status == Status::Pass { t.points } else { 0 },
        max: t.points,
        status,
        reason,
        by_sim: Vec::new(),
    }
}
/// Grades the result folder `out` of one test; `log`: the simulation's output, if it ran.
fn judge(t: &TestCase, golden: &Path, out: &Path, log: Option<&str>) -> TestResult {
    if let Some(l) = log.and_then(|l| l.lines().find(|l| l.starts_with("ERROR"))) {
        return result(t, Status::BadOutput, format!("the testbench refused: {l}"));
    }
    if !out.is_dir() {
        return result(
            t,
            Status::BadOutput,
            format!("no result folder {} in the submission", t.name),
        );
    }
    match compare::grade(golden, out, true) {
        Err(e) => {
            // Work-folder paths say nothing to the student (and differ from run to run):
            // keep the file names.
            let e = e
                .replace(&format!("{}/", out.display()), "")
                .replace(&format!("{}/", golden.display()), "golden ");
            result(t, Status::BadOutput, format!("output is not a result: {e}"))
        }
        Ok(g) if g.passed() => result(t, Status::Pass, String::new()),
        Ok(g) => {
            let first = g.first_failure().unwrap_or_default();
            let timeout = log
                .and_then(|l| l.lines().find(|l| l.starts_with("TIMEOUT")))
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            result(t, Status::Fail, format!("{first}{timeout}"))
        }
    }
}
