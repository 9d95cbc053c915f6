//! The architecture, checked. Across crates cargo enforces the arrows (core below gpu, agent
//! and plot; the `stats` CLI on top); here we check what cargo cannot:
//!
//! - inside each crate, a module imports only from its own layer or a lower one, and no two
//!   files (nor two top-level modules) import each other in a circle;
//! - no library crate uses clap, and none names a command-line flag (`--contrast`) in a
//!   string: it speaks of settings in its own words, and an error about one setting names
//!   the setting, which the CLI prints as its flag (every such name is a flag of `stats`);
//! - `ragstats-core`'s normal dependency tree (read from Cargo.lock) holds none of the heavy
//!   crates (wgpu, naga, tantivy, reqwest, tokio, plotters, clap).
//!
//! A new top-level module must be given a layer here.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One crate of the workspace: its source folder, whether it is a library, and the layer of
/// each of its top-level modules (see the table in each crate's `lib.rs`).
struct Crate {
    dir: &'static str,
    library: bool,
    layers: &'static [(&'static str, u8)],
}

const CRATES: &[Crate] = &[
    Crate {
        dir: "crates/ragstats-core/src",
        library: true,
        layers: &[
            ("error", 0),
            ("io", 0),
            ("table", 0),
            ("document", 0),
            ("rng", 0),
            ("chat", 1),
            ("ledger", 1),
            ("panel", 1),
            ("questions", 1),
            ("trajlog", 1),
            ("resample", 2),
            ("inference", 2),
            ("compare", 3),
            ("components", 3),
            ("costs", 3),
            ("allocation", 3),
            ("bootstrap", 3),
            ("correlate", 3),
            ("mcq", 3),
            ("qa_scoring", 3),
            ("sim", 3),
            ("sequential", 3),
            ("judges", 3),
            ("coverage", 4),
            ("analyses", 4),
            ("import", 2),
        ],
    },
    Crate {
        dir: "crates/ragstats-gpu/src",
        library: true,
        layers: &[
            ("device", 0),
            ("shaders", 0),
            ("pipelines", 1),
            ("resample", 2),
            ("permute", 2),
            ("walk", 2),
            ("select", 3),
            ("bench", 3),
        ],
    },
    Crate {
        dir: "crates/ragstats-agent/src",
        library: true,
        layers: &[
            ("http", 0),
            ("llm", 0),
            ("search", 1),
            ("mcqgen", 2),
            ("run", 2),
            ("judge", 3),
        ],
    },
    Crate {
        dir: "crates/ragstats-plot/src",
        library: true,
        layers: &[("chart", 0)],
    },
    // The front ends — the `stats` command and the Python bindings — may use clap and
    // print: no layers inside them, but no circles either.
    Crate {
        dir: "src",
        library: false,
        layers: &[],
    },
    Crate {
        dir: "crates/ragstats-py/src",
        library: false,
        layers: &[],
    },
];

/// Crates `ragstats-core` must not pull in, directly or through another crate.
const HEAVY: &[&str] = &[
    "wgpu", "naga", "tantivy", "reqwest", "tokio", "plotters", "clap",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Module path segments of a file of the crate whose sources are in `src`:
/// `src/a/b.rs` → [a, b]; `src/a/mod.rs` → [a].
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if segs
        .last()
        .is_some_and(|s| s == "mod" || s == "lib" || s == "main")
    {
        segs.pop();
    }
    segs
}

/// The source without comments and without `#[cfg(test)]` modules (their `super::*` is the
/// file itself).
fn code_of(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line.split(" // ").next().unwrap());
        out.push('\n');
    }
    out
}

/// Every path a file names that starts with `crate::` or `super::` (or `self::`), with
/// `use` groups `a::{b, c::d}` expanded.
fn paths_in(code: &str) -> Vec<String> {
    let bytes: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        let boundary = i == 0
            || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_' || bytes[i - 1] == ':');
        if boundary
            && (rest.starts_with("crate::")
                || rest.starts_with("super::")
                || rest.starts_with("self::"))
        {
            let (end, mut paths) = expand(&bytes, i);
            out.append(&mut paths);
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// The paths a file names through a child module it declares (`mod name;`), written without
/// a prefix (`name::run()`, `use name::X`), as `self::name::…`: how a `mod.rs` or `lib.rs`
/// reaches its children.
fn child_paths(code: &str) -> Vec<String> {
    let children: Vec<String> = code
        .lines()
        .filter_map(|l| {
            let t = l.trim();
            let t = t
                .strip_prefix("pub ")
                .or_else(|| t.strip_prefix("pub(crate) "))
                .unwrap_or(t);
            let name = t.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect();
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    for name in &children {
        let pat: Vec<char> = format!("{name}::").chars().collect();
        let mut i = 0;
        while i + pat.len() <= chars.len() {
            let boundary = i == 0
                || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':');
            if boundary && chars[i..i + pat.len()] == pat[..] {
                let (end, paths) = expand(&chars, i);
                out.extend(paths.into_iter().map(|p| format!("self::{p}")));
                i = end.max(i + 1);
            } else {
                i += 1;
            }
        }
    }
    out
}

/// Reads one path (with groups) starting at `i`; returns the index after it and the paths.
fn expand(b: &[char], mut i: usize) -> (usize, Vec<String>) {
    let mut prefix = String::new();
    while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_' || b[i] == ':') {
        prefix.push(b[i]);
        i += 1;
    }
    if i < b.len() && b[i] == '{' && prefix.ends_with("::") {
        i += 1;
        let mut paths = Vec::new();
        loop {
            while i < b.len() && (b[i].is_whitespace() || b[i] == ',') {
                i += 1;
            }
            if i >= b.len() || b[i] == '}' {
                return (i + 1, paths);
            }
            let (end, inner) = expand(b, i);
            for p in inner {
                paths.push(format!("{prefix}{p}"));
            }
            // skip `as name`, `*`, or anything else up to the next separator
            i = end;
            while i < b.len() && b[i] != ',' && b[i] != '}' {
                i += 1;
            }
        }
    }
    (i, vec![prefix.trim_end_matches("::").to_string()])
}

/// Resolves a named path to module segments relative to the crate root.
fn resolve(from: &[String], from_is_mod_rs: bool, path: &str) -> Vec<String> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = match segs.first().copied() {
        Some("crate") => {
            segs.remove(0);
            vec![]
        }
        _ => {
            // `super::` is relative to the module the file is: a file `a/b.rs` is module
            // a::b, so `super` is `a`; `self` is the module itself.
            let mut m = from.to_vec();
            while let Some(&s) = segs.first() {
                match s {
                    "super" => {
                        m.pop();
                        segs.remove(0);
                    }
                    "self" => {
                        segs.remove(0);
                    }
                    _ => break,
                }
            }
            let _ = from_is_mod_rs;
            m
        }
    };
    base.extend(segs.iter().map(|s| s.to_string()));
    base
}

/// The deepest source file a module path names.
fn file_for(src: &Path, module: &[String], files: &BTreeSet<PathBuf>) -> Option<PathBuf> {
    for n in (1..=module.len()).rev() {
        let rel: PathBuf = module[..n].iter().collect();
        for cand in [
            src.join(&rel).with_extension("rs"),
            src.join(&rel).join("mod.rs"),
        ] {
            if files.contains(&cand) {
                return Some(cand);
            }
        }
    }
    None
}

struct Graph {
    src: PathBuf,
    edges: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    violations: Vec<String>,
}

/// The import graph of one crate's files, and its layer violations.
fn build(krate: &Crate) -> Graph {
    let src = root().join(krate.dir);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let set: BTreeSet<PathBuf> = files.iter().cloned().collect();
    let layer: BTreeMap<&str, u8> = krate.layers.iter().copied().collect();
    let bin = !krate.library;
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    let mut violations = Vec::new();
    for f in &files {
        let text = fs::read_to_string(f).unwrap();
        let code = code_of(&text);
        let me = module_of(&src, f);
        let is_mod_rs = f.file_name().is_some_and(|n| n == "mod.rs");
        if !bin && code.contains("clap") {
            violations.push(format!("{}: the library uses clap", f.display()));
        }
        let my_top = me.first().cloned().unwrap_or_default();
        if !bin && !me.is_empty() && !layer.contains_key(my_top.as_str()) {
            violations.push(format!(
                "{}: module `{my_top}` has no layer in tests/it/layers.rs (CRATES)",
                f.display()
            ));
        }
        for p in paths_in(&code).into_iter().chain(child_paths(&code)) {
            let target = resolve(&me, is_mod_rs, &p);
            let Some(tf) = file_for(&src, &target, &set) else {
                continue;
            };
            if &tf == f {
                continue;
            }
            // A child naming its own ancestor module (a type defined in a mod.rs) is not a
            // dependency on a sibling. A parent using its child (`report::run` in a mod.rs)
            // is one: a circle through it (mod.rs → child → elsewhere → mod.rs) is real.
            let t_mod = module_of(&src, &tf);
            if me.starts_with(&t_mod) {
                continue;
            }
            edges.entry(f.clone()).or_default().insert(tf.clone());
            if !bin {
                let (Some(a), Some(b)) = (me.first(), t_mod.first()) else {
                    continue;
                };
                if let (Some(la), Some(lb)) = (layer.get(a.as_str()), layer.get(b.as_str())) {
                    if lb > la {
                        violations.push(format!(
                            "{}: `{a}` (layer {la}) imports `{p}` from `{b}` (layer {lb})",
                            f.display()
                        ));
                    }
                }
            }
        }
    }
    Graph {
        src,
        edges,
        violations,
    }
}

/// A cycle in the file graph, if any (depth-first search with colours).
fn find_cycle(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    fn visit(
        n: &PathBuf,
        edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        state: &mut BTreeMap<PathBuf, u8>,
        stack: &mut Vec<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|x| x == m).unwrap();
                    let mut c = stack[at..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if state.get(n).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(n, edges, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

/// Top-level modules (`cli` and `cmd` in the binary) may depend on each other only without a
/// circle, too.
fn module_cycle(g: &Graph) -> Option<Vec<PathBuf>> {
    let mut m: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (a, bs) in &g.edges {
        let ta = PathBuf::from(module_of(&g.src, a).first().cloned().unwrap_or_default());
        for b in bs {
            let tb = PathBuf::from(module_of(&g.src, b).first().cloned().unwrap_or_default());
            if ta != tb && !ta.as_os_str().is_empty() && !tb.as_os_str().is_empty() {
                m.entry(ta.clone()).or_default().insert(tb);
            }
        }
    }
    find_cycle(&m)
}

#[test]
fn no_layer_is_imported_from_below() {
    let violations: Vec<String> = CRATES.iter().flat_map(|c| build(c).violations).collect();
    assert!(
        violations.is_empty(),
        "layer rule broken:\n{}",
        violations.join("\n")
    );
}

#[test]
fn no_two_files_import_each_other_in_a_circle() {
    for krate in CRATES {
        let g = build(krate);
        if let Some(c) = find_cycle(&g.edges) {
            let names: Vec<String> = c
                .iter()
                .map(|p| p.strip_prefix(root()).unwrap().display().to_string())
                .collect();
            panic!("import cycle between files: {}", names.join(" -> "));
        }
        if let Some(c) = module_cycle(&g) {
            let names: Vec<String> = c.iter().map(|p| p.display().to_string()).collect();
            panic!(
                "import cycle between modules of {}: {}",
                krate.dir,
                names.join(" -> ")
            );
        }
    }
}

/// Every module of every crate is named in `CRATES` (a crate folder added to the workspace
/// without a row here would go unchecked).
#[test]
fn every_crate_is_checked() {
    let mut dirs: Vec<String> = fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| format!("crates/{}/src", e.unwrap().file_name().to_string_lossy()))
        .collect();
    dirs.sort();
    let mut listed: Vec<String> = CRATES
        .iter()
        .filter(|c| c.dir.starts_with("crates/"))
        .map(|c| c.dir.to_string())
        .collect();
    listed.sort();
    assert_eq!(dirs, listed);
}

/// The packages `name` reaches through Cargo.lock, starting from `start` (the crate's own
/// declared dependencies). The lock lists every dependency of a registry package that can
/// be built (any target, build scripts too) but not its dev-dependencies, so this is a
/// superset of the normal tree `cargo tree -e normal` prints for this machine.
fn reachable(lock: &toml::Value, start: &[String]) -> BTreeSet<String> {
    let packages = lock["package"].as_array().unwrap();
    // A lock entry names a dependency `name` or, where two versions exist, `name version`.
    let find = |dep: &str| -> Vec<&toml::Value> {
        let mut parts = dep.split(' ');
        let name = parts.next().unwrap();
        let version = parts.next();
        packages
            .iter()
            .filter(|p| {
                p["name"].as_str() == Some(name)
                    && version.is_none_or(|v| p["version"].as_str() == Some(v))
            })
            .collect()
    };
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = start.to_vec();
    while let Some(dep) = todo.pop() {
        for p in find(&dep) {
            let name = p["name"].as_str().unwrap().to_string();
            if !seen.insert(format!("{name} {}", p["version"].as_str().unwrap())) {
                continue;
            }
            for d in p
                .get("dependencies")
                .and_then(|d| d.as_array())
                .into_iter()
                .flatten()
            {
                todo.push(d.as_str().unwrap().to_string());
            }
        }
    }
    seen
}

/// The dependencies a crate's Cargo.toml declares as normal ones (any target), by package name.
fn declared_normal(manifest: &toml::Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |table: Option<&toml::Value>| {
        for (k, v) in table.and_then(|t| t.as_table()).into_iter().flatten() {
            let package = v.get("package").and_then(|p| p.as_str()).unwrap_or(k);
            out.push(package.to_string());
        }
    };
    add(manifest.get("dependencies"));
    for (_, t) in manifest
        .get("target")
        .and_then(|t| t.as_table())
        .into_iter()
        .flatten()
    {
        add(t.get("dependencies"));
    }
    out
}

fn heavy_in(reached: &BTreeSet<String>) -> Vec<String> {
    reached
        .iter()
        .filter(|p| HEAVY.contains(&p.split(' ').next().unwrap()))
        .cloned()
        .collect()
}

fn read_toml(path: &Path) -> toml::Value {
    toml::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_core_crate_pulls_in_no_heavy_dependency() {
    let lock = read_toml(&root().join("Cargo.lock"));
    let manifest = read_toml(&root().join("crates/ragstats-core/Cargo.toml"));
    let start = declared_normal(&manifest);
    assert!(start.contains(&"rayon".to_string()), "{start:?}");
    let reached = reachable(&lock, &start);
    // The walk does reach what the core really uses, so an empty list below means something.
    assert!(reached.iter().any(|p| p.starts_with("rayon-core ")));
    assert!(reached.iter().any(|p| p.starts_with("nalgebra ")));
    let heavy = heavy_in(&reached);
    assert!(heavy.is_empty(), "ragstats-core depends on {heavy:?}");
}

/// Formats are a feature (#47): without its default `formats` feature the core reaches no
/// Parquet, zip or compression crate (zstd-sys is a C build), and the feature is exactly
/// those two readers, on by default.
/// The Python bindings call the library, not the command line: `ragstats-py` reaches
/// neither the CLI crate nor clap (the CLI's parser), directly or through another crate.
#[test]
fn the_python_bindings_do_not_depend_on_the_command_line() {
    let lock = read_toml(&root().join("Cargo.lock"));
    let manifest = read_toml(&root().join("crates/ragstats-py/Cargo.toml"));
    let start = declared_normal(&manifest);
    assert!(start.contains(&"ragstats-core".to_string()), "{start:?}");
    let reached = reachable(&lock, &start);
    // The walk reaches the library crates the bindings do use.
    for used in ["ragstats-core ", "ragstats-gpu ", "pyo3 "] {
        assert!(reached.iter().any(|p| p.starts_with(used)), "{used}");
    }
    let cli: Vec<&String> = reached
        .iter()
        .filter(|p| p.starts_with("ragstats-cli ") || p.starts_with("clap "))
        .collect();
    assert!(cli.is_empty(), "ragstats-py depends on {cli:?}");
}

/// No state is hidden in thread-locals between layers: tables, log sets, notes and progress
/// travel as values (a `Source`, the report, a progress callback). `thread_local!` appears
/// in no source file of any crate, tests aside.
#[test]
fn no_thread_local_state_outside_tests() {
    let mut found = Vec::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(krate.dir), &mut files);
        for f in files {
            // `code_of` stops at a file's unit tests (`#[cfg(test)] mod tests`, last).
            if code_of(&fs::read_to_string(&f).unwrap()).contains("thread_local!") {
                found.push(f.display().to_string());
            }
        }
    }
    assert!(found.is_empty(), "thread_local! in {found:?}");
    // The check sees one where there is one.
    assert!(code_of("thread_local! {\n    static X: u8 = 0;\n}\n").contains("thread_local!"));
}

#[test]
fn without_its_formats_feature_the_core_reaches_no_parquet_zip_or_compression() {
    let lock = read_toml(&root().join("Cargo.lock"));
    let manifest = read_toml(&root().join("crates/ragstats-core/Cargo.toml"));
    let deps = manifest["dependencies"].as_table().unwrap();
    let required: Vec<String> = declared_normal(&manifest)
        .into_iter()
        .filter(|d| {
            deps.get(d)
                .and_then(|v| v.get("optional"))
                .and_then(|o| o.as_bool())
                != Some(true)
        })
        .collect();
    let reached = reachable(&lock, &required);
    assert!(reached.iter().any(|p| p.starts_with("arrow-array ")));
    let formats: Vec<&String> = reached
        .iter()
        .filter(|p| {
            [
                "parquet",
                "zip",
                "zstd",
                "zstd-sys",
                "zstd-safe",
                "flate2",
                "snap",
            ]
            .contains(&p.split(' ').next().unwrap())
        })
        .collect();
    assert!(
        formats.is_empty(),
        "without `formats` the core reaches {formats:?}"
    );
    // With the feature they are there: the walk would see them.
    let all = reachable(&lock, &declared_normal(&manifest));
    assert!(all.iter().any(|p| p.starts_with("zstd-sys ")), "{all:?}");
    let features = manifest["features"].as_table().unwrap();
    assert_eq!(
        features["default"].as_array().unwrap(),
        &[toml::Value::from("formats")]
    );
    assert_eq!(
        features["formats"].as_array().unwrap(),
        &[
            toml::Value::from("dep:parquet"),
            toml::Value::from("dep:zip")
        ]
    );
}

/// The dependency check itself: a core that declares a crate which pulls in tokio (here
/// reqwest, through the real lock) is caught, as is a direct heavy dependency.
#[test]
fn the_dependency_check_sees_a_heavy_crate() {
    let lock = read_toml(&root().join("Cargo.lock"));
    let mut manifest = read_toml(&root().join("crates/ragstats-core/Cargo.toml"));
    let deps = manifest["dependencies"].as_table_mut().unwrap();
    deps.insert("reqwest".into(), toml::Value::String("0.13".into()));
    let heavy = heavy_in(&reachable(&lock, &declared_normal(&manifest)));
    let names: BTreeSet<&str> = heavy.iter().map(|p| p.split(' ').next().unwrap()).collect();
    assert_eq!(names, BTreeSet::from(["reqwest", "tokio"]));
    let direct: toml::Value = toml::from_str("[dependencies]\nwgpu = \"30\"\n").unwrap();
    let heavy = heavy_in(&reachable(&lock, &declared_normal(&direct)));
    assert!(heavy.iter().any(|p| p.starts_with("wgpu ")), "{heavy:?}");
    assert!(heavy.iter().any(|p| p.starts_with("naga ")), "{heavy:?}");
}

/// The library's strings that may name a flag anyway: (file, the flag-naming text), each with
/// why no wording in the analysis's own terms would do. Empty: every message of the library
/// crates is written in domain words (docs/library.md, "Errors").
const FLAG_ALLOWED: &[(&str, &str)] = &[];

/// Every string literal of `text` outside comments and `#[cfg(test)]` modules (as
/// [`code_of`] cuts them), with its 1-based line: plain, byte and raw strings; char
/// literals (`'"'`) are skipped.
fn string_literals(text: &str) -> Vec<(usize, String)> {
    let text = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    let b: Vec<char> = text.chars().collect();
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                line += usize::from(b[i] == '\n');
                i += 1;
            }
            i += 2;
        } else if c == 'r' && (i == 0 || !ident(b[i - 1])) && matches!(next, Some('"' | '#')) {
            // r"…", r#"…"#: ends at the quote followed by as many hashes.
            let mut j = i + 1;
            while j < b.len() && b[j] == '#' {
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            let start = j + 1;
            let mut k = start;
            while k < b.len() && !(b[k] == '"' && (1..=hashes).all(|h| b.get(k + h) == Some(&'#')))
            {
                k += 1;
            }
            let s: String = b[start..k.min(b.len())].iter().collect();
            let at = line;
            line += s.matches('\n').count();
            out.push((at, s));
            i = k + 1 + hashes;
        } else if c == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                j += if b[j] == '\\' { 2 } else { 1 };
            }
            let s: String = b[i + 1..j.min(b.len())].iter().collect();
            let at = line;
            line += s.matches('\n').count();
            out.push((at, s));
            i = j + 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}', '"'); a lifetime ('a) is left alone.
            let close = if next == Some('\\') {
                b[i + 3..]
                    .iter()
                    .take(10)
                    .position(|&x| x == '\'')
                    .map(|p| i + 3 + p)
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            i = close.map_or(i + 1, |e| e + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The flags a string names: `--` and a lowercase letter, not inside a word (`a--b`) or
/// a longer run of dashes.
fn flags_in(s: &str) -> Vec<String> {
    let b: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    for i in 0..b.len().saturating_sub(2) {
        let before = i.checked_sub(1).map(|p| b[p]);
        if b[i] == '-'
            && b[i + 1] == '-'
            && b[i + 2].is_ascii_lowercase()
            && !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
        {
            let flag: String = b[i..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '-')
                .collect();
            out.push(flag);
        }
    }
    out
}

/// The library crates' non-test code names no command-line flag in a string (issue #47):
/// what a user of the library, of Python or of the CLI reads is in the analysis's words,
/// and an error about one setting carries the setting's name for each front end to name.
#[test]
fn no_library_string_names_a_flag() {
    let mut found = Vec::new();
    for krate in CRATES.iter().filter(|c| c.library) {
        let mut files = Vec::new();
        rust_files(&root().join(krate.dir), &mut files);
        files.sort();
        for f in files {
            let rel = f.strip_prefix(root()).unwrap().display().to_string();
            for (line, s) in string_literals(&fs::read_to_string(&f).unwrap()) {
                let flags = flags_in(&s);
                if !flags.is_empty()
                    && !FLAG_ALLOWED
                        .iter()
                        .any(|(file, text)| *file == rel && s.contains(text))
                {
                    found.push(format!("{rel}:{line}: {} in {s:?}", flags.join(", ")));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "library strings that name a flag (say it in the analysis's words, with \
         Error::Setting for an error about one setting):\n{}",
        found.join("\n")
    );
}

/// The setting names the library's `Error::setting(NAME, …)` calls give: the string first
/// argument of each call (calls whose first argument is a variable are returned apart, by
/// file, with the call's count).
fn setting_names(text: &str) -> (BTreeSet<String>, usize) {
    let code = code_of(text);
    let (mut names, mut variable) = (BTreeSet::new(), 0);
    for (at, _) in code.match_indices("Error::setting(") {
        let rest = code[at + "Error::setting(".len()..].trim_start();
        match rest.strip_prefix('"') {
            Some(r) => {
                names.insert(r[..r.find('"').unwrap()].to_string());
            }
            None => variable += 1,
        }
    }
    (names, variable)
}

/// The settings a call names through a variable, by file: the names it can take, each a
/// string literal of that file (checked), and how many such calls the file has.
const SETTING_VARIABLES: &[(&str, &[&str], usize)] = &[
    // labels refuse what they cannot be used with: for (name, given) in [("by", …), …]
    (
        "crates/ragstats-core/src/analyses/bootstrap.rs",
        &[
            "by",
            "components",
            "design",
            "replicates_range",
            "replicates_out",
        ],
        1,
    ),
    // a label setting without labels names whichever was given:
    // for (name, given) in [("ppi_lambda", …), ("label_metric", …)]
    (
        "crates/ragstats-core/src/analyses/labels.rs",
        &["ppi_lambda", "label_metric"],
        1,
    ),
    // for (setting, sd) in [("sigma_q", q), …]
    (
        "crates/ragstats-core/src/sim/simulate.rs",
        &["sigma_q", "sigma_t", "sigma_r"],
        1,
    ),
    // for (name, set) in [("order_by", …), ("range", …), ("sigma", …), ("strata", …)]
    (
        "crates/ragstats-core/src/analyses/sequential.rs",
        &["order_by", "range", "sigma", "strata"],
        1,
    ),
    // for (setting, limit) in [("rpm", rpm), ("tpm", tpm)]
    ("crates/ragstats-agent/src/llm/batch.rs", &["rpm", "tpm"], 1),
    // for (setting, column) in [("by", &s.by), ("answer_column", &s.answer_column)]
    (
        "crates/ragstats-core/src/analyses/consistency.rs",
        &["by", "answer_column"],
        1,
    ),
    // for (name, v) in [("trajectories", …), ("reads", …), ("planner_calls", …)]
    (
        "crates/ragstats-core/src/analyses/simulate.rs",
        &["trajectories", "reads", "planner_calls"],
        1,
    ),
    // check("max_questions", …), check("max_trajectories", …), check("max_reads", …)
    (
        "crates/ragstats-core/src/analyses/priced.rs",
        &["max_questions", "max_trajectories", "max_reads"],
        2,
    ),
    // check_output("out", …), check_output("ledger_out", …)
    (
        "crates/ragstats-core/src/analyses/import.rs",
        &["out", "ledger_out"],
        2,
    ),
    // parse_list("planner", …), parse_list("selector", …)
    (
        "crates/ragstats-agent/src/run/setup.rs",
        &["planner", "selector"],
        3,
    ),
    // compare's settings that price the next step: [("max_questions", …), …], then
    // [("search_price", …), ("question_cost", …)], with label_cost and min_labels; with
    // labels (#49) for (name, given) in [("by", …), ("plot", …)]
    (
        "crates/ragstats-core/src/analyses/compare.rs",
        &[
            "max_questions",
            "max_trajectories",
            "max_reads",
            "currency",
            "search_price",
            "question_cost",
            "label_cost",
            "min_labels",
            "by",
            "plot",
        ],
        3,
    ),
    // positive("target_se", …), size("questions", …), probability("alpha", …) and the like
    (
        "crates/ragstats-core/src/analyses/plan.rs",
        &[
            "target_se",
            "mde",
            "budget_tokens",
            "budget_usd",
            "questions",
            "trajectories",
            "reads",
            "alpha",
            "power",
        ],
        5,
    ),
];

/// Every setting an error of the library names is a long flag of some `stats` command
/// under the CLI's mapping (`ragstats_cli::settings::flag`), so the CLI's message names a
/// flag that exists, and the Python keyword made from that flag is a real keyword.
#[test]
fn every_setting_the_library_names_is_a_flag_of_the_cli() {
    use clap::CommandFactory;
    fn longs(cmd: &clap::Command, out: &mut BTreeSet<String>) {
        for a in cmd.get_arguments() {
            if let Some(l) = a.get_long() {
                out.insert(format!("--{l}"));
            }
        }
        for sub in cmd.get_subcommands() {
            longs(sub, out);
        }
    }
    let mut flags = BTreeSet::new();
    longs(&ragstats_cli::cli::Cli::command(), &mut flags);
    let mut names = BTreeSet::new();
    for krate in CRATES.iter().filter(|c| c.library) {
        let mut files = Vec::new();
        rust_files(&root().join(krate.dir), &mut files);
        for f in files {
            let rel = f.strip_prefix(root()).unwrap().display().to_string();
            let text = fs::read_to_string(&f).unwrap();
            let (mut found, variable) = setting_names(&text);
            let listed = SETTING_VARIABLES.iter().find(|(file, ..)| *file == rel);
            assert_eq!(
                variable,
                listed.map_or(0, |l| l.2),
                "{rel}: Error::setting calls whose name is a variable (list them in SETTING_VARIABLES)"
            );
            for name in listed.into_iter().flat_map(|l| l.1.iter()) {
                assert!(
                    text.contains(&format!("\"{name}\"")),
                    "{rel} has no \"{name}\""
                );
                found.insert(name.to_string());
            }
            names.append(&mut found);
        }
    }
    // The walk sees the calls (a renamed constructor would leave nothing to check).
    assert!(
        names.contains("contrast") && names.contains("failure_score"),
        "{names:?}"
    );
    let missing: Vec<String> = names
        .iter()
        .filter(|n| !flags.contains(&ragstats_cli::settings::flag(n)))
        .map(|n| format!("{n} → {}", ragstats_cli::settings::flag(n)))
        .collect();
    assert!(
        missing.is_empty(),
        "settings the library names that are no flag of `stats`: {missing:?}"
    );
}

/// The checker itself: a path naming a higher layer and a two-file circle are found.
#[test]
fn the_checker_sees_what_it_should() {
    let paths = paths_in("use crate::a::{b::{C, D}, e};\nlet x = super::f::g();");
    assert_eq!(
        paths,
        vec![
            "crate::a::b::C",
            "crate::a::b::D",
            "crate::a::e",
            "super::f::g"
        ]
    );
    let from = vec!["resample".to_string(), "cpu".to_string()];
    assert_eq!(
        resolve(&from, false, "super::engine::X"),
        vec!["resample", "engine", "X"]
    );
    // A mod.rs reaching a child by its bare name is seen, as `self::child::…`.
    assert_eq!(
        child_paths("pub mod report;\nmod out;\nfn f() { report::run(x); out::{a, b}; y::z(); }"),
        vec!["self::report::run", "self::out::a", "self::out::b"]
    );
    let cmd = vec!["cmd".to_string()];
    assert_eq!(
        resolve(&cmd, true, "self::report::run"),
        vec!["cmd", "report", "run"]
    );
    let mut e: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    e.entry("a".into()).or_default().insert("b".into());
    e.entry("b".into()).or_default().insert("a".into());
    assert!(find_cycle(&e).is_some());
    e.remove(&PathBuf::from("b"));
    assert!(find_cycle(&e).is_none());
}

/// The flag checker itself: it reads strings (plain, raw, spanning lines) and not comments,
/// char literals or test modules, and tells a flag from a dash in a word or a rule.
#[test]
fn the_flag_checker_sees_what_it_should() {
    let src = "// --comment\nlet q = '\"'; let a = \"use --contrast B-A\";\n\
               let r = r#\"raw \"--k\" here\"#; /* --block */ let c = '\\'';\n\
               let s = \"two\nlines --x\"; let d = \"a--b, ---- and -- c, --Upper\";\n\
               #[cfg(test)]\nmod tests { const T: &str = \"--in-tests\"; }\n";
    let lits = string_literals(src);
    let flagged: Vec<(usize, Vec<String>)> = lits
        .iter()
        .map(|(l, s)| (*l, flags_in(s)))
        .filter(|(_, f)| !f.is_empty())
        .collect();
    assert_eq!(
        flagged,
        vec![
            (2, vec!["--contrast".to_string()]),
            (3, vec!["--k".to_string()]),
            (4, vec!["--x".to_string()]),
        ]
    );
    assert_eq!(lits.len(), 4, "{lits:?}");
    let (names, variable) =
        setting_names("Error::setting(\n \"contrast\", m); Error::setting(name, m);");
    assert_eq!(names, BTreeSet::from(["contrast".to_string()]));
    assert_eq!(variable, 1);
}
