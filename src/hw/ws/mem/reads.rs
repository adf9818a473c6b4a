//! The read side of the weight-stationary memory path (scope `mem.consumer`): three streams
//! (four with B's block scales) read from shared memory into queues the core takes from, in
//! the order the controller takes them:
//! - weight rows (`wq_<x>_<j>`, 3 deep): pass `p`'s `R` rows, array row `R - 1` first, each
//!   `w` spans of the stage's `C` columns, once the stage's `full` barrier has completed;
//! - rows of A (`aq_<x>_<i>`, 3 deep): the rows every pass streams, one span of `R * w`
//!   elements each;
//! - rows of C (`cq_<x>_<j>`, `R + L + 4` deep): one per row of each output block, read
//!   ahead; a row of A on its pass's first fold may be fed only when an unclaimed row of C
//!   is queued (`c_claimed` counts those claimed), and the accumulator block takes it `R + L`
//!   cycles later, at the bottom of column 0;
//! - beside a sparse or block-scaled problem's operands: a row of A's side bytes (its fold's
//!   E bits, or its `R` scales) are read in the same request as the row and queued beside it,
//!   one word an array row (`eq_<x>_<i>`: `2w` selects, from bit `got_eshift`; `xaq_<x>_<i>`:
//!   a scale); B's scales are a fourth stream (`xb_rd_pass`, `xb_rd_row`, `xbq_<x>_<j>`), one
//!   row of `C` a weight row, taken with it (a 32-span MX weight row fills a request alone).
//!
//! One read request a cycle carries whichever streams have room and data (weights, then A,
//! then C, then B's scales, within a request's 32 lanes); the data returns in shared memory's
//! read register the next cycle (`got_parts` says whose) and enters the queues at that
//! edge. A request not accepted (a bank conflict's extra pass) is presented again unchanged
//! (`rq_busy`, `rq_parts`).

use super::layout::{push_span, row_done, span_lanes, WsMemLayout, WsOperands, REQUEST_LANES};
use crate::hw::controller::index_bits;
use crate::hw::mem_port::host::{container_shift, lanes_of, le_u128, le_word};
use crate::hw::memory::SmemLane;
use crate::hw::pe::set_lane;
use crate::hw::PIPELINE_LATENCY;
use crate::rtl::{Bundle, Module, Reg, Result as RtlResult, Visitor, Wide};

/// The request part of the weight stream, of the A stream, of the C stream.
pub(super) const PART_W: u8 = 1;
pub(super) const PART_A: u8 = 2;
pub(super) const PART_C: u8 = 4;
/// The request part of B's scales (MX only: a stream of its own, so that a weight row of
/// `w = 32` spans still fits one request).
pub(super) const PART_XB: u8 = 8;

/// Depth of the weight and A queues: a row taken every cycle while the next is in shared
/// memory's read register and the one after is being read.
const QUEUE_DEPTH: usize = 3;

/// A queue of rows held in registers: `depth` entries of `width` words each.
struct RowQueue<T: Bundle + Default> {
    rows: Vec<Vec<Reg<T>>>,
    head: Reg<u8>,
    count: Reg<u8>,
}

impl<T: Bundle + Default> RowQueue<T> {
    fn new(prefix: &str, depth: usize, width: usize, bits: u32) -> RtlResult<Self> {
        Ok(Self {
            rows: (0..depth)
                .map(|x| {
                    (0..width)
                        .map(|j| Reg::new(format!("{prefix}_{x}_{j}"), bits, T::default()))
                        .collect::<RtlResult<_>>()
                })
                .collect::<RtlResult<_>>()?,
            head: Reg::new(format!("{prefix}_head"), index_bits(depth), 0)?,
            count: Reg::new(format!("{prefix}_count"), index_bits(depth + 1), 0)?,
        })
    }

    fn count(&self) -> usize {
        usize::from(self.count.q())
    }

    fn head(&self, j: usize) -> T {
        self.rows[usize::from(self.head.q())][j].q()
    }

    /// The cycle's update: `pop` the head, push `push` (written by the closure) at the tail.
    fn update(&mut self, pop: bool, push: Option<&dyn Fn(usize) -> T>) {
        let depth = self.rows.len();
        let (head, count) = (usize::from(self.head.q()), self.count());
        if let Some(word) = push {
            let tail = (head + count) % depth;
            for (j, r) in self.rows[tail].iter_mut().enumerate() {
                r.set_d(word(j));
            }
        }
        let count = count + usize::from(push.is_some()) - usize::from(pop);
        self.count.set_d(count as u8);
        if pop {
            self.head.set_d(((head + 1) % depth) as u8);
        }
    }

    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for row in &mut self.rows {
            for r in row {
                v.reg(r);
            }
        }
        v.reg(&mut self.head);
        v.reg(&mut self.count);
    }
}

/// The read side (see the module documentation).
pub struct WsReads<const W: usize> {
    lay: WsMemLayout,
    a_bits: u32,
    b_bits: u32,
    /// The next weight row to read: pass, and load cycle `k` (array row `R - 1 - k`).
    w_rd_pass: Reg<u32>,
    w_rd_row: Reg<u32>,
    /// The next row of A to read: pass, row in the pass; A boxes released (read by the
    /// last pass of their band).
    a_rd_pass: Reg<u32>,
    a_rd_row: Reg<u32>,
    a_released: Reg<u32>,
    /// The next row of C to read: output block, row in it, global C box.
    c_rd_block: Reg<u32>,
    c_rd_row: Reg<u32>,
    c_rd_box: Reg<u32>,
    /// The presented request was not accepted: present `rq_parts` again.
    rq_busy: Reg<bool>,
    rq_parts: Reg<u8>,
    /// Whose data is in shared memory's read register this cycle.
    got_parts: Reg<u8>,
    wq: RowQueue<Wide<W>>,
    aq: RowQueue<Wide<W>>,
    cq: RowQueue<u32>,
    /// Queued rows of C claimed by fed rows of A and not yet read by the accumulator.
    c_claimed: Reg<u8>,
    /// Beside the A queue, each queued row's side values per array row (`eq_<x>_<i>`: a
    /// sparse step's selects; `xaq_<x>_<i>`: a K-block's scale of A); beside the weight
    /// queue, each column's scale of B (`xbq_<x>_<j>`, MX). Absent when dense.
    xaq: Option<RowQueue<u64>>,
    xbq: Option<RowQueue<u64>>,
    /// Bits of one array row's side word: `2w` selects, or an 8-bit scale.
    xa_bits: u32,
    /// The first E bit of the arriving row's fold in its first byte (sparse only).
    got_shift: Option<Reg<u8>>,
    /// The next row of B's scales to read (MX only): pass, and load cycle `k` (K-block
    /// `R - 1 - k` of the fold), as the weight rows.
    xb_rd: Option<(Reg<u32>, Reg<u32>)>,
}

/// `n` bits (at most 64) from bit `bit` of little-endian `bytes` (zeros past their end).
fn bits_at(bytes: &[u8], bit: usize, n: u32) -> u64 {
    let from = (bit / 8).min(bytes.len());
    let to = (bit + n as usize).div_ceil(8).clamp(from, bytes.len());
    let v = (le_u128(&bytes[from..to]) >> (bit % 8)) as u64;
    if n >= 64 {
        v
    } else {
        v & ((1u64 << n) - 1)
    }
}

impl<const W: usize> WsReads<W> {
    pub(super) fn new(
        lay: WsMemLayout,
        a_bits: u32,
        b_bits: u32,
        acc_bits: u32,
    ) -> RtlResult<Self> {
        let s = &lay.sched;
        let reg32 = |name: &'static str| Reg::new(name, 32, 0u32);
        let c_depth = s.rows + PIPELINE_LATENCY as usize + 4;
        let (xa_name, xa_bits) = match lay.operands {
            WsOperands::Sparse { .. } => ("eq", 2 * s.width as u32),
            _ => ("xaq", 8),
        };
        let xaq = lay
            .xa
            .map(|_| RowQueue::new(xa_name, QUEUE_DEPTH, s.rows, xa_bits))
            .transpose()?;
        let xbq = lay
            .xb
            .map(|_| RowQueue::new("xbq", QUEUE_DEPTH, s.cols, 8))
            .transpose()?;
        let xb_rd = lay
            .xb
            .map(|_| -> RtlResult<_> {
                Ok((
                    Reg::new("xb_rd_pass", 32, 0)?,
                    Reg::new("xb_rd_row", 32, 0)?,
                ))
            })
            .transpose()?;
        // One bit a stream of the request (B's scales only where there are some).
        let part_bits = if lay.xb.is_some() { 4 } else { 3 };
        let got_shift = match lay.operands {
            WsOperands::Sparse { .. } => Some(Reg::new("got_eshift", 3, 0u8)?),
            _ => None,
        };
        Ok(Self {
            lay,
            a_bits,
            b_bits,
            w_rd_pass: reg32("w_rd_pass")?,
            w_rd_row: reg32("w_rd_row")?,
            a_rd_pass: reg32("a_rd_pass")?,
            a_rd_row: reg32("a_rd_row")?,
            a_released: reg32("a_released")?,
            c_rd_block: reg32("c_rd_block")?,
            c_rd_row: reg32("c_rd_row")?,
            c_rd_box: reg32("c_rd_box")?,
            rq_busy: Reg::new("rq_busy", 1, false)?,
            rq_parts: Reg::new("rq_parts", part_bits, 0)?,
            got_parts: Reg::new("got_parts", part_bits, 0)?,
            wq: RowQueue::new("wq", QUEUE_DEPTH, s.cols, b_bits * lay.w_spans as u32)?,
            aq: RowQueue::new("aq", QUEUE_DEPTH, s.rows, a_bits * W as u32)?,
            cq: RowQueue::new("cq", c_depth, s.cols, acc_bits)?,
            c_claimed: Reg::new("c_claimed", index_bits(c_depth + 1), 0)?,
            xaq,
            xbq,
            xa_bits,
            got_shift,
            xb_rd,
        })
    }

    /// A weight row is queued (and, for MX, its row of B's scales).
    pub(super) fn w_ready(&self) -> bool {
        self.wq.count() > 0 && self.xbq.as_ref().is_none_or(|q| q.count() > 0)
    }

    /// A row of A is queued, and with it an unclaimed row of C if `first`.
    pub(super) fn a_ready(&self, first: bool) -> bool {
        self.aq.count() > 0 && (!first || self.cq.count() > usize::from(self.c_claimed.q()))
    }

    /// Column `j` of the queued weight row.
    pub(super) fn w_head(&self, j: usize) -> Wide<W> {
        self.wq.head(j)
    }

    /// Array row `i`'s lanes of the queued row of A.
    pub(super) fn a_head(&self, i: usize) -> Wide<W> {
        self.aq.head(i)
    }

    /// Array row `i`'s side word beside the queued row of A (0 when dense).
    pub(super) fn xa_head(&self, i: usize) -> u64 {
        self.xaq.as_ref().map_or(0, |q| q.head(i))
    }

    /// Column `j`'s side word beside the queued weight row (0 unless MX).
    pub(super) fn xb_head(&self, j: usize) -> u64 {
        self.xbq.as_ref().map_or(0, |q| q.head(j))
    }

    /// Column `j` of the queued row of C, if one is queued.
    pub(super) fn c_head(&self, j: usize) -> Option<u32> {
        (self.cq.count() > 0).then(|| self.cq.head(j))
    }

    /// Weight passes whose every row (and row of B's scales) has been read (their stages
    /// are free).
    pub(super) fn w_passes_read(&self) -> usize {
        let w = self.w_rd_pass.q() as usize;
        self.xb_rd
            .as_ref()
            .map_or(w, |(p, _)| w.min(p.q() as usize))
    }

    /// A boxes whose every row has been read by every pass that reads it.
    pub(super) fn a_boxes_read(&self) -> usize {
        self.a_released.q() as usize
    }

    /// C boxes whose every row has been read.
    pub(super) fn c_boxes_read(&self) -> usize {
        self.c_rd_box.q() as usize
    }

    /// The A box and shared-memory address of the next row of A to read (of pass `p`).
    fn a_addr(&self, p: usize) -> (usize, u32) {
        let lay = &self.lay;
        let row = self.a_rd_row.q() as usize;
        let (g, offset) = lay.a_box(p, row);
        (g, lay.a_row_addr(g, row % lay.a_box_rows) + offset)
    }

    /// The shared-memory address and first bit of the next row of A's side values (of pass
    /// `p`), if any.
    fn xa_addr(&self, p: usize) -> Option<(u32, u32)> {
        let lay = &self.lay;
        let row = self.a_rd_row.q() as usize;
        let (g, _) = lay.a_box(p, row);
        lay.xa_read_at(g, row % lay.a_box_rows, p)
    }

    /// Lanes the next row of A takes with its side values (of pass `p`).
    fn a_lanes(&self, p: usize, addr: u32) -> usize {
        let lay = &self.lay;
        span_lanes(addr, lay.a_span())
            + self
                .xa_addr(p)
                .zip(lay.xa)
                .map_or(0, |((x, _), r)| span_lanes(x, r.read))
    }

    /// This cycle's read request into `lanes`: the parts it carries (0: none). `full((bar,
    /// parity))` is the barrier test (`try_wait.parity`).
    pub(super) fn request(
        &self,
        ready: bool,
        full: impl Fn((usize, bool)) -> bool,
        lanes: &mut Vec<SmemLane>,
    ) -> u8 {
        if !ready {
            return 0;
        }
        let lay = &self.lay;
        let s = &lay.sched;
        let got = self.got_parts.q();
        let parts = if self.rq_busy.q() {
            self.rq_parts.q()
        } else {
            let room = |q: usize, depth: usize, part: u8| q + usize::from(got & part != 0) < depth;
            let mut parts = 0;
            let mut used = 0;
            let (wp, ap) = (self.w_rd_pass.q() as usize, self.a_rd_pass.q() as usize);
            let w_lanes = lay.w_read_lanes();
            if wp < lay.passes()
                && room(self.wq.count(), QUEUE_DEPTH, PART_W)
                && full(lay.w_bar(wp))
            {
                parts |= PART_W;
                used += w_lanes;
            }
            let a_lanes = (ap < lay.passes()).then(|| {
                let (g, addr) = self.a_addr(ap);
                (g, self.a_lanes(ap, addr))
            });
            if let Some((g, n)) = a_lanes {
                if used + n <= REQUEST_LANES
                    && room(self.aq.count(), QUEUE_DEPTH, PART_A)
                    && full(lay.a_bar(g))
                {
                    parts |= PART_A;
                    used += n;
                }
            }
            let gc = self.c_rd_box.q() as usize;
            if (self.c_rd_block.q() as usize) < lay.blocks()
                && used + span_lanes(0, lay.cd_span()) <= REQUEST_LANES
                && room(self.cq.count(), self.cq.rows.len(), PART_C)
                && full(lay.c_bar(gc))
            {
                parts |= PART_C;
                used += span_lanes(0, lay.cd_span());
            }
            if let (Some((xp, xk)), Some(q), Some(x)) = (&self.xb_rd, &self.xbq, lay.xb) {
                let xp = xp.q() as usize;
                let addr = lay.xb_row_addr(xp, s.rows - 1 - xk.q() as usize);
                if xp < lay.passes()
                    && used + span_lanes(addr.unwrap_or(0), x.read) <= REQUEST_LANES
                    && room(q.count(), QUEUE_DEPTH, PART_XB)
                    && full(lay.w_bar(xp))
                {
                    parts |= PART_XB;
                }
            }
            parts
        };
        if parts & PART_W != 0 {
            let (p, k) = (self.w_rd_pass.q() as usize, self.w_rd_row.q() as usize);
            // Load cycle `k` fills array row `i = R - 1 - k`: K rows `i * w ..` of the fold's
            // tile (for a sparse A, the dense rows of its kept values' groups).
            let i = s.rows - 1 - k;
            let r0 = lay.w_tile_row(s.pass(p).fold, i);
            for l in 0..lay.w_spans {
                push_span(lanes, lay.w_row_addr(p, r0 + l), lay.w_span());
            }
        }
        if parts & PART_A != 0 {
            let p = self.a_rd_pass.q() as usize;
            let (_, addr) = self.a_addr(p);
            push_span(lanes, addr, lay.a_span());
            if let (Some((addr, _)), Some(x)) = (self.xa_addr(p), lay.xa) {
                push_span(lanes, addr, x.read);
            }
        }
        if parts & PART_C != 0 {
            let g = self.c_rd_box.q() as usize;
            let r = self.c_rd_row.q() as usize % lay.cd_box_rows;
            push_span(lanes, lay.c_row_addr(g, r), lay.cd_span());
        }
        if let (Some((p, k)), Some(x), true) = (&self.xb_rd, lay.xb, parts & PART_XB != 0) {
            // B's scales of K-block `R - 1 - k` of pass `p`'s fold, one a column.
            let i = s.rows - 1 - k.q() as usize;
            let addr = lay.xb_row_addr(p.q() as usize, i).unwrap_or(0);
            push_span(lanes, addr, x.read);
        }
        parts
    }

    /// The cycle's outcome: the request's `parts` accepted or not; the core took a weight
    /// row (`w_pop`), a row of A (`a_pop`, claiming a row of C if `claim_c`), and the
    /// accumulator read a row of C (`c_pop`); `data` is shared memory's read register
    /// (this cycle's arrivals, `got_parts`).
    #[allow(clippy::too_many_arguments)] // one cycle's handshake of three streams
    pub(super) fn commit(
        &mut self,
        parts: u8,
        accepted: bool,
        data: &[u8],
        w_pop: bool,
        a_pop: bool,
        claim_c: bool,
        c_pop: bool,
    ) {
        let lay = self.lay;
        let s = lay.sched;
        let got = self.got_parts.q();
        // Arrivals: the parts of last cycle's read, in request order.
        let mut off = 0;
        let (xa_read, xb_read) = (
            lay.xa.map_or(0, |x| x.read as usize),
            lay.xb.map_or(0, |x| x.read as usize),
        );
        let (w_bytes, a_bytes) = (
            lay.w_spans * lay.w_span() as usize,
            lay.a_span() as usize + xa_read,
        );
        let w_push = if got & PART_W != 0 {
            let bytes = &data[off..off + w_bytes];
            off += w_bytes;
            Some(bytes)
        } else {
            None
        };
        let a_push = if got & PART_A != 0 {
            let bytes = &data[off..off + a_bytes];
            off += a_bytes;
            Some(bytes)
        } else {
            None
        };
        let c_push = (got & PART_C != 0).then(|| {
            let bytes = &data[off..off + lay.cd_span() as usize];
            off += bytes.len();
            bytes
        });
        let xb_push = (got & PART_XB != 0).then(|| &data[off..off + xb_read]);
        let (esa, esb, esc) = (lay.esa, lay.esb, lay.esc as usize);
        let (a_bits, b_bits, width) = (self.a_bits, self.b_bits, s.width);
        let (w_span, w_spans) = (lay.w_span() as usize, lay.w_spans);
        let w_word = w_push.map(|bytes| {
            move |j: usize| {
                let mut words = Wide::<W>::ZERO;
                let shift = container_shift(esb, b_bits);
                for l in 0..w_spans {
                    let at = l * w_span + j * esb as usize;
                    let v = le_word(&bytes[at..at + esb as usize]) >> shift;
                    set_lane(&mut words, l, b_bits, v);
                }
                words
            }
        });
        self.wq.update(
            w_pop,
            w_word.as_ref().map(|f| f as &dyn Fn(usize) -> Wide<W>),
        );
        // B's scales, taken with their weight row: column `j`'s byte.
        if let Some(q) = self.xbq.as_mut() {
            let word = xb_push.map(|bytes| move |j: usize| u64::from(bytes[j]));
            q.update(w_pop, word.as_ref().map(|f| f as &dyn Fn(usize) -> u64));
        }
        // The row of A's side values after its elements: array row `i`'s selects (2w bits
        // from the fold's first bit) or its K-block's scale byte.
        if let Some(q) = self.xaq.as_mut() {
            let at = lay.a_span() as usize;
            let shift = self.got_shift.as_ref().map_or(0, |r| usize::from(r.q()));
            let xa_bits = self.xa_bits;
            let word = a_push.map(|bytes| {
                move |i: usize| bits_at(&bytes[at..], shift + i * xa_bits as usize, xa_bits)
            });
            q.update(a_pop, word.as_ref().map(|f| f as &dyn Fn(usize) -> u64));
        }
        let a_word = a_push.map(|bytes| {
            move |i: usize| lanes_of::<W>(&bytes[i * width * esa as usize..], esa, a_bits, width)
        });
        self.aq.update(
            a_pop,
            a_word.as_ref().map(|f| f as &dyn Fn(usize) -> Wide<W>),
        );
        let c_word =
            c_push.map(|bytes| move |j: usize| le_word(&bytes[j * esc..(j + 1) * esc]) as u32);
        self.cq
            .update(c_pop, c_word.as_ref().map(|f| f as &dyn Fn(usize) -> u32));
        let claimed = usize::from(self.c_claimed.q()) + usize::from(claim_c) - usize::from(c_pop);
        self.c_claimed.set_d(claimed as u8);

        // The request: presented again if not accepted, else the streams advance.
        // The fold's first E bit travels with its read (sparse: a fold may start mid-byte).
        let shift = if accepted && parts & PART_A != 0 {
            self.xa_addr(self.a_rd_pass.q() as usize)
                .map_or(0, |(_, bit)| bit)
        } else {
            0
        };
        if let Some(r) = self.got_shift.as_mut() {
            r.set_d(shift as u8);
        }
        self.rq_busy.set_d(parts != 0 && !accepted);
        self.rq_parts.set_d(if accepted { 0 } else { parts });
        self.got_parts.set_d(if accepted { parts } else { 0 });
        if !accepted {
            return;
        }
        if parts & PART_W != 0 {
            let k = self.w_rd_row.q() as usize + 1;
            if k == s.rows {
                self.w_rd_row.set_d(0);
                self.w_rd_pass.set_d(self.w_rd_pass.q() + 1);
            } else {
                self.w_rd_row.set_d(k as u32);
            }
        }
        if parts & PART_A != 0 {
            let p = self.a_rd_pass.q() as usize;
            let r = self.a_rd_row.q() as usize + 1;
            let (box_done, pass_done) = row_done(r, s.pass(p).rows, lay.a_box_rows);
            if box_done && lay.releases_band(p) {
                self.a_released.set_d(self.a_released.q() + 1);
            }
            if pass_done {
                self.a_rd_row.set_d(0);
                self.a_rd_pass.set_d(p as u32 + 1);
            } else {
                self.a_rd_row.set_d(r as u32);
            }
        }
        if parts & PART_C != 0 {
            let b = self.c_rd_block.q() as usize;
            let r = self.c_rd_row.q() as usize + 1;
            let (box_done, block_done) = row_done(r, lay.block_rows(b), lay.cd_box_rows);
            if box_done {
                self.c_rd_box.set_d(self.c_rd_box.q() + 1);
            }
            if block_done {
                self.c_rd_row.set_d(0);
                self.c_rd_block.set_d(b as u32 + 1);
            } else {
                self.c_rd_row.set_d(r as u32);
            }
        }
        if let Some((p, k)) = self.xb_rd.as_mut().filter(|_| parts & PART_XB != 0) {
            let next = k.q() as usize + 1;
            if next == s.rows {
                k.set_d(0);
                p.set_d(p.q() + 1);
            } else {
                k.set_d(next as u32);
            }
        }
    }
}

impl<const W: usize> Module for WsReads<W> {
    fn name(&self) -> &str {
        "consumer"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.w_rd_pass);
        v.reg(&mut self.w_rd_row);
        v.reg(&mut self.a_rd_pass);
        v.reg(&mut self.a_rd_row);
        v.reg(&mut self.a_released);
        v.reg(&mut self.c_rd_block);
        v.reg(&mut self.c_rd_row);
        v.reg(&mut self.c_rd_box);
        v.reg(&mut self.rq_busy);
        v.reg(&mut self.rq_parts);
        v.reg(&mut self.got_parts);
        self.wq.visit(v);
        self.aq.visit(v);
        self.cq.visit(v);
        v.reg(&mut self.c_claimed);
        if let Some(q) = self.xaq.as_mut() {
            q.visit(v);
        }
        if let Some(q) = self.xbq.as_mut() {
            q.visit(v);
        }
        if let Some(r) = self.got_shift.as_mut() {
            v.reg(r);
        }
        if let Some((p, k)) = self.xb_rd.as_mut() {
            v.reg(p);
            v.reg(k);
        }
    }
}
