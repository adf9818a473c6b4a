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

use crate::rtl::{DelayLines, Display, Module, Result, Value, Visitor};

/// A skew buffer carrying a `T` value plus a `U` tag per lane; the lane count is fixed when
/// it is built (one lane per mesh row or column).
///
/// The lanes are [`DelayLines`] of `(data, tag)` records: each stage shows as two registers,
/// `d<j>_<k>` and `t<j>_<k>`, visited stage by stage, lane after lane.
pub struct Skew<T: Value, U: Value> {
    name: &'static str,
    lines: DelayLines<(T, U)>,
}

impl<T: Value, U: Value> Skew<T, U> {
    /// A skew buffer named `name` with one lane per entry of `depth` (that lane's depth),
    /// `width`-bit data and `tag_width`-bit tags.
    pub fn new(name: &'static str, depth: &[usize], width: u32, tag_width: u32) -> Result<Self> {
        let mut lines = DelayLines::new((T::default(), U::default()), depth);
        lines.field(|j, k| format!("d{j}_{k}"), width, |e| &e.0)?;
        lines.field(|j, k| format!("t{j}_{k}"), tag_width, |e| &e.1)?;
        Ok(Self { name, lines })
    }

    /// Sets how waveform viewers show every data register and every tag register.
    pub fn with_display(mut self, data: Display, tag: Display) -> Self {
        self.lines.set_display(0, data);
        self.lines.set_display(1, tag);
        self
    }

    /// Lanes of the buffer.
    pub fn lanes(&self) -> usize {
        self.lines.lanes()
    }

    /// The skew's per-lane outputs into `out` (one entry per lane): the last register of each
    /// lane, or the input itself for depth 0. Computed from register outputs and `input`
    /// only; changes no register.
    #[inline]
    pub fn out(&self, input: &[(T, U)], out: &mut [(T, U)]) {
        let lanes = self.lines.lanes();
        let (input, out) = (&input[..lanes], &mut out[..lanes]);
        for j in 0..lanes {
            out[j] = self.lines.out(j).unwrap_or(input[j]);
        }
    }

    /// The combinational update: each lane's first register takes the lane's input (one
    /// entry per lane); every other register takes the one before it, at the edge.
    #[inline]
    pub fn shift_in(&mut self, input: &[(T, U)]) {
        // Every value comes from the buffer's input or a stage of the same widths: it fits.
        self.lines.set_inputs(&input[..self.lines.lanes()]);
    }
}

impl<T: Value, U: Value> Module for Skew<T, U> {
    fn name(&self) -> &str {
        self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for stage in 0..self.lines.stages() {
            v.delay_reg(&mut self.lines, stage, 0, |e| &e.0);
            v.delay_reg(&mut self.lines, stage, 1, |e| &e.1);
        }
        v.delay(&mut self.lines);
    }
}
