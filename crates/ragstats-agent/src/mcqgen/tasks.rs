//! What `stats mcq generate` decides around the generators: which tasks `--tasks` names,
//! which of them need the model, the vanilla items of a log, and the per-group and per-task
//! counts of what was made.

use std::collections::BTreeMap;

use ragstats_core::mcq::Task;
use ragstats_core::{Error, Result};

use super::vanilla::{self, CredibilityMap};
use super::{Generated, Logged};

/// The tasks named by `names` (`all` or task names, trimmed), sorted and each once.
///
/// # Errors
/// [`Error::Usage`] for a name that is neither `all` nor a task.
pub fn parse_tasks(names: &[String]) -> Result<Vec<Task>> {
    let mut out = Vec::new();
    for n in names {
        let n = n.trim();
        if n == "all" {
            out.extend(Task::ALL);
            continue;
        }
        match Task::parse(n) {
            Some(t) => out.push(t),
            None => {
                return Err(Error::setting(
                    "tasks",
                    format!(
                        "unknown task {n:?}; expected all or evidence_extraction, noise_robustness, planning, grounded_reasoning"
                    ),
                ))
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The tasks of `tasks` whose items a model writes (planning, grounded reasoning).
pub fn guided_tasks(tasks: &[Task]) -> Vec<Task> {
    tasks
        .iter()
        .copied()
        .filter(|t| matches!(t, Task::Planning | Task::GroundedReasoning))
        .collect()
}

/// The items of `tasks` built straight from the log: evidence extraction, and for noise
/// robustness the abstain items and, with a credibility map, the reliability items.
pub fn vanilla_items(trajs: &[Logged], tasks: &[Task], cred: Option<&CredibilityMap>) -> Generated {
    let mut all = Generated::default();
    if tasks.contains(&Task::EvidenceExtraction) {
        all.extend(vanilla::evidence_extraction(trajs));
    }
    if tasks.contains(&Task::NoiseRobustness) {
        all.extend(vanilla::abstain(trajs));
        if let Some(c) = cred {
            all.extend(vanilla::reliability(trajs, c));
        }
    }
    all
}

/// Items written per report group, and skips per task (names as in files and reports).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Breakdown {
    pub groups: BTreeMap<&'static str, usize>,
    pub skips: BTreeMap<&'static str, usize>,
}

impl Breakdown {
    /// The counts of `g`.
    pub fn of(g: &Generated) -> Breakdown {
        let mut b = Breakdown::default();
        for it in &g.items {
            *b.groups.entry(it.group().as_str()).or_default() += 1;
        }
        for s in &g.skipped {
            *b.skips.entry(s.task.as_str()).or_default() += 1;
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn tasks_from_names() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut all = Task::ALL.to_vec();
        all.sort();
        assert_eq!(parse_tasks(&names(&["all", "planning"])).unwrap(), all);
        assert_eq!(
            parse_tasks(&names(&[" planning", "evidence_extraction", "planning"])).unwrap(),
            {
                let mut v = vec![Task::Planning, Task::EvidenceExtraction];
                v.sort();
                v
            }
        );
        assert!(matches!(parse_tasks(&names(&["plan"])),
            Err(Error::Setting { setting: "tasks", msg }) if msg.starts_with("unknown task \"plan\"; expected all")));
        assert_eq!(guided_tasks(&all), {
            let mut v = vec![Task::Planning, Task::GroundedReasoning];
            v.sort();
            v
        });
    }

    /// The shipped demo (data/mcq/generated/, checked by tests/it/mcqgen_demo.rs): the log
    /// with credibility.csv gives 5 evidence-extraction, 5 abstain and 1 reliability item
    /// straight from the log (the other 10 of its 21 items are written by the model).
    #[test]
    fn vanilla_items_of_the_demo_log() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mcq/generated");
        let trajs = super::super::read_trajectories(&dir.join("trajectories.jsonl")).unwrap();
        let cred = CredibilityMap::read(&dir.join("credibility.csv")).unwrap();
        let g = vanilla_items(&trajs, &Task::ALL, Some(&cred));
        let b = Breakdown::of(&g);
        assert_eq!(
            b.groups.into_iter().collect::<Vec<_>>(),
            vec![
                ("evidence_extraction", 5),
                ("noise-abstain", 5),
                ("noise-reliability", 1)
            ]
        );
        let without = vanilla_items(&trajs, &[Task::NoiseRobustness], None);
        assert_eq!(
            Breakdown::of(&without).groups.get("noise-abstain"),
            Some(&5)
        );
        assert_eq!(Breakdown::of(&without).groups.len(), 1);
    }
}
