//! The layers of the crate as data: which top-level module of `src/` may import which
//! (docs/architecture.md, "The code"), and the check of every path against the table.

use super::source::{ModPath, Tree};

/// Each layer and the layers it may import, lowest first; a layer imports only layers listed
/// before it. A layer is a top-level module of `src/` (`src/numerics/`, `src/sweep.rs`); the
/// binary (`src/main.rs`, `src/cli/`) is the layer `cli`.
pub const LAYERS: &[(&str, &[&str])] = &[
    // The one parallel map: independent points on a fixed number of threads, results in
    // order. Knows nothing of the model.
    ("par", &[]),
    // Formats as data and the integer datapath: pure functions. Knows no clock.
    ("numerics", &[]),
    // The cycle engine (values, registers, wires, modules, simulator, tracing), the output
    // file it writes through and the bounded reads of input files. Knows no number format.
    ("rtl", &[]),
    // Blocks: PE, mesh, controller, ports, tops, the memory system.
    ("hw", &["numerics", "rtl"]),
    // Energy per event and a run's estimate from its switching activity.
    ("energy", &["rtl", "hw"]),
    // A GEMM problem, the functional model, the clocked runs (ideal store, memory port, MX).
    ("gemm", &["numerics", "rtl", "hw", "energy"]),
    // 2:4 compression, metadata, the sparse problem and its runs (built on gemm's).
    ("sparse", &["numerics", "rtl", "hw", "gemm"]),
    // One problem of any mode and its run (the mode dispatch), a run's energy, the energy
    // study's cases.
    (
        "dispatch",
        &["numerics", "rtl", "hw", "energy", "gemm", "sparse"],
    ),
    // Independent references and error statistics (reads formats from numerics, never its
    // arithmetic: not a layer-level rule, see docs/architecture.md).
    (
        "verify",
        &["numerics", "rtl", "hw", "gemm", "sparse", "dispatch"],
    ),
    // Layers of real networks lowered to GEMMs, run and checked.
    (
        "workload",
        &[
            "par", "numerics", "rtl", "hw", "energy", "gemm", "dispatch", "verify",
        ],
    ),
    // Error sweeps of the dot product against the exact result.
    ("sweep", &["par", "numerics", "hw", "gemm", "verify"]),
    // Files in and out, and the checks the front doors share.
    (
        "io",
        &[
            "numerics", "rtl", "hw", "gemm", "sparse", "dispatch", "verify",
        ],
    ),
    // The self-checking testbench harness and its registry.
    (
        "tb",
        &[
            "numerics", "rtl", "hw", "energy", "gemm", "sparse", "dispatch", "verify",
        ],
    ),
    // One GEMM as a front door asks for it (operands from files, arrays or a seed; sparse,
    // MX, integers), run through the dispatch, checked and reported.
    (
        "job",
        &[
            "numerics", "rtl", "hw", "energy", "gemm", "sparse", "dispatch", "verify", "io", "tb",
        ],
    ),
    // The course's instructor tools.
    (
        "course",
        &[
            "numerics", "rtl", "hw", "gemm", "sparse", "dispatch", "verify", "io", "tb",
        ],
    ),
    // The names a GEMM run needs, in one place (re-exports only).
    (
        "prelude",
        &[
            "numerics", "rtl", "hw", "gemm", "sparse", "dispatch", "verify",
        ],
    ),
    // The `tcrtl` front end: every layer of the library.
    (
        "cli",
        &[
            "par", "numerics", "rtl", "hw", "energy", "gemm", "sparse", "dispatch", "verify",
            "workload", "sweep", "io", "tb", "job", "course", "prelude",
        ],
    ),
];

/// The layer of a module: its first segment (`main` is the binary's root, in `cli`); `None`
/// for the library's root.
pub fn layer_of(m: &ModPath) -> Option<&str> {
    match m.first().map(String::as_str) {
        None => None,
        Some("main") => Some("cli"),
        Some(first) => Some(first),
    }
}

/// The layers `layer` may import, or `None` for a layer the table does not list.
pub fn allowed(layer: &str) -> Option<&'static [&'static str]> {
    LAYERS.iter().find(|(l, _)| *l == layer).map(|(_, a)| *a)
}

/// Every path of `tree` from a file of one layer into a layer it may not import, as
/// `file:line: path (L may not import M)`; and every file of a layer the table lacks.
///
/// A path is checked twice: the layer it names as written and the layer of the file that
/// defines its item (re-exports followed), so a re-export cannot carry an import past the
/// table. A re-export that its own file does not use (`pub use crate::dispatch::run;` in
/// `gemm/mod.rs`, a door kept for an old path) is a name, not an import, and is not checked.
pub fn violations(tree: &Tree) -> Vec<String> {
    let mut out = Vec::new();
    for (m, file) in &tree.files {
        let Some(layer) = layer_of(m) else { continue };
        let Some(may) = allowed(layer) else {
            out.push(format!(
                "{}: layer `{layer}` is not in the table",
                file.shown
            ));
            continue;
        };
        for r in file.refs.iter().filter(|r| !r.reexport) {
            let t = tree.resolve(&r.base, &r.rest);
            let mut bad: Vec<&str> = [layer_of(&t.named), layer_of(&t.home)]
                .into_iter()
                .flatten()
                .filter(|to| *to != layer && !may.contains(to))
                .collect();
            bad.dedup();
            for to in bad {
                out.push(format!(
                    "{}:{}: {} ({layer} may not import {to})",
                    file.shown, r.line, r.text
                ));
            }
        }
    }
    out
}
