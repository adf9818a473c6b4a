//! The error sweep's pieces: rounding a host value to a format, one sample's error, the
//! histogram and its quantiles.

use num_bigint::BigUint;
use tensorcore_rtl::numerics::format::{E4M3, FP16, FP32};
use tensorcore_rtl::sweep::{
    encode_nearest, error, hist_bin, hist_edges, merge_stats, KStats, Outcome, HIST_BINS,
};
use tensorcore_rtl::verify::exact::ExactValue;

#[test]
fn encode_nearest_rounds_to_even() {
    assert_eq!(encode_nearest(FP16, 1.0), 0x3C00);
    assert_eq!(encode_nearest(FP16, -1.0 - 2f64.powi(-11)), 0xBC00); // tie to even
    assert_eq!(encode_nearest(FP16, 1.0 + 3.0 * 2f64.powi(-11)), 0x3C02);
    assert_eq!(encode_nearest(E4M3, 1e6), 0x7E); // saturates at 448
    assert_eq!(encode_nearest(FP16, 0.0), 0);
}

#[test]
fn ulp_and_relative_errors() {
    // exact 1 + 2^-25, result 1: 1/4 ulp, relative ~2^-25.
    let x = ExactValue::Finite(false, BigUint::from((1u64 << 25) + 1), -25);
    match error(0x3F80_0000, FP32, &x) {
        Outcome::Error { ulp, rel } => {
            assert_eq!(ulp, 0.25);
            assert!((rel - 2f64.powi(-25)).abs() < 1e-15);
        }
        o => panic!("{o:?}"),
    }
    // The same exact value against FP16 1.0 (0x3C00): 2^-25 is 2^-15 ulps of FP16 (ulp
    // 2^-10 at 1); and FP16 1 + 2^-10 (0x3C01) is 1 - 2^-15 ulps away.
    match error(0x3C00, FP16, &x) {
        Outcome::Error { ulp, .. } => assert_eq!(ulp, 2f64.powi(-15)),
        o => panic!("{o:?}"),
    }
    match error(0x3C01, FP16, &x) {
        Outcome::Error { ulp, .. } => assert_eq!(ulp, 1.0 - 2f64.powi(-15)),
        o => panic!("{o:?}"),
    }
    // FP16 infinity is not finite.
    assert_eq!(error(0x7C00, FP16, &x), Outcome::NonFinite);
    assert_eq!(hist_bin(0.25), 1);
    assert_eq!(hist_bin(0.0), 0);
    assert_eq!(hist_bin(1.0), 2);
    assert_eq!(hist_bin(3.0), 4);
    assert_eq!(hist_bin(1e9), HIST_BINS - 1);
    assert_eq!(hist_edges().len() + 1, HIST_BINS);
}

#[test]
fn quantiles_from_the_histogram() {
    // 10 samples: 4 exact, 3 in (1/2, 1], 2 in (4, 8], 1 at 100 (bin (64, 128]).
    let ulps = [0.0, 0.0, 0.0, 0.0, 0.75, 1.0, 0.6, 5.0, 8.0, 100.0];
    let mut hist = vec![0u64; HIST_BINS];
    for ulp in ulps {
        hist[hist_bin(ulp)] += 1;
    }
    // The bins by hand: exact 0, (1/2, 1] is bin 2, (4, 8] bin 5, (64, 128] bin 9.
    let mut want = vec![0u64; HIST_BINS];
    (want[0], want[2], want[5], want[9]) = (4, 3, 2, 1);
    assert_eq!(hist, want);
    // One shard's totals (sums in 2^-16 ulp), combined into the published statistics.
    let sum_ulp_q: u128 = ulps.iter().map(|u| (u * 65536.0).round() as u128).sum();
    let shard = KStats {
        k: 16,
        samples: 10,
        exact: 4,
        nonfinite: 0,
        max_ulp: 100.0,
        max_rel: 0.0,
        sum_ulp_q: sum_ulp_q.to_string(),
        sum_rel_q: "0".to_string(),
        hist,
        ..KStats::default()
    };
    let k = merge_stats(&[shard]).expect("one shard");
    // The mean over the 10 finite samples: 115.35 / 10, to the sums' 2^-16 ulp grain.
    assert!((k.mean_ulp - 11.535).abs() < 1e-5, "{}", k.mean_ulp);
    assert_eq!(k.quantile_ulp(0.4), 0.0);
    assert_eq!(k.quantile_ulp(0.5), 1.0);
    assert_eq!(k.quantile_ulp(0.7), 1.0);
    assert_eq!(k.quantile_ulp(0.9), 8.0);
    // The top bin's edge (128) is capped by the largest error seen.
    assert_eq!(k.quantile_ulp(0.99), 100.0);
    assert_eq!(k.quantile_ulp(1.0), 100.0);
}
