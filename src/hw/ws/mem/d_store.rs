//! The D store of the weight-stationary memory path (scope `mem.d_store`): rows of D leave
//! the output register in the order their rows of A were fed on the last fold, into a queue
//! (`dq_<x>_<j>`, `R + L + C + 4` deep); the head row is written, one a cycle, into its D
//! slot in shared memory once the slot's previous box has been stored; a box whose rows are
//! all written is stored by TMA. A row of A on its last fold may be fed only while the rows
//! claimed and not yet written fit the queue (`d_claimed`, `d_written`), so a row never
//! finds the queue full.

use super::layout::{row_done, WsMemLayout, CD_SLOTS, DESC_D};
use crate::hw::controller::index_bits;
use crate::hw::core::DRow;
use crate::hw::mem_port::TmaRequest;
use crate::hw::memory::SmemWriteLane;
use crate::hw::PIPELINE_LATENCY;
use crate::rtl::{Module, Reg, Result as RtlResult, Visitor};

/// The D store (see the module documentation).
pub struct WsDStore {
    lay: WsMemLayout,
    /// Rows fed on their last fold (their D is coming) and rows written to their slots.
    d_claimed: Reg<u32>,
    d_written: Reg<u32>,
    /// The next row to write: output block, row in it, global D box.
    dw_block: Reg<u32>,
    dw_row: Reg<u32>,
    dw_box: Reg<u32>,
    /// Boxes whose TMA store has been issued.
    d_stored: Reg<u32>,
    dq: Vec<Vec<Reg<u32>>>,
    dq_head: Reg<u8>,
    dq_count: Reg<u8>,
}

impl WsDStore {
    pub(super) fn new(lay: WsMemLayout, acc_bits: u32) -> RtlResult<Self> {
        let s = &lay.sched;
        let depth = s.rows + PIPELINE_LATENCY as usize + s.cols + 4;
        let reg32 = |name: &'static str| Reg::new(name, 32, 0u32);
        Ok(Self {
            lay,
            d_claimed: reg32("d_claimed")?,
            d_written: reg32("d_written")?,
            dw_block: reg32("dw_block")?,
            dw_row: reg32("dw_row")?,
            dw_box: reg32("dw_box")?,
            d_stored: reg32("producer_stores")?,
            dq: (0..depth)
                .map(|x| {
                    (0..s.cols)
                        .map(|j| Reg::new(format!("dq_{x}_{j}"), acc_bits, 0u32))
                        .collect::<RtlResult<_>>()
                })
                .collect::<RtlResult<_>>()?,
            dq_head: Reg::new("dq_head", index_bits(depth), 0)?,
            dq_count: Reg::new("dq_count", index_bits(depth + 1), 0)?,
        })
    }

    /// Room for one more claimed row.
    pub(super) fn room(&self) -> bool {
        ((self.d_claimed.q() - self.d_written.q()) as usize) < self.dq.len()
    }

    /// Stores issued.
    pub(super) fn stored(&self) -> u32 {
        self.d_stored.q()
    }

    /// Every row written and every box's store issued.
    pub(super) fn drained(&self) -> bool {
        self.d_written.q() as usize == self.lay.d_rows()
            && self.d_stored.q() as usize == self.lay.cd_boxes()
    }

    /// The head row's write into its slot, once the slot is free (`completed` stores).
    pub(super) fn write_request(&self, completed: u32, out: &mut Vec<SmemWriteLane>) -> bool {
        out.clear();
        if self.dq_count.q() == 0 {
            return false;
        }
        let g = self.dw_box.q();
        if g >= completed + CD_SLOTS as u32 {
            return false;
        }
        let lay = &self.lay;
        let es = lay.esc as usize;
        let row = &self.dq[usize::from(self.dq_head.q())];
        let addr = lay.d_row_addr(g as usize, self.dw_row.q() as usize % lay.cd_box_rows);
        // The row's words, little-endian, in lanes of up to 16 bytes.
        for (x, words) in row.chunks(16 / es).enumerate() {
            let mut data = [0u8; 16];
            for (y, r) in words.iter().enumerate() {
                data[y * es..(y + 1) * es].copy_from_slice(&r.q().to_le_bytes()[..es]);
            }
            out.push(SmemWriteLane {
                addr: addr + 16 * x as u32,
                len: (words.len() * es) as u8,
                data,
            });
        }
        true
    }

    /// The store bid: box `producer_stores` once every row of it is written.
    pub(super) fn store_request(&self) -> Option<TmaRequest> {
        let lay = &self.lay;
        let g = self.d_stored.q() as usize;
        if g >= lay.cd_boxes() || g >= self.dw_box.q() as usize {
            return None;
        }
        Some(TmaRequest::store(
            DESC_D,
            lay.cd_coords(g),
            lay.d_row_addr(g, 0),
        ))
    }

    /// The cycle's outcome: a store granted, the head row written, a row claimed by a feed,
    /// a row arriving from the output register.
    pub(super) fn commit(
        &mut self,
        stored: bool,
        written: bool,
        claim: bool,
        row: Option<&DRow<'_>>,
    ) {
        if stored {
            self.d_stored.set_d(self.d_stored.q() + 1);
        }
        if claim {
            self.d_claimed.set_d(self.d_claimed.q() + 1);
        }
        let depth = self.dq.len();
        let (head, count) = (
            usize::from(self.dq_head.q()),
            usize::from(self.dq_count.q()),
        );
        if let Some(row) = row {
            let tail = (head + count) % depth;
            for (r, &v) in self.dq[tail].iter_mut().zip(row.values.iter()) {
                r.set_d(v);
            }
        }
        let count = count + usize::from(row.is_some()) - usize::from(written);
        self.dq_count.set_d(count as u8);
        if written {
            self.dq_head.set_d(((head + 1) % depth) as u8);
            self.d_written.set_d(self.d_written.q() + 1);
            let lay = &self.lay;
            let b = self.dw_block.q() as usize;
            let r = self.dw_row.q() as usize + 1;
            let (box_done, block_done) = row_done(r, lay.block_rows(b), lay.cd_box_rows);
            if box_done {
                self.dw_box.set_d(self.dw_box.q() + 1);
            }
            if block_done {
                self.dw_row.set_d(0);
                self.dw_block.set_d(b as u32 + 1);
            } else {
                self.dw_row.set_d(r as u32);
            }
        }
    }
}

impl Module for WsDStore {
    fn name(&self) -> &str {
        "d_store"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.d_claimed);
        v.reg(&mut self.d_written);
        v.reg(&mut self.dw_block);
        v.reg(&mut self.dw_row);
        v.reg(&mut self.dw_box);
        v.reg(&mut self.d_stored);
        for row in &mut self.dq {
            for r in row {
                v.reg(r);
            }
        }
        v.reg(&mut self.dq_head);
        v.reg(&mut self.dq_count);
    }
}
