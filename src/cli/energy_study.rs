//! `tcrtl energy`: the energy study of `docs/energy.md`. Runs every case of
//! `tensorcore_rtl::gemm::energy_study` with its switching activity counted, prints the
//! tables (pJ per MAC by operand format and how it splits; the memory wall across bandwidth
//! and latency; shared-memory reuse on and off; operand data and 2:4 sparsity), and writes
//! `energy.csv`, `energy.json` and three plots into `--out`: `energy_formats.svg` (pJ per MAC
//! by format), `energy_memory.svg` (where the energy goes on the ideal port and through TMA,
//! with and without reuse) and `energy_power.svg` (average power against bandwidth).

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use tensorcore_rtl::energy::{EnergyReport, Tech};
use tensorcore_rtl::gemm::energy_study::{cases, StudyCase};
use tensorcore_rtl::gemm::Problem;
use tensorcore_rtl::hw::MemLayout;
use tensorcore_rtl::io::output::{self, write_file};
use tensorcore_rtl::io::OutputPlan;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::par::{try_par_map, Threads};

use super::array::ArrayArgs;
use super::plot::{bar_plot, line_plot, Plot, Series, Stack};

/// Arguments of `tcrtl energy`.
#[derive(clap::Args, Debug)]
pub struct EnergyStudyArgs {
    /// The format study's GEMMs are SIZE x SIZE x SIZE (the memory and data studies' half
    /// that); a multiple of 32 (an MX block).
    #[arg(long, default_value_t = 256)]
    size: usize,
    /// Seed of the problems.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The technology's energy table (45nm or 7nm).
    #[arg(long, default_value = "45nm")]
    tech: String,
    /// The clock the power is given at, in GHz.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    clock_ghz: f64,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Run only these studies (comma-separated; default all): formats (the ideal port),
    /// formats_tma, memory (the bandwidth and latency grid), reuse, data.
    #[arg(long, value_delimiter = ',', value_parser = ["formats", "formats_tma", "memory", "reuse", "data"])]
    studies: Vec<String>,
    /// Output directory (created if missing).
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    array: ArrayArgs,
}

/// The files the study writes into `--out`.
const OUTPUTS: [&str; 5] = [
    "energy.csv",
    "energy.json",
    "energy_formats.svg",
    "energy_memory.svg",
    "energy_power.svg",
];

/// One case's result.
struct Row<'a> {
    case: &'a StudyCase,
    report: EnergyReport,
    /// Through the memory path: whether A's panel was kept across a row of tiles.
    panel: Option<bool>,
    /// The problem's M * N * K (the dense-equivalent work).
    work: u64,
}

impl Row<'_> {
    fn arithmetic(&self) -> f64 {
        self.report.arithmetic_pj()
    }
    fn registers(&self) -> f64 {
        ["pe_registers", "skew", "controller", "memory_control"]
            .iter()
            .map(|b| self.report.block(b))
            .sum()
    }
    fn movement(&self) -> f64 {
        ["shared_memory", "global_memory", "tma"]
            .iter()
            .map(|b| self.report.block(b))
            .sum()
    }
    /// `pj` per MAC of the dense-equivalent work.
    fn per_mac(&self, pj: f64) -> f64 {
        pj / self.work.max(1) as f64
    }
}

/// Runs `tcrtl energy`.
pub fn run(args: &EnergyStudyArgs) -> Result<i32, String> {
    if args.size == 0 || !args.size.is_multiple_of(32) {
        return Err(format!(
            "--size {}: a positive multiple of 32 (MX scales one block of 32 along K)",
            args.size
        ));
    }
    let tech = Tech::by_name(&args.tech)?;
    if !(args.clock_ghz.is_finite() && args.clock_ghz > 0.0) {
        return Err(format!(
            "--clock-ghz must be a positive number of GHz, not {}",
            args.clock_ghz
        ));
    }
    if args.out.exists() && !args.out.is_dir() {
        return Err(format!("--out {}: not a directory", args.out.display()));
    }
    output::create_dir_all(&args.out).map_err(|e| format!("--out {}: {e}", args.out.display()))?;
    let mut plan = OutputPlan::new();
    for name in OUTPUTS {
        plan.add("--out", &args.out.join(name))?;
    }
    // The array is checked once (1 to 32 a side), before any case is built.
    let array = (args.array.rows, args.array.cols);
    args.array.apply(tensorcore_rtl::hw::CoreConfig::new(
        FP16,
        FP16,
        AccMode::Ieee,
        1,
    ))?;
    if args.array.dataflow != tensorcore_rtl::hw::Dataflow::Os {
        return Err(format!(
            "--dataflow {}: the energy study runs output-stationary cores (its memory cases \
             compare A-panel reuse on and off, a choice of the output-stationary port; \
             `tcrtl gemm --dataflow ws --energy`, with or without `--memory tma`, \
             estimates one run)",
            args.array.dataflow
        ));
    }
    let all: Vec<StudyCase> = cases(args.size, args.seed, array)?
        .into_iter()
        .filter(|c| args.studies.is_empty() || args.studies.iter().any(|s| s == c.study))
        .collect();
    // A case through memory on an array its layout cannot feed is refused before any runs.
    for c in &all {
        if let (Some(pc), Problem::Dense(g)) = (&c.memory, c.problem.problem()) {
            MemLayout::new(&g.cfg, g.m, g.n, g.k, pc).map_err(|e| {
                format!(
                    "--studies {}: {e} (on this array, run --studies formats,data)",
                    c.study
                )
            })?;
        }
    }
    let results = try_par_map(&all, Threads::or_cores(args.threads), |_, c| {
        tensorcore_rtl::gemm::energy::run(
            c.problem.problem(),
            c.memory.as_ref(),
            None,
            &tech,
            args.clock_ghz,
        )
        .map(|(done, e)| (e, done.memory.map(|m| m.layout.panel())))
        .map_err(|e| format!("{} {}: {e}", c.study, c.label))
    })?;
    let mut rows = Vec::new();
    for (c, r) in all.iter().zip(results) {
        let (report, panel) = r;
        let work = match c.problem.problem() {
            tensorcore_rtl::gemm::Problem::Dense(g) => g.macs(),
            tensorcore_rtl::gemm::Problem::Sparse(s) => (s.m * s.n * s.k) as u64,
            tensorcore_rtl::gemm::Problem::Mx(g) => (g.m * g.n * g.k) as u64,
        };
        rows.push(Row {
            case: c,
            report,
            panel,
            work,
        });
    }
    write_outputs(&args.out, args, &tech, &rows)?;
    for line in tables(args, &tech, &rows) {
        outln!("{line}");
    }
    outln!(
        "written: {}",
        args.out
            .join("energy{.csv,.json,_formats.svg,_memory.svg,_power.svg}")
            .display()
    );
    Ok(0)
}

/// The study's tables, as Markdown.
fn tables(args: &EnergyStudyArgs, tech: &Tech, rows: &[Row<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    let (s, h) = (args.size, (args.size / 2).max(8));
    let of = |study: &'static str| rows.iter().filter(move |r| r.case.study == study);
    out.push(format!(
        "Energy study, {} table, {} GHz, seed {}.",
        tech.name, args.clock_ghz, args.seed
    ));
    out.push(String::new());
    out.push(format!(
        "pJ per MAC of a {s} x {s} x {s} GEMM by operand format (random operands, w = 1):"
    ));
    out.push(String::new());
    out.push("| format | ideal port: total | arithmetic | registers | through TMA: total | data movement share |".into());
    out.push("|---|---|---|---|---|---|".into());
    for r in of("formats") {
        let tma = of("formats_tma").find(|t| t.case.label == r.case.label);
        let (t_total, share) = match tma {
            Some(t) => (
                format!("{:.3}", t.per_mac(t.report.total_pj)),
                format!("{:.1} %", 100.0 * t.movement() / t.report.total_pj),
            ),
            None => ("(ideal port only)".into(), "".into()),
        };
        out.push(format!(
            "| {} | {:.3} | {:.3} | {:.3} | {t_total} | {share} |",
            r.case.label,
            r.per_mac(r.report.total_pj),
            r.per_mac(r.arithmetic()),
            r.per_mac(r.registers()),
        ));
    }
    out.push(String::new());
    out.push(format!(
        "The memory wall: a {h} x {h} x {h} FP16 GEMM through TMA across bandwidth and latency:"
    ));
    out.push(String::new());
    out.push("| latency (cycles) | bandwidth (B/cycle) | cycles | pJ/MAC | data movement share | power (W) |".into());
    out.push("|---|---|---|---|---|---|".into());
    for r in of("memory") {
        let (bw, lat) = r.case.grid.unwrap_or((0, 0));
        out.push(format!(
            "| {lat} | {bw} | {} | {:.3} | {:.1} % | {:.4} |",
            r.report.cycles,
            r.per_mac(r.report.total_pj),
            100.0 * r.movement() / r.report.total_pj,
            r.report.power_w
        ));
    }
    out.push(String::new());
    out.push("Shared-memory reuse (the same GEMM, default memory timing):".into());
    out.push(String::new());
    out.push("| case | A panel kept | global memory bytes | pJ/MAC | global memory share |".into());
    out.push("|---|---|---|---|---|".into());
    for r in of("reuse") {
        let gmem = r
            .report
            .by_block
            .iter()
            .find(|b| b.block == "global_memory")
            .map_or(0, |b| b.count);
        out.push(format!(
            "| {} | {} | {gmem} | {:.3} | {:.1} % |",
            r.case.label,
            if r.panel == Some(true) { "yes" } else { "no" },
            r.per_mac(r.report.total_pj),
            100.0 * r.report.block("global_memory") / r.report.total_pj
        ));
    }
    out.push(String::new());
    out.push(format!(
        "Operand data: a {h} x {h} x {h} FP16 GEMM on the ideal port, pJ per MAC of the dense work ({h}^3):"
    ));
    out.push(String::new());
    out.push("| operands | products computed | arithmetic | registers | total |".into());
    out.push("|---|---|---|---|---|".into());
    for r in of("data") {
        out.push(format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} |",
            r.case.label,
            r.report.macs,
            r.per_mac(r.arithmetic()),
            r.per_mac(r.registers()),
            r.per_mac(r.report.total_pj)
        ));
    }
    out
}

fn write_outputs(
    dir: &Path,
    args: &EnergyStudyArgs,
    tech: &Tech,
    rows: &[Row<'_>],
) -> Result<(), String> {
    let mut csv = String::from(
        "study,case,macs,work,cycles,total_pj,pj_per_mac_of_work,arithmetic_pj,registers_pj,movement_pj,power_w\n",
    );
    for r in rows {
        csv.push_str(&format!(
            "{},\"{}\",{},{},{},{},{},{},{},{},{}\n",
            r.case.study,
            r.case.label,
            r.report.macs,
            r.work,
            r.report.cycles,
            r.report.total_pj,
            r.per_mac(r.report.total_pj),
            r.arithmetic(),
            r.registers(),
            r.movement(),
            r.report.power_w
        ));
    }
    write_file(&dir.join("energy.csv"), csv.as_bytes())?;
    let json = serde_json::json!({
        "size": args.size, "seed": args.seed, "rows": args.array.rows, "cols": args.array.cols, "tech": tech.name, "clock_ghz": args.clock_ghz,
        "cases": rows.iter().map(|r| serde_json::json!({
            "study": r.case.study, "case": r.case.label, "work": r.work,
            "energy": super::energy::json(&r.report),
        })).collect::<Vec<_>>(),
    });
    write_file(&dir.join("energy.json"), format!("{json:#}\n").as_bytes())?;
    // pJ per MAC by format, arithmetic and registers stacked (the ideal port).
    let formats: Vec<&Row<'_>> = rows.iter().filter(|r| r.case.study == "formats").collect();
    let labels: Vec<String> = formats.iter().map(|r| r.case.label.clone()).collect();
    let stacks = [
        Stack {
            label: "arithmetic (multipliers, adders)".into(),
            color: RGBColor(220, 90, 60).to_rgba(),
            values: formats.iter().map(|r| r.per_mac(r.arithmetic())).collect(),
        },
        Stack {
            label: "registers".into(),
            color: RGBColor(70, 120, 200).to_rgba(),
            values: formats.iter().map(|r| r.per_mac(r.registers())).collect(),
        },
    ];
    let caption = format!(
        "{0} x {0} x {0} GEMM: pJ per MAC by operand format ({1}, ideal operand port)",
        args.size, tech.name
    );
    write_bars(&dir.join("energy_formats.svg"), &caption, &labels, &stacks)?;
    // Where the energy goes: the FP16 GEMM on the ideal port, through TMA with A's panel
    // kept, and without.
    let mut cases: Vec<(String, &Row<'_>)> = Vec::new();
    if let Some(r) = rows
        .iter()
        .find(|r| r.case.study == "data" && r.case.label == "random")
    {
        cases.push(("ideal port".into(), r));
    }
    for r in rows.iter().filter(|r| r.case.study == "reuse") {
        let kept = if r.panel == Some(true) {
            "A kept"
        } else {
            "A reloaded"
        };
        cases.push((format!("TMA, {} ({kept})", r.case.label), r));
    }
    let blocks: [(&str, &[&str], RGBColor); 4] = [
        (
            "arithmetic",
            &["multipliers", "adders"],
            RGBColor(220, 90, 60),
        ),
        (
            "registers",
            &["pe_registers", "skew", "controller", "memory_control"],
            RGBColor(70, 120, 200),
        ),
        (
            "shared memory and TMA",
            &["shared_memory", "tma"],
            RGBColor(90, 170, 90),
        ),
        ("global memory", &["global_memory"], RGBColor(120, 120, 120)),
    ];
    let stacks: Vec<Stack> = blocks
        .iter()
        .map(|(label, names, color)| Stack {
            label: (*label).into(),
            color: color.to_rgba(),
            values: cases
                .iter()
                .map(|(_, r)| r.per_mac(names.iter().map(|b| r.report.block(b)).sum()))
                .collect(),
        })
        .collect();
    let labels: Vec<String> = cases.iter().map(|(l, _)| l.clone()).collect();
    let h = (args.size / 2).max(8);
    let caption = format!(
        "{h} x {h} x {h} FP16 GEMM: pJ per MAC, the memory wall ({})",
        tech.name
    );
    write_bars(&dir.join("energy_memory.svg"), &caption, &labels, &stacks)?;
    // Average power against bandwidth, one line per latency: the same energy, delivered
    // faster.
    let mut series: Vec<Series> = Vec::new();
    for (i, r) in rows.iter().filter(|r| r.case.study == "memory").enumerate() {
        let Some((bw, lat)) = r.case.grid else {
            continue;
        };
        let label = format!("latency {lat} cycles");
        let point = (f64::from(bw), r.report.power_w);
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                label,
                points: vec![point],
                color: Palette99::pick(i / 3).to_rgba(),
                width: 2,
                markers: true,
            }),
        }
    }
    let top = rows
        .iter()
        .filter(|r| r.case.study == "memory")
        .map(|r| r.report.power_w)
        .fold(0.0, f64::max)
        .max(1e-6)
        * 1.15;
    let caption = format!(
        "{h} x {h} x {h} FP16 GEMM through TMA: average power at {} GHz ({})",
        args.clock_ghz, tech.name
    );
    let plot = Plot {
        size: (900, 520),
        caption: &caption,
        x: (2.0..128.0, true),
        y: (0.0..top, false),
        x_desc: "global-memory bandwidth (bytes/cycle, log scale)",
        y_desc: "average power (W)",
        legend: SeriesLabelPosition::LowerRight,
    };
    let mut svg = String::new();
    line_plot(&mut svg, &plot, &series)?;
    write_file(&dir.join("energy_power.svg"), svg.as_bytes())
}

/// Writes a stacked bar chart of pJ per MAC to `path`.
fn write_bars(
    path: &Path,
    caption: &str,
    labels: &[String],
    stacks: &[Stack],
) -> Result<(), String> {
    let mut svg = String::new();
    bar_plot(&mut svg, (900, 520), caption, "pJ per MAC", labels, stacks)?;
    write_file(path, svg.as_bytes())
}
