//! `tcrtl wave-filter KIND`: GTKWave's translate filter process. GTKWave starts it once per
//! kind named in a save file (`^>N tcrtl wave-filter fp16`), writes the hex text of each value
//! to show on its standard input, one a line, and reads one label a line back
//! ([`tensorcore_rtl::hw::wave_filter`]). Each answer is flushed at once; end of input ends the
//! process.

use std::io::BufRead;

use clap::Args;
use tensorcore_rtl::hw::wave_filter::{translate, FilterKind, KINDS};

/// Arguments of `tcrtl wave-filter`.
#[derive(Args, Debug)]
pub struct WaveFilterArgs {
    /// What the values are: a format name (fp16, bf16, e4m3, e5m2, fp32: lanes, lane 0 first),
    /// ctl (the PE control word), tag (the output tag) or meta (2:4 metadata nibbles).
    pub kind: String,
}

/// Runs the filter until standard input ends.
pub fn run(args: &WaveFilterArgs) -> Result<i32, String> {
    let kind = FilterKind::by_name(&args.kind).ok_or_else(|| {
        format!(
            "unknown filter kind '{}' (a format name such as fp16, or one of {})",
            args.kind,
            KINDS.join(", ")
        )
    })?;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("cannot read standard input: {e}"))?;
        outln!("{}", translate(kind, &line));
    }
    Ok(0)
}
