//! `tcrtl tb`: list and run the self-checking testbenches of `testbenches/`.

use clap::{Args, Subcommand};
use std::path::PathBuf;
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::tb::{find, registry, run_one, Testbench};

/// Arguments of `tcrtl tb`.
#[derive(Args, Debug)]
pub struct TbArgs {
    #[command(subcommand)]
    what: TbCommand,
}

#[derive(Subcommand, Debug)]
enum TbCommand {
    /// Lists every registered testbench with what it checks.
    List,
    /// Runs one testbench, several, or `all`; prints PASS/FAIL and a scoreboard per
    /// testbench and exits 1 if any fails.
    Run(RunArgs),
}

/// Arguments of `tcrtl tb run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Testbench names, or `all`.
    #[arg(required = true)]
    names: Vec<String>,
    /// Directory for the waveforms (NAME.vcd and NAME.gtkw).
    #[arg(long, default_value = "waves")]
    waves: PathBuf,
}

/// Runs `tcrtl tb ...`.
pub fn run(args: &TbArgs) -> Result<i32, String> {
    match &args.what {
        TbCommand::List => {
            let width = registry().iter().map(|t| t.name.len()).max().unwrap_or(0);
            for t in registry() {
                outln!("{:width$}  {}", t.name, t.about);
            }
            Ok(0)
        }
        TbCommand::Run(r) => run_benches(r),
    }
}

fn run_benches(args: &RunArgs) -> Result<i32, String> {
    let mut selected: Vec<&Testbench> = Vec::new();
    for name in &args.names {
        if name == "all" {
            selected.extend(registry());
        } else {
            let t = find(name).ok_or_else(|| {
                let known: Vec<&str> = registry().iter().map(|t| t.name).collect();
                format!(
                    "no testbench named {name:?} (known: {}; or all)",
                    known.join(", ")
                )
            })?;
            selected.push(t);
        }
    }
    // The waves directory is an output like any other: checked before any testbench runs, so
    // an unwritable one is an error (exit 2), not a failing testbench.
    let existed = args.waves.exists();
    if existed && !args.waves.is_dir() {
        return Err(format!("--waves {}: not a directory", args.waves.display()));
    }
    std::fs::create_dir_all(&args.waves)
        .map_err(|e| format!("--waves {}: {e}", args.waves.display()))?;
    let mut plan = OutputPlan::new();
    let planned = selected.iter().try_for_each(|t| {
        let vcd = args.waves.join(format!("{}.vcd", t.name));
        if plan.contains(&vcd) {
            return Ok(());
        }
        plan.add("--waves", &vcd)?;
        plan.add("--waves", &vcd.with_extension("gtkw")).map(drop)
    });
    if let Err(e) = planned {
        if !existed {
            // A failed run leaves nothing new behind: not even the directory it made.
            let _ = std::fs::remove_dir(&args.waves);
        }
        return Err(e);
    }
    let mut failed = 0;
    let (mut checks, mut cycles) = (0, 0);
    for t in &selected {
        let r = run_one(t, &args.waves);
        outln!("{}", r.line());
        for f in &r.failures {
            outln!("    mismatch: {f}");
        }
        if let Some(e) = &r.error {
            outln!("    error: {e}");
        }
        if r.checks == 0 && r.error.is_none() {
            outln!("    no checks were made");
        }
        failed += usize::from(!r.passed);
        checks += r.checks;
        cycles += r.cycles;
    }
    if selected.len() > 1 {
        outln!(
            "{} of {} testbenches passed ({checks} checks, {cycles} cycles)",
            selected.len() - failed,
            selected.len()
        );
    }
    Ok(if failed == 0 { 0 } else { 1 })
}
