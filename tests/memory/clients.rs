//! The memory system beside its clients: another memory level slotted in behind the TMA
//! engine ([`MemLevel`]), and several clients sharing one memory system through their own
//! request and grant ports ([`MemorySystem::comb_clients`]).
//!
//! Each client here is a small producer-consumer: it initialises its own mbarrier, loads its
//! own box through the TMA into its own region of shared memory, waits on the barrier, then
//! reads its region back through the shared-memory read port, 16 bytes a request. What it
//! reads must be the bytes of its box in global memory (the host image), whatever the other
//! clients do at the same time.

use tensorcore_rtl::hw::memory::*;
use tensorcore_rtl::rtl::{Design, Module, Reg, Result as RtlResult, Simulator, Visitor};

const ROWS: u64 = 8;
const COLS: u64 = 32; // fp16 elements a row: 64 bytes
const BOX_BYTES: usize = (ROWS * COLS * 2) as usize;

/// The global-memory image: client `i`'s tensor at `i * BOX_BYTES`, every byte distinct
/// from the other clients'.
fn image(clients: usize) -> Vec<u8> {
    (0..clients * BOX_BYTES)
        .map(|b| (b * 7 + b / 251) as u8)
        .collect()
}

/// One client's state machine, in registers: `state` (Init, Issue, Wait, Read, Done),
/// `next_read` (the next 16-byte read of its region) and `expect` (the load was accepted last
/// cycle: this cycle's ops carry its expected transaction bytes).
struct Client {
    name: String,
    index: usize,
    state: Reg<u8>,
    next_read: Reg<u32>,
    expect: Reg<bool>,
    ops: Vec<MbarOp>,
    lane: [SmemLane; 1],
}

const DONE: u8 = 4;

impl Client {
    fn new(index: usize) -> RtlResult<Self> {
        Ok(Self {
            name: format!("client_{index}"),
            index,
            state: Reg::new("state", 3, 0u8)?,
            next_read: Reg::new("next_read", 32, 0u32)?,
            expect: Reg::new("expect", 1, false)?,
            ops: Vec::new(),
            lane: [SmemLane::default()],
        })
    }

    fn smem_base(&self) -> u32 {
        (self.index * BOX_BYTES) as u32
    }

    /// This cycle's request, from the client's registers.
    fn request(&mut self) -> MemIn<'_> {
        self.ops.clear();
        let mut inp = MemIn::default();
        if self.expect.q() {
            self.ops.push(MbarOp {
                bar: self.index,
                op: MbarOpKind::ArriveExpectTx(BOX_BYTES as u32),
            });
        }
        match self.state.q() {
            0 => self.ops.push(MbarOp {
                bar: self.index,
                op: MbarOpKind::Init(1),
            }),
            1 => {
                inp.tma_cmd = Some(TmaCmd {
                    op: TmaOp::Load,
                    desc: self.index,
                    coords: [0; 5],
                    smem_addr: self.smem_base(),
                    mbar: self.index,
                })
            }
            3 => {
                self.lane[0] = SmemLane {
                    addr: self.smem_base() + self.next_read.q(),
                    len: 16,
                };
                inp.smem_read = Some(&self.lane);
            }
            _ => {}
        }
        inp.mbar_ops = &self.ops;
        inp
    }

    /// The next values of the client's registers from its grants of this cycle.
    fn update(&mut self, g: &MemOut, loaded: bool) {
        let st = self.state.q();
        self.expect.set_d(st == 1 && g.tma_ready);
        let next = match st {
            0 => 1,
            1 if g.tma_ready => 2,
            2 if loaded => 3,
            3 if g.smem_read_ready => {
                let n = self.next_read.q() + 16;
                self.next_read.set_d(n);
                if n as usize >= BOX_BYTES {
                    DONE
                } else {
                    3
                }
            }
            s => s,
        };
        self.state.set_d(next);
    }
}

impl Module for Client {
    fn name(&self) -> &str {
        &self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.state);
        v.reg(&mut self.next_read);
        v.reg(&mut self.expect);
    }
}

/// The test top: a memory system and its clients. `grants` and `read_data` are this cycle's
/// (buffers rewritten by every `comb`), read by the test loop after the edge.
struct Top<G: MemLevel> {
    mem: MemorySystem<G>,
    clients: Vec<Client>,
    grants: Vec<MemOut>,
    read_data: Vec<u8>,
    /// Drive the memory system through `comb` (one client, no arbiter) instead of
    /// `comb_clients`.
    single_port: bool,
}

impl<G: MemLevel> Module for Top<G> {
    fn name(&self) -> &str {
        "top"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for c in &mut self.clients {
            v.child(c);
        }
        v.child(&mut self.mem);
    }
}

impl<G: MemLevel> Design for Top<G> {
    fn comb(&mut self) {
        let loaded: Vec<bool> = (0..self.clients.len())
            .map(|i| self.mem.try_wait_parity(i, false))
            .collect();
        self.read_data.clear();
        self.read_data.extend_from_slice(self.mem.smem_read_data());
        let ins: Vec<MemIn<'_>> = self.clients.iter_mut().map(Client::request).collect();
        if self.single_port {
            self.grants[0] = self.mem.comb(&ins[0]);
        } else {
            self.mem.comb_clients(&ins, &mut self.grants);
        }
        for (i, c) in self.clients.iter_mut().enumerate() {
            c.update(&self.grants[i], loaded[i]);
        }
    }
}

fn build<G: MemLevel>(mem: MemorySystem<G>, clients: usize, single: bool) -> RtlResult<Top<G>> {
    Ok(Top {
        mem,
        clients: (0..clients).map(Client::new).collect::<RtlResult<_>>()?,
        grants: vec![MemOut::default(); clients],
        read_data: Vec::new(),
        single_port: single,
    })
}

fn memory<G: MemLevel>(level: G, clients: usize) -> MemorySystem<G> {
    let mut mem = MemorySystem::with_level(params(), level, clients).expect("memory system");
    mem.host_write(0, &image(clients));
    for i in 0..clients {
        let map = TensorMap::dense(
            ElemType::Fp16,
            (i * BOX_BYTES) as u64,
            &[COLS, ROWS],
            &[COLS as u32, ROWS as u32],
        );
        mem.set_descriptor(i, map).expect("descriptor");
    }
    mem
}

/// Runs the clients to Done; returns the cycles and what each client read (the read data
/// of every cycle whose grant says they are its).
fn run<G: MemLevel>(top: Top<G>) -> (u64, Vec<Vec<u8>>) {
    let n = top.clients.len();
    let mut got = vec![Vec::new(); n];
    let mut sim = Simulator::new(top).expect("elaborates");
    sim.reset(1).expect("reset");
    let mut cycles = 0;
    while !sim.top().clients.iter().all(|c| c.state.q() == DONE) {
        sim.step().expect("step");
        cycles += 1;
        let top = sim.top();
        assert!(top.mem.error().is_none(), "{:?}", top.mem.error());
        for (i, g) in top.grants.iter().enumerate() {
            if g.smem_read_valid {
                got[i].extend_from_slice(&top.read_data);
            }
        }
        assert!(cycles < 20_000, "the clients did not finish");
    }
    // The last read's data arrive in the cycle after its acceptance.
    sim.step().expect("step");
    let top = sim.top();
    for (i, g) in top.grants.iter().enumerate() {
        if g.smem_read_valid {
            got[i].extend_from_slice(&top.read_data);
        }
    }
    (cycles, got)
}

fn params() -> MemParams {
    MemParams {
        latency: 12,
        ..MemParams::default()
    }
}

#[test]
fn four_clients_each_read_back_their_own_box() {
    let n = 4;
    let gmem = GlobalMemory::new(params(), (n * BOX_BYTES) as u64).expect("gmem");
    let mem = memory(gmem, n).with_clients(n).expect("4 clients");
    assert_eq!(mem.clients(), 4);
    let (cycles, got) = run(build(mem, n, false).expect("top"));
    let img = image(n);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(g.len(), BOX_BYTES, "client {i} read {} bytes", g.len());
        assert_eq!(g[..], img[i * BOX_BYTES..(i + 1) * BOX_BYTES], "client {i}");
    }
    // One client alone takes fewer cycles than four sharing the ports.
    let gmem = GlobalMemory::new(params(), BOX_BYTES as u64).expect("gmem");
    let (alone, _) = run(build(memory(gmem, 1), 1, false).expect("top"));
    assert!(
        cycles > alone,
        "4 clients {cycles} cycles, 1 client {alone}"
    );
}

#[test]
fn one_client_through_the_arbiter_path_is_the_single_port() {
    let gmem = GlobalMemory::new(params(), BOX_BYTES as u64).expect("gmem");
    let (a, got_a) = run(build(memory(gmem, 1), 1, true).expect("top"));
    let gmem = GlobalMemory::new(params(), BOX_BYTES as u64).expect("gmem");
    let mem = memory(gmem, 1).with_clients(1).expect("1 client");
    let (b, got_b) = run(build(mem, 1, false).expect("top"));
    assert_eq!((a, &got_a), (b, &got_b));
    assert_eq!(got_a[0][..], image(1)[..]);
}

#[test]
fn client_counts_outside_the_arbiter_are_refused() {
    for n in [0, MAX_CLIENTS + 1] {
        let gmem = GlobalMemory::new(params(), 1024).expect("gmem");
        let e = memory_bare(gmem).with_clients(n).err().expect("refused");
        assert!(e.to_string().contains("clients"), "{e}");
    }
}

fn memory_bare(gmem: GlobalMemory) -> MemorySystem<GlobalMemory> {
    MemorySystem::with_level(params(), gmem, 1).expect("memory system")
}

/// A memory level in front of global memory that holds every response `extra` cycles at the
/// head of the channel before it shows it: a stand-in for a slower level, written against
/// the trait alone.
struct Delayed<G: MemLevel> {
    inner: G,
    extra: u32,
    waited: Reg<u32>,
}

impl<G: MemLevel> Module for Delayed<G> {
    fn name(&self) -> &str {
        "gmem"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.waited);
        self.inner.visit(v);
    }
}

impl<G: MemLevel> MemLevel for Delayed<G> {
    fn out(&self) -> GmemOut {
        let o = self.inner.out();
        GmemOut {
            resp: o.resp.filter(|_| self.waited.q() >= self.extra),
            ..o
        }
    }
    fn resp_data(&self) -> &[u8] {
        self.inner.resp_data()
    }
    fn comb(&mut self, req: Option<GmemReq<'_>>, resp_ready: bool) -> Option<GmemFault> {
        let shown = self.out().resp.is_some();
        let at_head = self.inner.out().resp.is_some();
        let popped = shown && resp_ready;
        self.waited.set_d(match (popped, at_head) {
            (true, _) | (false, false) => 0,
            (false, true) => (self.waited.q() + 1).min(self.extra),
        });
        self.inner.comb(req, popped)
    }
    fn bytes(&self) -> u64 {
        self.inner.bytes()
    }
    fn bytes_read(&self) -> u64 {
        self.inner.bytes_read()
    }
    fn requests(&self) -> u64 {
        self.inner.requests()
    }
    fn host_write(&mut self, addr: u64, data: &[u8]) {
        self.inner.host_write(addr, data)
    }
    fn host_read(&self, addr: u64, len: usize) -> &[u8] {
        self.inner.host_read(addr, len)
    }
}

#[test]
fn another_level_slots_in_behind_the_tma() {
    let plain = GlobalMemory::new(params(), BOX_BYTES as u64).expect("gmem");
    let (fast, got_fast) = run(build(memory(plain, 1), 1, false).expect("top"));
    let slow = Delayed {
        inner: GlobalMemory::new(params(), BOX_BYTES as u64).expect("gmem"),
        extra: 30,
        waited: Reg::new("waited", 32, 0).expect("reg"),
    };
    let top = build(memory(slow, 1), 1, false).expect("top");
    let (slow_cycles, got_slow) = run(top);
    assert_eq!(got_fast, got_slow, "the same bytes through either level");
    assert_eq!(got_slow[0][..], image(1)[..]);
    // Every response waits 30 more cycles at the head, and they are served in order: at
    // least 30 cycles more in all.
    assert!(
        slow_cycles >= fast + 30,
        "slow {slow_cycles} against fast {fast}"
    );
}
