//! [`GlobalMemory`] (scope `gmem`): byte-addressable global memory behind a request channel and
//! an in-order response channel, with latency, bandwidth and a limit on requests in flight.

use super::params::MemParams;
use crate::rtl::{Mem, Module, Reg, Result, Visitor, Wire};

/// A global-memory request (the request channel's payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GmemReq<'a> {
    /// Write (`true`, data in `data`) or read.
    pub write: bool,
    /// Byte address.
    pub addr: u64,
    /// Bytes, 1..=`request_bytes`.
    pub len: u32,
    /// Write data (`len` bytes; ignored for reads).
    pub data: &'a [u8],
    /// The requester's tag, returned with the response.
    pub tag: u16,
}

/// The head of the response channel (valid when returned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GmemResp {
    /// The request's tag.
    pub tag: u16,
    /// Whether it answers a write (an acknowledgement without data).
    pub write: bool,
    /// Bytes (read data in [`GlobalMemory::resp_data`]).
    pub len: u32,
}

/// A request refused as malformed (a requester bug).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GmemFault {
    /// The address.
    pub addr: u64,
    /// The length.
    pub len: u32,
}

/// What global memory presents in a cycle, from registers only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GmemOut {
    /// The request channel's `ready`: a request presented this cycle is accepted.
    pub req_ready: bool,
    /// The response channel: the oldest outstanding request, once its latency has passed.
    pub resp: Option<GmemResp>,
}

/// One in-flight entry, packed into a register-file word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    due: u64,
    tag: u16,
    len: u32,
    write: bool,
}

impl Entry {
    fn pack(self) -> u128 {
        u128::from(self.due & ((1 << 48) - 1))
            | u128::from(self.tag) << 48
            | u128::from(self.len) << 64
            | u128::from(self.write) << 96
    }
    fn unpack(w: u128) -> Self {
        Entry {
            due: (w & ((1 << 48) - 1)) as u64,
            tag: (w >> 48) as u16,
            len: (w >> 64) as u32 & 0x1FF,
            write: (w >> 96) & 1 == 1,
        }
    }
}

/// Global memory (scope `gmem`).
///
/// # Channels and timing
/// - **Request** (valid/ready): `valid` is a presented [`GmemReq`]; `ready`
///   ([`GmemOut::req_ready`]) is a register function: fewer than `requests_in_flight`
///   requests outstanding and at least `request_bytes` bandwidth credit. An accepted read
///   samples the store at its accepting edge into the in-flight queue; an accepted write
///   commits its bytes to the store at its accepting edge. So accesses take effect in
///   acceptance order.
/// - **Bandwidth**: a token bucket at acceptance: every cycle adds `bytes_per_cycle` credit (up
///   to `request_bytes`), an accepted request spends its length. One request per cycle at most,
///   so the effective rate is `min(bytes_per_cycle, request_bytes)` bytes per cycle.
/// - **Response** (valid/ready, in order): a request accepted at cycle `t` is at the head of
///   the response channel from cycle `t + max(latency, 1)` at the earliest (later if older
///   responses are still waiting). It stays there until the requester pulls `resp_ready`; the
///   read data are [`GlobalMemory::resp_data`]. A write's response is its acknowledgement.
/// - The in-flight queue is a ring buffer (register files for the entries and their data, a
///   head, a tail and a count): constant work per cycle.
///
/// Traced: `req_valid`, `req_ready`, `req_addr`, `req_len`, `req_write`, `resp_valid`,
/// `resp_ready`, `resp_tag`, `in_flight`, `credit`, the counters `requests`, `bytes_read`,
/// `bytes_written`, and the ports of `store`, `queue`, `queue_data`.
pub struct GlobalMemory {
    params: MemParams,
    store: Mem<u8>,
    queue: Mem<u128>,
    queue_data: Mem<u8>,
    head: Reg<u32>,
    tail: Reg<u32>,
    in_flight: Reg<u32>,
    credit: Reg<u32>,
    cycle: Reg<u64>,
    requests: Reg<u64>,
    bytes_read: Reg<u64>,
    bytes_written: Reg<u64>,
    req_valid: Wire<bool>,
    req_ready: Wire<bool>,
    req_addr: Wire<u64>,
    req_len: Wire<u16>,
    req_write: Wire<bool>,
    resp_valid: Wire<bool>,
    resp_ready: Wire<bool>,
    resp_tag: Wire<u16>,
}

impl GlobalMemory {
    /// Global memory of `bytes` bytes (all zero) with `params` (assumed validated).
    pub fn new(params: MemParams, bytes: u64) -> Result<Self> {
        let depth = params.requests_in_flight as usize;
        Ok(Self {
            params,
            store: Mem::new("store", bytes as usize, 8)?,
            queue: Mem::new("queue", depth, 97)?,
            queue_data: Mem::new("queue_data", depth * params.request_bytes as usize, 8)?,
            head: Reg::new("head", 13, 0)?,
            tail: Reg::new("tail", 13, 0)?,
            in_flight: Reg::new("in_flight", 13, 0)?,
            credit: Reg::new("credit", 16, params.request_bytes)?,
            cycle: Reg::new("cycle", 64, 0)?,
            requests: Reg::new("requests", 64, 0)?,
            bytes_read: Reg::new("bytes_read", 64, 0)?,
            bytes_written: Reg::new("bytes_written", 64, 0)?,
            req_valid: Wire::new("req_valid", 1, false)?,
            req_ready: Wire::new("req_ready", 1, false)?,
            req_addr: Wire::new("req_addr", 64, 0)?,
            req_len: Wire::new("req_len", 9, 0)?,
            req_write: Wire::new("req_write", 1, false)?,
            resp_valid: Wire::new("resp_valid", 1, false)?,
            resp_ready: Wire::new("resp_ready", 1, false)?,
            resp_tag: Wire::new("resp_tag", 16, 0)?,
        })
    }

    /// Size in bytes.
    pub fn bytes(&self) -> u64 {
        self.store.depth() as u64
    }

    /// The channel outputs of this cycle (register functions only; call before `comb`).
    #[inline]
    pub fn out(&self) -> GmemOut {
        let req_ready = self.in_flight.q() < self.params.requests_in_flight
            && self.credit.q() >= self.params.request_bytes;
        let resp = if self.in_flight.q() > 0 {
            let e = Entry::unpack(self.queue.peek(self.head.q() as usize));
            (self.cycle.q() >= e.due).then_some(GmemResp {
                tag: e.tag,
                write: e.write,
                len: e.len,
            })
        } else {
            None
        };
        GmemOut { req_ready, resp }
    }

    /// The read data of the response at the head of the channel (valid while
    /// [`GmemOut::resp`] is a read).
    #[inline]
    pub fn resp_data(&self) -> &[u8] {
        let e = Entry::unpack(self.queue.peek(self.head.q() as usize));
        let at = self.head.q() as usize * self.params.request_bytes as usize;
        self.queue_data.peek_slice(at, e.len as usize)
    }

    /// One cycle: `req` is the request channel (`valid` = `Some`), `resp_ready` pops the head
    /// response (only meaningful while one is valid). Returns a fault for a malformed request
    /// (length 0 or above `request_bytes`, or past the end of the store), which is dropped.
    #[inline]
    pub fn comb(&mut self, req: Option<GmemReq<'_>>, resp_ready: bool) -> Option<GmemFault> {
        let out = self.out();
        let cycle = self.cycle.q();
        self.cycle.set_d(cycle + 1);
        let depth = self.params.requests_in_flight;
        let mut in_flight = self.in_flight.q();
        let mut credit = self.credit.q();
        let mut fault = None;
        self.req_valid.set(req.is_some());
        self.req_ready.set(out.req_ready);
        self.resp_valid.set(out.resp.is_some());
        self.resp_tag.set(out.resp.map_or(0, |r| r.tag));
        let popped = out.resp.is_some() && resp_ready;
        self.resp_ready.set(popped);
        if popped {
            self.head.set_d((self.head.q() + 1) % depth);
            in_flight -= 1;
        }
        if let Some(r) = req {
            self.req_addr.set(r.addr);
            self.req_len.set(r.len as u16);
            self.req_write.set(r.write);
            let end = r.addr.checked_add(u64::from(r.len));
            let bad = r.len == 0
                || r.len > self.params.request_bytes
                || end.is_none_or(|e| e > self.bytes())
                || (r.write && r.data.len() < r.len as usize);
            if bad {
                fault = Some(GmemFault {
                    addr: r.addr,
                    len: r.len,
                });
            } else if out.req_ready {
                let slot = self.tail.q();
                let e = Entry {
                    due: cycle + u64::from(self.params.latency.max(1)),
                    tag: r.tag,
                    len: r.len,
                    write: r.write,
                };
                self.queue.write(slot as usize, &[e.pack()]);
                let a = r.addr as usize;
                let n = r.len as usize;
                if r.write {
                    self.store.write(a, &r.data[..n]);
                    self.bytes_written
                        .set_d(self.bytes_written.q() + u64::from(r.len));
                } else {
                    let at = slot as usize * self.params.request_bytes as usize;
                    let src = self.store.peek_slice(a, n);
                    self.queue_data.write(at, src);
                    self.bytes_read
                        .set_d(self.bytes_read.q() + u64::from(r.len));
                }
                self.tail.set_d((slot + 1) % depth);
                in_flight += 1;
                credit -= r.len;
                self.requests.set_d(self.requests.q() + 1);
            }
        } else {
            self.req_len.set(0);
            self.req_write.set(false);
        }
        self.in_flight.set_d(in_flight);
        self.credit
            .set_d((credit + self.params.bytes_per_cycle).min(self.params.request_bytes));
        fault
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.q()
    }

    /// Requests accepted so far.
    pub fn requests(&self) -> u64 {
        self.requests.q()
    }

    /// Host backdoor: writes bytes at `addr` now (clamped to the store).
    pub fn host_write(&mut self, addr: u64, data: &[u8]) {
        self.store.host_write(addr as usize, data);
    }

    /// Host backdoor: the committed bytes `addr..addr + len` (clamped to the store).
    pub fn host_read(&self, addr: u64, len: usize) -> &[u8] {
        self.store.host_read(addr as usize, len)
    }
}

impl Module for GlobalMemory {
    fn name(&self) -> &str {
        "gmem"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.wire(&mut self.req_valid);
        v.wire(&mut self.req_ready);
        v.wire(&mut self.req_addr);
        v.wire(&mut self.req_len);
        v.wire(&mut self.req_write);
        v.wire(&mut self.resp_valid);
        v.wire(&mut self.resp_ready);
        v.wire(&mut self.resp_tag);
        v.reg(&mut self.in_flight);
        v.reg(&mut self.credit);
        v.reg(&mut self.head);
        v.reg(&mut self.tail);
        v.reg(&mut self.cycle);
        v.reg(&mut self.requests);
        v.reg(&mut self.bytes_read);
        v.reg(&mut self.bytes_written);
        v.mem(&mut self.store);
        v.mem(&mut self.queue);
        v.mem(&mut self.queue_data);
    }
}
