//! What a register or wire may hold: any [`Bundle`], a `Copy` record that is turned into bits
//! only when someone looks (a tracer, [`crate::rtl::Simulator::peek`], the settle check).
//!
//! Every [`Value`] (`bool`, `u8`..`u128`, [`crate::rtl::Wide`]) is a bundle whose bits are
//! itself. A block can also keep a typed record in a register, e.g. a pipeline stage's W
//! unpacked products plus a control struct, and pay nothing for the bits in the clock loop:
//! the commit pass copies the record (`q <- d`) without comparing or encoding it. The
//! record's [`Bundle::encode`] gives the bits a waveform shows, so a block that moves from a
//! packed word to a record keeps its waves byte for byte by encoding the same word.

use super::value::Value;

/// A `Copy` record a [`crate::rtl::Reg`] or [`crate::rtl::Wire`] can hold, with the bits it
/// shows in a waveform.
///
/// ```
/// use tensorcore_rtl::rtl::{pack_field, Bundle, Reg};
///
/// /// A stage record: a 10-bit significand product and its 6-bit exponent sum.
/// #[derive(Clone, Copy, Debug, Default)]
/// struct Product { sig: u16, exp: i8 }
///
/// impl Bundle for Product {
///     const CAPACITY: u32 = 16;
///     const WORDS: usize = 1;
///     // Traced as one 16-bit word: exp in bits 15..10, the significand below.
///     fn encode(&self, out: &mut [u64]) {
///         out[0] = 0;
///         pack_field(out, 0, 10, u64::from(self.sig));
///         pack_field(out, 10, 6, self.exp as u64);
///     }
/// }
///
/// let mut r = Reg::new("s1_prod", 16, Product::default()).unwrap();
/// r.set_d(Product { sig: 0x3FF, exp: -2 });
/// assert_eq!(r.q().sig, 0); // latched only at the rising edge
/// ```
///
/// # Contract
/// - `encode` is a pure function of the record: equal records encode to equal bits.
/// - It writes exactly [`Bundle::WORDS`] little-endian 64-bit words (bit `i` of the signal is
///   bit `i % 64` of word `i / 64`). Bits at or above the signal's declared width are ignored
///   (the engine clears them before comparing or writing), so a record may leave them as they
///   fall.
/// - A type that implements [`Value`] is already a bundle (a blanket implementation); do not
///   implement both.
pub trait Bundle: Copy + 'static {
    /// The most bits [`Bundle::encode`] describes: a signal of this type declares a width of
    /// 1..=`CAPACITY` bits.
    const CAPACITY: u32;
    /// How many 64-bit words [`Bundle::encode`] writes.
    const WORDS: usize;
    /// Whether every stored value already encodes with zeros at and above its signal's width
    /// (true for every [`Value`], which is truncated when written). When false (the default)
    /// the engine clears those bits itself after encoding.
    const CLEAN_ABOVE_WIDTH: bool = false;
    /// Whether a register of this type is written in few cycles and is large to copy (a
    /// buffer slot such as a block buffer's product word). Such a register remembers whether
    /// `set_d` ran, and the clock edge copies `d` into `q` only then: an unwritten register
    /// already holds `d == q`. For a register written in most cycles the test costs more
    /// than the copy, hence false by default.
    const WRITTEN_RARELY: bool = false;

    /// Writes the record's waveform bits as little-endian 64-bit words into `out`
    /// (`out.len() == Self::WORDS`). Called only by the engine's observers (tracer, peek,
    /// settle check, a watchdog without a progress counter), never by the clock pass.
    fn encode(&self, out: &mut [u64]);

    /// The value a signal of `width` bits stores when written (`set_d`, `set`). A plain value
    /// is truncated to the width as hardware would; a record is stored whole (the default),
    /// its fields already being as wide as the hardware's.
    #[inline(always)]
    fn truncate(self, width: u32) -> Self {
        let _ = width;
        self
    }

    /// [`Bundle::truncate`] given also `low`, the mask of the low `min(width, 64)` bits that
    /// a register or wire computes once when it is built: what every write applies. A plain
    /// value of one word ANDs it; a record is stored whole (the default calls `truncate`).
    #[inline(always)]
    fn truncate_with(self, width: u32, low: u64) -> Self {
        let _ = low;
        self.truncate(width)
    }

    /// Whether `self` and `other` show the same low `width` bits. The engine asks only for a
    /// watchdog without a progress counter ("did any register change?"). The default compares
    /// the encodings; there is no need to override it.
    #[inline]
    fn same_bits(&self, other: &Self, width: u32) -> bool {
        const STACK: usize = 16;
        if Self::WORDS <= STACK {
            let (mut x, mut y) = ([0u64; STACK], [0u64; STACK]);
            let (x, y) = (&mut x[..Self::WORDS], &mut y[..Self::WORDS]);
            self.encode(x);
            other.encode(y);
            clear_above(x, width);
            clear_above(y, width);
            return x == y;
        }
        let (mut x, mut y) = (vec![0u64; Self::WORDS], vec![0u64; Self::WORDS]);
        self.encode(&mut x);
        other.encode(&mut y);
        clear_above(&mut x, width);
        clear_above(&mut y, width);
        x == y
    }
}

impl<T: Value> Bundle for T {
    const CAPACITY: u32 = T::CAPACITY;
    const WORDS: usize = T::WORDS;
    const CLEAN_ABOVE_WIDTH: bool = true;
    const WRITTEN_RARELY: bool = T::WRITTEN_RARELY;
    #[inline(always)]
    fn encode(&self, out: &mut [u64]) {
        self.to_words(out);
    }
    #[inline(always)]
    fn truncate(self, width: u32) -> Self {
        self.mask(width)
    }
    #[inline(always)]
    fn truncate_with(self, width: u32, low: u64) -> Self {
        self.mask_low(width, low)
    }
    #[inline(always)]
    fn same_bits(&self, other: &Self, _width: u32) -> bool {
        // Written values are already truncated to the width.
        self == other
    }
}

/// Writes the low `width` (1..=64) bits of `value` into `words` starting at bit `lo` (a field
/// may cross a 64-bit word); bits beyond the last word are dropped. The other bits are kept.
/// For [`Bundle::encode`] implementations that lay out a record's fields.
#[inline]
pub fn pack_field(words: &mut [u64], lo: u32, width: u32, value: u64) {
    let (lo, width) = (lo as usize, width.min(64) as usize);
    if width == 0 || lo >= 64 * words.len() {
        return;
    }
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let value = value & mask;
    let (w, off) = (lo / 64, lo % 64);
    words[w] = (words[w] & !(mask << off)) | (value << off);
    if off + width > 64 && w + 1 < words.len() {
        let sh = 64 - off;
        words[w + 1] = (words[w + 1] & !(mask >> sh)) | (value >> sh);
    }
}

/// Encodes `v` as a signal of `width` bits into `out` (`T::WORDS` long): its bits, with every
/// bit at index `>= width` clear. What every observer of the engine reads.
#[inline(always)]
pub(in crate::rtl) fn encode_signal<T: Bundle>(v: &T, width: u32, out: &mut [u64]) {
    v.encode(out);
    if !T::CLEAN_ABOVE_WIDTH {
        clear_above(out, width);
    }
}

/// Clears every bit of `words` at index `>= width` (what the engine does to an encoded
/// record before comparing or writing it).
#[inline(always)]
pub(in crate::rtl) fn clear_above(words: &mut [u64], width: u32) {
    let full = (width / 64) as usize;
    let rem = width % 64;
    let mut i = full;
    if rem != 0 && i < words.len() {
        words[i] &= (1u64 << rem) - 1;
        i += 1;
    }
    for w in words.iter_mut().skip(i) {
        *w = 0;
    }
}
