//! `tcrtl workload run`: every layer of a SCALE-Sim topology file (`docs/workloads.md`) as a
//! random GEMM on the clocked core (ideal memory path), each checked against the independent
//! references of `verify` (whole, or a seeded sample of D for large layers), reported as
//! `layers.csv`, `summary.json` and `layers.svg` in `--out` and one line per layer; a shard
//! of the layers at a time (`--shard`), continued after an interrupt (`--resume`), and
//! `tcrtl workload merge` of the shards' reports. The parsing, the lowering and the checks
//! are the library's (`tensorcore_rtl::workload`); this folder folds them into commands:
//! [`mod@run`] runs layers, [`report`] writes and reads reports, [`mod@merge`] joins shards.

mod merge;
mod operands;
mod report;
mod run;

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::array::ArrayArgs;
use super::values;

/// `--acc` of `tcrtl workload run`: the modes the clocked tensor core runs (no `exact`).
const ACC_HELP: &str = "Accumulation mode: ieee (default), fused, nvidia (needs --preset)";

/// Arguments of `tcrtl workload`.
#[derive(Args, Debug)]
pub struct WorkloadArgs {
    #[command(subcommand)]
    what: WorkloadCommand,
}

#[derive(Subcommand, Debug)]
enum WorkloadCommand {
    /// Runs every layer of a SCALE-Sim topology CSV (convolution or GEMM format) on the
    /// clocked core and writes layers.csv and summary.json into --out.
    Run(Box<RunArgs>),
    /// Joins the reports of a run's shards (`workload run --shard I/N`) into the report of
    /// the whole run, written into --out.
    Merge(merge::MergeArgs),
}

/// Arguments of `tcrtl workload run`.
#[derive(Args, Debug)]
#[command(mut_arg("acc", |a| a.help(ACC_HELP)))]
pub struct RunArgs {
    /// The topology: SCALE-Sim's convolution CSV (Layer name, IFMAP Height, IFMAP Width,
    /// Filter Height, Filter Width, Channels, Num Filter, Strides) or GEMM CSV (Layer, M, N,
    /// K), told apart by the header.
    #[arg(value_name = "TOPOLOGY.csv")]
    topology: PathBuf,
    /// Output directory (created if missing) for layers.csv and summary.json.
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    array: ArrayArgs,
    #[command(flatten)]
    arith: values::ArithArgs,
    /// Products per PE step w: 1, 2, 4, 8, 16 or 32.
    #[arg(long, default_value_t = 1)]
    width: usize,
    /// Seed of the run: layer i's operands come from a seed derived from this and i (and its
    /// sampled check, also with --operands).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Check the whole of D when a layer's M * N * K is at most this; above it, check
    /// --samples elements of D chosen by the seed.
    #[arg(long, default_value_t = 1 << 22, value_name = "MACS")]
    max_check: u64,
    /// Elements of D checked in a layer above --max-check.
    #[arg(long, default_value_t = 256, value_name = "N")]
    samples: usize,
    /// The memory path: only `ideal` (a zero-latency operand store) in this version.
    #[arg(long, default_value = "ideal", value_name = "ideal")]
    memory: String,
    /// Print the summary as one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Simulate nothing: every layer's cycles and operand-store traffic from the documented
    /// formulas (docs/timing.md, docs/cli.md), the whole network in well under a second.
    /// Without it the report shows the formulas' figures beside the measured ones.
    #[arg(long)]
    analytic: bool,
    /// Whose cycles the report's `cycles` column and totals give: `model` (this core's own:
    /// overlapped folds, pipeline latency, preload and drain; the default) or `scalesim`
    /// (SCALE-Sim's compute cycles for the same array and dataflow, docs/timing.md; needs
    /// --width 1, SCALE-Sim's one MAC per PE a cycle). Both are in layers.csv either way.
    #[arg(long, default_value = "model", value_name = "model|scalesim")]
    timing: String,
    /// Layers simulated at once, each on its own thread (1 to 256; the report is the same for
    /// any count, but for the wall-clock figures).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
    /// Run only shard I of N: the layers i with i mod N = I (e.g. 2/8), for `workload merge`;
    /// `slurm` takes I and N from a Slurm array task (SLURM_ARRAY_TASK_ID,
    /// SLURM_ARRAY_TASK_COUNT).
    #[arg(long, default_value = "0/1", value_name = "I/N|slurm")]
    shard: String,
    /// Real operands instead of random ones: layer NAME reads DIR/NAME.a.npy (M x K),
    /// DIR/NAME.b.npy (K x N) and, if present, DIR/NAME.c.npy (M x N, else zeros), in the
    /// dtypes of tcrtl gemm --a/--b/--c (float formats only).
    #[arg(long, value_name = "DIR")]
    operands: Option<PathBuf>,
    /// Continue the interrupted run whose partial report is in --out (same topology, options,
    /// seed and shard): only its pending layers run.
    #[arg(long)]
    resume: bool,
    /// Stop after this many layers have finished, leaving the partial report an interrupt
    /// leaves (exit 130); for tests of --resume.
    #[arg(long, hide = true, value_name = "N")]
    stop_after: Option<usize>,
}

/// Runs `tcrtl workload`.
pub fn run(args: &WorkloadArgs) -> Result<i32, String> {
    match &args.what {
        WorkloadCommand::Run(a) => run::run_topology(a),
        WorkloadCommand::Merge(a) => merge::merge(a),
    }
}
