//! The C fetch (scope `mem.c_fetch`): the `R x C` words of a tile's C, once its box has
//! landed in a C slot (`c_full` barrier), are read from shared memory into one of two register
//! banks (`c_b<k>_r<i>`), riding along with the consumer's operand reads in the banks those
//! leave free (so a read stays one pass), or as many as a request's 32 lanes take in a cycle
//! without an operand read.
//! `c_ready(t)` once every word is there; the window that loads C reads the rows from the
//! bank, and a bank is refilled only after its window has read it (`c_used`).

use super::config::MAX_REQUEST_LANES;
use super::host::le_word;
use super::layout::MemLayout;
use crate::hw::config::CoreConfig;
use crate::hw::memory::SmemLane;
use crate::rtl::{Display, Module, Reg, Result as RtlResult, Visitor, Wide};

/// A bit per word of a C tile: `R x C` words, at most 1024 (32 x 32).
pub(super) type WordMask = Wide<16>;
/// A row of accumulators (C or D) in a register: `C` words of up to 32 bits, at most 1024
/// bits (32 FP32 words).
pub(super) type AccRow = Wide<16>;

/// Bit `i` of a word mask.
#[inline]
fn bit(m: &WordMask, i: usize) -> bool {
    m.words()[i / 64] >> (i % 64) & 1 == 1
}

/// `m` with bit `i` set.
#[inline]
fn with_bit(mut m: WordMask, i: usize) -> WordMask {
    m.set_field(i, 1, 1);
    m
}

/// The union of two word masks.
#[inline]
fn union(a: &WordMask, b: &WordMask) -> WordMask {
    let mut w = *a.words();
    for (x, y) in w.iter_mut().zip(b.words()) {
        *x |= y;
    }
    WordMask::from_words_array(w)
}

/// The mask of the low `n` words.
fn low_words(n: usize) -> WordMask {
    let mut w = [0u64; 16];
    for (i, x) in w.iter_mut().enumerate() {
        let lo = 64 * i;
        *x = if n >= lo + 64 {
            u64::MAX
        } else if n > lo {
            (1u64 << (n - lo)) - 1
        } else {
            0
        };
    }
    WordMask::from_words_array(w)
}
/// C register banks (the tile being fetched and the tile its window reads).
const BANKS: usize = 2;

/// The C fetch (see the module documentation).
pub struct CFetch {
    lay: MemLayout,
    tiles: usize,
    /// Words of a C tile (`R x C`).
    words: usize,
    /// Every word of a C tile fetched.
    all: WordMask,
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
    /// The banks: bank `k` row `i` at `k * R + i`.
    c_regs: Vec<Reg<AccRow>>,
}

impl CFetch {
    pub(super) fn new(cfg: &CoreConfig, lay: MemLayout, tiles: usize) -> RtlResult<Self> {
        let (rows, cols) = (lay.rows, lay.cols);
        let words = rows * cols;
        debug_assert!(words <= 1024 && cols * cfg.acc.width() as usize <= 1024);
        let row_bits = cols as u32 * cfg.acc.width();
        let reg32 = |name: &'static str| Reg::new(name, 32, 0u32);
        Ok(Self {
            lay,
            tiles,
            words,
            all: low_words(words),
            rq_cmask: Reg::new("rq_cmask", words as u32, WordMask::ZERO)?,
            got_cmask: Reg::new("got_cmask", words as u32, WordMask::ZERO)?,
            cf_tile: reg32("cf_tile")?,
            cf_have: Reg::new("cf_have", words as u32, WordMask::ZERO)?,
            cf_asked: Reg::new("cf_asked", words as u32, WordMask::ZERO)?,
            c_used: reg32("c_used")?,
            c_regs: (0..BANKS * rows)
                .map(|x| {
                    Ok(Reg::new(
                        format!("c_b{}_r{}", x / rows, x % rows),
                        row_bits,
                        AccRow::ZERO,
                    )?
                    .with_display(Display::Filter(cfg.acc.name)))
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
        self.c_regs[(tile % BANKS) * self.lay.rows + row].q()
    }

    /// The words returned last cycle into the bank, from `data` after the operand bytes
    /// (`step_bytes()` of them, asked only when words came back). Returns whether the tile's
    /// C is complete.
    pub(super) fn absorb(&mut self, data: &[u8], step_bytes: impl FnOnce() -> usize) -> bool {
        let got = self.got_cmask.q();
        if got == WordMask::ZERO {
            return false;
        }
        let mut at = step_bytes();
        let t = self.tile();
        let (rows, cols) = (self.lay.rows, self.lay.cols);
        let bank = (t % BANKS) * rows;
        let es = self.lay.esc as usize;
        let bits = 8 * es;
        // Words arrive in word order (row-major), so row by row.
        for (r, reg) in self.c_regs[bank..bank + rows].iter_mut().enumerate() {
            let mut v = reg.q();
            for col in (0..cols).filter(|col| bit(&got, r * cols + col)) {
                let word = le_word(&data[at..at + es]);
                v.set_field(bits * col, bits, word);
                at += es;
            }
            reg.set_d(v);
        }
        let have = union(&self.cf_have.q(), &got);
        if have == self.all {
            self.cf_have.set_d(WordMask::ZERO);
            self.cf_tile.set_d(t as u32 + 1);
            true
        } else {
            self.cf_have.set_d(have);
            false
        }
    }

    /// The shared-memory address of word `w` (row `w / C`, column `w % C`) of the C tile
    /// being fetched.
    fn word_addr(&self, w: usize) -> u32 {
        let cols = self.lay.cols;
        self.lay.c_row_addr(self.tile(), w / cols) + (w % cols) as u32 * self.lay.esc
    }

    /// Whether the tile being fetched may be: words left to ask, its bank free (the bank held
    /// tile `t - 2`, whose window must have read it) and its box landed (`landed(box)`).
    fn fetchable(&self, landed: impl FnOnce(usize) -> bool) -> bool {
        let t = self.tile();
        if t >= self.tiles || self.cf_asked.q() == self.all {
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
            let mut m = WordMask::ZERO;
            let mut room = MAX_REQUEST_LANES.saturating_sub(lanes.len());
            let asked = self.cf_asked.q();
            for w in (0..self.words).filter(|&w| !bit(&asked, w)) {
                if room == 0 {
                    break;
                }
                let bank = (self.word_addr(w) >> 2) % 32;
                if !want_ops || urgent || used >> bank & 1 == 0 {
                    m = with_bit(m, w);
                    room -= 1;
                }
            }
            m
        } else {
            WordMask::ZERO
        };
        for w in (0..self.words).filter(|&w| bit(&cmask, w)) {
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
        self.got_cmask
            .set_d(if accepted { cmask } else { WordMask::ZERO });
        if complete {
            self.cf_asked.set_d(WordMask::ZERO);
        } else if accepted {
            self.cf_asked.set_d(union(&self.cf_asked.q(), &cmask));
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
