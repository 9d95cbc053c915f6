//! The on-disk search cache.
//!
//! Key: hex SHA-256 of the JSON array `[VERSION, backend name, k, query]` (an array, so the
//! text is canonical). Entry: `<dir>/<first 2 hex>/<64 hex>.json` holding the key's parts
//! and the records as the backend returned them (before masking). Entries are written to a
//! temporary file and renamed into place ([`ragstats_core::io::write_atomic`]), so a killed run
//! leaves whole entries or none. An unreadable entry, or one whose parts do not match
//! (a hash collision), is a miss.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SearchRecord;
use ragstats_core::Result;

const VERSION: u32 = 1;

/// A cache directory.
#[derive(Debug, Clone)]
pub struct SearchCache {
    dir: PathBuf,
}

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    backend: String,
    query: String,
    k: usize,
    records: Vec<SearchRecord>,
}

/// The cache key of (backend, query, k).
pub fn key(backend: &str, query: &str, k: usize) -> String {
    let doc = serde_json::json!([VERSION, backend, k, query]).to_string();
    ragstats_core::io::sha256_hex(doc)
}

impl SearchCache {
    /// A cache rooted at `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SearchCache { dir: dir.into() }
    }

    /// The root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The cached records of (backend, query, k), if any.
    pub fn get(&self, backend: &str, query: &str, k: usize) -> Option<Vec<SearchRecord>> {
        // Bounded as every input is: an entry past the limit is a miss.
        let text = ragstats_core::io::read_text(&self.path(&key(backend, query, k))).ok()?;
        let e: Entry = serde_json::from_str(&text).ok()?;
        (e.backend == backend && e.query == query && e.k == k).then_some(e.records)
    }

    /// Stores the records of (backend, query, k) atomically.
    ///
    /// # Errors
    /// [`ragstats_core::Error::Io`] when the entry cannot be written.
    pub fn put(
        &self,
        backend: &str,
        query: &str,
        k: usize,
        records: &[SearchRecord],
    ) -> Result<()> {
        let e = Entry {
            backend: backend.to_string(),
            query: query.to_string(),
            k,
            records: records.to_vec(),
        };
        ragstats_core::io::write_atomic(&self.path(&key(backend, query, k)), |w| {
            serde_json::to_writer(w, &e).map_err(std::io::Error::other)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_key_parts() {
        let dir = tempfile::tempdir().unwrap();
        let c = SearchCache::new(dir.path());
        let r = vec![SearchRecord {
            id: "a".into(),
            url: "u".into(),
            title: "t".into(),
            text: "x".into(),
            score: Some(1.0),
            masked: false,
        }];
        assert_eq!(c.get("local:x", "q", 10), None);
        c.put("local:x", "q", 10, &r).unwrap();
        assert_eq!(c.get("local:x", "q", 10), Some(r.clone()));
        assert_eq!(c.get("local:x", "q", 5), None);
        assert_eq!(c.get("local:y", "q", 10), None);
        assert_eq!(c.get("local:x", "q ", 10), None);
        // printf '[1,"local:x",10,"q"]' | sha256sum
        assert_eq!(
            key("local:x", "q", 10),
            "539bbb8618627d3c508dd2a55fbd18cade5a26b35298547a39c518536f9c178b"
        );
    }
}
