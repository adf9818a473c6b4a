//! The D row tag that travels with the accumulators out of the mesh.

use tensorcore_rtl::hw::core::DTag;

/// The tag packs to the documented bit positions and round-trips.
#[test]
fn d_tag_layout() {
    let t = DTag {
        valid: true,
        row: 2,
        last: true,
        tile: 0xAB_CDEF,
    };
    assert_eq!(t.pack(2), 1 | 2 << 1 | 1 << 3 | 0xAB_CDEF << 8);
    assert_eq!(DTag::unpack(t.pack(2), 2), t);
    assert_eq!(DTag::default().pack(2), 0);
}
