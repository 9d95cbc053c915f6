//! Issue #13, item 9: no command prints `NaN` or `inf` on degenerate inputs. Each case is
//! a clear error (exit 2) or an explicit `undefined` in the table (`null` in JSON).

use std::process::Command;

/// Whether `text` holds NaN or an infinity as a word (not inside a word like "info").
fn has_non_finite(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w, "NaN" | "nan" | "inf" | "Inf" | "infinity" | "Infinity"))
}

fn panel(path: &std::path::Path, questions: usize, score: impl Fn(usize, usize, usize) -> f64) {
    let mut s = String::from("dataset,question,arm,trajectory,read,f1\n");
    for q in 0..questions {
        for arm in ["open", "adaptive"] {
            for t in 0..2 {
                for r in 0..2 {
                    s += &format!("d,q{q},{arm},{t},{r},{}\n", score(q, t, r));
                }
            }
        }
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn degenerate_inputs_never_print_nan_or_inf() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    panel(&dir.path().join("const.csv"), 6, |_, _, _| 0.5);
    panel(&dir.path().join("oneq.csv"), 1, |_, t, r| {
        0.1 * (t + r) as f64
    });
    std::fs::write(dir.path().join("empty.jsonl"), "").unwrap();
    let (konst, oneq, empty) = (d("const.csv"), d("oneq.csv"), d("empty.jsonl"));
    let demo = "data/demo/panel.csv";
    let c = ["--contrast", "adaptive-open"];
    let cases: Vec<Vec<&str>> = vec![
        [&["variance", konst.as_str()][..], &c].concat(),
        [&["bootstrap", konst.as_str(), "--replicates", "50"][..], &c].concat(),
        [&["bootstrap", demo, "--replicates-range", "0..1"][..], &c].concat(),
        [
            &[
                "bootstrap",
                demo,
                "--replicates-range",
                "0..1",
                "--format",
                "json",
            ][..],
            &c,
        ]
        .concat(),
        [
            &[
                "bootstrap",
                oneq.as_str(),
                "--replicates",
                "20",
                "--components",
                "--design",
                "5:2:1",
            ][..],
            &c,
        ]
        .concat(),
        vec!["cost", empty.as_str()],
        vec!["cost", empty.as_str(), "--format", "json"],
        vec!["score-answers", empty.as_str()],
    ];
    for args in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_stats"))
            .args(&args)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            matches!(out.status.code(), Some(0 | 2)),
            "{args:?}: {stderr}"
        );
        assert!(!has_non_finite(&stdout), "{args:?} printed:\n{stdout}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
