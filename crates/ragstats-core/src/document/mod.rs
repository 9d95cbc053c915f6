//! The JSON document of an analysis: the report's own fields (serde of the report type) plus
//! one `run` envelope that says what ran — the command, the ragstats version, the inputs, and
//! the resampling engine (backend, adapter, replicates, seed, confidence). The `stats`
//! command's `--format json` and the Python bindings' `to_dict()` are both [`document`], so
//! they agree by construction. The schema is in `docs/json.md`.

mod finished;

pub use finished::{document_of, Figure, Finished, Rendered, Sections};

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// The key of the envelope in every document; no report has a field of that name.
pub const RUN_KEY: &str = "run";

/// What a resampling analysis ran on and with: the backend (`cpu`, `gpu`), its adapter
/// (`rayon, 2 threads`, a GPU's name), and the resampling settings. `None` (JSON `null`)
/// where the analysis does not resample.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Engine {
    pub backend: Option<String>,
    pub adapter: Option<String>,
    pub replicates: Option<u64>,
    pub seed: Option<u64>,
    pub confidence: Option<f64>,
}

impl Engine {
    /// The engine of an analysis that resampled: `backend` (`cpu`, `gpu`) on `adapter`,
    /// `replicates` replicates from `seed`, intervals at `confidence`.
    pub fn resampled(
        backend: impl Into<String>,
        adapter: impl Into<String>,
        replicates: u64,
        seed: u64,
        confidence: f64,
    ) -> Engine {
        Engine {
            backend: Some(backend.into()),
            adapter: Some(adapter.into()),
            replicates: Some(replicates),
            seed: Some(seed),
            confidence: Some(confidence),
        }
    }
}

/// A report that can be written as a document: its fields are its serde serialization (a
/// JSON object), and it says which engine, if any, produced it.
pub trait Report: Serialize {
    /// The engine that produced the report; [`Engine::default`] (all `null`) where the
    /// analysis does not resample.
    fn engine(&self) -> Engine {
        Engine::default()
    }
    /// The exit status a front end ends with after showing the report: 0, or 2 where the
    /// analysis found its input invalid (`mcq validate`'s violations).
    fn exit_code(&self) -> u8 {
        0
    }
}

/// One input of a run: a file, several files, or data handed over in memory (the Python
/// bindings' data frames), described.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Input {
    One(String),
    Many(Vec<String>),
}

/// The inputs of a run by role (`panel`, `ledger`, `prices`, `items` …), in key order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Inputs(BTreeMap<String, Input>);

impl Inputs {
    /// No inputs.
    pub fn new() -> Inputs {
        Inputs::default()
    }

    /// Adds the file (or in-memory description) `what` in `role`.
    pub fn with(mut self, role: &str, what: impl ToString) -> Inputs {
        self.0.insert(role.into(), Input::One(what.to_string()));
        self
    }

    /// Adds `what` in `role` when it is given.
    pub fn with_opt(self, role: &str, what: Option<impl ToString>) -> Inputs {
        match what {
            Some(w) => self.with(role, w),
            None => self,
        }
    }

    /// Adds the files `all` in `role` (a list even when there is one).
    pub fn with_all<S: ToString>(mut self, role: &str, all: impl IntoIterator<Item = S>) -> Inputs {
        let all = all.into_iter().map(|s| s.to_string()).collect();
        self.0.insert(role.into(), Input::Many(all));
        self
    }
}

/// The `run` envelope of a document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    /// The command (`variance`, `mcq score` …) or Python function that made the document.
    pub command: String,
    /// The ragstats version that made it.
    pub ragstats: &'static str,
    pub inputs: Inputs,
    #[serde(flatten)]
    pub engine: Engine,
}

impl RunInfo {
    /// The envelope of `command` run on `inputs` by `engine`.
    pub fn new(command: &str, inputs: Inputs, engine: Engine) -> RunInfo {
        RunInfo {
            command: command.into(),
            ragstats: env!("CARGO_PKG_VERSION"),
            inputs,
            engine,
        }
    }
}

/// The document of `report` made by `command` from `inputs`: the report's fields with the
/// `run` envelope added.
pub fn document<R: Report + ?Sized>(command: &str, inputs: Inputs, report: &R) -> Value {
    let run = RunInfo::new(command, inputs, report.engine());
    with_envelope(&run, to_body(report))
}

/// A report's fields as a JSON value (the document without its envelope).
///
/// # Panics
/// Never for the report types of this crate: serde_json fails only on maps with non-string
/// keys, which no report has (the tests serialize every report).
pub fn to_body<R: Serialize + ?Sized>(report: &R) -> Value {
    serde_json::to_value(report).expect("a report serializes to JSON")
}

/// `body` (a report's fields, or the sections of several reports) with `run` added as its
/// first-level `run` key. A body that is not an object is kept under `result`.
pub fn with_envelope(run: &RunInfo, body: Value) -> Value {
    let mut map = match body {
        Value::Object(m) => m,
        other => {
            let mut m = Map::new();
            m.insert("result".into(), other);
            m
        }
    };
    debug_assert!(
        !map.contains_key(RUN_KEY),
        "a report has a field named `run`"
    );
    map.insert(RUN_KEY.into(), to_body(run));
    Value::Object(map)
}

/// The top-level keys of a document, sorted: what its body holds besides `run` (the tests of
/// every report type check them).
pub fn keys(doc: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = doc
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize)]
    struct Mean {
        estimate: f64,
        #[serde(skip)]
        replicates: u64,
    }

    impl Report for Mean {
        fn engine(&self) -> Engine {
            Engine::resampled("cpu", "rayon, 2 threads", self.replicates, 7, 0.9)
        }
    }

    #[test]
    fn a_document_is_the_report_plus_its_envelope() {
        let inputs = Inputs::new()
            .with("panel", "data/demo/panel.csv")
            .with_opt("ledger", None::<&str>)
            .with_all("shards", ["a.json", "b.json"]);
        let d = document(
            "bootstrap",
            inputs,
            &Mean {
                estimate: 0.25,
                replicates: 500,
            },
        );
        assert_eq!(
            d,
            json!({
                "estimate": 0.25,
                "run": {
                    "command": "bootstrap",
                    "ragstats": env!("CARGO_PKG_VERSION"),
                    "inputs": {"panel": "data/demo/panel.csv", "shards": ["a.json", "b.json"]},
                    "backend": "cpu",
                    "adapter": "rayon, 2 threads",
                    "replicates": 500,
                    "seed": 7,
                    "confidence": 0.9,
                }
            })
        );
    }

    #[derive(Serialize)]
    struct Plain {
        n: u32,
    }
    impl Report for Plain {}

    #[test]
    fn an_analysis_without_resampling_has_a_null_engine() {
        let d = document("cost", Inputs::new(), &Plain { n: 3 });
        let run = &d["run"];
        for key in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(run[key], Value::Null, "{key}");
        }
        assert_eq!(run["inputs"], json!({}));
        assert_eq!(d["n"], 3);
    }
}
