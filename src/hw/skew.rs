//! Skew and de-skew buffers: per-lane shift registers of different depths, their own block
//! (as Gemmini's `MeshWithDelays`), so that PEs never know where they sit.
//!
//! Lane `j` delays its input by `depth[j]` cycles through registers `d<j>_<k>` (data) and
//! `t<j>_<k>` (a tag travelling alongside, e.g. a control word); depth 0 passes the input
//! straight through (a wire). Used for the A-row skew (row `i`: depth `i`), the B-column skew
//! (column `j`: depth `j`), the skew of the column shift commands and C values (column `j`:
//! depth `j`) and the de-skew of the drained results (column `j`: depth `C - 1 - j`).

use crate::rtl::{Display, Module, Reg, Result, Value, Visitor};

/// A skew buffer carrying a `T` value plus a `U` tag per lane; the lane count is fixed when
/// it is built (one lane per mesh row or column).
pub struct Skew<T: Value, U: Value> {
    name: &'static str,
    lanes: Vec<Vec<(Reg<T>, Reg<U>)>>,
}

impl<T: Value, U: Value> Skew<T, U> {
    /// A skew buffer named `name` with one lane per entry of `depth` (that lane's depth),
    /// `width`-bit data and `tag_width`-bit tags.
    pub fn new(name: &'static str, depth: &[usize], width: u32, tag_width: u32) -> Result<Self> {
        let mut lanes = Vec::with_capacity(depth.len());
        for (j, &d) in depth.iter().enumerate() {
            let regs = (0..d)
                .map(|k| {
                    Ok((
                        Reg::new(format!("d{j}_{k}"), width, T::default())?,
                        Reg::new(format!("t{j}_{k}"), tag_width, U::default())?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            lanes.push(regs);
        }
        Ok(Self { name, lanes })
    }

    /// Sets how waveform viewers show every data register and every tag register.
    pub fn with_display(mut self, data: Display, tag: Display) -> Self {
        self.lanes = self
            .lanes
            .into_iter()
            .map(|lane| {
                lane.into_iter()
                    .map(|(d, t)| (d.with_display(data), t.with_display(tag)))
                    .collect()
            })
            .collect();
        self
    }

    /// Lanes of the buffer.
    pub fn lanes(&self) -> usize {
        self.lanes.len()
    }

    /// The skew's per-lane outputs into `out` (one entry per lane): the last register of each
    /// lane, or the input itself for depth 0. Computed from register outputs and `input`
    /// only; changes no register.
    #[inline]
    pub fn out(&self, input: &[(T, U)], out: &mut [(T, U)]) {
        for ((o, i), lane) in out.iter_mut().zip(input).zip(&self.lanes) {
            *o = match lane.last() {
                Some((d, t)) => (d.q(), t.q()),
                None => *i,
            };
        }
    }

    /// The combinational update: each lane's registers take their predecessor (the first one
    /// the input, one entry per lane).
    #[inline]
    pub fn shift_in(&mut self, input: &[(T, U)]) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            let mut carry = input[j];
            for (d, t) in lane.iter_mut() {
                let here = (d.q(), t.q());
                d.set_d(carry.0);
                t.set_d(carry.1);
                carry = here;
            }
        }
    }
}

impl<T: Value, U: Value> Module for Skew<T, U> {
    fn name(&self) -> &str {
        self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for lane in &mut self.lanes {
            for (d, t) in lane {
                v.reg(d);
                v.reg(t);
            }
        }
    }
}
