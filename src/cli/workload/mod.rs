//! `tcrtl workload run`: every layer of a SCALE-Sim topology file (`docs/workloads.md`) as a
//! random GEMM on the clocked core (ideal memory path), each checked against the independent
//! references of `verify` (whole, or a seeded sample of D for large layers), reported as
//! `layers.csv`, `summary.json` and `layers.svg` in `--out` and one line per layer; a shard
//! of the layers at a time (`--shard`), or of every layer's tile rows (`--split rows`),
//! continued after an interrupt (`--resume`), and `tcrtl workload merge` of the shards'
//! reports. The parsing, the lowering, the checks, the run of every layer and the report are
//! the library's (`tensorcore_rtl::workload`); this folder folds them into commands:
//! [`mod@run`] parses the options, draws progress and writes the files, [`report`] writes a
//! report's files, [`operands`] reads `--operands` files, [`mod@merge`] joins shards.

mod merge;
mod operands;
mod report;
mod run;

use clap::{Args, Subcommand};

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
    Run(Box<run::RunArgs>),
    /// Joins the reports of a run's shards (`workload run --shard I/N`) into the report of
    /// the whole run, written into --out.
    Merge(merge::MergeArgs),
}

/// Runs `tcrtl workload`.
pub fn run(args: &WorkloadArgs) -> Result<i32, String> {
    match &args.what {
        WorkloadCommand::Run(a) => run::run_topology(a),
        WorkloadCommand::Merge(a) => merge::merge(a),
    }
}
