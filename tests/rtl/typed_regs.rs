//! Typed registers and observed wires, through the public API: a record register traces the
//! same bits as the packed word it replaces, and a wave-only wire costs nothing untraced.

use std::cell::Cell;
use std::rc::Rc;

use tensorcore_rtl::rtl::*;

/// Two lanes of (sign, 5-bit exponent, 11-bit significand) plus a valid bit: 35 bits when
/// packed as `valid | lane0 << 1 | lane1 << 18`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Stage {
    lanes: [(bool, u8, u16); 2],
    valid: bool,
}

impl Bundle for Stage {
    const CAPACITY: u32 = 35;
    const WORDS: usize = 1;
    fn encode(&self, out: &mut [u64]) {
        out[0] = 0;
        pack_field(out, 0, 1, u64::from(self.valid));
        for (k, &(s, e, m)) in self.lanes.iter().enumerate() {
            let lo = 1 + 17 * k as u32;
            pack_field(out, lo, 11, u64::from(m));
            pack_field(out, lo + 11, 5, u64::from(e));
            pack_field(out, lo + 16, 1, u64::from(s));
        }
    }
}

/// The packing written independently of `encode`, bit by bit.
fn packed(s: &Stage) -> u64 {
    let mut w = u64::from(s.valid);
    for (k, &(sign, e, m)) in s.lanes.iter().enumerate() {
        for i in 0..11 {
            w |= u64::from((m >> i) & 1) << (1 + 17 * k + i);
        }
        for i in 0..5 {
            w |= u64::from((e >> i) & 1) << (1 + 17 * k + 11 + i);
        }
        w |= u64::from(sign) << (1 + 17 * k + 16);
    }
    w
}

/// A block holding the same stage as a record and as a packed word, plus a wave-only wire
/// whose closure counts its calls.
struct Pipe {
    rec: Reg<Stage>,
    word: Reg<u64>,
    view: Wire<u64>,
    calls: Rc<Cell<u64>>,
    n: Reg<u16>,
}

impl Pipe {
    fn new(calls: Rc<Cell<u64>>) -> Result<Self> {
        Ok(Self {
            rec: Reg::new("rec", 35, Stage::default())?,
            word: Reg::new("word", 35, 0)?,
            view: Wire::new("view", 35, 0)?,
            calls,
            n: Reg::new("n", 16, 0)?,
        })
    }
}

impl Module for Pipe {
    fn name(&self) -> &str {
        "pipe"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.rec);
        v.reg(&mut self.word);
        v.wire(&mut self.view);
        v.reg(&mut self.n);
    }
}

impl Design for Pipe {
    fn comb(&mut self) {
        let n = self.n.q();
        let x = u32::from(n).wrapping_mul(0x9E37_79B9);
        let s = Stage {
            lanes: [
                (x & 1 == 1, (x >> 1) as u8 & 31, (x >> 6) as u16 & 0x7FF),
                (
                    x >> 17 & 1 == 1,
                    (x >> 18) as u8 & 31,
                    (x >> 21) as u16 & 0x7FF,
                ),
            ],
            valid: !n.is_multiple_of(3),
        };
        self.rec.set_d(s);
        self.word.set_d(packed(&s));
        let calls = &self.calls;
        let q = self.rec.q();
        self.view.set_with(|| {
            calls.set(calls.get() + 1);
            packed(&q)
        });
        self.n.set_d(n.wrapping_add(1));
    }
}

fn vcd_body(path: &std::path::Path) -> Vec<(bool, String)> {
    let text = std::fs::read_to_string(path).expect("vcd");
    // The value changes of `rec` and `word`, with their identifiers replaced by their names.
    let id = |name: &str| {
        text.lines()
            .find(|l| l.starts_with("$var") && l.split_whitespace().nth(4) == Some(name))
            .and_then(|l| l.split_whitespace().nth(3))
            .map(str::to_string)
            .expect(name)
    };
    let (rec, word) = (id("rec"), id("word"));
    text.lines()
        .filter_map(|l| {
            let (v, i) = l.rsplit_once(' ')?;
            (i == rec || i == word).then(|| (i == rec, v.to_string()))
        })
        .collect()
}

#[test]
fn a_record_register_traces_the_bits_of_the_packed_word() {
    let dir = std::env::temp_dir().join(format!("rtl_typed_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("pipe.vcd");
    let calls = Rc::new(Cell::new(0));
    let mut sim = Simulator::with_trace(
        Pipe::new(calls.clone()).expect("pipe"),
        &TraceConfig::vcd(&path),
    )
    .expect("sim");
    sim.reset(1).expect("reset");
    for _ in 0..50 {
        sim.step().expect("step");
        let rec = sim.peek("pipe.rec").expect("rec");
        let word = sim.peek("pipe.word").expect("word");
        assert_eq!(rec, word, "cycle {}", sim.cycle());
        assert_eq!(rec.width, 35);
    }
    sim.finish().expect("finish");
    // Every change of `rec` is matched by the same change of `word`, in the same cycle.
    let body = vcd_body(&path);
    assert!(body.len() > 60, "{} changes", body.len());
    for pair in body.chunks(2) {
        assert!(pair[0].0 && !pair[1].0, "rec then word: {pair:?}");
        assert_eq!(pair[0].1, pair[1].1);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_wave_only_wire_is_computed_only_when_observed() {
    // Untraced: the closure never runs.
    let calls = Rc::new(Cell::new(0));
    let mut sim = Simulator::new(Pipe::new(calls.clone()).expect("pipe")).expect("sim");
    sim.run(20).expect("run");
    assert_eq!(calls.get(), 0);
    assert_eq!(sim.top().n.q(), 20);
    // A peek turns every wire on and settles: the wire shows this cycle's value.
    let v = sim.peek("pipe.view").expect("view").to_u128() as u64;
    assert_eq!(v, packed(&sim.top().rec.q()));
    let before = calls.get();
    assert!(before >= 1);
    sim.step().expect("step");
    assert_eq!(calls.get(), before + 1);

    // Traced with a glob that leaves the wire out: still not computed.
    let dir = std::env::temp_dir().join(format!("rtl_observe_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let calls = Rc::new(Cell::new(0));
    let cfg = TraceConfig::vcd(dir.join("a.vcd")).glob("pipe.n");
    let mut sim =
        Simulator::with_trace(Pipe::new(calls.clone()).expect("pipe"), &cfg).expect("sim");
    sim.run(10).expect("run");
    assert_eq!(calls.get(), 0);
    sim.finish().expect("finish");
    // Selected: computed every cycle.
    let cfg = TraceConfig::vcd(dir.join("b.vcd")).glob("pipe.view");
    let mut sim =
        Simulator::with_trace(Pipe::new(calls.clone()).expect("pipe"), &cfg).expect("sim");
    sim.run(10).expect("run");
    assert_eq!(calls.get(), 10);
    sim.finish().expect("finish");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_record_that_does_not_fit_its_width_is_refused() {
    let wide = Stage {
        lanes: [(true, 31, 0x7FF); 2],
        valid: true,
    };
    assert!(Reg::new("rec", 20, wide).is_err());
    assert!(Reg::new("rec", 36, Stage::default()).is_err());
    assert!(Reg::new("rec", 35, wide).is_ok());
}
