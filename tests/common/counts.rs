//! Toggle totals counted at the registers against a SAIF run's snapshot counts.

use tensorcore_rtl::rtl::{ActivityReport, TraceConfig};

/// The batches the counter is run with: the one it chooses (`None`) and short ones, which
/// cross many batch boundaries.
pub const BATCHES: [Option<u32>; 5] = [None, Some(1), Some(3), Some(7), Some(32)];

/// `TraceConfig::counting()`, with the counter's batch `batch` if given.
pub fn counting(batch: Option<u32>) -> TraceConfig {
    match batch {
        Some(n) => TraceConfig::counting().counting_batch(n),
        None => TraceConfig::counting(),
    }
}

/// Every signal of `totals` has the toggle total of `per_bit` (the same signals in the same
/// order); `what` names the case in a failure.
pub fn assert_same_totals(per_bit: &ActivityReport, totals: &ActivityReport, what: &str) {
    assert_eq!(per_bit.signals.len(), totals.signals.len(), "{what}");
    for (a, b) in per_bit.signals.iter().zip(&totals.signals) {
        assert_eq!(a.path, b.path, "{what}");
        assert_eq!(a.total_toggles(), b.total_toggles(), "{} {what}", a.path);
    }
}
