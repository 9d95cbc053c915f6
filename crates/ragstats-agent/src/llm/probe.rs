//! The system-role probe of `stats llm check`: does the server's chat template deliver a
//! system message to the model?
//!
//! The same user message is sent with and without a system instruction (under the
//! command's sampling, `--fold-system` included). A template that drops the system message
//! sends the model the same tokens both times, so equal `prompt_tokens` mean it was
//! dropped; more with it mean it arrived. Without token counts, a reply that obeys the
//! instruction shows it arrived (one that does not proves nothing: a small model may ignore
//! it). The probe's texts are those recorded against a real Gemma server in
//! tests/fixtures/real/system_probe.jsonl, which the tests replay.

use super::{CallRecord, Client, Message, ModelConfig};

/// The system instruction of the probe: a reply that obeys it is one known word.
pub const PROBE_SYSTEM: &str = "Answer with only the word BANANA.";
/// The user message of both probe requests.
pub const PROBE_USER: &str = "What colour is the sky?";
/// The word an obeying reply contains (compared in lower case).
pub const PROBE_WORD: &str = "banana";

/// What the probe concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The request with a system message was counted longer than the one without.
    Delivered,
    /// Both requests were counted the same: the system text never reached the model.
    Dropped,
    /// No token counts to compare, and the reply did not show the instruction was seen.
    Unknown,
}

/// What the two probe calls showed (`system_probe` of `llm check --format json`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SystemProbe {
    pub verdict: Verdict,
    /// usage.prompt_tokens with and without the system message.
    #[serde(rename = "prompt_tokens_with_system")]
    pub with_system: Option<u64>,
    #[serde(rename = "prompt_tokens_without_system")]
    pub without_system: Option<u64>,
    /// The reply to the request with the system message contains [`PROBE_WORD`].
    pub obeyed: Option<bool>,
    /// Why the probe could not run (a call failed).
    pub error: Option<String>,
}

/// The two probe requests under `t`: with the system instruction first, and without it.
pub fn probe_requests(t: &ModelConfig) -> [super::ChatRequest; 2] {
    let mut with = t.user_request("check:system", PROBE_USER);
    with.messages
        .insert(0, Message::system(PROBE_SYSTEM).to_value());
    let without = t.user_request("check:no-system", PROBE_USER);
    [with, without]
}

/// The verdict from the record of the request with the system message (`with`) and the one
/// without: `Delivered` when prompt_tokens(with) > prompt_tokens(without), `Dropped` when
/// equal; without both counts, `Delivered` when the reply to `with` contains
/// [`PROBE_WORD`] (an echo of the instruction removed first), else `Unknown`. The first
/// call error, if any, is kept.
pub fn judge_probe(with: &CallRecord, without: &CallRecord) -> SystemProbe {
    let failed = [with, without]
        .iter()
        .find_map(|r| r.error.as_ref().map(|e| e.message.clone()));
    let tokens = |r: &CallRecord| r.usage.as_ref().and_then(|u| u.prompt_tokens);
    let (w, wo) = (tokens(with), tokens(without));
    let obeyed = with
        .text
        .as_ref()
        // An echo of the instruction (small models echo prompts) is not obeying it.
        .map(|t| {
            t.to_lowercase()
                .replace(&PROBE_SYSTEM.to_lowercase(), "")
                .contains(PROBE_WORD)
        });
    let verdict = match (w, wo) {
        (Some(w), Some(wo)) if w > wo => Verdict::Delivered,
        (Some(w), Some(wo)) if w == wo => Verdict::Dropped,
        _ if obeyed == Some(true) => Verdict::Delivered,
        _ => Verdict::Unknown,
    };
    SystemProbe {
        verdict,
        with_system: w,
        without_system: wo,
        obeyed,
        error: failed,
    }
}

/// Sends both probe requests of [`probe_requests`] at once through `client` and judges them
/// with [`judge_probe`].
pub async fn system_probe(client: &Client, t: &ModelConfig) -> SystemProbe {
    let [with, without] = probe_requests(t);
    let (a, b) = tokio::join!(client.complete(&with), client.complete(&without));
    judge_probe(&a, &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(text: Option<&str>, prompt_tokens: Option<u64>) -> CallRecord {
        let mut v = serde_json::json!({
            "id": "check:system", "sample": 0, "model": "m", "latency_ms": 1.0,
            "elapsed_ms": 1.0, "attempts": 1, "cached": false,
        });
        if let Some(t) = text {
            v["text"] = t.into();
        }
        if let Some(p) = prompt_tokens {
            v["usage"] = serde_json::json!({"prompt_tokens": p, "raw": {"prompt_tokens": p}});
        }
        serde_json::from_value(v).unwrap()
    }

    /// The replies recorded against a real Gemma 3 270M server
    /// (tests/fixtures/real/system_probe.jsonl, lines 1 and 2): 15 prompt tokens with the
    /// system message and 15 without, and a reply that echoes the question: dropped.
    #[test]
    fn gemma_recording_is_dropped() {
        let p = judge_probe(
            &rec(
                Some("Question 1. What colour is the sky? wnętr\nWhat colour is the"),
                Some(15),
            ),
            &rec(
                Some("The colour of the sky.\nthe colour that can be seen from a long"),
                Some(15),
            ),
        );
        assert_eq!(p.verdict, Verdict::Dropped);
        assert_eq!((p.with_system, p.without_system), (Some(15), Some(15)));
        assert_eq!(p.obeyed, Some(false));
        assert_eq!(p.error, None);
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["verdict"], "dropped");
        assert_eq!(v["prompt_tokens_with_system"], 15);
    }

    #[test]
    fn counts_then_obedience_decide() {
        let with = |t| rec(Some(t), Some(22));
        assert_eq!(
            judge_probe(&with("sky"), &rec(Some("blue"), Some(15))).verdict,
            Verdict::Delivered
        );
        // No counts: an obeying reply shows delivery; an echo of the instruction does not.
        assert_eq!(
            judge_probe(&rec(Some("BANANA"), None), &rec(None, None)).verdict,
            Verdict::Delivered
        );
        let echo = judge_probe(&rec(Some(PROBE_SYSTEM), None), &rec(None, None));
        assert_eq!((echo.verdict, echo.obeyed), (Verdict::Unknown, Some(false)));
        let [w, wo] = probe_requests(&ModelConfig {
            model: "m".into(),
            params: Default::default(),
            extra: Default::default(),
        });
        assert_eq!(w.messages.len(), 2);
        assert_eq!(w.messages[0]["role"], "system");
        assert_eq!(wo.messages.len(), 1);
    }
}
