//! The `.npy` reader (`io::npy::read_npy`): bytes per second for a 16 MiB payload of each
//! element width (`uint8`, `float16`, `float32`, `float64`), and the memory it costs per
//! payload byte: the peak resident memory one read adds (Linux `VmHWM` less `VmRSS` before
//! it, in a child process with a fresh heap), divided by the payload, printed before the
//! timings. The payload is read in blocks straight into a vector of the element's width, so
//! the figure is about 1 (docs/reliability.md, "Limits").

use criterion::{criterion_group, Criterion, Throughput};
use std::hint::black_box;
use std::path::Path;
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};

/// The payload of each file (16 MiB).
const PAYLOAD: usize = 1 << 24;

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`), if the system has it.
fn status_kib(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Where a child process of this bench reads one file and reports its peak memory.
const CHILD_ENV: &str = "TCRTL_BENCH_NPY_READ_ONCE";

/// In a child process (a fresh heap, so no memory freed earlier is reused): the peak memory
/// one read of the file named in [`CHILD_ENV`] adds, in bytes, printed on stdout.
fn child_read(path: &str) {
    let before = status_kib("VmRSS:").expect("VmRSS");
    let arr = read_npy(Path::new(path)).expect("read");
    let peak = status_kib("VmHWM:").expect("VmHWM");
    drop(black_box(arr));
    println!("{}", peak.saturating_sub(before) * 1024);
}

/// The peak memory one read of `path` adds per payload byte, measured in a child process
/// (`None` without `/proc`).
fn memory_per_byte(path: &Path) -> Option<f64> {
    status_kib("VmHWM:")?;
    let out = std::process::Command::new(std::env::current_exe().ok()?)
        .env(CHILD_ENV, path)
        .output()
        .ok()?;
    let bytes: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some(bytes / PAYLOAD as f64)
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("tcrtl-bench-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let mut g = c.benchmark_group("npy_read_16MiB");
    g.throughput(Throughput::Bytes(PAYLOAD as u64));
    g.sample_size(10);
    for (name, dtype, size) in [
        ("u8", Dtype::U8, 1),
        ("f16", Dtype::F16, 2),
        ("f32", Dtype::F32, 4),
        ("f64", Dtype::F64, 8),
    ] {
        let n = PAYLOAD / size;
        let words: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let path = dir.join(format!("{name}.npy"));
        write_npy(&path, &[n / 1024, 1024], dtype, &words).expect("write");
        drop(words);
        match memory_per_byte(&path) {
            Some(m) => println!("npy_read {name}: {m:.2} bytes of memory per payload byte"),
            None => println!("npy_read {name}: no /proc to measure memory"),
        }
        g.bench_function(name, |b| {
            b.iter(|| read_npy(black_box(&path)).expect("read"))
        });
    }
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        child_read(&path);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
