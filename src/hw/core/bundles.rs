//! The bundles every dataflow's top passes between its blocks and hands out: a row of D
//! ([`DRow`]) and the tag that travels beside it ([`DTag`]).

/// One row of D leaving the output register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DRow<'a> {
    /// The tile.
    pub tile: usize,
    /// The row within the tile (0..R).
    pub row: usize,
    /// One result (accumulator bits) per mesh column: what the output registers `d_out_<j>`
    /// hold.
    pub values: &'a [u32],
}

/// The tag beside a row of D (`d_tag`, and the tag words of the de-skew registers), as typed
/// fields; [`DTag::pack`] gives the traced 64-bit word. The `row` field is `X = clog2(R)`
/// bits wide ([`crate::hw::controller::index_bits`] of the array's rows: 2 for the 4 x 4 array, whose layout this
/// is):
///
/// | bits (4 x 4) | bits (any `R`)          | field   | meaning                   |
/// |--------------|-------------------------|---------|---------------------------|
/// | 0            | 0                       | `valid` | the row holds a result    |
/// | 2:1          | `1 .. 1 + X`            | `row`   | row of the tile (0..R)    |
/// | 3            | `1 + X`                 | `last`  | the run's last row        |
/// | 31:8         | 24 bits from `max(8, 2 + X)` | `tile` | output tile of the row |
///
/// Other bits are zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DTag {
    /// The row holds a result.
    pub valid: bool,
    /// Row of the tile.
    pub row: usize,
    /// The run's last row.
    pub last: bool,
    /// Output tile of the row.
    pub tile: usize,
}

const TAG_VALID: u64 = 1;
const TAG_ROW_SHIFT: u32 = 1;
const TAG_TILE_MASK: u64 = 0xFF_FFFF;

impl DTag {
    /// The first bit of the `tile` field for a `row_bits`-bit row field.
    const fn tile_at(row_bits: u32) -> u32 {
        if 2 + row_bits > 8 {
            2 + row_bits
        } else {
            8
        }
    }

    /// The traced tag word, its `row` field `row_bits` wide (see the type's documentation).
    #[inline]
    pub const fn pack(self, row_bits: u32) -> u64 {
        let row_mask = (1u64 << row_bits) - 1;
        (if self.valid { TAG_VALID } else { 0 })
            | ((self.row as u64 & row_mask) << TAG_ROW_SHIFT)
            | ((self.last as u64) << (1 + row_bits))
            | ((self.tile as u64 & TAG_TILE_MASK) << Self::tile_at(row_bits))
    }

    /// The tag of a word written by [`DTag::pack`] with the same `row_bits`.
    #[inline]
    pub const fn unpack(w: u64, row_bits: u32) -> DTag {
        let row_mask = (1u64 << row_bits) - 1;
        DTag {
            valid: w & TAG_VALID != 0,
            row: ((w >> TAG_ROW_SHIFT) & row_mask) as usize,
            last: (w >> (1 + row_bits)) & 1 != 0,
            tile: ((w >> Self::tile_at(row_bits)) & TAG_TILE_MASK) as usize,
        }
    }
}

/// The row of D in the output register: its tag word `tag` (row field `row_bits` wide) and
/// the output registers' words `words`.
#[inline]
pub(crate) fn d_row_of(tag: u64, row_bits: u32, words: &[u32]) -> Option<DRow<'_>> {
    let tag = DTag::unpack(tag, row_bits);
    tag.valid.then_some(DRow {
        tile: tag.tile,
        row: tag.row,
        values: words,
    })
}
