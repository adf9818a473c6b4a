//! The operands and outputs of `tcrtl gemm`: A, B and C read from `.npy` or text matrices,
//! and every output file checked before the run.

use super::args::GemmArgs;
use crate::cli::operand_files::load_int_matrix;
use crate::cli::text_matrix;
use crate::cli::values;
use std::path::Path;
use tensorcore_rtl::gemm::mx_input::Codes;
use tensorcore_rtl::hw::CoreConfig;
use tensorcore_rtl::io::npy::{read_npy, read_npy_shape, shape_text, Dtype, NpyArray};
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::job::Operands;
use tensorcore_rtl::numerics::convert::tf32_from_container;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::{Format, FP16, TF32};
use tensorcore_rtl::verify::measurements::encode_exact;

/// Reads an A or B operand: returns (rows, cols, bit patterns of `fmt`).
pub fn load_operand(
    path: &Path,
    name: &str,
    fmt: Format,
) -> Result<(usize, usize, Vec<u64>), String> {
    if text_matrix::is_text(path) {
        return text_matrix::read(path, name, |t| values::operand(fmt, t));
    }
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    let (rows, cols) = matrix_shape(&arr, path, name)?;
    let words = match arr.dtype {
        Dtype::U8 | Dtype::U16 => {
            let bits = if arr.dtype == Dtype::U8 { 8 } else { 16 };
            if fmt.width() != bits {
                return Err(format!(
                    "{}: {name} holds {} bit patterns but {fmt} needs {} (or float values)",
                    path.display(),
                    arr.dtype.numpy_name(),
                    if fmt.width() == 8 { "uint8" } else { "uint16" }
                ));
            }
            arr.words()
        }
        Dtype::F16 | Dtype::F32 | Dtype::F64 => (0..arr.len())
            .map(|i| {
                let v = arr.value_f64(i);
                encode_exact(fmt, v).ok_or_else(|| {
                    format!(
                        "{}: {name}[{}][{}] = {v:e} is not exactly representable in {fmt}",
                        path.display(),
                        i / cols,
                        i % cols
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Dtype::U32 if fmt == TF32 => arr
            .words()
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                tf32_from_container(w as u32).ok_or_else(|| {
                    format!(
                        "{}: {name}[{}][{}] = {w:#010x} is not a tf32 container (low 13 bits \
                         must be zero)",
                        path.display(),
                        i / cols,
                        i % cols
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Dtype::U32 | Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64 => {
            return Err(format!(
                "{}: {name} has dtype {}; {fmt} takes {} bit patterns or float16/32/64 values",
                path.display(),
                arr.dtype.numpy_name(),
                if fmt.width() == 8 { "uint8" } else { "uint16" }
            ))
        }
    };
    Ok((rows, cols, words))
}

/// The operands of a dense or 2:4-sparse `gemm` (floating-point or integer formats on
/// `cfg`): a generated problem (`--m`, `--n`, `--k`), or the files read into matrices for the
/// library's job to check and assemble.
pub fn operands(args: &GemmArgs, cfg: CoreConfig) -> Result<Operands, String> {
    if let Some(m) = args.m {
        let (Some(n), Some(k)) = (args.n, args.k) else {
            return Err("give --m M --n N --k K".into());
        };
        return Ok(Operands::Generated {
            m,
            n,
            k,
            seed: args.seed,
            pattern: args.pattern.into(),
        });
    }
    let int = match cfg.mode {
        AccMode::Int(im) => Some(im),
        _ => None,
    };
    let matrix = |(rows, cols, codes): (usize, usize, Vec<u64>)| Codes { rows, cols, codes };
    let read = |path: &Path, name: &str, fmt| match int {
        Some(im) => load_int_matrix(path, name, if name == "A" { im.a } else { im.b }),
        None => load_operand(path, name, fmt),
    };
    let read_c = |m: usize, n: usize| -> Result<Option<Codes>, String> {
        let Some(pc) = &args.c else {
            return Ok(None);
        };
        let words = match int {
            Some(_) => super::int::load_c(pc, m, n)?,
            None => load_c(pc, m, n, cfg.acc)?,
        };
        Ok(Some(Codes {
            rows: m,
            cols: n,
            codes: words.into_iter().map(u64::from).collect(),
        }))
    };
    let compressed = (&args.sparse_a.a_values, &args.sparse_a.a_meta);
    if let (Some(v), Some(md)) = compressed {
        if args.sparse {
            let a = crate::cli::sparse::read_compressed_input(v, md, cfg.fmt_a)?;
            let Some(pb) = &args.b else {
                return Err("give --b B.npy".into());
            };
            let b = matrix(read(pb, "B", cfg.fmt_b)?);
            let c = read_c(a.values.rows, b.cols)?;
            return Ok(Operands::Compressed { a, b, c });
        }
    }
    match (&args.a, &args.b) {
        (Some(pa), Some(pb)) => {
            if !args.sparse {
                check_npy_shapes(pa, pb)?;
            }
            let a = matrix(read(pa, "A", cfg.fmt_a)?);
            let b = matrix(read(pb, "B", cfg.fmt_b)?);
            let c = read_c(a.rows, b.cols)?;
            Ok(Operands::Given { a, b, c })
        }
        _ if args.sparse => {
            Err("give --a A.npy, or --a-values V.npy --a-meta M.npy, with --b B.npy".into())
        }
        _ => Err("give --a A.npy --b B.npy, or --m M --n N --k K".into()),
    }
}

/// When A and B are both `.npy` files: their shapes from the headers alone, checked before
/// any payload is read (2-D, equal inner dimensions, the problem within `gemm`'s limits), so a
/// mismatched pair costs no payload memory.
pub fn check_npy_shapes(pa: &Path, pb: &Path) -> Result<(), String> {
    if text_matrix::is_text(pa) || text_matrix::is_text(pb) {
        return Ok(());
    }
    let (sa, _) = read_npy_shape(pa).map_err(|e| e.to_string())?;
    let (sb, _) = read_npy_shape(pb).map_err(|e| e.to_string())?;
    if let ([m, ka], [kb, n]) = (sa.as_slice(), sb.as_slice()) {
        if ka != kb {
            return Err(format!(
                "inner dimensions differ: A is {m} x {ka} but B is {kb} x {n}"
            ));
        }
        values::check_size(*m, *n, *ka)?;
    }
    Ok(())
}

/// The (rows, columns) of a 2-D `.npy` matrix, or an error naming the operand.
pub fn matrix_shape(arr: &NpyArray, path: &Path, name: &str) -> Result<(usize, usize), String> {
    match arr.shape.as_slice() {
        [r, c] => Ok((*r, *c)),
        s => Err(format!(
            "{}: {name} must be a 2-D matrix but has shape {}",
            path.display(),
            shape_text(s)
        )),
    }
}

/// Reads C, `m x n`: float32 values or uint32 FP32 bit patterns, or for an FP16 accumulator
/// float16 values or uint16 FP16 bit patterns (both held as the FP16 bits); or a text matrix
/// in the accumulator format.
pub fn load_c(path: &Path, m: usize, n: usize, acc: Format) -> Result<Vec<u32>, String> {
    if text_matrix::is_text(path) {
        let (rows, cols, words) = text_matrix::read(path, "C", |t| values::operand(acc, t))?;
        if (rows, cols) != (m, n) {
            return Err(format!(
                "{}: C is {rows} x {cols} but A x B is {m} x {n}",
                path.display()
            ));
        }
        return Ok(words.iter().map(|&w| w as u32).collect());
    }
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    let (rows, cols) = matrix_shape(&arr, path, "C")?;
    let ok = if acc == FP16 {
        matches!(arr.dtype, Dtype::F16 | Dtype::U16)
    } else {
        matches!(arr.dtype, Dtype::F32 | Dtype::U32)
    };
    if !ok {
        return Err(format!(
            "{}: C has dtype {}; expected {}",
            path.display(),
            arr.dtype.numpy_name(),
            if acc == FP16 {
                "float16 or uint16 (FP16 bit patterns) for --out-format fp16"
            } else {
                "float32 or uint32 (FP32 bit patterns)"
            }
        ));
    }
    if (rows, cols) != (m, n) {
        return Err(format!(
            "{}: C is {rows} x {cols} but A x B is {m} x {n}",
            path.display()
        ));
    }
    Ok(arr.iter_words().map(|w| w as u32).collect())
}

/// Every file `--memh DIR` may write (`tensorcore_rtl::io::golden`), checked before the run.
const MEMH_FILES: [&str; 8] = [
    "a.hex",
    "b.hex",
    "c.hex",
    "d.hex",
    "steps.hex",
    "a_values.hex",
    "a_meta.hex",
    "manifest.json",
];

/// Checks every output of the run before any work: directories exist, no two outputs name the
/// same file, each can be opened for writing (`tensorcore_rtl::io::output`).
pub fn plan_outputs(args: &GemmArgs) -> Result<(), String> {
    let mut plan = OutputPlan::new();
    if let Some(out) = &args.out {
        plan.add("--out", out)?;
    }
    if let Some(dir) = &args.memh {
        if !dir.is_dir() {
            return Err(format!(
                "--memh {}: not an existing directory",
                dir.display()
            ));
        }
        for name in MEMH_FILES {
            plan.add("--memh", &dir.join(name))?;
        }
    }
    args.trace.plan(&mut plan)?;
    // An output that is also an input would be replaced by the run that reads it.
    let inputs = [
        ("--a", &args.a),
        ("--b", &args.b),
        ("--c", &args.c),
        ("--a-values", &args.sparse_a.a_values),
        ("--a-meta", &args.sparse_a.a_meta),
        ("--a-scales", &args.a_scales),
        ("--b-scales", &args.b_scales),
    ];
    for (flag, path) in inputs {
        if let Some(p) = path.as_deref() {
            if plan.contains(p) {
                return Err(format!(
                    "{flag} {} is also an output of this run",
                    p.display()
                ));
            }
        }
    }
    Ok(())
}
