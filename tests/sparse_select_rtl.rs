//! A prototype of the 2:4 selection hardware on the cycle engine, ahead of the clocked core
//! (see docs/sparsity.md, "Hardware"): one mesh row of four PEs with `w = 2` kept lanes. The
//! metadata nibble travels right with its A values through registers (`a_out`, `meta_out`),
//! B enters each column from the top with the column skew (four dense lanes per group), and
//! in every PE two 4:1 multiplexers (`sel_0`, `sel_1` -> `b_sel`) pick the B values of the kept
//! positions. The test checks the selects cycle by cycle, the ieee dot products over the
//! selected pairs against the sparse functional model, and that the waves hold the signals.

use tensorcore_rtl::gemm::GemmConfig;
use tensorcore_rtl::numerics::dot::{dot, AccMode};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, FP16};
use tensorcore_rtl::rtl::{Design, Input, Module, Reg, Simulator, TraceConfig, Visitor, Wire};
use tensorcore_rtl::sparse::{run_functional_sparse, SparseGemm};

/// Kept lanes per PE per cycle (one group of four dense positions).
const W: usize = 2;
const COLS: usize = 4;

/// The selection front of a sparse PE.
struct SelectPe {
    name: String,
    fb: u32,
    a_out: Reg<u64>,
    meta_out: Reg<u8>,
    b_out: Reg<u64>,
    sel: [Wire<u8>; W],
    b_sel: Wire<u64>,
}

impl SelectPe {
    fn new(name: String, fa: Format, fb: Format) -> tensorcore_rtl::rtl::Result<Self> {
        Ok(Self {
            name,
            fb: fb.width(),
            a_out: Reg::new("a_out", fa.width() * W as u32, 0)?,
            meta_out: Reg::new("meta_out", 2 * W as u32, 0)?,
            b_out: Reg::new("b_out", fb.width() * 2 * W as u32, 0)?,
            sel: [Wire::new("sel_0", 2, 0)?, Wire::new("sel_1", 2, 0)?],
            b_sel: Wire::new("b_sel", fb.width() * W as u32, 0)?,
        })
    }

    /// A and its metadata from the left, four dense B lanes from the top; returns the two
    /// selected B values (the multiplexer outputs).
    fn comb(&mut self, a_in: u64, meta_in: u8, b_in: u64) -> [u64; W] {
        let lane = |bus: u64, i: u32, w: u32| (bus >> (i * w)) & ((1u64 << w) - 1);
        let mut out = [0u64; W];
        let mut packed = 0u64;
        for (t, o) in out.iter_mut().enumerate() {
            // Kept lane t: group t / 2 of this cycle, slot t % 2 of its nibble.
            let group = (t / 2) as u32;
            let s = (meta_in >> (2 * (t % 2))) & 3;
            self.sel[t].set(s);
            *o = lane(b_in, 4 * group + s as u32, self.fb);
            packed |= *o << (t as u32 * self.fb);
        }
        self.b_sel.set(packed);
        self.a_out.set_d(a_in);
        self.meta_out.set_d(meta_in);
        self.b_out.set_d(b_in);
        out
    }
}

impl Module for SelectPe {
    fn name(&self) -> &str {
        &self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.a_out);
        v.reg(&mut self.meta_out);
        v.reg(&mut self.b_out);
        for s in &mut self.sel {
            v.wire(s);
        }
        v.wire(&mut self.b_sel);
    }
}

/// One mesh row: A (kept values and nibble) at the left edge, B per column at the top.
struct Row {
    a_in: Input<u64>,
    meta_in: Input<u8>,
    b_in: Vec<Input<u64>>,
    pes: Vec<SelectPe>,
}

impl Module for Row {
    fn name(&self) -> &str {
        "row"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.input(&mut self.a_in);
        v.input(&mut self.meta_in);
        for b in &mut self.b_in {
            v.input(b);
        }
        for p in &mut self.pes {
            v.child(p);
        }
    }
}

impl Design for Row {
    fn comb(&mut self) {
        let (mut a, mut meta) = (self.a_in.get(), self.meta_in.get());
        for j in 0..COLS {
            let (na, nm) = (self.pes[j].a_out.q(), self.pes[j].meta_out.q());
            self.pes[j].comb(a, meta, self.b_in[j].get());
            (a, meta) = (na, nm);
        }
    }
}

fn peek(sim: &mut Simulator<Row>, path: &str) -> u64 {
    sim.peek(path).expect("signal").words[0]
}

fn run_row(fa: Format, fb: Format, groups: usize, seed: u64, trace: Option<&std::path::Path>) {
    let cfg = GemmConfig {
        fmt_a: fa,
        fmt_b: fb,
        mode: AccMode::Ieee,
        width: W,
    };
    let g = SparseGemm::random(1, COLS, 4 * groups, cfg, seed).unwrap();
    let row = Row {
        a_in: Input::new("a_in", fa.width() * W as u32, 0).unwrap(),
        meta_in: Input::new("meta_in", 4, 0).unwrap(),
        b_in: (0..COLS)
            .map(|j| Input::new(format!("b_in_{j}"), fb.width() * 4, 0).unwrap())
            .collect(),
        pes: (0..COLS)
            .map(|j| SelectPe::new(format!("pe_0_{j}"), fa, fb).unwrap())
            .collect(),
    };
    let mut sim = match trace {
        Some(p) => Simulator::with_trace(row, &TraceConfig::vcd(p)).unwrap(),
        None => Simulator::new(row).unwrap(),
    };
    sim.reset(1).unwrap();
    let vals = g.a.values_row(0).to_vec();
    let meta = g.a.meta_row(0).to_vec();
    let mut acc = g.c.clone();
    // Group t enters the left edge at cycle t; column j sees it (and its B) at cycle t + j.
    for cycle in 0..groups + COLS - 1 {
        let top = sim.top_mut();
        let (a, m) = if cycle < groups {
            (
                vals[2 * cycle] | vals[2 * cycle + 1] << fa.width(),
                meta[cycle],
            )
        } else {
            (0, 0b0100)
        };
        top.a_in.set(a);
        top.meta_in.set(m);
        for j in 0..COLS {
            let grp = cycle.checked_sub(j).filter(|&t| t < groups);
            let bus = grp.map_or(0, |t| {
                (0..4).fold(0u64, |acc, p| {
                    acc | g.b[(4 * t + p) * COLS + j] << (p as u32 * fb.width())
                })
            });
            sim.top_mut().b_in[j].set(bus);
        }
        sim.settle();
        for (j, acc_j) in acc.iter_mut().enumerate() {
            let Some(t) = cycle.checked_sub(j).filter(|&t| t < groups) else {
                continue;
            };
            let (i0, i1) = ((meta[t] & 3) as u64, (meta[t] >> 2) as u64);
            assert_eq!(peek(&mut sim, &format!("row.pe_0_{j}.sel_0")), i0);
            assert_eq!(peek(&mut sim, &format!("row.pe_0_{j}.sel_1")), i1);
            let b_sel = peek(&mut sim, &format!("row.pe_0_{j}.b_sel"));
            let mask = (1u64 << fb.width()) - 1;
            let picked = [b_sel & mask, (b_sel >> fb.width()) & mask];
            assert_eq!(picked[0], g.b[(4 * t + i0 as usize) * COLS + j]);
            assert_eq!(picked[1], g.b[(4 * t + i1 as usize) * COLS + j]);
            let a_pair = [vals[2 * t], vals[2 * t + 1]];
            *acc_j = dot(&AccMode::Ieee, fa, fb, &a_pair, &picked, *acc_j, W)
                .unwrap()
                .bits;
        }
        sim.step().unwrap();
    }
    sim.finish().unwrap();
    assert_eq!(acc, run_functional_sparse(&g).unwrap().d, "{fa} x {fb}");
}

#[test]
fn metadata_travels_with_a_and_drives_the_muxes() {
    for (i, f) in [E4M3, FP16, BF16].into_iter().enumerate() {
        run_row(f, f, 12, 7 + i as u64, None);
    }
}

#[test]
fn waves_show_metadata_and_selects() {
    let dir = std::env::temp_dir().join(format!("tcrtl-sparse-wave-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vcd = dir.join("sparse_select.vcd");
    run_row(FP16, FP16, 6, 3, Some(&vcd));
    let text = std::fs::read_to_string(&vcd).unwrap();
    for s in ["meta_out", "sel_0", "sel_1", "b_sel", "a_out", "b_out"] {
        assert!(text.contains(&format!(" {s} ")), "{s} missing from the VCD");
    }
    std::fs::remove_dir_all(&dir).ok();
}
