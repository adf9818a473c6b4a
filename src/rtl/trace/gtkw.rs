//! GTKWave save file (`NAME.gtkw`) written beside each waveform: `clk` and `rst` first, then one
//! group per module scope with its traced signals, vectors in hex. A signal with value labels
//! ([`crate::rtl::Reg::with_labels`]) also gets a translate filter file
//! (`NAME.<signal path>.txt`, one `value label` line per label, the value in the hex GTKWave
//! displays) and is shown through it.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::Decl;

/// GTKWave trace flags: hex + right-justify, binary + right-justify, group begin, group end.
const HEX: &str = "@22";
const BIN: &str = "@28";
const GROUP_BEGIN: &str = "@800200";
const GROUP_END: &str = "@1000200";
/// GTKWave's "file-translated" trace flag (`TR_FTRANSLATED`, bit 13), or'ed into the flags of a
/// labelled trace; the `^N FILE` line before the trace names the filter.
const FTRANSLATED: u64 = 0x2000;

/// The translate filter file of a labelled signal: `NAME.<signal path>.txt` beside `NAME.gtkw`.
pub(super) fn filter_path(gtkw: &Path, d: &Decl) -> PathBuf {
    let stem = gtkw
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    gtkw.with_file_name(format!("{stem}.{}.{}.txt", d.scope.join("."), d.name))
}

/// The filter file's text: `value label` per line, the value in hex with as many digits as
/// GTKWave shows for the signal's width (it matches the displayed text, case-insensitively).
pub(super) fn filter_text(d: &Decl) -> String {
    let digits = d.width.div_ceil(4).max(1) as usize;
    let mut out = format!(
        "# {}.{}: value labels for GTKWave\n",
        d.scope.join("."),
        d.name
    );
    for &(value, label) in d.labels {
        let label: String = label
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        out.push_str(&format!("{value:0digits$X} {}\n", label.trim()));
    }
    out
}

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
    // The save file's own name: GTKWave then resolves the relative filter paths below (and the
    // dump file) against the directory the save file is loaded from, not the working directory.
    writeln!(out, "[savefile] \"{}\"", {
        gtkw.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    })?;
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
    let mut filters = 0;
    for scope in scopes {
        let label = if scope.len() > 1 {
            scope[1..].join(".")
        } else {
            scope.join(".")
        };
        writeln!(out, "{GROUP_BEGIN}")?;
        writeln!(out, "-{label}")?;
        for d in decls.iter().skip(2).filter(|d| d.scope.as_slice() == scope) {
            let flags = if d.width > 1 { HEX } else { BIN };
            if d.labels.is_empty() {
                writeln!(out, "{flags}")?;
            } else {
                let flags = u64::from_str_radix(&flags[1..], 16).unwrap_or(0) | FTRANSLATED;
                filters += 1;
                let file = filter_path(gtkw, d);
                let file = file.file_name().unwrap_or_default().to_string_lossy();
                writeln!(out, "@{flags:x}")?;
                writeln!(out, "^{filters} {file}")?;
            }
            writeln!(out, "{}", gtkwave_name(d))?;
        }
        writeln!(out, "{GROUP_END}")?;
        writeln!(out, "-{label}")?;
    }
    writeln!(out, "[pattern_trace] 1")?;
    writeln!(out, "[pattern_trace] 0")?;
    write_file(gtkw, &out)
}

/// Writes `path` through the shared output files ([`crate::io::AtomicFile`]: `path.partial`
/// and a rename, symlinks followed), so that an interrupted or failed write never leaves a
/// truncated file that looks complete.
pub(super) fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = crate::io::AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}
