//! `stats judge`: an LLM scores every step of every trajectory 1–10 for grounded reasoning
//! and evidence extraction (RAGCap-Bench §4.5); per-trajectory means beside correctness, as
//! JSONL and as a CSV table for `stats correlate --method pointbiserial`.

use std::path::PathBuf;

use ragstats_agent::judge::{self, JudgeConfig, Judged, TABLE_HEADER};
use ragstats_agent::llm::ModelConfig;
use ragstats_agent::mcqgen::write_jsonl;
use ragstats_core::io::{refuse_overwriting_inputs, write_atomic};
use ragstats_core::trajlog::{pick_selector, read_trajectories};

use super::batch::{block_on, exit_code, warn_truncated, BatchPolicy};
use super::endpoint::{Configured, Endpoint};
use super::mcq::default_sidecar;

/// Flags of `stats judge`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("max_tokens", |a| a.default_value(super::endpoint::JUDGE_MAX_TOKENS)))]
pub struct Args {
    /// Trajectory log (`trajectories.jsonl` of `stats run`; docs/mcqgen.md).
    pub trajectories: PathBuf,
    #[command(flatten)]
    pub endpoint: Endpoint,
    /// Selector whose reads decide correctness and whose packet and reader output are the
    /// final extraction step [default: the first selector in the log].
    #[arg(long)]
    pub selector: Option<String>,
    /// Judged trajectories JSONL (per-step scores and failures, per-trajectory means).
    #[arg(long)]
    pub out: PathBuf,
    /// CSV table, one row per trajectory [default: <out> with extension .csv].
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Judge responses JSONL, the resume state [default: <out stem>.responses.jsonl].
    #[arg(long)]
    pub responses: Option<PathBuf>,
    #[command(flatten)]
    pub policy: BatchPolicy,
}

/// Runs `stats judge`.
pub fn run(a: Args) -> anyhow::Result<u8> {
    block_on(judge_run(a))
}

async fn judge_run(a: Args) -> anyhow::Result<u8> {
    let csv_path = a.csv.clone().unwrap_or_else(|| a.out.with_extension("csv"));
    let responses = a
        .responses
        .clone()
        .unwrap_or_else(|| default_sidecar(&a.out, "responses"));
    refuse_overwriting_inputs(
        &[
            ("--out", a.out.as_path()),
            ("--csv", csv_path.as_path()),
            ("--responses", responses.as_path()),
        ],
        &[("trajectory log", a.trajectories.as_path())],
    )?;
    let trajs = read_trajectories(&a.trajectories)?;
    let selector = pick_selector(&trajs, a.selector.as_deref())?;
    let Configured {
        config,
        params,
        extra,
    } = a.policy.configure(&a.endpoint)?;
    let max_tokens = params.max_tokens;
    let cfg = JudgeConfig {
        llm: ModelConfig {
            model: a.endpoint.model.clone(),
            params,
            extra,
        },
        selector,
    };
    let (calls, unjudged) = judge::plan(&trajs, &cfg);
    let requests = calls.iter().map(|c| c.request.clone()).collect();
    let (summary, records) = a
        .policy
        .ask(
            config,
            requests,
            &responses,
            ragstats_core::ledger::CallKind::Judge,
        )
        .await?;
    let judged = judge::build(&trajs, &calls, unjudged, &records, &cfg);
    write_jsonl(&a.out, &judged)?;
    let rows = judge::table_rows(&judged);
    write_atomic(&csv_path, |w| {
        let mut c = csv::Writer::from_writer(w);
        c.write_record(TABLE_HEADER)?;
        for r in &rows {
            c.write_record(r)?;
        }
        c.flush()
    })?;
    let p = &summary.progress;
    let units: usize = judged.iter().map(|j| j.steps.len()).sum();
    let failures: usize = judged.iter().map(|j| j.failures).sum();
    let answered = calls
        .iter()
        .filter_map(|c| records.get(&(c.request.id.clone(), 0)))
        .filter(|r| r.is_ok())
        .count();
    let cut: usize = judged
        .iter()
        .flat_map(|j| &j.steps)
        .filter(|s| s.truncated)
        .count();
    outln!(
        "judge: {} trajectory(ies), {} step unit(s), {} call(s): {} already answered, {} asked now ({} from cache, {} failed)",
        judged.len(),
        units,
        p.total,
        p.skipped,
        p.done,
        p.cached,
        p.failed
    );
    outln!(
        "scores: {} read, {} failure(s) (not judged, call failed, or no 1–10 score in the reply; never defaulted), {} repl(ies) cut at max_tokens -> {}",
        units - failures,
        failures,
        cut,
        a.out.display()
    );
    outln!("table: {}", csv_path.display());
    warn_truncated(cut as u64, answered as u64, max_tokens);
    match correlate_hint(&judged, &csv_path) {
        Ok(cmd) => eprintln!("try: {cmd}"),
        Err(why) => eprintln!("note: no `stats correlate` suggestion: {why}"),
    }
    exit_code(&summary, a.endpoint.key_env())
}

/// A `stats correlate` command that runs as printed on the table at `csv`: the mean scores
/// against correctness, point-biserial, rows with an empty cell dropped. Only the score
/// columns present wherever `judge_score` and `correct` both are are named, so that
/// listwise deletion keeps every such row. `Err` says why no correlation can be computed
/// (too few rows, or correctness or the scores do not vary).
fn correlate_hint(judged: &[Judged], csv: &std::path::Path) -> Result<String, String> {
    let rows: Vec<&Judged> = judged
        .iter()
        .filter(|j| j.judge_score.is_some() && j.correct.is_some())
        .collect();
    // Fewer than three pairs give no interval (correlate refuses them).
    if rows.len() < 3 {
        return Err(format!(
            "{} trajectory(ies) have both a judge score and a correctness (at least 3 are needed)",
            rows.len()
        ));
    }
    let both = |f: fn(&Judged) -> Option<bool>| {
        rows.iter().any(|j| f(j) == Some(true)) && rows.iter().any(|j| f(j) == Some(false))
    };
    if !both(|j| j.correct) {
        return Err("every scored trajectory has the same correctness".into());
    }
    let mut cols = vec!["judge_score"];
    let varies = |f: fn(&Judged) -> Option<f64>| {
        let v: Vec<f64> = rows.iter().filter_map(|j| f(j)).collect();
        v.len() == rows.len() && v.iter().any(|x| *x != v[0])
    };
    if !varies(|j| j.judge_score) {
        return Err("the judge gave every scored trajectory the same mean score".into());
    }
    if varies(|j| j.reasoning_score) {
        cols.push("reasoning_score");
    }
    if varies(|j| j.extraction_score) {
        cols.push("extraction_score");
    }
    let path = csv.display().to_string();
    let quoted = if path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@".contains(c))
    {
        path
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    };
    Ok(format!(
        "stats correlate {quoted} --x {} --y correct --method pointbiserial --missing drop",
        cols.join(",")
    ))
}
