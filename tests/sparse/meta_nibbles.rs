//! The 2:4 metadata nibbles.

use tensorcore_rtl::sparse::meta::{decode, encode};
use tensorcore_rtl::sparse::{NibbleError, VALID_NIBBLES};

#[test]
fn exactly_the_six_documented_nibbles_decode() {
    let valid: Vec<u8> = (0u8..=255).filter(|&n| decode(n).is_ok()).collect();
    let mut expected = VALID_NIBBLES.to_vec();
    expected.sort_unstable();
    assert_eq!(valid, expected);
    for n in VALID_NIBBLES {
        let (a, b) = decode(n).unwrap();
        assert!(a < b);
        assert_eq!(encode(a, b), n);
    }
    assert_eq!(decode(0b1101), Ok((1, 3)));
    for n in [0b0000, 0b0101, 0b1010, 0b1111] {
        assert!(matches!(decode(n), Err(NibbleError::Equal { .. })));
    }
    assert_eq!(
        decode(0b0001),
        Err(NibbleError::Decreasing {
            first: 1,
            second: 0
        })
    );
    assert_eq!(decode(0x10), Err(NibbleError::TooWide(0x10)));
}
