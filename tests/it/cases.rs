//! Every case in `tests/cases/`, and in `../shared/cases/` where it is,
//! through the real command line.
//!
//! - `scoring/*.json`: `okn-benchmark score --reference REF --answer ANS
//!   [--ordered] [--precision N]`, compared with the case's `expect`.
//! - `corpus/okn-registry.json`: `okn-benchmark corpus list --format json`
//!   on the 89 real registry files, compared record by record.
//!
//! `tests/cases/` is a copy of the cases folder of the project's shared
//! folder (see `support::shared`), kept equal to it by
//! `the_cases_are_the_shared_cases_byte_for_byte` (the `README.html` that
//! `build` writes beside its README.md is no part of the copy). The README's
//! `../corpus/okn-registry/` is the registry corpus of the shared folder:
//! third-party files the repository does not hold.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::shared::{self, CASES, REGISTRY_CORPUS};
use crate::support::{okn, repo, stdout};
use serde_json::Value;

/// The repository's copy of the cases.
fn cases() -> PathBuf {
    repo().join("tests/cases")
}

/// Every file under `dir` with its bytes, by path relative to `dir`.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap();
            (e.path().strip_prefix(dir).unwrap().to_path_buf(), bytes)
        })
        .collect()
}

/// True for `X.html` beside a copied `X.md`, with `build`'s generator mark.
fn is_generated_page(path: &Path, bytes: &[u8], originals: &BTreeMap<PathBuf, Vec<u8>>) -> bool {
    path.extension().is_some_and(|e| e == "html")
        && !originals.contains_key(path)
        && originals.contains_key(&path.with_extension("md"))
        && String::from_utf8_lossy(bytes).contains(okn_benchmark::render::GENERATOR_MARK)
}

#[test]
fn the_cases_are_the_shared_cases_byte_for_byte() {
    let Some(original) = shared::folder(&CASES) else {
        return;
    };
    let want = files(&original);
    let mut have = files(&cases());
    // `build` writes a page beside every Markdown file of the repository
    // (README.md, "Publishing"): such a page is generated, not a copy.
    have.retain(|path, bytes| !is_generated_page(path, bytes, &want));
    let mut problems = Vec::new();
    for (path, bytes) in &want {
        match have.get(path) {
            None => problems.push(format!("missing  tests/cases/{}", path.display())),
            Some(copy) if copy != bytes => {
                problems.push(format!("differs  tests/cases/{}", path.display()))
            }
            Some(_) => {}
        }
    }
    for path in have.keys().filter(|p| !want.contains_key(*p)) {
        problems.push(format!("extra    tests/cases/{}", path.display()));
    }
    assert!(
        problems.is_empty(),
        "tests/cases/ is not a copy of {}: copy the folder again (cp -a {}/. tests/cases/)\n{}",
        original.display(),
        original.display(),
        problems.join("\n")
    );
    assert!(want.len() >= 36, "{} files in the shared cases", want.len());
}

/// Runs every scoring case in `dir` through `okn-benchmark score` and
/// fails naming each case whose result differs from its `expect`.
#[track_caller]
fn scoring_cases_pass(dir: &Path) {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 34,
        "expected the 34 scoring cases, found {}",
        paths.len()
    );
    let scratch = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for path in &paths {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let case: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let reference = scratch.path().join(format!("{name}.ref.csv"));
        let answer = scratch.path().join(format!("{name}.ans.csv"));
        std::fs::write(&reference, case["reference_csv"].as_str().unwrap()).unwrap();
        std::fs::write(&answer, case["answer_csv"].as_str().unwrap()).unwrap();
        let mut cmd = okn();
        cmd.arg("score")
            .arg("--reference")
            .arg(&reference)
            .arg("--answer")
            .arg(&answer);
        if case["ordered"].as_bool().unwrap_or(false) {
            cmd.arg("--ordered");
        }
        if let Some(p) = case.get("precision").and_then(Value::as_u64) {
            cmd.arg("--precision").arg(p.to_string());
        }
        let output = cmd.output().unwrap();
        if output.status.code() != Some(0) {
            failures.push(format!(
                "{name}: exit {:?}: {}",
                output.status.code(),
                crate::support::stderr(&output)
            ));
            continue;
        }
        let got: Value = serde_json::from_str(&stdout(&output)).unwrap();
        let expect = &case["expect"];
        for key in ["exact", "strict_exact", "ordered"] {
            if got[key] != expect[key] {
                failures.push(format!(
                    "{name}: {key} expected {} got {}",
                    expect[key], got[key]
                ));
            }
        }
        let (want, have) = (expect["f1"].as_f64().unwrap(), got["f1"].as_f64().unwrap());
        if (want - have).abs() > 1e-3 {
            failures.push(format!("{name}: f1 expected {want} got {have}"));
        }
        if let Some(fragment) = expect.get("note_contains").and_then(Value::as_str) {
            let notes = got["notes"].as_array().unwrap();
            if !notes.iter().any(|n| n.as_str().unwrap().contains(fragment)) {
                failures.push(format!("{name}: no note contains {fragment:?}: {notes:?}"));
            }
        }
        assert_eq!(
            got["scoring_version"],
            okn_benchmark::score::SCORING_VERSION,
            "{name}"
        );
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s) in {}:\n{}",
        failures.len(),
        dir.display(),
        failures.join("\n")
    );
}

/// The repository's copy of the scoring cases, on any clone.
#[test]
fn every_scoring_case_passes_through_the_cli() {
    scoring_cases_pass(&cases().join("scoring"));
}

/// The scoring cases of the shared folder (`../shared/cases/scoring/`)
/// themselves, where they are: a case added there runs before it is
/// copied into `tests/cases/`.
#[test]
fn every_shared_scoring_case_passes_through_the_cli() {
    let Some(shared_cases) = shared::folder(&CASES) else {
        return;
    };
    scoring_cases_pass(&shared_cases.join("scoring"));
}

#[test]
fn registry_corpus_parses_exactly_as_the_case_says() {
    let Some(corpus) = shared::folder(&REGISTRY_CORPUS) else {
        return;
    };
    // The case as the shared folder holds it (`../shared/cases/corpus/`),
    // else the repository's copy.
    let case_file = shared::folder(&CASES)
        .map(|c| c.join("corpus/okn-registry.json"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| cases().join("corpus/okn-registry.json"));
    let case: Value = serde_json::from_str(&std::fs::read_to_string(&case_file).unwrap()).unwrap();
    let expected = case["records"].as_array().unwrap();
    let output = okn()
        .args(["corpus", "list", "--format", "json", "--corpus"])
        .arg(&corpus)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        crate::support::stderr(&output)
    );
    let got: Vec<Value> = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(got.len(), 89);
    assert_eq!(got.len(), expected.len());
    let mut failures = Vec::new();
    for (want, have) in expected.iter().zip(&got) {
        for key in ["id", "tier", "tags", "summary", "form"] {
            if want[key] != have[key] {
                failures.push(format!(
                    "{}: {key}\n  want {}\n  got  {}",
                    want["id"], want[key], have[key]
                ));
            }
        }
        assert!(have["path"].as_str().unwrap().ends_with(".rq"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
