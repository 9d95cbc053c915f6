//! `--plot FILE.svg` on the demo data: the SVG parses as XML, has the expected series and
//! points, every mark's `data-` values equal the command's JSON numbers and its pixel
//! position maps back to them through the axes, the same input gives the same bytes, and
//! an input is never overwritten.

use crate::common;

use std::path::PathBuf;

use common::{json, stats};
use serde_json::Value;

const PANEL: &str = "data/demo/panel.csv";
const LEDGER: &str = "data/demo/ledger.jsonl";

/// One mark: a point (x, y), a line vertex, or a bar (x = group index, y = value).
#[derive(Debug, Clone)]
struct Mark {
    x: f64,
    y: f64,
    ci: Option<[f64; 2]>,
    label: Option<String>,
    /// Pixel position: point centre, or bar (left, top, width, height).
    px: Vec<f64>,
    base: f64,
}

#[derive(Debug)]
struct Series {
    name: String,
    mark: String,
    marks: Vec<Mark>,
}

#[derive(Debug)]
struct Figure {
    /// Plot area in pixels: left, top, right, bottom.
    plot: [f64; 4],
    x_range: [f64; 2],
    y_range: [f64; 2],
    groups: Vec<String>,
    series: Vec<Series>,
    caption: String,
}

fn nums(s: &str) -> Vec<f64> {
    s.split([' ', ','])
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap())
        .collect()
}

fn attr(n: roxmltree::Node, a: &str) -> f64 {
    n.attribute(a)
        .unwrap_or_else(|| panic!("{a} missing"))
        .parse()
        .unwrap()
}

fn ci(n: roxmltree::Node) -> Option<[f64; 2]> {
    n.attribute("data-ci-low")
        .map(|_| [attr(n, "data-ci-low"), attr(n, "data-ci-high")])
}

/// Parses a figure (panics when the SVG is not well-formed XML).
fn figure(svg: &str) -> Figure {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    figure_in(root)
}

/// Parses a figure of stacked panels: one figure per nested `<svg>`.
fn panels(svg: &str) -> Vec<Figure> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    root.children()
        .filter(|n| n.has_tag_name("svg"))
        .map(figure_in)
        .collect()
}

/// The figure drawn in the `<svg>` element `root`.
fn figure_in(root: roxmltree::Node) -> Figure {
    let data = root
        .descendants()
        .find(|n| n.attribute("class") == Some("figure-data"))
        .expect("a figure-data group");
    let v = |a: &str| nums(data.attribute(a).unwrap());
    let p = v("data-plot");
    let (xr, yr) = (v("data-x-range"), v("data-y-range"));
    let groups: Vec<String> = data
        .attribute("data-groups")
        .map(|g| g.split('|').map(str::to_string).collect())
        .unwrap_or_default();
    let mut series = Vec::new();
    for s in data
        .children()
        .filter(|n| n.attribute("class") == Some("series"))
    {
        let mut marks = Vec::new();
        for m in s.children().filter(|n| n.is_element()) {
            match (m.tag_name().name(), m.attribute("class")) {
                ("polyline", _) if m.attribute("data-x").is_some() => {
                    let (xs, ys) = (
                        nums(m.attribute("data-x").unwrap()),
                        nums(m.attribute("data-y").unwrap()),
                    );
                    let px = nums(m.attribute("points").unwrap());
                    assert_eq!(xs.len(), ys.len());
                    assert_eq!(px.len(), 2 * xs.len());
                    for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
                        marks.push(Mark {
                            x: *x,
                            y: *y,
                            ci: None,
                            label: None,
                            px: vec![px[2 * i], px[2 * i + 1]],
                            base: 0.0,
                        });
                    }
                }
                ("circle", Some("point")) => marks.push(Mark {
                    x: attr(m, "data-x"),
                    y: attr(m, "data-y"),
                    ci: ci(m),
                    label: m.attribute("data-label").map(str::to_string),
                    px: vec![attr(m, "cx"), attr(m, "cy")],
                    base: 0.0,
                }),
                ("rect", Some("bar")) => marks.push(Mark {
                    x: groups
                        .iter()
                        .position(|g| Some(g.as_str()) == m.attribute("data-group"))
                        .expect("a bar's group is one of data-groups")
                        as f64,
                    y: attr(m, "data-value"),
                    ci: ci(m),
                    label: m.attribute("data-group").map(str::to_string),
                    px: ["x", "y", "width", "height"]
                        .iter()
                        .map(|a| attr(m, a))
                        .collect(),
                    base: attr(m, "data-base"),
                }),
                _ => {}
            }
        }
        series.push(Series {
            name: s.attribute("data-series").unwrap().to_string(),
            mark: s.attribute("data-mark").unwrap().to_string(),
            marks,
        });
    }
    let caption = root
        .descendants()
        .find(|n| n.attribute("class") == Some("caption"))
        .and_then(|n| n.text())
        .expect("a caption line")
        .to_string();
    Figure {
        plot: [p[0], p[1], p[2], p[3]],
        x_range: [xr[0], xr[1]],
        y_range: [yr[0], yr[1]],
        groups,
        series,
        caption,
    }
}

impl Figure {
    fn series(&self, name: &str) -> &Series {
        self.series
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no series {name:?} in {:?}", self.names()))
    }

    fn names(&self) -> Vec<&str> {
        self.series.iter().map(|s| s.name.as_str()).collect()
    }

    /// Pixel row of value y.
    fn py(&self, y: f64) -> f64 {
        let [_, top, _, bottom] = self.plot;
        top + (self.y_range[1] - y) / (self.y_range[1] - self.y_range[0]) * (bottom - top)
    }

    /// Pixel column of value x.
    fn px(&self, x: f64) -> f64 {
        let [left, _, right, _] = self.plot;
        left + (x - self.x_range[0]) / (self.x_range[1] - self.x_range[0]) * (right - left)
    }

    /// Every point and vertex sits where its data values put it (plotters truncates to
    /// whole pixels), and every bar spans its value from its base.
    fn check_pixels(&self) {
        for s in &self.series {
            for m in &s.marks {
                if s.mark == "bars" {
                    let (top, h) = (m.px[1], m.px[3]);
                    let (a, b) = (self.py(m.base), self.py(m.base + m.y));
                    assert!((top - a.min(b)).abs() <= 2.0, "{s:?}");
                    assert!((h - (a - b).abs().max(1.0)).abs() <= 2.0, "{s:?}");
                } else {
                    assert!((m.px[0] - self.px(m.x)).abs() <= 1.5, "{} {m:?}", s.name);
                    assert!((m.px[1] - self.py(m.y)).abs() <= 1.5, "{} {m:?}", s.name);
                }
            }
        }
    }
}

/// Runs `stats ARGS --format json --plot DIR/NAME` and returns the JSON and the SVG text.
fn run(dir: &tempfile::TempDir, name: &str, args: &[&str]) -> (Value, String) {
    let svg = dir.path().join(name);
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["--format", "json", "--plot", svg.to_str().unwrap()]);
    let v = json(&a);
    (
        v,
        std::fs::read_to_string(&svg).expect("the plot is written"),
    )
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn ci_of(v: &Value) -> Option<[f64; 2]> {
    v.as_array().map(|a| [f(&a[0]), f(&a[1])])
}

const FORECAST: &[&str] = &[
    "forecast",
    "--audit",
    PANEL,
    "--contrast",
    "adaptive-open",
    "--design",
    "446:2:1",
    "--design",
    "174:2:5",
    "--design",
    "298:3:1",
];

#[test]
fn forecast_plot_shows_the_designs_forecasts_and_curves_through_them() {
    let dir = tempfile::tempdir().unwrap();
    let (v, svg) = run(&dir, "f.svg", FORECAST);
    let fig = figure(&svg);
    assert_eq!(
        fig.names(),
        [
            "nested, T=2 R=1",
            "nested, T=2 R=5",
            "nested, T=3 R=1",
            "Q-only",
            "designs: nested",
            "designs: Q-only"
        ]
    );
    let designs = v["designs"].as_array().unwrap();
    assert_eq!(designs.len(), 3);
    let nested = &fig.series("designs: nested").marks;
    let q_only = &fig.series("designs: Q-only").marks;
    assert_eq!((nested.len(), q_only.len()), (3, 3));
    for (i, d) in designs.iter().enumerate() {
        let design = format!("{}:{}:{}", d["questions"], d["trajectories"], d["reads"]);
        let q = f(&d["questions"]);
        for (m, key) in [(&nested[i], "se_nested"), (&q_only[i], "se_q_only")] {
            assert_eq!(m.label.as_deref(), Some(design.as_str()));
            assert_eq!((m.x, m.y), (q, f(&d[key])), "{design} {key}");
        }
        // The design's marker lies on its curve: the curve has a vertex at the design's Q
        // with the same SE (Q split in the audit's proportions, as the design's own).
        let curve = fig.series(&format!("nested, T={} R={}", d["trajectories"], d["reads"]));
        let at = curve
            .marks
            .iter()
            .find(|m| m.x == q)
            .expect("a vertex at Q");
        assert_eq!(at.y, f(&d["se_nested"]));
        let at = fig
            .series("Q-only")
            .marks
            .iter()
            .find(|m| m.x == q)
            .unwrap();
        assert_eq!(at.y, f(&d["se_q_only"]));
    }
    // 25 grid points from Q/2 = 87 to 1.5·446 = 669, plus the designs' Q (446 is not on
    // the grid; 174 and 298 are not either).
    let grid = &fig.series("nested, T=2 R=1").marks;
    assert_eq!(grid.first().unwrap().x, 87.0);
    assert_eq!(grid.last().unwrap().x, 669.0);
    assert_eq!(grid.len(), 28);
    fig.check_pixels();
    assert_eq!(
        fig.caption,
        "data/demo/panel.csv · contrast adaptive-open · no resampling"
    );
    // Same input, same bytes.
    let (_, again) = run(&dir, "g.svg", FORECAST);
    assert_eq!(svg, again);
}

#[test]
fn forecast_plot_adds_the_measured_se() {
    let dir = tempfile::tempdir().unwrap();
    let slice = dir.path().join("a.csv");
    stats()
        .args([
            "slice",
            PANEL,
            "--contrast",
            "adaptive-open",
            "--design",
            "298:3:1",
        ])
        .arg("--out")
        .arg(&slice)
        .assert()
        .success();
    let m = format!("298:3:1={}", slice.display());
    let mut args = FORECAST.to_vec();
    args.extend(["--measured", &m]);
    let (v, svg) = run(&dir, "f.svg", &args);
    let fig = figure(&svg);
    let measured = &fig.series("measured").marks;
    assert_eq!(measured.len(), 1);
    let d = &v["designs"][2];
    assert_eq!(measured[0].y, f(&d["se_measured"]));
    assert_eq!(measured[0].x, 298.0);
    assert_eq!(measured[0].label.as_deref(), Some("298:3:1"));
    fig.check_pixels();
}

/// Copies the demo panel into `dir` (so that a failing refusal could not harm the repo).
fn panel_copy(dir: &tempfile::TempDir) -> PathBuf {
    let p = dir.path().join("panel.csv");
    std::fs::copy(PANEL, &p).unwrap();
    p
}

#[test]
fn plot_never_overwrites_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = panel_copy(&dir);
    let before = std::fs::read(&p).unwrap();
    let same = dir.path().join(".").join("panel.csv");
    stats()
        .args(["variance", "--contrast", "adaptive-open", "--plot"])
        .arg(&same)
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("would be overwritten"));
    stats()
        .args([
            "forecast",
            "--contrast",
            "adaptive-open",
            "--design",
            "446:2:1",
        ])
        .arg("--audit")
        .arg(&p)
        .arg("--plot")
        .arg(&p)
        .assert()
        .code(2);
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

#[test]
fn subsets_plot_shows_every_configuration_with_its_interval() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "subsets",
        PANEL,
        "--audit",
        PANEL,
        "--contrast",
        "adaptive-open",
        "--replicates",
        "200",
        "--seed",
        "7",
    ];
    let (v, svg) = run(&dir, "s.svg", &args);
    let fig = figure(&svg);
    // T = 3, R = 5: r' = 1..5, each with a measured series and a nested curve; one Q-only.
    assert_eq!(fig.series.len(), 11);
    let configs = v["configurations"].as_array().unwrap();
    assert_eq!(configs.len(), 15);
    for r in 1..=5 {
        let measured = &fig.series(&format!("measured, r'={r}")).marks;
        let nested = &fig.series(&format!("nested, r'={r}")).marks;
        let rows: Vec<&Value> = configs.iter().filter(|c| c["reads"] == r).collect();
        assert_eq!((measured.len(), nested.len()), (3, 3));
        for ((c, m), n) in rows.iter().zip(measured).zip(nested) {
            let t = f(&c["trajectories"]);
            assert_eq!((m.x, n.x), (t, t));
            assert_eq!(m.y, f(&c["se_measured"]["estimate"]));
            assert_eq!(m.ci, ci_of(&c["se_measured"]["ci"]));
            assert_eq!(n.y, f(&c["se_nested"]));
        }
    }
    let q_only = &fig.series("Q-only").marks;
    assert_eq!(q_only.len(), 3);
    assert!(q_only.iter().all(|m| m.y == f(&configs[0]["se_q_only"])));
    fig.check_pixels();
    assert_eq!(
        fig.caption,
        "data/demo/panel.csv · f1: adaptive-open · seed 7, 200 bootstrap replicates"
    );
    let (_, again) = run(&dir, "t.svg", &args);
    assert_eq!(svg, again);
}

#[test]
fn variance_plot_stacks_the_shares_of_every_scope() {
    let dir = tempfile::tempdir().unwrap();
    let (v, svg) = run(
        &dir,
        "v.svg",
        &["variance", PANEL, "--contrast", "adaptive-open"],
    );
    let fig = figure(&svg);
    assert_eq!(fig.names(), ["question", "trajectory", "read"]);
    assert_eq!(
        fig.groups,
        [
            "hotpotqa",
            "musique",
            "pooled",
            "hotpotqa (SE²)",
            "musique (SE²)"
        ]
    );
    let strata = v["strata"].as_array().unwrap();
    let expect = [
        &strata[0]["share_single"],
        &strata[1]["share_single"],
        &v["pooled"]["share_single"],
        &strata[0]["share_se2"],
        &strata[1]["share_se2"],
    ];
    for s in &fig.series {
        assert_eq!(s.marks.len(), 5);
        for (m, e) in s.marks.iter().zip(expect) {
            assert_eq!(m.y, f(&e[&s.name]), "{} {:?}", s.name, m.label);
        }
    }
    // The bars of a group stack to 1 (shares).
    let reads = &fig.series("read").marks;
    for m in reads {
        assert!((m.base + m.y - 1.0).abs() < 1e-12);
    }
    fig.check_pixels();
    let (_, again) = run(
        &dir,
        "w.svg",
        &["variance", PANEL, "--contrast", "adaptive-open"],
    );
    assert_eq!(svg, again);
}

#[test]
fn efficiency_plot_shows_both_losses_with_their_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "efficiency",
        PANEL,
        "--contrast",
        "adaptive-open",
        "--ledger",
        LEDGER,
        "--replicates",
        "300",
    ];
    let (v, svg) = run(&dir, "e.svg", &args);
    let fig = figure(&svg);
    assert_eq!(fig.names(), ["fixed T (combined)", "fixed Q (pooled)"]);
    assert_eq!(fig.groups, ["hotpotqa", "musique", "all strata"]);
    let strata = v["strata"].as_array().unwrap();
    let fixed_t = &fig.series("fixed T (combined)").marks;
    let fixed_q = &fig.series("fixed Q (pooled)").marks;
    assert_eq!((fixed_t.len(), fixed_q.len()), (3, 3));
    for (i, s) in strata.iter().enumerate() {
        assert_eq!(fixed_t[i].y, f(&s["fixed_t"]["loss_percent"]));
        assert_eq!(fixed_t[i].ci, ci_of(&s["fixed_t_loss_ci"]));
        assert_eq!(fixed_q[i].y, f(&s["efficiency"]["loss_percent"]));
        assert_eq!(fixed_q[i].ci, ci_of(&s["loss_ci"]));
    }
    let c = &v["combined"];
    assert_eq!(fixed_t[2].y, f(&c["fixed_t"]["loss_percent"]));
    assert_eq!(fixed_t[2].ci, ci_of(&c["loss_ci"]));
    let p = &v["pooled"];
    assert_eq!(fixed_q[2].y, f(&p["efficiency"]["loss_percent"]));
    assert_eq!(fixed_q[2].ci, ci_of(&p["loss_ci"]));
    // The demo's musique fixed-Q loss is positive (0.13% in the README's table).
    assert!(fixed_q[1].y > 0.1);
    fig.check_pixels();
    assert!(fig.caption.ends_with("seed 1, 300 bootstrap replicates"));
    let (_, again) = run(&dir, "f.svg", &args);
    assert_eq!(svg, again);
}

#[test]
fn figures_parse_back_to_the_right_axes() {
    // The pixel checks above compare marks with a mapping read from the figure itself;
    // this pins that mapping: the plot area lies inside the figure, the x range covers
    // the curves, and plotters' bold grid line of the x tick 100 is where the mapping puts
    // x = 100.
    let dir = tempfile::tempdir().unwrap();
    let (_, svg) = run(&dir, "f.svg", FORECAST);
    let fig = figure(&svg);
    let [l, t, r, b] = fig.plot;
    assert!(0.0 < l && l < r && r < 760.0 && 0.0 < t && t < b && b < 440.0);
    assert!(fig.x_range[0] < 87.0 && fig.x_range[1] > 669.0);
    assert!(fig.y_range[0] < fig.y_range[1]);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let grid: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("line") && n.attribute("opacity") == Some("0.2"))
        .filter(|n| n.attribute("x1") == n.attribute("x2"))
        .map(|n| attr(n, "x1"))
        .collect();
    let x100 = fig.px(100.0);
    assert!(
        grid.iter().any(|x| (x - x100).abs() <= 1.0),
        "{x100} {grid:?}"
    );
}

#[test]
fn the_readme_figures_are_what_their_commands_draw() {
    let dir = tempfile::tempdir().unwrap();
    let variance = ["variance", PANEL, "--contrast", "adaptive-open"];
    for (file, args) in [
        ("docs/img/forecast.svg", FORECAST),
        ("docs/img/variance.svg", &variance[..]),
    ] {
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

#[test]
fn allocate_plot_shows_each_pairs_fee_ratio_across_the_sweep_with_its_band() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "allocate",
        PANEL,
        "--contrast",
        "adaptive-open",
        "--ledger",
        LEDGER,
        "--prices",
        "data/demo/prices.toml",
        "--allocation",
        "A=446:2:1",
        "--allocation",
        "B=174:2:5",
        "--allocation",
        "C=298:3:1",
        "--replicates",
        "300",
    ];
    let (v, svg) = run(&dir, "a.svg", &args);
    let fig = figure(&svg);
    let pairs = v["pairs"].as_array().unwrap();
    let prices: Vec<f64> = v["search_prices"]
        .as_array()
        .unwrap()
        .iter()
        .map(f)
        .collect();
    assert_eq!(prices, [0.0, 0.25, 0.5, 0.75, 1.0]);
    assert_eq!(fig.series.len(), pairs.len() + 1);
    for p in pairs {
        let name = format!("{}/{}", p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
        let s = fig.series(&name);
        assert_eq!(s.mark, "band");
        let ratios = p["var_x_fees_ratio"].as_array().unwrap();
        assert_eq!(s.marks.len(), prices.len());
        for ((m, r), x) in s.marks.iter().zip(ratios).zip(&prices) {
            assert_eq!((m.x, m.y), (*x, f(&r["value"])));
            assert_eq!(m.ci, ci_of(&r["ci"]));
        }
    }
    // The hollow (unresolved) markers are exactly the unresolved ratios of the JSON.
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let unresolved = doc
        .descendants()
        .filter(|n| n.attribute("data-resolved") == Some("false"))
        .count();
    let expect = pairs
        .iter()
        .flat_map(|p| p["var_x_fees_ratio"].as_array().unwrap())
        .filter(|r| r["resolved"] == false)
        .count();
    assert_eq!(unresolved, expect);
    assert!(expect > 0, "the README's A vs B at $1/1k is unresolved");
    let one = &fig.series("ratio 1 (no difference)").marks;
    assert_eq!(
        (one[0].x, one[0].y, one[1].x, one[1].y),
        (0.0, 1.0, 1.0, 1.0)
    );
    fig.check_pixels();
    let (_, again) = run(&dir, "b.svg", &args);
    assert_eq!(svg, again);
}

/// Reads of two temperatures (one stratum, 4 questions, T = 2, R = 2): at 0.7 the reads of
/// 2 of the 8 cells disagree, at 0 every read repeats read 0 of 0.7.
fn consistency_reads(dir: &tempfile::TempDir) -> PathBuf {
    let hot = [
        ("q1", 0, "Paris", 1.0, "Lyon", 0.0),
        ("q1", 1, "The Paris", 1.0, "paris.", 1.0),
        ("q2", 0, "1912", 0.5, "1912", 0.5),
        ("q2", 1, "1912", 0.5, "1912", 0.5),
        ("q3", 0, "blue", 0.0, "blue", 0.0),
        ("q3", 1, "red", 1.0, "green", 0.0),
        ("q4", 0, "x", 0.2, "x", 0.2),
        ("q4", 1, "x", 0.2, "x", 0.2),
    ];
    let mut s = String::from("temperature,dataset,question,trajectory,read,answer,f1\n");
    for (q, t, a0, f0, a1, f1) in hot {
        s.push_str(&format!(
            "0.7,d,{q},{t},0,{a0},{f0}\n0.7,d,{q},{t},1,{a1},{f1}\n"
        ));
    }
    for (q, t, a0, f0, _, _) in hot {
        s.push_str(&format!(
            "0,d,{q},{t},0,{a0},{f0}\n0,d,{q},{t},1,{a0},{f0}\n"
        ));
    }
    common::write(dir, "reads.csv", &s)
}

#[test]
fn consistency_plot_shows_disagreement_one_read_se_and_the_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let reads = consistency_reads(&dir);
    let args = [
        "consistency",
        reads.to_str().unwrap(),
        "--by",
        "temperature",
        "--replicates",
        "300",
        "--backend",
        "cpu",
    ];
    let (v, svg) = run(&dir, "c.svg", &args);
    let figs = panels(&svg);
    assert_eq!(figs.len(), 3);
    let dis = v["disagreement"].as_array().unwrap();
    let prec = v["precision"].as_array().unwrap();
    let rate = &figs[0].series("disagreement rate").marks;
    assert_eq!(figs[0].groups, ["0", "0.7"]);
    assert_eq!(rate.len(), 2);
    for (m, d) in rate.iter().zip(dis) {
        assert_eq!(m.label.as_deref(), d["group"].as_str());
        assert_eq!(m.y, f(&d["rate"]));
    }
    // 2 of 8 cells disagree at 0.7, none at 0.
    assert_eq!((rate[0].y, rate[1].y), (0.0, 0.25));
    let se = &figs[1].series("one-read SE").marks;
    assert_eq!(se.len(), 2);
    // The SE panel lists the groups in the disagreement panel's order, whatever the
    // precision table's order.
    assert_eq!(figs[1].groups, figs[0].groups);
    for m in se {
        let p = prec
            .iter()
            .find(|p| p["group"].as_str() == m.label.as_deref())
            .unwrap();
        assert_eq!(m.y, f(&p["one_read_se"]));
    }
    let r = &v["se_ratio"];
    assert_eq!(figs[2].groups, ["0.7/0"]);
    let ratio = &figs[2].series("SE ratio").marks;
    assert_eq!(ratio.len(), 1);
    assert_eq!(ratio[0].y, f(&r["ratio"]));
    assert_eq!(ratio[0].ci, ci_of(&r["ci"]));
    for fig in &figs {
        fig.check_pixels();
        assert!(fig
            .caption
            .ends_with("reads.csv · seed 1, 300 bootstrap replicates"));
    }
    let (_, again) = run(&dir, "d.svg", &args);
    assert_eq!(svg, again);
}

/// MCQ results of model m1 with `prompt`: 3 items in each of 4 groups, one run; item k's
/// answer is gold, a part of gold, or wrong by (k + shift) mod 3.
fn mcq_results(dir: &tempfile::TempDir, prompt: &str, shift: usize) -> PathBuf {
    let groups = [
        ("planning", Some("convergent"), "planning-convergent"),
        ("evidence_extraction", None, "evidence_extraction"),
        ("grounded_reasoning", None, "grounded_reasoning"),
        ("noise_robustness", Some("reliability"), "noise-reliability"),
    ];
    let mut s = String::new();
    for (g, (task, subtask, group)) in groups.iter().enumerate() {
        for k in 0..3 {
            let gold = ["A", "C"];
            let answer: &[&str] = match (k + g + shift) % 3 {
                0 => &["A", "C"],
                1 => &["A"],
                _ => &["B", "D"],
            };
            let line = serde_json::json!({"id": format!("{group}{k}"), "run": 0, "model": "m1",
                "prompt": prompt, "shuffle_seed": null, "task": task, "subtask": subtask,
                "group": group, "labels": ["A", "B", "C", "D"], "permutation": ["A", "B", "C", "D"],
                "gold": gold, "allow_empty": false, "outcome": "ok", "answer": answer,
                "answer_shown": answer, "parse_note": null, "text": "x", "error": null,
                "usage": null, "cached": false});
            s.push_str(&format!("{line}\n"));
        }
    }
    common::write(dir, &format!("{prompt}.jsonl"), &s)
}

#[test]
fn mcq_score_plot_shows_em_and_f1_per_task_and_the_positions() {
    let dir = tempfile::tempdir().unwrap();
    let p = mcq_results(&dir, "informative", 0);
    let args = [
        "mcq",
        "score",
        p.to_str().unwrap(),
        "--positions",
        "--backend",
        "cpu",
        "--replicates",
        "200",
    ];
    let (v, svg) = run(&dir, "m.svg", &args);
    let figs = panels(&svg);
    assert_eq!(figs.len(), 2);
    let rows: Vec<&Value> = v["scores"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["level"] != "group")
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "planning",
            "evidence_extraction",
            "grounded_reasoning",
            "noise_robustness",
            "overall"
        ]
    );
    assert_eq!(figs[0].groups, names);
    for key in ["em", "f1"] {
        let marks = &figs[0].series(&key.to_uppercase()).marks;
        assert_eq!(marks.len(), rows.len());
        for (m, r) in marks.iter().zip(&rows) {
            assert_eq!(m.label.as_deref(), r["name"].as_str());
            assert_eq!(m.y, f(&r[key]["estimate"]), "{key} {}", r["name"]);
            assert_eq!(m.ci, ci_of(&r[key]["ci"]));
        }
    }
    // Overall EM by hand: every task has one exact answer of 3 items.
    assert!((figs[0].series("EM").marks[4].y - 1.0 / 3.0).abs() < 1e-12);
    let pos = v["positions"].as_array().unwrap();
    assert_eq!(pos.len(), 4);
    assert_eq!(figs[1].groups, ["1", "2", "3", "4"]);
    for (name, key) in [("chosen rate", "chosen_rate"), ("gold rate", "gold_rate")] {
        let marks = &figs[1].series(name).marks;
        assert_eq!(marks.len(), 4);
        for (m, r) in marks.iter().zip(pos) {
            assert_eq!(m.y, f(&r[key]), "{name}");
        }
    }
    // Gold is always A and C: 12 of 12 shown at positions 1 and 3, none at 2 and 4.
    let gold: Vec<f64> = figs[1]
        .series("gold rate")
        .marks
        .iter()
        .map(|m| m.y)
        .collect();
    assert_eq!(gold, [1.0, 0.0, 1.0, 0.0]);
    for fig in &figs {
        fig.check_pixels();
        assert!(fig
            .caption
            .ends_with("informative.jsonl · m1, informative · seed 1, 200 bootstrap replicates"));
    }
    let (_, again) = run(&dir, "n.svg", &args);
    assert_eq!(svg, again);
}

#[test]
fn mcq_compare_plot_shows_both_sides_and_the_deltas_with_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let a = mcq_results(&dir, "bare", 1);
    let b = mcq_results(&dir, "informative", 0);
    let args = [
        "mcq",
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--backend",
        "cpu",
        "--replicates",
        "200",
    ];
    let (v, svg) = run(&dir, "c.svg", &args);
    let figs = panels(&svg);
    assert_eq!(figs.len(), 2);
    let rows: Vec<&Value> = v["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["level"] != "group")
        .collect();
    assert_eq!(rows.len(), 5);
    assert_eq!(
        figs[0].names(),
        [
            "EM A: m1, bare",
            "EM B: m1, informative",
            "F1 A: m1, bare",
            "F1 B: m1, informative"
        ]
    );
    for (name, side, key) in [
        ("EM A: m1, bare", "a", "em"),
        ("EM B: m1, informative", "b", "em"),
        ("F1 A: m1, bare", "a", "f1"),
        ("F1 B: m1, informative", "b", "f1"),
    ] {
        let marks = &figs[0].series(name).marks;
        assert_eq!(marks.len(), 5);
        for (m, r) in marks.iter().zip(&rows) {
            assert_eq!(m.y, f(&r[side][key]), "{name} {}", r["name"]);
        }
    }
    for (name, key) in [("ΔEM", "delta_em"), ("ΔF1", "delta_f1")] {
        let marks = &figs[1].series(name).marks;
        assert_eq!(marks.len(), 5);
        for (m, r) in marks.iter().zip(&rows) {
            assert_eq!(m.label.as_deref(), r["name"].as_str());
            assert_eq!(m.y, f(&r[key]["estimate"]), "{name}");
            assert_eq!(m.ci, ci_of(&r[key]["ci"]));
        }
    }
    for fig in &figs {
        fig.check_pixels();
    }
    let (_, again) = run(&dir, "d.svg", &args);
    assert_eq!(svg, again);

    // The other order draws the mirrored deltas, each inside its interval, below zero too.
    let mut swapped = args;
    swapped.swap(2, 3);
    let (_, rsvg) = run(&dir, "r.svg", &swapped);
    let rfigs = panels(&rsvg);
    for name in ["ΔEM", "ΔF1"] {
        let (fw, rv) = (&figs[1].series(name).marks, &rfigs[1].series(name).marks);
        for (a, b) in fw.iter().zip(rv) {
            assert_eq!(b.y, -a.y, "{name} {:?}", b.label);
            let [lo, hi] = b.ci.expect("an interval");
            assert!(
                lo <= b.y && b.y <= hi,
                "{name} {:?}: {} not in [{lo}, {hi}]",
                b.label,
                b.y
            );
        }
    }
    // The deltas here are 0 (each group cycles through the same three answers), but the
    // items differ, so the intervals reach below zero: clamped to [0, 1] they were [0, hi].
    assert!(rfigs[1]
        .series("ΔEM")
        .marks
        .iter()
        .all(|m| m.ci.unwrap()[0] < 0.0));
    rfigs[1].check_pixels();
}

#[test]
fn correlate_plot_is_a_heatmap_of_r_with_significance_marks() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "correlate",
        "data/demo/capability.csv",
        "--x",
        "planning,evidence,reasoning,noise",
        "--y",
        "browsecomp,xbench",
        "--replicates",
        "300",
        "--permutations",
        "2000",
        "--backend",
        "cpu",
    ];
    let (v, svg) = run(&dir, "h.svg", &args);
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
    let data = doc
        .descendants()
        .find(|n| n.attribute("data-chart") == Some("heatmap"))
        .expect("a heatmap");
    assert_eq!(
        data.attribute("data-rows"),
        Some("planning|evidence|reasoning|noise")
    );
    assert_eq!(data.attribute("data-cols"), Some("browsecomp|xbench"));
    let cells: Vec<roxmltree::Node> = data
        .children()
        .filter(|n| n.attribute("class") == Some("cell"))
        .collect();
    let pairs = v["pairs"].as_array().unwrap();
    assert_eq!((cells.len(), pairs.len()), (8, 8));
    let mut marked = 0;
    for (i, (c, p)) in cells.iter().zip(pairs).enumerate() {
        assert_eq!(c.attribute("data-row"), p["x"].as_str());
        assert_eq!(c.attribute("data-col"), p["y"].as_str());
        let r = attr(*c, "data-value");
        assert_eq!(r, f(&p["r"]));
        assert_eq!(r, f(&v["matrix"]["r"][i / 2][i % 2]));
        // The permutation test ran: its p-value decides the mark.
        let pv = f(&p["permutation"]["p"]);
        assert_eq!(attr(*c, "data-p"), pv);
        let want = if pv < 0.001 {
            "***"
        } else if pv < 0.01 {
            "**"
        } else if pv < 0.05 {
            "*"
        } else {
            ""
        };
        assert_eq!(c.attribute("data-mark"), Some(want));
        marked += usize::from(!want.is_empty());
        assert_eq!(ci(*c), ci_of(&p["bootstrap"]["ci"]));
        // The cell's text shows r to 2 decimals and the mark.
        let text = c.next_sibling_element().unwrap().text().unwrap();
        assert_eq!(text, format!("{r:.2}{want}"));
    }
    assert!(marked > 0, "the demo has significant correlations");
    let caption = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("caption"))
        .and_then(|n| n.text())
        .unwrap();
    assert_eq!(
        caption,
        "data/demo/capability.csv · seed 1, 300 bootstrap replicates"
    );
    let (_, again) = run(&dir, "i.svg", &args);
    assert_eq!(svg, again);
}
