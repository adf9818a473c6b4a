//! The C fetch (scope `mem.c_fetch`): the `ROWS x COLS` words of a tile's C, once its box has
//! landed in a C slot (`c_full` barrier), are read from shared memory into one of two register
//! banks (`c_b<k>_r<i>`), riding along with the consumer's operand reads in the banks those
//! leave free (so a read stays one pass), or all at once in a cycle without an operand read.
//! `c_ready(t)` once every word is there; the window that loads C reads the rows from the
//! bank, and a bank is refilled only after its window has read it (`c_used`).

use super::host::le_u128;
use super::layout::MemLayout;
use super::MAX_REQUEST_LANES;
use crate::hw::config::CoreConfig;
use crate::hw::memory::SmemLane;
use crate::hw::{COLS, ROWS};
use crate::rtl::{Display, Module, Reg, Result as RtlResult, Visitor};

/// Words of a C tile.
const C_WORDS: usize = ROWS * COLS;
/// A bit per word of a C tile.
type WordMask = u16;
const _: () = assert!(C_WORDS <= WordMask::BITS as usize, "a mask bit per C word");
/// Every word of a C tile fetched.
const C_ALL: WordMask = WordMask::MAX >> (WordMask::BITS as usize - C_WORDS);
/// A row of accumulators (C or D) in a register: `COLS` words of up to 32 bits.
pub(super) type AccRow = u128;
const _: () = assert!(
    COLS * 32 <= AccRow::BITS as usize,
    "a row of FP32 words fits"
);
/// C register banks (the tile being fetched and the tile its window reads).
const BANKS: usize = 2;

/// The C fetch (see the module documentation).
pub struct CFetch {
    lay: MemLayout,
    tiles: usize,
    /// C words of the pending read request.
    rq_cmask: Reg<WordMask>,
    /// C words in shared memory's read register this cycle.
    got_cmask: Reg<WordMask>,
    /// The tile whose C is being fetched (every tile before it is in a bank).
    cf_tile: Reg<u32>,
    /// Words of that tile in its bank.
    cf_have: Reg<WordMask>,
    /// Words of that tile asked for.
    cf_asked: Reg<WordMask>,
    /// Tiles whose C a window has read.
    c_used: Reg<u32>,
    /// The banks: bank `k` row `i` at `k * ROWS + i`.
    c_regs: Vec<Reg<AccRow>>,
}

impl CFetch {
    pub(super) fn new(cfg: &CoreConfig, lay: MemLayout, tiles: usize) -> RtlResult<Self> {
        let row_bits = COLS as u32 * cfg.acc.width();
        let reg32 = |name: &'static str| Reg::new(name, 32, 0u32);
        Ok(Self {
            lay,
            tiles,
            rq_cmask: Reg::new("rq_cmask", C_WORDS as u32, 0)?,
            got_cmask: Reg::new("got_cmask", C_WORDS as u32, 0)?,
            cf_tile: reg32("cf_tile")?,
            cf_have: Reg::new("cf_have", C_WORDS as u32, 0)?,
            cf_asked: Reg::new("cf_asked", C_WORDS as u32, 0)?,
            c_used: reg32("c_used")?,
            c_regs: (0..BANKS * ROWS)
                .map(|x| {
                    Ok(
                        Reg::new(format!("c_b{}_r{}", x / ROWS, x % ROWS), row_bits, 0)?
                            .with_display(Display::Filter(cfg.acc.name)),
                    )
                })
                .collect::<RtlResult<_>>()?,
        })
    }

    /// The tile being fetched (every tile before it has its C in a bank).
    pub(super) fn tile(&self) -> usize {
        self.cf_tile.q() as usize
    }

    /// Row `row` of tile `tile`'s C bank.
    pub(super) fn row(&self, tile: usize, row: usize) -> AccRow {
        self.c_regs[(tile % BANKS) * ROWS + row].q()
    }

    /// The words returned last cycle into the bank, from `data` after the operand bytes
    /// (`step_bytes()` of them, asked only when words came back). Returns whether the tile's
    /// C is complete.
    pub(super) fn absorb(&mut self, data: &[u8], step_bytes: impl FnOnce() -> usize) -> bool {
        let got = self.got_cmask.q();
        if got == 0 {
            return false;
        }
        let mut at = step_bytes();
        let t = self.tile();
        let bank = (t % BANKS) * ROWS;
        let mut rows = [0 as AccRow; ROWS];
        for (r, v) in rows.iter_mut().enumerate() {
            *v = self.c_regs[bank + r].q();
        }
        let es = self.lay.esc as usize;
        let bits = 8 * es;
        let mask = (1 as AccRow).wrapping_shl(bits as u32).wrapping_sub(1);
        for w in (0..C_WORDS).filter(|w| got >> w & 1 == 1) {
            let word = le_u128(&data[at..at + es]);
            let (r, col) = (w / COLS, w % COLS);
            rows[r] = (rows[r] & !(mask << (bits * col))) | (word << (bits * col));
            at += es;
        }
        for (r, v) in rows.iter().enumerate() {
            self.c_regs[bank + r].set_d(*v);
        }
        let have = self.cf_have.q() | got;
        if have == C_ALL {
            self.cf_have.set_d(0);
            self.cf_tile.set_d(t as u32 + 1);
            true
        } else {
            self.cf_have.set_d(have);
            false
        }
    }

    /// The shared-memory address of word `w` (row `w / COLS`, column `w % COLS`) of the C
    /// tile being fetched.
    fn word_addr(&self, w: usize) -> u32 {
        self.lay.c_row_addr(self.tile(), w / COLS) + (w % COLS) as u32 * self.lay.esc
    }

    /// Whether the tile being fetched may be: words left to ask, its bank free (the bank held
    /// tile `t - 2`, whose window must have read it) and its box landed (`landed(box)`).
    fn fetchable(&self, landed: impl FnOnce(usize) -> bool) -> bool {
        let t = self.tile();
        if t >= self.tiles || self.cf_asked.q() == C_ALL {
            return false;
        }
        let bank_free = t < BANKS || self.c_used.q() as usize >= t - 1;
        bank_free && landed(self.lay.box_of(t))
    }

    /// The C words to ask in this cycle's read (pushed onto `lanes` after the operand lanes):
    /// the pending request's while it is presented again (`busy`); else, when fetchable,
    /// the words left that fit the request, in banks the operand lanes leave free unless
    /// there is no operand read (`want_ops` false) or the next window waits for this C
    /// (`c_next`), which may then cost a conflict.
    pub(super) fn request(
        &self,
        busy: bool,
        ready_to_work: bool,
        want_ops: bool,
        c_next: Option<usize>,
        landed: impl FnOnce(usize) -> bool,
        lanes: &mut Vec<SmemLane>,
    ) -> WordMask {
        let cmask = if busy {
            self.rq_cmask.q()
        } else if ready_to_work && self.fetchable(landed) {
            let urgent = c_next.is_some_and(|t| t >= self.tile());
            let mut used = 0u32;
            for l in lanes.iter() {
                for w in (l.addr >> 2)..=((l.addr + u32::from(l.len) - 1) >> 2) {
                    used |= 1 << (w % 32);
                }
            }
            let mut m: WordMask = 0;
            let mut room = MAX_REQUEST_LANES.saturating_sub(lanes.len());
            let asked = self.cf_asked.q();
            for w in (0..C_WORDS).filter(|w| asked >> w & 1 == 0) {
                let bank = (self.word_addr(w) >> 2) % 32;
                if room > 0 && (!want_ops || urgent || used >> bank & 1 == 0) {
                    m |= 1 << w;
                    room -= 1;
                }
            }
            m
        } else {
            0
        };
        for w in (0..C_WORDS).filter(|w| cmask >> w & 1 == 1) {
            lanes.push(SmemLane {
                addr: self.word_addr(w),
                len: self.lay.esc as u8,
            });
        }
        cmask
    }

    /// The request's outcome (`accepted` with words `cmask`), the tile completed this cycle,
    /// and a window's read of row `c_read.1` of a tile (row 0 frees the bank).
    pub(super) fn commit(
        &mut self,
        accepted: bool,
        cmask: WordMask,
        complete: bool,
        c_read: Option<(usize, usize)>,
    ) {
        self.rq_cmask.set_d(cmask);
        self.got_cmask.set_d(if accepted { cmask } else { 0 });
        if complete {
            self.cf_asked.set_d(0);
        } else if accepted {
            self.cf_asked.set_d(self.cf_asked.q() | cmask);
        }
        if let Some((_, 0)) = c_read {
            self.c_used.set_d(self.c_used.q() + 1);
        }
    }
}

impl Module for CFetch {
    fn name(&self) -> &str {
        "c_fetch"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.rq_cmask);
        v.reg(&mut self.got_cmask);
        v.reg(&mut self.cf_tile);
        v.reg(&mut self.cf_have);
        v.reg(&mut self.cf_asked);
        v.reg(&mut self.c_used);
        for r in &mut self.c_regs {
            v.reg(r);
        }
    }
}
