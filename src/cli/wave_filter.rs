//! `tcrtl wave-filter KIND`: GTKWave's translate filter process. GTKWave starts it once per
//! kind named in a save file (`^>N tcrtl wave-filter fp16`), writes the hex text of each value
//! to show on its standard input, one a line, and reads one label a line back
//! ([`tensorcore_rtl::hw::wave_filter`]). Each answer is flushed at once; end of input ends the
//! process.

use std::io::{BufRead, Read};

use clap::Args;
use tensorcore_rtl::hw::wave_filter::{translate, FilterKind, KINDS};

/// Arguments of `tcrtl wave-filter`.
#[derive(Args, Debug)]
pub struct WaveFilterArgs {
    /// What the values are: a format name (fp16, bf16, e4m3, e5m2, fp32: lanes, lane 0 first),
    /// ctl (the PE control word), tag (the output tag), meta (2:4 metadata nibbles), prod
    /// (exact floating-point products: s1_prod, the gather registers), iprod (exact integer
    /// products) or blksum (the MX block sum).
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
    let err = |e: std::io::Error| format!("cannot read standard input: {e}");
    let mut input = std::io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut input)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(err)?;
        if n == 0 {
            return Ok(0);
        }
        if line.last() != Some(&b'\n') && line.len() > MAX_LINE_BYTES {
            // No value is this long: the input is not GTKWave's (e.g. /dev/zero).
            return Err(format!(
                "standard input: a line longer than the {MAX_LINE_BYTES}-byte limit"
            ));
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        // A line that is not UTF-8 is shown as it is (lossily) rather than ending the
        // filter, which GTKWave would then lose for the rest of the session.
        outln!("{}", translate(kind, &String::from_utf8_lossy(&line)));
    }
}

/// The longest line the filter reads (64 KiB; a value of the widest bus is a few hundred hex
/// digits). docs/reliability.md, "Limits".
pub const MAX_LINE_BYTES: usize = 1 << 16;
