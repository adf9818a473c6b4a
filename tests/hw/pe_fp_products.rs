//! The floating-point PE's product register: words and their trace encoding.

use tensorcore_rtl::hw::pe::fp::{pack_product, unpack_product, Products};
use tensorcore_rtl::rtl::Value;

/// Every product word round-trips through the register's trace encoding; the empty lanes
/// of a bundle encode as zero words.
#[test]
fn product_words_round_trip() {
    for w in [0u64, 1, 0x3FFF_FFFF_FFFF, 0x2A5_5A5A_5A5A, 0x155_A5A5_A5A5] {
        assert_eq!(pack_product(&unpack_product(w)), w, "{w:#x}");
    }
    let p = unpack_product(0x155_A5A5_A5A5);
    let b = Products::<2>::new([p, p], 1);
    let mut words = [7u64; 2];
    b.to_words(&mut words);
    assert_eq!(words, [0x155_A5A5_A5A5, 0]);
}
