//! Counting: how often each interval covered its truth, or each test rejected under the
//! null, with the Monte Carlo SE √(p(1 − p)/n) and a verdict against the target.

use serde::Serialize;

/// Whether a row is an interval's coverage or a test's rejection rate under the null.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Interval,
    Test,
}

/// The target of a run at confidence c (α = 1 − c): intervals cover between c − 0.015 and
/// c + 0.02 (0.935–0.97 at 95%), tests reject at most α + 0.015 (0.065 at 5%) under the null.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Target {
    pub interval: [f64; 2],
    pub test_max: f64,
}

impl Target {
    /// The target at confidence `c`.
    pub fn at(c: f64) -> Target {
        Target {
            // Rounded to 12 decimals, so 0.95 gives the 0.935 a reader expects rather than
            // 0.9349999999999999.
            interval: [round12(c - 0.015), round12((c + 0.02).min(1.0))],
            test_max: round12(1.0 - c + 0.015),
        }
    }
}

/// One observation of one panel: interval `statistic` covered (`hit`), or test rejected.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub analysis: &'static str,
    pub statistic: String,
    pub kind: Kind,
    pub hit: bool,
}

/// One interval or test over all simulated panels of one generator.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub generator: &'static str,
    pub analysis: &'static str,
    pub statistic: String,
    pub kind: Kind,
    /// The nominal coverage (c) or level (α).
    pub nominal: f64,
    /// Observed coverage or rejection rate, hits / n; `null` when nothing was observed.
    pub rate: Option<f64>,
    /// Monte Carlo SE √(rate (1 − rate) / n).
    pub mc_se: Option<f64>,
    /// Observations (panels, or panels × intervals for pooled rows).
    pub n: u64,
    pub hits: u64,
    /// Simulated panels on which the analysis failed (they count in no row).
    pub errors: u64,
    /// `meets target`, `below target` (an interval covering too little), `above target`
    /// (a test rejecting too often), `conservative` (an interval covering more than the
    /// target's upper end), or `not run`.
    pub verdict: &'static str,
}

impl Row {
    /// A row from its counts, judged against `target`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        generator: &'static str,
        analysis: &'static str,
        statistic: String,
        kind: Kind,
        nominal: f64,
        hits: u64,
        n: u64,
        errors: u64,
        target: &Target,
    ) -> Row {
        let rate = (n > 0).then(|| hits as f64 / n as f64);
        let mc_se = rate.map(|p| (p * (1.0 - p) / n as f64).sqrt());
        let verdict = match (rate, kind) {
            (None, _) => "not run",
            (Some(p), Kind::Interval) if p < target.interval[0] => "below target",
            (Some(p), Kind::Interval) if p > target.interval[1] => "conservative",
            (Some(p), Kind::Test) if p > target.test_max => "above target",
            _ => "meets target",
        };
        Row {
            generator,
            analysis,
            statistic,
            kind,
            nominal,
            rate,
            mc_se,
            n,
            hits,
            errors,
            verdict,
        }
    }

    /// Whether the row falls short of the target (an interval below it, a test above it).
    pub fn short(&self) -> bool {
        matches!(self.verdict, "below target" | "above target")
    }

    /// Whether a short row's rate is within 2 Monte Carlo SEs of the nominal level (so
    /// more panels are needed to tell it from an interval or test that holds its level).
    pub fn within_mc_error(&self) -> bool {
        match (self.rate, self.mc_se) {
            (Some(p), Some(se)) => (p - self.nominal).abs() <= 2.0 * se,
            _ => false,
        }
    }

    /// The row in one plain sentence (a short row within Monte Carlo error says so).
    pub fn sentence(&self, target: &Target) -> String {
        let mut s = self.plain_sentence(target);
        if self.short() && self.within_mc_error() {
            s.push_str(" (within 2 Monte Carlo SEs of the nominal level: more panels would tell)");
        }
        s
    }

    fn plain_sentence(&self, target: &Target) -> String {
        let (rate, se) = (
            self.rate.unwrap_or(f64::NAN),
            self.mc_se.unwrap_or(f64::NAN),
        );
        match self.kind {
            Kind::Interval => format!(
                "{} / {} / {}: covers {rate:.3} ± {se:.3} (nominal {:.2}, target {:.3}–{:.3}): {}",
                self.generator,
                self.analysis,
                self.statistic,
                self.nominal,
                target.interval[0],
                target.interval[1],
                self.verdict
            ),
            Kind::Test => format!(
                "{} / {} / {}: rejects {rate:.3} ± {se:.3} under the null (nominal {:.2}, target ≤ {:.3}): {}",
                self.generator, self.analysis, self.statistic, self.nominal, target.test_max, self.verdict
            ),
        }
    }
}

/// `x` rounded to 12 decimals.
fn round12(x: f64) -> f64 {
    (x * 1e12).round() / 1e12
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_target() {
        let t = Target::at(0.95);
        assert!((t.interval[0] - 0.935).abs() < 1e-12 && (t.test_max - 0.065).abs() < 1e-12);
        let row = |kind, hits| Row::new("g", "a", "s".into(), kind, 0.95, hits, 1000, 0, &t);
        assert_eq!(row(Kind::Interval, 950).verdict, "meets target");
        assert_eq!(row(Kind::Interval, 930).verdict, "below target");
        assert_eq!(row(Kind::Interval, 980).verdict, "conservative");
        assert_eq!(row(Kind::Test, 70).verdict, "above target");
        let r = row(Kind::Interval, 900);
        assert!((r.mc_se.unwrap() - (0.9f64 * 0.1 / 1000.0).sqrt()).abs() < 1e-15);
        assert!(r.short());
        // 0.930 ± 0.0081 is 2.5 SEs from 0.95; 0.940 at n = 100 (SE 0.024) is within 2.
        assert!(!row(Kind::Interval, 930).within_mc_error());
        let near = Row::new("g", "a", "s".into(), Kind::Interval, 0.95, 93, 100, 0, &t);
        assert!(near.short() && near.within_mc_error());
        assert!(near.sentence(&t).ends_with("more panels would tell)"));
        assert!(!r.sentence(&t).contains("more panels"));
    }
}
