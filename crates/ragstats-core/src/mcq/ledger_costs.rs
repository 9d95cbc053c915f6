//! Tokens and fees of an `mcq run` cost ledger per item, scoring group, task and run.
//!
//! `mcq run --ledger` writes one `reader` row per call that reached the model, carrying
//! the item id, its scoring group, the run index and the prompt kind (docs/ledger.md).
//! Each row is billed by [`crate::costs::accounting::bill`] (fee = [(input − cached)·p_in +
//! cached·p_cached + output·p_out] / 10⁶); a level's figures are sums over its rows, and
//! `tokens_per_call` = (input + output tokens) / calls.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::item::Group;
use crate::costs::accounting::{bill, Bill};
use crate::document::Report;
use crate::error::{Error, Result};
use crate::ledger::{Entry, Prices};

/// Sums over the rows of one item, group, task, run, or all of them.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct McqCostRow {
    /// `item`, `group`, `task`, `run` or `overall`.
    pub level: &'static str,
    /// Item id, group or task name, run index, or `all`.
    pub name: String,
    /// Billed calls (rows).
    pub calls: u64,
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// The cached part of `input_tokens`.
    pub cached_input_tokens: u64,
    /// Completion tokens, reasoning included.
    pub output_tokens: u64,
    /// (input + output) / calls.
    pub tokens_per_call: f64,
    /// Fee in USD; `None` without prices.
    pub usd: Option<f64>,
    /// Rows whose token counts were unknown (billed as 0).
    pub unknown_token_rows: u64,
}

impl McqCostRow {
    fn new(level: &'static str, name: String) -> Self {
        McqCostRow {
            level,
            name,
            ..McqCostRow::default()
        }
    }

    fn add(&mut self, b: &Bill, priced: bool) {
        self.calls += 1;
        self.input_tokens += b.input_tokens;
        self.cached_input_tokens += b.cached_input_tokens;
        self.output_tokens += b.output_tokens;
        self.unknown_token_rows += u64::from(b.unknown_tokens);
        if priced {
            *self.usd.get_or_insert(0.0) += b.model_usd;
        }
        self.tokens_per_call = (self.input_tokens + self.output_tokens) as f64 / self.calls as f64;
    }
}

/// The per-level sums and what was left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McqCostReport {
    /// Items (sorted by id), groups (benchmark order), tasks, runs, then `overall`.
    pub rows: Vec<McqCostRow>,
    /// Ledger rows without an `item` field (not from `mcq run`), left out.
    pub other_rows: u64,
    /// Whether the rows were priced (the text says how to get fees otherwise; not in the
    /// body, whose `usd` is then `null`).
    #[serde(skip)]
    pub priced: bool,
}

/// A ledger's sums are not resampled: the default (all `null`) engine.
impl Report for McqCostReport {}

/// Sums billed rows (`bills[i]` bills `entries[i]`) that carry an MCQ item id.
///
/// # Errors
/// [`Error::Data`] when no row carries an `item` (a ledger not written by `mcq run`, or by a
/// version that did not record items).
pub fn mcq_costs(entries: &[Entry], bills: &[Bill], priced: bool) -> Result<McqCostReport> {
    let mut items: BTreeMap<String, McqCostRow> = BTreeMap::new();
    let mut groups: BTreeMap<usize, McqCostRow> = BTreeMap::new();
    let mut tasks: BTreeMap<usize, McqCostRow> = BTreeMap::new();
    let mut runs: BTreeMap<Option<u32>, McqCostRow> = BTreeMap::new();
    let mut all = McqCostRow::new("overall", "all".into());
    let mut other = 0;
    for (e, b) in entries.iter().zip(bills) {
        let Some(item) = &e.row.item else {
            other += 1;
            continue;
        };
        items
            .entry(item.clone())
            .or_insert_with(|| McqCostRow::new("item", item.clone()))
            .add(b, priced);
        // A group name this version does not know is kept under its own name, last.
        let g = Group::ALL
            .iter()
            .position(|g| Some(g.as_str()) == e.row.group.as_deref());
        let gname = e.row.group.clone().unwrap_or_else(|| "-".into());
        groups
            .entry(g.unwrap_or(usize::MAX))
            .or_insert_with(|| McqCostRow::new("group", gname.clone()))
            .add(b, priced);
        let (ti, tname) = match g {
            Some(i) => {
                let t = Group::ALL[i].task();
                let ti = super::Task::ALL.iter().position(|x| *x == t).unwrap_or(0);
                (ti, t.as_str().to_string())
            }
            None => (usize::MAX, "-".to_string()),
        };
        tasks
            .entry(ti)
            .or_insert_with(|| McqCostRow::new("task", tname))
            .add(b, priced);
        runs.entry(e.row.run)
            .or_insert_with(|| {
                McqCostRow::new("run", e.row.run.map_or("-".into(), |r| r.to_string()))
            })
            .add(b, priced);
        all.add(b, priced);
    }
    if all.calls == 0 {
        return Err(Error::Data(format!(
            "no ledger row carries an `item` field ({other} row(s) without one): this is not the ledger of an MCQ run"
        )));
    }
    let mut rows: Vec<McqCostRow> = items.into_values().collect();
    rows.extend(groups.into_values());
    rows.extend(tasks.into_values());
    rows.extend(runs.into_values());
    rows.push(all);
    Ok(McqCostReport {
        rows,
        other_rows: other,
        priced,
    })
}

/// Prices of an `mcq run` ledger's rows and where they came from (for error messages).
#[derive(Debug, Clone, Copy)]
pub struct McqPricing<'a> {
    /// USD per 1M input, cached input and output tokens per model.
    pub prices: &'a Prices,
    /// The prices file.
    pub path: &'a Path,
}

/// Tokens and fees of an `mcq run --ledger` ledger read from `ledger`: every row billed by
/// [`bill`] (fee = [(input − cached)·p_in + cached·p_cached + output·p_out] / 10⁶ when
/// `pricing` is given, else tokens only), then summed per item, group, task, run and
/// overall ([`mcq_costs`]).
///
/// # Errors
/// Those of [`bill`] (a model without a price, token sums that overflow) and of
/// [`mcq_costs`] (no row carries an item).
pub fn mcq_ledger_costs(
    entries: &[Entry],
    ledger: &Path,
    pricing: Option<McqPricing<'_>>,
) -> Result<McqCostReport> {
    let bills = bill(
        entries,
        pricing.map(|p| p.prices),
        ledger,
        pricing.map(|p| p.path),
    )?;
    mcq_costs(entries, &bills, pricing.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ledger shaped like that of tests/it/mcq_real.rs (`mcq run --ledger` on 6 items × 2
    /// runs, output 5 + run tokens per call, priced at 1 USD per 1M input and 2 per 1M
    /// output tokens), here with input 100 + 10·n tokens per call of item rn (n = 1..6), so
    /// every item differs; the sums below are by hand.
    #[test]
    fn mcq_ledger_costs_by_hand() {
        let dir = tempfile::tempdir().unwrap();
        let groups = [
            "planning-convergent",
            "evidence_extraction",
            "grounded_reasoning",
            "noise-abstain",
            "noise-reliability",
            "planning-divergent",
        ];
        let mut text = String::new();
        for run in 0..2u32 {
            for (i, g) in groups.iter().enumerate() {
                let n = i + 1;
                text.push_str(&format!(
                    "{{\"kind\":\"mcq\",\"id\":\"r{n}#run{run}\",\"item\":\"r{n}\",\"group\":\"{g}\",\"run\":{run},\"prompt\":\"bare\",\"model\":\"gemma-3-270m\",\"input_tokens\":{},\"output_tokens\":{}}}\n",
                    100 + 10 * n,
                    5 + run
                ));
            }
        }
        let ledger = dir.path().join("l.jsonl");
        std::fs::write(&ledger, text).unwrap();
        let prices_path = dir.path().join("prices.toml");
        std::fs::write(
            &prices_path,
            "[models.\"gemma-3-270m\"]\ninput = 1.0\noutput = 2.0\n",
        )
        .unwrap();
        let entries = crate::ledger::read_ledger(&ledger).unwrap();
        let prices = Prices::read(&prices_path).unwrap();
        let pricing = McqPricing {
            prices: &prices,
            path: &prices_path,
        };
        let r = mcq_ledger_costs(&entries, &ledger, Some(pricing)).unwrap();
        let find = |level: &str, name: &str| {
            r.rows
                .iter()
                .find(|x| x.level == level && x.name == name)
                .unwrap()
        };
        let r1 = find("item", "r1");
        assert_eq!((r1.calls, r1.input_tokens, r1.output_tokens), (2, 220, 11));
        // Planning = r1 + r6: input 220 + 320, output 11 + 11.
        let p = find("task", "planning");
        assert_eq!((p.input_tokens, p.output_tokens), (540, 22));
        let run1 = find("run", "1");
        assert_eq!(
            (run1.calls, run1.input_tokens, run1.output_tokens),
            (6, 810, 36)
        );
        let all = r.rows.last().unwrap();
        assert_eq!(
            (all.level, all.input_tokens, all.output_tokens),
            ("overall", 1620, 66)
        );
        assert!((all.usd.unwrap() - (1620.0 + 2.0 * 66.0) / 1e6).abs() < 1e-15);
        assert!((all.tokens_per_call - 1686.0 / 12.0).abs() < 1e-12);
        assert_eq!(r.other_rows, 0);
        // Without prices: tokens only.
        let r = mcq_ledger_costs(&entries, &ledger, None).unwrap();
        assert!(r.rows.iter().all(|x| x.usd.is_none()));
    }

    #[test]
    fn an_mcq_cost_document_is_the_rows_and_a_null_engine() {
        use crate::document::{document, Inputs};
        use serde_json::{json, Value};
        let mut row = McqCostRow::new("overall", "all".into());
        row.add(
            &Bill {
                input_tokens: 100,
                cached_input_tokens: 20,
                output_tokens: 10,
                model_usd: 0.5,
                ..Bill::default()
            },
            true,
        );
        let r = McqCostReport {
            rows: vec![row],
            other_rows: 2,
            priced: true,
        };
        let d = document("mcq cost", Inputs::new().with("ledger", "l.jsonl"), &r);
        assert_eq!(
            d["rows"],
            json!([{"level": "overall", "name": "all", "calls": 1, "input_tokens": 100,
                    "cached_input_tokens": 20, "output_tokens": 10, "tokens_per_call": 110.0,
                    "usd": 0.5, "unknown_token_rows": 0}])
        );
        assert_eq!(d["other_rows"], 2);
        assert_eq!(d.as_object().unwrap().len(), 3, "{d}");
        for k in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(d["run"][k], Value::Null, "{k}");
        }
        assert_eq!(d["run"]["inputs"], json!({"ledger": "l.jsonl"}));
    }
}
