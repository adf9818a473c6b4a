//! One GEMM job: the problem assembled from what a front door was given (operand matrices
//! read from files or arrays, a seeded random or generated problem, a 2:4-sparse A dense or
//! compressed, block-scaled codes and scales, integer formats), checked with one set of
//! messages, and run on the configured core ([`run`]: either dataflow, the ideal store or the
//! TMA memory path, with an optional waveform and energy estimate and the check of D), giving
//! one [`RunReport`]. The command line (`tcrtl gemm`) and the Python package (`gemm`) both
//! build their problem here, so a problem and its report are the same through either.
//!
//! The messages name the operands and options by what they are ("the A operand", "the sparse
//! option"), never by a front door's flag or argument.

pub mod pattern;
pub use crate::dispatch::report;

pub use report::{MemoryReport, RunReport};

use self::pattern::{pattern_problem, Pattern};
use self::report::{ArithKeys, CheckReport, PromoteReport, SparseReport};
use crate::dispatch::energy::{counting_trace, estimate};
use crate::dispatch::{self, Problem, RunError};
use crate::gemm::functional::run_functional;
use crate::gemm::mx::MxGemm;
use crate::gemm::mx_input::{Codes, MxInput, MxInputError};
use crate::gemm::problem::{check_size, Gemm};
use crate::gemm::promote::run_clocked_promoted;
use crate::hw::{CoreConfig, Dataflow, MemPortConfig, MxSpec};
use crate::io::arith::ArithNames;
use crate::io::mx_check::{check_fused, check_reference};
use crate::io::values::acc_format;
use crate::numerics::dot::{AccMode, GpuRule, Preset};
use crate::numerics::flags::Flags;
use crate::numerics::format::Format;
use crate::numerics::int::{IntMode, IntOverflow};
use crate::rtl::TraceConfig;
use crate::sparse::input::{CompressedInput, CompressedInputError};
use crate::sparse::{check_b_bus, compress, Prune, SparseGemm};
use crate::tb::EnergyRequest;
use crate::verify::promote_ref::{promoted_gemm, promoted_mismatches};
use crate::verify::{self, gemm_ref::mismatches};

/// Why a job could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The problem or an option is not valid.
    #[error("{0}")]
    Invalid(String),
    /// A block-scaled operand or its scales (the operand it concerns, if one, for the front
    /// door to name).
    #[error("{0}")]
    Mx(MxInputError),
    /// A compressed 2:4 A (the values or the metadata, for the front door to name).
    #[error("{0}")]
    Compressed(CompressedInputError),
    /// The run did not finish.
    #[error(transparent)]
    Run(#[from] RunError),
}

impl From<String> for JobError {
    fn from(s: String) -> JobError {
        JobError::Invalid(s)
    }
}

impl From<&str> for JobError {
    fn from(s: &str) -> JobError {
        JobError::Invalid(s.to_string())
    }
}

fn invalid(e: impl std::fmt::Display) -> JobError {
    JobError::Invalid(e.to_string())
}

/// The arithmetic of a dense job: the core configuration on the default 4 x 4
/// output-stationary array, and the preset and GPU rule of the nvidia mode.
#[derive(Clone, Copy, Debug)]
pub struct JobArith {
    /// Formats, mode, width and accumulator.
    pub cfg: CoreConfig,
    /// The preset (nvidia mode).
    pub preset: Option<Preset>,
    /// The GPU and instruction whose rule the nvidia mode runs.
    pub rule: Option<GpuRule>,
}

/// The arithmetic the names give, for the clocked core: integer formats (s8, u8, s4, u4)
/// accumulate into int32, wrapping or (`satfinite`) clamping, and take no output format;
/// floating-point formats take the mode, preset and output format named (no `exact`).
pub fn arith(
    names: &ArithNames<'_>,
    out_format: &str,
    width: usize,
    satfinite: bool,
) -> Result<JobArith, JobError> {
    if let Some((a, b)) = names.int_formats()? {
        if !out_format.eq_ignore_ascii_case("fp32") {
            return Err(invalid(
                "the output format applies to floating-point formats; integer GEMMs \
                 accumulate into int32",
            ));
        }
        let overflow = if satfinite {
            IntOverflow::SatFinite
        } else {
            IntOverflow::Wrap
        };
        let im = IntMode { a, b, overflow };
        return Ok(JobArith {
            cfg: CoreConfig::new(a.container(), b.container(), AccMode::Int(im), width),
            preset: None,
            rule: None,
        });
    }
    if satfinite {
        return Err(invalid(
            "satfinite applies to integer formats (s8, u8, s4, u4) only",
        ));
    }
    let acc = acc_format(out_format)?;
    let a = names.resolve_datapath(acc)?;
    Ok(JobArith {
        cfg: CoreConfig::new(a.fmt_a, a.fmt_b, a.mode, width).with_acc(acc),
        preset: a.preset,
        rule: a.rule,
    })
}

/// `cfg` on an array of `rows x cols` PEs in `dataflow`.
pub fn on_array(
    cfg: CoreConfig,
    rows: usize,
    cols: usize,
    dataflow: Dataflow,
) -> Result<CoreConfig, JobError> {
    cfg.with_array(rows, cols)
        .map(|c| c.with_dataflow(dataflow))
        .map_err(|e| invalid(format!("a {rows} x {cols} array: {e}")))
}

/// The memory path: `None` for the ideal store, or the TMA path with the default memory
/// parameters, `stages` operand stages (automatic when `None`) and the swizzle on or off.
/// Stages and an unswizzled layout are options of the TMA path only.
pub fn memory_port(
    tma: bool,
    stages: Option<usize>,
    swizzle: bool,
) -> Result<Option<MemPortConfig>, JobError> {
    if stages == Some(0) {
        return Err(invalid("0 stages: at least 1 stage is needed"));
    }
    if !tma {
        if stages.is_some() || !swizzle {
            return Err(invalid(
                "the memory options (stages, swizzle) apply to the TMA memory path only",
            ));
        }
        return Ok(None);
    }
    Ok(Some(MemPortConfig {
        stages: stages.unwrap_or(0),
        swizzle,
        ..MemPortConfig::default()
    }))
}

/// Where the operands come from.
#[derive(Clone, Debug)]
pub enum Operands {
    /// A generated `m x n x k` problem: seeded random operands (`Pattern::Random`) or a
    /// teaching pattern.
    Generated {
        /// Rows of A and D.
        m: usize,
        /// Columns of B and D.
        n: usize,
        /// The inner dimension.
        k: usize,
        /// The seed of the random operands.
        seed: u64,
        /// What the operands hold.
        pattern: Pattern,
    },
    /// Given matrices: A (`m x k`) and B (`k x n`) bit patterns of their formats, C (`m x n`,
    /// accumulator patterns) or zeros. With the sparse option, A is dense and satisfies 2:4
    /// (or is pruned).
    Given {
        /// A.
        a: Codes,
        /// B.
        b: Codes,
        /// C, or zeros.
        c: Option<Codes>,
    },
    /// A 2:4-sparse A given compressed (kept values and metadata), B and C.
    Compressed {
        /// The compressed A.
        a: CompressedInput,
        /// B.
        b: Codes,
        /// C, or zeros.
        c: Option<Codes>,
    },
    /// A block-scaled problem: element and scale codes, C FP32 patterns or zeros.
    Mx {
        /// The block formats and tensor scales.
        spec: MxSpec,
        /// A's element codes, `m x k`.
        a: Codes,
        /// B's element codes, `k x n`.
        b: Codes,
        /// A's scale codes, `m x k/bs`.
        a_scales: Codes,
        /// B's scale codes, `k/bs x n`.
        b_scales: Codes,
        /// C, or zeros.
        c: Option<Codes>,
    },
}

/// One GEMM to run: the core, the operands, the memory path and what to record.
#[derive(Clone, Debug)]
pub struct GemmJob {
    /// The core: formats, mode, width, array, dataflow, accumulator (for a block-scaled
    /// problem, [`crate::gemm::mx_input::core_config`]'s).
    pub cfg: CoreConfig,
    /// The nvidia mode's preset (it picks the reference D is checked against).
    pub preset: Option<Preset>,
    /// The GPU rule the nvidia mode runs (reported).
    pub rule: Option<GpuRule>,
    /// The operands.
    pub operands: Operands,
    /// 2:4 sparsity: `None` dense, or how a given dense A is made 2:4 (an A that is not is
    /// refused, or pruned; a random or compressed A has nothing to prune).
    pub sparse: Option<Prune>,
    /// The TMA memory path, or `None` for the ideal store.
    pub memory: Option<MemPortConfig>,
    /// The waveform to write.
    pub trace: Option<TraceConfig>,
    /// The energy estimate to make.
    pub energy: Option<EnergyRequest>,
    /// Check D against the reference also for given operands (generated ones always are).
    pub check: bool,
    /// Promote to FP32 every N products along K ([`crate::gemm::promote`]): a dense floating-point
    /// problem, each K-chunk a core run of its own on the ideal store (no memory path,
    /// waveform or energy estimate).
    pub promote_every: Option<usize>,
    /// The file the front door writes D to (reported only).
    pub out: Option<String>,
}

impl GemmJob {
    /// A job of `operands` on `cfg`: dense, the ideal store, nothing recorded.
    pub fn new(cfg: CoreConfig, operands: Operands) -> GemmJob {
        GemmJob {
            cfg,
            preset: None,
            rule: None,
            operands,
            sparse: None,
            memory: None,
            trace: None,
            energy: None,
            check: false,
            promote_every: None,
            out: None,
        }
    }

    /// Checks the job and builds its problem.
    pub fn build(&self) -> Result<JobProblem, JobError> {
        let cfg = self.cfg;
        let int = matches!(cfg.mode, AccMode::Int(_));
        match (&self.operands, self.sparse) {
            (Operands::Compressed { .. }, None) => {
                return Err(invalid(
                    "a compressed A (kept values and metadata) is 2:4 sparse: it needs the \
                     sparse option",
                ))
            }
            (Operands::Mx { .. }, Some(_)) => {
                return Err(invalid("block-scaled formats run dense (no 2:4 sparsity)"))
            }
            (Operands::Generated { pattern, .. }, Some(_)) if *pattern != Pattern::Random => {
                return Err(invalid(
                    "a generated pattern runs dense (no 2:4 sparsity); sparse problems are \
                     random or given",
                ))
            }
            _ => {}
        }
        if int {
            if self.sparse.is_some() {
                return Err(invalid("integer formats run dense (no 2:4 sparsity)"));
            }
            if let Operands::Generated { pattern, .. } = &self.operands {
                if *pattern != Pattern::Random {
                    return Err(invalid(
                        "integer formats take random (seeded) or given operands, not a \
                         generated pattern",
                    ));
                }
            }
            if self.memory.is_some() && (cfg.fmt_a.width() < 8 || cfg.fmt_b.width() < 8) {
                return Err(invalid(
                    "the TMA memory path moves whole bytes: 4-bit integer operands (s4, u4) \
                     run on the ideal path only",
                ));
            }
        }
        if self.sparse.is_some() {
            check_b_bus(&cfg).map_err(invalid)?;
        }
        let problem = match (&self.operands, self.sparse) {
            (
                Operands::Generated {
                    m,
                    n,
                    k,
                    seed,
                    pattern,
                },
                sparse,
            ) => {
                let (m, n, k) = (*m, *n, *k);
                check_size(m, n, k).map_err(invalid)?;
                match sparse {
                    Some(_) => JobProblem::sparse(
                        SparseGemm::random(m, n, k, cfg, *seed).map_err(invalid)?,
                    ),
                    None => JobProblem::Dense(pattern_problem(*pattern, m, n, k, cfg, *seed)?),
                }
            }
            (Operands::Given { a, b, c }, None) => {
                let (m, k, n) = inner(a, b)?;
                check_size(m, n, k).map_err(invalid)?;
                let a = patterns(a, "A", cfg.fmt_a)?;
                let b = patterns(b, "B", cfg.fmt_b)?;
                let c = c_words(c.as_ref(), m, n, cfg.acc)?;
                JobProblem::Dense(Gemm::new(m, n, k, cfg, a, b, c).map_err(invalid)?)
            }
            (Operands::Given { a, b, c }, Some(prune)) => {
                let av = patterns(a, "A", cfg.fmt_a)?;
                let ca = compress(cfg.fmt_a, a.rows, a.cols, &av, prune).map_err(invalid)?;
                let (m, _, n) = inner(a, b)?;
                let b = patterns(b, "B", cfg.fmt_b)?;
                let c = c_words(c.as_ref(), m, n, cfg.acc)?;
                JobProblem::sparse(SparseGemm::new(cfg, ca, n, b, c).map_err(invalid)?)
            }
            (Operands::Compressed { a, b, c }, _) => {
                let ca = a
                    .clone()
                    .build()
                    .map_err(JobError::Compressed)?
                    .map_err(invalid)?;
                let (m, k) = (ca.m(), ca.k());
                if b.rows != k {
                    return Err(invalid(format!(
                        "inner dimensions differ: A is {m} x {k} but B is {} x {}",
                        b.rows, b.cols
                    )));
                }
                let n = b.cols;
                let b = patterns(b, "B", cfg.fmt_b)?;
                let c = c_words(c.as_ref(), m, n, cfg.acc)?;
                JobProblem::sparse(SparseGemm::new(cfg, ca, n, b, c).map_err(invalid)?)
            }
            (
                Operands::Mx {
                    spec,
                    a,
                    b,
                    a_scales,
                    b_scales,
                    c,
                },
                _,
            ) => {
                let mut g = MxInput {
                    cfg,
                    spec: *spec,
                    a: a.clone(),
                    b: b.clone(),
                    a_scales: a_scales.clone(),
                    b_scales: b_scales.clone(),
                    c: None,
                }
                .build()
                .map_err(JobError::Mx)?;
                if c.is_some() {
                    g.c = c_words(c.as_ref(), g.m, g.n, crate::numerics::format::FP32)?;
                }
                JobProblem::Mx(g)
            }
        };
        Ok(problem)
    }

    /// Whether D is checked: for a generated problem always, else when asked.
    pub fn checks(&self) -> bool {
        self.check || matches!(self.operands, Operands::Generated { .. })
    }

    /// The seed of a generated problem.
    fn seed(&self) -> Option<u64> {
        match &self.operands {
            Operands::Generated { seed, .. } => Some(*seed),
            _ => None,
        }
    }

    /// Builds the problem and runs it ([`run`]).
    pub fn run(&self) -> Result<(JobProblem, RunReport), JobError> {
        let problem = self.build()?;
        let report = run(self, &problem)?;
        Ok((problem, report))
    }
}

/// `(m, k, n)` of A and B, which must agree on K.
fn inner(a: &Codes, b: &Codes) -> Result<(usize, usize, usize), JobError> {
    if a.cols != b.rows {
        return Err(invalid(format!(
            "inner dimensions differ: A is {} x {} but B is {} x {}",
            a.rows, a.cols, b.rows, b.cols
        )));
    }
    Ok((a.rows, a.cols, b.cols))
}

/// The operand `name`'s words, each checked to be a bit pattern of `fmt`.
fn patterns(x: &Codes, name: &str, fmt: Format) -> Result<Vec<u64>, JobError> {
    if x.codes.len() != x.rows * x.cols {
        return Err(invalid(format!(
            "{name} holds {} elements but is {} x {}",
            x.codes.len(),
            x.rows,
            x.cols
        )));
    }
    let cols = x.cols.max(1);
    match x.codes.iter().position(|w| w & !fmt.mask() != 0) {
        None => Ok(x.codes.clone()),
        Some(i) => Err(invalid(format!(
            "{name}[{}, {}] = {:#x} is not a {fmt} bit pattern",
            i / cols,
            i % cols,
            x.codes[i]
        ))),
    }
}

/// C's words (`m x n` patterns of the accumulator format `acc`), or zeros.
fn c_words(c: Option<&Codes>, m: usize, n: usize, acc: Format) -> Result<Vec<u32>, JobError> {
    let Some(c) = c else {
        return Ok(vec![0; m * n]);
    };
    if (c.rows, c.cols) != (m, n) || c.codes.len() != m * n {
        return Err(invalid(format!(
            "C must be {m} x {n} (as D) but is {} x {}",
            c.rows, c.cols
        )));
    }
    // An integer accumulator takes any int32 word; a floating-point one its patterns.
    let mask = if acc.width() >= 32 {
        u64::from(u32::MAX)
    } else {
        acc.mask()
    };
    match c.codes.iter().position(|w| w & !mask != 0) {
        None => Ok(c.codes.iter().map(|&w| w as u32).collect()),
        Some(i) => Err(invalid(format!(
            "C[{}, {}] = {:#x} is not a {acc} bit pattern",
            i / n.max(1),
            i % n.max(1),
            c.codes[i]
        ))),
    }
}

/// A job's problem, built.
#[derive(Clone, Debug)]
pub enum JobProblem {
    /// Dense A and B (floating-point or integer).
    Dense(Gemm),
    /// A 2:4-sparse A, with the dense problem it stands for.
    Sparse(SparseGemm, Box<Gemm>),
    /// Block-scaled A and B.
    Mx(MxGemm),
}

impl JobProblem {
    fn sparse(s: SparseGemm) -> JobProblem {
        let dense = Box::new(s.dense());
        JobProblem::Sparse(s, dense)
    }

    /// The problem as the engines take it.
    pub fn problem(&self) -> Problem<'_> {
        match self {
            JobProblem::Dense(g) => Problem::Dense(g),
            JobProblem::Sparse(s, _) => Problem::Sparse(s),
            JobProblem::Mx(g) => Problem::Mx(g),
        }
    }

    /// The dense problem (a sparse one's with A decompressed); `None` for block-scaled ones.
    pub fn dense(&self) -> Option<&Gemm> {
        match self {
            JobProblem::Dense(g) => Some(g),
            JobProblem::Sparse(_, g) => Some(g),
            JobProblem::Mx(_) => None,
        }
    }

    /// The sparse problem, if this is one.
    pub fn sparse_problem(&self) -> Option<&SparseGemm> {
        match self {
            JobProblem::Sparse(s, _) => Some(s),
            _ => None,
        }
    }

    /// `(m, n, k)`.
    pub fn dims(&self) -> (usize, usize, usize) {
        match self {
            JobProblem::Dense(g) => (g.m, g.n, g.k),
            JobProblem::Sparse(s, _) => (s.m, s.n, s.k),
            JobProblem::Mx(g) => (g.m, g.n, g.k),
        }
    }
}

/// Runs `problem` (built by `job`) on the core `job` configures, through its memory path,
/// writing its waveform, estimating its energy and checking D as asked: the report.
pub fn run(job: &GemmJob, problem: &JobProblem) -> Result<RunReport, JobError> {
    if let Some(every) = job.promote_every {
        return run_promoted(job, problem, every);
    }
    let p = problem.problem();
    let cfg = *p.config();
    let trace = match &job.energy {
        Some(e) => Some(counting_trace(
            job.trace.as_ref(),
            &p,
            job.memory.as_ref(),
            &e.tech,
            e.clock_ghz,
        )?),
        None => job.trace.clone(),
    };
    let done = dispatch::run(p, job.memory.as_ref(), trace.as_ref())?;
    let energy = match &job.energy {
        Some(e) => Some(estimate(&p, &done, &e.tech, e.clock_ghz).ok_or(RunError::NoActivity)?),
        None => None,
    };
    let run = &done.run;
    let d = &run.out.d;
    let check = if job.checks() {
        Some(match problem {
            JobProblem::Mx(g) => (check_reference(g), check_fused(g, d)?.mismatches),
            JobProblem::Dense(_) | JobProblem::Sparse(..) => {
                match verify::check(p, job.preset, d)? {
                    Some(c) => (c.reference, c.mismatches),
                    // A format and preset pair the independent references lack: the
                    // functional model (the numerics layer, itself checked against SoftFloat
                    // and the GPU measurements).
                    None => {
                        let g = problem.dense().ok_or("no dense problem")?;
                        let want = run_functional(g).map_err(invalid)?.d;
                        ("functional", mismatches(d, &want))
                    }
                }
            }
        })
    } else {
        None
    };
    let (m, n, k) = problem.dims();
    let macs = match problem {
        JobProblem::Sparse(s, _) => s.macs(),
        _ => (m * n * k) as u64,
    };
    let sparse = problem
        .sparse_problem()
        .map(|s| SparseReport::new(s, &done));
    let (reference, mismatch_at) = match check {
        Some((r, bad)) => (Some(r), bad),
        None => (None, Vec::new()),
    };
    Ok(RunReport {
        cycles: run.cycles,
        tiles: run.tiles,
        mac_slots_used: run.mac_slots_used,
        mac_slots_offered: run.mac_slots_offered,
        utilization: run.utilization(),
        sim_seconds: run.sim_seconds,
        cycles_per_second: run.cycles_per_second(),
        macs_per_second: if run.sim_seconds > 0.0 {
            macs as f64 / run.sim_seconds
        } else {
            0.0
        },
        flags: run.out.flags,
        waves: job.trace.as_ref().map(|t| t.path.display().to_string()),
        check: reference.map(|reference| CheckReport {
            reference,
            mismatches: mismatch_at.len(),
        }),
        sparse,
        promote: None,
        memory: MemoryReport::new(cfg.dataflow(), done.memory.as_ref()),
        traffic: run.traffic,
        energy,
        d: d.clone(),
        mismatch_at,
        ..report_header(job, problem, &cfg, macs)
    })
}

/// The keys every report of `job` starts with: the shape, the names and keys of the
/// problem's kind, the array, the useful MACs and the output file; the run's own keys empty.
fn report_header(job: &GemmJob, problem: &JobProblem, cfg: &CoreConfig, macs: u64) -> RunReport {
    let (m, n, k) = problem.dims();
    let (format, format_b, acc, out_format, arith) = kind_keys(job, problem, cfg);
    RunReport {
        m,
        n,
        k,
        format,
        format_b,
        acc,
        arith,
        width: cfg.width,
        rows: cfg.rows(),
        cols: cfg.cols(),
        dataflow: cfg.dataflow().name(),
        out_format,
        cycles: 0,
        tiles: 0,
        macs,
        mac_slots_used: 0,
        mac_slots_offered: 0,
        utilization: 0.0,
        sim_seconds: 0.0,
        cycles_per_second: 0.0,
        macs_per_second: 0.0,
        flags: Flags::NONE,
        out: job.out.clone(),
        waves: None,
        check: None,
        sparse: None,
        promote: None,
        memory: MemoryReport::new(cfg.dataflow(), None),
        traffic: None,
        energy: None,
        d: Vec::new(),
        mismatch_at: Vec::new(),
    }
}

/// The names and keys of the problem's kind: A's and B's formats, the accumulation, the
/// output format, and the kind's own keys.
fn kind_keys(
    job: &GemmJob,
    problem: &JobProblem,
    cfg: &CoreConfig,
) -> (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    ArithKeys,
) {
    match (problem, cfg.mode) {
        (JobProblem::Mx(g), _) => (
            g.spec.a.name(),
            g.spec.b.name(),
            "fused",
            "fp32",
            ArithKeys::Mx {
                block: g.spec.block(),
                a_tensor_scale: g.spec.a_tensor.map(f32::from_bits),
                b_tensor_scale: g.spec.b_tensor.map(f32::from_bits),
            },
        ),
        (_, AccMode::Int(im)) => (
            im.a.name,
            im.b.name,
            "int32",
            "int32",
            ArithKeys::Int {
                overflow: im.overflow.name(),
                seed: job.seed(),
            },
        ),
        (_, mode) => (
            cfg.fmt_a.name,
            cfg.fmt_b.name,
            mode.name(),
            cfg.acc.name,
            ArithKeys::Float {
                preset: job.preset.map(|p| p.name()),
                gpu: job.rule.map(|r| r.gpu.name()),
                instr: job.rule.map(|r| r.instr.name()),
                seed: job.seed(),
            },
        ),
    }
}

/// A dense floating-point problem promoted to FP32 every `every` products: each K-chunk a
/// core run from a zero accumulator on the ideal store, added outside the core; checked
/// against `verify::promote_ref`.
fn run_promoted(job: &GemmJob, problem: &JobProblem, every: usize) -> Result<RunReport, JobError> {
    let JobProblem::Dense(g) = problem else {
        return Err(invalid(
            "FP32 promotion applies to dense floating-point problems (no 2:4 sparsity or \
             block-scaled formats)",
        ));
    };
    if job.memory.is_some() || job.trace.is_some() || job.energy.is_some() {
        return Err(invalid(
            "FP32 promotion runs each K-chunk as a run of its own on the ideal operand store: \
             not through the TMA memory path, with a waveform or with an energy estimate",
        ));
    }
    let run = run_clocked_promoted(g, every).map_err(invalid)?;
    let mismatch_at = if job.checks() {
        Some(promoted_mismatches(
            &run.out.d,
            &promoted_gemm(g, job.preset, every)?,
        ))
    } else {
        None
    };
    let cfg = g.cfg;
    let (cycles, sim_seconds) = (run.cycles(), run.sim_seconds());
    let per_second = |x: u64| {
        if sim_seconds > 0.0 {
            x as f64 / sim_seconds
        } else {
            0.0
        }
    };
    Ok(RunReport {
        cycles,
        tiles: run.chunks.first().map_or(0, |r| r.tiles),
        mac_slots_used: run.chunks.iter().map(|r| r.mac_slots_used).sum(),
        mac_slots_offered: run.chunks.iter().map(|r| r.mac_slots_offered).sum(),
        utilization: run.utilization(),
        sim_seconds,
        cycles_per_second: per_second(cycles),
        macs_per_second: per_second(g.macs()),
        flags: run.out.flags,
        check: mismatch_at.as_ref().map(|bad| CheckReport {
            reference: "promote_ref (chunk references + FP32 additions)",
            mismatches: bad.len(),
        }),
        sparse: None,
        promote: Some(PromoteReport {
            promote_every: every,
            chunks: run.chunks.len(),
            chunk_cycles: run.chunks.iter().map(|r| r.cycles).collect(),
        }),
        d: run.out.d,
        mismatch_at: mismatch_at.unwrap_or_default(),
        ..report_header(job, problem, &cfg, g.macs())
    })
}
