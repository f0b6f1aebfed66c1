//! Tests of the crate's shape, read from its own source (`ARCHITECTURE.md`,
//! "Invariants"): no module depends on itself through others, and no
//! renderer touches the disk. Each fails naming the files that break the
//! rule.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every `.rs` file under `src/`, by module path (`render::site`; a
/// `mod.rs` is its folder's module), with its text up to its test module.
fn modules() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path
                .strip_prefix(&src)
                .expect("under src/")
                .with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a source file is UTF-8");
            // What only tests use is not a dependency of the module, and
            // a doc link is not one either.
            let text = match text.find("#[cfg(test)]\nmod ") {
                Some(at) => &text[..at],
                None => &text[..],
            };
            let text: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect();
            out.insert(parts.join("::"), text);
        }
    }
    out
}

/// The module paths a `crate::…` or `super::…` path at `rest` names
/// (`a::b::c`, or each item of a `{a, b::{c, d}}` group), relative to its
/// root.
fn named(rest: &str) -> Vec<String> {
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(rest.len());
    let (path, after) = rest.split_at(end);
    let Some(group) = after.strip_prefix('{') else {
        let path = path.trim_end_matches(':');
        return if path.is_empty() || path == "self" {
            Vec::new()
        } else {
            vec![path.to_string()]
        };
    };
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items
        .into_iter()
        .flat_map(|item| named(item.trim()))
        .map(|item| format!("{path}{item}"))
        .collect()
}

/// The module each path names: its longest prefix that is a module.
fn resolve(path: &str, modules: &BTreeMap<String, String>) -> Option<String> {
    let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
    (1..=parts.len())
        .rev()
        .map(|n| parts[..n].join("::"))
        .find(|m| modules.contains_key(m))
}

/// Module → the modules it uses. A folder module's use of its own
/// children (its table of contents, its re-exports) is not counted.
fn dependencies(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, text) in modules {
        let parent = name.rsplit_once("::").map_or("", |(p, _)| p);
        // In `a/mod.rs` (module `a`), `super::` is the crate root; in
        // `a/b.rs` it is `a`.
        let is_folder = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src")
            .join(name.replace("::", "/"))
            .join("mod.rs")
            .is_file();
        let super_of = if is_folder { parent } else { name.as_str() };
        let super_of = if is_folder {
            super_of.to_string()
        } else {
            super_of
                .rsplit_once("::")
                .map_or(String::new(), |(p, _)| p.to_string())
        };
        for (prefix, base) in [("crate::", String::new()), ("super::", super_of)] {
            let mut at = 0;
            while let Some(i) = text[at..].find(prefix) {
                let start = at + i + prefix.len();
                at = start;
                // `super::super::` and the like: left to the compiler.
                for item in named(&text[start..]) {
                    let full = if base.is_empty() {
                        item
                    } else {
                        format!("{base}::{item}")
                    };
                    if let Some(target) = resolve(&full, modules)
                        && target != *name
                        && !target.starts_with(&format!("{name}::"))
                    {
                        edges.entry(name.clone()).or_default().insert(target);
                    }
                }
            }
        }
    }
    edges
}

/// Dependency cycles found (Tarjan's strongly connected components).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let lw = s.low[w.as_str()];
                let lv = s.low[v];
                s.low.insert(v, lv.min(lw));
            } else if s.on.contains(w.as_str()) {
                let iw = s.index[w.as_str()];
                let lv = s.low[v];
                s.low.insert(v, lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

#[test]
fn no_module_depends_on_itself_through_others() {
    let modules = modules();
    let edges = dependencies(&modules);
    // The check sees what it must: the render layer uses the reports.
    assert!(
        edges["render::site"].contains("report::view"),
        "{:?}",
        edges["render::site"]
    );
    let found = cycles(&edges);
    assert!(
        found.is_empty(),
        "module cycles (each a set of modules that depend on one another):\n{}",
        found
            .iter()
            .map(|c| format!(
                "  {}\n{}",
                c.join(" ↔ "),
                c.iter()
                    .flat_map(|a| edges[a]
                        .iter()
                        .filter(|b| c.contains(b))
                        .map(move |b| format!("    {a} -> {b}\n")))
                    .collect::<String>()
            ))
            .collect::<String>()
    );
}

/// The same at the level of the crate's top modules (folders): the story
/// `cli → render → report → runs → agent → mcp → score → table` points
/// one way.
#[test]
fn no_top_level_module_depends_on_itself_through_others() {
    let edges = dependencies(&modules());
    let top = |m: &str| m.split("::").next().unwrap_or(m).to_string();
    let mut collapsed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in &edges {
        for t in to {
            if top(from) != top(t) {
                collapsed.entry(top(from)).or_default().insert(top(t));
            }
        }
    }
    assert!(collapsed["render"].contains("report"));
    let found = cycles(&collapsed);
    assert!(
        found.is_empty(),
        "top-level module cycles: {found:?}\n{collapsed:#?}"
    );
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    edges.entry("c".into()).or_default().insert("a".into());
    edges.entry("c".into()).or_default().insert("d".into());
    assert_eq!(cycles(&edges), vec![vec!["a", "b", "c"]]);
    assert_eq!(
        named("{a::b, c, self, d::{e, f}} rest"),
        vec!["a::b", "c", "d::e", "d::f"]
    );
    assert_eq!(named("x::y(1)"), vec!["x::y"]);
}

/// The modules that may read or write files: loaders, the build's IO
/// side, the recording half, and the command line. Every other module of
/// the reporting and render layers is a function of its inputs.
const PURE: [&str; 20] = [
    "format",
    "report",
    "report::diff",
    "report::grid",
    "report::stats",
    "report::study",
    "report::tables",
    "report::view",
    "render",
    "render::assets",
    "render::export",
    "render::figures",
    "render::markdown",
    "render::page",
    "render::paper",
    "render::readme",
    "render::rtf",
    "render::site",
    "render::study",
    "render::syntax",
];

/// What reaches the file system: the standard library's ways, and the
/// crate's loaders and readers.
const DISK: [&str; 19] = [
    "std::fs",
    "fs::",
    "File::",
    "canonicalize",
    ".is_file()",
    ".is_dir()",
    ".exists()",
    "read_dir",
    "fsutil::",
    "metadata(",
    "load::root",
    "load::question",
    "study_file::load",
    "load_assets",
    "read_text(",
    "read_file(",
    "root_label(",
    "layout::read_",
    "write_atomic",
];

#[test]
fn no_renderer_reads_a_file() {
    let modules = modules();
    let mut found = Vec::new();
    for name in PURE {
        let text = modules
            .get(name)
            .unwrap_or_else(|| panic!("module {name} is gone: update PURE"));
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            // The lexical helpers of fsutil, which touch no disk.
            let code = code
                .replace("fsutil::normalize", "")
                .replace("fsutil::relative", "");
            if let Some(what) = DISK.iter().find(|d| code.contains(*d)) {
                found.push(format!(
                    "  src/{}: line {}: {what}: {}",
                    name.replace("::", "/"),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "renderers must be functions of their views; load what they need first \
         (report::load, render::build::load):\n{}",
        found.join("\n")
    );
}

/// The longest a function may be, in lines of code (comments aside): past
/// this, split it where the split names a real step.
const LONGEST_FUNCTION: usize = 150;

/// True when a (trimmed) line starts a function: `fn`, after any
/// visibility (`pub`, `pub(crate)`, `pub(in …)`) and qualifiers (`const`,
/// `async`, `unsafe`, `extern "C"`).
fn starts_a_function(code: &str) -> bool {
    let mut rest = code;
    if let Some(after) = rest.strip_prefix("pub") {
        rest = match after.strip_prefix('(') {
            Some(inner) => match inner.find(')') {
                Some(end) => &inner[end + 1..],
                None => return false,
            },
            None => after,
        };
        if !rest.starts_with(' ') {
            return false;
        }
        rest = rest.trim_start();
    }
    loop {
        let before = rest;
        for qualifier in ["const ", "async ", "unsafe ", "extern \"C\" "] {
            if let Some(after) = rest.strip_prefix(qualifier) {
                rest = after;
            }
        }
        if rest == before {
            break;
        }
    }
    rest.starts_with("fn ")
}

#[test]
fn no_function_is_longer_than_one_person_reads_at_once() {
    for (line, is) in [
        ("fn f() {", true),
        ("pub(super) fn f() {", true),
        ("pub(in crate::x) async fn f() {", true),
        ("pub const unsafe fn f() {", true),
        ("let fn_name = 1;", false),
        ("pub struct F;", false),
    ] {
        assert_eq!(starts_a_function(line), is, "{line}");
    }
    let mut found = Vec::new();
    for (name, text) in modules() {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            let indent = &line[..line.len() - code.len()];
            if !starts_a_function(code) || code.ends_with(';') {
                continue;
            }
            // The body ends at the first line that closes at this indent;
            // a function whose end is not found is reported too.
            let closing = format!("{indent}}}");
            let Some(end) = lines[i..].iter().position(|l| l.trim_end() == closing) else {
                found.push(format!(
                    "  src/{}: no closing line found for: {code}",
                    name.replace("::", "/")
                ));
                continue;
            };
            if end + 1 > LONGEST_FUNCTION {
                found.push(format!(
                    "  src/{}: line {} (comments aside): {} lines: {}",
                    name.replace("::", "/"),
                    i + 1,
                    end + 1,
                    code
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "functions over {LONGEST_FUNCTION} lines:\n{}",
        found.join("\n")
    );
}

/// The most parameters a function takes: past this, they become a struct
/// that names what they are together.
const MOST_PARAMETERS: usize = 5;

/// The parameters of the function whose signature starts `text` (at `fn`),
/// counted at the top level of its parentheses, `self` aside; `None` when
/// unclosed.
fn parameters(text: &str) -> Option<usize> {
    let open = text.find('(')?;
    let first = text[open + 1..].trim_start();
    let has_self = ["self", "&self", "&mut self", "mut self"].iter().any(|p| {
        first.starts_with(p) && first[p.len()..].trim_start().starts_with([',', ')', ':'])
    });
    let (mut depth, mut count, mut item) = (0usize, 0usize, false);
    let mut previous = ' ';
    for c in text[open..].chars() {
        match c {
            // `->` in a closure type is not a closing angle bracket.
            '>' if previous == '-' => {}
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' if depth > 1 => depth -= 1,
            ')' if depth == 1 => {
                return Some(count + usize::from(item) - usize::from(has_self));
            }
            ',' if depth == 1 => {
                count += usize::from(item);
                item = false;
            }
            c if depth == 1 && !c.is_whitespace() => item = true,
            _ => {}
        }
        previous = c;
    }
    None
}

#[test]
fn no_function_takes_more_than_five_parameters() {
    assert_eq!(
        parameters("fn f(a: u8, b: Vec<(u8, u8)>, c: &[u8]) {"),
        Some(3)
    );
    assert_eq!(parameters("fn f() {"), Some(0));
    assert_eq!(parameters("fn f(\n    a: u8,\n    b: u8,\n) {"), Some(2));
    assert_eq!(
        parameters("fn f(a: Box<dyn Fn(u8) -> u8>, b: u8) {"),
        Some(2)
    );
    let mut found = Vec::new();
    for (name, text) in modules() {
        for (at, _) in text.match_indices("fn ") {
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let signature = &text[at..];
            let Some(n) = parameters(signature) else {
                continue;
            };
            if n > MOST_PARAMETERS {
                let head = signature.lines().next().unwrap_or("");
                found.push(format!(
                    "  src/{}: {n} parameters: {head}",
                    name.replace("::", "/")
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "functions with more than {MOST_PARAMETERS} parameters:\n{}",
        found.join("\n")
    );
}
