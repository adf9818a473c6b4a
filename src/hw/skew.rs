//! Skew and de-skew buffers: per-lane shift registers of different depths, their own block
//! (as Gemmini's `MeshWithDelays`), so that PEs never know where they sit.
//!
//! Lane `j` delays its input by `depth[j]` cycles through registers `d<j>_<k>` (data) and
//! `t<j>_<k>` (a tag travelling alongside, e.g. a control word); depth 0 passes the input
//! straight through (a wire). Used for the A-row skew (row `i`: depth `i`), the B-column skew
//! (column `j`: depth `j`), the skew of the column shift commands and C values (column `j`:
//! depth `j`) and the de-skew of the drained results (column `j`: depth `C - 1 - j`). The
//! lane count and depths are values given when the buffer is built (from the array's
//! geometry).

use crate::rtl::{Display, Module, Reg, Result, Value, Visitor};

/// A skew buffer carrying a `T` value plus a `U` tag per lane; the lane count is fixed when
/// it is built (one lane per mesh row or column).
pub struct Skew<T: Value, U: Value> {
    name: &'static str,
    /// Every lane's stages, lane after lane (lane `j`, stage `k` after stage `k - 1`).
    stages: Vec<(Reg<T>, Reg<U>)>,
    /// Lane `j`'s stages are `stages[ends[j - 1]..ends[j]]` (from 0 for lane 0).
    ends: Vec<usize>,
}

impl<T: Value, U: Value> Skew<T, U> {
    /// A skew buffer named `name` with one lane per entry of `depth` (that lane's depth),
    /// `width`-bit data and `tag_width`-bit tags.
    pub fn new(name: &'static str, depth: &[usize], width: u32, tag_width: u32) -> Result<Self> {
        let mut stages = Vec::with_capacity(depth.iter().sum());
        let mut ends = Vec::with_capacity(depth.len());
        for (j, &d) in depth.iter().enumerate() {
            for k in 0..d {
                stages.push((
                    Reg::new(format!("d{j}_{k}"), width, T::default())?,
                    Reg::new(format!("t{j}_{k}"), tag_width, U::default())?,
                ));
            }
            ends.push(stages.len());
        }
        Ok(Self { name, stages, ends })
    }

    /// Sets how waveform viewers show every data register and every tag register.
    pub fn with_display(mut self, data: Display, tag: Display) -> Self {
        self.stages = self
            .stages
            .into_iter()
            .map(|(d, t)| (d.with_display(data), t.with_display(tag)))
            .collect();
        self
    }

    /// Lanes of the buffer.
    pub fn lanes(&self) -> usize {
        self.ends.len()
    }

    /// The skew's per-lane outputs into `out` (one entry per lane): the last register of each
    /// lane, or the input itself for depth 0. Computed from register outputs and `input`
    /// only; changes no register.
    #[inline]
    pub fn out(&self, input: &[(T, U)], out: &mut [(T, U)]) {
        let lanes = self.ends.len();
        let (input, out, ends) = (&input[..lanes], &mut out[..lanes], &self.ends[..lanes]);
        let mut start = 0;
        for j in 0..lanes {
            let end = ends[j];
            out[j] = if end > start {
                let (d, t) = &self.stages[end - 1];
                (d.q(), t.q())
            } else {
                input[j]
            };
            start = end;
        }
    }

    /// The combinational update: each lane's registers take their predecessor (the first one
    /// the input, one entry per lane).
    #[inline]
    pub fn shift_in(&mut self, input: &[(T, U)]) {
        let lanes = self.ends.len();
        let (input, ends) = (&input[..lanes], &self.ends[..lanes]);
        let mut start = 0;
        for j in 0..lanes {
            let end = ends[j];
            let mut carry = input[j];
            for (d, t) in &mut self.stages[start..end] {
                let here = (d.q(), t.q());
                d.set_d(carry.0);
                t.set_d(carry.1);
                carry = here;
            }
            start = end;
        }
    }
}

impl<T: Value, U: Value> Module for Skew<T, U> {
    fn name(&self) -> &str {
        self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for (d, t) in &mut self.stages {
            v.reg(d);
            v.reg(t);
        }
    }
}
