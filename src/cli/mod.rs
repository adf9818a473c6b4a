//! The `tcrtl` command line: one `Command` variant and one file per subcommand. Each
//! subcommand returns its exit code (0 = success, 1 = a check failed) or a one-line error
//! (printed as `error: ...` with exit code 2 by `main`).

mod dot;
mod dot_all;
mod dot_batch;
mod gemm;
mod memory;
mod memsweep;
mod sparse;
mod sweep;
mod tb;
mod tma;
mod values;
mod verify;

use clap::{Parser, Subcommand};

/// tcrtl: a bit-accurate, register-transfer-level model of a GPU-style tensor core.
#[derive(Parser, Debug)]
#[command(name = "tcrtl", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per process: size does not matter
enum Command {
    /// One dot product d = c + sum a_k * b_k through the numerics datapath.
    Dot(dot::DotArgs),
    /// Checks against references and real-GPU measurements.
    Verify(verify::VerifyArgs),
    /// D = A x B + C on the clocked tensor core (from .npy files or a seeded random problem).
    Gemm(gemm::GemmArgs),
    /// Self-checking testbenches: list them, run one or all.
    Tb(tb::TbArgs),
    /// 2:4 structured sparsity: compress a dense A, check a compressed one.
    Sparse(sparse::SparseArgs),
    /// A GEMM through the memory path over a grid of bandwidths and latencies, against the
    /// roofline (CSV, JSON and an SVG plot).
    Memsweep(memsweep::MemSweepArgs),
    /// The TMA-like loader: one load of a tensor box into shared memory.
    Tma(tma::TmaArgs),
}

/// Parses the command line and runs the subcommand.
pub fn run() -> Result<i32, String> {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to stdout with success; usage errors keep clap's message.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return Ok(code);
        }
    };
    match cli.command {
        Command::Dot(args) => dot::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Gemm(args) => gemm::run(&args),
        Command::Tb(args) => tb::run(&args),
        Command::Sparse(args) => sparse::run(&args),
        Command::Memsweep(args) => memsweep::run(&args),
        Command::Tma(args) => tma::run(&args),
    }
}
