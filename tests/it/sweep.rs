//! Sharded sweeps (`run --shard K/N`) and `merge`, through the real binary:
//! the scripted agent (no model) drives the real proxy in front of the real
//! demo KG server over stdio, one server per episode (`docs/SCALING.md`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{okn, snapshot, stderr, stdout};
use serde_json::Value;

/// The sweep every test here plays: 12 questions × 3 attempts.
const SWEEP: &[&str] = &[
    "run",
    "--corpus",
    "demo/benchmarks-single",
    "--tools",
    "all-tools",
    "--kg-hint",
    "tags",
    "--profile",
    "profiles/demo-kg.local.toml",
    "--agent",
    "scripted:mixed:11",
    "--repeat",
    "3",
];

const CONDITION: &str = "demo-kg-all-tools__kg-named";

fn sweep(out: &Path, extra: &[&str]) -> Output {
    okn()
        .args(SWEEP)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// `okn-benchmark compare ARGS...` from the repository folder.
fn compare(args: &[&str]) -> Output {
    okn().arg("compare").args(args).output().unwrap()
}

fn merge(out: &Path, shards: &[PathBuf]) -> Output {
    okn()
        .arg("merge")
        .arg("--out")
        .arg(out)
        .args(shards)
        .output()
        .unwrap()
}

/// The three shards of the sweep played at once, as three processes, each
/// into its own root beside `dir/serial`'s depth (command.txt records
/// paths relative to the attempt folder).
fn three_shards(dir: &Path) -> Vec<PathBuf> {
    let roots: Vec<PathBuf> = (1..=3).map(|k| dir.join(format!("shard{k}"))).collect();
    let children: Vec<_> = roots
        .iter()
        .enumerate()
        .map(|(i, root)| {
            std::process::Command::new(env!("CARGO_BIN_EXE_okn-benchmark"))
                .current_dir(crate::support::repo())
                .env_remove("XDG_CACHE_HOME")
                .args(SWEEP)
                .arg("--out")
                .arg(root)
                .arg("--shard")
                .arg(format!("{}/3", i + 1))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    }
    roots
}

/// The members that hold a time measured now: the only ones a sharded
/// sweep may record differently from a serial one.
const MEASURED: &[&str] = &[
    "wall_s",
    "server_s",
    "start_s",
    "duration_s",
    "duration_ms",
    "mean_wall_s",
    "mean_server_s",
];

/// `value` with every measured time set to null, and `shards` (the
/// identity member a serial run lacks) removed.
fn without_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("shards");
            for (key, member) in map.iter_mut() {
                if MEASURED.contains(&key.as_str()) {
                    *member = Value::Null;
                } else {
                    without_times(member);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(without_times),
        _ => {}
    }
}

/// A CSV with its `wall_s` and `server_s` cells blanked.
fn csv_without_times(text: &str) -> String {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let at: Vec<usize> = ["wall_s", "server_s"]
        .iter()
        .filter_map(|c| header.iter().position(|h| h == c))
        .collect();
    let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let mut out = header.join(",");
    for record in reader.records() {
        let mut cells: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        for &i in &at {
            cells[i].clear();
        }
        out.push('\n');
        out.push_str(&cells.join("|"));
    }
    out
}

/// Every file of a runs root by its path inside it, its measured times
/// taken out; the generated README (whose table shows the times, and
/// whose title is the folder's name) is left out.
fn comparable(root: &Path) -> BTreeMap<PathBuf, String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .filter(|e| !e.file_name().to_string_lossy().starts_with("README"))
        .map(|e| {
            let relative = e.path().strip_prefix(root).unwrap().to_path_buf();
            let text = std::fs::read_to_string(e.path()).unwrap();
            let text = match e.path().extension().and_then(|x| x.to_str()) {
                Some("json") => {
                    // agent.json is one JSON line; the others are pretty.
                    let mut value: Value = serde_json::from_str(&text).unwrap();
                    without_times(&mut value);
                    serde_json::to_string_pretty(&value).unwrap()
                }
                Some("csv") if relative.ends_with("summary.csv") => csv_without_times(&text),
                _ => text,
            };
            (relative, text)
        })
        .collect()
}

fn assert_same_roots(serial: &Path, merged: &Path) {
    let (a, b) = (comparable(serial), comparable(merged));
    let names = |m: &BTreeMap<PathBuf, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b), "the two roots hold different files");
    assert!(a.len() > 12 * 3 * 6, "{} files", a.len());
    for (path, text) in &a {
        assert_eq!(
            text,
            &b[path],
            "{} differs beyond the measured times",
            path.display()
        );
    }
}

/// The sweep run serially and as three concurrent shard processes, merged,
/// is the same root file by file apart from the times measured; the merge
/// is idempotent; and each shard played its slice, one question at a time.
#[test]
fn three_concurrent_shards_merge_into_the_serial_root() {
    let dir = tempfile::tempdir().unwrap();
    let serial = dir.path().join("serial");
    let output = sweep(&serial, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let shards = three_shards(dir.path());
    // Shard 2 of 3 holds attempt 2 of every question (pair p = position × 3
    // + attempt − 1) and records its slice and shards: 3.
    let condition: Value = serde_json::from_str(
        &std::fs::read_to_string(
            shards[1]
                .join("conditions")
                .join(format!("{CONDITION}.json")),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(condition["identity"]["shards"], 3);
    assert_eq!(condition["shard"]["index"], 2);
    assert_eq!(
        condition["shard"]["questions"].as_array().unwrap().len(),
        12
    );
    assert_eq!(condition["aggregate"]["attempts"], 12);
    let attempts: Vec<String> = walkdir::WalkDir::new(&shards[1])
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| {
            e.file_type().is_dir() && e.file_name().to_string_lossy().starts_with("attempt-")
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(attempts.len(), 12);
    assert!(attempts.iter().all(|a| a == "attempt-2"), "{attempts:?}");

    let merged = dir.path().join("merged");
    let output = merge(&merged, &shards);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains(&format!(
            "merged 3 roots into {}: 36 attempt folders copied, 0 already there\n  {CONDITION}: 36 of 36 attempts\n",
            merged.display()
        )),
        "{}",
        stdout(&output)
    );
    assert_same_roots(&serial, &merged);
    let readme = std::fs::read_to_string(merged.join("README.md")).unwrap();
    assert!(
        readme.contains("were taken with 3 shards in parallel against one server"),
        "{readme}"
    );
    assert!(
        !std::fs::read_to_string(serial.join("README.md"))
            .unwrap()
            .contains("shards")
    );
    // The terminal report and the site page of the root say so too.
    let report = okn().arg("report").arg(&merged).output().unwrap();
    assert!(
        stdout(&report).contains("were taken with 3 shards in parallel against one server"),
        "{}",
        stdout(&report)
    );
    let built = crate::support::okn_in(dir.path())
        .arg("build")
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", stderr(&built));
    let page = std::fs::read_to_string(dir.path().join("site/roots/merged/index.html")).unwrap();
    assert!(page.contains("were taken with 3 shards in parallel against one server"));
    let page = std::fs::read_to_string(dir.path().join("site/roots/serial/index.html")).unwrap();
    assert!(!page.contains("shards in parallel"));

    // Idempotent: merging again writes the same bytes.
    let before = snapshot(&merged);
    let output = merge(&merged, &shards);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("0 attempt folders copied, 36 already there"));
    assert_eq!(before, snapshot(&merged));

    // A merge killed before it wrote conditions/ (an answer cut short, no
    // condition file, no README) is completed by merging again.
    let killed = dir.path().join("killed");
    assert!(merge(&killed, &shards).status.success());
    let clean = snapshot(&killed);
    for top in ["conditions", "README.md", "summary.csv"] {
        let path = killed.join(top);
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
    let answer = killed
        .join("biobricks-ice-active-chemicals_single_results")
        .join(CONDITION)
        .join("attempt-2")
        .join("answer.csv");
    std::fs::write(&answer, "cut sh").unwrap();
    let output = merge(&killed, &shards);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(clean, snapshot(&killed));
}

/// A shard not given is named with the attempts it holds, exit 1; `run
/// --resume` on the merged root, without --shard, plays exactly those and
/// leaves the serial root's contents.
#[test]
fn missing_attempts_are_named_and_resume_plays_exactly_those() {
    let dir = tempfile::tempdir().unwrap();
    let shards = three_shards(dir.path());
    let merged = dir.path().join("merged");
    let output = merge(&merged, &shards[..2]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(stdout(&output).contains(&format!("{CONDITION}: 24 of 36 attempts")));
    assert!(
        err.contains(&format!("{CONDITION}: no input is shard 3 of its sweep")),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{CONDITION}: 12 attempts missing: biobricks-ice-active-chemicals_single attempt 3, "
        )),
        "{err}"
    );
    assert!(err.contains("--resume"), "{err}");

    let output = sweep(&merged, &["--resume"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains(&format!("{CONDITION}: 12 questions, 12 ran, 24 resumed")),
        "{}",
        stdout(&output)
    );
    let condition: Value = serde_json::from_str(
        &std::fs::read_to_string(merged.join("conditions").join(format!("{CONDITION}.json")))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        condition["identity"]["shards"], 3,
        "a merged condition stays sharded"
    );
    assert_eq!(condition["aggregate"]["attempts"], 36);
    let serial = dir.path().join("serial");
    assert!(sweep(&serial, &[]).status.success());
    assert_same_roots(&serial, &merged);
}

/// Edits `path` (a JSON file) with `f`.
/// Every `episode.json` under `root`.
fn episodes(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.file_name().is_some_and(|n| n == "episode.json") {
                found.push(path);
            }
        }
    }
    found
}

fn edit(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(&mut value);
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

/// Each mismatch is refused with exit 2, naming the file and the field,
/// and nothing is written.
#[test]
fn merge_refuses_shards_that_are_not_of_one_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let shards = three_shards(dir.path());
    let condition = |root: &Path| root.join("conditions").join(format!("{CONDITION}.json"));
    let question = "biobricks-ice-active-chemicals_single_results";
    type Edit = Box<dyn Fn(&Path) -> PathBuf>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "identity",
            Box::new(move |root| {
                let path = condition(root);
                edit(&path, |v| {
                    v["identity"]["agent"] = "scripted:mixed:99".into()
                });
                // And every episode of the shard, as if it had been played
                // so: an episode.json alone naming another agent than its
                // condition is refused before the shards are compared.
                for episode in episodes(root) {
                    edit(&episode, |v| v["agent"] = "scripted:mixed:99".into());
                }
                path
            }),
            "identity.agent is 'scripted:mixed:99', but",
        ),
        (
            "corpus commit",
            Box::new(move |root| {
                let path = condition(root);
                edit(&path, |v| v["settings"]["corpus_commit"] = "0123abc".into());
                path
            }),
            "settings.corpus_commit is \"0123abc\", but",
        ),
        (
            "scoring contract",
            Box::new(move |root| {
                let path = condition(root);
                edit(&path, |v| v["settings"]["numeric_rel_tol"] = 0.01.into());
                path
            }),
            "settings.numeric_rel_tol is 0.01, but",
        ),
        (
            "ground truth",
            Box::new(move |root| {
                let path = root.join(question).join("ground_truth.json");
                edit(&path, |v| v["fingerprint"] = "sha256:moved".into());
                path
            }),
            "fingerprint (the ground truth of biobricks-ice-active-chemicals_single) is sha256:moved, but",
        ),
    ];
    for (what, change, expected) in cases {
        let copy = dir
            .path()
            .join(format!("edited-{}", what.replace(' ', "-")));
        crate::support::fixture::copy_dir(&shards[2], &copy);
        let file = change(&copy);
        let out = dir.path().join(format!("out-{}", what.replace(' ', "-")));
        let output = merge(&out, &[shards[0].clone(), shards[1].clone(), copy]);
        assert_eq!(output.status.code(), Some(2), "{what}: {}", stderr(&output));
        let err = stderr(&output);
        assert!(err.contains(&file.display().to_string()), "{what}: {err}");
        assert!(err.contains(expected), "{what}: {err}");
        assert!(err.contains("not shards of one sweep"), "{what}: {err}");
        assert!(!out.exists(), "{what}: something was written");
    }

    // Overlapping attempts: shard 1 again, one answer changed.
    let again = dir.path().join("shard1-again");
    crate::support::fixture::copy_dir(&shards[0], &again);
    // Without its shard record (as a merged root of the same sweep holds
    // it), so the attempt, not the shard index, is what collides.
    edit(&condition(&again), |v| {
        v.as_object_mut().unwrap().remove("shard");
    });
    let answer = again
        .join(question)
        .join(CONDITION)
        .join("attempt-1")
        .join("answer.csv");
    // Other bytes, the same answer (CRLF line ends), as the episode's
    // calls.json records it: the shard stays whole (merge refuses a shard
    // whose verdicts or answer its files do not give), and only the
    // overlap differs.
    let text = std::fs::read_to_string(&answer).unwrap();
    crate::support::submitted_instead(answer.parent().unwrap(), &text.replace('\n', "\r\n"));
    let out = dir.path().join("out-overlap");
    let output = merge(&out, &[shards[0].clone(), again.clone()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("two shards played the same attempt"), "{err}");
    assert!(
        err.contains(
            &again
                .join(question)
                .join(CONDITION)
                .join("attempt-1")
                .display()
                .to_string()
        ),
        "{err}"
    );
    assert!(!out.exists());
    // The same shard given twice is named; an identical copy is no overlap.
    let output = merge(&out, &[shards[0].clone(), shards[0].clone()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("is given twice"),
        "{}",
        stderr(&output)
    );

    // A frozen target.
    let frozen = dir.path().join("frozen");
    assert!(merge(&frozen, &shards).status.success());
    let output = okn()
        .args(["freeze", "--reason", "published"])
        .arg(&frozen)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let before = snapshot(&frozen);
    let output = merge(&frozen, &shards);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("frozen"), "{}", stderr(&output));
    assert_eq!(before, snapshot(&frozen));
}

/// `--shard` refuses what is not K/N with 1 <= K <= N, before anything runs.
#[test]
fn a_shard_that_is_not_k_of_n_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["0/3", "4/3", "2", "1/4294967295"] {
        let output = sweep(&dir.path().join("r"), &["--shard", bad]);
        assert_eq!(output.status.code(), Some(2), "{bad}");
        let err = stderr(&output);
        assert!(
            err.contains("1 <= K <= N") || err.contains("at most 100000 shards"),
            "{bad}: {err}"
        );
    }
    assert!(!dir.path().join("r").exists());
}

/// `compare` over the published pair (`runs-expert-cross` against the
/// same seeds replayed on the server with `--row-limit 5`): the known
/// flips, the classes, the tests named, and `--fail-on-regression` both
/// ways (exit 1 for the pair; exit 0 for a root against itself).
#[test]
fn compare_names_the_known_flips_of_the_published_pair() {
    let output = compare(&["runs-expert-cross", "runs-expert-cross-row-limit"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    // The capped server cuts the three answers of more than 5 rows; the
    // baseline's exact attempts of them all turn inexact, and nothing
    // improves (the agent and its seeds are the same).
    for line in [
        // Printed as records (issue 26, section 3: within 100 columns).
        "  spoke-genelab-spoke-okn-spaceflight-disease-genes_cross\n    class regressed · attempts before → after ✓✓✓ → ✗✗✗ · exact before 1.00 · exact after 0.00\n    beyond repeats yes\n",
        "  spoke-genelab-ubergraph-anatomy-gene-counts_cross\n    class regressed · attempts before → after ✓✓✓ → ✗✗✗ · exact before 1.00 · exact after 0.00\n    beyond repeats yes\n",
        "  spatialkg-spoke-okn-place-density_cross\n    class regressed · attempts before → after ✗✓✓ → ✗✗✗ · exact before 0.67 · exact after 0.00\n    beyond repeats no\n",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    // Named by label, within 100 columns (issue 26, section 3).
    assert!(out.contains(
        "  demo-kg, all tools · KG named\n    questions 12 · regressed 3 · mixed 0 · improved 0 · unchanged 9 · not comparable 0\n    exact before → after 0.83 → 0.61 · Δ exact −0.22 · 95% paired bootstrap −0.44 to 0.00\n    McNemar p (b/c) 0.250 (3/0) · Δ mean F1 −0.07\n"
    ), "{out}");
    // place-density was flaky in the baseline (✗✓✓): regressed, but within
    // what its repeats explain.
    let joined = crate::support::flat(&out);
    assert!(joined.contains(
        "demo-kg, all tools · KG named: 2 questions regressed beyond what their repeats can explain: spoke-genelab-spoke-okn-spaceflight-disease-genes_cross, spoke-genelab-ubergraph-anatomy-gene-counts_cross."
    ), "{out}");
    assert!(
        joined.contains("McNemar: exact two-sided binomial"),
        "{out}"
    );
    // What the comparison compares: the server's build changed (and, in
    // roots of runs-root format 3, where it is reached: identity.upstream).
    let v = env!("CARGO_PKG_VERSION");
    // One sentence, wrapped to fit 100 columns: its lines joined again
    // (a wrap breaks at a space) up to the one that ends it.
    let mut recorded = String::new();
    for l in out
        .lines()
        .skip_while(|l| !l.contains("Recorded differently: "))
    {
        if !recorded.is_empty() {
            recorded.push(' ');
        }
        recorded.push_str(l);
        if l.ends_with('.') {
            break;
        }
    }
    assert!(!recorded.is_empty(), "{out}");
    assert!(
        recorded.contains(&format!(
            "settings.server_build: 'okn-demo-kg {v}' → 'okn-demo-kg {v}+row-limit.5'"
        )),
        "{out}"
    );
    for part in recorded
        .split("Recorded differently: ")
        .nth(1)
        .unwrap()
        .trim_end_matches('.')
        .split("; ")
    {
        assert!(
            part.starts_with("settings.server_build: ") || part.starts_with("identity.upstream: "),
            "{part}"
        );
    }

    let gated = compare(&[
        "runs-expert-cross",
        "runs-expert-cross-row-limit",
        "--fail-on-regression",
    ]);
    assert_eq!(gated.status.code(), Some(1), "{}", stderr(&gated));
    assert!(stderr(&gated).contains("regressed beyond what its repeats can explain"));
    // Only the named-graph condition: two of its three regressions are
    // beyond what the baseline's repeats explain, so the gate fails on it
    // alone too, naming those two and not the flaky one.
    let named = compare(&[
        "runs-expert-cross",
        "runs-expert-cross-row-limit",
        "--condition",
        "demo-kg-all-tools__kg-named",
        "--fail-on-regression",
    ]);
    assert_eq!(named.status.code(), Some(1), "{}", stderr(&named));
    let named_text = stdout(&named)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(named_text.contains("conditions only in the baseline (not compared): demo-kg-all-tools-without-get_schema-lookup_uri__kg-named, demo-kg-all-tools__kg-not-named"));
    assert!(named_text.contains(
        "demo-kg, all tools · KG named: 2 questions regressed beyond what their repeats can explain: spoke-genelab-spoke-okn-spaceflight-disease-genes_cross, spoke-genelab-ubergraph-anatomy-gene-counts_cross."
    ), "{}", stdout(&named));
    let same = compare(&[
        "runs-expert-cross",
        "runs-expert-cross",
        "--fail-on-regression",
    ]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert!(
        stdout(&same).contains(
            "questions 12 · regressed 0 · mixed 0 · improved 0 · unchanged 12 · not comparable 0"
        ),
        "{}",
        stdout(&same)
    );
}

/// The Markdown for a pull-request comment: the mark, regressions first,
/// the method; a file a person wrote is not replaced without --force; a
/// condition name that does not exist gets a did-you-mean.
#[test]
fn compare_markdown_and_its_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("comment.md");
    let output = okn()
        .args([
            "compare",
            "runs-expert-cross",
            "runs-expert-cross-row-limit",
            "--markdown",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("<!-- Generated by okn-benchmark compare"),
        "{text}"
    );
    assert!(text.contains("| `spatialkg-spoke-okn-place-density_cross` | regressed | ✓✓✓ → ✗✗✗ | 1.00 | 0.00 | yes |"), "{text}");
    assert!(text.contains("McNemar's test is exact"), "{text}");
    // Written again over its own file: fine.
    let again = okn()
        .args([
            "compare",
            "runs-expert-cross",
            "runs-expert-cross-row-limit",
            "--markdown",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(again.status.success());
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, "# My notes\n").unwrap();
    let refused = okn()
        .args([
            "compare",
            "runs-expert-cross",
            "runs-expert-cross-row-limit",
            "--markdown",
        ])
        .arg(&notes)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("was not written by okn-benchmark compare"));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "# My notes\n");
    let typo = compare(&[
        "runs-expert-cross",
        "runs-expert-cross-row-limit",
        "--condition",
        "demo-kg-all-tools__kg-nmaed",
    ]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(
        stderr(&typo).contains("did you mean 'demo-kg-all-tools__kg-named'"),
        "{}",
        stderr(&typo)
    );
}

/// A question whose ground truth moved between the roots is "not
/// comparable", never a regression, and does not fail the gate.
#[test]
fn a_moved_ground_truth_is_not_comparable() {
    let dir = tempfile::tempdir().unwrap();
    let candidate = dir.path().join("candidate");
    crate::support::fixture::copy_dir(
        &crate::support::repo().join("runs-expert-cross-row-limit"),
        &candidate,
    );
    // The two questions beyond their repeats under the unnamed condition
    // get another answer key in the candidate.
    for id in [
        "spatialkg-spoke-okn-place-density_cross",
        "spoke-genelab-ubergraph-anatomy-gene-counts_cross",
    ] {
        let truth = candidate
            .join(format!("{id}_results"))
            .join("ground_truth.json");
        edit(&truth, |v| v["fingerprint"] = "sha256:another-key".into());
    }
    let output = okn()
        .args(["compare", "runs-expert-cross"])
        .arg(&candidate)
        .args([
            "--condition",
            "demo-kg-all-tools__kg-not-named",
            "--fail-on-regression",
        ])
        .output()
        .unwrap();
    // The questions beyond their repeats moved: what is left (the flaky
    // spaceflight question, ✗✗✓ → ✗✗✗) is within.
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let out = stdout(&output);
    // A question's record: its id's line and the line under it (the
    // table is wider than 100 columns, so printed as records; issue 26,
    // section 3).
    let line = |id: &str| {
        let lines: Vec<&str> = out.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.trim_start().starts_with(id))
            .unwrap_or_else(|| panic!("{id}\n{out}"));
        lines[at..(at + 2).min(lines.len())]
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    for id in [
        "spatialkg-spoke-okn-place-density_cross",
        "spoke-genelab-ubergraph-anatomy-gene-counts_cross",
    ] {
        assert!(
            line(id).contains(
                "class not comparable: the ground truth moved · attempts before → after ✓✓✓ → ✗✗✗"
            ),
            "{}",
            line(id)
        );
    }
    assert_eq!(
        line("spoke-genelab-spoke-okn-spaceflight-disease-genes_cross"),
        "spoke-genelab-spoke-okn-spaceflight-disease-genes_cross class regressed · attempts before → \
         after ✗✗✓ → ✗✗✗ · exact before 0.33 · exact after 0.00"
    );
}

/// Keeps issue 24, item 12: `merge` accepted shards whose prompts for one
/// question differed (its record edited between the shards' runs), and
/// published attempts asked two questions as one. It now refuses, naming
/// the question, and writes nothing.
#[test]
fn merge_refuses_shards_whose_prompts_for_one_question_differ() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    crate::support::fixture::copy_dir(
        &crate::support::repo().join("demo/benchmarks-single"),
        &corpus,
    );
    let id = "biobricks-ice-active-chemicals_single";
    // One question, two attempts: attempt 1 in shard 1, attempt 2 in 2.
    let shard = |k: &str| {
        let out = dir.path().join(format!("shard{k}"));
        let o = okn()
            .args(["run", "--corpus"])
            .arg(&corpus)
            .args(&SWEEP[3..9])
            .args([
                "--agent",
                "scripted:oracle",
                "--repeat",
                "2",
                "--limit",
                "1",
            ])
            .args(["--shard", &format!("{k}/2"), "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        out
    };
    let first = shard("1");
    let record = corpus.join(format!("{id}.rq"));
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(
        &record,
        text.replacen("that received an Active", "that got an Active", 1),
    )
    .unwrap();
    let second = shard("2");
    let out = dir.path().join("merged");
    let o = merge(&out, &[first.clone(), second.clone()]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{}: the prompt of question {id} differs from {}'s (",
            second
                .join(format!("{id}_results/{CONDITION}/attempt-2/prompt.txt"))
                .display(),
            first
                .join(format!("{id}_results/{CONDITION}/attempt-1/prompt.txt"))
                .display()
        )),
        "{err}"
    );
    assert!(
        err.contains("the record was edited between these runs, so they are not shards of one sweep, and nothing was merged"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
}

/// Keeps issue 24, item 12: `compare` read a question whose prompt
/// differs between the two roots (its record edited between the runs) as
/// regressed or improved. It is now not comparable, saying why, and does
/// not fail the gate; two conditions that differ in `--kg-hint` alone are
/// compared without the hint paragraph.
#[test]
fn compare_calls_a_question_asked_in_another_prompt_not_comparable() {
    let dir = tempfile::tempdir().unwrap();
    let candidate = dir.path().join("candidate");
    crate::support::fixture::copy_dir(
        &crate::support::repo().join("runs-expert-cross-row-limit"),
        &candidate,
    );
    let condition = "demo-kg-all-tools__kg-not-named";
    let id = "spatialkg-spoke-okn-place-density_cross";
    for n in 1..=3 {
        let prompt = candidate.join(format!("{id}_results/{condition}/attempt-{n}/prompt.txt"));
        let text = std::fs::read_to_string(&prompt).unwrap();
        let edited = text.replacen(' ', "  ", 1);
        assert_ne!(edited, text);
        std::fs::write(&prompt, edited).unwrap();
    }
    let output = okn()
        .args(["compare", "runs-expert-cross"])
        .arg(&candidate)
        .args(["--condition", condition, "--fail-on-regression"])
        .output()
        .unwrap();
    let out = stdout(&output);
    // The question's record (issue 26, section 3: a table wider than 100
    // columns is printed as records): its id's line and the next.
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with(id))
        .unwrap_or_else(|| panic!("{id}\n{out}"));
    let line = lines[at..(at + 2).min(lines.len())]
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        line.contains(
            "class not comparable: its prompt differs between the roots · attempts before → after ✓✓✓ → ✗✗✗"
        ),
        "{line}"
    );
    // The other regression beyond repeats still fails the gate.
    assert_eq!(output.status.code(), Some(1), "{out}");
    // Under the same root, the named and unnamed conditions are asked one
    // question (the hint paragraph aside): nothing reads as moved.
    let same = compare(&[
        "runs-expert-cross",
        "runs-expert-cross",
        "--condition",
        "demo-kg-all-tools__kg-named=demo-kg-all-tools__kg-not-named",
    ]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert!(
        !stdout(&same).contains("not comparable:"),
        "{}",
        stdout(&same)
    );
}

/// Regression tests, one per defect the red team of sharding, merge and
/// compare found (2026-12-02), each named after what it guards.
mod regression {
    use super::*;

    fn condition_file(root: &Path) -> PathBuf {
        root.join("conditions").join(format!("{CONDITION}.json"))
    }

    /// A shard whose result.json lists an attempt folder that is gone was
    /// half copied into --out before the error.
    #[test]
    fn a_merge_that_fails_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let shards = three_shards(dir.path());
        let gone = shards[2]
            .join("biobricks-ice-active-chemicals_single_results")
            .join(CONDITION)
            .join("attempt-3");
        std::fs::remove_dir_all(&gone).unwrap();
        let out = dir.path().join("out");
        let output = merge(&out, &shards);
        assert_eq!(output.status.code(), Some(2));
        assert!(
            stderr(&output).contains(&gone.display().to_string()),
            "{}",
            stderr(&output)
        );
        assert!(stderr(&output).contains("nothing was merged"));
        assert!(!out.exists(), "a failed merge wrote into --out");
    }

    /// Every file under `root` but its README (whose title is the
    /// folder's name), by path inside it, with its bytes.
    fn files_but_readme(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(root)
            .into_iter()
            .filter(|(p, _)| !p.to_string_lossy().contains("README"))
            .map(|(p, bytes)| (p.strip_prefix(root).unwrap().to_path_buf(), bytes))
            .collect()
    }

    /// Issue 24, item 26: `merge` or `rescore` killed mid-write left a
    /// `.okn-tmp-*` file in the runs root, and the next `merge` wrote
    /// other bytes. The next run of either removes such files (ours alone:
    /// by their exact name pattern, regular files only) and writes the
    /// bytes an uninterrupted run writes; a leftover in a shard is never
    /// copied.
    #[test]
    fn a_temporary_file_a_killed_merge_or_rescore_left_is_removed_and_the_bytes_are_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let shards = three_shards(dir.path());
        let merged = dir.path().join("merged");
        assert!(merge(&merged, &shards).status.success());
        let clean = snapshot(&merged);
        let attempt = Path::new("biobricks-ice-active-chemicals_single_results")
            .join(CONDITION)
            .join("attempt-1");
        let planted = [
            merged.join("conditions/.okn-tmp-Ab12Cd"),
            merged.join(&attempt).join(".okn-tmp-x9Y8z7"),
            merged.join("biobricks-ice-active-chemicals_single_results/.okn-tmp-000000"),
        ];
        for path in &planted {
            std::fs::write(path, b"{\"half\": ").unwrap();
        }
        // A shard's own leftover is not part of its attempt.
        let in_shard = shards
            .iter()
            .map(|s| s.join(&attempt))
            .find(|a| a.is_dir())
            .unwrap()
            .join(".okn-tmp-Qq1234");
        std::fs::write(&in_shard, b"half").unwrap();
        // A person's file that merely starts the same way is not ours.
        let theirs = merged.join(".okn-tmp-notes.txt");
        std::fs::write(&theirs, b"mine").unwrap();

        let output = merge(&merged, &shards);
        assert!(output.status.success(), "{}", stderr(&output));
        for path in &planted {
            assert!(!path.exists(), "{} left", path.display());
            assert!(
                stderr(&output).contains(&format!("removed {}", path.display())),
                "{}",
                stderr(&output)
            );
        }
        assert_eq!(std::fs::read(&theirs).unwrap(), b"mine");
        std::fs::remove_file(&theirs).unwrap();
        assert_eq!(snapshot(&merged), clean, "the merge wrote other bytes");

        // rescore, the same.
        for path in &planted {
            std::fs::write(path, b"{\"half\": ").unwrap();
        }
        let output = okn().arg("rescore").arg(&merged).output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(planted.iter().all(|p| !p.exists()));
        assert_eq!(snapshot(&merged), clean, "the rescore wrote other bytes");

        // A real kill -9 at increasing moments of a merge into a new
        // folder, then one merge more: the bytes of the clean merge.
        let out = dir.path().join("killed");
        for delay_ms in [20u64, 60, 120, 200, 300, 450, 600] {
            let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_okn-benchmark"))
                .current_dir(crate::support::repo())
                .arg("merge")
                .arg("--out")
                .arg(&out)
                .args(&shards)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(delay_ms));
            let _ = child.kill();
            let _ = child.wait();
        }
        let output = merge(&out, &shards);
        assert!(output.status.success(), "{}", stderr(&output));
        let (killed, clean) = (files_but_readme(&out), files_but_readme(&merged));
        assert_eq!(
            killed.keys().collect::<Vec<_>>(),
            clean.keys().collect::<Vec<_>>()
        );
        for (path, bytes) in &clean {
            assert!(killed[path] == *bytes, "{} differs", path.display());
        }
    }

    /// `run --shard 1/3 --resume` into a root holding another slice (or the
    /// merged sweep) dropped the other attempts from its records, exit 0.
    #[test]
    fn a_shard_is_not_played_into_a_root_holding_another_slice() {
        let dir = tempfile::tempdir().unwrap();
        let shards = three_shards(dir.path());
        let merged = dir.path().join("merged");
        assert!(merge(&merged, &shards).status.success());
        for (root, held) in [
            (&shards[1], "shard 2/3"),
            (&merged, "a whole (or merged) sweep"),
        ] {
            let before = snapshot(root);
            let output = sweep(root, &["--shard", "1/3", "--resume"]);
            assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
            assert!(
                stderr(&output).contains(&format!("holds {held} of '{CONDITION}', not shard 1/3")),
                "{}",
                stderr(&output)
            );
            assert_eq!(before, snapshot(root));
        }
    }

    /// A baseline of one attempt per question against a candidate of three
    /// paired only attempt 1, so a failure in attempt 2 or 3 of a question
    /// the baseline always answered read "unchanged" and passed the gate.
    #[test]
    fn the_gate_counts_attempts_that_pair_with_none() {
        let dir = tempfile::tempdir().unwrap();
        let once = dir.path().join("once");
        let output = okn()
            .args(&SWEEP[..SWEEP.len() - 2])
            .args(["--repeat", "1", "--out"])
            .arg(&once)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let thrice = dir.path().join("thrice");
        assert!(sweep(&thrice, &[]).status.success());
        let output = okn()
            .arg("compare")
            .args([&once, &thrice])
            .arg("--fail-on-regression")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
        // Attempt 1 is the same episode in both (the same seed); the flips
        // are in the attempts the baseline never played.
        let out = stdout(&output);
        assert!(out.contains("✓ → ✓✗"), "{out}");
        assert!(out.contains("regressed"), "{out}");
    }

    /// `compare --markdown` wrote into a frozen root and, with --force,
    /// over a recorded answer.csv.
    #[test]
    fn the_markdown_is_never_written_inside_a_runs_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("cand");
        crate::support::fixture::copy_dir(
            &crate::support::repo().join("runs-expert-cross-row-limit"),
            &root,
        );
        let answer = root
            .join("spatialkg-spoke-okn-place-density_cross_results")
            .join("demo-kg-all-tools__kg-named")
            .join("attempt-1")
            .join("answer.csv");
        let recorded = std::fs::read(&answer).unwrap();
        for target in [
            answer.clone(),
            root.join("README.md"),
            root.join("notes.md"),
        ] {
            let output = okn()
                .args(["compare", "runs-expert-cross"])
                .arg(&root)
                .arg("--markdown")
                .arg(&target)
                .arg("--force")
                .output()
                .unwrap();
            assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
            assert!(
                stderr(&output).contains("inside the runs root"),
                "{}",
                stderr(&output)
            );
        }
        assert_eq!(std::fs::read(&answer).unwrap(), recorded);
        assert!(!root.join("notes.md").exists());
        let output = okn()
            .args(["freeze", "--reason", "published"])
            .arg(&root)
            .output()
            .unwrap();
        assert!(output.status.success());
        let output = okn()
            .args(["compare", "runs-expert-cross"])
            .arg(&root)
            .arg("--markdown")
            .arg(root.join("comment.md"))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(stderr(&output).contains("frozen"), "{}", stderr(&output));
    }

    /// Two roots with no question in common compared "0 questions" with
    /// McNemar p = 1.000 and passed the gate.
    #[test]
    fn roots_with_no_question_in_common_are_refused() {
        let output = compare(&[
            "runs-expert-cross",
            "runs-expert-single",
            "--fail-on-regression",
        ]);
        assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
        assert!(
            stderr(&output).contains("hold no question in common"),
            "{}",
            stderr(&output)
        );
    }

    /// A ground_truth.csv edited in one shard (its digest no longer the
    /// one its JSON records) was merged, and compared, as if unchanged.
    #[test]
    fn ground_truth_rows_edited_by_hand_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let shards = three_shards(dir.path());
        let csv = shards[1]
            .join("biobricks-ice-active-chemicals_single_results")
            .join("ground_truth.csv");
        let mut text = std::fs::read_to_string(&csv).unwrap();
        text.push_str("x,y\n");
        std::fs::write(&csv, text).unwrap();
        let out = dir.path().join("out");
        let output = merge(&out, &shards);
        assert_eq!(output.status.code(), Some(2));
        assert!(
            stderr(&output).contains(&csv.display().to_string()),
            "{}",
            stderr(&output)
        );
        assert!(!out.exists());
        let output = okn()
            .arg("compare")
            .arg(&shards[0])
            .arg(&shards[1])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
        assert!(
            stderr(&output).contains("ground_truth.csv"),
            "{}",
            stderr(&output)
        );
    }

    /// An edited shard.index (0, past N, or one claimed twice) was merged,
    /// and the missing shards were then misnamed.
    #[test]
    fn a_shard_index_edited_by_hand_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let shards = three_shards(dir.path());
        for (index, expected) in [
            (0, "outside 1..=3"),
            (9, "outside 1..=3"),
            // Its attempts are not shard 1's slice: refused as the shard
            // root it is, before merge sees the index claimed twice.
            (1, "holds shard 1/3's slice of the attempts"),
        ] {
            let copy = dir.path().join(format!("edited-{index}"));
            let _ = std::fs::remove_dir_all(&copy);
            crate::support::fixture::copy_dir(&shards[1], &copy);
            edit(&condition_file(&copy), |v| {
                v["shard"]["index"] = index.into()
            });
            let out = dir.path().join(format!("out-{index}"));
            let output = merge(&out, &[shards[0].clone(), copy]);
            assert_eq!(output.status.code(), Some(2), "{index}");
            assert!(
                stderr(&output).contains(expected),
                "{index}: {}",
                stderr(&output)
            );
            assert!(!out.exists());
        }
        // Without shard 3, the missing attempts name shard 3 alone.
        let output = merge(&dir.path().join("two"), &shards[..2]);
        assert!(stderr(&output).contains("no input is shard 3 of its sweep"));
    }

    /// `--condition a=b=c` was read as the pair (a, b=c); an empty one was
    /// echoed as '='; one given twice was compared twice.
    #[test]
    fn condition_pairs_that_are_not_name_or_name_equals_name_are_refused() {
        for (given, expected) in [
            ("a=b=c", "give NAME or BASELINE_NAME=CANDIDATE_NAME"),
            ("", "--condition '': give NAME"),
            ("=x", "give NAME or BASELINE_NAME=CANDIDATE_NAME"),
        ] {
            let output = compare(&[
                "runs-expert-cross",
                "runs-expert-cross-row-limit",
                "--condition",
                given,
            ]);
            assert_eq!(output.status.code(), Some(2), "{given}");
            assert!(
                stderr(&output).contains(expected),
                "{given}: {}",
                stderr(&output)
            );
        }
        let output = okn()
            .args([
                "compare",
                "runs-expert-cross",
                "runs-expert-cross-row-limit",
            ])
            .args([
                "--condition",
                CONDITION_CROSS,
                "--condition",
                CONDITION_CROSS,
            ])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(stderr(&output).contains("is given twice"));
    }

    const CONDITION_CROSS: &str = "demo-kg-all-tools__kg-named";
}

/// Issue 24 (the trust issue: a number is published only with its basis
/// stated): a merge of some shards only leaves an incomplete root, and a
/// study that names it is refused by `build` and `build --check` (exit
/// 2, naming the root, the condition and the attempts it lacks, nothing
/// written), where they used to publish its numbers as a whole sweep's;
/// the root's own README marks its row incomplete and `build` says so.
#[test]
fn a_half_merged_sweep_is_kept_out_of_every_study() {
    use crate::support::fixture::copy_dir;
    let dir = tempfile::tempdir().unwrap();
    let shards = three_shards(dir.path());
    let merged = dir.path().join("merged");
    assert_eq!(merge(&merged, &shards[..2]).status.code(), Some(1));
    let project = dir.path().join("project");
    copy_dir(&merged, &project.join("runs-partial"));
    let repo = crate::support::repo();
    copy_dir(&repo.join("templates"), &project.join("templates"));
    copy_dir(&repo.join("static"), &project.join("static"));
    let study = project.join("results-partial");
    std::fs::create_dir_all(&study).unwrap();
    std::fs::write(
        study.join("study.toml"),
        format!(
            "title = \"Partial\"\nroots = [\"../runs-partial\"]\nfigures = [\"exact-rate\"]\n\n\
             [[conditions]]\nkey = \"all-tools\"\nname = \"{CONDITION}\"\nlabel = \"Full toolkit\"\n"
        ),
    )
    .unwrap();
    let prose = "# Partial\n\nExact on <!-- okn:number condition=all-tools metric=exact-rate \
                 format=percent -->x<!-- /okn:number -->.\n";
    std::fs::write(study.join("SUMMARY.md"), prose).unwrap();
    let before = snapshot(&project);
    for args in [&["build"][..], &["build", "--check"]] {
        let output = crate::support::okn_in(&project)
            .args(args)
            .output()
            .unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("study.toml"), "{err}");
        assert!(
            err.contains(&format!(
                "condition {CONDITION} is incomplete: its merged sweep lacks 12 attempts"
            )),
            "{err}"
        );
        assert!(
            err.contains("A study publishes no incomplete condition"),
            "{err}"
        );
        assert_eq!(snapshot(&project), before, "{args:?} wrote something");
    }
    // Without the study the root is built: its row says how many of its
    // attempts it holds, and the terminal says what happened.
    std::fs::remove_dir_all(&study).unwrap();
    let output = crate::support::okn_in(&project)
        .arg("build")
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(err.contains("its README marks its row incomplete"), "{err}");
    let readme = std::fs::read_to_string(project.join("runs-partial/README.md")).unwrap();
    assert!(
        readme.contains("(incomplete: 24 of 36 attempts) |"),
        "{readme}"
    );
}
