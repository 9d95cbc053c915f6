//! The input rules of `ragstats_core::io`, checked on every file kind through the `stats` binary:
//! a UTF-8 byte-order mark is accepted (same output as without it); invalid UTF-8 is exit 2
//! `FILE:LINE: not valid UTF-8`; UTF-16 is exit 2 with a hint; an error never echoes a
//! 1 MB value whole; a column or key given twice is exit 2 naming it.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use common::stats;
use support::llm_server::Server;

/// One file kind: a valid file, the command that reads it, and its bad variants.
struct Kind {
    name: &'static str,
    /// Where the file goes, relative to the test directory.
    file: &'static str,
    /// A valid file.
    good: String,
    /// The command line, given the file, the test directory (for companion files) and an
    /// empty directory for outputs.
    args: fn(&Path, &Path, &Path) -> Vec<String>,
    /// Text of `good`, on a line of its own, before which an invalid byte is put.
    utf8_at: &'static str,
    /// A file naming a column or key twice, and what the message must say.
    duplicate: Option<(String, &'static str)>,
    /// A file whose error would echo the value [`long`].
    long: Option<String>,
    /// Files in the output directory that must not change when the input has a BOM.
    outputs: &'static [&'static str],
}

fn long() -> String {
    "x".repeat(1_000_000)
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn p(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

/// The scripted LLM server, shared by the kinds read by `llm batch` and `mcq run`.
fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::echo(Duration::ZERO))
}

fn repo_lines(path: &str, n: usize) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    text.lines().take(n).map(|l| format!("{l}\n")).collect()
}

/// Reads of two temperatures: 3 questions, T = R = 2.
fn reads_csv() -> String {
    let mut s = String::from("temperature,dataset,question,trajectory,read,answer,f1\n");
    for temp in ["0.7", "0"] {
        for q in 1..=3 {
            for t in 0..2 {
                for r in 0..2 {
                    let a = if temp == "0.7" && r == 1 {
                        "Lyon"
                    } else {
                        "Paris"
                    };
                    let f = (q * 7 + t * 3 + r) % 5;
                    s.push_str(&format!("{temp},d,q{q},{t},{r},{a},0.{f}\n"));
                }
            }
        }
    }
    s
}

fn reads_jsonl() -> String {
    let csv = reads_csv();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            let m: serde_json::Map<String, serde_json::Value> = header
                .iter()
                .zip(l.split(','))
                .map(|(k, v)| (k.to_string(), serde_json::Value::from(v)))
                .collect();
            format!("{}\n", serde_json::Value::Object(m))
        })
        .collect()
}

fn result_line(id: &str, group: &str, task: &str, subtask: Option<&str>, ok: bool) -> String {
    let answer = ok.then_some(["A"]);
    format!(
        "{}\n",
        serde_json::json!({"id": id, "run": 0, "model": "m", "prompt": "informative",
            "shuffle_seed": null, "task": task, "subtask": subtask, "group": group,
            "labels": ["A", "B"], "permutation": ["A", "B"], "gold": ["A"],
            "allow_empty": false, "outcome": if ok { "ok" } else { "parse_failed" }, "answer": answer, "answer_shown": answer,
            "parse_note": null, "text": "A", "error": null, "usage": null, "cached": false})
    )
}

const COMPONENTS: &str = r#"{"strata": [
  {"name": "a", "questions": 100, "trajectories": 2, "reads": 2, "se": 0.03, "components": {"question": 0.04, "trajectory": 0.02, "read": 0.01}},
  {"name": "b", "questions": 100, "trajectories": 2, "reads": 2, "se": 0.04, "components": {"question": 0.04, "trajectory": 0.01, "read": 0.01}}
]}
"#;

const REQUEST: &str = r#"{"id": "r1", "messages": [{"role": "user", "content": "hi"}]}"#;

fn kinds() -> Vec<Kind> {
    let l = long();
    vec![
        Kind {
            name: "panel CSV",
            file: "p.csv",
            good: "question,f1\nq1,0.5\nq2,0.7\nq3,0.1\n".into(),
            args: |f, _, _| s(&["variance", &p(f)]),
            utf8_at: "q2",
            duplicate: Some(("question,f1,f1\nq1,1,1\n".into(), "column 'f1' appears twice in the header")),
            long: Some(format!("question,f1\nq1,{l}\n")),
            outputs: &[],
        },
        Kind {
            name: "panel JSONL",
            file: "p.jsonl",
            good: "{\"question\":\"q1\",\"f1\":0.5}\n{\"question\":\"q2\",\"f1\":0.7}\n{\"question\":\"q3\",\"f1\":0.1}\n".into(),
            args: |f, _, _| s(&["variance", &p(f)]),
            utf8_at: "{\"question\":\"q2\"",
            duplicate: Some(("{\"question\":\"q1\",\"f1\":1,\"f1\":2}\n".into(), "duplicate key 'f1'")),
            long: Some(format!("{{\"question\":\"q1\",\"f1\":\"{l}\"}}\n")),
            outputs: &[],
        },
        Kind {
            name: "reads CSV (consistency)",
            file: "reads.csv",
            good: reads_csv(),
            args: |f, _, _| s(&["consistency", &p(f), "--by", "temperature", "--replicates", "50", "--backend", "cpu"]),
            utf8_at: "0,d,q2,1,1",
            duplicate: Some((
                "temperature,question,answer,answer\n0,q1,a,b\n".into(),
                "column 'answer' appears twice in the header",
            )),
            long: None,
            outputs: &[],
        },
        Kind {
            name: "reads JSONL (consistency)",
            file: "reads.jsonl",
            good: reads_jsonl(),
            args: |f, _, _| s(&["consistency", &p(f), "--by", "temperature", "--replicates", "50", "--backend", "cpu"]),
            utf8_at: "\"question\":\"q2\",\"read\":\"1\",\"temperature\":\"0\",\"trajectory\":\"1\"",
            duplicate: Some((
                "{\"temperature\":\"0\",\"question\":\"q1\",\"answer\":\"a\",\"answer\":\"b\",\"f1\":1}\n".into(),
                "duplicate key 'answer'",
            )),
            long: None,
            outputs: &[],
        },
        Kind {
            name: "LLM requests",
            file: "requests.jsonl",
            good: format!("{REQUEST}\n{}\n", REQUEST.replace("r1", "r2")),
            args: |f, _, out| {
                s(&["llm", "batch", &p(f), "--model", "m", "--no-cache", "--out", &p(&out.join("o.jsonl"))])
            },
            utf8_at: "{\"id\": \"r2\"",
            duplicate: Some((format!("{}\n", REQUEST.replace("\"id\": \"r1\"", "\"id\": \"r1\", \"id\": \"r2\"")), "duplicate key 'id'")),
            long: Some(format!("{{\"id\": \"{l}\", \"messages\": \"hi\"}}\n")),
            outputs: &[],
        },
        Kind {
            name: "MCQ items",
            file: "items.jsonl",
            good: repo_lines("data/mcq/sample.jsonl", 4),
            args: |f, _, _| s(&["mcq", "validate", &p(f)]),
            utf8_at: "{\"id\": \"pc-002\"",
            duplicate: Some((
                repo_lines("data/mcq/sample.jsonl", 1).replacen("\"id\": \"pc-001\"", "\"id\": \"pc-001\", \"id\": \"pc-009\"", 1),
                "[json] duplicate key 'id'",
            )),
            long: Some(repo_lines("data/mcq/sample.jsonl", 1).replacen("\"task\": \"planning\"", &format!("\"task\": \"{l}\""), 1)),
            outputs: &[],
        },
        Kind {
            name: "MCQ results",
            file: "results.jsonl",
            good: [
                result_line("a", "planning-convergent", "planning", Some("convergent"), true),
                result_line("b", "planning-convergent", "planning", Some("convergent"), false),
                result_line("c", "evidence_extraction", "evidence_extraction", None, true),
                result_line("d", "evidence_extraction", "evidence_extraction", None, true),
            ]
            .concat(),
            args: |f, _, _| s(&["mcq", "score", &p(f), "--replicates", "200", "--backend", "cpu"]),
            utf8_at: "\"id\":\"d\"",
            duplicate: Some((
                result_line("a", "planning-convergent", "planning", Some("convergent"), true).replacen("\"run\":0", "\"run\":0,\"run\":1", 1),
                "duplicate key 'run'",
            )),
            long: Some(result_line(&l, "evidence_extraction", "planning", Some("convergent"), true)),
            outputs: &[],
        },
        Kind {
            name: "MCQ annotations",
            file: "annotations.jsonl",
            good: repo_lines("data/mcq/annotations.jsonl", 6),
            args: |f, _, _| s(&["mcq", "agree", &p(f)]),
            utf8_at: "{\"id\": \"pc-001\", \"annotator\": \"ann2\"",
            duplicate: Some(("{\"id\": \"a\", \"annotator\": \"x\", \"annotator\": \"y\", \"answer\": [\"A\"]}\n".into(), "duplicate key 'annotator'")),
            long: Some(format!("{{\"id\": \"a\", \"annotator\": \"x\", \"answer\": [[\"{l}\"]]}}\n")),
            outputs: &[],
        },
        Kind {
            name: "QA predictions",
            file: "preds.jsonl",
            good: "{\"id\": \"a\", \"prediction\": \"Paris\", \"answers\": [\"Paris\"]}\n{\"id\": \"b\", \"prediction\": \"the cat\", \"answer\": \"a cat\"}\n".into(),
            args: |f, _, _| s(&["score-answers", &p(f), "--per-item"]),
            utf8_at: "{\"id\": \"b\"",
            duplicate: Some(("{\"id\": \"a\", \"prediction\": \"x\", \"prediction\": \"y\", \"answers\": [\"y\"]}\n".into(), "duplicate key 'prediction'")),
            long: Some(format!("{{\"id\": \"{l}\", \"answers\": [\"y\"]}}\n")),
            outputs: &[],
        },
        Kind {
            name: "correlate table",
            file: "t.csv",
            good: "a,b\n1,2\n2,1\n3,4\n4,3\n5,6\n6,5\n".into(),
            args: |f, _, _| s(&["correlate", &p(f), "--x", "a", "--y", "b", "--replicates", "100", "--backend", "cpu"]),
            utf8_at: "4,3",
            duplicate: Some(("a,b,a\n1,2,3\n".into(), "column 'a' appears twice in the header")),
            long: Some(format!("a,b\n1,{l}\n")),
            outputs: &[],
        },
        Kind {
            name: "components JSON",
            file: "c.json",
            good: COMPONENTS.into(),
            args: |f, _, _| s(&["forecast", "--components", &p(f), "--design", "50:4:1"]),
            utf8_at: "{\"name\": \"b\"",
            duplicate: Some((
                COMPONENTS.replacen("{\"strata\"", "{\"pooled\": null, \"pooled\": null, \"strata\"", 1),
                "duplicate key 'pooled'",
            )),
            long: Some(COMPONENTS.replacen("\"questions\": 100", &format!("\"questions\": \"{l}\""), 1)),
            outputs: &[],
        },
        Kind {
            name: "cost ledger",
            file: "ledger.jsonl",
            good: "{\"kind\":\"planner\",\"question\":\"q1\",\"trajectory\":0,\"model\":\"m\",\"input_tokens\":10,\"output_tokens\":2}\n{\"kind\":\"search\",\"question\":\"q1\",\"trajectory\":0}\n".into(),
            args: |f, _, _| s(&["cost", &p(f)]),
            utf8_at: "{\"kind\":\"search\"",
            duplicate: Some(("{\"kind\":\"search\",\"question\":\"a\",\"question\":\"b\"}\n".into(), "duplicate key 'question'")),
            long: Some(format!("{{\"kind\":\"{l}\"}}\n")),
            outputs: &[],
        },
        Kind {
            name: "prices TOML",
            file: "prices.toml",
            good: "[models.m]\ninput = 1.0\noutput = 2.0\n\n[search]\nusd_per_1000 = 0.5\n".into(),
            args: |f, dir, _| {
                let ledger = dir.join("l.jsonl");
                std::fs::write(
                    &ledger,
                    "{\"kind\":\"planner\",\"question\":\"q1\",\"trajectory\":0,\"model\":\"m\",\"input_tokens\":10,\"output_tokens\":2}\n",
                )
                .unwrap();
                s(&["cost", &p(&ledger), "--prices", &p(f)])
            },
            utf8_at: "output = 2.0",
            duplicate: Some((
                "models = { m = { input = 1.0, input = 2.0, output = 2.0 } }\n".into(),
                "bad prices file: duplicate key",
            )),
            long: Some(format!("[models.m]\ninput = \"{l}\"\noutput = 1.0\n")),
            outputs: &[],
        },
        Kind {
            name: "MCQ prompt template",
            file: "prompts/informative/planning.txt",
            good: "Answer the question.\nQ: {query}\n{options}\n".into(),
            args: |_, dir, out| {
                let items = dir.join("items.jsonl");
                std::fs::write(&items, repo_lines("data/mcq/sample.jsonl", 2)).unwrap();
                s(&[
                    "mcq", "run", &p(&items), "--prompt-dir", &p(&dir.join("prompts")), "--model", "m",
                    "--no-cache", "--out", &p(&out.join("r.jsonl")),
                ])
            },
            utf8_at: "Q: {query}",
            duplicate: None,
            long: Some(format!("{{query}} {{options}} {{{l}}}\n")),
            outputs: &["r.jsonl"],
        },
    ]
}

struct Run {
    code: Option<i32>,
    stdout: String,
    /// stdout and stderr together.
    all: String,
    out_dir: tempfile::TempDir,
}

/// Writes `bytes` as the kind's file in `dir` and runs its command.
fn run(k: &Kind, dir: &Path, bytes: &[u8]) -> Run {
    let file: PathBuf = dir.join(k.file);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, bytes).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let o = stats()
        .args((k.args)(&file, dir, out_dir.path()))
        .env("OPENAI_BASE_URL", &server().base)
        .env_remove("OPENAI_API_KEY")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    // Summaries on stdout name the output files, which live in a new temporary directory
    // per run.
    let stdout = String::from_utf8_lossy(&o.stdout).replace(&p(out_dir.path()), "<OUT>");
    let all = format!("{stdout}{}", String::from_utf8_lossy(&o.stderr));
    assert!(!all.contains("panicked"), "{}: {all}", k.name);
    Run {
        code: o.status.code(),
        stdout,
        all,
        out_dir,
    }
}

fn path_of(k: &Kind, dir: &Path) -> String {
    p(&dir.join(k.file))
}

#[test]
fn every_kind_reads_its_good_file_the_same_with_a_utf8_bom() {
    for k in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let plain = run(&k, dir.path(), k.good.as_bytes());
        assert_eq!(plain.code, Some(0), "{}: {}", k.name, plain.all);
        let mut bom = b"\xEF\xBB\xBF".to_vec();
        bom.extend_from_slice(k.good.as_bytes());
        let with_bom = run(&k, dir.path(), &bom);
        assert_eq!(with_bom.code, Some(0), "{}: {}", k.name, with_bom.all);
        assert_eq!(plain.stdout, with_bom.stdout, "{}", k.name);
        for f in k.outputs {
            let read = |r: &Run| std::fs::read_to_string(r.out_dir.path().join(f)).unwrap();
            assert_eq!(read(&plain), read(&with_bom), "{}: {f}", k.name);
        }
    }
}

#[test]
fn every_kind_refuses_invalid_utf8_naming_file_and_line() {
    for k in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let at = k
            .good
            .find(k.utf8_at)
            .unwrap_or_else(|| panic!("{}: marker", k.name));
        assert_eq!(k.good.matches(k.utf8_at).count(), 1, "{}: marker", k.name);
        let line = k.good[..at].matches('\n').count() + 1;
        assert!(line > 1, "{}: put the bad byte past line 1", k.name);
        let mut bytes = k.good.as_bytes()[..at].to_vec();
        bytes.push(0xFF);
        bytes.extend_from_slice(&k.good.as_bytes()[at..]);
        let r = run(&k, dir.path(), &bytes);
        assert_eq!(r.code, Some(2), "{}: {}", k.name, r.all);
        let want = format!("{}:{line}: not valid UTF-8", path_of(&k, dir.path()));
        assert!(
            r.all.contains(&want),
            "{}: want {want}, got {}",
            k.name,
            r.all
        );
    }
}

#[test]
fn every_kind_refuses_utf16_with_a_hint() {
    for k in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = b"\xFF\xFE".to_vec();
        bytes.extend(k.good.encode_utf16().flat_map(u16::to_le_bytes));
        let r = run(&k, dir.path(), &bytes);
        assert_eq!(r.code, Some(2), "{}: {}", k.name, r.all);
        let want = format!(
            "{}:1: UTF-16 text (byte-order mark found); save the file as UTF-8",
            path_of(&k, dir.path())
        );
        assert!(r.all.contains(&want), "{}: {}", k.name, r.all);
    }
}

#[test]
fn no_error_echoes_a_long_value_whole() {
    for k in kinds() {
        let Some(text) = &k.long else { continue };
        let dir = tempfile::tempdir().unwrap();
        let r = run(&k, dir.path(), text.as_bytes());
        assert_eq!(
            r.code,
            Some(2),
            "{}: {}",
            k.name,
            &r.all[..r.all.len().min(500)]
        );
        assert!(
            r.all.len() < 2_000,
            "{}: {} bytes of output",
            k.name,
            r.all.len()
        );
        // The value is named, cut at 80 characters.
        assert!(r.all.contains("xxxxxxxxxx…"), "{}: {}", k.name, r.all);
        assert!(!r.all.contains(&"x".repeat(81)), "{}: {}", k.name, r.all);
    }
}

#[test]
fn every_kind_refuses_a_name_given_twice() {
    for k in kinds() {
        let Some((text, want)) = &k.duplicate else {
            continue;
        };
        let dir = tempfile::tempdir().unwrap();
        let r = run(&k, dir.path(), text.as_bytes());
        assert_eq!(r.code, Some(2), "{}: {}", k.name, r.all);
        let want = format!("{}:1: {want}", path_of(&k, dir.path()));
        assert!(
            r.all.contains(&want),
            "{}: want {want}, got {}",
            k.name,
            r.all
        );
    }
}
