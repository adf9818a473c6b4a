//! 2:4 structured sparsity (PTX `mma.sp::ordered_metadata`): A (`m x k`, `k` a multiple of
//! 4) holds at most two nonzeros in every group of four along K and is stored as `m x k/2`
//! kept values plus one 4-bit metadata nibble per group (low two bits: index of the first
//! kept value; high two bits: the second; strictly increasing).
//!
//! - [`meta`]: the nibble encoding and its six valid values;
//! - [`compress`](mod@compress): dense -> compressed (with the canonical pair for groups with fewer
//!   than two nonzeros, and optional pruning), validation of a given compressed pair, and
//!   decompression;
//! - [`input`]: a compressed A as the front doors take it (values and metadata matrices),
//!   checked with the command line's messages;
//! - [`problem`]: a sparse GEMM problem and [`run_functional_sparse`], the model the clocked
//!   sparse run must match bit for bit.
//!
//! - [`clocked`]: [`run_clocked_sparse`], the problem on the clocked tensor core in sparse
//!   mode (`hw`), with the sparse and dense-equivalent schedules.
//! - [`memory`]: [`run_memory_sparse`], the same through global memory, TMA and shared
//!   memory (`docs/memory.md`).
//!
//! Depends on `numerics`, `gemm` and `hw`. See `docs/sparsity.md`.

pub mod clocked;
pub mod compress;
pub mod input;
pub mod memory;
pub mod meta;
pub mod problem;

pub use clocked::{run_clocked_sparse, run_clocked_sparse_measured};
pub use compress::{compress, overfull_groups, Compressed, Prune, SparseError};
pub use input::{CompressedInput, CompressedInputError, CompressedOperand};
pub use memory::run_memory_sparse;
pub use meta::{NibbleError, VALID_NIBBLES};
pub use problem::{check_b_bus, run_functional_sparse, SparseGemm};
