//! A compressed A as the front doors take it (`sparse::input`): the metadata's element type,
//! the shapes that pair up, and validation handed on to `Compressed::new`.

use tensorcore_rtl::gemm::mx_input::Codes;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::sparse::input::{meta_dtype, CompressedInput, CompressedOperand};
use tensorcore_rtl::sparse::SparseError;

/// Values `m x kept` (FP16 ones) with metadata of `meta_shape` holding `nibble` everywhere.
fn input(m: usize, kept: usize, meta_shape: (usize, usize), nibble: u8) -> CompressedInput {
    CompressedInput {
        fmt: FP16,
        values: Codes {
            rows: m,
            cols: kept,
            codes: vec![0x3C00; m * kept],
        },
        meta_shape,
        meta: vec![nibble; meta_shape.0 * meta_shape.1],
    }
}

#[test]
fn metadata_must_be_bytes() {
    assert!(meta_dtype("uint8").is_ok());
    for dtype in ["uint16", "int8", "float32"] {
        let e = meta_dtype(dtype).expect_err(dtype);
        assert_eq!(e.operand, Some(CompressedOperand::Meta));
        assert_eq!(
            e.to_string(),
            format!("metadata must be uint8 (one nibble per byte), found {dtype}")
        );
    }
}

#[test]
fn shapes_must_pair_up() {
    for (m, kept, meta_shape) in [(2, 4, (2, 3)), (2, 4, (3, 2)), (2, 5, (2, 2))] {
        let e = input(m, kept, meta_shape, 0b0100)
            .build()
            .expect_err("shapes that do not pair up");
        assert_eq!(e.operand, None);
        assert_eq!(
            e.to_string(),
            format!(
                "metadata is {} x {} but values are {m} x {kept}; expected {m} x {}",
                meta_shape.0,
                meta_shape.1,
                kept / 2
            )
        );
    }
}

#[test]
fn a_valid_pair_builds_and_bad_nibbles_are_the_validation_error() {
    let a = input(2, 4, (2, 2), 0b1110)
        .build()
        .expect("input")
        .expect("valid");
    assert_eq!((a.m(), a.k(), a.kept()), (2, 8, 4));
    assert_eq!(a.kept_columns(1), vec![2, 3, 6, 7]);
    match input(2, 4, (2, 2), 0b0110).build() {
        Ok(Err(SparseError::BadNibble {
            row: 0,
            group: 0,
            nibble: 0b0110,
            ..
        })) => {}
        other => panic!("expected a bad nibble, got {other:?}"),
    }
}
