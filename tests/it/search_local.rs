//! The local BM25 backend: a real tantivy index built from the shipped corpus
//! (data/qa/corpus.jsonl) in a temporary directory.

use std::path::{Path, PathBuf};

use ragstats_agent::search::local::{self, LocalIndex};
use ragstats_agent::search::{Search, SearchOptions};
use ragstats_core::questions::{corpus, Document};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn shipped_index(dir: &Path) -> LocalIndex {
    let out = dir.join("idx");
    let info = local::build(&repo("data/qa/corpus.jsonl"), &out).unwrap();
    // 994 HotpotQA + 1,890 MuSiQue distinct paragraphs.
    assert_eq!(info.documents, 2884);
    LocalIndex::open(&out).unwrap()
}

fn ids(ix: &LocalIndex, q: &str, k: usize) -> Vec<String> {
    ix.search(q, k).unwrap().into_iter().map(|r| r.id).collect()
}

#[test]
fn gold_paragraphs_rank_high_on_the_shipped_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let ix = shipped_index(tmp.path());
    // HotpotQA 5a77ec115542992a6e59dff7, supporting Alû and Lilu (mythology): both name
    // "Lilu"/"demon"/"spirit"; the two gold paragraphs are the top two.
    let top = ids(&ix, "If Gallu is a demon Lilu is what?", 10);
    assert_eq!(&top[..2], ["Alû", "Lilu (mythology)"]);
    // HotpotQA 5ae40c465542996836b02c25: both directors' paragraphs are the top two.
    let top = ids(
        &ix,
        "Are Christopher Nolan and Sathish Kalathil both film directors?",
        10,
    );
    let mut two = top[..2].to_vec();
    two.sort();
    assert_eq!(two, ["Christopher Nolan", "Sathish Kalathil"]);
    // MuSiQue 2hop__150763_14904: the journal's own paragraph is first.
    let top = ids(
        &ix,
        "Who was the first president of the association which published Journal of Psychotherapy Integration?",
        10,
    );
    assert_eq!(top[0], "Journal of Psychotherapy Integration");

    // Over all 200 questions of data/qa/questions.jsonl, searching the question text finds
    // at least one gold paragraph in the top 10 for most (189 with tantivy 0.27; a floor
    // leaves room for analyser changes, not for a broken index).
    let loaded =
        ragstats_core::questions::read_questions(&[repo("data/qa/questions.jsonl")]).unwrap();
    assert_eq!(loaded.questions.len(), 200);
    let hits = loaded
        .questions
        .iter()
        .filter(|q| {
            let top = ids(&ix, &q.question, 10);
            q.supporting.iter().any(|s| top.contains(s))
        })
        .count();
    assert!(
        hits >= 180,
        "only {hits}/200 questions have gold in the top 10"
    );
}

#[test]
fn records_carry_the_corpus_document_and_a_descending_score() {
    let tmp = tempfile::tempdir().unwrap();
    let ix = shipped_index(tmp.path());
    let rs = ix.search("Lilu mythology Akkadian spirit", 5).unwrap();
    assert_eq!(rs.len(), 5);
    let docs = corpus::read_corpus(&repo("data/qa/corpus.jsonl")).unwrap();
    let lilu = docs.iter().find(|d| d.id == rs[0].id).unwrap();
    assert_eq!(rs[0].url, lilu.url);
    assert_eq!(rs[0].title, lilu.title);
    assert_eq!(rs[0].text, lilu.text);
    assert!(!rs[0].masked);
    for w in rs.windows(2) {
        assert!(w[0].score.unwrap() >= w[1].score.unwrap());
    }
}

#[test]
fn query_syntax_characters_are_plain_text() {
    let tmp = tempfile::tempdir().unwrap();
    let ix = shipped_index(tmp.path());
    let plain = ids(&ix, "Lilu mythology", 10);
    // Punctuation and operators are separators: the same words give the same ranking.
    for q in [
        r#""Lilu" (mythology)"#,
        "+Lilu -mythology",
        "Lilu* mythology?",
        "(Lilu):mythology!",
        r"[Lilu]\ {mythology}^",
    ] {
        assert_eq!(ids(&ix, q, 10), plain, "{q:?}");
    }
    // Query-parser syntax with extra words is searched as words, never an error.
    for q in [
        "title:Lilu mythology:",
        "Lilu AND mythology",
        "Lilu~2 mythology^3",
        "{x TO y] Lilu",
    ] {
        assert!(!ids(&ix, q, 10).is_empty(), "{q:?} found nothing");
    }
    for q in ["", "   ", "\"\"", "(((", ":", "-+&|!(){}[]^\"~*?:\\/"] {
        assert!(ix.search(q, 10).unwrap().is_empty(), "{q:?}");
    }
}

fn write_corpus(path: &Path, docs: &[(&str, &str)]) {
    let docs: Vec<Document> = docs
        .iter()
        .map(|(id, text)| Document {
            id: id.to_string(),
            url: format!("https://example.org/{id}"),
            title: String::new(),
            text: text.to_string(),
        })
        .collect();
    corpus::write_corpus(path, &docs).unwrap();
}

#[test]
fn ties_rank_in_corpus_order() {
    let tmp = tempfile::tempdir().unwrap();
    let c = tmp.path().join("c.jsonl");
    // Three identical texts (equal BM25), listed c, a, b; one document scoring higher.
    write_corpus(
        &c,
        &[
            ("c", "alpha beta"),
            ("a", "alpha beta"),
            ("x", "gamma"),
            ("b", "alpha beta"),
            ("top", "alpha alpha"),
        ],
    );
    local::build(&c, &tmp.path().join("i")).unwrap();
    let ix = LocalIndex::open(&tmp.path().join("i")).unwrap();
    assert_eq!(ids(&ix, "alpha", 10), ["top", "c", "a", "b"]);
    let rs = ix.search("alpha", 10).unwrap();
    assert_eq!(rs[1].score, rs[2].score);
    assert_eq!(rs[2].score, rs[3].score);
    // The cut at k keeps the first in corpus order.
    assert_eq!(ids(&ix, "alpha", 2), ["top", "c"]);
}

#[test]
fn build_is_atomic_and_refuses_non_index_dirs() {
    let tmp = tempfile::tempdir().unwrap();
    let c1 = tmp.path().join("c1.jsonl");
    let c2 = tmp.path().join("c2.jsonl");
    write_corpus(&c1, &[("a", "alpha"), ("b", "beta")]);
    write_corpus(&c2, &[("z", "alpha")]);
    let out = tmp.path().join("idx");
    local::build(&c1, &out).unwrap();
    let name1 = LocalIndex::open(&out).unwrap().name();
    // Rebuilding over an index replaces it; the name follows the corpus content.
    local::build(&c2, &out).unwrap();
    let ix = LocalIndex::open(&out).unwrap();
    assert_eq!(ids(&ix, "alpha", 10), ["z"]);
    assert_ne!(ix.name(), name1);
    // Nothing left beside it.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".stats"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // A directory holding anything else is refused, and left alone.
    let other = tmp.path().join("notes");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("keep.txt"), "mine").unwrap();
    let err = local::build(&c1, &other).unwrap_err();
    assert!(err.to_string().contains("is not a search index"), "{err}");
    assert_eq!(err.exit_code(), 2);
    assert_eq!(
        std::fs::read_to_string(other.join("keep.txt")).unwrap(),
        "mine"
    );
    // Opening it as an index says what is missing, in the library's words (no command line).
    let err = LocalIndex::open(&other).unwrap_err();
    assert!(
        err.to_string().ends_with(
            "notes: not a search index (no stats-index.json); build an index of the corpus first"
        ),
        "{err}"
    );

    // The CLI: exit 2 and the message.
    crate::common::stats()
        .args(["index", "build"])
        .arg(&c1)
        .arg("--out")
        .arg(&other)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("refusing to overwrite"));
}

#[test]
fn corpus_errors_name_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let c = tmp.path().join("c.jsonl");
    std::fs::write(
        &c,
        "{\"id\":\"a\",\"url\":\"u\",\"title\":\"t\",\"text\":\"x\"}\n{\"id\":\"a\",\"url\":\"u\",\"title\":\"t\",\"text\":\"y\"}\n",
    )
    .unwrap();
    let err = local::build(&c, &tmp.path().join("i")).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}:2: document id 'a' already given on line 1", c.display())
    );
    std::fs::write(&c, "{\"id\":\"a\",\"url\":\"u\",\"title\":\"t\"}\n").unwrap();
    let err = local::build(&c, &tmp.path().join("i")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{}:1: missing field `text`", c.display())),
        "{err}"
    );
    assert!(!tmp.path().join("i").exists());
}

#[test]
fn search_front_caches_by_backend_query_and_k() {
    let tmp = tempfile::tempdir().unwrap();
    let c = tmp.path().join("c.jsonl");
    write_corpus(&c, &[("a", "alpha beta"), ("b", "beta")]);
    let idx = tmp.path().join("idx");
    local::build(&c, &idx).unwrap();
    let cache = tmp.path().join("cache");
    let open = || {
        Search::open(
            &format!("local:{}", idx.display()),
            SearchOptions {
                cache_dir: Some(cache.clone()),
                mask: vec!["example.org/b".into()],
                ..SearchOptions::default()
            },
        )
        .unwrap()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let s = open();
    assert!(s.name().starts_with("local:"));
    let r1 = rt.block_on(s.search("beta", 10)).unwrap();
    assert!(!r1.cached);
    // The shorter document ranks first (BM25 length normalisation); the mask keeps its
    // slot with no content.
    assert_eq!(r1.masked, 1);
    assert_eq!(r1.records.len(), 2);
    assert_eq!(r1.records[0].id, "b");
    assert!(r1.records[0].masked && r1.records[0].text.is_empty());
    assert!(!r1.records[1].masked && r1.records[1].text == "alpha beta");
    // A new Search over the same index (a re-run) answers from the cache, identically.
    let r2 = rt.block_on(open().search("beta", 10)).unwrap();
    assert!(r2.cached);
    assert_eq!(r2.records, r1.records);
    assert_eq!(r2.masked, 1);
    // Another k is another entry.
    assert!(!rt.block_on(s.search("beta", 1)).unwrap().cached);
    // Unknown spec forms are usage errors.
    let err = Search::open("bm25:x", SearchOptions::default()).unwrap_err();
    assert_eq!(err.exit_code(), 2);
}

#[test]
fn search_is_shareable_across_tasks() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: &T) {}
    let tmp = tempfile::tempdir().unwrap();
    let c = tmp.path().join("c.jsonl");
    write_corpus(&c, &[("a", "alpha")]);
    local::build(&c, &tmp.path().join("i")).unwrap();
    let s = Search::open(
        &format!("local:{}", tmp.path().join("i").display()),
        SearchOptions::default(),
    )
    .unwrap();
    send_sync(&s);
    let fut = s.search("alpha", 1);
    send(&fut);
    drop(fut);
}

#[test]
fn cli_search_prints_json() {
    let tmp = tempfile::tempdir().unwrap();
    let c = tmp.path().join("c.jsonl");
    write_corpus(&c, &[("a", "alpha beta"), ("b", "beta")]);
    let idx = tmp.path().join("idx");
    crate::common::stats()
        .args(["index", "build"])
        .arg(&c)
        .arg("--out")
        .arg(&idx)
        .assert()
        .success()
        .stdout(predicates::str::starts_with(format!(
            "indexed 2 documents of {} into {}",
            c.display(),
            idx.display()
        )));
    let out = crate::common::stats()
        .args(["index", "search"])
        .arg(format!("local:{}", idx.display()))
        .args(["alpha (beta)", "--k", "1", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["k"], 1);
    assert_eq!(v["cached"], false);
    assert_eq!(v["masked"], 0);
    assert_eq!(v["records"].as_array().unwrap().len(), 1);
    assert_eq!(v["records"][0]["id"], "a");
    assert_eq!(v["records"][0]["text"], "alpha beta");
}
