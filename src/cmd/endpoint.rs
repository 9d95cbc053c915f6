//! The endpoint flags of every command that calls a model (`stats llm check|batch`,
//! `stats mcq run|generate`, `stats judge`, `stats run`) and the client they configure.
//!
//! `--max-tokens` has a default per command, set on the command with
//! `#[command(mut_arg("max_tokens", |a| a.default_value(...)))]` so that its `--help` shows
//! it (the field is then never `None`); the defaults are the constants below.

/// `stats llm check`: the probe needs one word.
pub const CHECK_MAX_TOKENS: &str = "16";
/// `stats llm batch`: a general answer of a few paragraphs.
pub const BATCH_MAX_TOKENS: &str = "1024";
/// `stats mcq run`: the prompts allow some reasoning before the final `Answer:` line.
pub const MCQ_MAX_TOKENS: &str = "512";
/// `stats judge`: a brief rationale, then the `Score:` line.
pub const JUDGE_MAX_TOKENS: &str = "512";
/// `stats run`: the paper's serving setting (§3.1) for planner and reader calls.
pub const RUN_MAX_TOKENS: &str = "256";
/// `stats mcq generate`: one JSON object with a reformulation and a few wrong options.
pub const GENERATE_MAX_TOKENS: &str = "1024";

use std::path::PathBuf;
use std::time::Duration;

use ragstats_agent::llm::{Client, ClientConfig, RetryPolicy, SamplingParams};
use serde_json::{Map, Value};

use super::UsageError;

/// Endpoint, model, sampling and retry flags.
#[derive(Debug, clap::Args)]
pub struct Endpoint {
    /// Base URL including the API version (requests go to {base}/chat/completions).
    #[arg(long, env = "OPENAI_BASE_URL")]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key [default: OPENAI_API_KEY].
    /// The key is never printed.
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Model name sent in the request.
    #[arg(long)]
    pub model: String,
    /// Sampling temperature.
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass.
    #[arg(long)]
    pub top_p: Option<f64>,
    /// Maximum completion tokens per call (`max_tokens`); 0 sends none (the server's
    /// default). A reply cut at the cap has finish_reason `length`; the command counts and
    /// reports those.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Send no `system` message: its text, a blank line, then the first user message's text
    /// go in that user message. For chat templates with no system role that drop it
    /// silently (Gemma's; llama-cpp-python's `gemma` format); `stats llm check` detects them.
    #[arg(long)]
    pub fold_system: bool,
    /// Seed; sample s of a request is sent seed + s.
    #[arg(long)]
    pub seed: Option<u64>,
    /// JSON object merged into the request body, e.g. '{"enable_thinking": false}'.
    #[arg(long, value_name = "JSON")]
    pub extra: Option<String>,
    /// Per-request timeout in seconds (sending to last byte of the answer).
    #[arg(long, default_value_t = 600.0, value_name = "SECS")]
    pub timeout: f64,
    /// Retries after the first attempt for 408, 409, 429, 5xx, timeouts, dropped connections.
    #[arg(long, default_value_t = 6)]
    pub max_retries: u32,
    /// Backoff base in seconds (wait before retry k is uniform in [0, min(cap, base·2^k))).
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub backoff_base: f64,
    /// Backoff cap in seconds.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    pub backoff_cap: f64,
}

/// What the endpoint flags configure: the client and the template of every call.
pub struct Configured {
    pub config: ClientConfig,
    pub params: SamplingParams,
    pub extra: Map<String, Value>,
}

impl Endpoint {
    /// The environment variable the API key is read from.
    pub fn key_env(&self) -> &str {
        self.api_key_env.as_deref().unwrap_or("OPENAI_API_KEY")
    }

    /// Checks the flags and builds the client config (with the given cache directory and
    /// rate ceilings) and the call template.
    pub fn configure(
        &self,
        cache_dir: Option<PathBuf>,
        rpm: Option<u64>,
        tpm: Option<u64>,
    ) -> anyhow::Result<Configured> {
        let base = self.base_url.clone().unwrap_or_default();
        if base.trim().is_empty() {
            return Err(UsageError(
                "no base URL: pass --base-url or set OPENAI_BASE_URL (e.g. http://127.0.0.1:8000/v1)"
                    .into(),
            )
            .into());
        }
        let key_env = self.key_env();
        let api_key = match std::env::var(key_env) {
            Ok(k) if !k.is_empty() => Some(k),
            _ if self.api_key_env.is_some() => {
                return Err(UsageError(format!(
                    "--api-key-env {key_env}: that environment variable is not set"
                ))
                .into())
            }
            // Local servers (vLLM, llama-server, Ollama) need no key.
            _ => None,
        };
        let secs = |name: &str, v: f64| -> anyhow::Result<Duration> {
            if v.is_finite() && v >= 0.0 {
                Ok(Duration::from_secs_f64(v))
            } else {
                Err(UsageError(format!(
                    "{name} must be a non-negative number of seconds, got {v}"
                ))
                .into())
            }
        };
        let timeout = secs("--timeout", self.timeout)?;
        if timeout.is_zero() {
            return Err(UsageError("--timeout must be positive".into()).into());
        }
        let extra = match &self.extra {
            None => Map::new(),
            Some(s) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(m)) => m,
                _ => {
                    return Err(UsageError(format!(
                    "--extra must be a JSON object, e.g. '{{\"enable_thinking\": false}}', got {s}"
                ))
                    .into())
                }
            },
        };
        let config = ClientConfig {
            base_url: base,
            api_key,
            timeout,
            retry: RetryPolicy {
                max_retries: self.max_retries,
                base: secs("--backoff-base", self.backoff_base)?,
                cap: secs("--backoff-cap", self.backoff_cap)?,
                ..RetryPolicy::default()
            },
            rpm,
            tpm,
            cache_dir,
        };
        let params = SamplingParams {
            temperature: self.temperature,
            top_p: self.top_p,
            // 0: no cap sent (the server's default), for APIs that refuse `max_tokens`.
            max_tokens: self.max_tokens.filter(|&m| m > 0),
            seed: self.seed,
            fold_system: self.fold_system,
        };
        Ok(Configured {
            config,
            params,
            extra,
        })
    }
}

/// The client for `config`; its usage errors (a bad URL) exit 2.
pub fn client(config: ClientConfig) -> anyhow::Result<Client> {
    Client::new(config).map_err(|e| match e {
        ragstats_core::Error::Usage(m) => UsageError(m).into(),
        other => anyhow::Error::new(other),
    })
}
