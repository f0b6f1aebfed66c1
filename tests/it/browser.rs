//! The static site in a real browser: the pages `build`
//! writes must work opened from `file://` with no server, under their own
//! Content-Security-Policy, with every piece of recorded text shown as text.
//!
//! The fixture is the `build` tests' work folder (a copy of a recorded
//! demo runs root, a study, prose) with hostile text planted in what an
//! agent and a corpus can write: an answer, a prompt (whose first
//! paragraph is the question text on the root, question and study pages),
//! a SPARQL query argument and the agent's final message; and one question
//! recorded under an id a URL must encode (a sub-folder, a space, `#`, `&`,
//! `%`, non-ASCII). Then:
//!
//! - every internal link (`href`, `src`) of every generated HTML page
//!   resolves to a file inside the work folder, and every `#fragment` to
//!   an element id (checked here, in Rust, over all pages);
//! - real headless Chromium (the Debian package `chromium`, driven by
//!   `playwright-core`, which `scripts/test` installs) opens the index, a
//!   root, a question, the attempt with the planted answer, and the study
//!   pages (which inline SVG figures), and finds no console error, no
//!   uncaught exception, no CSP violation, no planted script run, the page's
//!   own sort script run, and a click on a header sorting the rows;
//! - the search box, on the site's index and on an attempt page, loads the
//!   site's search index from `file://` and finds the planted query's
//!   attempt and the odd question, its results showing planted text as
//!   text and linking to pages that exist.
//!
//! Two control pages written by the test prove the probes can see what they
//! look for: one whose script the policy blocks, one whose script runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::fixture::{CONDITION, QUESTION, fixture};
use crate::support::{okn_in, repo, stderr, stdout};
use serde_json::Value;

/// Planted script: it would set the title and a global if it ever ran.
const SCRIPT: &str = "<script>document.title='pwned';window.__pwned=1</script>";

/// Planted attribute break-out: it would run from an `onerror`.
const BREAKOUT: &str = "\"><img src=x onerror=\"window.__pwned=2\">";

/// Planted in a SPARQL query argument and the final message: closes the
/// `<pre><code>` that holds it first.
const PRE_BREAKOUT: &str = "</code></pre><script>window.__pwned=3</script><pre><code>";

/// A question id with what a URL must encode (a sub-folder, a space, `#`,
/// `&`, `%`, non-ASCII): a copy of [`COPIED_QUESTION`] under this id.
const ODD_QUESTION: &str = "sub dir/q #1 & 100% ü `x`|[y](z)_cross";

/// The recorded question copied to [`ODD_QUESTION`].
const COPIED_QUESTION: &str = "fiokg-spoke-okn-landfill-counties_cross";

/// `value` with every string equal to `from` replaced by `to`.
fn replace_strings(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(s) if s == from => *s = to.to_string(),
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, from, to)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_strings(v, from, to)),
        _ => {}
    }
}

/// Records [`ODD_QUESTION`] in the copied root: its folder, its results,
/// and its place in every condition file.
fn add_odd_question(d: &Path) {
    let root = d.join("runs-demo");
    let to = root.join(format!("{ODD_QUESTION}_results"));
    crate::support::fixture::copy_dir(&root.join(format!("{COPIED_QUESTION}_results")), &to);
    for entry in walkdir::WalkDir::new(&to) {
        let path = entry.unwrap().into_path();
        // ground_truth.json records its question's id too (build refuses
        // one that names another question).
        if path
            .file_name()
            .is_some_and(|n| n == "result.json" || n == "ground_truth.json")
        {
            let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            replace_strings(&mut v, COPIED_QUESTION, ODD_QUESTION);
            std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
        }
    }
    for entry in std::fs::read_dir(root.join("conditions")).unwrap() {
        let path = entry.unwrap().path();
        let mut condition: okn_benchmark::runs::records::ConditionFile =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        if let Some(q) = condition.questions.get(COPIED_QUESTION).cloned() {
            condition.questions.insert(ODD_QUESTION.to_string(), q);
        }
        // The aggregate follows its questions, as a run would write it
        // (build refuses a condition file that contradicts itself).
        condition.aggregate = okn_benchmark::runs::records::aggregate(&condition.questions);
        std::fs::write(&path, serde_json::to_vec_pretty(&condition).unwrap()).unwrap();
    }
}

/// A CSV cell holding `text` (quoted, inner quotes doubled).
fn csv_cell(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// The attempt folder `attempt-N` of `condition` for [`QUESTION`].
fn attempt_dir(d: &Path, condition: &str, n: u32) -> PathBuf {
    d.join(format!(
        "runs-demo/{QUESTION}_results/{condition}/attempt-{n}"
    ))
}

/// Plants the hostile text (see the module docs) and builds.
fn planted_site() -> tempfile::TempDir {
    let dir = fixture();
    let d = dir.path();
    let attempt = attempt_dir(d, CONDITION, 1);
    // As the episode's calls.json records it (issue 24, item 6).
    crate::support::submitted_instead(
        &attempt,
        &format!(
            "assay,geneSymbol\n{},{}\n",
            csv_cell(SCRIPT),
            csv_cell(BREAKOUT)
        ),
    );
    // The question text is the first paragraph of an attempt-1 prompt;
    // which condition's is read is the report's business, so plant it in
    // every one.
    for entry in std::fs::read_dir(d.join(format!("runs-demo/{QUESTION}_results"))).unwrap() {
        let prompt = entry.unwrap().path().join("attempt-1/prompt.txt");
        if prompt.is_file() {
            let text = std::fs::read_to_string(&prompt).unwrap();
            std::fs::write(&prompt, format!("{SCRIPT} {BREAKOUT} {text}")).unwrap();
        }
    }
    let calls_path = attempt.join("calls.json");
    let mut calls: Value = serde_json::from_slice(&std::fs::read(&calls_path).unwrap()).unwrap();
    let mut planted = false;
    for call in calls["calls"].as_array_mut().unwrap() {
        if let Some(args) = call["arguments"].as_object_mut() {
            for (key, value) in args.iter_mut() {
                if key.contains("query")
                    && let Value::String(s) = value
                {
                    s.push_str(&format!("\n# {PRE_BREAKOUT} {BREAKOUT}\n"));
                    planted = true;
                }
            }
        }
    }
    assert!(planted, "no query argument in {}", calls_path.display());
    std::fs::write(&calls_path, serde_json::to_vec_pretty(&calls).unwrap()).unwrap();
    let agent_path = attempt.join("agent.json");
    let mut agent: Value = serde_json::from_slice(&std::fs::read(&agent_path).unwrap()).unwrap();
    agent["result"] = Value::String(format!("Done. {PRE_BREAKOUT} {SCRIPT}"));
    std::fs::write(&agent_path, serde_json::to_vec(&agent).unwrap()).unwrap();
    add_odd_question(d);
    plant_redirects(d);
    add_comparison(d);
    // The planted answer no longer earns the verdict recorded for it:
    // judged again, as a user would after editing an answer (build refuses
    // a verdict its files do not give; rescore refuses a verdict moved under
    // its own contract without --force).
    let out = okn_in(d)
        .args(["rescore", "runs-demo", "--force"])
        .output()
        .unwrap();
    assert!(out.status.success(), "rescore failed:\n{}", stderr(&out));
    let out = okn_in(d).arg("build").output().unwrap();
    assert!(
        out.status.success(),
        "build failed:\n{}{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// Issue 26, section 3: the study compares its root with itself (a
/// comparison region in SUMMARY.md and a comparison page on the site),
/// so the pages show a comparison's condition names.
fn add_comparison(d: &Path) {
    let study = d.join("results-demo/study.toml");
    let mut toml = std::fs::read_to_string(&study).unwrap();
    toml.push_str(
        "\n[[comparisons]]\nkey = \"again\"\ntitle = \"The root against itself\"\nbaseline = \"../runs-demo\"\ncandidate = \"../runs-demo\"\n",
    );
    std::fs::write(&study, toml).unwrap();
    let summary = d.join("results-demo/SUMMARY.md");
    let mut text = std::fs::read_to_string(&summary).unwrap();
    text.push_str("\n<!-- okn:comparison key=again -->\n<!-- /okn:comparison -->\n");
    std::fs::write(&summary, text).unwrap();
}

/// Where a planted redirect would send the reader: a page of its own.
const REDIRECTED: &str = "redirected.html";

/// Issue 24, item 24: a prose page whose raw HTML and inlined SVG hold a
/// `<meta http-equiv="refresh">` that redirected the page: one inside an
/// SVG (the HTML parser hoists it out of the `<svg>`, both as a Markdown
/// image and as a raw `<img>`), one after a quote in an unquoted value,
/// which put the old tag scanner out of step.
fn plant_redirects(d: &Path) {
    let meta = format!("<meta http-equiv=\"refresh\" content=\"0;url={REDIRECTED}\">");
    std::fs::write(
        d.join("docs/redirect.svg"),
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><g>{}</g><rect width=\"4\" height=\"4\"/></svg>",
            meta.replace('>', "/>")
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("REDIRECT.md"),
        format!(
            "# Redirect\n\n![figure](docs/redirect.svg)\n\n<p><img src=\"docs/redirect.svg\" alt=\"raw\"></p>\n\n\
             <div><a title=x\"> {meta} \">quoted</a></div>\n\nText <a title=x\"> {meta} \">inline</a>.\n"
        ),
    )
    .unwrap();
    std::fs::write(
        d.join(REDIRECTED),
        "<!DOCTYPE html><html><head><title>redirected</title></head><body>elsewhere</body></html>",
    )
    .unwrap();
}

// ---------------------------------------------------------------- links

/// One tag's attributes, names lowercased, values with entities decoded.
struct Tag {
    name: String,
    attrs: Vec<(String, String)>,
}

/// Decodes the character references a generated page uses.
fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(end) = rest.find(';').filter(|&e| e <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let name = &rest[1..end];
        let decoded = match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => name
                .strip_prefix("#x")
                .or_else(|| name.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| name.strip_prefix('#').and_then(|n| n.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every start tag of `html` (comments and the bodies of `script` and
/// `style` skipped): a small scanner, enough for generated pages.
fn tags(html: &str) -> Vec<Tag> {
    let bytes = html.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        i += off;
        if html[i..].starts_with("<!--") {
            i = html[i..].find("-->").map_or(html.len(), |e| i + e + 3);
            continue;
        }
        let name_start = i + 1;
        let mut j = name_start;
        while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b':') {
            j += 1;
        }
        if j == name_start {
            i += 1;
            continue;
        }
        let name = html[name_start..j].to_ascii_lowercase();
        let mut attrs = Vec::new();
        loop {
            while j < bytes.len() && (bytes[j].is_ascii_whitespace() || bytes[j] == b'/') {
                j += 1;
            }
            if j >= bytes.len() || bytes[j] == b'>' {
                break;
            }
            let a = j;
            while j < bytes.len()
                && !bytes[j].is_ascii_whitespace()
                && !matches!(bytes[j], b'=' | b'>' | b'/')
            {
                j += 1;
            }
            let attr = html[a..j].to_ascii_lowercase();
            let mut value = String::new();
            if j < bytes.len() && bytes[j] == b'=' {
                j += 1;
                if j < bytes.len() && (bytes[j] == b'"' || bytes[j] == b'\'') {
                    let quote = bytes[j] as char;
                    let end = html[j + 1..].find(quote).map_or(html.len(), |e| j + 1 + e);
                    value = decode_entities(&html[j + 1..end]);
                    j = (end + 1).min(html.len());
                } else {
                    let v = j;
                    while j < bytes.len() && !bytes[j].is_ascii_whitespace() && bytes[j] != b'>' {
                        j += 1;
                    }
                    value = decode_entities(&html[v..j]);
                }
            }
            if a == j {
                j += 1;
            }
            attrs.push((attr, value));
        }
        i = j;
        if name == "script" || name == "style" {
            let close = format!("</{name}");
            i = html[i..].find(&close).map_or(html.len(), |e| i + e);
        }
        out.push(Tag { name, attrs });
    }
    out
}

/// `%XX` decoded (as UTF-8).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Lexically normalized (`.` dropped, `a/..` folded; `None` above the root).
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    Some(out)
}

/// What one page links to and which ids it has.
struct Page {
    ids: BTreeSet<String>,
    /// (attribute, value) of every `href` and `src`, in order.
    links: Vec<(String, String)>,
}

/// Whether `html` was written by `build` (the theme's generator mark).
fn generated(html: &str) -> bool {
    html.contains("<meta name=\"generator\" content=\"okn-benchmark build\">")
}

fn read_page(html: &str) -> Page {
    let mut ids = BTreeSet::new();
    let mut links = Vec::new();
    for tag in tags(html) {
        for (attr, value) in &tag.attrs {
            match attr.as_str() {
                "id" => {
                    ids.insert(value.clone());
                }
                "name" if tag.name == "a" => {
                    ids.insert(value.clone());
                }
                "href" | "xlink:href" | "src" => links.push((attr.clone(), value.clone())),
                _ => {}
            }
        }
    }
    Page { ids, links }
}

/// Every problem with the links of every generated page under `base`, as
/// `page: what`. External links (`http(s):`, `mailto:`) are left alone;
/// `data:` is fine for a `src`; anything else must resolve inside `base`.
fn link_problems(base: &Path) -> (usize, usize, Vec<String>) {
    let pages: BTreeMap<PathBuf, Page> = walkdir::WalkDir::new(base)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "html"))
        .filter_map(|e| {
            let html = std::fs::read_to_string(e.path()).unwrap();
            let rel = e.path().strip_prefix(base).unwrap().to_path_buf();
            generated(&html).then(|| (rel, read_page(&html)))
        })
        .collect();
    let mut problems = Vec::new();
    let mut checked = 0;
    for (rel, page) in &pages {
        let at = rel.display();
        for (attr, link) in &page.links {
            let lower = link.to_ascii_lowercase();
            if lower.starts_with("http://")
                || lower.starts_with("https://")
                || lower.starts_with("mailto:")
            {
                continue;
            }
            checked += 1;
            if attr == "src" && lower.starts_with("data:") {
                continue;
            }
            if link.is_empty() {
                problems.push(format!("{at}: empty {attr}"));
                continue;
            }
            let scheme = link
                .split_once(':')
                .filter(|(s, _)| {
                    !s.is_empty()
                        && s.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
                })
                .map(|(s, _)| s);
            if let Some(scheme) = scheme {
                problems.push(format!(
                    "{at}: {attr}=\"{link}\" uses the scheme '{scheme}'"
                ));
                continue;
            }
            let (path_part, fragment) = match link.split_once('#') {
                Some((p, f)) => (p, Some(percent_decode(f))),
                None => (link.as_str(), None),
            };
            let path_part = path_part.split('?').next().unwrap_or_default();
            if path_part.is_empty() {
                let fragment = fragment.unwrap_or_default();
                if !page.ids.contains(&fragment) {
                    problems.push(format!(
                        "{at}: {attr}=\"{link}\": no element has id '{fragment}'"
                    ));
                }
                continue;
            }
            if path_part.starts_with('/') {
                problems.push(format!("{at}: {attr}=\"{link}\" is absolute"));
                continue;
            }
            let from = rel.parent().unwrap_or(Path::new(""));
            let Some(target) = normalize(&from.join(percent_decode(path_part))) else {
                problems.push(format!(
                    "{at}: {attr}=\"{link}\" leads out of the work folder"
                ));
                continue;
            };
            let on_disk = base.join(&target);
            if !on_disk.is_file() {
                problems.push(format!(
                    "{at}: {attr}=\"{link}\": {} is not a file",
                    target.display()
                ));
                continue;
            }
            if let (Some(fragment), Some(other)) = (fragment, pages.get(&target))
                && !fragment.is_empty()
                && !other.ids.contains(&fragment)
            {
                problems.push(format!(
                    "{at}: {attr}=\"{link}\": {} has no element with id '{fragment}'",
                    target.display()
                ));
            }
        }
    }
    (pages.len(), checked, problems)
}

#[test]
fn every_internal_link_of_every_page_resolves() {
    let dir = planted_site();
    let d = dir.path();
    let (pages, checked, problems) = link_problems(d);
    eprintln!("{pages} generated pages, {checked} internal links checked");
    // The odd question is linked, encoded, from its root's page.
    let root_page = std::fs::read_to_string(d.join("site/roots/runs-demo/index.html")).unwrap();
    assert!(
        root_page.contains(
            "href=\"q/sub%20dir/q%20%231%20%26%20100%25%20%C3%BC%20%60x%60%7C%5By%5D(z)_cross.html\""
        ),
        "no encoded link to the odd question"
    );
    // ... and in the study's per-question table it keeps its own cell:
    // one row, the id whole in a code span, no link made of its brackets.
    let questions = std::fs::read_to_string(d.join("results-demo/QUESTIONS.html")).unwrap();
    let row = questions
        .lines()
        .find(|l| l.contains("sub dir/q #1"))
        .expect("the odd question's row");
    assert!(
        row.contains("<td><code>sub dir/q #1 &amp; 100% ü `x`|[y](z)_cross</code></td>"),
        "{row}"
    );
    // The site (index, root, 12 questions, 108 attempts) and the pages
    // beside the Markdown files.
    assert!(pages > 120, "only {pages} pages found");
    assert!(checked > 1000, "only {checked} links checked");
    assert!(
        problems.is_empty(),
        "{} broken links:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_link_checker_sees_broken_links() {
    let mark = "<meta name=\"generator\" content=\"okn-benchmark build\">";
    let page = format!(
        "{mark}<p id=\"top\"><a href=\"#top\">ok</a> <a href=\"other.html#here\">ok</a> <a href=\"../b%20c/x.csv\">ok</a> <img src=\"data:image/png;base64,AA\"> <a href=\"https://example.org/\">ext</a>"
    );
    let other = format!(
        "{mark}<h2 id=\"here\">x</h2><svg><use href=\"#nowhere\"/></svg><a href=\"page.html#gone\">x</a><a href=\"missing.html\">x</a><a href=\"../../out.html\">x</a><a href=\"javascript:alert(1)\">x</a><img src=\"pic.png\"><a href=\"other.html?x=1&amp;y=2#here\">ok</a>"
    );
    let dir = crate::support::work_dir(&[
        ("a/page.html", &page),
        ("a/other.html", &other),
        (
            "a/hand.html",
            "<a href=\"nowhere.html\">hand-written: not checked</a>",
        ),
        ("b c/x.csv", "a\n"),
    ]);
    let (pages, _, problems) = link_problems(dir.path());
    assert_eq!(pages, 2);
    let text = problems.join("\n");
    for expected in [
        "a/other.html: href=\"#nowhere\": no element has id 'nowhere'",
        "a/other.html: href=\"page.html#gone\": a/page.html has no element with id 'gone'",
        "a/other.html: href=\"missing.html\": a/missing.html is not a file",
        "a/other.html: href=\"../../out.html\" leads out of the work folder",
        "a/other.html: href=\"javascript:alert(1)\" uses the scheme 'javascript'",
        "a/other.html: src=\"pic.png\": a/pic.png is not a file",
    ] {
        assert!(text.contains(expected), "missing '{expected}' in:\n{text}");
    }
    assert_eq!(problems.len(), 6, "{text}");
}

// -------------------------------------------------------------- browser

/// The Chromium binary: `OKN_CHROMIUM`, or the Debian package's.
fn chromium() -> PathBuf {
    let path = std::env::var_os("OKN_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.is_file(),
        "Chromium is not installed at {}: install the Debian package 'chromium' \
         (apt-get install chromium), or set OKN_CHROMIUM to a Chromium binary. \
         This test must not pass by skipping.",
        path.display()
    );
    path
}

/// `node_modules` holding `playwright-core`, as `scripts/test` installs it.
fn playwright_modules() -> PathBuf {
    let roots = [
        std::env::var_os("OKN_TEST_TOOLS").map(PathBuf::from),
        Some(repo().join("target/test-tools")),
    ];
    for root in roots.into_iter().flatten() {
        let modules = root.join("node_modules");
        if modules.join("playwright-core/package.json").is_file() {
            return modules;
        }
    }
    panic!(
        "playwright-core is not installed: run scripts/test, which installs it into target/test-tools"
    );
}

/// A page to open: its name in the report, its file, and optionally the
/// (table, column) whose header is clicked to sort.
type Visit<'a> = (&'a str, PathBuf, Option<(usize, usize)>);

/// Runs `tests/browser/check.js` over `pages` and returns its report, page
/// by page.
/// The widths the wide tables are checked at: a laptop and a phone.
const LAYOUT_WIDTHS: [u32; 2] = [1280, 390];

/// The pages a reader takes in at a glance (issue 26, section 3), checked
/// by [`glance_problems`].
const GLANCE_PAGES: [&str; 7] = [
    "index",
    "root",
    "question",
    "summary",
    "questions",
    "readme",
    "comparison",
];

/// The pages whose tables are checked for fit (the root's conditions, a
/// study's results, its question table).
const LAYOUT_PAGES: [&str; 3] = ["root", "summary", "questions"];

/// Tables that do not fit (issue: publishing as the seed's studies do it,
/// "Tables that fit"): at each width, a page never scrolls sideways as a
/// whole, every table keeps its first column in view, a long header
/// carries its whole text as a title and none is cut off (issue 26,
/// section 3: clamped headers made two columns read alike), no table
/// scrolls at 1280 px, and no number or interval wraps inside itself
/// ("0.56–" / "0.86"), in generated and in Markdown tables alike.
fn layout_problems(name: &str, page: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(widths) = page["layout"].as_array() else {
        return vec![format!("{name}: no layout measured")];
    };
    for at in widths {
        let width = &at["width"];
        if at["overflow_x"].as_f64() != Some(0.0) {
            problems.push(format!(
                "{name} at {width} px: the page scrolls sideways by {}",
                at["overflow_x"]
            ));
        }
        for (i, t) in at["tables"].as_array().into_iter().flatten().enumerate() {
            if t["sticky_first"] == Value::Bool(false) {
                problems.push(format!(
                    "{name} at {width} px: table {i}'s first column is not sticky"
                ));
            }
            // Issue 26, section 3: a header is wrapped, never clamped
            // into ambiguity, and at a laptop's width no table scrolls.
            if !strings(&t["clamped"]).is_empty() {
                problems.push(format!(
                    "{name} at {width} px: table {i} cuts off the headers {:?}",
                    strings(&t["clamped"])
                ));
            }
            if width.as_u64() == Some(1280) && t["scrolls"] == Value::Bool(true) {
                problems.push(format!(
                    "{name} at {width} px: table {i} does not fit ({} columns)",
                    t["columns"]
                ));
            }
            if t["long_headers_titled"] != Value::Bool(true) {
                problems.push(format!(
                    "{name} at {width} px: table {i} has a long header without its title"
                ));
            }
            if !strings(&t["wrapped"]).is_empty() {
                problems.push(format!(
                    "{name} at {width} px: table {i} wraps {:?}",
                    strings(&t["wrapped"])
                ));
            }
        }
    }
    problems
}

/// The condition keys of the fixture's root and the labels its pages
/// show for them: (key, label).
fn condition_keys(d: &Path) -> Vec<(String, String)> {
    std::fs::read_dir(d.join("runs-demo/conditions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let file: okn_benchmark::runs::records::ConditionFile =
                serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            let label = okn_benchmark::report::label(&file);
            (file.name, label)
        })
        .collect()
}

/// Issue 26, section 3, at a laptop's width (1280 px): the page does not
/// scroll sideways and no table of it does, every figure (inline SVG,
/// image) has a title saying what it holds, and no heading, table or
/// figure title shows a condition's raw key where its label exists.
fn glance_problems(name: &str, page: &Value, keys: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    if page["overflow_x"].as_f64() != Some(0.0) {
        problems.push(format!(
            "{name}: the page scrolls sideways by {} px at 1280 px",
            page["overflow_x"]
        ));
    }
    if page["scrolling_tables"].as_u64() != Some(0) {
        problems.push(format!(
            "{name}: {} tables scroll sideways at 1280 px",
            page["scrolling_tables"]
        ));
    }
    for title in strings(&page["figures"]) {
        if title.is_empty() {
            problems.push(format!("{name}: a figure without a title"));
        }
    }
    let shown = page["shown_text"].as_str().unwrap_or_default();
    for (key, label) in keys {
        if key != label && shown.contains(key.as_str()) {
            problems.push(format!(
                "{name}: shows the condition key '{key}' where its label '{label}' exists"
            ));
        }
    }
    problems
}

/// Pages whose search box is used: the site's index (links from `site/`)
/// and the odd attempt page (links from five folders down, through an id
/// a URL must encode).
const SEARCH_PAGES: [&str; 2] = ["index", "odd-attempt"];

/// What is typed into their search boxes: text planted only in a SPARQL
/// query argument of [`QUESTION`]'s attempt 1 (it must find that attempt,
/// and show the planted markup as text), and words of [`ODD_QUESTION`]'s
/// id (it must find that question's page), also typed without the accent
/// (the search folds case and accents on both sides; red-team finding of
/// 2026-12-03: "istanbul" did not find "İstanbul").
const SEARCH_QUERIES: [&str; 3] = ["__pwned=3", "100% ü", "100% U"];

/// The file a `file://` URL names.
fn file_of(url: &str) -> PathBuf {
    let path = url
        .strip_prefix("file://")
        .unwrap_or_else(|| panic!("{url} is not a file URL"));
    PathBuf::from(percent_decode(path.split('#').next().unwrap_or_default()))
}

/// What a page's searches found wrong: a result that links nowhere, a
/// planted script or element, the index not loaded (two script elements:
/// the page's own and the index), and the planted attempt or the odd
/// question not found.
fn search_problems(name: &str, page: &Value, site: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let searches = page["searches"].as_array().cloned().unwrap_or_default();
    if searches.len() != SEARCH_QUERIES.len() {
        return vec![format!("{name}: searches not run: {}", page["searches"])];
    }
    for s in &searches {
        let query = s["query"].as_str().unwrap_or_default();
        if s["pwned"] != Value::Null || s["injected_elements"] != 0 {
            problems.push(format!("{name}: searching {query:?} ran planted text: {s}"));
        }
        if s["scripts"] != 2 {
            problems.push(format!(
                "{name}: searching {query:?}: {} scripts, not the page's and the index",
                s["scripts"]
            ));
        }
        let hrefs: Vec<PathBuf> = s["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["href"].as_str().map(file_of))
            .collect();
        for file in &hrefs {
            if !file.is_file() {
                problems.push(format!(
                    "{name}: searching {query:?} links to {}, which is not a file",
                    file.display()
                ));
            }
        }
        let wanted = match query {
            "__pwned=3" => site.join(format!("a/{QUESTION}/{CONDITION}/attempt-1.html")),
            _ => site.join(format!("q/{ODD_QUESTION}.html")),
        };
        if !hrefs.contains(&wanted) {
            problems.push(format!(
                "{name}: searching {query:?} did not find {}: {s}",
                wanted.display()
            ));
        }
        if query == "__pwned=3"
            && !s["results"].as_array().into_iter().flatten().any(|r| {
                r["text"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("<script>window.__pwned=3</script>")
            })
        {
            problems.push(format!(
                "{name}: the planted query is not shown as text: {s}"
            ));
        }
    }
    problems
}

fn browse(scratch: &Path, pages: &[Visit]) -> Vec<Value> {
    let spec = serde_json::json!({
        "chromium": chromium(),
        "screenshots": scratch,
        "layout": { "widths": LAYOUT_WIDTHS, "pages": LAYOUT_PAGES },
        "pages": pages.iter().map(|(name, path, sort)| {
            let mut p = serde_json::json!({ "name": name, "path": path });
            if let Some((table, column)) = sort {
                p["sort"] = serde_json::json!({ "table": table, "column": column });
            }
            if SEARCH_PAGES.contains(name) {
                p["search"] = serde_json::json!(SEARCH_QUERIES);
            }
            if name.contains("redirect") {
                p["wait_ms"] = serde_json::json!(1500);
            }
            p
        }).collect::<Vec<_>>(),
    });
    let spec_path = scratch.join("browser-spec.json");
    std::fs::write(&spec_path, serde_json::to_vec_pretty(&spec).unwrap()).unwrap();
    let modules = playwright_modules();
    let mut child = Command::new("node")
        .arg(repo().join("tests/browser/check.js"))
        .arg(&spec_path)
        .env("NODE_PATH", &modules)
        .env("HOME", scratch)
        .env_remove("DISPLAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run node (Node.js 18 or later is needed): {e}"));
    let out_reader = {
        let mut out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut out, &mut s).unwrap();
            s
        })
    };
    let err_reader = {
        let mut err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut err, &mut s).unwrap();
            s
        })
    };
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the browser check did not finish within 180 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = out_reader.join().unwrap();
    let err = err_reader.join().unwrap();
    assert!(
        status.success(),
        "the browser check failed ({status}):\n{err}"
    );
    let report: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("the browser check printed no JSON ({e}):\n{out}\n{err}"));
    report["pages"].as_array().unwrap().clone()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The numbers of a column as the page shows them.
fn numbers(v: &Value) -> Vec<f64> {
    strings(v)
        .iter()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|_| panic!("'{s}' is not a number"))
        })
        .collect()
}

/// Asserts that a header click sorted a numeric column: the first click
/// ascending, the second descending, the rows the same rows.
fn assert_sorted(page: &str, sort: &Value) {
    let before = numbers(&sort["before"]);
    let first = numbers(&sort["first"]);
    let second = numbers(&sort["second"]);
    assert!(before.len() > 1, "{page}: too few rows to sort: {sort}");
    assert_eq!(sort["first_order"], "asc", "{page}: {sort}");
    assert_eq!(sort["second_order"], "desc", "{page}: {sort}");
    assert!(
        first.is_sorted(),
        "{page}: first click did not sort ascending: {sort}"
    );
    assert!(
        second.iter().rev().copied().collect::<Vec<_>>().is_sorted(),
        "{page}: second click did not sort descending: {sort}"
    );
    let mut a = before.clone();
    let mut b = first.clone();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    assert_eq!(a, b, "{page}: sorting changed the rows: {sort}");
    assert!(
        before != first || before != second,
        "{page}: neither click moved a row: {sort}"
    );
}

#[test]
fn pages_work_from_file_urls_in_headless_chromium() {
    let dir = planted_site();
    let d = dir.path();
    let site = d.join("site/roots/runs-demo");
    let controls = tempfile::tempdir().unwrap();
    // Control: a script the page's policy does not allow must be reported.
    let blocked = controls.path().join("blocked.html");
    std::fs::write(
        &blocked,
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='\"><title>blocked</title></head><body><table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table><script>window.__pwned=1</script></body></html>",
    )
    .unwrap();
    // Control: with no policy, a planted script runs and is seen to run.
    let open = controls.path().join("open.html");
    std::fs::write(
        &open,
        format!("<!DOCTYPE html><html><head><title>open</title></head><body><p>{SCRIPT}</p></body></html>"),
    )
    .unwrap();
    // Control: a page with no policy and no sanitizing, holding the
    // planted redirect, must be seen to leave.
    let redirecting = controls.path().join("redirecting.html");
    std::fs::write(
        &redirecting,
        format!(
            "<!DOCTYPE html><html><head><title>r</title></head><body><svg><g><meta http-equiv=\"refresh\" content=\"0;url={}\"></g></svg></body></html>",
            d.join(REDIRECTED).display()
        ),
    )
    .unwrap();
    let pages: Vec<Visit> = vec![
        ("index", d.join("site/index.html"), None),
        ("redirect", d.join("REDIRECT.html"), None),
        // Conditions table, column "exact".
        ("root", site.join("index.html"), Some((0, 6))),
        // Attempts table, column "mean F1".
        (
            "question",
            site.join(format!("q/{QUESTION}.html")),
            Some((0, 2)),
        ),
        (
            "attempt",
            site.join(format!("a/{QUESTION}/{CONDITION}/attempt-1.html")),
            None,
        ),
        (
            "odd-question",
            site.join(format!("q/{ODD_QUESTION}.html")),
            None,
        ),
        (
            "odd-attempt",
            site.join(format!("a/{ODD_QUESTION}/{CONDITION}/attempt-1.html")),
            None,
        ),
        ("summary", d.join("results-demo/SUMMARY.html"), None),
        (
            "comparison",
            d.join("site/comparisons/demo-again.html"),
            None,
        ),
        ("questions", d.join("results-demo/QUESTIONS.html"), None),
        ("readme", d.join("README.html"), None),
        ("control-blocked", blocked, None),
        ("control-open", open, None),
        ("control-redirect", redirecting, None),
    ];
    for (name, path, _) in &pages {
        assert!(path.is_file(), "{name}: {} was not built", path.display());
    }
    let report = browse(controls.path(), &pages);
    assert_eq!(report.len(), pages.len());
    let by_name: BTreeMap<String, &Value> = report
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_string(), p))
        .collect();

    // The probes see what they look for.
    let c = by_name["control-blocked"];
    assert!(
        !strings(&c["csp_violations"]).is_empty() && !strings(&c["console_errors"]).is_empty(),
        "a blocked script went unreported: {c}"
    );
    assert_eq!(c["sortable_headers"], 0, "{c}");
    assert_eq!(c["pwned"], Value::Null, "{c}");
    let c = by_name["control-open"];
    assert_eq!(c["pwned"], "1", "a script that ran went unseen: {c}");
    assert_eq!(c["title"], "pwned", "{c}");
    let c = by_name["control-redirect"];
    assert!(
        c["url"].as_str().unwrap_or_default().ends_with(REDIRECTED),
        "a redirect went unseen: {c}"
    );
    // Issue 24, item 24: the planted redirects do not navigate.
    let r = by_name["redirect"];
    assert!(
        r["url"]
            .as_str()
            .unwrap_or_default()
            .ends_with("/REDIRECT.html"),
        "the page redirected: {r}"
    );
    assert!(
        r["title"].as_str().unwrap_or_default().contains("Redirect"),
        "{r}"
    );

    let mut failures = Vec::new();
    for name in LAYOUT_PAGES {
        failures.extend(layout_problems(name, by_name[name]));
        // Wide enough to need it: the root's conditions table scrolls at a
        // phone's width, and the check above saw it keep its first column.
        if name == "root" {
            let phone = &by_name[name]["layout"][1]["tables"][0];
            assert_eq!(phone["scrolls"], true, "{phone}");
            assert_eq!(phone["sticky_first"], true, "{phone}");
        }
    }
    let keys = condition_keys(d);
    assert!(keys.len() > 1, "{keys:?}");
    for (name, _, sort) in pages.iter().filter(|p| !p.0.starts_with("control-")) {
        let p = by_name[*name];
        if GLANCE_PAGES.contains(name) {
            failures.extend(glance_problems(name, p, &keys));
        }
        for key in [
            "console_errors",
            "console_warnings",
            "page_errors",
            "failed_requests",
            "csp_violations",
        ] {
            let found = strings(&p[key]);
            if !found.is_empty() {
                failures.push(format!("{name}: {key}:\n  {}", found.join("\n  ")));
            }
        }
        if p["pwned"] != Value::Null {
            failures.push(format!(
                "{name}: planted script ran: __pwned = {}",
                p["pwned"]
            ));
        }
        if p["title"].as_str().unwrap_or_default().contains("pwned") {
            failures.push(format!("{name}: planted script set the title"));
        }
        if p["scripts"] != 1 {
            failures.push(format!("{name}: {} script elements, not 1", p["scripts"]));
        }
        if p["injected_elements"] != 0 {
            failures.push(format!("{name}: planted elements in the DOM"));
        }
        let tables = p["tables"].as_u64().unwrap_or(0);
        if tables > 0 && p["sortable_headers"] == 0 {
            failures.push(format!(
                "{name}: {tables} tables but the sort script did not run"
            ));
        }
        if sort.is_some() {
            assert_sorted(name, &p["sort"]);
        }
        if SEARCH_PAGES.contains(name) {
            failures.extend(search_problems(name, p, &site));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The planted text is on the pages, as text.
    for name in ["root", "question", "attempt", "questions"] {
        assert_eq!(
            by_name[name]["shows_planted"], true,
            "{name}: planted text not shown"
        );
    }
    for name in [
        "index",
        "root",
        "question",
        "attempt",
        "summary",
        "questions",
    ] {
        assert!(
            by_name[name]["tables"].as_u64().unwrap_or(0) > 0,
            "{name}: no table"
        );
    }
    // The study page inlines its figure as SVG.
    assert!(by_name["summary"]["svgs"].as_u64().unwrap_or(0) > 0);
    // Issue 26, section 3: the probes saw what they check. The study's
    // figure is titled with what it holds; the comparison's pages name
    // conditions by label.
    let figures = strings(&by_name["summary"]["figures"]);
    assert!(
        figures
            .iter()
            .any(|t| t.starts_with("Exact rate per question and condition — ")),
        "{figures:?}"
    );
    let label = &keys.iter().find(|(k, _)| k == CONDITION).unwrap().1;
    let shown = by_name["comparison"]["shown_text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        shown.contains(label.as_str()),
        "{label} not on the comparison page"
    );
}
