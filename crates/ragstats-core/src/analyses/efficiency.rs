//! `efficiency`: the one-read efficiency loss at fixed T (the headline) per stratum and
//! combined, the loss at fixed Q per stratum and pooled, with bootstrap intervals, and the
//! direct one-read versus two-read check, priced from the panel's ledger
//! ([`crate::allocation::one_read_ledger::efficiency_report`]).

use serde::{Deserialize, Deserializer};

use super::{source_input, source_input_opt, unpaired_json, CostUnit, Engines, Progress};
use crate::allocation::one_read_ledger::{efficiency_report, EfficiencyJob, EfficiencyReport};
use crate::costs::accounting::PricedLedger;
use crate::document::{Figure, Finished, Inputs, Rendered, Sections};
use crate::import::{by_selector, unpaired_counts, Balance, By, PanelSettings};
use crate::ledger::{check_price, read_ledger_from, Entry, Prices};
use crate::panel::{Panel, Source};
use crate::resample::summary::NO_SPREAD_NOTE;
use crate::resample::ResampleSettings;
use crate::{Error, Result};

/// The settings of [`efficiency`].
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct EfficiencySettings {
    /// How the panel is read (unbalanced strata are kept as they are).
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// Report each selector of the panel's `selector` column, then their average.
    pub by: Option<By>,
    /// What the budget is counted in; several (`"tokens,usd"` or a list) report one
    /// section each from the same resamples.
    #[serde(deserialize_with = "units")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<crate::io::from_text::TextOrList>")
    )]
    pub currency: Vec<CostUnit>,
    /// The search price for dollars, USD per 1,000 requests (default: the prices').
    pub search_price: Option<f64>,
    /// The largest read count R the fixed-T loss minimises over (from 1).
    pub max_reads: u32,
    /// A cost per question in the currency's unit (judging, annotation, set-up), whatever
    /// its T and R: it enters the fixed-T loss (at fixed Q it is spent whatever R is).
    pub question_cost: f64,
    /// The question bootstrap's replicates, seed, backend and confidence level.
    #[serde(flatten)]
    pub resample: ResampleSettings,
}

impl Default for EfficiencySettings {
    fn default() -> Self {
        EfficiencySettings {
            panel: PanelSettings::default(),
            by: None,
            currency: vec![CostUnit::Tokens],
            search_price: None,
            max_reads: 10,
            question_cost: 0.0,
            resample: ResampleSettings::default(),
        }
    }
}

/// Cost units as text (`"usd"`, `"tokens,usd"`) or a list of them; `null`: tokens.
fn units<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<CostUnit>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        One(String),
        Many(Vec<String>),
    }
    let words = match Option::<Form>::deserialize(d)? {
        None => return Ok(vec![CostUnit::Tokens]),
        Some(Form::One(t)) => vec![t],
        Some(Form::Many(l)) => l,
    };
    words
        .iter()
        .flat_map(|w| w.split(','))
        .map(|w| w.parse().map_err(serde::de::Error::custom))
        .collect()
}

/// Draws the figure of [`efficiency`] from the analysed outcome and the analysis.
pub type DrawEfficiency<'a> = Option<&'a dyn Fn(&str, &EfficiencyReport) -> Result<String>>;

/// The one-read efficiency analysis of the panel `panel` holds, its costs from the ledger
/// `ledger` (priced with `prices` for dollars), in each currency of `settings.currency`
/// (one section each when several); with `settings.by`, one section per selector. `draw`
/// adds the figure of the one-read losses.
///
/// # Errors
/// [`Error::Setting`] for a cluster column of an unbalanced panel (`cluster`: its REML
/// refits are not drawn by clusters), no currency, a question cost with several currencies, a figure
/// of several analyses, a bad search price, question cost or read count, and the
/// resampling settings' errors; those of loading the inputs and of the analysis (dollars
/// without prices name `currency`).
pub fn efficiency(
    panel: &Source,
    ledger: &Source,
    prices: Option<&Source>,
    settings: &EfficiencySettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
    draw: DrawEfficiency<'_>,
) -> Result<Finished> {
    let s = settings;
    let mut currencies = s.currency.clone();
    currencies.dedup();
    if currencies.is_empty() {
        return Err(Error::setting(
            "currency",
            "give at least one: tokens or usd",
        ));
    }
    if s.question_cost != 0.0 && currencies.len() > 1 {
        return Err(Error::setting(
            "question_cost",
            "is in one currency: give one currency with it",
        ));
    }
    // One figure shows one analysis.
    if draw.is_some() && (s.by.is_some() || currencies.len() > 1) {
        return Err(Error::setting(
            "plot",
            "draws one analysis: give one currency and, for a selector, one selector instead \
             of by selector",
        ));
    }
    check_price("the price", s.question_cost).map_err(|m| Error::setting("question_cost", m))?;
    if let Some(p) = s.search_price {
        check_price("the price", p).map_err(|m| Error::setting("search_price", m))?;
    }
    if s.max_reads < 1 {
        return Err(Error::setting("max_reads", "must be at least 1"));
    }
    s.resample.resampling()?;
    let entries = read_ledger_from(ledger)?;
    let prices_read = prices.map(Prices::from_source).transpose()?;
    let inputs = source_input_opt(
        source_input(
            source_input(Inputs::new(), "panel", panel),
            "ledger",
            ledger,
        ),
        "prices",
        prices,
    );
    let run = Run {
        settings: s,
        entries: &entries,
        ledger,
        prices: prices_read.as_ref(),
        prices_source: prices,
        engines,
        progress,
    };
    let mut notes = Vec::new();
    let mut unpaired = (0, 0);
    let mut count = |loaded: &Panel| {
        let (d, c) = unpaired_counts(loaded);
        unpaired = (unpaired.0 + d, unpaired.1 + c);
    };
    if s.by == Some(By::Selector) {
        let sections = by_selector(panel, &s.panel, |one| {
            let loaded = one.load(panel, Balance::Fitted)?;
            notes.extend(one.loading_notes(&loaded, true));
            count(&loaded);
            run.by_currency(&loaded, &currencies)
        })?;
        let mut done = Finished::new("efficiency", inputs, sections).with_notes_after(notes);
        done.unpaired_cells = unpaired_json(unpaired);
        return Ok(done);
    }
    let loaded = s.panel.load(panel, Balance::Fitted)?;
    notes.extend(s.panel.loading_notes(&loaded, true));
    count(&loaded);
    if currencies.len() > 1 {
        let mut done =
            Finished::boxed("efficiency", inputs, run.by_currency(&loaded, &currencies)?)
                .with_notes_after(notes);
        done.unpaired_cells = unpaired_json(unpaired);
        return Ok(done);
    }
    let report = run.one(&loaded, currencies[0])?;
    let figure = match draw {
        Some(draw) => {
            let files: Vec<&std::path::Path> = panel
                .paths()
                .iter()
                .take(1)
                .chain(ledger.paths())
                .chain(prices.map_or(&[][..], Source::paths))
                .chain(panel.paths().iter().skip(1))
                .map(|p| p.as_path())
                .collect();
            Some(Figure::new(draw(&loaded.outcome, &report)?, &files))
        }
        None => None,
    };
    // CSV has no place for the report's warnings; the one that changes how every interval
    // reads goes after it.
    let csv_notes: Vec<String> = report
        .analysis
        .warnings
        .iter()
        .filter(|w| *w == NO_SPREAD_NOTE)
        .cloned()
        .collect();
    let mut done = Finished::new("efficiency", inputs, report)
        .with_figure(figure)
        .with_notes_after(notes)
        .with_csv_notes(&csv_notes);
    done.unpaired_cells = unpaired_json(unpaired);
    Ok(done)
}

/// One efficiency run's inputs read, its settings and its collaborators.
struct Run<'a> {
    settings: &'a EfficiencySettings,
    entries: &'a [Entry],
    ledger: &'a Source,
    prices: Option<&'a Prices>,
    prices_source: Option<&'a Source>,
    engines: &'a dyn Engines,
    progress: Progress<'a>,
}

impl Run<'_> {
    /// The analysis of the loaded `panel` in `currency`.
    fn one(&self, panel: &Panel, currency: CostUnit) -> Result<EfficiencyReport> {
        let s = self.settings;
        let resampling = s.resample.resampling()?;
        let draws = u64::from(resampling.replicates)
            * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>();
        let engine = self.engines.resampler(s.resample.backend, draws)?;
        let job = EfficiencyJob {
            budget: currency.budget(s.search_price),
            max_reads: s.max_reads,
            resampling,
            question_cost: s.question_cost,
        };
        let priced = PricedLedger {
            entries: self.entries,
            path: self.ledger.name(),
            prices: self.prices,
            prices_path: self.prices_source.map(Source::name),
        };
        let total = u64::from(resampling.replicates);
        efficiency_report(panel, &priced, &job, engine.as_ref(), &|d| {
            (self.progress)("efficiency", d, total)
        })
    }

    /// One analysis per currency: one as it is, several as sections (each from the same
    /// seed, so the same resamples).
    fn by_currency(&self, panel: &Panel, currencies: &[CostUnit]) -> Result<Box<dyn Rendered>> {
        if let [one] = currencies {
            return Ok(Box::new(self.one(panel, *one)?));
        }
        let items = currencies
            .iter()
            .map(|&c| Ok((c.unit().to_string(), Box::new(self.one(panel, c)?) as _)))
            .collect::<Result<_>>()?;
        Ok(Box::new(Sections {
            by: "currency".into(),
            items,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyses::test_support::{demo, setting_of};
    use crate::analyses::CpuEngines;

    fn settings() -> EfficiencySettings {
        EfficiencySettings {
            panel: PanelSettings {
                contrast: Some("adaptive-open".into()),
                ..Default::default()
            },
            resample: ResampleSettings {
                replicates: 50,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn run(s: &EfficiencySettings, prices: bool) -> Result<Finished> {
        let p = demo("prices.toml");
        efficiency(
            &demo("panel.csv"),
            &demo("ledger.jsonl"),
            prices.then_some(&p),
            s,
            &CpuEngines,
            &|_, _, _| {},
            None,
        )
    }

    #[test]
    fn the_settings_are_checked_in_their_own_words() {
        let s: EfficiencySettings =
            serde_json::from_str(r#"{"currency": "tokens,usd", "question_cost": 5}"#).unwrap();
        assert_eq!(s.currency, [CostUnit::Tokens, CostUnit::Usd]);
        assert_eq!(
            setting_of(run(&s, true)),
            (
                "question_cost",
                "is in one currency: give one currency with it".to_string()
            )
        );
        let usd = EfficiencySettings {
            currency: vec![CostUnit::Usd],
            ..settings()
        };
        assert_eq!(
            setting_of(run(&usd, false)),
            (
                "currency",
                "usd needs the models' prices (a prices file)".to_string()
            )
        );
        let reads = EfficiencySettings {
            max_reads: 0,
            ..settings()
        };
        assert_eq!(setting_of(run(&reads, false)).0, "max_reads");
        let bad: std::result::Result<EfficiencySettings, _> =
            serde_json::from_str(r#"{"currency": "euro"}"#);
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("expected tokens or usd"));
    }

    #[test]
    fn two_currencies_are_two_sections_of_the_same_resamples() {
        let both = EfficiencySettings {
            currency: vec![CostUnit::Tokens, CostUnit::Usd],
            ..settings()
        };
        let two = run(&both, true).unwrap().document();
        let tokens = run(&settings(), true).unwrap().document();
        assert_eq!(two["by"], "currency");
        let first = &two["results"][0];
        assert_eq!(first["currency"], "tokens");
        assert_eq!(first["result"]["combined"], tokens["combined"]);
        assert_eq!(two["results"][1]["currency"], "USD");
    }
}
