//! 2:4 compression: the canonical pairs, pruning, errors, round trips.

use tensorcore_rtl::numerics::format::{E4M3, FP16};
use tensorcore_rtl::sparse::compress::select;
use tensorcore_rtl::sparse::{compress, Compressed, Prune, SparseError};

const ONE: u64 = 0x3C00;
const TWO: u64 = 0x4000;

#[test]
fn canonical_pairs() {
    let f = FP16;
    assert_eq!(select(f, &[0, 0, 0, 0], Prune::Off), Ok((0, 1)));
    assert_eq!(select(f, &[0x8000, 0, 0, 0x8000], Prune::Off), Ok((0, 1)));
    assert_eq!(select(f, &[ONE, 0, 0, 0], Prune::Off), Ok((0, 1)));
    assert_eq!(select(f, &[0, ONE, 0, 0], Prune::Off), Ok((1, 2)));
    assert_eq!(select(f, &[0, 0, ONE, 0], Prune::Off), Ok((2, 3)));
    assert_eq!(select(f, &[0, 0, 0, ONE], Prune::Off), Ok((2, 3)));
    assert_eq!(select(f, &[ONE, 0, 0, TWO], Prune::Off), Ok((0, 3)));
    assert_eq!(select(f, &[ONE, ONE, ONE, 0], Prune::Off), Err(3));
}

#[test]
fn prune_keeps_largest_ties_low_nan_first() {
    let f = FP16;
    let neg_two = TWO | 0x8000;
    assert_eq!(
        select(f, &[ONE, neg_two, ONE, TWO], Prune::KeepLargest),
        Ok((1, 3))
    );
    assert_eq!(
        select(f, &[ONE, ONE, ONE, ONE], Prune::KeepLargest),
        Ok((0, 1))
    );
    assert_eq!(
        select(f, &[ONE, 0x7E00, TWO, 0x7C00], Prune::KeepLargest),
        Ok((1, 3))
    );
    // Groups with at most two nonzeros follow the canonical rule under pruning too.
    assert_eq!(select(f, &[0, 0, 0, ONE], Prune::KeepLargest), Ok((2, 3)));
    // E4M3's only NaN (0x7F) outranks its largest normal 448 (0x7E).
    assert_eq!(
        select(E4M3, &[0x7E, 0x7F, 0x7E, 0x01], Prune::KeepLargest),
        Ok((0, 1))
    );
}

#[test]
fn errors_name_row_and_group() {
    let a = [ONE, 0, 0, 0, ONE, ONE, 0, ONE, 0, 0, 0, 0, 0, 0, 0, 0];
    let e = compress(FP16, 2, 8, &a, Prune::Off).unwrap_err();
    assert_eq!(
        e.to_string(),
        "A row 0, group 1 (columns 4..=7) has 3 nonzeros; 2:4 sparsity allows at most 2 per group of 4 (prune to keep the two largest)"
    );
    assert!(matches!(
        compress(FP16, 1, 6, &[0; 6], Prune::Off),
        Err(SparseError::KNotMultipleOf4 { k: 6 })
    ));
    let e = Compressed::new(FP16, 2, 8, vec![0; 8], vec![4, 4, 4, 0b1010]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "metadata row 1, group 1: invalid 2:4 nibble 0b1010: both indices are 2 (the two kept indices must be strictly increasing)"
    );
}

#[test]
fn roundtrip_small() {
    let a = [0, ONE, 0, TWO, 0x8000, 0, 0, 0];
    let c = compress(FP16, 1, 8, &a, Prune::Off).unwrap();
    assert_eq!(c.meta(), &[0b1101, 0b0100]);
    assert_eq!(c.values(), &[ONE, TWO, 0x8000, 0]);
    assert_eq!(c.kept_columns(0), vec![1, 3, 4, 5]);
    assert_eq!(c.decompress(), a.to_vec());
}
