//! Loading a study: `study.toml` and the runs roots it names, into a
//! [`StudyView`] (`docs/PUBLISHING.md`, "Studies").
//!
//! ```toml
//! title = "Tool ablation on the demo KG"
//! roots = ["../runs-demo"]                 # runs roots, relative to the study
//! figures = ["exact-rate", "heatmap"]      # written to figures/NAME.svg
//! baseline = "named"                       # deltas are against it (default: first)
//! order = 1                                # optional: where it stands among studies
//!
//! [[conditions]]                           # optional: default is every condition
//! key = "named"                            # how prose names it
//! root = "../runs-demo"                    # optional with one root
//! name = "demo-kg-all-tools__kg-named"     # as recorded in conditions/
//! label = "Full toolkit, KG named"         # optional: default is the report's label
//! ```
//!
//! A study over several agents (or models) names one runs root per agent
//! instead of `roots`; each `[[conditions]]` entry is then taken from every
//! agent's root, keyed `AGENT/KEY`, and deltas are taken within an agent:
//!
//! ```toml
//! [[agents]]
//! key = "expert"                           # names it in keys: expert/named
//! label = "Expert"                         # how tables and figures show it
//! root = "../runs-expert-demo"             # the runs root it recorded
//! ```
//!
//! Every mistake is an error naming `study.toml` and the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::study::{FigureKind, StudyAgent, StudyCondition, StudyData, StudyView};
use crate::error::{Error, Result};
use crate::layout::RunsRoot;
use crate::toml_file::{Spanned, TomlFile};

/// The study description file.
pub const STUDY_FILE: &str = "study.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StudyFile {
    title: String,
    #[serde(default)]
    roots: Vec<String>,
    #[serde(default)]
    agents: Vec<AgentEntry>,
    #[serde(default)]
    figures: Vec<String>,
    #[serde(default)]
    baseline: Option<String>,
    #[serde(default)]
    conditions: Option<Vec<ConditionEntry>>,
    #[serde(default)]
    comparisons: Vec<ComparisonEntry>,
    #[serde(default)]
    order: Option<i64>,
}

/// `[[comparisons]]`: two runs roots compared question by question.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ComparisonEntry {
    key: Spanned<String>,
    title: String,
    baseline: String,
    candidate: String,
}

/// `[[agents]]`: the runs root one agent recorded.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentEntry {
    key: Spanned<String>,
    #[serde(default)]
    label: Option<String>,
    root: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConditionEntry {
    key: Spanned<String>,
    #[serde(default)]
    root: Option<String>,
    name: Spanned<String>,
    #[serde(default)]
    label: Option<String>,
}

/// True when `dir` is a study folder: it has a `study.toml` (anything by
/// that name, which loading reads or refuses by name).
pub fn is_study(dir: &Path) -> bool {
    // Whatever is there is one, read or refused by name: a `study.toml`
    // that is a named pipe, or a folder's that cannot be looked at, is
    // never silently left out of the site (issue 24, item 8).
    match std::fs::symlink_metadata(dir.join(STUDY_FILE)) {
        Ok(_) => true,
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// A `study.toml` being read, for errors at a line.
struct Source<'a> {
    file: &'a TomlFile,
    path: &'a Path,
}

impl Source<'_> {
    /// The 1-based line of the first `key =` assignment (a key whose value
    /// was read whole, without its position).
    fn line_of(&self, key: &str) -> u64 {
        self.file
            .text
            .lines()
            .position(|l| {
                l.trim_start()
                    .strip_prefix(key)
                    .is_some_and(|r| r.trim_start().starts_with('='))
            })
            .map_or(1, |i| i as u64 + 1)
    }

    /// The line of a spanned value.
    fn line_at<T>(&self, spanned: &Spanned<T>) -> u64 {
        self.file.line(spanned)
    }

    /// An error at the line of `key`.
    fn at(&self, key: &str, message: impl Into<String>) -> Error {
        Error::at_line(self.path, self.line_of(key), message.into())
    }

    /// An error at the line that names runs root `name`: the first line
    /// outside a comment holding it as a quoted string (in `roots = [...]`
    /// or an agent's `root =`), else the line of `roots`. (A study with
    /// agents named a lost root at line 1, red-team pass of issue 12.)
    fn at_root(&self, name: &str, message: impl Into<String>) -> Error {
        let quoted = [format!("\"{name}\""), format!("'{name}'")];
        let line = self
            .file
            .text
            .lines()
            .position(|l| {
                let code = l.trim_start();
                !code.starts_with('#') && quoted.iter().any(|q| code.contains(q.as_str()))
            })
            .map_or_else(|| self.line_of("roots"), |i| i as u64 + 1);
        Error::at_line(self.path, line, message.into())
    }
}

/// Every runs root of a study, loaded, by the name `study.toml` gives it.
struct Roots {
    /// The roots, resolved against the study folder, in `study.toml` order.
    paths: Vec<PathBuf>,
    /// Name → its conditions and the files of it that could not be read.
    loaded: BTreeMap<String, (StudyData, Vec<String>)>,
    /// Name → condition name → why the condition is incomplete (a merged
    /// sweep that lacks attempts, [`super::view::Unfinished::missing`]).
    incomplete: BTreeMap<String, BTreeMap<String, String>>,
}

/// Reads `dir/study.toml` and every runs root it names.
///
/// Errors (each naming `study.toml` and the line): TOML syntax, unknown or
/// missing keys, a runs root that does not exist or is named twice, a
/// condition not recorded in its root (listing the recorded ones), a
/// duplicated condition key or label, an unknown or repeated figure, an
/// unknown baseline; a prose file that cannot be read.
pub fn load(dir: &Path) -> Result<StudyView> {
    let path = dir.join(STUDY_FILE);
    let toml = TomlFile::read(&path)?;
    let source = Source {
        file: &toml,
        path: &path,
    };
    let file: StudyFile = toml.parse()?;
    let agents = agents(&source, &file)?;
    let names: Vec<String> = if agents.is_empty() {
        file.roots.clone()
    } else {
        agents.iter().map(|(_, root)| root.clone()).collect()
    };
    let roots = load_roots(&source, dir, &names)?;
    let mut problems: Vec<String> = roots.loaded.values().flat_map(|(_, p)| p.clone()).collect();
    problems.sort();
    problems.dedup();
    let mut data = if agents.is_empty() {
        conditions(&source, &file, &names, &roots)?
    } else {
        let mut data = StudyData::default();
        for (agent, root) in &agents {
            let own = conditions(&source, &file, std::slice::from_ref(root), &roots)?;
            data.conditions
                .extend(own.conditions.into_iter().map(|mut c| {
                    c.agent = Some(agent.key.clone());
                    c.key = format!("{}/{}", agent.key, c.base_key);
                    c.label = format!("{} · {}", agent.label, c.base_label);
                    c
                }));
        }
        data.agents = agents.into_iter().map(|(a, _)| a).collect();
        data
    };
    // A question's text, from the first root (in study.toml order) that
    // recorded a prompt of it.
    for name in &names {
        for (id, text) in &roots.loaded[name].0.texts {
            data.texts.entry(id.clone()).or_insert_with(|| text.clone());
        }
    }
    refuse_incomplete(&source, &names, &roots, &data)?;
    check_labels(&source, &data)?;
    let figures = figures(&source, &file.figures)?;
    let baseline = baseline(&source, file.baseline, &data)?;
    let folder = root_label(dir);
    let paths = roots.paths;
    let comparisons = comparisons(&source, dir, &file.comparisons)?;
    Ok(StudyView {
        dir: dir.to_path_buf(),
        title: file.title,
        root_names: paths.iter().map(|r| root_label(r)).collect(),
        root_reals: paths
            .iter()
            .map(|r| std::fs::canonicalize(r).ok())
            .collect(),
        comparisons,
        order: file.order,
        roots: paths,
        figures,
        baseline,
        data,
        problems,
        prose: prose_files(dir)?,
        name: folder
            .strip_prefix("results-")
            .unwrap_or(&folder)
            .to_string(),
    })
}

/// The conditions `[[conditions]]` lists (every condition when it is
/// absent) of the roots `names`.
///
/// Errors: an empty `[[conditions]]`, and what [`listed_conditions`]
/// refuses.
fn conditions(
    source: &Source<'_>,
    file: &StudyFile,
    names: &[String],
    roots: &Roots,
) -> Result<StudyData> {
    match &file.conditions {
        None => Ok(every_condition(names, roots)),
        Some(entries) if entries.is_empty() => Err(source.at(
            "conditions",
            "conditions is empty: remove it to take every condition of every root, or list them",
        )),
        Some(entries) => listed_conditions(source, names, entries, roots),
    }
}

/// The `[[agents]]` entries with their labels (the key where none is
/// given) and roots, in order; empty when there are none.
///
/// Errors (naming `study.toml` and the line): `roots` beside `[[agents]]`,
/// a key that is not letters, digits and `-`, a key or label used twice, a
/// condition entry that names a root (each agent's is its own).
fn agents(source: &Source<'_>, file: &StudyFile) -> Result<Vec<(StudyAgent, String)>> {
    if file.agents.is_empty() {
        return Ok(Vec::new());
    }
    if !file.roots.is_empty() {
        return Err(source.at(
            "roots",
            "with [[agents]], each agent names its runs root (root = ...): remove roots",
        ));
    }
    if let Some(entry) = file.conditions.iter().flatten().find(|c| c.root.is_some()) {
        return Err(Error::at_line(
            source.path,
            source.line_at(&entry.key),
            format!(
                "condition '{}' names a root: with [[agents]] every condition is taken from \
                 each agent's root; remove root =",
                entry.key.get_ref()
            ),
        ));
    }
    let mut out: Vec<(StudyAgent, String)> = Vec::new();
    for entry in &file.agents {
        let key = entry.key.get_ref();
        let at = |message: String| Error::at_line(source.path, source.line_at(&entry.key), message);
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(at(format!(
                "agent key '{key}': use letters, digits and '-' (it names conditions as AGENT/KEY)"
            )));
        }
        let label = entry.label.clone().unwrap_or_else(|| key.clone());
        if out.iter().any(|(a, _)| a.key == *key) {
            return Err(at(format!("agent key '{key}' is used twice")));
        }
        if out.iter().any(|(a, _)| a.label == label) {
            return Err(at(format!(
                "agent label '{label}' is used twice: give each its own"
            )));
        }
        out.push((
            StudyAgent {
                key: key.clone(),
                label,
            },
            entry.root.clone(),
        ));
    }
    Ok(out)
}

/// Every `[[comparisons]]` entry, its two roots loaded and compared
/// ([`super::compare::compare`], conditions paired by name).
///
/// Errors (naming `study.toml` and the line): a repeated key, a key that
/// is not letters, digits and `-`, a root that is not a runs root, and
/// whatever [`super::compare::compare`] refuses.
fn comparisons(
    source: &Source<'_>,
    dir: &Path,
    entries: &[ComparisonEntry],
) -> Result<Vec<super::study::StudyComparison>> {
    let mut out: Vec<super::study::StudyComparison> = Vec::new();
    for entry in entries {
        let key = entry.key.get_ref();
        let line = source.line_at(&entry.key);
        let at = |message: String| Error::at_line(source.path, line, message);
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(at(format!(
                "comparison key '{key}': use letters, digits and '-' (it names a page)"
            )));
        }
        if out.iter().any(|c| c.key == *key) {
            return Err(at(format!("comparison key '{key}' is used twice")));
        }
        let load = |name: &str| {
            let root = dir.join(name);
            if RunsRoot::has_conditions(&root) {
                Ok(super::load::root(&root))
            } else {
                Err(at(format!(
                    "comparison '{key}': runs root '{name}' not found ({} has no condition file \
                     in conditions/)",
                    root.display()
                )))
            }
        };
        let (baseline, candidate) = (load(&entry.baseline)?, load(&entry.candidate)?);
        let mut comparison = super::compare::compare(&baseline, &candidate, &[])
            .map_err(|e| at(format!("comparison '{key}': {e}")))?;
        comparison.baseline = PathBuf::from(&entry.baseline);
        comparison.candidate = PathBuf::from(&entry.candidate);
        out.push(super::study::StudyComparison {
            key: key.clone(),
            title: entry.title.clone(),
            comparison,
        });
    }
    Ok(out)
}

/// Loads every root `names` lists, each once.
fn load_roots(source: &Source<'_>, dir: &Path, names: &[String]) -> Result<Roots> {
    if names.is_empty() {
        return Err(source.at(
            "roots",
            "roots is empty: name at least one runs root (a folder with conditions/)",
        ));
    }
    let mut roots = Roots {
        paths: Vec::new(),
        loaded: BTreeMap::new(),
        incomplete: BTreeMap::new(),
    };
    for name in names {
        if roots.loaded.contains_key(name) {
            return Err(source.at_root(name, format!("runs root '{name}' is named twice")));
        }
        let root = dir.join(name);
        // What `build` takes for a runs root (a condition recorded), so a
        // study never names a root the site does not publish.
        if !RunsRoot::has_conditions(&root) {
            return Err(source.at_root(
                name,
                format!(
                    "runs root '{name}' not found ({} has no condition file in conditions/: \
                     record one with okn-benchmark run)",
                    root.display()
                ),
            ));
        }
        // The same folder spelled twice (`../runs-x` and `../runs-x/`)
        // would count every condition twice.
        if let Some(other) = roots
            .paths
            .iter()
            .find(|r| crate::fsutil::same_place(r, &root))
        {
            return Err(source.at_root(
                name,
                format!(
                    "runs root '{name}' is {} again, named twice",
                    other.display()
                ),
            ));
        }
        let view = super::load::root(&root);
        let problems = view.problems.clone();
        let incomplete = view
            .unfinished
            .iter()
            .filter(|(_, u)| u.missing > 0)
            .map(|(c, u)| (c.clone(), u.line(c)))
            .collect();
        roots.incomplete.insert(name.clone(), incomplete);
        roots
            .loaded
            .insert(name.clone(), (StudyData::from_root(&view), problems));
        roots.paths.push(root);
    }
    Ok(roots)
}

/// Every condition of every root; with several roots, keys and labels
/// say which root (`runs-x/NAME`, `LABEL (runs-x)`).
fn every_condition(names: &[String], roots: &Roots) -> StudyData {
    let mut data = StudyData::default();
    let several = names.len() > 1;
    for name in names {
        let (root_data, _) = &roots.loaded[name];
        for c in &root_data.conditions {
            let mut c = c.clone();
            if several {
                let root = root_label(&c.root);
                c.key = format!("{root}/{}", c.key);
                c.label = format!("{} ({root})", c.label);
            }
            c.base_key = c.key.clone();
            c.base_label = c.label.clone();
            data.conditions.push(c);
        }
    }
    data
}

/// The conditions `[[conditions]]` lists, in its order.
fn listed_conditions(
    source: &Source<'_>,
    names: &[String],
    entries: &[ConditionEntry],
    roots: &Roots,
) -> Result<StudyData> {
    let mut data = StudyData::default();
    for entry in entries {
        let at = source.line_at(&entry.key);
        let name_line = source.line_at(&entry.name);
        let root_name = match &entry.root {
            Some(r) => r.clone(),
            None if names.len() == 1 => names[0].clone(),
            None => {
                return Err(Error::at_line(
                    source.path,
                    at,
                    format!(
                        "condition '{}' needs root = one of {}",
                        entry.key,
                        names.join(", ")
                    ),
                ));
            }
        };
        let Some((root_data, unusable)) = roots.loaded.get(&root_name) else {
            return Err(Error::at_line(
                source.path,
                at,
                format!(
                    "condition '{}': root '{root_name}' is not in roots ({})",
                    entry.key.get_ref(),
                    names.join(", ")
                ),
            ));
        };
        let Some(found) = root_data
            .conditions
            .iter()
            .find(|c| c.key == *entry.name.get_ref())
        else {
            // A condition whose file could not be used is named by what
            // was wrong with it, not as one never recorded.
            if !unusable.is_empty() {
                return Err(Error::Other(format!(
                    "{}:{name_line}: condition '{}' of {root_name} could not be read: {} \
                     recorded file{} there could not be used:\n  {}",
                    source.path.display(),
                    entry.name.get_ref(),
                    unusable.len(),
                    crate::format::plural(unusable.len()),
                    unusable.join("\n  ")
                )));
            }
            let recorded: Vec<&str> = root_data
                .conditions
                .iter()
                .map(|c| c.key.as_str())
                .collect();
            return Err(Error::at_line(
                source.path,
                name_line,
                format!(
                    "condition '{}' is not recorded in {root_name}; recorded: {}",
                    entry.name.get_ref(),
                    recorded.join(", ")
                ),
            ));
        };
        if data
            .conditions
            .iter()
            .any(|c| c.key == *entry.key.get_ref())
        {
            return Err(Error::at_line(
                source.path,
                at,
                format!("condition key '{}' is used twice", entry.key.get_ref()),
            ));
        }
        let mut c: StudyCondition = found.clone();
        c.key = entry.key.get_ref().clone();
        if let Some(label) = &entry.label {
            c.label = label.clone();
        }
        c.base_key = c.key.clone();
        c.base_label = c.label.clone();
        data.conditions.push(c);
    }
    Ok(data)
}

/// A study publishes no incomplete condition: a merged sweep that lacks
/// attempts (a merge without every shard) is kept out of every table,
/// like an unfinished one, so `build` and `build --check` refuse a study
/// that names one (`docs/PUBLISHING.md`, "Exclusions and incomplete
/// roots"; issue 24).
///
/// Errors: [`Error::Other`] naming `study.toml`, the root, the condition,
/// the attempts it lacks and what to do.
fn refuse_incomplete(
    source: &Source<'_>,
    names: &[String],
    roots: &Roots,
    data: &StudyData,
) -> Result<()> {
    for (name, path) in names.iter().zip(&roots.paths) {
        let Some(incomplete) = roots.incomplete.get(name) else {
            continue;
        };
        for c in data.conditions.iter().filter(|c| c.root == *path) {
            if let Some(why) = incomplete.get(&c.condition.name) {
                return Err(source.at_root(
                    name,
                    format!(
                        "runs root '{name}': {why}. A study publishes no incomplete \
                         condition (docs/PUBLISHING.md, \"Exclusions and incomplete roots\"): \
                         finish the sweep, or take the condition out of study.toml; nothing was \
                         written"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Two conditions under one label would be indistinguishable in every
/// table and figure.
fn check_labels(source: &Source<'_>, data: &StudyData) -> Result<()> {
    for (i, c) in data.conditions.iter().enumerate() {
        if let Some(first) = data.conditions[..i].iter().find(|o| o.label == c.label) {
            return Err(source.at(
                "label",
                format!(
                    "conditions '{}' and '{}' have the same label '{}': give each its own",
                    first.key, c.key, c.label
                ),
            ));
        }
    }
    Ok(())
}

/// The figures `figures = [...]` names, each known and listed once.
fn figures(source: &Source<'_>, names: &[String]) -> Result<Vec<FigureKind>> {
    let mut figures = Vec::new();
    for name in names {
        let Some(kind) = FigureKind::parse(name) else {
            let known: Vec<&str> = FigureKind::ALL.iter().map(|k| k.name()).collect();
            return Err(source.at(
                "figures",
                format!("unknown figure '{name}'; known: {}", known.join(", ")),
            ));
        };
        if figures.contains(&kind) {
            return Err(source.at("figures", format!("figure '{name}' is listed twice")));
        }
        figures.push(kind);
    }
    Ok(figures)
}

/// The baseline `baseline = KEY` names, else the first condition; with
/// agents, a condition key without the agent (each agent's own is its
/// baseline).
fn baseline(source: &Source<'_>, key: Option<String>, data: &StudyData) -> Result<String> {
    match key {
        Some(key) if data.baseline_of(&key, None).is_none() => Err(source.at(
            "baseline",
            format!(
                "baseline '{key}' is not a condition of this study; keys: {}",
                data.base_keys().join(", ")
            ),
        )),
        Some(key) => Ok(data
            .baseline_of(&key, None)
            .map_or(key, |c| c.base_key.clone())),
        None => Ok(data
            .conditions
            .first()
            .map(|c| c.base_key.clone())
            .unwrap_or_default()),
    }
}

/// The Markdown files whose regions are filled, with their texts: every
/// `*.md` directly in the study folder, sorted.
///
/// Errors: a file that cannot be read (named).
fn prose_files(dir: &Path) -> Result<BTreeMap<PathBuf, String>> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
        .collect();
    files
        .into_iter()
        .map(|p| Ok((p.clone(), crate::fsutil::read_text(&p)?)))
        .collect()
}

/// A folder's own name, however it was spelled.
pub fn root_label(path: &Path) -> String {
    std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| path.display().to_string())
}
