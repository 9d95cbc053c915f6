//! `allocate`: nested allocations of one master panel compared on SE, cost, and variance ×
//! cost, with paired bootstrap intervals, priced from the master panel's ledger
//! ([`crate::allocation::allocate::allocate`]).

use serde::Deserialize;

use super::{source_input, unpaired_cells, Engines, Progress, SearchPrices};
use crate::allocation::allocate::{
    allocate as compare, AllocateJob, AllocateReport, AllocationSpec,
};
use crate::costs::accounting::PricedLedger;
use crate::document::{Figure, Finished, Inputs};
use crate::import::{Balance, PanelSettings};
use crate::io::from_text::one_or_many;
use crate::ledger::{read_ledger_from, Prices};
use crate::panel::Source;
use crate::resample::ResampleSettings;
use crate::{Error, Result};

/// A cost per question in tokens and in dollars: text `TOKENS,USD` (or `TOKENS`, dollars
/// 0), one number (tokens), or a list `[tokens]` / `[tokens, usd]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum QuestionCosts {
    /// Tokens only.
    Tokens(f64),
    /// `TOKENS,USD` or `TOKENS`.
    Text(String),
    /// `[tokens]` or `[tokens, usd]`.
    List(Vec<f64>),
}

impl QuestionCosts {
    /// The costs `[tokens, usd]`, each non-negative and finite.
    ///
    /// # Errors
    /// [`Error::Setting`] naming `question_cost` for anything else.
    pub fn pair(&self) -> Result<[f64; 2]> {
        let (shown, v) = match self {
            QuestionCosts::Tokens(t) => (t.to_string(), vec![*t]),
            QuestionCosts::List(l) => (
                l.iter().map(f64::to_string).collect::<Vec<_>>().join(","),
                l.clone(),
            ),
            QuestionCosts::Text(s) => {
                let v: Option<Vec<f64>> =
                    s.split(',').map(|x| x.trim().parse::<f64>().ok()).collect();
                (s.clone(), v.unwrap_or_default())
            }
        };
        let bad = || {
            Error::setting(
                "question_cost",
                format!("'{shown}': expected TOKENS,USD (or TOKENS), non-negative numbers"),
            )
        };
        if !v.iter().all(|x| x.is_finite() && *x >= 0.0) {
            return Err(bad());
        }
        match v[..] {
            [t] => Ok([t, 0.0]),
            [t, u] => Ok([t, u]),
            _ => Err(bad()),
        }
    }
}

/// The settings of [`allocate`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct AllocateSettings {
    /// How the master panel is read (unbalanced strata are kept as they are).
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// The allocations to compare, `NAME=Q:T:R` each (Q split over the strata in the master
    /// panel's shares); at least two.
    #[serde(deserialize_with = "one_or_many")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::io::from_text::TextOrList")
    )]
    pub allocation: Vec<String>,
    /// Take each stratum's questions in a shuffled order drawn from this seed instead of
    /// the panel's order.
    pub order_seed: Option<u64>,
    /// Search prices to compare the fees at, USD per 1,000 requests (default: the prices'
    /// sweep, else their point price).
    pub search_price: Option<SearchPrices>,
    /// A cost per question (judging, annotation, set-up) added to every allocation's
    /// questions, in tokens and in dollars.
    pub question_cost: Option<QuestionCosts>,
    /// The paired bootstrap's replicates, seed, backend and confidence level.
    #[serde(flatten)]
    pub resample: ResampleSettings,
}

/// Draws the figure of [`allocate`] from the analysed outcome and the report.
pub type DrawAllocate<'a> = Option<&'a dyn Fn(&str, &AllocateReport) -> Result<String>>;

/// The allocations `settings.allocation` of the master panel `panel` compared on SE, cost
/// and variance × cost, with paired bootstrap intervals, their costs priced from the
/// ledger `ledger` with the prices `prices`; `draw` adds the figure of the variance × fees
/// ratios across the search prices.
///
/// # Errors
/// [`Error::Setting`] for fewer than two allocations, one that does not parse, a bad search
/// price or question cost, and the resampling settings' errors; those of loading the
/// inputs and of the comparison (an allocation the master panel cannot hold).
pub fn allocate(
    panel: &Source,
    ledger: &Source,
    prices: &Source,
    settings: &AllocateSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
    draw: DrawAllocate<'_>,
) -> Result<Finished> {
    let s = settings;
    let resampling = s.resample.resampling()?;
    let specs: Vec<AllocationSpec> = s
        .allocation
        .iter()
        .map(|a| {
            a.parse().map_err(|e: Error| match e {
                Error::Usage(m) => Error::setting("allocation", m),
                other => other,
            })
        })
        .collect::<Result<_>>()?;
    if specs.len() < 2 {
        return Err(Error::setting(
            "allocation",
            "give at least two allocations to compare",
        ));
    }
    let job = AllocateJob {
        order_seed: s.order_seed,
        search_prices: s
            .search_price
            .as_ref()
            .map(SearchPrices::prices)
            .transpose()?,
        resampling,
        question_cost: s
            .question_cost
            .as_ref()
            .map_or(Ok([0.0, 0.0]), QuestionCosts::pair)?,
    };
    let loaded = s.panel.load(panel, Balance::Fitted)?;
    let entries = read_ledger_from(ledger)?;
    let prices_read = Prices::from_source(prices)?;
    let priced = PricedLedger {
        entries: &entries,
        path: ledger.name(),
        prices: Some(&prices_read),
        prices_path: Some(prices.name()),
    };
    let n = specs.len() as u64;
    // The exact-size paired walk runs on its own engine, CPU or GPU (the same sums bit for
    // bit); `auto` keeps a small job on the CPU, as every engine does.
    let draws = u64::from(resampling.replicates)
        * n
        * loaded.strata.iter().map(|s| s.q() as u64).sum::<u64>();
    let walk = engines.walker(s.resample.backend, draws)?;
    let total = u64::from(resampling.replicates) * n;
    let report = compare(&loaded, &specs, &priced, &job, walk.as_ref(), &|d| {
        progress("allocate", d, total)
    })?;
    let figure = match draw {
        Some(draw) => {
            let files: Vec<&std::path::Path> = panel
                .paths()
                .iter()
                .chain(ledger.paths())
                .chain(prices.paths())
                .map(|p| p.as_path())
                .collect();
            Some(Figure::new(draw(&loaded.outcome, &report)?, &files))
        }
        None => None,
    };
    let inputs = source_input(
        source_input(
            source_input(Inputs::new(), "panel", panel),
            "ledger",
            ledger,
        ),
        "prices",
        prices,
    );
    let notes = report.notes.clone();
    let mut done = Finished::new("allocate", inputs, report)
        .with_figure(figure)
        .with_notes_after(s.panel.loading_notes(&loaded, true))
        .with_csv_notes(&notes);
    done.unpaired_cells = unpaired_cells(&loaded);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyses::test_support::{demo, setting_of};
    use crate::analyses::CpuEngines;

    fn settings(allocations: &[&str]) -> AllocateSettings {
        AllocateSettings {
            panel: PanelSettings {
                contrast: Some("adaptive-open".into()),
                ..Default::default()
            },
            allocation: allocations.iter().map(|a| a.to_string()).collect(),
            resample: ResampleSettings {
                replicates: 50,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn run(s: &AllocateSettings) -> Result<Finished> {
        allocate(
            &demo("panel.csv"),
            &demo("ledger.jsonl"),
            &demo("prices.toml"),
            s,
            &CpuEngines,
            &|_, _, _| {},
            None,
        )
    }

    #[test]
    fn the_settings_are_checked_in_their_own_words() {
        assert_eq!(
            setting_of(run(&settings(&["A=10:1:1"]))),
            (
                "allocation",
                "give at least two allocations to compare".to_string()
            )
        );
        let (name, msg) = setting_of(run(&settings(&["A=10:1", "B=5:1:1"])));
        assert_eq!(name, "allocation");
        assert!(msg.contains("expected NAME=Q:T:R"), "{msg}");
        let mut s = settings(&["A=10:1:1", "B=5:1:1"]);
        s.question_cost = Some(QuestionCosts::Text("1,-2".into()));
        assert_eq!(
            setting_of(run(&s)),
            (
                "question_cost",
                "'1,-2': expected TOKENS,USD (or TOKENS), non-negative numbers".to_string()
            )
        );
    }

    #[test]
    fn question_costs_read_text_numbers_and_lists() {
        assert_eq!(QuestionCosts::Tokens(5.0).pair().unwrap(), [5.0, 0.0]);
        assert_eq!(
            QuestionCosts::Text("1000, 0.002".into()).pair().unwrap(),
            [1000.0, 0.002]
        );
        assert_eq!(
            QuestionCosts::List(vec![3.0, 1.5]).pair().unwrap(),
            [3.0, 1.5]
        );
        assert!(QuestionCosts::List(vec![1.0, 2.0, 3.0]).pair().is_err());
        let s: AllocateSettings = serde_json::from_str(
            r#"{"allocation": ["A=10:1:1", "B=5:1:1"], "question_cost": "7"}"#,
        )
        .unwrap();
        assert_eq!(s.question_cost.unwrap().pair().unwrap(), [7.0, 0.0]);
    }

    #[test]
    fn two_allocations_are_compared_with_their_fees() {
        let done = run(&settings(&["A=10:1:1", "B=5:2:1"])).unwrap();
        let doc = done.document();
        let names: Vec<&str> = doc["allocations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["A", "B"]);
        assert_eq!(doc["run"]["command"], "allocate");
    }
}
