//! Question readers (HotpotQA, MuSiQue, our JSONL), the corpus id rule, and `stats questions
//! convert`, on fixtures (tests/fixtures/questions/) and on the shipped sample (data/qa/).

use std::path::{Path, PathBuf};

use ragstats_core::questions::{corpus, read::detect_format, read_questions, Dataset, Format};

fn fx(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/questions")
        .join(name)
}

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

#[test]
fn formats_are_detected() {
    assert_eq!(
        detect_format(&fx("hotpotqa.json")).unwrap(),
        Format::Hotpotqa
    );
    assert_eq!(
        detect_format(&fx("musique.jsonl")).unwrap(),
        Format::Musique
    );
    assert_eq!(detect_format(&fx("ours.jsonl")).unwrap(), Format::Ours);
    assert_eq!(
        detect_format(&repo("data/qa/musique.json")).unwrap(),
        Format::Musique
    );
}

#[test]
fn hotpotqa_alone_uses_titles_as_ids() {
    let l = read_questions(&[fx("hotpotqa.json")]).unwrap();
    assert_eq!(l.questions.len(), 2);
    let h1 = &l.questions[0];
    assert_eq!(h1.id, "h1");
    assert_eq!(h1.dataset, Dataset::Hotpotqa);
    assert_eq!(h1.answers, ["Arthur's Magazine"]);
    // Order of first mention; the repeated title counted once.
    assert_eq!(h1.supporting, ["Arthur's Magazine", "First for Women"]);
    assert_eq!(
        l.questions[1].supporting,
        ["Radio City (Indian radio station)"]
    );
    // The cluster: the first supporting title, whatever corpus id its paragraph gets.
    assert_eq!(h1.cluster.as_deref(), Some("Arthur's Magazine"));
    assert_eq!(
        l.questions[1].cluster.as_deref(),
        Some("Radio City (Indian radio station)")
    );
    // Radio City is in both questions with one text: one document.
    let ids: Vec<_> = l.documents.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "Radio City (Indian radio station)",
            "Arthur's Magazine",
            "First for Women"
        ]
    );
    let radio = &l.documents[0];
    // Sentences joined as given (they carry their leading spaces).
    assert_eq!(
        radio.text,
        "Radio City is India's first private FM radio station. It was started on 3 July 2001."
    );
    assert_eq!(
        radio.url,
        "https://en.wikipedia.org/wiki/Radio_City_(Indian_radio_station)"
    );
    assert_eq!(
        l.documents[1].url,
        "https://en.wikipedia.org/wiki/Arthur's_Magazine"
    );
}

#[test]
fn titles_with_several_texts_get_hashed_ids_across_files() {
    let l = read_questions(&[fx("hotpotqa.json"), fx("musique.jsonl"), fx("ours.jsonl")]).unwrap();
    assert_eq!(l.questions.len(), 5);
    // Hashes: printf '%s' TEXT | sha256sum | cut -c1-8.
    let ids: Vec<_> = l.documents.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "Radio City (Indian radio station)#535d8de2",
            "Arthur's Magazine",
            "First for Women",
            "Radio City (Indian radio station)#0c8bb2ca",
            "Bangalore#56f75292",
            "Bangalore#3f6e13d6",
        ]
    );
    assert_eq!(
        l.questions[1].supporting,
        ["Radio City (Indian radio station)#535d8de2"]
    );
    let m = &l.questions[2];
    assert_eq!(m.id, "2hop__1_2");
    assert_eq!(m.dataset, Dataset::Musique);
    // The answer, then aliases that differ from it.
    assert_eq!(m.answers, ["Founder", "The Founder"]);
    assert_eq!(
        m.supporting,
        [
            "Radio City (Indian radio station)#0c8bb2ca",
            "Bangalore#56f75292"
        ]
    );
    // MuSiQue's cluster: the title of its first `is_supporting` paragraph, not the hashed id.
    assert_eq!(
        m.cluster.as_deref(),
        Some("Radio City (Indian radio station)")
    );
    // Our JSONL: as written, supporting and cluster optional.
    assert_eq!(l.questions[3].supporting, ["Arthur's Magazine"]);
    assert_eq!(l.questions[4].answers, ["Paris", "City of Paris"]);
    assert!(l.questions[4].supporting.is_empty());
    assert_eq!(l.questions[3].cluster.as_deref(), Some("Magazines"));
    assert_eq!(l.questions[4].cluster, None);
}

/// A HotpotQA file without `supporting_facts` (the test set's shape) gives questions with no
/// cluster, and our JSONL keeps the field through a write and a read.
#[test]
fn clusters_are_absent_without_supporting_facts_and_survive_our_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("test.json");
    std::fs::write(
        &h,
        r#"[{"_id": "t1", "question": "q", "answer": "a", "context": [["Here", ["x"]]]}]"#,
    )
    .unwrap();
    let l = read_questions(&[&h]).unwrap();
    assert_eq!(l.questions[0].cluster, None);
    let ours = dir.path().join("ours.jsonl");
    ragstats_core::questions::write_questions(&ours, &l.questions).unwrap();
    // No `cluster` key is written for a question without one.
    assert_eq!(
        std::fs::read_to_string(&ours).unwrap(),
        "{\"id\":\"t1\",\"dataset\":\"hotpotqa\",\"question\":\"q\",\"answers\":[\"a\"],\"supporting\":[]}\n"
    );
    let both = read_questions(&[fx("hotpotqa.json")]).unwrap();
    let again = dir.path().join("again.jsonl");
    ragstats_core::questions::write_questions(&again, &both.questions).unwrap();
    let back = read_questions(&[&again]).unwrap();
    assert_eq!(back.questions, both.questions);
}

/// Writes `text` to a file named `name` in a temporary directory and reads it.
fn read_err(name: &str, text: &str) -> (String, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    let e = read_questions(&[&p]).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    (e.to_string(), p, dir)
}

#[test]
fn each_error_names_file_and_line_or_record() {
    let (e, p, _d) = read_err("x.jsonl", "{\"foo\": 1}\n");
    assert!(
        e.starts_with(&format!(
            "{}:1: cannot tell the question format",
            p.display()
        )),
        "{e}"
    );
    let (e, p, _d) = read_err("x.jsonl", "");
    assert_eq!(e, format!("{}: no questions in the file", p.display()));
    let (e, p, _d) = read_err(
        "x.jsonl",
        "{\"id\":\"a\",\"dataset\":\"musique\",\"question\":\"q\",\"answers\":[\"x\"]}\n{oops\n",
    );
    assert!(
        e.starts_with(&format!("{}:2: not valid JSON", p.display())),
        "{e}"
    );
    let (e, p, _d) = read_err(
        "x.jsonl",
        "{\"id\":\"a\",\"dataset\":\"musique\",\"question\":\"q\",\"answers\":[]}\n",
    );
    assert_eq!(
        e,
        format!(
            "{}:1: `answers` must hold at least one non-empty answer",
            p.display()
        )
    );
    let (e, p, _d) = read_err(
        "x.jsonl",
        "{\"id\":\"a\",\"dataset\":\"nq\",\"question\":\"q\",\"answers\":[\"x\"]}\n",
    );
    assert!(
        e.starts_with(&format!(
            "{}:1: not a questions JSONL question: unknown variant `nq`",
            p.display()
        )),
        "{e}"
    );
    let (e, p, _d) = read_err(
        "x.json",
        r#"[{"_id": "h1", "question": "q", "answer": "a", "context": []},
            {"_id": "h2", "question": "q", "context": []}]"#,
    );
    assert_eq!(
        e,
        format!(
            "{}: record 1 (id 'h2'): not a HotpotQA question: missing field `answer`",
            p.display()
        )
    );
    let (e, p, _d) = read_err(
        "x.json",
        r#"[{"_id": "h1", "question": "q", "answer": "a", "supporting_facts": [["Nowhere", 0]], "context": [["Here", ["x"]]]}]"#,
    );
    assert_eq!(
        e,
        format!(
            "{}: record 0 (id 'h1'): supporting fact title 'Nowhere' is not in its context",
            p.display()
        )
    );
    let (e, p, _d) = read_err(
        "x.json",
        r#"[{"id": "m1", "question": "q", "answer": "", "paragraphs": []}]"#,
    );
    assert_eq!(
        e,
        format!("{}: record 0 (id 'm1'): empty answer", p.display())
    );
    let (e, p, _d) = read_err("x.json", "[{\"id\": \"m1\",\n \"id\": \"m2\"}]");
    assert!(
        e.starts_with(&format!("{}:2: duplicate key 'id'", p.display())),
        "{e}"
    );
}

#[test]
fn an_empty_cluster_is_refused_with_its_line() {
    let (msg, path, _d) = read_err(
        "q.jsonl",
        "{\"id\": \"o1\", \"dataset\": \"hotpotqa\", \"question\": \"q\", \"answers\": [\"a\"]}\n\
         {\"id\": \"o2\", \"dataset\": \"hotpotqa\", \"question\": \"q\", \"answers\": [\"a\"], \"cluster\": \" \"}\n",
    );
    assert_eq!(
        msg,
        format!(
            "{}:2: `cluster` is empty; give the cluster's name or leave the field out",
            path.display()
        )
    );
}

#[test]
fn question_ids_are_unique_across_files() {
    let e = read_questions(&[fx("ours.jsonl"), fx("ours.jsonl")]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:1: question id already given at {}:1",
            fx("ours.jsonl").display(),
            fx("ours.jsonl").display()
        )
    );
}

#[test]
fn shipped_sample_is_what_convert_writes() {
    // data/qa/questions.jsonl and corpus.jsonl are exactly `stats questions convert` of the
    // two shipped dataset files (data/qa/README.md).
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    let c = dir.path().join("c.jsonl");
    crate::common::stats()
        .args(["questions", "convert"])
        .arg(repo("data/qa/hotpotqa.json"))
        .arg(repo("data/qa/musique.json"))
        .arg("--out")
        .arg(&q)
        .arg("--corpus-out")
        .arg(&c)
        .assert()
        .success()
        .stdout(format!(
            "200 questions (100 HotpotQA, 100 MuSiQue) -> {}\n2884 documents -> {}\n",
            q.display(),
            c.display()
        ));
    assert_eq!(
        std::fs::read(&q).unwrap(),
        std::fs::read(repo("data/qa/questions.jsonl")).unwrap()
    );
    assert_eq!(
        std::fs::read(&c).unwrap(),
        std::fs::read(repo("data/qa/corpus.jsonl")).unwrap()
    );
    // Every supporting id names a corpus document; MuSiQue titles with several paragraphs
    // were hashed (85 such titles in the sample).
    let docs = corpus::read_corpus(&c).unwrap();
    let ids: std::collections::HashSet<_> = docs.iter().map(|d| d.id.as_str()).collect();
    let l = read_questions(&[q]).unwrap();
    assert!(l.questions.iter().all(|x| !x.supporting.is_empty()));
    for x in &l.questions {
        for s in &x.supporting {
            assert!(ids.contains(s.as_str()), "{s}");
        }
    }
    let hashed_titles: std::collections::HashSet<_> = docs
        .iter()
        .filter(|d| d.id != d.title)
        .map(|d| d.title.as_str())
        .collect();
    assert_eq!(hashed_titles.len(), 85);
    // The clusters are the first supporting titles of the published files. In this sample
    // they are nearly all distinct, so clustering changes little here; reference:
    // python3 -c "import json,collections; h=json.load(open('data/qa/hotpotqa.json'));
    //   m=json.load(open('data/qa/musique.json')); print(len({q['supporting_facts'][0][0] for q in h}),
    //   collections.Counter([p['title'] for p in q['paragraphs'] if p['is_supporting']][0]
    //   for q in m).most_common(1), h[0]['_id'], h[0]['supporting_facts'][0][0])"
    // prints: 100 [('Tennessee', 2)] 5a77ec115542992a6e59dff7 Alû
    let clusters = |d: Dataset| {
        let mut n = std::collections::BTreeMap::new();
        for x in l.questions.iter().filter(|x| x.dataset == d) {
            *n.entry(x.cluster.clone().unwrap()).or_insert(0) += 1;
        }
        n
    };
    assert_eq!(clusters(Dataset::Hotpotqa).len(), 100);
    let musique = clusters(Dataset::Musique);
    assert_eq!(musique.len(), 99);
    assert_eq!(musique["Tennessee"], 2);
    let first = l
        .questions
        .iter()
        .find(|x| x.id == "5a77ec115542992a6e59dff7")
        .unwrap();
    assert_eq!(first.cluster.as_deref(), Some("Alû"));
}
