//! `stats plan`: the least-cost allocation (Q, T, R) for a target SE or a minimum detectable
//! difference, the least-SE allocation for a budget, or the SE, MDE and power of a given
//! design, from an audit's components and unit costs, with a bootstrap interval of the plan
//! (the analysis: [`ragstats_core::allocation::planner_report::plan`]).

mod args;
use crate::cmd::render::Emit as _;

use ragstats_core::allocation::planner_report::{plan, PlanCosts, PlanJob, PlanReport};
use ragstats_core::components::forecast::Audit;
use ragstats_core::costs::accounting::PricedLedger;
use ragstats_core::ledger::{read_ledger, Prices};
use ragstats_core::resample::cpu::CpuBackend;
use ragstats_core::resample::engine::ResampleBackend;

pub use args::{Args, BoundsArgs};

use super::efficiency::CurrencyArg;
use super::render::Finished;
use super::resample::Progress;
use super::variance::report_for;
use super::UsageError;

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(args.format)
}

/// What `stats plan` prints for `args`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    super::common::with_audit_paths(&args.audit, || outcome_of(args))
}

/// [`outcome`] with the audit (and the logs read with it) readable by its first path.
fn outcome_of(args: &Args) -> anyhow::Result<Finished> {
    let out = compute(args)?;
    let notes = out.notes.clone();
    let inputs = super::common::audit_input(&args.audit);
    let inputs = inputs
        .with_opt("components", args.components.as_ref().map(|p| p.display()))
        .with_opt("ledger", args.ledger.as_ref().map(|p| p.display()))
        .with_opt("prices", args.prices.as_ref().map(|p| p.display()));
    Ok(crate::cmd::render::finished("plan", inputs, out).with_csv_notes(&notes))
}

/// Loads the audit (an audit panel, or a components file), prices it, and plans.
pub fn compute(args: &Args) -> anyhow::Result<PlanReport> {
    let goal = args.goal()?;
    let currency = args.cost_currency()?;
    // The audit: components, and the panel when there is one (for costs and the bootstrap).
    let (audit, panel) = match (args.audit.first(), &args.components) {
        (Some(path), _) => {
            // Ledger costs are matched to each question's own cells, so an unbalanced audit
            // is priced like a balanced one.
            let p = args.opts.load_unbalanced_noting(path)?;
            (Audit::from_report(&report_for(&p)?), Some(p))
        }
        (None, Some(path)) => {
            if args.ledger.is_some() {
                return Err(UsageError(
                    "--ledger is matched to the audit panel's cells: give --audit PANEL, or --unit-costs with --components".into(),
                )
                .into());
            }
            let audit = args
                .opts
                .weigh_components(Audit::read_components(path)?, path)?;
            (audit, None)
        }
        (None, None) => {
            return Err(UsageError("give --audit PANEL or --components FILE".into()).into())
        }
    };
    // Per-question costs of a balanced audit, or every trajectory's and read's cost of an
    // unbalanced one.
    let costs = match (&args.ledger, &panel) {
        (Some(ledger), Some(p)) => {
            let entries = read_ledger(ledger)?;
            let prices = args.prices.as_deref().map(Prices::read).transpose()?;
            let priced = PricedLedger {
                entries: &entries,
                path: ledger,
                prices: prices.as_ref(),
                prices_path: args.prices.as_deref(),
            };
            let cells =
                priced.cell_costs(p.selector.as_deref(), currency.budget(args.search_price))?;
            PlanCosts::of_panel(p, &cells, ledger)?
        }
        _ => args.unit_costs.map_or(PlanCosts::None, PlanCosts::Given),
    };
    let shares = args.shares.as_deref().map(args::parse_shares).transpose()?;
    // The engine resamples only an audit panel; a components file plans without one.
    let (replicates, engine): (u32, Box<dyn ResampleBackend>) = match &panel {
        Some(p) => {
            let reps = args.resample.replicates()?;
            let draws = u64::from(reps) * p.strata.iter().map(|s| s.q() as u64).sum::<u64>();
            (reps, args.resample.engine(draws)?)
        }
        None => (args.resample.replicates, Box::new(CpuBackend::new())),
    };
    let settings = PlanJob {
        goal,
        unit: match currency {
            CurrencyArg::Tokens => "tokens",
            CurrencyArg::Usd => "USD",
        }
        .into(),
        alpha: args.alpha.get(),
        power: args.power.get(),
        difference: args.difference,
        shares,
        bounds: args.bounds.bounds()?,
        runners_up: args.runners_up,
        resampling: args.resample.resampling_of(replicates),
        question_cost: args.question_cost,
    };
    let progress = Progress::new(u64::from(replicates), "plan");
    let mut report = plan(
        &audit,
        panel.as_ref(),
        &costs,
        &settings,
        engine.as_ref(),
        &|d| progress.set(d),
    )?;
    progress.finish();
    report.ledger = args.ledger.clone();
    Ok(report)
}
