//! `okn-benchmark reference` and `selfcheck` on the demo stack, through the
//! real binary: ground truth for all 36 demo records from the embedded
//! store, reuse, per-record staleness, subsets, and bad input.

use std::path::Path;

use crate::support::{okn, okn_in, repo, stderr, stdout, work_dir};

/// A scratch copy of the demo stack with the repository's config file.
fn demo_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in walkdir::WalkDir::new(repo().join("demo")) {
        let entry = entry.unwrap();
        let relative = entry.path().strip_prefix(repo()).unwrap();
        let target = dir.path().join(relative);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else if !relative
            .components()
            .any(|c| c.as_os_str() == "ground-truth")
        {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
    std::fs::copy(
        repo().join("okn-benchmark.toml"),
        dir.path().join("okn-benchmark.toml"),
    )
    .unwrap();
    dir
}

fn reference(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = okn_in(dir).arg("reference").args(args).output().unwrap();
    let code = out.status.code().unwrap();
    (code, format!("{}{}", stdout(&out), stderr(&out)))
}

fn summary(text: &str) -> &str {
    text.lines()
        .find(|l| l.contains(" records: "))
        .unwrap_or("")
}

#[test]
fn all_36_demo_records_build_from_the_embedded_store_then_reuse() {
    let dir = demo_copy();
    let corpora = [
        "demo/benchmarks-single",
        "demo/benchmarks-cross",
        "demo/benchmarks-ontology",
    ];
    for corpus in corpora {
        let (code, text) = reference(dir.path(), &["--corpus", corpus]);
        assert_eq!(code, 0, "{text}");
        assert!(
            summary(&text).starts_with("12 records: 12 built, 0 reused, 0 stale"),
            "{text}"
        );
    }
    for corpus in corpora {
        let (code, text) = reference(dir.path(), &["--corpus", corpus]);
        assert_eq!(code, 0, "{text}");
        assert!(
            summary(&text).starts_with("12 records: 0 built, 12 reused, 0 stale"),
            "{text}"
        );
    }
    // What was built is what the repository holds, byte for byte.
    for corpus in corpora {
        let built = dir.path().join(corpus).join("ground-truth");
        for entry in std::fs::read_dir(&built).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap();
            let committed = repo().join(corpus).join("ground-truth").join(name);
            assert_eq!(
                std::fs::read(&path).unwrap(),
                std::fs::read(&committed).unwrap_or_default(),
                "{} differs from the committed ground truth: run reference and commit",
                committed.display()
            );
        }
    }
}

#[test]
fn editing_one_answer_key_rebuilds_that_record_alone() {
    let dir = demo_copy();
    let corpus = "demo/benchmarks-cross";
    reference(dir.path(), &["--corpus", corpus]);
    let path = dir
        .path()
        .join(corpus)
        .join("fiokg-spoke-okn-landfill-counties_cross.rq");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!("{text}\n# a comment is part of the key text\n"),
    )
    .unwrap();
    let (code, out) = reference(dir.path(), &["--corpus", corpus]);
    assert_eq!(code, 0, "{out}");
    assert!(
        summary(&out).starts_with("12 records: 0 built, 11 reused, 1 stale"),
        "{out}"
    );
    assert!(
        out.contains("rebuilt  fiokg-spoke-okn-landfill-counties_cross")
            && out.contains("(answer key changed)"),
        "{out}"
    );
    // Editing the prose alone changes no answer key.
    let path = dir
        .path()
        .join(corpus)
        .join("fiokg-spatialkg-maine-paper-mills_cross.rq");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replacen("#+ summary: ", "#+ summary: Reworded. ", 1),
    )
    .unwrap();
    let (_, out) = reference(dir.path(), &["--corpus", corpus]);
    assert!(
        summary(&out).starts_with("12 records: 0 built, 12 reused"),
        "{out}"
    );
}

#[test]
fn a_subset_run_never_reports_the_others_stale() {
    let dir = demo_copy();
    let corpus = "demo/benchmarks-single";
    let (code, out) = reference(dir.path(), &["--corpus", corpus, "--limit", "3"]);
    assert_eq!(code, 0, "{out}");
    assert!(summary(&out).starts_with("3 records: 3 built"), "{out}");
    let (_, out) = reference(
        dir.path(),
        &["--corpus", corpus, "--exclude", "spoke-okn-*"],
    );
    assert!(
        summary(&out).starts_with("7 records: 4 built, 3 reused, 0 stale"),
        "{out}"
    );
    let (_, out) = reference(dir.path(), &["--corpus", corpus]);
    assert!(
        summary(&out).starts_with("12 records: 5 built, 7 reused, 0 stale"),
        "{out}"
    );
}

#[test]
fn changing_the_data_makes_every_record_stale() {
    let dir = demo_copy();
    let corpus = "demo/benchmarks-ontology";
    reference(dir.path(), &["--corpus", corpus]);
    let data = dir.path().join("demo/kg/spatialkg.ttl");
    let text = std::fs::read_to_string(&data).unwrap();
    std::fs::write(&data, format!("{text}\n# touched\n")).unwrap();
    let (code, out) = reference(dir.path(), &["--corpus", corpus]);
    assert_eq!(code, 0, "{out}");
    assert!(
        summary(&out).starts_with("12 records: 0 built, 0 reused, 12 stale"),
        "{out}"
    );
    assert!(out.contains("(endpoint changed)"), "{out}");
}

#[test]
fn the_repository_config_names_the_demo_kg() {
    // From the repository root, a bare --corpus uses okn-benchmark.toml.
    let scratch = tempfile::tempdir().unwrap();
    let out = okn()
        .args([
            "reference",
            "--corpus",
            "demo/benchmarks-cross",
            "--limit",
            "2",
            "--ground-truth",
        ])
        .arg(scratch.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            scratch
                .path()
                .join("biobricks-ice-spoke-okn-breast-cancer-assays_cross.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(meta["endpoint"]["location"], "demo/kg");
    assert_eq!(meta["endpoint"]["kind"], "embedded");
    assert_eq!(meta["ordered"], false);
}

#[test]
fn no_endpoint_anywhere_says_how_to_set_one() {
    let dir = work_dir(&[("c/a_x.rq", "#+ summary: A.\nSELECT * {}\n")]);
    let (code, out) = reference(dir.path(), &["--corpus", "c"]);
    assert_eq!(code, 2);
    assert!(
        out.starts_with("error: no SPARQL endpoint: pass --endpoint URL|PATH"),
        "{out}"
    );
}

#[test]
fn turtle_without_a_graph_mapping_is_named_with_the_fix() {
    let dir = work_dir(&[
        ("c/a_x.rq", "#+ summary: A.\nSELECT * {}\n"),
        ("data/x.ttl", "<http://a> <http://b> <http://c> .\n"),
    ]);
    let (code, out) = reference(dir.path(), &["--corpus", "c", "--endpoint", "data"]);
    assert_eq!(code, 2);
    assert!(
        out.contains(
            "data/x.ttl: no named graph for these triples: write the graph IRI into x.ttl.graph"
        ),
        "{out}"
    );
}

#[test]
fn malformed_data_names_the_file_and_line() {
    let dir = work_dir(&[
        ("c/a_x.rq", "#+ summary: A.\nSELECT * {}\n"),
        (
            "data/x.ttl",
            "<http://a> <http://b> <http://c> .\n<http://a> <http://b> .\n",
        ),
        ("data/global.graph", "https://purl.org/okn/frink/kg/x\n"),
    ]);
    let (code, out) = reference(dir.path(), &["--corpus", "c", "--endpoint", "data"]);
    assert_eq!(code, 2);
    assert!(out.starts_with("error: data/x.ttl:2:"), "{out}");
    assert!(!dir.path().join("c/ground-truth").exists());
}

#[test]
fn a_hand_edited_ground_truth_is_stale() {
    let dir = demo_copy();
    let corpus = "demo/benchmarks-single";
    reference(dir.path(), &["--corpus", corpus, "--limit", "1"]);
    let csv = dir
        .path()
        .join(corpus)
        .join("ground-truth/biobricks-ice-active-chemicals_single.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(&csv, text.replacen('\n', "\nextra,row,,\n", 1)).unwrap();
    let (code, out) = okn_in(dir.path())
        .args(["selfcheck", "--corpus", corpus, "--limit", "1"])
        .output()
        .map(|o| (o.status.code().unwrap(), stderr(&o)))
        .unwrap();
    assert_eq!(code, 2);
    assert!(out.contains("changed since 'reference' wrote it"), "{out}");
    let (_, out) = reference(dir.path(), &["--corpus", corpus, "--limit", "1"]);
    assert!(out.contains("(the CSV was edited by hand)"), "{out}");
}

#[test]
fn selfcheck_passes_on_every_demo_corpus_and_needs_ground_truth_first() {
    let dir = demo_copy();
    let out = okn_in(dir.path())
        .args(["selfcheck", "--corpus", "demo/benchmarks-cross"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("run 'okn-benchmark reference --corpus demo/benchmarks-cross' first")
    );
    for corpus in [
        "demo/benchmarks-single",
        "demo/benchmarks-cross",
        "demo/benchmarks-ontology",
    ] {
        reference(dir.path(), &["--corpus", corpus]);
        let out = okn_in(dir.path())
            .args(["selfcheck", "--corpus", corpus])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
        let text = stdout(&out);
        assert!(
            text.lines().last().unwrap().ends_with(", 0 findings"),
            "{text}"
        );
        assert_eq!(
            text.lines().filter(|l| l.starts_with("ok ")).count(),
            12,
            "{text}"
        );
    }
}

#[test]
fn selfcheck_expects_the_fallbacks_where_the_guards_withdraw() {
    // Two key IRIs share a local name, and the two decimals are too close to
    // snap: the checks expect the fallbacks (shortened IRIs and coarser
    // decimals then fail), so the scorer and the checks agree.
    let dir = work_dir(&[
        (
            "c/a_x.rq",
            "#+ summary: A.\nSELECT ?s ?v WHERE { ?s <http://ex.org/v> ?v } ORDER BY ?v\n",
        ),
        (
            "data.nq",
            "<http://a.org/x/1> <http://ex.org/v> \"1.00001\"^^<http://www.w3.org/2001/XMLSchema#decimal> <http://g> .\n<http://b.org/y/1> <http://ex.org/v> \"1.00002\"^^<http://www.w3.org/2001/XMLSchema#decimal> <http://g> .\n",
        ),
    ]);
    let (code, out) = reference(dir.path(), &["--corpus", "c", "--endpoint", "data.nq"]);
    assert_eq!(code, 0, "{out}");
    let out = okn_in(dir.path())
        .args(["selfcheck", "--corpus", "c"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("ok    a_x  (7 checks)"),
        "{}",
        stdout(&out)
    );
}
