//! `stats mcq score`: EM and F1 per group, task and overall with run SDs and
//! stratified-bootstrap intervals, failure rates, positional bias.

use std::collections::HashMap;
use std::path::PathBuf;

use ragstats_core::mcq::positions::{position_table, shuffle_agreement};
use ragstats_core::mcq::score::{
    item_rows, level_rows, per_run_group_means, rates, FailurePolicy, LevelRow, MeanRange,
};
use ragstats_core::mcq::{Group, Task};
use serde_json::json;

use super::boot::{ci, group_bootstrap, load_items_opt, load_results, pm, BootArgs};
use crate::cmd::common::{num, print_json, write_csv, Format, Table};
use crate::cmd::UsageError;

/// Flags of `stats mcq score`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results JSONL written by `mcq run`.
    pub results: PathBuf,
    #[command(flatten)]
    pub boot: BootArgs,
    /// Also show the positional-bias table (with --format csv: show only that table).
    #[arg(long)]
    pub positions: bool,
    /// With --positions: a shuffled run of the same model, for answer agreement.
    #[arg(long, value_name = "RESULTS")]
    pub shuffled: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw EM and F1 per task with intervals (and, with --positions, the chosen rate
    /// by option position) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    a.boot.resample.replicates()?;
    if a.shuffled.is_some() && !a.positions {
        return Err(UsageError("--shuffled needs --positions".into()).into());
    }
    let items = load_items_opt(&a.boot.items)?;
    let results = load_results(&a.results, items.as_ref())?;
    let rows_items = item_rows(&results, a.boot.failures());
    if rows_items.is_empty() {
        return Err(UsageError(format!(
            "{}: no scored result lines (every line failed and --failures exclude)",
            a.results.display()
        ))
        .into());
    }
    let rows: Vec<(Group, [f64; 2])> = rows_items.iter().map(|i| (i.group, i.mean())).collect();
    let per_run: Vec<_> = per_run_group_means(&rows_items)
        .into_iter()
        .map(|(_, g)| g)
        .collect();
    let (engine, reps) = group_bootstrap(&rows, MeanRange::Scores, &a.boot)?;
    let table = level_rows(&rows, &per_run, &reps, a.boot.resample.confidence.get());
    let rate_rows = rates(&results);
    let positions = a.positions.then(|| position_table(&results));
    let agreement = match &a.shuffled {
        Some(p) => Some(shuffle_agreement(
            &results,
            &load_results(p, items.as_ref())?,
        )),
        None => None,
    };
    let first = &results[0];
    let mut runs: Vec<u32> = results.iter().map(|r| r.run).collect();
    runs.sort_unstable();
    runs.dedup();
    let missing: Vec<&str> = Task::ALL
        .iter()
        .filter(|t| !table.iter().any(|r| r.name == t.as_str()))
        .map(|t| t.as_str())
        .collect();
    if let Some(p) = &a.plot {
        let svg = ragstats_plot::mcq_score(
            &table,
            positions.as_deref(),
            &mcq_caption(&a.results, first, &a.boot),
        )?;
        crate::cmd::figure::write_svg(p, &svg, &[a.results.as_path()])?;
    }
    match a.format {
        Format::Json => print_json(&json!({
            "file": a.results.display().to_string(),
            "model": first.model, "prompt": first.prompt, "shuffle_seed": first.shuffle_seed,
            "runs": runs.len(), "items": rows.len(), "failures": a.boot.failures(),
            "replicates": a.boot.resample.replicates, "seed": a.boot.resample.seed, "confidence": a.boot.resample.confidence.get(),
            "backend": engine.name(), "backend_description": engine.description(),
            "tasks_missing": missing,
            "scores": table, "rates": rate_rows,
            "positions": positions, "shuffle_agreement": agreement,
        }))?,
        Format::Csv => {
            if let Some(pos) = &positions {
                write_csv(
                    &[
                        "position",
                        "shown",
                        "gold",
                        "chosen",
                        "gold_rate",
                        "chosen_rate",
                        "bias",
                    ],
                    &pos.iter()
                        .map(|p| {
                            vec![
                                p.position.to_string(),
                                p.shown.to_string(),
                                p.gold.to_string(),
                                p.chosen.to_string(),
                                p.gold_rate.to_string(),
                                p.chosen_rate.to_string(),
                                p.bias.to_string(),
                            ]
                        })
                        .collect::<Vec<_>>(),
                )?;
            } else {
                let rate_of: HashMap<&str, &ragstats_core::mcq::score::RateRow> =
                    rate_rows.iter().map(|r| (r.group.as_str(), r)).collect();
                write_csv(
                    &[
                        "level",
                        "name",
                        "items",
                        "em",
                        "em_run_mean",
                        "em_run_sd",
                        "em_se",
                        "em_lo",
                        "em_hi",
                        "f1",
                        "f1_run_mean",
                        "f1_run_sd",
                        "f1_se",
                        "f1_lo",
                        "f1_hi",
                        "records",
                        "parsed",
                        "parse_failed",
                        "truncated",
                        "errors",
                        "parsed_rate",
                        "parse_failure_rate",
                        "truncated_rate",
                        "error_rate",
                    ],
                    &table
                        .iter()
                        .map(|r| {
                            let mut v =
                                vec![r.level.to_string(), r.name.clone(), r.items.to_string()];
                            for s in [&r.em, &r.f1] {
                                v.extend(
                                    [s.estimate, s.run_mean, s.run_sd, s.se, s.ci[0], s.ci[1]]
                                        .map(|x| x.to_string()),
                                );
                            }
                            match rate_of.get(r.name.as_str()) {
                                Some(q) => {
                                    v.extend(
                                        [
                                            q.records,
                                            q.parsed,
                                            q.parse_failed,
                                            q.truncated,
                                            q.errors,
                                        ]
                                        .map(|x| x.to_string()),
                                    );
                                    v.extend(
                                        [
                                            q.parsed_rate,
                                            q.parse_failure_rate,
                                            q.truncated_rate,
                                            q.error_rate,
                                        ]
                                        .map(|x| x.to_string()),
                                    );
                                }
                                None => v.extend(std::iter::repeat_n(String::new(), 9)),
                            }
                            v
                        })
                        .collect::<Vec<_>>(),
                )?;
            }
        }
        Format::Table => {
            outln!(
                "{}: model {}, prompt {}{}, {} run(s), {} item(s); failures {}; {} replicates on {} ({})",
                a.results.display(),
                first.model,
                first.prompt,
                first.shuffle_seed.map(|s| format!(", shuffle seed {s}")).unwrap_or_default(),
                runs.len(),
                rows.len(),
                match a.boot.failures() {
                    FailurePolicy::Zero => "score 0",
                    FailurePolicy::Exclude => "excluded",
                },
                a.boot.resample.replicates,
                engine.name(),
                engine.description()
            );
            let pct = format!("{} CI", a.boot.resample.confidence.percent());
            out!("{}", score_table(&table, &pct).to_text());
            if !missing.is_empty() {
                outln!(
                    "note: no items for task(s) {}; overall is the mean of the tasks present",
                    missing.join(", ")
                );
            }
            outln!();
            outln!("outcomes of all result lines (the four rates sum to 1):");
            let mut t = Table::new(&[
                "group",
                "records",
                "parsed",
                "parse_failed",
                "truncated",
                "errors",
                "parsed_rate",
                "parse_failure_rate",
                "truncated_rate",
                "error_rate",
            ]);
            for r in &rate_rows {
                t.row(vec![
                    r.group.clone(),
                    r.records.to_string(),
                    r.parsed.to_string(),
                    r.parse_failed.to_string(),
                    r.truncated.to_string(),
                    r.errors.to_string(),
                    num(r.parsed_rate),
                    num(r.parse_failure_rate),
                    num(r.truncated_rate),
                    num(r.error_rate),
                ]);
            }
            out!("{}", t.to_text());
            if let Some(pos) = &positions {
                outln!("\npositional bias (parsed lines; position as shown)");
                let mut t = Table::new(&["position", "shown", "gold_rate", "chosen_rate", "bias"]);
                for p in pos {
                    t.row(vec![
                        p.position.to_string(),
                        p.shown.to_string(),
                        num(p.gold_rate),
                        num(p.chosen_rate),
                        num(p.bias),
                    ]);
                }
                out!("{}", t.to_text());
            }
            if let Some(ag) = &agreement {
                outln!(
                    "\nshuffle agreement: {} of {} (id, run) pairs give the same answer ({}); EM original {} vs shuffled {}",
                    ag.same_answer,
                    ag.pairs,
                    num(ag.agreement),
                    num(ag.em_original),
                    num(ag.em_shuffled)
                );
            }
        }
    }
    Ok(0)
}

fn score_table(rows: &[LevelRow], pct: &str) -> Table {
    let h_em = format!("EM {pct}");
    let h_f1 = format!("F1 {pct}");
    let mut t = Table::new(&[
        "level", "name", "items", "EM", "EM runs", &h_em, "F1", "F1 runs", &h_f1,
    ]);
    for r in rows {
        t.row(vec![
            r.level.into(),
            r.name.clone(),
            r.items.to_string(),
            num(r.em.estimate),
            pm(&r.em),
            ci(&r.em),
            num(r.f1.estimate),
            pm(&r.f1),
            ci(&r.f1),
        ]);
    }
    t
}

/// The caption of an MCQ figure: the results file, its model and prompt, and the bootstrap.
pub(super) fn mcq_caption(
    file: &std::path::Path,
    first: &ragstats_core::mcq::results::RunResult,
    boot: &BootArgs,
) -> ragstats_plot::Caption {
    ragstats_plot::Caption {
        panel: file.display().to_string(),
        outcome: format!("{}, {}", first.model, first.prompt),
        bootstrap: Some((boot.resample.seed, u64::from(boot.resample.replicates))),
    }
}
