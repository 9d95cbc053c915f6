//! `slice`: the sub-panel of a design Q:T:R written as a panel file (every arm, selector and
//! column of the kept rows), so a measured allocation is analysed like any panel
//! ([`crate::allocation::slice::slice_panel`] chooses the cells,
//! [`crate::allocation::slice_rows`] copies their rows).

use std::path::PathBuf;

use serde::Deserialize;

use super::{overwrites, source_input, unpaired_json};
use crate::allocation::slice::{slice_panel, SliceJob};
use crate::allocation::slice_report::SliceReport;
use crate::allocation::slice_rows::{arms, labels, write_rows, writes_jsonl};
use crate::components::forecast::DesignSpec;
use crate::document::{Finished, Inputs};
use crate::import::{unpaired_counts, Balance, PanelSettings};
use crate::io::{clip, is_jsonl};
use crate::panel::{Panel, Source};
use crate::{Error, Result};

/// The analyses that combine strata, and so take weights.
pub(crate) const WEIGHTED_ANALYSES: &str = "variance, bootstrap, compare, forecast, plan, \
     allocate, efficiency, subsets and coverage";

/// The settings of [`slice()`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct SliceSettings {
    /// How the panel is read (weights are refused: a slice combines no strata).
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// The design: `Q:T:R` (Q split over the strata in the panel's question shares, by
    /// largest remainder) or per-stratum counts, `hotpotqa=150,musique=24:2:1`.
    pub design: String,
    /// The Q of a `Q:T:R` design is the count in every stratum, not the total.
    pub per_stratum: bool,
    /// Seeded choice: questions in the seeded order of `allocate`'s `order_seed`, and for
    /// each question a seeded choice of T of its trajectories and of R reads of each.
    pub seed: Option<u64>,
    /// Keep the first T trajectories and R reads (label order) of each question (the
    /// default without a seed, where the questions are the first in panel order too).
    pub first: bool,
    /// Where to write the sub-panel, in the panel's format: CSV (a CSV file, a table, a
    /// Parquet file) or JSON lines (a `.jsonl`/`.json` file, records); the name must say
    /// the same.
    pub out: PathBuf,
}

/// Chooses the cells of `settings.design` in the panel `panel` holds and writes their rows
/// to `settings.out` (atomically); the report says what the sub-panel holds.
///
/// A slice cuts questions, trajectories and reads, never arms: a panel of several arms with
/// neither a contrast nor an arm is cut as it is, by the cells of its first arm, after
/// checking that every arm has the same cells (strata, questions in order, trajectory and
/// read labels), so each arm keeps the same questions, trajectories and reads and a paired
/// contrast of the sub-panel stays paired.
///
/// # Errors
/// [`Error::Setting`] for weights, a design that does not parse, an `out` whose name is not
/// the panel's format or that is the panel; [`Error::Input`] naming the first difference
/// when the arms' cells differ; those of loading, choosing and writing.
pub fn slice(panel: &Source, settings: &SliceSettings) -> Result<Finished> {
    if settings.panel.weights.is_some() {
        return Err(Error::setting(
            "weights",
            format!(
                "slice copies a sub-panel's rows to a file and combines no strata (it \
                 estimates nothing): give weights to the analysis of the slice; the analyses \
                 that combine strata take them ({WEIGHTED_ANALYSES})"
            ),
        ));
    }
    let jsonl = writes_jsonl(panel)?;
    let out = &settings.out;
    if out.as_os_str().is_empty() {
        return Err(Error::setting(
            "out",
            "expected the file to write the sub-panel to",
        ));
    }
    if jsonl != is_jsonl(out) {
        return Err(Error::setting(
            "out",
            format!(
                "{}: the sub-panel is written in the panel's format ({}); give a name ending in {}",
                out.display(),
                if jsonl { "JSONL" } else { "CSV" },
                if jsonl { ".jsonl" } else { ".csv" }
            ),
        ));
    }
    if let Some(why) = overwrites(out, "panel", panel.paths()) {
        return Err(Error::setting("out", why));
    }
    let design: DesignSpec = settings.design.parse()?;
    let job = SliceJob {
        design,
        per_stratum: settings.per_stratum,
        seed: settings.seed,
        first: settings.first,
    };
    let mut notes = Vec::new();
    let loaded = load(panel, &settings.panel, &mut notes)?;
    let mut chosen = slice_panel(&loaded, &job)?;
    // Trajectories are nested in questions: the chosen positions are named by each
    // question's own labels in the panel.
    chosen.bind(&labels(panel)?)?;
    let rows = write_rows(panel, &chosen, out)?;
    let report = SliceReport::new(&job, &chosen, rows, &out.display().to_string());
    let mut done = Finished::new("slice", source_input(Inputs::new(), "panel", panel), report)
        .with_notes_after(notes);
    done.unpaired_cells = unpaired_json(unpaired_counts(&loaded));
    Ok(done)
}

/// The panel whose cells the slice chooses from ([`slice`] says how arms are handled), and
/// the notes of loading it.
fn load(source: &Source, settings: &PanelSettings, notes: &mut Vec<String>) -> Result<Panel> {
    let arms = match (&settings.contrast, &settings.arm) {
        (None, None) => arms(source)?,
        _ => Vec::new(),
    };
    let Some((first, rest)) = arms.split_first().filter(|(_, rest)| !rest.is_empty()) else {
        let panel = settings.load(source, Balance::Required)?;
        notes.extend(settings.loading_notes(&panel, false));
        return Ok(panel);
    };
    let one = |arm: &str| PanelSettings {
        arm: Some(arm.to_string()),
        ..settings.clone()
    };
    let panel = one(first).load(source, Balance::Required)?;
    notes.extend(one(first).loading_notes(&panel, false));
    let cells = layout(&panel);
    for arm in rest {
        let other = one(arm).load(source, Balance::Required)?;
        notes.extend(other.notes.iter().map(|n| format!("note: {n}")));
        if let Some(diff) = first_difference(&cells, &layout(&other)) {
            return Err(Error::input(
                source.name(),
                None,
                format!(
                    "the arms have different cells ({diff} in arm '{}' and arm '{}'); a slice \
                     keeps the same questions, trajectories and reads for every arm: choose \
                     them with a contrast B-A (the cells both arms have) or one arm",
                    clip(first),
                    clip(arm)
                ),
            ));
        }
    }
    Ok(panel)
}

/// A panel's cells by label: per stratum its name and, per question in panel order, its id
/// with each trajectory's label and read labels.
type Layout<'a> = Vec<(&'a str, Vec<(&'a str, Vec<(&'a str, Vec<&'a str>)>)>)>;

/// The [`Layout`] of `panel`.
fn layout(panel: &Panel) -> Layout<'_> {
    panel
        .strata
        .iter()
        .map(|s| {
            let questions = s
                .questions
                .iter()
                .enumerate()
                .map(|(q, name)| {
                    let traj = s
                        .trajectories_of(q)
                        .iter()
                        .enumerate()
                        .map(|(t, reads)| {
                            let label = |r| s.cell_label(q, t, r).unwrap_or(("", ""));
                            (label(0).0, (0..reads.len()).map(|r| label(r).1).collect())
                        })
                        .collect();
                    (name.as_str(), traj)
                })
                .collect();
            (s.name.as_str(), questions)
        })
        .collect()
}

/// Where two layouts first differ, in words (`None` when they are the same).
fn first_difference(a: &Layout<'_>, b: &Layout<'_>) -> Option<String> {
    if a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.0 != y.0) {
        let names = |l: &Layout<'_>| l.iter().map(|s| clip(s.0)).collect::<Vec<_>>().join(", ");
        return Some(format!("strata {} and {}", names(a), names(b)));
    }
    for ((name, qa), (_, qb)) in a.iter().zip(b) {
        if qa.len() != qb.len() {
            return Some(format!(
                "{} and {} questions in stratum '{}'",
                qa.len(),
                qb.len(),
                clip(name)
            ));
        }
        for (x, y) in qa.iter().zip(qb) {
            if x.0 != y.0 {
                return Some(format!(
                    "question '{}' and question '{}' at the same place in stratum '{}'",
                    clip(x.0),
                    clip(y.0),
                    clip(name)
                ));
            }
            if x.1 != y.1 {
                return Some(format!(
                    "other trajectories or reads of question '{}' in stratum '{}'",
                    clip(x.0),
                    clip(name)
                ));
            }
        }
    }
    None
}
