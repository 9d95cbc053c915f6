//! Variance components and forecasts on panels small enough to work out by hand.

use crate::common;

use common::{write, XorShift};
use ragstats_core::components::forecast::{forecast, split_questions, Audit, DesignSpec};
use ragstats_core::components::variance::{analyse, AnovaSums, Level};
use ragstats_core::panel::{load_panel, LoadOptions, StratumStats};

/// One stratum, Q=3, T=2, R=2:
/// q1: t0 [1,3] t1 [2,6];  q2: t0 [0,0] t1 [4,2];  q3: t0 [5,5] t1 [5,7]
const TINY: &str = "dataset,question,trajectory,read,f1
d,q1,0,0,1\nd,q1,0,1,3\nd,q1,1,0,2\nd,q1,1,1,6
d,q2,0,0,0\nd,q2,0,1,0\nd,q2,1,0,4\nd,q2,1,1,2
d,q3,0,0,5\nd,q3,0,1,5\nd,q3,1,0,5\nd,q3,1,1,7
";

#[test]
fn hand_computed_mean_squares_and_components() {
    let dir = tempfile::tempdir().unwrap();
    let panel = load_panel(&write(&dir, "tiny.csv", TINY), &LoadOptions::default()).unwrap();
    let stats: Vec<StratumStats> = panel
        .strata
        .iter()
        .map(StratumStats::from_stratum)
        .collect();
    // Trajectory means: q1 (2, 4), q2 (0, 3), q3 (5, 6); question means 3, 1.5, 5.5.
    let qm: Vec<f64> = stats[0].questions.iter().map(|q| q.mean).collect();
    assert_eq!(qm, vec![3.0, 1.5, 5.5]);
    // Read SS: q1 (1+1)+(4+4)=10, q2 0+(1+1)=2, q3 0+(1+1)=2 -> 14.
    // Trajectory SS: R Σ(ȳ_qt-ȳ_q)²: q1 2(1+1)=4, q2 2(2.25+2.25)=9, q3 2(.25+.25)=1 -> 14.
    let r = analyse("f1", &stats, &[0]).unwrap();
    let s = &r.strata[0];
    // Grand mean 10/3. SS_q = TR Σ(ȳ_q-ȳ)² = 4 (1/9 + 121/36 + 169/36) = 294/9, df 2.
    let ms_q = 294.0 / 9.0 / 2.0;
    let ms_t = 14.0 / 3.0; // df Q(T-1) = 3
    let ms_r = 14.0 / 6.0; // df QT(R-1) = 6
    let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    close(s.fit.ms.question, ms_q);
    close(s.fit.ms.trajectory.unwrap(), ms_t);
    close(s.fit.ms.read.unwrap(), ms_r);
    assert_eq!(
        (s.fit.df.question, s.fit.df.trajectory, s.fit.df.read),
        (2.0, Some(3.0), Some(6.0))
    );
    // σ²_r = 7/3, σ²_t = (14/3 - 7/3)/2 = 7/6, σ²_q = (147/9 - 42/9)/4 = 35/12.
    close(s.fit.components.read.unwrap(), 7.0 / 3.0);
    close(s.fit.components.trajectory.unwrap(), 7.0 / 6.0);
    close(s.fit.components.question, 35.0 / 12.0);
    assert!(s.fit.truncated.is_empty());
    // SE² = MS_q/(QTR) = (147/9)/12 = 49/36, so SE = 7/6.
    close(s.se, 7.0 / 6.0);
    close(s.mean, 10.0 / 3.0);
    // Shares of σ²_q+σ²_t+σ²_r = 35/12 + 14/12 + 28/12 = 77/12.
    let single = s.share_single.as_ref().expect("the outcome varies");
    close(single.question, 35.0 / 77.0);
    // SE² terms: (35/12)/3 = 35/36, (7/6)/6 = 7/36, (7/3)/12 = 7/36 of 49/36 -> 35/49, 7/49, 7/49.
    let se2 = s.share_se2.as_ref().expect("the outcome varies");
    close(se2.question, 35.0 / 49.0);
    close(se2.read.unwrap(), 7.0 / 49.0);
    close(r.estimate, 10.0 / 3.0);
    close(r.se, 7.0 / 6.0);
}

#[test]
fn negative_component_is_reported_truncated() {
    // Two questions with equal means but large read noise: MS_q = 0 < MS_t.
    let text = "question,trajectory,read,f1\na,0,0,0\na,0,1,1\na,1,0,1\na,1,1,0\nb,0,0,1\nb,0,1,0\nb,1,0,0\nb,1,1,1\n";
    let dir = tempfile::tempdir().unwrap();
    let panel = load_panel(&write(&dir, "neg.csv", text), &LoadOptions::default()).unwrap();
    let stats: Vec<StratumStats> = panel
        .strata
        .iter()
        .map(StratumStats::from_stratum)
        .collect();
    let r = analyse("f1", &stats, &[0]).unwrap();
    let f = &r.strata[0].fit;
    // Every trajectory mean is 0.5: SS_q = 0, SS_t = 0, SS_r = 8 * 0.25 = 2, df 4.
    assert_eq!(f.ms.question, 0.0);
    assert_eq!(f.ms.trajectory, Some(0.0));
    assert_eq!(f.ms.read, Some(0.5));
    assert_eq!(f.components.trajectory, Some(-0.25));
    assert_eq!(f.truncated, vec![Level::Trajectory]);
    assert_eq!(f.truncated().trajectory, Some(0.0));
    // σ̂²_q = (0 - 0)/4 = 0: not negative, not truncated.
    assert_eq!(f.components.question, 0.0);
}

/// A deterministic but irregular panel with several strata.
fn irregular_panel(strata: &[(&str, usize)], t: usize, r: usize) -> String {
    let mut s = String::from("dataset,question,trajectory,read,f1\n");
    let mut x = XorShift(0x9e3779b97f4a7c15);
    for (d, q) in strata {
        for qi in 0..*q {
            for ti in 0..t {
                for ri in 0..r {
                    let v = x.grid(1000) + 0.3 * (qi % 3) as f64;
                    s.push_str(&format!("{d},{d}{qi},{ti},{ri},{v}\n"));
                }
            }
        }
    }
    s
}

#[test]
fn untruncated_components_reproduce_measured_se() {
    let dir = tempfile::tempdir().unwrap();
    for (t, r) in [(3, 5), (2, 1), (1, 4), (1, 1), (4, 2)] {
        let text = irregular_panel(&[("a", 17), ("b", 9)], t, r);
        let panel = load_panel(&write(&dir, "p.csv", &text), &LoadOptions::default()).unwrap();
        let stats: Vec<StratumStats> = panel
            .strata
            .iter()
            .map(StratumStats::from_stratum)
            .collect();
        let rep = analyse("f1", &stats, &[0, 0]).unwrap();
        let audit = Audit::from_report(&rep);
        let spec = DesignSpec::PerStratum {
            questions: vec![("a".into(), 17), ("b".into(), 9)],
            t,
            r,
        };
        // Forecast from raw components (the identity holds before truncation).
        let mut se2 = 0.0;
        for s in &audit.strata {
            let c = s.components;
            let (q, tt, rr) = (s.questions as f64, t as f64, r as f64);
            se2 += c.question / q
                + c.trajectory.unwrap_or(0.0) / (q * tt)
                + c.read.unwrap_or(0.0) / (q * tt * rr);
        }
        let se = se2.sqrt() / 2.0;
        assert!(
            (se - rep.se).abs() < 1e-12,
            "T={t} R={r}: {se} vs {}",
            rep.se
        );
        // And when nothing is truncated, the library forecast agrees too.
        let f = forecast(&audit, &spec, false).unwrap();
        if rep.strata.iter().all(|s| s.fit.truncated.is_empty()) {
            assert!((f.se_nested - rep.se).abs() < 1e-12);
        }
        assert!((f.se_q_only - rep.se).abs() < 1e-12);
    }
}

#[test]
fn t1_and_r1_panels_report_non_estimable_levels() {
    let dir = tempfile::tempdir().unwrap();
    let text = irregular_panel(&[("a", 5)], 3, 1);
    let panel = load_panel(&write(&dir, "p.csv", &text), &LoadOptions::default()).unwrap();
    let stats: Vec<StratumStats> = panel
        .strata
        .iter()
        .map(StratumStats::from_stratum)
        .collect();
    let f = &analyse("f1", &stats, &[0]).unwrap().strata[0].fit;
    assert_eq!(f.ms.read, None);
    assert_eq!(f.components.read, None);
    // With R=1 the trajectory component is MS_t itself (it absorbs the read variance).
    assert_eq!(f.components.trajectory, f.ms.trajectory);
    assert!(f.notes[0].contains("read variance not estimable"));
    assert!(f.components.question.is_finite());
}

#[test]
fn forecast_splits_questions_and_scales() {
    assert_eq!(split_questions(446, &[223, 223]), vec![223, 223]);
    assert_eq!(split_questions(174, &[223, 223]), vec![87, 87]);
    assert_eq!(split_questions(299, &[223, 223]), vec![150, 149]);
    assert_eq!(split_questions(10, &[1, 2]), vec![3, 7]);
    // Hand-made audit: σ²_q = 0.04, σ²_t = 0.02, σ²_r = 0.01 in both strata of 100 questions.
    let text = r#"{"strata":[
        {"name":"a","questions":100,"trajectories":2,"reads":2,"se":0.03,"components":{"question":0.04,"trajectory":0.02,"read":0.01}},
        {"name":"b","questions":100,"trajectories":2,"reads":2,"se":0.04,"components":{"question":0.04,"trajectory":-0.02,"read":0.01}}]}"#;
    let audit = Audit::from_variance_json(text, std::path::Path::new("c.json")).unwrap();
    let f = forecast(&audit, &"50:4:1".parse().unwrap(), false).unwrap();
    // Stratum a: 0.04/25 + 0.02/100 + 0.01/100 = 0.0019; b (σ²_t truncated): 0.0016 + 0.0001 = 0.0017.
    assert!((f.se_nested - (0.0019f64 + 0.0017).sqrt() / 2.0).abs() < 1e-15);
    // Q-only: SE² × 100/25 -> 0.0036, 0.0064.
    assert!((f.se_q_only - (0.0036f64 + 0.0064).sqrt() / 2.0).abs() < 1e-15);
    assert_eq!(
        f.per_stratum,
        vec![("a".to_string(), 25), ("b".to_string(), 25)]
    );
}

#[test]
fn pooled_fit_adds_sums_and_degrees_of_freedom() {
    let dir = tempfile::tempdir().unwrap();
    let text = irregular_panel(&[("a", 6), ("b", 4)], 2, 3);
    let panel = load_panel(&write(&dir, "p.csv", &text), &LoadOptions::default()).unwrap();
    let stats: Vec<StratumStats> = panel
        .strata
        .iter()
        .map(StratumStats::from_stratum)
        .collect();
    let a = AnovaSums::of_stratum(&stats[0]);
    let b = AnovaSums::of_stratum(&stats[1]);
    let rep = analyse("f1", &stats, &[0, 0]).unwrap();
    let p = rep.pooled.unwrap();
    assert_eq!(p.fit.df.question, 10.0 - 2.0);
    assert_eq!(p.fit.df.trajectory, Some(10.0));
    assert_eq!(p.fit.df.read, Some(40.0));
    assert!((p.fit.ms.question - (a.ss_question + b.ss_question) / 8.0).abs() < 1e-12);
    // Additive stratum offsets leave the pooled components unchanged.
    let shifted = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 || !l.starts_with('b') {
                return l.to_string();
            }
            let (head, v) = l.rsplit_once(',').unwrap();
            format!("{head},{}", v.parse::<f64>().unwrap() + 5.0)
        })
        .collect::<Vec<_>>()
        .join("\n");
    let panel2 = load_panel(&write(&dir, "p2.csv", &shifted), &LoadOptions::default()).unwrap();
    let stats2: Vec<StratumStats> = panel2
        .strata
        .iter()
        .map(StratumStats::from_stratum)
        .collect();
    let p2 = analyse("f1", &stats2, &[0, 0]).unwrap().pooled.unwrap();
    assert!((p2.fit.components.question - p.fit.components.question).abs() < 1e-9);
}

#[test]
fn components_are_recovered_on_average_over_simulated_panels() {
    // Gaussian nested panels with known σ²_q = 0.04, σ²_t = 0.02, σ²_r = 0.01 (the moment
    // estimators are unbiased); the mean over panels must sit within 3 Monte Carlo SEs.
    let (panels, q, t, r) = (300, 40, 3, 2);
    let truth = [0.04, 0.02, 0.01];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sim.csv");
    let mut est: Vec<[f64; 3]> = Vec::new();
    for seed in 0..panels {
        let rows = ragstats_core::sim::simulate_normal_panel(
            &[("d".into(), q)],
            t,
            r,
            0.5,
            0.2,
            0.02f64.sqrt(),
            0.1,
            seed,
        );
        let mut buf = Vec::new();
        ragstats_core::sim::io::write_panel_csv(&rows, "f1", &mut buf).unwrap();
        std::fs::write(&path, &buf).unwrap();
        let panel = load_panel(
            &path,
            &LoadOptions {
                arm: Some("single".into()),
                ..LoadOptions::default()
            },
        )
        .unwrap();
        let stats: Vec<StratumStats> = panel
            .strata
            .iter()
            .map(StratumStats::from_stratum)
            .collect();
        let c = analyse("f1", &stats, &[0]).unwrap().strata[0]
            .fit
            .components;
        est.push([c.question, c.trajectory.unwrap(), c.read.unwrap()]);
    }
    for (level, &want) in truth.iter().enumerate() {
        let v: Vec<f64> = est.iter().map(|e| e[level]).collect();
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let mc_se = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt();
        assert!(
            (mean - want).abs() < 3.0 * mc_se,
            "level {level}: mean {mean} vs {want} (MC SE {mc_se})"
        );
    }
}
