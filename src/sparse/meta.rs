//! 2:4 metadata nibbles in PTX `mma.sp::ordered_metadata` encoding: one 4-bit nibble per group
//! of four A values along K; the low two bits are the index (0..=3) of the first kept value,
//! the high two bits the index of the second, and the first index must be strictly below the
//! second. That leaves six valid nibbles ([`VALID_NIBBLES`]).

/// The six valid nibbles, in the order of their index pairs:
/// `(0,1) = 0b0100`, `(0,2) = 0b1000`, `(0,3) = 0b1100`, `(1,2) = 0b1001`, `(1,3) = 0b1101`,
/// `(2,3) = 0b1110`.
pub const VALID_NIBBLES: [u8; 6] = [0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110];

/// Why a metadata entry is not a valid nibble.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NibbleError {
    /// The entry has bits above the low four set (metadata is stored one nibble a byte).
    TooWide(u8),
    /// The two indices are equal (`0b0000`, `0b0101`, `0b1010`, `0b1111`).
    Equal {
        /// The repeated index.
        index: u8,
    },
    /// The first index is above the second.
    Decreasing {
        /// The first index (low two bits).
        first: u8,
        /// The second index (high two bits).
        second: u8,
    },
}

impl std::fmt::Display for NibbleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NibbleError::TooWide(v) => write!(f, "0x{v:02x} does not fit in 4 bits"),
            NibbleError::Equal { index } => write!(
                f,
                "both indices are {index} (the two kept indices must be strictly increasing)"
            ),
            NibbleError::Decreasing { first, second } => write!(
                f,
                "first index {first} is above second index {second} (the two kept indices must be strictly increasing)"
            ),
        }
    }
}

/// The nibble of the index pair `(first, second)`; both must be at most 3 (only the low two
/// bits of each are used). The result is valid exactly when `first < second`.
pub const fn encode(first: u8, second: u8) -> u8 {
    (first & 3) | ((second & 3) << 2)
}

/// The index pair `(first, second)` of a metadata entry, or why it is invalid.
pub const fn decode(nibble: u8) -> Result<(u8, u8), NibbleError> {
    if nibble > 0xF {
        return Err(NibbleError::TooWide(nibble));
    }
    let first = nibble & 3;
    let second = nibble >> 2;
    if first == second {
        Err(NibbleError::Equal { index: first })
    } else if first > second {
        Err(NibbleError::Decreasing { first, second })
    } else {
        Ok((first, second))
    }
}
