//! `tcrtl tb`: list and run the self-checking testbenches of `testbenches/`.

use clap::{Args, Subcommand};
use std::path::PathBuf;
use tensorcore_rtl::io::{output, OutputPlan};
use tensorcore_rtl::tb::{find, registry, run_one_with, saif_path, Testbench};

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
    /// Also write each testbench's switching activity (every traced bit's toggles and time at
    /// 1, SAIF 2.0) beside its waveform, as NAME.saif.
    #[arg(long)]
    saif: bool,
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
    if args.waves.exists() && !args.waves.is_dir() {
        return Err(format!("--waves {}: not a directory", args.waves.display()));
    }
    // Folders made here are journaled: a failed or interrupted run removes them again.
    output::create_dir_all(&args.waves)
        .map_err(|e| format!("--waves {}: {e}", args.waves.display()))?;
    let mut plan = OutputPlan::new();
    for t in &selected {
        let vcd = args.waves.join(format!("{}.vcd", t.name));
        if !plan.contains(&vcd) {
            plan.add_trace("--waves", &vcd)?;
            if args.saif {
                plan.add("--saif", &saif_path(&args.waves, t.name))?;
            }
        }
    }
    let mut failed = 0;
    let (mut checks, mut cycles) = (0, 0);
    for t in &selected {
        let r = run_one_with(t, &args.waves, args.saif);
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
