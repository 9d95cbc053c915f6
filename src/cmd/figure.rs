//! Figures on disk: the `--plot FILE.svg` of the analysis commands (each command calls one
//! function here with its result), and their captions.

use std::path::{Path, PathBuf};

use ragstats_core::components::forecast::{forecast, Audit, Forecast};
use ragstats_plot::{self as plot, Caption};

use super::common::PanelOptions;

/// Writes `svg` to `path` atomically, refusing a path that is one of the command's inputs.
pub fn write_svg(path: &Path, svg: &str, inputs: &[&Path]) -> anyhow::Result<()> {
    let inputs: Vec<(&str, &Path)> = inputs.iter().map(|p| ("input", *p)).collect();
    ragstats_core::io::refuse_overwriting_inputs(&[("--plot file", path)], &inputs)?;
    ragstats_core::io::write_atomic(path, |w| w.write_all(svg.as_bytes()))?;
    Ok(())
}

/// Points on each forecast curve of `forecast --plot` (besides the designs' own Q).
const CURVE_POINTS: usize = 25;

/// The figure of `forecast --plot`: the forecast SE curves over Q of each design's (T, R), and the designs' own points.
pub fn forecast_figure(
    audit: &Audit,
    pooled: bool,
    rows: &[(Forecast, Option<f64>)],
    caption: &Caption,
) -> anyhow::Result<String> {
    let qs: Vec<usize> = rows.iter().map(|(f, _)| f.questions).collect();
    let mut curve = Vec::new();
    let mut shapes: Vec<(usize, usize)> = Vec::new();
    for (f, _) in rows {
        if shapes.contains(&(f.trajectories, f.reads)) {
            continue;
        }
        shapes.push((f.trajectories, f.reads));
        for q in plot::q_grid(&qs, audit.strata.len(), CURVE_POINTS) {
            let spec = format!("{q}:{}:{}", f.trajectories, f.reads).parse()?;
            // A Q too small to give every stratum a question has no forecast: the curve
            // starts above it.
            if let Ok(c) = forecast(audit, &spec, pooled) {
                curve.push(c);
            }
        }
    }
    Ok(plot::forecast(rows, &curve, caption)?)
}

/// The caption of a figure of `panel` analysed with `opts`; `bootstrap` is (seed, replicates).
pub fn caption(
    panel: Option<&PathBuf>,
    opts: &PanelOptions,
    bootstrap: Option<(u64, u64)>,
) -> Caption {
    let mut outcome = opts.metric.clone().unwrap_or_default();
    for (what, v) in [("contrast", &opts.contrast), ("arm", &opts.arm)] {
        if let Some(v) = v {
            if !outcome.is_empty() {
                outcome.push_str(", ");
            }
            outcome.push_str(&format!("{what} {v}"));
        }
    }
    Caption {
        panel: panel.map(|p| p.display().to_string()).unwrap_or_default(),
        outcome,
        bootstrap,
    }
}

/// The caption of a figure of the loaded panel at `path` (its outcome as the panel names it).
pub fn panel_caption(path: &Path, outcome: &str, bootstrap: Option<(u64, u64)>) -> Caption {
    Caption {
        panel: path.display().to_string(),
        outcome: outcome.to_string(),
        bootstrap,
    }
}
