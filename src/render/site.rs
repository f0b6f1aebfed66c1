//! The static site (`site/`, for GitHub Pages; opens from `file://` with
//! no server): an index of studies and runs roots; per root, a page of its
//! conditions and questions, a page per question with every condition's
//! attempts side by side, and a page per attempt with the prompt, the
//! tool-call timeline, every SPARQL query the agent ran, the answer
//! against the ground truth as a row-level diff, the scores in both tiers,
//! and links to the raw files (`docs/PUBLISHING.md`, "The site").
//!
//! Layout, relative to `site/`:
//!
//! ```text
//! index.html
//! roots/ROOT/index.html
//! roots/ROOT/q/QUESTION.html
//! roots/ROOT/a/QUESTION/CONDITION/attempt-N.html
//! ```
//!
//! Raw files are linked where the harness recorded them (relative links
//! out of `site/`), never copied: the repository is what Pages publishes,
//! with `site/` as its entry. Every piece of recorded text is escaped by
//! the templates (tera autoescape: `& < > " '`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::Theme;
use super::escape_html;
use super::study::StudyView;
use crate::error::Result;
use crate::format::{check, fraction, interval, plural, rate, seconds};
use crate::layout::ATTEMPT_FILES;
use crate::layout::{
    ANSWER_FILE, CALLS_FILE, GROUND_TRUTH_CSV, GROUND_TRUTH_JSON, README_FILE, RESULT_FILE,
    RunsRoot, SUMMARY_FILE,
};
use crate::report::diff::{self, DiffLine, RowKind};
use crate::report::view::{AttemptView, QuestionDetail, RootView};
use crate::runs::records::QuestionResult;
use crate::table::Table;

/// The site folder, under the build's base folder.
pub const SITE_DIR: &str = "site";

/// Ground-truth rows shown on a question page (the rest is one click away).
pub const GROUND_TRUTH_ROWS_SHOWN: usize = 50;

/// Rows of an answer diff shown on an attempt page at most (the columns
/// and the counts of rows left out aside): differing rows come first, so
/// only an answer with more differing rows than this hides any of them.
pub const DIFF_ROWS_SHOWN: usize = 500;

/// One runs root as the site sees it.
#[derive(Debug)]
pub struct SiteRoot {
    /// Its folder name in `site/roots/`.
    pub name: String,
    /// What is recorded in it.
    pub view: RootView,
}

/// A path written with `/`, whatever the platform.
fn slashed(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

use crate::fsutil::normalize;

/// The link from the page at `from` (a file) to `to`, both relative to the
/// same base, with `/` separators and each segment percent-encoded where
/// a URL needs it.
pub fn relative_link(from: &Path, to: &Path) -> String {
    let mut out = String::new();
    for segment in crate::fsutil::relative(from.parent().unwrap_or(Path::new("")), to) {
        if !out.is_empty() {
            out.push('/');
        }
        encode_segment(&segment, &mut out);
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

/// The links from the page `from` to files of the folder `dir`
/// ([`relative_link`] of `dir.join(name)` for each `name`, a plain file
/// name), with the way to the folder worked out once: an attempt page
/// links a dozen files of its folder, and working out each way whole was
/// 5% of `build --check` (docs/PERFORMANCE.md). Where `dir` is the page's
/// own folder or above it (the way is `.` or only `..`), a name could
/// be one the page's path goes down through, so each link is worked out
/// whole.
pub fn links_into(from: &Path, dir: &Path) -> impl Fn(&str) -> String {
    let base = relative_link(from, dir);
    let through = base == "." || base.split('/').all(|s| s == "..");
    let (from, dir) = (from.to_path_buf(), dir.to_path_buf());
    move |name: &str| {
        if through {
            return relative_link(&from, &dir.join(name));
        }
        let mut link = base.clone();
        link.push('/');
        encode_segment(name, &mut link);
        link
    }
}

/// Appends `segment` to `out`, percent-encoding what a path segment of a
/// URL cannot hold as is.
fn encode_segment(segment: &str, out: &mut String) {
    let keep = |b: u8| {
        matches!(b,
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'~'
            | b'!'
            | b'$'
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
            | b'@')
    };
    if segment.bytes().all(keep) {
        out.push_str(segment);
        return;
    }
    for b in segment.bytes() {
        if keep(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// `site/roots/NAME/index.html`.
pub fn root_page(name: &str) -> PathBuf {
    Path::new(SITE_DIR)
        .join("roots")
        .join(name)
        .join("index.html")
}

/// `site/roots/NAME/q/QUESTION.html`. The question id is checked as an
/// id ([`crate::layout::id_segment`]): no record can place a page
/// outside `site/` (issue 24, item 20).
pub fn question_page(name: &str, question: &str) -> PathBuf {
    let question = crate::layout::id_segment(question, crate::layout::IdKind::Record);
    Path::new(SITE_DIR)
        .join("roots")
        .join(name)
        .join("q")
        .join(format!("{question}.html"))
}

/// `site/roots/NAME/a/QUESTION/CONDITION/attempt-N.html`, the question
/// id and the condition name checked as [`question_page`] checks.
pub fn attempt_page(name: &str, question: &str, condition: &str, attempt: u32) -> PathBuf {
    use crate::layout::{IdKind, id_segment};
    Path::new(SITE_DIR)
        .join("roots")
        .join(name)
        .join("a")
        .join(id_segment(question, IdKind::Record).as_ref())
        .join(id_segment(condition, IdKind::Name).as_ref())
        .join(format!("attempt-{attempt}.html"))
}

/// The link from the site page at `page` to the search index
/// (`render::search`); a template context holding it as `search` makes
/// a site page (its search box, its policy).
pub(crate) fn search_link(page: &Path) -> String {
    relative_link(page, &search_index_path())
}

/// The search index's file name in `site/` (`render::search` makes it).
pub const SEARCH_INDEX: &str = "search-index.js";

/// `site/search-index.js`, relative to the build's base.
pub fn search_index_path() -> PathBuf {
    Path::new(SITE_DIR).join(SEARCH_INDEX)
}

/// Navigation HTML: `site › root › question …`, each a link but the last.
pub(crate) fn crumbs(page: &Path, trail: &[(&str, Option<PathBuf>)]) -> String {
    trail
        .iter()
        .map(|(text, target)| match target {
            Some(t) => format!(
                "<a href=\"{}\">{}</a>",
                escape_html(&relative_link(page, t)),
                escape_html(text)
            ),
            None => escape_html(text),
        })
        .collect::<Vec<_>>()
        .join(" › ")
}

#[derive(Clone, Serialize)]
struct Link {
    name: String,
    href: String,
}

#[derive(Serialize)]
struct IndexCondition {
    label: String,
    agent: String,
    host: String,
    model: String,
    questions: u32,
    attempts: u32,
    exact: String,
    interval: String,
    mean_f1: String,
    blocked: u32,
}

#[derive(Serialize)]
struct IndexStudy {
    title: String,
    anchor: String,
    pages: Vec<Link>,
    roots: Vec<Link>,
    questions: usize,
    conditions: Vec<IndexCondition>,
    /// The study's figures, each an inline `<svg>` (ids made unique).
    figures: Vec<String>,
}

#[derive(Serialize)]
struct IndexRoot {
    name: String,
    href: String,
    conditions: usize,
    questions: usize,
    attempts: u32,
    frozen: bool,
}

/// A catalog run or comparison as the site index lists it.
#[derive(Debug, Clone, Serialize)]
pub struct IndexCatalog {
    /// "run" or "comparison".
    pub kind: &'static str,
    /// Its name on the site.
    pub name: String,
    /// The link from the index to its page.
    pub href: String,
    /// One line: the server and the counts, or the classes.
    pub what: String,
}

/// What the site publishes: the build's base folder, its studies and
/// runs roots, and whether the base holds a `README.md`.
#[derive(Clone, Copy)]
pub struct Published<'a> {
    /// The build's base folder; study and root paths are relative to it.
    pub base: &'a Path,
    /// The studies.
    pub studies: &'a [StudyView],
    /// The runs roots, with their names on the site.
    pub roots: &'a [Arc<SiteRoot>],
    /// The base holds a `README.md` (the index links its page).
    pub readme: bool,
    /// The catalog runs and comparisons, as the index lists them.
    pub catalogs: &'a [IndexCatalog],
    /// The project's name, the title of the base's `README.md`
    /// ([`project_name`]), when it has one: the index's heading names it
    /// (issue 26, section 3).
    pub project: Option<&'a str>,
}

/// The title of a README (its first `# ` heading outside a fenced code
/// block, trailing `#`s and code backticks dropped), or `None`.
pub fn project_name(readme: &str) -> Option<String> {
    let mut fence: Option<&str> = None;
    for line in readme.lines() {
        let trimmed = line.trim_start();
        for mark in ["```", "~~~"] {
            if trimmed.starts_with(mark) {
                fence = match fence {
                    Some(open) if open == mark => None,
                    None => Some(mark),
                    other => other,
                };
            }
        }
        if fence.is_some() {
            continue;
        }
        if let Some(title) = line.strip_prefix("# ") {
            let title = title.trim().trim_end_matches('#').trim().replace('`', "");
            if !title.is_empty() {
                return Some(title);
            }
        }
    }
    None
}

/// `site/index.html`: every study (its pages, roots, rates and figures,
/// the latter taken from `figures`, what this build makes of them) and every
/// runs root. `base` is the build's base folder; study and root paths are
/// relative to it.
///
/// Errors: a template that fails to render.
pub fn index_page(
    theme: &Theme,
    published: &Published<'_>,
    figures: &super::assets::AssetMap,
) -> Result<Vec<u8>> {
    let Published {
        base,
        studies,
        roots,
        readme,
        catalogs,
        project,
    } = *published;
    let page = Path::new(SITE_DIR).join("index.html");
    let rel = |p: &Path| p.strip_prefix(base).unwrap_or(p).to_path_buf();
    let studies: Vec<IndexStudy> = studies
        .iter()
        .enumerate()
        .map(|(n, s)| {
            let figures = s
                .figures
                .iter()
                .flat_map(|kind| s.figure_files(*kind))
                .filter_map(|file| {
                    let svg = figures.get(&super::assets::normalize(&file.path))?;
                    super::assets::unique_svg(
                        &String::from_utf8_lossy(svg),
                        &format!("s{n}-{}", file.stem),
                    )
                })
                .collect();
            let pages = s
                .prose
                .keys()
                .map(|md| Link {
                    name: md
                        .file_stem()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    href: relative_link(&page, &rel(&md.with_extension("html"))),
                })
                .collect();
            let roots = s
                .roots
                .iter()
                .zip(&s.root_names)
                .zip(&s.root_reals)
                .map(|((r, name), real)| {
                    let name = name.clone();
                    // The root's site page; a root outside what this build
                    // reads (an absolute path elsewhere) has none and is
                    // named without a link.
                    let same = |x: &Arc<SiteRoot>| {
                        let path = normalize(&x.view.path);
                        path == normalize(&rel(r))
                            || path == normalize(r)
                            || (real.is_some() && x.view.real == *real)
                    };
                    Link {
                        name,
                        href: roots
                            .iter()
                            .find(|x| same(x))
                            .map_or_else(String::new, |x| {
                                relative_link(&page, &root_page(&x.name))
                            }),
                    }
                })
                .collect();
            let conditions = s
                .data
                .conditions
                .iter()
                .map(|c| {
                    let st = c.stats();
                    IndexCondition {
                        label: st.label.clone(),
                        agent: st.agent.clone(),
                        host: st.identity.host_text(),
                        model: st.identity.model_text(),
                        questions: st.questions,
                        attempts: st.attempts,
                        exact: rate(st.exact_rate),
                        interval: interval(st.interval),
                        mean_f1: rate(st.mean_f1),
                        blocked: st.blocked_attempts,
                    }
                })
                .collect();
            IndexStudy {
                title: s.title.clone(),
                anchor: super::markdown::slug(&s.name),
                pages,
                roots,
                questions: s.data.questions().len(),
                conditions,
                figures,
            }
        })
        .collect();
    let roots: Vec<IndexRoot> = roots
        .iter()
        .map(|r| IndexRoot {
            name: r.name.clone(),
            href: relative_link(&page, &root_page(&r.name)),
            conditions: r.view.conditions.len(),
            questions: r.view.questions.len(),
            attempts: r.view.attempts(),
            frozen: r.view.frozen,
        })
        .collect();
    let index = &page;
    let comparisons: Vec<IndexCatalog> = published
        .studies
        .iter()
        .flat_map(|s| {
            s.comparisons.iter().map(move |c| {
                let counts: Vec<String> = crate::report::compare::Class::ALL
                    .iter()
                    .map(|&class| {
                        let n: usize = c.comparison.conditions.iter().map(|x| x.count(class)).sum();
                        format!("{n} {}", class.word())
                    })
                    .collect();
                IndexCatalog {
                    kind: "runs roots",
                    name: c.title.clone(),
                    href: relative_link(index, &comparison_page(&s.name, &c.key)),
                    what: format!(
                        "{} → {}: {} (question × condition)",
                        crate::format::published_name(&c.comparison.baseline),
                        crate::format::published_name(&c.comparison.candidate),
                        counts.join(", ")
                    ),
                }
            })
        })
        .collect();
    let mut context = tera::Context::new();
    context.insert("comparisons", &comparisons);
    context.insert("studies", &studies);
    context.insert("roots", &roots);
    context.insert("catalogs", catalogs);
    let readme =
        readme.then(|| relative_link(&page, &Path::new(README_FILE).with_extension("html")));
    context.insert("readme", &readme);
    context.insert("search", &search_link(&page));
    let title = project.map_or_else(|| "Results".to_string(), |p| format!("{p}: results"));
    Ok(theme
        .render("site/index.html", &title, None, context)?
        .into_bytes())
}

/// The site page of comparison `key` of study `study` (its folder's name
/// without `results-`), relative to the build's base.
pub fn comparison_page(study: &str, key: &str) -> PathBuf {
    Path::new(SITE_DIR)
        .join("comparisons")
        .join(format!("{study}-{key}.html"))
}

/// The site page of a study's comparison: its title, the Markdown of
/// [`super::comparison::markdown`], rendered with the site's theme.
///
/// Errors: a template that fails to render.
pub fn comparison_page_bytes(
    theme: &super::Theme,
    study: &crate::report::study::StudyView,
    compared: &crate::report::study::StudyComparison,
) -> crate::error::Result<Vec<u8>> {
    let page = comparison_page(&study.name, &compared.key);
    let text = super::comparison::markdown(
        &compared.comparison,
        Some(&format!("# {}", super::syntax::md_text(&compared.title))),
    );
    markdown_page(theme, (&page, "comparison"), &text, &compared.title)
}

/// `text` (Markdown) rendered as the site page at `page` (relative to the
/// base; its inline SVG ids take `prefix`), titled by its first heading or
/// `name`, with the trail Results › `name`: a catalog run's or a
/// comparison's page.
///
/// Errors: a template that fails to render.
pub fn markdown_page(
    theme: &super::Theme,
    (page, prefix): (&Path, &str),
    text: &str,
    name: &str,
) -> crate::error::Result<Vec<u8>> {
    let base = page.parent().unwrap_or(Path::new(""));
    let rendered = super::markdown::render(text, base, prefix, &super::assets::AssetMap::new());
    let nav = crumbs(
        page,
        &[
            ("Results", Some(Path::new(SITE_DIR).join("index.html"))),
            (name, None),
        ],
    );
    let title = rendered.title.clone().unwrap_or_else(|| name.to_string());
    Ok(theme
        .site_page(&title, rendered.body, Some(&nav), &search_link(page))?
        .into_bytes())
}

/// `site/roots/NAME/index.html`: the root's conditions and questions.
///
/// Errors: a template that fails to render.
pub fn root_index(theme: &Theme, root: &SiteRoot) -> Result<Vec<u8>> {
    use crate::report::tables;
    let view = &root.view;
    let page = root_page(&root.name);
    let questions = tables::site_questions(view, &|id| {
        relative_link(&page, &question_page(&root.name, id))
    });
    let mut context = tera::Context::new();
    context.insert("name", &root.name);
    context.insert("conditions", &view.conditions.len());
    context.insert("questions", &view.questions.len());
    context.insert(
        "conditions_table",
        &super::syntax::html_fitted(&tables::site_conditions(view)),
    );
    context.insert("questions_table", &super::syntax::html_fitted(&questions));
    context.insert("ordered_note", crate::format::ORDERED_NOTE);
    context.insert("frozen", &view.frozen);
    context.insert("problems", &view.problems);
    let unfinished: Vec<String> = view
        .unfinished
        .iter()
        .map(|(name, u)| u.line(name))
        .collect();
    context.insert("unfinished", &unfinished);
    let plain = |t: &str| t.to_string();
    context.insert(
        "excluded",
        &super::readme::exclusion_lines(view, &plain, &plain),
    );
    let shards_notes: Vec<String> = view
        .conditions
        .values()
        .filter_map(|c| c.shards_note())
        .collect();
    context.insert("shards_notes", &shards_notes);
    context.insert(
        "raw_summary",
        &relative_link(&page, &view.path.join(SUMMARY_FILE)),
    );
    // A root this build writes gets its README page; a frozen one keeps
    // what it has, so its page is linked only if it is there (else the
    // Markdown).
    let readme = view.path.join(README_FILE);
    let readme_page = readme.with_extension("html");
    context.insert(
        "raw_readme",
        &relative_link(
            &page,
            if !view.frozen || view.readme_page {
                &readme_page
            } else {
                &readme
            },
        ),
    );
    let nav = crumbs(
        &page,
        &[
            ("Results", Some(Path::new(SITE_DIR).join("index.html"))),
            (&root.name, None),
        ],
    );
    context.insert("search", &search_link(&page));
    Ok(theme
        .render("site/root.html", &root.name, Some(&nav), context)?
        .into_bytes())
}

/// The shared part of every attempt page of one condition of a question.
struct AttemptContext<'a> {
    root: &'a SiteRoot,
    question: &'a str,
    question_text: &'a str,
    /// The condition's name and label.
    condition: (&'a str, &'a str),
    result: &'a QuestionResult,
    ground_truth: Option<&'a Table>,
    /// Links every attempt page of this condition shares (its pages sit
    /// in one folder, so the links are the same).
    shared_raw: &'a [Link],
}

/// The pages of one question: one page per attempt, then the question's
/// page, each handed to `out` as `(path, bytes)` as soon as it is made,
/// so a question of many attempts holds one page at a time (issue 26,
/// section 4).
///
/// Errors: a template that fails to render; what `out` returns.
pub fn question_pages(
    theme: &Theme,
    root: &SiteRoot,
    detail: &QuestionDetail,
    out: &mut dyn FnMut(PathBuf, Vec<u8>) -> Result<()>,
) -> Result<()> {
    use crate::report::tables;
    let view = &root.view;
    let question = detail.id.as_str();
    let Some(recorded) = view.questions.get(question) else {
        return Ok(());
    };
    let page = question_page(&root.name, question);
    let qdir = RunsRoot::new(&view.path).question_dir(question);
    let text = recorded.text.clone().unwrap_or_default();
    // The results as the detail read them: a view loaded for the site
    // holds no attempts (`RootView::attempts_held`).
    let most = detail
        .results
        .values()
        .map(|r| r.attempts.len())
        .max()
        .unwrap_or(0);
    let mut attempts_grid = tables::attempts_header(most);
    for (name, result) in &detail.results {
        let label = view.label(name);
        let shared_page = attempt_page(&root.name, question, name, 1);
        let recorded_files = detail.conditions.get(name);
        let mut shared_raw = Vec::new();
        if recorded_files.is_some_and(|c| c.result_file) {
            shared_raw.push(Link {
                name: RESULT_FILE.to_string(),
                href: relative_link(
                    &shared_page,
                    &RunsRoot::new(&view.path)
                        .condition_dir(question, name)
                        .join(RESULT_FILE),
                ),
            });
        }
        for file in [GROUND_TRUTH_CSV, GROUND_TRUTH_JSON] {
            if detail.files.contains(file) {
                shared_raw.push(Link {
                    name: file.to_string(),
                    href: relative_link(&shared_page, &qdir.join(file)),
                });
            }
        }
        let context = AttemptContext {
            root,
            question,
            question_text: &text,
            condition: (name, &label),
            result,
            ground_truth: detail.ground_truth.as_ref(),
            shared_raw: &shared_raw,
        };
        let attempts = recorded_files.map_or(&[][..], |c| &c.attempts);
        attempts_grid.push(tables::attempts_row(&label, result, attempts, most, &|a| {
            relative_link(&page, &attempt_page(&root.name, question, name, a))
        }));
        for a in attempts {
            let target = attempt_page(&root.name, question, name, a.result.attempt);
            out(target, attempt_page_bytes(theme, &context, a)?)?;
        }
    }
    let mut context = tera::Context::new();
    context.insert("id", question);
    context.insert("text", &text);
    context.insert(
        "attempts_table",
        &super::syntax::html_fitted(&attempts_grid),
    );
    // Issue 27: each trajectory expectation's pass rate per condition on
    // this question, beside the attempts, never in them.
    let tallies: Vec<(
        String,
        BTreeMap<String, crate::report::view::ExpectationTally>,
    )> = detail
        .results
        .iter()
        .map(|(name, result)| {
            let mut t = BTreeMap::new();
            crate::report::view::tally_expectations(result, &mut t);
            (view.label(name), t)
        })
        .collect();
    let rows: Vec<(
        String,
        &BTreeMap<String, crate::report::view::ExpectationTally>,
    )> = tallies.iter().map(|(l, t)| (l.clone(), t)).collect();
    if let Some(grid) = tables::expectations(&rows) {
        context.insert("expectations_table", &super::syntax::html(&grid));
    }
    if let Some(truth) = &detail.ground_truth {
        let grid = tables::rows(truth, GROUND_TRUTH_ROWS_SHOWN);
        context.insert("ground_truth_shown", &grid.rows.len());
        context.insert("ground_truth_total", &truth.rows.len());
        context.insert("ground_truth_table", &super::syntax::html(&grid));
    }
    context.insert("ground_truth", &detail.ground_truth.is_some());
    context.insert("answer_key", &detail.answer_key);
    context.insert(
        "raw_ground_truth",
        &relative_link(&page, &qdir.join(GROUND_TRUTH_CSV)),
    );
    context.insert(
        "raw_ground_truth_json",
        &relative_link(&page, &qdir.join(crate::layout::GROUND_TRUTH_JSON)),
    );
    context.insert("search", &search_link(&page));
    let nav = crumbs(
        &page,
        &[
            ("Results", Some(Path::new(SITE_DIR).join("index.html"))),
            (&root.name, Some(root_page(&root.name))),
            (question, None),
        ],
    );
    out(
        page,
        theme
            .render("site/question.html", question, Some(&nav), context)?
            .into_bytes(),
    )
}

#[derive(Serialize)]
struct ScoreView {
    exact: String,
    ordered: String,
    f1: String,
    precision: String,
    recall: String,
    strict_exact: String,
    strict_ordered: String,
    strict_f1: String,
    answer_rows: usize,
    key_rows: usize,
    matched_rows: usize,
    version: String,
    figures: u32,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct CallView {
    index: usize,
    /// Where the call starts on the timeline, percent of the episode.
    offset: String,
    /// How long it lasts on the timeline, percent (at least 0.5).
    width: String,
    start: String,
    duration: String,
    tool: String,
    status: String,
    class: String,
    /// Characters the reply put into the agent's context.
    chars: usize,
    summary: String,
    arguments: String,
    /// The ids of the trajectory expectations this call made fail
    /// (issue 27: the failing call marked on the timeline); empty when
    /// none.
    fails: String,
}

/// One trajectory expectation as an attempt page shows it (issue 27).
#[derive(Serialize)]
struct ExpectationView {
    id: String,
    kind: String,
    check: String,
    status: String,
    /// `bad` for a failure, `ok` for a pass, empty otherwise.
    class: &'static str,
    detail: String,
    call: Option<usize>,
}

/// The trajectory expectations of attempt `a`, typed by the ones its
/// question `result` records (`docs/TRAJECTORY.md`).
fn expectation_views(
    result: &QuestionResult,
    a: &crate::runs::records::AttemptResult,
) -> Vec<ExpectationView> {
    use crate::expectations::Status;
    a.expectations
        .iter()
        .map(|(id, judged)| {
            let e = result.expectations.iter().find(|e| &e.id == id);
            ExpectationView {
                id: id.clone(),
                kind: e
                    .map_or("", |e| crate::report::view::kind_name(e.kind))
                    .to_string(),
                check: e.map_or("", |e| e.check.name()).to_string(),
                status: judged.status.name().replace('_', " "),
                class: match judged.status {
                    Status::Fail => "bad",
                    Status::Pass | Status::KnownGapFixed => "ok",
                    _ => "",
                },
                detail: judged.detail.clone().unwrap_or_default(),
                call: judged.call,
            }
        })
        .collect()
}

#[derive(Serialize)]
struct QueryView {
    index: usize,
    tool: String,
    graph: Option<String>,
    status: String,
    class: String,
    text: String,
}

#[derive(Serialize)]
struct DiffRow {
    sign: &'static str,
    class: &'static str,
    text: String,
}

#[derive(Serialize)]
struct DiffView {
    note: String,
    rows: Vec<DiffRow>,
    /// What was left out when more rows differ than a page shows.
    more: Option<String>,
    /// The whole answer and ground truth, linked beside `more`.
    files: Vec<Link>,
}

/// The status of a call as shown: unreadable, refused, error, soft
/// error, ok.
fn call_status(c: &crate::layout::CallRecord) -> (String, String) {
    if c.unreadable.is_some() {
        let error = c.error.as_deref().unwrap_or("the proxy could not read it");
        (format!("unreadable request: {error}"), "bad".into())
    } else if c.refused {
        ("refused (withheld tool)".into(), "bad".into())
    } else if let Some(e) = &c.error {
        (format!("error: {e}"), "bad".into())
    } else if let Some(s) = &c.soft_error {
        (format!("soft error: {s}"), "soft".into())
    } else if c.ok {
        ("ok".into(), "ok".into())
    } else {
        ("failed".into(), "bad".into())
    }
}

/// Whether an argument named `key` carries SPARQL.
pub(crate) fn is_query_argument(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.contains("query") || key.contains("sparql")
}

/// A one-line summary of a call's arguments (keys and short values).
fn arguments_summary(arguments: &serde_json::Value) -> String {
    match arguments {
        serde_json::Value::Object(map) if !map.is_empty() => map
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) if is_query_argument(k) => {
                    format!("{k}: {} lines", s.lines().count())
                }
                serde_json::Value::String(s) => {
                    let short: String = s.chars().take(40).collect();
                    if short.len() < s.len() {
                        format!("{k}: {short}…")
                    } else {
                        format!("{k}: {short}")
                    }
                }
                other => {
                    let text = other.to_string();
                    let short: String = text.chars().take(40).collect();
                    format!("{k}: {short}")
                }
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => "no arguments".into(),
    }
}

/// The sign and the row class (of `static/style.css`) a diff row shows.
fn diff_mark(kind: RowKind) -> (&'static str, &'static str) {
    match kind {
        RowKind::Same => ("", "same"),
        RowKind::Missing => ("−", "del"),
        RowKind::Extra => ("+", "ins"),
        RowKind::MovedFromHere => ("−↕", "soft"),
        RowKind::MovedHere => ("+↕", "soft"),
    }
}

/// `n thing` or `n things`.
fn counted(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", plural(n))
}

/// The answer against the ground truth as the page shows it
/// ([`diff::answer_diff`]): the columns, every differing row before any
/// identical one, and what was left out, counted. `files` are the links
/// to the whole answer and ground truth, given where rows are left out.
fn diff_view(answer: &Table, truth: &Table, ordered: bool, files: Vec<Link>) -> DiffView {
    let d = diff::answer_diff(answer, truth, ordered, DIFF_ROWS_SHOWN);
    let mut rows = Vec::new();
    let header = |cols: &[String]| cols.join(",");
    if answer.columns != truth.columns {
        rows.push(DiffRow {
            sign: "−",
            class: "del",
            text: format!("columns: {}", header(&truth.columns)),
        });
        rows.push(DiffRow {
            sign: "+",
            class: "ins",
            text: format!("columns: {}", header(&answer.columns)),
        });
    } else {
        rows.push(DiffRow {
            sign: "",
            class: "same",
            text: format!("columns: {}", header(&truth.columns)),
        });
    }
    for line in &d.lines {
        rows.push(match line {
            DiffLine::Row { kind, text } => {
                let (sign, class) = diff_mark(*kind);
                DiffRow {
                    sign,
                    class,
                    text: text.clone(),
                }
            }
            DiffLine::Skipped { rows } => DiffRow {
                sign: "⋯",
                class: "muted",
                text: format!("{} not shown", counted(*rows, "identical row")),
            },
        });
    }
    let mut note = String::from(
        "− a ground-truth row the answer lacks, + an answer row the ground truth lacks",
    );
    if d.moved > 0 {
        note.push_str(
            ", ↕ a row both hold at different places (−↕ where the ground truth has it, +↕ where the answer has it)",
        );
    }
    note.push_str(&format!(
        "; {}, {}{}. ",
        counted(d.answer_rows, "answer row"),
        counted(d.truth_rows, "ground-truth row"),
        if ordered {
            ", in order (the key is ordered)"
        } else {
            ", both sorted (the key is unordered)"
        }
    ));
    let differing = d.missing + d.extra + 2 * d.moved;
    if differing == 0 {
        note.push_str(if d.identical == 0 {
            "Both are empty. "
        } else {
            "Every row is the same. "
        });
        if d.identical_hidden > 0 {
            note.push_str(&format!(
                "The first {} are shown; {} more are not. ",
                counted(DIFF_ROWS_SHOWN, "row"),
                d.identical_hidden
            ));
        }
    } else {
        note.push_str(&format!(
            "{} missing from the answer, {} extra in it",
            counted(d.missing, "row"),
            d.extra
        ));
        if d.moved > 0 {
            note.push_str(&format!(", {} out of place", d.moved));
        }
        note.push_str(&format!("; {} identical. ", d.identical));
        if d.differing_hidden == 0 && d.identical_hidden > 0 {
            note.push_str("Every differing row is shown");
            if d.context > 0 {
                note.push_str(&format!(
                    ", with up to {} around it",
                    counted(d.context, "identical row")
                ));
            }
            if d.identical_hidden == d.identical {
                note.push_str(&format!(
                    "; the {} {} not shown. ",
                    counted(d.identical, "identical row"),
                    if d.identical == 1 { "is" } else { "are" }
                ));
            } else {
                note.push_str(&format!(
                    "; {} of the {} identical rows {} not shown. ",
                    d.identical_hidden,
                    d.identical,
                    if d.identical_hidden == 1 { "is" } else { "are" }
                ));
            }
        }
    }
    note.push_str(
        "The diff compares text; the score reads numbers and IRIs as the scoring rules say.",
    );
    let more = (d.differing_hidden > 0).then(|| {
        let identical = if d.identical_hidden > 0 {
            format!(" and {}", counted(d.identical_hidden, "identical row"))
        } else {
            String::new()
        };
        format!(
            "The first {} are shown; {} more differing row{}{identical} are not.",
            counted(DIFF_ROWS_SHOWN, "differing row"),
            d.differing_hidden,
            plural(d.differing_hidden),
        )
    });
    DiffView {
        note,
        rows,
        files: if more.is_some() { files } else { Vec::new() },
        more,
    }
}

/// The page of one attempt: its prompt and verdict, both scoring tiers,
/// the answer against the ground truth, the tool-call timeline with the
/// SPARQL among the calls, the final message and the raw files.
///
/// Errors: a template that fails to render.
fn attempt_page_bytes(theme: &Theme, c: &AttemptContext<'_>, v: &AttemptView) -> Result<Vec<u8>> {
    let a = &v.result;
    let (name, label) = c.condition;
    let page = attempt_page(&c.root.name, c.question, name, a.attempt);
    let mut context = tera::Context::new();
    context.insert("question", c.question);
    context.insert("question_text", c.question_text);
    context.insert("attempt", &a.attempt);
    context.insert("condition", label);
    // The condition's agent: host, its version and the model (issue 25,
    // section 5), the model this attempt's host resolved where it said.
    let agent = c.root.view.conditions.get(name).map(|c| c.agent());
    let host = agent.as_ref().map_or_else(
        || crate::format::host_version(&v.host.report.host, None),
        crate::report::AgentIdentity::host_text,
    );
    context.insert("agent", &agent.as_ref().map_or("", |a| a.agent.as_str()));
    context.insert("host", &host);
    context.insert(
        "model",
        &crate::format::model_cell(
            a.model_resolved.as_deref(),
            agent.as_ref().and_then(|a| a.model_asked.as_deref()),
            agent.as_ref().is_none_or(|a| a.plays_model),
        ),
    );
    context.insert("wall_s", &seconds(a.wall_s));
    context.insert(
        "host_report",
        &super::syntax::html(&crate::report::tables::host_report(&v.host, &host)),
    );
    context.insert("server_s", &seconds(a.server_s));
    context.insert("verdict", &v.verdict.headline());
    context.insert("verdict_class", v.verdict.tone());
    let mut notes = a.notes.clone();
    if a.timed_out {
        notes.push("The agent host was stopped at its timeout.".into());
    }
    context.insert("notes", &notes);
    context.insert("score", &a.score.as_ref().map(score_view));
    // The answer against the ground truth.
    let link = links_into(&page, &v.dir);
    let (diff, missing) = match (&v.answer, c.ground_truth) {
        (Some(Ok(table)), Some(truth)) => {
            let files = std::iter::once(Link {
                name: ANSWER_FILE.to_string(),
                href: link(ANSWER_FILE),
            })
            .chain(
                c.shared_raw
                    .iter()
                    .filter(|l| l.name == GROUND_TRUTH_CSV)
                    .cloned(),
            )
            .collect();
            (
                Some(diff_view(table, truth, c.result.ordered_key, files)),
                "",
            )
        }
        (Some(Err(e)), Some(_)) => {
            context.insert(
                "diff_missing",
                &format!("answer.csv could not be read: {e}"),
            );
            (None, "")
        }
        (None, _) => (None, "No answer.csv: nothing was submitted."),
        (Some(_), None) => (None, "No ground truth recorded beside the attempts."),
    };
    if diff.is_some() || !missing.is_empty() {
        context.insert("diff_missing", missing);
    }
    context.insert("diff", &diff);
    let (mut calls, queries) = calls_views(v);
    let expectations = expectation_views(c.result, a);
    for call in &mut calls {
        let failing: Vec<&str> = expectations
            .iter()
            .filter(|e| e.call == Some(call.index))
            .map(|e| e.id.as_str())
            .collect();
        call.fails = failing.join(", ");
    }
    context.insert("expectations", &expectations);
    context.insert(
        "calls_missing",
        if v.files.contains(CALLS_FILE) {
            "No tool was called."
        } else {
            "No calls.json was recorded."
        },
    );
    context.insert("calls", &calls);
    context.insert("queries", &queries);
    context.insert("final_message", &v.final_message);
    context.insert(
        "prompt",
        v.prompt.as_deref().unwrap_or("(no prompt.txt recorded)"),
    );
    let mut raw: Vec<Link> = ATTEMPT_FILES
        .iter()
        .filter(|name| v.files.contains(**name))
        .map(|name| Link {
            name: name.to_string(),
            href: link(name),
        })
        .collect();
    raw.extend_from_slice(c.shared_raw);
    context.insert("raw", &raw);
    let nav = crumbs(
        &page,
        &[
            ("Results", Some(Path::new(SITE_DIR).join("index.html"))),
            (&c.root.name, Some(root_page(&c.root.name))),
            (c.question, Some(question_page(&c.root.name, c.question))),
            (&format!("{label} · attempt {}", a.attempt), None),
        ],
    );
    context.insert("search", &search_link(&page));
    let title = format!("{} · attempt {}", c.question, a.attempt);
    Ok(theme
        .render("site/attempt.html", &title, Some(&nav), context)?
        .into_bytes())
}

/// Both scoring tiers of an answer, as the attempt page shows them.
fn score_view(s: &crate::score::Score) -> ScoreView {
    ScoreView {
        exact: check(Some(s.exact)),
        ordered: check(s.ordered),
        f1: fraction(s.f1, 2),
        precision: fraction(s.row_precision, 2),
        recall: fraction(s.row_recall, 2),
        strict_exact: check(Some(s.strict_exact)),
        strict_ordered: check(s.strict_ordered),
        strict_f1: fraction(s.strict_f1, 2),
        answer_rows: s.answer_rows,
        key_rows: s.key_rows,
        matched_rows: s.matched_rows,
        version: s.scoring_version.clone(),
        figures: s.significant_figures,
        notes: s.notes.clone(),
    }
}

/// The tool calls of an attempt on its timeline, and the SPARQL among
/// their arguments.
fn calls_views(v: &AttemptView) -> (Vec<CallView>, Vec<QueryView>) {
    let mut call_views = Vec::new();
    let mut queries = Vec::new();
    let Some(calls) = &v.calls else {
        return (call_views, queries);
    };
    let span = calls
        .iter()
        .map(|c| c.start_s + c.duration_s)
        .fold(v.result.wall_s, f64::max)
        .max(1e-9);
    for c in calls {
        let (status, class) = call_status(c);
        if let serde_json::Value::Object(map) = &c.arguments {
            for (k, value) in map {
                if let serde_json::Value::String(text) = value
                    && is_query_argument(k)
                {
                    queries.push(QueryView {
                        index: c.index,
                        tool: c.tool.clone(),
                        graph: map
                            .get("graph")
                            .and_then(|g| g.as_str())
                            .map(str::to_string),
                        status: status.clone(),
                        class: class.clone(),
                        text: clip(text),
                    });
                }
            }
        }
        call_views.push(CallView {
            index: c.index,
            offset: format!("{:.1}", (c.start_s / span * 100.0).clamp(0.0, 99.5)),
            width: format!("{:.1}", (c.duration_s / span * 100.0).clamp(0.5, 100.0)),
            start: format!("{:.3}", c.start_s),
            duration: format!("{:.3}", c.duration_s),
            tool: match &c.unreadable {
                Some(_) if c.tool.is_empty() => "(unreadable request)".to_string(),
                _ => c.tool.clone(),
            },
            status,
            class,
            chars: c.result_chars,
            summary: arguments_summary(&c.arguments),
            arguments: clip(&serde_json::to_string_pretty(&c.arguments).unwrap_or_default()),
            fails: String::new(),
        });
    }
    (call_views, queries)
}

/// The most of one query or one call's arguments an attempt page shows,
/// in bytes: fifteen 280 KB queries once made an 18 MB page. The whole
/// text is in the linked `calls.json`.
pub const CLIP_BYTES: usize = 16 * 1024;

/// `text`, cut at a character boundary near [`CLIP_BYTES`] with a note of
/// what was left out.
fn clip(text: &str) -> String {
    clip_from(text, "calls.json")
}

/// [`clip`], its note naming `source` as where the whole text is.
pub(crate) fn clip_from(text: &str, source: &str) -> String {
    if text.len() <= CLIP_BYTES {
        return text.to_string();
    }
    let mut end = CLIP_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… {} more bytes not shown: the whole text is in {source}",
        &text[..end],
        text.len() - end
    )
}

/// Folder names of `roots` in `site/roots/`: the root's own name (`own`,
/// in the same order: the folder's name however it was spelled), or its
/// path with `/` as `--` where two roots share a name.
pub fn site_names(roots: &[PathBuf], own: &[String]) -> Vec<String> {
    let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
    for n in own {
        *counts.entry(n).or_default() += 1;
    }
    let wanted: Vec<String> = roots
        .iter()
        .zip(own)
        .map(|(r, n)| {
            if counts[n] > 1 {
                slashed(&normalize(r)).replace('/', "--")
            } else {
                n.clone()
            }
        })
        .collect();
    // A path spelled with `--` can still meet another root's own name
    // (`x/runs` and `x--runs`): later ones in path order get `-2`, `-3`,
    // never a name another root wants (two
    // roots shared one folder of the site).
    let mut taken: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut names = Vec::with_capacity(wanted.len());
    for name in &wanted {
        let mut unique = name.clone();
        let mut n = 2;
        while taken.contains(&unique) || (unique != *name && wanted.contains(&unique)) {
            unique = format!("{name}-{n}");
            n += 1;
        }
        taken.insert(unique.clone());
        names.push(unique);
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_request_reads_as_such_on_the_attempt_page() {
        let call = crate::layout::CallRecord {
            index: 1,
            tool: String::new(),
            arguments: serde_json::Value::Null,
            start_s: 0.0,
            duration_s: 0.0,
            ok: false,
            soft_error: None,
            refused: false,
            forwarded: false,
            error: Some("Parse error: the message is not JSON (trailing comma)".into()),
            result_chars: 0,
            result_preview: String::new(),
            unreadable: Some(crate::layout::UnreadableRequest {
                code: Some(-32700),
                id: None,
                method: None,
                line_bytes: 12,
                line_preview: "{\"a\":1,}".into(),
            }),
        };
        assert_eq!(
            call_status(&call),
            (
                "unreadable request: Parse error: the message is not JSON (trailing comma)".into(),
                "bad".into()
            )
        );
    }

    /// Issue 25, section 5: what an agent host reported is untrusted text
    /// (a model name, a failure's reason, a version a CLI printed): the
    /// attempt page's host report escapes it, and a count the host did
    /// not state reads "not stated", never 0.
    #[test]
    fn a_host_report_is_escaped_and_says_what_was_not_stated() {
        use crate::agent::host::{FailureKind, HostFailure, HostReport, Usage};
        let view = crate::report::view::HostView {
            report: HostReport {
                host: "codex".into(),
                model: Some("<b>gpt</b>".into()),
                usage: Some(Usage {
                    source: "agent.json".into(),
                    cost_usd: None,
                    input_tokens: Some(0),
                    output_tokens: Some(12),
                    cache_creation_input_tokens: None,
                    cache_read_input_tokens: None,
                    num_turns: None,
                    api_s: Some(1.25),
                }),
                failure: Some(HostFailure {
                    kind: FailureKind::RateLimit,
                    reason: "<script>alert('x')</script> & more".into(),
                }),
            },
            wall_s: Some(3.0),
            measured_by: Some("runner".into()),
        };
        let html = super::super::syntax::html(&crate::report::tables::host_report(
            &view,
            "codex-cli \"1\" <i>",
        ));
        for (figure, value) in [
            ("host version", "codex-cli &quot;1&quot; &lt;i&gt;"),
            ("model resolved", "&lt;b&gt;gpt&lt;/b&gt;"),
            ("input tokens, not cached", "0"),
            ("input tokens read from the cache", "not stated"),
            ("input tokens written to the cache", "not stated"),
            ("output tokens", "12"),
            ("cost", "not stated"),
            ("turns", "not stated"),
            ("time waiting on the API", "1.2 s"),
            ("wall time", "3.0 s, measured by the runner"),
        ] {
            assert!(
                html.contains(&format!("<td>{figure}</td><td>{value}</td>")),
                "{figure}: {html}"
            );
        }
        assert!(
            !html.contains("<script>") && !html.contains("<b>"),
            "{html}"
        );
        assert!(html.contains("rate limit: &lt;script&gt;"), "{html}");
    }

    #[test]
    fn long_texts_are_clipped_at_a_character_boundary() {
        assert_eq!(clip("short"), "short");
        let long = "中".repeat(CLIP_BYTES);
        let clipped = clip(&long);
        assert!(clipped.len() < CLIP_BYTES + 100, "{}", clipped.len());
        assert!(clipped.ends_with(&format!(
            "… {} more bytes not shown: the whole text is in calls.json",
            long.len() - (CLIP_BYTES / 3) * 3
        )));
    }

    #[test]
    fn every_root_gets_its_own_site_folder() {
        let roots: Vec<PathBuf> = ["a/runs", "b/runs", "x--runs", "x/runs", "solo"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let own: Vec<String> = roots
            .iter()
            .map(|r| super::super::study::root_label(r))
            .collect();
        let names = site_names(&roots, &own);
        assert_eq!(
            names,
            ["a--runs", "b--runs", "x--runs", "x--runs-2", "solo"]
        );
    }

    #[test]
    fn links_are_relative_and_encoded() {
        assert_eq!(
            relative_link(
                Path::new("site/roots/r/a/q/c/attempt-1.html"),
                Path::new("r/q_results/c/attempt-1/answer.csv")
            ),
            "../../../../../../r/q_results/c/attempt-1/answer.csv"
        );
        assert_eq!(
            relative_link(
                Path::new("site/index.html"),
                Path::new("site/roots/x y/index.html")
            ),
            "roots/x%20y/index.html"
        );
        assert_eq!(
            relative_link(Path::new("./site/index.html"), Path::new("README.html")),
            "../README.html"
        );
        assert_eq!(
            relative_link(Path::new("site/q/a.html"), Path::new("site/q/b#.html")),
            "b%23.html"
        );
    }

    #[test]
    fn diffs_sort_unordered_rows_and_mark_both_sides() {
        let truth = Table::from_csv(b"a,b\n1,x\n2,y\n3,z\n").unwrap();
        let answer = Table::from_csv(b"a,b\n3,z\n1,x\n4,\"w,<script>\"\n").unwrap();
        let d = diff_view(&answer, &truth, false, Vec::new());
        let shown: Vec<(String, String)> = d
            .rows
            .iter()
            .map(|r| (r.sign.to_string(), r.text.clone()))
            .collect();
        assert_eq!(shown[0], ("".into(), "columns: a,b".into()));
        assert!(shown.contains(&("−".into(), "2,y".into())), "{shown:?}");
        assert!(
            shown.contains(&("+".into(), "4,\"w,<script>\"".into())),
            "{shown:?}"
        );
        assert!(shown.contains(&("".into(), "1,x".into())), "{shown:?}");
        assert!(shown.contains(&("".into(), "3,z".into())), "{shown:?}");
        // Ordered: a moved row is a difference.
        let d = diff_view(&answer, &truth, true, Vec::new());
        assert!(d.rows.iter().filter(|r| !r.sign.is_empty()).count() >= 3);
    }

    /// relative_link as it was before it skipped normalizing plain paths.
    fn relative_link_reference(from: &Path, to: &Path) -> String {
        let from = normalize(from.parent().unwrap_or(Path::new("")));
        let to = normalize(to);
        let a: Vec<_> = from.components().collect();
        let b: Vec<_> = to.components().collect();
        let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let mut parts: Vec<String> = vec!["..".to_string(); a.len() - common];
        parts.extend(b[common..].iter().map(|c| {
            let mut s = String::new();
            encode_segment(&c.as_os_str().to_string_lossy(), &mut s);
            s
        }));
        if parts.is_empty() {
            ".".to_string()
        } else {
            parts.join("/")
        }
    }

    #[test]
    fn links_match_the_normalizing_reference() {
        let paths = [
            "",
            ".",
            "..",
            "a",
            "a/b.html",
            "./a/b.html",
            "a/./b/../c.html",
            "../x/y.html",
            "../../x",
            "site/roots/r/a/q/c/attempt-1.html",
            "r/q_results/c/attempt-1/answer.csv",
            "site/roots/x y/index.html",
            "site/q/b#.html",
            "/abs/p.html",
            "/abs/q/r.csv",
            "a//b/c.html",
        ];
        for from in paths {
            for to in paths {
                assert_eq!(
                    relative_link(Path::new(from), Path::new(to)),
                    relative_link_reference(Path::new(from), Path::new(to)),
                    "{from} -> {to}"
                );
            }
        }
    }

    /// The links into a folder are the links worked out whole, wherever
    /// the folder is from the page (below it, beside it, above it, the
    /// page's own, one the page's path goes down through).
    #[test]
    fn links_into_a_folder_are_the_links_worked_out_whole() {
        let pages = [
            "a.html",
            "site/roots/r/q/c/attempt-1.html",
            "r/q_results/c/attempt-1/x.html",
            "../p.html",
            "site/b#/p.html",
        ];
        let dirs = [
            "",
            ".",
            "r/q_results/c/attempt-1",
            "r/q_results/c",
            "site",
            "site/roots",
            "../x",
            "..",
            "site/b#",
        ];
        let names = ["answer.csv", "attempt-1", "b#", "roots", "x y.txt"];
        for page in pages {
            for dir in dirs {
                let link = links_into(Path::new(page), Path::new(dir));
                for name in names {
                    assert_eq!(
                        link(name),
                        relative_link(Path::new(page), &Path::new(dir).join(name)),
                        "{page} -> {dir}/{name}"
                    );
                }
            }
        }
    }

    #[test]
    fn shared_root_names_are_told_apart() {
        let roots = [
            PathBuf::from("a/runs-x"),
            PathBuf::from("b/runs-x"),
            PathBuf::from("runs-y"),
        ];
        let own: Vec<String> = roots
            .iter()
            .map(|r| super::super::study::root_label(r))
            .collect();
        let names = site_names(&roots, &own);
        assert_eq!(names, ["a--runs-x", "b--runs-x", "runs-y"]);
    }
}
