//! A small reader and writer for NumPy `.npy` files (format versions 1.0 to 3.0), enough for
//! matrices of the dtypes the tensor core takes: `u1`, `u2`, `u4`, `i1`, `i4`, `f2`, `f4`, `f8`, either
//! byte order, C or Fortran order (Fortran-ordered arrays are returned in C order).
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
    #[error("{path}: unsupported dtype '{descr}' (expected uint8, uint16, uint32, int8, int32, float16, float32 or float64)")]
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
    /// `int32` (kept as two's-complement bit patterns)
    I32,
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
            Dtype::U16 | Dtype::F16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::F64 => 8,
        }
    }

    /// NumPy's name for the type.
    pub fn numpy_name(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8",
            Dtype::U16 => "uint16",
            Dtype::U32 => "uint32",
            Dtype::I8 => "int8",
            Dtype::I32 => "int32",
            Dtype::F16 => "float16",
            Dtype::F32 => "float32",
            Dtype::F64 => "float64",
        }
    }
}

/// An array read from a `.npy` file, elements widened to raw 64-bit words in C order:
/// unsigned integers as their value, signed integers as their two's-complement bit pattern
/// (zero-extended: int8 `-1` is `0xFF`), floats as their bit pattern (`f16`/`f32`/`f64` bits).
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    /// The dimensions.
    pub shape: Vec<usize>,
    /// The element type in the file.
    pub dtype: Dtype,
    /// The elements' raw words, row-major.
    pub words: Vec<u64>,
}

impl NpyArray {
    /// Element `i` as an f64 value (floats decoded, integers converted); exact for every
    /// supported dtype.
    pub fn value_f64(&self, i: usize) -> f64 {
        let w = self.words[i];
        match self.dtype {
            Dtype::U8 | Dtype::U16 | Dtype::U32 => w as f64,
            Dtype::I8 => f64::from(w as u8 as i8),
            Dtype::I32 => f64::from(w as u32 as i32),
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
        "i4" => Dtype::I32,
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

/// The array from its payload (exactly `l.data_bytes` bytes).
fn decode(l: Layout, payload: &[u8]) -> NpyArray {
    let size = l.dtype.size();
    let mut words: Vec<u64> = payload
        .chunks_exact(size)
        .map(|chunk| {
            let mut w = 0u64;
            for (i, &b) in chunk.iter().enumerate() {
                let pos = if l.big_endian { size - 1 - i } else { i };
                w |= (b as u64) << (8 * pos);
            }
            w
        })
        .collect();
    if l.fortran && l.shape.len() > 1 {
        words = fortran_to_c(&words, &l.shape);
    }
    NpyArray {
        shape: l.shape,
        dtype: l.dtype,
        words,
    }
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

/// Reads a `.npy` file (at most [`MAX_FILE_BYTES`], [`MAX_ELEMENTS`] elements): the header
/// first, then the payload, only once the header's element count and the file's size agree.
pub fn read_npy(path: &Path) -> Result<NpyArray, NpyError> {
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
    // Bytes of the 12-byte preamble read past a very short version 1 header already belong
    // to the payload.
    let mut payload = head.split_off(data_start);
    payload.reserve_exact(l.data_bytes.saturating_sub(payload.len()));
    (&mut file)
        .take((l.data_bytes + 1).saturating_sub(payload.len()) as u64)
        .read_to_end(&mut payload)
        .map_err(io_err)?;
    if payload.len() != l.data_bytes {
        let found = if payload.len() > l.data_bytes {
            "more".to_string()
        } else {
            payload.len().to_string()
        };
        return Err(payload_err(path, &l, found));
    }
    Ok(decode(l, &payload))
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
fn fortran_to_c(words: &[u64], shape: &[usize]) -> Vec<u64> {
    let n = words.len();
    let mut out = vec![0u64; n];
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
    let descr = match dtype {
        Dtype::U8 => "|u1",
        Dtype::U16 => "<u2",
        Dtype::U32 => "<u4",
        Dtype::I8 => "|i1",
        Dtype::I32 => "<i4",
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
    let mut f = AtomicFile::create(path).map_err(io_err)?;
    let mut buf = Vec::with_capacity(10 + header.len() + words.len() * dtype.size());
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&[1, 0]);
    buf.extend_from_slice(&(header.len() as u16).to_le_bytes());
    buf.extend_from_slice(header.as_bytes());
    for w in words {
        buf.extend_from_slice(&w.to_le_bytes()[..dtype.size()]);
    }
    f.write_all(&buf).map_err(io_err)?;
    f.commit().map_err(io_err)
}
