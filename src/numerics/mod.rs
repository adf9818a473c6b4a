//! The numerics layer: formats as data and the integer datapath stages, pure functions on
//! bit fields (and, in [`int`], the integer tensor-core arithmetic). Nothing here knows of
//! clocks, signals or hardware blocks, and no host float computes a datapath result.

pub mod flags;
pub mod format;
pub mod round;
pub mod unpack;

pub use flags::{Flags, Loss, RoundingMode};
pub use format::{
    Class, Format, NonFinite, ACC_FORMATS, ALL_FORMATS, BF16, E2M1, E2M3, E3M2, E4M3, E5M2, E8M0,
    FP16, FP32, FP64, INPUT_FORMATS, TF32,
};
pub use round::{round_pack, Overflow, RoundTrace, Rounded, Unrounded};
pub use unpack::{unpack, Unpacked};
pub mod add;
pub mod multiply;
pub use add::{add, add_terms, exact_zero_sign, AddResult, AddTrace, Term};
pub use multiply::{multiply, multiply_unpacked, round_product, Product, ProductClass};
pub mod convert;
pub mod dot;
pub mod e8m0;
pub mod fixed;
pub mod fma64;
pub mod int;
pub mod mx;
pub mod mx_block;
pub mod mx_dot;
pub use convert::{convert, from_fp32, to_fp32};
