//! A 2:4-compressed A as the front doors take it (`tcrtl gemm --sparse --a-values V.npy
//! --a-meta M.npy`, `tcrtl sparse check`, and the Python package's
//! `tcrtl.gemm(..., sparse=True, a_values=..., a_meta=...)`): the kept values (`m x K/2`) and
//! the metadata (`m x K/4`, one nibble a byte), whose element type and shapes are checked here
//! in one place with the command line's one-line messages before [`Compressed::new`]
//! validates every value and nibble.
//!
//! Two kinds of refusal are kept apart, as `tcrtl sparse check` reports them: input that is
//! not a compressed pair at all (a metadata type or shapes that do not fit,
//! [`CompressedInputError`]) and a pair that fails validation ([`SparseError`]). An input
//! error about one of the two matrices names it ([`CompressedInputError::operand`]): the
//! command line prefixes that matrix's file, the Python package its argument.

use super::compress::{Compressed, SparseError};
use crate::gemm::mx_input::Codes;
use crate::numerics::format::Format;

/// One of the two matrices of a compressed A.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompressedOperand {
    /// The kept values (`m x K/2`).
    Values,
    /// The metadata nibbles (`m x K/4`).
    Meta,
}

/// Why a compressed A's matrices are not a compressed pair: the command line's one-line
/// message and, when it is about one matrix, which.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CompressedInputError {
    /// The matrix the message is about (the command line prefixes its file), if one.
    pub operand: Option<CompressedOperand>,
    /// The message.
    pub message: String,
}

/// Refuses metadata whose element type is not `uint8` (one nibble a byte); `dtype` is the
/// element type's numpy name (`uint8`, `uint16`, `int8`, `float32`, ...).
pub fn meta_dtype(dtype: &str) -> Result<(), CompressedInputError> {
    if dtype == "uint8" {
        return Ok(());
    }
    Err(CompressedInputError {
        operand: Some(CompressedOperand::Meta),
        message: format!("metadata must be uint8 (one nibble per byte), found {dtype}"),
    })
}

/// A compressed A's two matrices before the checks.
#[derive(Clone, Debug)]
pub struct CompressedInput {
    /// The format of the values (the core's A format).
    pub fmt: Format,
    /// The kept values, `m x K/2` bit patterns of `fmt`, row-major.
    pub values: Codes,
    /// The metadata's shape (rows, columns): `m x K/4`.
    pub meta_shape: (usize, usize),
    /// The metadata nibbles, one a byte, row-major (their element type checked by
    /// [`meta_dtype`]).
    pub meta: Vec<u8>,
}

impl CompressedInput {
    /// Checks that the matrices pair up (the metadata has the values' rows and one nibble per
    /// two kept values), then validates and builds the compressed A of dense width `K = 2 *
    /// kept`: the outer error is input that is not a compressed pair, the inner one a pair
    /// that fails validation ([`Compressed::new`]: value bit patterns, every nibble).
    pub fn build(self) -> Result<Result<Compressed, SparseError>, CompressedInputError> {
        let CompressedInput {
            fmt,
            values,
            meta_shape: (mm, groups),
            meta,
        } = self;
        let (m, kept) = (values.rows, values.cols);
        if mm != m || 2 * groups != kept {
            return Err(CompressedInputError {
                operand: None,
                message: format!(
                    "metadata is {mm} x {groups} but values are {m} x {kept}; expected {m} x {}",
                    kept / 2
                ),
            });
        }
        Ok(Compressed::new(fmt, m, 2 * kept, values.codes, meta))
    }
}
