//! Search backends: a local BM25 index (tantivy) and a hosted JSON-over-HTTP search API,
//! both behind [`Search`], with an on-disk cache keyed by (backend, query, k) and
//! benchmark-URL masking.

use serde::{Deserialize, Serialize};

/// One ranked search result. A masked record keeps its rank slot but shows no content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    /// Backend document id (for the local index: the corpus [`crate::questions::Document`] id).
    pub id: String,
    pub url: String,
    pub title: String,
    pub text: String,
    /// The backend's score or distance, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// True when the URL matched the mask list: title and text are empty.
    #[serde(default)]
    pub masked: bool,
}
