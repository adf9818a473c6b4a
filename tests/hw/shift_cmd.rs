//! The controller's shift command word: documented bit positions.

use tensorcore_rtl::hw::controller::ShiftCmd;

/// The shift command packs to the documented bit positions and round-trips.
#[test]
fn shift_cmd_layout() {
    let c = ShiftCmd {
        en: true,
        set: false,
        c_valid: true,
        d_valid: true,
        x: 3,
        last: true,
        c_tile: 0x12_3456,
        d_tile: 0xAB_CDEF,
    };
    let w = 1 | 1 << 2 | 1 << 3 | 3 << 4 | 1 << 6 | 0x12_3456 << 8 | 0xAB_CDEFu64 << 32;
    assert_eq!(c.pack(2), w);
    assert_eq!(ShiftCmd::unpack(w, 2), c);
}
