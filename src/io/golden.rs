//! Golden `$readmemh` images of one GEMM (`tcrtl gemm --memh DIR`): `a.hex`, `b.hex`, `c.hex`,
//! `d.hex`, each opening with a `//` comment header that names the problem (shape, formats,
//! mode, preset, width, accumulator format, seed), the per-PE step vectors `steps.hex` (dense
//! `ieee` and `fused`),
//! for 2:4 sparse runs the compressed A (`a_values.hex`, the kept values, `m x k/2`, and
//! `a_meta.hex`, one 4-bit metadata nibble per group of four, `m x k/4`), and `manifest.json`
//! listing the files (and `acc_format`). C and D hold words of the accumulator format: 32-bit
//! FP32 patterns, or with `--out-format fp16` 16-bit FP16 patterns.
//!
//! `steps.hex` holds one record per (row, column, step) of D, in that order (row-major over D,
//! then the steps of that element, `T = ceil(K / w)` of them, or for a sparse run
//! `ceil((K/2) / w)`, one per `w` kept values), counted from the element's first step, so a
//! design with any pipeline latency lines up. A record is one hexadecimal word, most
//! significant field first: the w A lanes (lane 0 lowest), the w B lanes, the accumulator
//! before the step and after it (FP32, 8 hex digits each, or FP16, 4 digits). Lanes past K are
//! zero. In a sparse run the A lanes are kept values and the B lanes the B values their
//! metadata selects (the multiplexers' outputs). The accumulators come from the `verify` layer's step functions
//! (`ieee_dot_acc` over the step's lanes for `ieee`, `exact_dot_acc` for `fused`, rounding to
//! the accumulator format) and the last one of every element is checked against the clocked
//! core's D.

use crate::gemm::Gemm;
use crate::io::memh::write_memh_with_header;
use crate::io::AtomicFile;
use crate::numerics::dot::{AccMode, Preset};
use crate::sparse::SparseGemm;
use crate::verify::exact::{exact_dot_acc, ieee_dot_acc};
use serde_json::json;
use std::io::Write;
use std::path::Path;

/// The most step records written (larger problems get no `steps.hex`).
const MAX_STEP_RECORDS: usize = 1 << 20;

/// Where the operands came from, for the header and the manifest.
pub enum Origin {
    /// A seeded random problem (`--m --n --k --seed`).
    Seed(u64),
    /// A teaching pattern (`--pattern`), by name.
    Pattern(&'static str),
    /// Operands read from `.npy` files.
    Files,
}

/// One image: file name, matrix name, rows, columns, word width in bits.
struct Image<'a> {
    file: &'static str,
    matrix: &'static str,
    rows: usize,
    cols: usize,
    bits: u32,
    words: &'a [u64],
}

/// The problem line every header carries.
fn problem_line(g: &Gemm, preset: Option<Preset>, origin: &Origin, sparse: bool) -> String {
    let seed = match origin {
        Origin::Seed(s) => s.to_string(),
        Origin::Pattern(p) => format!("none (pattern {p})"),
        Origin::Files => "none (operands from .npy files)".to_string(),
    };
    format!(
        "shape M N K = {} {} {}; formats {} x {}; mode {}; preset {}; width {}; accumulator {}; seed {}{}",
        g.m,
        g.n,
        g.k,
        g.cfg.fmt_a,
        g.cfg.fmt_b,
        g.cfg.mode.name(),
        preset.map_or("none", Preset::name),
        g.cfg.width,
        g.cfg.acc,
        seed,
        if sparse {
            "; sparse 2:4 (a.hex holds A decompressed; a_values.hex, a_meta.hex the compressed A)"
        } else {
            ""
        },
    )
}

/// The step vectors of `g` (see the module doc): the records as hex words, the steps per
/// element and the record width in bits; `None` for modes without per-step accumulators
/// (`exact`, `nvidia`) or more than [`MAX_STEP_RECORDS`] records. For a sparse run (`sparse`,
/// whose decompressed problem `g` is) the steps run over each row's kept values and the B
/// values they select.
fn step_vectors(
    g: &Gemm,
    d: &[u32],
    sparse: Option<&SparseGemm>,
) -> Result<Option<(Vec<String>, usize, u32)>, String> {
    let fused = match g.cfg.mode {
        AccMode::Ieee => false,
        AccMode::Fused => true,
        _ => return Ok(None),
    };
    let w = g.cfg.width.max(1);
    // The products of an element, in order: K dense ones, or K/2 kept ones.
    let depth = if sparse.is_some() { g.k / 2 } else { g.k };
    let steps = depth.div_ceil(w);
    if g.m * g.n * steps > MAX_STEP_RECORDS {
        return Ok(None);
    }
    let (fa, fb, acc_fmt) = (g.cfg.fmt_a, g.cfg.fmt_b, g.cfg.acc);
    let dacc = acc_fmt.width().div_ceil(4) as usize;
    let (da, db) = (
        fa.width().div_ceil(4) as usize,
        fb.width().div_ceil(4) as usize,
    );
    let lanes = |words: &[u64], digits: usize| -> String {
        (0..w)
            .rev()
            .map(|l| format!("{:0digits$x}", words.get(l).copied().unwrap_or(0)))
            .collect()
    };
    let mut records = Vec::with_capacity(g.m * g.n * steps);
    for r in 0..g.m {
        let a_row = match sparse {
            Some(sp) => sp.a.values_row(r),
            None => g.a_row(r),
        };
        for c in 0..g.n {
            let b_col = match sparse {
                Some(sp) => sp.gathered_b(r, c),
                None => g.b_col(c),
            };
            let mut acc = g.c[r * g.n + c];
            for s in 0..steps {
                let span = s * w..((s + 1) * w).min(depth);
                let (a, b) = (&a_row[span.clone()], &b_col[span]);
                let after = if fused {
                    exact_dot_acc(acc_fmt, fa, fb, a, b, acc)
                } else {
                    ieee_dot_acc(acc_fmt, fa, fb, a, b, acc)
                };
                records.push(format!(
                    "{}{}{acc:0dacc$x}{after:0dacc$x}",
                    lanes(a, da),
                    lanes(b, db)
                ));
                acc = after;
            }
            if acc != d[r * g.n + c] {
                return Err(format!(
                    "step vectors end at {acc:0dacc$x} but the core's D[{r}][{c}] is {:0dacc$x}",
                    d[r * g.n + c]
                ));
            }
        }
    }
    let bits = (w as u32) * (fa.width() + fb.width()) + 2 * acc_fmt.width();
    Ok(Some((records, steps, bits)))
}

/// Writes the four images and `manifest.json` into the existing directory `dir`; `d` is the
/// clocked core's D (bits of the accumulator format, row-major).
pub fn write_golden(
    dir: &Path,
    g: &Gemm,
    d: &[u32],
    preset: Option<Preset>,
    origin: &Origin,
    sparse_problem: Option<&SparseGemm>,
) -> Result<(), String> {
    let sparse = sparse_problem.is_some();
    let c: Vec<u64> = g.c.iter().map(|&w| u64::from(w)).collect();
    let d_bits = d;
    let d: Vec<u64> = d.iter().map(|&w| u64::from(w)).collect();
    let images = [
        Image {
            file: "a.hex",
            matrix: "A",
            rows: g.m,
            cols: g.k,
            bits: g.cfg.fmt_a.width(),
            words: &g.a,
        },
        Image {
            file: "b.hex",
            matrix: "B",
            rows: g.k,
            cols: g.n,
            bits: g.cfg.fmt_b.width(),
            words: &g.b,
        },
        Image {
            file: "c.hex",
            matrix: "C",
            rows: g.m,
            cols: g.n,
            bits: g.cfg.acc.width(),
            words: &c,
        },
        Image {
            file: "d.hex",
            matrix: "D",
            rows: g.m,
            cols: g.n,
            bits: g.cfg.acc.width(),
            words: &d,
        },
    ];
    let problem = problem_line(g, preset, origin, sparse);
    let (values, meta): (Vec<u64>, Vec<u64>) = match sparse_problem {
        Some(sp) => (
            sp.a.values().to_vec(),
            sp.a.meta().iter().map(|&n| u64::from(n)).collect(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    let sparse_images = [
        Image {
            file: "a_values.hex",
            matrix: "A kept values",
            rows: g.m,
            cols: g.k / 2,
            bits: g.cfg.fmt_a.width(),
            words: &values,
        },
        Image {
            file: "a_meta.hex",
            matrix: "A metadata nibbles",
            rows: g.m,
            cols: g.k / 4,
            bits: 4,
            words: &meta,
        },
    ];
    let extra: &[Image] = if sparse { &sparse_images } else { &[] };
    let mut files = Vec::new();
    for im in images.iter().chain(extra) {
        let header = vec![
            format!(
                "tcrtl golden image {}: {} ({} x {}, row-major, {}-bit words, {} words)",
                im.file,
                im.matrix,
                im.rows,
                im.cols,
                im.bits,
                im.words.len()
            ),
            problem.clone(),
        ];
        let path = dir.join(im.file);
        write_memh_with_header(&path, &header, im.words, im.bits)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        files.push(json!({
            "file": im.file, "matrix": im.matrix, "rows": im.rows, "cols": im.cols,
            "bits": im.bits, "words": im.words.len(), "order": "row-major",
        }));
    }
    // Optional files left by an earlier run (another mode, a sparse run) would not match
    // these images.
    for name in ["steps.hex", "a_values.hex", "a_meta.hex"] {
        let path = dir.join(name);
        let written = files.iter().any(|f| f["file"] == name);
        if !written && path.is_file() {
            crate::rtl::file::remove_on_commit(&path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    if let Some((records, steps, bits)) = step_vectors(g, d_bits, sparse_problem)? {
        let path = dir.join("steps.hex");
        let header = [
            format!(
                "tcrtl golden step vectors steps.hex: {} records, {steps} steps per element of D, {bits}-bit records",
                records.len()
            ),
            format!(
                "record: A lanes ({} x {} bits, lane 0 lowest) | B lanes ({} x {} bits) | acc before ({acc}) | acc after ({acc}); order: row, col, step",
                g.cfg.width, g.cfg.fmt_a.width(), g.cfg.width, g.cfg.fmt_b.width(),
                acc = g.cfg.acc.width()
            ),
            problem.clone(),
        ];
        let mut f = AtomicFile::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let text: String = header
            .iter()
            .map(|h| format!("// {h}\n"))
            .chain(records.iter().map(|r| format!("{r}\n")))
            .collect();
        f.write_all(text.as_bytes())
            .and_then(|()| f.commit())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        files.push(json!({
            "file": "steps.hex", "matrix": "steps", "records": records.len(),
            "steps_per_element": steps, "bits": bits,
            "layout": format!(
                "A lanes (lane 0 lowest) | B lanes | acc before ({acc}) | acc after ({acc})",
                acc = g.cfg.acc.width()
            ),
            "order": "row, col, step",
        }));
    }
    let manifest = json!({
        "generator": "tcrtl gemm --memh",
        "m": g.m, "n": g.n, "k": g.k,
        "format_a": g.cfg.fmt_a.to_string(), "format_b": g.cfg.fmt_b.to_string(),
        "mode": g.cfg.mode.name(),
        "preset": preset.map(Preset::name),
        "width": g.cfg.width,
        "acc_format": g.cfg.acc.name,
        "seed": match origin { Origin::Seed(s) => Some(*s), _ => None },
        "pattern": match origin { Origin::Pattern(p) => Some(*p), Origin::Seed(_) => Some("random"), Origin::Files => None },
        "sparse": sparse,
        "files": files,
    });
    let path = dir.join("manifest.json");
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    let mut f = AtomicFile::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    writeln!(f, "{text}")
        .and_then(|()| f.commit())
        .map_err(|e| format!("{}: {e}", path.display()))
}
