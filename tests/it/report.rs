//! `stats report` on the demo data: one well-formed, self-contained HTML file (no URL, no
//! script) with every figure of the demo run, each figure exactly what the command printed
//! beside it draws with `--plot` and its marks the numbers of that command's JSON, the same
//! bytes on a second run, and a section whose input is absent left out with a note.

use crate::common;

use common::{json, stats};
use serde_json::Value;

/// The figures of the demo report, in order, and the nested panel `<svg>`s each holds.
const DEMO_FIGURES: [(&str, usize); 8] = [
    ("fig-variance", 0),
    ("fig-forecast", 0),
    ("fig-efficiency", 0),
    ("fig-consistency", 3),
    ("fig-mcq-score-bare", 2),
    ("fig-mcq-score-informative", 2),
    ("fig-mcq-compare-bare-informative", 2),
    ("fig-correlate", 0),
];

/// Runs `stats report data/demo … --out DIR/NAME` and returns the HTML.
fn report(dir: &tempfile::TempDir, name: &str) -> String {
    let out = dir.path().join(name);
    stats()
        .args([
            "report",
            "data/demo",
            "--contrast",
            "adaptive-open",
            "--replicates",
            "300",
            "--seed",
            "5",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    std::fs::read_to_string(&out).expect("the report is written")
}

#[test]
fn report_is_self_contained_and_its_figures_are_the_commands_plots() {
    let dir = tempfile::tempdir().unwrap();
    let html = report(&dir, "r.html");
    for bad in ["http://", "https://", "<script", "<link", "src="] {
        assert!(!html.contains(bad), "the report contains {bad:?}");
    }
    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .expect("the report is well-formed");
    let figures: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("figure"))
        .collect();
    let ids: Vec<&str> = figures.iter().filter_map(|f| f.attribute("id")).collect();
    let want: Vec<&str> = DEMO_FIGURES.iter().map(|f| f.0).collect();
    assert_eq!(ids, want);
    // One <svg> per figure, plus one per panel of the stacked figures.
    for (fig, (id, nested)) in figures.iter().zip(DEMO_FIGURES) {
        let svgs: Vec<roxmltree::Node> = fig.children().filter(|n| n.has_tag_name("svg")).collect();
        assert_eq!(svgs.len(), 1, "{id}");
        let inner = svgs[0].children().filter(|n| n.has_tag_name("svg")).count();
        assert_eq!(inner, nested, "{id}");
    }
    assert_eq!(
        doc.descendants().filter(|n| n.has_tag_name("svg")).count(),
        8 + 3 + 2 + 2 + 2
    );
    // No URL anywhere but in the text of the commands (which name none either).
    let mut outside = html.clone();
    while let Some(i) = outside.find("<pre>") {
        let j = outside[i..].find("</pre>").unwrap() + i;
        outside.replace_range(i..j + "</pre>".len(), "");
    }
    assert!(!outside.contains("http"), "a URL outside the commands");
    // Each section's command, run with its --plot pointed into the temporary directory,
    // draws exactly the section's figure (the report's copy only lacks the namespace).
    let commands: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("code") && n.parent().is_some_and(|p| p.has_tag_name("pre")))
        .map(|n| n.text().unwrap().to_string())
        .collect();
    // One command per figure, then the cost section's (a table from the ledger, no figure).
    assert_eq!(commands.len(), 9);
    assert_eq!(
        commands[8],
        "$ stats cost data/demo/ledger.jsonl --prices data/demo/prices.toml"
    );
    for (cmd, id) in commands.iter().zip(&ids) {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        assert_eq!(&words[..2], ["$", "stats"], "{cmd}");
        let plot = dir.path().join(format!("{id}.svg"));
        let mut args: Vec<&str> = words[2..words.len() - 1].to_vec();
        assert_eq!(args.last(), Some(&"--plot"));
        args.pop();
        stats()
            .args(&args)
            .arg("--plot")
            .arg(&plot)
            .assert()
            .success();
        let svg = std::fs::read_to_string(&plot).unwrap().replacen(
            r#" xmlns="http://www.w3.org/2000/svg""#,
            "",
            1,
        );
        let start = html.find(&format!("<figure id=\"{id}\">\n")).unwrap();
        let inline = &html[start..];
        let inline = &inline[inline.find("<svg").unwrap()..];
        let inline = &inline[..inline.find("</figure>").unwrap()];
        assert_eq!(inline, svg, "{id} differs from: {cmd}");
    }
    for c in &commands[2..8] {
        assert!(c.contains("--replicates 300 --seed 5"), "{c}");
    }
    // The marks of the new figures are the numbers of their commands' JSON.
    for (cmd, id) in commands.iter().zip(&ids).skip(3) {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let mut args: Vec<&str> = words[2..words.len() - 2].to_vec();
        args.extend(["--format", "json"]);
        let v = json(&args);
        let fig = figures
            .iter()
            .find(|f| f.attribute("id") == Some(id))
            .unwrap();
        check_marks(id, *fig, &v);
    }
    // The tables are the commands' own (the rate as `stats consistency` prints it).
    let v = json(&[
        "consistency",
        "data/demo/reads.csv",
        "--by",
        "temperature",
        "--replicates",
        "300",
        "--seed",
        "5",
        "--format",
        "json",
    ]);
    let hot = &v["disagreement"][1];
    assert_eq!(hot["group"], "0.7");
    assert!(html.contains(&format!(
        "<tr><td>0.7</td><td>{}</td><td>{}</td><td>{:.2}%</td>",
        hot["cells"],
        hot["disagreeing"],
        100.0 * hot["rate"].as_f64().unwrap()
    )));
    // The panel summary names the outcome and the estimate of `stats variance`.
    assert!(html.contains(
        "outcome <strong>f1: adaptive-open</strong>: estimate 0.010276 with SE 0.010048"
    ));
    assert_eq!(html, report(&dir, "again.html"), "same input, same bytes");
}

#[test]
fn report_refuses_to_overwrite_its_panel() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("panel.csv");
    std::fs::copy("data/demo/panel.csv", &p).unwrap();
    let before = std::fs::read(&p).unwrap();
    stats()
        .args(["report", "--contrast", "adaptive-open", "--out"])
        .arg(&p)
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("would be overwritten"));
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

/// The marks of series `name` in the figure or panel `root`: (label, value, interval) of
/// each bar (`data-group`, `data-value`) or point (`data-label`, `data-y`).
fn marks(root: roxmltree::Node, name: &str) -> Vec<(String, f64, Option<[f64; 2]>)> {
    let series = root
        .descendants()
        .find(|n| n.attribute("data-series") == Some(name))
        .unwrap_or_else(|| panic!("no series {name}"));
    let num = |n: roxmltree::Node, a: &str| n.attribute(a).map(|v| v.parse::<f64>().unwrap());
    series
        .children()
        .filter(|n| matches!(n.attribute("class"), Some("bar") | Some("point")))
        .map(|n| {
            let label = n.attribute("data-group").or(n.attribute("data-label"));
            let value = num(n, "data-value").or(num(n, "data-y")).unwrap();
            let ci = num(n, "data-ci-low").map(|lo| [lo, num(n, "data-ci-high").unwrap()]);
            (label.unwrap_or_default().to_string(), value, ci)
        })
        .collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn interval(v: &Value) -> Option<[f64; 2]> {
    Some([f(&v[0]), f(&v[1])])
}

/// The task and overall rows of an MCQ JSON table (the figure's groups).
fn task_rows<'a>(v: &'a Value, key: &str) -> Vec<&'a Value> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["level"] != "group")
        .collect()
}

/// Checks every mark of figure `id` of the report against its command's JSON `v`.
fn check_marks(id: &str, fig: roxmltree::Node, v: &Value) {
    let panels: Vec<roxmltree::Node> = fig
        .descendants()
        .filter(|n| n.has_tag_name("svg") && n.parent().is_some_and(|p| p.has_tag_name("svg")))
        .collect();
    if id == "fig-consistency" {
        let dis = v["disagreement"].as_array().unwrap();
        let rate = marks(panels[0], "disagreement rate");
        assert_eq!(rate.len(), dis.len());
        for (m, d) in rate.iter().zip(dis) {
            assert_eq!(
                (m.0.as_str(), m.1),
                (d["group"].as_str().unwrap(), f(&d["rate"]))
            );
        }
        let prec = v["precision"].as_array().unwrap();
        let se = marks(panels[1], "one-read SE");
        assert_eq!(se.len(), prec.len());
        for (m, d) in se.iter().zip(dis) {
            assert_eq!(
                m.0.as_str(),
                d["group"].as_str().unwrap(),
                "in the same order"
            );
            let p = prec.iter().find(|p| p["group"] == d["group"]).unwrap();
            assert_eq!(m.1, f(&p["one_read_se"]));
        }
        let ratio = marks(panels[2], "SE ratio");
        assert_eq!(ratio.len(), 1);
        assert_eq!(ratio[0].1, f(&v["se_ratio"]["ratio"]));
        assert_eq!(ratio[0].2, interval(&v["se_ratio"]["ci"]));
    } else if id.starts_with("fig-mcq-score") {
        let rows = task_rows(v, "scores");
        assert_eq!(rows.len(), 5, "four tasks and overall");
        for key in ["em", "f1"] {
            let m = marks(panels[0], &key.to_uppercase());
            assert_eq!(m.len(), rows.len());
            for (m, r) in m.iter().zip(&rows) {
                assert_eq!(m.0, r["name"].as_str().unwrap());
                assert_eq!(
                    (m.1, m.2),
                    (f(&r[key]["estimate"]), interval(&r[key]["ci"]))
                );
            }
        }
        let pos = v["positions"].as_array().unwrap();
        let chosen = marks(panels[1], "chosen rate");
        assert_eq!(chosen.len(), pos.len());
        for (m, p) in chosen.iter().zip(pos) {
            assert_eq!(m.1, f(&p["chosen_rate"]));
        }
    } else if id.starts_with("fig-mcq-compare") {
        let rows = task_rows(v, "deltas");
        assert_eq!(rows.len(), 5);
        for (name, key) in [("ΔEM", "delta_em"), ("ΔF1", "delta_f1")] {
            let m = marks(panels[1], name);
            assert_eq!(m.len(), rows.len());
            for (m, r) in m.iter().zip(&rows) {
                assert_eq!(
                    (m.1, m.2),
                    (f(&r[key]["estimate"]), interval(&r[key]["ci"]))
                );
            }
        }
        let sides: Vec<&str> = panels[0]
            .descendants()
            .filter_map(|n| n.attribute("data-series"))
            .collect();
        assert_eq!(sides.len(), 4, "{sides:?}");
        for (s, side, key) in [
            (0, "a", "em"),
            (1, "b", "em"),
            (2, "a", "f1"),
            (3, "b", "f1"),
        ] {
            let m = marks(panels[0], sides[s]);
            for (m, r) in m.iter().zip(&rows) {
                assert_eq!(m.1, f(&r[side][key]), "{}", sides[s]);
            }
        }
    } else if id == "fig-correlate" {
        let cells: Vec<roxmltree::Node> = fig
            .descendants()
            .filter(|n| n.attribute("class") == Some("cell"))
            .collect();
        let pairs = v["pairs"].as_array().unwrap();
        assert_eq!((cells.len(), pairs.len()), (8, 8));
        for (c, p) in cells.iter().zip(pairs) {
            let a = |k: &str| c.attribute(k).unwrap().parse::<f64>().unwrap();
            assert_eq!(c.attribute("data-row"), p["x"].as_str());
            assert_eq!(c.attribute("data-col"), p["y"].as_str());
            assert_eq!(a("data-value"), f(&p["r"]));
            // No permutation test by default: the analytic p-value.
            assert!(p["permutation"].is_null());
            assert_eq!(a("data-p"), f(&p["p"]));
        }
    } else {
        panic!("no check for {id}");
    }
}

/// `stats report ARGS…`: its stdout and the HTML written to DIR/r.html.
fn report_with(dir: &tempfile::TempDir, args: &[&str]) -> (String, String) {
    let out = dir.path().join("r.html");
    let o = stats()
        .arg("report")
        .args(args)
        .args(["--replicates", "200", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (
        String::from_utf8(o.stdout).unwrap(),
        std::fs::read_to_string(&out).unwrap(),
    )
}

/// The ids of the report's figures.
fn figure_ids(html: &str) -> Vec<&str> {
    html.split("<figure id=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect()
}

#[test]
fn a_missing_input_leaves_its_section_out_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("data/demo/panel.csv", dir.path().join("panel.csv")).unwrap();
    let (stdout, html) = report_with(&dir, &[dir.path().to_str().unwrap(), "--arm", "open"]);
    assert_eq!(figure_ids(&html), ["fig-variance", "fig-forecast"]);
    let notes: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("not included: "))
        .collect();
    let heads: Vec<&str> = notes
        .iter()
        .map(|n| n.split(" (").next().unwrap())
        .collect();
    assert_eq!(
        heads,
        [
            "efficiency",
            "consistency",
            "mcq score, positions and compare",
            "correlate",
            "allocate",
            "subsets"
        ]
    );
    // Each note is one line of the report's last section, saying what would produce it.
    for n in &notes {
        let li = format!(
            "<li class=\"note\">{}</li>",
            n.replace('&', "&amp;").replace('\'', "&apos;")
        );
        assert!(html.contains(&li), "{li}");
    }
    assert!(notes[1].contains("--reads FILE, or reads.csv in the directory"));
    assert!(notes[2].contains("--mcq-results FILE"));
    assert!(notes[3].contains("--capability FILE, or capability.csv"));
    for id in ["consistency", "mcq", "correlate", "efficiency"] {
        assert!(!html.contains(&format!("<section id=\"{id}")), "{id}");
    }
    assert!(stdout.starts_with(&format!(
        "wrote {}: 2 figures (variance, forecast), each with its table and command\n",
        dir.path().join("r.html").display()
    )));
}

#[test]
fn inputs_given_by_flag_and_a_bad_one_noted() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, html) = report_with(
        &dir,
        &[
            "data/demo/panel.csv",
            "--contrast",
            "adaptive-open",
            "--mcq-results",
            "data/demo/mcq-informative.jsonl",
            "--reads",
            "data/demo/panel.csv",
            "--capability",
            "data/demo/capability.csv",
            "--capability-x",
            "planning",
            "--capability-y",
            "xbench",
            "--permutations",
            "500",
            "--backend",
            "cpu",
            "--ledger",
            "data/demo/ledger.jsonl",
            "--confidence",
            "0.9",
        ],
    );
    assert_eq!(
        figure_ids(&html),
        [
            "fig-variance",
            "fig-forecast",
            "fig-efficiency",
            "fig-mcq-score-informative",
            "fig-correlate"
        ]
    );
    // Every bootstrap command names the level of its intervals; none names the backend,
    // which changes no replicate.
    let commands: Vec<&str> = html
        .lines()
        .filter(|l| l.starts_with("<pre><code>$ stats "))
        .collect();
    // The figures' five, then the cost section's.
    assert_eq!(commands.len(), 6);
    assert!(commands[5].starts_with("<pre><code>$ stats cost data/demo/ledger.jsonl"));
    for c in &commands[2..5] {
        assert!(
            c.contains(" --replicates 200 --seed 1 --confidence 0.9 "),
            "{c}"
        );
        assert!(!c.contains("--backend"), "{c}");
    }
    // One results file: its scores, but no comparison.
    assert!(stdout.contains("not included: mcq compare (RAGCap Fig. 3, bare vs informative): needs a second MCQ results file"));
    // A reads file without the --by column: the section says why, the report is still made.
    let why = "data/demo/panel.csv:1: missing column 'temperature'";
    assert!(
        stdout.contains(&format!("not computed: consistency: {why}")),
        "{stdout}"
    );
    assert!(html.contains(&format!(
        "<p class=\"note\">Not computed: {}",
        why.replace('\'', "&apos;")
    )));
    assert!(html.contains("$ stats correlate data/demo/capability.csv --x planning --y xbench --permutations 500 --replicates 200 --seed 1 --confidence 0.9 --plot correlate.svg"));
}

#[test]
fn the_readme_figures_of_the_new_demo_data_are_what_their_commands_draw() {
    let dir = tempfile::tempdir().unwrap();
    let readme = std::fs::read_to_string("README.md").unwrap();
    for (file, args) in [
        (
            "docs/img/consistency.svg",
            &["consistency", "data/demo/reads.csv", "--by", "temperature"][..],
        ),
        (
            "docs/img/mcq-compare.svg",
            &[
                "mcq",
                "compare",
                "data/demo/mcq-bare.jsonl",
                "data/demo/mcq-informative.jsonl",
            ][..],
        ),
    ] {
        // The command beside the figure in the README is this one.
        assert!(
            readme.contains(&format!("stats {} --plot {file}", args.join(" "))),
            "{file}"
        );
        let out = dir.path().join("x.svg");
        stats()
            .args(args)
            .arg("--plot")
            .arg(&out)
            .assert()
            .success();
        // (Not assert_eq: the whole SVG in the message would hide the file name.)
        assert!(
            std::fs::read_to_string(&out).unwrap() == std::fs::read_to_string(file).unwrap(),
            "{file} is stale: remake it with the command beside it in README.md"
        );
    }
}
