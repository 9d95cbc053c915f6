//! The data that goes into and comes out of one chat-completions call: requests, messages,
//! sampling parameters, usage and the [`CallRecord`] of an answer or an error. The client
//! that makes the calls is `ragstats_agent::llm`; `stats mcq score` and the ledger read
//! these records without it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One chat message with a plain-text `content`. Requests carry messages as raw JSON values
/// (so multimodal content arrays and tool messages pass through untouched); this struct is a
/// convenience for building the common case: `Message::user("...").to_value()`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The message text.
    pub content: String,
}

impl Message {
    /// A message with the given role and text.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            role: role.into(),
            content: content.into(),
        }
    }
    /// A `system` message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::new("system", content)
    }
    /// A `user` message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::new("user", content)
    }
    /// The message as the JSON object sent in `messages`.
    pub fn to_value(&self) -> Value {
        serde_json::json!({"role": self.role, "content": self.content})
    }
}

/// Sampling parameters sent with every call; `None` fields are left out of the body so the
/// server's default applies. `fold_system` is not a server parameter but travels with them,
/// so that every request a command builds is shaped the same way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplingParams {
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `top_p`.
    pub top_p: Option<f64>,
    /// `max_tokens`.
    pub max_tokens: Option<u64>,
    /// `seed`. In a call with sample index `s` the body carries `seed + s`, so that repeated
    /// samples of one request are not identical on servers that honour the seed.
    pub seed: Option<u64>,
    /// Send no `system` message: fold its text into the first user message (see
    /// [`fold_system`]). For chat templates that have no system role and drop it silently
    /// (Gemma's). Left out of the serialised form when false, so fingerprints of unfolded
    /// requests are what they were before the option existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fold_system: bool,
}

/// The text of a message's `content`: a string as is, an array of content parts as the
/// `text` of its text parts joined by newlines (other parts have no text to fold).
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `messages` with no `system` message: the texts of all system messages, in order and
/// joined by a blank line, followed by a blank line, are prepended to the first `user`
/// message (`"<system>\n\n<user>"`; for a content-part array, as a leading text part).
/// Without a user message the system text becomes a user message where the first system
/// message was. Messages without a system message come back unchanged.
pub fn fold_system(messages: &[Value]) -> Vec<Value> {
    let is_system = |m: &Value| m.get("role").and_then(Value::as_str) == Some("system");
    let system: Vec<String> = messages
        .iter()
        .filter(|m| is_system(m))
        .map(|m| content_text(m.get("content")))
        .collect();
    if system.is_empty() {
        return messages.to_vec();
    }
    let system = system.join("\n\n");
    let first_system = messages.iter().position(is_system).unwrap_or(0);
    let mut out: Vec<Value> = messages.iter().filter(|m| !is_system(m)).cloned().collect();
    let first_user = out
        .iter()
        .position(|m| m.get("role").and_then(Value::as_str) == Some("user"));
    match first_user {
        Some(i) => {
            let m = &mut out[i];
            let folded = match m.get("content") {
                Some(Value::Array(parts)) => {
                    let mut parts = parts.clone();
                    parts.insert(
                        0,
                        serde_json::json!({"type": "text", "text": format!("{system}\n\n")}),
                    );
                    Value::Array(parts)
                }
                other => Value::String(format!("{system}\n\n{}", content_text(other))),
            };
            m["content"] = folded;
        }
        None => out.insert(
            first_system.min(out.len()),
            Message::user(system).to_value(),
        ),
    }
    out
}

/// One fully specified call: the unit that is cached, written to the output and billed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The caller's request id (copied into the response record).
    pub id: String,
    /// Sample index, 0-based: request `id` asked for `n` samples yields calls `0..n`.
    pub sample: u32,
    /// `model` in the request body.
    pub model: String,
    /// The `messages` array, passed through as given.
    pub messages: Vec<Value>,
    /// Sampling parameters.
    pub params: SamplingParams,
    /// Extra top-level body fields (e.g. `{"enable_thinking": false}`); inserted last, so
    /// they override the fields above.
    pub extra: Map<String, Value>,
    /// Caller data echoed unchanged into the response record (not sent to the server).
    pub meta: Option<Value>,
}

/// A model as a command calls it: its name, the sampling parameters and the extra body
/// fields every request to it carries.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    pub model: String,
    pub params: SamplingParams,
    pub extra: Map<String, Value>,
}

impl ModelConfig {
    /// A request `id` to this model whose one message is the user's `prompt`.
    pub fn user_request(&self, id: impl Into<String>, prompt: impl Into<String>) -> ChatRequest {
        let mut r = ChatRequest::new(
            id,
            self.model.clone(),
            vec![Message::user(prompt).to_value()],
        );
        r.params = self.params.clone();
        r.extra = self.extra.clone();
        r
    }
}

impl ChatRequest {
    /// A request with default sampling parameters, no extra body and no meta.
    pub fn new(id: impl Into<String>, model: impl Into<String>, messages: Vec<Value>) -> Self {
        ChatRequest {
            id: id.into(),
            sample: 0,
            model: model.into(),
            messages,
            params: SamplingParams::default(),
            extra: Map::new(),
            meta: None,
        }
    }

    /// The JSON body POSTed to `/chat/completions`.
    pub fn body(&self) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), Value::from(self.model.clone()));
        let p = &self.params;
        let messages = if p.fold_system {
            fold_system(&self.messages)
        } else {
            self.messages.clone()
        };
        body.insert("messages".into(), Value::Array(messages));
        if let Some(t) = p.temperature {
            body.insert("temperature".into(), Value::from(t));
        }
        if let Some(t) = p.top_p {
            body.insert("top_p".into(), Value::from(t));
        }
        if let Some(m) = p.max_tokens {
            body.insert("max_tokens".into(), Value::from(m));
        }
        if let Some(s) = p.seed {
            body.insert(
                "seed".into(),
                Value::from(s.wrapping_add(u64::from(self.sample))),
            );
        }
        for (k, v) in &self.extra {
            body.insert(k.clone(), v.clone());
        }
        Value::Object(body)
    }
}

/// Token usage as the server reported it. A field the server did not send is `None`
/// (serialised as `null`), never 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// `usage.prompt_tokens`: all input tokens, cached ones included.
    pub prompt_tokens: Option<u64>,
    /// Input tokens served from the provider's prompt cache:
    /// `usage.prompt_tokens_details.cached_tokens`, else DeepSeek's `prompt_cache_hit_tokens`.
    pub cached_prompt_tokens: Option<u64>,
    /// `usage.completion_tokens` (reasoning tokens included, as OpenAI counts them).
    pub completion_tokens: Option<u64>,
    /// `usage.completion_tokens_details.reasoning_tokens`.
    pub reasoning_tokens: Option<u64>,
    /// `usage.total_tokens`.
    pub total_tokens: Option<u64>,
    /// The `usage` object exactly as received.
    pub raw: Value,
}

/// Why a call failed for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// HTTP 401/403: the key is missing or wrong. Stops a batch.
    Auth,
    /// Quota or balance exhausted (429 `insufficient_quota`, 402). Stops a batch.
    Quota,
    /// A status that is not retried (400, 404, other 4xx).
    Rejected,
    /// A retryable status (408, 409, 429, 5xx) that persisted through every retry.
    Status,
    /// The request took longer than the per-request timeout on every attempt.
    Timeout,
    /// Connection refused, reset or dropped on every attempt.
    Connection,
    /// The server answered 2xx with a body that is not a chat completion.
    Malformed,
}

impl ErrorKind {
    /// The name used in records (`auth`, `quota`, `rejected`, `status`, `timeout`,
    /// `connection`, `malformed`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Auth => "auth",
            ErrorKind::Quota => "quota",
            ErrorKind::Rejected => "rejected",
            ErrorKind::Status => "status",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connection => "connection",
            ErrorKind::Malformed => "malformed",
        }
    }

    /// Errors that will fail every other request too: a batch stops at the first one.
    pub fn is_fatal(self) -> bool {
        matches!(self, ErrorKind::Auth | ErrorKind::Quota)
    }
}

/// A failed call's error, as written in the response record's `error` field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallError {
    /// The class of failure.
    pub kind: ErrorKind,
    /// HTTP status of the last attempt, when there was one.
    pub status: Option<u16>,
    /// A one-line description (the server's error message when it sent one; never the key).
    pub message: String,
}

/// The outcome of one call: what is appended to the output JSONL, one object per line.
/// Exactly one of `text` and `error` is present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The request id.
    pub id: String,
    /// The sample index.
    pub sample: u32,
    /// The model asked for.
    pub model: String,
    /// The answer text with any `<think>…</think>` block removed (absent on failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Reasoning text: `reasoning_content` (or `reasoning`), else the `<think>` block.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// `choices[0].finish_reason`.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Token usage; `null` when the response carried no `usage` or the call failed.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// llama-server's `timings` object, kept raw when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<Value>,
    /// Milliseconds of the last attempt (request sent to body read). For a cache hit, the
    /// latency of the original call.
    pub latency_ms: f64,
    /// Milliseconds from the first attempt to the outcome, retry waits included (0 for a hit).
    pub elapsed_ms: f64,
    /// HTTP requests made for this record (0 for a cache hit).
    pub attempts: u32,
    /// True when the record came from the on-disk cache and no request was made.
    pub cached: bool,
    /// Why the call failed for good (absent on success).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CallError>,
    /// The request's `meta`, echoed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// What a failure's reason adds when the reply was cut at the cap, so that the fix (a
/// larger `--max-tokens`) shows beside the reason: `run`'s planner, `judge` and
/// `mcq generate` write `REASON (CUT_NOTE)`.
pub const CUT_NOTE: &str = "the reply was cut at max_tokens: finish_reason length";

impl CallRecord {
    /// True when the call produced an answer.
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }

    /// True when the answer was cut at `max_tokens` (finish_reason `length`).
    pub fn is_truncated(&self) -> bool {
        self.is_ok() && self.finish_reason.as_deref() == Some("length")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn folding_moves_the_system_text_before_the_first_user_message() {
        let mut r = ChatRequest::new(
            "a",
            "gemma",
            vec![
                Message::system("Reply in JSON.").to_value(),
                Message::user("Name a colour.").to_value(),
                Message::new("assistant", "{}").to_value(),
                Message::user("Another.").to_value(),
            ],
        );
        r.params.fold_system = true;
        r.params.max_tokens = Some(16);
        assert_eq!(
            r.body(),
            json!({"model": "gemma", "max_tokens": 16, "messages": [
                {"role": "user", "content": "Reply in JSON.\n\nName a colour."},
                {"role": "assistant", "content": "{}"},
                {"role": "user", "content": "Another."}]})
        );
        // The request itself keeps its messages; only the body sent is folded.
        assert_eq!(r.messages[0]["role"], "system");
        r.params.fold_system = false;
        assert_eq!(r.body()["messages"][0]["role"], "system");
    }

    #[test]
    fn folding_joins_several_system_messages_and_handles_parts_and_no_user() {
        let msgs = vec![
            json!({"role": "system", "content": "One."}),
            json!({"role": "system", "content": [{"type": "text", "text": "Two."}]}),
            json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}),
        ];
        assert_eq!(
            fold_system(&msgs),
            vec![json!({"role": "user", "content": [
                {"type": "text", "text": "One.\n\nTwo.\n\n"},
                {"type": "image_url", "image_url": {"url": "u"}}]})]
        );
        let only = vec![json!({"role": "system", "content": "S."})];
        assert_eq!(
            fold_system(&only),
            vec![json!({"role": "user", "content": "S."})]
        );
        let none = vec![json!({"role": "user", "content": "U."})];
        assert_eq!(fold_system(&none), none);
    }

    #[test]
    fn a_models_user_request_carries_its_params_and_extra_fields() {
        let m = ModelConfig {
            model: "qwen3-8b".into(),
            params: SamplingParams {
                temperature: Some(0.0),
                ..SamplingParams::default()
            },
            extra: json!({"enable_thinking": false})
                .as_object()
                .unwrap()
                .clone(),
        };
        let r = m.user_request("judge:q1:s0:r", "Score this step.");
        assert_eq!(
            r.body(),
            json!({"model": "qwen3-8b", "messages": [{"role": "user", "content": "Score this step."}],
                   "temperature": 0.0, "enable_thinking": false})
        );
        assert_eq!(
            (r.id.as_str(), r.sample, r.meta),
            ("judge:q1:s0:r", 0, None)
        );
    }
}
