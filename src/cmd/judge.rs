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
    let n = judge::counts(&judged, &calls, &records);
    outln!(
        "judge: {} trajectory(ies), {} step unit(s), {} call(s): {}",
        n.trajectories,
        n.units,
        p.total,
        crate::cmd::batch::run_counts(p)
    );
    outln!(
        "scores: {} read, {} failure(s) (not judged, call failed, or no 1–10 score in the reply; never defaulted), {} repl(ies) cut at max_tokens -> {}",
        n.units - n.failures,
        n.failures,
        n.cut,
        a.out.display()
    );
    outln!("table: {}", csv_path.display());
    warn_truncated(n.cut as u64, n.answered as u64, max_tokens);
    match correlate_hint(&judged, &csv_path) {
        Ok(cmd) => eprintln!("try: {cmd}"),
        Err(why) => eprintln!("note: no `stats correlate` suggestion: {why}"),
    }
    exit_code(&summary, a.endpoint.key_env())
}

/// A `stats correlate` command that runs as printed on the table at `csv`: the mean scores
/// ([`judge::correlate_columns`]) against correctness, point-biserial, rows with an empty
/// cell dropped; `Err` says why no correlation can be computed.
fn correlate_hint(judged: &[Judged], csv: &std::path::Path) -> Result<String, String> {
    let cols = judge::correlate_columns(judged)?;
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
