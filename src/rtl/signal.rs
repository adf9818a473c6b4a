//! What every traced signal (register, wire, input) carries besides its value: its local
//! name, its declared width and optional value labels, with one set of accessors for all.

use std::borrow::Cow;

use super::error::{Result, RtlError};
use super::value::Value;

/// Value labels of a signal: `(value, name)` pairs, e.g. an FSM's state names. Read only when
/// the GTKWave save file is written (they become a translate filter file); never in the clock
/// loop and never in the waveform itself.
pub type Labels = &'static [(u64, &'static str)];

/// Name, width and labels of one signal.
#[derive(Debug, Clone)]
pub(in crate::rtl) struct SignalMeta {
    pub(in crate::rtl) name: Cow<'static, str>,
    pub(in crate::rtl) width: u32,
    pub(in crate::rtl) labels: Labels,
}

impl SignalMeta {
    /// Checks that `width` is 1..=`T::CAPACITY` and names the signal.
    pub(in crate::rtl) fn new<T: Value>(
        name: impl Into<Cow<'static, str>>,
        width: u32,
    ) -> Result<SignalMeta> {
        let name = name.into();
        if width == 0 || width > T::CAPACITY {
            return Err(RtlError::BadWidth {
                name: name.into_owned(),
                width,
                capacity: T::CAPACITY,
            });
        }
        Ok(SignalMeta {
            name,
            width,
            labels: &[],
        })
    }
}

/// The accessors every signal type shares (it holds its [`SignalMeta`] in a field `meta`).
macro_rules! signal_accessors {
    ($ty:ident) => {
        impl<T: Value> $ty<T> {
            /// Attaches value labels (e.g. FSM state names): GTKWave then shows the name
            /// instead of the number, through a translate filter file written beside the
            /// `.gtkw` save file. The waveform itself is unchanged.
            pub fn with_labels(mut self, labels: $crate::rtl::Labels) -> Self {
                self.meta.labels = labels;
                self
            }

            /// The value labels (empty if none).
            pub fn labels(&self) -> $crate::rtl::Labels {
                self.meta.labels
            }

            /// The declared width in bits.
            pub fn width(&self) -> u32 {
                self.meta.width
            }

            /// The local name (the last component of its hierarchical name).
            pub fn name(&self) -> &str {
                &self.meta.name
            }
        }
    };
}
pub(in crate::rtl) use signal_accessors;
