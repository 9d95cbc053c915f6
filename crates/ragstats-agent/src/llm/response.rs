//! Parsing a chat-completions response body, whichever server dialect sent it.
//!
//! Dialects covered (fixtures in `tests/fixtures/llm/`): OpenAI (`prompt_tokens_details`,
//! `completion_tokens_details`), vLLM, llama.cpp `llama-server` (extra `timings`), Ollama's
//! OpenAI-compatible endpoint, DeepSeek (`prompt_cache_hit_tokens`, `reasoning_content`)
//! and Qwen/DashScope compatible mode.

use serde_json::Value;

use ragstats_core::chat::Usage;

/// The parts of a successful response that a record keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedResponse {
    /// Answer text, `<think>` block removed.
    pub text: String,
    /// Reasoning text, when the server sent any.
    pub reasoning: Option<String>,
    /// `choices[0].finish_reason`.
    pub finish_reason: Option<String>,
    /// Usage, `None` when the body has no `usage` object.
    pub usage: Option<Usage>,
    /// llama-server's `timings`, raw.
    pub timings: Option<Value>,
}

/// Parses a 2xx body. Errors (a one-line reason) when it is not JSON or has no
/// `choices[0].message`.
///
/// # Errors
/// Returns a description of what was wrong with the body.
pub fn parse_chat_response(body: &str) -> Result<ParsedResponse, String> {
    let v: Value = serde_json::from_str(body).map_err(|e| {
        format!(
            "response body is not JSON ({e}): {}",
            snippet(body, 120).replace('\n', " ")
        )
    })?;
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| "response has no choices[0]".to_string())?;
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| "response has no choices[0].message object".to_string())?;
    let content = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        // A tool-call answer or a model that produced only reasoning has content null.
        Some(Value::Null) | None => String::new(),
        // Some servers return content parts: join their text.
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        Some(other) => return Err(format!("choices[0].message.content is {other}, not text")),
    };
    let field_reasoning = ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| message.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let (text, think) = split_think(&content);
    let reasoning = match (field_reasoning, think) {
        (Some(r), _) => Some(r),
        (None, t) => t,
    };
    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(ParsedResponse {
        text,
        reasoning,
        finish_reason,
        usage: v.get("usage").and_then(parse_usage),
        timings: v.get("timings").filter(|t| t.is_object()).cloned(),
    })
}

/// Reads a `usage` object. Returns `None` when it is absent or `null`. Each field that is
/// missing or not a non-negative integer stays `None`.
pub fn parse_usage(u: &Value) -> Option<Usage> {
    if !u.is_object() {
        return None;
    }
    let int = |v: Option<&Value>| v.and_then(Value::as_u64);
    let cached = int(u.pointer("/prompt_tokens_details/cached_tokens"))
        // DeepSeek reports cache hits at the top level of usage.
        .or_else(|| int(u.get("prompt_cache_hit_tokens")));
    Some(Usage {
        prompt_tokens: int(u.get("prompt_tokens")),
        cached_prompt_tokens: cached,
        completion_tokens: int(u.get("completion_tokens")),
        reasoning_tokens: int(u.pointer("/completion_tokens_details/reasoning_tokens")),
        total_tokens: int(u.get("total_tokens")),
        raw: u.clone(),
    })
}

/// Splits a `<think>…</think>` block out of `content`: returns (answer, reasoning).
///
/// The block may open the content or appear after whitespace; a content with `</think>` but
/// no opening tag (Qwen3 / DeepSeek-R1 chat templates put `<think>` in the prompt) is split at
/// the closing tag. An unclosed `<think>` (output cut by `max_tokens`) is all reasoning.
pub fn split_think(content: &str) -> (String, Option<String>) {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    let trimmed = content.trim_start();
    if let Some(rest) = trimmed.strip_prefix(OPEN) {
        return match rest.find(CLOSE) {
            Some(end) => (
                rest[end + CLOSE.len()..].trim_start().to_string(),
                Some(rest[..end].trim().to_string()),
            ),
            None => (String::new(), Some(rest.trim().to_string())),
        };
    }
    if !content.contains(OPEN) {
        if let Some(end) = content.find(CLOSE) {
            return (
                content[end + CLOSE.len()..].trim_start().to_string(),
                Some(content[..end].trim().to_string()),
            );
        }
    }
    (content.to_string(), None)
}

/// Reads an error body's message and code (OpenAI shape `{"error": {"message", "type",
/// "code"}}`, or `{"error": "..."}`, or `{"message": ...}`), falling back to the raw text.
pub fn error_message(body: &str) -> (String, Option<String>) {
    let fallback = || snippet(body.trim(), 300).replace('\n', " ");
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return (fallback(), None);
    };
    let err = v.get("error").unwrap_or(&v);
    let message = match err {
        Value::String(s) => s.clone(),
        _ => err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(fallback),
    };
    let code = ["code", "type"].iter().find_map(|k| {
        err.get(*k).and_then(|c| match c {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    });
    (message, code)
}

/// The first `max` characters of `s` (on a char boundary), with `…` when cut.
pub fn snippet(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_block_is_split() {
        assert_eq!(
            split_think("<think>\nlet me see\n</think>\n\nB, D"),
            ("B, D".to_string(), Some("let me see".to_string()))
        );
        assert_eq!(
            split_think("reasoning only</think>A"),
            ("A".to_string(), Some("reasoning only".to_string()))
        );
        assert_eq!(
            split_think("<think>cut off"),
            (String::new(), Some("cut off".to_string()))
        );
        assert_eq!(split_think("plain"), ("plain".to_string(), None));
    }

    #[test]
    fn error_body_shapes() {
        let (m, c) = error_message(
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        );
        assert_eq!(m, "You exceeded your current quota");
        assert_eq!(c.as_deref(), Some("insufficient_quota"));
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#).0,
            "model not found"
        );
        assert_eq!(error_message("Bad Gateway\n").0, "Bad Gateway");
    }

    #[test]
    fn missing_usage_fields_are_none_not_zero() {
        let u = parse_usage(&serde_json::json!({"prompt_tokens": 5})).unwrap();
        assert_eq!(u.prompt_tokens, Some(5));
        assert_eq!(u.completion_tokens, None);
        assert_eq!(u.cached_prompt_tokens, None);
        assert!(parse_usage(&Value::Null).is_none());
    }
}
