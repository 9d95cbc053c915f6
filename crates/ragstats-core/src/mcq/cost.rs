//! Tokens and fees of an `mcq run` cost ledger per item, scoring group, task and run.
//!
//! `mcq run --ledger` writes one `reader` row per call that reached the model, carrying
//! the item id, its scoring group, the run index and the prompt kind (docs/ledger.md).
//! Each row is billed by [`crate::costs::cost::bill`] (fee = [(input − cached)·p_in +
//! cached·p_cached + output·p_out] / 10⁶); a level's figures are sums over its rows, and
//! `tokens_per_call` = (input + output tokens) / calls.

use std::collections::BTreeMap;

use serde::Serialize;

use super::item::Group;
use crate::costs::cost::Bill;
use crate::error::{Error, Result};
use crate::ledger::Entry;

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
}

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
            "no ledger row carries an `item` field ({other} row(s) without one): this is not an `mcq run --ledger` ledger"
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
    })
}
