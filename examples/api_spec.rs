//! The command line's commands as data, printed as JSON: `scripts/gen-python-api.py` runs
//! this (`cargo run -q --example api_spec`) for each analysis's summary, `--help` examples
//! and the help of its flags, which become the docstrings of the Python functions (their
//! keywords and types come from the settings' JSON schemas in the native module). A test
//! checks the generated file is current, so the Python API cannot drift from the CLI. It
//! is an example, not a library function: neither the CLI nor the Python bindings need it.

use clap::CommandFactory;
use serde::Serialize;

/// One flag or positional argument of a command.
#[derive(Serialize)]
struct ArgSpec {
    /// The Python keyword: the long flag with `-` → `_` (`--max-reads` → `max_reads`),
    /// or the positional's value name in lower case.
    name: String,
    /// `--max-reads`; `None` for a positional argument.
    long: Option<String>,
    /// Flag without a value (`--per-item`): a Python `bool`.
    switch: bool,
    /// Repeatable (`--allocation A=… --allocation B=…`): a Python list.
    repeated: bool,
    required: bool,
    /// The default as the CLI shows it (`None`: none, or unset).
    default: Option<String>,
    /// The values it accepts, when clap knows them.
    choices: Vec<String>,
    value_name: Option<String>,
    help: String,
}

/// One command (`variance`, `mcq score`).
#[derive(Serialize)]
struct CommandSpec {
    name: String,
    about: String,
    /// The examples of `--help` (`stats variance data/demo/panel.csv …`), one per line.
    examples: Vec<String>,
    args: Vec<ArgSpec>,
}

/// Prints every leaf command with its arguments, as JSON.
fn main() {
    let mut out = Vec::new();
    collect(&ragstats_cli::cli::Cli::command(), "", &mut out);
    println!("{}", serde_json::to_string(&out).expect("specs are JSON"));
}

fn collect(cmd: &clap::Command, prefix: &str, out: &mut Vec<CommandSpec>) {
    for sub in cmd.get_subcommands() {
        let name = format!("{prefix}{}", sub.get_name()).trim().to_string();
        if sub.has_subcommands() {
            collect(sub, &format!("{name} "), out);
            continue;
        }
        let args = sub
            .get_arguments()
            .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
            .map(|a| {
                let switch = matches!(
                    a.get_action(),
                    clap::ArgAction::SetTrue | clap::ArgAction::SetFalse
                );
                let long = a.get_long().map(|l| format!("--{l}"));
                let name = match a.get_long() {
                    Some(l) => l.replace('-', "_"),
                    None => a.get_id().as_str().replace('-', "_"),
                };
                ArgSpec {
                    name,
                    long,
                    switch,
                    repeated: matches!(a.get_action(), clap::ArgAction::Append),
                    required: a.is_required_set(),
                    default: (!switch)
                        .then(|| {
                            a.get_default_values()
                                .iter()
                                .map(|v| v.to_string_lossy().into_owned())
                                .collect::<Vec<_>>()
                                .join(",")
                        })
                        .filter(|d| !d.is_empty()),
                    choices: a
                        .get_possible_values()
                        .iter()
                        .filter(|p| !p.is_hide_set())
                        .map(|p| p.get_name().to_string())
                        .collect(),
                    value_name: a
                        .get_value_names()
                        .and_then(|v| v.first())
                        .map(|v| v.to_string()),
                    help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
                }
            })
            .collect();
        let after = sub
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        // Lines ending in `\` continue on the next.
        let mut lines: Vec<String> = Vec::new();
        let mut open = false;
        for l in after.lines().map(str::trim) {
            match lines.last_mut() {
                Some(last) if open => {
                    last.truncate(last.trim_end_matches('\\').trim_end().len());
                    last.push(' ');
                    last.push_str(l);
                }
                _ => lines.push(l.to_string()),
            }
            open = l.ends_with('\\');
        }
        let examples = lines
            .into_iter()
            .filter(|l| l.starts_with(&format!("stats {name} ")))
            .collect();
        out.push(CommandSpec {
            name,
            about: sub.get_about().map(|h| h.to_string()).unwrap_or_default(),
            examples,
            args,
        });
    }
}
