//! `stats bench` end to end: JSON fields and their arithmetic, the CPU/GPU agreement check,
//! and flag errors.

use crate::common;

fn bench(args: &[&str]) -> assert_cmd::assert::Assert {
    crate::common::stats()
        .arg("bench")
        .args(args)
        .env("STATS_ALLOW_SOFTWARE_GPU", "1")
        .assert()
}

#[test]
fn bench_json_reports_rates_and_agreement() {
    let out = bench(&["--replicates", "20", "--min-time", "0", "--format", "json"]).success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["strata_rows"], serde_json::json!([223, 223]));
    assert_eq!(v["draws"].as_f64().unwrap(), 20.0 * 446.0);
    let raw = v["raw"]["draws_per_second"].as_f64().unwrap();
    let cpu = v["cpu"]["draws_per_second"].as_f64().unwrap();
    let ratio = v["cpu_over_raw"].as_f64().unwrap();
    assert!((ratio - cpu / raw).abs() < 1e-9 * ratio.max(1.0));
    // The adds alone: timed like the others, and the engine's share of their rate.
    let adds = v["adds_alone"]["draws_per_second"].as_f64().unwrap();
    let share = v["cpu_over_adds_alone"].as_f64().unwrap();
    assert!(adds > 0.0 && adds.is_finite(), "{v}");
    assert!((share - cpu / adds).abs() < 1e-9 * share.max(1.0), "{v}");
    assert!(v["cpu"]["backend"].as_str().unwrap().starts_with("rayon, "));
    if v["gpu"]["available"] == true {
        assert_eq!(v["identical"], true, "CPU and GPU sums differ: {v}");
        assert!(v["gpu"]["adapter"].as_str().unwrap().len() > 3);
    } else {
        assert!(
            !common::gpu_required(),
            "STATS_REQUIRE_GPU=1 but bench ran no GPU: {v}"
        );
    }
}

#[test]
fn bench_table_without_gpu() {
    let out = bench(&[
        "--workload",
        "large",
        "--questions",
        "1001",
        "--replicates",
        "3",
        "--k",
        "2",
        "--min-time",
        "0",
        "--no-gpu",
    ])
    .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("strata [501, 500] rows, k = 2, B = 3"),
        "{text}"
    );
    assert!(text.contains("raw Philox+Lemire"), "{text}");
    assert!(text.contains("CPU engine (rayon"), "{text}");
    // 501 rows x 2 columns x 4 bytes: tables far below 1 MiB, whose pairs the threads
    // take in output order.
    assert!(
        text.contains("CPU engine walk per stratum: steps, steps"),
        "{text}"
    );
    assert!(text.contains("; threads take strata interleaved"), "{text}");
    assert!(text.contains("CPU adds alone (draws given)"), "{text}");
    assert!(!text.contains("GPU engine"), "{text}");
}

#[test]
fn bench_names_the_prefetched_walk_of_tables_past_4_mib() {
    // 70,000 rows x 16 columns x 4 bytes = 4.48 MB per stratum: past 4 MiB.
    let out = bench(&[
        "--workload",
        "large",
        "--questions",
        "140000",
        "--k",
        "16",
        "--replicates",
        "1",
        "--min-time",
        "0",
        "--no-gpu",
        "--format",
        "json",
    ])
    .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        doc["cpu"]["walks"],
        serde_json::json!(["prefetched batches", "prefetched batches"]),
        "{doc}"
    );
    // Tables past 1 MiB: the threads share one stratum's table at a time.
    assert_eq!(doc["cpu"]["pair_order"], "one stratum at a time", "{doc}");
}

#[test]
fn bench_rejects_bad_k() {
    bench(&["--k", "17"])
        .code(2)
        .stderr(predicates::str::contains(
            "error: --k: expected 1 to 16, not 17",
        ));
}

#[test]
fn bench_reports_the_cpu_generator_and_scalar_can_be_forced() {
    let run = |rng: &str| {
        let out = crate::common::stats()
            .args(["bench", "--replicates", "5", "--min-time", "0", "--no-gpu"])
            .args(["--format", "json"])
            .env("STATS_CPU_RNG", rng)
            .assert()
            .success();
        serde_json::from_slice::<serde_json::Value>(&out.get_output().stdout).unwrap()
    };
    let forced = run("scalar");
    assert_eq!(forced["cpu_rng"], "scalar");
    assert_eq!(forced["cpu"]["generator"], "scalar");
    let auto = run("auto");
    let supported = auto["cpu_rngs_supported"].as_array().unwrap().clone();
    assert_eq!(
        auto["cpu_rng"], supported[0],
        "auto takes the widest: {auto}"
    );
    // Every generator draws the same indices.
    assert_eq!(
        auto["raw"]["index_checksum"],
        forced["raw"]["index_checksum"]
    );
    assert_eq!(
        auto["raw_scalar"]["index_checksum"],
        forced["raw"]["index_checksum"]
    );
    let table = crate::common::stats()
        .args(["bench", "--replicates", "5", "--min-time", "0", "--no-gpu"])
        .env("STATS_CPU_RNG", "scalar")
        .assert()
        .success();
    let text = String::from_utf8(table.get_output().stdout.clone()).unwrap();
    assert!(text.contains("CPU generator: scalar"), "{text}");
    assert!(
        text.contains("raw Philox+Lemire, scalar (CPU limit)"),
        "{text}"
    );
}

#[test]
fn bench_rejects_an_unknown_generator() {
    crate::common::stats()
        .args(["bench", "--replicates", "5", "--min-time", "0", "--no-gpu"])
        .env("STATS_CPU_RNG", "sse9")
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "STATS_CPU_RNG=sse9: unknown generator",
        ));
}
