//! What every traced signal (register, wire, input) carries besides its value: its local
//! name, its declared width and optional value labels, with one set of accessors for all.

use std::borrow::Cow;

use super::bundle::Bundle;
use super::error::{Result, RtlError};

/// Value labels of a signal: `(value, name)` pairs, e.g. an FSM's state names. Read only when
/// the GTKWave save file is written (they become a translate filter file); never in the clock
/// loop and never in the waveform itself.
pub type Labels = &'static [(u64, &'static str)];

/// How a waveform viewer shows a signal's value: what the GTKWave save file asks for. Like the
/// labels, read only when the save file is written, never in the clock loop or the waveform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Display {
    /// Hexadecimal (vectors) or binary (single bits): the default.
    #[default]
    Hex,
    /// Unsigned decimal (counts, shift amounts, indices).
    Dec,
    /// Two's-complement signed decimal (the int32 accumulators of the integer mode).
    SignedDec,
    /// An FP32 word shown as its decimal value (GTKWave's Real format on a 32-bit vector).
    Real,
    /// Shown through the translate filter process `tcrtl wave-filter <kind>` (GTKWave hands it
    /// the hex text of each value and shows the line it answers), e.g. `"fp16"` for a vector of
    /// FP16 lanes or `"ctl"` for the PE control word.
    Filter(&'static str),
}

/// The descriptor of one signal: everything but its value and width. It is read when the design
/// is elaborated (the signal table, the trace header, the GTKWave save file) and never in the
/// clock loop, so it lives out of line ([`Boxed`]): a register is its `q`, `d`, reset value and
/// width plus one pointer, and the commit pass walks values, not names.
#[derive(Debug, Clone)]
pub(in crate::rtl) struct SignalMeta {
    pub(in crate::rtl) name: Cow<'static, str>,
    pub(in crate::rtl) labels: Labels,
    pub(in crate::rtl) display: Display,
    pub(in crate::rtl) overview: bool,
}

/// A signal's descriptor, kept out of line.
pub(in crate::rtl) type Boxed = Box<SignalMeta>;

impl SignalMeta {
    /// Checks that `width` is 1..=`T::CAPACITY` and names the signal.
    pub(in crate::rtl) fn new<T: Bundle>(
        name: impl Into<Cow<'static, str>>,
        width: u32,
    ) -> Result<Boxed> {
        let name = name.into();
        if width == 0 || width > T::CAPACITY {
            return Err(RtlError::BadWidth {
                name: name.into_owned(),
                width,
                capacity: T::CAPACITY,
            });
        }
        Ok(Box::new(SignalMeta {
            name,
            labels: &[],
            display: Display::Hex,
            overview: false,
        }))
    }
}

/// The accessors every signal type shares (it holds its width in a field `width` and its
/// [`SignalMeta`] in a field `meta`).
macro_rules! signal_accessors {
    ($ty:ident, $bound:ident) => {
        impl<T: $bound> $ty<T> {
            /// Attaches value labels (e.g. FSM state names): GTKWave then shows the name
            /// instead of the number, through a translate filter file written beside the
            /// `.gtkw` save file. The waveform itself is unchanged.
            pub fn with_labels(mut self, labels: $crate::rtl::Labels) -> Self {
                self.meta.labels = labels;
                self
            }

            /// Sets how waveform viewers show the value ([`$crate::rtl::Display`]): decimal,
            /// FP32 real or through a `tcrtl wave-filter` process. The waveform is unchanged.
            pub fn with_display(mut self, display: $crate::rtl::Display) -> Self {
                self.meta.display = display;
                self
            }

            /// Puts the signal in the overview save file (`NAME.overview.gtkw`, a few signals
            /// per block) as well as the full one.
            pub fn in_overview(mut self) -> Self {
                self.meta.overview = true;
                self
            }

            /// How waveform viewers show the value.
            pub fn display(&self) -> $crate::rtl::Display {
                self.meta.display
            }

            /// Whether the signal is in the overview save file.
            pub fn is_overview(&self) -> bool {
                self.meta.overview
            }

            /// The value labels (empty if none).
            pub fn labels(&self) -> $crate::rtl::Labels {
                self.meta.labels
            }

            /// The declared width in bits.
            #[inline(always)]
            pub fn width(&self) -> u32 {
                self.width
            }

            /// The local name (the last component of its hierarchical name).
            pub fn name(&self) -> &str {
                &self.meta.name
            }

            /// The name, labels and viewer hints (for the engine's cold passes).
            pub(in crate::rtl) fn meta_ref(&self) -> &$crate::rtl::signal::SignalMeta {
                &self.meta
            }
        }
    };
}
pub(in crate::rtl) use signal_accessors;
