//! The GTKWave translate filter: bus words shown as values.

use tensorcore_rtl::hw::wave_filter::{translate, FilterKind};
use tensorcore_rtl::numerics::format::{BF16, E4M3, FP16, FP32};

#[test]
fn lanes_are_decoded_lane_0_first() {
    // FP16 1.0 = 0x3C00, 2.0 = 0x4000, -0.5 = 0xB800 (IEEE 754 binary16 by hand).
    let k = FilterKind::Lanes(FP16);
    assert_eq!(translate(k, "B80040003C00"), "1.0 | 2.0 | -0.5");
    assert_eq!(translate(FilterKind::Lanes(BF16), "3F80"), "1.0");
    // E4M3 0x38 = 1.0, 0x7E = 448 (the largest finite), 0x7F = NaN.
    assert_eq!(
        translate(FilterKind::Lanes(E4M3), "7F7E38"),
        "1.0 | 448.0 | NaN"
    );
    assert_eq!(translate(FilterKind::Lanes(FP32), "40490FDB"), "3.1415927");
}

#[test]
fn control_words_are_named() {
    // n = 4, valid (bit 9), last (bit 6): 0x200 | 0x40 | 4.
    assert_eq!(translate(FilterKind::Ctl, "244"), "n=4 valid last");
    assert_eq!(translate(FilterKind::Ctl, "000"), "-");
    // Tag: valid, row 2 (bits 2:1), last (bit 3), tile 5 (bits 31:8).
    let tag = format!("{:016X}", 1 | (2 << 1) | (1 << 3) | (5 << 8));
    assert_eq!(FilterKind::by_name("tag"), Some(FilterKind::Tag(2)));
    assert_eq!(translate(FilterKind::Tag(2), &tag), "tile 5 row 2 last");
    assert_eq!(translate(FilterKind::Tag(2), "0"), "-");
    // An 8-row array's tag: row in bits 3:1, last in bit 4 (`tag_r3`); the same word read
    // with the 4 x 4 layout would be another row.
    let tag8 = format!("{:016X}", 1 | (6 << 1) | (1 << 4) | (5 << 8));
    assert_eq!(FilterKind::by_name("tag_r3"), Some(FilterKind::Tag(3)));
    assert_eq!(translate(FilterKind::Tag(3), &tag8), "tile 5 row 6 last");
    assert_ne!(translate(FilterKind::Tag(2), &tag8), "tile 5 row 6 last");
    assert_eq!(FilterKind::by_name("tag_r6"), None);
    // Nibble 0b1101 keeps indices 1 and 3; 0b0100 keeps 0 and 1.
    assert_eq!(translate(FilterKind::Meta, "4D"), "{1,3} {0,1}");
}

#[test]
fn unknown_bits_pass_through() {
    assert_eq!(translate(FilterKind::Ctl, "xxx"), "xxx");
    assert_eq!(translate(FilterKind::Lanes(FP16), "3CZ0"), "3CZ0");
    assert_eq!(FilterKind::by_name("fp16"), Some(FilterKind::Lanes(FP16)));
    assert_eq!(FilterKind::by_name("nope"), None);
}

/// The value part of a product label (before ` (`), read as a double: exact decimals parse to
/// the exact product (every FP16 or BF16 product fits a double), `~` marks the nearest double.
fn label_value(label: &str) -> f64 {
    let v = label.split(" (").next().expect("value");
    v.trim_start_matches('~')
        .parse()
        .unwrap_or_else(|_| panic!("{label}"))
}

/// The `name=` field of a product label.
fn label_field<'a>(label: &'a str, name: &str) -> &'a str {
    let start = label
        .find(&format!("{name}="))
        .unwrap_or_else(|| panic!("{label}"))
        + name.len()
        + 1;
    label[start..].split([' ', ')']).next().expect("field")
}

/// Sign, unbiased exponent and significand with its hidden bit of a finite nonzero binary16,
/// from the IEEE 754 layout (1, 5, 10 bits, bias 15), written here by hand.
fn fp16_fields(bits: u16) -> (bool, i32, u64) {
    let e = i32::from((bits >> 10) & 0x1F);
    let m = u64::from(bits & 0x3FF);
    if e == 0 {
        (bits >> 15 == 1, -14, m)
    } else {
        (bits >> 15 == 1, e - 15, m | 0x400)
    }
}

/// Every product label against the host: the packed stage-1 word of each product of random
/// finite FP16 operands (the multiplier's own output, through the register's trace encoding)
/// reads as `a * b` computed in `f64` from `half`'s decoding of the operands (exact: 22
/// significand bits), with the sign, exponent sum and significand product of the IEEE fields.
#[test]
fn products_read_as_the_host_product_of_the_operands() {
    use half::f16;
    use tensorcore_rtl::hw::pe::fp::pack_product;
    use tensorcore_rtl::numerics::multiply;
    let mut rng = crate::common::Rng(0x5eed_0001);
    let mut seen_tiny = false;
    for _ in 0..20_000 {
        let (a, b) = (rng.next_u64() as u16, rng.next_u64() as u16);
        let (ha, hb) = (f16::from_bits(a), f16::from_bits(b));
        if !ha.is_finite() || !hb.is_finite() || ha == f16::ZERO || hb == f16::ZERO {
            continue;
        }
        let host = f64::from(ha) * f64::from(hb);
        let word = pack_product(&multiply(FP16, u64::from(a), FP16, u64::from(b)));
        let label = translate(FilterKind::Product, &format!("{word:016X}"));
        assert_eq!(label_value(&label), host, "{a:04x} x {b:04x}: {label}");
        let ((sa, ea, ma), (sb, eb, mb)) = (fp16_fields(a), fp16_fields(b));
        assert_eq!(
            label
                .split(" (")
                .nth(1)
                .map(|f| f.starts_with(if sa ^ sb { '-' } else { '+' })),
            Some(true),
            "{label}"
        );
        assert_eq!(label_field(&label, "e"), (ea + eb).to_string(), "{label}");
        assert_eq!(
            label_field(&label, "sig"),
            format!("{:#x}", ma * mb),
            "{label}"
        );
        assert_eq!(label_field(&label, "f"), "20", "{label}");
        seen_tiny |= label.starts_with('~');
    }
    // Products of subnormals need more than 24 significant digits: shown as `~` doubles.
    assert!(seen_tiny);
}

#[test]
fn product_labels_by_hand() {
    use tensorcore_rtl::hw::pe::fp::pack_product;
    use tensorcore_rtl::numerics::multiply;
    let word = |fa, a: u64, fb, b: u64| format!("{:016X}", pack_product(&multiply(fa, a, fb, b)));
    // FP16 1.5 (0x3E00) x -2.5 (0xC100): sig 0x600 x 0x500 = 0x1E0000, e = 0 + 1, f = 20.
    assert_eq!(
        translate(FilterKind::Product, &word(FP16, 0x3E00, FP16, 0xC100)),
        "-3.75 (- e=1 sig=0x1e0000 f=20)"
    );
    // Two lanes (s1_prod of a w = 2 PE), lane 0 first; an empty lane (word 0) reads `-`.
    let two = format!(
        "{}{}",
        word(FP16, 0x4000, FP16, 0x3800),
        word(FP16, 0x3C00, FP16, 0x3C00)
    );
    assert_eq!(
        translate(FilterKind::Product, &two),
        "1 (+ e=0 sig=0x100000 f=20) | 1 (+ e=0 sig=0x100000 f=20)"
    );
    assert_eq!(
        translate(
            FilterKind::Product,
            &format!("{}{}", "0".repeat(16), word(FP16, 0x3800, FP16, 0x3800))
        ),
        "0.25 (+ e=-2 sig=0x100000 f=20) | -"
    );
    // A gather_<k> word is 46 bits: 12 hex digits, one lane.
    let w46 = &word(BF16, 0x4040, BF16, 0x3F00)[4..];
    assert_eq!(
        translate(FilterKind::Product, w46),
        "1.5 (+ e=0 sig=0x6000 f=14)"
    );
    // Specials: -0 x 1 is -0; Inf x 0 is NaN and raises invalid; Inf x -1 is -inf.
    assert!(
        translate(FilterKind::Product, &word(FP16, 0x8000, FP16, 0x3C00)).starts_with("-0 (- e=")
    );
    let nan = translate(FilterKind::Product, &word(FP16, 0x7C00, FP16, 0x0000));
    assert!(
        nan.starts_with("NaN (") && nan.ends_with(") invalid"),
        "{nan}"
    );
    assert!(
        translate(FilterKind::Product, &word(FP16, 0x7C00, FP16, 0xBC00)).starts_with("-inf (- e=")
    );
    // E4M3 448 x 448 = 200704 exactly.
    assert!(translate(FilterKind::Product, &word(E4M3, 0x7E, E4M3, 0x7E)).starts_with("200704 ("));
}

/// Integer products: each 64-bit lane holds a 17-bit two's-complement product; the label is
/// the host's `i64` product of the operands.
#[test]
fn integer_products_read_as_the_host_product() {
    let mut rng = crate::common::Rng(0x5eed_0002);
    for _ in 0..2000 {
        let lanes: Vec<i64> = (0..4)
            .map(|_| i64::from(rng.next_u64() as i8) * i64::from(rng.next_u64() as u8))
            .collect();
        // Two's complement in 17 bits, lane 3 first in the hex text.
        let hex: String = lanes
            .iter()
            .rev()
            .map(|&p| format!("{:016X}", (p as u64) & 0x1_FFFF))
            .collect();
        let want: Vec<String> = lanes.iter().map(i64::to_string).collect();
        assert_eq!(translate(FilterKind::IntProduct, &hex), want.join(" | "));
    }
    // -128 x 255 = -32640 = 0x18080 in 17 bits.
    assert_eq!(
        translate(FilterKind::IntProduct, "0000000000018080"),
        "-32640"
    );
}

/// The MX block sum: 72-bit two's complement, LSB 2^-32. The hex values are those lab 7 reads
/// in its NVFP4 waves (-15.25, -48.25, -41.75), and sums built on the host.
#[test]
fn block_sums_read_as_fixed_point() {
    let k = FilterKind::BlockSum;
    assert_eq!(
        translate(k, "FFFFFFFFF0C0000000"),
        "-15.25 (-65498251264 x 2^-32)"
    );
    assert!(translate(k, "FFFFFFFFCFC0000000").starts_with("-48.25 ("));
    assert!(translate(k, "FFFFFFFFD640000000").starts_with("-41.75 ("));
    assert_eq!(translate(k, "000000000000000000"), "0 (0 x 2^-32)");
    // One LSB: 2^-32 = 0.00000000023283064365386962890625 exactly (23 significant digits).
    assert_eq!(
        translate(k, "000000000000000001"),
        "0.00000000023283064365386962890625 (1 x 2^-32)"
    );
    // The extremes of the register: -2^39 and 2^39 - 2^-32.
    assert!(translate(k, "800000000000000000").starts_with("-549755813888 ("));
    assert!(translate(k, "7FFFFFFFFFFFFFFFFF").starts_with("~5.49755813888e11 ("));
    let mut rng = crate::common::Rng(0x5eed_0003);
    for _ in 0..2000 {
        // A sum of a few E2M1-sized products on the 2^-32 grid, as the host sees it.
        let units = (rng.next_u64() as i64 >> 20) as i128;
        let hex = format!("{:018X}", (units as u128) & ((1u128 << 72) - 1));
        let label = translate(k, &hex);
        assert_eq!(label_value(&label), units as f64 / 2f64.powi(32), "{label}");
        assert!(label.ends_with(&format!("({units} x 2^-32)")), "{label}");
    }
}

#[test]
fn the_new_kinds_are_named() {
    assert_eq!(FilterKind::by_name("prod"), Some(FilterKind::Product));
    assert_eq!(FilterKind::by_name("iprod"), Some(FilterKind::IntProduct));
    assert_eq!(FilterKind::by_name("blksum"), Some(FilterKind::BlockSum));
    assert_eq!(translate(FilterKind::BlockSum, "xx"), "xx");
}
