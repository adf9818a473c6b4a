//! A small reader and writer for NumPy `.npy` files (format versions 1.0 to 3.0), enough for
//! matrices of the dtypes the tensor core takes: `u1`, `u2`, `u4`, `i1`, `i2`, `i4`, `i8`, `f2`, `f4`, `f8`, either
//! byte order, C or Fortran order (Fortran-ordered arrays are returned in C order). The header
//! is read and checked first (element count, file size); the payload is then read in blocks
//! straight into a vector of the element's width ([`NpyData`]), so a file costs about its
//! payload in memory (`benches/npy_read.rs` measures it).
//!
//! Why not the `npyz` crate (the hardening review of docs/reliability.md asked to move to it unless
//! a measurement said otherwise): npyz 0.9.1 panics on a 40-byte header whose shape product
//! overflows `u64` (`'shape': (4294967296, 4294967296, 16)`: `attempt to multiply with overflow` in
//! its `shape.iter().product()`; a release build wraps to a wrong element count instead), and it
//! pulls in a Python-literal parser (`py_literal`, `pest`, `stacker`). This reader checks every
//! size with checked arithmetic against the bytes present before allocating, and is fuzzed
//! (`tests/cli/fuzz_front_door.rs`).

use super::atomic::AtomicFile;
use std::io::Write;
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";

/// Errors reading or writing `.npy` files.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is not a well-formed `.npy` file.
    #[error("{path}: not a valid .npy file: {why}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// The dtype is not one the tensor core takes.
    #[error("{path}: unsupported dtype '{descr}' (expected uint8, uint16, uint32, int8, int16, int32, int64, float16, float32 or float64)")]
    Dtype {
        /// The file.
        path: String,
        /// The dtype descriptor found.
        descr: String,
    },
}

/// The element type of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// `uint8`
    U8,
    /// `uint16`
    U16,
    /// `uint32`
    U32,
    /// `int8` (kept as two's-complement bit patterns)
    I8,
    /// `int16` (kept as two's-complement bit patterns)
    I16,
    /// `int32` (kept as two's-complement bit patterns)
    I32,
    /// `int64` (kept as two's-complement bit patterns)
    I64,
    /// `float16` (kept as bit patterns)
    F16,
    /// `float32`
    F32,
    /// `float64`
    F64,
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::I16 | Dtype::F16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::F64 => 8,
        }
    }

    /// NumPy's name for the type.
    pub fn numpy_name(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8",
            Dtype::U16 => "uint16",
            Dtype::U32 => "uint32",
            Dtype::I8 => "int8",
            Dtype::I16 => "int16",
            Dtype::I32 => "int32",
            Dtype::I64 => "int64",
            Dtype::F16 => "float16",
            Dtype::F32 => "float32",
            Dtype::F64 => "float64",
        }
    }
}

/// The elements of an array in the width of their dtype, C order: unsigned integers as
/// their value, signed integers and floats as their bit patterns (int8 `-1` is `0xFF`).
#[derive(Clone, Debug, PartialEq)]
pub enum NpyData {
    /// `uint8`, `int8`.
    U8(Vec<u8>),
    /// `uint16`, `int16`, `float16`.
    U16(Vec<u16>),
    /// `uint32`, `int32`, `float32`.
    U32(Vec<u32>),
    /// `int64`, `float64`.
    U64(Vec<u64>),
}

/// An array read from a `.npy` file: its payload read straight into the element type
/// ([`NpyData`], no wider intermediate), so an array costs its payload in memory (twice while
/// a Fortran-ordered one is reordered).
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    /// The dimensions.
    pub shape: Vec<usize>,
    /// The element type in the file.
    pub dtype: Dtype,
    /// The elements, row-major.
    pub data: NpyData,
}

impl NpyArray {
    /// How many elements the array holds.
    pub fn len(&self) -> usize {
        match &self.data {
            NpyData::U8(v) => v.len(),
            NpyData::U16(v) => v.len(),
            NpyData::U32(v) => v.len(),
            NpyData::U64(v) => v.len(),
        }
    }

    /// Whether the array holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`'s raw word, zero-extended to 64 bits (the value of an unsigned integer,
    /// the bit pattern of a signed integer or a float). Panics past the end, as indexing does.
    pub fn word(&self, i: usize) -> u64 {
        match &self.data {
            NpyData::U8(v) => u64::from(v[i]),
            NpyData::U16(v) => u64::from(v[i]),
            NpyData::U32(v) => u64::from(v[i]),
            NpyData::U64(v) => v[i],
        }
    }

    /// The elements' raw words (see [`NpyArray::word`]), row-major, one at a time.
    pub fn iter_words(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.word(i))
    }

    /// Every element's raw word (see [`NpyArray::word`]), row-major: a new 64-bit vector for
    /// the layers that compute on words.
    pub fn words(&self) -> Vec<u64> {
        match &self.data {
            NpyData::U8(v) => v.iter().map(|&w| u64::from(w)).collect(),
            NpyData::U16(v) => v.iter().map(|&w| u64::from(w)).collect(),
            NpyData::U32(v) => v.iter().map(|&w| u64::from(w)).collect(),
            NpyData::U64(v) => v.clone(),
        }
    }

    /// Element `i` as a signed integer, for the integer dtypes (`None` for a float).
    pub fn value_i64(&self, i: usize) -> Option<i64> {
        let w = self.word(i);
        match self.dtype {
            Dtype::U8 | Dtype::U16 | Dtype::U32 => Some(w as i64),
            Dtype::I8 => Some(i64::from(w as u8 as i8)),
            Dtype::I16 => Some(i64::from(w as u16 as i16)),
            Dtype::I32 => Some(i64::from(w as u32 as i32)),
            Dtype::I64 => Some(w as i64),
            Dtype::F16 | Dtype::F32 | Dtype::F64 => None,
        }
    }

    /// Element `i` as an f64 value (floats decoded, integers converted); exact for every
    /// supported dtype but int64 values beyond 2^53 in magnitude (rounded).
    pub fn value_f64(&self, i: usize) -> f64 {
        let w = self.word(i);
        match self.dtype {
            Dtype::U8 | Dtype::U16 | Dtype::U32 => w as f64,
            Dtype::I8 => f64::from(w as u8 as i8),
            Dtype::I16 => f64::from(w as u16 as i16),
            Dtype::I32 => f64::from(w as u32 as i32),
            Dtype::I64 => w as i64 as f64,
            Dtype::F16 => half::f16::from_bits(w as u16).to_f64(),
            Dtype::F32 => f32::from_bits(w as u32) as f64,
            Dtype::F64 => f64::from_bits(w),
        }
    }
}

fn format_err(path: &Path, why: impl Into<String>) -> NpyError {
    NpyError::Format {
        path: path.display().to_string(),
        why: why.into(),
    }
}

/// The largest `.npy` file read: 2^28 elements (the most a GEMM operand may hold) of 8 bytes,
/// plus room for the header. Larger files are refused before they are read.
pub const MAX_FILE_BYTES: u64 = (1 << 28) * 8 + (1 << 20);

/// The most elements a `.npy` array may declare (2^28, the most a GEMM operand may hold):
/// checked from the header, before the payload is read or any room is made for it.
pub const MAX_ELEMENTS: usize = 1 << 28;

/// The most axes a shape may have (NumPy's own limit, `NPY_MAXDIMS`).
pub const MAX_AXES: usize = 64;

/// The longest header read (NumPy's own default `max_header_size`, 10000 bytes).
pub const MAX_HEADER_BYTES: usize = 10_000;

/// What the header says about the payload.
struct Layout {
    shape: Vec<usize>,
    dtype: Dtype,
    big_endian: bool,
    fortran: bool,
    /// Where the payload starts.
    data_start: usize,
    /// The payload's size in bytes.
    data_bytes: usize,
}

/// The first bytes of a file up to and including its header: the header's length from the
/// preamble (`prefix` holds at least its first 12 bytes, or the whole file if shorter).
fn header_end(prefix: &[u8], path: &Path) -> Result<(usize, usize), NpyError> {
    if prefix.len() < 10 || &prefix[..6] != MAGIC {
        return Err(format_err(path, "missing \\x93NUMPY magic"));
    }
    let (header_len, header_start) = match prefix[6] {
        1 => (u16::from_le_bytes([prefix[8], prefix[9]]) as usize, 10),
        2 | 3 => {
            if prefix.len() < 12 {
                return Err(format_err(path, "truncated header"));
            }
            (
                u32::from_le_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]) as usize,
                12,
            )
        }
        v => return Err(format_err(path, format!("unknown format version {v}"))),
    };
    if header_len > MAX_HEADER_BYTES {
        return Err(format_err(
            path,
            format!("a {header_len}-byte header (at most {MAX_HEADER_BYTES}, as NumPy reads)"),
        ));
    }
    Ok((header_start, header_start + header_len))
}

/// The layout from the header text (`header_start..data_start` of the file).
fn layout(header: &[u8], data_start: usize, path: &Path) -> Result<Layout, NpyError> {
    let h = super::npy_header::parse_header(header)
        .map_err(|why| format_err(path, format!("bad header: {why}")))?;
    let descr = h.descr.as_str();
    let (big_endian, code) = match descr.as_bytes().first() {
        Some(b'<') | Some(b'|') | Some(b'=') => (false, &descr[1..]),
        Some(b'>') => (true, &descr[1..]),
        _ => (false, descr),
    };
    let dtype = match code {
        "u1" => Dtype::U8,
        "u2" => Dtype::U16,
        "u4" => Dtype::U32,
        "i1" => Dtype::I8,
        "i2" => Dtype::I16,
        "i4" => Dtype::I32,
        "i8" => Dtype::I64,
        "f2" => Dtype::F16,
        "f4" => Dtype::F32,
        "f8" => Dtype::F64,
        _ => {
            return Err(NpyError::Dtype {
                path: path.display().to_string(),
                descr: short(descr),
            })
        }
    };
    if h.shape.len() > MAX_AXES {
        return Err(format_err(
            path,
            format!(
                "a shape of {} axes (NumPy allows at most {MAX_AXES})",
                h.shape.len()
            ),
        ));
    }
    let count = h
        .shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| format_err(path, "shape too large"))?;
    if count > MAX_ELEMENTS {
        return Err(format_err(
            path,
            format!(
                "shape {} holds {count} elements, more than the limit of {MAX_ELEMENTS} (2^28)",
                shape_text(&h.shape)
            ),
        ));
    }
    Ok(Layout {
        data_bytes: count * dtype.size(),
        shape: h.shape,
        dtype,
        big_endian,
        fortran: h.fortran_order,
        data_start,
    })
}

/// Header text for an error message: escaped, cut to 40 characters.
fn short(text: &str) -> String {
    let escaped = text.escape_debug().to_string();
    match escaped.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &escaped[..i]),
        None => escaped,
    }
}

/// A shape for an error message, shortened past 8 axes (so a message stays one short line).
pub fn shape_text(shape: &[usize]) -> String {
    let shown: Vec<String> = shape.iter().take(8).map(usize::to_string).collect();
    let more = if shape.len() > 8 {
        format!(", ... ({} axes)", shape.len())
    } else {
        String::new()
    };
    format!("({}{more})", shown.join(", "))
}

/// An element vector being filled from payload bytes, in the element's own width.
struct Filler {
    data: NpyData,
    size: usize,
    big_endian: bool,
}

impl Filler {
    /// Room for exactly `count` elements of `l`'s dtype.
    fn new(l: &Layout, count: usize) -> Filler {
        let size = l.dtype.size();
        let data = match size {
            1 => NpyData::U8(Vec::with_capacity(count)),
            2 => NpyData::U16(Vec::with_capacity(count)),
            4 => NpyData::U32(Vec::with_capacity(count)),
            _ => NpyData::U64(Vec::with_capacity(count)),
        };
        Filler {
            data,
            size,
            big_endian: l.big_endian,
        }
    }

    /// Appends the elements of `bytes` (a whole number of elements).
    fn push(&mut self, bytes: &[u8]) {
        let big = self.big_endian;
        let chunks = bytes.chunks_exact(self.size);
        match &mut self.data {
            NpyData::U8(v) => v.extend_from_slice(bytes),
            NpyData::U16(v) => v.extend(chunks.map(|c| {
                let b = [c[0], c[1]];
                if big {
                    u16::from_be_bytes(b)
                } else {
                    u16::from_le_bytes(b)
                }
            })),
            NpyData::U32(v) => v.extend(chunks.map(|c| {
                let b = [c[0], c[1], c[2], c[3]];
                if big {
                    u32::from_be_bytes(b)
                } else {
                    u32::from_le_bytes(b)
                }
            })),
            NpyData::U64(v) => v.extend(chunks.map(|c| {
                let b = [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]];
                if big {
                    u64::from_be_bytes(b)
                } else {
                    u64::from_le_bytes(b)
                }
            })),
        }
    }

    /// The array, reordered into C order if the file holds it in Fortran order.
    fn finish(self, l: Layout) -> NpyArray {
        let mut data = self.data;
        if l.fortran && l.shape.len() > 1 {
            data = match data {
                NpyData::U8(v) => NpyData::U8(fortran_to_c(&v, &l.shape)),
                NpyData::U16(v) => NpyData::U16(fortran_to_c(&v, &l.shape)),
                NpyData::U32(v) => NpyData::U32(fortran_to_c(&v, &l.shape)),
                NpyData::U64(v) => NpyData::U64(fortran_to_c(&v, &l.shape)),
            };
        }
        NpyArray {
            shape: l.shape,
            dtype: l.dtype,
            data,
        }
    }
}

/// The array from its payload (exactly `l.data_bytes` bytes).
fn decode(l: Layout, payload: &[u8]) -> NpyArray {
    let mut f = Filler::new(&l, l.data_bytes / l.dtype.size());
    f.push(payload);
    f.finish(l)
}

fn payload_err(path: &Path, l: &Layout, found: impl std::fmt::Display) -> NpyError {
    format_err(
        path,
        format!(
            "expected {} data bytes for shape {}, found {found}",
            l.data_bytes,
            shape_text(&l.shape)
        ),
    )
}

/// Opens a `.npy` file and reads its header: the file positioned after the bytes read, those
/// bytes, where the payload starts and the layout, once the header's element count and a
/// regular file's size agree.
fn read_head(path: &Path) -> Result<(std::fs::File, Vec<u8>, usize, Layout), NpyError> {
    use std::io::Read;
    let io_err = |source| NpyError::Io {
        path: path.display().to_string(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io_err)?;
    let len = meta.len();
    if len > MAX_FILE_BYTES {
        return Err(format_err(
            path,
            format!("{len} bytes is more than the {MAX_FILE_BYTES} a matrix may take"),
        ));
    }
    let mut file = std::fs::File::open(path).map_err(io_err)?;
    let mut head = Vec::new();
    (&mut file)
        .take(12)
        .read_to_end(&mut head)
        .map_err(io_err)?;
    let (header_start, data_start) = header_end(&head, path)?;
    let more = (data_start - head.len().min(data_start)) as u64;
    (&mut file)
        .take(more)
        .read_to_end(&mut head)
        .map_err(io_err)?;
    if head.len() < data_start {
        return Err(format_err(path, "truncated header"));
    }
    let l = layout(&head[header_start..data_start], data_start, path)?;
    // A regular file's size is known: it must be the header plus the payload exactly.
    if meta.is_file() && len != (data_start + l.data_bytes) as u64 {
        let found = len.saturating_sub(data_start as u64);
        return Err(payload_err(path, &l, found));
    }
    Ok((file, head, data_start, l))
}

/// The shape and dtype of a `.npy` file from its header alone (checked as [`read_npy`]
/// checks it), so a command can refuse mismatched operands before reading any payload.
pub fn read_npy_shape(path: &Path) -> Result<(Vec<usize>, Dtype), NpyError> {
    let (_, _, _, l) = read_head(path)?;
    Ok((l.shape, l.dtype))
}

/// Reads a `.npy` file (at most [`MAX_FILE_BYTES`], [`MAX_ELEMENTS`] elements): the header
/// first, then the payload, only once the header's element count and the file's size agree.
pub fn read_npy(path: &Path) -> Result<NpyArray, NpyError> {
    use std::io::Read;
    let io_err = |source| NpyError::Io {
        path: path.display().to_string(),
        source,
    };
    let (mut file, mut head, data_start, l) = read_head(path)?;
    // The payload is read in blocks straight into the element vector (no byte copy of the
    // whole payload). Bytes of the 12-byte preamble read past a very short version 1 header
    // already belong to the payload.
    const BLOCK: usize = 1 << 16;
    let size = l.dtype.size();
    let mut filler = Filler::new(&l, l.data_bytes / size);
    let mut pending = head.split_off(data_start);
    let mut got = pending.len();
    let mut block = vec![0u8; BLOCK];
    loop {
        let whole = pending.len() - pending.len() % size;
        if whole > 0 && got <= l.data_bytes {
            filler.push(&pending[..whole]);
            pending.drain(..whole);
        }
        if got > l.data_bytes {
            return Err(payload_err(path, &l, "more"));
        }
        // One byte past the payload is asked for, to find a file longer than its header says.
        let want = (l.data_bytes + 1 - got).min(BLOCK);
        let n = loop {
            match file.read(&mut block[..want]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => break r.map_err(io_err)?,
            }
        };
        if n == 0 {
            break;
        }
        got += n;
        pending.extend_from_slice(&block[..n]);
    }
    if got != l.data_bytes {
        return Err(payload_err(path, &l, got));
    }
    Ok(filler.finish(l))
}

/// Parses the bytes of a `.npy` file (`path` only names it in errors).
pub fn parse_npy(bytes: &[u8], path: &Path) -> Result<NpyArray, NpyError> {
    let (header_start, data_start) = header_end(&bytes[..bytes.len().min(12)], path)?;
    if bytes.len() < data_start {
        return Err(format_err(path, "truncated header"));
    }
    let l = layout(&bytes[header_start..data_start], data_start, path)?;
    let payload = &bytes[l.data_start..];
    if payload.len() != l.data_bytes {
        return Err(payload_err(path, &l, payload.len()));
    }
    Ok(decode(l, payload))
}

/// Reorders a column-major (Fortran) buffer into row-major order.
fn fortran_to_c<T: Copy + Default>(words: &[T], shape: &[usize]) -> Vec<T> {
    let n = words.len();
    let mut out = vec![T::default(); n];
    let mut idx = vec![0usize; shape.len()];
    for slot in out.iter_mut() {
        // idx is the C-order multi-index of `slot`; find its Fortran offset.
        let mut off = 0usize;
        let mut stride = 1usize;
        for (d, &i) in idx.iter().enumerate() {
            off += i * stride;
            stride *= shape[d];
        }
        *slot = words[off];
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// Writes a C-order array of raw words as a version 1.0 `.npy` file of `dtype`, atomically.
pub fn write_npy(
    path: &Path,
    shape: &[usize],
    dtype: Dtype,
    words: &[u64],
) -> Result<(), NpyError> {
    let io_err = |source| NpyError::Io {
        path: path.display().to_string(),
        source,
    };
    let buf = npy_bytes(shape, dtype, words);
    let mut f = AtomicFile::create(path).map_err(io_err)?;
    f.write_all(&buf).map_err(io_err)?;
    f.commit().map_err(io_err)
}

/// The bytes of a version 1.0 `.npy` file holding a C-order array of raw words of `dtype`
/// (what [`write_npy`] writes).
pub fn npy_bytes(shape: &[usize], dtype: Dtype, words: &[u64]) -> Vec<u8> {
    let descr = match dtype {
        Dtype::U8 => "|u1",
        Dtype::U16 => "<u2",
        Dtype::U32 => "<u4",
        Dtype::I8 => "|i1",
        Dtype::I16 => "<i2",
        Dtype::I32 => "<i4",
        Dtype::I64 => "<i8",
        Dtype::F16 => "<f2",
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
    };
    let shape_text = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    // Pad so that the data starts on a 64-byte boundary, header ending in '\n'.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut buf = Vec::with_capacity(10 + header.len() + words.len() * dtype.size());
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&[1, 0]);
    buf.extend_from_slice(&(header.len() as u16).to_le_bytes());
    buf.extend_from_slice(header.as_bytes());
    for w in words {
        buf.extend_from_slice(&w.to_le_bytes()[..dtype.size()]);
    }
    buf
}
