//! Fixed-width values: the [`Value`] trait and the wide bus type [`Wide`].
//!
//! A signal's *storage type* is chosen per signal so that narrow signals never pay for wide ones:
//! `bool` for 1 bit, `u8`..`u128` up to 128 bits, and [`Wide<W>`] (a `bitvec` array of `W`
//! 64-bit words) for buses up to `64 * W` bits (e.g. `Wide<8>` for a 512-bit operand bus,
//! `Wide<16>` for 1024 bits). The *declared width* (1..=capacity) is carried by the register or
//! wire and every value written to it is truncated to that width, as hardware would.

use bitvec::prelude::*;

/// A plain-old-data value that can live in a register or wire.
///
/// Implemented for `bool`, `u8`, `u16`, `u32`, `u64`, `u128` and [`Wide`]. An implementation
/// must be a pure bit container: `to_words`/`from_words` round-trip, bit `i` of the value is bit
/// `i % 64` of word `i / 64`, and `mask(w)` clears every bit at index `>= w`.
pub trait Value: Copy + PartialEq + Default + std::fmt::Debug + 'static {
    /// The most bits this type can hold.
    const CAPACITY: u32;
    /// How many 64-bit words [`Value::to_words`] writes.
    const WORDS: usize;
    /// See [`crate::rtl::Bundle::WRITTEN_RARELY`].
    const WRITTEN_RARELY: bool = false;
    /// The value with every bit at index `>= width` cleared.
    fn mask(self, width: u32) -> Self;
    /// [`Value::mask`] given also `low`, the mask of the low `min(width, 64)` bits, which a
    /// signal computes once when it is built: a one-word value ANDs it (the default calls
    /// [`Value::mask`]).
    #[inline(always)]
    fn mask_low(self, width: u32, low: u64) -> Self {
        let _ = low;
        self.mask(width)
    }
    /// Writes the value as little-endian 64-bit words into `out` (`out.len() == Self::WORDS`).
    fn to_words(&self, out: &mut [u64]);
    /// Builds a value from little-endian 64-bit words (missing words read as zero).
    fn from_words(words: &[u64]) -> Self;
}

/// The mask of the low `width` bits (all ones from 64 on), without a branch.
#[inline(always)]
pub fn low_mask_u64(width: u32) -> u64 {
    u64::MAX
        .checked_shr(64u32.saturating_sub(width))
        .unwrap_or(0)
}

impl Value for bool {
    const CAPACITY: u32 = 1;
    const WORDS: usize = 1;
    #[inline]
    fn mask(self, width: u32) -> Self {
        self && width > 0
    }
    #[inline(always)]
    fn mask_low(self, _width: u32, low: u64) -> Self {
        self && low & 1 == 1
    }
    #[inline]
    fn to_words(&self, out: &mut [u64]) {
        out[0] = u64::from(*self);
    }
    #[inline]
    fn from_words(words: &[u64]) -> Self {
        words.first().is_some_and(|w| w & 1 == 1)
    }
}

macro_rules! impl_value_uint {
    ($($t:ty),*) => {$(
        impl Value for $t {
            const CAPACITY: u32 = <$t>::BITS;
            const WORDS: usize = 1;
            #[inline]
            fn mask(self, width: u32) -> Self {
                (u64::from(self) & low_mask_u64(width)) as $t
            }
            #[inline(always)]
            fn mask_low(self, _width: u32, low: u64) -> Self {
                (u64::from(self) & low) as $t
            }
            #[inline]
            fn to_words(&self, out: &mut [u64]) {
                out[0] = u64::from(*self);
            }
            #[inline]
            fn from_words(words: &[u64]) -> Self {
                words.first().copied().unwrap_or(0) as $t
            }
        }
    )*};
}
impl_value_uint!(u8, u16, u32, u64);

impl Value for u128 {
    const CAPACITY: u32 = 128;
    const WORDS: usize = 2;
    #[inline]
    fn mask(self, width: u32) -> Self {
        if width >= 128 {
            self
        } else {
            self & ((1u128 << width) - 1)
        }
    }
    #[inline]
    fn to_words(&self, out: &mut [u64]) {
        out[0] = *self as u64;
        out[1] = (*self >> 64) as u64;
    }
    #[inline]
    fn from_words(words: &[u64]) -> Self {
        let lo = words.first().copied().unwrap_or(0);
        let hi = words.get(1).copied().unwrap_or(0);
        (u128::from(hi) << 64) | u128::from(lo)
    }
}

/// A wide bus of up to `64 * W` bits, stored inline (no heap) as a `bitvec` array.
///
/// ```
/// use tensorcore_rtl::rtl::Wide;
/// // A 512-bit operand bus: 32 lanes of 16 bits.
/// let mut bus = Wide::<8>::ZERO;
/// bus.set_field(16 * 3, 16, 0xBEEF);
/// assert_eq!(bus.field(16 * 3, 16), 0xBEEF);
/// assert_eq!(bus.bits()[48..64].count_ones(), 0xBEEFu16.count_ones() as usize);
/// ```
#[derive(Clone, Copy, Eq, Default, Debug)]
pub struct Wide<const W: usize> {
    bits: BitArray<[u64; W], Lsb0>,
}

impl<const W: usize> Wide<W> {
    /// All bits zero.
    pub const ZERO: Self = Self {
        bits: BitArray::ZERO,
    };

    /// A value from its little-endian 64-bit words.
    pub fn from_words_array(words: [u64; W]) -> Self {
        Self {
            bits: BitArray::new(words),
        }
    }

    /// The little-endian 64-bit words.
    pub fn words(&self) -> &[u64; W] {
        &self.bits.data
    }

    /// The bits as a `bitvec` slice (bit 0 is the least significant).
    pub fn bits(&self) -> &BitSlice<u64, Lsb0> {
        self.bits.as_bitslice()
    }

    /// The bits as a mutable `bitvec` slice.
    pub fn bits_mut(&mut self) -> &mut BitSlice<u64, Lsb0> {
        self.bits.as_mut_bitslice()
    }

    /// Reads `width` (1..=64) bits starting at bit `lo` (e.g. one lane of an operand bus); a
    /// field may cross a 64-bit word (a 6-bit FP6 or 19-bit TF32 lane). Bits beyond the bus
    /// read as zero.
    #[inline]
    pub fn field(&self, lo: usize, width: usize) -> u64 {
        self.field_masked(lo, width, low_mask_u64(width.min(64) as u32))
    }

    /// [`Wide::field`] given also `mask`, the mask of the low `width` bits, which a reader of
    /// fields of one width (a lane decoder) computes once.
    #[inline(always)]
    pub fn field_masked(&self, lo: usize, width: usize, mask: u64) -> u64 {
        let words = &self.bits.data;
        let (w, off) = (lo / 64, lo % 64);
        let Some(&first) = words.get(w) else {
            return 0;
        };
        let mut v = first >> off;
        if off + width > 64 {
            // The field crosses into the next word (bits past the bus read 0).
            v |= words.get(w + 1).map_or(0, |next| next << (64 - off));
        }
        v & mask
    }

    /// Writes the low `width` (1..=64) bits of `value` starting at bit `lo` (a field may
    /// cross a 64-bit word); bits that would fall beyond the bus are dropped.
    #[inline]
    pub fn set_field(&mut self, lo: usize, width: usize, value: u64) {
        let words = &mut self.bits.data;
        let (w, off) = (lo / 64, lo % 64);
        if w >= W {
            return;
        }
        let mask = low_mask_u64(width.min(64) as u32);
        let value = value & mask;
        words[w] = (words[w] & !(mask << off)) | (value << off);
        if off + width.min(64) > 64 && w + 1 < W {
            // The field crosses into the next word (bits past the bus are dropped).
            let sh = 64 - off;
            words[w + 1] = (words[w + 1] & !(mask >> sh)) | (value >> sh);
        }
    }
}

// Compare whole words: the derived (bit-slice) comparison dominated the clock pass of
// designs with wide registers (every commit compares `d` with `q`).
impl<const W: usize> PartialEq for Wide<W> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.bits.data == other.bits.data
    }
}

impl<const W: usize> std::hash::Hash for Wide<W> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.bits.data.hash(state);
    }
}

impl<const W: usize> Value for Wide<W> {
    const CAPACITY: u32 = 64 * W as u32;
    const WORDS: usize = W;
    #[inline]
    fn mask(mut self, width: u32) -> Self {
        let width = width as usize;
        for (i, w) in self.bits.data.iter_mut().enumerate() {
            let lo = 64 * i;
            if width <= lo {
                *w = 0;
            } else if width < lo + 64 {
                *w &= low_mask_u64((width - lo) as u32);
            }
        }
        self
    }
    #[inline(always)]
    fn mask_low(mut self, width: u32, low: u64) -> Self {
        let width = width as usize;
        if width >= 64 * W {
            return self;
        }
        if width <= 64 {
            // A bus within its first word (every FP8 or FP16 bus of up to four lanes).
            let (first, rest) = self.bits.data.split_at_mut(1);
            first[0] &= low;
            rest.fill(0);
            return self;
        }
        self.mask(width as u32)
    }
    #[inline]
    fn to_words(&self, out: &mut [u64]) {
        out.copy_from_slice(&self.bits.data);
    }
    #[inline]
    fn from_words(words: &[u64]) -> Self {
        let mut data = [0u64; W];
        for (d, s) in data.iter_mut().zip(words) {
            *d = *s;
        }
        Self::from_words_array(data)
    }
}

/// `BITS8[b]`: the byte `b` as eight ASCII `'0'`/`'1'`, most significant bit first.
pub(in crate::rtl) static BITS8: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b][i] = b'0' + ((b >> (7 - i)) & 1) as u8;
            i += 1;
        }
        b += 1;
    }
    t
};

/// Formats the low `width` bits of little-endian `words` as ASCII `'0'`/`'1'`, most significant
/// bit first, appending to `out`. Eight bits at a time through a lookup table (waveform writers
/// call this for every value change).
#[inline]
pub(in crate::rtl) fn push_bits(words: &[u64], width: u32, out: &mut Vec<u8>) {
    let n = width as usize;
    if n == 0 {
        return;
    }
    out.reserve(n);
    let byte = |k: usize| (words[k / 8] >> (8 * (k % 8))) as u8 as usize;
    // The top byte holds 1..=8 of the digits; every byte below it holds eight.
    let top = (n - 1) / 8;
    let r = n - 8 * top;
    out.extend_from_slice(&BITS8[byte(top)][8 - r..]);
    for k in (0..top).rev() {
        out.extend_from_slice(&BITS8[byte(k)]);
    }
}
