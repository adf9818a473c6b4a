//! The analytic model of a layer: its cycles from the schedules' formulas (`docs/timing.md`:
//! the output-stationary total, or the weight-stationary pass rules) and its operand-store
//! traffic from the closed forms (`docs/cli.md`, "Operand-store traffic"), without simulating.
//! `tcrtl workload run --analytic` reports these alone; a simulated run reports them beside
//! what it measured, and whether the two agree.

use crate::gemm::CoreConfig;
use crate::hw::dataflow::is::is_schedule;
use crate::hw::schedule::Schedule;
use crate::hw::ws::{WsSchedule, ACC_ROWS};
use crate::hw::{Dataflow, Traffic};

/// What the formulas say of one layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Analytic {
    /// Cycles from leaving `Idle` to `Done`.
    pub cycles: u64,
    /// Output tiles (`ceil(M / R) * ceil(N / C)`).
    pub tiles: usize,
    /// The operand-store traffic.
    pub traffic: Traffic,
}

/// The analytic model of an `m x n x k` GEMM on a core built for `cfg`.
pub fn analytic(cfg: &CoreConfig, m: usize, n: usize, k: usize) -> Analytic {
    let (rows, cols) = (cfg.rows() as u64, cfg.cols() as u64);
    let (mu, nu, ku) = (m as u64, n as u64, k as u64);
    let chunks = |s: u64| s.div_ceil(ACC_ROWS as u64);
    // The cycles, the output tiles, and how often A and B are read whole: A once per column
    // tile of B (os, ws) or per chunk of B's columns streamed (is); B once per row tile of A
    // (os), per chunk of A's rows streamed (ws) or per column tile of A's rows held (is).
    let (cycles, tiles, a_repeats, b_repeats) = match cfg.dataflow() {
        Dataflow::Os => (
            Schedule::for_core(cfg, m, n, k, cfg.block()).total_cycles(),
            mu.div_ceil(rows) * nu.div_ceil(cols),
            nu.div_ceil(cols),
            mu.div_ceil(rows),
        ),
        Dataflow::Ws => (
            WsSchedule::for_core(cfg, m, n, k).total_cycles(),
            mu.div_ceil(rows) * nu.div_ceil(cols),
            nu.div_ceil(cols),
            chunks(mu),
        ),
        Dataflow::Is => (
            is_schedule(cfg, m, n, k).total_cycles(),
            nu.div_ceil(rows) * mu.div_ceil(cols),
            chunks(nu),
            mu.div_ceil(cols),
        ),
    };
    let acc_bits = u64::from(cfg.acc.width());
    Analytic {
        cycles,
        tiles: tiles as usize,
        traffic: Traffic {
            a_read_bits: mu * ku * a_repeats * u64::from(cfg.fmt_a.width()),
            b_read_bits: ku * nu * b_repeats * u64::from(cfg.fmt_b.width()),
            c_read_bits: mu * nu * acc_bits,
            d_write_bits: mu * nu * acc_bits,
        },
    }
}

/// SCALE-Sim's compute cycles of an `m x n x k` GEMM on an `rows x cols` array
/// (`docs/timing.md`, "SCALE-Sim-compatible timing"): each fold run and drained on its own,
/// one MAC per PE a cycle, no pipeline latency, no preload or drain beyond the fold, and the
/// report's last-cycle index (one less than the count).
/// - `os`: the array holds an `R x C` block of D (`S_r = M`, `S_c = N`), K streams
///   (`T = K`); `folds = ceil(M / R) * ceil(N / C)`, each `T + R + C - 2` cycles;
/// - `ws`: the array holds an `R x C` block of B (`S_r = K`, `S_c = N`), the rows of A stream
///   (`T = M`); `folds = ceil(K / R) * ceil(N / C)`, each `2R + C + T - 2` cycles;
/// - `is`: the array holds an `R x C` block of A transposed (`S_r = K`, `S_c = M`), the
///   columns of B stream (`T = N`); `folds = ceil(K / R) * ceil(M / C)`, each
///   `2R + C + T - 2` cycles (SCALE-Sim v3, `scalesim/compute/systolic_compute_is.py`).
pub fn scalesim_cycles(
    dataflow: Dataflow,
    (rows, cols): (usize, usize),
    m: usize,
    n: usize,
    k: usize,
) -> u64 {
    let (r, c) = (rows as u64, cols as u64);
    let (m, n, k) = (m as u64, n as u64, k as u64);
    // The spatial rows S_r and one fold's cycles (T the streamed dimension).
    let (sr, sc, fold) = match dataflow {
        Dataflow::Os => (m, n, k + r + c - 2),
        Dataflow::Ws => (k, n, 2 * r + c + m - 2),
        Dataflow::Is => (k, m, 2 * r + c + n - 2),
    };
    (sr.div_ceil(r) * sc.div_ceil(c) * fold).saturating_sub(1)
}

/// SCALE-Sim's mapping of an `m x n x k` GEMM onto an `rows x cols` array, as the PE slots
/// its folds map and offer: `(mapped, offered)`, with SCALE-Sim's "Mapping Efficiency" the
/// ratio of the two (SCALE-Sim v3, `scalesim/compute/systolic_compute_os.py` and
/// `systolic_compute_ws.py`, `systolic_compute_is.py`: each fold's `row_used * col_used /
/// (R * C)`, averaged over the folds). The array holds an `S_r x S_c` operand in
/// `ceil(S_r / R) * ceil(S_c / C)` folds, `os` `S_r = M` (output pixels), `S_c = N`; `ws`
/// `S_r = K`, `S_c = N` (the filters); `is` `S_r = K`, `S_c = M` (the output pixels' input
/// windows). Summed
/// over the folds, the used rows are `S_r` and the used columns `S_c`, so
/// - `mapped = S_r * S_c`, `offered = ceil(S_r / R) * R * ceil(S_c / C) * C`,
///
/// and the fold average is `mapped / offered`. Sums of both over layers give the average over
/// all their folds. `(0, 0)` for a GEMM without MACs (`m`, `n` or `k` zero: no folds).
pub fn scalesim_mapping(
    dataflow: Dataflow,
    (rows, cols): (usize, usize),
    m: usize,
    n: usize,
    k: usize,
) -> (u64, u64) {
    if m == 0 || n == 0 || k == 0 {
        return (0, 0);
    }
    let (r, c) = (rows as u64, cols as u64);
    let (sr, sc) = match dataflow {
        Dataflow::Os => (m as u64, n as u64),
        Dataflow::Ws => (k as u64, n as u64),
        Dataflow::Is => (k as u64, m as u64),
    };
    (sr * sc, sr.div_ceil(r) * r * sc.div_ceil(c) * c)
}

/// SCALE-Sim's mapping efficiency of an `m x n x k` GEMM on an `rows x cols` array, a
/// fraction (SCALE-Sim's report gives it in percent): the average over its folds of the share
/// of the array's PEs the fold maps ([`scalesim_mapping`]); 0 for a GEMM without MACs.
pub fn scalesim_mapping_efficiency(
    dataflow: Dataflow,
    array: (usize, usize),
    m: usize,
    n: usize,
    k: usize,
) -> f64 {
    match scalesim_mapping(dataflow, array, m, n, k) {
        (_, 0) => 0.0,
        (mapped, offered) => mapped as f64 / offered as f64,
    }
}
