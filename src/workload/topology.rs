//! SCALE-Sim's topology files, as SCALE-Sim v2 ships them (scalesim-project/scale-sim-v2,
//! its `topologies/` folder), and the lowering of each layer to one GEMM as SCALE-Sim
//! assumes it.
//!
//! Two formats, told apart by the header row:
//! - convolution: `Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width,
//!   Channels, Num Filter, Strides,` (eight columns);
//! - GEMM: `Layer, M, N, K,` (four columns).
//!
//! Fields are trimmed; a trailing comma on any row and blank lines are tolerated. The IFMAP
//! sizes are taken as already padded (SCALE-Sim adds no padding), so a convolution layer
//! lowers to `M = ofmap_h * ofmap_w`, `N = num_filters`, `K = filt_h * filt_w * channels`
//! with `ofmap = ceil((ifmap - filt) / stride) + 1` in each dimension (SCALE-Sim's rounding:
//! a last window that runs past the IFMAP's edge still counts).

use std::fmt;

/// Which of SCALE-Sim's two topology formats a file is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyFormat {
    /// Convolution layers (`Layer name, IFMAP Height, ...`).
    Conv,
    /// GEMM layers (`Layer, M, N, K`).
    Gemm,
}

impl TopologyFormat {
    /// `conv` or `gemm`.
    pub fn name(self) -> &'static str {
        match self {
            TopologyFormat::Conv => "conv",
            TopologyFormat::Gemm => "gemm",
        }
    }
}

/// One convolution layer of a SCALE-Sim convolution topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvLayer {
    /// IFMAP height (already padded).
    pub ifmap_h: usize,
    /// IFMAP width (already padded).
    pub ifmap_w: usize,
    /// Filter height.
    pub filt_h: usize,
    /// Filter width.
    pub filt_w: usize,
    /// Input channels.
    pub channels: usize,
    /// Filters (output channels).
    pub num_filters: usize,
    /// Stride, the same in both dimensions.
    pub stride: usize,
}

impl ConvLayer {
    /// The output feature map's `(height, width)`: `ceil((ifmap - filt + stride) / stride)`
    /// each, with no padding, as SCALE-Sim computes it (a last window that runs past the
    /// IFMAP still counts), i.e. `ceil((ifmap - filt) / stride) + 1`.
    pub fn ofmap(&self) -> (usize, usize) {
        (
            (self.ifmap_h - self.filt_h).div_ceil(self.stride) + 1,
            (self.ifmap_w - self.filt_w).div_ceil(self.stride) + 1,
        )
    }

    /// The GEMM the layer lowers to, `(M, N, K)`: M output pixels, N filters, K the products
    /// of one output value (`filt_h * filt_w * channels`).
    pub fn gemm(&self) -> (usize, usize, usize) {
        let (oh, ow) = self.ofmap();
        (
            oh * ow,
            self.num_filters,
            self.filt_h * self.filt_w * self.channels,
        )
    }
}

/// What a layer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    /// A convolution, lowered to a GEMM ([`ConvLayer::gemm`]).
    Conv(ConvLayer),
    /// A GEMM, `M x K` times `K x N`.
    Gemm {
        /// Rows of A and D.
        m: usize,
        /// Columns of B and D.
        n: usize,
        /// The inner dimension.
        k: usize,
    },
}

/// One row of a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// The layer's name (its first column, trimmed).
    pub name: String,
    /// Its shape.
    pub kind: LayerKind,
}

impl Layer {
    /// The GEMM the layer runs as, `(M, N, K)`.
    pub fn gemm(&self) -> (usize, usize, usize) {
        match self.kind {
            LayerKind::Conv(c) => c.gemm(),
            LayerKind::Gemm { m, n, k } => (m, n, k),
        }
    }
}

/// A parsed topology: its format and its layers in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// The format the header named.
    pub format: TopologyFormat,
    /// The layers, in the file's order.
    pub layers: Vec<Layer>,
}

/// Why a topology was refused: one line naming the line of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyError(pub String);

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TopologyError {}

/// The header of the convolution format, as SCALE-Sim writes it.
pub const CONV_HEADER: [&str; 8] = [
    "Layer name",
    "IFMAP Height",
    "IFMAP Width",
    "Filter Height",
    "Filter Width",
    "Channels",
    "Num Filter",
    "Strides",
];

/// The header of the GEMM format, as SCALE-Sim writes it.
pub const GEMM_HEADER: [&str; 4] = ["Layer", "M", "N", "K"];

/// A row's fields, trimmed, without the empty field a trailing comma leaves.
fn fields(line: &str) -> Vec<&str> {
    let mut f: Vec<&str> = line.split(',').map(str::trim).collect();
    if f.len() > 1 && f.last() == Some(&"") {
        f.pop();
    }
    f
}

/// Lower case with every space removed (`Num Filter` and `num_filter` aside, headers differ
/// only in case and spacing).
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The format a header row names, or `None`.
fn detect(header: &[&str]) -> Option<TopologyFormat> {
    let same = |want: &[&str]| {
        header.len() == want.len() && header.iter().zip(want).all(|(h, w)| squash(h) == squash(w))
    };
    if same(&CONV_HEADER) {
        Some(TopologyFormat::Conv)
    } else if same(&GEMM_HEADER) {
        Some(TopologyFormat::Gemm)
    } else {
        None
    }
}

/// Parses a topology file's text (see the module documentation).
pub fn parse(text: &str) -> Result<Topology, TopologyError> {
    let err = |line: usize, msg: String| TopologyError(format!("line {line}: {msg}"));
    let mut rows = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_start_matches('\u{feff}')))
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((hline, header)) = rows.next() else {
        return Err(TopologyError("empty topology: no header row".into()));
    };
    let header = fields(header);
    let format = detect(&header).ok_or_else(|| {
        err(
            hline,
            format!(
                "unknown header {:?}: expected SCALE-Sim's convolution header ({}) or GEMM header ({})",
                header.join(", "),
                CONV_HEADER.join(", "),
                GEMM_HEADER.join(", ")
            ),
        )
    })?;
    let names: &[&str] = match format {
        TopologyFormat::Conv => &CONV_HEADER,
        TopologyFormat::Gemm => &GEMM_HEADER,
    };
    let mut layers = Vec::new();
    for (line, row) in rows {
        let f = fields(row);
        if f.len() != names.len() {
            return Err(err(
                line,
                format!(
                    "{} columns, the {} format has {} ({})",
                    f.len(),
                    format.name(),
                    names.len(),
                    names.join(", ")
                ),
            ));
        }
        let name = f[0].to_string();
        if name.is_empty() {
            return Err(err(line, "empty layer name".into()));
        }
        let mut v = Vec::with_capacity(f.len() - 1);
        for (field, column) in f[1..].iter().zip(&names[1..]) {
            let x: usize = field.parse().map_err(|_| {
                err(
                    line,
                    format!("layer {name}: {column} {field:?} is not a whole number"),
                )
            })?;
            if x == 0 {
                return Err(err(line, format!("layer {name}: {column} is 0")));
            }
            v.push(x);
        }
        let kind = match format {
            TopologyFormat::Conv => {
                let c = ConvLayer {
                    ifmap_h: v[0],
                    ifmap_w: v[1],
                    filt_h: v[2],
                    filt_w: v[3],
                    channels: v[4],
                    num_filters: v[5],
                    stride: v[6],
                };
                if c.filt_h > c.ifmap_h || c.filt_w > c.ifmap_w {
                    return Err(err(
                        line,
                        format!(
                            "layer {name}: the {} x {} filter is larger than the {} x {} IFMAP",
                            c.filt_h, c.filt_w, c.ifmap_h, c.ifmap_w
                        ),
                    ));
                }
                LayerKind::Conv(c)
            }
            TopologyFormat::Gemm => LayerKind::Gemm {
                m: v[0],
                n: v[1],
                k: v[2],
            },
        };
        layers.push(Layer { name, kind });
    }
    if layers.is_empty() {
        return Err(err(hline, "the topology has a header but no layers".into()));
    }
    Ok(Topology { format, layers })
}
