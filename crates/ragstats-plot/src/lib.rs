//! `ragstats-plot`: the analyses' results (the structs a command's `--format json` serialises)
//! drawn as SVG, after the figures of the two papers.
//!
//! Every figure is an x–y chart or a bar chart of [`chart`]: `plotters` draws the axes and
//! the title; every data mark carries its value in `data-` attributes (`data-x`/`data-y`
//! and `data-ci-low`/`data-ci-high` on points, lists on lines, `data-value` on bars), so a
//! test can check that the figure shows exactly the command's numbers. The output is
//! deterministic: the same result gives the same bytes.

// A library never prints: progress and notes reach the front end through return values
// and callbacks. (Tests may say why they skip.)
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod chart;

use std::collections::BTreeSet;

use ragstats_core::allocation::allocate::AllocateReport;
use ragstats_core::allocation::one_read::OneReadReport;
use ragstats_core::allocation::subsets::SubsetReport;
use ragstats_core::compare::CompareReport;
use ragstats_core::components::consistency::{Disagreement, GroupPrecision, SeRatio};
use ragstats_core::components::forecast::{Audit, Forecast, ForecastReport};
use ragstats_core::components::levels::{Level, PerLevel};
use ragstats_core::components::variance::VarianceReport;
use ragstats_core::correlate::{Method, PairResult};
use ragstats_core::mcq::positions::PositionRow;
use ragstats_core::mcq::score::LevelRow;
use ragstats_core::Result;

use chart::{Bar, BarChart, BarSeries, Cell, Heatmap, Mark, Pt, Series, XyChart};

/// What the caption line under a figure names: the panel file (and outcome), and the
/// bootstrap's seed and replicate count where the figure has intervals.
#[derive(Debug, Clone, Default)]
pub struct Caption {
    pub panel: String,
    pub outcome: String,
    /// (seed, replicates) of the bootstrap behind the intervals.
    pub bootstrap: Option<(u64, u64)>,
}

impl Caption {
    /// The caption of an MCQ figure of `panel` (one results file, or `A vs B`): its outcome
    /// (model and prompt) and the item bootstrap of `boot`.
    pub fn for_mcq(
        panel: String,
        outcome: String,
        boot: &ragstats_core::analyses::McqBootSettings,
    ) -> Caption {
        Caption {
            panel,
            outcome,
            bootstrap: Some((boot.resample.seed, u64::from(boot.resample.replicates))),
        }
    }

    /// The caption of a correlate figure of `table`: the bootstrap when `settings` ran one.
    pub fn for_correlate(
        table: &str,
        settings: &ragstats_core::analyses::CorrelateSettings,
    ) -> Caption {
        let r = &settings.resample;
        Caption {
            panel: table.to_string(),
            outcome: String::new(),
            bootstrap: (r.replicates > 0).then(|| (r.seed, u64::from(r.replicates))),
        }
    }

    /// The caption of a figure of `panel` read with `settings` (its outcome as the settings
    /// name it: the metric, the contrast or the arm); `bootstrap` is (seed, replicates).
    pub fn for_panel(
        panel: &str,
        settings: &ragstats_core::import::PanelSettings,
        bootstrap: Option<(u64, u64)>,
    ) -> Caption {
        let mut outcome = settings.metric.clone().unwrap_or_default();
        for (what, v) in [("contrast", &settings.contrast), ("arm", &settings.arm)] {
            if let Some(v) = v {
                if !outcome.is_empty() {
                    outcome.push_str(", ");
                }
                outcome.push_str(&format!("{what} {v}"));
            }
        }
        Caption {
            panel: panel.to_string(),
            outcome,
            bootstrap,
        }
    }

    /// `PANEL · OUTCOME · seed S, B bootstrap replicates` (or `no resampling`).
    pub fn line(&self) -> String {
        let boot = match self.bootstrap {
            Some((seed, b)) => format!("seed {seed}, {b} bootstrap replicates"),
            None => "no resampling".to_string(),
        };
        if self.outcome.is_empty() {
            format!("{} · {boot}", self.panel)
        } else {
            format!("{} · {} · {boot}", self.panel, self.outcome)
        }
    }
}

/// Total question counts for the forecast curves: `points` evenly spaced from half the
/// smallest to 1.5 times the largest design Q (at least `min_q`), with the designs' own Q
/// included so that each design marker lies on its curve.
pub fn q_grid(design_q: &[usize], min_q: usize, points: usize) -> Vec<usize> {
    let (Some(&lo), Some(&hi)) = (design_q.iter().min(), design_q.iter().max()) else {
        return Vec::new();
    };
    let a = (lo / 2).max(min_q).max(1) as f64;
    let b = (hi + hi / 2).max(min_q) as f64;
    let mut set: BTreeSet<usize> = design_q.iter().copied().collect();
    let n = points.max(2);
    for i in 0..n {
        set.insert((a + (b - a) * i as f64 / (n - 1) as f64).round() as usize);
    }
    set.into_iter().collect()
}

/// Points on each forecast curve (besides the designs' own Q).
const CURVE_POINTS: usize = 25;

/// The figure of the forecast analysis: [`forecast`] with its curves computed from `audit`
/// over [`q_grid`] for each design's (T, R), and the report's designs as points.
///
/// # Errors
/// As [`forecast`].
pub fn forecast_report(
    audit: &Audit,
    report: &ForecastReport,
    caption: &Caption,
) -> Result<String> {
    let rows: Vec<(Forecast, Option<f64>)> = report
        .designs
        .iter()
        .map(|r| (r.forecast.clone(), r.se_measured))
        .collect();
    forecast_curves(audit, report.pooled, &rows, caption)
}

/// [`forecast`] of `rows` (a forecast and its measured SE) with the curves of `audit`
/// (`pooled`: from the pooled components) for each (T, R) among them.
///
/// # Errors
/// As [`forecast`].
pub fn forecast_curves(
    audit: &Audit,
    pooled: bool,
    rows: &[(Forecast, Option<f64>)],
    caption: &Caption,
) -> Result<String> {
    let qs: Vec<usize> = rows.iter().map(|(f, _)| f.questions).collect();
    let mut curve = Vec::new();
    let mut shapes: Vec<(usize, usize)> = Vec::new();
    for (f, _) in rows {
        if shapes.contains(&(f.trajectories, f.reads)) {
            continue;
        }
        shapes.push((f.trajectories, f.reads));
        for q in q_grid(&qs, audit.strata.len(), CURVE_POINTS) {
            let spec = format!("{q}:{}:{}", f.trajectories, f.reads).parse()?;
            // A Q too small to give every stratum a question has no forecast: the curve
            // starts above it.
            if let Ok(c) = ragstats_core::components::forecast::forecast(audit, &spec, pooled) {
                curve.push(c);
            }
        }
    }
    forecast(rows, &curve, caption)
}

/// `Q:T:R` of a forecast.
fn design(f: &Forecast) -> String {
    format!("{}:{}:{}", f.questions, f.trajectories, f.reads)
}

/// SE against Q (budget paper Fig. 3): a nested-forecast curve for each (T, R) of the
/// designs and the Q-only curve over `curve` (forecasts at the Q of [`q_grid`], Q split in
/// the audit's proportions), each design's nested and Q-only forecast as a point, and the
/// measured SE of the designs that have one.
///
/// `designs` are the command's rows: a forecast and its measured SE.
///
/// # Errors
/// When nothing is finite or drawing fails.
pub fn forecast(
    designs: &[(Forecast, Option<f64>)],
    curve: &[Forecast],
    caption: &Caption,
) -> Result<String> {
    let mut series = Vec::new();
    let mut shapes: Vec<(usize, usize)> = Vec::new();
    for (f, _) in designs {
        if !shapes.contains(&(f.trajectories, f.reads)) {
            shapes.push((f.trajectories, f.reads));
        }
    }
    for &(t, r) in &shapes {
        let mut pts: Vec<Pt> = curve
            .iter()
            .filter(|f| (f.trajectories, f.reads) == (t, r))
            .map(|f| Pt::new(f.questions as f64, f.se_nested))
            .collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        series.push(Series {
            name: format!("nested, T={t} R={r}"),
            mark: Mark::Line { dashed: false },
            points: pts,
        });
    }
    let mut q_only: Vec<Pt> = Vec::new();
    for f in curve {
        if !q_only.iter().any(|p| p.x == f.questions as f64) {
            q_only.push(Pt::new(f.questions as f64, f.se_q_only));
        }
    }
    q_only.sort_by(|a, b| a.x.total_cmp(&b.x));
    series.push(Series {
        name: "Q-only".into(),
        mark: Mark::Line { dashed: true },
        points: q_only,
    });
    let at = |v: &dyn Fn(&Forecast, Option<f64>) -> Option<f64>| -> Vec<Pt> {
        designs
            .iter()
            .filter_map(|(f, m)| {
                v(f, *m).map(|y| Pt {
                    label: Some(design(f)),
                    ..Pt::new(f.questions as f64, y)
                })
            })
            .collect()
    };
    series.push(Series {
        name: "designs: nested".into(),
        mark: Mark::Points,
        points: at(&|f, _| Some(f.se_nested)),
    });
    series.push(Series {
        name: "designs: Q-only".into(),
        mark: Mark::Points,
        points: at(&|f, _| Some(f.se_q_only)),
    });
    let measured = at(&|_, m| m);
    if !measured.is_empty() {
        series.push(Series {
            name: "measured".into(),
            mark: Mark::Points,
            points: measured,
        });
    }
    chart::xy(&XyChart {
        title: "Forecast SE against questions Q".into(),
        x_desc: "questions Q (total over strata)".into(),
        y_desc: "SE of the estimate (outcome units)".into(),
        caption: caption.line(),
        series,
        y_floor: Some(0.0),
    })
}

/// SE against the trajectory count t′ of a depth panel's subsets (budget paper Fig. 3,
/// right): for each read count r′ the mean measured SE over the subsets with its bootstrap
/// interval and the nested forecast, and the Q-only forecast (one value: it ignores t′, r′).
///
/// # Errors
/// When nothing is finite or drawing fails.
pub fn subsets(report: &SubsetReport, caption: &Caption) -> Result<String> {
    let mut reads: Vec<usize> = report.configurations.iter().map(|c| c.reads).collect();
    reads.sort_unstable();
    reads.dedup();
    let mut series = Vec::new();
    for &r in &reads {
        let rows: Vec<_> = report
            .configurations
            .iter()
            .filter(|c| c.reads == r)
            .collect();
        series.push(Series {
            name: format!("measured, r'={r}"),
            mark: Mark::Points,
            points: rows
                .iter()
                .map(|c| Pt {
                    ci: Some(c.se_measured.ci.0),
                    label: Some(format!("t'={} r'={r}", c.trajectories)),
                    ..Pt::new(c.trajectories as f64, c.se_measured.estimate)
                })
                .collect(),
        });
        series.push(Series {
            name: format!("nested, r'={r}"),
            mark: Mark::Line { dashed: false },
            points: rows
                .iter()
                .map(|c| Pt::new(c.trajectories as f64, c.se_nested))
                .collect(),
        });
    }
    let mut q_only: Vec<Pt> = Vec::new();
    for c in &report.configurations {
        if !q_only.iter().any(|p| p.x == c.trajectories as f64) {
            q_only.push(Pt::new(c.trajectories as f64, c.se_q_only));
        }
    }
    series.push(Series {
        name: "Q-only".into(),
        mark: Mark::Line { dashed: true },
        points: q_only,
    });
    chart::xy(&XyChart {
        title: "Subset SE against trajectories t'".into(),
        x_desc: "trajectories per question t'".into(),
        y_desc: "SE of the estimate (outcome units)".into(),
        caption: caption.line(),
        series,
        y_floor: Some(0.0),
    })
}

/// The value of `level` in `p`, 0 when the level is not estimable.
fn level(p: &PerLevel, l: Level) -> f64 {
    p.get(l).unwrap_or(0.0)
}

/// Component shares (budget paper Fig. 5, left): stacked bars of the question, trajectory
/// and read shares of the single-observation variance for each stratum and the pooled fit,
/// then of SE² at each stratum's observed design.
///
/// # Errors
/// When nothing is finite or drawing fails.
pub fn variance(report: &VarianceReport, caption: &Caption) -> Result<String> {
    let mut groups: Vec<String> = report.strata.iter().map(|s| s.name.clone()).collect();
    let mut shares: Vec<Option<&PerLevel>> = report
        .strata
        .iter()
        .map(|s| s.share_single.as_ref())
        .collect();
    if let Some(p) = &report.pooled {
        groups.push("pooled".into());
        shares.push(p.share_single.as_ref());
    }
    for s in &report.strata {
        groups.push(format!("{} (SE²)", s.name));
        shares.push(s.share_se2.as_ref());
    }
    // Undefined shares (an outcome that does not vary: 0/0) get no bar and say so.
    for (g, p) in groups.iter_mut().zip(&shares) {
        if p.is_none() {
            g.push_str(": undefined");
        }
    }
    let series = Level::ALL
        .iter()
        .map(|&l| BarSeries {
            name: l.name().to_string(),
            bars: shares
                .iter()
                .map(|p| {
                    p.map(|p| Bar {
                        value: level(p, l),
                        ci: None,
                    })
                })
                .collect(),
        })
        .collect();
    chart::bars(&BarChart {
        title: "Variance component shares".into(),
        y_desc: "share of single-observation variance (of SE² where marked)".into(),
        caption: caption.line(),
        groups,
        series,
        stacked: true,
    })
}

/// One-read efficiency loss (budget paper Fig. 5, right): the fixed-T loss per stratum and
/// combined, and the fixed-Q loss per stratum and pooled, in percent, each with its
/// bootstrap interval. The last group holds the combined fixed-T and the pooled fixed-Q loss.
///
/// # Errors
/// When nothing is finite or drawing fails.
pub fn efficiency(report: &OneReadReport, caption: &Caption) -> Result<String> {
    let mut groups: Vec<String> = report.strata.iter().map(|s| s.name.clone()).collect();
    groups.push("all strata".into());
    let mut fixed_t: Vec<Option<Bar>> = report
        .strata
        .iter()
        .map(|s| {
            s.fixed_t.as_ref().map(|l| Bar {
                value: l.loss_percent,
                ci: s.fixed_t_loss_ci.map(|c| c.0),
            })
        })
        .collect();
    fixed_t.push(report.combined.fixed_t.as_ref().map(|l| Bar {
        value: l.loss_percent,
        ci: report.combined.loss_ci.map(|c| c.0),
    }));
    let fixed_q_of = |s: &ragstats_core::allocation::one_read::ScopeResult| {
        s.efficiency.as_ref().map(|e| Bar {
            value: e.loss_percent,
            ci: s.loss_ci.map(|c| c.0),
        })
    };
    let mut fixed_q: Vec<Option<Bar>> = report.strata.iter().map(fixed_q_of).collect();
    fixed_q.push(report.pooled.as_ref().and_then(fixed_q_of));
    chart::bars(&BarChart {
        title: "One-read efficiency loss".into(),
        y_desc: "loss of R = 1 vs the best R (%)".into(),
        caption: caption.line(),
        groups,
        series: vec![
            BarSeries {
                name: "fixed T (combined)".into(),
                bars: fixed_t,
            },
            BarSeries {
                name: "fixed Q (pooled)".into(),
                bars: fixed_q,
            },
        ],
        stacked: false,
    })
}

/// Variance × fee ratios across the search-price sweep (budget paper Fig. 4): for each pair
/// A/B the ratio (SE²_A·fees_A)/(SE²_B·fees_B) at each search price with its bootstrap band;
/// a resolved ratio (interval excluding 1) is a filled marker, an unresolved one hollow; a
/// dashed line marks ratio 1.
///
/// # Errors
/// When nothing is finite or drawing fails.
pub fn allocate(report: &AllocateReport, caption: &Caption) -> Result<String> {
    let prices = &report.search_prices;
    let mut series: Vec<Series> = report
        .pairs
        .iter()
        .map(|p| Series {
            name: format!("{}/{}", p.a, p.b),
            mark: Mark::Band,
            points: prices
                .iter()
                .zip(&p.var_x_fees_ratio)
                .map(|(&x, c)| Pt {
                    ci: Some(c.ci.0),
                    resolved: Some(c.resolved),
                    ..Pt::new(x, c.value)
                })
                .collect(),
        })
        .collect();
    let (lo, hi) = prices
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if lo.is_finite() {
        series.push(Series {
            name: "ratio 1 (no difference)".into(),
            mark: Mark::Line { dashed: true },
            points: vec![Pt::new(lo, 1.0), Pt::new(hi, 1.0)],
        });
    }
    chart::xy(&XyChart {
        title: "Variance × fees ratio across search prices".into(),
        x_desc: "search price (USD per 1,000 requests)".into(),
        y_desc: "variance × fees ratio A/B (hollow: unresolved)".into(),
        caption: caption.line(),
        series,
        // A ratio of variances x fees is never negative.
        y_floor: Some(0.0),
    })
}

/// Answer consistency by group (budget paper Fig. 6), three panels stacked: the
/// disagreement rate (share of (question, trajectory) cells whose normalised reads differ)
/// per group, the one-read SE per group, and the ratio of the two compared groups'
/// one-read SEs with its bootstrap interval (when there is one).
///
/// # Errors
/// When nothing is finite or drawing fails.
pub fn consistency(
    dis: &[Disagreement],
    prec: &[GroupPrecision],
    ratio: Option<&SeRatio>,
    caption: &Caption,
) -> Result<String> {
    let line = caption.line();
    // Both panels list the groups in the disagreement table's order (the precision table
    // may list them in another), then any group only the precision table has.
    let mut prec_groups: Vec<String> = dis.iter().map(|d| d.group.clone()).collect();
    for p in prec {
        if !prec_groups.contains(&p.group) {
            prec_groups.push(p.group.clone());
        }
    }
    prec_groups.retain(|g| prec.iter().any(|p| &p.group == g));
    let mut panels = vec![
        chart::bars(&BarChart {
            title: "Answer disagreement across reads".into(),
            y_desc: "share of cells whose reads disagree".into(),
            caption: line.clone(),
            groups: dis.iter().map(|d| d.group.clone()).collect(),
            series: vec![BarSeries {
                name: "disagreement rate".into(),
                bars: dis
                    .iter()
                    .map(|d| {
                        Some(Bar {
                            value: d.rate,
                            ci: None,
                        })
                    })
                    .collect(),
            }],
            stacked: false,
        })?,
        chart::bars(&BarChart {
            title: "One-read SE".into(),
            y_desc: "SE of one read (outcome units)".into(),
            caption: line.clone(),
            groups: prec_groups.clone(),
            series: vec![BarSeries {
                name: "one-read SE".into(),
                bars: prec_groups
                    .iter()
                    .map(|g| {
                        prec.iter().find(|p| &p.group == g).map(|p| Bar {
                            value: p.one_read_se,
                            ci: None,
                        })
                    })
                    .collect(),
            }],
            stacked: false,
        })?,
    ];
    if let Some(r) = ratio {
        let pairing = if r.paired { "paired" } else { "unpaired" };
        panels.push(chart::bars(&BarChart {
            title: format!("One-read SE ratio ({pairing} bootstrap)"),
            y_desc: "SE ratio (1 = equal precision)".into(),
            caption: line,
            groups: vec![format!("{}/{}", r.numerator, r.denominator)],
            series: vec![BarSeries {
                name: "SE ratio".into(),
                bars: vec![Some(Bar {
                    value: r.ratio,
                    ci: Some(r.ci.0),
                })],
            }],
            stacked: false,
        })?);
    }
    Ok(chart::stack(&panels))
}

/// A bar for a value that may be missing (NaN: a side without items at that level).
fn bar(value: f64, ci: Option<[f64; 2]>) -> Option<Bar> {
    value.is_finite().then_some(Bar { value, ci })
}

/// The task rows and the overall row of an MCQ score table, in table order.
fn task_rows(rows: &[LevelRow]) -> Vec<&LevelRow> {
    rows.iter().filter(|r| r.level != "group").collect()
}

/// MCQ scores (RAGCap Fig. 3): EM and F1 per task and overall with their bootstrap
/// intervals, side by side; with `positions`, a second panel of the chosen and gold rate by
/// shown option position (RAGCap Table 6).
///
/// # Errors
/// When nothing is finite or drawing fails.
pub fn mcq_score(
    rows: &[LevelRow],
    positions: Option<&[PositionRow]>,
    caption: &Caption,
) -> Result<String> {
    let tasks = task_rows(rows);
    let mut panels = vec![chart::bars(&BarChart {
        title: "MCQ scores per task".into(),
        y_desc: "score (share of items)".into(),
        caption: caption.line(),
        groups: tasks.iter().map(|r| r.name.clone()).collect(),
        series: vec![
            BarSeries {
                name: "EM".into(),
                bars: tasks
                    .iter()
                    .map(|r| bar(r.em.estimate, Some(r.em.ci.0)))
                    .collect(),
            },
            BarSeries {
                name: "F1".into(),
                bars: tasks
                    .iter()
                    .map(|r| bar(r.f1.estimate, Some(r.f1.ci.0)))
                    .collect(),
            },
        ],
        stacked: false,
    })?];
    if let Some(pos) = positions {
        panels.push(chart::bars(&BarChart {
            title: "Chosen rate by option position".into(),
            y_desc: "share of shown options at the position".into(),
            caption: caption.line(),
            groups: pos.iter().map(|p| p.position.to_string()).collect(),
            series: vec![
                BarSeries {
                    name: "chosen rate".into(),
                    bars: pos.iter().map(|p| bar(p.chosen_rate, None)).collect(),
                },
                BarSeries {
                    name: "gold rate".into(),
                    bars: pos.iter().map(|p| bar(p.gold_rate, None)).collect(),
                },
            ],
            stacked: false,
        })?);
    }
    Ok(chart::stack(&panels))
}

/// One side of an MCQ comparison: its legend name and (EM, F1) per row of the deltas.
pub struct McqSide {
    pub name: String,
    pub scores: Vec<[f64; 2]>,
}

/// The figure of an `mcq compare` report of two files: each side's EM and F1 per level
/// (named `A: model, prompt` and `B: …`) and the paired deltas ([`mcq_compare`]).
///
/// # Errors
/// As [`mcq_compare`].
pub fn mcq_compare_report(
    r: &ragstats_core::mcq::compare::CompareReport,
    caption: &Caption,
) -> Result<String> {
    let table: Vec<LevelRow> = r.deltas.iter().map(|d| d.delta.clone()).collect();
    let side = |s: &ragstats_core::mcq::compare::Side, tag: &str, b: bool| McqSide {
        name: format!("{tag}: {}, {}", s.model, s.prompt),
        scores: r.deltas.iter().map(|d| if b { d.b } else { d.a }).collect(),
    };
    let (sa, sb) = (side(&r.a, "A", false), side(&r.b, "B", true));
    mcq_compare(&table, [&sa, &sb], caption)
}

/// MCQ comparison (RAGCap Fig. 3, bare vs informative): the two sides' EM and F1 per task
/// and overall side by side, and a second panel of the paired deltas B − A with their
/// bootstrap intervals. `sides[k].scores[i]` belongs to `deltas[i]`.
///
/// # Errors
/// When nothing is finite or drawing fails.
pub fn mcq_compare(deltas: &[LevelRow], sides: [&McqSide; 2], caption: &Caption) -> Result<String> {
    let keep: Vec<usize> = (0..deltas.len())
        .filter(|&i| deltas[i].level != "group")
        .collect();
    let groups: Vec<String> = keep.iter().map(|&i| deltas[i].name.clone()).collect();
    let mut series = Vec::new();
    for (k, metric) in ["EM", "F1"].iter().enumerate() {
        for side in sides {
            series.push(BarSeries {
                name: format!("{metric} {}", side.name),
                bars: keep.iter().map(|&i| bar(side.scores[i][k], None)).collect(),
            });
        }
    }
    let scores = chart::bars(&BarChart {
        title: "MCQ scores per task, side by side".into(),
        y_desc: "score (share of items)".into(),
        caption: caption.line(),
        groups: groups.clone(),
        series,
        stacked: false,
    })?;
    let delta = chart::bars(&BarChart {
        title: format!("Paired difference {} − {}", sides[1].name, sides[0].name),
        y_desc: "difference B − A (share of items)".into(),
        caption: caption.line(),
        groups,
        series: vec![
            BarSeries {
                name: "ΔEM".into(),
                bars: keep
                    .iter()
                    .map(|&i| bar(deltas[i].em.estimate, Some(deltas[i].em.ci.0)))
                    .collect(),
            },
            BarSeries {
                name: "ΔF1".into(),
                bars: keep
                    .iter()
                    .map(|&i| bar(deltas[i].f1.estimate, Some(deltas[i].f1.ci.0)))
                    .collect(),
            },
        ],
        stacked: false,
    })?;
    Ok(chart::stack(&[scores, delta]))
}

/// Correlations (RAGCap Fig. 5): a heatmap of r for every x (rows) and y (columns), with
/// significance marks from the permutation p-value when the test ran, else the analytic
/// p-value; the cells carry the bootstrap interval when there is one. `pairs` are in the
/// command's order: x-major, y-minor.
///
/// # Errors
/// When there is no pair or drawing fails.
pub fn correlate(
    pairs: &[PairResult],
    x_names: &[String],
    y_names: &[String],
    method: Method,
    caption: &Caption,
) -> Result<String> {
    let permuted = pairs.iter().all(|p| p.permutation.is_some()) && !pairs.is_empty();
    let cells = x_names
        .iter()
        .enumerate()
        .map(|(i, _)| {
            (0..y_names.len())
                .map(|j| {
                    let p = &pairs[i * y_names.len() + j];
                    Cell {
                        value: p.estimate.r,
                        p: match (&p.permutation, permuted) {
                            (Some(t), true) => t.p,
                            _ => p.estimate.p,
                        },
                        ci: p.bootstrap.as_ref().map(|b| b.ci.0),
                    }
                })
                .collect()
        })
        .collect();
    chart::heatmap(&Heatmap {
        title: format!("Correlations ({})", method.name()),
        caption: caption.line(),
        scale: 1.0,
        key: "r".into(),
        decimals: 2,
        p_desc: if permuted {
            "(permutation p-values)".into()
        } else {
            "(analytic p-values)".into()
        },
        rows: x_names.to_vec(),
        cols: y_names.to_vec(),
        cells,
    })
}

/// `stats compare`: each system's estimate with its interval (bars, in the panel's arm
/// order), above the matrix of every difference row − column coloured by its size, marked by
/// its Holm-adjusted p-value (`n/a` on the diagonal and, with a reference, off the family).
///
/// # Errors
/// When drawing fails.
pub fn compare(report: &CompareReport, caption: &Caption) -> Result<String> {
    let names: Vec<String> = report.systems.iter().map(|s| s.name.clone()).collect();
    let estimates = chart::bars(&BarChart {
        title: format!(
            "Systems: estimate and {}% interval",
            100.0 * report.engine.confidence.unwrap_or(0.95)
        ),
        y_desc: format!("{} (equal-weight mean over strata)", report.metric),
        caption: caption.line(),
        groups: names.clone(),
        series: vec![BarSeries {
            name: "estimate".into(),
            bars: report
                .systems
                .iter()
                .map(|s| bar(s.estimate, Some(s.ci.0)))
                .collect(),
        }],
        stacked: false,
    })?;
    let at = |n: &str| {
        names
            .iter()
            .position(|m| m == n)
            .expect("a system of the report")
    };
    let k = names.len();
    let mut cells = vec![
        vec![
            chart::Cell {
                value: f64::NAN,
                p: f64::NAN,
                ci: None
            };
            k
        ];
        k
    ];
    for p in &report.pairs {
        let (a, b) = (at(&p.a), at(&p.b));
        let ci = p.ci_simultaneous.0;
        cells[b][a] = chart::Cell {
            value: p.estimate,
            p: p.p_holm,
            ci: Some(ci),
        };
        cells[a][b] = chart::Cell {
            value: -p.estimate,
            p: p.p_holm,
            ci: Some([-ci[1], -ci[0]]),
        };
    }
    let scale = report
        .pairs
        .iter()
        .map(|p| p.estimate.abs())
        .fold(0.0, f64::max);
    let matrix = chart::heatmap(&Heatmap {
        title: "Differences row − column".into(),
        caption: caption.line(),
        scale: if scale > 0.0 { scale } else { 1.0 },
        key: "Δ".into(),
        decimals: 3,
        p_desc: "(Holm-adjusted p-values)".into(),
        rows: names.clone(),
        cols: names,
        cells,
    })?;
    Ok(chart::stack(&[estimates, matrix]))
}
