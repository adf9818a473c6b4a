//! The test specification of a batch grading run (`tcrtl grade batch --tests SPEC`): which
//! Verilog task is graded, the time limit per test, and the tests, each worth some points and
//! each a golden problem the students have not seen: a seeded random GEMM of a given shape, a
//! directed set, or a number of MAC mesh cycles.
//!
//! ```json
//! { "task": "pe", "time_limit_s": 20,
//!   "tests": [ { "name": "rand_a", "points": 2, "m": 6, "n": 7, "k": 5, "seed": 9137 },
//!              { "name": "zeros", "points": 1, "directed": "signed_zeros" } ] }
//! ```
//!
//! `task` is `pe` (the student writes `pe`), `mesh` (`mesh4x4`), `pe_sparse` (lab 5's
//! `pe_sparse`; random 2:4 sparse tests only, `k` a multiple of 4) or `mac_mesh` (`mac_pe` and
//! `mac_mesh`, tests with `cycles`). Test names are unique, of letters, digits, `_` and `-`.

use crate::course::{directed, mac_golden};
use crate::dispatch::{run, Problem};
use crate::gemm::Gemm;
use crate::hw::CoreConfig;
use crate::io::golden::{write_golden, Origin};
use crate::numerics::dot::AccMode;
use crate::numerics::format::FP16;
use crate::sparse::SparseGemm;
use serde_json::Value;
use std::path::Path;

/// The graded Verilog task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Lab 1: the FP16 PE (`pe`), run in the reference mesh.
    Pe,
    /// Lab 2: the mesh (`mesh4x4`), with the reference PE.
    Mesh,
    /// Lab 0: the MAC cell and mesh (`mac_pe`, `mac_mesh`).
    MacMesh,
    /// Lab 5: the 2:4 sparse PE (`pe_sparse`), run in the reference sparse mesh.
    PeSparse,
}

impl Task {
    /// The name used in specs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Task::Pe => "pe",
            Task::Mesh => "mesh",
            Task::MacMesh => "mac_mesh",
            Task::PeSparse => "pe_sparse",
        }
    }
}

/// What one test runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Golden {
    /// A seeded random FP16 GEMM, M x N x K.
    Random {
        /// Rows of D.
        m: usize,
        /// Columns of D.
        n: usize,
        /// Depth.
        k: usize,
        /// The seed (hidden from the students).
        seed: u64,
    },
    /// A seeded random 2:4 sparse FP16 GEMM, M x N x K (K a multiple of 4), as `tcrtl gemm
    /// --sparse --m M --n N --k K --seed S` makes it.
    Sparse {
        /// Rows of D.
        m: usize,
        /// Columns of D.
        n: usize,
        /// Depth (dense K).
        k: usize,
        /// The seed (hidden from the students).
        seed: u64,
    },
    /// A directed set by name.
    Directed(&'static str),
    /// Lab 0's mesh for this many cycles.
    Cycles(usize),
}

/// One test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestCase {
    /// Its name (a column of the results).
    pub name: String,
    /// Points when it passes.
    pub points: u32,
    /// Its golden problem.
    pub golden: Golden,
}

/// A parsed specification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The task.
    pub task: Task,
    /// Seconds each simulation may run.
    pub time_limit_s: u64,
    /// The tests, in order.
    pub tests: Vec<TestCase>,
}

/// The largest random problem a test may ask for (elements of each matrix).
const MAX_ELEMENTS: usize = 4096;

/// Parses a specification's JSON text.
pub fn parse(text: &str) -> Result<Spec, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("test spec: {e}"))?;
    let task = match v["task"].as_str() {
        Some("pe") => Task::Pe,
        Some("mesh") => Task::Mesh,
        Some("mac_mesh") => Task::MacMesh,
        Some("pe_sparse") => Task::PeSparse,
        other => {
            return Err(format!(
            "test spec: task {other:?}: expected \"pe\", \"mesh\", \"pe_sparse\" or \"mac_mesh\""
        ))
        }
    };
    let time_limit_s = match &v["time_limit_s"] {
        Value::Null => 20,
        t => t
            .as_u64()
            .filter(|&t| (1..=3600).contains(&t))
            .ok_or("test spec: time_limit_s must be 1 to 3600 seconds")?,
    };
    let list = v["tests"]
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or("test spec: tests must be a non-empty list")?;
    let mut tests: Vec<TestCase> = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let name = t["name"]
            .as_str()
            .filter(|n| {
                !n.is_empty()
                    && n.len() <= 40
                    && n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
            .ok_or_else(|| {
                format!("test spec: test {i}: name must be 1 to 40 letters, digits, _ or -")
            })?
            .to_string();
        if tests.iter().any(|x| x.name == name) {
            return Err(format!("test spec: test name {name} appears twice"));
        }
        let points = t["points"]
            .as_u64()
            .and_then(|p| u32::try_from(p).ok())
            .filter(|&p| p <= 1000)
            .ok_or_else(|| format!("test spec: test {name}: points must be 0 to 1000"))?;
        let dim = |key: &str| -> Result<usize, String> {
            t[key]
                .as_u64()
                .map(|x| x as usize)
                .filter(|&x| x >= 1)
                .ok_or_else(|| format!("test spec: test {name}: {key} must be a positive integer"))
        };
        let golden = match (task, t.get("directed"), t.get("cycles")) {
            (Task::MacMesh, None, Some(_)) => {
                let c = dim("cycles")?;
                if c > mac_golden::MAX_CYCLES {
                    return Err(format!(
                        "test spec: test {name}: cycles must be at most {}",
                        mac_golden::MAX_CYCLES
                    ));
                }
                Golden::Cycles(c)
            }
            (Task::MacMesh, _, _) => {
                return Err(format!(
                    "test spec: test {name}: a mac_mesh test gives cycles only"
                ))
            }
            (Task::PeSparse, None, None) => {
                let (m, n, k) = (dim("m")?, dim("n")?, dim("k")?);
                if !k.is_multiple_of(4) {
                    return Err(format!(
                        "test spec: test {name}: k = {k} is not a multiple of 4 (2:4 sparsity works on groups of 4 along K)"
                    ));
                }
                check_size(&name, m, n, k)?;
                Golden::Sparse {
                    m,
                    n,
                    k,
                    seed: seed(t, &name)?,
                }
            }
            (Task::PeSparse, _, _) => {
                return Err(format!(
                    "test spec: test {name}: a pe_sparse test gives m, n, k and seed (the directed sets are dense)"
                ))
            }
            (_, Some(d), None) => {
                let d = d.as_str().unwrap_or("");
                let set = directed::find(d).ok_or_else(|| {
                    let known: Vec<&str> = directed::SETS.iter().map(|s| s.name).collect();
                    format!(
                        "test spec: test {name}: directed set {d:?} unknown (known: {})",
                        known.join(", ")
                    )
                })?;
                Golden::Directed(set.name)
            }
            (_, None, None) => {
                let (m, n, k) = (dim("m")?, dim("n")?, dim("k")?);
                check_size(&name, m, n, k)?;
                Golden::Random {
                    m,
                    n,
                    k,
                    seed: seed(t, &name)?,
                }
            }
            _ => {
                return Err(format!(
                    "test spec: test {name}: give m, n, k and seed, or directed"
                ))
            }
        };
        tests.push(TestCase {
            name,
            points,
            golden,
        });
    }
    Ok(Spec {
        task,
        time_limit_s,
        tests,
    })
}

/// Refuses a random problem larger than the testbench holds.
fn check_size(name: &str, m: usize, n: usize, k: usize) -> Result<(), String> {
    if m * k > MAX_ELEMENTS || k * n > MAX_ELEMENTS || m * n > MAX_ELEMENTS {
        return Err(format!(
            "test spec: test {name}: {m} x {n} x {k} is larger than the testbench holds"
        ));
    }
    Ok(())
}

/// A random test's seed.
fn seed(t: &Value, name: &str) -> Result<u64, String> {
    t["seed"]
        .as_u64()
        .ok_or_else(|| format!("test spec: test {name}: seed must be an integer"))
}

impl TestCase {
    /// Writes the test's golden folder `dir` (created if missing) from the model.
    pub fn write_golden(&self, dir: &Path) -> Result<(), String> {
        match &self.golden {
            Golden::Cycles(c) => mac_golden::write(dir, *c),
            Golden::Directed(name) => directed::find(name)
                .ok_or_else(|| format!("no directed set {name}"))?
                .write(dir),
            Golden::Random { m, n, k, seed } => {
                let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
                let g = Gemm::random(*m, *n, *k, cfg, *seed).map_err(|e| e.to_string())?;
                let done = run(Problem::Dense(&g), None, None).map_err(|e| e.to_string())?;
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                write_golden(dir, &g, &done.run.out.d, None, &Origin::Seed(*seed), None)
            }
            Golden::Sparse { m, n, k, seed } => {
                let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
                let sp = SparseGemm::random(*m, *n, *k, cfg, *seed).map_err(|e| e.to_string())?;
                let done = run(Problem::Sparse(&sp), None, None).map_err(|e| e.to_string())?;
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                let g = sp.dense();
                let origin = Origin::Seed(*seed);
                write_golden(dir, &g, &done.run.out.d, None, &origin, Some(&sp))
            }
        }
    }
}
