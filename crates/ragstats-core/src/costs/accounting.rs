//! Cost accounting: model tokens and fees with cache discounts, unique search requests and
//! their fees over a price sweep, and the unit costs c_T (one trajectory without its reads)
//! and c_R (one read) that the efficiency and allocation analyses need.
//!
//! Billing rules:
//! * rows that share a `key` are one call and are billed once; they must agree on kind,
//!   model and token counts. Attribution never depends on line order: in the per-(arm,
//!   dataset) totals a shared call whose rows name more than one arm (dataset) is reported
//!   under the arm (dataset) `shared`, and in the per-cell costs it is split equally among
//!   the distinct cells its rows name;
//! * model fee = [(input − cached)·p_in + cached·p_cached + output·p_out] / 10⁶, with
//!   `input_tokens` counting the cached ones (as OpenAI-style `prompt_tokens` do);
//! * model tokens = input + output tokens (cached input included);
//! * search fee = unique search requests × price / 1,000;
//! * a row with unknown (null) token counts is billed as 0 tokens and counted in
//!   `unknown_token_rows`, so the gap is visible;
//! * generator, judge and MCQ calls are billed in the totals, never in c_T or c_R;
//! * selectors ([`for_selector`]): a row's `selector` names the selector whose packet it
//!   read. One selector's costs are the rows of that selector plus the rows no selector
//!   owns (planner calls and searches, which every selector shares); the selector average
//!   bills every row, since its design runs every selector.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;

use crate::io::clip;
use crate::ledger::{CallKind, Entry, Label, Prices};
use crate::{Error, Result};

/// A label's text, if present.
fn text(l: &Option<Label>) -> Option<Cow<'_, str>> {
    l.as_ref().map(Label::text)
}

/// The selectors the ledger's rows name, in order of first appearance (empty when no row
/// has a `selector`).
pub fn ledger_selectors(entries: &[Entry]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in entries {
        if let Some(s) = text(&e.row.selector) {
            if !out.iter().any(|o| *o == s) {
                out.push(s.into_owned());
            }
        }
    }
    out
}

/// The rows one selector's analysis pays for: with `selector` = `Some(NAME)`, the rows whose
/// `selector` is NAME or absent (planner calls and searches are shared by every selector);
/// with `None` (the selector average, or a panel without selectors), every row, since the
/// design runs every selector. A ledger whose rows name no selector is returned whole
/// either way. Apply it before [`bill`], so that a call shared (`key`) between a kept and a
/// dropped row is billed on the kept one.
///
/// # Errors
/// [`Error::Input`] naming the ledger when its rows name selectors and none of them is
/// NAME: the ledger does not describe that selector's reads.
pub fn for_selector(
    entries: Vec<Entry>,
    selector: Option<&str>,
    ledger: &Path,
) -> Result<Vec<Entry>> {
    let Some(name) = selector else {
        return Ok(entries);
    };
    let named = ledger_selectors(&entries);
    if named.is_empty() {
        return Ok(entries);
    }
    if !named.iter().any(|n| n == name) {
        return Err(Error::input(
            ledger,
            None,
            format!(
                "no row has selector '{}' (the ledger's selectors: {}); the ledger does not describe this selector's reads",
                clip(name),
                named.iter().map(|n| clip(n)).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(entries
        .into_iter()
        .filter(|e| text(&e.row.selector).is_none_or(|s| s == name))
        .collect())
}

/// What one billed row costs (zero for a repeat of a shared key).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bill {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// Model fee in USD (0 without prices or for search rows).
    pub model_usd: f64,
    /// 1 for a unique search request.
    pub search_requests: u64,
    /// The row's token counts were unknown.
    pub unknown_tokens: bool,
    /// A billed model call (false for search rows and repeats of a shared key).
    pub model_call: bool,
}

impl Bill {
    /// Model tokens billed: input (cached included) plus output.
    pub fn model_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// The row's cost in `currency`.
    pub fn cost(&self, currency: Currency) -> f64 {
        match currency {
            Currency::Tokens => self.model_tokens() as f64,
            Currency::Usd {
                search_usd_per_1000,
            } => self.model_usd + self.search_requests as f64 * search_usd_per_1000 / 1000.0,
            Currency::Searches => self.search_requests as f64,
        }
    }
}

/// The unit costs are measured in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Currency {
    /// Model tokens (input + output); search requests cost nothing.
    Tokens,
    /// US dollars: model fees plus search at the given price per 1,000 requests.
    Usd { search_usd_per_1000: f64 },
    /// Unique search requests (so fees at any search price p are model fees + p/1000 × this).
    Searches,
}

/// Bills every row (see the module docs).
///
/// # Errors
/// [`Error::Input`] naming the ledger line when `prices` is given and a row's model has no
/// price, or when the ledger's token sums (input, cached input, output, or input + output,
/// over all billed rows) would overflow u64: every group total is at most the ledger total,
/// so checking the running total once keeps every sum in [`account`] exact.
pub fn bill(
    entries: &[Entry],
    prices: Option<&Prices>,
    ledger: &Path,
    prices_path: Option<&Path>,
) -> Result<Vec<Bill>> {
    let mut seen: HashMap<Cow<str>, &Entry> = HashMap::new();
    let mut out = Vec::with_capacity(entries.len());
    let mut sums = [0u64; 4];
    for entry in entries {
        let Entry { line, row: e } = entry;
        if let Some(k) = text(&e.key) {
            if let Some(first) = seen.get(&k) {
                check_same_call(first, entry, &k, ledger)?;
                out.push(Bill::default());
                continue;
            }
            seen.insert(k, entry);
        }
        if e.kind == CallKind::Search {
            out.push(Bill {
                search_requests: 1,
                ..Bill::default()
            });
            continue;
        }
        let input = e.input_tokens.unwrap_or(0);
        let cached = e.cached_input_tokens.unwrap_or(0).min(input);
        let output = e.output_tokens.unwrap_or(0);
        let overflow = || {
            Error::input(
                ledger,
                Some(*line),
                "the ledger's token total exceeds 2^64 - 1 here; token counts this large are not real",
            )
        };
        let tokens = input.checked_add(output).ok_or_else(overflow)?;
        for (sum, add) in sums.iter_mut().zip([input, cached, output, tokens]) {
            *sum = sum.checked_add(add).ok_or_else(overflow)?;
        }
        let model_usd = match prices {
            None => 0.0,
            Some(p) => {
                let name = e.model.as_deref().unwrap_or("");
                let m = p.models.get(name).ok_or_else(|| {
                    Error::input(
                        ledger,
                        Some(*line),
                        format!(
                            "model '{name}' has no price in {} (priced models: {})",
                            prices_path
                                .map(|p| p.display().to_string())
                                .unwrap_or_else(|| "the prices file".into()),
                            p.models.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?;
                ((input - cached) as f64 * m.input
                    + cached as f64 * m.cached_input.unwrap_or(m.input)
                    + output as f64 * m.output)
                    / 1e6
            }
        };
        out.push(Bill {
            input_tokens: input,
            cached_input_tokens: cached,
            output_tokens: output,
            model_usd,
            search_requests: 0,
            unknown_tokens: e.input_tokens.is_none() || e.output_tokens.is_none(),
            model_call: true,
        });
    }
    Ok(out)
}

/// Two rows sharing `key` describe one call: the same kind, model and token counts.
fn check_same_call(first: &Entry, here: &Entry, key: &str, ledger: &Path) -> Result<()> {
    let (a, b) = (&first.row, &here.row);
    let describe = |r: &crate::ledger::LedgerRow| {
        let n = |v: Option<u64>| v.map_or_else(|| "unknown".to_string(), |v| v.to_string());
        format!(
            "{} call, model {}, input_tokens {}, cached_input_tokens {}, output_tokens {}",
            r.kind.as_str(),
            r.model.as_deref().map_or_else(|| "none".into(), clip),
            n(r.input_tokens),
            n(r.cached_input_tokens),
            n(r.output_tokens)
        )
    };
    let same = a.kind == b.kind
        && a.model == b.model
        && a.input_tokens == b.input_tokens
        && a.cached_input_tokens == b.cached_input_tokens
        && a.output_tokens == b.output_tokens;
    if same {
        return Ok(());
    }
    Err(Error::input(
        ledger,
        Some(here.line),
        format!(
            "key '{}' is shared with line {}, but the rows differ: line {} has {}; line {} has {}. Rows sharing a key are one call and must agree",
            clip(key),
            first.line,
            first.line,
            describe(a),
            here.line,
            describe(b)
        ),
    ))
}

/// For each `key`, the label every one of its rows gives by `label`, or `shared` when its
/// rows disagree (so a shared call's group does not depend on which row comes first).
fn key_labels(
    entries: &[Entry],
    label: impl Fn(&crate::ledger::LedgerRow) -> String,
) -> HashMap<Cow<'_, str>, String> {
    let mut out: HashMap<Cow<str>, String> = HashMap::new();
    for Entry { row: e, .. } in entries {
        if let Some(k) = text(&e.key) {
            let l = label(e);
            out.entry(k)
                .and_modify(|v| {
                    if *v != l {
                        *v = SHARED.to_string();
                    }
                })
                .or_insert(l);
        }
    }
    out
}

/// The arm or dataset under which calls shared by several arms or datasets are reported.
pub const SHARED: &str = "shared";

/// Totals of one group of rows.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Totals {
    pub arm: String,
    pub dataset: String,
    /// Billed model calls (shared calls once).
    pub model_calls: u64,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub model_tokens: u64,
    pub model_usd: f64,
    pub search_requests: u64,
    /// Search fee at each sweep price (same order as the report's `search_prices`).
    pub search_usd: Vec<f64>,
    /// Model fee plus search fee at each sweep price.
    pub total_usd: Vec<f64>,
    pub unknown_token_rows: u64,
}

impl Totals {
    fn add(&mut self, b: &Bill) {
        self.model_calls += u64::from(b.model_call);
        self.input_tokens += b.input_tokens;
        self.cached_input_tokens += b.cached_input_tokens;
        self.output_tokens += b.output_tokens;
        self.model_tokens += b.model_tokens();
        self.model_usd += b.model_usd;
        self.search_requests += b.search_requests;
        self.unknown_token_rows += u64::from(b.unknown_tokens);
    }

    fn price(&mut self, sweep: &[f64]) {
        self.search_usd = sweep
            .iter()
            .map(|p| self.search_requests as f64 * p / 1000.0)
            .collect();
        self.total_usd = self.search_usd.iter().map(|s| s + self.model_usd).collect();
    }
}

/// c_T and c_R in one currency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UnitCostPair {
    /// One trajectory without its reads: planner calls and searches, both arms.
    pub trajectory: f64,
    /// One read: reader calls, both arms.
    pub read: f64,
}

/// Unit costs measured from a ledger.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitCostReport {
    /// Distinct (dataset, question, trajectory) cells among planner and search rows, and
    /// the trajectory cells of `eval` rows (which cost 0).
    pub trajectories: u64,
    /// Distinct (dataset, question, trajectory, read) cells among reader rows.
    pub reads: u64,
    pub tokens: UnitCostPair,
    /// With prices: dollars, search at `search_usd_per_1000`.
    pub usd: Option<UnitCostPair>,
    pub search_usd_per_1000: f64,
    /// Why c_T cannot be read as a per-trajectory cost from this ledger, if it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trajectory_note: Option<String>,
    /// Why c_R cannot be read as a per-read cost from this ledger, if it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_note: Option<String>,
}

/// Why a ledger does not give c_T (`trajectory`) or c_R (`read`): `None` when it does.
///
/// c_T needs planner or search rows, each labelled with its `question` and `trajectory`;
/// c_R needs reader rows, each labelled with `question`, `trajectory` and `read` (`dataset`
/// is optional). Rows without them (an `llm batch` ledger whose requests carried no such
/// `meta`, or an `mcq run` ledger, whose calls are items, not reads) cannot be assigned to
/// a cell, and an average over the cells would lump them together. A ledger whose
/// panel-cost rows are all labelled `eval` rows (`stats import --ledger-out`) gives both:
/// each row is its read's cost and the trajectory costs 0 (the logs do not bill an agent's
/// steps apart from the read).
pub fn unit_cost_notes(entries: &[Entry]) -> (Option<String>, Option<String>) {
    let (mut t_rows, mut t_bare, mut r_rows, mut r_bare, mut mcq) = (0, 0, 0, 0, 0);
    let (mut other, mut eval) = (0, 0);
    for Entry { row: e, .. } in entries {
        if e.item.is_some() {
            mcq += 1;
        }
        match e.kind {
            CallKind::Generator | CallKind::Judge | CallKind::Mcq => other += 1,
            CallKind::Planner | CallKind::Search => {
                t_rows += 1;
                if e.question.is_none() || e.trajectory.is_none() {
                    t_bare += 1;
                }
            }
            CallKind::Reader | CallKind::Eval => {
                r_rows += 1;
                eval += u64::from(e.kind == CallKind::Eval);
                if e.question.is_none() || e.trajectory.is_none() || e.read.is_none() {
                    r_bare += 1;
                }
            }
        }
    }
    let hint = if mcq > 0 {
        "; this is an `mcq run` ledger: `stats mcq cost` gives tokens and fees per item, task and run"
    } else {
        "; `llm batch` copies `question`, `trajectory` and `read` from each request's `meta`"
    };
    let t = if t_rows == 0 && eval > 0 && eval == r_rows && r_bare == 0 {
        // An imported log's ledger: every call of a sample epoch is its read's, and the
        // trajectory (which the log does not split into agent steps) costs 0.
        None
    } else if t_rows == 0 {
        Some("no planner or search rows, so there is no trajectory cost".to_string())
    } else if t_bare > 0 {
        Some(format!(
            "{t_bare} of {t_rows} planner/search row(s) have no `question` or `trajectory` label, so their cost belongs to no trajectory"
        ))
    } else {
        None
    };
    let r = if r_rows == 0 && other > 0 {
        // An `mcq run`, `mcq generate` or `judge` ledger: its calls are billed, but none
        // is a read.
        let hint = if mcq > 0 { hint } else { "" };
        Some(format!(
            "no reader rows, so there is no read cost ({other} generator, judge or mcq row(s) are billed in the totals only){hint}"
        ))
    } else if r_rows == 0 {
        Some("no reader rows, so there is no read cost".to_string())
    } else if r_bare > 0 {
        Some(format!(
            "{r_bare} of {r_rows} reader row(s) have no `question`, `trajectory` or `read` label, so their cost belongs to no read{hint}"
        ))
    } else {
        None
    };
    (t, r)
}

/// The `stats cost` report: its document's body is this struct's serde serialization
/// (`docs/json.md`, `cost`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostReport {
    pub search_prices: Vec<f64>,
    /// Per (arm, dataset), sorted.
    pub groups: Vec<Totals>,
    pub total: Totals,
    pub unit_costs: UnitCostReport,
}

/// Accounting resamples nothing: the engine of its document is all `null`.
impl crate::document::Report for CostReport {}

/// Accounts a billed ledger. `sweep` are the search prices (USD per 1,000) to report;
/// `point` the one the dollar unit costs use.
pub fn account(
    entries: &[Entry],
    bills: &[Bill],
    sweep: &[f64],
    point: f64,
    priced: bool,
) -> CostReport {
    let mut groups: BTreeMap<(String, String), Totals> = BTreeMap::new();
    let mut total = Totals {
        arm: "all".into(),
        dataset: "all".into(),
        ..Totals::default()
    };
    let dash = |s: &Option<Label>| text(s).map_or_else(|| "-".into(), Cow::into_owned);
    type Key<'a> = [Option<Cow<'a, str>>; 4];
    let mut traj_cells: HashSet<Key> = HashSet::new();
    let mut read_cells: HashSet<Key> = HashSet::new();
    let (mut t_tok, mut r_tok, mut t_usd, mut r_usd) = (0.0, 0.0, 0.0, 0.0);
    let usd = Currency::Usd {
        search_usd_per_1000: point,
    };
    let key_arm = key_labels(entries, |e| dash(&e.arm));
    let key_dataset = key_labels(entries, |e| dash(&e.dataset));
    for (Entry { row: e, .. }, b) in entries.iter().zip(bills) {
        let (arm, dataset) = match text(&e.key) {
            Some(k) => (key_arm[&k].clone(), key_dataset[&k].clone()),
            None => (dash(&e.arm), dash(&e.dataset)),
        };
        let g = groups
            .entry((arm.clone(), dataset.clone()))
            .or_insert_with(|| Totals {
                arm,
                dataset,
                ..Totals::default()
            });
        g.add(b);
        total.add(b);
        let (d, q, t) = (text(&e.dataset), text(&e.question), text(&e.trajectory));
        match e.kind {
            CallKind::Planner | CallKind::Search => {
                traj_cells.insert([d, q, t, None]);
                t_tok += b.cost(Currency::Tokens);
                t_usd += b.cost(usd);
            }
            CallKind::Reader | CallKind::Eval => {
                if e.kind == CallKind::Eval {
                    // An imported sample epoch is one read of a trajectory that costs 0.
                    traj_cells.insert([d.clone(), q.clone(), t.clone(), None]);
                }
                read_cells.insert([d, q, t, text(&e.read)]);
                r_tok += b.cost(Currency::Tokens);
                r_usd += b.cost(usd);
            }
            // Billed above in the totals; no part of a trajectory or a read.
            CallKind::Generator | CallKind::Judge | CallKind::Mcq => {}
        }
    }
    for g in groups.values_mut() {
        g.price(sweep);
    }
    total.price(sweep);
    let (nt, nr) = (traj_cells.len() as f64, read_cells.len() as f64);
    let per = |x: f64, n: f64| if n > 0.0 { x / n } else { f64::NAN };
    let (trajectory_note, read_note) = unit_cost_notes(entries);
    CostReport {
        search_prices: sweep.to_vec(),
        groups: groups.into_values().collect(),
        total,
        unit_costs: UnitCostReport {
            trajectories: traj_cells.len() as u64,
            reads: read_cells.len() as u64,
            tokens: UnitCostPair {
                trajectory: per(t_tok, nt),
                read: per(r_tok, nr),
            },
            usd: priced.then(|| UnitCostPair {
                trajectory: per(t_usd, nt),
                read: per(r_usd, nr),
            }),
            search_usd_per_1000: point,
            trajectory_note,
            read_note,
        },
    }
}

/// Settings of [`cost_report`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CostJob {
    /// The search prices (USD per 1,000 requests) to total the fees at; `None`: the prices
    /// file's sweep, else its point price, else none.
    pub search_prices: Option<Vec<f64>>,
    /// Account only this selector's rows and the rows no selector owns ([`for_selector`]);
    /// `None`: every row.
    pub selector: Option<String>,
}

/// The `stats cost` report of a loaded ledger: its rows for `settings.selector` billed
/// ([`bill`]) and accounted ([`account`]) per (arm, dataset) and in total, with fees at
/// each search price and the unit costs c_T and c_R (in dollars with search at the prices
/// file's point price).
///
/// # Errors
/// Those of [`for_selector`] and [`bill`].
pub fn cost_report(ledger: &PricedLedger<'_>, settings: &CostJob) -> Result<CostReport> {
    let (entries, bills) = ledger.billed(settings.selector.as_deref())?;
    let sweep = match (&settings.search_prices, ledger.prices) {
        (Some(s), _) => s.clone(),
        (None, Some(p)) if !p.search.sweep_usd_per_1000.is_empty() => {
            p.search.sweep_usd_per_1000.clone()
        }
        (None, Some(p)) => vec![p.search.usd_per_1000],
        (None, None) => vec![],
    };
    let point = ledger.prices.map_or(0.0, |p| p.search.usd_per_1000);
    Ok(account(
        &entries,
        &bills,
        &sweep,
        point,
        ledger.prices.is_some(),
    ))
}

/// A loaded cost ledger, its prices if any, and the files they came from (error messages
/// name them).
#[derive(Debug, Clone, Copy)]
pub struct PricedLedger<'a> {
    pub entries: &'a [Entry],
    pub path: &'a Path,
    pub prices: Option<&'a Prices>,
    pub prices_path: Option<&'a Path>,
}

/// What a panel's budget is counted in, as asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    /// Model tokens (input + output); searches cost nothing.
    Tokens,
    /// US dollars: model fees plus search requests at `search_usd_per_1000` per 1,000
    /// (when `None`, the prices file's `search.usd_per_1000`).
    Usd { search_usd_per_1000: Option<f64> },
}

impl Budget {
    /// The budget's unit as reports name it: `tokens` or `USD`.
    pub fn unit(&self) -> &'static str {
        match self {
            Budget::Tokens => "tokens",
            Budget::Usd { .. } => "USD",
        }
    }
}

impl<'a> PricedLedger<'a> {
    /// The rows `selector`'s analysis pays for ([`for_selector`]: with one selector, its
    /// rows and the rows no selector owns; with `None`, every row), each with its bill.
    ///
    /// # Errors
    /// Those of [`for_selector`] and [`bill`] (a model without a price, token sums that
    /// overflow).
    pub fn billed(&self, selector: Option<&str>) -> Result<(Vec<Entry>, Vec<Bill>)> {
        let entries = for_selector(self.entries.to_vec(), selector, self.path)?;
        let bills = bill(&entries, self.prices, self.path, self.prices_path)?;
        Ok((entries, bills))
    }

    /// The ledger's per-cell costs in `budget` for `selector`'s analysis (see
    /// [`PricedLedger::billed`]).
    ///
    /// # Errors
    /// [`Error::Setting`] (`currency`) for dollars without prices; those of [`for_selector`], [`bill`] and
    /// [`CellCosts::new`] (a panel-cost row without its cell labels).
    pub fn cell_costs(&self, selector: Option<&str>, budget: Budget) -> Result<CellCosts> {
        let entries = for_selector(self.entries.to_vec(), selector, self.path)?;
        if matches!(budget, Budget::Usd { .. }) && self.prices.is_none() {
            return Err(Error::setting(
                "currency",
                "usd needs the models' prices (a prices file)",
            ));
        }
        let bills = bill(&entries, self.prices, self.path, self.prices_path)?;
        let currency = match budget {
            Budget::Tokens => Currency::Tokens,
            Budget::Usd {
                search_usd_per_1000,
            } => Currency::Usd {
                search_usd_per_1000: search_usd_per_1000
                    .or(self.prices.map(|p| p.search.usd_per_1000))
                    .unwrap_or(0.0),
            },
        };
        CellCosts::new(&entries, &bills, currency, self.path)
    }
}

/// A row's dataset, question, trajectory and (reader rows) read labels.
type CellLabels<'a> = [Option<Cow<'a, str>>; 4];

/// Per-cell costs of a ledger in one currency, for the analyses that cut panels into
/// sub-panels: planner + search cost per (dataset, question, trajectory) and reader cost
/// per (dataset, question, trajectory, read), both arms summed.
#[derive(Debug, Clone, Default)]
pub struct CellCosts {
    pub trajectory: HashMap<(String, String, String), f64>,
    pub read: HashMap<(String, String, String, String), f64>,
    /// The ledger rows of each trajectory cell (planner and search rows) and of each read
    /// cell (reader rows), so that rows of cells a panel lacks can be counted.
    pub trajectory_rows: HashMap<(String, String, String), u64>,
    pub read_rows: HashMap<(String, String, String, String), u64>,
}

impl CellCosts {
    /// Collects the cells of a billed ledger (planner, search and reader rows; generator,
    /// judge and MCQ calls belong to no cell and are left out). An `eval` row is its read
    /// cell's cost and makes its trajectory cell exist at cost 0: an imported log bills a
    /// sample epoch's calls as one read, with no planner or search steps apart from it.
    ///
    /// # Errors
    /// [`Error::Input`] naming the ledger line of a planner, search or reader row without
    /// dataset, question or trajectory (or read, for reader rows): such a row cannot be
    /// matched to a panel cell.
    pub fn new(
        entries: &[Entry],
        bills: &[Bill],
        currency: Currency,
        ledger: &Path,
    ) -> Result<Self> {
        let mut c = CellCosts::default();
        // The distinct cells each shared call's rows name (with the read for reader rows):
        // its cost is split equally among them, whichever row comes first.
        let mut key_cells: HashMap<Cow<str>, Vec<CellLabels>> = HashMap::new();
        for Entry { row: e, .. } in entries.iter().filter(|e| e.row.kind.is_panel_cost()) {
            if let Some(k) = text(&e.key) {
                let read = e.kind.is_read_cost().then(|| text(&e.read)).flatten();
                let cell = [
                    text(&e.dataset),
                    text(&e.question),
                    text(&e.trajectory),
                    read,
                ];
                let cells = key_cells.entry(k).or_default();
                if !cells.contains(&cell) {
                    cells.push(cell);
                }
            }
        }
        let mut billed: HashSet<Cow<str>> = HashSet::new();
        for (Entry { line, row: e }, b) in entries.iter().zip(bills) {
            if !e.kind.is_panel_cost() {
                continue;
            }
            let need = |v: &Option<Label>, name: &str| {
                text(v).map(Cow::into_owned).ok_or_else(|| {
                    Error::input(
                        ledger,
                        Some(*line),
                        format!("row has no '{name}'; it cannot be matched to a panel cell"),
                    )
                })
            };
            let key3 = (
                need(&e.dataset, "dataset")?,
                need(&e.question, "question")?,
                need(&e.trajectory, "trajectory")?,
            );
            let read = match e.kind {
                CallKind::Reader | CallKind::Eval => Some(need(&e.read, "read")?),
                _ => None,
            };
            let cost = b.cost(currency);
            if e.kind == CallKind::Eval {
                // An imported log bills each sample epoch as one read and has no agent
                // steps apart from it: its trajectory cell exists and costs 0.
                c.trajectory.entry(key3.clone()).or_default();
            }
            match &read {
                None => *c.trajectory_rows.entry(key3.clone()).or_default() += 1,
                Some(r) => {
                    let (d, q, t) = key3.clone();
                    *c.read_rows.entry((d, q, t, r.clone())).or_default() += 1;
                }
            }
            // The row's own cell always exists (cost 0 for a repeat of a shared call).
            let mut add = |(d, q, t): (String, String, String), r: Option<String>, v: f64| match r {
                None => *c.trajectory.entry((d, q, t)).or_default() += v,
                Some(r) => *c.read.entry((d, q, t, r)).or_default() += v,
            };
            let cells = text(&e.key)
                .filter(|k| billed.insert(k.clone()))
                .map(|k| &key_cells[&k])
                .filter(|cells| cells.len() > 1);
            match cells {
                // The first row of a call shared by several cells: split its cost equally.
                Some(cells) => {
                    add(key3, read, 0.0);
                    let share = cost / cells.len() as f64;
                    for [d, q, t, r] in cells {
                        let s = |v: &Option<Cow<str>>| v.as_deref().unwrap_or("").to_string();
                        add((s(d), s(q), s(t)), r.as_ref().map(|r| r.to_string()), share);
                    }
                }
                None => add(key3, read, cost),
            }
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::LedgerRow;

    fn reader(question: Option<&str>, read: Option<u32>, item: Option<&str>) -> Entry {
        Entry {
            line: 1,
            row: LedgerRow {
                question: question.map(Into::into),
                trajectory: question.map(|_| 0u32.into()),
                read: read.map(Into::into),
                item: item.map(Into::into),
                model: Some("m".into()),
                ..LedgerRow::new(CallKind::Reader)
            },
        }
    }

    /// A planner call shared (`key` "k") by questions q1 and q2 of dataset d, arms a and b,
    /// 1,000 tokens; plus q1's own 10-token call.
    fn shared_ledger(reverse: bool) -> Vec<Entry> {
        let row = |line: u64, q: &str, arm: &str, tokens: u64, key: Option<&str>| Entry {
            line,
            row: LedgerRow {
                dataset: Some("d".into()),
                question: Some(q.into()),
                arm: Some(arm.into()),
                trajectory: Some(0u32.into()),
                model: Some("m".into()),
                input_tokens: Some(tokens),
                output_tokens: Some(0),
                key: key.map(Into::into),
                ..LedgerRow::new(CallKind::Planner)
            },
        };
        let mut v = vec![
            row(1, "q1", "a", 1000, Some("k")),
            row(2, "q2", "b", 1000, Some("k")),
            row(3, "q1", "a", 10, None),
        ];
        if reverse {
            v.reverse();
        }
        v
    }

    #[test]
    fn a_shared_call_is_split_equally_among_its_cells_in_any_order() {
        for reverse in [false, true] {
            let e = shared_ledger(reverse);
            let b = bill(&e, None, Path::new("l.jsonl"), None).unwrap();
            let c = CellCosts::new(&e, &b, Currency::Tokens, Path::new("l.jsonl")).unwrap();
            let cell = |q: &str| c.trajectory[&("d".to_string(), q.to_string(), "0".to_string())];
            assert_eq!(cell("q1"), 510.0, "reverse {reverse}");
            assert_eq!(cell("q2"), 500.0, "reverse {reverse}");
            let r = account(&e, &b, &[], 0.0, false);
            let g: Vec<(&str, &str, u64)> = r
                .groups
                .iter()
                .map(|g| (g.arm.as_str(), g.dataset.as_str(), g.model_tokens))
                .collect();
            assert_eq!(
                g,
                [("a", "d", 10), ("shared", "d", 1000)],
                "reverse {reverse}"
            );
        }
    }

    /// The document of a report (docs/json.md, `cost`): the report's fields, sorted, and
    /// an envelope whose engine is all `null`. The shared ledger by hand: 2 billed calls of
    /// 1,010 tokens over the 2 trajectories (q1, q2), so c_T = 505; no reader row, so c_R
    /// is undefined (`null`) and says why.
    #[test]
    fn the_cost_document_is_the_report_with_a_null_engine() {
        use crate::document::{document, Inputs};
        use serde_json::{json, Value};
        let e = shared_ledger(false);
        let b = bill(&e, None, Path::new("l.jsonl"), None).unwrap();
        let r = account(&e, &b, &[0.0, 2.0], 0.5, false);
        let d = document("cost", Inputs::new().with("ledger", "l.jsonl"), &r);
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["groups", "run", "search_prices", "total", "unit_costs"]
        );
        for key in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(d["run"][key], Value::Null, "{key}");
        }
        assert_eq!(d["run"]["inputs"], json!({"ledger": "l.jsonl"}));
        assert_eq!(d["search_prices"], json!([0.0, 2.0]));
        let t = &d["total"];
        assert_eq!(
            (t["model_calls"].as_u64(), t["model_tokens"].as_u64()),
            (Some(2), Some(1010))
        );
        assert_eq!((&t["arm"], &t["dataset"]), (&json!("all"), &json!("all")));
        assert_eq!(t["total_usd"], json!([0.0, 0.0]));
        let u = &d["unit_costs"];
        assert_eq!(
            (u["trajectories"].as_u64(), u["reads"].as_u64()),
            (Some(2), Some(0))
        );
        assert_eq!(u["tokens"], json!({"trajectory": 505.0, "read": null}));
        assert_eq!(
            (&u["usd"], &u["search_usd_per_1000"]),
            (&Value::Null, &json!(0.5))
        );
        assert_eq!(u["read_note"], "no reader rows, so there is no read cost");
        assert!(u.get("trajectory_note").is_none());
        assert_eq!(d["groups"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn notes_say_which_unit_costs_a_ledger_gives() {
        // An `llm batch` ledger whose requests carried question/trajectory/read: c_R only.
        let labelled = [
            reader(Some("q1"), Some(0), None),
            reader(Some("q1"), Some(1), None),
        ];
        let (t, r) = unit_cost_notes(&labelled);
        assert_eq!(
            t.as_deref(),
            Some("no planner or search rows, so there is no trajectory cost")
        );
        assert_eq!(r, None);
        // One unlabelled row spoils c_R; the hint names where labels come from.
        let mixed = [reader(Some("q1"), Some(0), None), reader(None, None, None)];
        let r = unit_cost_notes(&mixed).1.unwrap();
        assert!(
            r.starts_with("1 of 2 reader row(s)") && r.contains("`meta`"),
            "{r}"
        );
        // An `mcq run` ledger points to `stats mcq cost`.
        let r = unit_cost_notes(&[reader(None, None, Some("pc-1"))])
            .1
            .unwrap();
        assert!(r.contains("stats mcq cost"), "{r}");
        // Both kinds of rows, all labelled: no notes.
        let mut plan = reader(Some("q1"), None, None);
        plan.row.kind = CallKind::Planner;
        assert_eq!(
            unit_cost_notes(&[plan, reader(Some("q1"), Some(0), None)]),
            (None, None)
        );
    }

    #[test]
    fn one_selector_keeps_its_rows_and_the_shared_ones() {
        let row = |line: u64, kind: CallKind, selector: Option<&str>| Entry {
            line,
            row: LedgerRow {
                selector: selector.map(Into::into),
                model: Some("m".into()),
                ..LedgerRow::new(kind)
            },
        };
        let e = vec![
            row(1, CallKind::Planner, None),
            row(2, CallKind::Reader, Some("rrf")),
            row(3, CallKind::Reader, Some("rr")),
            row(4, CallKind::Search, None),
        ];
        let l = Path::new("l.jsonl");
        assert_eq!(ledger_selectors(&e), ["rrf", "rr"]);
        let lines = |v: Vec<Entry>| v.iter().map(|e| e.line).collect::<Vec<_>>();
        assert_eq!(
            lines(for_selector(e.clone(), Some("rr"), l).unwrap()),
            [1, 3, 4]
        );
        assert_eq!(
            lines(for_selector(e.clone(), None, l).unwrap()),
            [1, 2, 3, 4]
        );
        let err = for_selector(e.clone(), Some("x"), l)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no row has selector 'x' (the ledger's selectors: rrf, rr)"),
            "{err}"
        );
        // No row names a selector: the whole ledger, whatever is asked.
        let bare: Vec<Entry> = e
            .into_iter()
            .map(|mut x| {
                x.row.selector = None;
                x
            })
            .collect();
        assert!(ledger_selectors(&bare).is_empty());
        assert_eq!(
            lines(for_selector(bare, Some("x"), l).unwrap()),
            [1, 2, 3, 4]
        );
    }
}
