//! The local search backend: a BM25 index over a corpus JSONL, built and searched with
//! tantivy.
//!
//! Index layout: one tantivy index in a directory plus the marker file [`MARKER`] (what was
//! indexed: the corpus path, its SHA-256, the number of documents). Each corpus document is
//! one tantivy document: `contents` = title, a newline, text (tokenised with tantivy's
//! `en_stem`: split on non-alphanumerics, lower-cased, tokens over 40 bytes dropped, English
//! Snowball stemmer; not stored), and `id`, `url`, `title`, `text` stored as they are.
//!
//! Query: the query text is run through the same analyser and every token becomes one
//! `Should` term clause, so the score is the BM25 sum (tantivy's k1 = 1.2, b = 0.75) over the
//! query's tokens (a token repeated in the query counts each time, as in Lucene's classic
//! parser). No query syntax is interpreted: quotes, colons, parentheses, `AND`, `-` are plain
//! text, so no query string can fail to parse. A query with no token returns no results.
//!
//! Ties: the index is written by one thread and merged into one segment, so tantivy's
//! document ids follow corpus line order; tantivy breaks score ties by ascending document id,
//! hence equal scores rank in corpus order. [`LocalIndex::open`] refuses an index with more
//! than one segment (one not built by [`build`]), where that rule would not hold.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, STORED};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use super::SearchRecord;
use ragstats_core::questions::corpus;
use ragstats_core::{Error, Result};

/// The marker file written into every index directory built by [`build`].
pub const MARKER: &str = "stats-index.json";
/// Marker format version.
const FORMAT: u32 = 1;
/// The tantivy analyser used for `contents` and for queries.
const ANALYSER: &str = "en_stem";
/// Indexing memory budget (tantivy's minimum per thread is 15 MB).
const WRITER_HEAP: usize = 100_000_000;

/// What the marker file records about an index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexInfo {
    pub format: u32,
    /// The corpus file the index was built from, as given.
    pub corpus: String,
    /// Hex SHA-256 of the corpus file's bytes: the index's identity in cache keys.
    pub corpus_sha256: String,
    pub documents: u64,
    pub analyser: String,
}

/// An open local index.
pub struct LocalIndex {
    dir: PathBuf,
    info: IndexInfo,
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

impl std::fmt::Debug for LocalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalIndex")
            .field("dir", &self.dir)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Copy)]
struct Fields {
    id: tantivy::schema::Field,
    url: tantivy::schema::Field,
    title: tantivy::schema::Field,
    text: tantivy::schema::Field,
    contents: tantivy::schema::Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let id = b.add_text_field("id", STORED);
    let url = b.add_text_field("url", STORED);
    let title = b.add_text_field("title", STORED);
    let text = b.add_text_field("text", STORED);
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(ANALYSER)
        .set_index_option(IndexRecordOption::WithFreqsAndPositions);
    let contents = b.add_text_field(
        "contents",
        TextOptions::default().set_indexing_options(indexing),
    );
    (
        b.build(),
        Fields {
            id,
            url,
            title,
            text,
            contents,
        },
    )
}

fn tantivy_err(what: &str, path: &Path) -> impl Fn(tantivy::TantivyError) -> Error {
    let (what, path) = (what.to_string(), path.display().to_string());
    move |e| Error::Runtime(format!("{path}: {what}: {e}"))
}

/// True when `dir` holds an index built by [`build`] (its marker file exists).
pub fn is_index_dir(dir: &Path) -> bool {
    dir.join(MARKER).is_file()
}

/// Builds an index of the corpus JSONL `corpus` into `out`, atomically: the index is written
/// into a temporary directory beside `out` and renamed to `out` only when complete. An
/// existing `out` is replaced only when it is an index built by this function (or an empty
/// directory); anything else is refused. Returns the marker's contents.
///
/// # Errors
/// [`Error::Usage`] when `out` exists and is not an index; corpus errors from
/// [`corpus::read_corpus`] (file:line, duplicate ids); [`Error::Runtime`] when tantivy fails.
pub fn build(corpus_path: &Path, out: &Path) -> Result<IndexInfo> {
    if out.exists() {
        let empty_dir = out.is_dir()
            && std::fs::read_dir(out)
                .map_err(|e| Error::io(out, e))?
                .next()
                .is_none();
        if !empty_dir && !is_index_dir(out) {
            return Err(Error::Usage(format!(
                "{}: exists and is not a search index (no {MARKER}); refusing to overwrite it",
                out.display()
            )));
        }
    }
    // The corpus is read line by line, under the line limit, before it is hashed: a file
    // without line breaks (`/dev/zero`) is refused there rather than hashed without end.
    let docs = corpus::read_corpus(corpus_path)?;
    let sha = ragstats_core::io::digest::sha256_file_hex(corpus_path)?;

    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    let tmp = tempfile::Builder::new()
        .prefix(".stats-index-")
        .tempdir_in(&parent)
        .map_err(|e| Error::io(&parent, e))?;
    let (schema, f) = schema();
    let index = Index::create_in_dir(tmp.path(), schema)
        .map_err(tantivy_err("creating the index", tmp.path()))?;
    let mut writer: IndexWriter = index
        .writer_with_num_threads(1, WRITER_HEAP)
        .map_err(tantivy_err("opening the index writer", tmp.path()))?;
    for d in &docs {
        let mut doc = TantivyDocument::default();
        doc.add_text(f.id, &d.id);
        doc.add_text(f.url, &d.url);
        doc.add_text(f.title, &d.title);
        doc.add_text(f.text, &d.text);
        doc.add_text(f.contents, format!("{}\n{}", d.title, d.text));
        writer
            .add_document(doc)
            .map_err(tantivy_err("adding a document", tmp.path()))?;
    }
    writer
        .commit()
        .map_err(tantivy_err("committing", tmp.path()))?;
    // One segment, so document ids are corpus order (the tie rule in the module docs).
    let segments = index
        .searchable_segment_ids()
        .map_err(tantivy_err("listing segments", tmp.path()))?;
    if segments.len() > 1 {
        writer
            .merge(&segments)
            .wait()
            .map_err(tantivy_err("merging segments", tmp.path()))?;
    }
    writer
        .wait_merging_threads()
        .map_err(tantivy_err("finishing merges", tmp.path()))?;

    let info = IndexInfo {
        format: FORMAT,
        corpus: corpus_path.display().to_string(),
        corpus_sha256: sha,
        documents: docs.len() as u64,
        analyser: ANALYSER.to_string(),
    };
    let marker = serde_json::to_vec_pretty(&info).map_err(|e| Error::Runtime(e.to_string()))?;
    ragstats_core::io::write_atomic(&tmp.path().join(MARKER), |w| w.write_all(&marker))?;

    let tmp_path = tmp.keep();
    if out.exists() {
        // Move the old index aside, move the new one in, then delete the old one: at every
        // moment `out` is either the old complete index or the new one.
        let old = parent.join(format!(
            ".stats-index-old-{}",
            out.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        ));
        let _ = std::fs::remove_dir_all(&old);
        std::fs::rename(out, &old).map_err(|e| Error::io(out, e))?;
        std::fs::rename(&tmp_path, out).map_err(|e| Error::io(out, e))?;
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(&tmp_path, out).map_err(|e| Error::io(out, e))?;
    }
    Ok(info)
}

impl LocalIndex {
    /// Opens an index built by [`build`].
    ///
    /// # Errors
    /// [`Error::Usage`] when `dir` has no marker file, an unknown format, or more than one
    /// segment; [`Error::Runtime`] when tantivy cannot open it.
    pub fn open(dir: &Path) -> Result<LocalIndex> {
        let marker = dir.join(MARKER);
        if !marker.is_file() {
            return Err(Error::Usage(format!(
                "{}: not a search index (no {MARKER}); build an index of the corpus first",
                dir.display()
            )));
        }
        let text = ragstats_core::io::read_text(&marker)?;
        let info: IndexInfo =
            ragstats_core::io::jsonl::parse_document(&marker, &text, "an index marker")?;
        if info.format != FORMAT {
            return Err(Error::Usage(format!(
                "{}: index format {} is not supported (expected {FORMAT}); rebuild the index",
                marker.display(),
                info.format
            )));
        }
        let index = Index::open_in_dir(dir).map_err(tantivy_err("opening the index", dir))?;
        let (_, fields) = schema();
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(tantivy_err("opening a reader", dir))?;
        let ix = LocalIndex {
            dir: dir.to_path_buf(),
            info,
            index,
            reader,
            fields,
        };
        let segments = ix.reader.searcher().segment_readers().len();
        if segments > 1 {
            return Err(Error::Usage(format!(
                "{}: the index has {segments} segments, expected 1; rebuild it with `stats index build`",
                dir.display()
            )));
        }
        Ok(ix)
    }

    /// What the marker file records.
    pub fn info(&self) -> &IndexInfo {
        &self.info
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The backend name used in cache keys and ledgers: `local:` and the first 16 hex digits
    /// of the corpus SHA-256, so it names the indexed content, not where the index lies.
    pub fn name(&self) -> String {
        format!("local:{}", &self.info.corpus_sha256[..16])
    }

    /// The query's analysed tokens (the terms searched).
    pub fn query_terms(&self, query: &str) -> Result<Vec<String>> {
        let mut analyser = self
            .index
            .tokenizer_for_field(self.fields.contents)
            .map_err(tantivy_err("loading the analyser", &self.dir))?;
        let mut stream = analyser.token_stream(query);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        Ok(out)
    }

    /// Up to `max` stored documents (score `None`), evenly spaced in corpus order: every
    /// one when the index holds no more than `max`, else document ⌊i·n/max⌋ for i < max.
    ///
    /// # Errors
    /// [`Error::Runtime`] when tantivy fails to read the index.
    pub fn sample_documents(&self, max: usize) -> Result<Vec<SearchRecord>> {
        let searcher = self.reader.searcher();
        let n = searcher
            .segment_readers()
            .first()
            .map_or(0, |s| u64::from(s.max_doc()));
        let take = (max as u64).min(n);
        let get = |doc: &TantivyDocument, f| {
            doc.get_first(f)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        (0..take)
            .map(|i| {
                // One segment (refused otherwise in `open`): doc ids are 0..n in corpus order.
                let id = (i * n / take) as u32;
                let doc: TantivyDocument = searcher
                    .doc(tantivy::DocAddress::new(0, id))
                    .map_err(tantivy_err("reading a document", &self.dir))?;
                Ok(SearchRecord {
                    id: get(&doc, self.fields.id),
                    url: get(&doc, self.fields.url),
                    title: get(&doc, self.fields.title),
                    text: get(&doc, self.fields.text),
                    score: None,
                    masked: false,
                })
            })
            .collect()
    }

    /// The top `k` documents for `query` by BM25, best first, ties in corpus order (module
    /// docs). Each record carries the corpus document and its BM25 score.
    ///
    /// # Errors
    /// [`Error::Runtime`] when tantivy fails to read the index.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<SearchRecord>> {
        let terms = self.query_terms(query)?;
        if terms.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| {
                let term = Term::from_field_text(self.fields.contents, t);
                let q: Box<dyn Query> =
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (Occur::Should, q)
            })
            .collect();
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(k).order_by_score())
            .map_err(tantivy_err("searching", &self.dir))?;
        let get = |doc: &TantivyDocument, f| {
            doc.get_first(f)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        top.into_iter()
            .map(|(score, addr)| {
                let doc: TantivyDocument = searcher
                    .doc(addr)
                    .map_err(tantivy_err("reading a document", &self.dir))?;
                Ok(SearchRecord {
                    id: get(&doc, self.fields.id),
                    url: get(&doc, self.fields.url),
                    title: get(&doc, self.fields.title),
                    text: get(&doc, self.fields.text),
                    score: Some(f64::from(score)),
                    masked: false,
                })
            })
            .collect()
    }
}
