use super::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// tests/reference/sequential_cs.py's stream of [−1, 1] contrasts.
fn stream() -> Vec<f64> {
    [0.5, -0.25, 1.0, 0.0, 0.75, 0.25, -0.5, 1.0, 0.5, 0.0].repeat(4)
}

fn one_stratum(bound: Bound) -> Sequence {
    Sequence::new(&[("all".into(), 1.0)], bound, 0.95).unwrap()
}

/// `python3 tests/reference/sequential_cs.py` (numpy, the whole stream at once):
/// t=20: mean 0.325, [-0.46750377095294193, 1]; t=40: [-0.0950406509611175,
/// 0.745040650961117]; two strata: estimate 0.24375, [-0.666860252016123, 1];
/// sub-Gaussian σ 2, horizon 100, 3·x, t=40: [-0.012825683690407, 1.96282568369041].
#[test]
fn the_sequences_are_the_reference_scripts() {
    let mut s = one_stratum(Bound::Range { lo: -1.0, hi: 1.0 });
    for (t, x) in stream().into_iter().enumerate() {
        s.observe(0, x).unwrap();
        let i = s.interval();
        assert_eq!(i.questions, t as u64 + 1);
        if t + 1 == 20 {
            assert!(
                close(i.lower.unwrap(), -0.46750377095294193, 1e-12),
                "{i:?}"
            );
            assert_eq!(i.upper, Some(1.0));
        }
    }
    let i = s.interval();
    assert!(close(i.estimate.unwrap(), 0.325, 1e-15));
    assert!(close(i.lower.unwrap(), -0.0950406509611175, 1e-12), "{i:?}");
    assert!(close(i.upper.unwrap(), 0.745040650961117, 1e-12), "{i:?}");

    let mut two = Sequence::new(
        &[("a".into(), 0.5), ("b".into(), 0.5)],
        Bound::Range { lo: -1.0, hi: 1.0 },
        0.95,
    )
    .unwrap();
    // Before b has a question, b contributes its whole range and there is no estimate.
    two.observe(0, 0.5).unwrap();
    let early = two.interval();
    assert_eq!(early.estimate, None);
    assert!(early.lower.unwrap() <= -0.5 && early.upper.unwrap() >= 0.5);
    let mut two = Sequence::new(
        &[("a".into(), 0.5), ("b".into(), 0.5)],
        Bound::Range { lo: -1.0, hi: 1.0 },
        0.95,
    )
    .unwrap();
    // Interleaved arrival: the order between strata does not matter, only within each.
    let xs = stream();
    for k in 0..20 {
        two.observe(0, xs[k]).unwrap();
        two.observe(1, xs[20 + k] / 2.0).unwrap();
    }
    let i = two.interval();
    assert!(close(i.estimate.unwrap(), 0.24375, 1e-15));
    assert!(close(i.lower.unwrap(), -0.666860252016123, 1e-12), "{i:?}");
    assert!(close(i.upper.unwrap(), 1.0, 1e-15), "{i:?}");

    let mut g = one_stratum(Bound::SubGaussian {
        sigma: 2.0,
        horizon: 100,
    });
    assert_eq!(g.interval().lower, None);
    for x in stream() {
        g.observe(0, 3.0 * x).unwrap();
    }
    let i = g.interval();
    assert!(close(i.lower.unwrap(), -0.012825683690407, 1e-12), "{i:?}");
    assert!(close(i.upper.unwrap(), 1.96282568369041, 1e-12), "{i:?}");
}

/// The rounds panel of tests/reference/sequential_cs.py: stratum a (weight 1/4) the 40
/// values of the stream, b (weight 3/4) the stream then the stream reversed, halved (80).
fn rounds_panel() -> (Vec<f64>, Vec<f64>) {
    let xs = stream();
    let mut b: Vec<f64> = xs.iter().chain(xs.iter().rev()).map(|x| x / 2.0).collect();
    b.shrink_to_fit();
    (xs, b)
}

fn in_rounds(bound: Bound) -> Sequence {
    Sequence::in_rounds(
        &[("a".into(), 0.25), ("b".into(), 0.75)],
        bound,
        0.95,
        &[1, 2],
        40,
    )
    .unwrap()
}

/// `python3 tests/reference/sequential_cs.py` (numpy, PrPl-EB on the round means
/// Y_k = w_a a_k + w_b (b_{2k−1} + b_{2k})/2 at α = 0.05, no union bound):
/// k=20: mean 0.203125, [-0.539113614396347, 0.945363614396347];
/// k=30: [-0.293272508676147, 0.699522508676147];
/// k=40: [-0.170338034386006, 0.576588034386006];
/// sub-Gaussian σ 2 per question mean (σ_Y = 1.17260393995586), 3·x, tuned to K = 40, k=40:
/// mean 0.609375, [0.046632191938812, 1.17211780806119].
/// The arrival b, a, b per round puts a look mid-round after a: it shows the last complete
/// round; arriving stratum by stratum (all of a, then all of b) gives the same rounds.
#[test]
fn rounds_are_the_reference_script() {
    let (a, b) = rounds_panel();
    let want = [
        (20, -0.539113614396347, 0.945363614396347),
        (30, -0.293272508676147, 0.699522508676147),
        (40, -0.170338034386006, 0.576588034386006),
    ];
    let mut s = in_rounds(Bound::Range { lo: -1.0, hi: 1.0 });
    let mut before = s.interval();
    assert_eq!(before.rounds, Some(0));
    assert_eq!(before.estimate, None);
    assert_eq!((before.lower, before.upper), (Some(-1.0), Some(1.0)));
    for k in 0..40 {
        s.observe(1, b[2 * k]).unwrap();
        s.observe(0, a[k]).unwrap();
        // Mid-round: the interval is still the last complete round's.
        let mid = s.interval();
        assert_eq!(mid.rounds, Some(k as u64));
        assert_eq!(mid.questions, 3 * k as u64 + 2);
        assert_eq!(
            (mid.lower, mid.upper, mid.estimate),
            (before.lower, before.upper, before.estimate)
        );
        s.observe(1, b[2 * k + 1]).unwrap();
        before = s.interval();
        assert_eq!(before.rounds, Some(k as u64 + 1));
        if let Some(&(_, l, u)) = want.iter().find(|w| w.0 == k + 1) {
            assert!(
                close(before.estimate.unwrap(), 0.203125, 1e-12),
                "{before:?}"
            );
            assert!(
                close(before.lower.unwrap(), l, 1e-9),
                "k {}: {before:?}",
                k + 1
            );
            assert!(
                close(before.upper.unwrap(), u, 1e-9),
                "k {}: {before:?}",
                k + 1
            );
        }
    }
    let mut by_stratum = in_rounds(Bound::Range { lo: -1.0, hi: 1.0 });
    for &x in &a {
        by_stratum.observe(0, x).unwrap();
    }
    assert_eq!(by_stratum.interval().rounds, Some(0));
    for &x in &b {
        by_stratum.observe(1, x).unwrap();
    }
    let i = by_stratum.interval();
    assert_eq!(
        (i.lower, i.upper, i.rounds),
        (before.lower, before.upper, Some(40))
    );
    assert!(close(i.estimate.unwrap(), before.estimate.unwrap(), 1e-15));

    let mut g = in_rounds(Bound::SubGaussian {
        sigma: 2.0,
        horizon: 80,
    });
    assert_eq!(g.interval().lower, None);
    for k in 0..40 {
        g.observe(0, 3.0 * a[k]).unwrap();
        g.observe(1, 3.0 * b[2 * k]).unwrap();
        g.observe(1, 3.0 * b[2 * k + 1]).unwrap();
    }
    let i = g.interval();
    assert!(close(i.estimate.unwrap(), 0.609375, 1e-12), "{i:?}");
    assert!(close(i.lower.unwrap(), 0.046632191938812, 1e-9), "{i:?}");
    assert!(close(i.upper.unwrap(), 1.17211780806119, 1e-9), "{i:?}");
    // Questions beyond the K rounds a stratum's size allows never complete a round.
    s.observe(0, 0.5).unwrap();
    assert_eq!(s.interval().rounds, Some(40));
    assert_eq!(
        Sequence::in_rounds(&[("a".into(), 1.0)], Bound::Range { lo: 0.0, hi: 1.0 }, 0.95, &[0], 3)
            .unwrap_err()
            .to_string(),
        "strata: rounds of [0] questions do not fit 1 strata: expected one positive number per stratum"
    );
}

/// One stratum in rounds of one question is today's sequence, bit for bit, at every n (the
/// round mean of one question with weight 1 is the question's mean).
#[test]
fn one_stratum_in_rounds_is_the_union_sequence_bit_for_bit() {
    for bound in [
        Bound::Range { lo: -1.0, hi: 1.0 },
        Bound::SubGaussian {
            sigma: 0.7,
            horizon: 600,
        },
    ] {
        let mut rng = crate::rng::KeyedStream::new(9, &[1]);
        let mut union = one_stratum(bound);
        let mut rounds =
            Sequence::in_rounds(&[("all".into(), 1.0)], bound, 0.95, &[1], 600).unwrap();
        for n in 1..=600u64 {
            let x =
                f64::from(u8::from(rng.uniform() < 0.6)) - f64::from(u8::from(rng.uniform() < 0.4));
            union.observe(0, x).unwrap();
            rounds.observe(0, x).unwrap();
            let (u, r) = (union.interval(), rounds.interval());
            assert_eq!(r.rounds, Some(n));
            let bits = |v: Option<f64>| v.map(f64::to_bits);
            assert_eq!(
                (bits(u.estimate), bits(u.lower), bits(u.upper), u.questions),
                (bits(r.estimate), bits(r.lower), bits(r.upper), r.questions),
                "{bound:?}, n {n}"
            );
        }
    }
}

/// The state saved after some questions and restored goes on exactly as one never saved.
#[test]
fn a_saved_sequence_resumes_where_it_stopped() {
    let mut s = one_stratum(Bound::Range { lo: -1.0, hi: 1.0 });
    let xs = stream();
    for &x in &xs[..17] {
        s.observe(0, x).unwrap();
    }
    let saved = serde_json::to_string(&s).unwrap();
    let mut restored: Sequence = serde_json::from_str(&saved).unwrap();
    for &x in &xs[17..] {
        s.observe(0, x).unwrap();
        restored.observe(0, x).unwrap();
    }
    assert_eq!(s, restored);
    assert_eq!(s.interval(), restored.interval());
}

#[test]
fn bad_settings_and_observations_are_refused() {
    let range = Bound::Range { lo: 0.0, hi: 1.0 };
    let e = Sequence::new(&[("a".into(), 1.0)], range, 1.0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "confidence: 1 must be between 0 and 1 (exclusive), e.g. 0.95"
    );
    let e = Sequence::new(&[("a".into(), 0.7)], range, 0.95).unwrap_err();
    assert_eq!(
        e.to_string(),
        "weights: the strata's weights must be positive and sum to 1"
    );
    let e =
        Sequence::new(&[("a".into(), 1.0)], Bound::Range { lo: 1.0, hi: 0.0 }, 0.9).unwrap_err();
    assert_eq!(
        e.to_string(),
        "range: 1,0: expected LO,HI with finite LO < HI, e.g. -1,1"
    );
    let mut s = Sequence::new(&[("hotpotqa".into(), 1.0)], range, 0.95).unwrap();
    assert_eq!(
        s.observe(0, 1.5).unwrap_err().to_string(),
        "hotpotqa: a question's mean of 1.5 lies outside the range [0, 1] the sequence \
         assumes; give the scores' range"
    );
    assert_eq!(
        s.observe(1, 0.5).unwrap_err().to_string(),
        "stratum 1 is not one of the sequence's 1 strata"
    );
    assert_eq!(s.questions(), 0);
}

/// The t interval of `xs` at 95% (t quantile from statrs).
fn t_interval(xs: &[f64]) -> (f64, f64, f64) {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let q = StudentsT::new(0.0, 1.0, n - 1.0)
        .unwrap()
        .inverse_cdf(0.975);
    (
        mean,
        mean - q * (var / n).sqrt(),
        mean + q * (var / n).sqrt(),
    )
}

/// At every n the sequence holds the fixed-n estimate and is no narrower than the fixed-n t
/// interval: anytime validity is paid for in width, never gained.
#[test]
fn the_sequence_holds_the_estimate_and_is_wider_than_the_fixed_n_interval() {
    for (seed, effect) in [(1u64, 0.0), (2, 0.1), (3, 0.3)] {
        let mut rng = crate::rng::KeyedStream::new(seed, &[7]);
        let mut s = one_stratum(Bound::Range { lo: -1.0, hi: 1.0 });
        let mut xs = Vec::new();
        for n in 1..=600usize {
            let p = rng.uniform();
            let q = (p + effect).min(1.0);
            let x = f64::from(u8::from(rng.uniform() < q)) - f64::from(u8::from(rng.uniform() < p));
            s.observe(0, x).unwrap();
            xs.push(x);
            if n >= 10 && n % 5 == 0 {
                let (mean, l, u) = t_interval(&xs);
                let i = s.interval();
                assert!(close(i.estimate.unwrap(), mean, 1e-12));
                let (lo, hi) = (i.lower.unwrap(), i.upper.unwrap());
                assert!(
                    lo <= mean && mean <= hi,
                    "seed {seed}, n {n}: {mean} ∉ [{lo}, {hi}]"
                );
                assert!(
                    hi - lo >= u - l,
                    "seed {seed}, n {n}: {} < {}",
                    hi - lo,
                    u - l
                );
            }
        }
    }
}

/// The simulation at CI size: 400 null panels of 600 questions looked at every 25.
/// The sequence declares at most α + 3 Monte Carlo SEs of them resolved; the Wald interval
/// checked at every look declares far more (about 30% in the simulation).
#[test]
fn monitoring_a_null_comparison_keeps_the_error_below_alpha() {
    let d = MonitoringDesign {
        questions: 600,
        look_every: 25,
        reads: 1,
        level: 0.95,
        effect: 0.0,
        panels: 400,
        seed: 50,
        strata: 1,
        unequal: false,
        rule: StrataRule::Union,
    };
    let r = monitoring_error(&d).unwrap();
    println!("{r:?}");
    assert!(
        r.sequence_resolved <= 0.05 + 3.0 * r.monte_carlo_se,
        "{r:?}"
    );
    assert!(r.wald_resolved > 0.05 + 3.0 * r.monte_carlo_se, "{r:?}");
    assert!(
        r.wald_resolved > 2.0 * r.sequence_resolved.max(0.05),
        "{r:?}"
    );
}

/// With a real effect (B right 20 points more often) the sequence stops long before 600.
#[test]
fn with_a_real_effect_the_sequence_stops_early() {
    let d = MonitoringDesign {
        questions: 600,
        look_every: 25,
        reads: 1,
        level: 0.95,
        effect: 0.2,
        panels: 100,
        seed: 51,
        strata: 1,
        unequal: false,
        rule: StrataRule::Union,
    };
    let r = monitoring_error(&d).unwrap();
    println!("{r:?}");
    assert!(r.sequence_resolved > 0.95, "{r:?}");
    assert!(r.sequence_mean_stop < 300.0, "{r:?}");
}

/// The table of docs/COVERAGE.md, "Sequential monitoring": 10,000 simulated panels of 600
/// questions per row (`cargo test -p ragstats-core --lib sequential::tests::monitoring_table
/// -- --ignored --nocapture`; a few seconds).
#[test]
#[ignore = "prints docs/COVERAGE.md's table; run by hand"]
fn monitoring_table() {
    println!(
        "| look every | reads | effect | sequence resolved | Wald resolved | MC SE | mean stop |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (k, reads, effect) in [
        (1, 1, 0.0),
        (5, 1, 0.0),
        (25, 1, 0.0),
        (100, 1, 0.0),
        (600, 1, 0.0),
        (25, 4, 0.0),
        (25, 1, 0.05),
        (25, 1, 0.1),
        (25, 1, 0.2),
    ] {
        let r = monitoring_error(&MonitoringDesign {
            questions: 600,
            look_every: k,
            reads,
            level: 0.95,
            effect,
            panels: 10_000,
            seed: 50,
            strata: 1,
            unequal: false,
            rule: StrataRule::Union,
        })
        .unwrap();
        println!(
            "| {k} | {reads} | {effect} | {:.4} | {:.4} | {:.4} | {:.1} |",
            r.sequence_resolved, r.wald_resolved, r.monte_carlo_se, r.sequence_mean_stop
        );
    }
}

fn strata_design(
    strata: u32,
    unequal: bool,
    rule: StrataRule,
    effect: f64,
    panels: u32,
) -> MonitoringDesign {
    MonitoringDesign {
        questions: 600,
        look_every: 25,
        reads: 1,
        level: 0.95,
        effect,
        panels,
        seed: 52,
        strata,
        unequal,
        rule,
    }
}

/// Null panels of 600 questions in 2 equal and 4 unequal strata (sizes 60, 120, 180, 240:
/// rounds of 1, 2, 3, 4 questions), arriving randomly interleaved and looked at every 25:
/// the sequence in rounds declares at most α + 3 Monte Carlo SEs resolved, as the union
/// bound does. With an effect of 0.2, equal strata's rounds stop sooner than the union
/// bound and are narrower at the last look (the width ratio to the stratified Wald
/// interval); the unequal strata's 60 rounds are wider than the union bound, as the design
/// rule [`RoundPlan::beats_union`] predicts (the default then keeps the union bound).
#[test]
fn rounds_keep_the_error_below_alpha_and_stop_sooner_than_the_union_bound() {
    for (strata, unequal) in [(2, false), (4, true)] {
        assert_eq!(
            strata_design(4, true, StrataRule::Rounds, 0.0, 1).sizes(),
            [60, 120, 180, 240]
        );
        let r = monitoring_error(&strata_design(
            strata,
            unequal,
            StrataRule::Rounds,
            0.0,
            400,
        ))
        .unwrap();
        println!("{strata} strata, rounds, null: {r:?}");
        assert!(
            r.sequence_resolved <= 0.05 + 3.0 * r.monte_carlo_se,
            "{r:?}"
        );
        assert!(r.wald_resolved > 0.05 + 3.0 * r.monte_carlo_se, "{r:?}");
        let rounds = monitoring_error(&strata_design(
            strata,
            unequal,
            StrataRule::Rounds,
            0.2,
            100,
        ))
        .unwrap();
        let union =
            monitoring_error(&strata_design(strata, unequal, StrataRule::Union, 0.2, 100)).unwrap();
        println!("{strata} strata, effect 0.2: rounds {rounds:?}\nunion {union:?}");
        // The design rule (RoundPlan::beats_union) predicts which is narrower.
        let sizes = strata_design(strata, unequal, StrataRule::Rounds, 0.0, 1).sizes();
        let w = vec![1.0 / f64::from(strata); sizes.len()];
        let plan = RoundPlan::of_sizes(&sizes).unwrap();
        if plan.beats_union(&sizes, &w, 0.05) {
            assert!(
                rounds.sequence_mean_stop < union.sequence_mean_stop,
                "{rounds:?} {union:?}"
            );
            assert!(
                rounds.width_ratio < union.width_ratio,
                "{rounds:?} {union:?}"
            );
        } else {
            assert!(
                rounds.width_ratio > union.width_ratio,
                "{rounds:?} {union:?}"
            );
        }
        assert!(rounds.width_ratio > 1.0, "{rounds:?}");
    }
}

/// The strata rows of docs/COVERAGE.md, "Sequential monitoring": 10,000 simulated panels
/// of 600 questions per row (`cargo test -p ragstats-core --lib
/// sequential::tests::strata_monitoring_table -- --ignored --nocapture`).
#[test]
#[ignore = "prints docs/COVERAGE.md's strata table; run by hand"]
fn strata_monitoring_table() {
    println!(
        "| strata | sizes | combined | effect | sequence resolved | Wald resolved | MC SE | mean stop | width / Wald |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (strata, unequal) in [(2, false), (2, true), (4, false), (4, true)] {
        for effect in [0.0, 0.1, 0.2] {
            for rule in [StrataRule::Rounds, StrataRule::Union] {
                let d = MonitoringDesign {
                    panels: 10_000,
                    seed: 50,
                    ..strata_design(strata, unequal, rule, effect, 1)
                };
                let r = monitoring_error(&d).unwrap();
                let sizes: Vec<String> = d.sizes().iter().map(u64::to_string).collect();
                println!(
                    "| {strata} | {} | {} | {effect} | {:.4} | {:.4} | {:.4} | {:.1} | {:.2} |",
                    sizes.join(" + "),
                    rule.word(),
                    r.sequence_resolved,
                    r.wald_resolved,
                    r.monte_carlo_se,
                    r.sequence_mean_stop,
                    r.width_ratio
                );
            }
        }
    }
}
