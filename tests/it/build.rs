//! `okn-benchmark build` and `build --check` through the real command line,
//! over a copy of a recorded demo runs root, a study over it, prose, and
//! the repository's templates and stylesheet. `--check` must never report
//! fresh when a byte of any input that affects an output changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::fixture::{CONDITION, QUESTION, STUDY_TOML, SUMMARY, fixture};
use crate::support::{okn_in, stderr, stdout};

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().strip_prefix(dir).unwrap().to_path_buf(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// What the first `build` of a fresh fixture prints: every page, figure and
/// filled region written; the runs root's README and CSVs, copied current,
/// unchanged.
const FIRST_BUILD: &str = "build: 136 written, 13 unchanged, 0 orphaned removed\n";

/// What a `build` of the fixture with nothing changed prints.
const NOTHING_TO_DO: &str = "build: 0 written, 149 unchanged, 0 orphaned removed\n";

/// `build` in `dir`, which must succeed; its stdout.
#[track_caller]
fn build(dir: &Path) -> String {
    let out = okn_in(dir).arg("build").output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(&out)
}

/// A page as `build` writes one under `name` (the site's index with its
/// generator mark naming `name`): what a page no output makes any more
/// looks like.
fn generated_page_named(d: &Path, name: &str) -> String {
    let index = std::fs::read_to_string(d.join("site/index.html")).unwrap();
    let own = "<meta name=\"okn-file\" content=\"index.html\">";
    assert!(index.contains(own), "the index does not name itself");
    index.replace(own, &format!("<meta name=\"okn-file\" content=\"{name}\">"))
}

fn check(dir: &Path) -> (i32, String) {
    let out = okn_in(dir).args(["build", "--check"]).output().unwrap();
    (out.status.code().unwrap(), stdout(&out))
}

/// A build with one stale page makes no temporary file beside the
/// outputs it writes as they are made (the root's `summary.csv`, the
/// search index) when they are current: neither folder is touched (a
/// review of d3dc8b58, where every such output went through a temporary
/// file, so a build could not run over a root it had no need to write).
#[test]
fn a_build_with_one_stale_page_leaves_current_streamed_outputs_untouched() {
    let dir = fixture();
    let d = dir.path();
    assert_eq!(build(d), FIRST_BUILD);
    let modified = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let (root, site) = (d.join("runs-demo"), d.join("site"));
    let before = (
        modified(&root),
        modified(&site),
        std::fs::read(root.join("summary.csv")).unwrap(),
        std::fs::read(site.join("search-index.js")).unwrap(),
    );
    let mut page = std::fs::read(d.join("README.html")).unwrap();
    page.extend_from_slice(b"<!-- edited -->\n");
    std::fs::write(d.join("README.html"), page).unwrap();
    assert_eq!(
        build(d),
        "build: 1 written, 148 unchanged, 0 orphaned removed\n"
    );
    let after = (
        modified(&root),
        modified(&site),
        std::fs::read(root.join("summary.csv")).unwrap(),
        std::fs::read(site.join("search-index.js")).unwrap(),
    );
    assert!(
        before == after,
        "the root's or the site's folder was written"
    );
    // A stale streamed output is written, and then current.
    std::fs::write(site.join("search-index.js"), "// stale\n").unwrap();
    assert_eq!(
        build(d),
        "build: 1 written, 148 unchanged, 0 orphaned removed\n"
    );
    assert_eq!(
        std::fs::read(site.join("search-index.js")).unwrap(),
        before.3
    );
    assert_eq!(build(d), NOTHING_TO_DO);
}

#[test]
fn a_second_build_changes_nothing_and_check_is_clean() {
    let dir = fixture();
    let d = dir.path();
    assert_eq!(build(d), FIRST_BUILD);
    let after_first = snapshot(d);
    // What a build makes: the root's README, pages beside every Markdown
    // file, the study's figures and filled prose, and the site.
    for path in [
        "runs-demo/README.md",
        "runs-demo/README.html",
        "README.html",
        "results-demo/SUMMARY.html",
        "results-demo/QUESTIONS.html",
        "results-demo/figures/heatmap.svg",
        "results-demo/figures/pass-k.svg",
        "site/index.html",
        "site/roots/runs-demo/index.html",
        "site/search-index.js",
    ] {
        assert!(after_first.contains_key(Path::new(path)), "{path} missing");
    }
    let question_page = format!("site/roots/runs-demo/q/{QUESTION}.html");
    let attempt_page = format!("site/roots/runs-demo/a/{QUESTION}/{CONDITION}/attempt-1.html");
    assert!(after_first.contains_key(Path::new(&question_page)));
    assert!(after_first.contains_key(Path::new(&attempt_page)));
    assert_eq!(build(d), NOTHING_TO_DO);
    assert_eq!(snapshot(d), after_first, "a second build changed bytes");
    let (code, text) = check(d);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("are current"), "{text}");
    // The filled region holds the recorded rate.
    let condition: serde_json::Value = serde_json::from_slice(
        &std::fs::read(d.join(format!("runs-demo/conditions/{CONDITION}.json"))).unwrap(),
    )
    .unwrap();
    let rate = condition["aggregate"]["exact_rate"].as_f64().unwrap();
    let summary =
        String::from_utf8(after_first[Path::new("results-demo/SUMMARY.md")].clone()).unwrap();
    assert!(
        summary.contains(&format!(
            "metric=exact-rate -->{rate:.2}<!-- /okn:number -->"
        )),
        "{summary}"
    );
    // The page beside the README inlines the SVG and links the study page.
    let readme = String::from_utf8(after_first[Path::new("README.html")].clone()).unwrap();
    assert!(
        readme.contains("href=\"results-demo/SUMMARY.html\""),
        "{readme}"
    );
    assert!(!readme.contains("src=\"docs/dot.svg\""), "{readme}");
    let summary_page =
        String::from_utf8(after_first[Path::new("results-demo/SUMMARY.html")].clone()).unwrap();
    assert!(summary_page.contains("<svg"), "figure not inlined");
    assert!(summary_page.contains("href=\"QUESTIONS.html\""));
    // One role and one label on each inlined figure (twice is invalid HTML).
    for tag in summary_page.split("<svg").skip(1) {
        let tag = &tag[..tag.find('>').unwrap()];
        assert_eq!(tag.matches("role=").count(), 1, "<svg{tag}>");
        assert_eq!(tag.matches("aria-label=").count(), 1, "<svg{tag}>");
    }
    // The site's index shows the study with every one of its figures.
    let index = String::from_utf8(after_first[Path::new("site/index.html")].clone()).unwrap();
    assert!(index.contains("<h3 id=\"demo\">Demo study</h3>"), "{index}");
    assert_eq!(
        index.matches("<span class=\"figure\"><svg").count(),
        6,
        "{index}"
    );
    // Issue 26, section 3: each figure's title says what it holds.
    assert!(index.contains(
        "<title>Exact rate per question and condition — 2 conditions, played by okn-benchmark \
         0.1.0 (scripted agent)</title>"
    ));
}

/// Changes a file and returns its old bytes.
type Mutation = Box<dyn Fn(&Path) -> Vec<u8>>;

/// Appends `extra` to a file and returns its old bytes.
fn append(path: &Path, extra: &str) -> Vec<u8> {
    let old = std::fs::read(path).unwrap();
    let mut new = old.clone();
    new.extend_from_slice(extra.as_bytes());
    std::fs::write(path, new).unwrap();
    old
}

/// Issue 26, section 4: with the site, an open root is loaded without
/// its attempts, and its summary CSVs are made by the question jobs from
/// each question's results read again. They are the bytes `report`
/// writes, and each is reported stale or missing and put back like any
/// output.
#[test]
fn an_open_roots_summaries_made_question_by_question_are_the_reports_and_checked() {
    let dir = fixture();
    let d = dir.path();
    build(d);
    let question = format!("runs-demo/{QUESTION}_results/summary.csv");
    let files = ["runs-demo/summary.csv", question.as_str()];
    let built: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(d.join(f)).unwrap())
        .collect();
    assert!(
        built[0].len() > built[1].len(),
        "the root's holds every question's rows"
    );
    for f in files {
        std::fs::remove_file(d.join(f)).unwrap();
    }
    let out = okn_in(d).args(["report", "runs-demo"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for (f, bytes) in files.iter().zip(&built) {
        assert_eq!(&std::fs::read(d.join(f)).unwrap(), bytes, "{f}");
    }
    append(&d.join(files[0]), "a,hand,edit\n");
    std::fs::remove_file(d.join(files[1])).unwrap();
    let (code, text) = check(d);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains(&format!("stale     {}", files[0])), "{text}");
    assert!(text.contains(&format!("missing   {}", files[1])), "{text}");
    build(d);
    for (f, bytes) in files.iter().zip(&built) {
        assert_eq!(&std::fs::read(d.join(f)).unwrap(), bytes, "{f}");
    }
    assert_eq!(check(d).0, 0);
}

#[test]
fn check_fails_when_any_kind_of_input_changes() {
    let dir = fixture();
    let d = dir.path();
    build(d);
    assert_eq!(check(d).0, 0);
    let attempt = format!("runs-demo/{QUESTION}_results/{CONDITION}/attempt-1");
    let result = format!("runs-demo/{QUESTION}_results/{CONDITION}/result.json");
    let attempt_page = format!("site/roots/runs-demo/a/{QUESTION}/{CONDITION}/attempt-1.html");
    // (input, how it changes, an output that must be reported stale)
    let mutations: Vec<(String, Mutation, String)> = vec![
        (
            "README.md".into(),
            Box::new(|p| append(p, "\nOne more sentence.\n")),
            "README.html".into(),
        ),
        (
            format!("{attempt}/answer.csv"),
            Box::new(|p| append(p, "https://example.org/extra,XYZ\n")),
            attempt_page.clone(),
        ),
        (
            format!("{attempt}/calls.json"),
            Box::new(|p| {
                let old = std::fs::read(p).unwrap();
                let text = String::from_utf8(old.clone()).unwrap();
                // The query the page shows (still a query to the same
                // graphs: no tally of metrics.json, no trajectory moves).
                let edited = text.replacen("SELECT ?humanGene", "SELECT  ?humanGene", 1);
                assert_ne!(edited, text);
                std::fs::write(p, edited).unwrap();
                old
            }),
            attempt_page.clone(),
        ),
        (
            result.clone(),
            Box::new(|p| {
                let old = std::fs::read(p).unwrap();
                let mut v: serde_json::Value = serde_json::from_slice(&old).unwrap();
                v["summary"]["mean_wall_s"] = serde_json::json!(99.5);
                v["attempts"][0]["wall_s"] = serde_json::json!(99.5);
                std::fs::write(p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
                old
            }),
            "runs-demo/README.md".into(),
        ),
        (
            "templates/site/attempt.html".into(),
            Box::new(|p| {
                let old = std::fs::read(p).unwrap();
                let text = String::from_utf8(old.clone()).unwrap();
                std::fs::write(p, text.replace("Raw files", "Raw files.")).unwrap();
                old
            }),
            attempt_page.clone(),
        ),
        (
            "templates/page.html".into(),
            Box::new(|p| append(p, "<!-- a template change -->\n")),
            "README.html".into(),
        ),
        (
            "static/style.css".into(),
            Box::new(|p| append(p, "\nbody { letter-spacing: 0; }\n")),
            "results-demo/QUESTIONS.html".into(),
        ),
        (
            "static/sort.js".into(),
            Box::new(|p| append(p, "\n// a script change\n")),
            "site/index.html".into(),
        ),
        (
            "static/search.js".into(),
            Box::new(|p| append(p, "\n// a search change\n")),
            "site/search-index.js".into(),
        ),
        (
            "results-demo/study.toml".into(),
            Box::new(|p| {
                let old = std::fs::read(p).unwrap();
                let text = String::from_utf8(old.clone()).unwrap();
                std::fs::write(p, text.replace("label = \"KG named\"", "label = \"Named\""))
                    .unwrap();
                old
            }),
            "results-demo/SUMMARY.md".into(),
        ),
        (
            "docs/dot.svg".into(),
            Box::new(|p| {
                let old = std::fs::read(p).unwrap();
                let text = String::from_utf8(old.clone()).unwrap();
                std::fs::write(p, text.replace("height=\"4\"/>", "height=\"3\"/>")).unwrap();
                old
            }),
            "README.html".into(),
        ),
    ];
    for (input, mutate, expected) in &mutations {
        let path = d.join(input);
        let old = mutate(&path);
        // An answer that no longer earns its recorded verdict, or a result
        // whose summary no longer follows from its attempts (or no longer
        // is the one its condition file repeats), is refused (exit 2,
        // naming it), not published: `rescore` is what moves them.
        let refused = if input.ends_with("answer.csv") {
            Some("attempt-1/answer.csv: differs from the answer submit_csv call")
        } else if input.ends_with("result.json") {
            Some("result.json: its summary disagrees with its attempts (mean_wall_s")
        } else {
            None
        };
        if let Some(says) = refused {
            let out = okn_in(d).args(["build", "--check"]).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{input}: {}", stdout(&out));
            assert!(stderr(&out).contains(says), "{input}: {}", stderr(&out));
            std::fs::write(&path, old).unwrap();
            assert_eq!(check(d).0, 0, "after restoring {input}");
            continue;
        }
        let (code, text) = check(d);
        assert_eq!(code, 1, "a change to {input} went unnoticed:\n{text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("stale") && l.ends_with(expected.as_str())),
            "a change to {input} did not make {expected} stale:\n{text}"
        );
        assert!(text.contains("run 'okn-benchmark build'"), "{text}");
        std::fs::write(&path, old).unwrap();
        let (code, text) = check(d);
        assert_eq!(code, 0, "after restoring {input}:\n{text}");
    }
}

#[test]
fn orphans_are_reported_then_removed_and_crlf_is_not_stale() {
    let dir = fixture();
    let d = dir.path();
    build(d);
    // A generated page whose Markdown is gone, and a stray file in the site.
    std::fs::write(d.join("docs/OLD.md"), "# Old\n").unwrap();
    build(d);
    std::fs::remove_file(d.join("docs/OLD.md")).unwrap();
    // (A generated page of that name, as a question no longer recorded
    // leaves behind: it carries the generator mark naming it.)
    std::fs::write(
        d.join("site/roots/runs-demo/q/gone.html"),
        generated_page_named(d, "gone.html"),
    )
    .unwrap();
    // A script build wrote that nothing makes now (its first line names
    // it): an orphan. A renamed copy of the index is a person's, and kept.
    std::fs::write(
        d.join("site/search-index-old.js"),
        "// generated by okn-benchmark build: search-index-old.js\nwindow.oknSearchIndex = {};\n",
    )
    .unwrap();
    std::fs::copy(
        d.join("site/search-index.js"),
        d.join("site/search-copy.js"),
    )
    .unwrap();
    // A file a person put in site/ (GitHub Pages' CNAME) carries no mark.
    std::fs::write(d.join("site/CNAME"), "bench.example.org\n").unwrap();
    let (code, text) = check(d);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("orphaned  site/roots/runs-demo/q/gone.html"),
        "{text}"
    );
    assert!(text.contains("orphaned  docs/OLD.html"), "{text}");
    assert!(
        text.contains("orphaned  site/search-index-old.js"),
        "{text}"
    );
    let out = build(d);
    assert!(out.ends_with(", 3 orphaned removed\n"), "{out}");
    assert!(!d.join("site/search-index-old.js").exists());
    assert!(d.join("site/search-index.js").is_file());
    assert!(d.join("site/search-copy.js").is_file());
    assert!(!d.join("docs/OLD.html").exists());
    assert!(!d.join("site/roots/runs-demo/q/gone.html").exists());
    assert_eq!(
        std::fs::read_to_string(d.join("site/CNAME")).unwrap(),
        "bench.example.org\n"
    );
    // A hand-written HTML file is never touched.
    std::fs::write(d.join("docs/hand.html"), "<p>mine</p>").unwrap();
    assert_eq!(check(d).0, 0);
    // A checkout with CRLF line ends is not stale.
    let page = d.join("README.html");
    let text = std::fs::read_to_string(&page).unwrap();
    let crlf = text.replace('\n', "\r\n");
    std::fs::write(&page, &crlf).unwrap();
    let (code, text) = check(d);
    assert_eq!(code, 0, "{text}");
    // ... and build leaves it as it is.
    let out = build(d);
    assert!(out.starts_with("build: 0 written, "), "{out}");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), crlf);
}

#[test]
fn recorded_text_is_escaped_on_every_page() {
    let dir = fixture();
    let d = dir.path();
    let attempt = d.join(format!(
        "runs-demo/{QUESTION}_results/{CONDITION}/attempt-1"
    ));
    // As an episode that submitted it records it (issue 24, item 6).
    crate::support::submitted_instead(
        &attempt,
        "assay,geneSymbol\n\"<script>document.title='pwned'</script>\",\"\"\"><img src=x onerror=alert(1)>\"\nx\u{202E}gnirts,y\n",
    );
    append(
        &attempt.join("prompt.txt"),
        "\n<script>document.title='pwned'</script>\n",
    );
    // Judged again (--force: the verdict moves under its own contract):
    // build refuses a verdict its answer no longer gives.
    okn_in(d)
        .args(["rescore", "runs-demo", "--force"])
        .assert()
        .success();
    build(d);
    let page = std::fs::read_to_string(d.join(format!(
        "site/roots/runs-demo/a/{QUESTION}/{CONDITION}/attempt-1.html"
    )))
    .unwrap();
    assert!(!page.contains("<script>document"), "unescaped script");
    assert!(
        !page.contains("<img src=x"),
        "unescaped attribute break-out"
    );
    assert!(
        page.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;&#x2F;script&gt;")
            || page.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"),
        "escaped answer missing"
    );
    // One script on the page: the page's own, allowed by hash.
    assert_eq!(page.matches("<script>").count(), 1);
    assert!(page.contains("script-src &#39;sha256-") || page.contains("script-src 'sha256-"));
    // A right-to-left override is shown as its code point, never obeyed
    // ("Trojan Source"; red-team pass of issue 12), on every page.
    assert!(page.contains("x[U+202E]gnirts"), "override not shown");
    for entry in walkdir::WalkDir::new(d.join("site")) {
        let path = entry.unwrap().into_path();
        if path.extension().is_some_and(|e| e == "html") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                !text.contains('\u{202E}'),
                "{} obeys an override",
                path.display()
            );
        }
    }
}

#[test]
fn a_bad_region_or_study_is_an_error_naming_file_and_line() {
    let dir = fixture();
    let d = dir.path();
    std::fs::write(
        d.join("results-demo/SUMMARY.md"),
        "# S\n\nText.\n<!-- okn:pie -->\n<!-- /okn:pie -->\n",
    )
    .unwrap();
    let out = okn_in(d).arg("build").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("results-demo/SUMMARY.md:4: unknown region kind 'pie'"),
        "{err}"
    );
    std::fs::write(d.join("results-demo/SUMMARY.md"), SUMMARY).unwrap();
    std::fs::write(
        d.join("results-demo/study.toml"),
        STUDY_TOML.replace(
            "baseline = \"named\"",
            "baseline = \"named\"\ncolor = \"red\"",
        ),
    )
    .unwrap();
    let out = okn_in(d).args(["build", "--check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("results-demo/study.toml:5: unknown field `color`"),
        "{err}"
    );
    // Nothing was written by the failed build.
    assert!(!d.join("site").exists());
}

#[test]
fn a_frozen_root_is_read_for_the_site_but_never_written() {
    let dir = fixture();
    let d = dir.path();
    okn_in(d)
        .args(["freeze", "--reason", "published", "runs-demo"])
        .assert()
        .success();
    let before = snapshot(&d.join("runs-demo"));
    build(d);
    assert_eq!(
        snapshot(&d.join("runs-demo")),
        before,
        "a frozen root was written"
    );
    let index = std::fs::read_to_string(d.join("site/roots/runs-demo/index.html")).unwrap();
    assert!(index.contains("This runs root is frozen."), "{index}");
    // freeze wrote the page beside the README, which the site links.
    assert!(
        index.contains("href=\"../../../runs-demo/README.html\""),
        "{index}"
    );
    assert_eq!(check(d).0, 0);
}

#[test]
fn paper_tables_print_the_recorded_numbers() {
    let dir = fixture();
    let d = dir.path();
    let out = okn_in(d)
        .args(["paper", "tables", "--study", "results-demo"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(text.starts_with("## Demo study\n"), "{text}");
    for n in 1..=3 {
        assert!(text.contains(&format!("\nTable {n}. ")), "{text}");
    }
    for (label, condition) in [
        ("KG named", "demo-kg-all-tools__kg-named"),
        ("KG not named", "demo-kg-all-tools__kg-not-named"),
    ] {
        let c: serde_json::Value = serde_json::from_slice(
            &std::fs::read(d.join(format!("runs-demo/conditions/{condition}.json"))).unwrap(),
        )
        .unwrap();
        let a = &c["aggregate"];
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("| {label} | scripted")))
            .unwrap_or_else(|| panic!("no row for {label}:\n{text}"));
        let cells: Vec<&str> = row.split(" | ").collect();
        // A scripted agent has no model, so there is no model column; its
        // host is named by the version it recorded (issue 25, section 5).
        assert!(!text.contains("| model |"), "{text}");
        assert_eq!(
            cells[2],
            c["settings"]["agent_version"].as_str().unwrap(),
            "{row}"
        );
        assert_eq!(cells[3], a["measured_questions"].to_string(), "{row}");
        assert_eq!(cells[4], a["attempts"].to_string(), "{row}");
        assert_eq!(
            cells[5],
            format!("{:.2}", a["exact_rate"].as_f64().unwrap()),
            "{row}"
        );
        assert_eq!(
            cells[9],
            format!("{:.2}", a["mean_f1"].as_f64().unwrap()),
            "{row}"
        );
    }
    // One delta row: the other condition against the baseline.
    assert!(text.contains("| KG not named | KG named | 12 | "), "{text}");
    let missing = okn_in(d)
        .args(["paper", "tables", "--study", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nowhere/study.toml"));
}

/// `freeze --reason published runs-demo` in `dir`, which must succeed.
fn freeze(dir: &Path) {
    okn_in(dir)
        .args(["freeze", "--reason", "published", "runs-demo"])
        .assert()
        .success();
}

/// `build` run as `okn-benchmark build ARGS` in `dir`: (exit code, stdout,
/// stderr).
fn build_args(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = okn_in(dir).arg("build").args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        stdout(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A recorded file that does not parse stops the build (exit 2, the file
/// named) and nothing is written: a page that silently left an episode
/// out would misstate the study.
#[test]
fn an_unreadable_recorded_file_is_an_error_and_nothing_is_written() {
    let dir = fixture();
    let d = dir.path();
    build(d);
    let condition_dir = format!("runs-demo/{QUESTION}_results/{CONDITION}");
    let conditions = std::fs::read_dir(d.join("runs-demo/conditions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    for (file, named) in [
        (
            d.join(&condition_dir).join("result.json"),
            format!("{condition_dir}/result.json"),
        ),
        (
            d.join(&condition_dir).join("attempt-1/calls.json"),
            format!("{condition_dir}/attempt-1/calls.json"),
        ),
        (
            conditions.clone(),
            format!(
                "conditions/{}",
                conditions.file_name().unwrap().to_string_lossy()
            ),
        ),
    ] {
        let old = std::fs::read(&file).unwrap();
        std::fs::write(&file, &old[..old.len() / 2]).unwrap();
        let before = snapshot(d);
        let (code, out, err) = build_args(d, &[]);
        assert_eq!(code, 2, "a truncated {named} was built:\n{out}{err}");
        assert!(err.contains(&named), "{named} not named:\n{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(snapshot(d), before, "a failed build wrote files");
        let (code, _, err) = build_args(d, &["--check"]);
        assert_eq!(code, 2, "{err}");
        std::fs::write(&file, old).unwrap();
        assert_eq!(check(d).0, 0);
    }
}

/// Every damage `rescore` refuses stops `build`, `build --check`, `report`
/// and `paper tables` too (exit 2, the file named, nothing written), as
/// README.md says ("A recorded file that cannot be read stops `report`"):
/// the red-team pass on the publishing half (issue 12) found `build` and
/// `report` exiting 0 over a truncated `episode.json`, a removed
/// `agent.json` or `metrics.json` and an edited ground truth, `build`
/// rewriting a study's SUMMARY.md before it met a lost attempt folder,
/// and `paper tables` printing 11 questions as 0.00 with exit 0; the
/// second pass, a condition's `exact_rate` edited to 0.25 and published
/// under an interval of 1.00–1.00, and an edited `answer.csv` or answer
/// key published beside the score it no longer earns. Those last (records
/// that disagree with the files they derive from) `rescore` recomputes;
/// the rest it refuses too. `merge` refuses a damaged shard before it
/// copies anything.
#[test]
fn every_damage_rescore_refuses_stops_build_report_and_paper_tables() {
    let dir = fixture();
    let d = dir.path();
    build(d);
    let question_dir = format!("runs-demo/{QUESTION}_results");
    let attempt = format!("{question_dir}/{CONDITION}/attempt-1");
    type Damage = fn(&Path);
    let truncate: Damage = |p| {
        let old = std::fs::read(p).unwrap();
        std::fs::write(p, &old[..old.len() / 3]).unwrap();
    };
    let remove: Damage = |p| std::fs::remove_file(p).unwrap();
    let remove_folder: Damage = |p| std::fs::remove_dir_all(p).unwrap();
    let folder_instead: Damage = |p| {
        std::fs::remove_file(p).unwrap();
        std::fs::create_dir(p).unwrap();
    };
    // Edits a JSON file in place.
    fn edit(p: &Path, change: impl FnOnce(&mut serde_json::Value)) {
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        change(&mut v);
        std::fs::write(p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    }
    let aggregate_rate: Damage = |p| edit(p, |v| v["aggregate"]["exact_rate"] = 0.25.into());
    let question_f1: Damage = |p| {
        edit(p, |v| {
            for q in v["questions"].as_object_mut().unwrap().values_mut() {
                q["mean_f1"] = 0.5.into();
            }
        })
    };
    let attempt_f1: Damage = |p| edit(p, |v| v["attempts"][0]["f1"] = 0.2.into());
    let key_edited: Damage = |p| {
        edit(p, |v| {
            let key = v["answer_key"].as_str().unwrap().to_string();
            v["answer_key"] = format!("{key}\n# edited").into();
        })
    };
    let rows_dropped: Damage = |p| {
        let text = std::fs::read_to_string(p).unwrap();
        let header = text.lines().next().unwrap();
        std::fs::write(p, format!("{header}\n")).unwrap();
    };
    let condition_file = format!("runs-demo/conditions/{CONDITION}.json");
    let result_file = format!("{question_dir}/{CONDITION}/result.json");
    let format_99: Damage = |p| edit(p, |v| v["format"] = 99.into());
    let cases: [(String, Damage, &str); 15] = [
        (
            format!("{attempt}/metrics.json"),
            format_99,
            "metrics.json: format 99 is not one this version reads",
        ),
        (
            condition_file.clone(),
            aggregate_rate,
            "its aggregate disagrees with its questions (exact_rate recorded 0.25, recomputed 0.83",
        ),
        (
            condition_file,
            question_f1,
            "disagrees with its result.json (mean_f1 recorded 0.5, result.json has ",
        ),
        (
            result_file,
            attempt_f1,
            "its summary disagrees with its attempts (mean_f1 recorded 1.0",
        ),
        (
            format!("{attempt}/answer.csv"),
            rows_dropped,
            "attempt-1/answer.csv: differs from the answer submit_csv call",
        ),
        (
            format!("{question_dir}/ground_truth.json"),
            key_edited,
            "its answer_key no longer matches answer_key_sha256",
        ),
        (format!("{attempt}/episode.json"), truncate, "episode.json"),
        (format!("{attempt}/metrics.json"), truncate, "metrics.json"),
        (
            format!("{attempt}/metrics.json"),
            remove,
            "metrics.json: missing",
        ),
        (
            format!("{attempt}/agent.json"),
            remove,
            "agent.json: missing",
        ),
        (
            format!("{attempt}/episode.json"),
            remove,
            "episode.json: missing",
        ),
        (attempt.clone(), remove_folder, "/attempt-1: "),
        (
            format!("{question_dir}/ground_truth.csv"),
            truncate,
            "ground_truth.csv: changed since it was recorded",
        ),
        (
            format!("{question_dir}/ground_truth.json"),
            remove,
            "ground_truth.json: missing",
        ),
        (
            format!("{question_dir}/ground_truth.csv"),
            folder_instead,
            "ground_truth.csv",
        ),
    ];
    let pristine = snapshot(d);
    for (file, damage, named) in cases {
        damage(&d.join(&file));
        let before = snapshot(d);
        let (code, out, err) = build_args(d, &[]);
        assert_eq!(code, 2, "build over damaged {file}:\n{out}{err}");
        assert!(
            err.contains(named),
            "build: '{named}' not named for {file}:\n{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(snapshot(d), before, "a failed build wrote files ({file})");
        assert_eq!(
            build_args(d, &["--check"]).0,
            2,
            "build --check over {file}"
        );
        // A summary, an aggregate or a verdict that disagrees with the
        // files below it is what `rescore` recomputes (from the files as
        // they are): it refuses only damage to the files themselves.
        let derived = named.contains("disagrees") || named.contains("records exact true");
        let mut commands = vec![vec!["report", "runs-demo"], vec!["paper", "tables"]];
        if !derived {
            commands.push(vec!["rescore", "runs-demo"]);
        }
        for command in commands {
            let o = okn_in(d).args(&command).output().unwrap();
            assert_eq!(
                o.status.code(),
                Some(2),
                "{command:?} over {file}: {}",
                stdout(&o)
            );
            assert!(
                stderr(&o).contains(named),
                "{command:?}: '{named}' not named:\n{}",
                stderr(&o)
            );
        }
        assert_eq!(
            snapshot(d),
            before,
            "report, paper or rescore wrote files ({file})"
        );
        let o = okn_in(d)
            .args(["merge", "--out", "merged", "runs-demo"])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "merge over {file}: {}",
            stdout(&o)
        );
        assert!(
            stderr(&o).contains("so nothing was merged"),
            "{}",
            stderr(&o)
        );
        assert!(!d.join("merged").exists(), "merge wrote a root over {file}");
        // Restore the fixture for the next case.
        let path = d.join(&file);
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        }
        for (p, bytes) in &pristine {
            let p = d.join(p);
            if std::fs::read(&p).ok().as_ref() != Some(bytes) {
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, bytes).unwrap();
            }
        }
        assert_eq!(snapshot(d), pristine, "fixture not restored after {file}");
    }
    assert_eq!(check(d).0, 0);
}

/// `report --markdown FILE` and `paper doc` never replace a file a person
/// wrote (no generator mark) without `--force`, as `compare --markdown`
/// and `build` refuse (red-team pass, issue 12).
#[test]
fn report_markdown_and_paper_doc_keep_hand_written_files() {
    let dir = fixture();
    let d = dir.path();
    build(d);
    std::fs::write(d.join("mine.md"), "my notes\n").unwrap();
    let o = okn_in(d)
        .args(["report", "runs-demo", "--markdown", "mine.md"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("mine.md: exists and was not written by okn-benchmark report"));
    assert_eq!(
        std::fs::read_to_string(d.join("mine.md")).unwrap(),
        "my notes\n"
    );
    // Its own file it replaces; --force replaces a person's.
    okn_in(d)
        .args(["report", "runs-demo", "--markdown", "mine.md", "--force"])
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(d.join("mine.md"))
            .unwrap()
            .contains("Generated by `okn-benchmark report`")
    );
    okn_in(d)
        .args(["report", "runs-demo", "--markdown", "mine.md"])
        .assert()
        .success();

    std::fs::write(d.join("paper.md"), "# Paper\n\nText.\n").unwrap();
    std::fs::write(d.join("paper.rtf"), "my own RTF\n").unwrap();
    let o = okn_in(d)
        .args(["paper", "doc", "paper.md"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("paper.rtf: exists and was not written by okn-benchmark"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(d.join("paper.rtf")).unwrap(),
        "my own RTF\n"
    );
    assert!(
        !d.join("paper.html").exists(),
        "paper doc wrote paper.html before it refused"
    );
    okn_in(d)
        .args(["paper", "doc", "paper.md", "--force"])
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(d.join("paper.rtf"))
            .unwrap()
            .starts_with("{\\rtf1")
    );
    // Its own outputs it replaces.
    okn_in(d)
        .args(["paper", "doc", "paper.md"])
        .assert()
        .success();
}

/// Files a person put in `figures/` or `site/` carry no generator mark and
/// are never removed; a figure the study no longer names is.
#[test]
fn hand_put_files_in_generated_folders_are_kept() {
    let dir = fixture();
    let d = dir.path();
    build(d);
    let figures = d.join("results-demo/figures");
    std::fs::write(
        figures.join("sketch.svg"),
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    )
    .unwrap();
    std::fs::write(figures.join("notes.txt"), "drawn by hand\n").unwrap();
    // A figure the study no longer names.
    let toml = d.join("results-demo/study.toml");
    std::fs::write(&toml, STUDY_TOML.replace(", \"pass-k\"", "")).unwrap();
    let (code, text) = check(d);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("orphaned  results-demo/figures/pass-k.svg"),
        "{text}"
    );
    assert!(
        !text.contains("sketch.svg") && !text.contains("notes.txt"),
        "{text}"
    );
    let out = build(d);
    assert!(out.ends_with(", 1 orphaned removed\n"), "{out}");
    assert!(!figures.join("pass-k.svg").exists());
    assert!(figures.join("sketch.svg").is_file() && figures.join("notes.txt").is_file());
    assert_eq!(check(d).0, 0);
}

/// A runs root's README.md that `report` did not write is never replaced
/// (exit 2, the file named); a folder whose `conditions/` holds no
/// condition file is not a runs root, so its README is plain prose.
#[test]
fn a_hand_written_runs_root_readme_is_never_replaced() {
    let dir = fixture();
    let d = dir.path();
    let readme = d.join("runs-demo/README.md");
    // One that merely quotes the generated line is still a person's.
    let mine = "# My notes on these runs\n\nThe README says \"Generated by `okn-benchmark report`\", but not this one.\n";
    std::fs::write(&readme, mine).unwrap();
    let (code, out, err) = build_args(d, &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), mine);
    std::fs::write(&readme, "# My notes on these runs\n").unwrap();
    let (code, out, err) = build_args(d, &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("runs-demo/README.md") && err.contains("not generated"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        "# My notes on these runs\n"
    );

    // Not a runs root: conditions/ without a condition file.
    std::fs::create_dir_all(d.join("notes/conditions")).unwrap();
    std::fs::write(d.join("notes/conditions/list.txt"), "dry, humid\n").unwrap();
    std::fs::write(d.join("notes/README.md"), "# Weather notes\n").unwrap();
    std::fs::remove_file(&readme).unwrap();
    build(d);
    assert_eq!(
        std::fs::read_to_string(d.join("notes/README.md")).unwrap(),
        "# Weather notes\n"
    );
    assert!(
        std::fs::read_to_string(d.join("notes/README.html"))
            .unwrap()
            .contains("Weather notes")
    );
}

/// Run inside a project's subfolder, `build` builds that subfolder from the
/// project folder (no second `site/`); `--root` must name a folder.
#[test]
fn a_build_in_a_subfolder_builds_it_from_the_project_folder() {
    let dir = fixture();
    let d = dir.path();
    std::fs::create_dir(d.join(".git")).unwrap();
    let (code, out, err) = build_args(&d.join("results-demo"), &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("from the project folder"), "{err}");
    assert!(d.join("results-demo/SUMMARY.html").is_file());
    assert!(d.join("results-demo/figures/heatmap.svg").is_file());
    assert!(
        !d.join("results-demo/site").exists(),
        "a second site/ was made"
    );
    assert!(!d.join("site").exists(), "a subfolder build made the site");
    assert!(
        !d.join("README.html").exists(),
        "a subfolder build went outside it"
    );

    let (code, _, err) = build_args(d, &["--root", "nowhere"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--root nowhere: no such folder"), "{err}");
}

/// `paper doc` on a study's prose makes the very page `build` makes (the
/// region markers stripped the same way), so neither undoes the other;
/// regions outside a study are named in a warning, not silently left.
#[test]
fn paper_doc_and_build_make_the_same_page_and_stray_regions_are_named() {
    let dir = fixture();
    let d = dir.path();
    build(d);
    let page = d.join("results-demo/SUMMARY.html");
    let built = std::fs::read(&page).unwrap();
    assert!(
        !String::from_utf8_lossy(&built).contains("okn:"),
        "a marker reached the page"
    );
    let out = okn_in(d)
        .args(["paper", "doc", "results-demo/SUMMARY.md"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&page).unwrap(),
        built,
        "paper doc made another page"
    );
    let rtf = std::fs::read_to_string(d.join("results-demo/SUMMARY.rtf")).unwrap();
    assert!(!rtf.contains("okn:"), "a marker reached the RTF");

    std::fs::write(
        d.join("docs/stray.md"),
        "# Stray\n\n<!-- okn:rates -->\n<!-- /okn:rates -->\n",
    )
    .unwrap();
    let (code, _, err) = build_args(d, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("stray.md: generated regions outside a study's folder are filled only when each names its study"),
        "{err}"
    );
}

/// A file a person wrote where `build` would write (an `X.html` beside
/// `X.md`, a figure's name in `figures/`) is never replaced: exit 2, the
/// file named, its bytes kept. Marked copies under other names (an
/// archived page, a figure kept as `f1-v1.svg`) are a person's and stay;
/// every file `build` does remove is named.
#[test]
fn hand_written_outputs_and_copies_of_generated_files_are_never_lost() {
    let dir = fixture();
    let d = dir.path();
    build(d);
    std::fs::write(d.join("docs/notes.md"), "# Notes\n").unwrap();
    std::fs::write(d.join("docs/notes.html"), "<p>my own page</p>\n").unwrap();
    let (code, out, err) = build_args(d, &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("docs/notes.html") && err.contains("was not written by okn-benchmark build"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("docs/notes.html")).unwrap(),
        "<p>my own page</p>\n"
    );
    std::fs::remove_file(d.join("docs/notes.html")).unwrap();

    // A runs root's page, which a job makes (not planned up front), is
    // refused the same way before anything is written.
    let root_page = d.join("runs-demo/README.html");
    let generated_page = std::fs::read(&root_page).unwrap();
    std::fs::write(&root_page, "<p>my own root page</p>\n").unwrap();
    std::fs::write(d.join("docs/new.md"), "# New\n").unwrap();
    let (code, out, err) = build_args(d, &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("runs-demo/README.html")
            && err.contains("was not written by okn-benchmark build"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&root_page).unwrap(),
        "<p>my own root page</p>\n"
    );
    assert!(!d.join("docs/new.html").exists(), "nothing is written");
    std::fs::write(&root_page, &generated_page).unwrap();
    std::fs::remove_file(d.join("docs/new.md")).unwrap();

    let heatmap = d.join("results-demo/figures/heatmap.svg");
    let drawn = "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>\n";
    let generated = std::fs::read(&heatmap).unwrap();
    std::fs::write(&heatmap, drawn).unwrap();
    let (code, _, err) = build_args(d, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("figures/heatmap.svg"), "{err}");
    assert_eq!(std::fs::read_to_string(&heatmap).unwrap(), drawn);
    std::fs::write(&heatmap, &generated).unwrap();

    // Copies under other names stay; a real orphan goes, and is named.
    std::fs::create_dir(d.join("archive")).unwrap();
    std::fs::copy(
        d.join("results-demo/SUMMARY.html"),
        d.join("archive/SUMMARY-2026-11-01.html"),
    )
    .unwrap();
    std::fs::copy(&heatmap, d.join("results-demo/figures/heatmap-v1.svg")).unwrap();
    std::fs::write(d.join("docs/OLD.md"), "# Old\n").unwrap();
    build(d);
    std::fs::remove_file(d.join("docs/OLD.md")).unwrap();
    let out = build(d);
    assert!(out.contains("removed   docs/OLD.html"), "{out}");
    assert!(out.ends_with(", 1 orphaned removed\n"), "{out}");
    assert!(d.join("archive/SUMMARY-2026-11-01.html").is_file());
    assert!(d.join("results-demo/figures/heatmap-v1.svg").is_file());
    assert_eq!(check(d).0, 0);
}

/// What result.json records must be there and make sense: a missing
/// answer, a repeated attempt, a fraction above 1, a result copied from
/// another question's folder each stop the build with the file named.
#[test]
fn recorded_results_are_checked() {
    let dir = fixture();
    let d = dir.path();
    build(d);
    let condition_dir = d.join(format!("runs-demo/{QUESTION}_results/{CONDITION}"));
    let result_path = condition_dir.join("result.json");
    let result = std::fs::read_to_string(&result_path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&result).unwrap();
    let submitted = value["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["submitted"] == true)
        .unwrap()["attempt"]
        .as_u64()
        .unwrap();
    let mut bad: Vec<(String, &str)> = Vec::new();
    let mut twice = value.clone();
    let first = twice["attempts"][0].clone();
    twice["attempts"].as_array_mut().unwrap().push(first);
    bad.push((twice.to_string(), "is recorded twice"));
    let mut f1 = value.clone();
    f1["attempts"][0]["f1"] = serde_json::json!(5.0);
    bad.push((f1.to_string(), "not a fraction between 0 and 1"));
    let mut moved = value.clone();
    moved["question"] = serde_json::json!("another-question");
    bad.push((moved.to_string(), "was it copied from another folder?"));
    for (text, says) in bad {
        std::fs::write(&result_path, text).unwrap();
        let (code, out, err) = build_args(d, &[]);
        assert_eq!(code, 2, "{says}: {out}{err}");
        assert!(err.contains("result.json") && err.contains(says), "{err}");
    }
    std::fs::write(&result_path, &result).unwrap();
    let answer = condition_dir.join(format!("attempt-{submitted}/answer.csv"));
    let kept = std::fs::read(&answer).unwrap();
    std::fs::remove_file(&answer).unwrap();
    let (code, _, err) = build_args(d, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("attempt-{submitted}/answer.csv: missing")),
        "{err}"
    );
    std::fs::write(&answer, kept).unwrap();
    assert_eq!(check(d).0, 0);
}

/// A byte-order mark opening a Markdown file is not text of its first line.
#[test]
fn a_byte_order_mark_is_not_part_of_the_first_heading() {
    let dir = fixture();
    let d = dir.path();
    std::fs::write(d.join("docs/bom.md"), "\u{feff}# Heading\n\ntext\n").unwrap();
    build(d);
    let page = std::fs::read_to_string(d.join("docs/bom.html")).unwrap();
    assert!(page.contains("<title>Heading</title>"), "{page}");
    assert!(page.contains("<h1 id=\"heading\">Heading"), "{page}");
}

/// `--root` naming a file is refused, named as such.
#[test]
fn a_root_that_is_a_file_is_refused() {
    let dir = fixture();
    let (code, _, err) = build_args(dir.path(), &["--root", "README.md"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--root README.md: a file, not a folder"),
        "{err}"
    );
}

/// A link to a folder is not followed, and `build` says so.
#[test]
fn a_link_to_a_folder_is_not_followed_and_said() {
    let dir = fixture();
    let d = dir.path();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("x.md"), "# X\n").unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), d.join("linked")).unwrap();
    let (code, _, err) = build_args(d, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("linked: a link to a folder, not followed"),
        "{err}"
    );
    assert!(
        !elsewhere.path().join("x.html").exists(),
        "a build wrote through a link"
    );
}

/// `build` honours `.gitignore` and `.ignore` as ripgrep does: a Python
/// virtualenv's `site-packages` got `LICENSE.html` beside its `LICENSE.md`,
/// and its `lib64` link drew the link advice (issue: publishing as the
/// seed's studies do it, "build honours .gitignore and .ignore"). A venv
/// made by Python 3.13 carries its own `.gitignore` of `*`; older ones are
/// listed in the project's.
#[test]
fn ignored_folders_are_neither_read_nor_written() {
    let dir = fixture();
    let d = dir.path();
    std::fs::write(d.join(".gitignore"), "/venv/\nscratch-*.md\n").unwrap();
    for venv in ["venv", "venv313"] {
        let packages = d.join(venv).join("lib/python3/site-packages/pkg");
        std::fs::create_dir_all(&packages).unwrap();
        std::fs::write(packages.join("LICENSE.md"), "# License\n").unwrap();
        std::os::unix::fs::symlink("lib", d.join(venv).join("lib64")).unwrap();
    }
    std::fs::write(
        d.join("venv313/.gitignore"),
        "# created by virtualenv automatically\n*\n",
    )
    .unwrap();
    std::fs::create_dir_all(d.join("notes")).unwrap();
    std::fs::write(d.join("notes/.ignore"), "draft.md\n").unwrap();
    std::fs::write(d.join("notes/draft.md"), "# Draft\n").unwrap();
    std::fs::write(d.join("notes/kept.md"), "# Kept\n").unwrap();
    std::fs::write(d.join("scratch-1.md"), "# Scratch\n").unwrap();
    let (code, _, err) = build_args(d, &[]);
    assert_eq!(code, 0, "{err}");
    for venv in ["venv", "venv313"] {
        assert!(
            !d.join(venv)
                .join("lib/python3/site-packages/pkg/LICENSE.html")
                .exists(),
            "{venv}: build wrote into an ignored folder"
        );
    }
    assert!(!err.contains("lib64"), "{err}");
    assert!(!d.join("notes/draft.html").exists());
    assert!(!d.join("scratch-1.html").exists());
    assert!(
        d.join("notes/kept.html").exists(),
        "a file nothing ignores is built"
    );
    let (code, _, err) = build_args(d, &["--check"]);
    assert_eq!(code, 0, "{err}");
}

/// Issue 26, section 2 ("scratch runs get published"): following the
/// README's examples wrote runs roots, shards and reports into the clone,
/// and the next `build` published them. The examples now write under
/// `scratch/`, which the repository's own `.gitignore` lists: a runs root
/// there is never read or published.
#[test]
fn a_runs_root_under_the_readmes_scratch_folder_is_never_published() {
    let dir = fixture();
    let d = dir.path();
    std::fs::copy(
        crate::support::repo().join(".gitignore"),
        d.join(".gitignore"),
    )
    .unwrap();
    crate::support::fixture::copy_dir(
        &crate::support::repo().join("runs-expert-single"),
        &d.join("scratch/runs-cross"),
    );
    std::fs::remove_file(d.join("scratch/runs-cross/README.html")).unwrap();
    let (code, _, err) = build_args(d, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !d.join("scratch/runs-cross/README.html").exists(),
        "published"
    );
    let site = std::fs::read_to_string(d.join("site/index.html")).unwrap();
    assert!(!site.contains("scratch"), "the site names it");
    let (code, _, err) = build_args(d, &["--check"]);
    assert_eq!(code, 0, "{err}");
}

/// Issue 26, section 2: `build` never publishes a runs root nobody chose
/// to publish. Following the README's examples left a runs root under the
/// ignored `scratch/` and three shards of a sweep (`run --shard K/N`), and
/// the next `build` listed the shards on the site as runs roots named "1",
/// "2", "3". Each is now named in one note on stderr, and nothing is
/// written into it or about it; a merged root is published.
#[test]
fn build_names_ignored_runs_roots_and_unmerged_shards_in_one_note_and_publishes_neither() {
    let dir = fixture();
    let d = dir.path();
    std::fs::write(d.join(".gitignore"), "/scratch/\n").unwrap();
    crate::support::fixture::copy_dir(
        &crate::support::repo().join("runs-expert-single"),
        &d.join("scratch/runs-cross"),
    );
    std::fs::remove_file(d.join("scratch/runs-cross/README.html")).unwrap();
    for k in ["1", "2"] {
        let out = crate::support::okn()
            .args([
                "run",
                "--corpus",
                "demo/benchmarks-single",
                "--tools",
                "sparql-only",
            ])
            .args([
                "--kg-hint",
                "tags",
                "--agent",
                "scripted:oracle",
                "--limit",
                "2",
            ])
            .args(["--shard", &format!("{k}/2"), "--out"])
            .arg(d.join("shards").join(k))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let before = crate::support::snapshot(&d.join("shards"));
    let (code, _, err) = build_args(d, &[]);
    assert_eq!(code, 0, "{err}");
    // (The fixture's root, recorded from a corpus it does not ship, gets
    // a note of its own on its trajectory expectations: not this one.)
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("note: ") && !l.contains("trajectory expectations"))
        .collect();
    assert_eq!(
        notes,
        [
            "note: 3 runs roots not published, as nobody chose to publish them: under a folder \
             .gitignore or .ignore excludes (scratch/runs-cross); shards of a sweep: merge them \
             (okn-benchmark merge --out ROOT SHARD...) and the merged root is published \
             (shards/1, shards/2)"
        ],
        "{err}"
    );
    assert_eq!(
        crate::support::snapshot(&d.join("shards")),
        before,
        "written into a shard"
    );
    assert!(!d.join("scratch/runs-cross/README.html").exists());
    let site = std::fs::read_to_string(d.join("site/index.html")).unwrap();
    assert!(
        !site.contains("shards/") && !site.contains(">1<"),
        "the site lists a shard"
    );
    let (code, _, err) = build_args(d, &["--check"]);
    assert_eq!(code, 0, "{err}");
    // Merged, the sweep is an ordinary runs root: published, no note.
    let out = okn_in(d)
        .args(["merge", "--out", "runs-sweep", "shards/1", "shards/2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::remove_dir_all(d.join("shards")).unwrap();
    std::fs::remove_dir_all(d.join("scratch")).unwrap();
    let (code, _, err) = build_args(d, &[]);
    assert_eq!(code, 0, "{err}");
    // (Its corpus is not here: only the note on trajectory expectations
    // may be said of it.)
    assert!(
        !err.lines()
            .any(|l| l.starts_with("note: ") && !l.contains("trajectory expectations")),
        "{err}"
    );
    assert!(d.join("runs-sweep/README.html").is_file());
}

/// Red team, 2026-12-02: a `.gitignore` above the project (in a home
/// folder) hid the project's own files; only the project's count.
#[test]
fn an_ignore_file_above_the_project_does_not_count() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join(".gitignore"), "notes/\n").unwrap();
    let d = outer.path().join("proj");
    std::fs::create_dir_all(d.join("notes")).unwrap();
    std::fs::write(d.join("okn-benchmark.toml"), "").unwrap();
    std::fs::write(d.join("README.md"), "# R\n").unwrap();
    std::fs::write(d.join("notes/x.md"), "# X\n").unwrap();
    let (code, _, err) = build_args(&d, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(d.join("notes/x.html").exists(), "{err}");
}

/// Red team, 2026-12-02: `![p](/etc/passwd)` inlined the file's bytes
/// into the published page, as did `../secret.png` from outside the
/// project; now neither is read, the page shows the alt text, and build
/// says so.
#[test]
fn images_from_outside_the_project_are_never_inlined() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("secret.png"), "the secret").unwrap();
    let d = outer.path().join("proj");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("okn-benchmark.toml"), "").unwrap();
    std::fs::write(
        d.join("README.md"),
        "# R\n\n![p](/etc/hostname) ![s](../secret.png) ![n](notes.txt)\n",
    )
    .unwrap();
    std::fs::write(d.join("notes.txt"), "not an image").unwrap();
    let (code, _, err) = build_args(&d, &[]);
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(d.join("README.html")).unwrap();
    assert!(!page.contains("base64"), "a file was inlined: {page}");
    for image in ["/etc/hostname", "../secret.png"] {
        assert!(
            err.contains(&format!(
                "image '{image}' not inlined: it is outside the project"
            )),
            "{err}"
        );
    }
    assert!(err.contains("image 'notes.txt' not inlined"), "{err}");
    assert!(page.contains("not inlined: an absolute path"), "{page}");
}

/// `report` on a frozen root writes nothing, and says so.
#[test]
fn report_on_a_frozen_root_says_it_leaves_it_as_it_was() {
    let dir = fixture();
    let d = dir.path();
    freeze(d);
    let before = snapshot(&d.join("runs-demo"));
    let out = okn_in(d).args(["report", "runs-demo"]).output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("runs-demo is frozen: README.md and the summary CSVs are left as they were"),
        "{err}"
    );
    assert_eq!(snapshot(&d.join("runs-demo")), before);
}

mod regression {
    //! One test per fixed defect, named after what it guards; the comment
    //! says what broke.

    use super::*;

    /// Issue 24, item 19: a 20,000-deep SVG overflowed the stack of what
    /// writes it out again (and of resvg) and aborted `build` and `paper
    /// doc`. Now each refuses the page by name, exit 2, as a Markdown image
    /// and as a raw `<img>`.
    #[test]
    fn a_20000_deep_svg_is_refused_naming_it_not_an_abort() {
        let deep = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\">{}<rect width=\"4\" height=\"4\"/>{}</svg>",
            "<g>".repeat(20_000),
            "</g>".repeat(20_000)
        );
        for (page, text) in [
            ("doc.md", "# D\n\n![deep](deep.svg)\n"),
            (
                "raw.md",
                "# R\n\n<p><img src=\"deep.svg\" width=\"9\"></p>\n",
            ),
        ] {
            let dir = crate::support::work_dir(&[(page, text), ("deep.svg", deep.as_str())]);
            for args in [&["build", "--root", "."][..], &["paper", "doc", page][..]] {
                let out = crate::support::okn_in(dir.path())
                    .args(args)
                    .output()
                    .unwrap();
                let err = crate::support::stderr(&out);
                assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
                assert!(
                    err.contains(
                        "deep.svg: an SVG nested more than 256 elements deep (embedded by "
                    ) && err.contains(&format!("{page}): it cannot be inlined or drawn safely")),
                    "{args:?}: {err}"
                );
            }
        }
    }

    /// Issue 24, item 24: raw HTML and an inlined SVG holding `<meta
    /// http-equiv="refresh">` redirected the page (the HTML parser hoists
    /// a `<meta>` out of an `<svg>`; a quote in an unquoted value put our
    /// tag scanner out of step). Every page's body now passes an
    /// allow-list over an HTML5 parse: no `<meta>`, `<base>`, script,
    /// handler or foreign image survives, and a figure keeps its SVG.
    #[test]
    fn raw_html_and_inlined_svg_cannot_redirect_or_run() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><g><meta http-equiv=\"refresh\" content=\"0;url=https://x.example/\"/><foreignObject><iframe/></foreignObject></g><rect id=\"r\" width=\"4\" height=\"4\"/><use href=\"#r\"/></svg>";
        let prose = "# P\n\n![fig](fig.svg)\n\n<p><img src=\"fig.svg\" alt=\"raw\"></p>\n\n\
                     <div><a title=x\"> <meta http-equiv=\"refresh\" content=\"0;url=https://x.example/\"> \">q</a></div>\n\n\
                     Inline <a title=x\"> <META HTTP-EQUIV=refresh CONTENT=0> \">q</a> and <base href=\"https://x.example/\">.\n\n\
                     <svg><style><img src=x onerror=alert(1)></style></svg>\n\n<img src=\"https://x.example/p.png\">\n";
        let dir = crate::support::work_dir(&[("p.md", prose), ("fig.svg", svg)]);
        let out = crate::support::okn_in(dir.path())
            .args(["build", "--root", "."])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", crate::support::stderr(&out));
        let html = std::fs::read_to_string(dir.path().join("p.html")).unwrap();
        let body = &html[html.find("<h1").unwrap()..html.find("</main>").unwrap()];
        for bad in [
            "refresh",
            "REFRESH",
            "<meta",
            "<base",
            "src=\"https:",
            "onerror",
            "<iframe",
            "foreignObject",
        ] {
            assert!(!body.contains(bad), "{bad} in {body}");
        }
        assert_eq!(
            body.matches("<svg").count(),
            3,
            "two figures and the raw <svg>: {body}"
        );
        assert!(body.contains("<use href=\"#"), "{body}");
        assert!(
            crate::support::stderr(&out)
                .contains("dropped: raw HTML may not send the page elsewhere"),
            "{}",
            crate::support::stderr(&out)
        );
    }

    // A named pipe called `x.md` made build wait forever.
    #[cfg(unix)]
    #[test]
    fn a_named_pipe_named_like_markdown_is_skipped_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("README.md"), "# a\n").unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("x.md"))
            .status()
            .unwrap();
        assert!(made.success());
        let out = crate::support::okn_in(dir.path())
            .arg("build")
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            crate::support::stderr(&out)
        );
        assert!(
            crate::support::stderr(&out)
                .contains("x.md: not a regular file (a named pipe, socket or device): skipped"),
            "{}",
            crate::support::stderr(&out)
        );
        assert!(dir.path().join("README.html").is_file());
    }

    // A non-English HTML comment in any Markdown file panicked build (the
    // region scanner sliced text by bytes), blocking publishing and CI.
    #[test]
    fn a_non_english_html_comment_is_published() {
        for comment in [
            "<!-- été -->",
            "<!-- 中文注释 -->",
            "<!--é-->",
            "<!-- /été -->",
            "<!-- é",
        ] {
            let out = crate::support::Test::new()
                .write("README.md", format!("# Notes\n\n{comment}\n"))
                .arg("build")
                .stdout("build: 1 written, 0 unchanged, 0 orphaned removed\n")
                .status(0)
                .run();
            let page = std::fs::read_to_string(out.path().join("README.html")).unwrap();
            assert!(page.contains("<h1"), "{comment}: {page}");
        }
    }

    // An SVG with a non-ASCII attribute name panicked build and paper doc
    // (the event-handler check sliced the name by bytes).
    #[test]
    fn an_svg_with_a_non_ascii_attribute_name_is_inlined() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" dé=\"1\" onclick=\"x()\"><rect width=\"1\" height=\"1\"/></svg>";
        let out = crate::support::Test::new()
            .write("a.svg", svg)
            .write("README.md", "# x\n\n![a figure](a.svg)\n")
            .arg("build")
            .status(0)
            .run();
        let page = std::fs::read_to_string(out.path().join("README.html")).unwrap();
        assert!(page.contains("<rect"), "{page}");
        assert!(!page.contains("onclick"), "{page}");
        crate::support::Test::with_tempdir(tempfile::tempdir().unwrap())
            .write("a.svg", svg)
            .write("paper.md", "# Paper\n\n![a figure](a.svg)\n")
            .args(["paper", "doc", "paper.md"])
            .status(0)
            .run();
    }

    // A label in CJK and emoji panicked while the figures were inlined.
    #[test]
    fn a_cjk_and_emoji_label_is_inlined_without_a_panic() {
        let dir = fixture();
        let d = dir.path();
        let cjk = STUDY_TOML.replacen("label = \"", "label = \"中文 😀 ", 1);
        assert_ne!(cjk, STUDY_TOML, "the fixture has no label to change");
        std::fs::write(d.join("results-demo/study.toml"), &cjk).unwrap();
        assert_eq!(build(d), FIRST_BUILD);
        let index = std::fs::read_to_string(d.join("site/index.html")).unwrap();
        assert!(index.contains("中文 😀 KG named"), "label lost");
    }

    // A killed build's temporary file stayed in the site for good.
    #[test]
    fn a_killed_builds_temporary_file_is_orphaned_then_removed() {
        let dir = fixture();
        let d = dir.path();
        build(d);
        let leftover = d.join("site/roots/runs-demo/.okn-tmp-AbC123");
        std::fs::write(&leftover, "<!DOCTYPE html><p>half a pa").unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&leftover)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let (code, text) = check(d);
        assert_eq!(code, 1, "{text}");
        assert!(
            text.contains("orphaned  site/roots/runs-demo/.okn-tmp-AbC123"),
            "{text}"
        );
        let out = build(d);
        assert!(
            out.contains("removed   site/roots/runs-demo/.okn-tmp-AbC123"),
            "{out}"
        );
        assert!(out.ends_with(", 1 orphaned removed\n"), "{out}");
        assert!(!leftover.exists());
    }

    // A study could name one runs root twice, under two spellings, with no error.
    #[test]
    fn a_root_named_twice_by_a_study_is_an_error() {
        let dir = fixture();
        let d = dir.path();
        std::fs::write(
            d.join("results-demo/study.toml"),
            STUDY_TOML.replace(
                "roots = [\"../runs-demo\"]",
                "roots = [\"../runs-demo\", \"../runs-demo/\"]",
            ),
        )
        .unwrap();
        let (code, _, err) = build_args(d, &[]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("named twice"), "{err}");
    }

    // A delta of a condition against itself was filled in, not refused.
    #[test]
    fn a_delta_against_itself_is_an_error() {
        let dir = fixture();
        let d = dir.path();
        std::fs::write(
            d.join("results-demo/SUMMARY.md"),
            format!("{SUMMARY}\nSelf: <!-- okn:number condition=named baseline=named metric=delta --><!-- /okn:number -->\n"),
        )
        .unwrap();
        let (code, _, err) = build_args(d, &[]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("with itself"), "{err}");
    }

    // A root frozen before its first build never got README.html, and the
    // site linked README.md, which a web host serves as plain text.
    #[test]
    fn freeze_writes_the_readme_page_before_it_closes_the_root() {
        let dir = fixture();
        let d = dir.path();
        std::fs::remove_file(d.join("runs-demo/README.md")).ok();
        assert!(!d.join("runs-demo/README.html").exists());
        let out = okn_in(d)
            .args(["freeze", "--reason", "published", "runs-demo"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stdout(&out).contains("wrote     runs-demo/README.html"),
            "{}",
            stdout(&out)
        );
        let page = std::fs::read_to_string(d.join("runs-demo/README.html")).unwrap();
        assert!(
            page.contains("<meta name=\"generator\" content=\"okn-benchmark build\">"),
            "{page}"
        );
        assert!(page.contains("KG named"), "{page}");
        // The page is what build writes beside any README: a build of the
        // root before freezing would have written the same bytes.
        let unfrozen = fixture();
        build(unfrozen.path());
        assert_eq!(
            page,
            std::fs::read_to_string(unfrozen.path().join("runs-demo/README.html")).unwrap()
        );
        // A root frozen without its page (as an earlier version, of
        // runs-root format 1, froze it) is named, and its README.md
        // linked. (One frozen by a later `freeze` that lacks it lost it:
        // reported missing, issue 24, item 9.)
        std::fs::remove_file(d.join("runs-demo/README.html")).unwrap();
        std::fs::write(
            d.join("runs-demo/.frozen"),
            "{\"format\": 1, \"reason\": \"published\"}\n",
        )
        .unwrap();
        let (code, _, err) = build_args(d, &[]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("runs-demo: frozen without README.html, so the site links its README.md"),
            "{err}"
        );
        let index = std::fs::read_to_string(d.join("site/roots/runs-demo/index.html")).unwrap();
        assert!(
            index.contains("href=\"../../../runs-demo/README.md\""),
            "{index}"
        );
    }

    // A templates/page.html without the exact generator mark made build
    // write pages it then disowned: every later build and --check exited
    // 2, even after the template was restored.
    #[test]
    fn a_template_lacking_the_generator_mark_is_refused_before_anything_is_written() {
        let dir = fixture();
        let d = dir.path();
        let builtin =
            std::fs::read_to_string(crate::support::repo().join("templates/page.html")).unwrap();
        std::fs::create_dir_all(d.join("templates")).unwrap();
        std::fs::write(
            d.join("templates/page.html"),
            builtin.replace(
                "<meta name=\"generator\" content=\"okn-benchmark build\">",
                "<meta name=\"generator\" content=\"my theme\">",
            ),
        )
        .unwrap();
        for args in [&[][..], &["--check"][..]] {
            let (code, out, err) = build_args(d, args);
            assert_eq!(code, 2, "{out}{err}");
            assert!(
                err.contains("templates/page.html: lacks the generator mark `<meta name=\"generator\" content=\"okn-benchmark build\">`"),
                "{err}"
            );
        }
        assert!(!d.join("site").exists());
        assert!(!d.join("runs-demo/README.html").exists());
        // Restored, everything builds and checks clean.
        std::fs::remove_file(d.join("templates/page.html")).unwrap();
        build(d);
        assert_eq!(check(d).0, 0);
    }

    // A root whose first run was interrupted (attempts, no condition file)
    // was silently absent from build.
    #[test]
    fn build_names_a_runs_root_whose_first_run_never_finished() {
        let dir = fixture();
        let d = dir.path();
        let attempt = d.join("runs-cut/q-1_results/some-condition/attempt-1");
        std::fs::create_dir_all(&attempt).unwrap();
        std::fs::create_dir_all(d.join("runs-cut/conditions")).unwrap();
        std::fs::write(attempt.join("episode.json"), "{}").unwrap();
        let (code, _, err) = build_args(d, &[]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains(
                "warning: ./runs-cut: not published, no condition of it has finished: condition \
                 some-condition is unfinished: 1 finished attempt of 1 question on disk, and no \
                 condition file"
            ),
            "{err}"
        );
        assert!(!d.join("runs-cut/README.md").exists());
        assert!(!d.join("site/roots/runs-cut").exists());
    }

    // A `<meta http-equiv="refresh">` in prose sent the published page
    // elsewhere: the Content-Security-Policy does not govern navigation.
    #[test]
    fn raw_html_that_navigates_or_rebases_the_page_is_dropped_and_named() {
        let dir = fixture();
        let d = dir.path();
        std::fs::write(
            d.join("NOTES.md"),
            "# Notes\n\n<meta http-equiv=\"refresh\" content=\"0; url=https://x.example/\">\n\n\
             <base href=\"https://x.example/\">\n\n<details><summary>kept</summary>text</details>\n\n\
             <base\nhref=\"https://split.example/\">\n",
        )
        .unwrap();
        let (code, _, err) = build_args(d, &[]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains(
                "warning: ./NOTES.md: <meta http-equiv=\"refresh\" content=\"0; \
                 url=https://x.example/\"> dropped: raw HTML may not send the page elsewhere"
            ),
            "{err}"
        );
        assert!(
            err.contains("warning: ./NOTES.md: <base href=\"https://x.example/\"> dropped"),
            "{err}"
        );
        // A tag whose attributes follow on the next line (pulldown-cmark
        // hands an HTML block over line by line) is caught too.
        assert!(
            err.contains("<base href=\"https://split.example/\"> dropped"),
            "{err}"
        );
        let page = std::fs::read_to_string(d.join("NOTES.html")).unwrap();
        assert!(!page.contains("x.example"), "{page}");
        assert!(!page.contains("split.example"), "{page}");
        assert!(!page.contains("<base"), "{page}");
        assert!(page.contains("<details><summary>kept</summary>"), "{page}");
    }

    // A region's `k=0` was told "has N attempts per question", not that k
    // must be at least 1.
    #[test]
    fn a_region_with_k_zero_says_k_must_be_at_least_one() {
        let dir = fixture();
        let d = dir.path();
        std::fs::write(
            d.join("results-demo/SUMMARY.md"),
            "# S\n\nPass: <!-- okn:number condition=named metric=pass-at-k k=0 -->?<!-- /okn:number -->\n",
        )
        .unwrap();
        let (code, _, err) = build_args(d, &[]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("k must be a whole number of at least 1"),
            "{err}"
        );
    }

    // The attempt page's raw files left out upstream.stderr.log and
    // agent.stderr.log, where a server's traceback is.
    #[test]
    fn the_attempt_page_links_both_stderr_logs_when_they_were_recorded() {
        let dir = fixture();
        let d = dir.path();
        let attempt = d.join(format!(
            "runs-demo/{QUESTION}_results/{CONDITION}/attempt-1"
        ));
        std::fs::write(
            attempt.join("upstream.stderr.log"),
            "Traceback (most recent call last):\n",
        )
        .unwrap();
        std::fs::write(attempt.join("agent.stderr.log"), "warning\n").unwrap();
        build(d);
        let page = std::fs::read_to_string(d.join(format!(
            "site/roots/runs-demo/a/{QUESTION}/{CONDITION}/attempt-1.html"
        )))
        .unwrap();
        for name in ["upstream.stderr.log", "agent.stderr.log"] {
            assert!(
                page.contains(&format!("{CONDITION}/attempt-1/{name}\">{name}</a>")),
                "{name} not linked:\n{page}"
            );
        }
        // Attempt 2 recorded neither: neither is linked.
        let second = std::fs::read_to_string(d.join(format!(
            "site/roots/runs-demo/a/{QUESTION}/{CONDITION}/attempt-2.html"
        )))
        .unwrap_or_default();
        assert!(!second.contains("stderr.log"));
    }

    // freeze closed a root whose answer.csv was gone; rescore then refused
    // it as frozen and build as unreadable, for good.
    #[test]
    fn freeze_refuses_a_root_that_lost_a_recorded_answer() {
        let dir = fixture();
        let d = dir.path();
        let answer = d.join(format!(
            "runs-demo/{QUESTION}_results/{CONDITION}/attempt-1/answer.csv"
        ));
        assert!(answer.is_file());
        std::fs::remove_file(&answer).unwrap();
        let out = okn_in(d)
            .args(["freeze", "--reason", "published", "runs-demo"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains("1 recorded file could not be used, so nothing was frozen")
                && stderr(&out).contains(
                    "attempt-1/answer.csv: missing, though result.json records a submitted answer"
                ),
            "{}",
            stderr(&out)
        );
        assert!(!d.join("runs-demo/.frozen").exists());
    }

    // A cost region over scripted attempts (which report none) must not
    // print a number: there is none to print.
    #[test]
    fn a_cost_region_over_attempts_that_reported_none_is_refused() {
        let dir = fixture();
        let d = dir.path();
        std::fs::write(
            d.join("results-demo/SUMMARY.md"),
            "# S\n\nCost: <!-- okn:number condition=named metric=cost -->?<!-- /okn:number -->\n",
        )
        .unwrap();
        let (code, _, err) = build_args(d, &[]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("metric=cost: ") && err.contains("reported no cost (a scripted agent reports none): there is no honest figure to show"),
            "{err}"
        );
    }

    // freeze on a frozen root exited 2 as if something were wrong.
    #[test]
    fn freeze_on_a_frozen_root_says_it_already_is_and_changes_nothing() {
        let dir = fixture();
        let d = dir.path();
        freeze(d);
        let before = snapshot(&d.join("runs-demo"));
        let out = okn_in(d)
            .args(["freeze", "--reason", "again", "runs-demo"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(
            stdout(&out),
            "runs-demo is already frozen (published): nothing changed\n"
        );
        assert_eq!(snapshot(&d.join("runs-demo")), before);
    }

    // A root with an interrupted run could be frozen, closing it with
    // attempts no table counts.
    #[test]
    fn freeze_refuses_a_root_with_an_unfinished_condition() {
        let dir = fixture();
        let d = dir.path();
        let extra = d.join("runs-demo/extra-q_results/interrupted-condition/attempt-1");
        std::fs::create_dir_all(&extra).unwrap();
        std::fs::write(extra.join("episode.json"), "{}").unwrap();
        let out = okn_in(d)
            .args(["freeze", "--reason", "published", "runs-demo"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains(
                "not frozen: a frozen root is closed for good, and condition \
                 interrupted-condition is unfinished: 1 finished attempt of 1 question on disk"
            ),
            "{}",
            stderr(&out)
        );
        assert!(!d.join("runs-demo/.frozen").exists());
    }

    // A frozen root's README.html was removed as an orphan once its README.md was gone.
    #[test]
    fn a_frozen_root_keeps_its_page_when_its_readme_is_gone() {
        let dir = fixture();
        let d = dir.path();
        build(d);
        freeze(d);
        std::fs::remove_file(d.join("runs-demo/README.md")).unwrap();
        let (code, out, err) = build_args(d, &[]);
        assert_eq!(code, 1, "{err}");
        assert!(
            out.contains(
                ", 0 orphaned removed\nmissing   runs-demo/README.md (in a frozen root)\n"
            ),
            "{out}"
        );
        assert!(d.join("runs-demo/README.html").is_file());
        // The README a frozen root lost is named (issue 24, item 9), and
        // never written.
        let (code, text) = check(d);
        assert_eq!(code, 1, "{text}");
        assert!(
            text.contains("missing   runs-demo/README.md (in a frozen root)\n"),
            "{text}"
        );
        assert!(!d.join("runs-demo/README.md").exists());
    }

    // An orphaned page's removal left its empty folders in the site.
    #[test]
    fn an_orphaned_page_takes_its_empty_folders_with_it() {
        let dir = fixture();
        let d = dir.path();
        build(d);
        let gone = d.join("site/roots/runs-demo/a/old-question/some-condition");
        std::fs::create_dir_all(&gone).unwrap();
        std::fs::write(
            gone.join("attempt-1.html"),
            generated_page_named(d, "attempt-1.html"),
        )
        .unwrap();
        let out = build(d);
        assert!(out.ends_with(", 1 orphaned removed\n"), "{out}");
        assert!(!d.join("site/roots/runs-demo/a/old-question").exists());
        assert!(d.join("site/roots/runs-demo/a").is_dir());
    }

    // A summary.csv of a question no longer recorded was reported current.
    #[test]
    fn a_question_summary_without_its_question_is_orphaned() {
        let dir = fixture();
        let d = dir.path();
        build(d);
        let old = d.join("runs-demo/old-question_results");
        std::fs::create_dir_all(&old).unwrap();
        let csv =
            std::fs::read(d.join(format!("runs-demo/{QUESTION}_results/summary.csv"))).unwrap();
        std::fs::write(old.join("summary.csv"), csv).unwrap();
        let (code, text) = check(d);
        assert_eq!(code, 1, "{text}");
        assert!(
            text.contains("orphaned  runs-demo/old-question_results/summary.csv"),
            "{text}"
        );
        let out = build(d);
        assert!(
            out.contains("removed   runs-demo/old-question_results/summary.csv"),
            "{out}"
        );
        assert_eq!(check(d).0, 0);
    }

    // `build --root site` removed the whole published site as orphaned.
    #[test]
    fn a_root_outside_or_inside_a_skipped_folder_is_refused() {
        let dir = fixture();
        let d = dir.path();
        build(d);
        let pages = snapshot(&d.join("site"));
        for (root, says) in [
            ("site", "never reads or writes under 'site'"),
            ("site/roots", "never reads or writes under 'site'"),
            ("..", "not under the current folder"),
        ] {
            let (code, out, err) = build_args(d, &["--root", root]);
            assert_eq!(code, 2, "--root {root}: {out}{err}");
            assert!(err.contains(says), "--root {root}: {err}");
        }
        assert_eq!(snapshot(&d.join("site")), pages, "the site changed");
    }

    // Inline SVG ids came from the path as typed: pages changed with the folder.
    #[test]
    fn pages_do_not_depend_on_the_folder_build_runs_from() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join("notes")).unwrap();
        std::fs::write(
            project.join("notes/shape.svg"),
            "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect id=\"r\"/><use href=\"#r\"/></svg>\n",
        )
        .unwrap();
        std::fs::write(
            project.join("notes/page.md"),
            "# Page\n\n![shape](shape.svg)\n",
        )
        .unwrap();
        build(&project);
        let page = std::fs::read(project.join("notes/page.html")).unwrap();
        let (code, out, err) = build_args(dir.path(), &["--root", "project"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.starts_with("build: 0 written, "), "{out}");
        assert_eq!(
            std::fs::read(project.join("notes/page.html")).unwrap(),
            page
        );
        let (code, out, err) = build_args(&project.join("notes"), &["--root", "."]);
        assert_eq!(code, 0, "{err}");
        assert!(out.starts_with("build: 0 written, "), "{out}");
        // A folder with no runs root and no study gets no site/.
        assert!(!project.join("site").exists() && !project.join("notes/site").exists());
    }

    // The attempt page of a 3,965-row answer with one row dropped showed
    // the first 500 rows, all the same, then "3465 more rows not shown":
    // the missing row never appeared, and the header said "Not exact ·
    // F1 1.00".
    #[test]
    fn the_one_row_missing_from_thousands_is_shown_and_its_f1_is_not_one() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // 61 × 65 = 3,965 rows; the scripted drop-row agent leaves out the
        // last the server returns, (31, 33), which sorts into the middle.
        let a: Vec<String> = std::iter::once(31)
            .chain((1..=61).filter(|i| *i != 31))
            .map(|i| i.to_string())
            .collect();
        let b: Vec<String> = (1..=65)
            .filter(|i| *i != 33)
            .chain(std::iter::once(33))
            .map(|i| i.to_string())
            .collect();
        std::fs::create_dir_all(d.join("corpus")).unwrap();
        std::fs::write(
            d.join("corpus/grid_t.rq"),
            format!(
                "#+ summary: Every pair of a number from 1 to 61 and one from 1 to 65, as a set.\n#+ tags:\n#+   - spoke-okn\n\nSELECT ?a ?b WHERE {{ VALUES ?a {{ {} }} VALUES ?b {{ {} }} }}\n",
                a.join(" "),
                b.join(" ")
            ),
        )
        .unwrap();
        let o = crate::support::okn()
            .arg("reference")
            .arg("--corpus")
            .arg(d.join("corpus"))
            .args(["--endpoint", "demo/kg"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
        let o = crate::support::okn()
            .arg("run")
            .arg("--corpus")
            .arg(d.join("corpus"))
            .args([
                "--agent",
                "scripted:drop-row",
                "--profile",
                "profiles/demo-kg.local.toml",
                "--tools",
                "all-tools",
                "--kg-hint",
                "tags",
                "--out",
            ])
            .arg(d.join("runs-grid"))
            .output()
            .unwrap();
        let said = stdout(&o);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{said}{}",
            crate::support::stderr(&o)
        );
        // F1 = 7928/7929: below 1, so never "1.00".
        assert!(said.contains("miss (f1 0.9999)"), "{said}");
        assert!(said.contains("mean F1 0.9999"), "{said}");
        build(d);
        let page = std::fs::read_to_string(
            d.join("site/roots/runs-grid/a/grid_t/demo-kg-all-tools__kg-named/attempt-1.html"),
        )
        .unwrap();
        assert!(page.contains("Not exact · F1 0.9999"), "{page}");
        assert!(
            page.contains("<td>0.9999</td><td>1.00</td><td>0.9997</td>"),
            "F1, precision and recall: {page}"
        );
        // The missing row, first of all, with three identical rows each side.
        assert!(
            page.contains(
                "<tr class=\"same\"><td></td><td><code>31,32</code></td></tr>\n<tr class=\"del\"><td>−</td><td><code>31,33</code></td></tr>\n<tr class=\"same\"><td></td><td><code>31,34</code></td></tr>"
            ),
            "{page}"
        );
        assert_eq!(page.matches("<tr class=\"del\">").count(), 1, "{page}");
        assert_eq!(page.matches("<tr class=\"same\">").count(), 1 + 6, "{page}");
        assert!(
            page.contains("1 row missing from the answer, 0 extra in it; 3964 identical. Every differing row is shown, with up to 3 identical rows around it; 3958 of the 3964 identical rows are not shown."),
            "{page}"
        );
        assert!(!page.contains("more rows not shown"), "{page}");
        let readme = std::fs::read_to_string(d.join("runs-grid/README.md")).unwrap();
        assert!(!readme.contains("| 1.00 | 0 | 0 | 0 |"), "{readme}");
        assert!(readme.contains("| 0.9999 |"), "{readme}");
    }

    // results-cross/SUMMARY.md said the four-significant-figure corruptions
    // "are exact once numbers are normalized, and not before", though every
    // decimals-4 attempt recorded was strict-exact: only the local-name ones
    // open the gap. Such a claim is now generated from what each attempt
    // played, and checked here against the recorded agent.json files.
    #[test]
    fn the_tier_gap_by_strategy_is_counted_from_what_each_attempt_played() {
        let dir = fixture();
        let d = dir.path();
        std::fs::write(
            d.join("results-demo/SUMMARY.md"),
            "# S\n\nGap: <!-- okn:number metric=normalized-only-attempts -->?<!-- /okn:number -->, local names <!-- okn:number metric=normalized-only-attempts strategy=local-names -->?<!-- /okn:number -->, decimals strict <!-- okn:number metric=strict-exact-attempts strategy=decimals-4 -->?<!-- /okn:number --> of <!-- okn:number metric=measured-attempts strategy=decimals-4 -->?<!-- /okn:number -->.\n\n<!-- okn:strategies -->\n<!-- /okn:strategies -->\n",
        )
        .unwrap();
        build(d);
        let summary = std::fs::read_to_string(d.join("results-demo/SUMMARY.md")).unwrap();
        // The oracle: each measured attempt of the study's two conditions,
        // by the strategy its agent.json says it played.
        let mut expected: BTreeMap<String, [u32; 4]> = BTreeMap::new();
        for condition in [
            "demo-kg-all-tools__kg-named",
            "demo-kg-all-tools__kg-not-named",
        ] {
            for entry in std::fs::read_dir(d.join("runs-demo")).unwrap().flatten() {
                let result = entry.path().join(condition).join("result.json");
                let Ok(text) = std::fs::read_to_string(&result) else {
                    continue;
                };
                let result: serde_json::Value = serde_json::from_str(&text).unwrap();
                for a in result["attempts"].as_array().unwrap() {
                    if a["blocked"] == true {
                        continue;
                    }
                    let agent = entry
                        .path()
                        .join(condition)
                        .join(format!("attempt-{}", a["attempt"]))
                        .join("agent.json");
                    let agent: serde_json::Value =
                        serde_json::from_str(&std::fs::read_to_string(agent).unwrap()).unwrap();
                    let n = expected
                        .entry(agent["played"].as_str().unwrap().to_string())
                        .or_default();
                    let (exact, strict) = (a["exact"] == true, a["strict_exact"] == true);
                    n[0] += 1;
                    n[1] += u32::from(exact);
                    n[2] += u32::from(strict);
                    n[3] += u32::from(exact && !strict);
                }
            }
        }
        assert!(expected.contains_key("local-names") && expected.contains_key("decimals-4"));
        for (strategy, [attempts, exact, strict, gap]) in &expected {
            let row = format!("| `{strategy}` | {attempts} | {exact} | {strict} | {gap} |");
            assert!(summary.contains(&row), "{row}\n{summary}");
        }
        let gap: u32 = expected.values().map(|n| n[3]).sum();
        let [_, _, _, local_gap] = expected["local-names"];
        let [decimals, _, decimals_strict, _] = expected["decimals-4"];
        let sentence = format!(
            "Gap: <!-- okn:number metric=normalized-only-attempts -->{gap}<!-- /okn:number -->, local names <!-- okn:number metric=normalized-only-attempts strategy=local-names -->{local_gap}<!-- /okn:number -->, decimals strict <!-- okn:number metric=strict-exact-attempts strategy=decimals-4 -->{decimals_strict}<!-- /okn:number --> of <!-- okn:number metric=measured-attempts strategy=decimals-4 -->{decimals}<!-- /okn:number -->."
        );
        assert!(summary.contains(&sentence), "{sentence}\n{summary}");
        // As recorded: the gap is the local names' alone, and every
        // decimals-4 answer is strict-exact.
        assert_eq!((gap, decimals_strict), (local_gap, decimals));
        // The published study states it through these regions.
        let published =
            std::fs::read_to_string(crate::support::repo().join("results-cross/SUMMARY.md"))
                .unwrap();
        for region in [
            "<!-- okn:strategies -->",
            "<!-- okn:number metric=normalized-only-attempts strategy=local-names -->",
            "<!-- okn:number metric=strict-exact-attempts strategy=decimals-4 -->",
        ] {
            assert!(published.contains(region), "{region}");
        }
        assert!(!published.contains("exact once IRIs and numbers are normalized"));
    }
}

/// Issue 24 (the trust issue; item 14 is the hand exclusion recipe): a
/// question excluded by hand (`meta.excluded`, then `rescore`) is named
/// on every published page with its recorded reason, and every number of
/// the condition says the questions it rests on, so a rate over fewer
/// questions never stands beside one over the whole corpus unsaid.
#[test]
fn questions_excluded_by_hand_are_named_beside_every_published_number() {
    let dir = fixture();
    let d = dir.path();
    std::fs::write(
        d.join("results-demo/SUMMARY.md"),
        format!(
            "{SUMMARY}\nIn all <!-- okn:number metric=questions -->?<!-- /okn:number --> questions; \
             never exact: <!-- okn:number condition=named metric=never-exact -->?<!-- /okn:number -->.\n"
        ),
    )
    .unwrap();
    let path = d.join(format!("runs-demo/conditions/{CONDITION}.json"));
    let mut condition: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let ids: Vec<String> = condition["questions"]
        .as_object()
        .unwrap()
        .keys()
        .take(2)
        .cloned()
        .collect();
    for id in &ids {
        condition["questions"].as_object_mut().unwrap().remove(id);
        condition["meta"]["excluded"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"id": id, "reason": "server maintenance"}));
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&condition).unwrap()).unwrap();
    okn_in(d).args(["rescore", "runs-demo"]).assert().success();
    build(d);
    let read = |p: &str| std::fs::read_to_string(d.join(p)).unwrap();
    let basis = "10 of 12 questions; 2 excluded";

    let readme = read("runs-demo/README.md");
    assert!(readme.contains("## Excluded questions"), "{readme}");
    assert!(
        readme.contains("(10 of 12 questions; 2 excluded) |"),
        "{readme}"
    );
    let summary = read("results-demo/SUMMARY.md");
    let questions = read("results-demo/QUESTIONS.md");
    let site_root = read("site/roots/runs-demo/index.html");
    let summary_page = read("results-demo/SUMMARY.html");
    for (name, text) in [
        ("README.md", &readme),
        ("SUMMARY.md", &summary),
        ("QUESTIONS.md", &questions),
        ("the site's root page", &site_root),
        ("SUMMARY.html", &summary_page),
    ] {
        for id in &ids {
            assert!(
                text.contains(id.as_str()),
                "{name} does not name {id}:\n{text}"
            );
        }
        assert!(
            text.contains("server maintenance"),
            "{name} lacks the reason:\n{text}"
        );
        assert!(text.contains(basis), "{name} lacks the basis:\n{text}");
    }
    // The rates table: the row over fewer questions says so, and a
    // footnote says the rows rest on different question sets.
    assert!(
        summary.contains(&format!("| KG named ({basis}) |")),
        "{summary}"
    );
    assert!(
        summary.contains("Not every condition rests on the study's 12 questions"),
        "{summary}"
    );
    // Numbers in prose carry their basis; the study-wide count says how
    // many questions some condition leaves out.
    let after: serde_json::Value =
        serde_json::from_str(&read(&format!("runs-demo/conditions/{CONDITION}.json"))).unwrap();
    let aggregate = &after["aggregate"];
    assert_eq!(aggregate["questions"], 10, "rescore did not recount");
    let rate = aggregate["exact_rate"].as_f64().unwrap();
    let never = aggregate["measured_questions"].as_u64().unwrap()
        - aggregate["ever_exact"].as_u64().unwrap();
    assert!(
        summary.contains(&format!(
            "Named: <!-- okn:number condition=named metric=exact-rate -->{rate:.2} ({basis})<!-- /okn:number -->"
        )),
        "{summary}"
    );
    assert!(
        summary.contains(
            "-->12 (2 of them left out of 1 condition: see the footnotes of the tables)<!--"
        ),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "metric=never-exact -->{never} ({basis})<!-- /okn:number -->."
        )),
        "{summary}"
    );
    let (code, text) = check(d);
    assert_eq!(code, 0, "{text}");
}

/// Issue 26, section 4 (`build` at the floor): with the site, a build
/// reads each question's recorded files once, checking them as loading a
/// root checks them while it makes the question's pages, in a first pass
/// that writes nothing; only a root that passes every check is written. A
/// damaged file in the question made last (no study reads the root, so no
/// earlier load checks it) must stop `build` and `build --check` before a
/// page of the earlier questions, deleted here, is written again, and
/// before an orphan is removed; mended, the build writes back exactly
/// what was deleted, and the next has nothing to write.
#[test]
fn a_damaged_file_in_the_last_question_stops_build_before_any_page_is_written() {
    let dir = fixture();
    let d = dir.path();
    std::fs::remove_dir_all(d.join("results-demo")).unwrap();
    std::fs::remove_file(d.join("README.md")).unwrap();
    build(d);
    let clean = build(d);
    assert!(clean.starts_with("build: 0 written, "), "{clean}");
    let mut questions: Vec<String> = std::fs::read_dir(d.join("runs-demo"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix("_results").map(str::to_string)
        })
        .collect();
    questions.sort();
    let (first, last) = (&questions[0], questions.last().unwrap());
    // The first question's pages go, and a page nothing makes is planted.
    let pages = d.join("site/roots/runs-demo");
    let deleted = [
        pages.join(format!("q/{first}.html")),
        pages.join("a").join(first),
    ];
    std::fs::remove_file(&deleted[0]).unwrap();
    std::fs::remove_dir_all(&deleted[1]).unwrap();
    let orphan = pages.join("q/gone.html");
    std::fs::write(&orphan, generated_page_named(d, "gone.html")).unwrap();
    // The last question's first answer, edited by hand.
    let answer = d
        .join(format!("runs-demo/{last}_results/{CONDITION}/attempt-1"))
        .join("answer.csv");
    let recorded = std::fs::read(&answer).ok();
    std::fs::write(&answer, "edited\nby hand\n").unwrap();
    let before = snapshot(d);
    for args in [&["build", "--check"][..], &["build"]] {
        let out = okn_in(d).args(args).output().unwrap();
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(2), "{args:?}:\n{text}");
        assert!(
            text.contains(&format!(
                "{last}_results/{CONDITION}/attempt-1/answer.csv: "
            )),
            "{args:?} did not name the answer:\n{text}"
        );
        assert!(text.contains("so nothing was built"), "{args:?}:\n{text}");
        assert_eq!(snapshot(d), before, "{args:?} wrote or removed files");
    }
    match recorded {
        Some(bytes) => std::fs::write(&answer, bytes).unwrap(),
        None => std::fs::remove_file(&answer).unwrap(),
    }
    let mended = build(d);
    assert!(
        mended.contains("removed   site/roots/runs-demo/q/gone.html"),
        "{mended}"
    );
    assert!(!mended.starts_with("build: 0 written"), "{mended}");
    assert!(deleted[0].is_file() && deleted[1].is_dir(), "{mended}");
    assert!(!orphan.exists());
    assert_eq!(build(d), clean);
}

/// Issue 26, section 4 (`build` at the floor), a build from scratch: the
/// first pass only checks a question whose page is missing (its pages and
/// its part of the search index are made by the second pass, from one
/// more read), so a damaged file in such a question must still stop
/// `build` before anything is written, and once mended, the build must
/// write back the same pages and the same search index a build that had
/// them on disk makes, after which there is nothing to write.
#[test]
fn a_damaged_question_the_first_pass_only_checks_stops_build_before_any_write() {
    let dir = fixture();
    let d = dir.path();
    std::fs::remove_dir_all(d.join("results-demo")).unwrap();
    std::fs::remove_file(d.join("README.md")).unwrap();
    build(d);
    let clean = build(d);
    assert!(clean.starts_with("build: 0 written, "), "{clean}");
    let index = d.join("site/search-index.js");
    let clean_index = std::fs::read(&index).unwrap();
    let mut questions: Vec<String> = std::fs::read_dir(d.join("runs-demo"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix("_results").map(str::to_string)
        })
        .collect();
    questions.sort();
    let last = questions.last().unwrap();
    // The last question's pages go (the first pass leaves it to the
    // second), and its first answer is edited by hand.
    let pages = d.join("site/roots/runs-demo");
    let page = pages.join(format!("q/{last}.html"));
    let clean_page = std::fs::read(&page).unwrap();
    std::fs::remove_file(&page).unwrap();
    std::fs::remove_dir_all(pages.join("a").join(last)).unwrap();
    let answer = d
        .join(format!("runs-demo/{last}_results/{CONDITION}/attempt-1"))
        .join("answer.csv");
    let recorded = std::fs::read(&answer).ok();
    std::fs::write(&answer, "edited\nby hand\n").unwrap();
    let before = snapshot(d);
    let out = okn_in(d).arg("build").output().unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains(&format!(
            "{last}_results/{CONDITION}/attempt-1/answer.csv: "
        )),
        "the answer is not named:\n{text}"
    );
    assert!(text.contains("so nothing was built"), "{text}");
    assert_eq!(snapshot(d), before, "build wrote or removed files");
    match recorded {
        Some(bytes) => std::fs::write(&answer, bytes).unwrap(),
        None => std::fs::remove_file(&answer).unwrap(),
    }
    let mended = build(d);
    assert!(!mended.starts_with("build: 0 written"), "{mended}");
    assert_eq!(std::fs::read(&page).unwrap(), clean_page, "{mended}");
    assert_eq!(std::fs::read(&index).unwrap(), clean_index, "{mended}");
    assert_eq!(build(d), clean);
}
