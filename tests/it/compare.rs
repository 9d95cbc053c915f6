//! `stats compare`: k arms of one panel, every pair, against an independent numpy
//! reference (tests/reference/compare.py) and against `stats variance` itself.

use crate::common::{body, gpu_ran, json, stats, write};

const ARMS4: &str = "tests/fixtures/compare/arms4.csv";

fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().expect("a number")
}

/// `python3 tests/reference/compare.py tests/fixtures/compare/arms4.csv` (numpy 2.4.6, scipy
/// 1.17.1, statsmodels 0.15.0) printed these estimates, SEs, raw p-values (Student t on each
/// pair's Welch–Satterthwaite df) and adjusted p-values; the pairs in the order (base, a),
/// (base, b), (base, c), (a, b), (a, c), (b, c).
const SYSTEMS: [(&str, f64, f64); 4] = [
    ("base", 0.492206421875, 0.035747878572),
    ("a", 0.538755564583, 0.038945882776),
    ("b", 0.519969409375, 0.036038999696),
    ("c", 0.760970307292, 0.038680003020),
];
const PAIRS: [(&str, &str, f64, f64, f64, f64, f64); 6] = [
    // a, b, estimate, se, p, holm, bh
    (
        "base",
        "a",
        0.046549142708,
        0.021893572007,
        0.0362432329517,
        0.108729698855,
        0.054364849428,
    ),
    (
        "base",
        "b",
        0.027762987500,
        0.022230435752,
        0.214908315962,
        0.429816631925,
        0.257889979155,
    ),
    ("base", "c", 0.268763885417, 0.023236426002, 0.0, 0.0, 0.0),
    (
        "a",
        "b",
        -0.018786155208,
        0.028156247576,
        0.506436218691,
        0.506436218691,
        0.506436218691,
    ),
    (
        "a",
        "c",
        0.222214742708,
        0.031836885698,
        0.00000000104599092592,
        0.000000004184,
        0.000000002092,
    ),
    (
        "b",
        "c",
        0.241000897917,
        0.031450037265,
        0.0000000000553341877004,
        0.000000000277,
        0.000000000166,
    ),
];

#[test]
fn systems_and_pairs_equal_the_numpy_reference() {
    let doc = json(&["compare", ARMS4, "--backend", "cpu", "--format", "json"]);
    let systems = doc["systems"].as_array().unwrap();
    assert_eq!(systems.len(), 4);
    for (s, (name, est, se)) in systems.iter().zip(SYSTEMS) {
        assert_eq!(s["name"], name);
        assert!((num(&s["estimate"]) - est).abs() < 1e-11, "{name}");
        assert!((num(&s["se"]) - se).abs() < 1e-11, "{name}");
    }
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(doc["family"]["kind"], "all-pairs");
    assert_eq!(doc["family"]["size"], 6);
    for (p, (a, b, est, se, raw, holm, bh)) in pairs.iter().zip(PAIRS) {
        assert_eq!((p["a"].as_str(), p["b"].as_str()), (Some(a), Some(b)));
        assert!((num(&p["estimate"]) - est).abs() < 1e-11, "{b}-{a}");
        assert!((num(&p["se"]) - se).abs() < 1e-11, "{b}-{a}");
        // The reference printed 12 decimals.
        assert!((num(&p["p"]) - raw).abs() < 1e-11, "{b}-{a} p");
        assert!((num(&p["p_holm"]) - holm).abs() < 1e-11, "{b}-{a} holm");
        assert!((num(&p["q_bh"]) - bh).abs() < 1e-11, "{b}-{a} bh");
    }
    // The same reference's multivariate-t quantile (the correlations of 200,000 bootstrap
    // replicates, 2,000,000 draws, on the family's df 74.18) is 2.6011; ours takes the
    // correlations of 10,000 replicates and 100,000 draws (Monte Carlo SE about 0.01).
    // Tukey's value for 4 independent arms on that df, scipy's
    // studentized_range.ppf(0.95, 4, 74.180760239) / √2, is 2.628237.
    let cv = &doc["critical_values"];
    assert!((num(&cv["df"]) - 74.180760239).abs() < 1e-8);
    let c = num(&cv["max_t"]);
    assert!((c - 2.6011).abs() < 0.04, "max-|t| quantile {c}");
    assert!((num(&cv["independent"]) - 2.628237).abs() < 0.02);
    assert_eq!(num(&cv["simultaneous"]), num(&cv["independent"]).max(c));
    // The systems' intervals are t intervals on their own df (the reference's ci).
    let base = &doc["systems"][0];
    assert!((num(&base["df"]) - 89.347770760).abs() < 1e-8);
    assert!((num(&base["ci"][0]) - 0.421179957894).abs() < 1e-11);
    assert!((num(&base["ci"][1]) - 0.563232885856).abs() < 1e-11);
}

#[test]
fn each_pair_is_exactly_what_variance_contrast_reports() {
    let doc = json(&[
        "compare",
        ARMS4,
        "--backend",
        "cpu",
        "--replicates",
        "200",
        "--format",
        "json",
    ]);
    for p in doc["pairs"].as_array().unwrap() {
        let spec = format!("{}-{}", p["b"].as_str().unwrap(), p["a"].as_str().unwrap());
        let v = json(&["variance", ARMS4, "--contrast", &spec, "--format", "json"]);
        assert_eq!(p["estimate"], v["estimate"], "{spec}");
        assert_eq!(p["se"], v["se"], "{spec}");
    }
    for s in doc["systems"].as_array().unwrap() {
        let v = json(&[
            "variance",
            ARMS4,
            "--arm",
            s["name"].as_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!((&s["estimate"], &s["se"]), (&v["estimate"], &v["se"]));
    }
}

#[test]
fn simultaneous_intervals_lie_between_marginal_and_bonferroni_and_ranks_follow() {
    let doc = json(&["compare", ARMS4, "--backend", "cpu", "--format", "json"]);
    let cv = &doc["critical_values"];
    let (z, c, bonf) = (
        num(&cv["marginal"]),
        num(&cv["simultaneous"]),
        num(&cv["bonferroni"]),
    );
    // t quantiles at 0.975 and 1 − 0.025/6 on the family's df 74.180760239 (the reference's
    // `marginal t` and `Bonferroni t` lines).
    assert!((z - 1.992462823007059).abs() < 1e-9);
    assert!((bonf - 2.710851363773533).abs() < 1e-9);
    assert!(z <= c && c <= bonf);
    for p in doc["pairs"].as_array().unwrap() {
        let (m, s) = (&p["ci"], &p["ci_simultaneous"]);
        let (est, se) = (num(&p["estimate"]), num(&p["se"]));
        assert!(num(&s[0]) <= num(&m[0]) && num(&m[1]) <= num(&s[1]));
        assert!(num(&s[0]) >= est - bonf * se - 1e-15 && num(&s[1]) <= est + bonf * se + 1e-15);
        assert!((num(&s[1]) - est - c * se).abs() < 1e-15);
    }
    let shares: f64 = doc["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| num(&s["best_share"]))
        .sum();
    assert!((shares - 1.0).abs() < 1e-12);
    // c is certainly best (every interval against it excludes 0), the others 2nd to 4th.
    let ranks: Vec<(String, [u64; 2])> = doc["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                [
                    s["rank_ci"][0].as_u64().unwrap(),
                    s["rank_ci"][1].as_u64().unwrap(),
                ],
            )
        })
        .collect();
    assert_eq!(ranks[3], ("c".to_string(), [1, 1]));
    assert!(ranks[..3].iter().all(|(_, r)| *r == [2, 4]));
    assert_eq!(doc["top_group"], serde_json::json!(["c"]));
    // The closest unresolved pair is a − base (largest |t| among the unresolved).
    let next = &doc["next"];
    assert_eq!(
        (next["a"].as_str(), next["b"].as_str()),
        (Some("base"), Some("a"))
    );
    // Planned for Holm's first step, Bonferroni over the 6 pairs (not the max-t c, which
    // would give Bonferroni, and so Holm's first step, less than the power asked for).
    assert_eq!(
        next["test"],
        "Holm over the family's 6 pairs at its first step (Bonferroni, level 0.05/6)"
    );
    // On the normal reference, as `stats plan` plans (the next study's questions set its
    // df): Φ⁻¹(1 − 0.025/6) (scipy.stats.norm.ppf), below today's Bonferroni t on df 74.
    let bonf: f64 = 2.638257273476751;
    assert!((num(&next["critical_value"]) - bonf).abs() < 1e-12);
    assert!(bonf < num(&doc["critical_values"]["bonferroni"]));
    let zs = 0.046549142708 / 0.021893572007;
    let want = (100.0 * ((bonf + 0.8416212335729143) / zs).powi(2)).ceil() as u64;
    assert_eq!(want, 268);
    assert_eq!(next["questions_needed"].as_u64(), Some(want));
    // scipy: d, s0 = 0.046549142708, 0.021893572007; c = norm.ppf(1 - 0.025/6);
    // s1 = d/(c + norm.ppf(0.8)) = 0.013376657436085496; norm.cdf(d/s1 - c) +
    // norm.cdf(-d/s1 - c) = 0.800000000473382; v = np.hypot(s0, s1);
    // norm.cdf((d - c*s1)/v) + norm.cdf((-d - c*s1)/v) = 0.6703077582746212. Inputs to 12
    // digits, so 1e-9.
    assert!((num(&next["target_se"]) - 0.013376657436085496).abs() < 1e-12);
    assert!((num(&next["power_at_estimate"]) - 0.800000000473382).abs() < 1e-9);
    assert!((num(&next["predictive_power"]) - 0.6703077582746212).abs() < 1e-9);
    let text = next["text"].as_str().unwrap();
    assert!(
        text.contains("critical value 2.638") && text.contains("predictive power 0.670"),
        "{text}"
    );
}

/// The demo's two arms (a family of one pair, z = 1.02): planned for the pair's own Wald
/// test at z_0.975, the power is 0.80 at the estimate and the predictive power 0.665. scipy
/// on the JSON's estimate and SE: `d, s0 = 0.010275721225710015, 0.010047667224300564;
/// c = norm.ppf(0.975); s1 = d/(c + norm.ppf(0.8)); v = np.hypot(s0, s1);
/// norm.cdf((d - c*s1)/v) + norm.cdf((-d - c*s1)/v)` = 0.6648138491210104 (0.6136 in
/// today's direction, 0.0513 in the other).
#[test]
fn the_demos_next_step_has_its_predictive_power() {
    let doc = json(&[
        "compare",
        "data/demo/panel.csv",
        "--backend",
        "cpu",
        "--replicates",
        "200",
        "--format",
        "json",
    ]);
    let next = &doc["next"];
    assert_eq!(
        next["test"],
        "the pair's two-sided Wald test at level 0.05 (a family of one pair)"
    );
    assert!((num(&next["critical_value"]) - 1.959963984540054).abs() < 1e-12);
    assert!((num(&next["estimate"]) / num(&next["se"]) - 1.0227).abs() < 1e-4);
    assert!((num(&next["predictive_power"]) - 0.6648138491210104).abs() < 1e-12);
    assert!((num(&next["power_at_estimate"]) - 0.8000009605622266).abs() < 1e-12);
}

#[test]
fn a_reference_family_holds_every_arm_against_it() {
    let doc = json(&[
        "compare",
        ARMS4,
        "--reference",
        "b",
        "--backend",
        "cpu",
        "--replicates",
        "500",
        "--format",
        "json",
    ]);
    assert_eq!(doc["family"]["kind"], "vs-reference");
    assert_eq!(doc["family"]["size"], 3);
    let pairs: Vec<(&str, &str)> = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["a"].as_str().unwrap(), p["b"].as_str().unwrap()))
        .collect();
    assert_eq!(pairs, [("base", "b"), ("a", "b"), ("b", "c")]);
    // Bonferroni over 3 on the family's smallest df (c − b's, 74.180760239):
    // `scipy.stats.t.ppf(1 - 0.025/3, 74.180760239)`.
    assert!((num(&doc["critical_values"]["bonferroni"]) - 2.449480092922097).abs() < 1e-9);
    // Holm over the 3 raw p-values of the family (statsmodels on 0.214908315962,
    // 0.506436218691 and the tiny c − b p: 0.429816631925, 0.506436218691).
    assert!((num(&doc["pairs"][0]["p_holm"]) - 0.429816631925).abs() < 1e-11);
    assert!((num(&doc["pairs"][1]["p_holm"]) - 0.506436218691).abs() < 1e-11);
}

#[test]
fn cpu_and_gpu_give_the_same_comparison() {
    let args = ["compare", ARMS4, "--replicates", "2000", "--format", "json"];
    let cpu = json(&[&args[..], &["--backend", "cpu"]].concat());
    let gpu = stats()
        .args(args)
        .args(["--backend", "gpu"])
        .output()
        .unwrap();
    if !gpu_ran(&gpu) {
        return;
    }
    let gpu: serde_json::Value = serde_json::from_slice(&gpu.stdout).unwrap();
    assert_eq!(gpu["run"]["backend"], "gpu");
    assert_eq!(body(cpu), body(gpu));
}

/// Runs `stats compare ARGS…`, asserts exit 2, and returns stderr.
fn refusal(args: &[&str]) -> String {
    let out = stats().arg("compare").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bad_panels_are_refused_naming_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let one = write(
        &dir,
        "one.csv",
        "dataset,question,arm,f1\nd,q1,x,0.1\nd,q2,x,0.3\n",
    );
    let err = refusal(&[one.to_str().unwrap()]);
    assert!(
        err.contains("at least two arms") && err.contains("only 'x'"),
        "{err}"
    );
    let gap = write(
        &dir,
        "gap.csv",
        "dataset,question,arm,f1\nd,q1,x,0.1\nd,q2,x,0.3\nd,q1,y,0.2\nd,q3,x,0.5\nd,q3,y,0.4\n",
    );
    let err = refusal(&[gap.to_str().unwrap()]);
    assert!(err.contains("gap.csv") && err.contains("q2"), "{err}");
    let err = refusal(&[ARMS4, "--reference", "zzz"]);
    assert!(
        err.contains("error: --reference: no arm 'zzz' in the panel; its arms are: base, a, b, c"),
        "{err}"
    );
}

// Family-wise coverage of the simultaneous intervals: tests/it/honest.rs.

/// `--plot`: the bars carry each system's estimate and interval, the matrix cells each
/// difference row − column and its Holm-adjusted p, exactly the JSON's numbers.
#[test]
fn the_figure_shows_the_reports_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("cmp.svg");
    let doc = json(&[
        "compare",
        ARMS4,
        "--backend",
        "cpu",
        "--replicates",
        "300",
        "--format",
        "json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(&svg).unwrap();
    let attr = |tag: &str, key: &str| -> f64 {
        let at = svg
            .find(tag)
            .unwrap_or_else(|| panic!("{tag} in the figure"));
        let rest = &svg[at..];
        let v = &rest[rest.find(&format!("{key}=\"")).unwrap() + key.len() + 2..];
        v[..v.find('"').unwrap()].parse().unwrap()
    };
    for s in doc["systems"].as_array().unwrap() {
        let tag = format!("data-group=\"{}\"", s["name"].as_str().unwrap());
        assert_eq!(attr(&tag, "data-value"), num(&s["estimate"]));
        assert_eq!(attr(&tag, "data-ci-low"), num(&s["ci"][0]));
    }
    assert_eq!(svg.matches("class=\"cell\"").count(), 16);
    for p in doc["pairs"].as_array().unwrap() {
        let tag = format!(
            "data-row=\"{}\" data-col=\"{}\"",
            p["b"].as_str().unwrap(),
            p["a"].as_str().unwrap()
        );
        assert_eq!(attr(&tag, "data-value"), num(&p["estimate"]));
        assert_eq!(attr(&tag, "data-p"), num(&p["p_holm"]));
    }
}

/// `mcq compare A B C`: three models on 20 items, item i right for m1 when i < 8, for m2
/// when i < 14, for m3 when i < 19 (nested, so every discordant pair favours the later
/// model). McNemar's discordant counts are then 6, 11 and 5 with none the other way; the
/// exact p-values are scipy's `binomtest(6, 6, 0.5)`, `binomtest(11, 11, 0.5)` and
/// `binomtest(5, 5, 0.5)`: 0.03125, 0.0009765625, 0.0625; statsmodels' Holm gives
/// [0.0625, 0.0029296875, 0.0625] and BH [0.046875, 0.0029296875, 0.0625].
///
/// The tests of ΔEM (one group, 1 run: the one-sample t test of the 20 item differences,
/// 6, 11 or 5 of them 1): scipy 1.17.1 `ttest_1samp` p = 0.010162572120690608,
/// 0.0001192753771977957, 0.02099150467016482; statsmodels 0.15.0 `multipletests` Holm
/// [0.020325144241381217, 0.0003578261315933871, 0.02099150467016482], BH
/// [0.015243858181035913, 0.0003578261315933871, 0.02099150467016482].
#[test]
fn mcq_compare_of_three_files_adjusts_mcnemar_over_the_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = [("m1", 8), ("m2", 14), ("m3", 19)]
        .iter()
        .map(|&(model, right)| {
            let lines: Vec<String> = (0..20)
                .map(|i| {
                    let answer: &[&str] = if i < right { &["A"] } else { &["B"] };
                    crate::mcq_cli::result_line(
                        &format!("q{i}"),
                        0,
                        model,
                        "planning-convergent",
                        &["A"],
                        "ok",
                        Some(answer),
                    )
                })
                .collect();
            write(&dir, &format!("{model}.jsonl"), &(lines.join("\n") + "\n"))
                .display()
                .to_string()
        })
        .collect();
    let mut args = vec!["mcq", "compare"];
    args.extend(files.iter().map(String::as_str));
    args.extend([
        "--backend",
        "cpu",
        "--replicates",
        "500",
        "--format",
        "json",
    ]);
    // Without --mcnemar: the tests of ΔEM, adjusted, and no McNemar.
    let plain = json(&args);
    let t_want = [
        (
            0.010_162_572_120_690_608,
            0.020_325_144_241_381_217,
            0.015_243_858_181_035_913,
        ),
        (
            1.192_753_771_977_957e-4,
            3.578_261_315_933_871e-4,
            3.578_261_315_933_871e-4,
        ),
        (
            0.020_991_504_670_164_82,
            0.020_991_504_670_164_82,
            0.020_991_504_670_164_82,
        ),
    ];
    for (p, (raw, holm, bh)) in plain["pairs"].as_array().unwrap().iter().zip(t_want) {
        assert!(p.get("mcnemar").is_none(), "{p}");
        let t = p["tests"].as_array().unwrap().last().unwrap();
        assert_eq!(
            (&t["level"], &t["test"]),
            (
                &serde_json::json!("overall"),
                &serde_json::json!("stratified-t")
            )
        );
        assert!((num(&t["p"]) - raw).abs() < 1e-12 * raw, "{t}");
        assert!((num(&t["p_holm"]) - holm).abs() < 1e-12 * holm, "{t}");
        assert!((num(&t["q_bh"]) - bh).abs() < 1e-12 * bh, "{t}");
        assert_eq!(
            (&t["favours"], &t["favours_holm"]),
            (&serde_json::json!("B"), &serde_json::json!("B"))
        );
    }
    args.push("--mcnemar");
    let doc = json(&args);
    assert_eq!(doc["family"], "all-pairs");
    let em: Vec<f64> = doc["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| num(&s["scores"].as_array().unwrap().last().unwrap()["em"]["estimate"]))
        .collect();
    assert_eq!(em, [0.4, 0.7, 0.95]);
    let want = [
        (6, 0.03125, 0.0625, 0.046875),
        (11, 0.0009765625, 0.0029296875, 0.0029296875),
        (5, 0.0625, 0.0625, 0.0625),
    ];
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 3);
    for (p, (b_only, raw, holm, bh)) in pairs.iter().zip(want) {
        let overall = p["mcnemar"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["group"] == "overall")
            .unwrap();
        assert_eq!(
            (overall["a_only"].as_u64(), overall["b_only"].as_u64()),
            (Some(0), Some(b_only))
        );
        assert!((num(&overall["p"]) - raw).abs() < 1e-15);
        assert!((num(&overall["p_holm"]) - holm).abs() < 1e-15);
        assert!((num(&overall["q_bh"]) - bh).abs() < 1e-15);
    }
    // Each pair's deltas are the two-file comparison's, exactly.
    let two = json(&[
        "mcq",
        "compare",
        &files[0],
        &files[2],
        "--backend",
        "cpu",
        "--replicates",
        "500",
        "--format",
        "json",
    ]);
    assert_eq!(pairs[1]["deltas"], two["deltas"]);
    // And so are its tests, less the adjustments.
    for (t, u) in pairs[1]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .zip(two["tests"].as_array().unwrap())
    {
        let mut t = t.clone();
        for k in ["p_holm", "q_bh", "favours_holm"] {
            t.as_object_mut().unwrap().remove(k);
        }
        assert_eq!(&t, u);
    }
}

/// `stats report` of a panel with more than two arms has the leaderboard section, with the
/// figure `stats compare` draws and the command that reproduces it.
#[test]
fn the_report_of_a_many_arm_panel_has_the_leaderboard() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    let run = stats()
        .args([
            "report",
            ARMS4,
            "--contrast",
            "a-base",
            "--replicates",
            "300",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(String::from_utf8_lossy(&run.stdout).contains("(variance, forecast, compare)"));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<figure id=\"fig-compare\">"));
    assert!(html.contains("stats compare tests/fixtures/compare/arms4.csv --replicates 300 --seed 1 --plot compare.svg"));
    let doc = json(&[
        "compare",
        ARMS4,
        "--replicates",
        "300",
        "--format",
        "json",
        "--backend",
        "cpu",
    ]);
    let c_base = &doc["pairs"][2];
    assert!(html.contains(&format!(
        "[{}, {}]",
        report_num(&c_base["ci_simultaneous"][0]),
        report_num(&c_base["ci_simultaneous"][1])
    )));
}

/// A number as the report writes it (6 decimals at this magnitude).
fn report_num(v: &serde_json::Value) -> String {
    format!("{:.6}", num(v))
}

/// A cell one arm lacks costs that cell for the pair (as `variance --contrast` drops it), or
/// with `--failure-score X` is scored X for the pair, again exactly as `variance` does it.
#[test]
fn an_unpaired_cell_is_handled_as_variance_handles_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("dataset,question,trajectory,read,arm,f1\n");
    let mut rng = crate::common::XorShift(77);
    for q in 0..8 {
        for t in 0..2 {
            for arm in ["x", "y", "z"] {
                // Arm y's trajectory 1 of question q3 failed: no row.
                if (q, t, arm) == (3, 1, "y") {
                    continue;
                }
                text.push_str(&format!("d,q{q},{t},0,{arm},{}\n", rng.grid(1000)));
            }
        }
    }
    let panel = write(&dir, "gap.csv", &text);
    let p = panel.to_str().unwrap();
    for extra in [&[][..], &["--failure-score", "0"][..]] {
        let mut args = vec![
            "compare",
            p,
            "--backend",
            "cpu",
            "--replicates",
            "200",
            "--format",
            "json",
        ];
        args.extend(extra);
        let doc = json(&args);
        for pair in doc["pairs"].as_array().unwrap() {
            let spec = format!(
                "{}-{}",
                pair["b"].as_str().unwrap(),
                pair["a"].as_str().unwrap()
            );
            let mut v = vec!["variance", p, "--contrast", &spec, "--format", "json"];
            v.extend(extra);
            let v = json(&v);
            assert_eq!(
                (&pair["estimate"], &pair["se"]),
                (&v["estimate"], &v["se"]),
                "{spec} {extra:?}"
            );
            let touches_y = spec.contains('y');
            assert_eq!(
                pair["unpaired_cells"],
                if touches_y { 1 } else { 0 },
                "{spec}"
            );
        }
    }
}

/// Parquet panels and inspect_ai logs are compared as their panels: the demo's Parquet
/// (written by pyarrow) gives the CSV's comparison, and the fixture logs of two models give
/// the contrast tests/it/import.rs checks against numpy (−0.0333…, SE 0.047756…).
#[test]
fn parquet_and_evaluation_logs_are_compared_like_their_panels() {
    let args = |p: &str| {
        json(&[
            "compare",
            p,
            "--backend",
            "cpu",
            "--replicates",
            "300",
            "--format",
            "json",
        ])
    };
    let csv = args("data/demo/panel.csv");
    let parquet = args("tests/fixtures/import/parquet/panel-pyarrow.parquet");
    assert_eq!(body(csv)["pairs"], body(parquet)["pairs"]);
    let logs = json(&[
        "compare",
        "tests/fixtures/import/logs/eval",
        "--metric",
        "match",
        "--backend",
        "cpu",
        "--replicates",
        "300",
        "--format",
        "json",
    ]);
    let p = &logs["pairs"][0];
    assert_eq!(p["b"], "openai-api/scripted/model-b");
    assert_eq!(num(&p["estimate"]), -0.03333333333333333);
    assert!((num(&p["se"]) - 0.04775669329409192).abs() < 1e-16);
}

/// Past ten systems the table output is sorted by estimate, prints the leader against the
/// rest of the top group and each system against the next by estimate (`--all-pairs`: all
/// of them), and shows path-like names by their last component with the mapping once. The
/// pairs expected are worked out here from the JSON report of the same run.
#[test]
fn a_large_family_prints_the_pairs_that_matter_sorted_and_with_short_names() {
    let dir = tempfile::tempdir().unwrap();
    let panel = dir.path().join("k12.csv");
    let arms: Vec<String> = (1..=12).map(|i| format!("org/s{i:02}")).collect();
    stats()
        .args(["simulate", "--out"])
        .arg(&panel)
        .args([
            "--datasets",
            "d1=40,d2=40",
            "--trajectories",
            "1",
            "--reads",
            "1",
        ])
        .args(["--arms", &arms.join(","), "--effect", "0.02", "--seed", "3"])
        .assert()
        .success();
    let p = panel.to_str().unwrap();
    let common = ["compare", p, "--replicates", "300", "--backend", "cpu"];
    let doc = body(json(&[&common[..], &["--format", "json"]].concat()));
    let systems = doc["systems"].as_array().unwrap();
    let mut order: Vec<(String, f64)> = systems
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_string(), num(&s["estimate"])))
        .collect();
    order.sort_by(|x, y| y.1.total_cmp(&x.1));
    let short = |n: &str| n.trim_start_matches("org/").to_string();
    let leader = order[0].0.clone();
    let mut wanted: Vec<(String, String)> = order
        .windows(2)
        .map(|w| (w[0].0.clone(), w[1].0.clone()))
        .collect();
    for t in doc["top_group"].as_array().unwrap() {
        let t = t.as_str().unwrap();
        if t != leader {
            wanted.push((leader.clone(), t.to_string()));
        }
    }
    let expected: Vec<String> = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| {
            let (a, b) = (q["a"].as_str().unwrap(), q["b"].as_str().unwrap());
            wanted
                .iter()
                .any(|(x, y)| (x == a && y == b) || (x == b && y == a))
        })
        .map(|q| {
            format!(
                "{} − {}",
                short(q["b"].as_str().unwrap()),
                short(q["a"].as_str().unwrap())
            )
        })
        .collect();
    assert!(
        expected.len() < 66 && expected.len() >= 11,
        "{}",
        expected.len()
    );

    let out = stats().args(common).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let legend: Vec<String> = arms.iter().map(|a| format!("{} = {a}", short(a))).collect();
    assert!(
        text.contains(&format!("names: {}\n", legend.join("; "))),
        "{text}"
    );
    assert!(
        text.contains(&format!("pairs: {} of 66 shown:", expected.len())),
        "{text}"
    );
    // The systems table, top to bottom, is the estimate order.
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("system "))
        .skip(1)
        .take(12)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    let by_estimate: Vec<String> = order.iter().map(|(n, _)| short(n)).collect();
    assert_eq!(rows, by_estimate);
    // The pairs table, in the family's order, and each stratum's the same pairs.
    let pair_rows: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("pair (b − a)"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split("  ").next().unwrap().trim().to_string())
        .collect();
    assert_eq!(pair_rows, expected);
    let stratum_rows = text
        .lines()
        .filter(|l| l.starts_with("d1 ") || l.starts_with("d2 "))
        .count();
    assert_eq!(stratum_rows, 2 * expected.len());

    let all = stats().args(common).arg("--all-pairs").assert().success();
    let all = String::from_utf8(all.get_output().stdout.clone()).unwrap();
    assert!(!all.contains("pairs: "), "{all}");
    let all_rows = all
        .lines()
        .skip_while(|l| !l.starts_with("pair (b − a)"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .count();
    assert_eq!(all_rows, 66);
}

/// The interval columns are labelled with the level asked for (`--confidence 0.9` prints
/// "90% CI"), and the intervals are the t intervals at that level: on the shipped four-arm
/// panel the 90% interval of each system is narrower than its 95% one, both centred on the
/// same estimate.
#[test]
fn the_interval_label_follows_the_confidence_asked_for() {
    let run = |c: &str| {
        let out = stats()
            .args(["compare", ARMS4, "--replicates", "200", "--confidence", c])
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let (ninety, default) = (run("0.9"), run("0.95"));
    assert!(
        ninety.contains(" 90% CI ") && !ninety.contains("95% CI"),
        "{ninety}"
    );
    assert!(default.contains(" 95% CI "), "{default}");
    let width = |doc: &serde_json::Value| {
        let ci = &body(doc.clone())["systems"][0]["ci"];
        num(&ci[1]) - num(&ci[0])
    };
    let w90 = width(&json(&[
        "compare",
        ARMS4,
        "--replicates",
        "200",
        "--confidence",
        "0.9",
        "--format",
        "json",
    ]));
    let w95 = width(&json(&[
        "compare",
        ARMS4,
        "--replicates",
        "200",
        "--format",
        "json",
    ]));
    assert!(w90 < w95 && w90 > 0.7 * w95, "{w90} {w95}");
}

/// On the demo panel, `--confidence 0.9` labels both text tables' interval columns `90% CI`
/// (the systems' and the pairs'), and the CSV's interval columns keep their level-free names.
#[test]
fn the_demos_interval_columns_say_90_percent_at_confidence_0_9() {
    let run = |format: &str| {
        let out = stats()
            .args([
                "compare",
                "data/demo/panel.csv",
                "--replicates",
                "200",
                "--confidence",
                "0.9",
                "--format",
                format,
            ])
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let text = run("table");
    let headers: Vec<&str> = text.lines().filter(|l| l.contains("% CI")).collect();
    assert_eq!(headers.len(), 2, "{text}");
    assert!(
        headers
            .iter()
            .all(|h| h.contains(" 90% CI ") && !h.contains("95%")),
        "{text}"
    );
    let csv = run("csv");
    let header = csv.lines().next().unwrap();
    assert_eq!(
        header,
        "a,b,estimate,se,df,ci_lower,ci_upper,sim_lower,sim_upper,p,p_holm,q_bh"
    );
    assert!(!csv.contains('%'), "{csv}");
}

/// `--weights` (#46): every system and pair of a weighted comparison is exactly what
/// `stats variance --weights` reports for it (estimate, SE, df), each system's estimate is
/// Σ w_d·ȳ_d of the strata table's means by hand (arms4's strata have 60 and 40 questions,
/// so `size` weighs them 0.6 and 0.4), the report states the weights, and the backends agree.
#[test]
fn weighted_systems_and_pairs_are_what_variance_reports_with_the_same_weights() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "w.csv", "dataset,weight\nhotpotqa,1\nmusique,3\n");
    let strata = json(&["variance", ARMS4, "--arm", "a", "--format", "json"]);
    let names: Vec<&str> = strata["strata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["hotpotqa", "musique"], "the fixture's strata");
    for (weights, w) in [("size", [0.6, 0.4]), (file.to_str().unwrap(), [0.25, 0.75])] {
        let args = [
            "compare",
            ARMS4,
            "--replicates",
            "300",
            "--weights",
            weights,
        ];
        let doc = body(json(
            &[&args[..], &["--backend", "cpu", "--format", "json"]].concat(),
        ));
        let got: Vec<f64> = doc["weights"].as_array().unwrap().iter().map(num).collect();
        assert!(
            (got[0] - w[0]).abs() < 1e-15 && (got[1] - w[1]).abs() < 1e-15,
            "{got:?}"
        );
        // A system (`--arm NAME`) or pair (`--contrast B-A`) of the comparison has the
        // estimate, SE and df `stats variance` gives it with the same weights.
        let same_as_variance = |got: &serde_json::Value, flag: &str, what: &str| {
            let v = json(&[
                "variance",
                ARMS4,
                flag,
                what,
                "--weights",
                weights,
                "--format",
                "json",
            ]);
            assert_eq!(
                (&got["estimate"], &got["se"], &got["df"]),
                (&v["estimate"], &v["se"], &v["df"]),
                "{what}"
            );
        };
        assert!(doc["methods"]["se"]
            .as_str()
            .unwrap()
            .contains("weights given"));
        for (i, s) in doc["systems"].as_array().unwrap().iter().enumerate() {
            let name = s["name"].as_str().unwrap();
            same_as_variance(s, "--arm", name);
            let means: Vec<f64> = doc["strata"]
                .as_array()
                .unwrap()
                .iter()
                .map(|st| num(&st["systems"][i]["mean"]))
                .collect();
            let by_hand = w[0] * means[0] + w[1] * means[1];
            assert!((num(&s["estimate"]) - by_hand).abs() < 1e-12, "{name}");
        }
        for p in doc["pairs"].as_array().unwrap() {
            let spec = format!("{}-{}", p["b"].as_str().unwrap(), p["a"].as_str().unwrap());
            same_as_variance(p, "--contrast", &spec);
        }
        let text = stats().args(args).assert().success();
        let text = String::from_utf8(text.get_output().stdout.clone()).unwrap();
        assert!(
            text.contains(&format!(
                "weights: hotpotqa {:.6}, musique {:.6}\n",
                w[0], w[1]
            )),
            "{text}"
        );
        let gpu = stats()
            .args(args)
            .args(["--backend", "gpu", "--format", "json"])
            .output()
            .unwrap();
        if gpu_ran(&gpu) {
            let gpu: serde_json::Value = serde_json::from_slice(&gpu.stdout).unwrap();
            assert_eq!(doc, body(gpu), "CPU and GPU with --weights {weights}");
        }
    }
}

/// `--arms`: only the named systems are compared, as if the panel held no others (the same
/// numbers as a panel without the other arms' rows), in the file's order; an unknown name is
/// refused naming it and the panel's arms.
#[test]
fn arms_compares_only_the_systems_named() {
    let dir = tempfile::tempdir().unwrap();
    let all = std::fs::read_to_string(ARMS4).unwrap();
    let mut lines = all.lines();
    let mut three = format!("{}\n", lines.next().unwrap());
    for l in lines.filter(|l| !l.contains(",b,")) {
        three.push_str(l);
        three.push('\n');
    }
    let without_b = write(&dir, "without-b.csv", &three);
    let args = [
        "--replicates",
        "300",
        "--backend",
        "cpu",
        "--format",
        "json",
    ];
    let picked = body(json(
        &[&["compare", ARMS4, "--arms", "c,base,a"][..], &args[..]].concat(),
    ));
    let filtered = body(json(
        &[&["compare", without_b.to_str().unwrap()][..], &args[..]].concat(),
    ));
    let names: Vec<&str> = picked["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["base", "a", "c"]);
    assert_eq!(picked, filtered);
    let spaced = body(json(
        &[&["compare", ARMS4, "--arms", "c, base , a"][..], &args[..]].concat(),
    ));
    assert_eq!(spaced, picked, "names are trimmed");
    let err = refusal(&[ARMS4, "--arms", "a,,b"]);
    assert!(
        err.contains("--arms a,,b: expected the names of two or more systems"),
        "{err}"
    );
    let err = refusal(&[ARMS4, "--arms", "a,nope,zzz"]);
    assert!(
        err.contains(
            "error: --arms: no arm 'nope', 'zzz' in tests/fixtures/compare/arms4.csv; its arms are: base, a, b, c"
        ),
        "{err}"
    );
}
