//! `--rows`, `--cols` and `--dataflow`: the size of the PE array and what stays in its PEs,
//! for every command that builds a core.

use clap::Args;
use tensorcore_rtl::hw::{CoreConfig, Dataflow};

/// The PE array's size (`R x C`, 4 x 4 by default) and dataflow (`os` by default).
#[derive(Args, Debug, Clone, Copy)]
pub struct ArrayArgs {
    /// Rows R of the PE array, 1 to 32 (the default core is 4 x 4).
    #[arg(long, default_value_t = 4, value_name = "R")]
    pub rows: usize,
    /// Columns C of the PE array, 1 to 32.
    #[arg(long, default_value_t = 4, value_name = "C")]
    pub cols: usize,
    /// The dataflow: os (output-stationary, the default), ws (weight-stationary; dense, 2:4
    /// sparse and block-scaled GEMMs on either memory path) or is (input-stationary: A held
    /// in the PEs, B streaming; dense and block-scaled GEMMs on the ideal store).
    #[arg(long, default_value = "os", value_name = "os|ws|is", value_parser = parse_dataflow)]
    pub dataflow: Dataflow,
}

/// The dataflow a `--dataflow` value names, or why not.
fn parse_dataflow(s: &str) -> Result<Dataflow, String> {
    Dataflow::by_name(&s.to_ascii_lowercase())
        .ok_or_else(|| format!("unknown dataflow (expected {})", Dataflow::choices()))
}

impl ArrayArgs {
    /// `cfg` on this array; a size the library refuses is a one-line error naming the options.
    pub fn apply(&self, cfg: CoreConfig) -> Result<CoreConfig, String> {
        cfg.with_array(self.rows, self.cols)
            .map(|c| c.with_dataflow(self.dataflow))
            .map_err(|e| format!("--rows {} --cols {}: {e}", self.rows, self.cols))
    }

    /// What the text reports add after the width: nothing for the default 4 x 4
    /// output-stationary array (so its lines read as they always did), else `, R x C array`
    /// and `, ws` or `, is` for a stationary dataflow.
    pub fn label(cfg: &CoreConfig) -> String {
        let default = CoreConfig::new(cfg.fmt_a, cfg.fmt_b, cfg.mode, cfg.width);
        let mut s = String::new();
        if (cfg.rows(), cfg.cols()) != (default.rows(), default.cols()) {
            s += &format!(", {} x {} array", cfg.rows(), cfg.cols());
        }
        if cfg.dataflow() != default.dataflow() {
            s += &format!(", {}", cfg.dataflow());
        }
        s
    }
}
