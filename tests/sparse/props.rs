//! 2:4 sparsity: compress/decompress round trips, the sparse functional model against the
//! independent reference `verify::sparse` (every format pair and mode), and the documented
//! rejection of every invalid pattern.

use proptest::prelude::*;
use tensorcore_rtl::gemm::problem::WIDTHS;
use tensorcore_rtl::gemm::CoreConfig;
use tensorcore_rtl::numerics::dot::{dot, AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
use tensorcore_rtl::sparse::{
    compress, meta, run_functional_sparse, Compressed, Prune, SparseError, SparseGemm,
    VALID_NIBBLES,
};
use tensorcore_rtl::verify::sparse::{sparse_reference, SparseRef};

const FORMATS: [Format; 4] = [E4M3, E5M2, FP16, BF16];
/// Every A x B format pair the tensor core takes: equal formats and the FP8 mixes.
const PAIRS: [(Format, Format); 6] = [
    (E4M3, E4M3),
    (E5M2, E5M2),
    (FP16, FP16),
    (BF16, BF16),
    (E4M3, E5M2),
    (E5M2, E4M3),
];

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

fn is_zero(fmt: Format, bits: u64) -> bool {
    bits & !fmt.sign_bit() == 0
}

/// A dense 2:4-valid A: per group, up to two random positions hold arbitrary nonzero
/// encodings (NaN and Inf included), the rest zeros of either sign.
fn valid_dense() -> impl Strategy<Value = (Format, usize, usize, Vec<u64>)> {
    (0usize..4, 1usize..5, 1usize..5).prop_flat_map(|(f, m, groups)| {
        let fmt = FORMATS[f];
        let group = (
            0usize..3,
            0usize..4,
            0usize..4,
            any::<u64>(),
            any::<u64>(),
            any::<[bool; 4]>(),
        )
            .prop_map(move |(count, p0, p1, v0, v1, signs)| {
                let mut g: Vec<u64> = signs.iter().map(|&s| fmt.zero(s)).collect();
                let nz = |v: u64| {
                    let v = v & fmt.mask();
                    if is_zero(fmt, v) {
                        v | 1
                    } else {
                        v
                    }
                };
                if count >= 1 {
                    g[p0] = nz(v0);
                }
                if count == 2 && p1 != p0 {
                    g[p1] = nz(v1);
                }
                g
            });
        proptest::collection::vec(group, m * groups)
            .prop_map(move |gs| (fmt, m, 4 * groups, gs.concat()))
    })
}

fn config(fa: Format, fb: Format, mode: AccMode, width: usize) -> CoreConfig {
    CoreConfig::new(fa, fb, mode, width)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Compress then decompress gives A back, except that a zero at a dropped position comes
    /// back as +0; every nonzero is kept; pruning changes nothing on a valid A; and the
    /// compressed pair passes validation.
    #[test]
    fn compress_decompress_identity((fmt, m, k, a) in valid_dense()) {
        let c = compress(fmt, m, k, &a, Prune::Off).unwrap();
        let d = c.decompress();
        for (p, (&x, &y)) in a.iter().zip(&d).enumerate() {
            prop_assert!(x == y || (y == 0 && is_zero(fmt, x)), "[{p}] {x:#x} -> {y:#x}");
        }
        prop_assert_eq!(&compress(fmt, m, k, &a, Prune::KeepLargest).unwrap(), &c);
        let again = Compressed::new(fmt, m, k, c.values().to_vec(), c.meta().to_vec()).unwrap();
        prop_assert_eq!(&again, &c);
        prop_assert_eq!(compress(fmt, m, k, &d, Prune::Off).unwrap().decompress(), d);
    }

    /// Pruning keeps exactly the two largest magnitudes (ties to the lower index) and zeros
    /// the rest; the result is a valid 2:4 A.
    #[test]
    fn prune_keeps_two_largest(f in 0usize..4, g in any::<[u16; 4]>()) {
        let fmt = FORMATS[f];
        let g: Vec<u64> = g.iter().map(|&v| v as u64 & fmt.mask()).collect();
        let nonzeros = g.iter().filter(|&&v| !is_zero(fmt, v)).count();
        let c = compress(fmt, 1, 4, &g, Prune::KeepLargest).unwrap();
        if nonzeros > 2 {
            let mag = |i: usize| g[i] & !fmt.sign_bit();
            let mut order: Vec<usize> = (0..4).collect();
            order.sort_by(|&x, &y| mag(y).cmp(&mag(x)).then(x.cmp(&y)));
            let mut want = [order[0], order[1]];
            want.sort_unstable();
            prop_assert_eq!(c.kept_columns(0), want.to_vec());
            let rejected = matches!(
                compress(fmt, 1, 4, &g, Prune::Off),
                Err(SparseError::TooManyNonzeros { row: 0, group: 0, count }) if count == nonzeros
            );
            prop_assert!(rejected);
        } else {
            prop_assert_eq!(c, compress(fmt, 1, 4, &g, Prune::Off).unwrap());
        }
    }

    /// ieee, fused (every width) and exact sparse runs equal the independent reference over
    /// the kept values, for every format pair.
    #[test]
    fn sparse_equals_reference(
        pair in 0usize..PAIRS.len(),
        m in 1usize..4,
        n in 1usize..4,
        groups in 1usize..9,
        w in 0usize..WIDTHS.len(),
        seed in any::<u64>(),
    ) {
        let (fa, fb) = PAIRS[pair];
        let width = WIDTHS[w];
        for (mode, how) in [
            (AccMode::Ieee, SparseRef::Ieee),
            (AccMode::Fused, SparseRef::Fused { width }),
            (AccMode::Exact, SparseRef::Exact),
        ] {
            let g = SparseGemm::random(m, n, 4 * groups, config(fa, fb, mode, width), seed).unwrap();
            let ours = run_functional_sparse(&g).unwrap().d;
            let want = sparse_reference(&g.reference_operands(), how);
            prop_assert_eq!(ours, want, "{} {}x{} w={}", mode.name(), fa, fb, width);
        }
    }

    /// nvidia: the sparse run is the block FMA over the B rows that the metadata selects
    /// (gathered here from the raw nibble bits; the block FMA itself is proven against GPU
    /// measurements elsewhere).
    #[test]
    fn sparse_nvidia_is_block_fma_over_kept(
        pair in 0usize..PAIRS.len(),
        p in 0usize..4,
        m in 1usize..3,
        n in 1usize..3,
        groups in 1usize..17,
        seed in any::<u64>(),
    ) {
        let (fa, fb) = PAIRS[pair];
        let Ok(params) = Preset::ALL[p].params(fa, fb) else { return Ok(()) };
        let mode = AccMode::Nvidia(params);
        let g = SparseGemm::random(m, n, 4 * groups, config(fa, fb, mode, 4), seed).unwrap();
        let ours = run_functional_sparse(&g).unwrap().d;
        for i in 0..m {
            for j in 0..n {
                let b: Vec<u64> = g.a.meta_row(i).iter().enumerate().flat_map(|(gi, &nb)| {
                    [4 * gi + (nb & 3) as usize, 4 * gi + (nb >> 2) as usize]
                }).map(|r| g.b[r * n + j]).collect();
                let want = dot(&mode, fa, fb, g.a.values_row(i), &b, g.c[i * n + j], 4).unwrap();
                prop_assert_eq!(ours[i * n + j], want.bits);
            }
        }
    }

    /// ieee: the sparse run equals the dense run on the decompressed A, up to the sign of an
    /// exact zero (B finite).
    #[test]
    fn sparse_ieee_equals_dense_decompressed(
        pair in 0usize..PAIRS.len(),
        m in 1usize..4,
        n in 1usize..4,
        groups in 1usize..9,
        seed in any::<u64>(),
    ) {
        let (fa, fb) = PAIRS[pair];
        let g = SparseGemm::random(m, n, 4 * groups, config(fa, fb, AccMode::Ieee, 1), seed).unwrap();
        let sparse = run_functional_sparse(&g).unwrap().d;
        let dense = tensorcore_rtl::gemm::run_functional(&g.dense()).unwrap().d;
        for (s, d) in sparse.iter().zip(&dense) {
            prop_assert!(s == d || (s << 1 == 0 && d << 1 == 0), "{s:#x} vs {d:#x}");
        }
    }

    /// Every invalid metadata entry, at any row and group, is rejected with the documented
    /// message naming the row and the group.
    #[test]
    fn invalid_nibbles_rejected(
        m in 1usize..4,
        groups in 1usize..5,
        at in any::<prop::sample::Index>(),
        nibble in any::<u8>().prop_filter("invalid", |n| !VALID_NIBBLES.contains(n)),
    ) {
        let mut md = vec![VALID_NIBBLES[0]; m * groups];
        let pos = at.index(md.len());
        md[pos] = nibble;
        let e = Compressed::new(FP16, m, 4 * groups, vec![0; m * groups * 2], md).unwrap_err();
        let (row, group) = (pos / groups, pos % groups);
        let (lo, hi) = (nibble & 3, nibble >> 2);
        let why = if nibble > 0xF {
            format!("0x{nibble:02x} does not fit in 4 bits")
        } else if lo == hi {
            format!("both indices are {lo} (the two kept indices must be strictly increasing)")
        } else {
            format!("first index {lo} is above second index {hi} (the two kept indices must be strictly increasing)")
        };
        prop_assert_eq!(
            e.to_string(),
            format!("metadata row {row}, group {group}: invalid 2:4 nibble 0b{nibble:04b}: {why}")
        );
        prop_assert!(meta::decode(nibble).is_err());
    }

    /// A dense group with three or four nonzeros is rejected with the documented message.
    #[test]
    fn overfull_groups_rejected(
        m in 1usize..4,
        groups in 1usize..5,
        at in any::<prop::sample::Index>(),
        count in 3usize..5,
        skip in 0usize..4,
    ) {
        let mut a = vec![0u64; m * groups * 4];
        let pos = at.index(m * groups);
        let (row, group) = (pos / groups, pos % groups);
        for t in 0..4 {
            if count == 4 || t != skip {
                a[row * groups * 4 + group * 4 + t] = 0x3C00;
            }
        }
        let e = compress(FP16, m, 4 * groups, &a, Prune::Off).unwrap_err();
        prop_assert_eq!(e.to_string(), format!(
            "A row {row}, group {group} (columns {}..={}) has {count} nonzeros; 2:4 sparsity allows at most 2 per group of 4 (prune to keep the two largest)",
            4 * group, 4 * group + 3
        ));
    }
}

#[test]
fn k_not_multiple_of_4_rejected() {
    for k in [1, 2, 3, 5, 6, 7, 10] {
        let e = compress(FP16, 1, k, &vec![0; k], Prune::Off).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("K = {k} is not a multiple of 4 (2:4 sparsity works on groups of 4 along K)")
        );
        assert!(Compressed::new(FP16, 1, k, vec![0; k / 2], vec![4; k / 4]).is_err());
    }
    let cfg = config(FP16, FP16, AccMode::Ieee, 1);
    assert!(matches!(
        SparseGemm::random(2, 2, 6, cfg, 1),
        Err(SparseError::KNotMultipleOf4 { k: 6 })
    ));
}

/// Every valid nibble selects exactly its two B rows: with B = the identity pattern
/// (b[p][0] = p + 1), D = a0 * (4g + i0 + 1) + a1 * (4g + i1 + 1).
#[test]
fn every_valid_nibble_selects_its_rows() {
    for nibble in VALID_NIBBLES {
        let (i0, i1) = meta::decode(nibble).unwrap();
        let a = Compressed::new(FP16, 1, 4, vec![0x3C00, 0x4000], vec![nibble]).unwrap();
        // b[p] = p + 1 in FP16: 1, 2, 3, 4.
        let b = vec![0x3C00, 0x4000, 0x4200, 0x4400];
        let g = SparseGemm::new(config(FP16, FP16, AccMode::Ieee, 1), a, 1, b, vec![0]).unwrap();
        let d = f32::from_bits(run_functional_sparse(&g).unwrap().d[0]);
        assert_eq!(
            d,
            (i0 as f32 + 1.0) + 2.0 * (i1 as f32 + 1.0),
            "nibble {nibble:#06b}"
        );
    }
}

/// Dropped positions take no part: an Inf or NaN in B at a dropped row does not reach D,
/// whereas the dense run on the decompressed A gives NaN (0 x Inf).
#[test]
fn dropped_positions_take_no_part() {
    let a = Compressed::new(FP16, 1, 4, vec![0x3C00, 0x3C00], vec![0b1100]).unwrap(); // (0, 3)
    let b = vec![0x3C00, 0x7C00, 0x7E00, 0x3C00];
    let g = SparseGemm::new(config(FP16, FP16, AccMode::Ieee, 1), a, 1, b, vec![0]).unwrap();
    assert_eq!(run_functional_sparse(&g).unwrap().d[0], 0x4000_0000);
    let dense = tensorcore_rtl::gemm::run_functional(&g.dense()).unwrap().d[0];
    assert_eq!(dense, 0x7FC0_0000);
}

#[test]
fn format_mismatch_and_bad_b_rejected() {
    let a = Compressed::new(FP16, 1, 4, vec![0, 0], vec![4]).unwrap();
    let e = SparseGemm::new(
        config(BF16, BF16, AccMode::Ieee, 1),
        a.clone(),
        1,
        vec![0; 4],
        vec![0],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the compressed A is fp16 but the configuration says bf16"
    );
    let e = SparseGemm::new(
        config(FP16, FP16, AccMode::Ieee, 1),
        a,
        1,
        vec![0; 3],
        vec![0],
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("B must be 4 x 1"), "{e}");
}
