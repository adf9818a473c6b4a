//! numpy arrays in and out: operand arrays read as bit-pattern words (widened in parallel with
//! the GIL released), and results handed back as numpy arrays.

use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;

/// An operand array as the library takes it: its shape and its elements as 64-bit words
/// (unsigned bit patterns zero-extended; signed integers sign-extended).
pub struct Words {
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The elements, row-major.
    pub words: Vec<u64>,
}

/// Widens `s` into words on the rayon pool (in order), without the GIL.
fn widen<T: Copy + Sync>(py: Python<'_>, s: &[T], f: impl Fn(T) -> u64 + Sync + Send) -> Vec<u64> {
    py.allow_threads(|| s.par_iter().map(|&x| f(x)).collect())
}

macro_rules! try_dtype {
    ($py:expr, $obj:expr, $t:ty, $f:expr) => {
        if let Ok(arr) = $obj.downcast::<PyArrayDyn<$t>>() {
            let ro = arr
                .try_readonly()
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            let shape = ro.shape().to_vec();
            let words = match ro.as_slice() {
                Ok(s) => widen($py, s, $f),
                Err(_) => ro.as_array().iter().map(|&x| $f(x)).collect(),
            };
            return Ok(Some(Words { shape, words }));
        }
    };
}

/// Reads an unsigned bit-pattern array (uint8, uint16, uint32 or uint64); `None` for any
/// other object.
pub fn unsigned_words(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<Words>> {
    try_dtype!(py, obj, u8, u64::from);
    try_dtype!(py, obj, u16, u64::from);
    try_dtype!(py, obj, u32, u64::from);
    try_dtype!(py, obj, u64, |x: u64| x);
    Ok(None)
}

/// Reads an integer array of values (int8, uint8 or int32), sign- or zero-extended; `None`
/// for any other object.
pub fn int_words(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<Words>> {
    try_dtype!(py, obj, i8, |x: i8| x as i64 as u64);
    try_dtype!(py, obj, u8, u64::from);
    try_dtype!(py, obj, i32, |x: i32| x as i64 as u64);
    Ok(None)
}

/// [`unsigned_words`], or a `ValueError` naming `what` and the dtypes it takes.
pub fn require_unsigned(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Words> {
    unsigned_words(py, obj)?.ok_or_else(|| {
        PyValueError::new_err(format!(
            "{what} must be a numpy array of unsigned bit patterns (uint8, uint16, uint32)"
        ))
    })
}
