//! Record bundles: fields packed across words, and the width a record is compared at.

use tensorcore_rtl::rtl::{pack_field, Bundle};

/// A 192-bit record whose encoding is its three words as they are.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Words([u64; 3]);

impl Bundle for Words {
    const CAPACITY: u32 = 192;
    const WORDS: usize = 3;
    fn encode(&self, out: &mut [u64]) {
        out.copy_from_slice(&self.0);
    }
}

/// The words with bits `0..n` set and every other bit clear, built bit by bit.
fn low_ones(n: u32) -> [u64; 3] {
    let mut w = [0u64; 3];
    for i in 0..n.min(192) {
        w[(i / 64) as usize] |= 1 << (i % 64);
    }
    w
}

#[test]
fn fields_pack_across_words_as_the_bit_definition_says() {
    let mut words = [0u64; 3];
    let fields = [
        (0u32, 46u32, 0x2A_BCDE_F012u64),
        (46, 46, 0x3FFF_FFFF_FFFF),
        (92, 46, 0x1234_5678),
    ];
    for &(lo, w, v) in &fields {
        pack_field(&mut words, lo, w, v);
    }
    for &(lo, w, v) in &fields {
        for i in 0..w {
            let bit = lo + i;
            let got = (words[(bit / 64) as usize] >> (bit % 64)) & 1;
            assert_eq!(got, (v >> i) & 1, "field at {lo}, bit {i}");
        }
    }
    // Bits above the last field stay clear; a field past the end is dropped.
    assert_eq!(words[2] >> (138 - 128), 0);
    pack_field(&mut words, 192, 8, 0xFF);
    assert_eq!(words[2] >> 10, 0);
}

/// A record is compared on exactly its low `width` bits: the bits above the width are
/// cleared before the comparison, every bit below it is kept.
#[test]
fn clear_above_keeps_exactly_the_low_bits() {
    for width in [1u32, 5, 63, 64, 65, 100, 128, 150, 192] {
        let all = Words([u64::MAX; 3]);
        let low = Words(low_ones(width));
        assert!(
            all.same_bits(&low, width),
            "width {width}: bits above differ only"
        );
        // The top kept bit, and the lowest, still count.
        for keep in [width - 1, 0] {
            let mut w = low.0;
            w[(keep / 64) as usize] ^= 1 << (keep % 64);
            assert!(
                !all.same_bits(&Words(w), width),
                "width {width}: bit {keep} kept"
            );
        }
        // One bit above the width does not count.
        if width < 192 {
            let mut w = low.0;
            w[(width / 64) as usize] ^= 1 << (width % 64);
            assert!(
                low.same_bits(&Words(w), width),
                "width {width}: bit {width} cleared"
            );
        }
    }
}
