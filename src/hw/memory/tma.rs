//! [`TmaEngine`] (scope `tma`): the tensor memory accelerator. Descriptor registers, a command
//! port, an address generator walking the box, requests to global memory, writes into shared
//! memory through the swizzle with `complete_tx` on the command's mbarrier, and a store path.

use super::gmem::GmemOut;
use super::smem::{SmemLane, SmemWriteLane};
use super::swizzle::swizzle;
use super::tensor_map::{nan_fill_byte, OobFill, TensorMap};
use crate::rtl::{Mem, Module, RareBank, Reg, Result, Visitor, Wire};

/// The direction of a TMA command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmaOp {
    /// `cp.async.bulk.tensor` global -> shared, completing on an mbarrier.
    Load,
    /// `cp.async.bulk.tensor` shared -> global, completing as a bulk group.
    Store,
}

/// A TMA command (the command port's payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TmaCmd {
    /// Load or store.
    pub op: TmaOp,
    /// The descriptor's index in the engine's table.
    pub desc: usize,
    /// Signed box coordinates (element units), dimension 0 first; entries `>= rank` ignored.
    pub coords: [i32; 5],
    /// The shared-memory byte address of the box (before the swizzle).
    pub smem_addr: u32,
    /// The mbarrier a load completes on (ignored for stores).
    pub mbar: usize,
}

/// A command or access the engine refuses (the owner turns it into an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmaFault {
    /// No descriptor at this index.
    NoDescriptor(usize),
    /// No mbarrier at this index.
    NoMbarrier(usize),
    /// The shared-memory destination is not aligned as the swizzle needs.
    SmemAlign {
        /// The address.
        addr: u32,
        /// The alignment needed (128 or 1024).
        align: u32,
    },
    /// The box's inner start coordinate is not at a 16-byte boundary (an H200 stops the kernel
    /// with an illegal-instruction error).
    InnerCoordAlign {
        /// The inner (dimension 0) coordinate.
        coord: i32,
        /// Bytes per element.
        elem_bytes: u32,
    },
    /// A store's box starts at a negative coordinate (an H200 stops the kernel with an
    /// illegal-instruction error; a box past the end is clipped instead).
    StoreNegativeCoord {
        /// The dimension.
        dim: usize,
        /// Its coordinate.
        coord: i32,
    },
    /// The box does not fit in shared memory.
    SmemRange {
        /// The address.
        addr: u32,
        /// The box's bytes.
        bytes: u64,
    },
}

impl std::fmt::Display for TmaFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TmaFault::NoDescriptor(i) => write!(f, "TMA command names descriptor {i}, which is not set"),
            TmaFault::NoMbarrier(i) => write!(f, "TMA load names mbarrier {i}, which does not exist"),
            TmaFault::SmemAlign { addr, align } => write!(
                f,
                "TMA shared-memory address {addr:#x} is not {align}-byte aligned"
            ),
            TmaFault::InnerCoordAlign { coord, elem_bytes } => write!(
                f,
                "TMA box starts at inner coordinate {coord} ({} bytes), not a multiple of 16 bytes \
                 (a GPU stops the kernel with an illegal-instruction error)",
                i64::from(*coord) * i64::from(*elem_bytes)
            ),
            TmaFault::StoreNegativeCoord { dim, coord } => write!(
                f,
                "TMA store box starts at negative coordinate {coord} in dimension {dim} (a GPU \
                 stops the kernel with an illegal-instruction error)"
            ),
            TmaFault::SmemRange { addr, bytes } => write!(
                f,
                "TMA box of {bytes} bytes at shared-memory address {addr:#x} does not fit in shared memory"
            ),
        }
    }
}

const IDLE: u8 = 0;
const LOAD: u8 = 1;
const ST_WALK: u8 = 2;
const ST_DATA: u8 = 3;
const ST_REQ: u8 = 4;
const ST_FENCE: u8 = 5;

const STATE_LABELS: crate::rtl::Labels = &[
    (0, "Idle"),
    (1, "Load"),
    (2, "StoreWalk"),
    (3, "StoreData"),
    (4, "StoreReq"),
    (5, "StoreFence"),
];

const K_FILL: u64 = 0;
const K_LOAD: u64 = 1;
const K_ACK: u64 = 2;
const K_DONE: u64 = 3;

/// One outstanding piece of work, in the engine's in-order piece queue (a register file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Piece {
    kind: u64,
    /// Absolute pre-swizzle shared-memory byte address of the first element.
    dst: u32,
    /// Elements.
    cnt: u32,
    /// Source step between elements in the response data (bytes).
    step: u32,
    esize: u32,
    swz: u32,
    mbar: u32,
    nan: bool,
}

impl Piece {
    fn pack(self) -> u64 {
        self.kind
            | u64::from(self.dst) << 2
            | u64::from(self.cnt) << 26
            | u64::from(self.step) << 35
            | u64::from(self.esize) << 41
            | u64::from(self.swz) << 44
            | u64::from(self.mbar) << 47
            | u64::from(self.nan) << 55
    }
    fn unpack(w: u64) -> Self {
        Piece {
            kind: w & 3,
            dst: (w >> 2) as u32 & 0xFF_FFFF,
            cnt: (w >> 26) as u32 & 0x1FF,
            step: (w >> 35) as u32 & 0x3F,
            esize: (w >> 41) as u32 & 7,
            swz: (w >> 44) as u32 & 7,
            mbar: (w >> 47) as u32 & 0xFF,
            nan: (w >> 55) & 1 == 1,
        }
    }
}

/// The address generator's current piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// `cnt` out-of-bounds elements.
    Oob { cnt: u32 },
    /// `cnt` in-bounds elements read by one request of `len` bytes at `gaddr`.
    Inb { cnt: u32, gaddr: u64, len: u32 },
}

/// The engine's requests of one cycle (computed from registers and the global-memory head).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TmaRequests {
    /// A shared-memory write is presented ([`TmaEngine::write_lanes`]).
    pub smem_write: bool,
    /// A shared-memory read is presented ([`TmaEngine::read_lanes`]).
    pub smem_read: bool,
    /// A global-memory request: (write, address, length); write data in
    /// [`TmaEngine::store_data`], or in the shared-memory read-data register when
    /// `gmem_data_from_smem`.
    pub gmem: Option<(bool, u64, u32)>,
    /// The write request's data are the shared-memory read data of the engine's read accepted
    /// in the previous cycle (the store fast path).
    pub gmem_data_from_smem: bool,
    /// The head response of global memory is consumed if the shared-memory write is accepted
    /// (a load piece) or unconditionally (a store acknowledgement).
    pub resp_pop_on_write: bool,
    /// The head response of global memory is consumed this cycle regardless of shared memory.
    pub resp_pop: bool,
}

/// What the ports granted the engine this cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TmaGrants {
    /// The shared-memory write was accepted.
    pub smem_write: bool,
    /// The shared-memory read was accepted.
    pub smem_read: bool,
    /// The global-memory request was accepted.
    pub gmem: bool,
}

/// What the engine did this cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TmaUpdate {
    /// A command was accepted.
    pub cmd_accepted: bool,
    /// `complete_tx(bytes)` on mbarrier `index`.
    pub complete_tx: Option<(usize, u32)>,
    /// A refused command.
    pub fault: Option<TmaFault>,
}

/// Descriptor registers of one table slot (traced fields), one record: constant during a
/// run (set by the host before it), so a [`RareBank`] that the edge never copies.
#[derive(Clone, Copy, Debug, Default)]
struct DescFields {
    /// Element type, 1 + its index in the type table; 0 for an empty slot (`dtype`).
    dtype: u8,
    /// Rank (`rank`).
    rank: u8,
    /// Global base address (`gaddr`).
    gaddr: u64,
    /// Box extents of dimensions 0 and 1 (`box0`, `box1`).
    box0: u16,
    box1: u16,
    /// Swizzle mask (`swizzle`).
    swizzle: u8,
}

/// The registers of descriptor slot `i` holding `m` (empty if `None`).
fn desc_regs(i: usize, m: Option<&TensorMap>) -> Result<RareBank<DescFields>> {
    let f = match m {
        Some(m) => DescFields {
            dtype: crate::hw::memory::tensor_map::ElemType::ALL
                .iter()
                .position(|&t| t == m.dtype)
                .unwrap_or(0) as u8
                + 1,
            rank: m.rank as u8,
            gaddr: m.global_address,
            box0: m.box_dims[0] as u16,
            box1: m.box_dims[1] as u16,
            swizzle: m.swizzle.mask().unwrap_or(0) as u8,
        },
        None => DescFields::default(),
    };
    RareBank::new(f)
        .field(format!("desc{i}_dtype"), 4, |r| &r.dtype)?
        .field(format!("desc{i}_rank"), 3, |r| &r.rank)?
        .field(format!("desc{i}_gaddr"), 64, |r| &r.gaddr)?
        .field(format!("desc{i}_box0"), 9, |r| &r.box0)?
        .field(format!("desc{i}_box1"), 9, |r| &r.box1)?
        .field(format!("desc{i}_swizzle"), 3, |r| &r.swizzle)
}

/// The TMA engine (scope `tma`).
///
/// # Ports and timing
/// - **Descriptors**: a table of `descriptors` slots set by the host before the run
///   ([`TmaEngine::set_descriptor`], validated there); they are constant registers during the
///   run.
/// - **Command** (valid/ready): `ready` is high while the address generator is idle (a
///   register function). A command accepted at cycle `t` is checked then (descriptor, mbarrier
///   index, alignment and size of the shared-memory box: a refusal is a fault the owner reports
///   as an error) and its walk starts at `t + 1`.
/// - **Address generator**: one piece per cycle, dimension 0 fastest: a run of in-bounds
///   elements whose global span fits one request (`request_bytes`; with an element stride `s0`
///   the request covers the span and the engine picks every `s0`-th element), or a run of
///   out-of-bounds elements (no global request; filled with zeros or the NaN pattern). A load's
///   in-bounds piece issues its global request in the cycle it is accepted; the generator does
///   not wait for data, so the requests of the next command follow immediately (several loads
///   are in flight at once). Every piece enters an in-order piece queue (`requests_in_flight
///   + 8` entries).
/// - **Landing**: the queue's head piece is written into shared memory through the write port
///   at `swizzle(smem_addr + L)` (L = the dense pre-swizzle offset), in 16-byte-chunk lanes, as
///   soon as its data are there (the global response, or at once for a fill). In the cycle the
///   write is accepted the engine pops the response and issues `complete_tx(bytes)` on the
///   command's mbarrier (fill bytes count too), so the barrier's registers reflect it from the
///   next cycle, together with the bytes in shared memory.
/// - **Store** (`TmaOp::Store`): per in-bounds piece (one element per piece when the element
///   stride of dimension 0 is above 1): a shared-memory read (the read port), then in the next
///   cycle a global write request straight from the read-data register; if global memory is
///   not ready then, the data are copied into the store buffer and the request is presented
///   from there until accepted (2 cycles per piece at best); out-of-bounds elements are
///   skipped. `stores_outstanding` counts accepted store commands whose writes have not all
///   been acknowledged (`cp.async.bulk.wait_group` semantics): it rises at acceptance and falls
///   when the last acknowledgement of the command leaves the queue.
///
/// Traced: `state`, `cmd_valid`, `cmd_ready`, the command registers (`cmd_desc`, `cmd_c0..4`,
/// `cmd_smem`, `cmd_mbar`), the walk (`k0..k4`), `req_valid`, `req_ready`, `wr_valid`,
/// `wr_ready`, `rd_valid`, `rd_ready`, `complete_tx`, `queue_count`, `stores_outstanding`,
/// `oob_elements`, `tx_bytes`, `bytes_stored`, descriptor fields `desc<i>_*`, and the
/// register files `pieces` and `store_buf`.
pub struct TmaEngine {
    request_bytes: u32,
    smem_bytes: u32,
    mbars: usize,
    descs: Vec<Option<TensorMap>>,
    desc_regs: Vec<RareBank<DescFields>>,
    state: Reg<u8>,
    cmd_desc: Reg<u8>,
    cmd_c: [Reg<u32>; 5],
    cmd_smem: Reg<u32>,
    cmd_mbar: Reg<u8>,
    k: [Reg<u16>; 5],
    walk_done: Reg<bool>,
    pieces: Mem<u64>,
    q_head: Reg<u32>,
    q_tail: Reg<u32>,
    q_count: Reg<u32>,
    store_buf: Mem<u8>,
    st_gaddr: Reg<u64>,
    st_len: Reg<u16>,
    stores_outstanding: Reg<u32>,
    oob_elements: Reg<u64>,
    tx_bytes: Reg<u64>,
    bytes_stored: Reg<u64>,
    cmd_valid: Wire<bool>,
    cmd_ready: Wire<bool>,
    req_valid: Wire<bool>,
    req_ready: Wire<bool>,
    wr_valid: Wire<bool>,
    wr_ready: Wire<bool>,
    rd_valid: Wire<bool>,
    rd_ready: Wire<bool>,
    complete_tx: Wire<u32>,
    wr_lanes: Vec<SmemWriteLane>,
    rd_lanes: Vec<SmemLane>,
    step: Option<Step>,
}

fn reg5<T: crate::rtl::Value>(prefix: &str, width: u32) -> Result<[Reg<T>; 5]> {
    Ok([
        Reg::new(format!("{prefix}0"), width, T::default())?,
        Reg::new(format!("{prefix}1"), width, T::default())?,
        Reg::new(format!("{prefix}2"), width, T::default())?,
        Reg::new(format!("{prefix}3"), width, T::default())?,
        Reg::new(format!("{prefix}4"), width, T::default())?,
    ])
}

impl TmaEngine {
    /// An engine with `descriptors` empty slots, for shared memory of `smem_bytes`, global
    /// requests of at most `request_bytes`, `requests_in_flight` global requests at most
    /// (sizing its piece queue) and `mbars` mbarriers.
    pub fn new(
        descriptors: usize,
        smem_bytes: u32,
        request_bytes: u32,
        requests_in_flight: u32,
        mbars: usize,
    ) -> Result<Self> {
        let depth = requests_in_flight as usize + 8;
        Ok(Self {
            request_bytes,
            smem_bytes,
            mbars,
            descs: vec![None; descriptors],
            desc_regs: (0..descriptors)
                .map(|i| desc_regs(i, None))
                .collect::<Result<_>>()?,
            state: Reg::new("state", 3, IDLE)?.with_labels(STATE_LABELS),
            cmd_desc: Reg::new("cmd_desc", 8, 0)?,
            cmd_c: reg5("cmd_c", 32)?,
            cmd_smem: Reg::new("cmd_smem", 32, 0)?,
            cmd_mbar: Reg::new("cmd_mbar", 8, 0)?,
            k: reg5("k", 9)?,
            walk_done: Reg::new("walk_done", 1, false)?,
            pieces: Mem::new("pieces", depth, 56)?,
            q_head: Reg::new("queue_head", 13, 0)?,
            q_tail: Reg::new("queue_tail", 13, 0)?,
            q_count: Reg::new("queue_count", 14, 0)?,
            store_buf: Mem::new("store_buf", 256, 8)?,
            st_gaddr: Reg::new("st_gaddr", 64, 0)?,
            st_len: Reg::new("st_len", 9, 0)?,
            stores_outstanding: Reg::new("stores_outstanding", 16, 0)?,
            oob_elements: Reg::new("oob_elements", 64, 0)?,
            tx_bytes: Reg::new("tx_bytes", 64, 0)?,
            bytes_stored: Reg::new("bytes_stored", 64, 0)?,
            cmd_valid: Wire::new("cmd_valid", 1, false)?,
            cmd_ready: Wire::new("cmd_ready", 1, false)?,
            req_valid: Wire::new("req_valid", 1, false)?,
            req_ready: Wire::new("req_ready", 1, false)?,
            wr_valid: Wire::new("wr_valid", 1, false)?,
            wr_ready: Wire::new("wr_ready", 1, false)?,
            rd_valid: Wire::new("rd_valid", 1, false)?,
            rd_ready: Wire::new("rd_ready", 1, false)?,
            complete_tx: Wire::new("complete_tx", 20, 0)?,
            wr_lanes: Vec::with_capacity(40),
            rd_lanes: Vec::with_capacity(40),
            step: None,
        })
    }

    /// Sets descriptor slot `index` (before the run; the host's `cuTensorMapEncodeTiled`).
    /// Validates it first: a broken rule is the error and the slot is unchanged.
    pub fn set_descriptor(
        &mut self,
        index: usize,
        map: TensorMap,
    ) -> std::result::Result<(), super::TensorMapError> {
        map.validate()?;
        if let (Some(slot), Ok(regs)) = (self.descs.get_mut(index), desc_regs(index, Some(&map))) {
            *slot = Some(map);
            self.desc_regs[index] = regs;
        }
        Ok(())
    }

    /// The descriptor in slot `index`.
    pub fn descriptor(&self, index: usize) -> Option<&TensorMap> {
        self.descs.get(index).and_then(|d| d.as_ref())
    }

    /// `ready` of the command port (register function).
    #[inline]
    pub fn cmd_ready(&self) -> bool {
        self.state.q() == IDLE
    }

    /// Accepted store commands not yet fully acknowledged (register).
    pub fn stores_outstanding(&self) -> u32 {
        self.stores_outstanding.q()
    }

    /// Out-of-bounds elements filled so far by loads.
    pub fn oob_elements(&self) -> u64 {
        self.oob_elements.q()
    }

    /// Bytes landed in shared memory by loads so far (sum of `complete_tx`).
    pub fn tx_bytes(&self) -> u64 {
        self.tx_bytes.q()
    }

    /// Bytes written to global memory by stores so far.
    pub fn bytes_stored(&self) -> u64 {
        self.bytes_stored.q()
    }

    /// Whether the engine has nothing to do (idle, piece queue empty).
    pub fn is_idle(&self) -> bool {
        self.state.q() == IDLE && self.q_count.q() == 0
    }

    /// The lanes of the presented shared-memory write (valid when
    /// [`TmaRequests::smem_write`]).
    pub fn write_lanes(&self) -> &[SmemWriteLane] {
        &self.wr_lanes
    }

    /// The lanes of the presented shared-memory read (valid when [`TmaRequests::smem_read`]).
    pub fn read_lanes(&self) -> &[SmemLane] {
        &self.rd_lanes
    }

    /// The data of the presented global write request.
    pub fn store_data(&self) -> &[u8] {
        self.store_buf.peek_slice(0, self.st_len.q() as usize)
    }

    fn cur_desc(&self) -> Option<&TensorMap> {
        self.descriptor(self.cmd_desc.q() as usize)
    }

    /// The generator's current piece (registers only).
    fn plan(&self) -> Option<Step> {
        let st = self.state.q();
        if !(st == LOAD || st == ST_WALK) || self.walk_done.q() {
            return None;
        }
        let m = self.cur_desc()?;
        let rank = m.rank as usize;
        let es = m.dtype.size();
        for i in 1..rank {
            let g = i64::from(self.cmd_c[i].q() as i32)
                + i64::from(self.k[i].q()) * i64::from(m.element_strides[i]);
            if g < 0 || g >= m.global_dims[i] as i64 {
                let rem = m.box_elems(0) - u32::from(self.k[0].q());
                return Some(Step::Oob {
                    cnt: rem.min(self.request_bytes / es),
                });
            }
        }
        let n0 = m.box_elems(0);
        let k0 = u32::from(self.k[0].q());
        let rem = n0 - k0;
        let c0 = i64::from(self.cmd_c[0].q() as i32);
        let s0 = i64::from(m.traversal_stride(0));
        let dim0 = m.global_dims[0] as i64;
        let g0 = c0 + i64::from(k0) * s0;
        let max_fill = self.request_bytes / es;
        if g0 < 0 {
            let first_in = (-c0 + s0 - 1) / s0; // ceil(-c0 / s0)
            let cnt = (first_in - i64::from(k0)).min(i64::from(rem)) as u32;
            return Some(Step::Oob {
                cnt: cnt.min(max_fill),
            });
        }
        if g0 >= dim0 {
            return Some(Step::Oob {
                cnt: rem.min(max_fill),
            });
        }
        let end_in = (dim0 - c0 + s0 - 1) / s0; // first k with g >= dim0
        let mut cnt = (end_in - i64::from(k0)).min(i64::from(rem)) as u32;
        // The span of n elements is ((n - 1) * s0 + 1) * es bytes <= request_bytes.
        let by_span = (self.request_bytes / es - 1) / s0 as u32 + 1;
        cnt = cnt.min(by_span);
        if st == ST_WALK && s0 > 1 {
            cnt = 1;
        }
        let mut gaddr = m.global_address as i64 + g0 * i64::from(es);
        for i in 1..rank {
            let g = i64::from(self.cmd_c[i].q() as i32)
                + i64::from(self.k[i].q()) * i64::from(m.element_strides[i]);
            gaddr += g * m.global_strides[i - 1] as i64;
        }
        let len = ((cnt - 1) * s0 as u32 + 1) * es;
        Some(Step::Inb {
            cnt,
            gaddr: gaddr as u64,
            len,
        })
    }

    /// The absolute pre-swizzle shared-memory address of the current element (k registers).
    fn dst(&self, m: &TensorMap) -> u32 {
        let mut line = 0u32;
        for i in (1..5).rev() {
            line = line * m.box_elems(i) + u32::from(self.k[i].q());
        }
        self.cmd_smem.q() + m.dtype.size() * u32::from(self.k[0].q()) + m.smem_row_pitch() * line
    }

    /// Splits `len` bytes from pre-swizzle address `dst` at 16-byte boundaries: calls `f` with
    /// (pre-swizzle address, byte offset, bytes) of each chunk.
    fn chunks(dst: u32, len: u32, mut f: impl FnMut(u32, u32, u32)) {
        let mut off = 0;
        while off < len {
            let a = dst + off;
            let n = (16 - (a & 15)).min(len - off);
            f(a, off, n);
            off += n;
        }
    }

    /// Computes this cycle's requests from the registers and the global-memory head (whose
    /// read data is `resp_data`). Call once per cycle before [`TmaEngine::update`].
    pub fn requests(&mut self, g: &GmemOut, resp_data: &[u8]) -> TmaRequests {
        let mut r = TmaRequests::default();
        self.step = self.plan();
        self.wr_lanes.clear();
        self.rd_lanes.clear();
        // Landing: the head piece.
        if self.q_count.q() > 0 {
            let p = Piece::unpack(self.pieces.peek(self.q_head.q() as usize));
            let swz = match p.swz {
                1 => super::Swizzle::B32,
                3 => super::Swizzle::B64,
                7 => super::Swizzle::B128,
                _ => super::Swizzle::None,
            };
            let data_ready = match p.kind {
                K_FILL => true,
                K_LOAD => g.resp.is_some_and(|x| !x.write),
                K_ACK => {
                    r.resp_pop = g.resp.is_some_and(|x| x.write);
                    false
                }
                _ => false,
            };
            if data_ready {
                let len = (p.cnt * p.esize) as usize;
                let mut dense = [0u8; 256];
                let es = p.esize as usize;
                match p.kind {
                    K_FILL if p.nan => {
                        for e in dense[..len].chunks_mut(es) {
                            for (b, byte) in e.iter_mut().enumerate() {
                                *byte = nan_fill_byte(p.esize, b as u32);
                            }
                        }
                    }
                    K_FILL => {}
                    _ if p.step == p.esize => {
                        let n = len.min(resp_data.len());
                        dense[..n].copy_from_slice(&resp_data[..n]);
                    }
                    _ => {
                        let step = p.step as usize;
                        for (j, e) in dense[..len].chunks_mut(es).enumerate() {
                            if let Some(src) = resp_data.get(j * step..j * step + es) {
                                e.copy_from_slice(src);
                            }
                        }
                    }
                }
                let lanes = &mut self.wr_lanes;
                Self::chunks(p.dst, len as u32, |a, off, n| {
                    let mut lane = SmemWriteLane {
                        addr: swizzle(a, swz),
                        len: n as u8,
                        data: [0; 16],
                    };
                    let (off, n) = (off as usize, n as usize);
                    lane.data[..n].copy_from_slice(&dense[off..off + n]);
                    lanes.push(lane);
                });
                r.smem_write = true;
                r.resp_pop_on_write = p.kind == K_LOAD;
            }
        }
        // Generator.
        let q_space = self.q_count.q() < self.pieces.depth() as u32;
        match (self.state.q(), self.step) {
            (LOAD, Some(Step::Inb { gaddr, len, .. })) if q_space => {
                r.gmem = Some((false, gaddr, len));
            }
            (ST_WALK, Some(Step::Inb { cnt, .. })) => {
                if let Some(m) = self.cur_desc().copied() {
                    let dst = self.dst(&m);
                    let swz = m.swizzle;
                    let lanes = &mut self.rd_lanes;
                    Self::chunks(dst, cnt * m.dtype.size(), |a, _, n| {
                        lanes.push(SmemLane {
                            addr: swizzle(a, swz),
                            len: n as u8,
                        })
                    });
                    r.smem_read = true;
                }
            }
            (ST_DATA, _) if q_space => {
                r.gmem = Some((true, self.st_gaddr.q(), u32::from(self.st_len.q())));
                r.gmem_data_from_smem = true;
            }
            (ST_REQ, _) if q_space => {
                r.gmem = Some((true, self.st_gaddr.q(), u32::from(self.st_len.q())));
            }
            _ => {}
        }
        self.wr_valid.set(r.smem_write);
        self.rd_valid.set(r.smem_read);
        self.req_valid.set(r.gmem.is_some());
        r
    }

    fn push_piece(&mut self, p: Piece, tail: &mut u32, count: &mut u32) {
        self.pieces.write(*tail as usize, &[p.pack()]);
        *tail = (*tail + 1) % self.pieces.depth() as u32;
        *count += 1;
    }

    /// Advances the walk by `cnt` elements; returns whether the box is finished.
    fn advance(&mut self, m: &TensorMap, cnt: u32) -> bool {
        let mut k = [0u32; 5];
        for (i, r) in self.k.iter().enumerate() {
            k[i] = u32::from(r.q());
        }
        k[0] += cnt;
        let mut done = false;
        if k[0] >= m.box_elems(0) {
            k[0] = 0;
            let mut i = 1;
            loop {
                if i >= m.rank as usize {
                    done = true;
                    break;
                }
                k[i] += 1;
                if k[i] < m.box_elems(i) {
                    break;
                }
                k[i] = 0;
                i += 1;
            }
        }
        for (i, r) in self.k.iter_mut().enumerate() {
            r.set_d(k[i] as u16);
        }
        done
    }

    /// The rest of the cycle: `cmd` is the command port (valid = `Some`), `grants` what the
    /// ports accepted of [`TmaEngine::requests`], `smem_rdata` the shared-memory read data
    /// register (for the store path). Writes the registers.
    pub fn update(
        &mut self,
        cmd: Option<TmaCmd>,
        req: &TmaRequests,
        grants: TmaGrants,
        smem_rdata: Option<&[u8]>,
    ) -> TmaUpdate {
        let mut u = TmaUpdate::default();
        let mut head = self.q_head.q();
        let mut tail = self.q_tail.q();
        let mut count = self.q_count.q();
        let mut stores = self.stores_outstanding.q();
        let depth = self.pieces.depth() as u32;
        self.wr_ready.set(grants.smem_write);
        self.rd_ready.set(grants.smem_read);
        self.req_ready.set(grants.gmem);
        self.complete_tx.set(0);
        // Landing.
        if count > 0 {
            let p = Piece::unpack(self.pieces.peek(head as usize));
            let pop = match p.kind {
                K_FILL | K_LOAD => {
                    if req.smem_write && grants.smem_write {
                        let bytes = p.cnt * p.esize;
                        u.complete_tx = Some((p.mbar as usize, bytes));
                        self.complete_tx.set(bytes);
                        self.tx_bytes.set_d(self.tx_bytes.q() + u64::from(bytes));
                        true
                    } else {
                        false
                    }
                }
                K_ACK => req.resp_pop,
                _ => {
                    stores = stores.saturating_sub(1);
                    true
                }
            };
            if pop {
                head = (head + 1) % depth;
                count -= 1;
            }
        }
        // Command port.
        let st = self.state.q();
        self.cmd_valid.set(cmd.is_some());
        self.cmd_ready.set(st == IDLE);
        let mut next = st;
        if st == IDLE {
            if let Some(c) = cmd {
                u.cmd_accepted = true;
                match self.check(&c) {
                    Err(f) => u.fault = Some(f),
                    Ok(()) => {
                        self.cmd_desc.set_d(c.desc as u8);
                        for (r, &v) in self.cmd_c.iter_mut().zip(&c.coords) {
                            r.set_d(v as u32);
                        }
                        self.cmd_smem.set_d(c.smem_addr);
                        self.cmd_mbar.set_d(c.mbar as u8);
                        for r in &mut self.k {
                            r.set_d(0);
                        }
                        self.walk_done.set_d(false);
                        next = if c.op == TmaOp::Load {
                            LOAD
                        } else {
                            stores += 1;
                            ST_WALK
                        };
                    }
                }
            }
        }
        // Generator.
        if let Some(m) = self.cur_desc().copied() {
            let es = m.dtype.size();
            let mut base = Piece {
                kind: K_FILL,
                dst: self.dst(&m),
                cnt: 0,
                step: m.traversal_stride(0) * es,
                esize: es,
                swz: m.swizzle.mask().unwrap_or(0),
                mbar: u32::from(self.cmd_mbar.q()),
                nan: m.oob_fill == OobFill::Nan,
            };
            match (st, self.step) {
                (LOAD, Some(Step::Oob { cnt })) if count < depth => {
                    base.cnt = cnt;
                    self.push_piece(base, &mut tail, &mut count);
                    self.oob_elements
                        .set_d(self.oob_elements.q() + u64::from(cnt));
                    if self.advance(&m, cnt) {
                        next = IDLE;
                    }
                }
                (LOAD, Some(Step::Inb { cnt, .. })) if grants.gmem => {
                    base.kind = K_LOAD;
                    base.cnt = cnt;
                    self.push_piece(base, &mut tail, &mut count);
                    if self.advance(&m, cnt) {
                        next = IDLE;
                    }
                }
                (ST_WALK, Some(Step::Oob { cnt })) => {
                    let done = self.advance(&m, cnt);
                    if done {
                        self.walk_done.set_d(true);
                        next = ST_FENCE;
                    }
                }
                (ST_WALK, Some(Step::Inb { cnt, gaddr, len })) if grants.smem_read => {
                    self.st_gaddr.set_d(gaddr);
                    self.st_len.set_d(len as u16);
                    if self.advance(&m, cnt) {
                        self.walk_done.set_d(true);
                    }
                    next = ST_DATA;
                }
                (ST_DATA, _) if !grants.gmem => {
                    if let Some(d) = smem_rdata {
                        self.store_buf.write(0, d);
                    }
                    next = ST_REQ;
                }
                (ST_DATA | ST_REQ, _) if grants.gmem => {
                    base.kind = K_ACK;
                    self.push_piece(base, &mut tail, &mut count);
                    self.bytes_stored
                        .set_d(self.bytes_stored.q() + u64::from(self.st_len.q()));
                    next = if self.walk_done.q() {
                        ST_FENCE
                    } else {
                        ST_WALK
                    };
                }
                (ST_FENCE, _) if count < depth => {
                    base.kind = K_DONE;
                    self.push_piece(base, &mut tail, &mut count);
                    next = IDLE;
                }
                _ => {}
            }
        }
        self.state.set_d(next);
        self.q_head.set_d(head);
        self.q_tail.set_d(tail);
        self.q_count.set_d(count);
        self.stores_outstanding.set_d(stores);
        u
    }

    fn check(&self, c: &TmaCmd) -> std::result::Result<(), TmaFault> {
        let m = self
            .descriptor(c.desc)
            .ok_or(TmaFault::NoDescriptor(c.desc))?;
        if c.op == TmaOp::Load && c.mbar >= self.mbars {
            return Err(TmaFault::NoMbarrier(c.mbar));
        }
        let align = m.smem_alignment();
        if !c.smem_addr.is_multiple_of(align) {
            return Err(TmaFault::SmemAlign {
                addr: c.smem_addr,
                align,
            });
        }
        if c.op == TmaOp::Store {
            if let Some(dim) = (0..m.rank as usize).find(|&i| c.coords[i] < 0) {
                return Err(TmaFault::StoreNegativeCoord {
                    dim,
                    coord: c.coords[dim],
                });
            }
        }
        if !m.inner_coord_aligned(c.coords[0]) {
            return Err(TmaFault::InnerCoordAlign {
                coord: c.coords[0],
                elem_bytes: m.dtype.size(),
            });
        }
        let bytes = m.smem_box_bytes();
        if u64::from(c.smem_addr) + bytes > u64::from(self.smem_bytes) {
            return Err(TmaFault::SmemRange {
                addr: c.smem_addr,
                bytes,
            });
        }
        Ok(())
    }
}

impl Module for TmaEngine {
    fn name(&self) -> &str {
        "tma"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.state);
        v.wire(&mut self.cmd_valid);
        v.wire(&mut self.cmd_ready);
        v.reg(&mut self.cmd_desc);
        for r in &mut self.cmd_c {
            v.reg(r);
        }
        v.reg(&mut self.cmd_smem);
        v.reg(&mut self.cmd_mbar);
        for r in &mut self.k {
            v.reg(r);
        }
        v.reg(&mut self.walk_done);
        v.wire(&mut self.req_valid);
        v.wire(&mut self.req_ready);
        v.wire(&mut self.wr_valid);
        v.wire(&mut self.wr_ready);
        v.wire(&mut self.rd_valid);
        v.wire(&mut self.rd_ready);
        v.wire(&mut self.complete_tx);
        v.reg(&mut self.q_head);
        v.reg(&mut self.q_tail);
        v.reg(&mut self.q_count);
        v.reg(&mut self.st_gaddr);
        v.reg(&mut self.st_len);
        v.reg(&mut self.stores_outstanding);
        v.reg(&mut self.oob_elements);
        v.reg(&mut self.tx_bytes);
        v.reg(&mut self.bytes_stored);
        for d in &mut self.desc_regs {
            let b = d.bank_mut();
            v.bank_reg(b, 0, |r| &r.dtype);
            v.bank_reg(b, 1, |r| &r.rank);
            v.bank_reg(b, 2, |r| &r.gaddr);
            v.bank_reg(b, 3, |r| &r.box0);
            v.bank_reg(b, 4, |r| &r.box1);
            v.bank_reg(b, 5, |r| &r.swizzle);
            v.rare_bank(d);
        }
        v.mem(&mut self.pieces);
        v.mem(&mut self.store_buf);
    }
}
