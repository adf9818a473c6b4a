//! Register banks: the registers of one block held as one record, `q` and `d`, committed
//! together at the clock edge.

use std::borrow::Cow;

use super::bundle::{clear_above, Bundle};
use super::error::{Result, RtlError};
use super::signal::{Boxed, Display, Labels, SignalMeta};

/// The registers of one block as a single `Copy` record `S`: every register is a field of
/// `S`, and the bank holds the record latched at the last rising edge (`q`), the record
/// being written for the next one (`d`) and the reset record. Each field is a signal of its
/// own in the signal table and the waves (named, sized and shown as declared with
/// [`RegBank::field`]), exactly as a [`crate::rtl::Reg`] of that type would be; what differs
/// is the cost of the edge: one copy of the record instead of one per register, and no
/// per-register width or descriptor beside the values.
///
/// The rules of a register hold field by field: block code reads [`RegBank::q`] and writes
/// the next value of a field with [`RegBank::set`]; only the engine's clock edge moves `d`
/// into `q`, so `q` is stable for the whole combinational phase. A field not written in a
/// cycle holds its value (`d` keeps what it was committed from). There is no way to read `d`:
///
/// ```compile_fail
/// use tensorcore_rtl::rtl::RegBank;
/// #[derive(Clone, Copy, Default)]
/// struct Regs { count: u8 }
/// let bank = RegBank::new(Regs::default());
/// let _ = bank.d().count; // error: `d` is private to the engine
/// ```
///
/// A field's value must fit its declared width (the owner writes values of that width, as
/// the hardware's wires are); the waves show its low `width` bits.
///
/// ```
/// use tensorcore_rtl::rtl::RegBank;
/// #[derive(Clone, Copy, Default)]
/// struct Regs { count: u8, busy: bool }
/// let mut bank = RegBank::new(Regs::default())
///     .field::<u8>("count", 8, |r| &r.count).unwrap()
///     .field::<bool>("busy", 1, |r| &r.busy).unwrap();
/// bank.set(|r| &mut r.count, 5);
/// assert_eq!(bank.q().count, 0); // latched only at the rising edge
/// assert_eq!(bank.fields(), 2);
/// ```
///
/// The block's `visit` presents each field with [`crate::rtl::Visitor::bank_reg`] (its index,
/// in declaration order, and the same accessor), where a register of that field would have
/// been visited, and then the bank itself once with [`crate::rtl::Visitor::bank`].
#[derive(Debug, Clone)]
pub struct RegBank<S: Copy + 'static> {
    q: S,
    d: S,
    reset: S,
    fields: Vec<BankField>,
    /// The bank belongs to a [`RareBank`] (whose own `set` notes each write): checked in
    /// debug builds, where a write through [`RegBank::set`] is refused.
    rare: bool,
    /// The outputs at each traced cycle since the toggle counter last read them, the first
    /// `kept` entries (none unless a trace counts toggle totals; the entries after them are
    /// room left from earlier batches); engine-only.
    history: Vec<S>,
    kept: u32,
}

/// A field's width and descriptor, read only by the engine's observers.
#[derive(Debug, Clone)]
pub(in crate::rtl) struct BankField {
    pub(in crate::rtl) width: u32,
    pub(in crate::rtl) meta: Boxed,
}

impl<S: Copy + 'static> RegBank<S> {
    /// A bank whose registers reset to the fields of `reset` (declare them with
    /// [`RegBank::field`]).
    pub fn new(reset: S) -> Self {
        Self {
            q: reset,
            d: reset,
            reset,
            fields: Vec::new(),
            rare: false,
            history: Vec::new(),
            kept: 0,
        }
    }

    /// Declares the next field register: `name` (local to the block), `width` bits of a
    /// `T`, read by `get`. Fails if `width` is 0 or more than `T` holds, or if the reset
    /// value does not fit in `width` bits.
    pub fn field<T: Bundle>(
        mut self,
        name: impl Into<Cow<'static, str>>,
        width: u32,
        get: impl Fn(&S) -> &T,
    ) -> Result<Self> {
        let meta = SignalMeta::new::<T>(name, width)?;
        if !fits(get(&self.reset), width) {
            return Err(RtlError::ResetTooWide {
                name: meta.name.into_owned(),
                width,
            });
        }
        self.fields.push(BankField { width, meta });
        Ok(self)
    }

    /// Sets how waveform viewers show the field declared last (as
    /// [`crate::rtl::Reg::with_display`]).
    pub fn with_display(mut self, display: Display) -> Self {
        if let Some(f) = self.fields.last_mut() {
            f.meta.display = display;
        }
        self
    }

    /// Attaches value labels to the field declared last (as
    /// [`crate::rtl::Reg::with_labels`]).
    pub fn with_labels(mut self, labels: Labels) -> Self {
        if let Some(f) = self.fields.last_mut() {
            f.meta.labels = labels;
        }
        self
    }

    /// Puts the field declared last in the overview save file (as
    /// [`crate::rtl::Reg::in_overview`]).
    pub fn in_overview(mut self) -> Self {
        if let Some(f) = self.fields.last_mut() {
            f.meta.overview = true;
        }
        self
    }

    /// The registers' outputs latched at the last rising edge.
    #[inline(always)]
    pub fn q(&self) -> &S {
        &self.q
    }

    /// Sets the value one field register (`field` picks it from the next record) latches
    /// at the next rising edge. The value must fit the field's width.
    #[inline(always)]
    pub fn set<T>(&mut self, field: impl FnOnce(&mut S) -> &mut T, value: T) {
        debug_assert!(!self.rare, "a rare bank is written through RareBank::set");
        *field(&mut self.d) = value;
    }

    /// Writes the next value of one field register in place: `write` is handed the field
    /// (`field` picks it from the next record) and must only store into it, entirely (what it
    /// finds there is the pending value, which block code must not read). For a large field
    /// that a unit fills lane by lane, so it is built where the register holds it rather than
    /// in a temporary and copied.
    #[inline(always)]
    pub fn set_in_place<T>(
        &mut self,
        field: impl FnOnce(&mut S) -> &mut T,
        write: impl FnOnce(&mut T),
    ) {
        debug_assert!(!self.rare, "a rare bank is written through RareBank::set");
        write(field(&mut self.d));
    }

    /// Fields declared.
    pub fn fields(&self) -> usize {
        self.fields.len()
    }

    /// The next record; engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn d(&self) -> &S {
        &self.d
    }

    /// The reset record; engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn reset(&self) -> &S {
        &self.reset
    }

    /// Field `i`'s width and descriptor; engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn field_meta(&self, i: usize) -> &BankField {
        &self.fields[i]
    }

    /// The outputs kept at each traced cycle for the toggle counter, oldest first;
    /// engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn history(&self) -> &[S] {
        &self.history[..(self.kept as usize).min(self.history.len())]
    }

    /// The toggle counter read the kept outputs: keeps only the last (none if `last` is
    /// false); engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn keep_last(&mut self, last: bool) {
        let at = (self.kept as usize).min(self.history.len());
        self.kept = match (last, at.checked_sub(1)) {
            (true, Some(i)) => {
                self.history[0] = self.history[i];
                1
            }
            _ => 0,
        };
    }

    /// Makes room for the outputs of `cycles` traced cycles at once (the toggle counter's
    /// batch), so that keeping them never moves the ones kept; engine-only.
    pub(in crate::rtl) fn reserve_kept(&mut self, cycles: usize) {
        self.history
            .reserve(cycles.saturating_sub(self.history.len()));
    }

    /// Keeps this cycle's outputs for the toggle counter: one copy of the record, into the
    /// room the last outputs it read left (the first batch makes it); engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn record_q(&mut self) {
        match self.history.get_mut(self.kept as usize) {
            Some(slot) => *slot = self.q,
            None => self.history.push(self.q),
        }
        self.kept += 1;
    }

    /// The common rising edge: `q <- d` for every field at once. Engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn commit_fast(&mut self) {
        self.q = self.d;
    }

    /// The rising edge under reset (every field takes its reset value) or not. Engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn commit(&mut self, rst: bool) {
        if rst {
            self.d = self.reset;
        }
        self.q = self.d;
    }
}

/// A register bank written in few cycles of a run (a barrier's state, a descriptor table):
/// the same registers, signals and rules as a [`RegBank`], but every write notes that the
/// bank was written, and the clock edge copies the record only after a cycle that wrote it
/// (in any other cycle `d` already equals `q`, so the copy would change nothing). A block
/// with hundreds of such registers then pays one test per bank at the edge instead of one
/// copy per register.
///
/// ```
/// use tensorcore_rtl::rtl::RareBank;
/// #[derive(Clone, Copy, Default)]
/// struct Regs { pending: u32 }
/// let mut bank = RareBank::new(Regs::default())
///     .field::<u32>("pending", 20, |r| &r.pending).unwrap();
/// bank.set(|r| &mut r.pending, 3);
/// assert_eq!(bank.q().pending, 0); // latched only at the rising edge
/// ```
#[derive(Debug, Clone)]
pub struct RareBank<S: Copy + 'static> {
    bank: RegBank<S>,
    /// A field was written since the last edge.
    written: bool,
}

impl<S: Copy + 'static> RareBank<S> {
    /// A rare bank whose registers reset to the fields of `reset` (declare them with
    /// [`RareBank::field`]).
    pub fn new(reset: S) -> Self {
        let mut bank = RegBank::new(reset);
        bank.rare = true;
        Self {
            bank,
            written: false,
        }
    }

    /// Declares the next field register, as [`RegBank::field`].
    pub fn field<T: Bundle>(
        self,
        name: impl Into<Cow<'static, str>>,
        width: u32,
        get: impl Fn(&S) -> &T,
    ) -> Result<Self> {
        Ok(Self {
            bank: self.bank.field(name, width, get)?,
            ..self
        })
    }

    /// Sets how waveform viewers show the field declared last, as [`RegBank::with_display`].
    pub fn with_display(self, display: Display) -> Self {
        Self {
            bank: self.bank.with_display(display),
            ..self
        }
    }

    /// The registers' outputs latched at the last rising edge.
    #[inline(always)]
    pub fn q(&self) -> &S {
        &self.bank.q
    }

    /// Sets the value one field register latches at the next rising edge (as
    /// [`RegBank::set`]) and notes that the bank was written.
    #[inline(always)]
    pub fn set<T>(&mut self, field: impl FnOnce(&mut S) -> &mut T, value: T) {
        *field(&mut self.bank.d) = value;
        self.written = true;
    }

    /// The bank, for the block's `visit` (its fields with [`crate::rtl::Visitor::bank_reg`],
    /// then the rare bank itself with [`crate::rtl::Visitor::rare_bank`]); its own `set`
    /// refuses a rare bank in debug builds, so writes go through [`RareBank::set`].
    #[inline(always)]
    pub fn bank_mut(&mut self) -> &mut RegBank<S> {
        &mut self.bank
    }

    /// The common rising edge: the record is copied only after a cycle that wrote it (in any
    /// other, `d` still equals `q`). Engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn commit_fast(&mut self) {
        if std::mem::take(&mut self.written) {
            self.bank.commit_fast();
        }
    }

    /// The rising edge under reset or not, as [`RegBank`]'s. Engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn commit(&mut self, rst: bool) {
        self.bank.commit(rst);
        self.written = false;
    }
}

/// Encodes field value `v` as a signal of `width` bits into `out` (`T::WORDS` long): every
/// bit at index `>= width` clear, whatever the record type promises (a bank's fields are
/// written unmasked). Debug builds check that the value fit.
#[inline(always)]
pub(in crate::rtl) fn encode_field<T: Bundle>(v: &T, width: u32, out: &mut [u64]) {
    v.encode(out);
    if cfg!(debug_assertions) && T::CLEAN_ABOVE_WIDTH {
        let mut clipped = out.to_vec();
        clear_above(&mut clipped, width);
        debug_assert!(
            clipped == out,
            "a register bank field holds bits above its width {width}"
        );
    }
    clear_above(out, width);
}

/// Whether `v` encodes with nothing at or above `width`.
pub(in crate::rtl) fn fits<T: Bundle>(v: &T, width: u32) -> bool {
    let mut a = vec![0u64; T::WORDS];
    v.encode(&mut a);
    let mut clipped = a.clone();
    clear_above(&mut clipped, width);
    a == clipped
}
