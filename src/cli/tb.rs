//! `tcrtl tb`: list and run the self-checking testbenches of `testbenches/`.

use crate::cli::energy::{lines as energy_lines, EnergyArgs};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use tensorcore_rtl::hw::CoreConfig;
use tensorcore_rtl::io::{output, OutputPlan};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::tb::{find, registry, run_one_opts, saif_path, RunOptions, Testbench};

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
    /// Rows R of the array (1 to 32) for the testbenches that take a size (`tcrtl tb list`
    /// marks them); with `all`, only those run. Default: each testbench's own array.
    #[arg(long, value_name = "R", requires = "cols")]
    rows: Option<usize>,
    /// Columns C of the array (1 to 32), with --rows.
    #[arg(long, value_name = "C", requires = "rows")]
    cols: Option<usize>,
    #[command(flatten)]
    energy: EnergyArgs,
}

/// Runs `tcrtl tb ...`.
pub fn run(args: &TbArgs) -> Result<i32, String> {
    match &args.what {
        TbCommand::List => {
            let width = registry().iter().map(|t| t.name.len()).max().unwrap_or(0);
            for t in registry() {
                let sized = if t.takes_array {
                    " (takes --rows/--cols)"
                } else {
                    ""
                };
                outln!("{:width$}  {}{sized}", t.name, t.about);
            }
            Ok(0)
        }
        TbCommand::Run(r) => run_benches(r),
    }
}

fn run_benches(args: &RunArgs) -> Result<i32, String> {
    let array = args.rows.zip(args.cols);
    let energy = args.energy.plan()?.map(|p| p.request());
    if let Some((rows, cols)) = array {
        // The size itself is checked once, before anything runs.
        CoreConfig::new(FP16, FP16, AccMode::Ieee, 1)
            .with_array(rows, cols)
            .map_err(|e| format!("--rows {rows} --cols {cols}: {e}"))?;
    }
    let mut selected: Vec<&Testbench> = Vec::new();
    for name in &args.names {
        if name == "all" {
            // With a size, `all` is every testbench that takes one.
            selected.extend(
                registry()
                    .iter()
                    .filter(|t| array.is_none() || t.takes_array),
            );
        } else {
            let t = find(name).ok_or_else(|| {
                let known: Vec<&str> = registry().iter().map(|t| t.name).collect();
                format!(
                    "no testbench named {name:?} (known: {}; or all)",
                    known.join(", ")
                )
            })?;
            if array.is_some() && !t.takes_array {
                let sized: Vec<&str> = registry()
                    .iter()
                    .filter(|t| t.takes_array)
                    .map(|t| t.name)
                    .collect();
                return Err(format!(
                    "{name} builds its own array and takes no --rows/--cols (those that do: {})",
                    sized.join(", ")
                ));
            }
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
        let r = run_one_opts(
            t,
            &args.waves,
            &RunOptions {
                saif: args.saif,
                array,
                energy: energy.clone(),
            },
        );
        outln!("{}", r.line());
        for f in &r.failures {
            outln!("    mismatch: {f}");
        }
        if let Some(e) = &r.error {
            outln!("    error: {e}");
        }
        if energy.is_some() {
            match &r.energy {
                Some(e) => {
                    outln!(
                        "    {} GEMM run{}, {} MACs, {} cycles:",
                        r.energy_runs,
                        if r.energy_runs == 1 { "" } else { "s" },
                        e.macs,
                        e.cycles
                    );
                    for line in energy_lines(e) {
                        outln!("    {line}");
                    }
                }
                None => {
                    outln!("    energy: no GEMM run (this testbench drives no tensor-core GEMM)")
                }
            }
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
