//! GTKWave save files written beside each waveform: `NAME.gtkw` with `clk` and `rst` first, then
//! one open group per module scope with all its traced signals, and `NAME.overview.gtkw` with
//! only the signals marked for the overview ([`crate::rtl::Reg::in_overview`]), groups closed.
//! Each signal is shown as its [`Display`] asks: vectors in hex, single bits in binary, counts in
//! decimal, FP32 words as reals, packed words through the `tcrtl wave-filter` process. A signal
//! with value labels ([`crate::rtl::Reg::with_labels`]) also gets a translate filter file
//! (`NAME.<signal path>.txt`, one `value label` line per label, the value in the hex GTKWave
//! displays) and is shown through it.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::sink::Decl;
use crate::rtl::Display;

/// GTKWave trace flags (`TR_*` of GTKWave's `analyzer.h`), written as `@<hex>` lines.
const HEX: u64 = 0x2;
const DEC: u64 = 0x4;
const BIN: u64 = 0x8;
const RJUSTIFY: u64 = 0x20;
const BLANK: u64 = 0x200;
const SIGNED: u64 = 0x400;
/// "File-translated" (`TR_FTRANSLATED`): the `^N FILE` line before the trace names the filter.
const FTRANSLATED: u64 = 0x2000;
/// On a closed group's end marker, with [`CLOSED`]: the group is shown as one line.
const COLLAPSED: u64 = 0x1000;
/// "Process-translated" (`TR_PTRANSLATED`): the `^>N COMMAND` line names the filter process.
const PTRANSLATED: u64 = 0x4000;
/// Drawn as an analog step plot (`TR_ANALOG_STEP`), for the real-valued power signals.
const ANALOG_STEP: u64 = 0x8000;
/// A blank row that stretches the analog plot above it (`TR_ANALOG_BLANK_STRETCH`).
const ANALOG_BLANK_STRETCH: u64 = 0x20000;
/// Real: a 32-bit vector is shown as an IEEE single, a 64-bit one as a double.
const REAL: u64 = 0x40000;
const CLOSED: u64 = 0x40_0000;
const GROUP_BEGIN: u64 = 0x80_0000;
const GROUP_END: u64 = 0x100_0000;

/// The translate filter process GTKWave starts for a [`Display::Filter`] signal, followed by the
/// filter's kind; GTKWave finds `tcrtl` on `PATH`.
pub(crate) const FILTER_COMMAND: &str = "tcrtl wave-filter";

/// Which save file to write.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum View {
    /// Every traced signal, groups open (`NAME.gtkw`).
    Full,
    /// The signals marked for the overview, groups closed (`NAME.overview.gtkw`).
    Overview,
}

/// The overview save file's path: `NAME.overview.gtkw` beside `NAME.gtkw`.
pub(super) fn overview_path(gtkw: &Path) -> PathBuf {
    gtkw.with_extension("overview.gtkw")
}

/// The flags of a signal's trace, and the filter line (if any) that goes before it.
fn trace_flags(
    gtkw: &Path,
    d: &Decl,
    files: &mut u32,
    procs: &mut Vec<&'static str>,
) -> (u64, Option<String>) {
    if d.real {
        return (ANALOG_STEP | REAL | RJUSTIFY, None);
    }
    if !d.labels.is_empty() {
        *files += 1;
        let file = filter_path(gtkw, d);
        let file = file.file_name().unwrap_or_default().to_string_lossy();
        let base = if d.width > 1 { HEX } else { BIN };
        return (
            base | RJUSTIFY | FTRANSLATED,
            Some(format!("^{files} {file}")),
        );
    }
    match d.display {
        Display::Hex if d.width > 1 => (HEX | RJUSTIFY, None),
        Display::Hex => (BIN | RJUSTIFY, None),
        Display::Dec => (DEC | RJUSTIFY, None),
        Display::SignedDec => (DEC | SIGNED | RJUSTIFY, None),
        Display::Real => (REAL | RJUSTIFY, None),
        Display::Filter(kind) => {
            let slot = match procs.iter().position(|&k| k == kind) {
                Some(i) => i + 1,
                None => {
                    procs.push(kind);
                    procs.len()
                }
            };
            (
                HEX | RJUSTIFY | PTRANSLATED,
                Some(format!("^>{slot} {FILTER_COMMAND} {kind}")),
            )
        }
    }
}

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

/// The name GTKWave shows for a VCD/FST variable: vectors get `[msb:0]` appended (a real
/// variable is not a vector).
fn gtkwave_name(d: &Decl) -> String {
    let mut s = d.scope.join(".");
    s.push('.');
    s.push_str(&d.name);
    if d.width > 1 && !d.real {
        s.push_str(&format!("[{}:0]", d.width - 1));
    }
    s
}

/// Writes the save file `gtkw` (the full one or the overview, `view`) for the waveform `wave`.
pub(super) fn write(
    gtkw: &Path,
    view: View,
    wave: &Path,
    decls: &[Decl],
    start_time: u64,
) -> std::io::Result<()> {
    let mut out = Vec::new();
    let shown = |d: &&Decl| view == View::Full || d.overview;
    // Filter files are named after the full save file, which the overview shares.
    let filters_of = if view == View::Full {
        gtkw.to_path_buf()
    } else {
        gtkw.with_extension("").with_extension("gtkw")
    };
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
        writeln!(out, "@{:x}", BIN | RJUSTIFY)?;
        writeln!(out, "{}", gtkwave_name(d))?;
    }
    // Group by scope, in order of first appearance.
    let mut scopes: Vec<&[String]> = Vec::new();
    for d in decls.iter().skip(2).filter(shown) {
        if !scopes.contains(&&d.scope[..]) {
            scopes.push(&d.scope);
        }
    }
    let closed = if view == View::Overview { CLOSED } else { 0 };
    let collapsed = if closed != 0 { COLLAPSED } else { 0 };
    // The overview of a large array: more than `MAX_SIBLINGS` sibling scopes (the PEs of an
    // 8 x 8 or larger mesh) are wrapped, run by run, in closed groups named after their
    // common stem (`mesh.pe_3_*`: row 3's PEs), so that it opens as one line per row.
    let rows = if view == View::Overview {
        sibling_runs(&scopes)
    } else {
        vec![None; scopes.len()]
    };
    let (mut files, mut procs) = (0, Vec::new());
    for (i, scope) in scopes.iter().enumerate() {
        if let Some(row) = &rows[i] {
            if i == 0 || rows[i - 1].as_ref() != Some(row) {
                writeln!(out, "@{:x}", GROUP_BEGIN | BLANK | closed)?;
                writeln!(out, "-{row}")?;
            }
        }
        let label = if scope.len() > 1 {
            scope[1..].join(".")
        } else {
            scope.join(".")
        };
        writeln!(out, "@{:x}", GROUP_BEGIN | BLANK | closed)?;
        writeln!(out, "-{label}")?;
        for d in decls
            .iter()
            .skip(2)
            .filter(shown)
            .filter(|d| &d.scope[..] == *scope)
        {
            let (flags, filter) = trace_flags(&filters_of, d, &mut files, &mut procs);
            writeln!(out, "@{flags:x}")?;
            if let Some(line) = filter {
                writeln!(out, "{line}")?;
            }
            writeln!(out, "{}", gtkwave_name(d))?;
            if d.real {
                // Three rows high.
                writeln!(
                    out,
                    "@{:x}\n-\n-",
                    ANALOG_BLANK_STRETCH | ANALOG_STEP | REAL
                )?;
            }
        }
        writeln!(out, "@{:x}", GROUP_END | BLANK | closed | collapsed)?;
        writeln!(out, "-{label}")?;
        if let Some(row) = &rows[i] {
            if rows.get(i + 1).and_then(|r| r.as_ref()) != Some(row) {
                writeln!(out, "@{:x}", GROUP_END | BLANK | closed | collapsed)?;
                writeln!(out, "-{row}")?;
            }
        }
    }
    writeln!(out, "[pattern_trace] 1")?;
    writeln!(out, "[pattern_trace] 0")?;
    write_file(gtkw, &out)
}

/// Sibling scopes beyond this many are grouped by their stem in the overview (a 4 x 4 mesh's
/// 16 PEs are not).
const MAX_SIBLINGS: usize = 16;

/// Per scope (in order): the outer group it sits in, if its parent holds more than
/// [`MAX_SIBLINGS`] scopes: the parent's path below the top and the scope's name up to its
/// last `_`, with `*` (`mesh.pe_3_*`). A name without `_` stays ungrouped.
fn sibling_runs(scopes: &[&[String]]) -> Vec<Option<String>> {
    fn parent(s: &[String]) -> &[String] {
        &s[..s.len().saturating_sub(1)]
    }
    // Each parent's scope count, once (a 32 x 32 mesh has over a thousand scopes).
    let mut children: std::collections::HashMap<&[String], usize> = Default::default();
    for s in scopes {
        *children.entry(parent(s)).or_default() += 1;
    }
    scopes
        .iter()
        .map(|s| {
            let p = parent(s);
            let siblings = children[p];
            let name = s.last()?;
            let stem = &name[..name.rfind('_')? + 1];
            (siblings > MAX_SIBLINGS && s.len() > 1).then(|| {
                let mut path: Vec<&str> = p.iter().skip(1).map(String::as_str).collect();
                path.push(stem);
                format!("{}*", path.join("."))
            })
        })
        .collect()
}

/// Writes `path` through the shared output files ([`crate::rtl::file::AtomicFile`]: a temporary
/// beside it and a rename when the run commits, symlinks followed), so that an interrupted or failed write never leaves a
/// truncated file that looks complete.
pub(super) fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = crate::rtl::file::AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}
