//! Exporters: one per kind of output `build` writes, each a function of
//! the loaded [`BuildView`] (and of what the exporters before it made)
//! into [`Output`]s. `build`'s plan is a loop over [`EXPORTERS`]; adding an
//! output is one more exporter, listed there. No exporter reads a file: what they need
//! is loaded into the view first (the shape of hyperfine's `Exporter`).
//!
//! | exporter | writes |
//! |---|---|
//! | [`RootFiles`] | each runs root's `README.md`, its summary CSVs when its view holds its attempts ([`super::readme`]), and `README.html`: a job per root, run with the site's question jobs |
//! | [`Figures`] | each study's `figures/*.svg` ([`super::figures`]) |
//! | [`Regions`] | each study's prose with its generated regions filled ([`super::study`]) |
//! | [`CatalogReports`] | each catalog run's `report.md`, each comparison's `comparison.md` ([`crate::catalog::published`]) |
//! | [`Pages`] | a self-contained `X.html` beside every other `X.md` ([`super::markdown`]) |
//! | [`Site`] | `site/`: index, root, question and attempt pages ([`super::site`]), the search index ([`super::search`]); the summary CSVs of a root whose view let its attempts go, question by question |
//!
//! The paper's tables and RTF (`paper tables`, `paper doc`) use the same
//! tables and writers outside `build` (`render::paper`, `render::manuscript`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::Theme;
use super::assets::Assets;
use super::site::SiteRoot;
use super::study::StudyView;
use crate::error::{Error, Result};
use crate::report::study::FigureKind;

pub use super::Output;

/// Work that produces outputs when run: the site's pages of one question,
/// loaded and rendered on demand so memory stays flat however many
/// attempts a root holds. It hands each output, as soon as it is made, to
/// the function it is given ([`Emit`]), which compares or writes it and
/// lets it go: a question of 100 attempts holds one attempt page at a
/// time, not 100 (issue 26, section 4: memory flat in the attempts).
///
/// Errors: what making an output meets, and what [`Emit`] returns.
pub type Job = Box<dyn Fn(&mut Emit<'_>) -> Result<()> + Send + Sync>;

/// What a [`Job`] hands each output to, once, as soon as it is made.
pub type Emit<'a> = dyn FnMut(Output) -> Result<()> + 'a;

/// Everything `build` reads, loaded once: the view every exporter renders.
pub struct BuildView {
    /// The build's base folder (the project).
    pub base: PathBuf,
    /// The page templates, stylesheet and script.
    pub theme: Arc<Theme>,
    /// Runs roots, loaded, with their names on the site.
    pub roots: Vec<Arc<SiteRoot>>,
    /// Studies, loaded.
    pub studies: Vec<StudyView>,
    /// Every Markdown file found, with its text as read.
    pub markdown: BTreeMap<PathBuf, String>,
    /// The images pages embed, read from disk (figures this build makes
    /// are taken from the outputs instead).
    pub images: Arc<dyn Assets + Send + Sync>,
    /// Whether `site/` is built (a whole-project build with a root or a
    /// study, or a `site/` already).
    pub site: bool,
    /// The base folder holds a `README.md` (the site index links its page).
    pub readme: bool,
    /// Loads what the site shows of one question of a root, when its
    /// pages are made (question by question, so memory stays flat however
    /// many attempts a root holds): `report::load::question` in a build.
    pub load_question: QuestionLoader,
    /// Checks one question's files without making its detail, for a
    /// question whose pages the first pass leaves to the second:
    /// `report::load::question_problems` in a build.
    pub check_question: QuestionChecker,
    /// Catalog runs and comparisons, loaded.
    pub catalogs: Catalogs,
    /// What the site's question jobs found checking the files of roots
    /// loaded with their records deferred, and which pass of the build
    /// they run in.
    pub record_checks: Arc<RecordChecks>,
}

/// The checks of recorded files the site's question jobs make, for runs
/// roots loaded with [`crate::report::load::Records::Deferred`]: each job
/// reads a question's files once, checks them as loading a root would
/// ([`crate::report::load::question`] with `check`) and makes its pages
/// from them (issue 26, section 4). A build runs the jobs in a first pass
/// that writes nothing, refuses the root if any question broke a rule
/// (`render::build`), and writes in a second pass, in which the jobs only
/// make pages.
#[derive(Default)]
pub struct RecordChecks {
    /// The roots' records are checked by the jobs.
    deferred: bool,
    /// The first pass is over: the jobs make pages without checking.
    second_pass: AtomicBool,
    /// In the first pass, a question whose page is not on disk has its
    /// pages made only in the second, and so has a runs root whose
    /// README.html is not (a build from scratch makes each page once).
    skip_missing: AtomicBool,
    /// Some question's pages, or some root's README, were left to the
    /// second pass.
    skipped: AtomicBool,
    /// Whether a page is on disk (the build's own look, handed in: an
    /// exporter never reads the disk).
    page_on_disk: Option<fn(&std::path::Path) -> bool>,
    /// What each question broke: the root's place among the build's
    /// roots, its folder, the question id, the problems in order.
    problems: Mutex<Vec<QuestionProblems>>,
}

/// A question's problems ([`RecordChecks`]): its root's place among the
/// build's roots, the root's folder, the question id, the problems.
type QuestionProblems = (usize, PathBuf, String, Vec<String>);

impl RecordChecks {
    /// Checks made by the jobs when `deferred`, else none; `page_on_disk`
    /// tells whether a page is on disk.
    pub fn new(deferred: bool, page_on_disk: fn(&std::path::Path) -> bool) -> RecordChecks {
        RecordChecks {
            deferred,
            page_on_disk: Some(page_on_disk),
            ..RecordChecks::default()
        }
    }

    /// In the first pass of a build that may leave them to the second,
    /// whether the outputs of a job whose page is `page` (a question's,
    /// a runs root's README.html) are left there: when that page is not
    /// on disk (noted, so the build makes a second pass). Never in the
    /// second pass, which makes them.
    fn leaves(&self, page: &std::path::Path) -> bool {
        let leaves = self.skip_missing.load(Ordering::SeqCst)
            && !self.second_pass.load(Ordering::SeqCst)
            && self.page_on_disk.is_some_and(|on_disk| !on_disk(page));
        if leaves {
            self.skipped.store(true, Ordering::SeqCst);
        }
        leaves
    }

    /// The jobs check the roots' records.
    pub fn deferred(&self) -> bool {
        self.deferred
    }

    /// Starts the second pass: jobs make pages without checking.
    pub fn start_second_pass(&self) {
        self.second_pass.store(true, Ordering::SeqCst);
    }

    /// Lets the first pass leave a question whose page is missing to the
    /// second.
    pub fn skip_missing(&self) {
        self.skip_missing.store(true, Ordering::SeqCst);
    }

    /// Some question's pages, or some root's README, were left to the
    /// second pass.
    pub fn skipped(&self) -> bool {
        self.skipped.load(Ordering::SeqCst)
    }

    /// Every job has made its outputs in this pass, so what the question
    /// jobs gathered is whole: false only in a first pass that left some
    /// to the second (the last jobs, the search index and a root's
    /// `summary.csv`, then make nothing).
    fn all_made(&self) -> bool {
        !self.skipped() || self.second_pass.load(Ordering::SeqCst)
    }

    /// The problems found, those of the first root (in the build's order)
    /// that has any: its folder and its problems, question by question.
    pub fn first_problems(&self) -> Option<(PathBuf, Vec<String>)> {
        let mut found = self.problems.lock().unwrap_or_else(|e| e.into_inner());
        found.sort_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
        let (index, root) = found.first().map(|f| (f.0, f.1.clone()))?;
        let problems = found
            .iter()
            .filter(|f| f.0 == index)
            .flat_map(|f| f.3.iter().cloned())
            .collect();
        Some((root, problems))
    }

    fn add(&self, at: (usize, PathBuf), question: String, problems: Vec<String>) {
        self.problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((at.0, at.1, question, problems));
    }
}

/// The catalog runs and comparisons a build publishes, each with its name
/// on the site, in path order.
#[derive(Default)]
pub struct Catalogs {
    /// Catalog runs.
    pub runs: Vec<(String, Arc<crate::catalog::published::PublishedRun>)>,
    /// Comparisons of two runs.
    pub comparisons: Vec<(String, Arc<crate::catalog::published::PublishedComparison>)>,
}

impl Catalogs {
    /// True when there is neither.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.comparisons.is_empty()
    }
}

/// A loader of one question's detail (see [`BuildView::load_question`]).
/// Its `bool` asks for the files to be checked as they are read.
pub type QuestionLoader =
    fn(&crate::report::view::RootView, &str, bool) -> Result<crate::report::view::QuestionDetail>;

/// A check of one question's files that makes no detail (see
/// [`BuildView::check_question`]): the problems found, in order.
pub type QuestionChecker = fn(&crate::report::view::RootView, &str) -> Vec<String>;

/// What an exporter made.
#[derive(Default)]
pub struct Exported {
    /// Outputs computed now.
    pub outputs: Vec<Output>,
    /// Outputs computed on demand.
    pub jobs: Vec<Job>,
    /// Outputs made as they are written once every job has run (the
    /// search index and a root's `summary.csv`, made of what the question
    /// jobs gathered; [`super::streamed`]).
    pub last: Vec<super::streamed::StreamJob>,
    /// Folders it owns: a file there that carries a generator mark and
    /// that no output names is an orphan.
    pub owned_dirs: Vec<PathBuf>,
    /// Files its jobs make whose paths are known when planning (outside
    /// the owned folders): `build` refuses to plan when a person wrote one
    /// of them, or when an output made now has the same path, as it does
    /// for the outputs made now.
    pub claimed: Vec<PathBuf>,
    /// Non-fatal problems, named.
    pub warnings: Vec<String>,
}

/// One kind of output.
pub trait Exporter: Sync {
    /// What it makes of `view`; `made` holds what the exporters before it
    /// made, in order (a page embeds the figures and prose this build
    /// writes, not what is on disk).
    ///
    /// Errors: an input it cannot render (named by file and line).
    fn export(&self, view: &BuildView, made: &[Output]) -> Result<Exported>;
}

/// A runs root's README and summary CSVs (frozen roots are read, never
/// written: none of their files is produced).
pub struct RootFiles;

impl Exporter for RootFiles {
    /// A job per root that makes its README.md, summary CSVs and
    /// README.html ([`root_files_each`]): made when the job
    /// runs and let go once compared or written, never held through the
    /// build (a root of 2,500 questions has a README of 3.4 MB and a page
    /// of 7.7 MB; issue 26, section 4).
    fn export(&self, view: &BuildView, _made: &[Output]) -> Result<Exported> {
        let mut exported = Exported::default();
        for root in view.roots.iter().filter(|r| !r.view.frozen) {
            let readme = root.view.path.join(crate::layout::README_FILE);
            let page = super::page::html_path(&readme);
            exported.claimed.extend([readme, page.clone()]);
            let (theme, root, checks) = (
                Arc::clone(&view.theme),
                Arc::clone(root),
                Arc::clone(&view.record_checks),
            );
            exported.jobs.push(Box::new(move |emit: &mut Emit<'_>| {
                // A first pass that writes nothing leaves a README whose
                // page is not on disk to the second, which makes it once.
                if checks.leaves(&page) {
                    return Ok(());
                }
                root_files_each(&theme, &root.view, emit)
            }));
        }
        Ok(exported)
    }
}

/// The outputs of [`super::build::root_files`], in its order, each handed to `emit` as
/// soon as it can be: the README's text is kept only until its page is
/// made, so `build`, which runs this as a job, holds a root's README and
/// its page (7.7 MB at 2,500 questions) only while it makes them (issue
/// 26, section 4).
///
/// Errors: a README page that cannot be rendered; what `emit` returns.
pub fn root_files_each(
    theme: &Theme,
    view: &crate::report::view::RootView,
    emit: &mut dyn FnMut(Output) -> Result<()>,
) -> Result<()> {
    let readme = view.path.join(crate::layout::README_FILE);
    let mut text = None;
    for output in super::readme::outputs(view) {
        if output.path == readme {
            text = Some(output);
        } else {
            emit(output)?;
        }
    }
    let text = text.map(|o| o.bytes).unwrap_or_default();
    let bytes = super::page::page_with(
        theme,
        &readme,
        &String::from_utf8_lossy(&text),
        &mut Vec::new(),
        &super::assets::AssetMap::new(),
    )?;
    emit(Output {
        path: readme.clone(),
        bytes: text,
    })?;
    emit(Output {
        path: super::page::html_path(&readme),
        bytes,
    })
}

/// Each study's figures.
pub struct Figures;

impl Exporter for Figures {
    fn export(&self, view: &BuildView, _made: &[Output]) -> Result<Exported> {
        let mut exported = Exported::default();
        for study in &view.studies {
            let files: Vec<(FigureKind, crate::report::study::FigureFile)> = study
                .figures
                .iter()
                .flat_map(|kind| study.figure_files(*kind).into_iter().map(|f| (*kind, f)))
                .collect();
            let figures: Vec<Result<Output>> = files
                .par_iter()
                .map(|(kind, file)| {
                    let subject = super::figures::subject(&study.data, file);
                    let svg =
                        super::figures::render_titled(*kind, &study.figure_data(file), &subject)
                            .map_err(|e| Error::file(&file.path, e.to_string()))?;
                    Ok(Output {
                        path: file.path.clone(),
                        bytes: svg.into_bytes(),
                    })
                })
                .collect();
            for figure in figures {
                exported.outputs.push(figure?);
            }
            exported
                .owned_dirs
                .push(study.dir.join(super::study::FIGURES_DIR));
        }
        Ok(exported)
    }
}

/// Each study's prose, its generated regions filled.
pub struct Regions;

impl Exporter for Regions {
    fn export(&self, view: &BuildView, _made: &[Output]) -> Result<Exported> {
        let mut exported = Exported::default();
        for study in &view.studies {
            for (path, text) in &study.prose {
                let filled = super::study::fill(Some(study), &view.studies, path, text)?;
                exported.outputs.push(Output {
                    path: path.clone(),
                    bytes: filled.into_bytes(),
                });
            }
        }
        // Outside a study, a file's regions are filled when each names its
        // study (`study=DIR`); else they would silently stay as they are.
        for (path, text) in &view.markdown {
            let in_study = view.studies.iter().any(|s| s.prose.contains_key(path));
            let regions = match super::study::regions(path, text) {
                Ok(regions) => regions,
                // Markers that do not parse are plain comments outside a
                // study, unless one names a study: then they were meant.
                Err(e) if text.contains("<!-- okn:") && text.contains("study=") => return Err(e),
                Err(_) => continue,
            };
            if in_study || regions.is_empty() {
                continue;
            }
            if regions
                .iter()
                .all(|r| r.params.contains_key(super::study::STUDY_KEY))
            {
                let filled = super::study::fill(None, &view.studies, path, text)?;
                exported.outputs.push(Output {
                    path: path.clone(),
                    bytes: filled.into_bytes(),
                });
            } else {
                exported.warnings.push(format!(
                    "{}: generated regions outside a study's folder are filled only when each \
                     names its study (study=DIR); these are left as they are",
                    path.display()
                ));
            }
        }
        Ok(exported)
    }
}

/// Each catalog run's `report.md`, written again from its `results.json`,
/// and each comparison's `comparison.md`, from the two runs it names.
pub struct CatalogReports;

impl Exporter for CatalogReports {
    fn export(&self, view: &BuildView, _made: &[Output]) -> Result<Exported> {
        use crate::catalog::published;
        let mut exported = Exported::default();
        for (_, run) in &view.catalogs.runs {
            exported.outputs.push(Output {
                path: run.dir.join(published::REPORT_FILE),
                bytes: published::report(run).into_bytes(),
            });
        }
        for (_, comparison) in &view.catalogs.comparisons {
            exported.outputs.push(Output {
                path: comparison.dir.join(published::COMPARISON_MARKDOWN),
                bytes: published::comparison(comparison).into_bytes(),
            });
        }
        Ok(exported)
    }
}

/// A page beside every Markdown file but a runs root's README (whose job,
/// [`RootFiles`], makes its page): the text this build makes of it (a
/// study's filled prose, a catalog report), else the file's own.
pub struct Pages;

impl Exporter for Pages {
    fn export(&self, view: &BuildView, made: &[Output]) -> Result<Exported> {
        // Borrowed, not copied. (No runs root's README is among them: the
        // walk does not enter a runs root, and the root's job,
        // [`RootFiles`], makes its page.)
        let mut texts: BTreeMap<&Path, std::borrow::Cow<'_, str>> = view
            .markdown
            .iter()
            .map(|(path, text)| (path.as_path(), std::borrow::Cow::Borrowed(text.as_str())))
            .collect();
        for output in made {
            if output.path.extension().is_some_and(|e| e == "md") {
                texts.insert(&output.path, String::from_utf8_lossy(&output.bytes));
            }
        }
        let figures = made_figures(made);
        let assets = super::assets::Layered {
            first: &figures,
            then: view.images.as_ref(),
        };
        let pages: Vec<Result<(Output, Vec<String>)>> = texts
            .par_iter()
            .map(|(path, text)| {
                let mut warnings = Vec::new();
                // A page of the site, unless it is a runs root's README,
                // whose page `freeze` and `run` make without a site.
                let in_root = view.roots.iter().any(|r| {
                    let plain = |p: &Path| -> PathBuf {
                        let p = p.strip_prefix(&view.base).unwrap_or(p);
                        p.components()
                            .filter(|c| !matches!(c, std::path::Component::CurDir))
                            .collect()
                    };
                    plain(path).starts_with(plain(&r.view.path))
                });
                let site = (view.site && !in_root).then_some(view.base.as_path());
                let bytes = super::page::page_framed(
                    &view.theme,
                    (path, text),
                    &mut warnings,
                    &assets,
                    site,
                )?;
                Ok((
                    Output {
                        path: super::page::html_path(path),
                        bytes,
                    },
                    warnings,
                ))
            })
            .collect();
        let mut exported = Exported::default();
        for page in pages {
            let (output, warnings) = page?;
            exported.outputs.push(output);
            exported.warnings.extend(warnings);
        }
        Ok(exported)
    }
}

/// The static site.
pub struct Site;

impl Exporter for Site {
    fn export(&self, view: &BuildView, made: &[Output]) -> Result<Exported> {
        let mut exported = Exported::default();
        if !view.site {
            return Ok(exported);
        }
        let figures = made_figures(made);
        let base = &view.base;
        let index = base.join(super::site::SITE_DIR).join("index.html");
        let project = view
            .markdown
            .get(&base.join(crate::layout::README_FILE))
            .and_then(|text| super::site::project_name(text));
        exported.outputs.push(Output {
            bytes: super::page::stamp(
                &index,
                super::site::index_page(
                    &view.theme,
                    &super::site::Published {
                        base,
                        studies: &view.studies,
                        roots: &view.roots,
                        readme: view.readme,
                        catalogs: &catalog_index(view),
                        project: project.as_deref(),
                    },
                    &figures,
                )?,
            ),
            path: index,
        });
        let gathered = Arc::new(super::search::Gathered::default());
        for (index, root) in view.roots.iter().enumerate() {
            // The root's page lists every question (2.8 MB at 2,500): made
            // by a job, let go once compared or written.
            let (theme, site_root) = (Arc::clone(&view.theme), Arc::clone(root));
            let page = base.join(super::site::root_page(&root.name));
            exported.jobs.push(Box::new(move |emit: &mut Emit<'_>| {
                emit(Output {
                    bytes: super::page::stamp(&page, super::site::root_index(&theme, &site_root)?),
                    path: page.clone(),
                })
            }));
            // A root whose view let its attempts go has its summaries made
            // here, from the results each question's job reads again.
            let summaries = (!root.view.attempts_held).then(|| {
                let summaries = Arc::new(Summaries::default());
                exported
                    .last
                    .push(summaries.root_job(root, &view.record_checks));
                summaries
            });
            for question in root.view.questions.keys() {
                let (theme, root, question, base, gathered, checks, summaries) = (
                    Arc::clone(&view.theme),
                    Arc::clone(root),
                    question.clone(),
                    base.clone(),
                    Arc::clone(&gathered),
                    Arc::clone(&view.record_checks),
                    summaries.clone(),
                );
                let (load, check_only) = (view.load_question, view.check_question);
                // The first pass left this question's pages to the second:
                // it checked the files only, so the second gathers what the
                // search index holds of it.
                let left = AtomicBool::new(false);
                exported.jobs.push(Box::new(move |emit: &mut Emit<'_>| {
                    let first = !checks.second_pass.load(Ordering::SeqCst);
                    let check = first && root.view.records_deferred;
                    let at = (index, root.view.path.clone());
                    if first {
                        let page = base.join(super::site::question_page(&root.name, &question));
                        if checks.leaves(&page) {
                            // Checked only: no detail, no pages, until the
                            // second pass makes them (issue 26, section 4).
                            left.store(true, Ordering::SeqCst);
                            let problems = if check {
                                check_only(&root.view, &question)
                            } else {
                                Vec::new()
                            };
                            if !problems.is_empty() {
                                checks.add(at, question.clone(), problems);
                            }
                            return Ok(());
                        }
                    }
                    let mut detail = load(&root.view, &question, check)?;
                    if first {
                        if !detail.problems.is_empty() {
                            checks.add(at, question.clone(), std::mem::take(&mut detail.problems));
                            return Ok(());
                        }
                        gathered.add(&root, &detail)?;
                    } else if left.load(Ordering::SeqCst) {
                        gathered.add(&root, &detail)?;
                    }
                    super::site::question_pages(&theme, &root, &detail, &mut |path, bytes| {
                        emit(Output {
                            bytes: super::page::stamp(&path, bytes),
                            path: base.join(path),
                        })
                    })?;
                    if let Some(summaries) = &summaries {
                        let summary =
                            super::readme::question_summary(&root.view, &question, &detail.results);
                        summaries.add(&question, &summary.bytes)?;
                        emit(summary)?;
                    }
                    Ok(())
                }));
            }
        }
        exported.outputs.extend(catalog_pages(view)?);
        for study in &view.studies {
            for compared in &study.comparisons {
                let page = super::site::comparison_page(&study.name, &compared.key);
                let bytes = super::site::comparison_page_bytes(&view.theme, study, compared)?;
                exported.outputs.push(Output {
                    bytes: super::page::stamp(&page, bytes),
                    path: base.join(page),
                });
            }
        }
        let (theme, path, checks) = (
            Arc::clone(&view.theme),
            base.join(super::site::search_index_path()),
            Arc::clone(&view.record_checks),
        );
        exported.last.push(Box::new(move || {
            // A first pass that left questions to the second has not
            // gathered them: the index is made in the second.
            if !checks.all_made() {
                return Ok(None);
            }
            let (gathered, theme, shown) =
                (Arc::clone(&gathered), Arc::clone(&theme), path.clone());
            Ok(Some(super::streamed::Streamed {
                path: path.clone(),
                write: Box::new(move |out| {
                    gathered.write_index(theme.search_script(), out, &shown)
                }),
            }))
        }));
        exported.owned_dirs.push(base.join(super::site::SITE_DIR));
        Ok(exported)
    }
}

/// The `summary.csv` rows of each question of a root whose view does not
/// hold its attempts ([`crate::report::view::RootView::attempts_held`]),
/// as the site's question jobs make them (in any order, from any thread),
/// for the root's own `summary.csv`, made once every job has run. Held
/// in a [`super::streamed::Spill`], not in memory.
#[derive(Default)]
struct Summaries {
    /// Each question's rows, by question id.
    rows: Arc<Mutex<super::streamed::Spill<String>>>,
}

impl Summaries {
    /// Keeps question `id`'s `summary.csv` rows (a second pass's replace
    /// the first's).
    ///
    /// Errors: the temporary file that holds them cannot be written.
    fn add(&self, id: &str, csv: &[u8]) -> Result<()> {
        let mut rows = self
            .rows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        rows.put(id.to_string(), super::readme::summary_rows(csv))
    }

    /// The job that makes `root`'s `summary.csv` from its questions' rows
    /// ([`super::readme::root_summary_streamed`]), once the question jobs
    /// have run ([`RecordChecks::all_made`]): as often as it is asked
    /// (`build` compares it, then makes it again to write it).
    fn root_job(
        self: &Arc<Self>,
        root: &Arc<SiteRoot>,
        checks: &Arc<RecordChecks>,
    ) -> super::streamed::StreamJob {
        let (summaries, root, checks) = (Arc::clone(self), Arc::clone(root), Arc::clone(checks));
        Box::new(move || {
            if !checks.all_made() {
                return Ok(None);
            }
            Ok(Some(super::readme::root_summary_streamed(
                &root.view,
                Arc::clone(&summaries.rows),
            )))
        })
    }
}

/// The site index's lines for the catalog runs and comparisons.
fn catalog_index(view: &BuildView) -> Vec<super::site::IndexCatalog> {
    let runs = view
        .catalogs
        .runs
        .iter()
        .map(|(name, run)| super::catalog::index_run(name, run));
    let comparisons = view
        .catalogs
        .comparisons
        .iter()
        .map(|(name, c)| super::catalog::index_comparison(name, c));
    runs.chain(comparisons).collect()
}

/// The site pages of the catalog runs and comparisons.
///
/// Errors: a template that fails to render.
fn catalog_pages(view: &BuildView) -> Result<Vec<Output>> {
    let mut outputs = Vec::new();
    let run_names: Vec<(PathBuf, String)> = view
        .catalogs
        .runs
        .iter()
        .map(|(name, run)| (run.dir.clone(), name.clone()))
        .collect();
    for (name, run) in &view.catalogs.runs {
        let page = super::catalog::catalog_page(name);
        let bytes = super::catalog::run_page(&view.theme, &view.base, name, run)?;
        outputs.push(Output {
            bytes: super::page::stamp(&page, bytes),
            path: view.base.join(page),
        });
    }
    for (name, comparison) in &view.catalogs.comparisons {
        let page = super::catalog::catalog_page(name);
        let bytes = super::catalog::comparison_page(&view.theme, name, comparison, &run_names)?;
        outputs.push(Output {
            bytes: super::page::stamp(&page, bytes),
            path: view.base.join(page),
        });
    }
    Ok(outputs)
}

/// The SVG figures among `made` (what exporters produced), by normalized
/// path.
pub fn made_figures(made: &[Output]) -> super::assets::AssetMap {
    made.iter()
        .filter(|o| o.path.extension().is_some_and(|e| e == "svg"))
        .map(|o| (super::assets::normalize(&o.path), o.bytes.clone()))
        .collect()
}

/// Every exporter, in the order `build` runs them: each sees what the
/// ones before it made.
pub const EXPORTERS: [&dyn Exporter; 6] = [
    &RootFiles,
    &Figures,
    &Regions,
    &CatalogReports,
    &Pages,
    &Site,
];
