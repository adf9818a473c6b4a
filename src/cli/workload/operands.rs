//! `--operands DIR`: a layer's real operands from `.npy` files named after it instead of
//! random ones. Layer `NAME` reads `DIR/NAME.a.npy` (A, M x K), `DIR/NAME.b.npy` (B, K x N)
//! and, if present, `DIR/NAME.c.npy` (C, M x N; zeros otherwise). Float formats take the
//! dtypes `tcrtl gemm` takes (its loader, `crate::cli::gemm::load`): bit patterns of the
//! format (uint8, uint16, or uint32 TF32 containers) or float values exactly representable
//! in it, C as float32 or uint32 FP32 bit patterns. Integer formats (s8, u8, s4, u4) take
//! int8, uint8, int16, int32 or int64 values in the format's range, C as int32. Every file's
//! presence and shape (and for integers its dtype) is checked before any layer runs, and
//! every file is fingerprinted ([`OperandFiles::fingerprints`]) so that `--resume` and
//! `merge` refuse to mix reports of changed files.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tensorcore_rtl::gemm::{CoreConfig, Gemm};
use tensorcore_rtl::io::npy::{read_npy, read_npy_shape, shape_text, Dtype};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::int::S32;
use tensorcore_rtl::workload::{Layer, LayerOperands};

use super::report::{file_fingerprint, fingerprint_text as print_text};
use crate::cli::gemm::load::{load_c, load_operand};
use crate::cli::operand_files::{load_int_values, INT_DTYPES};

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

    /// The file name of operand `suffix` (`a`, `b`, `c`) of layer `name`.
    fn file_name(name: &str, suffix: &str) -> String {
        format!("{name}.{suffix}.npy")
    }

    /// The file of operand `suffix` (`a`, `b`, `c`) of layer `name`.
    fn file(&self, name: &str, suffix: &str) -> PathBuf {
        self.dir.join(Self::file_name(name, suffix))
    }

    /// Checks, from the headers alone, that layer `index` has its A and B files (and C if
    /// given) with the shapes of its GEMM (and, for integer formats, integer dtypes; C
    /// int32). Errors are one line naming the file and the layer.
    pub fn check(&self, index: usize, layer: &Layer, cfg: &CoreConfig) -> Result<(), String> {
        let name = &layer.name;
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
            return Err(format!(
                "--operands: layer {index} is named {name:?}, which cannot name an operand file"
            ));
        }
        let int = matches!(cfg.mode, AccMode::Int(_));
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
            let (shape, dtype) = read_npy_shape(&path).map_err(|e| e.to_string())?;
            if shape != want {
                return Err(format!(
                    "{}: {op} of layer {index} ({name}, {m} x {n} x {k}) must be {}, it is {}",
                    path.display(),
                    shape_text(&want),
                    shape_text(&shape)
                ));
            }
            if int && suffix == "c" && dtype != Dtype::I32 {
                return Err(format!(
                    "{}: C of layer {index} ({name}) has dtype {}; integer formats take C as \
                     int32",
                    path.display(),
                    dtype.numpy_name()
                ));
            }
            if int && suffix != "c" && !INT_DTYPES.contains(&dtype) {
                return Err(format!(
                    "{}: {op} of layer {index} ({name}) has dtype {}; integer formats take \
                     int8, uint8, int16, int32 or int64 values",
                    path.display(),
                    dtype.numpy_name()
                ));
            }
        }
        Ok(())
    }

    /// The fingerprint of every operand file of `layers` (`NAME.a.npy` to `{"bytes",
    /// "digest"}`, the FNV-1a of its bytes), for the report's `operand_files` key: a resume
    /// or a merge of reports whose files differ is refused (`report::changed_file`).
    pub fn fingerprints(&self, layers: &[Layer]) -> Result<Map<String, Value>, String> {
        let mut prints = Map::new();
        for l in layers {
            for (suffix, _, _) in OPERANDS {
                let file = Self::file_name(&l.name, suffix);
                if prints.contains_key(&file) {
                    continue;
                }
                let path = self.dir.join(&file);
                if path.exists() {
                    prints.insert(file, file_fingerprint(&path)?);
                }
            }
        }
        Ok(prints)
    }

    /// Layer `layer`'s problem on `cfg`, its operands read from the files, which must still
    /// have the fingerprints the run recorded (`prints`): a file changed since the run began
    /// is one line naming it.
    pub fn load(
        &self,
        layer: &Layer,
        cfg: CoreConfig,
        prints: &Map<String, Value>,
    ) -> Result<Gemm, String> {
        let name = &layer.name;
        let (m, n, k) = layer.gemm();
        let c_path = self.file(name, "c");
        let (a, b, c) = match cfg.mode {
            AccMode::Int(im) => {
                let (_, _, a) = load_int_values(&self.file(name, "a"), "A", im.a)?;
                let (_, _, b) = load_int_values(&self.file(name, "b"), "B", im.b)?;
                let c = if c_path.exists() {
                    load_int_c(&c_path)?
                } else {
                    vec![0; m * n]
                };
                (a, b, c)
            }
            _ => {
                let (_, _, a) = load_operand(&self.file(name, "a"), "A", cfg.fmt_a)?;
                let (_, _, b) = load_operand(&self.file(name, "b"), "B", cfg.fmt_b)?;
                let c = if c_path.exists() {
                    load_c(&c_path, m, n, FP32)?
                } else {
                    vec![0; m * n]
                };
                (a, b, c)
            }
        };
        // The files read are those the run fingerprinted.
        for (suffix, _, _) in OPERANDS {
            let file = Self::file_name(name, suffix);
            let path = self.dir.join(&file);
            let now = if path.exists() {
                Some(file_fingerprint(&path)?)
            } else {
                None
            };
            if now.as_ref() != prints.get(&file) {
                return Err(format!(
                    "{}: changed since the run began (it was {}, it is {}); run again",
                    path.display(),
                    print_text(prints.get(&file)),
                    print_text(now.as_ref())
                ));
            }
        }
        Gemm::new(m, n, k, cfg, a, b, c).map_err(|e| format!("layer {name}: {e}"))
    }
}

impl LayerOperands for OperandFiles {
    fn text(&self) -> String {
        OperandFiles::text(self)
    }

    fn check(&self, index: usize, layer: &Layer, cfg: &CoreConfig) -> Result<(), String> {
        OperandFiles::check(self, index, layer, cfg)
    }

    fn fingerprints(&self, layers: &[Layer]) -> Result<Map<String, Value>, String> {
        OperandFiles::fingerprints(self, layers)
    }

    fn load(
        &self,
        layer: &Layer,
        cfg: CoreConfig,
        prints: &Map<String, Value>,
    ) -> Result<Gemm, String> {
        OperandFiles::load(self, layer, cfg, prints)
    }
}

/// An integer C: int32 values (the shape was checked from the header).
fn load_int_c(path: &Path) -> Result<Vec<u32>, String> {
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    if arr.dtype != Dtype::I32 {
        return Err(format!(
            "{}: C has dtype {}; expected int32",
            path.display(),
            arr.dtype.numpy_name()
        ));
    }
    Ok(arr.iter_words().map(|w| S32.decode(w) as u32).collect())
}
