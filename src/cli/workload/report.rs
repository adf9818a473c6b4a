//! The files of a `tcrtl workload run` or `merge` report: `layers.csv`, `summary.json` and
//! `layers.svg` in `--out`, written from one library [`Report`]
//! (`tensorcore_rtl::workload::report`: the records, the CSV values, the summary and the
//! report read back), so that a report put together from parts is written by the very code
//! that writes a run's.

use std::path::Path;

use tensorcore_rtl::io::output::{self, write_file};
use tensorcore_rtl::io::OutputPlan;
pub use tensorcore_rtl::workload::report::*;

/// The files a report is made of, in the order they are written.
pub const FILES: [&str; 3] = ["layers.csv", "summary.json", "layers.svg"];

/// Makes the folder `out` (`--out`) and checks the report's files in it as one output plan,
/// before anything is written: a path that is not a folder, a folder that cannot be made or
/// a file that clashes is one error.
pub fn plan_out(out: &Path) -> Result<(), String> {
    if out.exists() && !out.is_dir() {
        return Err(format!("--out {}: not a directory", out.display()));
    }
    output::create_dir_all(out).map_err(|e| format!("--out {}: {e}", out.display()))?;
    let mut plan = OutputPlan::new();
    for name in FILES {
        plan.add("--out", &out.join(name))?;
    }
    Ok(())
}

/// Makes the folder of a row split's parts of D in `out` (after [`plan_out`]).
pub fn plan_parts(out: &Path) -> Result<(), String> {
    let dir = out.join(PARTS_DIR);
    if dir.exists() && !dir.is_dir() {
        return Err(format!("--out {}: not a directory", dir.display()));
    }
    output::create_dir_all(&dir).map_err(|e| format!("--out {}: {e}", dir.display()))
}

/// Writes the report's three files into `dir` (each atomically, through the run's output
/// transaction).
pub fn write(dir: &Path, report: &Report) -> Result<(), String> {
    let summary = summary_json(report);
    let plot = layers_svg(&report.records, &report.shape)?;
    let energy = report.header.contains_key("energy");
    let memory = report.header.contains_key("memory_path");
    write_file(
        &dir.join("layers.csv"),
        layers_csv(&report.records, memory, energy).as_bytes(),
    )?;
    write_file(
        &dir.join("summary.json"),
        format!("{summary:#}\n").as_bytes(),
    )?;
    write_file(&dir.join("layers.svg"), plot.as_bytes())
}

/// `layers.svg`: a bar chart of each layer's cycles above one of its utilization (in
/// percent), the layers in the topology's order.
pub fn layers_svg(records: &[LayerRecord], shape: &Shape) -> Result<String, String> {
    use plotters::prelude::{Color, BLUE, RED};
    let labels: Vec<String> = records.iter().map(|r| r.name.clone()).collect();
    let mut svg = String::new();
    let (w, h) = (960u32, 420u32);
    let mut cycles_svg = String::new();
    crate::cli::plot::bar_plot(
        &mut cycles_svg,
        (w, h),
        &format!(
            "cycles per layer ({} x {} {}, w = {})",
            shape.rows, shape.cols, shape.dataflow, shape.width
        ),
        "cycles",
        &labels,
        &[crate::cli::plot::Stack {
            label: "cycles".into(),
            color: BLUE.to_rgba(),
            values: records.iter().map(|r| r.cycles as f64).collect(),
        }],
    )?;
    let mut util_svg = String::new();
    crate::cli::plot::bar_plot(
        &mut util_svg,
        (w, h),
        "utilization per layer (%)",
        "utilization (%)",
        &labels,
        &[crate::cli::plot::Stack {
            label: "utilization".into(),
            color: RED.to_rgba(),
            values: records.iter().map(|r| 100.0 * r.utilization).collect(),
        }],
    )?;
    // The two charts one above the other in one document.
    svg.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{}\">\n",
        2 * h
    ));
    for (k, part) in [cycles_svg, util_svg].iter().enumerate() {
        svg.push_str(&format!(
            "<g transform=\"translate(0,{})\">\n",
            k as u32 * h
        ));
        svg.push_str(strip_xml_header(part));
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    Ok(svg)
}

/// An SVG document without its XML declaration, to nest it in another.
fn strip_xml_header(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}
