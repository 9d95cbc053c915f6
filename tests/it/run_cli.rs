//! `stats run` end to end on the shipped data/qa sample: a real tantivy index built by
//! `stats index build`, and the model served by a scripted HTTP server (tests/support)
//! whose answers are a deterministic function of the request.
//!
//! The script: the planner's first query is the question; Adaptive then asks for each
//! supporting paragraph's title in turn, Open repeats the question (a repeated query, which
//! the selectors must ignore) and then asks "<question> background". For questions whose
//! text length is a multiple of 7, Open's third step replies with no JSON (a planning
//! failure). The reader answers the gold answer when the documents it is shown contain it
//! (case-insensitively), else UNKNOWN.

use crate::common;
use crate::support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::llm_server::{ok_reply, Seen, Server};

const STEPS: &str = "3";

/// A panel cell: question, arm, trajectory, selector, read.
type CellKey = (String, String, u64, String, u64);

struct Q {
    id: String,
    answer: String,
    supporting: Vec<String>,
}

fn questions() -> HashMap<String, Q> {
    let text = std::fs::read_to_string("data/qa/questions.jsonl").unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap().to_string();
            (
                s("question"),
                Q {
                    id: s("id"),
                    answer: v["answers"][0].as_str().unwrap().to_string(),
                    supporting: v["supporting"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_str().unwrap().to_string())
                        .collect(),
                },
            )
        })
        .collect()
}

fn fails(question: &str) -> bool {
    question.len().is_multiple_of(7)
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> &'a str {
    let i = s.find(a).unwrap() + a.len();
    let j = s[i..].find(b).unwrap() + i;
    &s[i..j]
}

fn reply(qs: &HashMap<String, Q>, seen: &Seen) -> String {
    let msgs = seen.body["messages"].as_array().unwrap();
    let system = msgs[0]["content"].as_str().unwrap();
    let user = msgs[1]["content"].as_str().unwrap();
    if system.starts_with("You plan web searches") {
        let question = between(user, "Question: ", "\n\nQuery history:\n");
        let history = between(user, "Query history:\n", "\n\nObservations:");
        let h = if history == "(none)" {
            0
        } else {
            history.lines().count()
        };
        let adaptive = !user.contains("Observations:\n(none)");
        let q = &qs[question];
        let query = match (h, adaptive) {
            (0, _) => question.to_string(),
            (_, true) => q.supporting[(h - 1) % q.supporting.len()].clone(),
            (1, false) => question.to_string(),
            (_, false) if fails(question) => return "I am not sure what to search.".into(),
            (_, false) => format!("{question} background"),
        };
        serde_json::json!({ "query": query }).to_string()
    } else {
        reader_reply(qs, user)
    }
}

/// The scripted reader: the gold answer when the documents hold it, else `UNKNOWN`.
fn reader_reply(qs: &HashMap<String, Q>, user: &str) -> String {
    let question = between(user, "Question: ", "\n\nDocuments:\n");
    let docs = between(user, "Documents:\n", "\n\nAnswer as").to_lowercase();
    let gold = &qs[question].answer;
    let answer = if docs.contains(&gold.to_lowercase()) {
        gold.as_str()
    } else {
        "UNKNOWN"
    };
    serde_json::json!({ "answer": answer }).to_string()
}

/// A scripted model server; with `stall_at = Some(n)`, the n-th request (0-based) is
/// answered only after a minute, once (the test kills the run while it waits).
fn model_server(stall_at: Option<usize>) -> Server {
    let qs = Arc::new(questions());
    let n = Arc::new(AtomicUsize::new(0));
    Server::start(move |seen, _| {
        let i = n.fetch_add(1, Ordering::SeqCst);
        let r = ok_reply(&reply(&qs, seen));
        if Some(i) == stall_at {
            r.delayed(Duration::from_secs(60))
        } else {
            r
        }
    })
}

fn index(dir: &Path) -> String {
    let idx = dir.join("idx");
    common::stats()
        .args(["index", "build", "data/qa/corpus.jsonl", "--out"])
        .arg(&idx)
        .assert()
        .success();
    format!("local:{}", idx.display())
}

fn run_args(search: &str, base: &str, out: &Path, concurrency: &str) -> Vec<String> {
    [
        "run",
        "data/qa/questions.jsonl",
        "--search",
        search,
        "--base-url",
        base,
        "--model",
        "m",
        // A seed makes every call's body distinct (seed + sample index), so the server can
        // tell a repeated request from another sample of the same prompt.
        "--seed",
        "1",
        "--planner",
        "open,adaptive",
        "--selector",
        "rrf,rr",
        "--trajectories",
        "2",
        "--reads",
        "2",
        "--questions",
        "3",
        "--steps",
        STEPS,
        "--concurrency",
        concurrency,
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect()
}

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn outputs(dir: &Path) -> [String; 3] {
    ["panel.csv", "trajectories.jsonl", "ledger.jsonl"].map(|f| read(dir.join(f)))
}

fn bodies(s: &Server) -> Vec<String> {
    s.requests().iter().map(|r| r.body.to_string()).collect()
}

#[test]
fn run_end_to_end_then_kill_and_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let search = index(tmp.path());
    let qs = questions();

    // 1. An uninterrupted run.
    let server = model_server(None);
    let out_a = tmp.path().join("a").join("demo");
    common::stats()
        .args(run_args(&search, &server.base, &out_a, "4"))
        .assert()
        .success();
    let [panel, trajectories, ledger] = outputs(&out_a);

    // No request was made twice: shared calls (step 0, identical packets) were cache hits.
    let sent = bodies(&server);
    let distinct: HashSet<&String> = sent.iter().collect();
    assert_eq!(distinct.len(), sent.len(), "a request was repeated");

    // Panel shape: 3 questions per dataset × 2 arms × 2 trajectories × 2 selectors × 2 reads.
    let mut lines = panel.lines();
    // The questions have clusters (their first supporting titles), so the panel has the
    // column, after `arm` as `stats import` writes it.
    assert_eq!(
        lines.next(),
        Some("dataset,question,trajectory,read,arm,cluster,selector,f1,em,answer")
    );
    let rows: Vec<Vec<String>> = {
        let mut r = csv::Reader::from_reader(panel.as_bytes());
        r.records()
            .map(|x| x.unwrap().iter().map(str::to_string).collect())
            .collect()
    };
    assert_eq!(rows.len(), 6 * 2 * 2 * 2 * 2);
    let clusters: HashMap<String, String> = read(PathBuf::from("data/qa/questions.jsonl"))
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap().to_string();
            (s("id"), s("cluster"))
        })
        .collect();
    for r in &rows {
        assert_eq!(r[5], clusters[&r[1]], "{r:?}");
    }
    let datasets: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert!(datasets[..48].iter().all(|d| *d == "hotpotqa"));
    assert!(datasets[48..].iter().all(|d| *d == "musique"));

    // Every trajectory record: the shared first step, and the answer rule holds: the answer
    // is the gold one exactly when the packet holds it, scored EM = F1 = 1, else UNKNOWN, 0.
    let logs: Vec<Value> = trajectories
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(logs.len(), 6 * 2 * 2);
    let mut by_cell: BTreeMap<CellKey, (f64, f64, String)> = BTreeMap::new();
    for r in &rows {
        by_cell.insert(
            (
                r[1].clone(),
                r[4].clone(),
                r[2].parse().unwrap(),
                r[6].clone(),
                r[3].parse().unwrap(),
            ),
            (r[7].parse().unwrap(), r[8].parse().unwrap(), r[9].clone()),
        );
    }
    let (mut right, mut unknown, mut failed_open) = (0, 0, 0);
    for t in &logs {
        assert_eq!(t["run"], "demo");
        let q = &qs[t["question"].as_str().unwrap()];
        assert_eq!(t["question_id"], q.id.as_str());
        let steps = t["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[0]["shared"], true);
        // The query is the question with its whitespace collapsed.
        let collapsed = t["question"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(steps[0]["query"], collapsed.as_str());
        let failed = steps.iter().any(|s| s["query"].is_null());
        assert_eq!(
            failed,
            t["arm"] == "open" && fails(t["question"].as_str().unwrap())
        );
        failed_open += usize::from(failed);
        for read in t["reads"].as_array().unwrap() {
            let sel = read["selector"].as_str().unwrap();
            let n = t["packets"][sel].as_array().unwrap().len();
            assert!(n <= 5);
            // The documents the reader was sent, as the trajectory log records them.
            let user = read["reader_messages"][1]["content"].as_str().unwrap();
            let docs = between(user, "Documents:\n", "\n\nAnswer as").to_lowercase();
            assert_eq!(docs.matches("\nurl: ").count(), n);
            let holds = docs.contains(&q.answer.to_lowercase());
            let (f1, em, answer) = &by_cell[&(
                q.id.clone(),
                t["arm"].as_str().unwrap().to_string(),
                t["trajectory"].as_u64().unwrap(),
                sel.to_string(),
                read["read"].as_u64().unwrap(),
            )];
            assert_eq!(read["answer"].as_str().unwrap(), answer);
            if holds {
                assert_eq!((answer.as_str(), *em, *f1), (q.answer.as_str(), 1.0, 1.0));
                right += 1;
            } else {
                assert_eq!((answer.as_str(), *em, *f1), ("UNKNOWN", 0.0, 0.0));
                unknown += 1;
            }
        }
        assert_eq!(t["reads"].as_array().unwrap().len(), 4);
    }
    assert!(right > 0 && unknown > 0, "right {right}, unknown {unknown}");

    // The ledger: the shared first planner call (and its search) carry one key in both arms,
    // and `stats cost` bills exactly the calls the server saw.
    let rows: Vec<Value> = ledger
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let step0: Vec<&Value> = rows
        .iter()
        .filter(|r| r["kind"] == "planner" && r["step"] == 0)
        .collect();
    assert_eq!(step0.len(), 6 * 2 * 2);
    for r in &step0 {
        let twins: Vec<&&Value> = step0
            .iter()
            .filter(|o| o["question"] == r["question"] && o["trajectory"] == r["trajectory"])
            .collect();
        assert_eq!(twins.len(), 2);
        assert_eq!(twins[0]["key"], twins[1]["key"]);
        assert_ne!(twins[0]["arm"], twins[1]["arm"]);
    }
    let search0: Vec<&Value> = rows
        .iter()
        .filter(|r| r["kind"] == "search" && r["step"] == 0)
        .collect();
    assert_eq!(search0.len(), 6 * 2 * 2);
    for r in &search0 {
        let twin = search0
            .iter()
            .find(|o| {
                o["question"] == r["question"]
                    && o["trajectory"] == r["trajectory"]
                    && o["arm"] != r["arm"]
            })
            .unwrap();
        assert_eq!(twin["key"], r["key"]);
    }
    let cost = common::json(&[
        "cost",
        out_a.join("ledger.jsonl").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let billed: u64 = cost["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["model_calls"].as_u64().unwrap())
        .sum();
    assert_eq!(billed as usize, sent.len());

    // Reads belong to one selector; planner calls and searches, shared by both, to none.
    // `stats cost --by selector` bills a selector its own reads (a call shared by several
    // rows once): every call here is 13 tokens, over 6 questions × 2 trajectories × 2 reads.
    for r in &rows {
        match r["kind"].as_str().unwrap() {
            "reader" => assert!(r["selector"] == "rrf" || r["selector"] == "rr", "{r}"),
            _ => assert!(r.get("selector").is_none(), "{r}"),
        }
    }
    let by = common::json(&[
        "cost",
        out_a.join("ledger.jsonl").to_str().unwrap(),
        "--by",
        "selector",
        "--format",
        "json",
    ]);
    let sections = by["results"].as_array().unwrap();
    assert_eq!(sections.len(), 3);
    for s in sections {
        let name = s["selector"].as_str().unwrap();
        let calls: HashSet<&Value> = rows
            .iter()
            .filter(|r| r["kind"] == "reader" && (name == "average" || r["selector"] == name))
            .map(|r| &r["key"])
            .collect();
        let c_r = s["result"]["unit_costs"]["tokens"]["read"]
            .as_f64()
            .unwrap();
        assert_eq!(s["result"]["unit_costs"]["reads"], 24, "{name}");
        assert!(
            (c_r - 13.0 * calls.len() as f64 / 24.0).abs() < 1e-9,
            "{name}: {c_r}"
        );
    }

    // The audit sees the planned failures: open trajectories of the failing questions.
    let audit = common::json(&["run-audit", out_a.to_str().unwrap(), "--json"]);
    // Given the directory, it read the log in it; the path is in the envelope only.
    let log = out_a.join("trajectories.jsonl");
    assert_eq!(
        audit["run"]["inputs"]["trajectories"],
        log.display().to_string()
    );
    assert!(audit.get("file").is_none());
    let arows = audit["rows"].as_array().unwrap();
    assert_eq!(arows.len(), 4);
    for r in arows {
        let expect = if r["arm"] == "open" { failed_open } else { 0 };
        assert_eq!(r["planning_failures"].as_u64().unwrap() as usize, expect);
        assert_eq!(r["trajectories"], 12);
        assert_eq!(r["reads"], 24);
    }

    // Every analysis reads the runner's panel: two selectors are averaged within each
    // question x trajectory x read cell before the arms are contrasted (docs/METHODS.md), and
    // `--selector` analyses one of them.
    let panel_path = out_a.join("panel.csv");
    let avg = common::json(&[
        "variance",
        panel_path.to_str().unwrap(),
        "--contrast",
        "adaptive-open",
        "--format",
        "json",
    ]);
    assert!(
        avg["outcome"]
            .as_str()
            .unwrap()
            .contains("average over selectors rrf, rr"),
        "{avg}"
    );
    assert!(avg["se"].as_f64().unwrap().is_finite());
    let rrf = common::json(&[
        "variance",
        panel_path.to_str().unwrap(),
        "--contrast",
        "adaptive-open",
        "--selector",
        "rrf",
        "--format",
        "json",
    ]);
    assert!(
        rrf["outcome"].as_str().unwrap().contains("selector rrf"),
        "{rrf}"
    );

    // 2. The same run, killed (SIGKILL) while request 40 is in flight, then run again.
    let stalled = 40;
    let server_b = model_server(Some(stalled));
    let out_b = tmp.path().join("b").join("demo");
    kill_in_flight(
        run_args(&search, &server_b.base, &out_b, "1"),
        &server_b,
        stalled,
    );
    assert!(!out_b.join("panel.csv").exists());
    common::stats()
        .args(run_args(&search, &server_b.base, &out_b, "1"))
        .assert()
        .success();
    let [panel_b, trajectories_b, ledger_b] = outputs(&out_b);
    assert!(panel_b == panel, "panel.csv differs after resume");
    assert!(
        trajectories_b == trajectories,
        "trajectories.jsonl differs after resume"
    );
    assert!(ledger_b == ledger, "ledger.jsonl differs after resume");
    // Only the request killed in flight was sent again; every other was asked once, and the
    // two runs asked exactly the same requests.
    let sent_b = bodies(&server_b);
    assert_eq!(sent_b.len(), sent.len() + 1);
    let stalled_body = &sent_b[stalled];
    let mut counts: HashMap<&String, usize> = HashMap::new();
    for b in &sent_b {
        *counts.entry(b).or_default() += 1;
    }
    for (b, n) in &counts {
        assert_eq!(*n, if *b == stalled_body { 2 } else { 1 });
    }
    assert_eq!(counts.keys().copied().collect::<HashSet<_>>(), distinct);
}

#[test]
fn dry_run_counts_calls_before_spending() {
    let out = common::json(&[
        "run",
        "data/qa/questions.jsonl",
        "--search",
        "local:/nonexistent",
        "--model",
        "m",
        "--trajectories",
        "2",
        "--reads",
        "3",
        "--questions",
        "5",
        "--steps",
        "4",
        "--out",
        "/nonexistent/out",
        "--dry-run",
        "--json",
    ]);
    // 10 questions × 2 trajectories × (1 shared + 3 steps × 2 arms) planner calls, and at
    // most 10 × 2 × 2 arms × 2 selectors × 3 reads reader calls.
    assert_eq!(out["questions"], 10);
    assert_eq!(out["planner_calls"], 140);
    assert_eq!(out["search_calls"], 140);
    assert_eq!(out["reader_calls"], 240);
    assert_eq!(out["output_tokens_max"], (140 + 240) * 256);
}

/// `stats report` on a run directory: besides the panel's sections, the run-audit section
/// (the audit table, the run's counts) and the cost section (tokens from the ledger).
#[test]
fn report_on_a_run_directory_has_audit_and_cost_sections() {
    let tmp = tempfile::tempdir().unwrap();
    let search = index(tmp.path());
    let server = model_server(None);
    let out = tmp.path().join("demo");
    common::stats()
        .args(run_args(&search, &server.base, &out, "4"))
        .assert()
        .success();
    let html_path = tmp.path().join("r.html");
    common::stats()
        .arg("report")
        .arg(&out)
        .args(["--contrast", "adaptive-open", "--replicates", "50"])
        .arg("--out")
        .arg(&html_path)
        .assert()
        .success();
    let html = read(html_path);
    let section = |id: &str| -> String {
        let start = html
            .find(&format!("<section id=\"{id}\">"))
            .unwrap_or_else(|| panic!("no {id} section"));
        let end = html[start..].find("</section>").unwrap() + start;
        html[start..end].to_string()
    };

    // Cost: every call the server answered, billed once, 10 input and 3 output tokens each;
    // a search request per distinct search key of the ledger; no prices, so model USD is 0
    // (the table is `stats cost`'s own).
    let cost = section("cost");
    let calls = server.count();
    let ledger: Vec<Value> = read(out.join("ledger.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let searches: HashSet<&Value> = ledger
        .iter()
        .filter(|r| r["kind"] == "search")
        .map(|r| &r["key"])
        .collect();
    let total_row = format!(
        "<td>{calls}</td><td>{}</td><td>0</td><td>{}</td><td>{}</td><td>0.0000</td><td>{}</td></tr>",
        10 * calls,
        3 * calls,
        13 * calls,
        searches.len()
    );
    assert!(cost.contains(&total_row), "{total_row}\n{cost}");
    assert!(cost.contains("<th>input tok</th>") && cost.contains("stats cost "));

    // Run audit: a row per arm and selector, Open's planned failures, and the run's counts.
    let audit = section("run-audit");
    let json = common::json(&["run-audit", out.to_str().unwrap(), "--json"]);
    let failed_open = json["rows"][0]["planning_failures"].as_u64().unwrap();
    assert!(failed_open > 0);
    for (arm, sel) in [
        ("open", "rrf"),
        ("open", "rr"),
        ("adaptive", "rrf"),
        ("adaptive", "rr"),
    ] {
        let fail = if arm == "open" { failed_open } else { 0 };
        let head = format!("<tr><td>{arm}</td><td>{sel}</td><td>12</td>");
        let row = &audit[audit.find(&head).unwrap_or_else(|| panic!("{head}"))..];
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(row.contains(&format!("<td>{fail}/12</td>")), "{row}");
    }
    let t = &json["totals"];
    let li = format!(
        "<li>empty candidate pools: {} of 24; empty packets: {} of 48</li>",
        t["empty_pools"], t["empty_packets"]
    );
    assert!(audit.contains(&li), "{li}\n{audit}");
    assert!(audit.contains(
        "<li>reads: 96, 0 of them copied placeholders, 0 echoed the prompt (refused, scored 0)</li>"
    ));
    assert!(audit.contains("stats run-audit "));
    // The script's queries find documents: no warning.
    assert!(!audit.contains("warning"));
}

/// `stats report` on the run of a model that copies its prompt's format examples (issue
/// #51): every query and answer is refused, the panel is all zeros. The run audit's warning
/// that every candidate pool is empty comes first (the box at the top of the page and the
/// first lines printed), the efficiency section says why it has no figure in its own words,
/// every caption is shown once, and sections without a figure name no `--plot`.
#[test]
fn report_on_an_all_zero_run_puts_the_audit_warning_first() {
    let tmp = tempfile::tempdir().unwrap();
    let search = index(tmp.path());
    let server = Server::start(|seen, _| {
        let system = seen.body["messages"][0]["content"].as_str().unwrap_or("");
        ok_reply(if system.starts_with("You plan web searches") {
            r#"{"query": "..."}"#
        } else {
            r#"{"answer": "..."}"#
        })
    });
    let out = tmp.path().join("zeros");
    common::stats()
        .args(run_args(&search, &server.base, &out, "4"))
        .assert()
        .success();
    let panel = read(out.join("panel.csv"));
    assert!(panel.lines().count() > 1);
    let html_path = tmp.path().join("r.html");
    let o = common::stats()
        .arg("report")
        .arg(&out)
        .args(["--contrast", "adaptive-open", "--replicates", "50"])
        .arg("--out")
        .arg(&html_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = read(html_path);

    // 3 questions of each of the 2 datasets × 2 arms × 2 trajectories: 24 pools, all empty.
    let audit = "24 of 24 candidate pools (100.0%) are empty: the searches found nothing to read";
    let efficiency = "the scores do not vary (every variance component is 0), so SE^2 x cost is 0 at every R and the loss is 0/0";

    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .expect("the report is well-formed");
    let body = doc.descendants().find(|n| n.has_tag_name("body")).unwrap();
    let first = body.first_element_child().unwrap();
    assert_eq!(
        (first.tag_name().name(), first.attribute("id")),
        ("section", Some("warnings"))
    );
    let items: Vec<String> = first
        .descendants()
        .filter(|n| n.has_tag_name("li"))
        .map(|li| {
            li.descendants()
                .filter(|t| t.is_text())
                .filter_map(|t| t.text())
                .collect()
        })
        .collect();
    assert!(
        items
            .iter()
            .any(|i| i.starts_with("run-audit: ") && i.contains(audit)),
        "{items:?}"
    );
    // Efficiency's own reason, not the plot's.
    assert!(
        items
            .iter()
            .any(|i| i.starts_with("efficiency: ") && i.contains(efficiency)),
        "{items:?}"
    );
    let head = first.descendants().find(|n| n.has_tag_name("h2")).unwrap();
    assert_eq!(
        head.text(),
        Some(format!("Read first: {} warning(s)", items.len()).as_str())
    );
    let eff = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("efficiency"))
        .unwrap();
    let eff_text: String = eff
        .descendants()
        .filter(|t| t.is_text())
        .filter_map(|t| t.text())
        .collect();
    assert!(
        eff_text.contains(&format!("no figure: no loss is defined ({efficiency})")),
        "{eff_text}"
    );
    assert!(!html.contains("nothing to plot"));
    assert!(!eff.descendants().any(|n| n.has_tag_name("figure")));

    // The text form leads with the same warnings.
    let first_line = stdout.lines().next().unwrap();
    assert!(
        first_line.starts_with("warning: ")
            && stdout.contains(&format!("warning: run-audit: {audit}")),
        "{stdout}"
    );
    assert!(stdout.contains("warning: efficiency: ") && stdout.contains(efficiency));

    // Each figure's caption once: drawn in its SVG, no <figcaption> repeating it.
    assert!(!html.contains("<figcaption"));
    let captions: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("caption"))
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(captions.len(), 2, "variance and forecast: {captions:?}");
    for c in &captions {
        let escaped = c.replace('&', "&amp;").replace('<', "&lt;");
        assert_eq!(html.matches(&escaped).count(), 1, "{c}");
    }
    // `--plot` only where the section has a figure (the list of sections not in the report
    // names the commands that would draw them).
    for s in doc
        .descendants()
        .filter(|n| n.has_tag_name("section") && n.attribute("id") != Some("absent"))
    {
        let text: String = s
            .descendants()
            .filter(|t| t.is_text())
            .filter_map(|t| t.text())
            .collect();
        let has_figure = s.descendants().any(|n| n.has_tag_name("figure"));
        assert_eq!(
            text.contains("--plot"),
            has_figure,
            "{:?}: {text}",
            s.attribute("id")
        );
    }
    // Wide tables and figures scroll inside their own box, not the page.
    for rule in [
        "table { display: block; max-width: 100%; overflow-x: auto;",
        "figure { max-width: 100%; overflow-x: auto;",
    ] {
        assert!(html.contains(rule), "{rule}");
    }
}

/// The replies of an `--until` test: step 0 searches the question; after it the adaptive
/// planner searches the gold answer when `differ` (so its packet holds it) and the open one
/// gives up, and without `differ` both give up, so both arms read the same packet and score
/// the same. The reader answers the gold answer when the documents hold it.
fn until_reply(qs: &HashMap<String, Q>, seen: &Seen, differ: bool) -> String {
    let msgs = seen.body["messages"].as_array().unwrap();
    let (system, user) = (
        msgs[0]["content"].as_str().unwrap(),
        msgs[1]["content"].as_str().unwrap(),
    );
    if system.starts_with("You plan web searches") {
        let question = between(user, "Question: ", "\n\nQuery history:\n");
        let first = between(user, "Query history:\n", "\n\nObservations:") == "(none)";
        let adaptive = !user.contains("Observations:\n(none)");
        if first {
            serde_json::json!({ "query": question }).to_string()
        } else if adaptive && differ {
            serde_json::json!({ "query": qs[question].answer }).to_string()
        } else {
            "I am not sure what to search.".into()
        }
    } else {
        reader_reply(qs, user)
    }
}

fn until_server(differ: bool, stall_at: Option<usize>) -> Server {
    let qs = Arc::new(questions());
    let n = Arc::new(AtomicUsize::new(0));
    Server::start(move |seen, _| {
        let i = n.fetch_add(1, Ordering::SeqCst);
        let r = ok_reply(&until_reply(&qs, seen, differ));
        if Some(i) == stall_at {
            r.delayed(Duration::from_secs(60))
        } else {
            r
        }
    })
}

fn until_args(search: &str, base: &str, out: &Path) -> Vec<String> {
    [
        "run",
        "data/qa/questions.jsonl",
        "--search",
        search,
        "--base-url",
        base,
        "--model",
        "m",
        "--seed",
        "1",
        "--selector",
        "rrf",
        "--trajectories",
        "1",
        "--reads",
        "1",
        "--steps",
        "2",
        "--concurrency",
        "1",
        "--until",
        "resolved",
        "--wave",
        "20",
        "--max-questions",
        "160",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect()
}

/// An `--until` run into `out` against a server whose request `stalled` never returns in
/// time, killed (SIGKILL) once that request is in flight: the server and `out`.
fn killed_until_run(search: &str, differ: bool, stalled: usize, out: &Path) -> (Server, PathBuf) {
    let server = until_server(differ, Some(stalled));
    kill_in_flight(until_args(search, &server.base, out), &server, stalled);
    (server, out.to_path_buf())
}

/// Runs `stats ARGS` and kills it (SIGKILL on Unix) once `server` has seen request `stalled`,
/// which its script holds back.
fn kill_in_flight(args: Vec<String>, server: &Server, stalled: usize) {
    let mut child = crate::support::cli::stats()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while server.count() <= stalled {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run stopped early"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// `run --until resolved` (#50 item 2): arms that differ stop before `--max-questions`, at
/// the first wave whose sequence excludes 0, and the panel holds exactly the questions run;
/// arms that score the same run to the end, or to the first wave that spends `--max-usd`. Each, killed (SIGKILL) in a wave and run again,
/// replays the finished calls and writes what the uninterrupted run wrote, `until.json` too.
#[test]
fn run_until_resolved_stops_when_the_arms_differ_and_resumes_after_kill() {
    let tmp = tempfile::tempdir().unwrap();
    let search = index(tmp.path());
    let record =
        |dir: &Path| -> Value { serde_json::from_str(&read(dir.join("until.json"))).unwrap() };
    let questions_in = |panel: &str| -> HashSet<String> {
        let mut r = csv::Reader::from_reader(panel.as_bytes());
        r.records().map(|x| x.unwrap()[1].to_string()).collect()
    };

    // The dry run of an --until run counts the questions it may ask: --max-questions of them,
    // here 160 of 200 at 1 trajectory: 160 × (step 0 + one step per arm) planner calls.
    let mut dry = until_args(&search, "http://127.0.0.1:9", &tmp.path().join("dry"));
    dry.extend(["--dry-run", "--json"].map(String::from));
    let d: Value =
        serde_json::from_slice(&common::stats().args(&dry).output().unwrap().stdout).unwrap();
    assert_eq!(
        (d["questions"].as_u64(), d["planner_calls"].as_u64()),
        (Some(160), Some(480)),
        "{d}"
    );

    // Arms that differ: resolved early.
    let server = until_server(true, None);
    // The same directory name, so the run's name in the trajectory log is the same.
    let out_a = tmp.path().join("a").join("until");
    let o = common::stats()
        .args(until_args(&search, &server.base, &out_a))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let rec = record(&out_a);
    assert_eq!(rec["stopped"], "resolved", "{rec}");
    let done = rec["questions"].as_u64().unwrap();
    assert!(done < 160 && done % 20 == 0, "{rec}");
    assert_eq!(rec["planned"], 160);
    assert_eq!(rec["saved"].as_u64().unwrap(), 160 - done);
    let waves = rec["waves"].as_array().unwrap();
    assert_eq!(waves.len() as u64, done / 20);
    // Only the last look resolves: every earlier one's interval holds 0.
    for w in &waves[..waves.len() - 1] {
        let lo = w["look"]["interval"][0].as_f64().unwrap();
        assert!(lo <= 0.0, "{w}");
        assert_eq!(w["look"]["resolved"], false, "{w}");
    }
    let last = &waves[waves.len() - 1]["look"];
    assert!(last["interval"][0].as_f64().unwrap() > 0.0, "{last}");
    assert_eq!(rec["sequence"]["decision"], "resolved");
    assert_eq!(rec["sequence"]["stopped_at"], done);
    let [panel, trajectories, ledger] = outputs(&out_a);
    assert_eq!(questions_in(&panel).len() as u64, done);
    assert!(
        stdout.contains(&format!(
            "stopped after {done} of 160 planned question(s) ({} saved): the confidence sequence resolved the contrast",
            160 - done
        )),
        "{stdout}"
    );
    // `stats sequential` over the run's panel, looking every wave, takes the same looks.
    let seq = common::json(&[
        "sequential",
        out_a.join("panel.csv").to_str().unwrap(),
        "--contrast",
        "adaptive-open",
        "--look-every",
        "20",
        "--format",
        "json",
    ]);
    assert_eq!(seq["looks"], rec["sequence"]["looks"], "{seq}");

    // Arms that score the same: never resolved, so the run goes to --max-questions.
    let same = until_server(false, None);
    let out_s = tmp.path().join("same-a").join("same");
    common::stats()
        .args(until_args(&search, &same.base, &out_s))
        .assert()
        .success();
    let rec_s = record(&out_s);
    assert_eq!(rec_s["stopped"], "max_questions", "{rec_s}");
    assert_eq!(rec_s["questions"], 160);
    assert_eq!(rec_s["waves"].as_array().unwrap().len(), 8);
    assert_eq!(questions_in(&read(out_s.join("panel.csv"))).len(), 160);
    let outputs_s = outputs(&out_s);

    // A budget: at $0.10 a token each call (10 prompt + 3 completion tokens) costs $1.30, and
    // the run stops after the first wave whose ledger bills $150 or more, as `stats cost`
    // bills it.
    let prices = tmp.path().join("prices.toml");
    std::fs::write(
        &prices,
        "[models.m]\ninput = 100000\noutput = 100000\n[search]\nusd_per_1000 = 0\n",
    )
    .unwrap();
    let budget = until_server(false, None);
    let out_u = tmp.path().join("usd").join("same");
    let mut args = until_args(&search, &budget.base, &out_u);
    args.extend(["--prices", prices.to_str().unwrap(), "--max-usd", "150"].map(String::from));
    common::stats().args(&args).assert().success();
    let rec_u = record(&out_u);
    assert_eq!(rec_u["stopped"], "max_usd", "{rec_u}");
    let spent: Vec<f64> = rec_u["waves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["usd"].as_f64().unwrap())
        .collect();
    let (last, before) = (spent[spent.len() - 1], &spent[..spent.len() - 1]);
    assert!(
        last >= 150.0 && before.iter().all(|u| *u < 150.0),
        "{spent:?}"
    );
    let cost = common::json(&[
        "cost",
        out_u.join("ledger.jsonl").to_str().unwrap(),
        "--prices",
        prices.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let calls = cost["total"]["model_calls"].as_f64().unwrap();
    assert!(
        (last - cost["total"]["model_usd"].as_f64().unwrap()).abs() < 1e-9,
        "{cost}"
    );
    assert!(
        (last - 1.3 * calls).abs() < 1e-9,
        "{last} for {calls} calls"
    );

    // The run to the end, killed in its fourth wave and run again, ends as it did.
    let sent_s = same.count();
    let (same_b, out_sb) = killed_until_run(
        &search,
        false,
        sent_s / 8 * 3 + 5,
        &tmp.path().join("same-b").join("same"),
    );
    assert_eq!(record(&out_sb)["stopped"], Value::Null);
    common::stats()
        .args(until_args(&search, &same_b.base, &out_sb))
        .assert()
        .success();
    assert!(outputs(&out_sb) == outputs_s, "outputs differ after resume");
    assert_eq!(record(&out_sb), rec_s);
    assert_eq!(same_b.count(), sent_s + 1);

    // Killed while a request of the second wave is in flight, then run again.
    let sent_a = server.count();
    let (server_b, out_b) = killed_until_run(
        &search,
        true,
        sent_a / waves.len() + 3,
        &tmp.path().join("b").join("until"),
    );
    // The first wave was written, with its look and no stop.
    let partial = record(&out_b);
    assert_eq!(partial["stopped"], Value::Null, "{partial}");
    assert_eq!(partial["waves"].as_array().unwrap().len(), 1);
    common::stats()
        .args(until_args(&search, &server_b.base, &out_b))
        .assert()
        .success();
    assert!(
        outputs(&out_b) == [panel, trajectories, ledger],
        "outputs differ after resume"
    );
    assert_eq!(record(&out_b), rec);
    // Only the request killed in flight was asked again.
    assert_eq!(server_b.count(), sent_a + 1);
}
