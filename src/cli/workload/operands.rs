//! `--operands DIR`: a layer's real operands from `.npy` files named after it instead of
//! random ones. Layer `NAME` reads `DIR/NAME.a.npy` (A, M x K), `DIR/NAME.b.npy` (B, K x N)
//! and, if present, `DIR/NAME.c.npy` (C, M x N; zeros otherwise), in the dtypes `tcrtl gemm`
//! takes (its loader, `crate::cli::gemm::load`): bit patterns of the format (uint8, uint16,
//! or uint32 TF32 containers) or float values exactly representable in it, C as float32 or
//! uint32 FP32 bit patterns. Every file's presence and shape is checked before any layer runs.

use std::path::{Path, PathBuf};

use tensorcore_rtl::gemm::{CoreConfig, Gemm};
use tensorcore_rtl::io::npy::{read_npy_shape, shape_text};
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::workload::Layer;

use crate::cli::gemm::load::{load_c, load_operand};

/// The folder of operand files.
pub struct OperandFiles {
    dir: PathBuf,
}

/// Which operand a file holds: its suffix, its name in errors, whether it must exist.
const OPERANDS: [(&str, &str, bool); 3] = [("a", "A", true), ("b", "B", true), ("c", "C", false)];

impl OperandFiles {
    /// The folder `dir`, which must exist.
    pub fn new(dir: &Path) -> Result<OperandFiles, String> {
        if !dir.is_dir() {
            return Err(format!(
                "--operands {}: not a directory of <layer>.a.npy and <layer>.b.npy files",
                dir.display()
            ));
        }
        Ok(OperandFiles {
            dir: dir.to_path_buf(),
        })
    }

    /// The folder as written in the report.
    pub fn text(&self) -> String {
        self.dir.display().to_string()
    }

    /// The file of operand `suffix` (`a`, `b`, `c`) of layer `name`.
    fn file(&self, name: &str, suffix: &str) -> PathBuf {
        self.dir.join(format!("{name}.{suffix}.npy"))
    }

    /// Checks, from the headers alone, that layer `index` has its A and B files (and C if
    /// given) with the shapes of its GEMM. Errors are one line naming the file and the layer.
    pub fn check(&self, index: usize, layer: &Layer) -> Result<(), String> {
        let name = &layer.name;
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
            return Err(format!(
                "--operands: layer {index} is named {name:?}, which cannot name an operand file"
            ));
        }
        let (m, n, k) = layer.gemm();
        for ((suffix, op, required), want) in OPERANDS.into_iter().zip([[m, k], [k, n], [m, n]]) {
            let path = self.file(name, suffix);
            if !path.exists() {
                if required {
                    return Err(format!(
                        "{}: no such file ({op} of layer {index}, {name}: --operands needs \
                         <layer>.a.npy and <layer>.b.npy)",
                        path.display()
                    ));
                }
                continue;
            }
            let (shape, _) = read_npy_shape(&path).map_err(|e| e.to_string())?;
            if shape != want {
                return Err(format!(
                    "{}: {op} of layer {index} ({name}, {m} x {n} x {k}) must be {}, it is {}",
                    path.display(),
                    shape_text(&want),
                    shape_text(&shape)
                ));
            }
        }
        Ok(())
    }

    /// Layer `layer`'s problem on `cfg`, its operands read from the files.
    pub fn load(&self, layer: &Layer, cfg: CoreConfig) -> Result<Gemm, String> {
        let name = &layer.name;
        let (m, n, k) = layer.gemm();
        let (_, _, a) = load_operand(&self.file(name, "a"), "A", cfg.fmt_a)?;
        let (_, _, b) = load_operand(&self.file(name, "b"), "B", cfg.fmt_b)?;
        let c_path = self.file(name, "c");
        let c = if c_path.exists() {
            load_c(&c_path, m, n, FP32)?
        } else {
            vec![0; m * n]
        };
        Gemm::new(m, n, k, cfg, a, b, c).map_err(|e| format!("layer {name}: {e}"))
    }
}
