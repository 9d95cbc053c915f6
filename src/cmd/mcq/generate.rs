//! `stats mcq generate`: RAGCap-Bench-style items built from a trajectory log — vanilla
//! items straight from the log, error-guided items written by a model through the shared
//! batch runner (cache, resume, ledger). The output passes `stats mcq validate`.

mod args;

use std::collections::BTreeMap;

use ragstats_agent::llm::ModelConfig;
use ragstats_agent::mcqgen::guided::{self, GuidedConfig};
use ragstats_agent::mcqgen::tasks::{guided_tasks, parse_tasks, vanilla_items, Breakdown};
use ragstats_agent::mcqgen::vanilla::CredibilityMap;
use ragstats_agent::mcqgen::write_jsonl;
use ragstats_core::io::refuse_overwriting_inputs;
use ragstats_core::mcq::validate::read_items;
use ragstats_core::mcq::Task;
use ragstats_core::trajlog::{pick_selector, read_trajectories};

use super::default_sidecar;
pub use args::Args;

use crate::cmd::batch::{exit_code, warn_truncated};
use crate::cmd::endpoint::Configured;

/// Runs `stats mcq generate`.
pub async fn run(a: Args) -> anyhow::Result<u8> {
    let tasks = parse_tasks(&a.tasks)?;
    let responses = a
        .responses
        .clone()
        .unwrap_or_else(|| default_sidecar(&a.out, "responses"));
    let skipped_path = a
        .skipped
        .clone()
        .unwrap_or_else(|| default_sidecar(&a.out, "skipped"));
    let mut inputs = vec![("trajectory log", a.trajectories.as_path())];
    if let Some(c) = &a.credibility {
        inputs.push(("credibility file", c.as_path()));
    }
    refuse_overwriting_inputs(
        &[
            ("--out", a.out.as_path()),
            ("--responses", responses.as_path()),
            ("--skipped", skipped_path.as_path()),
        ],
        &inputs,
    )?;
    let trajs = read_trajectories(&a.trajectories)?;
    let cred = a
        .credibility
        .as_deref()
        .map(CredibilityMap::read)
        .transpose()?;

    let mut all = vanilla_items(&trajs, &tasks, cred.as_ref());
    let guided_tasks = guided_tasks(&tasks);
    let mut code = 0;
    if !guided_tasks.is_empty() {
        let selector = pick_selector(&trajs, a.selector.as_deref())?;
        let Configured {
            config,
            params,
            extra,
        } = a.policy.configure(&a.endpoint)?;
        let max_tokens = params.max_tokens;
        let cfg = GuidedConfig {
            llm: ModelConfig {
                model: a.endpoint.model.clone(),
                params,
                extra,
            },
            selector,
        };
        let (planned, skips) = guided::plan(&trajs, &guided_tasks, &cfg);
        all.skipped.extend(skips);
        if !planned.is_empty() {
            let calls = planned.iter().map(|p| p.request.clone()).collect();
            let (summary, records) = a
                .policy
                .ask(
                    config,
                    calls,
                    &responses,
                    ragstats_core::ledger::CallKind::Generator,
                )
                .await?;
            let p = &summary.progress;
            let used: Vec<_> = planned
                .iter()
                .filter_map(|c| records.get(&(c.request.id.clone(), 0)))
                .filter(|r| r.is_ok())
                .collect();
            let cut = used.iter().filter(|r| r.is_truncated()).count();
            outln!(
                "mcq generate: {} generation call(s): {}; {} cut at max_tokens",
                p.total,
                crate::cmd::batch::run_counts(p),
                cut
            );
            warn_truncated(cut as u64, used.len() as u64, max_tokens);
            all.extend(guided::build(&planned, &records));
            code = exit_code(&summary, a.endpoint.key_env())?;
        }
    }

    write_jsonl(&a.out, &all.items)?;
    write_jsonl(&skipped_path, &all.skipped)?;
    let check = read_items(&a.out)?;
    if let Some(v) = check.violations.first() {
        return Err(anyhow::anyhow!(
            "generated items fail validation (a bug; please report): {}",
            v.display(&a.out)
        ));
    }
    let counts = Breakdown::of(&all);
    // " (a 3, b 2)", or nothing for an empty breakdown.
    let fmt = |m: &BTreeMap<&'static str, usize>| {
        if m.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = m.iter().map(|(k, n)| format!("{k} {n}")).collect();
        format!(" ({})", parts.join(", "))
    };
    if all.items.is_empty() {
        let why = if all.skipped.is_empty() {
            format!(
                "the log gave no candidates for --tasks {}",
                tasks
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        } else {
            format!(
                "every candidate was skipped or rejected; the reasons are in {}",
                skipped_path.display()
            )
        };
        outln!("items: none written ({why}); {} is empty", a.out.display());
    } else {
        outln!(
            "items: {} written{} -> {}",
            all.items.len(),
            fmt(&counts.groups),
            a.out.display()
        );
    }
    outln!(
        "skipped or rejected: {}{}, with reasons -> {}",
        all.skipped.len(),
        fmt(&counts.skips),
        skipped_path.display()
    );
    if tasks.contains(&Task::NoiseRobustness) && cred.is_none() {
        eprintln!("note: no reliability items: they need --credibility FILE (the corpus has no credibility labels)");
    }
    Ok(code)
}
