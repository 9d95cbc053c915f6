//! The two chart shapes every figure is made of: an x–y chart (lines and points with
//! intervals) and a bar chart (grouped or stacked bars with intervals).
//!
//! `plotters` (SVG backend) draws the frame, the axes with their ticks and labels, and the
//! title. The data marks, the legend and the caption line are written here as SVG elements
//! placed with the chart's own coordinate mapping (`backend_coord`), so that every mark
//! carries the number it shows in `data-` attributes: a test reads them back and compares
//! them with the command's JSON, and with the mark's pixel position. Nothing in the output
//! depends on the time or the machine: the same input gives the same bytes.

use std::fmt::Write as _;

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use ragstats_core::{Error, Result};

/// Width and height of every figure (SVG user units = pixels).
pub const SIZE: (u32, u32) = (760, 440);
/// Room on the right for the legend.
const LEGEND_W: u32 = 220;
/// Colours of the series, in order (a colour-blind-safe palette, Okabe–Ito).
const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A line through the points (a curve); `dashed` for forecasts beside measurements.
    Line { dashed: bool },
    /// A marker per point, with a vertical bar over its interval when it has one.
    Points,
    /// A marker per point joined by a line, over a shaded band spanning the intervals.
    Band,
}

/// One plotted point: coordinates, an optional interval for y, an optional label
/// (written as `data-label`, e.g. the design of a forecast), and whether a comparison is
/// resolved (`data-resolved`; an unresolved point is drawn hollow).
#[derive(Debug, Clone, PartialEq)]
pub struct Pt {
    pub x: f64,
    pub y: f64,
    pub ci: Option<[f64; 2]>,
    pub label: Option<String>,
    pub resolved: Option<bool>,
}

impl Pt {
    pub fn new(x: f64, y: f64) -> Self {
        Pt {
            x,
            y,
            ci: None,
            label: None,
            resolved: None,
        }
    }
}

/// A named series of an x–y chart.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub mark: Mark,
    pub points: Vec<Pt>,
}

/// An x–y chart.
#[derive(Debug, Clone)]
pub struct XyChart {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    /// Caption line under the chart (panel file, seed, replicates).
    pub caption: String,
    pub series: Vec<Series>,
    /// The y axis starts no lower than this: 0 for SEs and ratios of them, which cannot be
    /// negative (the padding around a constant outcome's SE of 0 once drew a negative axis).
    pub y_floor: Option<f64>,
}

/// One bar: its value and an optional interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    pub value: f64,
    pub ci: Option<[f64; 2]>,
}

/// A named series of a bar chart: one bar (or none) per group.
#[derive(Debug, Clone)]
pub struct BarSeries {
    pub name: String,
    pub bars: Vec<Option<Bar>>,
}

/// A bar chart over named groups; `stacked` stacks the series of a group (shares), else
/// they stand side by side.
#[derive(Debug, Clone)]
pub struct BarChart {
    pub title: String,
    pub y_desc: String,
    pub caption: String,
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
    pub stacked: bool,
}

/// XML text and attribute escaping.
pub use ragstats_core::table::escape_xml as esc;

/// A tick label: at most 6 decimals, without trailing zeros (`100`, `0.026`).
fn tick(v: &f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

fn draw_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> Error {
    Error::Runtime(format!("drawing a figure: {e}"))
}

/// A range [lo, hi] around `values` with 6% room on each side (±1 around a single value,
/// or ±10% of it); from 0 when `from_zero` (all zeros: [0, 1]); never below `floor`.
fn padded(
    values: impl Iterator<Item = f64>,
    from_zero: bool,
    floor: Option<f64>,
) -> Result<(f64, f64)> {
    let (lo, hi) = padded_free(values, from_zero)?;
    Ok(match floor {
        Some(f) if lo < f => {
            // All values at the floor (a constant outcome's SE of 0): one unit above it.
            let hi = if hi <= f { f + 1.0 } else { hi };
            (f, hi)
        }
        _ => (lo, hi),
    })
}

fn padded_free(values: impl Iterator<Item = f64>, from_zero: bool) -> Result<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return Err(Error::Data("nothing to plot: no finite value".into()));
    }
    if from_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi - lo <= 0.0 {
        if from_zero {
            // Every bar is 0 (shares or SEs of an outcome that does not vary): no room
            // below 0, where no bar goes.
            return Ok((0.0, 1.0));
        }
        let d = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        return Ok((lo - d, hi + d));
    }
    let d = 0.06 * (hi - lo);
    let lo = if from_zero && lo >= 0.0 { 0.0 } else { lo - d };
    Ok((lo, hi + d))
}

/// The legend entry swatch of series `i` at (x, y).
fn swatch(out: &mut String, i: usize, mark: Option<Mark>, x: i32, y: i32) {
    let c = PALETTE[i % PALETTE.len()];
    match mark {
        Some(Mark::Line { dashed }) => {
            let dash = if dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = writeln!(
                out,
                r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{c}" stroke-width="2"{dash}/>"#,
                x,
                x + 24
            );
        }
        Some(Mark::Points | Mark::Band) => {
            let _ = writeln!(
                out,
                r#"<circle cx="{}" cy="{y}" r="4" fill="{c}"/>"#,
                x + 12
            );
        }
        None => {
            let _ = writeln!(
                out,
                r#"<rect x="{x}" y="{}" width="24" height="12" fill="{c}"/>"#,
                y - 6
            );
        }
    }
}

/// Legend (right of the plot) and caption line (bottom left), as SVG elements.
fn legend_and_caption(out: &mut String, names: &[(String, Option<Mark>)], caption: &str) {
    let x = (SIZE.0 - LEGEND_W + 16) as i32;
    out.push_str("<g class=\"legend\">\n");
    // One size for every entry, the one the longest needs.
    let font = names
        .iter()
        .map(|(n, _)| fitted_font(n, 12.0, LEGEND_W as i32 - 56))
        .fold(12.0, f64::min);
    for (i, (name, mark)) in names.iter().enumerate() {
        let y = 60 + 22 * i as i32;
        swatch(out, i, *mark, x, y);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{y}" dy="0.35em" font-family="sans-serif" font-size="{}">{}</text>"#,
            x + 32,
            font,
            esc(name)
        );
    }
    out.push_str("</g>\n");
    let _ = writeln!(
        out,
        r##"<text class="caption" x="10" y="{}" font-family="sans-serif" font-size="11" fill="#444">{}</text>"##,
        SIZE.1 - 10,
        esc(caption)
    );
}

/// The font size (px, one decimal) at which `text` fits in `width` pixels: `base`, or
/// smaller when its estimated width (0.55 em per character, a little over sans-serif's mean) would
/// overflow, down to 6 px. A long legend entry or group label is shrunk rather than cut off
/// or overlapping its neighbour (every SVG renderer honours a font size; not all honour
/// `textLength`).
fn fitted_font(text: &str, base: f64, width: i32) -> f64 {
    let chars = text.chars().count().max(1) as f64;
    let fit = f64::from(width.max(1)) / (0.55 * chars);
    (base.min(fit).max(6.0) * 10.0).floor() / 10.0
}

/// Puts `marks` before the closing `</svg>` of plotters' output.
fn finish(mut svg: String, marks: &str) -> String {
    let end = svg.rfind("</svg>").unwrap_or(svg.len());
    svg.insert_str(end, marks);
    svg
}

fn dataset_attrs(px: (i32, i32, i32, i32), x: (f64, f64), y: (f64, f64)) -> String {
    format!(
        r#"data-plot="{} {} {} {}" data-x-range="{} {}" data-y-range="{} {}""#,
        px.0, px.1, px.2, px.3, x.0, x.1, y.0, y.1
    )
}

fn ci_attrs(ci: Option<[f64; 2]>) -> String {
    ci.map(|[l, h]| format!(r#" data-ci-low="{l}" data-ci-high="{h}""#))
        .unwrap_or_default()
}

/// Renders an x–y chart as SVG text.
///
/// # Errors
/// [`Error::Data`] when no value is finite; [`Error::Runtime`] when drawing fails.
pub fn xy(c: &XyChart) -> Result<String> {
    let all = || c.series.iter().flat_map(|s| &s.points);
    let xr = padded(all().map(|p| p.x), false, None)?;
    let yr = padded(
        all().flat_map(|p| {
            let [l, h] = p.ci.unwrap_or([p.y, p.y]);
            [p.y, l, h]
        }),
        false,
        c.y_floor,
    )?;
    let mut svg = String::new();
    let mut marks = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&c.title, ("sans-serif", 18))
            .margin(12)
            .margin_right(LEGEND_W)
            .margin_bottom(28)
            .x_label_area_size(44)
            .y_label_area_size(72)
            .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .x_desc(&c.x_desc)
            .y_desc(&c.y_desc)
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .light_line_style(RGBColor(246, 246, 246))
            .draw()
            .map_err(draw_err)?;
        // The pixels of the ranges' ends: plotters maps linearly between them (and
        // truncates to whole pixels).
        let (left, top) = chart.backend_coord(&(xr.0, yr.1));
        let (right, bottom) = chart.backend_coord(&(xr.1, yr.0));
        let _ = writeln!(
            marks,
            r#"<g class="figure-data" data-chart="xy" {}>"#,
            dataset_attrs((left, top, right, bottom), xr, yr)
        );
        for (i, s) in c.series.iter().enumerate() {
            let col = PALETTE[i % PALETTE.len()];
            let _ = writeln!(
                marks,
                r#"<g class="series" data-series="{}" data-mark="{}">"#,
                esc(&s.name),
                match s.mark {
                    Mark::Line { .. } => "line",
                    Mark::Points => "points",
                    Mark::Band => "band",
                }
            );
            match s.mark {
                Mark::Line { dashed } => {
                    let join = |f: &dyn Fn(&Pt) -> String| {
                        s.points.iter().map(f).collect::<Vec<_>>().join(" ")
                    };
                    let pts = join(&|p| {
                        let (x, y) = chart.backend_coord(&(p.x, p.y));
                        format!("{x},{y}")
                    });
                    let dash = if dashed {
                        r#" stroke-dasharray="6 4""#
                    } else {
                        ""
                    };
                    let _ = writeln!(
                        marks,
                        r#"<polyline points="{pts}" data-x="{}" data-y="{}" fill="none" stroke="{col}" stroke-width="2"{dash}/>"#,
                        join(&|p| p.x.to_string()),
                        join(&|p| p.y.to_string()),
                    );
                }
                Mark::Points | Mark::Band => {
                    if s.mark == Mark::Band {
                        // The band (upper edge left to right, lower edge back) and the
                        // line through the points; the points below carry the numbers.
                        let at = |x: f64, y: f64| {
                            let (a, b) = chart.backend_coord(&(x, y));
                            format!("{a},{b}")
                        };
                        let (mut upper, mut lower): (Vec<String>, Vec<String>) = s
                            .points
                            .iter()
                            .filter_map(|p| p.ci.map(|[l, h]| (at(p.x, h), at(p.x, l))))
                            .unzip();
                        lower.reverse();
                        upper.extend(lower);
                        let _ = writeln!(
                            marks,
                            r#"<polygon class="band" points="{}" fill="{col}" fill-opacity="0.18" stroke="none"/>"#,
                            upper.join(" ")
                        );
                        let line: Vec<String> = s.points.iter().map(|p| at(p.x, p.y)).collect();
                        let _ = writeln!(
                            marks,
                            r#"<polyline points="{}" fill="none" stroke="{col}" stroke-width="2"/>"#,
                            line.join(" ")
                        );
                    }
                    for p in &s.points {
                        let (x, y) = chart.backend_coord(&(p.x, p.y));
                        if let (Some([l, h]), Mark::Points) = (p.ci, s.mark) {
                            let (_, yl) = chart.backend_coord(&(p.x, l));
                            let (_, yh) = chart.backend_coord(&(p.x, h));
                            let _ = writeln!(
                                marks,
                                r#"<path class="ci" d="M{x} {yl}V{yh}M{} {yl}h8M{} {yh}h8" stroke="{col}" stroke-width="1.5" fill="none"/>"#,
                                x - 4,
                                x - 4
                            );
                        }
                        let label = p
                            .label
                            .as_ref()
                            .map(|l| format!(r#" data-label="{}""#, esc(l)))
                            .unwrap_or_default();
                        let (fill, resolved) = match p.resolved {
                            Some(true) => (col, r#" data-resolved="true""#),
                            Some(false) => ("#FFFFFF", r#" data-resolved="false""#),
                            None => (col, ""),
                        };
                        let _ = writeln!(
                            marks,
                            r#"<circle class="point" cx="{x}" cy="{y}" r="4" fill="{fill}" stroke="{col}" stroke-width="1.5" data-x="{}" data-y="{}"{}{label}{resolved}/>"#,
                            p.x,
                            p.y,
                            ci_attrs(p.ci)
                        );
                    }
                }
            }
            marks.push_str("</g>\n");
        }
        marks.push_str("</g>\n");
        root.present().map_err(draw_err)?;
    }
    let names: Vec<(String, Option<Mark>)> = c
        .series
        .iter()
        .map(|s| (s.name.clone(), Some(s.mark)))
        .collect();
    legend_and_caption(&mut marks, &names, &c.caption);
    Ok(finish(svg, &marks))
}

/// Renders a bar chart as SVG text.
///
/// # Errors
/// [`Error::Data`] when no value is finite; [`Error::Runtime`] when drawing fails.
pub fn bars(c: &BarChart) -> Result<String> {
    let n = c.groups.len();
    let values: Vec<f64> = if c.stacked {
        (0..n)
            .map(|g| {
                c.series
                    .iter()
                    .filter_map(|s| s.bars[g].map(|b| b.value.max(0.0)))
                    .sum()
            })
            .collect()
    } else {
        c.series
            .iter()
            .flat_map(|s| s.bars.iter().flatten())
            .flat_map(|b| {
                let [l, h] = b.ci.unwrap_or([b.value, b.value]);
                [b.value, l, h]
            })
            .collect()
    };
    let yr = padded(values.into_iter(), true, None)?;
    let mut svg = String::new();
    let mut marks = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let groups = &c.groups;
        let mut chart = ChartBuilder::on(&root)
            .caption(&c.title, ("sans-serif", 18))
            .margin(12)
            .margin_right(LEGEND_W)
            .margin_bottom(28)
            .x_label_area_size(36)
            .y_label_area_size(72)
            // A segmented 0..k has k + 1 segments (0..=k).
            // One group gets two segments (plotters' 0..0 is degenerate) and spans both.
            .build_cartesian_2d((0..(n as i32 - 1).max(1)).into_segmented(), yr.0..yr.1)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n.max(1))
            // The group labels are drawn below, in a font small enough to fit their segment.
            .x_label_formatter(&|_| String::new())
            .y_desc(&c.y_desc)
            .y_label_formatter(&tick)
            .light_line_style(RGBColor(246, 246, 246))
            .draw()
            .map_err(draw_err)?;
        let (left, top) = chart.backend_coord(&(SegmentValue::Exact(0), yr.1));
        // The pixel span of group g: its segment, or the whole axis when it is the only one.
        let span = |g: usize| {
            let (a, b) = if n == 1 {
                (0, 2)
            } else {
                (g as i32, g as i32 + 1)
            };
            let (l, _) = chart.backend_coord(&(SegmentValue::Exact(a), yr.0));
            let (r, _) = chart.backend_coord(&(SegmentValue::Exact(b), yr.0));
            (l, r)
        };
        let (right, bottom) = chart.backend_coord(&(SegmentValue::Exact(n.max(2) as i32), yr.0));
        let _ = writeln!(
            marks,
            r#"<g class="figure-data" data-chart="bars" data-groups="{}" {}>"#,
            esc(&c.groups.join("|")),
            dataset_attrs((left, top, right, bottom), (0.0, n as f64), yr)
        );
        let mut labels = String::new();
        let font = groups
            .iter()
            .enumerate()
            .map(|(g, name)| {
                let (l, r) = span(g);
                fitted_font(name, 11.0, r - l - 6)
            })
            .fold(11.0, f64::min);
        for (g, name) in groups.iter().enumerate() {
            let (l, r) = span(g);
            let _ = writeln!(
                labels,
                r#"<text class="group-label" x="{}" y="{}" text-anchor="middle" font-family="sans-serif" font-size="{}">{}</text>"#,
                (l + r) / 2,
                bottom + 16,
                font,
                esc(name)
            );
        }
        let k = c.series.len().max(1) as i32;
        let mut base = vec![0.0f64; n];
        for (i, s) in c.series.iter().enumerate() {
            let col = PALETTE[i % PALETTE.len()];
            let _ = writeln!(
                marks,
                r#"<g class="series" data-series="{}" data-mark="bars">"#,
                esc(&s.name)
            );
            for (g, b) in s.bars.iter().enumerate() {
                let Some(b) = b else { continue };
                let gi = g as i32;
                let (left, right) = span(g);
                let width = right - left;
                let (x0, x1) = if c.stacked {
                    (left + width / 5, right - width / 5)
                } else {
                    let inner = width * 4 / 5;
                    let w = inner / k;
                    let x0 = left + width / 10 + w * i as i32;
                    (x0, x0 + w - 2)
                };
                let lo = if c.stacked { base[g] } else { 0.0 };
                let hi = lo + if c.stacked { b.value.max(0.0) } else { b.value };
                let (_, ylo) = chart.backend_coord(&(SegmentValue::Exact(gi), lo));
                let (_, yhi) = chart.backend_coord(&(SegmentValue::Exact(gi), hi));
                let (top, bottom) = (ylo.min(yhi), ylo.max(yhi));
                let _ = writeln!(
                    marks,
                    r#"<rect class="bar" x="{x0}" y="{top}" width="{}" height="{}" fill="{col}" data-group="{}" data-value="{}" data-base="{lo}"{}/>"#,
                    x1 - x0,
                    (bottom - top).max(1),
                    esc(&c.groups[g]),
                    b.value,
                    ci_attrs(b.ci)
                );
                if let (Some([l, h]), false) = (b.ci, c.stacked) {
                    let xm = (x0 + x1) / 2;
                    let (_, yl) = chart.backend_coord(&(SegmentValue::Exact(gi), l));
                    let (_, yh) = chart.backend_coord(&(SegmentValue::Exact(gi), h));
                    let _ = writeln!(
                        marks,
                        r##"<path class="ci" d="M{xm} {yl}V{yh}M{} {yl}h8M{} {yh}h8" stroke="#333" stroke-width="1.5" fill="none"/>"##,
                        xm - 4,
                        xm - 4
                    );
                }
                if c.stacked {
                    base[g] = hi;
                }
            }
            marks.push_str("</g>\n");
        }
        marks.push_str("</g>\n");
        marks.push_str(&labels);
        root.present().map_err(draw_err)?;
    }
    let names: Vec<(String, Option<Mark>)> =
        c.series.iter().map(|s| (s.name.clone(), None)).collect();
    legend_and_caption(&mut marks, &names, &c.caption);
    Ok(finish(svg, &marks))
}

/// Several figures of [`xy`] or [`bars`] stacked top to bottom in one SVG (a figure of
/// several panels, each with its own axes, legend and `figure-data` group): each panel is a
/// nested `<svg>` placed at its row.
pub fn stack(panels: &[String]) -> String {
    let (w, h) = SIZE;
    let total = h * panels.len() as u32;
    let mut out = format!(
        "<svg width=\"{w}\" height=\"{total}\" viewBox=\"0 0 {w} {total}\" xmlns=\"http://www.w3.org/2000/svg\">\n"
    );
    for (i, p) in panels.iter().enumerate() {
        let inner = p.replacen(r#" xmlns="http://www.w3.org/2000/svg""#, "", 1);
        let inner = inner.replacen("<svg ", &format!("<svg x=\"0\" y=\"{}\" ", h * i as u32), 1);
        out.push_str(&inner);
        if !inner.ends_with('\n') {
            out.push('\n');
        }
    }
    out.push_str("</svg>\n");
    out
}

/// One cell of a heatmap: a correlation, its p-value (for the significance marks) and,
/// when bootstrapped, its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    pub value: f64,
    pub p: f64,
    pub ci: Option<[f64; 2]>,
}

/// A heatmap of values in [−scale, scale]: one row per `rows` name, one column per `cols`
/// name.
#[derive(Debug, Clone)]
pub struct Heatmap {
    pub title: String,
    pub caption: String,
    /// The |value| drawn at full colour (1 for correlations).
    pub scale: f64,
    /// The value's name in the colour key (`r`).
    pub key: String,
    /// Decimals of the value written in each cell.
    pub decimals: usize,
    /// What the p-values are (written beside the significance key).
    pub p_desc: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    /// `cells[i][j]` belongs to row i, column j.
    pub cells: Vec<Vec<Cell>>,
}

/// The significance mark of p: `***` below 0.001, `**` below 0.01, `*` below 0.05.
pub fn stars(p: f64) -> &'static str {
    if p < 0.001 {
        "***"
    } else if p < 0.01 {
        "**"
    } else if p < 0.05 {
        "*"
    } else {
        ""
    }
}

/// The diverging colour of v in [−1, 1]: white at 0, red (#B2182B) at 1, blue (#2166AC)
/// at −1, linear in |v| between; grey when v is not finite.
fn diverging(v: f64) -> String {
    if !v.is_finite() {
        return "#CCCCCC".into();
    }
    let t = v.abs().min(1.0);
    let end: [f64; 3] = if v >= 0.0 {
        [178.0, 24.0, 43.0]
    } else {
        [33.0, 102.0, 172.0]
    };
    let c = end.map(|e| (255.0 * (1.0 - t) + e * t).round() as u8);
    format!("#{:02X}{:02X}{:02X}", c[0], c[1], c[2])
}

/// Renders a heatmap as SVG text: `plotters` draws the canvas and title; each cell is a
/// `rect class="cell"` with `data-row`, `data-col`, `data-value`, `data-p` (and the
/// interval when there is one) and its value and significance mark written inside; a
/// colour key and the significance key stand on the right.
///
/// # Errors
/// [`Error::Data`] when there is no cell; [`Error::Runtime`] when drawing fails.
pub fn heatmap(c: &Heatmap) -> Result<String> {
    let (nr, nc) = (c.rows.len(), c.cols.len());
    if nr == 0 || nc == 0 {
        return Err(Error::Data("nothing to plot: no cell".into()));
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        root.titled(&c.title, ("sans-serif", 18))
            .map_err(draw_err)?;
        root.present().map_err(draw_err)?;
    }
    let (left, top, right, bottom) = (
        150i32,
        70i32,
        (SIZE.0 - LEGEND_W) as i32,
        SIZE.1 as i32 - 60,
    );
    let (w, h) = ((right - left) / nc as i32, (bottom - top) / nr as i32);
    let mut marks = String::new();
    let _ = writeln!(
        marks,
        r#"<g class="figure-data" data-chart="heatmap" data-rows="{}" data-cols="{}">"#,
        esc(&c.rows.join("|")),
        esc(&c.cols.join("|"))
    );
    for (j, name) in c.cols.iter().enumerate() {
        let _ = writeln!(
            marks,
            r#"<text x="{}" y="{}" text-anchor="middle" font-family="sans-serif" font-size="12">{}</text>"#,
            left + w * j as i32 + w / 2,
            top - 8,
            esc(name)
        );
    }
    for (i, name) in c.rows.iter().enumerate() {
        let y = top + h * i as i32;
        let _ = writeln!(
            marks,
            r#"<text x="{}" y="{}" dy="0.35em" text-anchor="end" font-family="sans-serif" font-size="12">{}</text>"#,
            left - 8,
            y + h / 2,
            esc(name)
        );
        for (j, cell) in c.cells[i].iter().enumerate() {
            let x = left + w * j as i32;
            let mark = stars(cell.p);
            let _ = writeln!(
                marks,
                r##"<rect class="cell" x="{x}" y="{y}" width="{w}" height="{h}" fill="{}" stroke="#FFFFFF" data-row="{}" data-col="{}" data-value="{}" data-p="{}" data-mark="{mark}"{}/>"##,
                diverging(cell.value / c.scale),
                esc(name),
                esc(&c.cols[j]),
                cell.value,
                cell.p,
                ci_attrs(cell.ci)
            );
            let ink = if (cell.value / c.scale).abs() > 0.6 {
                "#FFFFFF"
            } else {
                "#000000"
            };
            let text = if cell.value.is_finite() {
                format!("{:.*}{mark}", c.decimals, cell.value)
            } else {
                "n/a".into()
            };
            let _ = writeln!(
                marks,
                r#"<text x="{}" y="{}" dy="0.35em" text-anchor="middle" font-family="sans-serif" font-size="13" fill="{ink}">{text}</text>"#,
                x + w / 2,
                y + h / 2
            );
        }
    }
    marks.push_str("</g>\n");
    // Colour key: from scale (top) to −scale (bottom) in 20 steps, and the significance key.
    let kx = right + 30;
    marks.push_str("<g class=\"legend\">\n");
    for k in 0..20 {
        let v = 1.0 - (k as f64 + 0.5) / 10.0;
        let _ = writeln!(
            marks,
            r#"<rect x="{kx}" y="{}" width="16" height="12" fill="{}"/>"#,
            top + 12 * k,
            diverging(v)
        );
    }
    for (v, k) in [
        (format!("{}", c.scale), 0),
        ("0".to_string(), 10),
        (format!("-{}", c.scale), 20),
    ] {
        let _ = writeln!(
            marks,
            r#"<text x="{}" y="{}" dy="0.35em" font-family="sans-serif" font-size="11">{} = {v}</text>"#,
            kx + 22,
            top + 12 * k,
            esc(&c.key)
        );
    }
    for (i, line) in [
        "* p < 0.05".to_string(),
        "** p < 0.01".into(),
        "*** p < 0.001".into(),
        c.p_desc.clone(),
    ]
    .iter()
    .enumerate()
    {
        let _ = writeln!(
            marks,
            r#"<text x="{kx}" y="{}" font-family="sans-serif" font-size="11">{}</text>"#,
            top + 270 + 15 * i as i32,
            esc(line)
        );
    }
    marks.push_str("</g>\n");
    let _ = writeln!(
        marks,
        r##"<text class="caption" x="10" y="{}" font-family="sans-serif" font-size="11" fill="#444">{}</text>"##,
        SIZE.1 - 10,
        esc(&c.caption)
    );
    Ok(finish(svg, &marks))
}

#[cfg(test)]
mod tests {
    use super::{fitted_font, padded};

    #[test]
    fn se_axes_never_go_below_zero() {
        let r = |v: &[f64], from_zero, floor| padded(v.iter().copied(), from_zero, floor).unwrap();
        // A constant outcome: every SE 0. Unfloored the padding put the axis at [-1, 1].
        assert_eq!(r(&[0.0, 0.0], false, None), (-1.0, 1.0));
        assert_eq!(r(&[0.0, 0.0], false, Some(0.0)), (0.0, 1.0));
        // Small SEs: 6 % of the span below 0.001 would be negative.
        let (lo, hi) = r(&[0.001, 0.101], false, Some(0.0));
        assert_eq!(lo, 0.0);
        assert!((hi - (0.101 + 0.006)).abs() < 1e-12, "{hi}");
        // Away from the floor nothing changes.
        let (lo, _) = r(&[1.0, 2.0], false, Some(0.0));
        assert!((lo - 0.94).abs() < 1e-12, "{lo}");
        // Bars of 0 only (shares or SEs that do not vary): [0, 1], nothing below 0.
        assert_eq!(r(&[0.0, 0.0, 0.0], true, None), (0.0, 1.0));
        // Bars below 0 (a negative delta) keep their room.
        assert!(r(&[-0.2, 0.1], true, None).0 < -0.2);
    }

    #[test]
    fn fitted_font_keeps_short_text_and_shrinks_long_text_to_its_width() {
        // "planning": 8 × 0.55 × 11 = 48.4 px fits in 85 px: the base size.
        assert_eq!(fitted_font("planning", 11.0, 85), 11.0);
        // "evidence_extraction": 19 chars in 85 px: 85 / (0.55 × 19) = 8.13… → 8.1 px.
        assert_eq!(fitted_font("evidence_extraction", 11.0, 85), 8.1);
        // Never below 6 px, however long.
        assert_eq!(fitted_font(&"x".repeat(500), 11.0, 85), 6.0);
    }
}
