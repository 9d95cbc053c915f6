//! The shell examples of docs/*.md run as written, and every flag a doc names exists.
//!
//! The convention the docs follow (and this file reads):
//!
//! - A shell example is a ```` ```console ```` block: each command starts with `$ ` (a line
//!   ending in ` \` continues on the next), and the lines up to the next `$ ` line or the
//!   fence are what the command prints (stdout and stderr together), compared line by line:
//!   a `...` line stands for any number of lines, `[..]` for any text within a line (the
//!   README's convention, trycmd's). A command the doc shows no output for must still exit
//!   0. A line `? N` right after a command says it exits with status N instead.
//! - An example that needs what a test machine lacks is marked in its fence's info string,
//!   ```` ```console,needs-server ```` (a model server), `needs-gpu`, `needs-slurm`,
//!   `needs-network`, `needs-build` (cargo or pip), `needs-minutes` (a coverage study:
//!   seconds to minutes in a release build, many times that in the test build) or
//!   `needs-real-evals` (third-party outputs in `../shared/real-evals`, which the repository
//!   does not ship; a test of its own reads them, named beside the block): it is shown,
//!   not run, and [`DOCS`] counts such blocks per doc, so none drops out unnoticed.
//! - A command synopsis (`stats correlate FILE.csv --x COLS [...]`) is a ```` ```usage ````
//!   block. Any other block that holds a `stats` command, and any `sh`/`bash` block, fails
//!   here. (A block with no info string and no `stats` line, such as a formula, is not read.)
//!
//! Each console block stands alone (a reader can paste any one of them): it runs in its own
//! temporary directory holding links to the repository's `data/` and `tests/` (so the examples
//! name shipped files and what they write stays out of the checkout), through `bash -c` with
//! the `stats` under test first on `PATH`; the blocks run in parallel, a block's commands in
//! order. rayon is pinned to 2 threads because backend lines say how many ran; API keys and
//! endpoints are removed from the environment.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::cli::{stats, strip_secrets};

/// Every file in docs/, with how many console blocks it runs and how many it only shows
/// (their `needs-*` tag). A new doc, or a count that changes, fails
/// [`every_doc_is_listed_and_follows_the_convention`].
const DOCS: &[(&str, usize, usize)] = &[
    // (file, blocks run, blocks marked needs-*)
    ("BENCHMARKS.md", 0, 0),
    ("COVERAGE.md", 0, 0),
    ("METHODS.md", 0, 0),
    ("compare.md", 2, 0),
    ("correlate.md", 2, 1),
    ("coverage-mcq.md", 0, 1),
    ("coverage.md", 1, 1),
    ("import.md", 2, 0),
    ("json.md", 1, 0),
    ("judges.md", 4, 1),
    ("ledger.md", 0, 0),
    ("library.md", 0, 0),
    ("llm.md", 0, 1),
    ("mcq.md", 1, 1),
    ("mcqgen.md", 1, 1),
    ("panels.md", 1, 3),
    ("python.md", 0, 1),
    ("report.md", 2, 0),
    ("resample.md", 0, 0),
    ("run.md", 0, 1),
    ("scale.md", 0, 4),
    ("score-answers.md", 1, 0),
    ("search.md", 1, 0),
    ("sequential.md", 5, 1),
    ("simulate.md", 1, 0),
    ("subsets.md", 1, 0),
];

const NEEDS: &[&str] = &[
    "needs-server",
    "needs-gpu",
    "needs-slurm",
    "needs-network",
    "needs-build",
    "needs-minutes",
    "needs-real-evals",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One fenced block: its opening line (1-based), info string and lines.
struct Block {
    line: usize,
    info: String,
    body: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // a fence may be indented (a block inside a list item): its lines lose that indent
        let indent = lines[i].len() - lines[i].trim_start_matches(' ').len();
        let l = &lines[i][indent..];
        let ticks = l.chars().take_while(|&c| c == '`').count();
        if ticks >= 3 {
            let fence = &l[..ticks];
            let info = l[ticks..].trim().to_string();
            let mut j = i + 1;
            while j < lines.len() && !lines[j].trim_start_matches(' ').starts_with(fence) {
                j += 1;
            }
            out.push(Block {
                line: i + 1,
                info,
                body: lines[i + 1..j.min(lines.len())]
                    .iter()
                    .map(|s| {
                        let n = (s.len() - s.trim_start_matches(' ').len()).min(indent);
                        s[n..].to_string()
                    })
                    .collect(),
            });
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// One `$ ` command of a console block, with the doc line it starts on.
struct Example {
    line: usize,
    command: String,
    status: i32,
    expected: Vec<String>,
}

fn examples(block: &Block) -> Result<Vec<Example>, String> {
    let mut out: Vec<Example> = Vec::new();
    let mut k = 0;
    while k < block.body.len() {
        let l = &block.body[k];
        let line = block.line + 1 + k;
        if let Some(cmd) = l.strip_prefix("$ ") {
            let mut command = cmd.to_string();
            while command.ends_with('\\') && k + 1 < block.body.len() {
                command.pop();
                k += 1;
                command.push(' ');
                command.push_str(block.body[k].trim());
            }
            let mut status = 0;
            if let Some(s) = block.body.get(k + 1).and_then(|s| s.strip_prefix("? ")) {
                status = s
                    .trim()
                    .parse()
                    .map_err(|_| format!("line {}: `? {s}` is not an exit status", line + 1))?;
                k += 1;
            }
            out.push(Example {
                line,
                command,
                status,
                expected: Vec::new(),
            });
        } else if let Some(ex) = out.last_mut() {
            ex.expected.push(l.clone());
        } else {
            return Err(format!(
                "line {line}: a console block starts with `$ COMMAND`, not `{l}`"
            ));
        }
        k += 1;
    }
    Ok(out)
}

/// Whether `actual` matches `expected` line by line, `...` standing for any lines and `[..]`
/// for any text within a line. Trailing blanks and trailing empty lines do not count.
fn matches(expected: &[String], actual: &[String]) -> bool {
    fn line_ok(e: &str, a: &str) -> bool {
        let parts: Vec<&str> = e.split("[..]").collect();
        if parts.len() == 1 {
            return e == a;
        }
        let (first, last) = (parts[0], parts[parts.len() - 1]);
        if !a.starts_with(first) || a.len() < first.len() + last.len() || !a.ends_with(last) {
            return false;
        }
        let mut rest = &a[first.len()..a.len() - last.len()];
        for p in &parts[1..parts.len() - 1] {
            match rest.find(p) {
                Some(i) => rest = &rest[i + p.len()..],
                None => return false,
            }
        }
        true
    }
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, more)) if e == "..." => {
            (0..=actual.len()).any(|skip| matches(more, &actual[skip..]))
        }
        Some((e, more)) => match actual.split_first() {
            Some((a, rest)) => line_ok(e, a) && matches(more, rest),
            None => false,
        },
    }
}

fn tidy(lines: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = lines
        .into_iter()
        .map(|l| l.trim_end().to_string())
        .collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// The console examples of one doc, classified; an error names every block out of convention.
struct DocPlan {
    /// the examples of each block that runs
    run: Vec<Vec<Example>>,
    run_blocks: usize,
    shown_blocks: usize,
}

fn plan(name: &str, text: &str) -> Result<DocPlan, Vec<String>> {
    let mut errors = Vec::new();
    let mut plan = DocPlan {
        run: Vec::new(),
        run_blocks: 0,
        shown_blocks: 0,
    };
    for b in blocks(text) {
        let mut tags = b.info.split(',').map(str::trim);
        let lang = tags.next().unwrap_or("");
        let tags: Vec<&str> = tags.collect();
        let at = format!("docs/{name}:{}", b.line);
        match lang {
            "console" => {
                if let Some(t) = tags.iter().find(|t| !NEEDS.contains(t)) {
                    errors.push(format!(
                        "{at}: unknown tag `{t}` (known: {})",
                        NEEDS.join(", ")
                    ));
                } else if !tags.is_empty() {
                    plan.shown_blocks += 1;
                } else {
                    match examples(&b) {
                        Ok(ex) if ex.is_empty() => errors.push(format!("{at}: no `$ ` command")),
                        Ok(ex) => {
                            errors.extend(ex.iter().filter_map(|e| {
                                writes_into_checkout(&e.command).map(|p| {
                                    format!("docs/{name}:{}: writes {p}, a link into the checkout: write into the working directory", e.line)
                                })
                            }));
                            plan.run_blocks += 1;
                            plan.run.push(ex);
                        }
                        Err(e) => errors.push(format!("docs/{name}: {e}")),
                    }
                }
            }
            "sh" | "bash" | "shell" | "zsh" => errors.push(format!(
                "{at}: a shell example goes in a ```console block (`$ ` before each command)"
            )),
            "usage" | "rust" | "python" | "json" | "toml" | "csv" => {}
            _ => {
                if let Some(l) = b.body.iter().find(|l| {
                    let l = l.trim_start();
                    l.strip_prefix("$ ").unwrap_or(l).starts_with("stats ")
                }) {
                    errors.push(format!(
                        "{at}: `{l}` is a stats command outside a ```console block \
                         (a synopsis goes in ```usage)"
                    ));
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(plan)
    } else {
        Err(errors)
    }
}

/// The first file under `data/` or `tests/` a command names as an output (`--out`, `--*-out`,
/// `-o`, `--plot`): in the fixture directory those are links into the checkout.
fn writes_into_checkout(command: &str) -> Option<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    words.windows(2).find_map(|w| {
        let is_out =
            w[0] == "-o" || w[0] == "--plot" || (w[0].starts_with("--") && w[0].ends_with("out"));
        (is_out && (w[1].starts_with("data/") || w[1].starts_with("tests/")))
            .then(|| w[1].to_string())
    })
}

/// A fresh directory for one block's examples: links to the checkout's `data/` and `tests/`.
fn fixture_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    for sub in ["data", "tests"] {
        std::os::unix::fs::symlink(root().join(sub), dir.path().join(sub))
            .expect("link into the fixture directory");
    }
    dir
}

/// Runs one block's examples in order; returns a message per example that failed.
fn run_block(name: &str, examples: &[Example]) -> Vec<String> {
    let dir = fixture_dir();
    let bin = Path::new(env!("CARGO_BIN_EXE_stats"))
        .parent()
        .expect("the binary's directory")
        .to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let mut failures = Vec::new();
    for ex in examples {
        let mut c = Command::new("bash");
        strip_secrets(&mut c);
        let out = c
            .arg("-c")
            .arg(format!("{{ {}\n}} 2>&1", ex.command))
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("RAYON_NUM_THREADS", "2")
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("bash runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let actual = tidy(text.lines().map(str::to_string));
        let expected = tidy(ex.expected.iter().cloned());
        let status = out.status.code().unwrap_or(-1);
        let output_ok = expected.is_empty() || matches(&expected, &actual);
        if status != ex.status || !output_ok {
            failures.push(format!(
                "docs/{name}:{}: `{}` exited {status} (expected {}){}\n--- the doc shows:\n{}\n--- stats printed:\n{}\n",
                ex.line,
                ex.command,
                ex.status,
                if output_ok { "" } else { ", output differs" },
                expected.join("\n"),
                actual.join("\n"),
            ));
        }
    }
    failures
}

fn read_doc(name: &str) -> String {
    std::fs::read_to_string(root().join("docs").join(name)).expect("doc readable")
}

#[test]
fn every_doc_is_listed_and_follows_the_convention() {
    let listed: BTreeSet<&str> = DOCS.iter().map(|d| d.0).collect();
    let present: BTreeSet<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .filter_map(|e| {
            let n = e.ok()?.file_name().to_string_lossy().into_owned();
            n.ends_with(".md").then_some(n)
        })
        .collect();
    let present_ref: BTreeSet<&str> = present.iter().map(String::as_str).collect();
    assert_eq!(
        listed, present_ref,
        "DOCS in tests/it/docs.rs lists every docs/*.md"
    );
    let mut errors = Vec::new();
    for &(name, run, shown) in DOCS {
        match plan(name, &read_doc(name)) {
            Ok(p) => {
                if (p.run_blocks, p.shown_blocks) != (run, shown) {
                    errors.push(format!(
                        "docs/{name}: {} console blocks run and {} marked needs-*, DOCS says {run} and {shown}",
                        p.run_blocks, p.shown_blocks
                    ));
                }
            }
            Err(e) => errors.extend(e),
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn doc_examples_print_what_the_docs_show() {
    let plans: Vec<(&str, DocPlan)> = DOCS
        .iter()
        .filter_map(|&(name, _, _)| Some((name, plan(name, &read_doc(name)).ok()?)))
        .collect();
    let blocks: Vec<(&str, &[Example])> = plans
        .iter()
        .flat_map(|(name, p)| p.run.iter().map(move |b| (*name, b.as_slice())))
        .collect();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = blocks
            .iter()
            .map(|&(name, examples)| s.spawn(move || run_block(name, examples)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a doc's runner"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_matcher_elides_as_the_readme_does() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert!(matches(&s(&["a", "...", "d"]), &s(&["a", "b", "c", "d"])));
    assert!(matches(&s(&["a", "...", "d"]), &s(&["a", "d"])));
    assert!(!matches(&s(&["a", "...", "d"]), &s(&["a", "b"])));
    assert!(matches(&s(&["x [..] z"]), &s(&["x y y z"])));
    assert!(!matches(&s(&["x [..] z"]), &s(&["x y y"])));
    assert!(!matches(&s(&["a"]), &s(&["a", "b"])));
    let b = Block {
        line: 10,
        info: "console".into(),
        body: s(&["$ stats a \\", "  --b c", "? 2", "out", "$ stats d"]),
    };
    let ex = examples(&b).expect("parses");
    assert_eq!(ex.len(), 2);
    assert_eq!(ex[0].command, "stats a  --b c");
    assert_eq!((ex[0].line, ex[0].status), (11, 2));
    assert_eq!(ex[0].expected, s(&["out"]));
    assert_eq!((ex[1].line, ex[1].status), (15, 0));
}

#[test]
fn the_convention_is_enforced() {
    let err = |text: &str| plan("x.md", text).err().unwrap_or_default().join("\n");
    assert!(err("```\nstats variance p.csv\n```\n")
        .contains("x.md:1: `stats variance p.csv` is a stats command outside a ```console block"));
    assert!(err("```text\n$ stats variance p.csv\n```\n").contains("outside a ```console block"));
    assert!(err("```sh\nls\n```\n").contains("x.md:1: a shell example goes in a ```console block"));
    assert!(err("```console,needs-luck\n$ stats x\n```\n").contains("unknown tag `needs-luck`"));
    assert!(err("```console\nstats x\n```\n").contains("starts with `$ COMMAND`"));
    assert!(
        err("```console\n$ stats simulate --out data/x.csv\n```\n").contains("writes data/x.csv")
    );
    let p = plan("x.md", "```usage\nstats x [--y]\n```\n```console,needs-gpu\n$ stats x\n```\n```console\n$ stats a\n$ stats b\nout\n```\n")
        .expect("follows the convention");
    assert_eq!((p.run_blocks, p.shown_blocks, p.run[0].len()), (1, 1, 2));
    let p = plan(
        "x.md",
        "* item\n\n  ```console\n  $ stats a\n    out\n  ```\n",
    )
    .expect("an indented block");
    assert_eq!(
        (p.run[0][0].line, p.run[0][0].expected.clone()),
        (4, vec!["  out".to_string()])
    );
}

// ---- flags ------------------------------------------------------------------------------

/// The `stats` commands (paths such as `["mcq", "score"]`) with their `--help` text.
fn command_tree() -> BTreeMap<Vec<String>, String> {
    fn help(path: &[String]) -> String {
        let out = stats()
            .args(path)
            .arg("--help")
            .output()
            .expect("stats runs");
        assert!(
            out.status.success(),
            "stats {} --help fails",
            path.join(" ")
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    fn subcommands(help: &str) -> Vec<String> {
        help.lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| l.starts_with("  ") || l.is_empty())
            // a command's line; a wrapped description is indented further
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .filter(|c| c != "help")
            .collect()
    }
    let mut tree = BTreeMap::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let h = help(&path);
        for sub in subcommands(&h) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
        tree.insert(path, h);
    }
    tree
}

/// Every `stats …` command line in `text` (code blocks and inline code), as its words. A line
/// that starts with `stats` continues on the lines after it that end a ` \` or are indented
/// options (a synopsis' `[--flag X]` lines).
fn command_lines(text: &str) -> Vec<(usize, Vec<String>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let mut spans: Vec<String> = Vec::new();
        let t = line.trim_start();
        let t = t.strip_prefix("$ ").unwrap_or(t);
        let mut next = i + 1;
        if t.starts_with("stats ") {
            let mut joined = t.to_string();
            while next < lines.len() {
                let cont = lines[next].trim_start();
                let indented = lines[next].starts_with(' ') && cont.starts_with(['[', '-']);
                if !(joined.ends_with('\\') || indented) {
                    break;
                }
                joined = format!("{} {cont}", joined.trim_end_matches('\\'));
                next += 1;
            }
            spans.push(joined);
        } else {
            // inline code: the odd-numbered pieces between backticks
            spans.extend(
                line.split('`')
                    .skip(1)
                    .step_by(2)
                    .filter(|s| s.starts_with("stats "))
                    .map(str::to_string),
            );
        }
        for s in &spans {
            // a command ends at a comment, a pipe or a sequence operator (a synopsis'
            // `a|b` is one word)
            let s = s.split(" #").next().unwrap_or(s);
            let s = s.split([';']).next().unwrap_or(s);
            let s = s.split(" | ").next().unwrap_or(s);
            let s = s.split("&&").next().unwrap_or(s);
            out.push((i + 1, s.split_whitespace().map(str::to_string).collect()));
        }
        i = next;
    }
    out
}

/// The flags `text` names after a `stats` command that the command's `--help` lacks (and
/// commands that do not exist), as messages naming `shown:line`; and how many flags it checked.
fn unknown_flags(
    tree: &BTreeMap<Vec<String>, String>,
    shown: &str,
    text: &str,
) -> (usize, Vec<String>) {
    let mut errors = Vec::new();
    let mut checked = 0;
    for (line, words) in command_lines(text) {
        // `stats …`, `stats <command>`: a placeholder, no command to check against
        let Some(first) = words.get(1) else { continue };
        if !first.starts_with(|c: char| c.is_ascii_lowercase() || c == '-') {
            continue;
        }
        if !first.starts_with('-') && !tree.contains_key(std::slice::from_ref(first)) {
            errors.push(format!("{shown}:{line}: `stats {first}` is no command"));
            continue;
        }
        // the longest command path the words start with
        let mut path: Vec<String> = Vec::new();
        for w in &words[1..] {
            let mut p = path.clone();
            p.push(w.clone());
            if tree.contains_key(&p) {
                path = p;
            } else {
                break;
            }
        }
        let help = &tree[&path];
        for w in words[1..].iter().flat_map(|w| w.split('|')) {
            let Some(flag) = w.trim_start_matches(['[', '(']).strip_prefix("--") else {
                continue;
            };
            let flag: String = flag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if flag.is_empty() {
                continue;
            }
            checked += 1;
            let named = format!("--{flag}");
            let mut listed = help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'));
            if !listed.any(|t| t == named) {
                errors.push(format!(
                    "{shown}:{line}: `stats {}` has no {named} (its --help does not list it)",
                    path.join(" ")
                ));
            }
        }
    }
    (checked, errors)
}

#[test]
fn every_flag_a_doc_names_is_in_the_commands_help() {
    let tree = command_tree();
    // the check itself: a made-up flag, a made-up command, a real flag of a subcommand
    let (n, e) = unknown_flags(
        &tree,
        "x.md",
        "Run `stats variance p.csv --contrast b-a --no-such-flag`, not `stats frobnicate --x`.\n\
         $ stats mcq score r.jsonl --positions   # a comment --not-a-flag\n\
         stats subsets D --audit F [--per-subset|--format json]\n\
         \x20       [--no-such-option]\n",
    );
    assert_eq!(n, 7);
    assert_eq!(
        e,
        [
            "x.md:1: `stats variance` has no --no-such-flag (its --help does not list it)",
            "x.md:1: `stats frobnicate` is no command",
            "x.md:3: `stats subsets` has no --no-such-option (its --help does not list it)",
        ]
    );
    let mut files: Vec<PathBuf> = DOCS.iter().map(|d| root().join("docs").join(d.0)).collect();
    files.push(root().join("README.md"));
    let mut errors = Vec::new();
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        let shown = f.strip_prefix(root()).unwrap_or(f).display().to_string();
        let (n, e) = unknown_flags(&tree, &shown, &text);
        checked += n;
        errors.extend(e);
    }
    // 437 when this was written: far fewer means the scan stopped finding commands
    assert!(
        checked > 300,
        "only {checked} flags found: the scan is broken"
    );
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
