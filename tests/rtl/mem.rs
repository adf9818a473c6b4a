//! Memory arrays: registered reads, writes at the edge, reset, tracing.

use tensorcore_rtl::rtl::{Design, Input, Mem, Module, Simulator, Visitor};

/// A memory driven from inputs: write (we, waddr, wdata) and read (re, raddr) each cycle.
struct Top {
    we: Input<bool>,
    waddr: Input<u32>,
    wdata: Input<u32>,
    re: Input<bool>,
    raddr: Input<u32>,
    m: Mem<u32>,
}
impl Module for Top {
    fn name(&self) -> &str {
        "top"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.input(&mut self.we);
        v.input(&mut self.waddr);
        v.input(&mut self.wdata);
        v.input(&mut self.re);
        v.input(&mut self.raddr);
        v.mem(&mut self.m);
    }
}
impl Design for Top {
    fn comb(&mut self) {
        if self.we.get() {
            self.m.write(self.waddr.get() as usize, &[self.wdata.get()]);
        }
        if self.re.get() {
            self.m.read(self.raddr.get() as usize, 1);
        }
    }
}

fn top() -> Top {
    Top {
        we: Input::new("we", 1, false).unwrap(),
        waddr: Input::new("waddr", 32, 0).unwrap(),
        wdata: Input::new("wdata", 32, 0).unwrap(),
        re: Input::new("re", 1, false).unwrap(),
        raddr: Input::new("raddr", 32, 0).unwrap(),
        m: Mem::new("ram", 16, 32).unwrap(),
    }
}

#[test]
fn write_visible_next_cycle_and_read_is_registered_read_first() {
    let mut sim = Simulator::new(top()).unwrap();
    sim.reset(1).unwrap();
    let t = sim.top_mut();
    t.we.set(true);
    t.waddr.set(3);
    t.wdata.set(0xAB);
    t.re.set(true);
    t.raddr.set(3);
    // Same cycle: the write is not visible combinationally and the read returns the old word.
    sim.settle();
    assert_eq!(sim.top().m.peek(3), 0);
    sim.step().unwrap();
    assert_eq!(
        sim.top().m.rdata(),
        &[0],
        "read during write returns the old word"
    );
    assert_eq!(
        sim.top().m.peek(3),
        0xAB,
        "the write is committed at the edge"
    );
    let t = sim.top_mut();
    t.we.set(false);
    sim.step().unwrap();
    assert_eq!(
        sim.top().m.rdata(),
        &[0xAB],
        "a read in cycle t has data in t + 1"
    );
    // The read register holds while no read is presented.
    sim.top_mut().re.set(false);
    sim.step().unwrap();
    assert_eq!(sim.top().m.rdata(), &[0xAB]);
}

#[test]
fn reset_keeps_contents_and_clears_read_register() {
    let mut sim = Simulator::new(top()).unwrap();
    sim.top_mut().m.host_write(5, &[7, 8]);
    sim.top_mut().re.set(true);
    sim.top_mut().raddr.set(5);
    sim.step().unwrap();
    assert_eq!(sim.top().m.rdata(), &[7]);
    sim.top_mut().re.set(false);
    sim.reset(2).unwrap();
    assert_eq!(sim.top().m.host_read(5, 2), &[7, 8]);
    assert!(sim.top().m.rdata().is_empty());
}

#[test]
fn ports_are_traced_and_contents_are_not() {
    let mut sim = Simulator::new(top()).unwrap();
    let names: Vec<String> = sim.signals().unwrap().iter().map(|s| s.path()).collect();
    for p in ["we", "waddr", "wdata", "re", "raddr", "rdata"] {
        assert!(names.contains(&format!("top.ram.{p}")), "{p} in {names:?}");
    }
    assert_eq!(
        names.iter().filter(|n| n.starts_with("top.ram.")).count(),
        8
    );
}

#[test]
fn deterministic_bits() {
    let run = || {
        let mut sim = Simulator::new(top()).unwrap();
        let mut seen = Vec::new();
        for c in 0..40u32 {
            let t = sim.top_mut();
            t.we.set(c % 3 != 0);
            t.waddr.set(c * 7 % 16);
            t.wdata.set(c.wrapping_mul(0x9E37_79B9));
            t.re.set(c % 2 == 0);
            t.raddr.set(c * 5 % 16);
            sim.step().unwrap();
            seen.extend_from_slice(sim.top().m.rdata());
        }
        (seen, sim.top().m.host_read(0, 16).to_vec())
    };
    assert_eq!(run(), run());
}
