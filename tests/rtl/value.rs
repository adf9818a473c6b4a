//! Fixed-width values: masks, words, bit strings and fields that cross 64-bit words.

use tensorcore_rtl::rtl::{SignalValue, Value, Wide};

/// The value's bits as `'0'`/`'1'`, most significant first, as every observer prints them.
fn push_bits(words: &[u64], width: u32, out: &mut Vec<u8>) {
    let v = SignalValue {
        width,
        words: words.to_vec(),
    };
    out.extend_from_slice(v.to_bit_string().as_bytes());
}

#[test]
fn masks_and_words_round_trip() {
    assert_eq!(0xFFu8.mask(3), 7);
    assert_eq!(u128::MAX.mask(100), (1u128 << 100) - 1);
    let w = Wide::<16>::from_words(&[u64::MAX; 16]).mask(1000);
    assert_eq!(w.words()[15], (1u64 << (1000 - 960)) - 1);
    assert_eq!(w.words()[14], u64::MAX);
    let mut words = [0u64; 2];
    0x1234_5678_9abc_def0_1122_3344_5566_7788u128.to_words(&mut words);
    assert_eq!(
        u128::from_words(&words),
        0x1234_5678_9abc_def0_1122_3344_5566_7788
    );
    let mut s = Vec::new();
    push_bits(&[0b101], 5, &mut s);
    assert_eq!(s, b"00101");
    // Against the bit-by-bit definition, across byte and word boundaries.
    let words = [0x8123_4567_89ab_cdef_u64, 0xf0e1_d2c3_b4a5_9687, 0x5a];
    for width in 1..=(64 * 3) {
        let mut fast = Vec::new();
        push_bits(&words, width, &mut fast);
        let slow: Vec<u8> = (0..width as usize)
            .rev()
            .map(|i| b'0' + ((words[i / 64] >> (i % 64)) & 1) as u8)
            .collect();
        assert_eq!(fast, slow, "width {width}");
    }
}

/// Lanes of 6 bits (FP6) and 19 bits (TF32) cross 64-bit words: every lane reads back
/// what was written, and the bus's bits match the bit-by-bit definition (bit `i` of
/// lane `k` is bus bit `k * width + i`), read through `bitvec` one bit at a time.
#[test]
fn fields_cross_word_boundaries() {
    for width in [6usize, 19] {
        let lanes = 128 / width + 2;
        let value = |k: usize| (0x9E37_79B9_7F4A_7C15u64.wrapping_mul(k as u64 + 1)) >> 3;
        let mut bus = Wide::<4>::from_words_array([u64::MAX; 4]);
        for k in 0..lanes {
            bus.set_field(k * width, width, value(k));
        }
        let crossing = (0..lanes).filter(|k| (k * width) / 64 != (k * width + width - 1) / 64);
        assert!(
            crossing.count() >= 2,
            "width {width}: no lane crosses a word"
        );
        for k in 0..lanes {
            let want = value(k) & ((1u64 << width) - 1);
            assert_eq!(bus.field(k * width, width), want, "width {width} lane {k}");
            for i in 0..width {
                assert_eq!(
                    bus.bits()[k * width + i],
                    (want >> i) & 1 == 1,
                    "width {width} lane {k} bit {i}"
                );
            }
        }
        // Bits above the last lane keep their old value (all ones).
        assert!(bus.bits()[lanes * width..].all());
    }
    // A full 64-bit field at an odd offset, and a field cut off by the end of the bus.
    let mut bus = Wide::<2>::ZERO;
    bus.set_field(37, 64, 0xDEAD_BEEF_0123_4567);
    assert_eq!(bus.field(37, 64), 0xDEAD_BEEF_0123_4567);
    assert_eq!(bus.words()[0] >> 37, 0x0123_4567 & ((1 << 27) - 1));
    bus.set_field(120, 19, 0x7_FFFF);
    assert_eq!(bus.field(120, 19), 0xFF);
    assert_eq!(bus.field(128, 8), 0);
}
