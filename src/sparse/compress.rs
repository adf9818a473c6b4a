//! Compression of a dense A into kept values and metadata, validation of a compressed pair,
//! and decompression.
//!
//! Selection rule for each group of four values along K (a value is *nonzero* unless its
//! encoding is `+0` or `-0`; NaN and Inf count as nonzero):
//! - two nonzeros: their indices;
//! - one nonzero at index `i`: the pair `(i, i + 1)`, or `(2, 3)` when `i = 3`;
//! - no nonzero: the pair `(0, 1)`;
//! - three or four nonzeros: [`SparseError::TooManyNonzeros`], unless [`Prune::KeepLargest`]
//!   asks to keep the two largest magnitudes (ties to the lower index).
//!
//! The stored values are A's own encodings at the kept indices (so a kept zero keeps its
//! sign); decompression puts `+0` at every position that was not kept.
//!
//! Magnitudes are compared by bit pattern: with the sign bit cleared, every format here orders
//! its encodings by magnitude (zeros < subnormals < normals < Inf), and NaN sorts above
//! everything, so a pruned group keeps its NaNs (a NaN in A is never silently dropped unless a
//! group holds three or more of them; then the two at the lowest indices are kept).

use super::meta::{self, NibbleError};
use crate::numerics::format::{Class, Format};

/// What to do with a group of four that holds more than two nonzeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Prune {
    /// Report [`SparseError::TooManyNonzeros`] (the default).
    #[default]
    Off,
    /// Keep the two values of largest magnitude (ties to the lower index), drop the rest.
    KeepLargest,
}

/// Errors of 2:4 compression, validation and sparse problems. Rows, groups and columns are
/// counted from 0; group `g` covers dense columns `4g..=4g+3`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SparseError {
    /// K is not a multiple of 4.
    #[error("K = {k} is not a multiple of 4 (2:4 sparsity works on groups of 4 along K)")]
    KNotMultipleOf4 {
        /// The dense K.
        k: usize,
    },
    /// A dimension is zero.
    #[error("dimension {name} must be at least 1")]
    ZeroDim {
        /// `m` or `k`.
        name: &'static str,
    },
    /// An array holds the wrong number of elements.
    #[error("{what} must be {rows} x {cols} ({} elements) but has {len}", rows * cols)]
    Shape {
        /// Which array (`A`, `A values`, `A metadata`).
        what: &'static str,
        /// Expected rows.
        rows: usize,
        /// Expected columns.
        cols: usize,
        /// Elements found.
        len: usize,
    },
    /// An element does not fit its format's width.
    #[error("{what}[{row}][{col}] = {bits:#x} is not a {format} bit pattern")]
    BitsOutOfRange {
        /// Which array (`A` or `A values`).
        what: &'static str,
        /// Row.
        row: usize,
        /// Column.
        col: usize,
        /// The offending word.
        bits: u64,
        /// The format's name.
        format: &'static str,
    },
    /// A dense group holds more than two nonzeros (and pruning was not asked for).
    #[error(
        "A row {row}, group {group} (columns {}..={}) has {count} nonzeros; 2:4 sparsity allows at most 2 per group of 4 (prune to keep the two largest)",
        4 * group,
        4 * group + 3
    )]
    TooManyNonzeros {
        /// Row of A.
        row: usize,
        /// Group along K.
        group: usize,
        /// Nonzeros found (3 or 4).
        count: usize,
    },
    /// A metadata entry is not one of the six valid nibbles.
    #[error("metadata row {row}, group {group}: invalid 2:4 nibble 0b{nibble:04b}: {why}")]
    BadNibble {
        /// Row of A.
        row: usize,
        /// Group along K.
        group: usize,
        /// The entry found.
        nibble: u8,
        /// Why it is invalid.
        why: NibbleError,
    },
    /// The compressed A's format differs from the configuration's.
    #[error("the compressed A is {found} but the configuration says {expected}")]
    FormatMismatch {
        /// Format of the compressed A.
        found: &'static str,
        /// The configuration's `fmt_a`.
        expected: &'static str,
    },
    /// The B bus of the sparse PE at this width cannot carry a step's B values
    /// ([`crate::sparse::problem::check_b_bus`]).
    #[error(
        "--sparse at w = {width} carries {lanes} {format} B values ({bits} bits) a step on a \
         {bus}-bit bus: use --width 2 or more (ieee or fused), or a B format of at most {} bits",
        bus / lanes
    )]
    BBusTooNarrow {
        /// The width (kept products a step).
        width: usize,
        /// B values a step presents per column.
        lanes: usize,
        /// B's format.
        format: &'static str,
        /// Their bits.
        bits: usize,
        /// The bus's bits (64 per lane of the width).
        bus: usize,
    },
    /// The rest of the problem (B, C, formats, width, mode) is not valid.
    #[error(transparent)]
    Gemm(#[from] crate::gemm::GemmError),
}

/// A 2:4-compressed A: `m x k/2` kept values (row-major bit patterns of `fmt`) and
/// `m x k/4` metadata nibbles (one byte each, row-major). Always valid once built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compressed {
    /// Rows.
    m: usize,
    /// The dense K (a multiple of 4).
    k: usize,
    /// Format of the values.
    fmt: Format,
    /// Kept values, `m x k/2`.
    values: Vec<u64>,
    /// Metadata, `m x k/4`.
    meta: Vec<u8>,
}

fn check_dims(m: usize, k: usize) -> Result<(), SparseError> {
    if m == 0 {
        return Err(SparseError::ZeroDim { name: "m" });
    }
    if k == 0 {
        return Err(SparseError::ZeroDim { name: "k" });
    }
    if !k.is_multiple_of(4) {
        return Err(SparseError::KNotMultipleOf4 { k });
    }
    Ok(())
}

fn check_bits(
    what: &'static str,
    fmt: Format,
    words: &[u64],
    cols: usize,
) -> Result<(), SparseError> {
    match words.iter().position(|&w| w & !fmt.mask() != 0) {
        Some(i) => Err(SparseError::BitsOutOfRange {
            what,
            row: i / cols,
            col: i % cols,
            bits: words[i],
            format: fmt.name,
        }),
        None => Ok(()),
    }
}

/// True unless `bits` encodes a zero of `fmt` (either sign).
fn nonzero(fmt: Format, bits: u64) -> bool {
    fmt.classify(bits) != Class::Zero
}

/// The index pair kept from one group of four, by the rule in the module documentation;
/// `Err(count)` when the group has `count > 2` nonzeros and `prune` is off.
pub fn select(fmt: Format, group: &[u64; 4], prune: Prune) -> Result<(u8, u8), usize> {
    let nz: Vec<u8> = (0..4u8)
        .filter(|&i| nonzero(fmt, group[i as usize]))
        .collect();
    match nz.len() {
        0 => Ok((0, 1)),
        1 => Ok(if nz[0] == 3 {
            (2, 3)
        } else {
            (nz[0], nz[0] + 1)
        }),
        2 => Ok((nz[0], nz[1])),
        count => match prune {
            Prune::Off => Err(count),
            Prune::KeepLargest => {
                // Stable sort by descending magnitude keeps ties in index order.
                let mut order = [0u8, 1, 2, 3];
                order.sort_by_key(|&i| std::cmp::Reverse(group[i as usize] & !fmt.sign_bit()));
                let (x, y) = (order[0], order[1]);
                Ok((x.min(y), x.max(y)))
            }
        },
    }
}

/// How many groups of four in a dense A with rows of `k` values hold more than two
/// nonzeros (the groups [`Prune::KeepLargest`] prunes). `k` must be a multiple of 4.
pub fn overfull_groups(fmt: Format, k: usize, a: &[u64]) -> usize {
    if k == 0 || !k.is_multiple_of(4) {
        return 0;
    }
    a.chunks_exact(4)
        .filter(|g| g.iter().filter(|&&v| nonzero(fmt, v)).count() > 2)
        .count()
}

/// Compresses a dense `m x k` A (row-major bit patterns of `fmt`).
pub fn compress(
    fmt: Format,
    m: usize,
    k: usize,
    a: &[u64],
    prune: Prune,
) -> Result<Compressed, SparseError> {
    check_dims(m, k)?;
    if a.len() != m * k {
        return Err(SparseError::Shape {
            what: "A",
            rows: m,
            cols: k,
            len: a.len(),
        });
    }
    check_bits("A", fmt, a, k)?;
    let groups = k / 4;
    let mut values = Vec::with_capacity(m * k / 2);
    let mut meta = Vec::with_capacity(m * groups);
    for (row, r) in a.chunks_exact(k).enumerate() {
        for (group, g) in r.chunks_exact(4).enumerate() {
            let g = [g[0], g[1], g[2], g[3]];
            let (i0, i1) = select(fmt, &g, prune)
                .map_err(|count| SparseError::TooManyNonzeros { row, group, count })?;
            values.push(g[i0 as usize]);
            values.push(g[i1 as usize]);
            meta.push(meta::encode(i0, i1));
        }
    }
    Ok(Compressed {
        m,
        k,
        fmt,
        values,
        meta,
    })
}

impl Compressed {
    /// Validates and builds a compressed A of `m` rows and dense width `k`: `values` is
    /// `m x k/2` bit patterns of `fmt`, `meta` is `m x k/4` nibbles (one per byte). Errors
    /// name the first offending row and group.
    pub fn new(
        fmt: Format,
        m: usize,
        k: usize,
        values: Vec<u64>,
        meta: Vec<u8>,
    ) -> Result<Compressed, SparseError> {
        check_dims(m, k)?;
        if values.len() != m * k / 2 {
            return Err(SparseError::Shape {
                what: "A values",
                rows: m,
                cols: k / 2,
                len: values.len(),
            });
        }
        if meta.len() != m * k / 4 {
            return Err(SparseError::Shape {
                what: "A metadata",
                rows: m,
                cols: k / 4,
                len: meta.len(),
            });
        }
        check_bits("A values", fmt, &values, k / 2)?;
        for (i, &nibble) in meta.iter().enumerate() {
            if let Err(why) = meta::decode(nibble) {
                return Err(SparseError::BadNibble {
                    row: i / (k / 4),
                    group: i % (k / 4),
                    nibble,
                    why,
                });
            }
        }
        Ok(Compressed {
            m,
            k,
            fmt,
            values,
            meta,
        })
    }

    /// Rows.
    pub fn m(&self) -> usize {
        self.m
    }

    /// The dense K.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Kept values per row (`k / 2`).
    pub fn kept(&self) -> usize {
        self.k / 2
    }

    /// Groups of four per row (`k / 4`).
    pub fn groups(&self) -> usize {
        self.k / 4
    }

    /// Format of the values.
    pub fn format(&self) -> Format {
        self.fmt
    }

    /// All kept values, `m x k/2` row-major.
    pub fn values(&self) -> &[u64] {
        &self.values
    }

    /// All metadata nibbles, `m x k/4` row-major.
    pub fn meta(&self) -> &[u8] {
        &self.meta
    }

    /// Kept values of row `i`.
    pub fn values_row(&self, i: usize) -> &[u64] {
        &self.values[i * self.kept()..(i + 1) * self.kept()]
    }

    /// Metadata of row `i`.
    pub fn meta_row(&self, i: usize) -> &[u8] {
        &self.meta[i * self.groups()..(i + 1) * self.groups()]
    }

    /// The dense column of each kept value of row `i`, in storage order (ascending).
    pub fn kept_columns(&self, i: usize) -> Vec<usize> {
        let mut cols = Vec::with_capacity(self.kept());
        for (g, &nibble) in self.meta_row(i).iter().enumerate() {
            // Valid by construction; the fallback is never taken.
            let (i0, i1) = meta::decode(nibble).unwrap_or((0, 1));
            cols.push(4 * g + i0 as usize);
            cols.push(4 * g + i1 as usize);
        }
        cols
    }

    /// The dense `m x k` A: kept values at their columns, `+0` everywhere else.
    pub fn decompress(&self) -> Vec<u64> {
        let mut a = vec![0u64; self.m * self.k];
        for i in 0..self.m {
            for (col, &v) in self.kept_columns(i).iter().zip(self.values_row(i)) {
                a[i * self.k + col] = v;
            }
        }
        a
    }
}
