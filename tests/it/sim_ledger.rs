//! Tests of the simulated cost ledger: row counts per kind, shared keys, token rules, and
//! a JSONL round trip through `LedgerRow` and the ledger reader.

use ragstats_core::ledger::{read_ledger, CallKind, Label, LedgerRow};
use ragstats_core::sim::io::write_ledger_jsonl;
use ragstats_core::sim::{simulate_ledger, LedgerSpec, Sds, SimSpec};
use std::collections::HashMap;

/// A label that must be present, as text.
fn s(l: &Option<Label>) -> String {
    l.as_ref().expect("label present").text().into_owned()
}

fn spec(t: usize, r: usize) -> SimSpec {
    SimSpec {
        strata: vec![("hotpotqa".into(), 4), ("musique".into(), 3)],
        trajectories: t,
        reads: r,
        arms: vec!["open".into(), "adaptive".into()],
        seed: 2,
        means: vec![0.5],
        effect: 0.0,
        shared: Sds {
            q: 0.1,
            t: 0.1,
            r: 0.1,
        },
        contrast: Sds {
            q: 0.1,
            t: 0.1,
            r: 0.1,
        },
    }
}

#[test]
fn counts_per_kind_and_shared_keys() {
    let (q, t, r, a, p) = (7, 3, 5, 2, 4);
    let rows = simulate_ledger(&spec(t, r), &LedgerSpec::default()).unwrap();
    let count = |k: CallKind| rows.iter().filter(|x| x.kind == k).count();
    assert_eq!(count(CallKind::Planner), q * t * a * p);
    assert_eq!(count(CallKind::Search), q * t * a * p);
    assert_eq!(count(CallKind::Reader), q * t * a * r);
    // Every key is carried by exactly one row per arm, with identical tokens.
    let mut by_key: HashMap<String, Vec<&LedgerRow>> = HashMap::new();
    for x in rows.iter().filter(|x| x.key.is_some()) {
        by_key.entry(s(&x.key)).or_default().push(x);
    }
    assert_eq!(by_key.len(), 2 * q * t); // plan0 and search0 per (question, trajectory)
    for (k, v) in &by_key {
        assert_eq!(v.len(), a, "{k}");
        assert_ne!(v[0].arm, v[1].arm);
        assert_eq!(v[0].input_tokens, v[1].input_tokens, "{k}");
        assert_eq!(v[0].output_tokens, v[1].output_tokens, "{k}");
        assert_eq!(v[0].step, Some(0));
        let prefix = if v[0].kind == CallKind::Planner {
            "plan0:"
        } else {
            "search0:"
        };
        assert_eq!(
            *k,
            format!("{prefix}{}:{}", s(&v[0].question), s(&v[0].trajectory))
        );
    }
    // Unique planner calls: Q·T·(A(P−1) + 1).
    let unique_planner = count(CallKind::Planner)
        - by_key
            .values()
            .filter(|v| v[0].kind == CallKind::Planner)
            .count()
            * (a - 1);
    assert_eq!(unique_planner, q * t * (a * (p - 1) + 1));
}

#[test]
fn token_rules() {
    let rows = simulate_ledger(&spec(2, 3), &LedgerSpec::default()).unwrap();
    let mut reader_inputs: HashMap<(String, String, String), Vec<u64>> = HashMap::new();
    for x in &rows {
        if x.kind == CallKind::Search {
            assert_eq!(
                (x.input_tokens, x.cached_input_tokens, x.output_tokens),
                (None, None, None)
            );
            assert_eq!(x.model, None);
            continue;
        }
        let (input, cached, output) = (
            x.input_tokens.unwrap(),
            x.cached_input_tokens.unwrap(),
            x.output_tokens.unwrap(),
        );
        assert!(cached <= input, "{x:?}");
        assert_eq!(x.model.as_deref(), Some("deepseek-v4.1-flash"));
        if x.kind == CallKind::Planner {
            assert!(input > 500 && output >= 1 && x.read.is_none());
        } else {
            assert!(input > 3000 && output >= 1);
            // Read 0 hits only the system prompt; later reads reuse the fixed packet.
            let want = if s(&x.read) == "0" {
                1024
            } else {
                input / 64 * 64
            };
            assert_eq!(cached, want);
            reader_inputs
                .entry((s(&x.question), s(&x.trajectory), s(&x.arm)))
                .or_default()
                .push(input);
        }
    }
    for v in reader_inputs.values() {
        assert_eq!(v.len(), 3);
        assert!(
            v.iter().all(|&i| i == v[0]),
            "packet fixed within a trajectory: {v:?}"
        );
    }
    // The adaptive planner sees observations: its later steps are longer on average.
    let mean_in = |arm: &str| {
        let v: Vec<u64> = rows
            .iter()
            .filter(|x| x.kind == CallKind::Planner && s(&x.arm) == arm && x.step == Some(3))
            .map(|x| x.input_tokens.unwrap())
            .collect();
        v.iter().sum::<u64>() as f64 / v.len() as f64
    };
    assert!(mean_in("adaptive") > mean_in("open") + 2000.0);
}

#[test]
fn jsonl_round_trip_and_determinism() {
    let rows = simulate_ledger(&spec(2, 2), &LedgerSpec::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.jsonl");
    write_ledger_jsonl(&rows, std::fs::File::create(&path).unwrap()).unwrap();
    let back = read_ledger(&path).unwrap();
    assert_eq!(back.iter().map(|e| e.line).max(), Some(rows.len() as u64));
    let back: Vec<LedgerRow> = back.into_iter().map(|e| e.row).collect();
    assert_eq!(back, rows);
    assert_eq!(
        rows,
        simulate_ledger(&spec(2, 2), &LedgerSpec::default()).unwrap()
    );
    let mut other = spec(2, 2);
    other.seed = 3;
    assert_ne!(
        rows,
        simulate_ledger(&other, &LedgerSpec::default()).unwrap()
    );
    let bad = LedgerSpec {
        planner_calls: 0,
        ..LedgerSpec::default()
    };
    assert!(simulate_ledger(&spec(1, 1), &bad).is_err());
}
