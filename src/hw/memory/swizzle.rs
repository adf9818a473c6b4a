//! The shared-memory swizzle of TMA loads and stores ([`swizzle`]) and the swizzle modes
//! ([`Swizzle`]).

/// A tensor map's swizzle mode (`CU_TENSOR_MAP_SWIZZLE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Swizzle {
    /// No swizzle.
    None,
    /// 32-byte span: `m = 1`.
    B32,
    /// 64-byte span: `m = 3`.
    B64,
    /// 128-byte span: `m = 7`.
    B128,
    /// `128B_ATOM_32B`: refused by descriptor validation (unsupported).
    B128Atom32B,
    /// `128B_ATOM_32B_FLIP_8B`: refused by descriptor validation (unsupported).
    B128Atom32BFlip8B,
    /// `128B_ATOM_64B`: refused by descriptor validation (unsupported).
    B128Atom64B,
}

impl Swizzle {
    /// The XOR mask `m` of the formula (0 for none), `None` for the unsupported ATOM modes.
    pub fn mask(self) -> Option<u32> {
        match self {
            Swizzle::None => Some(0),
            Swizzle::B32 => Some(1),
            Swizzle::B64 => Some(3),
            Swizzle::B128 => Some(7),
            _ => None,
        }
    }

    /// The span in bytes (box dimension 0 times element size may not exceed it); `None` for
    /// no swizzle.
    pub fn span(self) -> Option<u32> {
        match self {
            Swizzle::None => None,
            Swizzle::B32 => Some(32),
            Swizzle::B64 => Some(64),
            _ => Some(128),
        }
    }

    /// The CUDA-style name (`none`, `32B`, `64B`, `128B`, `128B_ATOM_32B`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Swizzle::None => "none",
            Swizzle::B32 => "32B",
            Swizzle::B64 => "64B",
            Swizzle::B128 => "128B",
            Swizzle::B128Atom32B => "128B_ATOM_32B",
            Swizzle::B128Atom32BFlip8B => "128B_ATOM_32B_FLIP_8B",
            Swizzle::B128Atom64B => "128B_ATOM_64B",
        }
    }

    /// Parses a [`Swizzle::name`] (case-insensitive).
    pub fn parse(s: &str) -> Option<Swizzle> {
        [
            Swizzle::None,
            Swizzle::B32,
            Swizzle::B64,
            Swizzle::B128,
            Swizzle::B128Atom32B,
            Swizzle::B128Atom32BFlip8B,
            Swizzle::B128Atom64B,
        ]
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(s))
    }
}

/// The physical shared-memory byte address of absolute (pre-swizzle) byte address `addr`:
/// `addr ^ (((addr >> 7) & m) << 4)` with `m` = 0, 1, 3, 7 for none, 32B, 64B, 128B. Within
/// each 128-byte row `r` the 16-byte chunk `c` becomes `c ^ (r & m)`; bits 0..3 and 7.. are
/// unchanged, so a 16-byte-aligned chunk stays contiguous. The unsupported ATOM modes apply no
/// permutation (descriptor validation refuses them before any load).
#[inline]
pub fn swizzle(addr: u32, mode: Swizzle) -> u32 {
    let m = mode.mask().unwrap_or(0);
    addr ^ (((addr >> 7) & m) << 4)
}
