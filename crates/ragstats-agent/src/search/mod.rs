//! Search backends: a local BM25 index (tantivy) and a hosted JSON-over-HTTP search API,
//! both behind [`Search`], with an on-disk cache keyed by (backend, query, k) and
//! benchmark-URL masking.
//!
//! * [`local`]: `local:DIR`, an index built by `stats index build` ([`local::build`]).
//! * [`http`]: `http:URL` (our POST protocol) and `drg:URL` (DeepResearchGym's GET dialect);
//!   protocol in `docs/search.md`.
//! * [`cache`]: every response stored on disk, so a re-run or a resumed run never searches
//!   the same (backend, query, k) twice.
//! * [`mask`]: benchmark-URL masking (App. A). The cache holds results before masking, so a
//!   changed mask list applies to cached results too.
//!
//! ```no_run
//! # async fn demo() -> ragstats_core::Result<()> {
//! use ragstats_agent::search::{Search, SearchOptions};
//! let search = Search::open("local:idx/", SearchOptions::default())?;
//! let resp = search.search("Scott Derrickson nationality", 10).await?;
//! # let _ = resp; Ok(()) }
//! ```

pub mod cache;
pub mod http;
pub mod local;
pub mod mask;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ragstats_core::{Error, Result};

pub use ragstats_core::trajlog::SearchRecord;

/// How a [`Search`] is opened.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// Response cache directory (`None`: no cache).
    pub cache_dir: Option<PathBuf>,
    /// Mask patterns (syntax in [`mask`]); see [`default_mask_file`] for the shipped list.
    pub mask: Vec<String>,
    /// Settings of the `http:`/`drg:` backends (key, retries, rate limit, timeout).
    pub http: http::HttpConfig,
}

/// The mask list shipped for HotpotQA and MuSiQue (`data/search/mask.txt` in the
/// repository), relative to the repository root.
pub fn default_mask_file() -> &'static Path {
    Path::new("data/search/mask.txt")
}

/// The search backend behind a [`Search`].
#[derive(Debug)]
pub enum Backend {
    Local(local::LocalIndex),
    Http(http::HttpSearch),
}

/// A search backend with its response cache and mask: what the runner searches through.
#[derive(Debug)]
pub struct Search {
    backend: Backend,
    cache: Option<cache::SearchCache>,
    mask: mask::Mask,
    /// One lock per cache key being searched, so that concurrent searches of the same
    /// (query, k) make one request: the second waits and then finds the cache entry.
    inflight: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// One search's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResponse {
    /// Ranked records, masked ones in their slots.
    pub records: Vec<SearchRecord>,
    /// True when the records came from the cache (no search was made).
    pub cached: bool,
    /// How many records were masked.
    pub masked: usize,
}

impl Search {
    /// Opens a backend from a spec: `local:DIR` (an index built by `stats index build`),
    /// `http:URL` (our POST protocol) or `drg:URL` (DeepResearchGym's GET dialect).
    ///
    /// # Errors
    /// [`Error::Usage`] for an unknown spec form or a directory that is not an index, and
    /// the backends' errors.
    pub fn open(spec: &str, opts: SearchOptions) -> Result<Search> {
        let backend = if let Some(dir) = spec.strip_prefix("local:") {
            Backend::Local(local::LocalIndex::open(Path::new(dir))?)
        } else if let Some(url) = spec.strip_prefix("http:") {
            // `http:https://…` and `http:http://…` name the URL after the prefix.
            Backend::Http(http::HttpSearch::new(url, http::Dialect::Post, opts.http)?)
        } else if let Some(url) = spec.strip_prefix("drg:") {
            Backend::Http(http::HttpSearch::new(
                url,
                http::Dialect::DeepResearchGym,
                opts.http,
            )?)
        } else {
            return Err(Error::Usage(format!(
                "search backend {:?}: expected local:DIR, http:URL or drg:URL",
                ragstats_core::io::clip(spec)
            )));
        };
        Ok(Search {
            backend,
            cache: opts.cache_dir.map(cache::SearchCache::new),
            mask: mask::Mask::new(&opts.mask),
            inflight: Mutex::new(HashMap::new()),
        })
    }

    /// The backend.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The stable backend name used in cache keys and ledgers: `local:` + the first 16 hex
    /// digits of the indexed corpus's SHA-256 (so it does not depend on where the index
    /// lies), or the spec `http:URL` / `drg:URL`.
    pub fn name(&self) -> String {
        match &self.backend {
            Backend::Local(ix) => ix.name(),
            Backend::Http(h) => h.name(),
        }
    }

    /// The top `k` records for `query`, from the cache when it holds (name, query, k), else
    /// from the backend (then stored), with the mask applied. With a cache, concurrent calls
    /// with the same (query, k) make one backend search between them; a failed search stores
    /// nothing (the next call tries again).
    ///
    /// # Errors
    /// The backend's errors; [`Error::Io`] when the cache entry cannot be written.
    pub async fn search(&self, query: &str, k: usize) -> Result<SearchResponse> {
        let name = self.name();
        let slot = self.cache.as_ref().map(|_| {
            let key = cache::key(&name, query, k);
            let mut m = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
            m.entry(key).or_default().clone()
        });
        let _guard = match &slot {
            Some(s) => Some(s.lock().await),
            None => None,
        };
        let cached = match &self.cache {
            Some(c) => c.get(&name, query, k),
            None => None,
        };
        let (mut records, cached) = match cached {
            Some(r) => (r, true),
            None => {
                let r = match &self.backend {
                    Backend::Local(ix) => ix.search(query, k)?,
                    Backend::Http(h) => h.search(query, k).await?,
                };
                if let Some(c) = &self.cache {
                    c.put(&name, query, k, &r)?;
                }
                (r, false)
            }
        };
        let masked = self.mask.apply(&mut records);
        Ok(SearchResponse {
            records,
            cached,
            masked,
        })
    }
}
