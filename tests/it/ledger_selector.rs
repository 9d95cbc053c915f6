//! Issue #11 item 5, the ledger side: per-selector costs (`selector` on ledger rows, cost
//! matching that follows the panel's selector choice, `stats cost --by selector`), the
//! ledger kinds of `mcq generate`, `judge` and `mcq run`, and `stats slice` on a panel whose
//! trajectory labels are unique per question.

use crate::common;

use common::{json, stats, write, XorShift};
use predicates::prelude::*;
use serde_json::Value;

/// One stratum `d`, Q = 3 questions, T = 2, R = 2, selectors `rrf` and `rr` on every cell.
/// Ledger: per trajectory a planner call of 90 + 10 tokens and one search (no selector);
/// per read an `rrf` reader call of 40 + 10 tokens and an `rr` one of 20 + 10, except that
/// q0's trajectory 0 read 0 saw identical packets, so its two rows are one call (`key`)
/// of 40 + 10 tokens.
fn two_selectors(dir: &tempfile::TempDir) -> (String, String) {
    let mut x = XorShift(11);
    let mut panel = String::from("dataset,question,trajectory,read,selector,f1\n");
    let mut ledger = String::new();
    for q in 0..3 {
        let a = x.grid(1000);
        for t in 0..2 {
            let b = 0.3 * x.grid(1000);
            ledger.push_str(&format!("{{\"kind\":\"planner\",\"dataset\":\"d\",\"question\":\"q{q}\",\"trajectory\":{t},\"model\":\"m\",\"input_tokens\":90,\"output_tokens\":10}}\n"));
            ledger.push_str(&format!(
                "{{\"kind\":\"search\",\"dataset\":\"d\",\"question\":\"q{q}\",\"trajectory\":{t}}}\n"
            ));
            for r in 0..2 {
                let shared = (q, t, r) == (0, 0, 0);
                for (sel, input) in [("rrf", 40), ("rr", 20)] {
                    let y = a + b + 0.2 * x.grid(1000);
                    panel.push_str(&format!("d,q{q},{t},{r},{sel},{y:.4}\n"));
                    let (input, key) = if shared {
                        (40, ",\"key\":\"k0\"")
                    } else {
                        (input, "")
                    };
                    ledger.push_str(&format!("{{\"kind\":\"reader\",\"dataset\":\"d\",\"question\":\"q{q}\",\"trajectory\":{t},\"read\":{r},\"selector\":\"{sel}\",\"model\":\"m\",\"input_tokens\":{input},\"output_tokens\":10{key}}}\n"));
                }
            }
        }
    }
    let w = |name: &str, text: &str| write(dir, name, text).to_str().unwrap().to_string();
    (w("panel.csv", &panel), w("ledger.jsonl", &ledger))
}

/// `stats efficiency … --format json` (tokens), with `extra` flags.
fn efficiency(panel: &str, ledger: &str, extra: &[&str]) -> Value {
    let base = [
        "efficiency",
        panel,
        "--ledger",
        ledger,
        "--replicates",
        "50",
        "--backend",
        "cpu",
        "--format",
        "json",
    ];
    json(&[&base[..], extra].concat())
}

/// (c_T, c_R) of the one stratum of an efficiency report, c_R the mean read cost
/// (c_R1 + (R − 1) c_R+)/R of its first and later reads (these tests are about which rows
/// a selector pays for, not about how a read's price splits).
fn unit_costs(v: &Value) -> (f64, f64) {
    let s = &v["strata"][0];
    let u = &s["unit_costs"];
    let r = s["reads"].as_f64().unwrap();
    let f = |k: &str| u[k].as_f64().unwrap();
    (
        f("trajectory"),
        (f("first_read") + (r - 1.0) * f("read")) / r,
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn efficiency_bills_the_analysed_selector_or_every_selector_for_the_average() {
    let dir = tempfile::tempdir().unwrap();
    let (panel, ledger) = two_selectors(&dir);
    // By hand, over QTR = 12 read cells and QT = 6 trajectories; c_T = 100 tokens always.
    // rrf: 12 reads of 50 tokens.
    let rrf = unit_costs(&efficiency(&panel, &ledger, &["--selector", "rrf"]));
    assert!(close(rrf.0, 100.0) && close(rrf.1, 50.0), "{rrf:?}");
    // rr: 11 reads of 30 tokens and the shared call of 50, which rr pays in full alone.
    let rr = unit_costs(&efficiency(&panel, &ledger, &["--selector", "rr"]));
    assert!(close(rr.0, 100.0) && close(rr.1, 380.0 / 12.0), "{rr:?}");
    // The average runs both selectors: 11 × (50 + 30) + 50 (the shared call once) = 930.
    let avg = unit_costs(&efficiency(&panel, &ledger, &[]));
    assert!(close(avg.0, 100.0) && close(avg.1, 77.5), "{avg:?}");
    let avg2 = unit_costs(&efficiency(&panel, &ledger, &["--selector", "average"]));
    assert_eq!(avg, avg2);
    // `--by selector`: the same three, in the order rrf, rr, average.
    let by = efficiency(&panel, &ledger, &["--by", "selector"]);
    let got: Vec<(String, (f64, f64))> = by["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["selector"].as_str().unwrap().to_string(),
                unit_costs(&r["result"]),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("rrf".to_string(), rrf),
            ("rr".to_string(), rr),
            ("average".to_string(), avg)
        ]
    );
}

#[test]
fn a_ledger_without_selectors_is_billed_as_before() {
    // The same ledger with its `selector` fields removed: every reader row is billed
    // whichever selector is analysed (the behaviour before the field existed), 930 / 12.
    let dir = tempfile::tempdir().unwrap();
    let (panel, ledger) = two_selectors(&dir);
    let text = std::fs::read_to_string(&ledger)
        .unwrap()
        .replace(",\"selector\":\"rrf\"", "")
        .replace(",\"selector\":\"rr\"", "");
    assert!(!text.contains("selector"));
    let bare = write(&dir, "bare.jsonl", &text);
    let bare = bare.to_str().unwrap();
    for sel in ["rrf", "rr", "average"] {
        let c = unit_costs(&efficiency(&panel, bare, &["--selector", sel]));
        assert!(close(c.0, 100.0) && close(c.1, 77.5), "{sel}: {c:?}");
    }
}

#[test]
fn a_selector_the_ledger_does_not_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (panel, ledger) = two_selectors(&dir);
    let text = std::fs::read_to_string(&ledger)
        .unwrap()
        .replace("\"selector\":\"rrf\"", "\"selector\":\"x\"");
    let other = write(&dir, "other.jsonl", &text);
    stats()
        .args(["efficiency", &panel, "--ledger"])
        .arg(&other)
        .args([
            "--selector",
            "rrf",
            "--replicates",
            "20",
            "--backend",
            "cpu",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no row has selector 'rrf' (the ledger's selectors: x, rr)",
        ));
}

#[test]
fn allocate_bills_the_analysed_selector() {
    // The measured tokens of the full design 3:2:2: 6 trajectories of 100, and 12 reads of
    // 50 for rrf (1,200 in all) or, for the average, both selectors' reads (930, above).
    let dir = tempfile::tempdir().unwrap();
    let (panel, ledger) = two_selectors(&dir);
    let prices = write(&dir, "prices.toml", "[models.m]\ninput = 1\noutput = 1\n");
    let run = |extra: &[&str]| {
        let base = [
            "allocate",
            &panel,
            "--ledger",
            &ledger,
            "--prices",
            prices.to_str().unwrap(),
            "--allocation",
            "A=3:2:2",
            "--allocation",
            "B=3:1:1",
            "--replicates",
            "50",
            "--backend",
            "cpu",
            "--format",
            "json",
        ];
        json(&[&base[..], extra].concat())
    };
    let tokens = |v: &Value, name: &str| -> f64 {
        let a = v["allocations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("no allocation {name} in {v}"));
        a["model_tokens"].as_f64().unwrap_or_else(|| panic!("{a}"))
    };
    let rrf = run(&["--selector", "rrf"]);
    let avg = run(&[]);
    assert!(close(tokens(&rrf, "A"), 600.0 + 600.0), "{rrf}");
    assert!(close(tokens(&avg, "A"), 600.0 + 930.0), "{avg}");
}

/// `stats cost --format json` with `extra` flags.
fn cost(ledger: &str, extra: &[&str]) -> Value {
    json(&[&["cost", ledger, "--format", "json"][..], extra].concat())
}

#[test]
fn cost_reports_each_selector_then_the_average() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ledger) = two_selectors(&dir);
    let by = cost(&ledger, &["--by", "selector"]);
    assert_eq!(by["by"], "selector");
    let results = by["results"].as_array().unwrap();
    // (selector, model tokens, c_T, c_R, reads): planner calls 6 × 100 = 600 in each.
    let want = [
        ("rrf", 600 + 600, 50.0),
        ("rr", 600 + 380, 380.0 / 12.0),
        ("average", 600 + 930, 77.5),
    ];
    assert_eq!(results.len(), 3);
    for (r, (name, tokens, c_r)) in results.iter().zip(want) {
        assert_eq!(r["selector"], name);
        let v = &r["result"];
        assert_eq!(v["total"]["model_tokens"], tokens, "{name}");
        let u = &v["unit_costs"];
        assert_eq!(u["reads"], 12, "{name}");
        assert_eq!(u["trajectories"], 6, "{name}");
        assert!(close(u["tokens"]["trajectory"].as_f64().unwrap(), 100.0));
        assert!(
            close(u["tokens"]["read"].as_f64().unwrap(), c_r),
            "{name}: {u}"
        );
    }
    // The average section is the plain report.
    let plain = cost(&ledger, &[]);
    assert_eq!(by["run"], plain["run"]);
    assert_eq!(results[2]["result"], common::body(plain));
    // The table: one section per selector.
    let t = stats()
        .args(["cost", &ledger, "--by", "selector"])
        .output()
        .unwrap();
    let t = String::from_utf8(t.stdout).unwrap();
    assert!(t.starts_with("selector: rrf\n"), "{t}");
    assert!(t.contains("\nselector: rr\n") && t.contains("\nselector: average\n"));
    // A ledger without selectors has nothing to report by.
    let plain = write(&dir, "plain.jsonl", "{\"kind\":\"search\"}\n");
    stats()
        .args(["cost", plain.to_str().unwrap(), "--by", "selector"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no row of"));
}

#[test]
fn generator_judge_and_mcq_calls_are_billed_but_are_not_reads() {
    // One read (100 tokens) and one call of each new kind (1,000 tokens each): the totals
    // bill all four, c_R only the read; an old ledger saying `reader` still reads.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("{\"kind\":\"reader\",\"dataset\":\"d\",\"question\":\"q\",\"trajectory\":0,\"read\":0,\"model\":\"m\",\"input_tokens\":90,\"output_tokens\":10}\n");
    for kind in ["generator", "judge", "mcq"] {
        text.push_str(&format!(
            "{{\"kind\":\"{kind}\",\"model\":\"m\",\"input_tokens\":900,\"output_tokens\":100,\"item\":\"i\"}}\n"
        ));
    }
    let l = write(&dir, "l.jsonl", &text);
    let v = cost(l.to_str().unwrap(), &[]);
    assert_eq!(v["total"]["model_tokens"], 3100);
    assert_eq!(v["total"]["model_calls"], 4);
    assert_eq!(v["unit_costs"]["reads"], 1);
    assert!(close(
        v["unit_costs"]["tokens"]["read"].as_f64().unwrap(),
        100.0
    ));
    assert!(v["unit_costs"].get("read_note").is_none(), "{v}");
    // Without the read: no read cost, and the note says why and where to look.
    let only: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let l2 = write(&dir, "l2.jsonl", &only);
    let v = cost(l2.to_str().unwrap(), &[]);
    let note = v["unit_costs"]["read_note"].as_str().unwrap();
    assert!(
        note.starts_with("no reader rows, so there is no read cost (3 generator, judge or mcq row(s) are billed in the totals only)")
            && note.contains("stats mcq cost"),
        "{note}"
    );
    assert_eq!(v["total"]["model_tokens"], 3000);
}

/// A panel whose trajectory and read labels are unique per question (`q1-t0`, `q1-t0-r1`).
fn unique_labels(dir: &tempfile::TempDir) -> String {
    let mut x = XorShift(5);
    let mut panel = String::from("dataset,question,trajectory,read,f1\n");
    for q in 1..=3 {
        for t in 0..3 {
            for r in 0..2 {
                panel.push_str(&format!(
                    "d,q{q},q{q}-t{t},q{q}-t{t}-r{r},{:.3}\n",
                    x.grid(1000)
                ));
            }
        }
    }
    write(dir, "unique.csv", &panel)
        .to_str()
        .unwrap()
        .to_string()
}

/// The (question, trajectory, read) labels of a sliced panel's rows.
fn rows(p: &std::path::Path) -> Vec<(String, String, String)> {
    let mut r = csv::Reader::from_path(p).unwrap();
    r.records()
        .map(|x| {
            let x = x.unwrap();
            (x[1].to_string(), x[2].to_string(), x[3].to_string())
        })
        .collect()
}

#[test]
fn slice_keeps_each_questions_own_first_trajectories() {
    let dir = tempfile::tempdir().unwrap();
    let panel = unique_labels(&dir);
    let out = dir.path().join("s.csv");
    stats()
        .args(["slice", &panel, "--design", "2:2:1", "--out"])
        .arg(&out)
        .assert()
        .success();
    let s = |q: u32, t: u32| {
        (
            format!("q{q}"),
            format!("q{q}-t{t}"),
            format!("q{q}-t{t}-r0"),
        )
    };
    assert_eq!(rows(&out), [s(1, 0), s(1, 1), s(2, 0), s(2, 1)]);
    // The sub-panel is a panel: 2 questions × 2 trajectories × 1 read.
    let v = json(&["variance", out.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["strata"][0]["questions"], 2, "{v}");
}

#[test]
fn a_seeded_slice_chooses_among_each_questions_own_labels() {
    let dir = tempfile::tempdir().unwrap();
    let panel = unique_labels(&dir);
    let out = dir.path().join("s.csv");
    stats()
        .args(["slice", &panel, "--design", "3:2:1", "--seed", "9", "--out"])
        .arg(&out)
        .assert()
        .success();
    let got = rows(&out);
    assert_eq!(got.len(), 3 * 2);
    for q in 1..=3 {
        let mine: Vec<&(String, String, String)> =
            got.iter().filter(|r| r.0 == format!("q{q}")).collect();
        assert_eq!(mine.len(), 2, "{got:?}");
        assert_ne!(mine[0].1, mine[1].1);
        for r in mine {
            assert!(r.1.starts_with(&format!("q{q}-t")), "{r:?}");
            assert!(r.2.starts_with(&format!("{}-r", r.1)), "{r:?}");
        }
    }
}

/// The panel and ledger of [`two_selectors`] loaded as the library takes them, with one
/// selector (`None`: the selector average).
fn loaded(
    dir: &tempfile::TempDir,
    selector: Option<&str>,
) -> (
    ragstats_core::panel::Panel,
    Vec<ragstats_core::ledger::Entry>,
    std::path::PathBuf,
) {
    use ragstats_core::panel::{load_panel, LoadOptions, SelectorChoice};
    let (panel, ledger) = two_selectors(dir);
    let choice = selector.map_or(SelectorChoice::Average, |s| SelectorChoice::One(s.into()));
    let panel = load_panel(
        std::path::Path::new(&panel),
        &LoadOptions {
            selector: Some(choice),
            ..LoadOptions::default()
        },
    )
    .unwrap();
    let entries = ragstats_core::ledger::read_ledger(std::path::Path::new(&ledger)).unwrap();
    (panel, entries, ledger.into())
}

/// `efficiency_of_panel` called directly: the unit costs by hand above (rrf: c_T = 100,
/// c_R = 50; the average: c_R = 930 / 12 = 77.5), and the direct check's panel costs as
/// billed, C₁ = 6 trajectories × 100 + their read 0 and C₂ = the same + reads 0 and 1
/// (rrf: 600 + 6 × 50 = 900 and 600 + 12 × 50 = 1,200). Dollars need prices.
#[test]
fn library_efficiency_prices_the_panel_from_its_ledger() {
    use ragstats_core::allocation::one_read_ledger::{efficiency_of_panel, EfficiencyJob};
    use ragstats_core::costs::accounting::{Budget, PricedLedger};
    use ragstats_core::resample::{CpuBackend, Resampling};
    let dir = tempfile::tempdir().unwrap();
    let settings = EfficiencyJob {
        budget: Budget::Tokens,
        max_reads: 10,
        resampling: Resampling {
            seed: 1,
            replicates: 50,
            confidence: 0.95,
        },
        question_cost: 0.0,
    };
    for (selector, (c_r1, c_r), c1, c2) in [
        (Some("rrf"), (50.0, 50.0), 900.0, 1200.0),
        // The average: read 0 is 5 × 80 + the shared call of 50 once = 450 over 6
        // trajectories (c_R1 = 75); both reads 930, so the 6 later reads cost 480 (c_R+ = 80).
        (None, (75.0, 80.0), 600.0 + 450.0, 600.0 + 930.0),
    ] {
        let (panel, entries, path) = loaded(&dir, selector);
        let ledger = PricedLedger {
            entries: &entries,
            path: &path,
            prices: None,
            prices_path: None,
        };
        let r =
            efficiency_of_panel(&panel, &ledger, &settings, &CpuBackend::new(), &|_| {}).unwrap();
        let u = r.strata[0].unit_costs;
        assert!(
            close(u.trajectory, 100.0) && close(u.first_read, c_r1) && close(u.read, c_r),
            "{selector:?}: {u:?}"
        );
        let d = r.direct.as_ref().unwrap();
        assert!(
            close(d.cost_one_read, c1),
            "{selector:?}: {}",
            d.cost_one_read
        );
        assert!(
            close(d.cost_two_reads, c2),
            "{selector:?}: {}",
            d.cost_two_reads
        );
        assert_eq!(r.max_reads, 10);
        assert!(!r.unbalanced);
        let usd = EfficiencyJob {
            budget: Budget::Usd {
                search_usd_per_1000: None,
            },
            ..settings
        };
        let err =
            efficiency_of_panel(&panel, &ledger, &usd, &CpuBackend::new(), &|_| {}).unwrap_err();
        assert_eq!(
            err.to_string(),
            "currency: usd needs the models' prices (a prices file)"
        );
    }
}

/// `cost_report` called directly, with the numbers of
/// `cost_reports_each_selector_then_the_average`: planner calls 6 × 100 = 600 tokens; rr's
/// reads 380 (c_R = 380 / 12), the average's 930 (c_R = 77.5); 6 trajectories, 12 reads.
#[test]
fn library_cost_report_accounts_one_selector_or_all() {
    use ragstats_core::costs::accounting::{cost_report, CostJob, PricedLedger};
    let dir = tempfile::tempdir().unwrap();
    let (_, entries, path) = loaded(&dir, None);
    let ledger = PricedLedger {
        entries: &entries,
        path: &path,
        prices: None,
        prices_path: None,
    };
    for (selector, tokens, c_r) in [(Some("rr"), 980, 380.0 / 12.0), (None, 1530, 77.5)] {
        let r = cost_report(
            &ledger,
            &CostJob {
                search_prices: Some(vec![0.0, 2.0]),
                selector: selector.map(String::from),
            },
        )
        .unwrap();
        assert_eq!(r.total.model_tokens, tokens, "{selector:?}");
        // 6 unique searches: no model fees without prices, 6 × 2 / 1000 at $2 per 1,000.
        assert_eq!(r.search_prices, [0.0, 2.0]);
        assert_eq!(r.total.search_requests, 6);
        assert!(
            close(r.total.total_usd[1], 0.012),
            "{:?}",
            r.total.total_usd
        );
        let u = &r.unit_costs;
        assert_eq!((u.trajectories, u.reads), (6, 12));
        assert!(close(u.tokens.trajectory, 100.0) && close(u.tokens.read, c_r));
        assert_eq!(u.usd, None);
    }
    // Without a sweep and without prices there are no search prices to total at.
    let r = cost_report(&ledger, &CostJob::default()).unwrap();
    assert!(r.search_prices.is_empty() && r.total.total_usd.is_empty());
}

/// `allocate` called directly, with the numbers of `allocate_bills_the_analysed_selector`:
/// the full design 3:2:2 costs 600 + 600 tokens for rrf and 600 + 930 for the average;
/// 3:1:1 takes trajectory 0 with read 0 of each question: 3 × 100 + 3 × 50 for rrf.
#[test]
fn library_allocate_prices_each_allocation_from_the_ledger() {
    use ragstats_core::allocation::allocate::{allocate, AllocateJob, AllocationSpec};
    use ragstats_core::allocation::walk::CpuWalk;
    use ragstats_core::costs::accounting::PricedLedger;
    use ragstats_core::ledger::Prices;
    use ragstats_core::resample::Resampling;
    let dir = tempfile::tempdir().unwrap();
    let prices_path = write(&dir, "prices.toml", "[models.m]\ninput = 1\noutput = 1\n");
    let prices = Prices::read(&prices_path).unwrap();
    let specs: Vec<AllocationSpec> = ["A=3:2:2", "B=3:1:1"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let settings = AllocateJob {
        order_seed: None,
        search_prices: Some(vec![0.0]),
        resampling: Resampling {
            seed: 1,
            replicates: 50,
            confidence: 0.95,
        },
        question_cost: [0.0, 0.0],
    };
    for (selector, a, b) in [
        (Some("rrf"), 1200.0, 450.0),
        // The average's 3:1:1: q0's read 0 is the shared call of 50, q1's and q2's 40 + 40.
        (None, 1530.0, 300.0 + 50.0 + 2.0 * 80.0),
    ] {
        let (panel, entries, path) = loaded(&dir, selector);
        let mut ledger = PricedLedger {
            entries: &entries,
            path: &path,
            prices: Some(&prices),
            prices_path: Some(&prices_path),
        };
        let r = allocate(&panel, &specs, &ledger, &settings, &CpuWalk, &|_| {}).unwrap();
        let tokens: Vec<f64> = r.allocations.iter().map(|x| x.model_tokens).collect();
        assert!(
            close(tokens[0], a) && close(tokens[1], b),
            "{selector:?}: {tokens:?}"
        );
        // At $1 per 1M tokens and searches at $0 the fees are the tokens / 10⁶.
        assert!(close(r.allocations[0].fees_usd[0], a / 1e6));
        assert_eq!(r.pairs.len(), 1);
        assert_eq!((r.pairs[0].a.as_str(), r.pairs[0].b.as_str()), ("A", "B"));
        ledger.prices = None;
        let err = allocate(&panel, &specs, &ledger, &settings, &CpuWalk, &|_| {});
        assert!(err.is_err());
    }
}

/// `OneReadReport::undefined` on the fixture with every score set to 0.5: the reasons
/// `harden_nan::efficiency_on_constant_scores_is_undefined_with_its_reason` checks in the
/// CLI's output, from the report itself.
#[test]
fn library_efficiency_says_why_constant_scores_are_undefined() {
    use ragstats_core::allocation::one_read_ledger::{
        direct_ratio_reason, efficiency_of_panel, EfficiencyJob,
    };
    use ragstats_core::costs::accounting::{Budget, PricedLedger};
    use ragstats_core::resample::{CpuBackend, Resampling};
    let dir = tempfile::tempdir().unwrap();
    let (mut panel, entries, path) = loaded(&dir, Some("rrf"));
    for s in &mut panel.strata {
        s.y.iter_mut().for_each(|y| *y = 0.5);
    }
    let ledger = PricedLedger {
        entries: &entries,
        path: &path,
        prices: None,
        prices_path: None,
    };
    let settings = EfficiencyJob {
        budget: Budget::Tokens,
        max_reads: 10,
        resampling: Resampling {
            seed: 1,
            replicates: 20,
            confidence: 0.95,
        },
        question_cost: 0.0,
    };
    let r = efficiency_of_panel(&panel, &ledger, &settings, &CpuBackend::new(), &|_| {}).unwrap();
    let reason = "the scores do not vary (every variance component is 0), so SE^2 x cost is 0 at every R and the loss is 0/0";
    let u = r.undefined();
    let got: Vec<(&str, &str, &str)> = u
        .iter()
        .map(|n| (n.scope.as_str(), n.field, n.reason.as_str()))
        .take(2)
        .collect();
    assert_eq!(
        got,
        [
            ("d", "fixed_t", reason),
            ("combined", "fixed_t", "the loss is undefined in d")
        ]
    );
    let d = r.direct.unwrap();
    assert!(d.ratio.is_nan() && d.se_one_read == 0.0 && d.se_two_reads == 0.0);
    assert_eq!(
        direct_ratio_reason(d.se_one_read, d.se_two_reads),
        "both SEs are 0 (the scores do not vary), so the ratio is 0/0"
    );
}
