//! Which part of a run one process does: shard `I` of `N` runs the items (layers, tile rows,
//! samples) `i` with `i mod N = I`, so that the shards of a run together run each item once.

/// Shard `index` of `count` (`index < count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 0.
    pub index: u64,
    /// How many parts.
    pub count: u64,
}

impl Shard {
    /// The whole run.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// `I/N` as written in reports.
    pub fn text(self) -> String {
        format!("{}/{}", self.index, self.count)
    }

    /// Whether item `i` (a layer, a sample) is this shard's: `i mod N = I`.
    pub fn owns(self, i: u64) -> bool {
        i % self.count == self.index
    }
}
