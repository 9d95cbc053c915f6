//! `stats plan`: the least-cost allocation (Q, T, R) for a target SE or a minimum detectable
//! difference, the least-SE allocation for a budget, or the SE, MDE and power of a given
//! design, from an audit's components and unit costs, with a bootstrap interval of the plan
//! (the analysis: [`ragstats_core::analyses::plan`]).

mod args;
use crate::cmd::render::Emit as _;

use ragstats_core::analyses::{plan, GivenUnitCosts, PlanSettings, Shares};
use ragstats_core::panel::Source;

pub use args::{Args, BoundsArgs};

use super::render::Finished;
use super::resample::with_bars;

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> PlanSettings {
    PlanSettings {
        panel: args.opts.settings(),
        target_se: args.target_se,
        mde: args.mde,
        budget_tokens: args.budget_tokens,
        budget_usd: args.budget_usd,
        questions: args.questions,
        trajectories: args.trajectories,
        reads: args.reads,
        unit_costs: args.unit_costs.clone().map(GivenUnitCosts::Text),
        question_cost: args.question_cost,
        cluster_cost: args.cluster_cost,
        max_per_cluster: args.max_per_cluster,
        currency: args.currency.map(Into::into),
        search_price: args.search_price,
        difference: args.difference,
        alpha: args.alpha,
        power: args.power,
        shares: args.shares.clone().map(Shares::Text),
        bounds: args.bounds.settings(),
        runners_up: args.runners_up,
        resample: args.resample.settings(),
        label_cost: args.label_cost,
        min_labels: args.min_labels,
        judged: args.labels.settings(),
    }
}

/// What `stats plan` prints for `args`: the library's [`plan`] from `--audit` (the logs
/// read as one audit) or `--components`, priced from `--ledger` or `--unit-costs`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let audit = args
        .audit
        .split_first()
        .map(|(first, more)| Source::files(first, more));
    let components = args.components.as_ref().map(Source::file);
    let labels = args.labels.labels.as_ref().map(Source::file);
    let ledger = args.ledger.as_ref().map(Source::file);
    let prices = args.prices.as_ref().map(Source::file);
    let done = with_bars(|progress| {
        plan(
            audit.as_ref(),
            components.as_ref(),
            labels.as_ref(),
            ledger.as_ref(),
            prices.as_ref(),
            &settings(args),
            &ragstats_gpu::Engines,
            progress,
        )
    });
    Ok(done?)
}
