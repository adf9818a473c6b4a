//! The watchdog: stops a run that makes no progress.

/// Counts cycles without progress and trips after `limit` of them.
///
/// Progress is [`crate::rtl::Design::progress`] changing when the design provides it, otherwise
/// any register changing value at the clock edge. Cycles in reset do not count.
#[derive(Debug, Clone)]
pub struct Watchdog {
    limit: u64,
    stalled: u64,
    last_progress: Option<u64>,
}

impl Watchdog {
    /// A watchdog that trips after `limit` cycles without progress.
    pub fn new(limit: u64) -> Self {
        Self {
            limit,
            stalled: 0,
            last_progress: None,
        }
    }

    /// The limit in cycles.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Records one clock edge; returns `Some(stalled_cycles)` when the watchdog trips.
    pub(in crate::rtl) fn tick(
        &mut self,
        rst: bool,
        progress: Option<u64>,
        any_reg_changed: bool,
    ) -> Option<u64> {
        let moved = match progress {
            Some(p) => {
                let moved = self.last_progress != Some(p);
                self.last_progress = Some(p);
                moved
            }
            None => any_reg_changed,
        };
        if rst || moved {
            self.stalled = 0;
            None
        } else {
            self.stalled += 1;
            (self.stalled >= self.limit).then_some(self.stalled)
        }
    }
}
