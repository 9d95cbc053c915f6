//! `stats allocate`: nested allocations of one master panel compared on SE, cost, and
//! variance × cost, with paired bootstrap intervals. The comparison, priced from the
//! ledger, is [`ragstats_core::allocation::allocate::allocate`]; the tables are in [`tables`].

use std::path::PathBuf;

use ragstats_core::allocation::allocate::{
    allocate, AllocateReport, AllocateSettings, AllocationSpec,
};
use ragstats_core::components::reml::Shape;
use ragstats_core::components::variance::nested_stratum;
use ragstats_core::costs::accounting::PricedLedger;
use ragstats_core::ledger::{read_ledger, Prices};

use super::common::{Format, PanelOptions, Table};
use super::cost::parse_sweep;
use super::render::{emit, Rendered};
use super::resample::{Progress, ResampleArgs};
use super::UsageError;

mod tables;

/// Flags of `stats allocate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Master panel (CSV or JSONL); every allocation is a nested sub-panel of it.
    pub panel: PathBuf,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Cost ledger of the master panel.
    #[arg(long, value_name = "FILE")]
    pub ledger: PathBuf,
    /// Prices (TOML) for the fee comparisons.
    #[arg(long, value_name = "FILE")]
    pub prices: PathBuf,
    /// An allocation NAME=Q:T:R (Q split over strata in the master panel's shares). Repeat.
    #[arg(long = "allocation", value_name = "NAME=Q:T:R", required = true)]
    pub allocations: Vec<String>,
    /// Take questions in a seeded shuffled order instead of file order.
    #[arg(long, value_name = "S")]
    pub order_seed: Option<u64>,
    /// Search prices to sweep, USD per 1,000 requests (default: the prices file's sweep).
    #[arg(long, value_name = "SWEEP")]
    pub search_price: Option<String>,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the variance × fees ratio of each pair across the search-price sweep, with
    /// bootstrap bands (unresolved ratios hollow), as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let out = compute(&args)?;
    if let Some(p) = &args.plot {
        let boot = Some((out.seed, u64::from(out.replicates)));
        let caption = super::figure::panel_caption(&args.panel, &out.outcome, boot);
        let svg = ragstats_plot::allocate(&out.report, &caption)?;
        let inputs = [args.panel.as_path(), &args.ledger, &args.prices];
        super::figure::write_svg(p, &svg, &inputs)?;
    }
    let inputs = ragstats_core::document::Inputs::new()
        .with("panel", args.panel.display())
        .with("ledger", args.ledger.display())
        .with("prices", args.prices.display());
    emit(&out, args.format, "allocate", inputs)
}

/// What `stats allocate` found: the comparison and the run it came from.
pub struct AllocateOutput {
    /// The resampling backend's name and the adapter it ran on.
    pub backend: String,
    pub adapter: String,
    pub replicates: u32,
    pub seed: u64,
    /// The intervals' confidence as the text shows it (`95%`).
    pub confidence: String,
    /// The analysed outcome (figure captions name it).
    pub outcome: String,
    /// An unbalanced master panel's design per stratum (`None` when it is balanced).
    pub master: Option<Vec<MasterStratum>>,
    pub report: AllocateReport,
}

/// One stratum of an unbalanced master panel: whether it is balanced, and its design
/// (questions, and min/mean/max trajectories per question and reads per trajectory).
pub struct MasterStratum {
    pub name: String,
    pub balanced: bool,
    pub shape: Option<Shape>,
}

/// Loads the panel, ledger and prices `args` names and compares the allocations.
pub fn compute(args: &Args) -> anyhow::Result<AllocateOutput> {
    let reps = args.resample.replicates()?;
    let specs: Vec<AllocationSpec> = args
        .allocations
        .iter()
        .map(|a| a.parse())
        .collect::<ragstats_core::Result<_>>()?;
    if specs.len() < 2 {
        return Err(UsageError("give at least two --allocation to compare".into()).into());
    }
    let panel = args.opts.load_unbalanced_noting(&args.panel)?;
    let entries = read_ledger(&args.ledger)?;
    let prices = Prices::read(&args.prices)?;
    let settings = AllocateSettings {
        order_seed: args.order_seed,
        search_prices: args.search_price.as_deref().map(parse_sweep).transpose()?,
        resampling: args.resample.resampling_of(reps),
    };
    let ledger = PricedLedger {
        entries: &entries,
        path: &args.ledger,
        prices: Some(&prices),
        prices_path: Some(&args.prices),
    };
    let n = specs.len() as u64;
    let engine = args
        .resample
        .engine(u64::from(reps) * n * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>())?;
    let progress = Progress::new(u64::from(reps) * n, "allocate");
    let report = allocate(&panel, &specs, &ledger, &settings, engine.as_ref(), &|d| {
        progress.set(d)
    })?;
    progress.finish();
    let master = (!panel.strata.iter().all(|s| s.is_balanced())).then(|| {
        panel
            .strata
            .iter()
            .map(|s| MasterStratum {
                name: s.name.clone(),
                balanced: s.is_balanced(),
                shape: nested_stratum(s).map(|n| n.shape()).ok(),
            })
            .collect()
    });
    Ok(AllocateOutput {
        backend: engine.name().into(),
        adapter: engine.description(),
        replicates: reps,
        seed: args.resample.seed,
        confidence: args.resample.confidence.percent(),
        outcome: panel.outcome,
        master,
        report,
    })
}

impl Rendered for AllocateOutput {
    fn text(&self) -> String {
        tables::text(self)
    }

    fn csv(&self) -> Table {
        tables::csv(&self.report)
    }

    fn body(&self) -> serde_json::Value {
        tables::json(self)
    }
}
