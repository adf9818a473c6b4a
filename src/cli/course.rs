//! `tcrtl course`: the instructor's tools for the course of `docs/course/`: directed golden
//! sets for the Verilog PE and mesh tasks, and lab 0's golden MAC mesh trace.

use clap::{Args, Subcommand};
use std::path::PathBuf;
use tensorcore_rtl::course::{directed, edition, mac_golden};

/// Arguments of `tcrtl course`.
#[derive(Args, Debug)]
pub struct CourseArgs {
    #[command(subcommand)]
    what: CourseCommand,
}

#[derive(Subcommand, Debug)]
enum CourseCommand {
    /// Writes the directed golden sets (signed zeros, subnormals, infinities, NaNs, overflow,
    /// ties) for the PE and mesh tasks: one `gemm --memh` folder per set under --out.
    Directed(DirectedArgs),
    /// Writes lab 0's golden MAC mesh trace (cells.hex, manifest.json) into --out.
    MacGolden(MacGoldenArgs),
    /// Writes the student edition (labs without instructor sections, skeletons instead of
    /// references, public tests only) or the instructor edition (everything).
    Export(ExportArgs),
}

/// Arguments of `tcrtl course export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// New folder for the student edition.
    #[arg(
        long,
        required_unless_present = "instructor",
        conflicts_with = "instructor"
    )]
    student: Option<PathBuf>,
    /// New folder for the instructor edition.
    #[arg(long)]
    instructor: Option<PathBuf>,
    /// The repository holding docs/course and testbenches/verilog (default: the one this
    /// tcrtl was built from).
    #[arg(long)]
    repo: Option<PathBuf>,
}

/// Arguments of `tcrtl course directed`.
#[derive(Args, Debug)]
pub struct DirectedArgs {
    /// Folder that receives one sub-folder per set (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Only these sets (repeatable; default: all).
    #[arg(long)]
    set: Vec<String>,
}

/// Arguments of `tcrtl course mac-golden`.
#[derive(Args, Debug)]
pub struct MacGoldenArgs {
    /// Folder for cells.hex and manifest.json (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Cycles recorded (1 to 4096).
    #[arg(long, default_value_t = 40)]
    cycles: usize,
}

/// Runs `tcrtl course ...`.
pub fn run(args: &CourseArgs) -> Result<i32, String> {
    match &args.what {
        CourseCommand::Directed(d) => {
            let mut sets = Vec::new();
            for name in &d.set {
                sets.push(directed::find(name).ok_or_else(|| {
                    let known: Vec<&str> = directed::SETS.iter().map(|s| s.name).collect();
                    format!("--set {name}: no such set (known: {})", known.join(", "))
                })?);
            }
            if sets.is_empty() {
                sets.extend(directed::SETS.iter());
            }
            for s in sets {
                let dir = d.out.join(s.name);
                s.write(&dir)?;
                outln!("{}: {} ({})", s.name, s.about, dir.display());
            }
            Ok(0)
        }
        CourseCommand::Export(x) => {
            let repo = x
                .repo
                .clone()
                .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
            if !repo.join("docs/course").is_dir() {
                return Err(format!("--repo {}: no docs/course folder", repo.display()));
            }
            let (kind, out, files) = match (&x.student, &x.instructor) {
                (Some(s), _) => ("student", s, edition::export_student(&repo, s)?),
                (None, Some(i)) => ("instructor", i, edition::export_instructor(&repo, i)?),
                (None, None) => return Err("give --student DIR or --instructor DIR".into()),
            };
            outln!("{kind} edition: {} files in {}", files.len(), out.display());
            Ok(0)
        }
        CourseCommand::MacGolden(m) => {
            mac_golden::write(&m.out, m.cycles)?;
            outln!(
                "mac_mesh golden trace: {} cycles x 16 cells in {}",
                m.cycles,
                m.out.join("cells.hex").display()
            );
            Ok(0)
        }
    }
}
