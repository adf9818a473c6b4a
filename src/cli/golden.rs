//! Golden `$readmemh` images of one GEMM (`tcrtl gemm --memh DIR`): `a.hex`, `b.hex`, `c.hex`,
//! `d.hex`, each opening with a `//` comment header that names the problem (shape, formats,
//! mode, preset, width, seed), and `manifest.json` listing the files.

use serde_json::json;
use std::io::Write;
use std::path::Path;
use tensorcore_rtl::gemm::Gemm;
use tensorcore_rtl::io::memh::write_memh_with_header;
use tensorcore_rtl::io::AtomicFile;
use tensorcore_rtl::numerics::dot::Preset;

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
        "shape M N K = {} {} {}; formats {} x {}; mode {}; preset {}; width {}; seed {}{}",
        g.m,
        g.n,
        g.k,
        g.cfg.fmt_a,
        g.cfg.fmt_b,
        g.cfg.mode.name(),
        preset.map_or("none", Preset::name),
        g.cfg.width,
        seed,
        if sparse {
            "; sparse 2:4 (A dense here)"
        } else {
            ""
        },
    )
}

/// Writes the four images and `manifest.json` into the existing directory `dir`; `d` is the
/// clocked core's D (FP32 bits, row-major).
pub fn write_golden(
    dir: &Path,
    g: &Gemm,
    d: &[u32],
    preset: Option<Preset>,
    origin: &Origin,
    sparse: bool,
) -> Result<(), String> {
    let c: Vec<u64> = g.c.iter().map(|&w| u64::from(w)).collect();
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
            bits: 32,
            words: &c,
        },
        Image {
            file: "d.hex",
            matrix: "D",
            rows: g.m,
            cols: g.n,
            bits: 32,
            words: &d,
        },
    ];
    let problem = problem_line(g, preset, origin, sparse);
    let mut files = Vec::new();
    for im in &images {
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
    let manifest = json!({
        "generator": "tcrtl gemm --memh",
        "m": g.m, "n": g.n, "k": g.k,
        "format_a": g.cfg.fmt_a.to_string(), "format_b": g.cfg.fmt_b.to_string(),
        "mode": g.cfg.mode.name(),
        "preset": preset.map(Preset::name),
        "width": g.cfg.width,
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
