//! The D store (scope `mem.d_store`): rows leaving the output register are queued (`dq_*`,
//! two tiles of rows) and written one a cycle into one of the D slots in shared memory (one
//! write request: the row's `C` words split at 16-byte chunks, one lane each); once
//! every tile of a slot's box has all its rows written, the box's TMA store is bid for
//! (`producer_stores` counts those issued). `d_ready` reserves a slot and queue room for the
//! next drained tile; the port is finished once every box is stored and no store is in
//! flight.

use super::arbiter::TmaRequest;
use super::c_fetch::AccRow;
use super::layout::{MemLayout, DESC_D};
use crate::hw::config::CoreConfig;
use crate::hw::controller::index_bits;
use crate::hw::core::DRow;
use crate::hw::memory::SmemWriteLane;
use crate::rtl::{Display, Module, Reg, Result as RtlResult, Visitor};

/// The D store (see the module documentation).
pub struct DStore {
    lay: MemLayout,
    acc_bits: usize,
    /// Boxes whose TMA store has been issued.
    stored: Reg<u32>,
    /// Tiles whose drain window has started (their rows are coming).
    d_claimed: Reg<u32>,
    /// Rows queued so far.
    d_rows_in: Reg<u32>,
    /// Rows written into their slots so far.
    d_rows_written: Reg<u32>,
    /// The queue, two tiles' rows deep (`2R`).
    dq: Vec<Reg<AccRow>>,
    dq_head: Reg<u8>,
    dq_count: Reg<u8>,
}

impl DStore {
    pub(super) fn new(cfg: &CoreConfig, lay: MemLayout) -> RtlResult<Self> {
        let row_bits = lay.cols as u32 * cfg.acc.width();
        let depth = 2 * lay.rows;
        let reg32 = |name: &'static str| Reg::new(name, 32, 0u32);
        Ok(Self {
            lay,
            acc_bits: cfg.acc.width() as usize,
            stored: reg32("producer_stores")?,
            d_claimed: reg32("d_claimed")?,
            d_rows_in: reg32("d_rows_in")?,
            d_rows_written: reg32("d_rows_written")?,
            dq: (0..depth)
                .map(|x| {
                    Ok(Reg::new(format!("dq_{x}"), row_bits, AccRow::ZERO)?
                        .with_display(Display::Filter(cfg.acc.name)))
                })
                .collect::<RtlResult<_>>()?,
            dq_head: Reg::new("dq_head", index_bits(depth), 0)?,
            dq_count: Reg::new("dq_count", index_bits(depth + 1), 0)?,
        })
    }

    /// Stores issued.
    pub(super) fn stored(&self) -> u32 {
        self.stored.q()
    }

    /// Whether the next drained tile has a D slot (one its box already holds, or a free one)
    /// and queue room, given the stores `completed`.
    pub(super) fn ready(&self, completed: u32) -> bool {
        let claimed = self.d_claimed.q();
        let in_use = (self.lay.box_of(claimed as usize) as u32).saturating_sub(completed);
        let rows = self.lay.rows;
        let coming = rows as u32 * claimed - self.d_rows_in.q();
        (in_use as usize) < self.lay.tile_slots
            && usize::from(self.dq_count.q()) + coming as usize + rows <= self.dq.len()
    }

    /// Every box stored and the queue empty (the stores in flight are the caller's to check).
    pub(super) fn drained(&self) -> bool {
        self.stored.q() as usize == self.lay.cd_boxes() && self.dq_count.q() == 0
    }

    /// The oldest queued row's write into its slot, as lanes pushed onto `out` (one per
    /// 16-byte chunk the row touches); whether there is one. Rows of a tile drain bottom row
    /// first.
    pub(super) fn write_request(&self, out: &mut Vec<SmemWriteLane>) -> bool {
        if self.dq_count.q() == 0 {
            return false;
        }
        let v = self.dq[usize::from(self.dq_head.q())].q();
        let written = self.d_rows_written.q() as usize;
        let rows = self.lay.rows;
        let (tile, row) = (written / rows, rows - 1 - written % rows);
        let addr = self.lay.d_row_addr(tile, row);
        let bytes = self.lay.cols as u32 * self.lay.esc;
        let mut at = 0u32;
        while at < bytes {
            let a = addr + at;
            let len = (bytes - at).min(16 - a % 16);
            let mut data = [0u8; 16];
            for (x, b) in data.iter_mut().enumerate().take(len as usize) {
                *b = v.field(8 * (at as usize + x), 8) as u8;
            }
            out.push(SmemWriteLane {
                addr: a,
                len: len as u8,
                data,
            });
            at += len;
        }
        true
    }

    /// The store bid: box `producer_stores` once the last of its tiles has all its rows
    /// written.
    pub(super) fn store_request(&self) -> Option<TmaRequest> {
        let lay = &self.lay;
        let tiles_written = self.d_rows_written.q() as usize / lay.rows;
        let ds = self.stored.q() as usize;
        if ds >= lay.cd_boxes() || lay.last_tile_of_box(ds) >= tiles_written {
            return None;
        }
        let (r0, c0) = lay.box_origin(ds);
        Some(TmaRequest::store(
            DESC_D,
            [c0 as i32, r0 as i32, 0, 0, 0],
            lay.d_base + (ds % lay.tile_slots) as u32 * lay.slot_bytes,
        ))
    }

    /// The cycle's outcome: a store granted, the head row written (`written`), a drain window
    /// claimed, a row arriving from the output register.
    pub(super) fn commit(
        &mut self,
        stored: bool,
        written: bool,
        claim: bool,
        row: Option<&DRow<'_>>,
    ) {
        if stored {
            self.stored.set_d(self.stored.q() + 1);
        }
        if claim {
            self.d_claimed.set_d(self.d_claimed.q() + 1);
        }
        let mut head = usize::from(self.dq_head.q());
        let mut count = usize::from(self.dq_count.q());
        if written {
            head = (head + 1) % self.dq.len();
            count -= 1;
            self.d_rows_written.set_d(self.d_rows_written.q() + 1);
        }
        if let Some(row) = row {
            let mut v = AccRow::ZERO;
            for (j, w) in row.values.iter().enumerate() {
                v.set_field(self.acc_bits * j, self.acc_bits, u64::from(*w));
            }
            let tail =
                (usize::from(self.dq_head.q()) + usize::from(self.dq_count.q())) % self.dq.len();
            self.dq[tail].set_d(v);
            count += 1;
            self.d_rows_in.set_d(self.d_rows_in.q() + 1);
        }
        self.dq_head.set_d(head as u8);
        self.dq_count.set_d(count as u8);
    }
}

impl Module for DStore {
    fn name(&self) -> &str {
        "d_store"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.stored);
        v.reg(&mut self.d_claimed);
        v.reg(&mut self.d_rows_in);
        v.reg(&mut self.d_rows_written);
        for r in &mut self.dq {
            v.reg(r);
        }
        v.reg(&mut self.dq_head);
        v.reg(&mut self.dq_count);
    }
}
