//! TMA loads, stores, swizzle, mbarriers, descriptor rules and the bank rule against
//! independent references (`verify::tma_ref`, brute-force counts, a small mbarrier model).

use proptest::prelude::*;
use tensorcore_rtl::hw::memory::*;
use tensorcore_rtl::rtl::Simulator;
use tensorcore_rtl::tb::tma::pattern;
use tensorcore_rtl::verify::tma_ref;

/// The chunk mask of a swizzle mode, typed in from docs/memory.md (not `Swizzle::mask`).
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
    let (row, pitch) = tma_ref::row_layout(&map);
    tma_ref::place_rows(&dense, row, pitch, base, mask_of(map.swizzle), &mut want);
    let got = top.mem().smem_host_read(0, params.smem_bytes as usize);
    assert!(
        got == &want[..],
        "smem image differs for {map:?} at {coords:?}"
    );
    assert_eq!(run.counters.oob_elements, oob);
    assert_eq!(run.counters.tx_bytes, dense.len() as u64);
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
    // Inner coordinates at 16-byte boundaries, as the GPU requires.
    check_load(small_params(), &g, map, [-16, -3, 0, 0, 0], 0);
    check_load(small_params(), &g, map, [32, 20, 0, 0, 0], 0);
    map.oob_fill = OobFill::Nan;
    map.dtype = ElemType::E4M3;
    check_load(small_params(), &g, map, [-16, 10, 0, 0, 0], 2048);
}

#[test]
fn an_inner_start_off_a_16_byte_boundary_faults() {
    // An H200 stops the kernel (illegal instruction) on such a load; the engine refuses it.
    let g = pattern(64 * 8 * 2, 5);
    let map = TensorMap::dense(ElemType::Fp16, 0, &[64, 8], &[16, 4]);
    let load_at = |c0: i32| {
        let load = HarnessLoad {
            desc: 0,
            coords: [c0, 0, 0, 0, 0],
            smem_addr: 0,
        };
        run_loads(
            small_params(),
            g.len() as u64 + 64,
            &g,
            &[map],
            &[load],
            None,
        )
    };
    for c0 in [1, -1, 4, 12] {
        let text = load_at(c0)
            .err()
            .unwrap_or_else(|| panic!("c0 = {c0}: the load ran"))
            .to_string();
        assert!(
            text.contains(&format!("inner coordinate {c0} ({} bytes)", 2 * c0)),
            "{text}"
        );
    }
    for c0 in [0, 8, -8, 56] {
        load_at(c0).unwrap_or_else(|e| panic!("c0 = {c0}: {e}"));
    }
}

#[test]
fn a_store_at_a_negative_coordinate_faults() {
    // An H200 stops the kernel (illegal instruction) on a store whose box starts before the
    // tensor in any dimension; past the end it clips. The engine refuses the former.
    let map = TensorMap::dense(ElemType::Fp32, 0, &[24, 20], &[8, 6]);
    for coords in [[-8, 0, 0, 0, 0], [0, -1, 0, 0, 0]] {
        let store = TmaCmd {
            op: TmaOp::Store,
            desc: 0,
            coords,
            smem_addr: 0,
            mbar: 0,
        };
        let steps = vec![Stim {
            tma_cmd: Some(store),
            ..Stim::default()
        }];
        let (r, _) = script(small_params(), &vec![0u8; 24 * 20 * 4], &[map], 1, steps);
        let e = r.expect_err("the store ran").to_string();
        assert!(e.contains("negative coordinate"), "{e}");
    }
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
    // past the end; tensor 1 must equal the reference scatter of the dense box. (A store
    // starting at a negative coordinate traps on a GPU: `a_store_at_a_negative_coordinate_faults`.)
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
        coords: [4, 2, 0, 0, 0],
        smem_addr: 512,
        mbar: 0,
    };
    let store = TmaCmd {
        op: TmaOp::Store,
        desc: 1,
        coords: [20, 16, 0, 0, 0],
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
    let (dense, _) = tma_ref::dense_box(&gmem, &m0, &[4, 2, 0, 0, 0]);
    let mut want = vec![0u8; bytes1];
    for k1 in 0..6i64 {
        for k0 in 0..8i64 {
            let (x, y) = (20 + k0, 16 + k1);
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

/// A random valid descriptor, its global image and coordinates (some out of bounds).
fn arb_load() -> impl Strategy<Value = (TensorMap, Vec<u8>, [i32; 5], u32)> {
    (
        1usize..=5,
        prop::sample::select(vec![
            ElemType::U8,
            ElemType::U16,
            ElemType::U32,
            ElemType::E4M3,
            ElemType::E5M2,
            ElemType::Fp16,
            ElemType::Bf16,
            ElemType::Fp32,
        ]),
        prop::sample::select(vec![
            Swizzle::None,
            Swizzle::B32,
            Swizzle::B64,
            Swizzle::B128,
        ]),
        any::<bool>(),
        prop::collection::vec((1u64..7, 1u32..5, 1u32..4, 0u64..3), 5),
        1u32..5,
        prop::collection::vec(-9i32..12, 5),
        any::<u64>(),
    )
        .prop_map(|(rank, dt, swz, nan, dims, box0_chunks, c, seed)| {
            let es = dt.size();
            // Box dim 0: a multiple of 16 bytes, within the swizzle span.
            let span = match swz {
                Swizzle::B32 => 32,
                Swizzle::B64 => 64,
                Swizzle::B128 => 128,
                _ => 96,
            };
            let inner = (16 * box0_chunks).min(span);
            let mut m = TensorMap::dense(dt, 16 * (seed % 4), &[1], &[inner / es]);
            m.rank = rank as u32;
            m.swizzle = swz;
            m.oob_fill = if nan && dt.is_float() {
                OobFill::Nan
            } else {
                OobFill::Zero
            };
            m.box_dims[0] = inner / es;
            m.global_dims[0] = u64::from(inner / es) + dims[0].0 * 3;
            m.element_strides[0] = dims[0].2;
            let mut extent = m.global_dims[0] * u64::from(es);
            for (i, &(d, b, e, pad)) in dims.iter().enumerate().take(rank).skip(1) {
                m.global_dims[i] = d;
                m.box_dims[i] = b;
                m.element_strides[i] = e;
                let stride = extent.div_ceil(16) * 16 + 16 * pad;
                m.global_strides[i - 1] = stride;
                extent = stride * d;
            }
            let mut coords = [0i32; 5];
            coords[..rank].copy_from_slice(&c[..rank]);
            // The inner coordinate in 16-byte steps (a GPU traps on any other start).
            coords[0] *= (16 / es) as i32;
            let bytes = (m.global_end() + 16) as usize;
            let base = if swz == Swizzle::B128 {
                1024 * (seed as u32 % 3)
            } else {
                128 * (seed as u32 % 9)
            };
            (m, pattern(bytes, seed), coords, base)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_load_equals_the_reference((map, g, coords, base) in arb_load()) {
        prop_assert!(map.validate().is_ok(), "{:?}", map.validate());
        check_load(small_params(), &g, map, coords, base);
    }

    #[test]
    fn swizzle_equals_the_chunk_formula(a in 0u32..(1 << 20)) {
        for (mode, m) in [(Swizzle::None, 0), (Swizzle::B32, 1), (Swizzle::B64, 3), (Swizzle::B128, 7)] {
            let row = a / 128;
            let chunk = (a % 128) / 16;
            let want = row * 128 + (chunk ^ (row & m)) * 16 + a % 16;
            prop_assert_eq!(swizzle(a, mode), want);
        }
    }

    #[test]
    fn bank_passes_equals_brute_force(lanes in prop::collection::vec((0u32..2048, 1u32..=16), 0..32)) {
        let lanes: Vec<(u32, u32)> = lanes
            .into_iter()
            .map(|(a, l)| (a, l.min(16 - a % 16)))
            .collect();
        // Brute force: serve one distinct word per bank per pass until every byte is served.
        let mut words: Vec<u32> = lanes
            .iter()
            .flat_map(|&(a, l)| (a..a + l).map(|b| b / 4))
            .collect();
        words.sort();
        words.dedup();
        let mut passes = 0;
        while !words.is_empty() {
            let mut used = [false; 32];
            words.retain(|&w| {
                let b = (w % 32) as usize;
                if used[b] { true } else { used[b] = true; false }
            });
            passes += 1;
        }
        prop_assert_eq!(bank_passes(lanes.iter().copied()), passes);
    }

    #[test]
    fn mbarrier_follows_the_ptx_state_machine(ops in prop::collection::vec(0u8..6, 1..40), arg in prop::collection::vec(0u32..300, 40), n in 1u32..4) {
        let mut list = vec![MbarOpKind::Init(n)];
        for (i, o) in ops.iter().enumerate() {
            list.push(match o {
                0 => MbarOpKind::Arrive,
                1 => MbarOpKind::ArriveExpectTx(arg[i]),
                2 => MbarOpKind::ExpectTx(arg[i]),
                3 | 4 => MbarOpKind::CompleteTx(arg[i]),
                _ => MbarOpKind::Init(n),
            });
        }
        check_mbar_sequence(&list);
    }
}

/// An independent mbarrier model (PTX): (phase, pending, expected, tx).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Model {
    init: bool,
    phase: u32,
    pending: i64,
    expected: i64,
    tx: i64,
}

fn model_step(m: &mut Model, op: MbarOpKind) -> bool {
    let lim = (1i64 << 20) - 1;
    match op {
        MbarOpKind::Init(n) => {
            if m.init && (m.pending != m.expected || m.tx != 0) {
                return false;
            }
            if n == 0 || i64::from(n) > lim {
                return false;
            }
            *m = Model {
                init: true,
                phase: 0,
                pending: n.into(),
                expected: n.into(),
                tx: 0,
            };
            return true;
        }
        _ if !m.init => return false,
        MbarOpKind::Arrive => {
            if m.pending == 0 {
                return false;
            }
            m.pending -= 1;
        }
        MbarOpKind::ArriveExpectTx(b) => {
            if (m.tx + i64::from(b)).abs() > lim || m.pending == 0 {
                return false;
            }
            m.tx += i64::from(b);
            m.pending -= 1;
        }
        MbarOpKind::ExpectTx(b) => {
            if (m.tx + i64::from(b)).abs() > lim {
                return false;
            }
            m.tx += i64::from(b);
        }
        MbarOpKind::CompleteTx(b) => {
            if (m.tx - i64::from(b)).abs() > lim {
                return false;
            }
            m.tx -= i64::from(b);
        }
    }
    if m.pending == 0 && m.tx == 0 {
        m.phase ^= 1;
        m.pending = m.expected;
    }
    true
}

/// Plays `ops` one per cycle on mbar_0 and compares the registers with the model after each.
fn check_mbar_sequence(ops: &[MbarOpKind]) {
    let steps: Vec<Stim> = ops
        .iter()
        .map(|&op| Stim {
            mbar_ops: vec![MbarOp { bar: 0, op }],
            ..Stim::default()
        })
        .collect();
    let mem = MemorySystem::new(small_params(), 64, 1).expect("builds");
    let mut sim = Simulator::new(MemScript::new(mem, steps).expect("script")).expect("sim");
    sim.reset(1).expect("reset");
    let mut m = Model {
        init: false,
        phase: 0,
        pending: 0,
        expected: 0,
        tx: 0,
    };
    for (i, &op) in ops.iter().enumerate() {
        let ok = model_step(&mut m, op);
        sim.step().expect("step");
        let mem = sim.top().mem();
        if !ok {
            let e = mem.error().expect("misuse latched");
            assert_eq!(e.cycle, i as u64);
            assert!(matches!(e.fault, MemFault::Mbar { bar: 0, .. }));
            return;
        }
        assert!(mem.error().is_none(), "no misuse expected at op {i} {op:?}");
        let s = mem.mbar(0).expect("mbar_0");
        assert_eq!(
            (
                s.phase as u32,
                i64::from(s.pending),
                i64::from(s.expected),
                s.tx
            ),
            (m.phase, m.pending, m.expected, m.tx),
            "after op {i} {op:?}"
        );
        assert_eq!(mem.try_wait_parity(0, false), m.phase == 1);
        assert_eq!(mem.out().mbar_phase & 1, u64::from(m.phase));
    }
}

#[test]
fn complete_tx_before_expect_tx_completes_the_phase() {
    check_mbar_sequence(&[
        MbarOpKind::Init(1),
        MbarOpKind::CompleteTx(64),
        MbarOpKind::ArriveExpectTx(64),
        MbarOpKind::Arrive,
        MbarOpKind::ExpectTx(8),
        MbarOpKind::CompleteTx(8),
    ]);
    // The same through the model: phase 0 completes at the arrive.expect_tx.
    let mut m = Model {
        init: false,
        phase: 0,
        pending: 0,
        expected: 0,
        tx: 0,
    };
    for op in [
        MbarOpKind::Init(1),
        MbarOpKind::CompleteTx(64),
        MbarOpKind::ArriveExpectTx(64),
    ] {
        assert!(model_step(&mut m, op));
    }
    assert_eq!(m.phase, 1);
}

#[test]
fn mbarrier_misuses_each_stop_the_run() {
    check_mbar_sequence(&[MbarOpKind::Arrive]);
    check_mbar_sequence(&[MbarOpKind::Init(0)]);
    check_mbar_sequence(&[MbarOpKind::Init(2), MbarOpKind::Arrive, MbarOpKind::Init(2)]);
    check_mbar_sequence(&[
        MbarOpKind::Init(1),
        MbarOpKind::ExpectTx(5),
        MbarOpKind::Arrive,
        MbarOpKind::Arrive,
    ]);
    check_mbar_sequence(&[
        MbarOpKind::Init(1),
        MbarOpKind::ExpectTx(1 << 19),
        MbarOpKind::ExpectTx(1 << 19),
    ]);
    check_mbar_sequence(&[
        MbarOpKind::Init(1),
        MbarOpKind::CompleteTx((1 << 20) - 1),
        MbarOpKind::CompleteTx(1),
    ]);
}

#[test]
fn every_descriptor_rule_has_its_own_error() {
    let ok = TensorMap::dense(ElemType::Fp16, 0, &[64, 32], &[32, 8]);
    assert_eq!(ok.validate(), Ok(()));
    let bad = |f: &dyn Fn(&mut TensorMap)| {
        let mut m = ok;
        f(&mut m);
        m.validate().expect_err("must be refused")
    };
    use TensorMapError as E;
    assert_eq!(bad(&|m| m.rank = 0), E::Rank(0));
    assert_eq!(bad(&|m| m.rank = 6), E::Rank(6));
    assert_eq!(bad(&|m| m.global_address = 8), E::GlobalAddress(8));
    assert_eq!(
        bad(&|m| m.global_dims[1] = 0),
        E::GlobalDim { dim: 1, value: 0 }
    );
    assert_eq!(
        bad(&|m| m.global_dims[0] = (1 << 32) + 1),
        E::GlobalDim {
            dim: 0,
            value: (1 << 32) + 1
        }
    );
    assert_eq!(
        bad(&|m| m.global_strides[0] = 120),
        E::GlobalStrideAlign { dim: 1, value: 120 }
    );
    assert_eq!(
        bad(&|m| m.global_strides[0] = 1 << 40),
        E::GlobalStrideRange {
            dim: 1,
            value: 1 << 40
        }
    );
    assert_eq!(bad(&|m| m.box_dims[1] = 0), E::BoxDim { dim: 1, value: 0 });
    assert_eq!(
        bad(&|m| m.box_dims[1] = 257),
        E::BoxDim { dim: 1, value: 257 }
    );
    assert_eq!(bad(&|m| m.box_dims[0] = 12), E::BoxInnerBytes { bytes: 24 });
    assert_eq!(
        bad(&|m| m.element_strides[1] = 9),
        E::ElementStride { dim: 1, value: 9 }
    );
    assert_eq!(
        bad(&|m| m.element_strides[0] = 0),
        E::ElementStride { dim: 0, value: 0 }
    );
    assert_eq!(
        bad(&|m| m.swizzle = Swizzle::B32),
        E::SwizzleSpan {
            swizzle: "32B",
            bytes: 64,
            span: 32
        }
    );
    assert_eq!(
        bad(&|m| {
            m.dtype = ElemType::U16;
            m.oob_fill = OobFill::Nan;
        }),
        E::NanFill("u16")
    );
    assert_eq!(bad(&|m| m.mode = MapMode::Im2col), E::Im2colUnsupported);
    assert_eq!(
        bad(&|m| m.interleave = Interleave::B32),
        E::InterleaveUnsupported(Interleave::B32)
    );
    for (s, name) in [
        (Swizzle::B128Atom32B, "128B_ATOM_32B"),
        (Swizzle::B128Atom32BFlip8B, "128B_ATOM_32B_FLIP_8B"),
        (Swizzle::B128Atom64B, "128B_ATOM_64B"),
    ] {
        let e = bad(&|m| m.swizzle = s);
        assert_eq!(e, E::SwizzleUnsupported(name));
        assert!(e.to_string().contains(name));
    }
    // Every message names the field.
    assert!(bad(&|m| m.box_dims[1] = 0)
        .to_string()
        .contains("box_dims[1]: 0"));
    // Launch-time rule: the shared-memory destination alignment.
    let mut m128 = ok;
    m128.swizzle = Swizzle::B64;
    m128.box_dims[0] = 32;
    assert_eq!(m128.validate(), Ok(()));
    let load = HarnessLoad {
        desc: 0,
        coords: [0; 5],
        smem_addr: 64,
    };
    match run_loads(small_params(), 8192, &[], &[m128], &[load], None) {
        Err(HarnessError::Mem(e)) => assert_eq!(
            e.fault,
            MemFault::Tma(TmaFault::SmemAlign {
                addr: 64,
                align: 128
            })
        ),
        other => panic!("expected an alignment error, got {:?}", other.map(|r| r.0)),
    }
}

#[test]
fn several_loads_overlap() {
    // Four 2-D loads on four barriers, issued back to back, then waited for: they overlap, so
    // the whole takes far less than four loads one after another, and every box is right.
    let params = MemParams {
        latency: 200,
        requests_in_flight: 64,
        ..small_params()
    };
    let g = pattern(64 * 64 * 2, 5);
    let map = TensorMap::dense(ElemType::Fp16, 0, &[64, 64], &[32, 8]);
    let mut steps = vec![Stim {
        mbar_ops: (0..4)
            .map(|b| MbarOp {
                bar: b,
                op: MbarOpKind::Init(1),
            })
            .collect(),
        ..Stim::default()
    }];
    for b in 0..4 {
        steps.push(Stim {
            tma_cmd: Some(TmaCmd {
                op: TmaOp::Load,
                desc: 0,
                coords: [0, 8 * b as i32, 0, 0, 0],
                smem_addr: 1024 * b as u32,
                mbar: b,
            }),
            mbar_ops: vec![MbarOp {
                bar: b,
                op: MbarOpKind::ArriveExpectTx(512),
            }],
            ..Stim::default()
        });
    }
    for b in 0..4 {
        steps.push(Stim {
            wait: Some((b, false)),
            ..Stim::default()
        });
    }
    let (r, sim) = script(params, &g, &[map], 4, steps);
    let cycles = r.expect("runs");
    let (one, _) = run_loads(
        params,
        g.len() as u64,
        &g,
        &[map],
        &[HarnessLoad {
            desc: 0,
            coords: [0; 5],
            smem_addr: 0,
        }],
        None,
    )
    .expect("one load");
    assert!(
        cycles < 2 * one.cycles,
        "4 loads took {cycles} cycles, one alone {}",
        one.cycles
    );
    for b in 0..4u32 {
        let (dense, _) = tma_ref::dense_box(&g, &map, &[0, 8 * b as i32, 0, 0, 0]);
        assert_eq!(sim.top().mem().smem_host_read(1024 * b, 512), &dense[..]);
    }
}

#[test]
fn load_time_follows_latency_and_bandwidth() {
    // Documented timing: the harness issues the command in cycle 1, the first request is
    // accepted in cycle 2, one request of R bytes every R / B cycles after that, each answers
    // L cycles after its acceptance and lands in the same cycle; the barrier shows the phase
    // one cycle later and the harness is done the cycle after: L + 4 + (N - 1) R / B.
    for (latency, bw, rows) in [
        (1u32, 64u32, 1u32),
        (50, 64, 1),
        (431, 16, 1),
        (100, 16, 8),
        (300, 8, 5),
        (20, 64, 16),
    ] {
        let params = MemParams {
            latency,
            bytes_per_cycle: bw,
            request_bytes: 64,
            requests_in_flight: 64,
            ..small_params()
        };
        let g = pattern(32 * 16 * 2, 3);
        let map = TensorMap::dense(ElemType::Fp16, 0, &[32, 16], &[32, rows]);
        let load = HarnessLoad {
            desc: 0,
            coords: [0; 5],
            smem_addr: 0,
        };
        let (run, _) = run_loads(params, g.len() as u64, &g, &[map], &[load], None).expect("runs");
        let want = u64::from(latency) + 4 + u64::from(rows - 1) * u64::from(64 / bw.min(64));
        assert_eq!(run.cycles, want, "latency {latency} bw {bw} rows {rows}");
        assert_eq!(run.counters.requests, u64::from(rows));
        assert_eq!(run.counters.bytes_loaded, u64::from(rows) * 64);
    }
}

/// Simulation speed of the memory system streaming TMA loads (tracing off). Ignored by
/// default (a timing, not a check): `cargo test --release --test memory tma_props:: -- --ignored speed`.
#[test]
#[ignore]
fn speed_streaming_loads() {
    let params = MemParams {
        latency: 500,
        bytes_per_cycle: 16,
        ..MemParams::default()
    };
    let g = pattern(256 * 256 * 2, 8);
    let map = TensorMap::dense(ElemType::Fp16, 0, &[256, 256], &[64, 64]);
    let loads: Vec<HarnessLoad> = (0..64)
        .map(|i| HarnessLoad {
            desc: 0,
            coords: [64 * (i % 4), 64 * (i / 4 % 4), 0, 0, 0],
            smem_addr: 8192 * (i as u32 % 4),
        })
        .collect();
    let t = std::time::Instant::now();
    let (run, _) = run_loads(params, g.len() as u64, &g, &[map], &loads, None).expect("runs");
    let s = t.elapsed().as_secs_f64();
    eprintln!(
        "{} cycles in {s:.3} s: {:.0} cycles/s",
        run.cycles,
        run.cycles as f64 / s
    );
}

#[test]
fn memory_parameters_are_validated_with_clear_errors() {
    let ok = MemParams::default();
    assert_eq!(ok.validate(), Ok(()));
    assert_eq!(
        (
            ok.latency,
            ok.bytes_per_cycle,
            ok.request_bytes,
            ok.requests_in_flight
        ),
        (431, 13, 128, 64)
    );
    assert_eq!(ok.smem_bytes, 228 * 1024);
    let e = |p: MemParams| p.validate().expect_err("refused").to_string();
    assert!(e(MemParams {
        bytes_per_cycle: 0,
        ..ok
    })
    .contains("bytes_per_cycle: 0"));
    assert!(e(MemParams {
        request_bytes: 96,
        ..ok
    })
    .contains("request_bytes: 96"));
    assert!(e(MemParams {
        request_bytes: 512,
        ..ok
    })
    .contains("request_bytes: 512"));
    assert!(e(MemParams {
        requests_in_flight: 0,
        ..ok
    })
    .contains("requests_in_flight: 0"));
    assert!(e(MemParams {
        smem_bytes: 1000,
        ..ok
    })
    .contains("smem_bytes: 1000"));
    assert!(e(MemParams { banks: 16, ..ok }).contains("16 x 4"));
    assert!(matches!(
        MemorySystem::new(
            MemParams {
                smem_bytes: 0,
                ..ok
            },
            64,
            1
        ),
        Err(MemBuildError::Params(_))
    ));
    assert!(matches!(
        MemorySystem::new(ok, 64, 65),
        Err(MemBuildError::Mbars(65))
    ));
}

#[test]
fn waveforms_are_deterministic() {
    let dir = std::env::temp_dir().join(format!("tma-props-waves-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let g = pattern(64 * 16 * 2, 21);
    let mut map = TensorMap::dense(ElemType::Fp16, 0, &[64, 16], &[64, 8]);
    map.swizzle = Swizzle::B128;
    let run = |name: &str| {
        let cfg = tensorcore_rtl::rtl::TraceConfig::vcd(dir.join(name));
        let load = HarnessLoad {
            desc: 0,
            coords: [-8, 10, 0, 0, 0],
            smem_addr: 0,
        };
        run_loads(
            small_params(),
            g.len() as u64,
            &g,
            &[map],
            &[load],
            Some(&cfg),
        )
        .expect("runs");
        std::fs::read(dir.join(name)).expect("vcd")
    };
    let (a, b) = (run("a.vcd"), run("b.vcd"));
    assert!(!a.is_empty());
    assert!(a == b, "same load, different waveform bytes");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn consumer_has_priority_on_the_write_port() {
    // A consumer write on every cycle of a load's landing delays the TMA but both land, and
    // the consumer's write is accepted in the cycle it is presented.
    let g = pattern(32 * 8 * 2, 4);
    let map = TensorMap::dense(ElemType::Fp16, 0, &[32, 8], &[32, 8]);
    let lane = |i: u32| SmemWriteLane {
        addr: 8192 + 16 * i,
        len: 16,
        data: [i as u8; 16],
    };
    let mut steps = vec![
        Stim {
            mbar_ops: vec![MbarOp {
                bar: 0,
                op: MbarOpKind::Init(1),
            }],
            ..Stim::default()
        },
        Stim {
            tma_cmd: Some(TmaCmd {
                op: TmaOp::Load,
                desc: 0,
                coords: [0; 5],
                smem_addr: 0,
                mbar: 0,
            }),
            mbar_ops: vec![MbarOp {
                bar: 0,
                op: MbarOpKind::ArriveExpectTx(512),
            }],
            ..Stim::default()
        },
    ];
    for i in 0..40 {
        steps.push(Stim {
            smem_write: Some(vec![lane(i)]),
            ..Stim::default()
        });
    }
    steps.push(Stim {
        wait: Some((0, false)),
        ..Stim::default()
    });
    let (r, sim) = script(small_params(), &g, &[map], 1, steps);
    r.expect("runs");
    let log = sim.top().log();
    for i in 0..40 {
        assert_eq!(
            log[2 + i].start,
            log[2 + i].done,
            "consumer write {i} waited"
        );
    }
    let mem = sim.top().mem();
    for i in 0..40u32 {
        assert_eq!(mem.smem_host_read(8192 + 16 * i, 16), &[i as u8; 16]);
    }
    let (dense, _) = tma_ref::dense_box(&g, &map, &[0; 5]);
    assert_eq!(mem.smem_host_read(0, 512), &dense[..]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// A box loaded from tensor 0 and stored to tensor 1 (same geometry) at other, possibly
    /// out-of-bounds coordinates equals the reference scatter of the dense box (out-of-bounds
    /// elements skipped), for every swizzle and element stride.
    #[test]
    fn store_equals_the_reference_scatter(
        swz in prop::sample::select(vec![Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128]),
        es_pick in 0usize..3,
        s in (1u32..4, 1u32..3),
        b1 in 1u32..6,
        c_load in (-3i32..6, -2i32..5),
        c_store in (0i32..20, 0i32..10),
        seed in any::<u64>(),
        bw in prop::sample::select(vec![4u32, 64]),
    ) {
        let dt = [ElemType::U8, ElemType::Fp16, ElemType::Fp32][es_pick];
        let es = dt.size();
        let inner = swz.span().unwrap_or(64).min(64);
        let dims = [u64::from(inner / es) + 5, 9];
        let mut m0 = TensorMap::dense(dt, 0, &dims, &[inner / es, b1]);
        m0.swizzle = swz;
        m0.element_strides = [s.0, s.1, 1, 1, 1];
        m0.global_strides[0] = (dims[0] * u64::from(es)).div_ceil(16) * 16;
        let bytes = (m0.global_strides[0] * dims[1]) as usize;
        let mut m1 = m0;
        m1.global_address = bytes.div_ceil(16) as u64 * 16;
        let mut gmem = pattern(bytes, seed);
        gmem.resize(m1.global_address as usize + bytes, 0);
        // Inner coordinates in 16-byte steps (a GPU traps on any other start).
        let step = (16 / es) as i32;
        let load = TmaCmd { op: TmaOp::Load, desc: 0, coords: [c_load.0 * step, c_load.1, 0, 0, 0], smem_addr: 2048, mbar: 0 };
        let store = TmaCmd { op: TmaOp::Store, desc: 1, coords: [c_store.0 * step, c_store.1, 0, 0, 0], smem_addr: 2048, mbar: 0 };
        let tx = m0.box_bytes() as u32;
        let steps = vec![
            Stim { mbar_ops: vec![MbarOp { bar: 0, op: MbarOpKind::Init(1) }], ..Stim::default() },
            Stim { tma_cmd: Some(load), mbar_ops: vec![MbarOp { bar: 0, op: MbarOpKind::ArriveExpectTx(tx) }], ..Stim::default() },
            Stim { tma_cmd: Some(store), wait: Some((0, false)), ..Stim::default() },
            Stim { wait_stores: true, ..Stim::default() },
        ];
        let params = MemParams { bytes_per_cycle: bw, ..small_params() };
        let (r, sim) = script(params, &gmem, &[m0, m1], 1, steps);
        r.expect("runs");
        let (dense, _) = tma_ref::dense_box(&gmem, &m0, &load.coords);
        // Dimension 0's element stride does not thin a row (measured for loads on an H200;
        // the model's stores walk the box as its loads do).
        let n0 = i64::from(inner / es);
        let n1 = b1.div_ceil(s.1) as i64;
        let mut want = gmem[m1.global_address as usize..].to_vec();
        for k1 in 0..n1 {
            for k0 in 0..n0 {
                let x = i64::from(c_store.0 * step) + k0;
                let y = i64::from(c_store.1) + k1 * i64::from(s.1);
                if (0..dims[0] as i64).contains(&x) && (0..dims[1] as i64).contains(&y) {
                    let e = es as usize;
                    let src = ((k1 * n0 + k0) as usize) * e;
                    let dst = y as usize * m0.global_strides[0] as usize + x as usize * e;
                    want[dst..dst + e].copy_from_slice(&dense[src..src + e]);
                }
            }
        }
        let got = sim.top().mem().host_read(m1.global_address, bytes);
        prop_assert!(got == &want[..]);
        prop_assert_eq!(sim.top().mem().stores_outstanding(), 0);
    }
}

#[test]
fn refused_commands_and_accesses_are_errors() {
    let map = TensorMap::dense(ElemType::Fp16, 0, &[64, 64], &[64, 64]);
    let cmd = |desc, smem_addr, mbar| Stim {
        tma_cmd: Some(TmaCmd {
            op: TmaOp::Load,
            desc,
            coords: [0; 5],
            smem_addr,
            mbar,
        }),
        ..Stim::default()
    };
    let fault = |steps: Vec<Stim>, gmem: usize| match script(
        small_params(),
        &vec![0; gmem],
        &[map],
        1,
        steps,
    )
    .0
    {
        Err(HarnessError::Mem(e)) => e.fault,
        other => panic!("expected a memory error, got {other:?}"),
    };
    assert_eq!(
        fault(vec![cmd(3, 0, 0)], 8192),
        MemFault::Tma(TmaFault::NoDescriptor(3))
    );
    assert_eq!(
        fault(vec![cmd(0, 0, 4)], 8192),
        MemFault::Tma(TmaFault::NoMbarrier(4))
    );
    assert_eq!(
        fault(vec![cmd(0, 64 * 1024 - 128, 0)], 8192),
        MemFault::Tma(TmaFault::SmemRange {
            addr: 64 * 1024 - 128,
            bytes: 8192
        })
    );
    // The tensor runs past the end of global memory (8192 + 4096 bytes here): a global fault.
    let steps = vec![
        Stim {
            mbar_ops: vec![MbarOp {
                bar: 0,
                op: MbarOpKind::Init(1),
            }],
            ..Stim::default()
        },
        cmd(0, 0, 0),
    ];
    assert!(matches!(fault(steps, 8192 - 4096 - 64), MemFault::Gmem(_)));
    // A malformed consumer lane.
    let bad = Stim {
        smem_read: Some(vec![SmemLane { addr: 8, len: 16 }]),
        ..Stim::default()
    };
    assert_eq!(
        fault(vec![bad], 64),
        MemFault::Smem(SmemFault::BadLane { addr: 8, len: 16 })
    );
    let e = MemError {
        cycle: 7,
        fault: MemFault::Smem(SmemFault::BadLane { addr: 8, len: 16 }),
    };
    assert!(e.to_string().contains("cycle 7"));
}
