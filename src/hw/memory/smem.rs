//! [`SharedMemory`] (scope `smem`): banked shared memory with one read and one write port, the
//! bank-conflict rule ([`bank_passes`]) and its counters.

use crate::rtl::{Mem, Module, Reg, Result, Visitor, Wire};

/// Most lanes in one shared-memory request (a warp's 32 threads).
pub const MAX_LANES: usize = 32;
/// Banks.
pub const BANKS: u32 = 32;

/// One lane of a shared-memory read: `len` (1..=16) bytes at physical byte address `addr`,
/// inside one 16-byte-aligned chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SmemLane {
    /// Physical byte address.
    pub addr: u32,
    /// Bytes, 1..=16, not crossing a 16-byte boundary.
    pub len: u8,
}

/// One lane of a shared-memory write: `data[..len]` to physical byte address `addr` (same
/// rules as [`SmemLane`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SmemWriteLane {
    /// Physical byte address.
    pub addr: u32,
    /// Bytes, 1..=16, not crossing a 16-byte boundary.
    pub len: u8,
    /// The bytes (`data[..len]` are written).
    pub data: [u8; 16],
}

/// The number of passes (cycles) one request takes: the largest number of *distinct* 32-bit
/// words asked of any one bank (bank = `(addr >> 2) & 31`); lanes asking for the same word
/// share it (broadcast). Each lane is `(addr, len)`; an empty request takes 0 passes.
pub fn bank_passes(lanes: impl IntoIterator<Item = (u32, u32)> + Clone) -> u32 {
    // Fast path: every bank asked for at most one distinct word (the conflict-free requests
    // a swizzled layout makes) is one pass; otherwise count per bank below.
    let mut first = [u32::MAX; BANKS as usize];
    let mut any = false;
    let mut simple = true;
    'fast: for (addr, len) in lanes.clone() {
        if len == 0 {
            continue;
        }
        for w in (addr >> 2)..=((addr + len - 1) >> 2) {
            any = true;
            let b = (w % BANKS) as usize;
            if first[b] == u32::MAX {
                first[b] = w;
            } else if first[b] != w {
                simple = false;
                break 'fast;
            }
        }
    }
    if simple {
        return u32::from(any);
    }
    let mut words = [0u32; MAX_LANES * 5];
    let mut n = 0;
    for (addr, len) in lanes {
        if len == 0 {
            continue;
        }
        let first = addr >> 2;
        let last = (addr + len - 1) >> 2;
        for w in first..=last {
            if n < words.len() {
                words[n] = w;
                n += 1;
            }
        }
    }
    let words = &mut words[..n];
    words.sort_unstable();
    let mut per_bank = [0u32; BANKS as usize];
    let mut prev = None;
    for &w in words.iter() {
        if prev != Some(w) {
            per_bank[(w % BANKS) as usize] += 1;
            prev = Some(w);
        }
    }
    per_bank.into_iter().max().unwrap_or(0)
}

/// A malformed shared-memory request (a design bug of the requester).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmemFault {
    /// More than [`MAX_LANES`] lanes.
    TooManyLanes(usize),
    /// A lane of length 0 or above 16, or crossing a 16-byte boundary.
    BadLane {
        /// Its address.
        addr: u32,
        /// Its length.
        len: u8,
    },
    /// A lane past the end of shared memory.
    OutOfRange {
        /// Its address.
        addr: u32,
    },
}

/// What shared memory answers in one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SmemOut {
    /// The read request is accepted this cycle (its last pass).
    pub read_ready: bool,
    /// The write request is accepted this cycle (its last pass): its bytes are in the array
    /// from the next cycle on.
    pub write_ready: bool,
    /// A malformed request (the request is dropped).
    pub fault: Option<SmemFault>,
}

/// Banked shared memory (scope `smem`).
///
/// # Ports and timing
/// One read port and one write port, used in the same cycle independently (a dual-port
/// simplification: real shared memory has one port serving 128 B per clock). A request is a
/// list of at most 32 lanes ([`SmemLane`], [`SmemWriteLane`]) at physical byte addresses.
/// - A request of cost `p = bank_passes(lanes)` occupies its port for `p` cycles: the
///   requester holds the same request (`valid`) until `ready`, which is high on the last pass
///   (so a conflict-free request is accepted in the cycle it is presented). Each accepted
///   request adds `p - 1` to `bank_conflicts`.
/// - The whole request takes effect at its accepting edge: a write's bytes are committed
///   there (visible from the next cycle), a read's bytes are sampled there into the read-data
///   register and are readable with [`SharedMemory::read_data`] from the next cycle until the
///   next accepted read.
/// - Read during write: a read and a write accepted in the same cycle at the same bytes read
///   the **old** bytes.
/// - The contents are not cleared by reset.
///
/// Traced: `rd_valid`, `rd_ready`, `rd_pass`, `rd_passes`, `wr_valid`, `wr_ready`, `wr_pass`,
/// `wr_passes`, `conflict` (a presented request needs more than one pass), the counters
/// `bank_conflicts`, `reads`, `writes`, and the ports of the arrays `array` and `rdata_buf`.
pub struct SharedMemory {
    array: Mem<u8>,
    rbuf: Mem<u8>,
    rd_pass: Reg<u8>,
    wr_pass: Reg<u8>,
    rd_data_valid: Reg<bool>,
    rd_data_len: Reg<u16>,
    bank_conflicts: Reg<u64>,
    reads: Reg<u64>,
    writes: Reg<u64>,
    rd_valid: Wire<bool>,
    rd_ready: Wire<bool>,
    rd_passes: Wire<u8>,
    wr_valid: Wire<bool>,
    wr_ready: Wire<bool>,
    wr_passes: Wire<u8>,
    conflict: Wire<bool>,
    gather: Vec<u8>,
}

impl SharedMemory {
    /// Shared memory of `bytes` bytes (all zero).
    pub fn new(bytes: u32) -> Result<Self> {
        Ok(Self {
            array: Mem::new("array", bytes as usize, 8)?,
            rbuf: Mem::new("rdata_buf", MAX_LANES * 16, 8)?,
            rd_pass: Reg::new("rd_pass", 6, 0)?,
            wr_pass: Reg::new("wr_pass", 6, 0)?,
            rd_data_valid: Reg::new("rd_data_valid", 1, false)?,
            rd_data_len: Reg::new("rd_data_len", 10, 0)?,
            bank_conflicts: Reg::new("bank_conflicts", 64, 0)?,
            reads: Reg::new("reads", 64, 0)?,
            writes: Reg::new("writes", 64, 0)?,
            rd_valid: Wire::new("rd_valid", 1, false)?,
            rd_ready: Wire::new("rd_ready", 1, false)?,
            rd_passes: Wire::new("rd_passes", 6, 0)?,
            wr_valid: Wire::new("wr_valid", 1, false)?,
            wr_ready: Wire::new("wr_ready", 1, false)?,
            wr_passes: Wire::new("wr_passes", 6, 0)?,
            conflict: Wire::new("conflict", 1, false)?,
            gather: Vec::with_capacity(MAX_LANES * 16),
        })
    }

    /// Size in bytes.
    pub fn bytes(&self) -> u32 {
        self.array.depth() as u32
    }

    fn check(&self, lanes: impl Iterator<Item = (u32, u8)>, n: usize) -> Option<SmemFault> {
        if n > MAX_LANES {
            return Some(SmemFault::TooManyLanes(n));
        }
        for (addr, len) in lanes {
            if len == 0 || len > 16 || (addr & 15) + u32::from(len) > 16 {
                return Some(SmemFault::BadLane { addr, len });
            }
            if addr as usize + len as usize > self.array.depth() {
                return Some(SmemFault::OutOfRange { addr });
            }
        }
        None
    }

    /// One cycle: serves (one pass of) the presented read and write requests. Reads only
    /// registers and the committed array.
    pub fn comb(&mut self, read: Option<&[SmemLane]>, write: Option<&[SmemWriteLane]>) -> SmemOut {
        let mut out = SmemOut::default();
        let mut conflicts = self.bank_conflicts.q();
        let mut conflict = false;
        self.rd_valid.set(read.is_some());
        self.wr_valid.set(write.is_some());
        self.rd_data_valid.set_d(false);
        match read {
            Some(lanes) => {
                out.fault = self.check(lanes.iter().map(|l| (l.addr, l.len)), lanes.len());
                let p = bank_passes(lanes.iter().map(|l| (l.addr, u32::from(l.len)))).max(1);
                self.rd_passes.set(p as u8);
                conflict |= p > 1;
                if out.fault.is_none() && u32::from(self.rd_pass.q()) + 1 >= p {
                    out.read_ready = true;
                    self.rd_pass.set_d(0);
                    conflicts += u64::from(p - 1);
                    self.gather.clear();
                    for l in lanes {
                        let s = self.array.peek_slice(l.addr as usize, l.len as usize);
                        self.gather.extend_from_slice(s);
                    }
                    self.rbuf.write(0, &self.gather);
                    self.rd_data_valid.set_d(true);
                    self.rd_data_len.set_d(self.gather.len() as u16);
                    self.reads.set_d(self.reads.q() + 1);
                } else if out.fault.is_none() {
                    self.rd_pass.set_d(self.rd_pass.q() + 1);
                }
            }
            None => {
                self.rd_passes.set(0);
                self.rd_pass.set_d(0);
            }
        }
        match write {
            Some(lanes) => {
                let wf = self.check(lanes.iter().map(|l| (l.addr, l.len)), lanes.len());
                let ok = wf.is_none();
                if out.fault.is_none() {
                    out.fault = wf;
                }
                let p = bank_passes(lanes.iter().map(|l| (l.addr, u32::from(l.len)))).max(1);
                self.wr_passes.set(p as u8);
                conflict |= p > 1;
                if ok && u32::from(self.wr_pass.q()) + 1 >= p {
                    out.write_ready = true;
                    self.wr_pass.set_d(0);
                    conflicts += u64::from(p - 1);
                    for l in lanes {
                        self.array.write(l.addr as usize, &l.data[..l.len as usize]);
                    }
                    self.writes.set_d(self.writes.q() + 1);
                } else if ok {
                    self.wr_pass.set_d(self.wr_pass.q() + 1);
                }
            }
            None => {
                self.wr_passes.set(0);
                self.wr_pass.set_d(0);
            }
        }
        self.rd_ready.set(out.read_ready);
        self.wr_ready.set(out.write_ready);
        self.conflict.set(conflict);
        self.bank_conflicts.set_d(conflicts);
        out
    }

    /// The read-data register: the bytes of the read accepted in the previous cycle, lanes
    /// concatenated in request order; `None` if no read was accepted then.
    pub fn read_data(&self) -> Option<&[u8]> {
        self.rd_data_valid
            .q()
            .then(|| self.rbuf.peek_slice(0, self.rd_data_len.q() as usize))
    }

    /// Bank conflicts so far (sum of `passes - 1` over accepted requests).
    pub fn bank_conflicts(&self) -> u64 {
        self.bank_conflicts.q()
    }

    /// Host backdoor: writes bytes at physical address `addr` now (clamped to the array).
    pub fn host_write(&mut self, addr: u32, data: &[u8]) {
        self.array.host_write(addr as usize, data);
    }

    /// Host backdoor: the committed bytes at physical addresses `addr..addr + len`.
    pub fn host_read(&self, addr: u32, len: usize) -> &[u8] {
        self.array.host_read(addr as usize, len)
    }
}

impl Module for SharedMemory {
    fn name(&self) -> &str {
        "smem"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.wire(&mut self.rd_valid);
        v.wire(&mut self.rd_ready);
        v.reg(&mut self.rd_pass);
        v.wire(&mut self.rd_passes);
        v.wire(&mut self.wr_valid);
        v.wire(&mut self.wr_ready);
        v.reg(&mut self.wr_pass);
        v.wire(&mut self.wr_passes);
        v.wire(&mut self.conflict);
        v.reg(&mut self.bank_conflicts);
        v.reg(&mut self.reads);
        v.reg(&mut self.writes);
        v.reg(&mut self.rd_data_valid);
        v.reg(&mut self.rd_data_len);
        v.mem(&mut self.array);
        v.mem(&mut self.rbuf);
    }
}
