//! TMA loads, stores, swizzle, mbarriers, descriptor rules and the bank rule against
//! independent references (`verify::tma_ref`, brute-force counts, a small mbarrier model).

use tensorcore_rtl::hw::memory::*;
use tensorcore_rtl::rtl::Simulator;
use tensorcore_rtl::verify::tma_ref;

/// The chunk mask of a swizzle mode, typed in from the design documents (not `Swizzle::mask`).
fn mask_of(s: Swizzle) -> u32 {
    match s {
        Swizzle::B32 => 1,
        Swizzle::B64 => 3,
        Swizzle::B128 => 7,
        _ => 0,
    }
}

fn small_params() -> MemParams {
    MemParams {
        latency: 7,
        bytes_per_cycle: 32,
        request_bytes: 64,
        requests_in_flight: 8,
        smem_bytes: 64 * 1024,
        ..MemParams::default()
    }
}

/// Runs one load through the harness and compares shared memory with the reference.
fn check_load(params: MemParams, gmem: &[u8], map: TensorMap, coords: [i32; 5], base: u32) {
    let load = HarnessLoad {
        desc: 0,
        coords,
        smem_addr: base,
    };
    let (run, top) = run_loads(params, gmem.len() as u64 + 64, gmem, &[map], &[load], None)
        .unwrap_or_else(|e| panic!("load failed: {e}"));
    let (dense, oob) = tma_ref::dense_box(gmem, &map, &coords);
    let mut want = vec![0u8; params.smem_bytes as usize];
    tma_ref::place(&dense, base, mask_of(map.swizzle), &mut want);
    let got = top.mem().smem_host_read(0, params.smem_bytes as usize);
    assert!(
        got == &want[..],
        "smem image differs for {map:?} at {coords:?}"
    );
    assert_eq!(run.counters.oob_elements, oob);
    assert_eq!(run.counters.tx_bytes, dense.len() as u64);
}

fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn box_2d_fp16_in_bounds() {
    let g = pattern(64 * 64 * 2, 1);
    let map = TensorMap::dense(ElemType::Fp16, 0, &[64, 64], &[16, 8]);
    check_load(small_params(), &g, map, [8, 4, 0, 0, 0], 1024);
}

#[test]
fn box_2d_negative_and_past_end() {
    let g = pattern(48 * 24, 2);
    let mut map = TensorMap::dense(ElemType::U8, 0, &[48, 24], &[32, 16]);
    check_load(small_params(), &g, map, [-5, -3, 0, 0, 0], 0);
    check_load(small_params(), &g, map, [30, 20, 0, 0, 0], 0);
    map.oob_fill = OobFill::Nan;
    map.dtype = ElemType::E4M3;
    check_load(small_params(), &g, map, [-20, 10, 0, 0, 0], 2048);
}

#[test]
fn hardware_md_bank_example() {
    // Eight 16-byte reads at chunk 0 of rows with a 128-byte pitch.
    let plain: Vec<(u32, u32)> = (0..8).map(|r| (r * 128, 16)).collect();
    assert_eq!(bank_passes(plain.iter().copied()), 8);
    let swz: Vec<(u32, u32)> = (0..8)
        .map(|r| (swizzle(r * 128, Swizzle::B128), 16))
        .collect();
    assert_eq!(bank_passes(swz.iter().copied()), 1);
}

fn script(
    params: MemParams,
    gmem: &[u8],
    maps: &[TensorMap],
    bars: usize,
    steps: Vec<Stim>,
) -> (Result<u64, HarnessError>, Simulator<MemScript>) {
    let mut mem = MemorySystem::new(params, gmem.len() as u64 + 4096, bars).expect("builds");
    mem.host_write(0, gmem);
    for (i, m) in maps.iter().enumerate() {
        mem.set_descriptor(i, *m).expect("valid descriptor");
    }
    let top = MemScript::new(mem, steps).expect("script");
    let mut sim = Simulator::new(top).expect("sim");
    sim.set_check_comb(true);
    sim.reset(1).expect("reset");
    (run_script(&mut sim, 100_000), sim)
}

#[test]
fn mbarrier_misuse_is_an_error_naming_cycle_and_barrier() {
    let steps = vec![
        Stim::default(),
        Stim {
            mbar_ops: vec![MbarOp {
                bar: 1,
                op: MbarOpKind::Arrive,
            }],
            ..Stim::default()
        },
    ];
    let (r, _) = script(small_params(), &[0; 64], &[], 2, steps);
    match r {
        Err(HarnessError::Mem(e)) => {
            assert_eq!(
                e.fault,
                MemFault::Mbar {
                    bar: 1,
                    misuse: MbarMisuse::UseBeforeInit
                }
            );
            assert_eq!(
                e.cycle, 1,
                "cycles count from the end of reset: the idle step is cycle 0"
            );
            let msg = e.to_string();
            assert!(msg.contains("cycle 1") && msg.contains("mbar_1"), "{msg}");
        }
        other => panic!("expected a memory error, got {other:?}"),
    }
}

#[test]
fn store_writes_the_box_back_skipping_oob() {
    // Load a 2-D fp32 box from tensor 0, store it to tensor 1 at other coordinates, partly
    // out of bounds; tensor 1 must equal the reference scatter of the dense box.
    let dims = [24u64, 20];
    let g0 = pattern(24 * 20 * 4, 9);
    let bytes1 = 24 * 20 * 4;
    let mut gmem = g0.clone();
    gmem.extend(std::iter::repeat_n(0u8, bytes1));
    let m0 = TensorMap::dense(ElemType::Fp32, 0, &dims, &[8, 6]);
    let m1 = TensorMap::dense(ElemType::Fp32, g0.len() as u64, &dims, &[8, 6]);
    let load = TmaCmd {
        op: TmaOp::Load,
        desc: 0,
        coords: [3, 2, 0, 0, 0],
        smem_addr: 512,
        mbar: 0,
    };
    let store = TmaCmd {
        op: TmaOp::Store,
        desc: 1,
        coords: [20, -2, 0, 0, 0],
        smem_addr: 512,
        mbar: 0,
    };
    let steps = vec![
        Stim {
            mbar_ops: vec![MbarOp {
                bar: 0,
                op: MbarOpKind::Init(1),
            }],
            ..Stim::default()
        },
        Stim {
            tma_cmd: Some(load),
            mbar_ops: vec![MbarOp {
                bar: 0,
                op: MbarOpKind::ArriveExpectTx(8 * 6 * 4),
            }],
            ..Stim::default()
        },
        Stim {
            tma_cmd: Some(store),
            wait: Some((0, false)),
            ..Stim::default()
        },
        Stim {
            wait_stores: true,
            ..Stim::default()
        },
    ];
    let (r, sim) = script(small_params(), &gmem, &[m0, m1], 1, steps);
    r.expect("runs");
    let (dense, _) = tma_ref::dense_box(&gmem, &m0, &[3, 2, 0, 0, 0]);
    let mut want = vec![0u8; bytes1];
    for k1 in 0..6i64 {
        for k0 in 0..8i64 {
            let (x, y) = (20 + k0, -2 + k1);
            if (0..24).contains(&x) && (0..20).contains(&y) {
                let src = ((k1 * 8 + k0) * 4) as usize;
                let dst = ((y * 24 + x) * 4) as usize;
                want[dst..dst + 4].copy_from_slice(&dense[src..src + 4]);
            }
        }
    }
    let got = sim.top().mem().host_read(g0.len() as u64, bytes1);
    assert!(got == &want[..], "stored tensor differs");
    assert_eq!(sim.top().mem().counters().bytes_stored, 4 * 4 * 4);
}
