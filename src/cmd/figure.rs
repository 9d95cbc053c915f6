//! Figures on disk: the `--plot FILE.svg` of the analysis commands (each command calls one
//! function here with its result), and their captions.

use std::path::{Path, PathBuf};

use ragstats_plot::Caption;

use super::common::PanelOptions;

/// Writes `svg` to `path` atomically, refusing a path that is one of the command's inputs.
pub fn write_svg(path: &Path, svg: &str, inputs: &[&Path]) -> anyhow::Result<()> {
    let inputs: Vec<(&str, &Path)> = inputs.iter().map(|p| ("input", *p)).collect();
    ragstats_core::io::refuse_overwriting_inputs(&[("--plot file", path)], &inputs)?;
    ragstats_core::io::write_atomic(path, |w| w.write_all(svg.as_bytes()))?;
    Ok(())
}

/// The caption of a figure of `panel` analysed with `opts`; `bootstrap` is (seed, replicates).
pub fn caption(
    panel: Option<&PathBuf>,
    opts: &PanelOptions,
    bootstrap: Option<(u64, u64)>,
) -> Caption {
    Caption::for_panel(
        &panel.map(|p| p.display().to_string()).unwrap_or_default(),
        &opts.settings(),
        bootstrap,
    )
}

/// The caption of a figure of the loaded panel at `path` (its outcome as the panel names it).
pub fn panel_caption(path: &Path, outcome: &str, bootstrap: Option<(u64, u64)>) -> Caption {
    Caption {
        panel: path.display().to_string(),
        outcome: outcome.to_string(),
        bootstrap,
    }
}
