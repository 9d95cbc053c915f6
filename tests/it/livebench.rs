//! LiveBench's published Global Average reproduced from its own judgments (#46): the
//! Parquet file read as it is (`--columns` for its column names), the strata weighted by
//! the site's category map. The data are third-party (`../shared/real-evals`,
//! PROVENANCE.md); the test fails, not skips, when they are absent.

use crate::common::json;

fn real_evals() -> std::path::PathBuf {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real-evals/livebench");
    assert!(
        dir.is_dir(),
        "{} is missing: this test reads the shared third-party data",
        dir.display()
    );
    dir
}

/// The seven models whose questions in the Parquet file are exactly the 2024-08-31 pool
/// (PROVENANCE.md).
const MODELS: [&str; 7] = [
    "gemini-1.5-flash-002",
    "gemini-1.5-pro-002",
    "grok-2",
    "grok-2-mini",
    "llama-3.1-nemotron-70b-instruct",
    "o1-mini-2024-09-12",
    "o1-preview-2024-09-12",
];

#[test]
fn livebench_global_average_from_the_parquet_with_category_weights() {
    let dir = real_evals();
    let categories: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(dir.join("categories_2024_08_31.json")).unwrap(),
    )
    .unwrap();
    // The site's Global Average (src/Table/Averaging.js) is the mean over categories of
    // each category's mean over its tasks: task t of category c weighs 1/(C·|c|).
    let tmp = tempfile::tempdir().unwrap();
    let weights = tmp.path().join("weights.csv");
    let mut text = String::from("dataset,weight\n");
    let n_cat = categories.len() as f64;
    for tasks in categories.values() {
        let tasks = tasks.as_array().unwrap();
        for t in tasks {
            let w = 1.0 / (n_cat * tasks.len() as f64);
            text.push_str(&format!("{},{w}\n", t.as_str().unwrap()));
        }
    }
    std::fs::write(&weights, text).unwrap();
    // The published table: per-task scores × 100, one row per model.
    let table = std::fs::read_to_string(dir.join("table_2024_08_31.csv")).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let published = |model: &str| -> f64 {
        let row: Vec<&str> = lines
            .clone()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|r| r[0] == model)
            .unwrap_or_else(|| panic!("{model} is not in the published table"));
        let score = |task: &str| -> f64 {
            let i = header.iter().position(|h| *h == task).unwrap();
            row[i].parse::<f64>().unwrap() / 100.0
        };
        categories
            .values()
            .map(|tasks| {
                let tasks = tasks.as_array().unwrap();
                tasks
                    .iter()
                    .map(|t| score(t.as_str().unwrap()))
                    .sum::<f64>()
                    / tasks.len() as f64
            })
            .sum::<f64>()
            / n_cat
    };
    let parquet = dir.join("livebench_13012025.parquet");
    for model in MODELS {
        let v = json(&[
            "variance",
            parquet.to_str().unwrap(),
            "--columns",
            "question=question_id,arm=model,dataset=task",
            "--arm",
            model,
            "--weights",
            weights.to_str().unwrap(),
            "--format",
            "json",
        ]);
        let (got, want) = (v["estimate"].as_f64().unwrap(), published(model));
        // The table's per-task scores are rounded to 1e-5 (three decimals of percent).
        assert!((got - want).abs() < 1e-5, "{model}: {got} against {want}");
        assert_eq!(v["strata"].as_array().unwrap().len(), 18, "{model}");
        assert_eq!(v["weights"].as_array().unwrap().len(), 18, "{model}");
    }
    // The forecast follows the same weights: for o1-preview at its own design (the audit's
    // questions, split back into its own strata; T = R = 1), the Q-only forecast is the
    // audit's SE √(Σ_t w_t² SE_t²), `variance --weights`'s, and the nested one agrees with it
    // (with T = R = 1 the question component is each task's s²).
    let model = "o1-preview-2024-09-12";
    let audit = [
        "--columns",
        "question=question_id,arm=model,dataset=task",
        "--arm",
        model,
        "--weights",
        weights.to_str().unwrap(),
        "--format",
        "json",
    ];
    let mut args = vec!["variance", parquet.to_str().unwrap()];
    args.extend(audit);
    let v = json(&args);
    let q: u64 = v["strata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["questions"].as_u64().unwrap())
        .sum();
    let design = format!("{q}:1:1");
    let mut args = vec!["forecast", "--audit", parquet.to_str().unwrap()];
    args.extend(["--design", design.as_str()]);
    args.extend(audit);
    let f = json(&args);
    let se = v["se"].as_f64().unwrap();
    for key in ["se_q_only", "se_nested"] {
        let got = f["designs"][0][key].as_f64().unwrap();
        assert!((got - se).abs() < 1e-12 * se, "{key}: {got} against {se}");
    }
    assert_eq!(f["weights"], v["weights"]);
    // o1-preview's Global Average is 0.6602 where the equal-weight mean over tasks is
    // 0.6751 (#46): the weights are what make the published number.
    assert!((published("o1-preview-2024-09-12") - 0.66020333).abs() < 1e-8);

    // The same seven as one comparison, straight from the 93-model file: `--arms` leaves the
    // other models (and their duplicate rows and missing questions) out, and every system's
    // estimate is the published Global Average; the leaderboard is sorted by it.
    let doc = json(&[
        "compare",
        parquet.to_str().unwrap(),
        "--columns",
        "question=question_id,arm=model,dataset=task",
        "--arms",
        &MODELS.join(","),
        "--weights",
        weights.to_str().unwrap(),
        "--replicates",
        "500",
        "--format",
        "json",
    ]);
    let systems = doc["systems"].as_array().unwrap();
    assert_eq!(systems.len(), 7);
    for s in systems {
        let model = s["name"].as_str().unwrap();
        let got = s["estimate"].as_f64().unwrap();
        assert!(
            (got - published(model)).abs() < 1e-5,
            "compare, {model}: {got}"
        );
    }
    assert_eq!(doc["family"]["size"], 21);
    assert_eq!(doc["weights"].as_array().unwrap().len(), 18);
}
