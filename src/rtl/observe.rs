//! Which wires anything reads: the elaboration pass that turns each wire's observation on or
//! off ([`crate::rtl::Wire::set_with`] skips its closure for a wire nobody observes), then
//! tells each block ([`Module::observed`]).

use super::bundle::Bundle;
use super::module::{Module, Sealed, Visitor};
use super::reg::Reg;
use super::value::Value;
use super::wire::{Input, Wire};

/// Sets every wire's observation: `Some(on)` indexed by signal (visit order, the signal
/// table's order), or every wire on when `on` is `None`.
pub(in crate::rtl) struct Observe<'a> {
    index: usize,
    on: Option<&'a [bool]>,
}

impl<'a> Observe<'a> {
    /// Observes the wires whose entry of `on` (one per signal, in visit order) is true.
    pub fn selected<M: Module>(top: &mut M, on: &'a [bool]) {
        top.visit(&mut Observe {
            index: 0,
            on: Some(on),
        });
        top.observed();
    }

    /// Observes every wire.
    pub fn all<M: Module>(top: &mut M) {
        top.visit(&mut Observe { index: 0, on: None });
        top.observed();
    }
}

impl Sealed for Observe<'_> {}
impl Visitor for Observe<'_> {
    fn reg<T: Bundle>(&mut self, _r: &mut Reg<T>) {
        self.index += 1;
    }
    fn wire<T: Bundle>(&mut self, w: &mut Wire<T>) {
        let on = self
            .on
            .is_none_or(|on| on.get(self.index).copied().unwrap_or(true));
        w.observe(on);
        self.index += 1;
    }
    fn input<T: Value>(&mut self, _i: &mut Input<T>) {
        self.index += 1;
    }
    fn child<M: Module>(&mut self, m: &mut M) {
        m.visit(self);
        m.observed();
    }
}
