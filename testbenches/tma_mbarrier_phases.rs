//! `tma_mbarrier_phases`: one mbarrier (`init(1)`) over four TMA loads issued one after the
//! other, each with `arrive.expect_tx(box bytes)` in its command's cycle and waited for with
//! `try_wait.parity(k mod 2)`. Sampled every cycle: the phase register flips exactly four
//! times (0 -> 1 -> 0 -> 1 -> 0), each flip after its load's command and before the next one
//! starts; at every flip the transaction count is back to 0 and pending arrivals back to 1;
//! during each phase the count is nonzero (bytes expected and still in flight); the parity
//! wait of load k succeeds exactly from the cycle after its flip. Each box is checked against
//! `verify::tma_ref`. The waveform shows `mbar_0.phase`, `mbar_0.tx`, `mbar_0.pending` and
//! `tma.complete_tx`.

use crate::hw::memory::{ElemType, MbarOp, MbarOpKind, Stim, TensorMap, TmaCmd, TmaOp};
use crate::hw::memory::{MemScript, MemorySystem};
use crate::rtl::Simulator;
use crate::tb::tma::{bench_params, pattern};
use crate::tb::Bench;
use crate::verify::tma_ref;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "mbarrier phase/parity/tx sequence over four TMA loads, sampled every cycle";

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    crate::tb::tma::trace_story(tb);
    let img = pattern(32 * 32 * 2, 15);
    let map = TensorMap::dense(ElemType::Fp16, 0, &[32, 32], &[32, 8]);
    let bytes = 32 * 8 * 2;
    let mut steps = vec![Stim {
        mbar_ops: vec![MbarOp {
            bar: 0,
            op: MbarOpKind::Init(1),
        }],
        ..Stim::default()
    }];
    for k in 0..4u32 {
        steps.push(Stim {
            tma_cmd: Some(TmaCmd {
                op: TmaOp::Load,
                desc: 0,
                coords: [0, 8 * k as i32, 0, 0, 0],
                smem_addr: 1024 * k,
                mbar: 0,
            }),
            mbar_ops: vec![MbarOp {
                bar: 0,
                op: MbarOpKind::ArriveExpectTx(bytes),
            }],
            ..Stim::default()
        });
        steps.push(Stim {
            wait: Some((0, k % 2 == 1)),
            ..Stim::default()
        });
    }
    let mut mem = MemorySystem::new(bench_params(), img.len() as u64, 1).map_err(|e| e.to_string())?;
    mem.host_write(0, &img);
    mem.set_descriptor(0, map).map_err(|e| e.to_string())?;
    let top = MemScript::new(mem, steps).map_err(|e| e.to_string())?;
    let mut sim = Simulator::with_trace(top, &tb.trace()).map_err(|e| e.to_string())?;
    sim.reset(1).map_err(|e| e.to_string())?;
    let mut flips = Vec::new();
    let mut nonzero_tx = [false; 4];
    let mut prev = sim.top().mem().mbar(0).unwrap_or_default();
    let start = sim.cycle();
    while !sim.top().is_done() && sim.cycle() - start < 100_000 {
        sim.step().map_err(|e| e.to_string())?;
        sim.top_mut().after_edge();
        let mem = sim.top().mem();
        if let Some(e) = mem.error() {
            return Err(e.to_string());
        }
        let s = mem.mbar(0).unwrap_or_default();
        let c = sim.cycle() - start;
        if s.phase != prev.phase {
            let k = flips.len();
            flips.push(c);
            tb.check_eq(format!("flip {k}: tx back to 0"), s.tx, 0);
            tb.check_eq(format!("flip {k}: pending back to 1"), s.pending, 1);
            tb.check_eq(format!("flip {k}: new parity"), s.phase, k % 2 == 0);
            tb.check(format!("flip {k}: try_wait.parity({}) true", k % 2), mem.try_wait_parity(0, k % 2 == 1));
            tb.check(format!("flip {k}: try_wait.parity({}) false", (k + 1) % 2), !mem.try_wait_parity(0, k % 2 == 0));
        } else if s.tx != 0 && flips.len() < 4 {
            nonzero_tx[flips.len()] = true;
        }
        prev = s;
    }
    tb.add_cycles(sim.cycle() - start);
    tb.check_eq("phase flips", flips.len(), 4);
    for (k, &seen) in nonzero_tx.iter().enumerate() {
        tb.check(format!("phase {k}: tx nonzero while bytes in flight"), seen);
    }
    let (top, _) = sim.finish().map_err(|e| e.to_string())?;
    let log = top.log();
    for k in 0..4usize {
        let cmd = &log[1 + 2 * k];
        let wait = &log[2 + 2 * k];
        if let Some(&f) = flips.get(k) {
            tb.check(format!("load {k}: flip after its command"), f > cmd.done);
            tb.check_eq(format!("load {k}: wait succeeds in the cycle the flip is visible"), wait.done, f);
        }
        let (dense, _) = tma_ref::dense_box(&img, &map, &[0, 8 * k as i32, 0, 0, 0]);
        tb.check_eq(
            format!("load {k}: box"),
            top.mem().smem_host_read(1024 * k as u32, dense.len()).to_vec(),
            dense,
        );
    }
    Ok(())
}
