//! `stats mcq generate`: RAGCap-Bench-style items built from a trajectory log — vanilla
//! items straight from the log, error-guided items written by a model through the shared
//! batch runner (cache, resume, ledger). The output passes `stats mcq validate`.

use std::collections::BTreeMap;
use std::path::PathBuf;

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
use crate::cmd::batch::{exit_code, warn_truncated, BatchPolicy};
use crate::cmd::endpoint::{Configured, Endpoint};

/// Flags of `stats mcq generate`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("max_tokens", |a| a.default_value(crate::cmd::endpoint::GENERATE_MAX_TOKENS)))]
pub struct Args {
    /// Trajectory log (`trajectories.jsonl` of `stats run`; docs/mcqgen.md).
    pub trajectories: PathBuf,
    /// `all`, or a comma list of evidence_extraction, noise_robustness (abstain; reliability
    /// too with --credibility), planning, grounded_reasoning. Only the last two call the model.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub tasks: Vec<String>,
    #[command(flatten)]
    pub endpoint: Endpoint,
    /// CSV `pattern,label` (label credible | less_credible) rating URL or domain patterns;
    /// reliability items are built only with it.
    #[arg(long, value_name = "CSV")]
    pub credibility: Option<PathBuf>,
    /// Selector whose reads decide correctness (and whose packet grounded-reasoning items
    /// use) [default: the first selector in the log].
    #[arg(long)]
    pub selector: Option<String>,
    /// Items JSONL to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Generation responses JSONL, the resume state [default: <out stem>.responses.jsonl].
    #[arg(long)]
    pub responses: Option<PathBuf>,
    /// What did not become an item, with the reason [default: <out stem>.skipped.jsonl].
    #[arg(long)]
    pub skipped: Option<PathBuf>,
    #[command(flatten)]
    pub policy: BatchPolicy,
}

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
                "mcq generate: {} generation call(s): {} already answered, {} asked now ({} from cache, {} failed, {} cut at max_tokens)",
                p.total, p.skipped, p.done, p.cached, p.failed, cut
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
