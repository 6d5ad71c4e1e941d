//! The SVG chart: one panel for varying components and one for vec4 slots, a bar per
//! configuration (after optimization) against a line at the unoptimized total.

use plotters::prelude::*;

use super::summary::Experiment;
use crate::error::Error;

/// Chart width in pixels; the height grows with the number of configurations.
pub const WIDTH: u32 = 900;

fn chart_err(e: impl std::fmt::Display) -> Error {
    Error::Io {
        path: "<svg chart>".into(),
        source: std::io::Error::other(e.to_string()),
    }
}

type Panel<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// Pixels per label character: the naive font metrics plotters uses without a font
/// backend.
const CHAR_PX: u32 = 7;

/// Horizontal bars, one per configuration (labels read left of them), and a vertical
/// line at the unoptimized total.
fn panel(
    area: &Panel<'_>,
    title: &str,
    labels: &[String],
    after: &[usize],
    before: usize,
) -> Result<(), Error> {
    let n = labels.len().max(1);
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32;
    let right = after.iter().copied().chain([before]).max().unwrap_or(0) as f64 * 1.15 + 1.0;
    // Segment i of `0..last` holds configuration i (the segmented range includes its
    // end). A single configuration still gets a two-segment axis: `0..0` is degenerate.
    let last = n.max(2) - 1;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(widest * CHAR_PX + 10)
        .build_cartesian_2d(0.0..right, (0..last).into_segmented())
        .map_err(chart_err)?;
    let name = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&name)
        .x_desc("count")
        .draw()
        .map_err(chart_err)?;
    let bars = after.iter().enumerate().map(|(i, v)| {
        let mut r = Rectangle::new(
            [
                (0.0, SegmentValue::Exact(i)),
                (*v as f64, SegmentValue::Exact(i + 1)),
            ],
            BLUE.mix(0.6).filled(),
        );
        r.set_margin(4, 4, 0, 0);
        r
    });
    chart
        .draw_series(bars)
        .map_err(chart_err)?
        .label("after")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], BLUE.mix(0.6).filled()));
    let line = [
        (before as f64, SegmentValue::Exact(0)),
        (before as f64, SegmentValue::Last),
    ];
    chart
        .draw_series(std::iter::once(PathElement::new(line, RED.stroke_width(2))))
        .map_err(chart_err)?
        .label("before")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 10, y)], RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(chart_err)
}

/// The chart as SVG text.
pub fn svg_chart(e: &Experiment) -> Result<String, Error> {
    let mut buf = String::new();
    {
        let height = 2 * (120 + 28 * e.configs.len().max(3) as u32);
        let root = SVGBackend::with_string(&mut buf, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_err)?;
        let halves = root.split_evenly((2, 1));
        let labels = &e.configs;
        let comps: Vec<usize> = e.summaries.iter().map(|s| s.totals.components.1).collect();
        let slots: Vec<usize> = e.summaries.iter().map(|s| s.totals.slots.1).collect();
        let first = e.summaries.first().map(|s| s.totals).unwrap_or_default();
        if let [a, b] = halves.as_slice() {
            panel(a, "varying components", labels, &comps, first.components.0)?;
            panel(b, "vec4 slots", labels, &slots, first.slots.0)?;
        }
        root.present().map_err(chart_err)?;
    }
    Ok(buf)
}
