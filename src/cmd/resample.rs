//! The resampling flags every bootstrap command shares (`--replicates`, `--seed`,
//! `--backend`, `--confidence`), the engine choice they lead to, and the progress bar.

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ragstats_core::resample::{ResampleBackend, Resampling};
use ragstats_gpu::select::{select_backend_for, BackendChoice};

use super::UsageError;

flag_enum! {
    /// `--backend`.
    pub enum BackendArg => BackendChoice {
        /// A hardware GPU adapter if wgpu finds one (a software one only with
        /// `STATS_ALLOW_SOFTWARE_GPU=1`), else the CPU.
        Auto,
        /// The rayon CPU backend.
        Cpu,
        /// Any GPU adapter, including software ones; an error if there is none.
        Gpu,
    }
}

/// A confidence level strictly between 0 and 1, refused when the flag is parsed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Confidence(f64);

impl Confidence {
    /// The level as a fraction (0.95 for 95% intervals).
    pub fn get(self) -> f64 {
        self.0
    }

    /// The level as a percentage for headers: `95%`.
    pub fn percent(self) -> String {
        ragstats_core::table::percent(self.0)
    }
}

impl FromStr for Confidence {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().parse::<f64>() {
            Ok(c) if c > 0.0 && c < 1.0 => Ok(Confidence(c)),
            _ => Err("must be between 0 and 1 (exclusive), e.g. 0.95".into()),
        }
    }
}

/// Resampling flags shared by every command that runs the engine.
#[derive(Debug, Clone, clap::Args)]
pub struct ResampleArgs {
    /// Number of bootstrap replicates.
    #[arg(long, default_value_t = 10_000)]
    pub replicates: u32,
    /// Seed of the Philox streams (the same seed gives the same replicates on every backend).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where the resampling runs: auto picks a hardware GPU when wgpu finds one, else the CPU.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Confidence level of the intervals, between 0 and 1.
    #[arg(
        long,
        default_value = "0.95",
        value_name = "LEVEL",
        allow_negative_numbers = true
    )]
    pub confidence: Confidence,
}

/// The most bootstrap replicates one run may ask for: every replicate's statistics are kept
/// in memory (8 bytes each), so the bound is checked before anything is allocated.
pub const MAX_REPLICATES: u32 = 10_000_000;

impl ResampleArgs {
    /// `--replicates`, which must be at least 2 for an SE and an interval, and at most
    /// [`MAX_REPLICATES`].
    pub fn replicates(&self) -> Result<u32, UsageError> {
        if self.replicates < 2 {
            return Err(UsageError("--replicates must be at least 2".into()));
        }
        if self.replicates > MAX_REPLICATES {
            return Err(UsageError(format!(
                "--replicates {}: at most {MAX_REPLICATES} are allowed in one run; split it with --replicates-range and merge",
                self.replicates
            )));
        }
        Ok(self.replicates)
    }

    /// The resampling run these flags ask for: `--seed`, [`Self::replicates`] (checked) and
    /// `--confidence`.
    pub fn resampling(&self) -> Result<Resampling, UsageError> {
        Ok(self.resampling_of(self.replicates()?))
    }

    /// `--seed` and `--confidence` with `replicates` replicates (a count checked, or
    /// chosen, by the caller).
    pub fn resampling_of(&self, replicates: u32) -> Resampling {
        Resampling {
            seed: self.seed,
            replicates,
            confidence: self.confidence.get(),
        }
    }

    /// The library's resampling settings for these flags (checked by the analysis).
    pub fn settings(&self) -> ragstats_core::resample::ResampleSettings {
        ragstats_core::resample::ResampleSettings {
            replicates: self.replicates,
            seed: self.seed,
            backend: self.backend.into(),
            confidence: self.confidence.get(),
        }
    }

    /// The engine for a job of `draws` draws (`auto` keeps small jobs on the CPU).
    pub fn engine(&self, draws: u64) -> anyhow::Result<Box<dyn ResampleBackend>> {
        Ok(select_backend_for(self.backend.into(), draws)?)
    }
}

/// A progress bar on stderr that appears only on a terminal and only once the work has
/// taken more than a second.
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    shown: AtomicBool,
}

impl Progress {
    pub fn new(total: u64, what: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} {bar:40} {pos}/{len} [{elapsed_precise} < {eta_precise}]",
            )
            .expect("valid template"),
        );
        bar.set_message(what.to_string());
        Progress {
            bar,
            start: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    pub fn set(&self, done: u64) {
        if !self.shown.load(Ordering::Relaxed)
            && self.start.elapsed() > Duration::from_secs(1)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.set_position(done);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Progress bars for the library's [`ragstats_core::analyses::Progress`]: one bar per stage
/// of the work (`bootstrap`, `permutations`), the previous one cleared when the next starts.
#[derive(Default)]
pub struct Bars {
    current: std::sync::Mutex<Option<(String, Progress)>>,
}

impl Bars {
    /// Shows `done` of `total` of the stage `work`.
    pub fn set(&self, work: &str, done: u64, total: u64) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if current.as_ref().is_none_or(|(w, _)| w != work) {
            if let Some((_, bar)) = current.take() {
                bar.finish();
            }
            *current = Some((work.to_string(), Progress::new(total, work)));
        }
        if let Some((_, bar)) = current.as_ref() {
            bar.set(done);
        }
    }

    /// Clears the bar shown last.
    pub fn finish(&self) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, bar)) = current.take() {
            bar.finish();
        }
    }
}

/// Runs `f` with progress bars for the stages it reports ([`Bars`]), cleared when it returns.
pub fn with_bars<T>(f: impl FnOnce(ragstats_core::analyses::Progress<'_>) -> T) -> T {
    let bars = Bars::default();
    let out = f(&|work, done, total| bars.set(work, done, total));
    bars.finish();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_accepts_only_the_open_unit_interval() {
        assert_eq!("0.95".parse::<Confidence>().unwrap().get(), 0.95);
        assert_eq!(" 0.5 ".parse::<Confidence>().unwrap().get(), 0.5);
        for bad in ["0", "1", "1.5", "-0.1", "NaN", "inf", "95%", ""] {
            let e = bad.parse::<Confidence>().unwrap_err();
            assert!(e.contains("between 0 and 1"), "{bad}: {e}");
        }
        assert_eq!("0.95".parse::<Confidence>().unwrap().percent(), "95%");
        assert_eq!("0.9".parse::<Confidence>().unwrap().percent(), "90%");
    }
}
