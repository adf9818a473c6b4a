//! `--energy [--tech NAME] [--clock-ghz F]`: the run's energy from its switching activity and
//! memory counts (`tensorcore_rtl::energy`), as text lines and the JSON `energy` object.

use tensorcore_rtl::energy::{EnergyReport, Tech};
use tensorcore_rtl::tb::EnergyRequest;

/// The clock `--clock-ghz` defaults to, in GHz.
pub const DEFAULT_CLOCK_GHZ: f64 = 1.0;

/// The energy options of a command that runs the clocked core.
#[derive(clap::Args, Debug, Clone)]
pub struct EnergyArgs {
    /// Estimate the run's energy from its switching activity (every signal's toggles are
    /// counted, which slows the run): total, pJ per MAC, the split by block and the average
    /// power at --clock-ghz (docs/energy.md).
    #[arg(long)]
    pub energy: bool,
    /// The technology's energy table: 45nm (Horowitz, ISSCC 2014; the default) or 7nm (45 nm
    /// logic scaled by C*V^2, HBM2 global memory).
    #[arg(long, value_name = "NAME", requires = "energy")]
    pub tech: Option<String>,
    /// The clock the average power is given at, in GHz (default 1).
    #[arg(
        long,
        value_name = "GHZ",
        requires = "energy",
        allow_negative_numbers = true
    )]
    pub clock_ghz: Option<f64>,
}

/// A checked energy request: the table and the clock.
#[derive(Debug, Clone)]
pub struct EnergyPlan {
    tech: Tech,
    clock_ghz: f64,
}

impl EnergyArgs {
    /// The request, checked before the run (`None` without `--energy`).
    pub fn plan(&self) -> Result<Option<EnergyPlan>, String> {
        if !self.energy {
            return Ok(None);
        }
        let tech = Tech::by_name(self.tech.as_deref().unwrap_or("45nm"))?;
        let clock_ghz = self.clock_ghz.unwrap_or(DEFAULT_CLOCK_GHZ);
        if !(clock_ghz.is_finite() && clock_ghz > 0.0) {
            return Err(format!(
                "--clock-ghz must be a positive number of GHz, not {clock_ghz}"
            ));
        }
        Ok(Some(EnergyPlan { tech, clock_ghz }))
    }
}

impl EnergyPlan {
    /// The request a testbench run takes (`tcrtl tb run --energy`).
    pub fn request(&self) -> EnergyRequest {
        EnergyRequest {
            tech: self.tech.clone(),
            clock_ghz: self.clock_ghz,
        }
    }
}

/// The JSON `energy` object (the library's, `job::report::energy_json`).
pub fn json(e: &EnergyReport) -> serde_json::Value {
    tensorcore_rtl::job::report::energy_json(e)
}

/// The text report: a summary line and one line per block with energy.
pub fn lines(e: &EnergyReport) -> Vec<String> {
    let mut out = vec![format!(
        "energy ({}, {} GHz): {:.1} pJ, {:.3} pJ/MAC, {:.3} W average",
        e.tech, e.clock_ghz, e.total_pj, e.pj_per_mac, e.power_w
    )];
    for b in e.by_block.iter().filter(|b| b.count > 0) {
        let share = if e.total_pj > 0.0 {
            100.0 * b.pj / e.total_pj
        } else {
            0.0
        };
        out.push(format!(
            "  {:<16} {:>12.1} pJ {:>5.1}%  ({} {} x {:.4} pJ)",
            b.block, b.pj, share, b.count, b.unit, b.pj_each
        ));
    }
    out
}
