//! The engine's contract on the full tensor core: the order in which the top's blocks run
//! their combinational updates changes nothing. For several permutations of the blocks
//! (rotations, the reverse, seeded shuffles) a traced GEMM gives the same D, the same cycle
//! count and a byte-identical waveform as the default order (dense, sparse, NVIDIA gathering,
//! and the memory-fed path, whose port is one more block of the top), and the same of the
//! weight-stationary top.

use tensorcore_rtl::gemm::clocked::run_core;
use tensorcore_rtl::gemm::rng::SplitMix64;
use tensorcore_rtl::gemm::{CoreConfig, Gemm};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::{
    Block, MemPortConfig, MemoryPort, OperandPort, TensorCore, TileBuffer, BLOCKS,
};
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{E4M3, FP16};
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::sparse::clocked::tile_buffer;
use tensorcore_rtl::sparse::{Prune, SparseGemm};

/// Rotations, the reverse and seeded shuffles of [`BLOCKS`].
fn orders() -> Vec<[Block; 9]> {
    permutations_of(BLOCKS, 7, 6)
}

/// Every rotation of `base`, its reverse and `shuffles` seeded shuffles of it.
fn permutations_of<T: Copy, const N: usize>(
    base: [T; N],
    seed: u64,
    shuffles: usize,
) -> Vec<[T; N]> {
    let mut out = Vec::new();
    for r in 0..N {
        let mut o = base;
        o.rotate_left(r);
        out.push(o);
    }
    let mut rev = base;
    rev.reverse();
    out.push(rev);
    let mut rng = SplitMix64::new(seed);
    for _ in 0..shuffles {
        let mut o = base;
        for i in (1..N).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            o.swap(i, j);
        }
        out.push(o);
    }
    out
}

/// Runs the core `build` makes under every order, tracing to a VCD; asserts identical D,
/// cycles and waveform bytes.
fn same_under_every_order<const W: usize, P: OperandPort<W>>(
    name: &str,
    macs: u64,
    build: impl Fn() -> TensorCore<W, P>,
) {
    let dir = std::env::temp_dir().join(format!("tcrtl_eval_order_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let mut first: Option<(Vec<u32>, u64, Vec<u8>)> = None;
    for (k, order) in orders().into_iter().enumerate() {
        let mut core = build();
        assert!(core.set_eval_order(order), "{order:?} is a permutation");
        let path = dir.join(format!("run{k}.vcd"));
        let (run, _) = run_core(core, macs, 1 << 20, 5000, Some(&TraceConfig::vcd(&path)))
            .expect("clocked run");
        let vcd = std::fs::read(&path).expect("vcd written");
        let got = (run.run.out.d.clone(), run.run.cycles, vcd);
        match &first {
            None => first = Some(got),
            Some(f) => {
                assert_eq!(f.0, got.0, "{name}: D differs under {order:?}");
                assert_eq!(f.1, got.1, "{name}: cycles differ under {order:?}");
                assert!(f.2 == got.2, "{name}: waveform differs under {order:?}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_non_permutation_is_refused() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let g = Gemm::random(4, 4, 4, cfg, 1).expect("problem");
    let buf = TileBuffer::new(cfg, 4, 4, 4, g.a, g.b, g.c).expect("buffer");
    let mut core = TensorCore::<1>::new(cfg, buf).expect("core");
    let mut twice = BLOCKS;
    twice[1] = Block::Controller;
    assert!(!core.set_eval_order(twice));
}

#[test]
fn dense_ieee_any_order() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let g = Gemm::random(6, 7, 9, cfg, 3).expect("problem");
    same_under_every_order::<1, _>("dense", g.macs(), || {
        let buf = TileBuffer::new(cfg, g.m, g.n, g.k, g.a.clone(), g.b.clone(), g.c.clone())
            .expect("buf");
        TensorCore::<1>::new(cfg, buf).expect("core")
    });
}

#[test]
fn nvidia_gathering_any_order() {
    let cfg = CoreConfig::new(
        E4M3,
        E4M3,
        AccMode::Nvidia(Preset::Hopper.params(E4M3, E4M3).expect("preset")),
        4,
    );
    let g = Gemm::random(5, 8, 40, cfg, 5).expect("problem");
    same_under_every_order::<4, _>("nvidia", g.macs(), || {
        let buf = TileBuffer::new(cfg, g.m, g.n, g.k, g.a.clone(), g.b.clone(), g.c.clone())
            .expect("buf");
        TensorCore::<4>::new(cfg, buf).expect("core")
    });
}

#[test]
fn sparse_any_order() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 2);
    let dense = Gemm::random(8, 4, 16, cfg, 9).expect("problem");
    let g = SparseGemm::from_dense(&dense, Prune::KeepLargest).expect("pruned");
    same_under_every_order::<2, _>("sparse", g.macs(), || {
        TensorCore::<2, _>::with_feeder(cfg, tile_buffer(&g).expect("buf")).expect("core")
    });
}

#[test]
fn memory_path_any_order() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 2);
    let g = Gemm::random(7, 10, 70, cfg, 13).expect("problem");
    let pc = MemPortConfig {
        params: MemParams {
            latency: 30,
            bytes_per_cycle: 8,
            ..MemParams::default()
        },
        stages: 3,
        swizzle: true,
    };
    same_under_every_order::<2, _>("memory", g.macs(), || {
        let port = MemoryPort::<2>::new(cfg, &pc, g.m, g.n, g.k, &g.a, &g.b, &g.c).expect("port");
        TensorCore::<2, _>::with_port(cfg, port).expect("core")
    });
}

#[test]
fn sparse_memory_path_any_order() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Fused, 4);
    let g = SparseGemm::random(7, 10, 136, cfg, 17).expect("problem");
    let pc = MemPortConfig {
        params: MemParams {
            latency: 30,
            bytes_per_cycle: 8,
            ..MemParams::default()
        },
        stages: 3,
        swizzle: true,
    };
    same_under_every_order::<4, _>("sparse memory", g.macs(), || {
        let port = MemoryPort::<4>::new_sparse(
            cfg,
            &pc,
            g.m,
            g.n,
            g.k,
            g.a.values(),
            g.a.meta(),
            &g.b,
            &g.c,
        )
        .expect("port");
        TensorCore::<4, _>::with_port(cfg, port).expect("core")
    });
}

/// The weight-stationary top (`hw::ws::WsCore`): every order of its blocks (rotations, the
/// reverse, seeded shuffles of [`WS_BLOCKS`]) gives the same D, cycles and waveform bytes, on
/// a 3 x 5 array over several folds and column tiles with the accumulator block's memory in
/// use, dense and 2:4 sparse (the selects' skew beside A); a non-permutation is refused.
#[test]
fn weight_stationary_any_order() {
    use tensorcore_rtl::hw::ws::WsCore;
    use tensorcore_rtl::hw::{Dataflow, SparseTileBuffer};
    use tensorcore_rtl::sparse::SparseGemm;
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Fused, 2)
        .with_array(3, 5)
        .expect("array")
        .with_dataflow(Dataflow::Ws);
    let g = Gemm::random(8, 7, 29, cfg, 21).expect("problem");
    ws_orders_agree("dense", g.macs(), || {
        let buf = TileBuffer::new(cfg, g.m, g.n, g.k, g.a.clone(), g.b.clone(), g.c.clone())
            .expect("buf");
        WsCore::<2, _>::new(cfg, buf).expect("core")
    });
    let s = SparseGemm::random(8, 7, 44, cfg, 22).expect("sparse problem");
    ws_orders_agree("sparse", s.macs(), || {
        let buf = SparseTileBuffer::new(
            cfg,
            s.m,
            s.n,
            s.k,
            s.a.values().to_vec(),
            s.a.meta().to_vec(),
            s.b.clone(),
            s.c.clone(),
        )
        .expect("buf");
        WsCore::<2, _>::new(cfg, buf).expect("core")
    });
    // Fed through the memory path: the supply's update follows the blocks' in every order.
    let pc = tensorcore_rtl::hw::MemPortConfig {
        params: tensorcore_rtl::hw::memory::MemParams {
            latency: 30,
            ..Default::default()
        },
        ..Default::default()
    };
    ws_orders_agree("tma", g.macs(), || {
        let port = tensorcore_rtl::hw::ws::mem::WsMemoryPort::<2>::new(
            cfg, &pc, g.m, g.n, g.k, &g.a, &g.b, &g.c,
        )
        .expect("port");
        WsCore::<2, _>::new(cfg, port).expect("core")
    });
}

/// Runs the core `build` makes under every order of [`WS_BLOCKS`] that
/// [`permutations_of`] draws, traced, and asserts one D, one cycle count and one waveform.
fn ws_orders_agree<F>(
    label: &str,
    macs: u64,
    build: impl Fn() -> tensorcore_rtl::hw::ws::WsCore<2, F>,
) where
    F: tensorcore_rtl::hw::ws::WsSupply<2>,
    F::Extras: tensorcore_rtl::hw::ws::WsExtras<2>,
{
    use tensorcore_rtl::gemm::clocked::run_core;
    use tensorcore_rtl::hw::ws::{WsBlock, WS_BLOCKS};
    let mut twice = WS_BLOCKS;
    twice[2] = WsBlock::Mesh;
    assert!(!build().set_eval_order(twice));
    let orders = permutations_of(WS_BLOCKS, 11, 4);
    let dir = std::env::temp_dir().join(format!(
        "tcrtl_eval_order_ws_{label}_{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let mut first: Option<(Vec<u32>, u64, Vec<u8>)> = None;
    for (k, order) in orders.into_iter().enumerate() {
        let mut core = build();
        assert!(core.set_eval_order(order));
        let path = dir.join(format!("run{k}.vcd"));
        let run = run_core(core, macs, 1 << 20, 4096, Some(&TraceConfig::vcd(&path)))
            .expect("run")
            .0;
        let got = (
            run.run.out.d,
            run.run.cycles,
            std::fs::read(&path).expect("vcd"),
        );
        match &first {
            None => first = Some(got),
            Some(f) => {
                assert_eq!(f.0, got.0, "ws {label}: D differs under {order:?}");
                assert_eq!(f.1, got.1, "ws {label}: cycles differ under {order:?}");
                assert!(f.2 == got.2, "ws {label}: waveform differs under {order:?}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
