//! `pe_fp16_mac`: one bare processing element (`hw::pe::Pe<1, FpPath>`, FP16 x FP16, `ieee`, w = 1)
//! as a multiply-accumulator, driven cycle by cycle through the harness top
//! `hw::pe::harness::PeHarness` like a Verilog testbench drives a DUT.
//!
//! Each case preloads C into an accumulator set through the column shift path, then streams
//! K (A, B) pairs, one per cycle, with the control word (lanes = 1, VALID, SET for set 1, LAST
//! on the final step). After every clock edge the scoreboard checks: `a_out`/`b_out` (data,
//! control word, valid) equal what was driven one cycle earlier; both accumulators, where the
//! set of a step driven `hw::PIPELINE_LATENCY` cycles earlier must hold the running `ieee`
//! chain `verify::exact::ieee_dot` over that prefix (exact big-integer sums, one RNE rounding
//! per product) and every other accumulator must hold its last value (C after a preload);
//! `done` high exactly on the cycle the last step's result lands. At the end of a case: no
//! accumulator hazard, no invalid or overflow flag (all operands finite, far below FP32's
//! range).
//!
//! Cases: directed (exact product, ties to even in the accumulator, a tie that rounds up,
//! cancellation, subnormal products, signed zeros, +-65504 products, K = 40), 16 random
//! vectors (`gemm::problem::random_operand`, seeded `SplitMix64`), and one back-to-back run of
//! three tiles on sets 0, 1, 0 without a gap, the next tile's C shifted into the idle set
//! during the previous tile's last step (double buffering), checking that the idle set holds
//! while the other accumulates. The waveform traces the `cancellation` case (all signals of
//! `pe_harness`).

use crate::gemm::problem::random_operand;
use crate::gemm::rng::SplitMix64;
use crate::hw::pe::{ShiftIn, CTL_LAST, CTL_SET, CTL_VALID};
use crate::hw::pe::harness::PeHarness;
use crate::hw::{CoreConfig, PIPELINE_LATENCY};
use crate::numerics::dot::AccMode;
use crate::numerics::format::{FP16, FP32};
use crate::rtl::{Simulator, TraceConfig, Wide};
use crate::tb::util::{encode_all, fp32};
use crate::tb::Bench;
use crate::verify::exact::ieee_dot;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "bare PE (Pe<1> in a harness), FP16 MAC chain cycle by cycle vs ieee_dot";

const CFG: CoreConfig = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);

fn p2(e: i32) -> f64 {
    2f64.powi(e)
}

/// One accumulation on one accumulator set: C, then K (A, B) FP16 pairs.
struct Tile {
    set: bool,
    a: Vec<u64>,
    b: Vec<u64>,
    c: u32,
}

impl Tile {
    fn new(set: bool, a: &[f64], b: &[f64], c: f64) -> Result<Tile, String> {
        Ok(Tile {
            set,
            a: encode_all(FP16, a)?,
            b: encode_all(FP16, b)?,
            c: fp32(c)?,
        })
    }
}

/// What the testbench drives in one cycle, and the step it starts (tile, index, set).
#[derive(Clone, Copy, Default)]
struct Drive {
    a: u64,
    ctl: u16,
    b: u64,
    vld: bool,
    shift: ShiftIn,
    step: Option<(usize, usize, bool)>,
}

/// Runs `tiles` back to back on a fresh harness (tile `i + 1`'s first step in the cycle after
/// tile `i`'s last; its C shifted in during the cycle before), checking every cycle.
fn run_tiles(
    tb: &mut Bench,
    label: &str,
    tiles: &[Tile],
    trace: Option<TraceConfig>,
) -> Result<(), String> {
    let e = |err: crate::hw::HwError| format!("{label}: {err}");
    let re = |err: crate::rtl::RtlError| format!("{label}: {err}");
    // The independent reference: the running ieee chain over each prefix.
    let want: Vec<Vec<u32>> = tiles
        .iter()
        .map(|t| {
            (1..=t.a.len())
                .map(|j| ieee_dot(FP16, FP16, &t.a[..j], &t.b[..j], t.c))
                .collect()
        })
        .collect();
    // The stimulus, one entry per cycle: a preload cycle, then the steps back to back, then
    // enough idle cycles to see the last result land and `done` fall again.
    let lat = PIPELINE_LATENCY as usize;
    let steps: usize = tiles.iter().map(|t| t.a.len()).sum();
    let mut plan = vec![Drive::default(); 1 + steps + lat + 1];
    let mut start = 1;
    for (i, t) in tiles.iter().enumerate() {
        plan[start - 1].shift = ShiftIn {
            en: true,
            set: t.set,
            value: t.c,
        };
        let k = t.a.len();
        for j in 0..k {
            let ctl = 1
                | CTL_VALID
                | if t.set { CTL_SET } else { 0 }
                | if j + 1 == k { CTL_LAST } else { 0 };
            let d = &mut plan[start + j];
            (d.a, d.ctl, d.b, d.vld) = (t.a[j], ctl, t.b[j], true);
            d.step = Some((i, j, t.set));
        }
        start += k;
    }

    let harness = PeHarness::<1>::new(CFG).map_err(e)?;
    let traced = trace.is_some();
    let mut sim = match &trace {
        Some(cfg) => Simulator::with_trace(harness, cfg),
        None => Simulator::new(harness),
    }
    .map_err(re)?;
    sim.set_watchdog(1_000);
    sim.reset(1).map_err(re)?;
    let mut acc = [0u32; 2]; // what each accumulator set must hold (reset value 0)
    for (t, d) in plan.iter().enumerate() {
        let h = sim.top_mut();
        h.drive(
            Wide::from_words_array([d.a]),
            d.ctl,
            Wide::from_words_array([d.b]),
            d.vld,
        );
        h.set_shift(d.shift);
        sim.step().map_err(re)?;
        // The scoreboard after this clock edge.
        let pe = sim.top().pe();
        let (a_out, a_ctl) = pe.a_out();
        let (b_out, b_vld) = pe.b_out();
        tb.check_eq(
            format!("{label}: cycle {t}: a_out/a_ctl = a_in/a_ctl one cycle earlier"),
            (a_out.words()[0], a_ctl.pack()),
            (d.a, d.ctl),
        );
        tb.check_eq(
            format!("{label}: cycle {t}: b_out/b_vld = b_in/b_vld one cycle earlier"),
            (b_out.words()[0], b_vld),
            (d.b, d.vld),
        );
        if d.shift.en {
            acc[usize::from(d.shift.set)] = d.shift.value;
        }
        let landed = t.checked_sub(lat).and_then(|s| plan[s].step);
        let mut what = ["held"; 2];
        if let Some((i, j, set)) = landed {
            acc[usize::from(set)] = want[i][j];
            what[usize::from(set)] = "ieee_dot of the prefix";
        }
        for set in [false, true] {
            let n = usize::from(set);
            let step = match landed {
                Some((i, j, s)) if s == set => format!(" (tile {i} step {j})"),
                _ => String::new(),
            };
            tb.check_bits(
                format!("{label}: cycle {t}: acc_{n}{step} vs {}", what[n]),
                pe.acc_q(set),
                acc[n],
            );
        }
        let last = landed.is_some_and(|(i, j, _)| j + 1 == tiles[i].a.len());
        tb.check_eq(format!("{label}: cycle {t}: done"), pe.done(), last);
    }
    let pe = sim.top().pe();
    tb.check(format!("{label}: no accumulator hazard"), !pe.hazard());
    let f = pe.flags();
    tb.check(
        format!("{label}: no invalid or overflow flag"),
        !f.invalid && !f.overflow,
    );
    tb.add_cycles(sim.cycle());
    let (_, summary) = sim.finish().map_err(re)?;
    if traced {
        // As the run leaves it (a command-line run commits its outputs at its end).
        let written = summary.is_some_and(|s| {
            crate::rtl::file::written_metadata(&s.path).is_ok_and(|m| m.is_file())
        });
        tb.check(format!("{label}: waveform written"), written);
    }
    Ok(())
}

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let x = 1.0 - p2(-11);
    let directed: Vec<(&str, Vec<f64>, Vec<f64>, f64)> = vec![
        ("exact product", vec![x], vec![x], 0.0),
        (
            "tie to even in acc",
            vec![p2(-12); 2],
            vec![p2(-12); 2],
            1.0,
        ),
        (
            "tie rounds up",
            vec![p2(-12), 1.0],
            vec![p2(-12), p2(-23)],
            1.0,
        ),
        (
            "cancellation",
            vec![1.0, -1.0, 0.5],
            vec![1.0, 1.0, -1.0],
            0.5,
        ),
        (
            "subnormal products",
            vec![p2(-24), p2(-20)],
            vec![p2(-24), p2(-14)],
            0.0,
        ),
        ("signed zeros", vec![-0.0, 0.0], vec![1.0, -1.0], -0.0),
        (
            "large",
            vec![65504.0, 65504.0],
            vec![65504.0, -65504.0],
            1.0,
        ),
        (
            "long K",
            (0..40).map(|i| 1.0 + i as f64 / 64.0).collect(),
            vec![0.25; 40],
            -3.0,
        ),
    ];
    for (label, a, b, c) in directed {
        let trace = (label == "cancellation").then(|| tb.trace());
        run_tiles(tb, label, &[Tile::new(false, &a, &b, c)?], trace)?;
    }
    for seed in 0..16u64 {
        let k = 1 + (seed as usize * 7) % 24;
        let mut rng = SplitMix64::new(0xC0FFEE + seed);
        let a = (0..k).map(|_| random_operand(FP16, &mut rng)).collect();
        let b = (0..k).map(|_| random_operand(FP16, &mut rng)).collect();
        let c = random_operand(FP32, &mut rng) as u32;
        let tile = Tile {
            set: seed % 2 == 1,
            a,
            b,
            c,
        };
        run_tiles(tb, &format!("random seed {seed} K {k}"), &[tile], None)?;
    }
    // Double buffering: three tiles back to back on sets 0, 1, 0.
    let tiles = [
        Tile::new(false, &[1.5, -2.0, 0.75, 3.0], &[2.0, 0.5, 4.0, -0.25], 1.0)?,
        Tile::new(true, &[0.5, 0.5, p2(-12)], &[8.0, -0.25, 3.0], -2.0)?,
        Tile::new(false, &[x, -x], &[x, 1.0], 0.5)?,
    ];
    run_tiles(tb, "back to back sets 0, 1, 0", &tiles, None)?;
    Ok(())
}
