//! Operand matrices read from `.npy` files, shared by `tcrtl dot` batches and `tcrtl gemm`:
//! whether an argument names a file, one accumulator per row, and integer matrices checked
//! against their format's range.

use std::path::Path;
use tensorcore_rtl::io::npy::{read_npy, shape_text, Dtype, NpyArray};
use tensorcore_rtl::numerics::int::IntFormat;

/// The (rows, K) of a two-dimensional operand matrix read from `path`, or a one-line error
/// naming the operand (`name`) and the shape it has instead.
pub fn rows_by_k(path: &Path, name: &str, shape: &[usize]) -> Result<(usize, usize), String> {
    match shape {
        [r, k] => Ok((*r, *k)),
        s => Err(format!(
            "{}: {name} must be rows x K but has shape {}",
            path.display(),
            shape_text(s)
        )),
    }
}

/// True if an operand argument names a `.npy` file (a single value ending in `.npy`).
pub fn is_npy(values: &[String]) -> bool {
    values.len() == 1 && values[0].to_ascii_lowercase().ends_with(".npy")
}

/// Reads C, one accumulator per row: shape (rows,) or (rows, 1) and a dtype in `dtypes`
/// (`what` names them in the error). Returns the array's words.
pub fn load_row_c(
    path: &Path,
    rows: usize,
    dtypes: &[Dtype],
    what: &str,
) -> Result<Vec<u64>, String> {
    let arr: NpyArray = read_npy(path).map_err(|e| e.to_string())?;
    if !dtypes.contains(&arr.dtype) {
        return Err(format!(
            "{}: C has dtype {}; expected {what}",
            path.display(),
            arr.dtype.numpy_name()
        ));
    }
    let n = match arr.shape.as_slice() {
        [n] | [n, 1] => *n,
        s => {
            return Err(format!(
                "{}: C must hold one value per row, shape ({rows},), but has shape {s:?}",
                path.display()
            ))
        }
    };
    if n != rows {
        return Err(format!(
            "{}: C has {n} values but A and B have {rows} rows",
            path.display()
        ));
    }
    Ok(arr.words())
}

/// Reads an A or B matrix: rows x K, int8 for signed formats and uint8 for unsigned ones,
/// every value in the format's range. Returns (rows, K, bit patterns).
pub fn load_int_matrix(
    path: &Path,
    name: &str,
    fmt: IntFormat,
) -> Result<(usize, usize, Vec<u64>), String> {
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    let (rows, k) = rows_by_k(path, name, &arr.shape)?;
    let want = if fmt.signed { Dtype::I8 } else { Dtype::U8 };
    if arr.dtype != want {
        return Err(format!(
            "{}: {name} has dtype {}; {fmt} values are {}",
            path.display(),
            arr.dtype.numpy_name(),
            want.numpy_name()
        ));
    }
    let container = IntFormat {
        name: want.numpy_name(),
        bits: 8,
        signed: fmt.signed,
    };
    let mut bits = Vec::with_capacity(arr.len());
    for (i, w) in arr.iter_words().enumerate() {
        let v = container.decode(w);
        let pattern = fmt.encode(v).ok_or_else(|| {
            format!(
                "{}: {name}[{}, {}] = {v} is out of range for {fmt} ({}..={})",
                path.display(),
                i / k.max(1),
                i % k.max(1),
                fmt.min(),
                fmt.max()
            )
        })?;
        bits.push(pattern);
    }
    Ok((rows, k, bits))
}

/// The integer dtypes [`load_int_values`] takes.
pub const INT_DTYPES: [Dtype; 5] = [Dtype::I8, Dtype::U8, Dtype::I16, Dtype::I32, Dtype::I64];

/// Reads an integer A or B matrix of any integer dtype in [`INT_DTYPES`] (int8, uint8,
/// int16, int32, int64), every value in `fmt`'s range. Returns (rows, cols, bit patterns of
/// `fmt`). A value out of range is one line naming the file, the element and the range.
pub fn load_int_values(
    path: &Path,
    name: &str,
    fmt: IntFormat,
) -> Result<(usize, usize, Vec<u64>), String> {
    let arr = read_npy(path).map_err(|e| e.to_string())?;
    let (rows, cols) = rows_by_k(path, name, &arr.shape)?;
    if !INT_DTYPES.contains(&arr.dtype) {
        return Err(format!(
            "{}: {name} has dtype {}; {fmt} values are integers (int8, uint8, int16, int32 or \
             int64)",
            path.display(),
            arr.dtype.numpy_name()
        ));
    }
    let mut bits = Vec::with_capacity(arr.len());
    for i in 0..arr.len() {
        let v = arr.value_i64(i).unwrap_or(i64::MIN);
        let pattern = fmt.encode(v).ok_or_else(|| {
            format!(
                "{}: {name}[{}, {}] = {v} is out of range for {fmt} ({}..={})",
                path.display(),
                i / cols.max(1),
                i % cols.max(1),
                fmt.min(),
                fmt.max()
            )
        })?;
        bits.push(pattern);
    }
    Ok((rows, cols, bits))
}
