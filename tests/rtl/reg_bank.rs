//! Register banks (`RegBank`): the same block written with one `Reg` per register and with
//! its registers as the fields of one bank traces the same waveform byte for byte, holds
//! unwritten fields, resets, peeks and trips the watchdog as registers do.

use tensorcore_rtl::rtl::*;

/// What the block computes each cycle from its registers' outputs: a 12-bit counter, a flag
/// written only every third cycle, and a 40-bit bus written from the counter.
fn next(count: u16, flag: bool, bus: Wide<1>) -> (u16, Option<bool>, Wide<1>) {
    let count_next = (count + 3) & 0xFFF;
    let flag_next = (count % 9 == 2).then_some(!flag);
    let mut bus_next = bus;
    bus_next.set_field(
        0,
        40,
        u64::from(count).wrapping_mul(0x1_0001_0001) & 0xFF_FFFF_FFFF,
    );
    (count_next, flag_next, bus_next)
}

/// The block with one register each.
struct Regs {
    count: Reg<u16>,
    flag: Reg<bool>,
    bus: Reg<Wide<1>>,
    stop: Input<bool>,
}

impl Module for Regs {
    fn name(&self) -> &str {
        "blk"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.input(&mut self.stop);
        v.reg(&mut self.count);
        v.reg(&mut self.flag);
        v.reg(&mut self.bus);
    }
}

impl Design for Regs {
    fn comb(&mut self) {
        if self.stop.get() {
            return;
        }
        let (c, f, b) = next(self.count.q(), self.flag.q(), self.bus.q());
        self.count.set_d(c);
        if let Some(f) = f {
            self.flag.set_d(f);
        }
        self.bus.set_d(b);
    }
}

#[derive(Clone, Copy, Debug)]
struct Fields {
    count: u16,
    flag: bool,
    bus: Wide<1>,
}

/// A bank of the block's registers as the block uses it: a [`RegBank`] or a [`RareBank`].
trait BankOf {
    fn q(&self) -> &Fields;
    fn put<T>(&mut self, field: impl FnOnce(&mut Fields) -> &mut T, value: T);
    fn bank(&mut self) -> &mut RegBank<Fields>;
    /// The bank's edge, as its kind presents it to the engine.
    fn edge<V: Visitor>(&mut self, v: &mut V);
}

impl BankOf for RegBank<Fields> {
    fn q(&self) -> &Fields {
        RegBank::q(self)
    }
    fn put<T>(&mut self, field: impl FnOnce(&mut Fields) -> &mut T, value: T) {
        self.set(field, value);
    }
    fn bank(&mut self) -> &mut RegBank<Fields> {
        self
    }
    fn edge<V: Visitor>(&mut self, v: &mut V) {
        v.bank(self);
    }
}

impl BankOf for RareBank<Fields> {
    fn q(&self) -> &Fields {
        RareBank::q(self)
    }
    fn put<T>(&mut self, field: impl FnOnce(&mut Fields) -> &mut T, value: T) {
        self.set(field, value);
    }
    fn bank(&mut self) -> &mut RegBank<Fields> {
        self.bank_mut()
    }
    fn edge<V: Visitor>(&mut self, v: &mut V) {
        v.rare_bank(self);
    }
}

/// The same block with its registers as one bank (`B`: a plain or a rare one).
struct Banked<B = RegBank<Fields>> {
    regs: B,
    stop: Input<bool>,
}

impl<B: BankOf> Module for Banked<B> {
    fn name(&self) -> &str {
        "blk"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.input(&mut self.stop);
        let b = self.regs.bank();
        v.bank_reg(b, 0, |r| &r.count);
        v.bank_reg(b, 1, |r| &r.flag);
        v.bank_reg(b, 2, |r| &r.bus);
        self.regs.edge(v);
    }
}

impl<B: BankOf> Design for Banked<B> {
    fn comb(&mut self) {
        if self.stop.get() {
            return;
        }
        let q = *self.regs.q();
        let (c, f, b) = next(q.count, q.flag, q.bus);
        self.regs.put(|r| &mut r.count, c);
        if let Some(f) = f {
            self.regs.put(|r| &mut r.flag, f);
        }
        self.regs.put(|r| &mut r.bus, b);
    }
}

fn regs() -> Regs {
    Regs {
        count: Reg::new("count", 12, 5).expect("count"),
        flag: Reg::new("flag", 1, true).expect("flag"),
        bus: Reg::new("bus", 40, Wide::ZERO).expect("bus"),
        stop: Input::new("stop", 1, false).expect("stop"),
    }
}

fn banked() -> Banked {
    let reset = Fields {
        count: 5,
        flag: true,
        bus: Wide::ZERO,
    };
    Banked {
        regs: RegBank::new(reset)
            .field("count", 12, |r: &Fields| &r.count)
            .and_then(|b| b.field("flag", 1, |r: &Fields| &r.flag))
            .and_then(|b| b.field("bus", 40, |r: &Fields| &r.bus))
            .expect("bank"),
        stop: Input::new("stop", 1, false).expect("stop"),
    }
}

/// Runs `top` traced to `path` for 40 cycles after one reset cycle, peeking every register
/// each cycle; returns the peeks (count, flag, bus words).
fn run<D: Design>(top: D, path: &std::path::Path) -> Vec<(Vec<u64>, Vec<u64>, Vec<u64>)> {
    let mut sim = Simulator::with_trace(top, &TraceConfig::vcd(path)).expect("sim");
    sim.reset(1).expect("reset");
    let mut seen = Vec::new();
    for _ in 0..40 {
        sim.step().expect("step");
        let p = |sim: &mut Simulator<D>, n: &str| sim.peek(n).expect(n).words;
        seen.push((
            p(&mut sim, "blk.count"),
            p(&mut sim, "blk.flag"),
            p(&mut sim, "blk.bus"),
        ));
    }
    sim.finish().expect("finish");
    seen
}

#[test]
fn a_bank_traces_and_peeks_as_its_registers_would() {
    let dir = std::env::temp_dir().join(format!("rtl_bank_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (a, b) = (dir.join("regs.vcd"), dir.join("bank.vcd"));
    let peeks_regs = run(regs(), &a);
    let peeks_bank = run(banked(), &b);
    assert_eq!(peeks_regs, peeks_bank);
    // The flag is written every third cycle only, and holds in between: it changes at most
    // every third cycle, and does change.
    let flags: Vec<u64> = peeks_bank.iter().map(|p| p.1[0]).collect();
    let changes = flags.windows(2).filter(|w| w[0] != w[1]).count();
    assert!((10..=14).contains(&changes), "{flags:?}");
    // The waveforms, byte for byte.
    assert_eq!(
        std::fs::read(&a).expect("regs.vcd"),
        std::fs::read(&b).expect("bank.vcd")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bank_resets_its_fields_and_its_signals_are_registers() {
    let mut sim = Simulator::new(banked()).expect("sim");
    sim.run(7).expect("run");
    assert_ne!(sim.top().regs.q().count, 5);
    sim.reset(1).expect("reset");
    assert_eq!(sim.top().regs.q().count, 5);
    assert!(sim.top().regs.q().flag);
    assert_eq!(sim.top().regs.q().bus, Wide::ZERO);
    let signals = sim.signals().expect("signals");
    let regs: Vec<(String, u32)> = signals
        .iter()
        .filter(|s| s.kind == SignalKind::Reg)
        .map(|s| (s.name.clone(), s.width))
        .collect();
    assert_eq!(
        regs,
        [("count".into(), 12), ("flag".into(), 1), ("bus".into(), 40)]
    );
}

#[test]
fn a_stopped_bank_trips_the_watchdog_and_a_running_one_does_not() {
    // No progress counter: the watchdog watches whether any register changes value.
    let mut sim = Simulator::new(banked()).expect("sim");
    sim.set_watchdog(4);
    sim.run(30).expect("a running bank is progress");
    sim.top_mut().stop.set(true);
    let err = sim.run(30).expect_err("a stopped bank stalls");
    assert!(matches!(err, RtlError::Watchdog { .. }), "{err}");
}

#[test]
fn a_field_that_does_not_fit_is_refused() {
    let reset = Fields {
        count: 0x1FFF,
        flag: false,
        bus: Wide::ZERO,
    };
    let too_wide = RegBank::new(reset).field("count", 12, |r: &Fields| &r.count);
    assert!(matches!(too_wide, Err(RtlError::ResetTooWide { .. })));
    let zero = RegBank::new(reset).field("flag", 0, |r: &Fields| &r.flag);
    assert!(zero.is_err());
    let over = RegBank::new(reset).field("flag", 2, |r: &Fields| &r.flag);
    assert!(over.is_err());
}

/// The block with its registers as one rare bank (copied at the edge only after a cycle
/// that wrote it).
fn rare_banked() -> Banked<RareBank<Fields>> {
    let reset = Fields {
        count: 5,
        flag: true,
        bus: Wide::ZERO,
    };
    Banked {
        regs: RareBank::new(reset)
            .field("count", 12, |r: &Fields| &r.count)
            .and_then(|b| b.field("flag", 1, |r: &Fields| &r.flag))
            .and_then(|b| b.field("bus", 40, |r: &Fields| &r.bus))
            .expect("bank"),
        stop: Input::new("stop", 1, false).expect("stop"),
    }
}

#[test]
fn a_rare_bank_traces_and_peeks_as_its_registers_would() {
    let dir = std::env::temp_dir().join(format!("rtl_rare_bank_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (a, b) = (dir.join("regs.vcd"), dir.join("rare.vcd"));
    let peeks_regs = run(regs(), &a);
    let peeks_rare = run(rare_banked(), &b);
    assert_eq!(peeks_regs, peeks_rare);
    assert_eq!(
        std::fs::read(&a).expect("regs.vcd"),
        std::fs::read(&b).expect("rare.vcd")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_rare_bank_holds_when_unwritten_and_resets() {
    // Cycles with no write hold every field (the edge skips the copy), a write after them
    // lands at the next edge, and a reset after a skipped edge still resets.
    let mut sim = Simulator::new(rare_banked()).expect("sim");
    sim.run(4).expect("run");
    let held = *sim.top().regs.q();
    sim.top_mut().stop.set(true);
    sim.run(5).expect("stopped cycles");
    assert_eq!(sim.top().regs.q().count, held.count);
    assert_eq!(sim.top().regs.q().flag, held.flag);
    assert_eq!(sim.top().regs.q().bus, held.bus);
    sim.top_mut().stop.set(false);
    sim.run(1).expect("one written cycle");
    assert_eq!(sim.top().regs.q().count, (held.count + 3) & 0xFFF);
    sim.top_mut().stop.set(true);
    sim.reset(1).expect("reset");
    assert_eq!(sim.top().regs.q().count, 5);
    assert!(sim.top().regs.q().flag);
    // The watchdog sees a stopped rare bank as stalled, as it sees registers.
    sim.set_watchdog(4);
    let err = sim.run(30).expect_err("a stopped rare bank stalls");
    assert!(matches!(err, RtlError::Watchdog { .. }), "{err}");
}
