//! `okn-benchmark reference` and `selfcheck` on the demo stack, through the
//! real binary: ground truth for all 36 demo records from the embedded
//! store, reuse, per-record staleness, subsets, and bad input.

use std::path::Path;

use crate::support::{Test, repo, work_dir};

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

/// `reference ARGS`, run in `dir`.
fn reference(dir: &Path, args: &[&str]) -> Test {
    Test::new().current_dir(dir).arg("reference").args(args)
}

/// `selfcheck ARGS`, run in `dir`.
fn selfcheck(dir: &Path, args: &[&str]) -> Test {
    Test::new().current_dir(dir).arg("selfcheck").args(args)
}

/// The closing line of `reference` (`N records: N built, ...`); the lines
/// above it carry timings.
#[track_caller]
fn summary(dir: &Path, args: &[&str]) -> String {
    let out = reference(dir, args).run();
    out.stdout
        .lines()
        .find(|l| l.contains(" records: "))
        .unwrap_or_else(|| panic!("no summary line:\n{}", out.stdout))
        .to_string()
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
        assert_eq!(
            summary(dir.path(), &["--corpus", corpus]),
            format!(
                "12 records: 12 built, 0 reused, 0 stale (rebuilt), 0 forced, 0 failed; ground truth in {corpus}/ground-truth"
            )
        );
    }
    for corpus in corpora {
        assert_eq!(
            summary(dir.path(), &["--corpus", corpus]),
            format!(
                "12 records: 0 built, 12 reused, 0 stale (rebuilt), 0 forced, 0 failed; ground truth in {corpus}/ground-truth"
            )
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
    reference(dir.path(), &["--corpus", corpus]).run();
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
    let out = reference(dir.path(), &["--corpus", corpus])
        .stdout_contains("12 records: 0 built, 11 reused, 1 stale (rebuilt), 0 forced, 0 failed;")
        .run();
    let rebuilt: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains(" rebuilt "))
        .collect();
    assert_eq!(rebuilt.len(), 1, "{}", out.stdout);
    assert!(
        rebuilt[0].contains("rebuilt  fiokg-spoke-okn-landfill-counties_cross")
            && rebuilt[0].contains("(answer key changed)"),
        "{}",
        out.stdout
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
    let line = summary(dir.path(), &["--corpus", corpus]);
    assert!(
        line.starts_with("12 records: 0 built, 12 reused, 0 stale"),
        "{line}"
    );
}

#[test]
fn a_subset_run_never_reports_the_others_stale() {
    let dir = demo_copy();
    let corpus = "demo/benchmarks-single";
    for (args, want) in [
        (
            &["--limit", "3"][..],
            "3 records: 3 built, 0 reused, 0 stale",
        ),
        (
            &["--exclude", "spoke-okn-*"][..],
            "7 records: 4 built, 3 reused, 0 stale",
        ),
        (&[][..], "12 records: 5 built, 7 reused, 0 stale"),
    ] {
        let line = summary(dir.path(), &[&["--corpus", corpus][..], args].concat());
        assert!(line.starts_with(want), "{args:?}: {line}");
    }
}

#[test]
fn changing_the_data_makes_every_record_stale() {
    let dir = demo_copy();
    let corpus = "demo/benchmarks-ontology";
    reference(dir.path(), &["--corpus", corpus]).run();
    let data = dir.path().join("demo/kg/spatialkg.ttl");
    let text = std::fs::read_to_string(&data).unwrap();
    std::fs::write(&data, format!("{text}\n# touched\n")).unwrap();
    let out = reference(dir.path(), &["--corpus", corpus])
        .stdout_contains("12 records: 0 built, 0 reused, 12 stale (rebuilt), 0 forced, 0 failed;")
        .run();
    assert_eq!(
        out.stdout.matches("(endpoint changed)").count(),
        12,
        "{}",
        out.stdout
    );
}

#[test]
fn the_repository_config_names_the_demo_kg() {
    // From the repository root, a bare --corpus uses okn-benchmark.toml.
    let scratch = tempfile::tempdir().unwrap();
    Test::in_repo()
        .args([
            "reference",
            "--corpus",
            "demo/benchmarks-cross",
            "--limit",
            "2",
        ])
        .arg("--ground-truth")
        .arg(scratch.path())
        .stdout_contains("\n2 records: 2 built, 0 reused")
        .run();
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
    let out = Test::new()
        .write("c/a_x.rq", "#+ summary: A.\nSELECT * {}\n")
        .args(["reference", "--corpus", "c"])
        .stdout("")
        .status(2)
        .run();
    assert!(
        out.stderr
            .starts_with("error: no SPARQL endpoint: pass --endpoint URL|PATH"),
        "{}",
        out.stderr
    );
}

#[test]
fn turtle_without_a_graph_mapping_is_named_with_the_fix() {
    Test::new()
        .write("c/a_x.rq", "#+ summary: A.\nSELECT * {}\n")
        .write("data/x.ttl", "<http://a> <http://b> <http://c> .\n")
        .args(["reference", "--corpus", "c", "--endpoint", "data"])
        .stderr_contains(
            "data/x.ttl: no named graph for these triples: write the graph IRI into x.ttl.graph",
        )
        .status(2)
        .run();
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
    let out = reference(dir.path(), &["--corpus", "c", "--endpoint", "data"])
        .stdout("")
        .status(2)
        .run();
    assert!(
        out.stderr.starts_with("error: data/x.ttl:2:"),
        "{}",
        out.stderr
    );
    assert!(!dir.path().join("c/ground-truth").exists());
}

#[test]
fn a_hand_edited_ground_truth_is_stale() {
    let dir = demo_copy();
    let corpus = "demo/benchmarks-single";
    reference(dir.path(), &["--corpus", corpus, "--limit", "1"]).run();
    let csv = dir
        .path()
        .join(corpus)
        .join("ground-truth/biobricks-ice-active-chemicals_single.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(&csv, text.replacen('\n', "\nextra,row,,\n", 1)).unwrap();
    selfcheck(dir.path(), &["--corpus", corpus, "--limit", "1"])
        .stderr_contains("changed since 'reference' wrote it")
        .status(2)
        .run();
    reference(dir.path(), &["--corpus", corpus, "--limit", "1"])
        .stdout_contains("(the CSV was edited by hand)")
        .stdout_contains("1 record: 0 built, 0 reused, 1 stale")
        .run();
}

#[test]
fn selfcheck_passes_on_every_demo_corpus_and_needs_ground_truth_first() {
    let dir = demo_copy();
    selfcheck(dir.path(), &["--corpus", "demo/benchmarks-cross"])
        .stderr_contains("run 'okn-benchmark reference --corpus demo/benchmarks-cross' first")
        .status(2)
        .run();
    for (corpus, checks) in [
        ("demo/benchmarks-single", 72),
        ("demo/benchmarks-cross", 70),
        ("demo/benchmarks-ontology", 67),
    ] {
        reference(dir.path(), &["--corpus", corpus]).run();
        let out = selfcheck(dir.path(), &["--corpus", corpus])
            .stdout_contains(format!("\n12 records, {checks} checks, 0 findings\n"))
            .run();
        let text = &out.stdout;
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
    reference(dir.path(), &["--corpus", "c", "--endpoint", "data.nq"]).run();
    selfcheck(dir.path(), &["--corpus", "c"])
        .stdout("ok    a_x  (7 checks)\n1 record, 7 checks, 0 findings\n")
        .run();
}

#[test]
fn report_and_rescore_say_when_the_ground_truth_a_root_was_judged_by_was_last_verified() {
    let dir = demo_copy();
    crate::support::fixture::copy_dir(&repo().join("runs-expert-cross"), &dir.path().join("runs"));
    let corpus = "demo/benchmarks-cross";
    let gt = "demo/benchmarks-cross/ground-truth";
    reference(dir.path(), &["--corpus", corpus]).run();
    let report = || Test::new().current_dir(dir.path()).args(["report", "runs"]);
    let rescore = || {
        Test::new()
            .current_dir(dir.path())
            .args(["rescore", "runs"])
    };
    let never = format!(
        "\nground truth ({gt}): never verified against its endpoint ('okn-benchmark reference \
         --corpus {corpus} --verify' checks it)\n"
    );
    // Compared whatever width the terminal lines were wrapped at.
    for args in [["report", "runs"], ["rescore", "runs"]] {
        let o = crate::support::okn_in(dir.path())
            .args(args)
            .output()
            .unwrap();
        let printed = crate::support::flat(&crate::support::stdout(&o));
        assert!(
            printed.contains(&crate::support::flat(&never)),
            "{args:?}: {printed}"
        );
    }
    // The date is said on the terminal only, never in the generated files.
    let readme = std::fs::read_to_string(dir.path().join("runs/README.md")).unwrap();
    assert!(!readme.contains("verified"), "{readme}");

    reference(
        dir.path(),
        &["--corpus", corpus, "--verify", "--limit", "4"],
    )
    .stdout_contains("\n4 records verified: 4 same, 0 differ, 0 unchecked, 0 failed;")
    .run();
    let partly = report().run();
    let line = ground_truth_line(&partly.stdout);
    assert!(
        line.starts_with(&format!("ground truth ({gt}): last verified 20")),
        "{line}"
    );
    assert!(
        line.ends_with(": 4 of 12 questions, all matched; 8 never verified")
            && line.contains(" against demo/kg (oxigraph/"),
        "{line}"
    );
    reference(dir.path(), &["--corpus", corpus, "--verify"]).run();
    for cmd in [report(), rescore()] {
        let out = cmd.run();
        let line = ground_truth_line(&out.stdout);
        assert!(
            line.ends_with(": 12 of 12 questions, all matched"),
            "{line}"
        );
        assert!(!out.stdout.contains("never verified"), "{}", out.stdout);
    }

    // The data changes under one answer key: --verify names it with its
    // rows (and notes that `reference` would rebuild it), and the root's
    // report says which of its questions the endpoint no longer answers.
    let id = "spoke-okn-biobricks-ice-cyp1a1-lowest-ac50_cross";
    let data = dir.path().join("demo/kg/spoke-okn.ttl");
    let text = std::fs::read_to_string(&data).unwrap();
    std::fs::write(
        &data,
        text.replacen(
            "rdfs:label \"Chlorpyrifos\" ;",
            "rdfs:label \"Chlorpyrifos-ethyl\" ;",
            1,
        ),
    )
    .unwrap();
    let out = reference(dir.path(), &["--corpus", corpus, "--verify"])
        .status(1)
        .stdout_contains(format!("] DIFFERS    {id}  "))
        .stdout_contains("  +1 -1 rows (1 cached, 1 now)\n")
        .stdout_contains("\nnote: the ground truth of 12 of these records was built from another endpoint, or other data, than this one: 'okn-benchmark reference' would rebuild them\n")
        .stdout_contains("\n    - Chlorpyrifos,http://identifiers.org/cas/2921-88-2,7.2\n    + Chlorpyrifos-ethyl,http://identifiers.org/cas/2921-88-2,7.2\n")
        .run();
    assert!(
        out.stdout
            .contains(" same, 1 differ, 0 unchecked, 0 failed;"),
        "{}",
        out.stdout
    );
    let out = report().run();
    let line = ground_truth_line(&out.stdout);
    assert!(
        line.ends_with(&format!(
            ": 12 of 12 questions, 1 differed ({id}): the endpoint no longer answers the rows they \
             were judged by"
        )),
        "{line}"
    );
}

#[test]
fn verify_names_what_it_cannot_check_and_refuses_force() {
    let dir = demo_copy();
    let corpus = "demo/benchmarks-single";
    reference(dir.path(), &["--corpus", corpus, "--limit", "2"]).run();
    let out = reference(
        dir.path(),
        &["--corpus", corpus, "--limit", "3", "--verify"],
    )
    .status(1)
    .stdout_contains("\n3 records verified: 2 same, 0 differ, 1 unchecked, 0 failed;")
    .run();
    let unchecked: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("UNCHECKED"))
        .collect();
    assert_eq!(unchecked.len(), 1, "{}", out.stdout);
    assert!(
        unchecked[0].ends_with("no cached ground truth: run 'okn-benchmark reference' to build it"),
        "{}",
        out.stdout
    );
    // An edited answer key's ground truth is not checked against the new key.
    let path = dir
        .path()
        .join(corpus)
        .join("biobricks-ice-active-chemicals_single.rq");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}\n# edited\n")).unwrap();
    reference(dir.path(), &["--corpus", corpus, "--limit", "1", "--verify"])
        .status(1)
        .stdout_contains("UNCHECKED  biobricks-ice-active-chemicals_single  its answer key was edited after its ground truth was built: run 'okn-benchmark reference' to rebuild it\n")
        .run();
    // Nothing to check: nothing is logged, no folder is made.
    let empty = work_dir(&[
        ("c/a_x.rq", "#+ summary: A.\nSELECT * {}\n"),
        ("data.nq", "<http://a> <http://b> <http://c> <http://g> .\n"),
    ]);
    reference(empty.path(), &["--corpus", "c", "--endpoint", "data.nq", "--verify"])
        .status(1)
        .stdout_contains("1 record verified: 0 same, 0 differ, 1 unchecked, 0 failed; ground truth in c/ground-truth left as it was\n")
        .run();
    assert!(!empty.path().join("c/ground-truth").exists());
    reference(dir.path(), &["--corpus", corpus, "--verify", "--force"])
        .status(2)
        .stderr_contains("--force")
        .run();
}

mod regression {
    //! One test per fixed defect, named after what it guards; the comment
    //! says what broke.

    use super::*;

    /// Issue 24, item 19: an answer key with about 5,000 nested
    /// parentheses overflowed the parser's stack and aborted `reference`
    /// (SIGABRT). A key nested past the bound, or a chain of operators past
    /// it, is refused by name (file and line), exit 2, and the other keys
    /// are built.
    #[test]
    fn a_deeply_nested_or_very_long_answer_key_is_refused_naming_it_not_an_abort() {
        let nested = format!(
            "#+ summary: Deep.\nSELECT * WHERE {{\n  FILTER({}1{})\n}}\n",
            "(".repeat(5000),
            ")".repeat(5000)
        );
        let chain = format!(
            "#+ summary: Long.\nSELECT ?x WHERE {{ BIND(1{} AS ?x) }}\n",
            "+1".repeat(20_000)
        );
        let dir = work_dir(&[
            ("c/a_x.rq", "#+ summary: A.\nSELECT (1 AS ?one) WHERE {}\n"),
            ("c/deep_x.rq", nested.as_str()),
            ("c/long_x.rq", chain.as_str()),
            ("data/x.nt", "<http://a> <http://b> <http://c> .\n"),
            ("data/global.graph", "https://purl.org/okn/frink/kg/x\n"),
        ]);
        let out = reference(dir.path(), &["--corpus", "c", "--endpoint", "data"])
            .stderr("error: 2 answer keys failed; nothing was written for them\n")
            .status(2)
            .run();
        assert!(
            out.stdout.contains(
                "FAILED   deep_x  c/deep_x.rq:3: the query nests brackets ( [ { more than 64 deep; it was not parsed"
            ),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout.contains(
                "FAILED   long_x  c/long_x.rq:2: the query has more than 4000 tokens outside VALUES data"
            ),
            "{}",
            out.stdout
        );
        assert!(out.stdout.contains("3 records: 1 built"), "{}", out.stdout);
        assert!(dir.path().join("c/ground-truth/a_x.csv").is_file());
    }

    // The progress column shifted by one at [10/12].
    #[test]
    fn the_progress_columns_stay_put_past_nine_records() {
        let dir = tempfile::tempdir().unwrap();
        let out = Test::in_repo()
            .args([
                "reference",
                "--corpus",
                "demo/benchmarks-cross",
                "--ground-truth",
            ])
            .arg(dir.path())
            .run();
        let lines: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with('[')).collect();
        assert_eq!(lines.len(), 12, "{}", out.stdout);
        assert!(lines[0].starts_with("[ 1/12] built    "), "{}", out.stdout);
        assert!(lines[9].starts_with("[10/12] built    "), "{}", out.stdout);
        // What follows the counter starts in one column on every line.
        assert!(
            lines.iter().all(|l| l.find(" built ") == Some(7)),
            "{}",
            out.stdout
        );
    }
}

/// The ground-truth line `report` and `rescore` print, its continuation
/// lines joined again: it is wrapped to fit 100 columns (issue 26,
/// section 3), each continuation indented two spaces.
fn ground_truth_line(stdout: &str) -> String {
    let mut lines = stdout
        .lines()
        .skip_while(|l| !l.starts_with("ground truth ("));
    let mut line = lines
        .next()
        .unwrap_or_else(|| panic!("no ground-truth line:\n{stdout}"))
        .to_string();
    for more in lines.take_while(|l| l.starts_with("  ")) {
        line.push(' ');
        line.push_str(more.trim());
    }
    line
}
