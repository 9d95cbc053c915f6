//! What `stats llm` prints: the rows of `llm check`, and the end summary of `llm batch`.

use std::path::Path;

use ragstats_agent::llm::batch::BatchSummary;
use ragstats_agent::llm::probe::{SystemProbe, Verdict};
use ragstats_agent::llm::CallRecord;

use crate::cmd::batch::warn_truncated;

/// The `system role` row of `llm check`: the verdict, the token counts behind it, whether the
/// reply obeyed, and what to do about a dropped system message.
pub fn describe(p: &SystemProbe, folded: bool) -> String {
    let counts = match (p.with_system, p.without_system) {
        (Some(w), Some(wo)) => format!("prompt_tokens {w} with a system message, {wo} without"),
        _ => "prompt_tokens not reported".into(),
    };
    let obeyed = match p.obeyed {
        Some(true) => "; the reply followed the system instruction",
        Some(false) => "; the reply did not follow the system instruction",
        None => "",
    };
    let how = if folded {
        " (folded into the user message by --fold-system)"
    } else {
        ""
    };
    match (p.verdict, &p.error) {
        (_, Some(e)) => format!("not checked: a probe call failed: {e}"),
        (Verdict::Delivered, _) => format!("delivered{how}: {counts}{obeyed}"),
        (Verdict::Dropped, _) if folded => format!("DROPPED even folded: {counts}{obeyed}"),
        (Verdict::Dropped, _) => {
            format!("DROPPED by the chat template: {counts}{obeyed}; pass --fold-system")
        }
        (Verdict::Unknown, _) => format!("unknown: {counts}{obeyed}"),
    }
}

/// (field, value) rows describing a check's record.
pub fn check_rows(url: &str, rec: &CallRecord) -> Vec<(&'static str, String)> {
    let opt =
        |v: Option<u64>| v.map_or_else(|| "null (not reported)".to_string(), |x| x.to_string());
    let mut rows = vec![("endpoint", url.to_string()), ("model", rec.model.clone())];
    match &rec.error {
        Some(e) => rows.push((
            "result",
            format!("error ({}): {}", e.kind.as_str(), e.message),
        )),
        None => rows.push((
            "result",
            format!(
                "ok (finish_reason {})",
                rec.finish_reason.as_deref().unwrap_or("null")
            ),
        )),
    }
    rows.push((
        "latency",
        format!(
            "{:.1} ms last attempt, {:.1} ms total, {} attempt(s)",
            rec.latency_ms, rec.elapsed_ms, rec.attempts
        ),
    ));
    let u = rec.usage.as_ref();
    rows.push(("prompt_tokens", opt(u.and_then(|u| u.prompt_tokens))));
    rows.push((
        "cached_prompt_tokens",
        opt(u.and_then(|u| u.cached_prompt_tokens)),
    ));
    rows.push((
        "completion_tokens",
        opt(u.and_then(|u| u.completion_tokens)),
    ));
    rows.push(("reasoning_tokens", opt(u.and_then(|u| u.reasoning_tokens))));
    rows.push(("total_tokens", opt(u.and_then(|u| u.total_tokens))));
    rows.push((
        "raw usage",
        u.map_or_else(|| "null (no usage object)".into(), |u| u.raw.to_string()),
    ));
    if let Some(t) = &rec.timings {
        rows.push(("timings", t.to_string()));
    }
    rows.push((
        "reasoning",
        rec.reasoning
            .as_ref()
            .map_or_else(|| "none".into(), |r| format!("{} chars", r.chars().count())),
    ));
    if let Some(t) = &rec.text {
        rows.push(("text", ragstats_agent::llm::response::snippet(t, 200)));
    }
    rows
}

/// The end summary on stdout (what was done, where it went); warnings on stderr.
pub fn print_summary(
    s: &BatchSummary,
    out: &Path,
    ledger: Option<&Path>,
    max_tokens: Option<u64>,
) -> anyhow::Result<()> {
    let p = &s.progress;
    outln!(
        "llm batch: {} call(s): {} already answered, {} written now ({} ok, {} failed, {} from cache, {} cut at max_tokens), {} not run",
        p.total, p.skipped, p.done, p.ok, p.failed, p.cached, p.truncated, s.not_run
    );
    outln!(
        "requests {} (retries {}); tokens: prompt {} (cached {}), completion {} (reasoning {}); {:.1} s",
        p.requests,
        p.retries,
        p.prompt_tokens,
        p.cached_prompt_tokens,
        p.completion_tokens,
        p.reasoning_tokens,
        p.elapsed_s
    );
    if s.retried_failures > 0 {
        outln!(
            "{} call(s) that had failed in an earlier run were asked again",
            s.retried_failures
        );
    }
    outln!(
        "output: {}{}",
        out.display(),
        ledger
            .map(|l| format!("; ledger: {}", l.display()))
            .unwrap_or_default()
    );
    warn_truncated(p.truncated, p.ok, max_tokens);
    if !s.bad_lines.is_empty() {
        let shown: Vec<String> = s.bad_lines.iter().take(10).map(|n| n.to_string()).collect();
        eprintln!(
            "warning: {}: {} line(s) are not JSON (torn by an earlier crash) and were ignored: line {}{}",
            out.display(),
            s.bad_lines.len(),
            shown.join(", "),
            if s.bad_lines.len() > 10 { ", …" } else { "" }
        );
    }
    if s.repaired_tail {
        eprintln!(
            "warning: {}: the last line was incomplete; new records start on the next line",
            out.display()
        );
    }
    if s.cache_write_errors > 0 {
        eprintln!(
            "warning: {} response(s) could not be written to the cache",
            s.cache_write_errors
        );
    }
    if p.failed > 0 {
        eprintln!(
            "{} call(s) failed for good and are recorded with an \"error\" field; a re-run asks them again",
            p.failed
        );
    }
    Ok(())
}
