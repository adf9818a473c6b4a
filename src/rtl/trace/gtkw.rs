//! GTKWave save file (`NAME.gtkw`) written beside each waveform: `clk` and `rst` first, then one
//! group per module scope with its traced signals, vectors in hex.

use std::io::Write;
use std::path::Path;

use super::Decl;

/// GTKWave trace flags: hex + right-justify, binary + right-justify, group begin, group end.
const HEX: &str = "@22";
const BIN: &str = "@28";
const GROUP_BEGIN: &str = "@800200";
const GROUP_END: &str = "@1000200";

/// The name GTKWave shows for a VCD/FST variable: vectors get `[msb:0]` appended.
fn gtkwave_name(d: &Decl) -> String {
    let mut s = d.scope.join(".");
    s.push('.');
    s.push_str(&d.name);
    if d.width > 1 {
        s.push_str(&format!("[{}:0]", d.width - 1));
    }
    s
}

pub(super) fn write(
    gtkw: &Path,
    wave: &Path,
    decls: &[Decl],
    start_time: u64,
) -> std::io::Result<()> {
    let mut out = Vec::new();
    let dump = wave
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    writeln!(out, "[*] GTKWave save file written by tensorcore-rtl")?;
    writeln!(out, "[*] open with: gtkwave {dump} {}", {
        gtkw.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    })?;
    writeln!(out, "[dumpfile] \"{dump}\"")?;
    writeln!(out, "[timestart] {start_time}")?;
    writeln!(out, "[size] 1600 900")?;
    writeln!(out, "[pos] -1 -1")?;
    writeln!(out, "*-4.000000 {start_time} -1 -1 -1 -1 -1 -1 -1 -1 -1 -1")?;
    if let Some(top) = decls.first().and_then(|d| d.scope.first()) {
        writeln!(out, "[treeopen] {top}.")?;
    }
    writeln!(out, "[sst_width] 260")?;
    writeln!(out, "[signals_width] 300")?;
    writeln!(out, "[sst_expanded] 1")?;
    writeln!(out, "[sst_vpaned_height] 300")?;
    // clk and rst (declarations 0 and 1) sit above the groups.
    for d in decls.iter().take(2) {
        writeln!(out, "{BIN}")?;
        writeln!(out, "{}", gtkwave_name(d))?;
    }
    // Group by scope, in order of first appearance.
    let mut scopes: Vec<&[String]> = Vec::new();
    for d in decls.iter().skip(2) {
        if !scopes.contains(&d.scope.as_slice()) {
            scopes.push(&d.scope);
        }
    }
    for scope in scopes {
        let label = if scope.len() > 1 {
            scope[1..].join(".")
        } else {
            scope.join(".")
        };
        writeln!(out, "{GROUP_BEGIN}")?;
        writeln!(out, "-{label}")?;
        for d in decls.iter().skip(2).filter(|d| d.scope.as_slice() == scope) {
            writeln!(out, "{}", if d.width > 1 { HEX } else { BIN })?;
            writeln!(out, "{}", gtkwave_name(d))?;
        }
        writeln!(out, "{GROUP_END}")?;
        writeln!(out, "-{label}")?;
    }
    writeln!(out, "[pattern_trace] 1")?;
    writeln!(out, "[pattern_trace] 0")?;
    std::fs::write(gtkw, out)
}
