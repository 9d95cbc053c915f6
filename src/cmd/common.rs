//! Flags and output helpers shared by several commands.

use clap::builder::TypedValueParser as _;
use clap::ValueEnum;
use ragstats_core::import::{Balance, PanelSettings};
use ragstats_core::panel::{LoadOptions, Panel, SelectorChoice, Source};
use ragstats_core::table::{format_number, Cell, Precision, Table as CoreTable};
pub use ragstats_core::table::{Table, UNDEFINED};
use std::path::PathBuf;

/// Output format of a command's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// Human-readable table.
    #[default]
    Table,
    /// One JSON document.
    Json,
    /// Comma-separated values.
    Csv,
}

impl Format {
    /// A flag parser that takes only the formats in `allowed`: a command without a CSV form
    /// refuses `--format csv` when the flags are read, naming what it takes, rather than
    /// having a second format enum.
    pub fn parser(
        allowed: &'static [Format],
    ) -> impl clap::builder::TypedValueParser<Value = Format> {
        clap::builder::PossibleValuesParser::new(
            allowed.iter().filter_map(ValueEnum::to_possible_value),
        )
        .map(|name| Format::from_str(&name, false).expect("a possible value names a Format"))
    }
}

/// How to turn a panel file into outcomes (shared by every command that reads panels).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PanelOptions {
    /// Score column to analyse (default: `f1` if present, else the only non-key column).
    #[arg(long, value_name = "COLUMN")]
    pub metric: Option<String>,
    /// Analyse the paired contrast score(B) − score(A), e.g. `adaptive-open`.
    #[arg(long, value_name = "B-A")]
    pub contrast: Option<String>,
    /// Analyse one arm of a multi-arm panel.
    #[arg(long, value_name = "NAME", conflicts_with = "contrast")]
    pub arm: Option<String>,
    /// Drop questions that differ from their stratum's design (missing, extra or unpaired
    /// cells; each listed on stderr) instead of fitting them by REML or failing.
    #[arg(long)]
    pub drop_incomplete: bool,
    /// With --contrast: score a cell's missing arm as X (the reader never answered) instead
    /// of dropping the cell (the default: only the unpaired cell is dropped, and the
    /// unbalanced panel is fitted by REML).
    #[arg(
        long,
        value_name = "X",
        requires = "contrast",
        allow_hyphen_values = true
    )]
    pub failure_score: Option<f64>,
    /// With a `selector` column: analyse one selector's rows, or `average`: per question ×
    /// trajectory × read cell the mean over the panel's selectors (then arms are
    /// contrasted). The default when the panel has several selectors is `average`.
    #[arg(long, value_name = "NAME|average")]
    pub selector: Option<SelectorChoice>,
    /// Column names, duplicates and uneven question pools.
    #[command(flatten)]
    pub shape: ShapeFlags,
    /// How an evaluation log read as the panel maps onto one (see `stats import`).
    #[command(flatten)]
    pub import: ImportFlags,
}

/// How a panel's table is read into cells, for tables not written for ragstats (shared by
/// every command that reads a panel, `stats compare` included).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ShapeFlags {
    /// The file's columns that play the panel's roles, e.g.
    /// `question=question_id,arm=model,dataset=task` (roles: question, arm, dataset,
    /// trajectory, read, cluster).
    #[arg(long, value_name = "ROLE=COLUMN,…")]
    pub columns: Option<ragstats_core::panel::ColumnMap>,
    /// Keep, in each stratum, only the questions every arm has (each arm's dropped count is
    /// noted): for arms evaluated on different question pools.
    #[arg(long)]
    pub common_questions: bool,
    /// Several rows for one cell: `error` (the default) lists them; `mean` averages them;
    /// `first` keeps the first in file order.
    #[arg(long, value_name = "error|mean|first", default_value = "error")]
    pub duplicates: ragstats_core::panel::Duplicates,
    /// Weights of the strata in the combined estimate Σ w_d·ȳ_d: a CSV file
    /// `dataset,weight` (normalised to sum 1; every stratum needs one), or `size` (each
    /// stratum's share of the questions: the pooled mean). Default: equal.
    #[arg(long, value_name = "FILE|size")]
    pub weights: Option<ragstats_core::panel::Weights>,
    /// The column naming each question's cluster (e.g. its source article): questions are
    /// nested in clusters within strata, and the cluster is the unit sampled. A question in
    /// two clusters, or a cluster in two strata, is an error.
    #[arg(long, value_name = "COLUMN")]
    pub cluster: Option<String>,
}

/// The commands whose estimate combines strata, and so take `--weights` (docs/panels.md
/// says what it does in each).
const WEIGHTED_COMMANDS: &str = "variance, bootstrap, compare, forecast, plan, allocate, \
     efficiency, subsets, consistency, coverage and report";

impl ShapeFlags {
    /// Refuses `--weights` for a command where stratum weights have no meaning (rather than
    /// ignoring them): `why` says, in the user's words, what the command does instead of
    /// combining strata.
    pub fn refuse_weights(&self, command: &str, why: &str) -> Result<(), super::UsageError> {
        match &self.weights {
            Some(_) => Err(super::UsageError(format!(
                "--weights: stats {command} {why}; the commands that combine strata take it \
                 ({WEIGHTED_COMMANDS})"
            ))),
            None => Ok(()),
        }
    }

    /// These flags set on `opts`.
    pub fn apply(&self, opts: LoadOptions) -> LoadOptions {
        LoadOptions {
            columns: self.columns.clone().unwrap_or_default(),
            common_questions: self.common_questions,
            duplicates: self.duplicates,
            cluster: self.cluster.clone(),
            ..opts
        }
    }
}

impl PanelOptions {
    /// The library's settings for these flags: how the panel is read.
    pub fn settings(&self) -> PanelSettings {
        PanelSettings {
            metric: self.metric.clone(),
            contrast: self.contrast.clone(),
            arm: self.arm.clone(),
            drop_incomplete: self.drop_incomplete,
            failure_score: self.failure_score,
            selector: self.selector.clone(),
            columns: self.shape.columns.clone(),
            common_questions: self.shape.common_questions,
            duplicates: self.shape.duplicates,
            weights: self.shape.weights.clone(),
            cluster: self.shape.cluster.clone(),
            logs: self.import.mapping(),
        }
    }

    /// Loads the panel `source` holds, keeping unbalanced strata nested (for analyses that
    /// fit them by REML), and prints the library's loading notes on stderr
    /// ([`ragstats_core::import::PanelSettings::loading_notes`]): the loader's notes, unpaired
    /// cells, the selector average, dropped questions, and the questions that differ from
    /// their stratum's design.
    pub fn load_unbalanced_noting(&self, source: &Source) -> ragstats_core::Result<Panel> {
        let settings = self.settings();
        let panel = settings.load(source, Balance::Fitted)?;
        for n in settings.loading_notes(&panel, true) {
            eprintln!("{n}");
        }
        Ok(panel)
    }
}

/// `--by`: report one section per value of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// One section per selector (the panel's `selector` column, or the ledger rows' `selector`
    /// field for `stats cost`), then their average.
    Selector,
}

/// Formats a number for tables: fixed 6 decimals for ordinary magnitudes, scientific for tiny ones.
pub use ragstats_core::table::number as num;

/// `v` with `decimals` fixed decimals, or `undefined` when it is not finite.
pub fn fixed(v: f64, decimals: usize) -> String {
    format_number(v, Precision::Fixed(decimals))
}

/// `undefined (reason)`: how text output shows a value that is not defined and why.
pub fn undefined_because(reason: &str) -> String {
    Cell::undefined_because(reason).display()
}

/// Writes rows as CSV to stdout (through the one table model, [`CoreTable::to_csv`]).
pub fn write_csv(header: &[&str], rows: &[Vec<String>]) -> anyhow::Result<()> {
    let mut t = CoreTable::new(header);
    for r in rows {
        t.row(r.iter().cloned());
    }
    write_table_csv(&t)
}

/// Writes a table as CSV to stdout.
pub fn write_table_csv(t: &CoreTable) -> anyhow::Result<()> {
    super::out::write_bytes(t.to_csv().as_bytes())?;
    Ok(())
}

/// Prints a serialisable value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    super::out::write_bytes(text.as_bytes())?;
    Ok(())
}

/// The `--help` heading of the mapping flags. (Each flag names it: a struct's
/// `next_help_heading` would carry over to the flags after it in the command.)
const HEADING: &str = "Evaluation logs (inspect_ai, lm-eval)";

/// How evaluation logs map onto a panel (shared by `stats import` and every panel command).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ImportFlags {
    /// Where `dataset` comes from: `task`, or `metadata:KEY` (a sample's metadata field;
    /// lm-eval: a field of `doc`). Default: the task, when every log is of one task.
    #[arg(help_heading = HEADING, long, value_name = "task|metadata:KEY")]
    pub dataset_from: Option<ragstats_core::import::DatasetFrom>,
    /// Where `arm` comes from: the model (default), the task, the solver chain, or a
    /// metadata field.
    #[arg(help_heading = HEADING, long, value_name = "model|task|solver|metadata:KEY")]
    pub arm_from: Option<ragstats_core::import::ArmFrom>,
    /// Keep only this scorer's score column(s) (inspect: a scorer name, or `scorer.key` of
    /// a dict-valued score; lm-eval: a metric). Repeatable; default: every score.
    #[arg(help_heading = HEADING, long = "score", value_name = "NAME")]
    pub scores: Vec<String>,
    /// Write a `cluster` column from this metadata key.
    #[arg(help_heading = HEADING, long, value_name = "KEY")]
    pub cluster_from: Option<String>,
    /// Score samples that have an error or no score as X (e.g. 0) instead of leaving them
    /// out (they are listed either way).
    #[arg(help_heading = HEADING, long, value_name = "X", allow_negative_numbers = true)]
    pub missing_as: Option<f64>,
    /// lm-eval: read the rows of this filter (e.g. `strict-match`); needed when a samples
    /// file holds several.
    #[arg(help_heading = HEADING, long = "filter", value_name = "NAME")]
    pub lm_filter: Option<String>,
}

impl ImportFlags {
    /// The library's log mapping for these flags.
    pub fn mapping(&self) -> ragstats_core::import::LogMapping {
        ragstats_core::import::LogMapping {
            dataset_from: self.dataset_from.clone(),
            arm_from: self.arm_from.clone(),
            score: self.scores.clone(),
            cluster_from: self.cluster_from.clone(),
            missing_as: self.missing_as,
            filter: self.lm_filter.clone(),
        }
    }
}

/// Human labels of a judged panel (`--labels`), and how PPI++ uses them (docs/judges.md).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LabelOptions {
    /// Human scores of a uniformly random subset of the panel's questions (CSV or JSONL: the
    /// panel's key columns and a score column, e.g. from `stats labels sample`); the panel's
    /// metric is then a judge's, and the estimate the PPI++ estimate of the human-scale mean.
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// The labels' score column (default: the panel's metric).
    #[arg(long, value_name = "COLUMN")]
    pub label_metric: Option<String>,
    /// The judge's weight λ in [0, 1] (1: plain PPI, 0: the labels alone; default:
    /// power-tuned, PPI++).
    #[arg(long, value_name = "X")]
    pub ppi_lambda: Option<f64>,
}

impl LabelOptions {
    /// The library's label settings for these flags.
    pub fn settings(&self) -> ragstats_core::analyses::LabelSettings {
        ragstats_core::analyses::LabelSettings {
            label_metric: self.label_metric.clone(),
            ppi_lambda: self.ppi_lambda,
        }
    }
}
