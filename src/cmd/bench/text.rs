//! `stats bench`'s text output: the workload, generator and walks, then one line per path.

use ragstats_core::resample::bench::CpuBench;
use ragstats_core::resample::cpu::walk_legend;
use ragstats_core::rng::Generator;
use ragstats_gpu::bench::GpuBench;

/// The benchmark as a table of paths, with the workload, generator and walks above it.
pub(super) fn text(cpu: &CpuBench, gpu: Option<&GpuBench>, identical: Option<bool>) -> String {
    let generator = cpu.cpu_rng;
    let draws = cpu.draws;
    let mut o = String::new();
    let mut line = |l: String| {
        o.push_str(&l);
        o.push('\n');
    };
    line(format!(
        "workload {:?}: strata {:?} rows, k = {}, B = {}, seed {} ({} draws)",
        cpu.workload, cpu.strata_rows, cpu.k, cpu.replicates, cpu.seed, draws as u64
    ));
    line(format!(
        "CPU generator: {generator} (supported here: {}; {} forces one)",
        cpu.cpu_rngs_supported.join(", "),
        ragstats_core::rng::blocks::ENV_VAR
    ));
    line(format!(
        "CPU engine walk per stratum: {} ({}); threads take {}",
        cpu.cpu.walks.join(", "),
        walk_legend(),
        cpu.cpu.pair_order
    ));
    line(format!(
        "{:<38} {:>10} {:>12} {:>9}",
        "path", "seconds", "draws/s", "vs raw"
    ));
    let (scalar_s, raw_s, cpu_s, adds_s) = (
        cpu.raw_scalar.seconds,
        cpu.raw.seconds,
        cpu.cpu.seconds,
        cpu.adds_alone.seconds,
    );
    if generator != Generator::Scalar.name() {
        line(format!(
            "{:<38} {:>10.4} {:>12} {:>8.1}%",
            "raw Philox+Lemire, scalar",
            scalar_s,
            rate(draws / scalar_s),
            100.0 * raw_s / scalar_s
        ));
    }
    line(format!(
        "{:<38} {:>10.4} {:>12} {:>8.1}%",
        format!("raw Philox+Lemire, {generator} (CPU limit)"),
        raw_s,
        rate(draws / raw_s),
        100.0
    ));
    line(format!(
        "{:<38} {:>10.4} {:>12} {:>8.1}%",
        format!("CPU engine ({}, {generator})", cpu.cpu.backend),
        cpu_s,
        rate(draws / cpu_s),
        100.0 * cpu.cpu_over_raw
    ));
    line(format!(
        "{:<38} {:>10.4} {:>12} {:>8.1}%   (engine at {:.0}% of it)",
        "CPU adds alone (draws given)",
        adds_s,
        rate(draws / adds_s),
        100.0 * raw_s / adds_s,
        100.0 * adds_s / cpu_s
    ));
    match gpu {
        Some(GpuBench::NotRun { reason, .. }) => line(format!("GPU engine: not run ({reason})")),
        Some(GpuBench::Ran {
            adapter,
            upload_seconds,
            seconds,
            ..
        }) => line(format!(
            "{:<38} {:>10.4} {:>12} {:>9}   upload {:.4} s; {}",
            "GPU engine",
            seconds,
            rate(draws / seconds),
            "",
            upload_seconds,
            adapter
        )),
        None => {}
    }
    match identical {
        Some(true) => line("CPU and GPU sums: identical, bit for bit".into()),
        Some(false) => line("CPU and GPU sums: DIFFER".into()),
        None => {}
    }
    o
}

/// `123.4 M/s`-style rate.
fn rate(per_s: f64) -> String {
    if per_s >= 1e9 {
        format!("{:.2} G/s", per_s / 1e9)
    } else {
        format!("{:.1} M/s", per_s / 1e6)
    }
}
