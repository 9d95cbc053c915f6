//! Answer disagreement and one-read SE ratios on a reads file small enough to check by hand.

use crate::common;

use common::{json, stats, write};
use predicates::prelude::*;

/// Two temperatures, one stratum, 4 questions, T=2, R=2.
/// t=0.7 disagrees in cells (q1,0) ("Paris" vs "Lyon") and (q3,1); "The Paris" and "paris."
/// normalise to the same answer. t=0 disagrees nowhere.
fn reads() -> String {
    let mut s = String::from("temperature,dataset,question,trajectory,read,answer,f1\n");
    let rows = [
        // temp, q, t, r, answer, f1
        ("0.7", "q1", 0, 0, "Paris", 1.0),
        ("0.7", "q1", 0, 1, "Lyon", 0.0),
        ("0.7", "q1", 1, 0, "The Paris", 1.0),
        ("0.7", "q1", 1, 1, "paris.", 1.0),
        ("0.7", "q2", 0, 0, "1912", 0.5),
        ("0.7", "q2", 0, 1, "1912", 0.5),
        ("0.7", "q2", 1, 0, "1912", 0.5),
        ("0.7", "q2", 1, 1, "1912", 0.5),
        ("0.7", "q3", 0, 0, "blue", 0.0),
        ("0.7", "q3", 0, 1, "blue", 0.0),
        ("0.7", "q3", 1, 0, "red", 1.0),
        ("0.7", "q3", 1, 1, "green", 0.0),
        ("0.7", "q4", 0, 0, "x", 0.2),
        ("0.7", "q4", 0, 1, "x", 0.2),
        ("0.7", "q4", 1, 0, "x", 0.2),
        ("0.7", "q4", 1, 1, "x", 0.2),
    ];
    for (temp, q, t, r, a, f) in rows {
        s.push_str(&format!("{temp},d,{q},{t},{r},{a},{f}\n"));
    }
    // Temperature 0: every read repeats read 0 of temperature 0.7.
    for (_, q, t, r, a, f) in rows {
        let (a0, f0) = rows
            .iter()
            .find(|x| x.1 == q && x.2 == t && x.3 == 0)
            .map(|x| (x.4, x.5))
            .unwrap();
        let _ = (a, f);
        s.push_str(&format!("0,d,{q},{t},{r},{a0},{f0}\n"));
    }
    s
}

#[test]
fn disagreement_rates_and_se_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "reads.csv", &reads());
    let v = json(&[
        "consistency",
        p.to_str().unwrap(),
        "--by",
        "temperature",
        "--replicates",
        "500",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    let dis = v["disagreement"].as_array().unwrap();
    // Groups sorted by value: "0" then "0.7". 8 cells each.
    assert_eq!(dis[0]["group"], "0");
    assert_eq!(dis[0]["disagreeing"], 0);
    assert_eq!(dis[1]["cells"], 8);
    assert_eq!(dis[1]["disagreeing"], 2);
    assert_eq!(dis[1]["rate"], 0.25);
    // One-read SEs by hand. t=0.7, read 0: question means over trajectories (1+1)/2=1, 0.5, (0+1)/2=0.5, 0.2;
    // read 1: (0+1)/2=0.5, 0.5, 0, 0.2.
    let se = |m: [f64; 4]| {
        let mean = m.iter().sum::<f64>() / 4.0;
        (m.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 3.0 / 4.0).sqrt()
    };
    let hot = (se([1.0, 0.5, 0.5, 0.2]) + se([0.5, 0.5, 0.0, 0.2])) / 2.0;
    let cold = se([1.0, 0.5, 0.5, 0.2]); // both reads equal read 0
    let prec = v["precision"].as_array().unwrap();
    assert!(
        (prec[0]["one_read_se"].as_f64().unwrap() - hot).abs() < 1e-12,
        "{}",
        prec[0]
    );
    assert!((prec[1]["one_read_se"].as_f64().unwrap() - cold).abs() < 1e-12);
    let r = &v["se_ratio"];
    assert_eq!(r["numerator"], "0.7");
    assert_eq!(r["paired"], true);
    assert!((r["ratio"].as_f64().unwrap() - hot / cold).abs() < 1e-12);
    let ci = r["ci"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= ci[1].as_f64().unwrap());
}

#[test]
fn bad_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "reads.csv", &reads());
    stats()
        .args(["consistency", p.to_str().unwrap(), "--by", "model"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing column 'model'"));
    stats()
        .args([
            "consistency",
            p.to_str().unwrap(),
            "--by",
            "temperature",
            "--compare",
            "0,1.0",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no group '1.0'"));
}

/// The library entry point on the same hand-checked file: `read_answers` and `groups_of`
/// read it as the command does, and `consistency` gives the hand-computed rates (0 and
/// 2/8), one-read SEs and their ratio, paired, with a defined ratio.
#[test]
fn library_consistency_is_the_hand_computed_one() {
    use ragstats_core::components::consistency::{consistency, groups_of, read_answers};
    use ragstats_core::panel::{load_panel, LoadOptions};
    use ragstats_core::resample::{CpuBackend, Resampling};

    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "reads.csv", &reads());
    let rows = read_answers(
        &ragstats_core::panel::Source::file(&p),
        "temperature",
        "answer",
        &Default::default(),
    )
    .unwrap();
    assert_eq!(rows.len(), 32);
    let groups = groups_of(&rows);
    assert_eq!(groups, ["0.7", "0"]);
    let panels: Vec<_> = groups
        .iter()
        .map(|g| {
            let opts = LoadOptions {
                filter: Some(("temperature".into(), g.clone())),
                ..Default::default()
            };
            (g.clone(), load_panel(&p, &opts).unwrap())
        })
        .collect();
    let settings = Resampling {
        seed: 1,
        replicates: 500,
        confidence: 0.95,
    };
    let r = consistency(
        "temperature",
        &rows,
        &panels,
        &settings,
        &CpuBackend::new(),
        &|_| {},
    )
    .unwrap();
    assert_eq!(r.disagreement[0].disagreeing, 0);
    assert_eq!(r.disagreement[1].rate, 0.25);
    let se = |m: [f64; 4]| {
        let mean = m.iter().sum::<f64>() / 4.0;
        (m.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 3.0 / 4.0).sqrt()
    };
    let hot = (se([1.0, 0.5, 0.5, 0.2]) + se([0.5, 0.5, 0.0, 0.2])) / 2.0;
    let cold = se([1.0, 0.5, 0.5, 0.2]);
    assert!((r.precision[0].one_read_se - hot).abs() < 1e-12);
    assert!((r.precision[1].one_read_se - cold).abs() < 1e-12);
    let ratio = r.se_ratio.as_ref().unwrap();
    assert!((ratio.ratio - hot / cold).abs() < 1e-12 && ratio.paired);
    assert!(ratio.ci[0] <= ratio.ci[1]);
    assert_eq!(ratio.undefined, None);
    assert_eq!(r.by, "temperature");
    assert_eq!((r.replicates, r.seed, r.backend.as_str()), (500, 1, "cpu"));
}
