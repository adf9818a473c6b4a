//! Register files: a row of registers of which only a few are written per cycle (a block
//! buffer filled one slot per step), each slot still a register of the waves.

use super::bundle::Bundle;
use super::reg::Reg;

/// A register file of `len` registers of one type, each a signal of its own in the signal
/// table and the waves (`name_0`, `name_1`, ...), with the same rules as a [`Reg`]: block code
/// reads [`RegFile::q`] and writes [`RegFile::set_d`]; only the clock edge moves `d` into
/// `q`. What differs is the cost of the edge: the file remembers which slots were written
/// since the last edge and the clock pass commits only those, as a register file's write
/// port updates only the addressed rows. A slot not written holds its value (`d == q`).
///
/// ```
/// use tensorcore_rtl::rtl::{Reg, RegFile};
/// let slots: Result<Vec<_>, _> = (0..4).map(|k| Reg::new(format!("slot_{k}"), 8, 0u8)).collect();
/// let mut f = RegFile::new(slots.unwrap());
/// f.set_d(2, 7);
/// assert_eq!(f.q(2), 0); // latched only at the rising edge
/// assert_eq!(f.len(), 4);
/// ```
#[derive(Debug, Clone)]
pub struct RegFile<T: Bundle> {
    slots: Vec<Reg<T>>,
    /// Per slot: written since the last edge.
    dirty: Vec<bool>,
    /// The written slots, in write order (each once).
    pending: Vec<usize>,
}

impl<T: Bundle> RegFile<T> {
    /// A file of the registers `slots` (named, sized and reset as each was built).
    pub fn new(slots: Vec<Reg<T>>) -> Self {
        let n = slots.len();
        Self {
            slots,
            dirty: vec![false; n],
            pending: Vec::with_capacity(n),
        }
    }

    /// Slots in the file.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True if the file has no slot.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Slot `k`'s output latched at the last rising edge.
    #[inline(always)]
    pub fn q(&self, k: usize) -> T {
        self.slots[k].q()
    }

    /// Sets slot `k`'s value to be latched at the next rising edge (truncated to its width).
    /// Writing a slot outside the file does nothing, as an address past the last row selects
    /// no row.
    #[inline(always)]
    pub fn set_d(&mut self, k: usize, value: T) {
        let Some(slot) = self.slots.get_mut(k) else {
            return;
        };
        slot.set_d(value);
        if !self.dirty[k] {
            self.dirty[k] = true;
            self.pending.push(k);
        }
    }

    /// Every slot, for a pass of the engine that visits each register.
    #[inline(always)]
    pub(in crate::rtl) fn slots_mut(&mut self) -> &mut [Reg<T>] {
        &mut self.slots
    }

    /// The rising edge outside reset: commits the slots written since the last edge.
    #[inline(always)]
    pub(in crate::rtl) fn commit_written(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        for &k in &self.pending {
            self.slots[k].commit_fast(false);
            self.dirty[k] = false;
        }
        self.pending.clear();
    }

    /// Forgets which slots were written (after a pass that committed every slot).
    #[inline(always)]
    pub(in crate::rtl) fn clear_written(&mut self) {
        for &k in &self.pending {
            self.dirty[k] = false;
        }
        self.pending.clear();
    }
}
