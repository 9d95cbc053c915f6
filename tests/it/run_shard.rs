//! `stats run --shard K/N` and `stats run merge` (docs/scale.md) on the shipped data/qa
//! sample: a real tantivy index, and the model served by a scripted server whose answers
//! are a deterministic function of the request.
//!
//! The script: the planner's first query is the question; Adaptive then asks for each
//! supporting paragraph's title in turn; Open asks "<question> background" and then the same
//! query for every question, "shared background" — a search that every question's Open
//! trajectories make, so the shards all make it and the merge must bill it once. The reader
//! answers the gold answer when the documents it is shown contain it, else UNKNOWN. Any
//! other request (the readiness probe of examples/slurm/run-shard.sbatch) gets "ok".
//!
//! With STATS_SLURM=1, `slurm_arrays_merge_to_one_machine_runs` submits
//! examples/slurm/*.sbatch to a running Slurm (scripts/slurm-local.sh starts one on
//! localhost) and fails, rather than skips, when there is no `sbatch`.

use crate::common;
use crate::support;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::Value;
use support::llm_server::{ok_reply, Seen, Server};

struct Q {
    answer: String,
    supporting: Vec<String>,
}

fn questions() -> HashMap<String, Q> {
    let text = std::fs::read_to_string("data/qa/questions.jsonl").unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let strings = |x: &Value| -> Vec<String> {
                x.as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect()
            };
            (
                v["question"].as_str().unwrap().to_string(),
                Q {
                    answer: strings(&v["answers"])[0].clone(),
                    supporting: strings(&v["supporting"]),
                },
            )
        })
        .collect()
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> Option<&'a str> {
    let i = s.find(a)? + a.len();
    let j = s[i..].find(b)? + i;
    Some(&s[i..j])
}

fn reply(qs: &HashMap<String, Q>, seen: &Seen) -> String {
    let ok = || serde_json::json!({ "answer": "ok" }).to_string();
    let Some(msgs) = seen.body["messages"].as_array() else {
        return ok();
    };
    let text = |i: usize| {
        msgs.get(i)
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
    };
    let (system, user) = (text(0), text(1));
    if system.starts_with("You plan web searches") {
        let (Some(question), Some(history)) = (
            between(user, "Question: ", "\n\nQuery history:\n"),
            between(user, "Query history:\n", "\n\nObservations:"),
        ) else {
            return ok();
        };
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
            (1, false) => format!("{question} background"),
            (_, false) => "shared background".to_string(),
        };
        serde_json::json!({ "query": query }).to_string()
    } else if let (Some(question), Some(docs)) = (
        between(user, "Question: ", "\n\nDocuments:\n"),
        between(user, "Documents:\n", "\n\nAnswer as"),
    ) {
        let gold = &qs[question].answer;
        let answer = if docs.to_lowercase().contains(&gold.to_lowercase()) {
            gold.as_str()
        } else {
            "UNKNOWN"
        };
        serde_json::json!({ "answer": answer }).to_string()
    } else {
        ok()
    }
}

fn model_server() -> Server {
    let qs = Arc::new(questions());
    Server::start(move |seen, _| ok_reply(&reply(&qs, seen)))
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

/// The run's flags apart from the questions, search, endpoint and output (the Slurm recipe
/// passes the same as RUN_FLAGS): 3 questions per dataset (6 cells), 2 trajectories, 2 reads.
const FLAGS: [&str; 14] = [
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
    "3",
];

fn run_args(search: &str, base: &str, out: &Path) -> Vec<String> {
    let head = [
        "run",
        "data/qa/questions.jsonl",
        "--search",
        search,
        "--base-url",
        base,
        "--model",
        "m",
    ];
    head.iter()
        .chain(FLAGS.iter())
        .map(|s| s.to_string())
        .chain(["--out".to_string(), out.display().to_string()])
        .collect()
}

const FILES: [&str; 3] = ["panel.csv", "trajectories.jsonl", "ledger.jsonl"];

fn read(p: PathBuf) -> Vec<u8> {
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Asserts `got`'s three run files are byte-identical to `want`'s.
fn same_run(want: &Path, got: &Path) {
    for f in FILES {
        let (a, b) = (read(want.join(f)), read(got.join(f)));
        assert!(
            a == b,
            "{f} of {} differs from the unsharded run's ({} vs {} bytes)",
            got.display(),
            b.len(),
            a.len()
        );
    }
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&read(dir.join("shard.json"))).unwrap()
}

/// The cells `shard` holds, as `dataset/question`, from a manifest.
fn held(m: &Value, shard: u64) -> Vec<String> {
    m["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["shard"] == shard)
        .map(|c| {
            format!(
                "{}/{}",
                c["dataset"].as_str().unwrap(),
                c["question"].as_str().unwrap()
            )
        })
        .collect()
}

/// The model calls and search requests `stats cost` bills for a ledger in all.
fn billed(ledger: &Path) -> (u64, u64) {
    let cost = common::json(&["cost", ledger.to_str().unwrap(), "--format", "json"]);
    let total = &cost["total"];
    (
        total["model_calls"].as_u64().unwrap(),
        total["search_requests"].as_u64().unwrap(),
    )
}

fn merge(dirs: &[&Path], out: &Path) -> assert_cmd::assert::Assert {
    common::stats()
        .args(["run", "merge"])
        .args(dirs)
        .arg("--out")
        .arg(out)
        .assert()
}

#[test]
fn three_shards_merge_to_the_unsharded_run_and_bad_sets_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let search = index(tmp.path());
    let server = model_server();
    let one = tmp.path().join("one").join("demo");
    common::stats()
        .args(run_args(&search, &server.base, &one))
        .assert()
        .success();

    // Shards 3, 1, 2 of 3, each into its own directory.
    let dirs: Vec<PathBuf> = (1..=3)
        .map(|k| tmp.path().join("shards").join(format!("{k}-of-3")))
        .collect();
    for k in [3, 1, 2] {
        common::stats()
            .args(run_args(&search, &server.base, &dirs[k - 1]))
            .args(["--shard", &format!("{k}/3")])
            .assert()
            .success()
            .stdout(predicate::str::contains(format!(
                "shard {k}/3: 2 of the run's 6 cell(s) -> "
            )));
    }
    // The 6 cells (3 per dataset, distinct questions) go round robin: cells 0 and 3 to
    // shard 1, 1 and 4 to shard 2, 2 and 5 to shard 3; every manifest lists all six.
    let m1 = manifest(&dirs[0]);
    let all: Vec<String> = m1["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}/{}",
                c["dataset"].as_str().unwrap(),
                c["question"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(all.len(), 6);
    for k in 1..=3u64 {
        let m = manifest(&dirs[k as usize - 1]);
        assert_eq!(m["shard"], serde_json::json!({"index": k, "count": 3}));
        assert_eq!(m["cells"], m1["cells"]);
        let i = k as usize - 1;
        assert_eq!(held(&m, k), [all[i].clone(), all[i + 3].clone()]);
    }

    // The merge, shards given in any order, writes the unsharded run's bytes.
    let merged = tmp.path().join("merged").join("demo");
    merge(&[&dirs[2], &dirs[0], &dirs[1]], &merged)
        .success()
        .stdout(predicate::str::contains(
            "merged 3 shard(s): 6 question(s), 24 trajectory record(s), 96 panel row(s)",
        ))
        .stdout(predicate::str::contains(
            "1 keyed call(s) were made by more than one shard: the merged ledger bills each once",
        ));
    same_run(&one, &merged);

    // "shared background" was searched by every shard (each shard's cache is its own),
    // and billed once after the merge: the shards' searches add up to two more than the
    // merged ledger's, which are the unsharded run's.
    let shard_bills: Vec<(u64, u64)> = dirs
        .iter()
        .map(|d| billed(&d.join("ledger.jsonl")))
        .collect();
    let (calls, searches) = billed(&merged.join("ledger.jsonl"));
    assert_eq!((calls, searches), billed(&one.join("ledger.jsonl")));
    assert_eq!(shard_bills.iter().map(|b| b.1).sum::<u64>(), searches + 2);
    // No model call is shared between different questions: the shards' calls add up.
    assert_eq!(shard_bills.iter().map(|b| b.0).sum::<u64>(), calls);

    // A shard resumes on its own: run again, it replays its cache (no request) and writes
    // the same bytes.
    let before: Vec<Vec<u8>> = FILES.iter().map(|f| read(dirs[1].join(f))).collect();
    let n = server.count();
    common::stats()
        .args(run_args(&search, &server.base, &dirs[1]))
        .args(["--shard", "2/3"])
        .assert()
        .success();
    assert_eq!(server.count(), n);
    let after: Vec<Vec<u8>> = FILES.iter().map(|f| read(dirs[1].join(f))).collect();
    assert!(before == after, "a resumed shard wrote other bytes");

    // A missing shard: named, with the cells it holds.
    let out = tmp.path().join("bad");
    let cells2 = held(&m1, 2).join(", ");
    merge(&[&dirs[0], &dirs[2]], &out)
        .code(2)
        .stderr(predicate::str::contains(format!(
        "missing shard 2/3 with 2 cell(s): {cells2}; run the missing shard(s) of 3 and merge again"
    )));
    // A duplicated shard: a copy of shard 2's directory beside the original.
    let copy = tmp.path().join("copy-of-2");
    std::fs::create_dir_all(&copy).unwrap();
    for f in FILES.iter().chain(&["shard.json"]) {
        std::fs::copy(dirs[1].join(f), copy.join(f)).unwrap();
    }
    merge(&[&dirs[0], &dirs[1], &copy, &dirs[2]], &out)
        .code(2)
        .stderr(predicate::str::contains(format!(
            "shard 2/3 is given twice, in {} and {}: its 2 cell(s) ({cells2}) would be duplicated",
            dirs[1].display(),
            copy.display()
        )));
    // The same directory twice.
    merge(&[&dirs[0], &dirs[1], &dirs[1]], &out)
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{} is given twice",
            dirs[1].display()
        )));
    // A shard of another configuration: another model name, and results per search.
    let other = tmp.path().join("other-2");
    let mut args = run_args(&search, &server.base, &other);
    let at = args.iter().position(|a| a == "--model").unwrap() + 1;
    args[at] = "m2".into();
    common::stats()
        .args(&args)
        .args(["--shard", "2/3", "--k", "5"])
        .assert()
        .success();
    merge(&[&dirs[0], &other, &dirs[2]], &out)
        .code(2)
        .stderr(predicate::str::contains(format!(
            "the shards come from different configurations: model: 'm' in {a} but 'm2' in {b}; k: '10' in {a} but '5' in {b}",
            a = dirs[0].display(),
            b = other.display()
        )));
    // Shards of another N, and an unfinished shard (no manifest).
    let half = tmp.path().join("1-of-2");
    common::stats()
        .args(run_args(&search, &server.base, &half))
        .args(["--shard", "1/2"])
        .assert()
        .success();
    merge(&[&dirs[0], &half], &out)
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{} is shard 1/3 but {} is shard 1/2: the shards of one run share N",
            dirs[0].display(),
            half.display()
        )));
    std::fs::remove_file(copy.join("shard.json")).unwrap();
    merge(&[&copy], &out)
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{}: no shard.json: not the directory of a finished shard of a run",
            copy.display()
        )));
    // Merging over a shard is refused; nothing was written by the refused merges.
    merge(&[&dirs[0], &dirs[1], &dirs[2]], &dirs[0])
        .code(2)
        .stderr(predicate::str::contains("is the shard directory"));
    assert!(!out.exists());

    // The Slurm recipes with plain bash (a laptop): the task variables set by hand, the
    // scripted server as an endpoint already running (no MODEL_SERVER_CMD).
    let laptop = tmp.path().join("laptop").join("demo");
    let boot = tmp.path().join("laptop").join("boot");
    let panel = laptop.join("panel.csv");
    let bash = |script: &str, vars: &[(&str, String)]| {
        let mut c = Command::new("bash");
        support::cli::strip_secrets(&mut c);
        c.arg(format!("examples/slurm/{script}"))
            .env("STATS", support::cli::stats_path())
            .env("QUESTIONS", "data/qa/questions.jsonl")
            .env("SEARCH", &search)
            .env("MODEL", "m")
            .env("BASE_URL", &server.base)
            .env("RUN_DIR", &laptop)
            .env("RUN_FLAGS", FLAGS.join(" "))
            .env("PANEL", &panel)
            .env("BOOT_DIR", &boot)
            .env("CONTRAST", "adaptive-open")
            .env("REPLICATES", "300")
            .env("BOOT_FLAGS", "--seed 3")
            .envs(vars.iter().map(|(k, v)| (k, v)));
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "{script} {vars:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    for k in 1..=3 {
        bash(
            "run-shard.sbatch",
            &[
                ("SLURM_ARRAY_TASK_ID", k.to_string()),
                ("SLURM_ARRAY_TASK_COUNT", "3".into()),
            ],
        );
    }
    bash("merge.sbatch", &[("MERGE", "run".into())]);
    same_run(&one, &laptop);
    assert!(laptop.join("variance.txt").exists() && laptop.join("run-audit.txt").exists());
    // Two bootstrap shards (task ids 0 and 1: replicates 0..150 and 150..300).
    for i in 0..2 {
        bash(
            "bootstrap-shard.sbatch",
            &[
                ("SLURM_ARRAY_TASK_ID", i.to_string()),
                ("SLURM_ARRAY_TASK_COUNT", "2".into()),
            ],
        );
    }
    bash("merge.sbatch", &[("MERGE", "bootstrap".into())]);
    let single = tmp.path().join("single.bin");
    common::stats()
        .arg("bootstrap")
        .arg(&panel)
        .args([
            "--contrast",
            "adaptive-open",
            "--replicates",
            "300",
            "--seed",
            "3",
        ])
        .arg("--replicates-out")
        .arg(&single)
        .assert()
        .success();
    assert!(read(single) == read(boot.join("replicates.bin")));
}

/// The Slurm recipes on a real Slurm (STATS_SLURM=1; scripts/slurm-local.sh): an array of 3
/// run shards, each starting its "model server" (a forwarder to the scripted server that
/// listens only after 2 s, so the script must wait for it) and stopping it at the end; the
/// merge step after them with `--dependency=afterok`; an array of 4 bootstrap replicate
/// shards of the merged panel and their merge. The merged run and the merged replicates are
/// compared with one-machine runs byte for byte.
#[test]
fn slurm_arrays_merge_to_one_machine_runs() {
    if std::env::var("STATS_SLURM").as_deref() != Ok("1") {
        eprintln!("skipped: set STATS_SLURM=1 with a running Slurm (scripts/slurm-local.sh)");
        return;
    }
    let found = Command::new("sh")
        .args(["-c", "command -v sbatch"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(found, "STATS_SLURM=1 but there is no sbatch");
    // The jobs run on this node: a directory they can see (not a private /tmp).
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = tmp.path();
    let search = index(root);
    let server = model_server();
    let target = server
        .base
        .trim_start_matches("http://")
        .trim_end_matches("/v1");

    let one = root.join("one").join("demo");
    common::stats()
        .args(run_args(&search, &server.base, &one))
        .assert()
        .success();

    let run_dir = root.join("slurm").join("demo");
    let boot_dir = root.join("slurm").join("boot");
    let panel = run_dir.join("panel.csv").display().to_string();
    let logs = root.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let env: Vec<(&str, String)> = vec![
        ("STATS", support::cli::stats_path().display().to_string()),
        ("QUESTIONS", abs("data/qa/questions.jsonl")),
        ("SEARCH", search.clone()),
        ("MODEL", "m".into()),
        ("RUN_DIR", run_dir.display().to_string()),
        ("RUN_FLAGS", FLAGS.join(" ")),
        ("MODEL_PORT_BASE", free_port().to_string()),
        (
            "MODEL_SERVER_CMD",
            format!(
                "exec python3 {} \"$MODEL_PORT\" {target} 2",
                abs("scripts/tcp-forward.py")
            ),
        ),
        ("SERVER_POLL", "1".into()),
        ("SERVER_WAIT", "120".into()),
        ("PANEL", panel.clone()),
        ("BOOT_DIR", boot_dir.display().to_string()),
        ("CONTRAST", "adaptive-open".into()),
        ("REPLICATES", "1000".into()),
        ("BOOT_FLAGS", "--seed 7".into()),
    ];
    let sbatch = |args: &[&str], merge: &str| -> String {
        let mut c = Command::new("sbatch");
        support::cli::strip_secrets(&mut c);
        // The recipes ask for more CPUs than a CI machine has.
        c.args(["--parsable", "--cpus-per-task=1"])
            .arg(format!("--output={}/%x-%A_%a.log", logs.display()))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("MERGE", merge);
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "sbatch {args:?}: {stderr}");
        let id = String::from_utf8_lossy(&out.stdout);
        id.trim().split(';').next().unwrap().to_string()
    };
    let runs = sbatch(&["--array=1-3", "examples/slurm/run-shard.sbatch"], "run");
    let after = format!("--dependency=afterok:{runs}");
    let merged = sbatch(&[&after, "examples/slurm/merge.sbatch"], "run");
    wait_for(&[&runs, &merged], &logs);
    same_run(&one, &run_dir);
    let shards: BTreeSet<String> = std::fs::read_dir(run_dir.join("shards"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        shards,
        ["1-of-3", "2-of-3", "3-of-3"].map(String::from).into()
    );
    // Each task started its server, and stopped it: nothing listens on their ports now.
    for k in 1..=3 {
        let log = read(run_dir.join(format!("shards/{k}-of-3/server.log")));
        assert!(String::from_utf8_lossy(&log).starts_with("forwarding 127.0.0.1:"));
    }
    let base: u16 = env
        .iter()
        .find(|(k, _)| *k == "MODEL_PORT_BASE")
        .unwrap()
        .1
        .parse()
        .unwrap();
    for p in base..base + 3 {
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", p)).is_err(),
            "a model server still listens on {p}"
        );
    }
    assert!(run_dir.join("run-audit.txt").exists());

    let boots = sbatch(
        &["--array=0-3", "examples/slurm/bootstrap-shard.sbatch"],
        "bootstrap",
    );
    let after = format!("--dependency=afterok:{boots}");
    let bmerged = sbatch(&[&after, "examples/slurm/merge.sbatch"], "bootstrap");
    wait_for(&[&boots, &bmerged], &logs);
    let single = root.join("single.bin");
    let report = common::stats()
        .args(["bootstrap", &panel, "--contrast", "adaptive-open"])
        .args(["--replicates", "1000", "--seed", "7", "--replicates-out"])
        .arg(&single)
        .output()
        .unwrap();
    assert!(report.status.success());
    assert!(
        read(single) == read(boot_dir.join("replicates.bin")),
        "the merged replicates differ from one machine's"
    );
    // The merged report's estimate and interval are the one-machine run's.
    let text = String::from_utf8_lossy(&read(boot_dir.join("bootstrap.txt"))).into_owned();
    let one_text = String::from_utf8_lossy(&report.stdout).into_owned();
    let numbers = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("estimate") || l.contains("CI"))
            .map(str::to_string)
            .collect()
    };
    assert!(!numbers(&one_text).is_empty(), "{one_text}");
    assert_eq!(numbers(&text), numbers(&one_text));
}

fn abs(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Waits until Slurm has finished every job of `ids`, and checks each ended COMPLETED
/// (`scontrol show job` keeps finished jobs for MinJobAge, 300 s by default); shows the
/// job logs otherwise.
fn wait_for(ids: &[&str], logs: &Path) {
    let t0 = Instant::now();
    loop {
        let out = Command::new("squeue")
            .args(["-h", "-o", "%i %T", "-j", &ids.join(",")])
            .output()
            .unwrap();
        let q = String::from_utf8_lossy(&out.stdout).into_owned();
        if q.trim().is_empty() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "Slurm jobs still queued after 10 minutes:\n{q}\n{}",
            show_logs(logs)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    for id in ids {
        let out = Command::new("scontrol")
            .args(["-o", "show", "job", id])
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&out.stdout).into_owned();
        let states: Vec<&str> = s
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("JobState="))
            .collect();
        assert!(
            !states.is_empty() && states.iter().all(|st| *st == "COMPLETED"),
            "job {id}: {s}\n{}",
            show_logs(logs)
        );
    }
}

fn show_logs(dir: &Path) -> String {
    let mut s = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        s.push_str(&format!("--- {}\n{text}\n", e.path().display()));
    }
    s
}
