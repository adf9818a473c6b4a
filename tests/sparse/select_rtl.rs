//! The 2:4 selection hardware of the clocked tensor core, cycle by cycle: in every PE the
//! metadata register (`meta_in` -> `meta_out`) carries the selects of the kept A values it
//! holds, the selects (`sel_<t>`) equal the metadata indices of those values, and the
//! multiplexer outputs (`b_sel`) hold the B values at the kept positions; D equals the sparse
//! functional model; a VCD of the run holds the signals. (This replaces the one-row prototype
//! that preceded the clocked core.)

use tensorcore_rtl::gemm::CoreConfig;
use tensorcore_rtl::hw::{IdealPort, SparseTileBuffer, TensorCore, COLS, ROWS};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, FP16};
use tensorcore_rtl::rtl::{Simulator, TraceConfig};
use tensorcore_rtl::sparse::clocked::sparse_schedule;
use tensorcore_rtl::sparse::{run_functional_sparse, SparseGemm};

fn peek<const W: usize>(
    sim: &mut Simulator<TensorCore<W, IdealPort<SparseTileBuffer>>>,
    path: &str,
) -> u64 {
    sim.peek(path).expect(path).words[0]
}

/// Runs `g` on a `W`-lane sparse core, checking every PE's selects and multiplexer outputs
/// each cycle against the problem (the metadata nibbles read directly), then D.
fn run_checked<const W: usize>(g: &SparseGemm, trace: Option<&std::path::Path>) -> usize {
    let cfg = g.cfg;
    let buf = tensorcore_rtl::sparse::clocked::tile_buffer(g).unwrap();
    let core = TensorCore::<W, _>::with_feeder(cfg, buf).unwrap();
    let mut sim = match trace {
        Some(p) => Simulator::with_trace(core, &TraceConfig::vcd(p)).unwrap(),
        None => Simulator::new(core).unwrap(),
    };
    let s = sparse_schedule(g);
    let fb = g.cfg.fmt_b.width();
    let mask = (1u64 << fb) - 1;
    sim.reset(1).unwrap();
    sim.top_mut().start();
    sim.step().unwrap();
    let mut d = vec![0u32; g.m * g.n];
    let mut checked = 0;
    while !sim.top().is_done() {
        sim.settle();
        let now = sim.top().timer();
        for r in 0..ROWS {
            for c in 0..COLS {
                // PE (r, c) holds what the edge was fed r + c cycles ago.
                let Some(fed) = now.checked_sub((r + c) as u64 + s.feed_start()) else {
                    continue;
                };
                let (tile, step) = ((fed as usize) / s.period, (fed as usize) % s.period);
                let (r0, c0) = s.tile_origin(tile);
                let (i, j) = (r0 + r, c0 + c);
                if tile >= s.tiles() || step >= s.steps || i >= g.m || j >= g.n {
                    continue;
                }
                let pe = format!("tensor_core.mesh.pe_{r}_{c}");
                let meta = peek(&mut sim, &format!("{pe}.meta_in"));
                let b_sel = sim.peek(&format!("{pe}.b_sel")).unwrap();
                for t in 0..W.min(g.k / 2 - step * W) {
                    let kept = step * W + t;
                    let nibble = g.a.meta()[i * g.k / 4 + kept / 2];
                    let index = u64::from((nibble >> (2 * (kept % 2))) & 3);
                    assert_eq!((meta >> (2 * t)) & 3, index, "{pe} meta lane {t}");
                    assert_eq!(
                        peek(&mut sim, &format!("{pe}.sel_{t}")),
                        index,
                        "{pe} sel_{t}"
                    );
                    let pos = 4 * (kept / 2) + index as usize;
                    let lo = t * fb as usize;
                    let got = (b_sel.words[lo / 64] >> (lo % 64)) & mask;
                    assert_eq!(got, g.b[pos * g.n + j], "{pe} b_sel lane {t}");
                    checked += 1;
                }
            }
        }
        sim.step().unwrap();
        if let Some(row) = sim.top().d_row() {
            let (r0, c0) = s.tile_origin(row.tile);
            for (c, v) in row.values.iter().enumerate() {
                if r0 + row.row < g.m && c0 + c < g.n {
                    d[(r0 + row.row) * g.n + c0 + c] = *v;
                }
            }
        }
    }
    sim.finish().unwrap();
    assert_eq!(d, run_functional_sparse(g).unwrap().d, "{}", g.cfg.fmt_a);
    checked
}

fn problem(f: Format, m: usize, n: usize, k: usize, w: usize, seed: u64) -> SparseGemm {
    let cfg = CoreConfig::new(f, f, AccMode::Ieee, w);
    SparseGemm::random(m, n, k, cfg, seed).unwrap()
}

#[test]
fn metadata_travels_with_a_and_drives_the_muxes() {
    for (i, f) in [E4M3, FP16, BF16].into_iter().enumerate() {
        let seed = 7 + i as u64;
        assert!(run_checked::<1>(&problem(f, 5, 6, 16, 1, seed), None) > 0);
        assert!(run_checked::<2>(&problem(f, 8, 4, 24, 2, seed), None) > 0);
        assert!(run_checked::<4>(&problem(f, 4, 7, 32, 4, seed), None) > 0);
    }
}

#[test]
fn waves_show_metadata_and_selects() {
    let dir = std::env::temp_dir().join(format!("tcrtl-sparse-wave-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vcd = dir.join("sparse_select.vcd");
    run_checked::<2>(&problem(FP16, 4, 4, 16, 2, 3), Some(&vcd));
    let text = std::fs::read_to_string(&vcd).unwrap();
    for s in [
        "meta_in",
        "meta_out",
        "sel_0",
        "sel_1",
        "b_sel",
        "a_out",
        "b_out",
        "meta_skew",
    ] {
        assert!(text.contains(&format!(" {s} ")), "{s} missing from the VCD");
    }
    std::fs::remove_dir_all(&dir).ok();
}
