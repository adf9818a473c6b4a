//! One line-plot routine (plotters, SVG backend) for the commands that draw their results
//! (`memsweep`, `verify sweep`): a caption, axes with descriptions, labelled line series with
//! point markers, a legend.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use std::ops::Range;

/// One labelled line.
pub struct Series {
    /// The legend label.
    pub label: String,
    /// The points `(x, y)`.
    pub points: Vec<(f64, f64)>,
    /// Line colour.
    pub color: RGBAColor,
    /// Line width in pixels.
    pub width: u32,
    /// Draw a marker at each point.
    pub markers: bool,
}

/// A plot: size, caption, axis ranges (log scale or not) and descriptions, legend corner.
pub struct Plot<'a> {
    /// Width and height in pixels.
    pub size: (u32, u32),
    /// The caption.
    pub caption: &'a str,
    /// x range and whether it is drawn on a log scale.
    pub x: (Range<f64>, bool),
    /// y range and whether it is drawn on a log scale.
    pub y: (Range<f64>, bool),
    /// x axis description.
    pub x_desc: &'a str,
    /// y axis description.
    pub y_desc: &'a str,
    /// Where the legend goes.
    pub legend: SeriesLabelPosition,
}

/// Draws `series` as `plot` says into `svg` (an SVG document).
pub fn line_plot(svg: &mut String, plot: &Plot<'_>, series: &[Series]) -> Result<(), String> {
    let (x, y) = (plot.x.0.clone(), plot.y.0.clone());
    match (plot.x.1, plot.y.1) {
        (true, true) => draw(svg, plot, x.log_scale(), y.log_scale(), series),
        (true, false) => draw(svg, plot, x.log_scale(), y, series),
        (false, true) => draw(svg, plot, x, y.log_scale(), series),
        (false, false) => draw(svg, plot, x, y, series),
    }
}

fn draw<X, Y>(
    svg: &mut String,
    plot: &Plot<'_>,
    x: X,
    y: Y,
    series: &[Series],
) -> Result<(), String>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let err = |e: &dyn std::fmt::Display| format!("plot {:?}: {e}", plot.caption);
    let root = SVGBackend::with_string(svg, plot.size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(plot.caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x, y)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_desc(plot.x_desc)
        .y_desc(plot.y_desc)
        .draw()
        .map_err(|e| err(&e))?;
    for s in series {
        let style = s.color.stroke_width(s.width);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), style))
            .map_err(|e| err(&e))?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        if s.markers {
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|&c| Circle::new(c, 3, s.color.filled())),
                )
                .map_err(|e| err(&e))?;
        }
    }
    chart
        .configure_series_labels()
        .position(plot.legend.clone())
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// One stacked component of a bar chart: its legend label, colour and one value per bar.
pub struct Stack {
    /// The legend label.
    pub label: String,
    /// Fill colour.
    pub color: RGBAColor,
    /// Its value in each bar, in bar order.
    pub values: Vec<f64>,
}

/// Draws a stacked bar chart into `svg`: one bar per label, each the sum of the stacks'
/// values (drawn bottom up in stack order), with a legend.
pub fn bar_plot(
    svg: &mut String,
    size: (u32, u32),
    caption: &str,
    y_desc: &str,
    labels: &[String],
    stacks: &[Stack],
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("plot {caption:?}: {e}");
    let totals: Vec<f64> = (0..labels.len())
        .map(|i| {
            stacks
                .iter()
                .map(|s| s.values.get(i).copied().unwrap_or(0.0))
                .sum()
        })
        .collect();
    let top = totals.iter().copied().fold(0.0, f64::max).max(1e-9) * 1.1;
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        // `a..b` segmented has a segment per value `a..=b`: one per label.
        .build_cartesian_2d((0..labels.len().max(1) - 1).into_segmented(), 0.0..top)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_labels(labels.len())
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .y_desc(y_desc)
        .draw()
        .map_err(|e| err(&e))?;
    let mut base = vec![0.0; labels.len()];
    for s in stacks {
        let color = s.color;
        let bars: Vec<Rectangle<(SegmentValue<usize>, f64)>> = (0..labels.len())
            .map(|i| {
                let v = s.values.get(i).copied().unwrap_or(0.0);
                let mut r = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), base[i]),
                        (SegmentValue::Exact(i + 1), base[i] + v),
                    ],
                    color.filled(),
                );
                r.set_margin(0, 0, 8, 8);
                base[i] += v;
                r
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| err(&e))?
            .label(s.label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
