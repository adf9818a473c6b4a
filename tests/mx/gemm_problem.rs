//! The MX GEMM problem: quantised operands in, the same rows out.

use tensorcore_rtl::gemm::MxGemm;
use tensorcore_rtl::numerics::format::FP32;
use tensorcore_rtl::numerics::mx::{quantise, BlockFormat};

/// `from_quantised` lays B out as `k x n`; `rows` reads it back as the same columns.
#[test]
fn from_quantised_and_rows_round_trip() {
    let vals = |n: usize, s: f32| -> Vec<u64> {
        (0..n)
            .map(|i| u64::from(((i as f32 - 7.0) * s).to_bits()))
            .collect()
    };
    for fmt in [BlockFormat::MxFp8E4M3, BlockFormat::NvFp4] {
        let qa = quantise(fmt, FP32, &vals(3 * 64, 0.3), 64).expect("A");
        let qb = quantise(fmt, FP32, &vals(5 * 64, -0.7), 64).expect("B^T");
        let g = MxGemm::from_quantised(&qa, &qb, vec![0; 15], 4).expect("problem");
        assert_eq!((g.m, g.n, g.k), (3, 5, 64));
        // B[i][j] is column j's element i.
        assert_eq!(g.b[10 * 5 + 2], qb.elements[2 * 64 + 10]);
        let (ra, rb) = g.rows();
        assert_eq!(ra, qa);
        assert_eq!(rb, qb);
    }
}
