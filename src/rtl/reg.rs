//! Registers: a `d` input written by combinational logic and a `q` output committed by the
//! engine's clock edge.

use std::borrow::Cow;

use super::bundle::{clear_above, Bundle};
use super::error::{Result, RtlError};
use super::signal::{signal_accessors, Boxed, SignalMeta};
use super::value::low_mask_u64;

/// A clocked register with synchronous reset.
///
/// Block code reads [`Reg::q`] (the value latched at the last rising edge) and writes the next
/// value with [`Reg::set_d`]. Only the engine's clock edge moves `d` into `q` (all registers at
/// once, after every combinational phase has run), so `q` is stable for the whole combinational
/// phase and reading it is independent of evaluation order. There is no way for block code to
/// assign `q`:
///
/// ```compile_fail
/// use tensorcore_rtl::rtl::Reg;
/// let mut r = Reg::new("count", 8, 0u8).unwrap();
/// r.q = 5; // error: field `q` is private
/// ```
///
/// Nor can another block read a register's pending `d` (that would depend on whether its owner's
/// combinational phase ran first):
///
/// ```compile_fail
/// use tensorcore_rtl::rtl::Reg;
/// let r = Reg::new("count", 8, 0u8).unwrap();
/// let _ = r.d(); // error: `d` is private to the engine
/// ```
///
/// Value labels (e.g. FSM state names) make GTKWave show names instead of numbers:
///
/// ```
/// use tensorcore_rtl::rtl::Reg;
/// let r = Reg::new("state", 2, 0u8).unwrap().with_labels(&[(0, "Idle"), (1, "Busy")]);
/// assert_eq!(r.labels()[1], (1, "Busy"));
/// ```
///
/// A register not written in a cycle holds its value. Values written with `set_d` are truncated
/// to the declared width. At power-on, and at every edge while `rst` is high, `q` takes the reset
/// value.
///
/// # Typed registers
/// A register holds any [`Bundle`]: a plain [`crate::rtl::Value`] or a `Copy` record such as a
/// pipeline stage's unpacked products and control fields. The clock pass copies the record;
/// its bits ([`Bundle::encode`], `width` of them) are computed only when a tracer, a peek or
/// the settle check looks. The same rules hold: `q` cannot be assigned and `d` cannot be read.
///
/// ```compile_fail
/// use tensorcore_rtl::rtl::{Bundle, Reg};
/// #[derive(Clone, Copy, Default)]
/// struct Stage { prod: u32, valid: bool }
/// impl Bundle for Stage {
///     const CAPACITY: u32 = 33;
///     const WORDS: usize = 1;
///     fn encode(&self, out: &mut [u64]) { out[0] = u64::from(self.prod) | u64::from(self.valid) << 32; }
/// }
/// let mut r = Reg::new("s1", 33, Stage::default()).unwrap();
/// r.q = Stage { prod: 1, valid: true }; // error: field `q` is private
/// ```
///
/// ```compile_fail
/// use tensorcore_rtl::rtl::{Bundle, Reg};
/// #[derive(Clone, Copy, Default)]
/// struct Stage { prod: u32, valid: bool }
/// impl Bundle for Stage {
///     const CAPACITY: u32 = 33;
///     const WORDS: usize = 1;
///     fn encode(&self, out: &mut [u64]) { out[0] = u64::from(self.prod) | u64::from(self.valid) << 32; }
/// }
/// let r = Reg::new("s1", 33, Stage::default()).unwrap();
/// let _ = r.d().prod; // error: `d` is private to the engine
/// ```
///
/// The metadata (name, labels, display hints) sits behind one pointer and is read only when the
/// design is elaborated; the value fields are what the clock pass touches.
#[derive(Debug, Clone)]
pub struct Reg<T: Bundle> {
    q: T,
    d: T,
    reset: T,
    width: u32,
    /// The mask of the low `min(width, 64)` bits, computed when the register is built: what
    /// `set_d` applies to a one-word value.
    low: u64,
    /// `set_d` ran since the last edge (kept only for a type written rarely,
    /// [`Bundle::WRITTEN_RARELY`]).
    written: bool,
    meta: Boxed,
}

signal_accessors!(Reg, Bundle);

impl<T: Bundle> Reg<T> {
    /// A register of `width` bits named `name` (local to its module) with reset value `reset`.
    /// For a record, `width` is the number of bits its [`Bundle::encode`] shows.
    ///
    /// Fails if `width` is 0 or more than `T` holds, or if `reset` does not fit in `width` bits.
    pub fn new(name: impl Into<Cow<'static, str>>, width: u32, reset: T) -> Result<Self> {
        let meta = SignalMeta::new::<T>(name, width)?;
        if !fits(reset, width) {
            return Err(RtlError::ResetTooWide {
                name: meta.name.into_owned(),
                width,
            });
        }
        Ok(Self {
            q: reset,
            d: reset,
            reset,
            width,
            low: low_mask_u64(width),
            written: false,
            meta,
        })
    }

    /// The output latched at the last rising edge.
    #[inline(always)]
    pub fn q(&self) -> T {
        self.q
    }

    /// Sets the value to be latched at the next rising edge (truncated to the width).
    #[inline(always)]
    pub fn set_d(&mut self, value: T) {
        self.d = value.truncate_with(self.width, self.low);
        if T::WRITTEN_RARELY {
            self.written = true;
        }
    }

    /// [`Reg::set_d`] for a value that already fits the width: one read from a register or
    /// an input of the same width, as a pipeline or shift-register stage takes its
    /// predecessor's output. No mask is applied (debug builds check that none was needed).
    #[inline(always)]
    pub fn set_d_fit(&mut self, value: T) {
        debug_assert!(
            fits(value, self.width),
            "set_d_fit: a value wider than the register's {} bits",
            self.width
        );
        self.d = value;
        if T::WRITTEN_RARELY {
            self.written = true;
        }
    }

    /// The reset value.
    pub fn reset_value(&self) -> T {
        self.reset
    }

    /// Whether `set_d` ran since the last edge: for a type written rarely
    /// ([`Bundle::WRITTEN_RARELY`]) only, outside reset the one way the next edge can change
    /// `q`; engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn written(&self) -> bool {
        T::WRITTEN_RARELY && self.written
    }

    /// The pending next value; engine-only (reading another block's `d` would depend on
    /// evaluation order).
    #[inline(always)]
    pub(in crate::rtl) fn d(&self) -> T {
        self.d
    }

    /// The rising edge: `q <- rst ? reset : d`. Returns whether `q` changed (its encoded bits:
    /// records need no `PartialEq`). Engine-only; used only by a watchdog without a progress
    /// counter.
    #[inline(always)]
    pub(in crate::rtl) fn commit(&mut self, rst: bool) -> bool {
        let next = if rst { self.reset } else { self.d };
        let changed = !next.same_bits(&self.q, self.width);
        self.q = next;
        self.d = next;
        self.written = false;
        changed
    }

    /// [`Reg::commit`] without the comparison. Outside reset `d` already holds the value it
    /// keeps after the edge, so only `q` is written (and, for a register that tracks writes,
    /// only if `d` was written this cycle: otherwise `q` already equals it).
    #[inline(always)]
    pub(in crate::rtl) fn commit_fast(&mut self, rst: bool) {
        if rst {
            self.q = self.reset;
            self.d = self.reset;
            self.written = false;
        } else if T::WRITTEN_RARELY {
            if self.written {
                self.q = self.d;
                self.written = false;
            }
        } else {
            self.q = self.d;
        }
    }
}

/// Whether `v` survives truncation to `width` bits unchanged (its encoded bits above `width`
/// are zero and truncating changes none below).
fn fits<T: Bundle>(v: T, width: u32) -> bool {
    let mut a = vec![0u64; T::WORDS];
    v.encode(&mut a);
    let mut clipped = a.clone();
    clear_above(&mut clipped, width);
    let mut b = vec![0u64; T::WORDS];
    v.truncate(width).encode(&mut b);
    a == clipped && a == b
}
