//! The integer PE's product register encoding.

use tensorcore_rtl::hw::pe::int::{pack_int_product, unpack_int_product};
use tensorcore_rtl::numerics::int::PRODUCT_BITS;

#[test]
fn products_round_trip_through_the_register() {
    for p in [0i64, 1, -1, 65_025, -32_640, 16_384, -16_256] {
        assert_eq!(unpack_int_product(pack_int_product(p)), p);
        assert!(pack_int_product(p) < 1 << PRODUCT_BITS);
    }
}
