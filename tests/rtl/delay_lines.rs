//! Delay lines (`DelayLines`): a skew-like block written with one `Reg` per stage and with its
//! stages as delay lines traces the same waveform byte for byte, peeks the same values, holds
//! inputs not driven, resets, and matches a reference shift register over many edges (far
//! more than the storage's slack, so the window is moved back up several times).

use tensorcore_rtl::rtl::*;

/// Lane depths: a wire, a one-stage lane and a three-stage lane.
const DEPTHS: [usize; 3] = [0, 1, 3];

/// The inputs of cycle `t` (lane 0's is never latched: it has no stage). Every seventh cycle
/// drives nothing: the inputs hold.
fn inputs(t: u64) -> Option<[(u8, bool); 3]> {
    (t % 7 != 3).then(|| {
        [
            (0xEE, true),
            (t as u8, t.is_multiple_of(2)),
            ((t * 3) as u8 & 0x3F, t.is_multiple_of(3)),
        ]
    })
}

/// The block with one register pair per stage, named as a skew names them.
struct Regs {
    stages: Vec<(Reg<u8>, Reg<bool>)>,
    /// Where each lane's stages start in `stages`.
    first: [usize; 3],
    /// What each lane's first stage takes when nothing is driven (the last driven input).
    held: [(u8, bool); 3],
    t: u64,
}

impl Module for Regs {
    fn name(&self) -> &str {
        "skew"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for (d, t) in &mut self.stages {
            v.reg(d);
            v.reg(t);
        }
    }
}

impl Design for Regs {
    fn comb(&mut self) {
        if let Some(x) = inputs(self.t) {
            self.held = x;
        }
        self.t += 1;
        for (lane, &depth) in DEPTHS.iter().enumerate() {
            let at = self.first[lane];
            for k in (0..depth).rev() {
                let v = if k == 0 {
                    self.held[lane]
                } else {
                    let (d, t) = &self.stages[at + k - 1];
                    (d.q(), t.q())
                };
                self.stages[at + k].0.set_d(v.0);
                self.stages[at + k].1.set_d(v.1);
            }
        }
    }
}

fn regs() -> Regs {
    let mut stages = Vec::new();
    let mut first = [0; 3];
    for (lane, &depth) in DEPTHS.iter().enumerate() {
        first[lane] = stages.len();
        for k in 0..depth {
            stages.push((
                Reg::new(format!("d{lane}_{k}"), 8, 0).expect("d"),
                Reg::new(format!("t{lane}_{k}"), 1, false).expect("t"),
            ));
        }
    }
    Regs {
        stages,
        first,
        held: [(0, false); 3],
        t: 0,
    }
}

/// The same block on delay lines.
struct Lines {
    lines: DelayLines<(u8, bool)>,
    t: u64,
}

impl Module for Lines {
    fn name(&self) -> &str {
        "skew"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        for stage in 0..self.lines.stages() {
            v.delay_reg(&mut self.lines, stage, 0, |e| &e.0);
            v.delay_reg(&mut self.lines, stage, 1, |e| &e.1);
        }
        v.delay(&mut self.lines);
    }
}

impl Design for Lines {
    fn comb(&mut self) {
        if let Some(x) = inputs(self.t) {
            self.lines.inputs_mut().copy_from_slice(&x);
            self.lines.latch_inputs();
        }
        self.t += 1;
    }
}

fn lines() -> Lines {
    let mut lines = DelayLines::new((0u8, false), &DEPTHS);
    lines
        .field(|j, k| format!("d{j}_{k}"), 8, |e| &e.0)
        .expect("data");
    lines
        .field(|j, k| format!("t{j}_{k}"), 1, |e| &e.1)
        .expect("tag");
    Lines { lines, t: 0 }
}

/// Every stage's register, as `(name, words)`, by peeking each.
fn peek_all<D: Design>(sim: &mut Simulator<D>) -> Vec<(String, Vec<u64>)> {
    let mut out = Vec::new();
    for (lane, &depth) in DEPTHS.iter().enumerate() {
        for k in 0..depth {
            for n in [format!("skew.d{lane}_{k}"), format!("skew.t{lane}_{k}")] {
                let words = sim.peek(&n).expect("peek").words;
                out.push((n, words));
            }
        }
    }
    out
}

/// Runs `top` traced to `path` for 150 cycles after one reset cycle; returns every cycle's
/// peeks.
fn run<D: Design>(top: D, path: &std::path::Path) -> Vec<Vec<(String, Vec<u64>)>> {
    let mut sim = Simulator::with_trace(top, &TraceConfig::vcd(path)).expect("sim");
    sim.reset(1).expect("reset");
    let mut seen = Vec::new();
    for _ in 0..150 {
        sim.step().expect("step");
        seen.push(peek_all(&mut sim));
    }
    sim.finish().expect("finish");
    seen
}

#[test]
fn delay_lines_trace_and_peek_as_one_register_per_stage() {
    let dir = std::env::temp_dir().join(format!("rtl_delay_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (a, b) = (dir.join("regs.vcd"), dir.join("lines.vcd"));
    let peeks_regs = run(regs(), &a);
    let peeks_lines = run(lines(), &b);
    assert_eq!(peeks_regs, peeks_lines);
    assert_eq!(
        std::fs::read(&a).expect("regs.vcd"),
        std::fs::read(&b).expect("lines.vcd")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn delay_lines_shift_one_stage_an_edge_hold_undriven_inputs_and_reset() {
    let mut sim = Simulator::new(lines()).expect("sim");
    // The reference: each lane's stages, stage 0 first, and the inputs as held.
    let mut lanes: Vec<Vec<(u8, bool)>> = DEPTHS.iter().map(|&d| vec![(0, false); d]).collect();
    let mut held = [(0u8, false); 3];
    for t in 0..300u64 {
        if let Some(x) = inputs(t) {
            held = x;
        }
        // Outputs before the edge: the registers' values.
        for (lane, stages) in lanes.iter().enumerate() {
            assert_eq!(
                sim.top().lines.out(lane),
                stages.last().copied(),
                "cycle {t}"
            );
        }
        sim.step().expect("step");
        for (lane, stages) in lanes.iter_mut().enumerate() {
            if !stages.is_empty() {
                stages.pop();
                stages.insert(0, held[lane]);
            }
        }
        for (lane, stages) in lanes.iter().enumerate() {
            for (k, &v) in stages.iter().enumerate() {
                assert_eq!(
                    sim.top().lines.q(lane, k),
                    v,
                    "cycle {t}, lane {lane}, stage {k}"
                );
            }
        }
    }
    sim.reset(1).expect("reset");
    for (lane, &depth) in DEPTHS.iter().enumerate() {
        for k in 0..depth {
            assert_eq!(sim.top().lines.q(lane, k), (0, false));
        }
    }
    let signals = sim.signals().expect("signals");
    let names: Vec<&str> = signals.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["d1_0", "t1_0", "d2_0", "t2_0", "d2_1", "t2_1", "d2_2", "t2_2"]
    );
}

#[test]
fn a_field_that_does_not_fit_is_refused() {
    let mut dl = DelayLines::new(0x1Fu8, &[2]);
    assert!(matches!(
        dl.field(|j, k| format!("d{j}_{k}"), 4, |e| e),
        Err(RtlError::ResetTooWide { .. })
    ));
    assert!(dl.field(|j, k| format!("d{j}_{k}"), 0, |e| e).is_err());
    assert!(dl.field(|j, k| format!("d{j}_{k}"), 5, |e| e).is_ok());
}
