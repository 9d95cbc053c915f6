//! `stats mcq compare`: paired deltas (B − A) of two result files with intervals, and
//! McNemar's exact test on EM.

use std::collections::HashMap;
use std::path::PathBuf;

use ragstats_core::mcq::compare::{item_differences, mcnemar_table, pair, per_run_differences};
use ragstats_core::mcq::score::{level_rows, LevelRow, MeanRange};
use ragstats_core::mcq::{Group, Task};
use serde_json::json;

use super::boot::{ci, group_bootstrap, load_items_opt, load_results, BootArgs};
use crate::cmd::common::{num, print_json, write_csv, Format, Table};

/// Flags of `stats mcq compare`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results of model A (the baseline).
    pub a: PathBuf,
    /// Results of model B; deltas are B − A.
    pub b: PathBuf,
    #[command(flatten)]
    pub boot: BootArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw both sides' EM and F1 per task and the deltas with intervals as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    a.boot.resample.replicates()?;
    let items = load_items_opt(&a.boot.items)?;
    let ra = load_results(&a.a, items.as_ref())?;
    let rb = load_results(&a.b, items.as_ref())?;
    let pairing = pair(&ra, &rb, a.boot.failures())?;
    let diffs = item_differences(&pairing.pairs);
    let per_run = per_run_differences(&pairing.pairs);
    let (engine, reps) = group_bootstrap(&diffs, MeanRange::Differences, &a.boot)?;
    let table = level_rows(&diffs, &per_run, &reps, a.boot.resample.confidence.get());
    // Each side's own scores over the paired (id, run) set, for context.
    let side = |which: usize| {
        let mut idx: HashMap<&str, usize> = HashMap::new();
        let mut acc: Vec<(Group, [f64; 2], f64)> = Vec::new();
        for p in &pairing.pairs {
            let i = *idx.entry(p.id.as_str()).or_insert_with(|| {
                acc.push((p.group, [0.0, 0.0], 0.0));
                acc.len() - 1
            });
            let v = if which == 0 { p.a } else { p.b };
            acc[i].1[0] += v[0];
            acc[i].1[1] += v[1];
            acc[i].2 += 1.0;
        }
        let rows: Vec<(Group, [f64; 2])> = acc
            .into_iter()
            .map(|(g, s, n)| (g, [s[0] / n, s[1] / n]))
            .collect();
        ragstats_core::mcq::score::levels(&ragstats_core::mcq::score::group_means(&rows))
    };
    let (la, lb) = (side(0), side(1));
    let lookup = |l: &ragstats_core::mcq::score::Levels, r: &LevelRow| -> [f64; 2] {
        let v = match r.level {
            "group" => Group::ALL
                .iter()
                .find(|g| g.as_str() == r.name)
                .and_then(|g| l.groups[g.index()]),
            "task" => Task::ALL
                .iter()
                .position(|t| t.as_str() == r.name)
                .and_then(|t| l.tasks[t]),
            _ => l.overall,
        };
        v.unwrap_or([f64::NAN, f64::NAN])
    };
    let mc = mcnemar_table(&pairing.pairs);
    let (ma, mb) = (&ra[0].model, &rb[0].model);
    if let Some(p) = &a.plot {
        let side =
            |r: &ragstats_core::mcq::results::RunResult, l, tag: &str| ragstats_plot::McqSide {
                name: format!("{tag}: {}, {}", r.model, r.prompt),
                scores: table.iter().map(|row| lookup(l, row)).collect(),
            };
        let (sa, sb) = (side(&ra[0], &la, "A"), side(&rb[0], &lb, "B"));
        let caption = ragstats_plot::Caption {
            panel: format!("{} vs {}", a.a.display(), a.b.display()),
            outcome: String::new(),
            bootstrap: Some((a.boot.resample.seed, u64::from(a.boot.resample.replicates))),
        };
        let svg = ragstats_plot::mcq_compare(&table, [&sa, &sb], &caption)?;
        crate::cmd::figure::write_svg(p, &svg, &[a.a.as_path(), a.b.as_path()])?;
    }
    match a.format {
        Format::Json => print_json(&json!({
            "a": {"file": a.a.display().to_string(), "model": ma, "prompt": ra[0].prompt, "shuffle_seed": ra[0].shuffle_seed},
            "b": {"file": a.b.display().to_string(), "model": mb, "prompt": rb[0].prompt, "shuffle_seed": rb[0].shuffle_seed},
            "pairs": pairing.pairs.len(), "unpaired_a": pairing.unpaired_a, "unpaired_b": pairing.unpaired_b,
            "failures": a.boot.failures(), "replicates": a.boot.resample.replicates, "seed": a.boot.resample.seed,
            "confidence": a.boot.resample.confidence.get(), "backend": engine.name(),
            "deltas": table.iter().map(|r| json!({
                "level": r.level, "name": r.name, "items": r.items,
                "a": {"em": lookup(&la, r)[0], "f1": lookup(&la, r)[1]},
                "b": {"em": lookup(&lb, r)[0], "f1": lookup(&lb, r)[1]},
                "delta_em": r.em, "delta_f1": r.f1,
            })).collect::<Vec<_>>(),
            "mcnemar": mc,
        }))?,
        Format::Csv => write_csv(
            &[
                "level",
                "name",
                "items",
                "em_a",
                "em_b",
                "delta_em",
                "delta_em_lo",
                "delta_em_hi",
                "f1_a",
                "f1_b",
                "delta_f1",
                "delta_f1_lo",
                "delta_f1_hi",
                "mcnemar_a_only",
                "mcnemar_b_only",
                "mcnemar_p",
            ],
            &table
                .iter()
                .map(|r| {
                    let (x, y) = (lookup(&la, r), lookup(&lb, r));
                    let m = mc.iter().find(|m| m.group == r.name);
                    vec![
                        r.level.to_string(),
                        r.name.clone(),
                        r.items.to_string(),
                        x[0].to_string(),
                        y[0].to_string(),
                        r.em.estimate.to_string(),
                        r.em.ci[0].to_string(),
                        r.em.ci[1].to_string(),
                        x[1].to_string(),
                        y[1].to_string(),
                        r.f1.estimate.to_string(),
                        r.f1.ci[0].to_string(),
                        r.f1.ci[1].to_string(),
                        m.map(|m| m.a_only.to_string()).unwrap_or_default(),
                        m.map(|m| m.b_only.to_string()).unwrap_or_default(),
                        m.map(|m| m.p.to_string()).unwrap_or_default(),
                    ]
                })
                .collect::<Vec<_>>(),
        )?,
        Format::Table => {
            outln!(
                "A = {} ({}), B = {} ({}); {} paired (id, run), unpaired A {} B {}; deltas B − A; {} replicates on {}",
                ma,
                a.a.display(),
                mb,
                a.b.display(),
                pairing.pairs.len(),
                pairing.unpaired_a,
                pairing.unpaired_b,
                a.boot.resample.replicates,
                engine.name()
            );
            let pct = format!("{} CI", a.boot.resample.confidence.percent());
            let (h1, h2) = (format!("ΔEM {pct}"), format!("ΔF1 {pct}"));
            let mut t = Table::new(&[
                "level", "name", "items", "EM A", "EM B", "ΔEM", &h1, "F1 A", "F1 B", "ΔF1", &h2,
            ]);
            for r in &table {
                let (x, y) = (lookup(&la, r), lookup(&lb, r));
                t.row(vec![
                    r.level.into(),
                    r.name.clone(),
                    r.items.to_string(),
                    num(x[0]),
                    num(y[0]),
                    num(r.em.estimate),
                    ci(&r.em),
                    num(x[1]),
                    num(y[1]),
                    num(r.f1.estimate),
                    ci(&r.f1),
                ]);
            }
            out!("{}", t.to_text());
            outln!("\nMcNemar exact test on EM over (id, run) pairs");
            let mut t = Table::new(&["group", "pairs", "A only", "B only", "p"]);
            for m in &mc {
                t.row(vec![
                    m.group.clone(),
                    m.pairs.to_string(),
                    m.a_only.to_string(),
                    m.b_only.to_string(),
                    num(m.p),
                ]);
            }
            out!("{}", t.to_text());
        }
    }
    Ok(0)
}
