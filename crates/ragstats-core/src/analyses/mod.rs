//! The front door: one call per analysis, from its inputs ([`Source`]s) and its settings
//! (a `…Settings` type checked by the call, deserializable from the Python bindings'
//! keywords) to a [`Finished`] result — the report shown each way, its document's envelope,
//! its notes. The `stats` command turns its flags into the same settings and makes the same
//! call; the Python bindings build the settings from keywords. Naming rule: the function is
//! the command's name (`stats variance` → [`variance`]), its settings type the command's
//! name in CamelCase with `Settings`.
//!
//! A figure is drawn above this crate (`ragstats-plot`): a call that can draw one takes a
//! [`Draw`] of its report and puts the SVG in the result.
//!
//! [`Source`]: crate::panel::Source
//! [`Finished`]: crate::document::Finished

use crate::allocation::walk::WalkBackend;
use crate::correlate::permute::PermuteBackend;
use crate::resample::{Backend, ResampleBackend};

mod allocate;
mod bootstrap;
mod compare;
mod consistency;
mod correlate;
mod cost;
mod coverage;
mod efficiency;
mod forecast;
mod gate;
mod import;
mod label_plan;
mod labels;
mod mcq;
mod merge;
mod plan;
mod ppi_family;
mod priced;
mod score_answers;
mod sequential;
mod simulate;
mod slice;
mod subsets;
mod variance;

pub use crate::qa_scoring::qa_items::AnswerSettings as ScoreAnswersSettings;
pub use allocate::{allocate, AllocateSettings, DrawAllocate, QuestionCosts};
pub use bootstrap::{bootstrap, BootstrapSettings, ReplicateRange};
pub use compare::{compare, compare_report, CompareSettings};
pub use consistency::{consistency, consistency_report, ConsistencySettings};
pub use correlate::{correlate, correlate_report, CorrelateSettings, MAX_PERMUTATIONS};
pub use cost::{cost, CostSettings, SearchPrices};
pub use coverage::{coverage, AnalysisChoice, CoverageSettings, GeneratorChoice};
pub use efficiency::{efficiency, DrawEfficiency, EfficiencySettings};
pub use forecast::{forecast, DrawForecast, ForecastSettings};
pub use gate::{gate, gate_report, GateSettings};
pub use import::{import, ImportSettings};
pub use labels::{
    judged, judged_compare, labelled_units, labels_agreement, labels_sample, LabelSettings,
    LabelsAgreementSettings, LabelsSampleSettings,
};
pub use mcq::{
    mcq_agree, mcq_compare, mcq_compare_report, mcq_cost, mcq_filter, mcq_score, mcq_score_report,
    mcq_validate, McqAgreeSettings, McqBootSettings, McqCompareSettings, McqFilterSettings,
    McqScoreSettings,
};
pub use merge::{merge, MergeSettings};
pub use plan::{plan, GivenUnitCosts, PlanSettings, Shares};
pub use priced::{CostUnit, SearchBounds};
pub use score_answers::score_answers;
pub use sequential::{
    sequential, sequential_report, sequential_report_planned, ScoreRange, SequenceShape,
    SequentialSettings,
};
pub use simulate::{simulate, Means, SimulateSettings, Strata};
pub use slice::{slice, SliceSettings};
pub use subsets::{audit_of, subsets, SubsetsSettings};
pub use variance::{variance, VarianceSettings};

/// Where an analysis gets its engines: the front end's (the CPU, or a GPU through
/// `ragstats-gpu`), asked with the user's backend choice and the job's size (`auto` keeps
/// small jobs on the CPU).
pub trait Engines: Sync {
    /// The resampling engine for a job of `draws` draws on `backend`.
    ///
    /// # Errors
    /// When `backend` asks for a GPU that cannot be had.
    fn resampler(&self, backend: Backend, draws: u64) -> crate::Result<Box<dyn ResampleBackend>>;

    /// The permutation engine on `backend`; `None`: permute on the CPU.
    ///
    /// # Errors
    /// When `backend` asks for a GPU that cannot be had.
    fn permuter(&self, backend: Backend) -> crate::Result<Option<Box<dyn PermuteBackend>>>;

    /// The engine of the exact-size paired walk (the allocations' bootstrap) for a job of
    /// `draws` draws on `backend`.
    ///
    /// # Errors
    /// When `backend` asks for a GPU that cannot be had.
    fn walker(&self, backend: Backend, draws: u64) -> crate::Result<Box<dyn WalkBackend>>;
}

/// The engines of this crate alone: every job on the CPU, and a GPU asked for is an error.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuEngines;

impl Engines for CpuEngines {
    fn resampler(&self, backend: Backend, _draws: u64) -> crate::Result<Box<dyn ResampleBackend>> {
        match backend {
            Backend::Gpu => Err(crate::Error::setting(
                "backend",
                "gpu: this build has no GPU engines (ragstats-gpu supplies them)",
            )),
            _ => Ok(Box::new(crate::resample::CpuBackend::new())),
        }
    }

    fn permuter(&self, backend: Backend) -> crate::Result<Option<Box<dyn PermuteBackend>>> {
        self.resampler(backend, 0).map(|_| None)
    }

    fn walker(&self, backend: Backend, _draws: u64) -> crate::Result<Box<dyn WalkBackend>> {
        self.resampler(backend, 0)
            .map(|_| Box::new(crate::allocation::walk::CpuWalk) as _)
    }
}

/// How a long analysis reports how far it is: `(work, done, total)`, `work` naming the
/// stage (`bootstrap`, `permutations`). It may unwind to stop the work (the Python bindings
/// do, on Ctrl-C).
pub type Progress<'a> = &'a (dyn Fn(&str, u64, u64) + Sync);

/// Draws an analysis's figure (an SVG document) from its report; `None`: no figure asked for.
pub type Draw<'a, R> = Option<&'a dyn Fn(&R) -> crate::Result<String>>;

/// The envelope's inputs with `source` in `role`: a file's path, a table's name, or the list
/// of files read as one set.
pub fn source_input(
    inputs: crate::document::Inputs,
    role: &str,
    source: &crate::panel::Source,
) -> crate::document::Inputs {
    match source.names().as_slice() {
        [one] => inputs.with(role, one),
        all => inputs.with_all(role, all),
    }
}

/// [`source_input`] of an optional input: `inputs` unchanged when there is none.
pub fn source_input_opt(
    inputs: crate::document::Inputs,
    role: &str,
    source: Option<&crate::panel::Source>,
) -> crate::document::Inputs {
    match source {
        Some(s) => source_input(inputs, role, s),
        None => inputs,
    }
}

/// The unpaired cells of `panel` as the document's `run.unpaired_cells` says them
/// (`{"dropped": n, "scored": m}`; `None` when there are none).
pub fn unpaired_cells(panel: &crate::panel::Panel) -> Option<serde_json::Value> {
    unpaired_json(crate::import::unpaired_counts(panel))
}

/// `(dropped, scored)` unpaired cells as `run.unpaired_cells` says them.
pub fn unpaired_json((dropped, scored): (usize, usize)) -> Option<serde_json::Value> {
    (dropped + scored > 0).then(|| serde_json::json!({"dropped": dropped, "scored": scored}))
}

/// The audit an analysis was given: a panel (fitted as the variance analysis fits it) or a
/// components document (the variance analysis's JSON report).
enum AuditInput<'a> {
    Panel(&'a crate::panel::Source),
    Components(&'a crate::panel::Source),
}

/// Which audit of `audit` and `components` was given: exactly one must be.
///
/// # Errors
/// [`crate::Error::Usage`] for neither or both.
fn audit_input<'a>(
    audit: Option<&'a crate::panel::Source>,
    components: Option<&'a crate::panel::Source>,
) -> crate::Result<AuditInput<'a>> {
    match (audit, components) {
        (Some(a), None) => Ok(AuditInput::Panel(a)),
        (None, Some(c)) => Ok(AuditInput::Components(c)),
        (Some(_), Some(_)) => Err(crate::Error::Usage(
            "give an audit panel or a components document, not both".into(),
        )),
        (None, None) => Err(crate::Error::Usage(
            "give an audit panel or a components document (the variance analysis's JSON \
             report)"
                .into(),
        )),
    }
}

/// Why the output file `out` may not be written: it is one of `inputs` (in the role
/// `role`), which writing it would destroy; `None` when it is none of them.
fn overwrites(out: &std::path::Path, role: &str, inputs: &[std::path::PathBuf]) -> Option<String> {
    let inputs: Vec<(&str, &std::path::Path)> =
        inputs.iter().map(|p| (role, p.as_path())).collect();
    crate::io::refuse_overwriting_inputs(&[("output", out)], &inputs)
        .err()
        .map(|e| {
            let m = e.to_string();
            m.strip_prefix("output ").unwrap_or(&m).to_string()
        })
}

/// What the front doors' unit tests share: the demo data as sources, and a setting error
/// taken apart.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::document::Finished;
    use crate::panel::Source;
    use crate::{Error, Result};

    /// The shipped demo file `name` (`panel.csv`, `ledger.jsonl`, `prices.toml`).
    pub fn demo(name: &str) -> Source {
        Source::file(format!(
            "{}/../../data/demo/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
    }

    /// The setting and message of a setting error; any other outcome fails the test.
    pub fn setting_of(r: Result<Finished>) -> (&'static str, String) {
        match r.map(|_| ()) {
            Err(Error::Setting { setting, msg }) => (setting, msg),
            other => panic!("expected a setting error, got {other:?}"),
        }
    }
}
