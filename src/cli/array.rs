//! `--rows` and `--cols`: the size of the PE array, for every command that builds a core.

use clap::Args;
use tensorcore_rtl::hw::CoreConfig;

/// The PE array's size (`R x C`, 4 x 4 by default).
#[derive(Args, Debug, Clone, Copy)]
pub struct ArrayArgs {
    /// Rows R of the PE array, 1 to 32 (the default core is 4 x 4).
    #[arg(long, default_value_t = 4, value_name = "R")]
    pub rows: usize,
    /// Columns C of the PE array, 1 to 32.
    #[arg(long, default_value_t = 4, value_name = "C")]
    pub cols: usize,
}

impl ArrayArgs {
    /// `cfg` on this array; a size the library refuses is a one-line error naming the options.
    pub fn apply(&self, cfg: CoreConfig) -> Result<CoreConfig, String> {
        cfg.with_array(self.rows, self.cols)
            .map_err(|e| format!("--rows {} --cols {}: {e}", self.rows, self.cols))
    }

    /// What the text reports add after the width: nothing for the default 4 x 4 array (so
    /// its lines read as they always did), else `, R x C array`.
    pub fn label(cfg: &CoreConfig) -> String {
        let default = CoreConfig::new(cfg.fmt_a, cfg.fmt_b, cfg.mode, cfg.width);
        if (cfg.rows(), cfg.cols()) == (default.rows(), default.cols()) {
            String::new()
        } else {
            format!(", {} x {} array", cfg.rows(), cfg.cols())
        }
    }
}
