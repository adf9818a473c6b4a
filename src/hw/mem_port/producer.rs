//! The producer (scope `mem.producer`): walks the operand chunks in order (tile `t`, K-chunk
//! `q`; chunk `g = t * chunks + q`) and, while fewer than `S` stages are in use, bids for the
//! TMA with the next box of chunk `g`'s load plan into stage `g % S` (the plan's first box
//! carries the `arrive.expect_tx` of all its bytes on the stage's `full` barrier). It also
//! loads each C box ahead into one of the C slots (`c_full` barriers), as far as the slots
//! the C fetch has emptied allow. Like Gemmini's load units, it only issues: the TMA and the
//! barriers tell the consumer when the data is there.

use super::arbiter::{TmaKind, TmaRequest};
use super::layout::{MemLayout, DESC_C};
use crate::hw::memory::{MbarOp, MbarOpKind, TmaCmd, TmaOp};
use crate::rtl::{Module, Reg, Result as RtlResult, Visitor};

/// What the producer needs from the other roles this cycle.
#[derive(Clone, Copy, Debug)]
pub(super) struct ProducerIn {
    /// Chunks the consumer has released (their stages are free again).
    pub released: u32,
    /// The tile the consumer reads next (an A panel is overwritten only once it is past).
    pub read_tile: usize,
    /// The tile whose C the C fetch is reading into its bank (every box before that tile's
    /// has been emptied).
    pub c_fetch_tile: usize,
}

/// The producer (see the module documentation).
pub struct Producer {
    lay: MemLayout,
    /// Tiles of the problem.
    tiles: usize,
    /// Chunks of the problem.
    total_chunks: u32,
    /// The chunk whose boxes are being issued.
    chunk: Reg<u32>,
    /// Dense: the chunk's A box is issued, its B box is next.
    a_sent: Reg<bool>,
    /// Sparse or block-scaled: boxes of the chunk's plan issued.
    boxes_sent: Reg<u8>,
    /// C boxes issued.
    c_boxes: Reg<u32>,
}

impl Producer {
    pub(super) fn new(lay: MemLayout, tiles: usize) -> RtlResult<Self> {
        Ok(Self {
            lay,
            tiles,
            total_chunks: (tiles * lay.chunks) as u32,
            chunk: Reg::new("producer_chunk", 32, 0u32)?,
            a_sent: Reg::new("producer_sub", 1, false)?,
            boxes_sent: Reg::new("producer_part", 3, 0u8)?,
            c_boxes: Reg::new("producer_c", 32, 0u32)?,
        })
    }

    /// Boxes of the current chunk's plan issued (one register or the other, by layout: the
    /// dense plan has at most two boxes).
    fn sent(&self) -> usize {
        if self.lay.multi_part() {
            usize::from(self.boxes_sent.q())
        } else {
            usize::from(self.a_sent.q())
        }
    }

    fn set_sent(&mut self, n: usize) {
        if self.lay.multi_part() {
            self.boxes_sent.set_d(n as u8);
        } else {
            self.a_sent.set_d(n == 1);
        }
    }

    /// The C load bid: box `c_boxes` into its slot, once the slot's last occupant (the box
    /// `tile_slots` before) has been fetched.
    pub(super) fn c_request(
        &self,
        inp: &ProducerIn,
        c_bar: impl Fn(usize) -> usize,
    ) -> Option<TmaRequest> {
        let lay = &self.lay;
        let ct = self.c_boxes.q() as usize;
        if ct >= lay.cd_boxes() {
            return None;
        }
        let fetched = if inp.c_fetch_tile < self.tiles {
            lay.box_of(inp.c_fetch_tile)
        } else {
            lay.cd_boxes()
        };
        if ct.saturating_sub(fetched) >= lay.tile_slots {
            return None;
        }
        let (r0, c0) = lay.box_origin(ct);
        let slot = ct % lay.tile_slots;
        let bar = c_bar(slot);
        Some(TmaRequest {
            cmd: TmaCmd {
                op: TmaOp::Load,
                desc: DESC_C,
                coords: [c0 as i32, r0 as i32, 0, 0, 0],
                smem_addr: lay.c_base + slot as u32 * lay.slot_bytes,
                mbar: bar,
            },
            kind: TmaKind::LoadC,
            expect: Some(MbarOp {
                bar,
                op: MbarOpKind::ArriveExpectTx(lay.cd_box_bytes()),
            }),
        })
    }

    /// The operand load bid: the next box of the current chunk's plan, if its stage is free
    /// (and, for an A panel, the consumer is past the tile row that used it before).
    pub(super) fn operand_request(&self, inp: &ProducerIn) -> Option<TmaRequest> {
        let lay = &self.lay;
        let g = self.chunk.q();
        if g >= self.total_chunks || (g - inp.released) as usize >= lay.stages {
            return None;
        }
        let g = g as usize;
        let plan = lay.load_plan(g);
        let sent = self.sent();
        let bar = g % lay.stages;
        if sent == 0 && plan.loads_a && lay.panel {
            // A panel for row tm overwrites row tm - 2's: the consumer must be past it.
            let tm = g / lay.chunks / lay.tiles_n;
            if tm >= 2 && inp.read_tile < (tm - 1) * lay.tiles_n {
                return None;
            }
        }
        let (cmd, kind) = lay.load_cmd(g, plan.part(sent), bar);
        Some(TmaRequest {
            cmd,
            kind,
            expect: (sent == 0).then_some(MbarOp {
                bar,
                op: MbarOpKind::ArriveExpectTx(plan.tx_bytes),
            }),
        })
    }

    /// The granted command was one of the producer's: advance through the plan, or to the
    /// next C box.
    pub(super) fn granted(&mut self, kind: TmaKind) {
        match kind {
            TmaKind::LoadC => self.c_boxes.set_d(self.c_boxes.q() + 1),
            TmaKind::StoreD => {}
            TmaKind::LoadA | TmaKind::LoadB | TmaKind::LoadE | TmaKind::LoadS => {
                let g = self.chunk.q();
                let sent = self.sent() + 1;
                if sent == self.lay.load_plan(g as usize).boxes {
                    self.set_sent(0);
                    self.chunk.set_d(g + 1);
                } else {
                    self.set_sent(sent);
                }
            }
        }
    }
}

impl Module for Producer {
    fn name(&self) -> &str {
        "producer"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.chunk);
        v.reg(&mut self.a_sent);
        if self.lay.multi_part() {
            v.reg(&mut self.boxes_sent);
        }
        v.reg(&mut self.c_boxes);
    }
}
