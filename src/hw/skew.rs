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
    /// Each lane of nonzero depth with its first stage: `(lane, stage)`; every other stage
    /// takes the stage before it.
    firsts: Vec<(usize, usize)>,
    /// Where each lane's output comes from: its last stage, or [`PASS_THROUGH`] (depth 0:
    /// the input itself).
    tail: Vec<usize>,
}

/// A lane of depth 0.
const PASS_THROUGH: usize = usize::MAX;

impl<T: Value, U: Value> Skew<T, U> {
    /// A skew buffer named `name` with one lane per entry of `depth` (that lane's depth),
    /// `width`-bit data and `tag_width`-bit tags.
    pub fn new(name: &'static str, depth: &[usize], width: u32, tag_width: u32) -> Result<Self> {
        let total = depth.iter().sum();
        let mut stages = Vec::with_capacity(total);
        let mut firsts = Vec::with_capacity(depth.len());
        let mut tail = Vec::with_capacity(depth.len());
        for (j, &d) in depth.iter().enumerate() {
            if d > 0 {
                firsts.push((j, stages.len()));
            }
            for k in 0..d {
                stages.push((
                    Reg::new(format!("d{j}_{k}"), width, T::default())?,
                    Reg::new(format!("t{j}_{k}"), tag_width, U::default())?,
                ));
            }
            tail.push(if d == 0 {
                PASS_THROUGH
            } else {
                stages.len() - 1
            });
        }
        Ok(Self {
            name,
            stages,
            firsts,
            tail,
        })
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
        self.tail.len()
    }

    /// The skew's per-lane outputs into `out` (one entry per lane): the last register of each
    /// lane, or the input itself for depth 0. Computed from register outputs and `input`
    /// only; changes no register.
    #[inline]
    pub fn out(&self, input: &[(T, U)], out: &mut [(T, U)]) {
        let lanes = self.tail.len();
        let (input, out, tail) = (&input[..lanes], &mut out[..lanes], &self.tail[..lanes]);
        for j in 0..lanes {
            out[j] = match self.stages.get(tail[j]) {
                Some((d, t)) => (d.q(), t.q()),
                None => input[j],
            };
        }
    }

    /// The combinational update: each lane's registers take their predecessor (the first one
    /// the input, one entry per lane).
    #[inline]
    pub fn shift_in(&mut self, input: &[(T, U)]) {
        // Every stage reads its predecessor's output (`q`, unchanged until the edge) and sets
        // its own next value, so the passes below may run in any order. Every value comes
        // from the buffer's input or a stage of the same widths: nothing to mask.
        // Each stage takes the stage before it in the list...
        let stages = &mut self.stages[..];
        debug_assert!(self.firsts.first().is_none_or(|&(_, i)| i == 0));
        for i in 1..stages.len() {
            let (d, t) = &stages[i - 1];
            let v = (d.q(), t.q());
            let (d, t) = &mut stages[i];
            d.set_d_fit(v.0);
            t.set_d_fit(v.1);
        }
        // ...and each lane's first stage (the list's first among them) its input instead.
        for &(j, i) in &self.firsts {
            let (v, tag) = input[j];
            let (d, t) = &mut stages[i];
            d.set_d_fit(v);
            t.set_d_fit(tag);
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
