//! The `tcrtl` command line: one `Command` variant and one file per subcommand. Each
//! subcommand returns its exit code (0 = success, 1 = a check failed) or a one-line error
//! (printed as `error: ...` with exit code 2 by `main`). Output lines go through `outln!`
//! ([`out::line`]), which never panics.

/// `println!` for the subcommands: a failed write returns a one-line error from the enclosing
/// function (see [`out::line`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::out::line(format_args!($($arg)*))?
    };
}

mod array;
mod convert;
mod course;
mod dot;
mod energy;
mod energy_study;
mod gemm;
mod grade;
mod memory;
mod memsweep;
mod operand_files;
pub mod out;
mod pattern;
mod plot;
mod shard;
mod sparse;
mod sweep;
mod tb;
mod text_matrix;
mod tma;
mod values;
mod verify;
mod verify_features;
mod wave_filter;
mod workload;

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
    /// The energy study: pJ per MAC by operand format, the memory wall, reuse, operand data
    /// and 2:4 sparsity (tables, CSV, JSON and SVG plots).
    Energy(energy_study::EnergyStudyArgs),
    /// Converts values into a format's bit patterns (every rounding mode, saturating or
    /// not), or quantises them into scaled blocks (MX, NVFP4).
    Convert(convert::ConvertArgs),
    /// Compares a student's D image with the golden one of `gemm --memh` (exit 0 all match,
    /// 1 otherwise).
    Grade(grade::GradeArgs),
    /// The course's instructor tools: directed golden sets, lab 0's golden trace.
    Course(course::CourseArgs),
    /// GTKWave translate filter process: hex values in on stdin, decoded labels out (named in
    /// the save files the tracer writes).
    WaveFilter(wave_filter::WaveFilterArgs),
    /// Layers of real networks: every layer of a SCALE-Sim topology CSV on the clocked core,
    /// checked, with a per-layer report (layers.csv, summary.json).
    Workload(workload::WorkloadArgs),
}

/// Parses the command line and runs the subcommand.
pub fn run() -> Result<i32, String> {
    let cli = match Cli::try_parse_from(gtkwave_args(std::env::args_os().collect())) {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            // Help and version go to stdout with success.
            out::help(e.render())?;
            return Ok(0);
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            return Err("a subcommand is required (see --help)".into())
        }
        Err(e) => return Err(one_line(&e.render().to_string())),
    };
    match cli.command {
        Command::Dot(args) => dot::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Gemm(args) => gemm::run(&args),
        Command::Tb(args) => tb::run(&args),
        Command::Sparse(args) => sparse::run(&args),
        Command::Memsweep(args) => memsweep::run(&args),
        Command::Tma(args) => tma::run(&args),
        Command::Energy(args) => energy_study::run(&args),
        Command::Grade(args) => grade::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Course(args) => course::run(&args),
        Command::WaveFilter(args) => wave_filter::run(&args),
        Command::Workload(args) => workload::run(&args),
    }
}

/// The command line as clap should see it. GTKWave starts a translate filter process named in a
/// save file (`^>1 tcrtl wave-filter fp16`) with everything after the program name as one
/// argument: a lone argument `wave-filter KIND` is split back into its words.
fn gtkwave_args(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if args.len() == 2 {
        if let Some(words) = args[1]
            .to_str()
            .filter(|a| a.starts_with("wave-filter "))
            .map(|a| a.split_whitespace().map(Into::into).collect::<Vec<_>>())
        {
            args.truncate(1);
            args.extend(words);
        }
    }
    args
}

/// Folds a rendered clap error into one line: its message lines up to the usage block,
/// joined, without clap's `error:` prefix, with a pointer to `--help`.
fn one_line(rendered: &str) -> String {
    let parts: Vec<&str> = rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let text = parts.join(" ");
    let text = text.strip_prefix("error:").unwrap_or(&text).trim();
    format!("{text} (see --help)")
}
