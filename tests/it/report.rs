//! `stats report` on the demo data: one well-formed, self-contained HTML file (no URL, no
//! script) with every figure of the demo run, each figure exactly what the command printed
//! beside it draws with `--plot`, and the same bytes on a second run.

use crate::common;

use common::stats;

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
    assert_eq!(ids, ["fig-variance", "fig-forecast", "fig-efficiency"]);
    // Each section's command, run with its --plot pointed into the temporary directory,
    // draws exactly the section's figure (the report's copy only lacks the namespace).
    let commands: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("code") && n.parent().is_some_and(|p| p.has_tag_name("pre")))
        .map(|n| n.text().unwrap().to_string())
        .collect();
    assert_eq!(commands.len(), 3);
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
        let inline = &inline[..inline.find("</svg>").unwrap() + "</svg>\n".len()];
        assert_eq!(inline, svg, "{id} differs from: {cmd}");
    }
    assert!(commands[2].contains("--replicates 300 --seed 5"));
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
