//! Error sweeps: how far a mode's dot product lands from the exact result as K grows, in the
//! output-stationary order (one chain over K) or the weight-stationary one (folds of
//! `rows * width` added to C one by one).
//!
//! Sample `s` at length `K` draws its operands from its own SplitMix64 stream (seeded from the
//! sweep seed, `K` and `s`), so a sample's operands do not depend on the thread count or on the
//! shard that runs it. The mode's FP32 result is compared with the exact sum of
//! `verify::exact` (big integers): the error in ulps of FP32 at the exact value and the
//! relative error. Statistics are integer counts and sums of errors quantised to fixed point
//! (2^-16 ulp, 2^-64 relative), and maxima, so any partition of the samples (threads, shards)
//! combines into exactly the same summary.

use crate::gemm::rng::SplitMix64;
use crate::hw::{Dataflow, MAX_ARRAY};
use crate::numerics::dot::promote::{check_promotion, promoted};
use crate::numerics::dot::ws::ws_dot_acc;
use crate::numerics::dot::{dot_acc, AccMode, DotError, DotResult};
use crate::numerics::format::Format;
use crate::numerics::RoundingMode;
use crate::par::{par_map, Threads};
use crate::verify::exact::{decode, exact_sum, Decoded, ExactValue};
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::ToPrimitive;
use serde::{Deserialize, Serialize};

/// How operands are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dist {
    /// Values uniform in (-1, 1), rounded to the format.
    Uniform,
    /// Standard normal values, rounded to the format.
    Normal,
    /// Normal values whose second half cancels the first (B's second half repeats the first,
    /// A's is the negated first half with one element redrawn): tiny exact sums.
    Cancel,
    /// Random finite bit patterns over the format's whole range.
    Wide,
}

impl Dist {
    /// Parses `uniform`, `normal`, `cancel` or `wide`.
    pub fn by_name(name: &str) -> Option<Dist> {
        match name.to_ascii_lowercase().as_str() {
            "uniform" => Some(Dist::Uniform),
            "normal" => Some(Dist::Normal),
            "cancel" => Some(Dist::Cancel),
            "wide" => Some(Dist::Wide),
            _ => None,
        }
    }
}

/// Upper edges of the ulp-error histogram bins after the first (`0` = exact): (0, 1/2],
/// (1/2, 1], (1, 2], ... (2^19, 2^20]; a last bin takes everything above 2^20.
pub fn hist_edges() -> Vec<f64> {
    let mut e = vec![0.0, 0.5];
    for i in 0..=20 {
        e.push(f64::from(1u32 << i));
    }
    e
}

/// Number of histogram bins: exact, one per edge after 0, and the overflow bin.
pub const HIST_BINS: usize = 24;

/// Error statistics of the samples at one K.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KStats {
    /// K.
    pub k: usize,
    /// Samples compared.
    pub samples: u64,
    /// Samples whose result equals the exact sum rounded to nearest (error <= 1/2 ulp is not
    /// enough: this counts error exactly 0).
    pub exact: u64,
    /// Samples where the result or the exact sum is not finite, or the exact sum is zero and
    /// the result is not (left out of the error statistics).
    pub nonfinite: u64,
    /// Largest error, in ulps of FP32 at the exact value.
    pub max_ulp: f64,
    /// Mean error in ulps (from `sum_ulp_q`).
    pub mean_ulp: f64,
    /// Largest relative error.
    pub max_rel: f64,
    /// Mean relative error (from `sum_rel_q`).
    pub mean_rel: f64,
    /// Sum of the ulp errors in units of 2^-16 ulp (decimal string: exact, any size).
    pub sum_ulp_q: String,
    /// Sum of the relative errors in units of 2^-64 (decimal string).
    pub sum_rel_q: String,
    /// Counts per ulp-error bin (see [`hist_edges`]).
    pub hist: Vec<u64>,
}

impl KStats {
    /// The `q`-quantile (0 < q <= 1) of the ulp errors of the finite samples, at histogram
    /// resolution: the upper edge of the bin in which the cumulative count first reaches
    /// `q` of the samples (0 for the exact bin; the overflow bin reports `max_ulp`). An upper
    /// bound of the true quantile, within a factor of 2 (the bins double).
    pub fn quantile_ulp(&self, q: f64) -> f64 {
        let finite: u64 = self.hist.iter().sum();
        if finite == 0 {
            return 0.0;
        }
        let need = (q * finite as f64).ceil().max(1.0) as u64;
        let edges = hist_edges();
        let mut seen = 0;
        for (i, &n) in self.hist.iter().enumerate() {
            seen += n;
            if seen >= need {
                return match i {
                    0 => 0.0,
                    _ if i < edges.len() => edges[i].min(self.max_ulp),
                    _ => self.max_ulp,
                };
            }
        }
        self.max_ulp
    }
}

/// One sample's outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// The result or the exact value is not finite, or the exact value is zero and the
    /// result is not: left out of the error statistics.
    NonFinite,
    /// The error of a finite result.
    Error {
        /// In ulps of the output format at the exact value.
        ulp: f64,
        /// Relative to the exact value.
        rel: f64,
    },
}

/// The longest dot product a sweep draws: each sample holds its A and B (8 bytes per element
/// each) while it runs, one sample per thread, so `K` bounds the sweep's memory
/// (docs/reliability.md, "Limits").
pub const MAX_K: usize = 1 << 20;

/// The most samples per K: the sums of errors are kept in 128 bits, and a sweep this long
/// would run for years.
pub const MAX_SAMPLES: u64 = 1 << 40;

/// Checks the sizes a sweep derives from its options before any work or allocation: every
/// K in `1..=MAX_K`, samples in `1..=MAX_SAMPLES`.
pub fn check_sizes(ks: &[usize], samples: u64) -> Result<(), String> {
    if ks.is_empty() || ks.contains(&0) {
        return Err("--k takes lengths >= 1".into());
    }
    if let Some(k) = ks.iter().find(|&&k| k > MAX_K) {
        return Err(format!(
            "--k {k} is longer than the sweep's limit of {MAX_K} (2^20) products"
        ));
    }
    if samples == 0 {
        return Err("--samples must be at least 1".into());
    }
    if samples > MAX_SAMPLES {
        return Err(format!(
            "--samples {samples} is more than the sweep's limit of {MAX_SAMPLES} (2^40)"
        ));
    }
    Ok(())
}

/// The number of samples `s < samples` with `s % n == i` (shard `(i, n)`, `i < n`).
pub fn shard_samples(samples: u64, (i, n): (u64, u64)) -> u64 {
    samples.saturating_sub(i).div_ceil(n)
}

/// The sweep's configuration.
#[derive(Clone, Debug)]
pub struct SweepConfig {
    /// Format of A.
    pub fmt_a: Format,
    /// Format of B.
    pub fmt_b: Format,
    /// The mode measured.
    pub mode: AccMode,
    /// The accumulator (output) format: FP32, or FP16 (errors in ulps of FP16).
    pub out: Format,
    /// Its rounding (`NearestEven` for nvidia).
    pub rm: RoundingMode,
    /// Products per step for ieee/fused.
    pub width: usize,
    /// The lengths swept.
    pub ks: Vec<usize>,
    /// Samples per K (over all shards).
    pub samples: u64,
    /// Operand distribution.
    pub dist: Dist,
    /// The seed.
    pub seed: u64,
    /// This run's shard `(i, n)`: samples `s` with `s % n == i`.
    pub shard: (u64, u64),
    /// The accumulation order measured: output-stationary (one chain over K, the default) or
    /// weight-stationary (folds of `rows * width` added to C one by one; docs/numerics.md,
    /// "Weight-stationary order").
    pub dataflow: Dataflow,
    /// Rows of the array, for [`Dataflow::Ws`] and [`Dataflow::Is`] (the fold is
    /// `rows * width` elements of K); unused by [`Dataflow::Os`].
    pub rows: usize,
    /// FP32 promotion every `N` products ([`crate::numerics::dot::promote`]): each chunk of
    /// K in the sweep's mode and dataflow from +0, added into an FP32 sum with one RNE
    /// addition; `None` for none.
    pub promote_every: Option<usize>,
}

/// Checks what the weight-stationary order needs of a sweep: `rows` in
/// `1..=`[`MAX_ARRAY`], round to nearest even (the accumulator block's additions round so),
/// and for `nvidia` whole blocks per PE (`width` a multiple of the block size `n`, as the
/// clocked `ws` core requires). Output-stationary sweeps pass unchecked.
pub fn check_dataflow(cfg: &SweepConfig) -> Result<(), String> {
    if !cfg.dataflow.folds_k() {
        return Ok(());
    }
    let df = cfg.dataflow;
    if !(1..=MAX_ARRAY).contains(&cfg.rows) {
        return Err(format!(
            "--rows {} is outside 1..={MAX_ARRAY} (the rows of the array)",
            cfg.rows
        ));
    }
    if cfg.rm != RoundingMode::NearestEven {
        return Err(format!(
            "--dataflow {df} rounds to nearest even only (its fold additions are IEEE RNE): \
             --rounding {} does not apply",
            cfg.rm.name()
        ));
    }
    if let AccMode::Nvidia(p) = cfg.mode {
        if cfg.width < p.block || !cfg.width.is_multiple_of(p.block.max(1)) {
            return Err(format!(
                "--dataflow {df} with nvidia needs whole blocks per PE: --width {} is not a \
                 multiple of the preset's block of {}",
                cfg.width, p.block
            ));
        }
    }
    Ok(())
}

/// One sample's result under the sweep's mode and dataflow (C = 0), promoted every
/// `promote_every` products if given ([`promoted`]: each chunk is this dataflow's dot
/// product from +0).
fn sweep_dot(cfg: &SweepConfig, a: &[u64], b: &[u64]) -> Result<u32, DotError> {
    match cfg.promote_every {
        Some(every) => promoted(a.len(), every, 0, |r, c| {
            chunk_dot(cfg, &a[r.clone()], &b[r], c)
        })
        .map(|d| d.bits),
        None => chunk_dot(cfg, a, b, 0).map(|d| d.bits),
    }
}

/// The dot product of `a` and `b` from the accumulator `c` under the sweep's mode and
/// dataflow.
fn chunk_dot(cfg: &SweepConfig, a: &[u64], b: &[u64], c: u32) -> Result<DotResult, DotError> {
    match cfg.dataflow {
        Dataflow::Os => dot_acc(
            &cfg.mode, cfg.rm, cfg.out, cfg.fmt_a, cfg.fmt_b, a, b, c, cfg.width,
        ),
        Dataflow::Ws | Dataflow::Is => ws_dot_acc(
            &cfg.mode, cfg.out, cfg.fmt_a, cfg.fmt_b, a, b, c, cfg.width, cfg.rows,
        ),
    }
}

/// A value of `fmt` nearest to `v` (round to nearest even; overflow saturates), as bits:
/// found by bisection over the ordered positive encodings with the reference decoder.
pub fn encode_nearest(fmt: Format, v: f64) -> u64 {
    let sign = if v < 0.0 {
        1u64 << (fmt.width() - 1)
    } else {
        0
    };
    let m = v.abs();
    let max = fmt.max_finite_magnitude();
    let val = |b: u64| match decode(fmt, b) {
        Decoded::Finite(x) => x,
        _ => f64::INFINITY,
    };
    // Largest encoding with value <= m.
    let (mut lo, mut hi) = (0u64, max);
    if val(hi) <= m {
        return sign | hi;
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if val(mid) <= m {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (dl, dh) = (m - val(lo), val(hi) - m);
    let pick = if dl < dh || (dl == dh && lo & 1 == 0) {
        lo
    } else {
        hi
    };
    sign | pick
}

fn normal(rng: &mut SplitMix64) -> f64 {
    // Box-Muller from two uniforms in (0, 1].
    let u1 = ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
    let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn draw(rng: &mut SplitMix64, fmt: Format, dist: Dist) -> u64 {
    match dist {
        Dist::Uniform => {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0;
            encode_nearest(fmt, u)
        }
        Dist::Normal | Dist::Cancel => encode_nearest(fmt, normal(rng)),
        Dist::Wide => loop {
            let b = rng.next_u64() & fmt.mask();
            if matches!(decode(fmt, b), Decoded::Finite(_)) {
                return b;
            }
        },
    }
}

/// The operands of sample `s` at length `k`: (A, B), C = 0.
pub fn operands(cfg: &SweepConfig, k: usize, s: u64) -> (Vec<u64>, Vec<u64>) {
    let mut rng = SplitMix64::new(
        cfg.seed ^ (k as u64).wrapping_mul(0xD1B5_4A32_D192_ED03) ^ s.wrapping_mul(0x9E37_79B9),
    );
    let mut a: Vec<u64> = (0..k)
        .map(|_| draw(&mut rng, cfg.fmt_a, cfg.dist))
        .collect();
    let mut b: Vec<u64> = (0..k)
        .map(|_| draw(&mut rng, cfg.fmt_b, cfg.dist))
        .collect();
    if cfg.dist == Dist::Cancel && k >= 2 {
        let h = k / 2;
        let sign_a = 1u64 << (cfg.fmt_a.width() - 1);
        for j in 0..h {
            a[h + j] = a[j] ^ sign_a;
            b[h + j] = b[j];
        }
        let redraw = h + (rng.next_u64() % (k - h) as u64) as usize;
        a[redraw] = draw(&mut rng, cfg.fmt_a, Dist::Normal);
    }
    (a, b)
}

/// Error of `d` (a bit pattern of the output format `out`) against the exact value `x`, in
/// ulps of `out` at the exact value and relative.
pub fn error(d: u32, out: Format, x: &ExactValue) -> Outcome {
    let (neg, mag, exp) = match x {
        ExactValue::Finite(n, m, e) => (*n, m, *e),
        _ => return Outcome::NonFinite,
    };
    let d = u64::from(d);
    if !out.classify(d).is_finite() {
        return Outcome::NonFinite;
    }
    // d = (-1)^dn * dm * 2^de exactly.
    let frac = i64::from(out.frac_bits);
    let (dn, dm, de): (bool, u64, i64) = {
        let e = out.exp_field(d) as i64;
        let f = out.frac_field(d);
        if e == 0 {
            (out.sign_of(d), f, i64::from(out.emin()) - frac)
        } else {
            (
                out.sign_of(d),
                f | 1 << out.frac_bits,
                e - i64::from(out.bias) - frac,
            )
        }
    };
    let e0 = exp.min(de);
    let signed = |n: bool, m: BigUint| {
        if n {
            BigInt::from_biguint(Sign::Minus, m)
        } else {
            BigInt::from_biguint(Sign::Plus, m)
        }
    };
    let xv = signed(neg, mag.clone() << ((exp - e0) as usize));
    let dvv = signed(dn, BigUint::from(dm) << ((de - e0) as usize));
    let diff = (dvv - xv).magnitude().clone();
    if mag.bits() == 0 {
        if diff.bits() == 0 {
            return Outcome::Error { ulp: 0.0, rel: 0.0 };
        }
        return Outcome::NonFinite;
    }
    let top = exp + mag.bits() as i64 - 1;
    let ulp_exp = top.max(i64::from(out.emin())) - frac;
    let diff_f = diff.to_f64().unwrap_or(f64::INFINITY);
    let ulp = diff_f * 2f64.powi((e0 - ulp_exp) as i32);
    let rel = diff_f / mag.to_f64().unwrap_or(f64::INFINITY) * 2f64.powi((e0 - exp) as i32);
    if !ulp.is_finite() || !rel.is_finite() {
        return Outcome::NonFinite;
    }
    Outcome::Error { ulp, rel }
}

/// The histogram bin of an ulp error (see [`hist_edges`]): 0 for an exact result, then one
/// bin per edge, the last taking everything above the last edge.
pub fn hist_bin(ulp: f64) -> usize {
    if ulp == 0.0 {
        return 0;
    }
    let edges = hist_edges();
    for (i, w) in edges.windows(2).enumerate() {
        if ulp > w[0] && ulp <= w[1] {
            return i + 1;
        }
    }
    HIST_BINS - 1
}

/// Integer accumulator of one K's statistics (associative and commutative).
#[derive(Clone, Debug, Default)]
struct Acc {
    samples: u64,
    exact: u64,
    nonfinite: u64,
    max_ulp: f64,
    max_rel: f64,
    sum_ulp_q: u128,
    sum_rel_q: u128,
    hist: [u64; HIST_BINS],
}

impl Acc {
    fn add(mut self, o: Outcome) -> Acc {
        self.samples += 1;
        match o {
            Outcome::NonFinite => self.nonfinite += 1,
            Outcome::Error { ulp, rel } => {
                self.exact += (ulp == 0.0) as u64;
                self.max_ulp = self.max_ulp.max(ulp);
                self.max_rel = self.max_rel.max(rel);
                // Saturating: associative for non-negative terms, so every split of the
                // samples still gives the same totals.
                self.sum_ulp_q = self
                    .sum_ulp_q
                    .saturating_add((ulp * 65536.0).round().min(1e30) as u128);
                self.sum_rel_q = self
                    .sum_rel_q
                    .saturating_add((rel * 2f64.powi(64)).round().min(1e30) as u128);
                self.hist[hist_bin(ulp)] += 1;
            }
        }
        self
    }

    fn merge(mut self, o: Acc) -> Acc {
        self.samples += o.samples;
        self.exact += o.exact;
        self.nonfinite += o.nonfinite;
        self.max_ulp = self.max_ulp.max(o.max_ulp);
        self.max_rel = self.max_rel.max(o.max_rel);
        self.sum_ulp_q = self.sum_ulp_q.saturating_add(o.sum_ulp_q);
        self.sum_rel_q = self.sum_rel_q.saturating_add(o.sum_rel_q);
        for (h, x) in self.hist.iter_mut().zip(o.hist) {
            *h += x;
        }
        self
    }
}

/// Builds the published statistics from integer totals (the one place means are divided).
fn finish(k: usize, a: &Acc) -> KStats {
    let n = (a.samples - a.nonfinite).max(1) as f64;
    KStats {
        k,
        samples: a.samples,
        exact: a.exact,
        nonfinite: a.nonfinite,
        max_ulp: a.max_ulp,
        mean_ulp: a.sum_ulp_q as f64 / 65536.0 / n,
        max_rel: a.max_rel,
        mean_rel: a.sum_rel_q as f64 / 2f64.powi(64) / n,
        sum_ulp_q: a.sum_ulp_q.to_string(),
        sum_rel_q: a.sum_rel_q.to_string(),
        hist: a.hist.to_vec(),
    }
}

/// Combines per-shard statistics of one K (same K) into the statistics of all their samples.
pub fn merge_stats(parts: &[KStats]) -> Result<KStats, String> {
    let k = parts.first().map_or(0, |p| p.k);
    let mut acc = Acc::default();
    for p in parts {
        if p.k != k || p.hist.len() != HIST_BINS {
            return Err(format!("cannot merge K = {} with K = {k}", p.k));
        }
        let q = |s: &str| {
            s.parse::<u128>()
                .map_err(|_| format!("bad sum {s:?} in K = {k}"))
        };
        let hist_total = p.hist.iter().try_fold(0u64, |t, &h| t.checked_add(h));
        if p.nonfinite > p.samples
            || p.exact > p.samples
            || hist_total.is_none_or(|t| t > p.samples)
        {
            return Err(format!(
                "K = {k}: the counts (exact, nonfinite, hist) exceed the {} samples",
                p.samples
            ));
        }
        if acc.samples.checked_add(p.samples).is_none() {
            return Err(format!(
                "K = {k}: the shards' sample counts overflow 64 bits"
            ));
        }
        let mut hist = [0u64; HIST_BINS];
        hist.copy_from_slice(&p.hist);
        acc = acc.merge(Acc {
            samples: p.samples,
            exact: p.exact,
            nonfinite: p.nonfinite,
            max_ulp: p.max_ulp,
            max_rel: p.max_rel,
            sum_ulp_q: q(&p.sum_ulp_q)?,
            sum_rel_q: q(&p.sum_rel_q)?,
            hist,
        });
    }
    Ok(finish(k, &acc))
}

/// The chunks of samples per worker thread a K is cut into (so that a slow chunk does not
/// hold the others up).
const CHUNKS_PER_THREAD: u64 = 8;

/// Runs this shard's samples of every K (in parallel, [`crate::par`]) and returns one [`KStats`] per K. A
/// configuration the mode or the dataflow refuses ([`check_dataflow`]) is an error before
/// any sample runs.
pub fn run(cfg: &SweepConfig, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<KStats>, String> {
    check_dataflow(cfg)?;
    let (i, n) = cfg.shard;
    // This shard's samples `i, i + n, ...`, enumerated rather than collected.
    let count = shard_samples(cfg.samples, cfg.shard);
    let mut out = Vec::new();
    for &k in &cfg.ks {
        // Check the configuration once (formats, width, rounding) before the parallel part.
        dot_acc(
            &cfg.mode,
            cfg.rm,
            cfg.out,
            cfg.fmt_a,
            cfg.fmt_b,
            &[],
            &[],
            0,
            cfg.width,
        )
        .map_err(|e| e.to_string())?;
        if let Some(every) = cfg.promote_every {
            check_promotion(&cfg.mode, cfg.out, every).map_err(|e| e.to_string())?;
        }
        // The samples in a few chunks per thread, each summed on one thread, the chunks'
        // sums merged in order (any partition gives the same statistics).
        let threads = Threads::or_cores(None);
        let chunk = count
            .div_ceil(threads.get() as u64 * CHUNKS_PER_THREAD)
            .max(1);
        let starts: Vec<u64> = (0..count).step_by(chunk as usize).collect();
        let acc = par_map(&starts, threads, |_, &from| {
            (from..(from + chunk).min(count)).fold(Acc::default(), |acc, j| {
                let s = i + j * n;
                let (a, b) = operands(cfg, k, s);
                let d = sweep_dot(cfg, &a, &b).unwrap_or(cfg.out.canonical_nan() as u32);
                let x = exact_sum(cfg.fmt_a, cfg.fmt_b, &a, &b, 0);
                progress(1);
                acc.add(error(d, cfg.out, &x))
            })
        })
        .into_iter()
        .fold(Acc::default(), Acc::merge);
        out.push(finish(k, &acc));
    }
    Ok(out)
}
