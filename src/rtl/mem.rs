//! Memory arrays: the engine's storage primitive ([`Mem`]), an array of fixed-width words with
//! burst write ports committed at the rising edge, a synchronous read port and an asynchronous
//! (register-file) read of the committed contents.

use std::borrow::Cow;

use super::error::Result;
use super::reg::Reg;
use super::value::Value;
use super::wire::Wire;

/// A memory array of `depth` words of type `T` (each `width` bits), with the engine's timing.
///
/// # Ports and timing
/// - **Write** ([`Mem::write`]): during the combinational phase of cycle `t` a block posts a
///   burst of consecutive words (address, data; a burst is the port's *enable*, its length the
///   word enables). The engine commits every burst posted in the cycle at the rising edge that
///   ends cycle `t` (as it commits registers), in posting order, so a later burst to the same
///   word wins. Nothing written in cycle `t` is visible before cycle `t + 1`. A block may post
///   several bursts in one cycle: each one is a write port of the array (the block documents
///   how many ports its hardware has).
/// - **Synchronous read** ([`Mem::read`]): an address and a length presented in cycle `t`;
///   the words are latched at the edge into the read-data register and readable with
///   [`Mem::rdata`] from cycle `t + 1` until the next read. *Read during write*: a read of a word
///   that a write of the same cycle changes returns the **old** word (read-first), because both
///   the write and the read register are updated at the same edge from the array as it was.
/// - **Asynchronous read** ([`Mem::peek`], [`Mem::peek_slice`]): the committed contents, read
///   combinationally like a flip-flop register file (legal under the engine contract: the array
///   only changes at the edge, exactly like a register's `q`).
/// - **Reset** does not clear the contents (an SRAM has no reset); it clears the read-data
///   register. Writes posted while reset is high are still committed.
/// - **Host backdoor** ([`Mem::host_write`], [`Mem::host_read`]): for testbench and host setup
///   between cycles, outside the clocked logic.
///
/// # Tracing
/// The array contents are never dumped. The ports are: `we`, `waddr`, `wlen`, `wdata` (first
/// word of the first burst of the cycle), `re`, `raddr`, `rlen` (wires, driven every cycle: an
/// idle cycle shows `we = re = 0`), and the register `rdata` (the first word of the read data).
/// They appear in a scope named after the memory, inside its owner's scope.
#[derive(Debug, Clone)]
pub struct Mem<T: Value> {
    pub(in crate::rtl) name: Cow<'static, str>,
    words: Vec<T>,
    width: u32,
    /// Posted bursts of this cycle: (address, offset into `pend_data`, length).
    pend: Vec<(usize, usize, usize)>,
    pend_data: Vec<T>,
    /// A pending synchronous read (address, length).
    pend_read: Option<(usize, usize)>,
    rdata_q: Vec<T>,
    // The name and the port signals are the engine's to visit (`impl Module for Mem` in
    // module.rs, beside the visitor that has a pass for memories).
    pub(in crate::rtl) we: Wire<bool>,
    pub(in crate::rtl) waddr: Wire<u32>,
    pub(in crate::rtl) wlen: Wire<u16>,
    pub(in crate::rtl) wdata: Wire<T>,
    pub(in crate::rtl) re: Wire<bool>,
    pub(in crate::rtl) raddr: Wire<u32>,
    pub(in crate::rtl) rlen: Wire<u16>,
    pub(in crate::rtl) rdata: Reg<T>,
}

impl<T: Value> Mem<T> {
    /// A memory named `name` of `depth` words of `width` bits, all zero.
    ///
    /// Fails if `width` is 0 or more than `T` holds.
    pub fn new(name: impl Into<Cow<'static, str>>, depth: usize, width: u32) -> Result<Self> {
        Ok(Self {
            name: name.into(),
            words: vec![T::default(); depth],
            width,
            pend: Vec::new(),
            pend_data: Vec::new(),
            pend_read: None,
            rdata_q: Vec::new(),
            we: Wire::new("we", 1, false)?,
            waddr: Wire::new("waddr", 32, 0)?,
            wlen: Wire::new("wlen", 16, 0)?,
            wdata: Wire::new("wdata", width, T::default())?,
            re: Wire::new("re", 1, false)?,
            raddr: Wire::new("raddr", 32, 0)?,
            rlen: Wire::new("rlen", 16, 0)?,
            rdata: Reg::new("rdata", width, T::default())?,
        })
    }

    /// The number of words.
    pub fn depth(&self) -> usize {
        self.words.len()
    }

    /// Posts a write burst: `data` into words `addr..addr + data.len()`, committed at the next
    /// rising edge. Words are truncated to the width. Words past the end are dropped (the
    /// owning block checks its addresses and reports its own error).
    #[inline]
    pub fn write(&mut self, addr: usize, data: &[T]) {
        let n = data.len().min(self.words.len().saturating_sub(addr));
        if n == 0 {
            return;
        }
        if self.pend.is_empty() {
            self.we.set(true);
            self.waddr.set(addr as u32);
            self.wlen.set(n as u16);
            self.wdata.set(data[0]);
        }
        let off = self.pend_data.len();
        let w = self.width;
        if w >= T::CAPACITY {
            // Words as wide as their type: nothing to mask.
            self.pend_data.extend_from_slice(&data[..n]);
        } else {
            self.pend_data.extend(data[..n].iter().map(|v| v.mask(w)));
        }
        self.pend.push((addr, off, n));
    }

    /// Presents a synchronous read of words `addr..addr + len` (clamped to the array): the
    /// words are in [`Mem::rdata`] from the next cycle on. One read per cycle (the last one
    /// presented wins).
    #[inline]
    pub fn read(&mut self, addr: usize, len: usize) {
        let len = len.min(self.words.len().saturating_sub(addr));
        self.pend_read = Some((addr, len));
        self.re.set(true);
        self.raddr.set(addr as u32);
        self.rlen.set(len as u16);
        let first = if len > 0 {
            self.words[addr]
        } else {
            T::default()
        };
        self.rdata.set_d(first);
    }

    /// The read-data register: the words of the last synchronous read (read-first).
    #[inline]
    pub fn rdata(&self) -> &[T] {
        &self.rdata_q
    }

    /// The committed word at `addr` (an asynchronous register-file read; `T::default()` past
    /// the end).
    #[inline]
    pub fn peek(&self, addr: usize) -> T {
        self.words.get(addr).copied().unwrap_or_default()
    }

    /// The committed words `addr..addr + len`, clamped to the array.
    #[inline]
    pub fn peek_slice(&self, addr: usize, len: usize) -> &[T] {
        let a = addr.min(self.words.len());
        let e = addr.saturating_add(len).min(self.words.len());
        &self.words[a..e]
    }

    /// Host backdoor: writes `data` at `addr` immediately (between cycles; clamped to the array).
    pub fn host_write(&mut self, addr: usize, data: &[T]) {
        let a = addr.min(self.words.len());
        let e = addr.saturating_add(data.len()).min(self.words.len());
        let w = self.width;
        for (dst, src) in self.words[a..e].iter_mut().zip(data) {
            *dst = src.mask(w);
        }
    }

    /// Host backdoor: the committed words `addr..addr + len` (clamped to the array).
    pub fn host_read(&self, addr: usize, len: usize) -> &[T] {
        self.peek_slice(addr, len)
    }

    /// The rising edge: commits the posted bursts and the pending read; clears the port wires
    /// for the next cycle. Returns whether anything changed. Engine-only.
    #[inline]
    pub(in crate::rtl) fn commit(&mut self, rst: bool) -> bool {
        self.commit_as::<true>(rst)
    }

    /// [`Mem::commit`] outside reset without noting whether anything changed (the common
    /// edge: a posted burst is copied without first comparing it with the words it
    /// replaces). Engine-only.
    #[inline]
    pub(in crate::rtl) fn commit_fast(&mut self) {
        self.commit_as::<false>(false);
    }

    /// The edge; with `TRACK`, also whether anything changed.
    #[inline(always)]
    fn commit_as<const TRACK: bool>(&mut self, rst: bool) -> bool {
        let mut changed = false;
        if let Some((addr, len)) = self.pend_read.take() {
            self.rdata_q.clear();
            if !rst {
                self.rdata_q
                    .extend_from_slice(&self.words[addr..addr + len]);
            }
            changed = true;
        } else if rst && !self.rdata_q.is_empty() {
            self.rdata_q.clear();
            changed = true;
        }
        for &(addr, off, n) in &self.pend {
            let src = &self.pend_data[off..off + n];
            let dst = &mut self.words[addr..addr + n];
            if !TRACK {
                dst.copy_from_slice(src);
            } else if dst != src {
                dst.copy_from_slice(src);
                changed = true;
            }
        }
        self.pend.clear();
        self.pend_data.clear();
        self.we.set(false);
        self.re.set(false);
        changed
    }
}
