//! Which wires anything reads: the elaboration pass that turns each wire's observation on or
//! off ([`crate::rtl::Wire::set_with`] skips its closure for a wire nobody observes), then
//! tells each block ([`Module::observed`]).

use super::module::{Cold, ColdPass, Module, SignalAccess, SignalKind};

/// Sets every wire's observation: `Some(on)` indexed by signal (visit order, the signal
/// table's order), or every wire on when `on` is `None`.
pub(in crate::rtl) struct Observe<'a> {
    index: usize,
    on: Option<&'a [bool]>,
}

impl<'a> Observe<'a> {
    /// Observes the wires whose entry of `on` (one per signal, in visit order) is true.
    pub fn selected<M: Module>(top: &mut M, on: &'a [bool]) {
        Cold::run(
            top,
            &mut Observe {
                index: 0,
                on: Some(on),
            },
        );
    }

    /// Observes every wire.
    pub fn all<M: Module>(top: &mut M) {
        Cold::run(top, &mut Observe { index: 0, on: None });
    }
}

impl ColdPass for Observe<'_> {
    fn signal(&mut self, kind: SignalKind, s: &mut dyn SignalAccess) {
        if kind == SignalKind::Wire {
            let on = self
                .on
                .is_none_or(|on| on.get(self.index).copied().unwrap_or(true));
            s.observe(on);
        }
        self.index += 1;
    }
    fn tells_observed(&self) -> bool {
        true
    }
}
