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

    /// The lanes' inputs this cycle, one entry per lane, driven in place where the values
    /// entering the buffer settle: each lane's first register's `D`, or for a lane of depth 0
    /// its output.
    #[inline]
    pub fn inputs(&mut self) -> &mut [(T, U)] {
        self.lines.inputs_mut()
    }

    /// The skew's per-lane outputs into `out` (one entry per lane): the last register of each
    /// lane, or the lane's input itself for depth 0 (as driven through [`Skew::inputs`] this
    /// cycle). Computed from register outputs and the inputs only; changes no register.
    #[inline]
    pub fn out(&self, out: &mut [(T, U)]) {
        let lanes = self.lines.lanes();
        for (j, o) in out[..lanes].iter_mut().enumerate() {
            *o = match self.lines.out(j) {
                Some(v) => v,
                None => self.lines.input(j),
            };
        }
    }

    /// The combinational update: each lane's first register takes the lane's input (driven
    /// through [`Skew::inputs`]); every other register takes the one before it. Nothing is
    /// computed: the edge latches what the inputs were driven to.
    #[inline]
    pub fn shift_in(&mut self) {
        self.lines.latch_inputs();
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
