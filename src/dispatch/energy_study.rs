//! The cases of the energy study (`tcrtl energy`, `docs/energy.md`): one GEMM per operand
//! format, the same GEMM through the memory path across bandwidths and latencies and with
//! shared-memory reuse on and off, and operands of different activity (random, ReLU-like
//! zeros, 2:4 sparse against the same work dense). Every problem is seeded: the same size and
//! seed give the same cases.

use super::Problem;
use crate::gemm::mx::MxGemm;
use crate::gemm::problem::{random_operand, Gemm};
use crate::gemm::rng::SplitMix64;
use crate::hw::memory::MemParams;
use crate::hw::{CoreConfig, MemLayout, MemPortConfig};
use crate::numerics::dot::AccMode;
use crate::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
use crate::numerics::int::{IntFormat, IntMode, IntOverflow, S4, S8};
use crate::numerics::mx::{quantise, BlockFormat};
use crate::sparse::SparseGemm;

/// A study's problem, owned.
#[derive(Debug, Clone)]
pub enum StudyProblem {
    /// A dense GEMM (floating point or integer).
    Dense(Gemm),
    /// A 2:4-sparse A times a dense B.
    Sparse(SparseGemm),
    /// A block-scaled GEMM.
    Mx(MxGemm),
}

impl StudyProblem {
    /// The problem to run.
    pub fn problem(&self) -> Problem<'_> {
        match self {
            StudyProblem::Dense(g) => Problem::Dense(g),
            StudyProblem::Sparse(s) => Problem::Sparse(s),
            StudyProblem::Mx(g) => Problem::Mx(g),
        }
    }
}

/// One case: its study, its label, the problem and the memory path (`None`: the ideal port).
#[derive(Debug, Clone)]
pub struct StudyCase {
    /// `formats`, `formats_tma`, `memory` or `data`.
    pub study: &'static str,
    /// What differs in this case (`fp16`, `latency 500, 16 B/cycle`, ...).
    pub label: String,
    /// The GEMM.
    pub problem: StudyProblem,
    /// The memory path.
    pub memory: Option<MemPortConfig>,
    /// The bandwidth (bytes per cycle) and latency (cycles) of a `memory` case.
    pub grid: Option<(u32, u32)>,
}

/// Why a case could not be built.
pub type StudyError = String;

/// The PE array the study's cores are built on (`rows`, `cols`).
pub type Array = (usize, usize);

/// `cfg` on `array`.
fn on(array: Array, cfg: CoreConfig) -> Result<CoreConfig, StudyError> {
    cfg.with_array(array.0, array.1).map_err(|e| e.to_string())
}

/// A dense random problem of `fmt` operands in `ieee` mode, w = 1.
fn dense(fmt: Format, size: usize, seed: u64, array: Array) -> Result<Gemm, StudyError> {
    let cfg = on(array, CoreConfig::new(fmt, fmt, AccMode::Ieee, 1))?;
    Gemm::random(size, size, size, cfg, seed).map_err(|e| e.to_string())
}

/// A dense random integer problem.
fn integer(fmt: IntFormat, size: usize, seed: u64, array: Array) -> Result<Gemm, StudyError> {
    let mode = IntMode {
        a: fmt,
        b: fmt,
        overflow: IntOverflow::Wrap,
    };
    let cfg = CoreConfig::new(fmt.container(), fmt.container(), AccMode::Int(mode), 1);
    Gemm::random(size, size, size, on(array, cfg)?, seed).map_err(|e| e.to_string())
}

/// A block-scaled problem quantised from random FP32 values.
fn block_scaled(
    fmt: BlockFormat,
    size: usize,
    seed: u64,
    array: Array,
) -> Result<MxGemm, StudyError> {
    let mut rng = SplitMix64::new(seed);
    let mut values =
        |count: usize| -> Vec<u64> { (0..count).map(|_| random_operand(FP32, &mut rng)).collect() };
    let qa = quantise(fmt, FP32, &values(size * size), size).map_err(|e| e.to_string())?;
    let qb = quantise(fmt, FP32, &values(size * size), size).map_err(|e| e.to_string())?;
    let mut g =
        MxGemm::from_quantised(&qa, &qb, vec![0; size * size], 1).map_err(|e| e.to_string())?;
    g.cfg = on(array, g.cfg)?;
    Ok(g)
}

/// Every case for a format study of `size`^3 GEMMs and memory and data studies of
/// `(size / 2)`^3 ones (at least 8), seeded with `seed`, on cores of `array` PEs (4 x 4 by
/// default; the memory path feeds every size, `docs/memory.md`, "Any array size").
pub fn cases(size: usize, seed: u64, array: Array) -> Result<Vec<StudyCase>, StudyError> {
    let half = (size / 2).max(8);
    let mut out = Vec::new();
    let case = |study, label: &str, problem, memory: Option<MemPortConfig>| StudyCase {
        study,
        label: label.to_string(),
        problem,
        memory,
        grid: None,
    };
    let floats = [
        ("tf32", TF32),
        ("fp16", FP16),
        ("bf16", BF16),
        ("e4m3", E4M3),
        ("e5m2", E5M2),
    ];
    for (name, f) in floats {
        out.push(case(
            "formats",
            name,
            StudyProblem::Dense(dense(f, size, seed, array)?),
            None,
        ));
    }
    for f in [
        BlockFormat::MxFp8E4M3,
        BlockFormat::MxFp4,
        BlockFormat::NvFp4,
    ] {
        let g = block_scaled(f, size, seed, array)?;
        out.push(case("formats", f.name(), StudyProblem::Mx(g), None));
    }
    for f in [S8, S4] {
        out.push(case(
            "formats",
            f.name,
            StudyProblem::Dense(integer(f, size, seed, array)?),
            None,
        ));
    }
    // The memory path moves whole bytes: the 8-bit and wider formats.
    let tma = Some(MemPortConfig::default());
    for (name, f) in floats {
        let g = StudyProblem::Dense(dense(f, size, seed, array)?);
        out.push(case("formats_tma", name, g, tma));
    }
    let g = StudyProblem::Dense(integer(S8, size, seed, array)?);
    out.push(case("formats_tma", S8.name, g, tma));
    // The memory wall: FP16 across the grid, then without shared-memory reuse.
    let fp16 = dense(FP16, half, seed, array)?;
    for latency in [0u32, 500, 2000] {
        for bandwidth in [4u32, 16, 64] {
            let params = MemParams {
                latency,
                bytes_per_cycle: bandwidth,
                ..MemParams::default()
            };
            let memory = MemPortConfig {
                params,
                ..MemPortConfig::default()
            };
            out.push(StudyCase {
                grid: Some((bandwidth, latency)),
                ..case(
                    "memory",
                    &format!("latency {latency}, {bandwidth} B/cycle"),
                    StudyProblem::Dense(fp16.clone()),
                    Some(memory),
                )
            });
        }
    }
    // The smallest shared memory (in 1 KB steps) that holds the operand stages but not A's
    // panel: every tile then loads A again (a small GEMM's panel fits wherever its stages
    // do: no such case then).
    let small = (2..=256u32)
        .map(|kib| MemPortConfig {
            params: MemParams {
                smem_bytes: kib * 1024,
                ..MemParams::default()
            },
            ..MemPortConfig::default()
        })
        .find(|pc| MemLayout::new(&fp16.cfg, half, half, half, pc).is_ok_and(|l| !l.panel));
    out.push(case(
        "reuse",
        "228 KB shared memory",
        StudyProblem::Dense(fp16.clone()),
        tma,
    ));
    if let Some(small) = small {
        out.push(case(
            "reuse",
            &format!("{} KB shared memory", small.params.smem_bytes / 1024),
            StudyProblem::Dense(fp16.clone()),
            Some(small),
        ));
    }
    // Data: random, ReLU-like (half of A zero), all ones, and 2:4 sparse against the same
    // work dense.
    out.push(case(
        "data",
        "random",
        StudyProblem::Dense(fp16.clone()),
        None,
    ));
    let mut rng = SplitMix64::new(seed ^ 0x5EED);
    let relu_a: Vec<u64> = fp16
        .a
        .iter()
        .map(|&x| if rng.below(2) == 0 { 0 } else { x & 0x7fff })
        .collect();
    let relu = Gemm::new(
        half,
        half,
        half,
        fp16.cfg,
        relu_a,
        fp16.b.clone(),
        fp16.c.clone(),
    )
    .map_err(|e| e.to_string())?;
    out.push(case(
        "data",
        "relu (half of A zero)",
        StudyProblem::Dense(relu),
        None,
    ));
    // FP16 1.0.
    let ones: Vec<u64> = vec![0x3c00; half * half];
    let ones = Gemm::new(
        half,
        half,
        half,
        fp16.cfg,
        ones.clone(),
        ones,
        vec![0; half * half],
    )
    .map_err(|e| e.to_string())?;
    out.push(case("data", "all ones", StudyProblem::Dense(ones), None));
    let sparse = SparseGemm::random(half, half, half, fp16.cfg, seed).map_err(|e| e.to_string())?;
    out.push(case(
        "data",
        "2:4 pruned A, dense",
        StudyProblem::Dense(sparse.dense()),
        None,
    ));
    out.push(case(
        "data",
        "2:4 pruned A, sparse",
        StudyProblem::Sparse(sparse),
        None,
    ));
    Ok(out)
}
