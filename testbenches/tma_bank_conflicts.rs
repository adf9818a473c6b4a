//! `tma_bank_conflicts`: the bank-conflict example of docs/memory.md ("Shared-memory banks"). The
//! same 64 x 8 fp16 tile (128-byte rows) is loaded by TMA twice, unswizzled at 0 and with the 128B
//! swizzle at 4096; then a consumer reads the tile's first 16-byte column chunk of all eight rows
//! (eight 16-byte lanes) from each copy. Typed-in expectations: the unswizzled read hits one bank
//! group eight times, 8 passes (7 conflicts); the swizzled one hits 8 different bank groups, 1
//! pass; both return the same bytes, equal to the reference's dense box. The waveform shows
//! `smem.rd_passes`, `smem.conflict`, `smem.bank_conflicts` and the read held for 8 cycles.

use crate::hw::memory::{
    swizzle, ElemType, MbarOp, MbarOpKind, SmemLane, Stim, Swizzle, TensorMap, TmaCmd, TmaOp,
};
use crate::tb::tma::{pattern, run_steps};
use crate::tb::Bench;
use crate::verify::tma_ref;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "same 8-row column read, unswizzled (8 passes) vs 128B swizzle (1 pass)";

fn load(desc: usize, smem_addr: u32, bar: usize) -> Stim {
    Stim {
        tma_cmd: Some(TmaCmd {
            op: TmaOp::Load,
            desc,
            coords: [0; 5],
            smem_addr,
            mbar: bar,
        }),
        mbar_ops: vec![MbarOp {
            bar,
            op: MbarOpKind::ArriveExpectTx(1024),
        }],
        ..Stim::default()
    }
}

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    crate::tb::tma::trace_story(tb);
    let img = pattern(64 * 8 * 2, 14);
    let plain = TensorMap::dense(ElemType::Fp16, 0, &[64, 8], &[64, 8]);
    let mut swz = plain;
    swz.swizzle = Swizzle::B128;
    let col = |base: u32, mode: Swizzle| -> Vec<SmemLane> {
        (0..8)
            .map(|r| SmemLane {
                addr: swizzle(base + r * 128, mode),
                len: 16,
            })
            .collect()
    };
    let steps = vec![
        Stim {
            mbar_ops: (0..2)
                .map(|bar| MbarOp {
                    bar,
                    op: MbarOpKind::Init(1),
                })
                .collect(),
            ..Stim::default()
        },
        load(0, 0, 0),
        load(1, 4096, 1),
        Stim {
            wait: Some((0, false)),
            ..Stim::default()
        },
        Stim {
            wait: Some((1, false)),
            ..Stim::default()
        },
        Stim {
            smem_read: Some(col(0, Swizzle::None)),
            ..Stim::default()
        },
        Stim {
            smem_read: Some(col(4096, Swizzle::B128)),
            ..Stim::default()
        },
    ];
    let trace = tb.trace();
    let (sim, cycles) = run_steps(&img, &[plain, swz], 2, steps, Some(&trace))?;
    sim.finish().map_err(|e| e.to_string()).map(|(top, _)| {
        tb.add_cycles(cycles);
        let log = top.log();
        let passes = |i: usize| log[i].done - log[i].start + 1;
        tb.check_eq("unswizzled column read: passes", passes(5), 8);
        tb.check_eq("128B-swizzled column read: passes", passes(6), 1);
        tb.check_eq("bank conflicts (7 + 0)", top.mem().counters().bank_conflicts, 7);
        let (dense, _) = tma_ref::dense_box(&img, &plain, &[0; 5]);
        let want: Vec<u8> = (0..8).flat_map(|r| dense[r * 128..r * 128 + 16].to_vec()).collect();
        tb.check_eq("unswizzled read data", log[5].read_data.clone(), want.clone());
        tb.check_eq("swizzled read data", log[6].read_data.clone(), want);
    })
}
