//! `stats mcq validate`: every format rule of an items file, all violations reported.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ragstats_core::mcq::validate::{read_items, ItemsFile};
use ragstats_core::mcq::Group;
use serde_json::json;

use crate::cmd::common::{print_json, write_csv, Format, Table};

/// Flags of `stats mcq validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Items JSONL.
    pub items: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

fn group_counts(f: &ItemsFile) -> Vec<(Group, usize)> {
    Group::ALL
        .iter()
        .map(|g| (*g, f.items.iter().filter(|l| l.item.group() == *g).count()))
        .collect()
}

/// Prints every violation on stderr as `FILE:LINE: ...`.
pub(super) fn print_violations(path: &Path, f: &ItemsFile) {
    for v in &f.violations {
        eprintln!("{}", v.display(path));
    }
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    let f = read_items(&a.items)?;
    let counts = group_counts(&f);
    match a.format {
        Format::Json => print_json(&json!({
            "file": a.items.display().to_string(),
            "lines": f.lines,
            "valid_items": f.items.len(),
            "groups": counts.iter().map(|(g, n)| (g.as_str(), *n)).collect::<HashMap<_, _>>(),
            "violations": f.violations,
        }))?,
        Format::Csv => write_csv(
            &["line", "id", "rule", "message"],
            &f.violations
                .iter()
                .map(|v| {
                    vec![
                        v.line.to_string(),
                        v.id.clone().unwrap_or_default(),
                        v.rule.to_string(),
                        v.message.clone(),
                    ]
                })
                .collect::<Vec<_>>(),
        )?,
        Format::Table => {
            if f.violations.is_empty() {
                outln!(
                    "{}: {} item(s), no violations",
                    a.items.display(),
                    f.items.len()
                );
                let mut t = Table::new(&["group", "items"]);
                for (g, n) in &counts {
                    t.row(vec![g.as_str().into(), n.to_string()]);
                }
                out!("{}", t.to_text());
            } else {
                for v in &f.violations {
                    outln!("{}", v.display(&a.items));
                }
            }
        }
    }
    if f.violations.is_empty() {
        Ok(0)
    } else {
        let lines: std::collections::BTreeSet<u64> = f.violations.iter().map(|v| v.line).collect();
        eprintln!(
            "{}: {} violation(s) on {} line(s); {} of {} line(s) valid",
            a.items.display(),
            f.violations.len(),
            lines.len(),
            f.items.len(),
            f.lines
        );
        Ok(2)
    }
}
