//! `okn-benchmark paper doc` through the real binary, and its RTF read back
//! by a real word processor: LibreOffice, headless. CI installs it (Debian
//! package `libreoffice-writer-nogui`); a machine without `soffice` fails
//! these tests with that instruction rather than skipping them.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Test, okn_in, stderr, stdout, work_dir};

/// A manuscript with everything the RTF writer must carry.
const MANUSCRIPT: &str = r#"# Agents over knowledge graphs

We measure *exact* and **strict** answers, ~~not~~ nothing else.[^scoring] Accents survive: café, résumé, naïve.

## Method

Questions come from the corpus; see [the registry](https://github.com/frink-okn/okn-registry) for the answer keys.

1. Run the answer keys against the endpoint.
2. Ask the agent through the proxy:
   - with every tool of the server
   - with the neutral SPARQL tool only

```sparql
SELECT ?s WHERE { ?s ?p "x" }
# a path with a backslash: C:\data\kg
```

## Languages

Chinese text reads 中文问题 here. Greek letters αβγ and Ωμέγα stay. An emoji 😀 ends the line.

Table 1: Exact answers per condition.

| Condition | Exact | Episodes |
|:----------|------:|:--------:|
| all-tools | 0.917 | 36 |
| sparql-only | 0.750 | 36 |
| **Total** | 0.833 | 72 |

Table 2: Questions that separate the conditions.

| Question | Answer key | Note |
|---|---|---|
| q-01 | `SELECT ?g { GRAPH ?g {} }` | braces {kept}[^cell] |
| 中文问题 | 😀 yes | Ωμέγα |

> The closing remark, quoted.

[^scoring]: Scored by denotation, as DESIGN.md says.

[^cell]: A note a table's cell refers to.
"#;

/// Sentences (no footnote marks inside) that must read back from the RTF.
const SENTENCES: [&str; 13] = [
    "Agents over knowledge graphs",
    "We measure exact and strict answers, not nothing else.",
    "Accents survive: café, résumé, naïve.",
    "Method",
    "Questions come from the corpus; see the registry for the answer keys.",
    "Run the answer keys against the endpoint.",
    "with every tool of the server",
    "SELECT ?s WHERE { ?s ?p \"x\" }",
    "# a path with a backslash: C:\\data\\kg",
    "Chinese text reads 中文问题 here. Greek letters αβγ and Ωμέγα stay. An emoji 😀 ends the line.",
    "Table 1: Exact answers per condition.",
    "The closing remark, quoted.",
    "Scored by denotation, as DESIGN.md says.",
];

/// Table 1 as LibreOffice's text export lists it: caption, then each cell.
const TABLE1: [&str; 13] = [
    "Table 1: Exact answers per condition.",
    "Condition",
    "Exact",
    "Episodes",
    "all-tools",
    "0.917",
    "36",
    "sparql-only",
    "0.750",
    "36",
    "Total",
    "0.833",
    "72",
];

const TABLE2: [&str; 11] = [
    "Table 2: Questions that separate the conditions.",
    "Question",
    "Answer key",
    "Note",
    "q-01",
    "SELECT ?g { GRAPH ?g {} }",
    "braces {kept}2",
    "中文问题",
    "😀 yes",
    "Ωμέγα",
    "2.\tA note a table's cell refers to.",
];

/// Runs `paper doc --tables paper.md --out out` in a fresh folder.
fn convert() -> (tempfile::TempDir, PathBuf) {
    let dir = work_dir(&[("paper.md", MANUSCRIPT)]);
    let out = okn_in(dir.path())
        .args(["paper", "doc", "--tables", "paper.md", "--out", "out"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "wrote out/paper.html\nwrote out/paper.rtf\nwrote out/paper-table1.rtf\nwrote out/paper-table2.rtf\n"
    );
    let path = dir.path().join("out");
    (dir, path)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `soffice` on PATH, or a failure that says how to get it.
fn soffice() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("soffice"))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "LibreOffice's soffice is not on PATH: install the Debian package \
             libreoffice-writer-nogui (apt-get install libreoffice-writer-nogui); \
             these tests read the RTF back with it and must not be skipped"
        )
    })
}

/// Converts `files` with one headless LibreOffice run into `outdir`, with a
/// private profile under `scratch` (parallel tests do not share one).
fn libreoffice(scratch: &Path, format: &str, outdir: &Path, files: &[PathBuf]) {
    let profile = scratch.join("lo-profile");
    let out = Command::new(soffice())
        .arg(format!(
            "-env:UserInstallation=file://{}",
            profile.display()
        ))
        .args([
            "--headless",
            "--norestore",
            "--convert-to",
            format,
            "--outdir",
        ])
        .arg(outdir)
        .args(files)
        .output()
        .expect("soffice runs");
    assert!(
        out.status.success(),
        "soffice failed: {}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// Non-empty trimmed lines of a LibreOffice text export (BOM dropped).
fn lines(path: &Path) -> Vec<String> {
    read(path)
        .trim_start_matches('\u{feff}')
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn paper_doc_writes_html_rtf_and_one_rtf_per_table_with_the_escapes() {
    let (_dir, out) = convert();
    let rtf = read(&out.join("paper.rtf"));
    assert!(
        rtf.starts_with("{\\rtf1\\ansi\\ansicpg1252\\deff0"),
        "{rtf}"
    );
    assert!(rtf.is_ascii(), "every non-ASCII character is escaped");
    for expected in [
        "caf\\u233?",                   // é
        "\\u20013?\\u25991?\\u-27154?", // 中文问 (U+95EE is above 32767: negative)
        "\\u-10179?\\u-8704?",          // 😀 as a surrogate pair
        "\\u945?\\u946?\\u947?",        // αβγ
        "SELECT ?s WHERE \\{ ?s ?p \"x\" \\}\\line # a path with a backslash: C:\\\\data\\\\kg\\par",
        "{\\field{\\*\\fldinst HYPERLINK \"https://github.com/frink-okn/okn-registry\"}{\\fldrslt{\\ul\\cf2 the registry}}}",
        "{\\super 1}",
        "{\\i exact}",
        "{\\b strict}",
        "{\\strike not}",
        "\\trowd",
        "{\\info{\\title Agents over knowledge graphs}}",
    ] {
        assert!(rtf.contains(expected), "missing {expected:?} in\n{rtf}");
    }
    let table1 = read(&out.join("paper-table1.rtf"));
    let table2 = read(&out.join("paper-table2.rtf"));
    assert!(table1.contains("Table 1: Exact answers per condition.\\par"));
    assert!(table1.contains("sparql-only\\cell") && !table1.contains("q-01"));
    assert!(table2.contains("{\\f2 SELECT ?g \\{ GRAPH ?g \\{\\} \\}}\\cell"));
    assert!(
        table2.contains("braces \\{kept\\}{\\super 2}\\cell") && !table2.contains("sparql-only")
    );
    // The table's document ends with the note its cell refers to, and only it.
    assert!(
        table2.contains("A note a table's cell refers to."),
        "{table2}"
    );
    assert!(!table2.contains("Scored by denotation"), "{table2}");
    // Alignment from the delimiter row: left, right, centre.
    assert!(table1.contains("\\intbl\\ql") && table1.contains("\\intbl\\qr"));
    assert!(table1.contains("\\intbl\\qc"));
    let html = read(&out.join("paper.html"));
    assert!(html.contains("<title>Agents over knowledge graphs</title>"));
    assert!(html.contains("<td style=\"text-align: left\">sparql-only</td>"));
    assert!(html.contains("<td style=\"text-align: right\">0.917</td>"));
    assert!(html.contains("<td>中文问题</td>"), "{html}");
    assert!(!html.contains('\r'));

    // Same input, same bytes.
    let (_again, out2) = convert();
    for name in [
        "paper.html",
        "paper.rtf",
        "paper-table1.rtf",
        "paper-table2.rtf",
    ] {
        assert_eq!(
            std::fs::read(out.join(name)).unwrap(),
            std::fs::read(out2.join(name)).unwrap(),
            "{name} differs between two runs"
        );
    }
}

#[test]
fn libreoffice_reads_back_every_sentence_cell_and_character() {
    let (dir, out) = convert();
    let txt = dir.path().join("txt");
    let files = ["paper.rtf", "paper-table1.rtf", "paper-table2.rtf"].map(|f| out.join(f));
    libreoffice(dir.path(), "txt:Text (encoded):UTF8", &txt, &files);
    let document = lines(&txt.join("paper.txt"));
    let text = document.join("\n");
    for sentence in SENTENCES {
        assert!(
            document.iter().any(|l| l.contains(sentence)),
            "{sentence:?} did not come back:\n{text}"
        );
    }
    for cell in TABLE1.iter().chain(TABLE2[..TABLE2.len() - 1].iter()) {
        assert!(
            document.iter().any(|l| l == cell),
            "cell {cell:?} did not come back:\n{text}"
        );
    }
    // The footnote's number is the mark after the sentence and the
    // definition's label; the definition is last.
    assert!(text.contains("nothing else.1 Accents"), "{text}");
    assert_eq!(
        document.last().map(String::as_str),
        Some("2.\tA note a table's cell refers to."),
        "{text}"
    );
    // Each table file holds its caption and its cells, in order, and nothing else.
    assert_eq!(lines(&txt.join("paper-table1.txt")), TABLE1);
    assert_eq!(lines(&txt.join("paper-table2.txt")), TABLE2);

    let pdf = dir.path().join("pdf");
    libreoffice(dir.path(), "pdf", &pdf, &[out.join("paper.rtf")]);
    let bytes = std::fs::read(pdf.join("paper.pdf")).expect("a PDF was produced");
    assert!(bytes.starts_with(b"%PDF-"), "not a PDF");
    assert!(bytes.len() > 5_000, "a PDF of {} bytes", bytes.len());
}

/// An SVG with ids: its ids on the page derive from the page's path.
const FIGURE: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"20\" height=\"10\"><defs><clipPath id=\"c\"><rect width=\"5\" height=\"5\"/></clipPath></defs><rect clip-path=\"url(#c)\" width=\"20\" height=\"10\"/></svg>";

/// Beside the manuscript, `paper doc` writes the very page `build` makes
/// (so `build --check` stays clean); in `--out` its page is its own and
/// `build` does not take it for an orphan.
#[test]
fn paper_doc_pages_agree_with_build() {
    let manuscript = "# M\n\n![figure](fig.svg)\n\n| a |\n|---|\n| 1 |\n";
    let dir = work_dir(&[
        ("m.md", manuscript),
        ("fig.svg", FIGURE),
        ("sub/n.md", manuscript),
        ("sub/fig.svg", FIGURE),
    ]);
    let run = |args: &[&str]| {
        let out = okn_in(dir.path()).args(args).output().unwrap();
        (out.status.code(), stdout(&out), stderr(&out))
    };
    let (code, out, err) = run(&["paper", "doc", "m.md"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "wrote m.html\nwrote m.rtf\n");
    assert!(
        !dir.path().join("m-table1.rtf").exists(),
        "no --tables, no table files"
    );
    let (_, out, _) = run(&["paper", "doc", "sub/n.md"]);
    assert_eq!(out, "wrote sub/n.html\nwrote sub/n.rtf\n");
    let (_, out, _) = run(&["paper", "doc", "m.md", "--out", "dist"]);
    assert_eq!(out, "wrote dist/m.html\nwrote dist/m.rtf\n");
    let html = read(&dir.path().join("m.html"));
    assert!(
        html.contains("clip-path=\"url(#")
            && html.contains("<svg role=\"img\" aria-label=\"figure\"")
    );
    // Under --root, build leaves site/ alone: what is compared is the
    // pages beside the two manuscripts.
    let (code, out, _) = run(&["build", "--check", "--root", "."]);
    assert_eq!(out, "build --check: all 2 generated files are current\n");
    assert_eq!(code, Some(0));
}

#[test]
fn an_unreadable_manuscript_is_exit_2_naming_it() {
    let dir = work_dir(&[("bad.md", "")]);
    std::fs::write(dir.path().join("bad.md"), b"# ok\n\n\xff\xfe\n").unwrap();
    for (file, message) in [
        (
            "missing.md",
            "missing.md: cannot read: no such file or folder",
        ),
        ("bad.md", "bad.md:3: not valid UTF-8"),
    ] {
        Test::new()
            .current_dir(dir.path())
            .args(["paper", "doc", file])
            .stdout("")
            .stderr_contains(message)
            .status(2)
            .run();
    }
    assert!(!dir.path().join("missing.html").exists());
}

mod regression {
    //! One test per fixed defect, named after what it guards; the comment
    //! says what broke.

    use super::*;

    /// Issue 24, item 25: a `javascript:` link was neutralized in the
    /// HTML but written into the RTF as a live HYPERLINK field. One policy
    /// for both: http, https, mailto and relative links are links; any
    /// other scheme (however it is spelled) is the link's text alone.
    #[test]
    fn a_link_with_a_scheme_outside_the_policy_is_plain_text_in_rtf_and_html() {
        let manuscript = "# Links\n\n[run me](javascript:alert(1)) [spaced]( JavaScript:alert(2)) \
                          [tabbed](java&#9;script:alert(3)) [vb](vbscript:msgbox) [data](data:text/html,x) \
                          [file](file:///etc/passwd)\n\n[web](https://ex.org/a) [mail](mailto:me@ex.org) \
                          [doc](docs/SCORING.md) <https://ex.org/auto>\n";
        let dir = work_dir(&[("links.md", manuscript)]);
        let out = okn_in(dir.path())
            .args(["paper", "doc", "links.md"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let rtf = read(&dir.path().join("links.rtf"));
        let fields: Vec<&str> = rtf
            .split("HYPERLINK \"")
            .skip(1)
            .map(|f| &f[..f.find('"').unwrap()])
            .collect();
        assert_eq!(
            fields,
            [
                "https://ex.org/a",
                "mailto:me@ex.org",
                "docs/SCORING.md",
                "https://ex.org/auto"
            ],
            "{rtf}"
        );
        for text in ["run me", "spaced", "tabbed", "vb", "data", "file"] {
            assert!(rtf.contains(text), "{text} is kept as text: {rtf}");
        }
        let html = read(&dir.path().join("links.html"));
        let body = &html[html.find("<h1").unwrap()..html.find("</main>").unwrap()];
        for bad in ["javascript", "JavaScript", "vbscript", "data:text", "file:"] {
            assert!(!body.contains(bad), "{bad} in {body}");
        }
        assert!(body.contains("href=\"https://ex.org/a\""), "{body}");
        assert!(body.contains("href=\"docs/SCORING.html\""), "{body}");
    }

    // Named bare (`paper doc x.md`), a manuscript's table files left from a longer version stayed.
    #[test]
    fn a_bare_file_name_still_removes_our_leftover_table_files() {
        let two = "# X\n\n| a |\n|---|\n| 1 |\n\n| b |\n|---|\n| 2 |\n";
        let dir = work_dir(&[("x.md", two)]);
        let run = || {
            okn_in(dir.path())
                .args(["paper", "doc", "x.md", "--tables"])
                .output()
                .unwrap()
        };
        let out = run();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(dir.path().join("x-table2.rtf").is_file());
        std::fs::write(dir.path().join("x.md"), "# X\n\n| a |\n|---|\n| 1 |\n").unwrap();
        let out = run();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            stdout(&out),
            "wrote x.html\nwrote x.rtf\nwrote x-table1.rtf\n"
        );
        assert!(
            stderr(&out).contains("removed x-table2.rtf"),
            "{}",
            stderr(&out)
        );
        assert!(!dir.path().join("x-table2.rtf").exists());
    }
}

/// `paper doc` embeds a study's SVG figure in the RTF as a PNG drawn at
/// print resolution (resvg), where it was "[alt]"; LibreOffice opens the
/// RTF and renders its page with the figure on it: the page, as an image,
/// carries the figure's marks (its one blue, #0072B2) and its text (dark
/// pixels, and the manuscript has no text of its own). The page was also
/// looked at as an image when this was written: the figure is whole and
/// its labels legible.
#[test]
fn libreoffice_renders_the_figure_the_rtf_embeds() {
    let svg = std::fs::read_to_string(
        crate::support::repo().join("results-cross/figures/exact-rate.svg"),
    )
    .unwrap();
    let dir = work_dir(&[
        (
            "paper.md",
            "![Exact rate per condition](figures/exact-rate.svg)\n",
        ),
        ("figures/exact-rate.svg", &svg),
    ]);
    let out = okn_in(dir.path())
        .args(["paper", "doc", "paper.md", "--out", "out"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let rtf = read(&dir.path().join("out/paper.rtf"));
    assert!(!rtf.contains("[Exact rate"), "the figure is its alt text");
    // The SVG's CSS pixels at 300 dpi (960 × 558: 3000 × 1744 px), shown
    // at the SVG's size (scaled to the text width when wider).
    let size = |name: &str| -> f64 {
        let at = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        svg[at..].split('"').next().unwrap().parse().unwrap()
    };
    let px = |css: f64| (css * 300.0 / 96.0).round() as u32;
    let (w, h) = (px(size("width")), px(size("height")));
    assert_eq!(w, 3000, "the study's figures are 960 CSS px wide");
    assert!(
        rtf.contains(&format!("{{\\pict\\pngblip\\picw{w}\\pich{h}\\picwgoal")),
        "{w}×{h}: {}",
        &rtf[..rtf.len().min(2000)]
    );
    let pdf = dir.path().join("pdf");
    libreoffice(dir.path(), "pdf", &pdf, &[dir.path().join("out/paper.rtf")]);
    // The first page as an image (Writer exports no PNG itself): poppler's
    // pdftoppm, which scripts/test installs (Debian package poppler-utils).
    let out = Command::new("pdftoppm")
        .args(["-png", "-r", "150", "-f", "1", "-singlefile"])
        .arg(pdf.join("paper.pdf"))
        .arg(dir.path().join("page"))
        .output()
        .expect("pdftoppm runs: install the Debian package poppler-utils");
    assert!(out.status.success(), "{}", stderr(&out));
    let page =
        resvg::tiny_skia::Pixmap::decode_png(&std::fs::read(dir.path().join("page.png")).unwrap())
            .expect("the page's PNG decodes");
    std::fs::copy(
        dir.path().join("page.png"),
        std::env::temp_dir().join("okn-figure-page.png"),
    )
    .ok();
    let near = |p: &resvg::tiny_skia::PremultipliedColorU8, (r, g, b): (i32, i32, i32)| {
        (p.red() as i32 - r).abs() < 40
            && (p.green() as i32 - g).abs() < 40
            && (p.blue() as i32 - b).abs() < 40
    };
    let blue = page
        .pixels()
        .iter()
        .filter(|p| near(p, (0x00, 0x72, 0xB2)))
        .count();
    let dark = page
        .pixels()
        .iter()
        .filter(|p| near(p, (0x1A, 0x1A, 0x1A)))
        .count();
    // At 150 dpi the dots and interval bars are about 320 pixels of the
    // blue, the text and axes some thousands of dark ones; a page with
    // "[Exact rate per condition]" on it has neither.
    assert!(
        blue > 200,
        "{blue} pixels of the figure's blue on a {}×{} page",
        page.width(),
        page.height()
    );
    assert!(dark > 500, "{dark} dark pixels: the figure's text and axes");
}
