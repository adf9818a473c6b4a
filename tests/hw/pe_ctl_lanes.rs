//! The PE's control bundle and operand lanes on a bus.

use tensorcore_rtl::hw::pe::{lane, set_lane, ACtl, CTL_BITS};
use tensorcore_rtl::rtl::Wide;

/// The bundle packs to the documented bit positions, reads every field back from its own bit
/// (each field alone, and `valid` replaced), and unpacks every 10-bit word back.
#[test]
fn a_ctl_layout() {
    let all = ACtl::new(32, true, true, true, true);
    assert_eq!(all.pack(), 32 | 1 << 6 | 1 << 7 | 1 << 8 | 1 << 9);
    let fire = ACtl::new(0, false, true, false, false);
    assert_eq!(fire.pack(), 0b00_1000_0000);
    for lanes in [0u8, 1, 7, 31, 32] {
        for bits in 0..16u8 {
            let b = |i: u8| bits >> i & 1 == 1;
            let c = ACtl::new(lanes, b(0), b(1), b(2), b(3));
            assert_eq!(
                (c.lanes(), c.last(), c.fire(), c.set(), c.valid()),
                (lanes, b(0), b(1), b(2), b(3))
            );
            let off = c.with_valid(false);
            assert_eq!(
                (off.lanes(), off.last(), off.fire(), off.set(), off.valid()),
                (lanes, b(0), b(1), b(2), false)
            );
            assert_eq!(off.with_valid(true).pack(), c.pack() | 1 << 9);
        }
    }
    for w in 0..1u16 << CTL_BITS {
        assert_eq!(ACtl::unpack(w).pack(), w, "{w:#05x}");
    }
    assert_eq!(ACtl::unpack(0xFFFF).pack(), (1 << CTL_BITS) - 1);
}

/// 6-bit (FP6) and 19-bit (TF32) lanes packed into a bus and read back, including the
/// lanes that cross a 64-bit word; each lane's bits checked one by one.
#[test]
fn lanes_cross_words() {
    for bits in [6u32, 19] {
        let mut bus = Wide::<4>::ZERO;
        let lanes = 256 / bits as usize;
        let v = |k: usize| (k as u64 * 0x2545_F491 + 0x1F) & ((1 << bits) - 1);
        for k in 0..lanes {
            set_lane(&mut bus, k, bits, v(k) | 1 << bits);
        }
        for k in 0..lanes {
            assert_eq!(lane(&bus, k, bits), v(k), "{bits}-bit lane {k}");
            let lo = k * bits as usize;
            for i in 0..bits as usize {
                let bit = (bus.words()[(lo + i) / 64] >> ((lo + i) % 64)) & 1;
                assert_eq!(bit, (v(k) >> i) & 1, "{bits}-bit lane {k} bit {i}");
            }
        }
    }
}
