//! The output register every dataflow's top ends in.

use super::bundles::{d_row_of, DRow};
use crate::hw::config::CoreConfig;
use crate::hw::wave_filter::tag_filter;
use crate::hw::HwError;
use crate::rtl::{DelayLines, Display, Reg, Visitor};

/// The output register of a tensor core: one word a column (`d_out_<j>`, a one-stage delay
/// line a column, so its outputs are one row for [`DRow`]) and the tag beside the row
/// (`d_tag`, a [`DTag`]). Both dataflows' tops end in it.
pub(crate) struct OutputRegister {
    /// The words.
    pub(crate) d_out: DelayLines<u32>,
    /// The tag.
    pub(crate) d_tag: Reg<u64>,
}

impl OutputRegister {
    /// The output register of a core built for `cfg`, its tag's row field `row_bits` wide.
    pub(crate) fn new(cfg: &CoreConfig, row_bits: u32) -> Result<Self, HwError> {
        let mut d_out = DelayLines::new(0u32, &vec![1; cfg.cols()]);
        d_out.field(|j, _| format!("d_out_{j}"), cfg.acc.width(), |v| v)?;
        d_out.set_display(0, cfg.acc_display());
        d_out.set_overview(0);
        Ok(Self {
            d_out,
            d_tag: Reg::new("d_tag", 64, 0)?
                .with_display(Display::Filter(tag_filter(row_bits)))
                .in_overview(),
        })
    }

    /// The row of D the register holds this cycle, if any.
    pub(crate) fn d_row(&self, row_bits: u32) -> Option<DRow<'_>> {
        d_row_of(self.d_tag.q(), row_bits, self.d_out.stage_row(0))
    }

    /// The output block's update: the de-skewed row `d_row` (a word and a tag word a column;
    /// column 0's tag is the row's) into the words' inputs `d_in` and the tag.
    #[inline]
    pub(crate) fn load(d_in: &mut [u32], d_tag: &mut Reg<u64>, d_row: &[(u32, u64)]) {
        for (x, &(v, _)) in d_in.iter_mut().zip(d_row) {
            *x = v;
        }
        d_tag.set_d(d_row[0].1);
    }

    /// Visits the words, then the tag.
    pub(crate) fn visit<V: Visitor>(&mut self, v: &mut V) {
        for stage in 0..self.d_out.stages() {
            v.delay_reg(&mut self.d_out, stage, 0, |v| v);
        }
        v.delay(&mut self.d_out);
        v.reg(&mut self.d_tag);
    }
}
