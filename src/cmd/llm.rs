//! `stats llm check|batch`: call an OpenAI-compatible chat-completions endpoint. The
//! system-role probe is [`ragstats_agent::llm::probe`]; flags are in `llm/args.rs`, what it
//! prints in `llm/render.rs`.

mod args;
mod render;

use ragstats_agent::llm::probe::{system_probe, Verdict};
use ragstats_agent::llm::requests::{expand, read_requests};
use ragstats_agent::llm::ModelConfig;

pub use args::{Args, BatchArgs, CheckArgs, Sub};
use render::{check_rows, describe, print_summary};

use super::batch::{block_on, cap_phrase, exit_code};
use super::common::{write_csv, Format};
use super::endpoint::{client, Configured};

/// Runs `stats llm`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        Sub::Check(a) => block_on(check(*a)),
        Sub::Batch(a) => block_on(batch(*a)),
    }
}

async fn check(a: CheckArgs) -> anyhow::Result<u8> {
    // No cache: a check exists to make a request.
    let Configured {
        config,
        params,
        extra,
    } = a.endpoint.configure(None, None, None)?;
    let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
    let client = client(config)?;
    let template = ModelConfig {
        model: a.endpoint.model.clone(),
        params,
        extra,
    };
    let req = template.user_request("check", a.prompt.clone());
    let rec = client.complete(&req).await;
    let probe = if rec.is_ok() && !a.no_system_probe {
        Some(system_probe(&client, &template).await)
    } else {
        None
    };
    let mut rows = check_rows(&url, &rec);
    if let Some(p) = &probe {
        rows.push(("system role", describe(p, template.params.fold_system)));
    }
    match a.format {
        Format::Json => {
            let mut v = serde_json::to_value(&rec)?;
            if let Some(p) = &probe {
                v["system_probe"] = serde_json::to_value(p)?;
            }
            outln!("{}", serde_json::to_string_pretty(&v)?)
        }
        Format::Table => {
            for (k, v) in rows {
                outln!("{k:<22} {v}");
            }
        }
        Format::Csv => write_csv(
            &["field", "value"],
            &rows
                .into_iter()
                .map(|(k, v)| vec![k.to_string(), v])
                .collect::<Vec<_>>(),
        )?,
    }
    if rec.is_truncated() {
        eprintln!(
            "note: the reply was cut at {} (finish_reason \"length\"): the model did not stop after its answer; the cap keeps the check short",
            cap_phrase(template.params.max_tokens)
        );
    }
    if probe
        .as_ref()
        .is_some_and(|p| p.verdict == Verdict::Dropped)
        && !template.params.fold_system
    {
        eprintln!(
            "hint: this server drops system messages (its chat template has no system role, as Gemma's); \
             every reply-format instruction of `stats run`, and any system message of `stats llm batch`, would be lost. \
             Pass --fold-system to every command that calls this model"
        );
    }
    Ok(if rec.is_ok() { 0 } else { 1 })
}

async fn batch(a: BatchArgs) -> anyhow::Result<u8> {
    let Configured {
        config,
        params,
        extra,
    } = a.policy.configure(&a.endpoint)?;
    let lines = read_requests(&a.requests)?;
    let calls = expand(&lines, &a.endpoint.model, &params, &extra);
    let client = client(config)?;
    let summary = a
        .policy
        .run(&client, calls, &a.out, a.ledger_kind.parse()?)
        .await?;
    print_summary(
        &summary,
        &a.out,
        a.policy.ledger.as_deref(),
        params.max_tokens,
    )?;
    exit_code(&summary, a.endpoint.key_env())
}
