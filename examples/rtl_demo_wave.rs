//! Writes a short waveform of the demo design to `waves/demo.vcd` (+ `waves/demo.gtkw`) and of
//! the 4x4 MAC mesh to `waves/mesh.vcd`, for looking at in GTKWave or Surfer:
//! `cargo run --example rtl_demo_wave && gtkwave waves/demo.vcd waves/demo.gtkw`.

use tensorcore_rtl::rtl::demo::{Demo, MacMesh};
use tensorcore_rtl::rtl::{Result, Simulator, TraceConfig};

fn main() -> Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("waves");
    let _ = std::fs::create_dir_all(&dir);

    let cfg = TraceConfig::vcd(dir.join("demo.vcd"))
        .glob("lfsr")
        .glob("fifo");
    let mut sim = Simulator::with_trace(Demo::new("demo", 3)?, &cfg)?;
    sim.set_watchdog(100);
    sim.reset(2)?;
    sim.run(40)?;
    let (_, summary) = sim.finish()?;
    println!("{summary:?}");

    let cfg = TraceConfig::vcd(dir.join("mesh.vcd"))
        .glob("seed")
        .glob("mesh.pe_0_*")
        .window(0, 30);
    let mut sim = Simulator::with_trace(MacMesh::<4>::new()?, &cfg)?;
    sim.reset(1)?;
    sim.run(50)?;
    let (_, summary) = sim.finish()?;
    println!("{summary:?}");
    Ok(())
}
