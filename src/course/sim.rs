//! The simulators of batch grading (`tcrtl grade batch --sim`): Icarus Verilog and Verilator,
//! which of them a run uses, and whether the installed Verilator can build the testbenches
//! (`--binary` and `--timing`, Verilator 5.002 or newer).

use std::process::{Command, Stdio};

/// A simulator a batch runs the Verilog submissions under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sim {
    /// Icarus Verilog: `iverilog -g2012`, then `vvp`.
    Icarus,
    /// Verilator: `verilator --binary --timing` with the testbench as top, then the binary.
    Verilator,
}

impl Sim {
    /// The name in options and reports.
    pub fn name(self) -> &'static str {
        match self {
            Sim::Icarus => "icarus",
            Sim::Verilator => "verilator",
        }
    }
}

/// The oldest Verilator with `--binary` and `--timing` (5.002).
const VERILATOR_MIN: (u32, u32) = (5, 2);

/// Whether Verilator can build the testbenches: `Ok` when `verilator` is on `PATH` and is
/// 5.002 or newer (`--binary`, `--timing`), otherwise why not.
pub fn verilator_ready() -> Result<(), String> {
    let out = Command::new("verilator")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|_| "verilator is not on PATH".to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    // "Verilator 5.006 2023-01-22 rev ..."
    let version = text.split_whitespace().nth(1).unwrap_or("");
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) if (major, minor) >= VERILATOR_MIN => Ok(()),
        (Some(_), Some(_)) => Err(format!(
            "verilator {version} is too old (--binary and --timing need {}.{:03} or newer)",
            VERILATOR_MIN.0, VERILATOR_MIN.1
        )),
        _ => Err(format!(
            "verilator --version printed no version: {}",
            text.trim()
        )),
    }
}

/// The simulators of a `--sim` choice: `icarus`, `verilator`, `both`, or `auto` (both when
/// Verilator is ready, Icarus alone otherwise); `verilator` is [`verilator_ready`]'s answer.
/// Asking for Verilator when it is not ready is an error that says why.
pub fn simulators(choice: &str, verilator: Result<(), String>) -> Result<Vec<Sim>, String> {
    let sims = match choice {
        "icarus" => vec![Sim::Icarus],
        "verilator" => vec![Sim::Verilator],
        "both" => vec![Sim::Icarus, Sim::Verilator],
        "auto" if verilator.is_ok() => vec![Sim::Icarus, Sim::Verilator],
        "auto" => vec![Sim::Icarus],
        other => {
            return Err(format!(
                "--sim {other}: expected icarus, verilator, both or auto"
            ))
        }
    };
    if sims.contains(&Sim::Verilator) {
        if let Err(why) = verilator {
            return Err(format!(
                "--sim {choice}: {why} (install Verilator 5, or use --sim icarus)"
            ));
        }
    }
    Ok(sims)
}
