//! What travels beside the operands at the array's edge, one type per kind of operand supply.
//!
//! A dense supply offers A and B only; a 2:4 sparse supply adds, beside each A row, the
//! selects of its kept lanes; a block-scaled (MX) supply adds the block scale of each A row
//! and of each B column. Rather than flags on the feeder, the port and the step, each kind is
//! a type implementing [`EdgeExtras`]:
//!
//! | extras             | supply     | beside A           | beside B      | mesh                |
//! |--------------------|------------|--------------------|---------------|---------------------|
//! | `()`               | dense      | -                  | -             | [`DenseMesh`]       |
//! | [`SparseSelects`]  | 2:4 sparse | selects (`meta`)   | -             | `PeArray<Sparse>`   |
//! | [`BlockScales`]    | MX         | A's block scale    | B's scale     | `PeArray<MxPath>`   |
//!
//! The type fixes, when the core is built, what it checks in the configuration, which PE
//! datapath the mesh gets, and the skew stage ([`SideStage`]) that carries the extras from
//! the edge to the mesh with the same per-lane depths as A (rows) and B (columns), so they
//! reach every PE in the same cycle as their operands: `meta_skew` for the selects,
//! `xa_skew`/`xb_skew` (and NVFP4's two tensor-scale registers `a_tscale`, `b_tscale`) for
//! the scales, nothing for a dense core. One generic parameter (the port's extras) carries it
//! all, so nothing is tested per cycle.

use super::config::{CoreConfig, MxSpec};
use super::core::{check_config, check_mx_config};
use super::mesh::{DenseMesh, Mesh, PeArray};
use super::pe::{fp, sparse_b_lanes, MxPath, Sparse};
use super::skew::Skew;
use super::HwError;
use crate::numerics::format::Format;
use crate::rtl::{Display, Reg, Result as RtlResult, Value, Visitor};

/// What one kind of operand supply sends beside the operands of a step (see the module
/// documentation). A value is one step's extras, sized for the array when the core is built
/// ([`EdgeExtras::sized`]) and refilled by the port every step taken.
pub trait EdgeExtras<const W: usize>: Clone + std::fmt::Debug + PartialEq + 'static {
    /// What the core is built for besides its [`CoreConfig`] (`()`, or the [`MxSpec`]).
    type Spec: Copy + std::fmt::Debug;
    /// The PE array these extras feed.
    type Mesh: Mesh<W>;
    /// The skew stage carrying the extras to the mesh's edges.
    type Stage: SideStage<
        Self,
        A = <Self::Mesh as Mesh<W>>::SideA,
        B = <Self::Mesh as Mesh<W>>::SideB,
    >;

    /// One step's extras for an array of `rows x cols` PEs, all zero.
    fn sized(rows: usize, cols: usize) -> Self;

    /// Checks that a core built for `cfg` and `spec` can take a problem of inner dimension
    /// `k` (in the supply's steps' units); returns the block size the schedule's `fire` bit
    /// marks (0 if none).
    fn check(cfg: &CoreConfig, spec: &Self::Spec, k: usize) -> Result<usize, HwError>;

    /// How the waves show an operand bus of format `fmt`.
    fn lane_display(cfg: &CoreConfig, _spec: &Self::Spec, fmt: Format) -> Display {
        cfg.operand_display(fmt)
    }

    /// The mesh of a core built for `cfg` and `spec`.
    fn mesh(cfg: &CoreConfig, spec: &Self::Spec) -> Result<Self::Mesh, HwError>;

    /// The skew stage, its row lanes `row_depth` deep (as A's) and its column lanes
    /// `col_depth` deep (as B's).
    fn stage(
        cfg: &CoreConfig,
        spec: &Self::Spec,
        row_depth: &[usize],
        col_depth: &[usize],
    ) -> RtlResult<Self::Stage>;
}

/// The skew stage of extras `X`: what enters it this cycle, what leaves it at the mesh's
/// edges, and its registers.
pub trait SideStage<X> {
    /// What leaves each row lane (the mesh's side value beside A).
    type A: Copy;
    /// What leaves each column lane (the mesh's side value beside B).
    type B: Copy;
    /// Settles this cycle's input (`x` if a step is `taken`, else a bubble) and the outputs
    /// at the edges, from register outputs and the input only (no register changes).
    fn settle(&mut self, taken: bool, x: &X);
    /// The row lanes' outputs settled by [`SideStage::settle`].
    fn edge_a(&self) -> &[Self::A];
    /// The column lanes' outputs settled by [`SideStage::settle`].
    fn edge_b(&self) -> &[Self::B];
    /// The combinational update: the registers take the settled input.
    fn shift_in(&mut self);
    /// The stage's blocks and registers, in the tensor core's scope.
    fn visit<V: Visitor>(&mut self, v: &mut V);
}

/// A skew of one side value per lane (with a `taken` tag bit), and its settled input and
/// outputs.
pub struct SideSkew<T: Value> {
    skew: Skew<T, bool>,
    out: Vec<(T, bool)>,
    edge: Vec<T>,
}

impl<T: Value> SideSkew<T> {
    /// A skew named `name` with lanes `depth` deep, `width`-bit values shown as `display`.
    pub fn new(
        name: &'static str,
        depth: &[usize],
        width: u32,
        display: Display,
    ) -> RtlResult<Self> {
        let lanes = depth.len();
        Ok(Self {
            skew: Skew::new(name, depth, width, 1)?.with_display(display, Display::Hex),
            out: vec![(T::default(), false); lanes],
            edge: vec![T::default(); lanes],
        })
    }

    /// Settles the input (`values` if `taken`, else zeros) and the outputs.
    #[inline]
    pub fn settle(&mut self, taken: bool, values: &[T]) {
        let lanes = self.out.len();
        let input = &mut self.skew.inputs()[..lanes];
        if taken {
            let values = &values[..lanes];
            for j in 0..lanes {
                input[j] = (values[j], true);
            }
        } else {
            input.fill((T::default(), false));
        }
        self.skew.out(&mut self.out);
        let (edge, out) = (&mut self.edge[..lanes], &self.out[..lanes]);
        for j in 0..lanes {
            edge[j] = out[j].0;
        }
    }

    /// The settled outputs.
    #[inline]
    pub fn edge(&self) -> &[T] {
        &self.edge
    }

    /// The registers take the settled input.
    #[inline]
    pub fn shift_in(&mut self) {
        self.skew.shift_in();
    }

    /// The skew as a child block.
    pub fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.child(&mut self.skew);
    }
}

/// The stage of a dense core: nothing travels beside the operands.
pub struct NoSides {
    rows: Vec<()>,
    cols: Vec<()>,
}

impl SideStage<()> for NoSides {
    type A = ();
    type B = ();
    #[inline]
    fn settle(&mut self, _taken: bool, _x: &()) {}
    #[inline]
    fn edge_a(&self) -> &[()] {
        &self.rows
    }
    #[inline]
    fn edge_b(&self) -> &[()] {
        &self.cols
    }
    #[inline]
    fn shift_in(&mut self) {}
    fn visit<V: Visitor>(&mut self, _v: &mut V) {}
}

/// A dense supply: A and B only.
impl<const W: usize> EdgeExtras<W> for () {
    type Spec = ();
    type Mesh = DenseMesh<W>;
    type Stage = NoSides;

    fn sized(_rows: usize, _cols: usize) -> Self {}

    fn check(cfg: &CoreConfig, _spec: &(), _k: usize) -> Result<usize, HwError> {
        check_config::<W>(cfg)?;
        Ok(cfg.block())
    }

    fn mesh(cfg: &CoreConfig, _spec: &()) -> Result<DenseMesh<W>, HwError> {
        DenseMesh::build(cfg)
    }

    fn stage(
        _cfg: &CoreConfig,
        _spec: &(),
        row_depth: &[usize],
        col_depth: &[usize],
    ) -> RtlResult<NoSides> {
        Ok(NoSides {
            rows: vec![(); row_depth.len()],
            cols: vec![(); col_depth.len()],
        })
    }
}

/// A 2:4 sparse step's selects beside A: per mesh row, the 2-bit index (within its group of
/// four) of each kept lane, lane `t` at bits `2t..2t+2` (0 for a row past M).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseSelects {
    /// One select word per mesh row.
    pub meta: Vec<u64>,
}

/// The stage of a 2:4 sparse core: the selects' skew `meta_skew` (per row, beside A).
pub struct MetaStage {
    meta: SideSkew<u64>,
    cols: Vec<()>,
}

impl SideStage<SparseSelects> for MetaStage {
    type A = u64;
    type B = ();
    #[inline]
    fn settle(&mut self, taken: bool, x: &SparseSelects) {
        self.meta.settle(taken, &x.meta);
    }
    #[inline]
    fn edge_a(&self) -> &[u64] {
        self.meta.edge()
    }
    #[inline]
    fn edge_b(&self) -> &[()] {
        &self.cols
    }
    #[inline]
    fn shift_in(&mut self) {
        self.meta.shift_in();
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        self.meta.visit(v);
    }
}

/// A 2:4 sparse supply: the floating-point datapath behind a B-side select in every PE.
impl<const W: usize> EdgeExtras<W> for SparseSelects {
    type Spec = ();
    type Mesh = PeArray<W, Sparse<W>>;
    type Stage = MetaStage;

    fn sized(rows: usize, _cols: usize) -> Self {
        Self {
            meta: vec![0; rows],
        }
    }

    fn check(cfg: &CoreConfig, _spec: &(), _k: usize) -> Result<usize, HwError> {
        check_config::<W>(cfg)?;
        if !fp::is_fp(&cfg.mode) {
            return Err(HwError::Unsupported(format!(
                "a 2:4 sparse core in {} mode",
                cfg.mode.name()
            )));
        }
        if fp::flushes_inputs(cfg) {
            // AMD's structured sparsity came with CDNA3 (MI300); CDNA2 has none.
            return Err(HwError::Unsupported(
                "2:4 sparsity with the cdna2 rule (CDNA2 has no structured sparsity)".into(),
            ));
        }
        // The B bus carries the dense group each kept lane selects from (`sparse_b_lanes`
        // values a step), in the `64 * W` bits of one lane group.
        let b_bits = cfg.fmt_b.width() as usize * sparse_b_lanes(W);
        if b_bits > 64 * W {
            return Err(HwError::Unsupported(format!(
                "a 2:4 sparse core with {} B at w = {}: its B bus of {} values ({b_bits} \
                 bits) exceeds the {} bits of one lane group; use w >= 2 or a format of \
                 at most {} bits",
                cfg.fmt_b.name,
                W,
                sparse_b_lanes(W),
                64 * W,
                64 * W / sparse_b_lanes(W)
            )));
        }
        Ok(cfg.block())
    }

    fn mesh(cfg: &CoreConfig, _spec: &()) -> Result<Self::Mesh, HwError> {
        Ok(PeArray::new(cfg, || Sparse::new(cfg))?)
    }

    fn stage(
        _cfg: &CoreConfig,
        _spec: &(),
        row_depth: &[usize],
        col_depth: &[usize],
    ) -> RtlResult<MetaStage> {
        Ok(MetaStage {
            meta: SideSkew::new(
                "meta_skew",
                row_depth,
                2 * W as u32,
                Display::Filter("meta"),
            )?,
            cols: vec![(); col_depth.len()],
        })
    }
}

/// A block-scaled step's scale codes (E8M0, or E4M3 for NVFP4): the K-block's scale of each
/// A row and of each B column (0 outside the problem).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockScales {
    /// One scale per mesh row, beside A.
    pub a: Vec<u8>,
    /// One scale per mesh column, beside B.
    pub b: Vec<u8>,
}

/// The stage of an MX core: the scales' skews `xa_skew` (per row, beside A) and `xb_skew`
/// (per column, beside B), and NVFP4's FP32 tensor scales in two configuration registers
/// `a_tscale`, `b_tscale`, constant for the run (their product is formed once and every PE's
/// scale multiplier takes it as a static input).
pub struct ScaleStage {
    xa: SideSkew<u8>,
    xb: SideSkew<u8>,
    a_tscale: Option<Reg<u32>>,
    b_tscale: Option<Reg<u32>>,
}

impl SideStage<BlockScales> for ScaleStage {
    type A = u8;
    type B = u8;
    #[inline]
    fn settle(&mut self, taken: bool, x: &BlockScales) {
        self.xa.settle(taken, &x.a);
        self.xb.settle(taken, &x.b);
    }
    #[inline]
    fn edge_a(&self) -> &[u8] {
        self.xa.edge()
    }
    #[inline]
    fn edge_b(&self) -> &[u8] {
        self.xb.edge()
    }
    #[inline]
    fn shift_in(&mut self) {
        self.xa.shift_in();
        self.xb.shift_in();
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        self.xa.visit(v);
        self.xb.visit(v);
        if let Some(r) = self.a_tscale.as_mut() {
            v.reg(r);
        }
        if let Some(r) = self.b_tscale.as_mut() {
            v.reg(r);
        }
    }
}

/// A block-scaled supply: the MX datapath, built for the supply's [`MxSpec`].
impl<const W: usize> EdgeExtras<W> for BlockScales {
    type Spec = MxSpec;
    type Mesh = PeArray<W, MxPath>;
    type Stage = ScaleStage;

    fn sized(rows: usize, cols: usize) -> Self {
        Self {
            a: vec![0; rows],
            b: vec![0; cols],
        }
    }

    fn check(cfg: &CoreConfig, spec: &MxSpec, k: usize) -> Result<usize, HwError> {
        check_mx_config::<W>(cfg, spec, k)?;
        Ok(spec.block())
    }

    fn lane_display(cfg: &CoreConfig, spec: &MxSpec, fmt: Format) -> Display {
        if spec.int8() {
            Display::Hex
        } else {
            cfg.operand_display(fmt)
        }
    }

    fn mesh(cfg: &CoreConfig, spec: &MxSpec) -> Result<Self::Mesh, HwError> {
        Ok(PeArray::new(cfg, || MxPath::new(cfg, spec))?)
    }

    fn stage(
        _cfg: &CoreConfig,
        spec: &MxSpec,
        row_depth: &[usize],
        col_depth: &[usize],
    ) -> RtlResult<ScaleStage> {
        let scale = Display::Filter(spec.scale_format().name);
        let tensor_scale = |name: &'static str, bits: Option<u32>| -> RtlResult<_> {
            bits.map(|b| Ok(Reg::new(name, 32, b)?.with_display(Display::Real)))
                .transpose()
        };
        Ok(ScaleStage {
            xa: SideSkew::new("xa_skew", row_depth, 8, scale)?,
            xb: SideSkew::new("xb_skew", col_depth, 8, scale)?,
            a_tscale: tensor_scale("a_tscale", spec.a_tensor)?,
            b_tscale: tensor_scale("b_tscale", spec.b_tensor)?,
        })
    }
}
