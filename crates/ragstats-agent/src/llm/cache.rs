//! The on-disk response cache.
//!
//! Key: SHA-256 of a canonical JSON document (object keys sorted at every level) holding the
//! base URL (trailing `/` removed), model, messages, every sampling parameter, the extra body,
//! the sample index and, when set, `fold_system` (see [`ragstats_core::chat::fold_system`]). Entry: `<dir>/<first 2 hex>/<64 hex>.json`. Only successful
//! responses are stored. Writes go to a uniquely named temporary file in the same directory
//! and are renamed into place, which is atomic on POSIX file systems: concurrent tasks or
//! processes writing the same key each rename a complete file, and readers never see a torn
//! one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use ragstats_core::chat::{ChatRequest, Usage};
use ragstats_core::error::{Error, Result};

/// Version tag inside the hashed document: bump it when the key's contents change.
const KEY_VERSION: u32 = 1;

/// What a cache entry keeps of a successful call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedResponse {
    /// The cache key (hex), repeated for inspection.
    pub key: String,
    /// Answer text.
    pub text: String,
    /// Reasoning text.
    pub reasoning: Option<String>,
    /// Finish reason.
    pub finish_reason: Option<String>,
    /// Usage of the original call.
    pub usage: Option<Usage>,
    /// llama-server timings of the original call.
    #[serde(default)]
    pub timings: Option<Value>,
    /// Latency of the original call, milliseconds.
    pub latency_ms: f64,
}

/// The hex SHA-256 cache key of `req` sent to `base_url`. The request `id` and `meta` are not
/// part of it: two ids with the same messages share an answer.
pub fn cache_key(base_url: &str, req: &ChatRequest) -> String {
    let mut doc = serde_json::json!({
        "v": KEY_VERSION,
        "base_url": base_url.trim_end_matches('/'),
        "model": req.model,
        "messages": req.messages,
        "temperature": req.params.temperature,
        "top_p": req.params.top_p,
        "max_tokens": req.params.max_tokens,
        "seed": req.params.seed,
        "extra": Value::Object(req.extra.clone()),
        "sample": req.sample,
    });
    // Only when set, so that unfolded requests keep the keys they had before the option
    // existed; a folded request never shares an entry with the unfolded one.
    if req.params.fold_system {
        doc["fold_system"] = Value::Bool(true);
    }
    let mut canon = String::new();
    write_canonical(&doc, &mut canon);
    ragstats_core::io::sha256_hex(canon)
}

/// Serialises `v` with object keys sorted, so the key does not depend on insertion order
/// (or on serde_json's `preserve_order` feature being enabled by some other crate).
fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                write_canonical(&m[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A cache directory.
#[derive(Debug, Clone)]
pub struct DiskCache {
    dir: PathBuf,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl DiskCache {
    /// A cache rooted at `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        DiskCache { dir: dir.into() }
    }

    /// The root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The entry for `key`, if present and readable. A corrupt entry counts as a miss (it
    /// will be overwritten by the next successful call).
    pub fn get(&self, key: &str) -> Option<CachedResponse> {
        // Bounded as every input is: an entry past the limit is a miss.
        let text = ragstats_core::io::read_text(&self.path(key)).ok()?;
        serde_json::from_str::<CachedResponse>(&text)
            .ok()
            .filter(|c| c.key == key)
    }

    /// Stores `entry` under its key atomically (temporary file + rename).
    ///
    /// # Errors
    /// [`Error::Io`] when the directory or file cannot be written.
    pub fn put(&self, entry: &CachedResponse) -> Result<()> {
        let path = self.path(&entry.key);
        let parent = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        let tmp = parent.join(format!(
            ".{}.{}.{}.tmp",
            entry.key,
            std::process::id(),
            TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let body = serde_json::to_vec(entry).map_err(|e| Error::Runtime(e.to_string()))?;
        std::fs::write(&tmp, body).map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::io(&path, e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragstats_core::chat::Message;

    fn req() -> ChatRequest {
        ChatRequest::new("a", "m", vec![Message::user("hi").to_value()])
    }

    #[test]
    fn key_depends_on_what_is_sent_not_on_id() {
        let base = cache_key("http://h/v1", &req());
        assert_eq!(base.len(), 64);
        assert_eq!(base, cache_key("http://h/v1/", &req()));
        let mut r = req();
        r.id = "other".into();
        r.meta = Some(Value::from(1));
        assert_eq!(base, cache_key("http://h/v1", &r));
        type Edit = Box<dyn Fn(&mut ChatRequest)>;
        let variants: Vec<Edit> = vec![
            Box::new(|r| r.sample = 1),
            Box::new(|r| r.model = "m2".into()),
            Box::new(|r| r.params.temperature = Some(0.0)),
            Box::new(|r| r.params.top_p = Some(0.9)),
            Box::new(|r| r.params.max_tokens = Some(10)),
            Box::new(|r| r.params.seed = Some(1)),
            Box::new(|r| {
                r.extra.insert("enable_thinking".into(), Value::Bool(false));
            }),
            Box::new(|r| r.messages.push(Message::user("more").to_value())),
            Box::new(|r| r.params.fold_system = true),
        ];
        for (i, f) in variants.iter().enumerate() {
            let mut r = req();
            f(&mut r);
            assert_ne!(base, cache_key("http://h/v1", &r), "variant {i}");
        }
        assert_ne!(base, cache_key("http://other/v1", &req()));
    }

    #[test]
    fn folding_changes_the_key_only_of_the_folded_request() {
        let mut r = req();
        r.messages
            .insert(0, Message::system("Answer in French.").to_value());
        let unfolded = cache_key("http://h/v1", &r);
        r.params.fold_system = true;
        let folded = cache_key("http://h/v1", &r);
        assert_ne!(unfolded, folded);
        // The unfolded key is the one it was before the option existed: the document
        // without a fold_system entry (checked against the plain SHA-256 of its canonical
        // form, written out by hand).
        r.params.fold_system = false;
        let doc = r#"{"base_url":"http://h/v1","extra":{},"max_tokens":null,"messages":[{"content":"Answer in French.","role":"system"},{"content":"hi","role":"user"}],"model":"m","sample":0,"seed":null,"temperature":null,"top_p":null,"v":1}"#;
        assert_eq!(
            cache_key("http://h/v1", &r),
            ragstats_core::io::sha256_hex(doc)
        );
    }

    #[test]
    fn canonical_form_sorts_keys() {
        let mut s = String::new();
        write_canonical(
            &serde_json::json!({"b": [1, {"d": 1, "c": 2}], "a": "x"}),
            &mut s,
        );
        assert_eq!(s, r#"{"a":"x","b":[1,{"c":2,"d":1}]}"#);
    }

    #[test]
    fn put_then_get_roundtrip() {
        let dir = tempfile::tempdir().unwrap();
        let c = DiskCache::new(dir.path());
        let key = cache_key("u", &req());
        assert!(c.get(&key).is_none());
        let e = CachedResponse {
            key: key.clone(),
            text: "ok".into(),
            reasoning: None,
            finish_reason: Some("stop".into()),
            usage: None,
            timings: None,
            latency_ms: 12.5,
        };
        c.put(&e).unwrap();
        assert_eq!(c.get(&key), Some(e));
        // No temporary files are left behind.
        let sub = dir.path().join(&key[..2]);
        assert_eq!(std::fs::read_dir(sub).unwrap().count(), 1);
    }
}
