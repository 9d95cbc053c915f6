//! `stats bootstrap` on unbalanced panels (issue #12): a replicate's REML refit equals lme4 on
//! that replicate's question multiset, and the bootstrap SE agrees with R's `boot` on the
//! same statistic. Fixtures and R scripts: tests/fixtures/reml_boot (README there).

// The lme4 numbers are copied digit for digit from the R output (%.17g).
#![allow(clippy::excessive_precision)]

use crate::common;

use std::path::{Path, PathBuf};

use ragstats_core::bootstrap::replicates::Replicates;
use ragstats_core::bootstrap::stratified::{Bootstrap, BootstrapSpec};
use ragstats_core::components::reml::{fit, fit_resampled, NestedStratum};
use ragstats_core::components::variance::nested_stratum;
use ragstats_core::panel::{load_panel, LoadOptions, Panel};
use ragstats_core::resample::counts::draw_counts;
use ragstats_core::resample::CpuBackend;
use ragstats_core::rng::blocks::Generator;

const SEED: u64 = 1;
const REPLICATE: u32 = 7;

fn reml_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reml")
        .join(name)
}

fn boot_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reml_boot")
        .join(name)
}

fn load(path: &Path) -> Panel {
    load_panel(
        path,
        &LoadOptions {
            allow_unbalanced: true,
            ..LoadOptions::default()
        },
    )
    .unwrap()
}

/// Question draw counts of replicate `r` of `stats bootstrap --seed SEED`, per stratum.
fn counts(panel: &Panel, r: u32) -> Vec<Vec<u32>> {
    panel
        .strata
        .iter()
        .enumerate()
        .map(|(s, st)| {
            let mut c = vec![0u32; st.q()];
            draw_counts(Generator::Scalar, SEED, r, s as u32, &mut c);
            c
        })
        .collect()
}

/// The replicate's question multiset as a panel: copy c of question q is question `q#c`
/// (an independent question), trajectories and reads numbered by position, values written
/// so that they read back exactly.
fn multiset_csv(panel: &Panel, counts: &[Vec<u32>]) -> String {
    let mut out = String::from("dataset,question,trajectory,read,score\n");
    for (s, c) in panel.strata.iter().zip(counts) {
        for (q, &k) in c.iter().enumerate() {
            for copy in 0..k {
                for (t, reads) in s.trajectories_of(q).iter().enumerate() {
                    for (r, v) in reads.iter().enumerate() {
                        out.push_str(&format!(
                            "{},{}#{copy},{t},{r},{v:?}\n",
                            s.name, s.questions[q]
                        ));
                    }
                }
            }
        }
    }
    out
}

/// The committed multiset fixtures are exactly replicate REPLICATE's draws (set
/// STATS_WRITE_FIXTURES=1 to write them again).
#[test]
fn multiset_fixtures_are_the_replicates_draws() {
    for (source, multiset) in [
        ("scattered_missing.csv", "scattered_missing_rep7.csv"),
        ("pooled.csv", "pooled_rep7.csv"),
    ] {
        let panel = load(&reml_fixture(source));
        let text = multiset_csv(&panel, &counts(&panel, REPLICATE));
        let path = boot_fixture(multiset);
        if std::env::var_os("STATS_WRITE_FIXTURES").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{multiset}");
    }
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-6 * want.abs(),
        "{what}: {got} vs lme4 {want} (relative {:.2e})",
        (got - want).abs() / want.abs()
    );
}

/// lme4 on the multiset fixtures (tests/fixtures/reml_boot/replicate.out, "polished"):
/// (file, scope, σ²_q, σ²_t, σ²_r).
const LME4_REPLICATE: &[(&str, &str, f64, f64, f64)] = &[
    (
        "scattered_missing_rep7.csv",
        "d1",
        0.013958257020601385,
        0.0088140647459902365,
        0.00469079522159376,
    ),
    (
        "pooled_rep7.csv",
        "pooled",
        0.064431884371305925,
        0.0084214081973832417,
        0.0067171884798191755,
    ),
    (
        "pooled_rep7.csv",
        "hotpot",
        0.041732733350195929,
        0.0031486216340947484,
        0.01114530424103536,
    ),
    (
        "pooled_rep7.csv",
        "musique",
        0.093385521238015717,
        0.015175924165292695,
        0.0026751930275572514,
    ),
];

/// Replicate 7's statistics: from `fit_resampled` on the original strata with its draw
/// counts (warm start from the full-sample fit, as the bootstrap runs it), from a cold fit of
/// the written-out multiset, and from the replicates file `stats bootstrap` writes — all equal
/// to lme4 on the multiset.
#[test]
fn a_replicates_refit_equals_lme4_on_its_question_multiset() {
    let mut checked = 0;
    for (source, multiset) in [
        ("scattered_missing.csv", "scattered_missing_rep7.csv"),
        ("pooled.csv", "pooled_rep7.csv"),
    ] {
        let panel = load(&reml_fixture(source));
        let nested: Vec<NestedStratum> = panel
            .strata
            .iter()
            .map(|s| nested_stratum(s).unwrap())
            .collect();
        let c = counts(&panel, REPLICATE);
        let cref: Vec<&[u32]> = c.iter().map(Vec::as_slice).collect();
        let copy = load(&boot_fixture(multiset));
        let copies: Vec<NestedStratum> = copy
            .strata
            .iter()
            .map(|s| nested_stratum(s).unwrap())
            .collect();
        // The bootstrap's own numbers for replicate 7.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rep7.bin");
        common::stats()
            .args([
                "bootstrap",
                reml_fixture(source).to_str().unwrap(),
                "--components",
                "--replicates-range",
                "7..8",
                "--replicates-out",
                file.to_str().unwrap(),
            ])
            .assert()
            .success();
        let reps = Replicates::read(&file).unwrap();
        let names = &reps.header.plan.statistics;
        let stat = |name: &str| reps.values[names.iter().position(|n| n == name).unwrap()];
        for &(f, scope, q, t, r) in LME4_REPLICATE.iter().filter(|x| x.0 == multiset) {
            checked += 1;
            let (warm, cold) = if scope == "pooled" {
                let all: Vec<&NestedStratum> = nested.iter().collect();
                let start = fit(&all).unwrap().theta;
                let copies: Vec<&NestedStratum> = copies.iter().collect();
                (
                    fit_resampled(&all, &cref, Some(start)).unwrap(),
                    fit(&copies).unwrap(),
                )
            } else {
                let d = panel.strata.iter().position(|s| s.name == scope).unwrap();
                let start = fit(&[&nested[d]]).unwrap().theta;
                (
                    fit_resampled(&[&nested[d]], &[&c[d]], Some(start)).unwrap(),
                    fit(&[&copies[d]]).unwrap(),
                )
            };
            for (label, v) in [("warm", &warm), ("cold multiset", &cold)] {
                let what = format!("{f} {scope} {label}");
                close(v.components.question, q, &format!("{what} question"));
                close(
                    v.components.trajectory.unwrap(),
                    t,
                    &format!("{what} trajectory"),
                );
                close(v.components.read.unwrap(), r, &format!("{what} read"));
            }
            for (level, want) in [("question", q), ("trajectory", t), ("read", r)] {
                close(
                    stat(&format!("component[{scope}].{level}")),
                    want,
                    &format!("{f} {scope} replicates file {level}"),
                );
            }
        }
    }
    assert_eq!(checked, LME4_REPLICATE.len());
}

/// R's `boot` (tests/fixtures/reml_boot/boot.out, B = 2000): (file, statistic, SE, kurtosis
/// of the replicates).
const R_BOOT: &[(&str, &str, f64, f64)] = &[
    ("scattered_missing.csv", "estimate", 0.03367575355, 2.926),
    (
        "scattered_missing.csv",
        "component[d1].question",
        0.006835518212,
        3.157,
    ),
    (
        "scattered_missing.csv",
        "component[d1].trajectory",
        0.001331240178,
        3.093,
    ),
    (
        "scattered_missing.csv",
        "component[d1].read",
        0.0004114308329,
        3.078,
    ),
    ("pooled.csv", "estimate", 0.04942038927, 3.371),
    (
        "pooled.csv",
        "component[hotpot].question",
        0.01700645197,
        2.849,
    ),
    (
        "pooled.csv",
        "component[hotpot].trajectory",
        0.002508254018,
        2.741,
    ),
    (
        "pooled.csv",
        "component[hotpot].read",
        0.001301391359,
        2.824,
    ),
    (
        "pooled.csv",
        "component[musique].question",
        0.0566758087,
        2.372,
    ),
    (
        "pooled.csv",
        "component[musique].trajectory",
        0.009327786753,
        3.107,
    ),
    (
        "pooled.csv",
        "component[musique].read",
        0.0005393228189,
        3.65,
    ),
    (
        "pooled.csv",
        "component[pooled].question",
        0.02593424171,
        2.657,
    ),
    (
        "pooled.csv",
        "component[pooled].trajectory",
        0.003229747756,
        3.308,
    ),
    (
        "pooled.csv",
        "component[pooled].read",
        0.000695225821,
        2.917,
    ),
];

/// The bootstrap SE (standard deviation of 2000 replicates) of the estimate and of every
/// refitted component agrees with R's `boot` on the same statistic.
///
/// Tolerance: the two SEs come from independent Monte Carlo samples of B = 2000 each. The
/// relative standard error of a standard deviation estimated from B draws with kurtosis κ
/// is sqrt((κ − 1)/(4B)) (delta method on Var(s²) = σ⁴(κ − 1)/B), so their relative
/// difference has standard deviation sqrt(2 (κ − 1)/(4B)) (≈ 0.023 at κ = 3); the test
/// allows 4 of those (κ from R's replicates), a false alarm about once in 16,000 per
/// statistic. A refit that systematically differed (e.g. ANOVA truncation instead of REML
/// on the boundary, or copies of a question fitted as one question) moves these SEs by more.
#[test]
fn bootstrap_se_agrees_with_r_boot() {
    const B: u32 = 2000;
    let mut checked = 0;
    for file in ["scattered_missing.csv", "pooled.csv"] {
        let panel = load(&reml_fixture(file));
        let boot = Bootstrap::from_panel(
            &panel,
            BootstrapSpec {
                components: true,
                ..BootstrapSpec::default()
            },
        )
        .unwrap();
        assert!(boot.plan.unbalanced);
        let values = boot.run(&CpuBackend::new(), SEED, 0..B, &|_| {}).unwrap();
        let names = &boot.plan.statistics;
        let n = names.len();
        for &(_, name, se_r, kurtosis) in R_BOOT.iter().filter(|x| x.0 == file) {
            let i = names.iter().position(|x| x == name).unwrap();
            let col: Vec<f64> = values.iter().skip(i).step_by(n).copied().collect();
            assert_eq!(col.len(), B as usize);
            assert!(col.iter().all(|v| v.is_finite()), "{file} {name}");
            let mean = col.iter().sum::<f64>() / f64::from(B);
            let se =
                (col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / f64::from(B - 1)).sqrt();
            let tol = 4.0 * (2.0 * (kurtosis - 1.0) / (4.0 * f64::from(B))).sqrt();
            let rel = se / se_r - 1.0;
            assert!(
                rel.abs() <= tol,
                "{file} {name}: SE {se} vs boot {se_r} (relative {rel:.4}, tolerance {tol:.4})"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, R_BOOT.len());
}

/// On an unbalanced panel, shards merge into the single run byte for byte (the refits depend
/// only on the replicate number), BCa's jackknife refits give finite accelerations, and
/// the output names the method and the min / mean / max design of each unbalanced stratum.
#[test]
fn unbalanced_shards_merge_into_the_single_run_and_name_the_method() {
    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let panel = reml_fixture("pooled.csv");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "bootstrap",
            panel.to_str().unwrap(),
            "--components",
            "--design",
            "100:2:1",
            "--method",
            "bca",
        ];
        args.extend_from_slice(extra);
        common::stats().args(&args).output().unwrap()
    };
    let (all, a, b, m) = (path("all.bin"), path("a.bin"), path("b.bin"), path("m.bin"));
    let single = run(&["--replicates", "300", "--replicates-out", &all]);
    assert!(single.status.success());
    assert!(
        run(&["--replicates-range", "0..120", "--replicates-out", &a])
            .status
            .success()
    );
    assert!(
        run(&["--replicates-range", "120..300", "--replicates-out", &b])
            .status
            .success()
    );
    common::stats()
        .args(["merge", &b, &a, "--out", &m])
        .assert()
        .success();
    assert_eq!(std::fs::read(&all).unwrap(), std::fs::read(&m).unwrap());
    let reps = Replicates::read(Path::new(&all)).unwrap();
    assert!(reps.header.plan.unbalanced);
    let accel = reps.header.acceleration.as_ref().unwrap();
    assert!(accel.iter().all(|a| a.is_finite()), "{accel:?}");
    let text = String::from_utf8(single.stdout).unwrap();
    assert!(
        text.contains("unbalanced hotpot: 15 questions; trajectories per question min 2 mean 2.933 max 3; reads per trajectory min 1 mean 1.955 max 2"),
        "{text}"
    );
    assert!(
        text.contains("hotpot   REML    question    0.039100"),
        "{text}"
    );
    assert!(
        text.contains("pooled   REML    read        0.004412"),
        "{text}"
    );
}
