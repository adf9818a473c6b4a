//! Power in the waves: a [`PowerModel`] says, per design signal, which block a toggle of one
//! of its bits charges and how much energy it costs (or, for a counter, what one unit of its
//! increase costs); the tracer adds up each traced cycle's energy per block from its
//! snapshot and writes it as real-valued VCD signals `power.<block>` in watts, so a waveform
//! viewer plots power over time beside the data.

use std::sync::Arc;

use super::sink::Place;
use crate::rtl::table::SignalInfo;

/// How one design signal charges energy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Charge {
    /// Each toggled bit costs `pj` picojoules, charged to block `block`.
    Toggle {
        /// The block's index in [`PowerModel::blocks`].
        block: usize,
        /// Picojoules per bit toggle.
        pj: f64,
    },
    /// The signal is a counter: each unit it grows by costs `pj` picojoules (a byte counter
    /// charged per byte moved).
    Increase {
        /// The block's index in [`PowerModel::blocks`].
        block: usize,
        /// Picojoules per unit of increase.
        pj: f64,
    },
}

/// What the tracer needs to write power signals.
pub trait PowerModel: Send + Sync + std::fmt::Debug {
    /// The blocks, each one real-valued signal `power.<name>` (watts), in this order.
    fn blocks(&self) -> Vec<String>;
    /// Per signal of `table` (the design's signal table, in visit order): how it charges
    /// (none, one way, or several: a register that is also an adder's input).
    fn charges(&self, table: &[SignalInfo]) -> Vec<Vec<Charge>>;
    /// The clock in GHz (a cycle's picojoules times this, over 1000, are watts).
    fn clock_ghz(&self) -> f64;
}

/// A power model for [`crate::rtl::TraceConfig::power`]: compared by identity.
#[derive(Clone, Debug)]
pub struct PowerTrace(pub Arc<dyn PowerModel>);

impl PartialEq for PowerTrace {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for PowerTrace {}

/// The per-cycle energy sums of an open trace.
pub(in crate::rtl) struct PowerSums {
    /// Toggle charges: (snapshot word, block, picojoules per toggled bit).
    toggles: Vec<(usize, usize, f64)>,
    /// Counters: (first snapshot word, block, picojoules per unit).
    counters: Vec<(usize, usize, f64)>,
    /// This cycle's energy per block; its watts and the watts last written (per block, then
    /// the total).
    energy: Vec<f64>,
    watts: Vec<f64>,
    last: Vec<f64>,
    /// Picojoules per cycle to watts.
    watts_per_pj: f64,
}

impl PowerSums {
    /// The sums for `model` over the signals `table`, placed in the snapshot as `places`.
    pub fn new(model: &dyn PowerModel, table: &[SignalInfo], places: &[Place]) -> Self {
        let (mut toggles, mut counters) = (Vec::new(), Vec::new());
        let blocks = model.blocks().len();
        for (charges, place) in model.charges(table).into_iter().zip(places) {
            let first = place.off as usize;
            for charge in charges {
                match charge {
                    Charge::Toggle { block, pj } if block < blocks => {
                        for w in first..first + place.words as usize {
                            toggles.push((w, block, pj));
                        }
                    }
                    Charge::Increase { block, pj } if block < blocks => {
                        counters.push((first, block, pj))
                    }
                    _ => {}
                }
            }
        }
        Self {
            toggles,
            counters,
            energy: vec![0.0; blocks],
            watts: vec![0.0; blocks + 1],
            last: vec![f64::NAN; blocks + 1],
            watts_per_pj: model.clock_ghz() * 1e-3,
        }
    }

    /// This cycle's power per block in watts and their total, from its snapshot `cur` and the
    /// last cycle's `prev` (all zero on the first sample, `first`: the initial state costs
    /// nothing).
    pub fn cycle(&mut self, cur: &[u64], prev: &[u64], first: bool) {
        self.energy.iter_mut().for_each(|e| *e = 0.0);
        if !first {
            for &(w, block, pj) in &self.toggles {
                if let (Some(&new), Some(&old)) = (cur.get(w), prev.get(w)) {
                    self.energy[block] += f64::from((new ^ old).count_ones()) * pj;
                }
            }
            for &(w, block, pj) in &self.counters {
                if let (Some(&new), Some(&old)) = (cur.get(w), prev.get(w)) {
                    self.energy[block] += new.saturating_sub(old) as f64 * pj;
                }
            }
        }
        let blocks = self.energy.len();
        for (w, e) in self.watts.iter_mut().zip(&self.energy) {
            *w = e * self.watts_per_pj;
        }
        self.watts[blocks] = self.watts[..blocks].iter().sum();
    }

    /// Hands `emit` each signal (its index: the blocks, then the total) whose watts differ
    /// from those last written, or every one when `force` (the first sample).
    pub fn changes(&mut self, force: bool, mut emit: impl FnMut(usize, f64)) {
        for (i, (&w, last)) in self.watts.iter().zip(self.last.iter_mut()).enumerate() {
            if force || w.to_bits() != last.to_bits() {
                *last = w;
                emit(i, w);
            }
        }
    }
}
