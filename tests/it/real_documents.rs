//! `paper doc` over real Markdown written by others
//! (`data/markdown/` of the shared folder, see `support::shared`; skipped
//! where it is absent): benchmark READMEs and reports, a Chinese README
//! with `<details>` and HTML images, the mdBook Markdown tour, the
//! CommonMark and GFM spec texts. For every document: no error; every table
//! cell's text in the HTML and in the RTF; local images inlined; heading
//! ids unique; no HTML tag soup in the RTF. Two documents are also read back
//! by LibreOffice.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::shared::{self, MARKDOWN};
use crate::support::{okn_in, stderr, stdout};
use pulldown_cmark::{Event, Parser, Tag, TagEnd};

/// The real documents copied into a scratch folder, the spec `.txt` files
/// also as `.md`. Returns the folder and the Markdown files, relative;
/// `None` where the shared folder is absent (the test is skipped).
fn corpus() -> Option<(tempfile::TempDir, Vec<PathBuf>)> {
    let source = shared::folder(&MARKDOWN)?;
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&source).sort_by_file_name() {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(&source).unwrap();
        let target = dir.path().join(rel);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        let bytes = std::fs::read(entry.path()).unwrap();
        std::fs::write(&target, &bytes).unwrap();
        match rel.extension().and_then(|e| e.to_str()) {
            Some("md") => files.push(rel.to_path_buf()),
            Some("txt") => {
                let md = rel.with_extension("md");
                std::fs::write(dir.path().join(&md), &bytes).unwrap();
                files.push(md);
            }
            _ => {}
        }
    }
    files.sort();
    Some((dir, files))
}

/// Runs `paper doc FILE --tables --out out/FOLDER` in `root`; returns the
/// output folder.
fn paper_doc(root: &Path, file: &Path) -> Result<PathBuf, String> {
    let out_dir = Path::new("out").join(file.parent().unwrap());
    let out = okn_in(root)
        .arg("paper")
        .arg("doc")
        .arg(file)
        .args(["--tables", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(format!(
            "{}: exit {:?}: {}",
            file.display(),
            out.status.code(),
            stderr(&out)
        ));
    }
    let first = stdout(&out).lines().next().unwrap_or_default().to_string();
    let stem = file.file_stem().unwrap().to_string_lossy();
    let expected = format!("wrote {}", out_dir.join(format!("{stem}.html")).display());
    if first != expected {
        return Err(format!("{}: printed {first:?}", file.display()));
    }
    Ok(root.join(out_dir))
}

/// What a test needs to know of a Markdown source, parsed as the renderer
/// parses it.
#[derive(Debug, Default)]
struct Source {
    /// Per table, per cell, the runs of text a reader sees (split where an
    /// image, raw HTML, a hard break or a footnote mark sits between them).
    tables: Vec<Vec<String>>,
    /// Image destinations: Markdown images and `<img src>` in raw HTML.
    images: Vec<String>,
    /// `<` in text a reader sees (text, code, alt text) plus `&lt;` in raw
    /// HTML: an upper bound for `<` in the RTF's text.
    angle_brackets: usize,
}

fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parse(markdown: &str) -> Source {
    let mut source = Source::default();
    let mut in_cell = false;
    let mut in_image = 0usize;
    let mut run = String::new();
    let mut cell_runs: Vec<String> = Vec::new();
    let flush = |run: &mut String, runs: &mut Vec<String>| {
        let text = normalize(run);
        if !text.is_empty() {
            runs.push(text);
        }
        run.clear();
    };
    let options = okn_benchmark::render::markdown::options();
    for event in Parser::new_ext(markdown, options) {
        match &event {
            Event::Text(t) | Event::Code(t) => {
                source.angle_brackets += t.matches('<').count();
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                source.angle_brackets += t.matches("&lt;").count();
                source.images.extend(img_sources(t));
            }
            _ => {}
        }
        match event {
            Event::Start(Tag::Table(_)) => source.tables.push(Vec::new()),
            Event::Start(Tag::TableCell) => in_cell = true,
            Event::End(TagEnd::TableCell) => {
                flush(&mut run, &mut cell_runs);
                if let Some(table) = source.tables.last_mut() {
                    table.append(&mut cell_runs);
                }
                in_cell = false;
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                source.images.push(dest_url.to_string());
                in_image += 1;
                flush(&mut run, &mut cell_runs);
            }
            Event::End(TagEnd::Image) => in_image -= 1,
            Event::Text(t) | Event::Code(t) if in_cell && in_image == 0 => run.push_str(&t),
            Event::InlineHtml(_) | Event::HardBreak | Event::FootnoteReference(_) if in_cell => {
                flush(&mut run, &mut cell_runs)
            }
            _ => {}
        }
    }
    source
}

/// `src` values of `<img>` tags in raw HTML.
fn img_sources(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find("<img") {
        let start = at + i;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let tag = &html[start..end];
        if let Some(s) = tag.to_ascii_lowercase().find("src=") {
            let value = &tag[s + 4..];
            let value = match value.chars().next() {
                Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or(""),
                _ => value.split_whitespace().next().unwrap_or(""),
            };
            found.push(value.to_string());
        }
        at = end.max(start + 4);
    }
    found
}

/// The text of an HTML page: tags dropped, the five escapes undone.
fn html_text(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match (in_tag, c) {
            (false, '<') => in_tag = true,
            (true, '>') => in_tag = false,
            (false, c) => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The text of an RTF document, as a reader sees it: groups that are not
/// text (font table, style sheet, info, pictures, field instructions, `\*`
/// destinations) skipped; `\uN?` decoded (one fallback character skipped,
/// as `\uc1` says; surrogate pairs joined); `\par`, `\line`, `\cell`,
/// `\row` as line breaks, `\tab` as a tab; escaped `\\ \{ \}` restored.
/// Panics on unbalanced braces.
fn rtf_text(rtf: &str) -> String {
    const SKIPPED: [&str; 7] = [
        "fonttbl",
        "colortbl",
        "stylesheet",
        "info",
        "pict",
        "fldinst",
        "*",
    ];
    let bytes = rtf.as_bytes();
    let mut text = String::new();
    let mut units: Vec<u16> = Vec::new();
    let mut skip_stack: Vec<bool> = Vec::new();
    let mut skip = false;
    let mut group_start = false;
    let mut i = 0;
    let flush_units = |units: &mut Vec<u16>, text: &mut String| {
        text.extend(char::decode_utf16(units.drain(..)).map(|r| r.unwrap_or('\u{fffd}')));
    };
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'{' => {
                skip_stack.push(skip);
                group_start = true;
                i += 1;
                continue;
            }
            b'}' => {
                skip = skip_stack.pop().expect("unbalanced }");
                i += 1;
            }
            b'\\' => {
                let next = *bytes.get(i + 1).expect("trailing backslash");
                if next.is_ascii_alphabetic() {
                    let start = i + 1;
                    let mut j = start;
                    while j < bytes.len() && bytes[j].is_ascii_alphabetic() {
                        j += 1;
                    }
                    let word = &rtf[start..j];
                    let num_start = j;
                    if j < bytes.len() && bytes[j] == b'-' {
                        j += 1;
                    }
                    while j < bytes.len() && bytes[j].is_ascii_digit() {
                        j += 1;
                    }
                    let param = &rtf[num_start..j];
                    if j < bytes.len() && bytes[j] == b' ' {
                        j += 1;
                    }
                    if group_start && SKIPPED.contains(&word) {
                        skip = true;
                    }
                    if !skip {
                        match word {
                            "u" => {
                                let n: i32 = param.parse().expect("\\u has a number");
                                units.push(n as i16 as u16);
                                // \uc1: one fallback character follows.
                                j += 1;
                            }
                            "par" | "line" | "cell" | "row" => {
                                flush_units(&mut units, &mut text);
                                text.push('\n');
                            }
                            "tab" => {
                                flush_units(&mut units, &mut text);
                                text.push('\t');
                            }
                            _ => {}
                        }
                    }
                    i = j;
                } else {
                    if next == b'*' && group_start {
                        skip = true;
                    } else if !skip && matches!(next, b'\\' | b'{' | b'}') {
                        flush_units(&mut units, &mut text);
                        text.push(next as char);
                    }
                    i += 2;
                }
            }
            b'\r' | b'\n' => i += 1,
            _ => {
                if !skip {
                    flush_units(&mut units, &mut text);
                    text.push(b as char);
                }
                i += 1;
            }
        }
        group_start = false;
    }
    flush_units(&mut units, &mut text);
    assert!(skip_stack.is_empty(), "unbalanced {{");
    text
}

/// The tags of an HTML page (`<...>`), the contents of `<script>` and
/// `<style>` skipped. Text on the page cannot hold a literal `<` (it is
/// escaped), so every `<` outside those starts a tag.
fn tags(html: &str) -> Vec<&str> {
    let lower = html.to_ascii_lowercase();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = html[at..].find('<') {
        let start = at + i;
        let Some(len) = html[start..].find('>') else {
            break;
        };
        let tag = &html[start..=start + len];
        found.push(tag);
        at = start + len + 1;
        for raw in ["script", "style"] {
            if lower[start..].starts_with(&format!("<{raw}")) {
                at += lower[at..].find(&format!("</{raw}")).unwrap_or(0);
            }
        }
    }
    found
}

/// The value of attribute `name` (double-quoted, as pages are written).
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)?;
    let value = &tag[i + key.len()..];
    Some(&value[..value.find('"')?])
}

/// Duplicate `id` values on an HTML page's tags.
fn duplicate_ids(html: &str) -> Vec<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for tag in tags(html) {
        if let Some(id) = attr(tag, "id") {
            *seen.entry(id).or_default() += 1;
        }
    }
    seen.into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(id, n)| format!("{id} ×{n}"))
        .collect()
}

/// Every problem with one converted document.
fn problems(root: &Path, file: &Path, out_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let name = file.display().to_string();
    let markdown = std::fs::read_to_string(root.join(file)).unwrap();
    let source = parse(&markdown);
    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
    let html = std::fs::read_to_string(out_dir.join(format!("{stem}.html"))).unwrap();
    let rtf = std::fs::read_to_string(out_dir.join(format!("{stem}.rtf"))).unwrap();
    if !rtf.starts_with("{\\rtf1") || !rtf.is_ascii() {
        found.push(format!("{name}: the RTF is not an ASCII RTF document"));
    }
    let page = normalize(&html_text(&html));
    let document = normalize(&rtf_text(&rtf));

    // Every cell's text, in the HTML, the RTF and the table's own RTF.
    for (t, cells) in source.tables.iter().enumerate() {
        let table_path = out_dir.join(format!("{stem}-table{}.rtf", t + 1));
        let Ok(table_rtf) = std::fs::read_to_string(&table_path) else {
            found.push(format!("{name}: {} is missing", table_path.display()));
            continue;
        };
        let table_text = normalize(&rtf_text(&table_rtf));
        for cell in cells {
            if !page.contains(cell.as_str()) {
                found.push(format!(
                    "{name}: table {} cell {cell:?} not in the HTML",
                    t + 1
                ));
            }
            if !document.contains(cell.as_str()) {
                found.push(format!(
                    "{name}: table {} cell {cell:?} not in the RTF",
                    t + 1
                ));
            }
            if !table_text.contains(cell.as_str()) {
                found.push(format!(
                    "{name}: table {} cell {cell:?} not in its table file",
                    t + 1
                ));
            }
        }
    }
    let extra = out_dir.join(format!("{stem}-table{}.rtf", source.tables.len() + 1));
    if extra.exists() {
        found.push(format!("{name}: more table files than tables"));
    }

    // Local images that exist are inlined; nothing points at a file.
    let folder = root.join(file.parent().unwrap());
    for src in &source.images {
        if src.contains(':') || src.starts_with("//") || src.is_empty() {
            continue;
        }
        let path = src.split(['#', '?']).next().unwrap().replace("%20", " ");
        let inlined = tags(&html)
            .iter()
            .all(|t| attr(t, "src") != Some(src.as_str()));
        if folder.join(&path).is_file() && !inlined {
            found.push(format!("{name}: image {src} was not inlined"));
        }
    }
    for tag in tags(&html) {
        if let Some(value) = attr(tag, "src")
            && !value.starts_with("data:")
        {
            found.push(format!("{name}: src=\"{value}\" is not a data: URI"));
        }
    }

    for id in duplicate_ids(&html) {
        found.push(format!("{name}: duplicate id {id}"));
    }

    // Raw HTML never reaches the RTF as tags: every `<` there is text.
    let angles = document.matches('<').count();
    if angles > source.angle_brackets {
        found.push(format!(
            "{name}: {angles} '<' in the RTF text, only {} in the source text",
            source.angle_brackets
        ));
    }
    found
}

#[test]
fn every_real_document_converts_with_its_cells_images_and_unique_ids() {
    let Some((dir, files)) = corpus() else {
        return;
    };
    assert!(files.len() >= 15, "{files:?}");
    let mut found = Vec::new();
    let mut tables = 0;
    let mut cells = 0;
    for file in &files {
        match paper_doc(dir.path(), file) {
            Ok(out_dir) => {
                let markdown = std::fs::read_to_string(dir.path().join(file)).unwrap();
                let source = parse(&markdown);
                tables += source.tables.len();
                cells += source.tables.iter().map(Vec::len).sum::<usize>();
                found.extend(problems(dir.path(), file, &out_dir));
            }
            Err(e) => found.push(e),
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    // The corpus is what it says: many tables, many cells.
    assert!(tables >= 55, "{tables} tables");
    assert!(cells >= 3000, "{cells} cells");
}

/// The two richest documents (a results report of 15 tables; the Chinese
/// README with emoji, `<details>` and a 55-row table) read back by
/// LibreOffice: every cell's text is there.
#[test]
fn libreoffice_reads_back_the_cells_of_real_reports() {
    let Some((dir, _)) = corpus() else {
        return;
    };
    let picked = [
        "sbl-sdsc-mcp-okn/benchmark/preliminary_results/BENCHMARK_RESULTS_FULL.md",
        "hiyouga-llama-factory/README_zh.md",
    ];
    let mut rtfs = Vec::new();
    for file in picked {
        let out_dir = paper_doc(dir.path(), Path::new(file)).unwrap();
        let stem = Path::new(file).file_stem().unwrap().to_string_lossy();
        rtfs.push(out_dir.join(format!("{stem}.rtf")));
    }
    let soffice = std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("soffice"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!(
                "LibreOffice's soffice is not on PATH: install the Debian package libreoffice-writer-nogui"
            )
        });
    let txt = dir.path().join("txt");
    let run = Command::new(soffice)
        .arg(format!(
            "-env:UserInstallation=file://{}",
            dir.path().join("lo-profile").display()
        ))
        .args([
            "--headless",
            "--norestore",
            "--convert-to",
            "txt:Text (encoded):UTF8",
            "--outdir",
        ])
        .arg(&txt)
        .args(&rtfs)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    for file in picked {
        let stem = Path::new(file).file_stem().unwrap().to_string_lossy();
        let text = normalize(&std::fs::read_to_string(txt.join(format!("{stem}.txt"))).unwrap());
        let source = parse(&std::fs::read_to_string(dir.path().join(file)).unwrap());
        let cells: Vec<&String> = source.tables.iter().flatten().collect();
        assert!(cells.len() > 100, "{file}: {} cells", cells.len());
        let lost: Vec<&&String> = cells
            .iter()
            .filter(|c| !text.contains(c.as_str()))
            .collect();
        assert!(lost.is_empty(), "{file}: lost {lost:?}");
    }
}

#[test]
fn the_rtf_decoder_of_these_tests_decodes() {
    // The checks above are only as good as this decoder.
    let rtf = "{\\rtf1\\uc1{\\fonttbl{\\f0 Times;}}{\\*\\generator x;}\\pard caf\\u233? \\u-10179?\\u-8704?\\{a\\}\\\\{\\field{\\*\\fldinst HYPERLINK \"u\"}{\\fldrslt link}}\\cell {\\pict\\pngblip 89ab}\\par}";
    assert_eq!(rtf_text(rtf), "café 😀{a}\\link\n\n");
    assert_eq!(
        html_text("<td>&lt;x&gt; &amp; &quot;y&quot;</td>"),
        "<x> & \"y\""
    );
    let source = parse(
        "| a | b |\n|---|---|\n| `c` **d** | e<br>f ![img](x.png) g |\n\n<img src=\"p.png\">\n",
    );
    assert_eq!(source.tables, vec![vec!["a", "b", "c d", "e", "f", "g"]]);
    assert_eq!(source.images, vec!["x.png", "p.png"]);
    let page = "<p id=\"a\">x &lt;img src=\"no\" id=\"a\"&gt;</p><script>if (a<b) {}</script><img src=\"data:x\" id=\"a\">";
    assert_eq!(
        tags(page),
        [
            "<p id=\"a\">",
            "</p>",
            "<script>",
            "</script>",
            "<img src=\"data:x\" id=\"a\">"
        ]
    );
    assert_eq!(duplicate_ids(page), ["a ×2"]);
}

/// The hazards the sources' SOURCE.md files list, checked by name.
#[test]
fn the_named_hazards_of_the_real_documents() {
    let Some((dir, _)) = corpus() else {
        return;
    };
    let run = |file: &str| {
        let out_dir = paper_doc(dir.path(), Path::new(file)).unwrap();
        let stem = Path::new(file).file_stem().unwrap().to_string_lossy();
        let read =
            |ext: &str| std::fs::read_to_string(out_dir.join(format!("{stem}.{ext}"))).unwrap();
        (read("html"), read("rtf"), out_dir)
    };

    // LLaMA-Factory: a duplicate heading, a PNG logo, a JPEG inside an HTML
    // table, SVG badges, <details> whose summary holds HTML.
    let (html, rtf, _) = run("hiyouga-llama-factory/README_zh.md");
    let ids: Vec<&str> = tags(&html)
        .into_iter()
        .filter_map(|t| attr(t, "id"))
        .collect();
    assert!(ids.contains(&"安装-bitsandbytes") && ids.contains(&"安装-bitsandbytes-1"));
    assert!(html.contains("<img src=\"data:image/png;base64,iVBORw0KGgo"));
    assert!(html.contains("<img src=\"data:image/jpeg;base64,/9j/"));
    assert!(html.matches("<span class=\"figure\"><svg").count() >= 3);
    // The sponsor logo's <img width="250"> sizes the inlined SVG.
    assert!(
        html.contains("aria-label=\"SerpAPI sponsorship\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"600 700 1654.367 500\" width=\"250\">"),
        "the SerpAPI logo lost its width"
    );
    assert!(
        rtf.contains("{\\pict\\pngblip\\picw"),
        "the logo is embedded"
    );
    assert!(
        !rtf.contains("{\\pict\\jpegblip"),
        "a JPEG in raw HTML stays alt text"
    );
    let text = normalize(&rtf_text(&rtf));
    assert!(text.contains("使用 uv 构建虚拟环境"), "the <summary> text");
    assert!(!text.contains("<summary>") && !text.contains("<details>"));

    // MCP-Bench: a relative PNG, a box-drawing tree in a fence.
    let (html, rtf, _) = run("xuhaike-mcp-bench/README.md");
    assert!(html.contains("alt=\"MCP-Bench\"") && html.contains("data:image/png;base64,"));
    assert!(rtf.contains("{\\pict\\pngblip"));
    assert!(normalize(&rtf_text(&rtf)).contains("├──"));

    // mdBook: a relative SVG (inline on the page, alt text in the RTF).
    let (html, rtf, _) = run("rust-lang-mdbook/guide/src/format/markdown.md");
    assert!(html.contains("<svg role=\"img\" aria-label=\"The Rust Logo\""));
    assert!(normalize(&rtf_text(&rtf)).contains("[The Rust Logo]"));

    // A results report of 15 tables: 15 table files, no 16th.
    let (_, _, out_dir) =
        run("sbl-sdsc-mcp-okn/benchmark/preliminary_results/BENCHMARK_RESULTS_FULL.md");
    assert!(out_dir.join("BENCHMARK_RESULTS_FULL-table15.rtf").is_file());
    assert!(!out_dir.join("BENCHMARK_RESULTS_FULL-table16.rtf").exists());
}
