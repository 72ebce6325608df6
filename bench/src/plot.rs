//! `--plot FILE`: the summary as an SVG bar chart (plotters' SVG backend, no fonts needed).
//!
//! One group of three bars per system: wkcore, its reference and its floor, in ns per
//! operation on a log scale (the figures span three decades), each bar labelled with its value
//! and each group with its operation and the ratio wkcore ÷ reference.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::summary::SummaryRow;

/// The chart's size in pixels.
pub const SIZE: (u32, u32) = (960, 540);

const WKCORE: RGBColor = RGBColor(31, 119, 180);
const REFERENCE: RGBColor = RGBColor(214, 39, 40);
const FLOOR: RGBColor = RGBColor(140, 140, 140);

fn label(ns: f64) -> String {
    if ns >= 100.0 {
        format!("{ns:.0}")
    } else if ns >= 10.0 {
        format!("{ns:.1}")
    } else {
        format!("{ns:.2}")
    }
}

/// The chart of `rows` as an SVG document; `caption` goes under the title (the machine and the
/// date, say).
pub fn svg(rows: &[SummaryRow], caption: &str) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        draw(&root, rows, caption).map_err(|e| format!("plot: {e}"))?;
        root.present().map_err(|e| format!("plot: {e}"))?;
    }
    Ok(out)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    rows: &[SummaryRow],
    caption: &str,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|r| [r.wkcore.ns_per_op, r.reference.ns_per_op, r.floor.ns_per_op])
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(0.0, f64::max);
    let (lo, hi) = if values.is_empty() {
        (0.1, 1000.0)
    } else {
        (
            10f64.powf((min * 0.6).log10().floor()),
            10f64.powf((max * 3.0).log10().ceil()),
        )
    };
    let (title, rest) = root.split_vertically(56);
    title.draw(&Text::new(
        "wkcore beside its mutex reference (upstream's algorithm, or a HashMap) and its floor",
        (20, 10),
        ("sans-serif", 20).into_font(),
    ))?;
    title.draw(&Text::new(
        format!("ns per operation, log scale, lower is better; {caption}"),
        (20, 34),
        ("sans-serif", 13).into_font().color(&RGBColor(80, 80, 80)),
    ))?;
    let n = rows.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&rest)
        .margin(16)
        .margin_bottom(8)
        .x_label_area_size(56)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..n, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("ns per operation")
        .y_label_formatter(&|v| {
            if *v >= 1.0 {
                format!("{v:.0}")
            } else {
                format!("{v}")
            }
        })
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let series = [
        ("wkcore", WKCORE),
        ("reference", REFERENCE),
        ("floor", FLOOR),
    ];
    for (k, (name, color)) in series.into_iter().enumerate() {
        let bars: Vec<(f64, f64)> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let v = [r.wkcore, r.reference, r.floor][k].ns_per_op;
                (i as f64 + 0.12 + 0.26 * k as f64, v)
            })
            .filter(|(_, v)| v.is_finite() && *v > 0.0)
            .collect();
        chart
            .draw_series(
                bars.iter()
                    .map(|&(x, v)| Rectangle::new([(x, lo), (x + 0.24, v)], color.filled())),
            )?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
        let style = ("sans-serif", 12)
            .into_font()
            .into_text_style(&rest)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        chart.draw_series(bars.iter().map(|&(x, v)| {
            EmptyElement::at((x + 0.12, v)) + Text::new(label(v), (0, -3), style.clone())
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    // The groups' names under the axis, in the backend's pixels (the root's).
    let centre = |i: usize| chart.backend_coord(&(i as f64 + 0.5, lo));
    let name_style = ("sans-serif", 14)
        .into_font()
        .into_text_style(root)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let small_style = ("sans-serif", 12)
        .into_font()
        .color(&RGBColor(80, 80, 80))
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (i, r) in rows.iter().enumerate() {
        let (x, y) = centre(i);
        root.draw(&Text::new(
            r.system.to_string(),
            (x, y + 8),
            name_style.clone(),
        ))?;
        root.draw(&Text::new(
            format!("{}; ratio {:.2}", r.operation, r.ratio()),
            (x, y + 26),
            small_style.clone(),
        ))?;
    }
    Ok(())
}
