//! How the library's errors cross into Python: the one-line message the command line prints,
//! as a `ValueError` (bad input) or an `OSError` (a file that could not be read or written).

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::PyErr;

/// A `ValueError` carrying the library's message.
pub fn value_error(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

/// An `OSError` carrying the library's message.
pub fn os_error(msg: impl Into<String>) -> PyErr {
    PyOSError::new_err(msg.into())
}

/// Extension: `.py()` turns a `Result<T, String>` of the library into a Python result.
pub trait IntoPy<T> {
    /// The result with its error as a `ValueError`.
    fn py(self) -> Result<T, PyErr>;
}

impl<T, E: std::fmt::Display> IntoPy<T> for Result<T, E> {
    fn py(self) -> Result<T, PyErr> {
        self.map_err(|e| value_error(e.to_string()))
    }
}
