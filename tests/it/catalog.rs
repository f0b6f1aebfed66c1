//! `okn-benchmark catalog` through the real binary: `validate` on the
//! shipped catalogs and on broken ones, each rule with the query and the
//! field it names (`docs/CATALOG.md`, "Validation").

use crate::support::Test;
use serde_json::{Value, json};

/// A valid catalog to break, one rule at a time.
fn good() -> Value {
    json!({
        "format": 1,
        "header": {
            "server": "s", "server_version": "1.0", "confirmed": "2026-12-02",
            "scope": {"prefixes": ["http://in/"]},
            "categories": ["discovery", "scope"],
            "out_of_scope_category": "scope",
            "findings": [{"date": "2026-12-01", "text": "noted"}]
        },
        "queries": [{
            "id": "q1", "category": "discovery", "user_query": "Where is A?", "why": "finds A",
            "run": {"tool": "lookup", "arguments": {"label": "A"}},
            "candidates": {"path": "results[*]", "id": "iri"},
            "variables": {"acceptable": ["http://in/A"], "rejected": [{"id": "http://in/B", "reason": "a neighbour"}]},
            "expectations": [
                {"type": "contract", "check": "call_succeeds"},
                {"type": "quality", "check": "acceptable_in_top", "n": 3},
                {"type": "quality", "check": "no_rejected_above_acceptable", "known_gap": {"found": "2026-11-30"}}
            ]
        }]
    })
}

fn validate(catalog: &Value) -> Test {
    Test::new()
        .write("c.json", serde_json::to_string_pretty(catalog).unwrap())
        .args(["catalog", "validate", "c.json"])
}

#[test]
fn every_shipped_catalog_is_valid_offline() {
    Test::in_repo()
        .args(["catalog", "validate", "catalogs/demo-kg.json"])
        .stdout("catalogs/demo-kg.json: valid: 5 queries, 15 expectations\n")
        .status(0)
        .run();
    Test::in_repo()
        .args(["catalog", "validate", "catalogs/mcp-server-sparql.json"])
        .stdout("catalogs/mcp-server-sparql.json: valid: 3 queries, 6 expectations\n")
        .status(0)
        .run();
    Test::in_repo()
        .args(["catalog", "validate", "catalogs/mcp-proto-okn.json"])
        .stdout("catalogs/mcp-proto-okn.json: valid: 3 queries, 6 expectations\n")
        .status(0)
        .run();
    Test::in_repo()
        .args(["catalog", "validate", "catalogs/datacommons.json"])
        .stdout("catalogs/datacommons.json: valid: 6 queries, 18 expectations\n")
        .status(0)
        .run();
}

/// The mcp-proto-okn catalog against the tool list of the real server from
/// PyPI (0.6.0, in scripts/test's okn-venv), started offline as the proxy
/// tests start it: its tools and arguments exist. It is not run: its
/// backends are not reachable here.
#[test]
fn the_mcp_proto_okn_catalog_fits_the_real_servers_tools() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("okn.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"mcp-proto-okn\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\nargs = [\"--endpoint\", \"http://127.0.0.1:9/sparql\", \"--description\", \"offline\"]\nenv = {{ HTTPS_PROXY = \"http://127.0.0.1:9\", HTTP_PROXY = \"http://127.0.0.1:9\", https_proxy = \"http://127.0.0.1:9\", http_proxy = \"http://127.0.0.1:9\" }}\n",
            crate::support::tool("mcp-proto-okn").display().to_string()
        ),
    )
    .unwrap();
    Test::in_repo()
        .args(["catalog", "validate", "catalogs/mcp-proto-okn.json", "--profile", profile.to_str().unwrap()])
        .stdout("catalogs/mcp-proto-okn.json: checked against the 9 tools of mcp-proto-okn\ncatalogs/mcp-proto-okn.json: valid: 3 queries, 6 expectations\n")
        .status(0)
        .run();
}

/// The datacommons catalog (the seed's queries, traps and dated findings)
/// against the tool list of the real server from PyPI (datacommons-mcp
/// 1.4.0, in scripts/test's dc-venv), started offline: no API key is
/// checked and every proxy variable points at a closed port, so nothing
/// leaves 127.0.0.1 (no tool is called by validate). A copy with one
/// argument misspelled is refused with a did-you-mean. It is not run: its
/// backend is not reachable here.
#[test]
fn the_datacommons_catalog_fits_the_real_servers_tools() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("dc.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"datacommons\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\nargs = [\"serve\", \"stdio\", \"--skip-api-key-validation\"]\nenv = {{ DC_API_KEY = \"offline\", HTTPS_PROXY = \"http://127.0.0.1:9\", HTTP_PROXY = \"http://127.0.0.1:9\", https_proxy = \"http://127.0.0.1:9\", http_proxy = \"http://127.0.0.1:9\" }}\n",
            crate::support::tool("datacommons-mcp").display().to_string()
        ),
    )
    .unwrap();
    Test::in_repo()
        .args(["catalog", "validate", "catalogs/datacommons.json", "--profile", profile.to_str().unwrap()])
        .stdout("catalogs/datacommons.json: checked against the 6 tools of datacommons\ncatalogs/datacommons.json: valid: 6 queries, 18 expectations\n")
        .status(0)
        .run();
    let text =
        std::fs::read_to_string(crate::support::repo().join("catalogs/datacommons.json")).unwrap();
    let broken = text.replacen("\"places\": [\"Kenya\"]", "\"place\": [\"Kenya\"]", 1);
    assert_ne!(broken, text);
    let copy = dir.path().join("datacommons.json");
    std::fs::write(&copy, broken).unwrap();
    Test::in_repo()
        .args(["catalog", "validate", copy.to_str().unwrap(), "--profile", profile.to_str().unwrap()])
        .stdout_contains("query 'poverty-kenya': run.arguments.place: 'search_indicators' takes no argument 'place' (did you mean 'places'?)")
        .stdout_contains(": 1 problem\n")
        .status(1)
        .run();
}

#[test]
fn a_valid_catalog_passes_and_each_broken_rule_is_named() {
    validate(&good())
        .stdout("c.json: valid: 1 query, 3 expectations\n")
        .status(0)
        .run();
    /// A name, how the catalog is broken, what validate says.
    type Case = (&'static str, Box<dyn Fn(&mut Value)>, &'static str);
    let cases: Vec<Case> = vec![
        (
            "date",
            Box::new(|c| c["header"]["confirmed"] = json!("2026-02-30")),
            "header: confirmed: '2026-02-30' is not a date YYYY-MM-DD",
        ),
        (
            "version",
            Box::new(|c| c["header"]["server_version"] = json!(" ")),
            "header: server_version: empty",
        ),
        (
            "category",
            Box::new(|c| c["queries"][0]["category"] = json!("other")),
            "query 'q1': category: 'other' is not one of the categories (discovery, scope)",
        ),
        (
            "duplicate",
            Box::new(|c| {
                let q = c["queries"][0].clone();
                c["queries"].as_array_mut().unwrap().push(q);
            }),
            "query 'q1': id: used by an earlier query too",
        ),
        (
            "acceptable",
            Box::new(|c| c["queries"][0]["variables"]["acceptable"] = json!(["http://out/A"])),
            "query 'q1': variables.acceptable[0]: 'http://out/A' is outside the header's scope",
        ),
        (
            "acceptable prefix",
            Box::new(|c| {
                c["queries"][0]["variables"]["acceptable_prefixes"] = json!(["http://out/"])
            }),
            "query 'q1': variables.acceptable_prefixes[0]: 'http://out/' does not lie inside a scope prefix of the header",
        ),
        (
            "rejected in the acceptable family",
            Box::new(|c| {
                c["queries"][0]["variables"]["acceptable_prefixes"] = json!(["http://in/"])
            }),
            "query 'q1': variables.rejected[0]: 'http://in/B' is also acceptable",
        ),
        (
            "rejected",
            Box::new(|c| c["queries"][0]["variables"]["rejected"][0]["id"] = json!("http://out/B")),
            "query 'q1': variables.rejected[0]: 'http://out/B' is outside the scope: only queries of category 'scope' may name one",
        ),
        (
            "gap",
            Box::new(|c| {
                c["queries"][0]["expectations"][2]["known_gap"]["found"] = json!("last week")
            }),
            "query 'q1': expectations[2].known_gap.found: 'last week' is not a date",
        ),
        (
            "top",
            Box::new(|c| c["queries"][0]["expectations"][1]["n"] = json!(0)),
            "query 'q1': expectations[1].n: 0: give 1 or more",
        ),
        (
            "selector",
            Box::new(|c| {
                c["queries"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("candidates");
            }),
            "query 'q1': expectations[1].check: ranks candidates: the query needs 'candidates'",
        ),
        (
            "path",
            Box::new(|c| c["queries"][0]["candidates"]["path"] = json!("results[")),
            "query 'q1': candidates.path: 'results[': a '[' is never closed",
        ),
    ];
    for (name, change, says) in cases {
        let mut catalog = good();
        change(&mut catalog);
        let out = validate(&catalog).status(1).run();
        assert!(
            out.stdout.contains(&format!("c.json: {says}")),
            "{name}: {}",
            out.stdout
        );
    }
    // A rejected candidate outside the scope is allowed in the header's
    // out-of-scope category.
    let mut catalog = good();
    catalog["queries"][0]["category"] = json!("scope");
    catalog["queries"][0]["variables"]["rejected"][0]["id"] = json!("http://out/B");
    validate(&catalog).status(0).run();
}

#[test]
fn a_catalog_that_is_not_one_is_refused_naming_the_line_or_query() {
    Test::new()
        .write("c.json", "{\n  \"format\": 1,\n  \"header\": {,\n}\n")
        .args(["catalog", "validate", "c.json"])
        .stderr_contains("c.json:3:")
        .status(2)
        .run();
    let mut catalog = good();
    catalog["queries"][0]["expectations"][1]["check"] = json!("acceptable_in_the_top");
    validate(&catalog)
        .stderr_contains("query 'q1': expectations[1]: unknown variant `acceptable_in_the_top`")
        .status(2)
        .run();
    let mut catalog = good();
    catalog["queries"][0]["expectations"][1]["n"] = json!("three");
    validate(&catalog)
        .stderr_contains("query 'q1':")
        .status(2)
        .run();
    let mut catalog = good();
    catalog["queries"][0]["expectations"][0]["n"] = json!(3);
    validate(&catalog)
        .stderr_contains("query 'q1': expectations[0]: unknown member 'n'")
        .status(2)
        .run();
    let mut catalog = good();
    catalog["queries"][0]["colour"] = json!("blue");
    validate(&catalog)
        .stderr_contains("query 'q1': unknown field `colour`")
        .status(2)
        .run();
}

/// With `--profile`, the catalog's tools and arguments are checked against
/// the tools the demo KG server lists (started by the test over stdio; no
/// tool is called): a misspelt tool and argument get a did-you-mean, and
/// a required argument left out is named, for a rephrasing too.
#[test]
fn with_a_profile_tools_and_arguments_are_checked_against_the_server() {
    let mut catalog = good();
    catalog["header"]["scope"]["prefixes"] = json!(["http://in/"]);
    catalog["queries"][0]["run"] = json!({"tool": "lookup_url", "arguments": {"label": "A"}});
    let mut second = catalog["queries"][0].clone();
    second["id"] = json!("q2");
    second["run"] = json!({"tool": "lookup_uri", "arguments": {"lable": "A"}});
    second["rephrasings"] =
        json!([{"user_query": "a", "arguments": {"label": "a", "max_results": 3}}]);
    catalog["queries"].as_array_mut().unwrap().push(second);
    let profile = crate::support::repo().join("profiles/demo-kg.local.toml");
    let out = validate(&catalog)
        .args(["--profile", profile.to_str().unwrap()])
        .status(1)
        .run();
    for says in [
        "c.json: checked against the 5 tools of demo-kg",
        "c.json: query 'q1': run.tool: 'lookup_url' is not a tool of the server (did you mean 'lookup_uri'?)",
        "c.json: query 'q2': run.arguments.lable: 'lookup_uri' takes no argument 'lable' (did you mean 'label'?)",
        "c.json: query 'q2': run.arguments: 'lookup_uri' requires the argument 'label'",
        "c.json: 3 problems",
    ] {
        assert!(out.stdout.contains(says), "{says}\n{}", out.stdout);
    }
    assert!(!out.stdout.contains("rephrasings[0]"), "{}", out.stdout);
    validate(&good())
        .args(["--profile", "missing.toml"])
        .stderr_contains("missing.toml")
        .status(2)
        .run();
}

/// `catalog run` of the shipped demo catalog against the demo KG server,
/// over stdio and over streamable HTTP (both started by the test on this
/// machine): every query in a fresh session, the statuses the demo server
/// really earns (its duplicate-candidate known gap still open), the report's
/// sections, and an existing results.json kept without --force.
#[test]
fn the_demo_catalog_runs_over_both_transports() {
    let (_server, port) = crate::support::kg_server_http(&[]);
    let dir = tempfile::tempdir().unwrap();
    let http = dir.path().join("http.toml");
    std::fs::write(
        &http,
        format!("name = \"demo-kg\"\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    )
    .unwrap();
    let stdio = crate::support::repo().join("profiles/demo-kg.local.toml");
    for profile in [stdio, http] {
        let out = dir.path().join(profile.file_stem().unwrap());
        let run = Test::in_repo()
            .args(["catalog", "run", "catalogs/demo-kg.json", "--profile"])
            .args([profile.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .status(0)
            .run();
        assert!(
            run.stdout.starts_with(
                "contract: 10 pass\nquality: 3 pass, 1 known_gap_open\ncurrent_state: 1 pass\n"
            ),
            "{}",
            run.stdout
        );
        assert!(
            run.stderr
                .contains("catalog run: query 1 of 5: maine-by-name, phrasing 3 of 3"),
            "{}",
            run.stderr
        );
        let results: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
                .unwrap();
        assert_eq!(results["format"], 3);
        assert_eq!(results["server"]["name"], "okn-demo-kg");
        assert_eq!(results["catalog"], "catalogs/demo-kg.json");
        assert!(
            results["catalog_sha256"]
                .as_str()
                .unwrap()
                .starts_with("sha256:")
        );
        let maine = &results["queries"][0];
        assert_eq!(maine["phrasings"].as_array().unwrap().len(), 3);
        assert_eq!(
            maine["phrasings"][0]["candidates"],
            json!([
                "http://stko-kwg.geog.ucsb.edu/lod/resource/administrativeRegion.USA.23",
                "http://stko-kwg.geog.ucsb.edu/lod/resource/administrativeRegion.USA.23"
            ])
        );
        let gap = &maine["phrasings"][0]["expectations"][4];
        assert_eq!(
            (&gap["status"], &gap["detail"]),
            (
                &json!("known_gap_open"),
                &json!("2 candidates, more than 1")
            )
        );
        assert_eq!(
            results["queries"][3]["phrasings"][0]["reply"]["is_error"],
            true
        );
        let report = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(
            report.contains("| contract | 10 | 0 | 0 | 0 | 0 |"),
            "{report}"
        );
        assert!(
            report.contains("## Attention required\n\nNothing:"),
            "{report}"
        );
        assert!(
            report.contains("## Known gaps still open\n\n- maine-by-name expectation 5 (quality `count_at_most`): known gap (found 2026-12-02), still failing"),
            "{report}"
        );
        for row in [
            "| Which counties are in Maine? | rank 1 | acceptable found | no | 2 of 2 |",
            "| Maine counties | none | no candidates | no | 0 of 2 |",
            "Acceptable within the top 1 in 2 of 3 phrasings; ended with an acceptable candidate 2, \
             with candidates but none acceptable 0, with none 1; the top candidate differs across \
             phrasings; a rejected candidate outranked the acceptable one in 0 of 3; known gap of \
             expectation 5: phrasing-sensitive.",
        ] {
            assert!(report.contains(row), "{row}\n{report}");
        }
        let before = std::fs::read(out.join("results.json")).unwrap();
        Test::in_repo()
            .args(["catalog", "run", "catalogs/demo-kg.json", "--profile"])
            .args([profile.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .stderr_contains(
                "results.json exists: a catalog run does not replace one without --force",
            )
            .status(2)
            .run();
        assert_eq!(std::fs::read(out.join("results.json")).unwrap(), before);
    }
}

/// A contract that fails gates the run (exit 1) and leads the attention
/// list; `--type current_state` evaluates only those and does not gate; a
/// server that cannot start makes every expectation an execution error;
/// an invalid catalog reaches no server.
#[test]
fn contracts_gate_current_state_does_not_and_errors_are_named() {
    let mut catalog = good();
    catalog["queries"][0]["run"] = json!({"tool": "list_graphs", "arguments": {}});
    catalog["queries"][0]["expectations"] = json!([
        {"type": "contract", "check": "contains", "value": "no-such-graph"},
        {"type": "current_state", "check": "contains", "value": "spatialkg"}
    ]);
    catalog["queries"][0]
        .as_object_mut()
        .unwrap()
        .remove("candidates");
    let profile = crate::support::repo().join("profiles/demo-kg.local.toml");
    let runs = |catalog: &Value, profile: &str, extra: &[&str], status: i32| {
        Test::new()
            .write("c.json", serde_json::to_string_pretty(catalog).unwrap())
            .args([
                "catalog",
                "run",
                "c.json",
                "--profile",
                profile,
                "--out",
                "out",
            ])
            .args(extra)
            .status(status)
            .run()
    };
    let failed = runs(&catalog, profile.to_str().unwrap(), &[], 1);
    assert!(
        failed
            .stdout
            .contains("contract: 1 fail\ncurrent_state: 1 pass"),
        "{}",
        failed.stdout
    );
    let report = std::fs::read_to_string(failed.path().join("out/report.md")).unwrap();
    assert!(
        report.contains("## Attention required\n\n- q1 expectation 1 (contract `contains`): fail: 'no-such-graph' is not in the result"),
        "{report}"
    );
    let state = runs(
        &catalog,
        profile.to_str().unwrap(),
        &["--type", "current_state"],
        0,
    );
    assert_eq!(state.stdout.lines().next(), Some("current_state: 1 pass"));
    let dir = tempfile::tempdir().unwrap();
    let unstartable = dir.path().join("dead.toml");
    std::fs::write(
        &unstartable,
        "name = \"dead\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"/nonexistent/server\"\n",
    )
    .unwrap();
    let down = runs(&catalog, unstartable.to_str().unwrap(), &[], 1);
    assert!(
        down.stdout
            .contains("contract: 1 error\ncurrent_state: 1 error"),
        "{}",
        down.stdout
    );
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(down.path().join("out/results.json")).unwrap(),
    )
    .unwrap();
    assert!(
        results["queries"][0]["phrasings"][0]["execution_error"]
            .as_str()
            .unwrap()
            .starts_with("the session did not start"),
        "{results}"
    );
    assert_eq!(results["server"], Value::Null);
    let mut invalid = catalog.clone();
    invalid["queries"][0]["category"] = json!("other");
    let refused = runs(&invalid, unstartable.to_str().unwrap(), &[], 2);
    assert!(
        refused
            .stderr
            .contains("not a valid catalog, so no query was run"),
        "{}",
        refused.stderr
    );
    assert!(!refused.path().join("out").exists());
}

/// `catalog compare` of two real runs of the demo catalog: the demo KG
/// server as it is, and the same server answering every call with a
/// JSON-RPC error (`--fault rpc-error-every=1`). The contracts that flip
/// make those queries regressed (improved the other way round); the query
/// whose expectation is an error either way is unchanged; a damaged
/// results.json is refused by name.
#[test]
fn compare_states_direction_only_where_a_contract_or_gap_flips() {
    let dir = tempfile::tempdir().unwrap();
    let faulty = dir.path().join("faulty.toml");
    std::fs::write(
        &faulty,
        format!(
            "name = \"demo-kg-faulty\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"okn-benchmark\"\nargs = [\"kg-server\", \"--data\", {:?}, \"--fault\", \"rpc-error-every=1\"]\n",
            crate::support::repo().join("demo/kg").display().to_string()
        ),
    )
    .unwrap();
    let good_profile = crate::support::repo().join("profiles/demo-kg.local.toml");
    for (profile, out, status) in [(&good_profile, "base", 0), (&faulty, "cand", 1)] {
        Test::in_repo()
            .args(["catalog", "run", "catalogs/demo-kg.json", "--profile"])
            .args([
                profile.to_str().unwrap(),
                "--out",
                dir.path().join(out).to_str().unwrap(),
            ])
            .status(status)
            .run();
    }
    let compare = |a: &str, b: &str| {
        Test::new()
            .args(["catalog", "compare"])
            .args([dir.path().join(a), dir.path().join(b)])
            .status(0)
            .run()
            .stdout
    };
    let worse = compare("base", "cand");
    assert!(
        worse.starts_with(
            "maine-by-name: regressed\n  the contract check call_succeeds (the query's expectation no. 1): in the baseline it passes; in\n    the candidate it fails\n"
        ),
        "{worse}"
    );
    assert!(worse.contains("graphs-listed: regressed\n"), "{worse}");
    assert!(!worse.contains("bad-query-fails"), "{worse}");
    assert!(worse.contains("diabetes-by-name: regressed\n"), "{worse}");
    assert!(worse.ends_with("2 of 5 queries unchanged\n"), "{worse}");
    let better = compare("cand", "base");
    assert!(
        better.starts_with(
            "maine-by-name: improved\n  the contract check call_succeeds (the query's expectation no. 1): in the baseline it fails; in\n    the candidate it passes\n"
        ),
        "{better}"
    );
    // A query one run lacks is named, not compared: `derived_again`.
    let path = dir.path().join("cand/results.json");
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let markdown = Test::new()
        .args(["catalog", "compare"])
        .args([dir.path().join("base"), dir.path().join("cand")])
        .args(["--markdown", "-"])
        .status(0)
        .run()
        .stdout;
    assert!(
        markdown.contains("| regressed | 3 |\n| mixed | 0 |\n| improved | 0 |"),
        "{markdown}"
    );
    assert!(markdown.contains("no winner, no total"), "{markdown}");
    results["queries"][0]["phrasings"][0]["expectations"][0]["status"] = json!("better");
    std::fs::write(
        dir.path().join("bad.json"),
        serde_json::to_string_pretty(&results).unwrap(),
    )
    .unwrap();
    Test::new()
        .args(["catalog", "compare"])
        .args([dir.path().join("base"), dir.path().join("bad.json")])
        .stderr_contains("bad.json")
        .stderr_contains("unknown variant `better`")
        .status(2)
        .run();
}

/// The mcp-server-sparql catalog against the real server from PyPI (in
/// `scripts/test`'s sparql-venv, with `mcp<2`), in front of a real
/// `oxigraph serve` loaded with the demo KG, one named graph per file, all
/// on 127.0.0.1 and started here. Its contracts hold; its current state is
/// that a malformed query is a successful reply holding `{"error": ...}`,
/// recorded as such and as a known gap of the quality expectation.
#[test]
fn the_mcp_server_sparql_catalog_runs_against_the_real_server() {
    use crate::support::tool;
    let dir = tempfile::tempdir().unwrap();
    let oxigraph = tool("oxigraph");
    let db = dir.path().join("db");
    for entry in std::fs::read_dir(crate::support::repo().join("demo/kg")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ttl") {
            let graph = std::fs::read_to_string(path.with_extension("ttl.graph")).unwrap();
            let status = std::process::Command::new(&oxigraph)
                .args(["load", "--location"])
                .arg(&db)
                .arg("--file")
                .arg(&path)
                .args(["--graph", graph.trim()])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success(), "oxigraph load {}", path.display());
        }
    }
    let (_server, port) = crate::support::oxigraph_serve(&oxigraph, &db, true);
    let profile = dir.path().join("sparql.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"mcp-server-sparql\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\nargs = [\"--endpoint\", \"http://127.0.0.1:{port}/query\"]\n\
             env = {{ NO_PROXY = \"127.0.0.1\", no_proxy = \"127.0.0.1\" }}\n",
            tool("mcp-server-sparql").display().to_string()
        ),
    )
    .unwrap();
    let out = dir.path().join("run");
    let run = Test::in_repo()
        .args([
            "catalog",
            "run",
            "catalogs/mcp-server-sparql.json",
            "--profile",
        ])
        .args([profile.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .status(0)
        .run();
    assert_eq!(
        run.stdout.lines().take(3).collect::<Vec<_>>(),
        [
            "contract: 4 pass",
            "quality: 1 known_gap_open",
            "current_state: 1 pass"
        ],
        "{}",
        run.stdout
    );
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let malformed = &results["queries"][2]["phrasings"][0];
    assert_eq!(malformed["reply"]["is_error"], false, "{malformed}");
    assert!(
        malformed["reply"]["text"]
            .as_str()
            .unwrap()
            .contains("\"error\""),
        "{malformed}"
    );
}

mod regression {
    //! One test per fixed defect, named after what it guards.

    use super::*;

    // A red team found: an empty scope prefix put every id in scope, an
    // empty query list passed every gate, and a candidate could be both
    // acceptable and rejected, all "valid".
    #[test]
    fn an_everything_scope_no_queries_and_a_two_faced_candidate_are_refused() {
        let mut catalog = good();
        catalog["header"]["scope"]["prefixes"] = json!(["http://in/", ""]);
        catalog["queries"][0]["variables"]["rejected"][0]["id"] = json!("http://in/A");
        let out = validate(&catalog).status(1).run();
        for says in [
            "header: scope.prefixes: an empty prefix puts every id in scope",
            "query 'q1': variables.rejected[0]: 'http://in/A' is also acceptable",
        ] {
            assert!(out.stdout.contains(says), "{says}\n{}", out.stdout);
        }
        let mut empty = good();
        empty["queries"] = json!([]);
        let out = validate(&empty).status(1).run();
        assert!(
            out.stdout.contains("catalog: queries: none"),
            "{}",
            out.stdout
        );
    }

    // A file as --out was found only after every query had been sent; an
    // id holding ESC and CR reached the terminal and report.md raw;
    // --timeout 0 was taken.
    #[test]
    fn a_bad_out_control_characters_and_a_zero_timeout_are_handled() {
        let mut catalog = good();
        catalog["queries"][0]["id"] = json!("x\u{1b}[31mRED\rOVER\u{202e}");
        catalog["queries"][0]["run"] = json!({"tool": "list_graphs", "arguments": {}});
        catalog["queries"][0]["expectations"] =
            json!([{"type": "contract", "check": "call_succeeds"}]);
        catalog["queries"][0]
            .as_object_mut()
            .unwrap()
            .remove("candidates");
        let profile = crate::support::repo().join("profiles/demo-kg.local.toml");
        let run = |out: &str, extra: &[&str], status: i32| {
            Test::new()
                .write("c.json", serde_json::to_string_pretty(&catalog).unwrap())
                .write("afile", "x")
                .args([
                    "catalog",
                    "run",
                    "c.json",
                    "--profile",
                    profile.to_str().unwrap(),
                    "--out",
                    out,
                ])
                .args(extra)
                .status(status)
                .run()
        };
        let refused = run("afile", &[], 2);
        assert!(
            refused
                .stderr
                .contains("--out afile: not a folder; no query was run"),
            "{}",
            refused.stderr
        );
        assert!(
            !refused.stderr.contains("catalog run: query"),
            "{}",
            refused.stderr
        );
        let ran = run("out", &[], 0);
        assert!(
            !ran.stderr.contains('\u{1b}') && !ran.stderr.contains('\r'),
            "{:?}",
            ran.stderr
        );
        let report = std::fs::read_to_string(ran.path().join("out/report.md")).unwrap();
        assert!(
            !report.contains('\u{1b}') && !report.contains('\r') && !report.contains('\u{202e}'),
            "{report:?}"
        );
        run("out2", &["--timeout", "0"], 2);
    }

    // A second red team found: a JSON array passed for a catalog got
    // serde's "expected struct Catalog with 3 elements"; a byte order mark
    // was refused as "expected value"; a run block fitting neither shape
    // said "did not match any variant of untagged enum Run"; an error deep
    // in a query named neither the field nor the line.
    #[test]
    fn errors_in_a_catalog_name_the_query_field_and_line_and_a_bom_is_read() {
        Test::new()
            .write("c.json", "[]\n")
            .args(["catalog", "validate", "c.json"])
            .stderr("error: c.json:1: not a catalog: the top level must be an object with \"format\", \"header\" and \"queries\"\n")
            .status(2)
            .run();
        let text = serde_json::to_string_pretty(&good()).unwrap();
        Test::new()
            .write("c.json", format!("\u{feff}{text}"))
            .args(["catalog", "validate", "c.json"])
            .stdout("c.json: valid: 1 query, 3 expectations\n")
            .status(0)
            .run();
        let mut catalog = good();
        catalog["queries"][0]["run"] = json!({"tool": "t", "argumentz": {}});
        let out = validate(&catalog).status(2).run();
        assert!(
            out.stderr.contains(": query 'q1': run: give either \"tool\" with \"arguments\", or \"sparql\" with an optional \"endpoint\"\n"),
            "{}",
            out.stderr
        );
        let mut catalog = good();
        catalog["queries"][0]["variables"]["rejected"][0]["reson"] = json!("typo");
        let out = validate(&catalog).status(2).run();
        let line = serde_json::to_string_pretty(&catalog)
            .unwrap()
            .lines()
            .position(|l| l.contains("\"reson\""))
            .unwrap()
            + 1;
        assert!(
            out.stderr.starts_with(&format!(
                "error: c.json:{line}: query 'q1': variables.rejected[0]: unknown field `reson`"
            )),
            "line {line}: {}",
            out.stderr
        );
    }

    // compare --markdown pointed at a recorded results.json replaced it
    // with the comparison; a results.json holding one query twice was
    // compared on the first and the second silently ignored.
    #[test]
    fn compare_keeps_a_recorded_file_and_refuses_a_repeated_query() {
        let published = crate::support::repo().join("catalogs/published");
        let base =
            std::fs::read_to_string(published.join("demo-kg-exact-first/results.json")).unwrap();
        let cand = std::fs::read_to_string(published.join("demo-kg-fuzzy/results.json")).unwrap();
        let test = || {
            Test::new()
                .write("base/results.json", &base)
                .write("cand/results.json", &cand)
        };
        let out = test()
            .args(["catalog", "compare", "base", "cand", "--markdown", "base/results.json"])
            .stderr("error: base/results.json: exists and was not written by catalog compare: give another file, or --force to replace it\n")
            .status(2)
            .run();
        assert_eq!(
            std::fs::read_to_string(out.path().join("base/results.json")).unwrap(),
            base
        );
        let out = test()
            .args(["catalog", "compare", "base", "cand", "--markdown", "c.md"])
            .status(0)
            .run();
        let first = std::fs::read_to_string(out.path().join("c.md")).unwrap();
        assert!(first.contains("Generated by okn-benchmark"), "{first}");
        let mut doubled: Value = serde_json::from_str(&cand).unwrap();
        let q = doubled["queries"][0].clone();
        doubled["queries"].as_array_mut().unwrap().push(q);
        let n = doubled["queries"].as_array().unwrap().len() - 1;
        test()
            .write("dup.json", doubled.to_string())
            .args(["catalog", "compare", "base", "dup.json"])
            .stderr(format!("error: dup.json: queries[{n}]: id 'maine-by-name' repeats queries[0]: a run holds each query once\n"))
            .status(2)
            .run();
    }

    // A third red team found: candidates.id "", an empty category, an
    // empty run.endpoint, count_at_least 0 and contains "" all "valid",
    // though they error or cannot fail; validate took --timeout 0; compare
    // --markdown replaced a run's report.md (it carries the shared mark);
    // a changed expectation type was worded as the same check twice.
    #[test]
    fn checks_that_cannot_fail_are_refused_and_a_report_md_is_kept() {
        let mut catalog = good();
        catalog["header"]["categories"] = json!(["discovery", "scope", " "]);
        catalog["queries"][0]["candidates"]["id"] = json!("");
        catalog["queries"][0]["expectations"] = json!([
            {"type": "contract", "check": "count_at_least", "n": 0},
            {"type": "contract", "check": "contains", "value": ""}
        ]);
        let out = validate(&catalog).status(1).run();
        for says in [
            "header: categories: an empty category: name it",
            "query 'q1': candidates.id: empty",
            "query 'q1': expectations[0].n: 0: every reply has at least 0 candidates, so it always passes",
            "query 'q1': expectations[1].value: empty: every reply contains it, so it always passes",
        ] {
            assert!(out.stdout.contains(says), "{says}\n{}", out.stdout);
        }
        let mut recipe = good();
        recipe["queries"][0]["run"] = json!({"sparql": "ASK {}", "endpoint": ""});
        recipe["queries"][0]
            .as_object_mut()
            .unwrap()
            .remove("candidates");
        recipe["queries"][0]["expectations"] =
            json!([{"type": "contract", "check": "call_succeeds"}]);
        let out = validate(&recipe).status(1).run();
        assert!(
            out.stdout.contains("query 'q1': run.endpoint: empty"),
            "{}",
            out.stdout
        );
        validate(&good()).args(["--timeout", "0"]).status(2).run();

        let published = crate::support::repo().join("catalogs/published");
        let report = std::fs::read_to_string(published.join("demo-kg-fuzzy/report.md")).unwrap();
        let base =
            std::fs::read_to_string(published.join("demo-kg-exact-first/results.json")).unwrap();
        let cand = std::fs::read_to_string(published.join("demo-kg-fuzzy/results.json")).unwrap();
        let out = Test::new()
            .write("base/results.json", &base)
            .write("cand/results.json", &cand)
            .write("cand/report.md", &report)
            .args([
                "catalog",
                "compare",
                "base",
                "cand",
                "--markdown",
                "cand/report.md",
            ])
            .status(2)
            .run();
        assert_eq!(
            std::fs::read_to_string(out.path().join("cand/report.md")).unwrap(),
            report
        );

        // An expectation whose type was edited in results.json alone is
        // damage (issue 24, item 8), named as such.
        let mut retyped: Value = serde_json::from_str(&cand).unwrap();
        let e = &mut retyped["queries"][1]["phrasings"][0]["expectations"][2];
        assert_eq!(e["check"], json!("acceptable_in_top"));
        e["type"] = json!("contract");
        Test::new()
            .write("cand/results.json", &cand)
            .write("retyped.json", retyped.to_string())
            .args(["catalog", "compare", "cand", "retyped.json"])
            .stderr_contains("retyped.json: does not follow from the run's own catalog")
            .stderr_contains("query 'diabetes-by-name', canonical phrasing, expectation 3 (acceptable_in_top): its type is contract in results.json, but the catalog's is quality")
            .status(2)
            .run();
    }

    // A results.json edited to record its catalog by an absolute path put
    // that path into report.md, report.html's title and the site page.
    #[test]
    fn an_absolute_catalog_path_in_results_is_published_by_its_file_name() {
        let published = crate::support::repo().join("catalogs/published");
        let text = std::fs::read_to_string(published.join("demo-kg-fuzzy/results.json")).unwrap();
        let mut results: Value = serde_json::from_str(&text).unwrap();
        results["catalog"] = json!("/home/alice/secret/demo-kg.json");
        let out = Test::new()
            .write("run/results.json", results.to_string())
            .args(["build"])
            .status(0)
            .run();
        let report = std::fs::read_to_string(out.path().join("run/report.md")).unwrap();
        assert!(
            report.starts_with("# Catalog run: demo-kg.json\n"),
            "{report}"
        );
        for file in [
            "run/report.md",
            "run/report.html",
            "site/catalogs/run/index.html",
        ] {
            let text = std::fs::read_to_string(out.path().join(file)).unwrap();
            assert!(!text.contains("/home/alice"), "{file}");
        }
    }

    // A selector whose id member the rows lack (rows[*] by "label" over an
    // ASK query's "ask" column) counted 0 candidates and failed as an
    // empty answer; a recipe without an endpoint, run outside a repository,
    // was told to pass --endpoint, which catalog run does not take.
    #[test]
    fn a_selector_that_does_not_fit_and_a_missing_endpoint_are_errors_that_say_why() {
        let mut catalog = good();
        catalog["queries"][0]["run"] = json!({"sparql": "ASK { ?s ?p ?o }", "endpoint": "kg.nt"});
        catalog["queries"][0]["candidates"] = json!({"path": "rows[*]", "id": "label"});
        catalog["queries"][0]["variables"] = json!({});
        catalog["queries"][0]["expectations"] = json!([
            {"type": "contract", "check": "call_succeeds"},
            {"type": "contract", "check": "count_at_least", "n": 1}
        ]);
        let profile = crate::support::repo().join("profiles/demo-kg.local.toml");
        let run = |catalog: &Value| {
            Test::new()
                .write("c.json", serde_json::to_string_pretty(catalog).unwrap())
                .write("kg.nt", "<http://in/A> <http://in/p> \"x\" .\n")
                .write("kg.nt.graph", "http://in/g\n")
                .args([
                    "catalog",
                    "run",
                    "c.json",
                    "--profile",
                    profile.to_str().unwrap(),
                    "--out",
                    "out",
                ])
                .status(1)
                .run()
        };
        let out = run(&catalog);
        let report = std::fs::read_to_string(out.path().join("out/report.md")).unwrap();
        assert!(
            report.contains("contract `count_at_least`): error: candidate 1 of 'rows\\[\\*\\]' has no member 'label' (its members: ask)"),
            "{report}"
        );
        catalog["queries"][0]["run"] = json!({"sparql": "ASK { ?s ?p ?o }"});
        let out = run(&catalog);
        let report = std::fs::read_to_string(out.path().join("out/report.md")).unwrap();
        assert!(
            report.contains("no SPARQL endpoint: give the query a run.endpoint, or set \\[reference\\] endpoint in okn-benchmark.toml"),
            "{report}"
        );
        assert!(!report.contains("--endpoint"), "{report}");
    }
}

/// `build` publishes catalog runs and comparisons (`docs/CATALOG.md`,
/// "Publishing" and "The published example"), from their files alone.
mod publishing {
    use crate::support::{Test, repo};
    use serde_json::Value;
    use std::path::Path;

    /// Runs the demo catalog against the demo KG server (started by each
    /// run over stdio) under both `lookup_uri` rankings, into
    /// `dir/demo-kg-exact-first` and `dir/demo-kg-fuzzy`, and copies the
    /// repository's `comparison.toml` beside them: the published example,
    /// recorded again.
    pub(super) fn record(dir: &Path) {
        for (lookup, profile) in [
            ("exact-first", "profiles/demo-kg.local.toml"),
            ("fuzzy", "profiles/demo-kg.fuzzy.toml"),
        ] {
            let out = dir.join(format!("demo-kg-{lookup}"));
            Test::in_repo()
                .args([
                    "catalog",
                    "run",
                    "catalogs/demo-kg.json",
                    "--profile",
                    profile,
                ])
                .args(["--out", out.to_str().unwrap()])
                .status(0)
                .run();
        }
        let compared = dir.join("exact-first-vs-fuzzy");
        std::fs::create_dir_all(&compared).unwrap();
        std::fs::copy(
            repo().join("catalogs/published/exact-first-vs-fuzzy/comparison.toml"),
            compared.join("comparison.toml"),
        )
        .unwrap();
    }

    pub(super) fn read(path: impl AsRef<Path>) -> String {
        std::fs::read_to_string(path.as_ref())
            .unwrap_or_else(|e| panic!("{}: {e}", path.as_ref().display()))
    }

    /// Recording the example again gives the committed reports and
    /// comparison byte for byte (so the published classes are what the two
    /// rankings really give); `build` makes their pages and site pages, and
    /// `--check` then finds a page made stale by a recorded duration edited
    /// by hand (a status edited by hand is refused: `derived_again`).
    #[test]
    fn the_published_example_is_what_the_two_rankings_give() {
        let dir = tempfile::tempdir().unwrap();
        record(dir.path());
        Test::new()
            .current_dir(dir.path())
            .args(["build"])
            .status(0)
            .run();
        let published = repo().join("catalogs/published");
        for file in [
            "demo-kg-exact-first/report.md",
            "demo-kg-fuzzy/report.md",
            "exact-first-vs-fuzzy/comparison.md",
        ] {
            assert_eq!(
                read(dir.path().join(file)),
                read(published.join(file)),
                "{file}: run scripts/record-catalog-example"
            );
        }
        let comparison = read(dir.path().join("exact-first-vs-fuzzy/comparison.md"));
        for line in [
            "| regressed | 1 |",
            "| mixed | 1 |",
            "| unchanged | 3 |",
            "## diabetes-by-name: regressed",
            // Issue 26, section 3: in a server maintainer's words, the
            // candidates with their labels.
            "- the quality check no\\_rejected\\_above\\_acceptable (the query's expectation no. 4): in the baseline it passes; in the candidate it fails",
            "- the top candidate changed: in the baseline diabetes mellitus (http://purl.obolibrary.org/obo/DOID\\_9351); in the candidate type 2 diabetes mellitus (http://purl.obolibrary.org/obo/DOID\\_9352)",
            "- rephrasing 1 (\"Maine counties\"): the quality check acceptable\\_in\\_top (the query's expectation no. 3): in the baseline it fails; in the candidate it passes",
        ] {
            assert!(comparison.contains(line), "{line}\n{comparison}");
        }
        let page = read(dir.path().join("site/catalogs/demo-kg-fuzzy/index.html"));
        for part in [
            "<h2 id=\"calls\">",
            "Candidates, in rank order (5)",
            "http://purl.obolibrary.org/obo/DOID_9352",
            "\"label\": \"diabetes mellitus\"",
            "Generated by okn-benchmark",
        ] {
            assert!(page.contains(part), "{part}");
        }
        let index = read(dir.path().join("site/index.html"));
        assert!(index.contains("Catalog runs and comparisons"));
        assert!(index.contains("href=\"catalogs/exact-first-vs-fuzzy/index.html\""));
        assert!(index.contains("5 queries: 1 regressed, 1 mixed, 3 unchanged"));
        let compared = read(
            dir.path()
                .join("site/catalogs/exact-first-vs-fuzzy/index.html"),
        );
        assert!(
            compared.contains("href=\"../demo-kg-fuzzy/index.html\""),
            "{compared}"
        );
        assert!(dir.path().join("demo-kg-fuzzy/report.html").is_file());
        assert!(
            dir.path()
                .join("exact-first-vs-fuzzy/comparison.html")
                .is_file()
        );
        Test::new()
            .current_dir(dir.path())
            .args(["build", "--check"])
            .status(0)
            .run();
        // A duration edited by hand (evidence: nothing else gives it):
        // the run's site page, which shows it, is stale.
        let results = dir.path().join("demo-kg-fuzzy/results.json");
        let mut json: Value = serde_json::from_str(&read(&results)).unwrap();
        json["queries"][1]["phrasings"][0]["duration_s"] = 9.5.into();
        std::fs::write(&results, serde_json::to_string_pretty(&json).unwrap()).unwrap();
        let check = Test::new()
            .current_dir(dir.path())
            .args(["build", "--check"])
            .status(1)
            .run();
        let said = format!("{}{}", check.stdout, check.stderr);
        assert!(
            said.contains("site/catalogs/demo-kg-fuzzy/index.html"),
            "{said}"
        );
        assert!(!said.contains("report.md"), "{said}");
    }

    /// What `build` refuses among catalog runs and comparisons, each with
    /// exit 2, the file and the field or line, and nothing written.
    #[test]
    fn a_broken_results_json_or_comparison_is_refused_naming_the_file_and_field() {
        let published = repo().join("catalogs/published");
        let good = read(published.join("demo-kg-fuzzy/results.json"));
        let json: Value = serde_json::from_str(&good).unwrap();
        let edited = |edit: &dyn Fn(&mut Value)| {
            let mut j = json.clone();
            edit(&mut j);
            serde_json::to_string_pretty(&j).unwrap()
        };
        let toml = |text: &str| format!("baseline = \"../run\"\ncandidate = \"../run\"\n{text}");
        let cases: Vec<(&str, String, String, Vec<&str>)> = vec![
            (
                "a missing member",
                edited(&|j| {
                    j.as_object_mut().unwrap().remove("queries");
                }),
                toml(""),
                vec!["run/results.json", "missing field `queries`"],
            ),
            (
                "a cut file",
                good[..good.len() / 2].to_string(),
                toml(""),
                vec!["run/results.json", "not a catalog run's results.json"],
            ),
            (
                "format 1",
                edited(&|j| {
                    j["format"] = 1.into();
                    j.as_object_mut().unwrap().remove("catalog_document");
                }),
                toml(""),
                vec!["run/results.json", "keeps no catalog_document"],
            ),
            (
                "a newer format",
                edited(&|j| j["format"] = 4.into()),
                toml(""),
                vec!["format 4 is not one this version reads (1 to 3)"],
            ),
            (
                "an unknown key",
                good.clone(),
                toml("winner = \"candidate\"\n"),
                vec!["comparison.toml", "unknown field `winner`"],
            ),
            (
                "an absolute path",
                good.clone(),
                "baseline = \"/srv/runs/a\"\ncandidate = \"../run\"\n".to_string(),
                vec!["comparison.toml", "relative to this folder"],
            ),
            (
                "a missing run",
                good.clone(),
                "baseline = \"../gone\"\ncandidate = \"../run\"\n".to_string(),
                vec!["gone/results.json"],
            ),
        ];
        for (what, results, comparison, said) in cases {
            let out = Test::new()
                .write("run/results.json", &results)
                .write(
                    "run/report.md",
                    "# Catalog run\n\nGenerated by okn-benchmark (`catalog run`, `build`) from results.json\n",
                )
                .write("compared/comparison.toml", &comparison)
                .args(["build"])
                .status(2)
                .run();
            for s in said {
                assert!(out.stderr.contains(s), "{what}: {s}\n{}", out.stderr);
            }
            assert!(!out.path().join("site").exists(), "{what}");
            assert!(
                !out.path().join("compared/comparison.md").exists(),
                "{what}"
            );
        }
        // A report a person wrote is kept.
        let out = Test::new()
            .write("run/results.json", &good)
            .write("run/report.md", "# My notes on this run\n")
            .args(["build"])
            .status(2)
            .stderr_contains(
                "no line starts \"Generated by okn-benchmark (`catalog run`, `build`)\"",
            )
            .run();
        assert_eq!(
            read(out.path().join("run/report.md")),
            "# My notes on this run\n"
        );
    }

    /// No path of the machine is recorded or written: a catalog given by
    /// its absolute path is recorded by its file name, and `compare` names
    /// runs given by absolute paths by their last two parts.
    #[test]
    fn absolute_paths_stay_out_of_results_and_comparisons() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = repo().join("catalogs/demo-kg.json");
        let out = dir.path().join("run");
        Test::in_repo()
            .args(["catalog", "run", catalog.to_str().unwrap()])
            .args([
                "--profile",
                "profiles/demo-kg.local.toml",
                "--type",
                "contract",
            ])
            .args(["--out", out.to_str().unwrap()])
            .status(0)
            .run();
        let results = read(out.join("results.json"));
        let json: Value = serde_json::from_str(&results).unwrap();
        assert_eq!(json["catalog"], "demo-kg.json");
        assert_eq!(json["format"], 3);
        assert_eq!(
            json["catalog_document"]["queries"][1]["id"],
            "diabetes-by-name"
        );
        let root = repo();
        for text in [&results, &read(out.join("report.md"))] {
            assert!(!text.contains(dir.path().to_str().unwrap()));
            assert!(!text.contains(root.to_str().unwrap()));
        }
        let compared = Test::new()
            .args([
                "catalog",
                "compare",
                out.to_str().unwrap(),
                out.to_str().unwrap(),
            ])
            .args(["--markdown", "-"])
            .status(0)
            .run();
        assert!(
            !compared.stdout.contains(dir.path().to_str().unwrap()),
            "{}",
            compared.stdout
        );
        assert!(
            compared
                .stdout
                .contains("/run (profile demo-kg, okn-demo-kg 0.1.0"),
            "{}",
            compared.stdout
        );
    }
}

/// Issue 24, item 8: a catalog run's `results.json` is derived again from
/// its own catalog and recorded replies wherever it is read (`build`,
/// `catalog compare`), and `catalog compare` does not class a query that
/// asks another question in the two runs.
mod derived_again {
    use super::publishing::{read, record};
    use crate::support::{Test, repo};
    use serde_json::{Value, json};
    use std::path::Path;

    /// Runs `catalog` (a path from the repository's root) against the demo
    /// KG server (exact-first ranking) into `out`.
    fn run(catalog: &Path, out: &Path) {
        Test::in_repo()
            .args(["catalog", "run", catalog.to_str().unwrap()])
            .args(["--profile", "profiles/demo-kg.local.toml"])
            .args(["--out", out.to_str().unwrap()])
            .status(0)
            .run();
    }

    /// Issue 24, item 8: `build` published a results.json whose failing
    /// statuses were flipped to pass by hand ("Attention required:
    /// nothing"), and `catalog compare` classed it. Both now derive every
    /// status again from the recorded replies, refuse the file naming it
    /// and the query (exit 2), and write nothing.
    #[test]
    fn build_and_compare_refuse_statuses_flipped_by_hand_in_results_json() {
        let dir = tempfile::tempdir().unwrap();
        record(dir.path());
        Test::new()
            .current_dir(dir.path())
            .args(["build"])
            .status(0)
            .run();
        let report = read(dir.path().join("demo-kg-fuzzy/report.md"));
        assert!(
            report.contains("- diabetes-by-name expectation 3 (quality `acceptable_in_top`): fail"),
            "{report}"
        );
        let page = dir.path().join("site/catalogs/demo-kg-fuzzy/index.html");
        let page_before = read(&page);
        let results = dir.path().join("demo-kg-fuzzy/results.json");
        let mut json: Value = serde_json::from_str(&read(&results)).unwrap();
        let diabetes = &mut json["queries"][1];
        assert_eq!(diabetes["id"], "diabetes-by-name");
        let mut flipped = 0;
        for phrasing in diabetes["phrasings"].as_array_mut().unwrap() {
            for e in phrasing["expectations"].as_array_mut().unwrap() {
                if e["status"] == "fail" {
                    e["status"] = json!("pass");
                    e["detail"] = Value::Null;
                    flipped += 1;
                }
            }
        }
        assert_eq!(flipped, 6);
        std::fs::write(&results, serde_json::to_string_pretty(&json).unwrap()).unwrap();
        let said = "demo-kg-fuzzy/results.json: does not follow from the run's own catalog and \
                    recorded replies (edited by hand, or recorded by a version that judged \
                    otherwise), so it is not used: query 'diabetes-by-name', canonical phrasing, \
                    expectation 3 (acceptable_in_top): status pass in results.json, but the \
                    recorded reply gives fail; query 'diabetes-by-name', canonical phrasing, \
                    expectation 4 (no_rejected_above_acceptable): status pass in results.json, \
                    but the recorded reply gives fail; query 'diabetes-by-name', rephrasing 1, \
                    expectation 3 (acceptable_in_top): status pass in results.json, but the \
                    recorded reply gives fail; and 3 more; run the catalog again";
        for args in [&["build"][..], &["build", "--check"]] {
            Test::new()
                .current_dir(dir.path())
                .args(args)
                .stderr_contains(said)
                .status(2)
                .run();
        }
        assert_eq!(read(dir.path().join("demo-kg-fuzzy/report.md")), report);
        assert_eq!(read(&page), page_before);
        Test::new()
            .current_dir(dir.path())
            .args(["catalog", "compare", "demo-kg-exact-first", "demo-kg-fuzzy"])
            .args(["--markdown", "compared.md"])
            .stderr_contains(said)
            .status(2)
            .run();
        assert!(!dir.path().join("compared.md").exists());
    }

    /// Issue 24, item 8, the kind: every member of results.json that
    /// follows from the catalog and the recorded replies is derived again,
    /// so a hand edit of any of them is refused by `catalog compare` and
    /// `build`, naming the file, the query and what differs: a count in a
    /// detail, the candidate list, a known gap's date, a tool's name, a
    /// wording, a category, a query left out, the types evaluated, the
    /// catalog kept beside the run or its digest, a member no version
    /// writes, a reply removed.
    #[test]
    fn a_hand_edited_count_known_gap_tool_or_catalog_in_results_json_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        run(Path::new("catalogs/demo-kg.json"), &out);
        let text = read(out.join("results.json"));
        let json: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["format"], 3);
        let maine = "query 'maine-by-name', canonical phrasing";
        /// What is edited, the edit, what the refusal says.
        type Case = (&'static str, Box<dyn Fn(&mut Value)>, String);
        let cases: Vec<Case> = vec![
            (
                "a count in a detail",
                Box::new(|j| {
                    j["queries"][0]["phrasings"][0]["expectations"][4]["detail"] =
                        json!("1 candidates, more than 1");
                }),
                format!(
                    "{maine}, expectation 5 (count_at_most): its detail is \"1 candidates, more \
                     than 1\" in results.json, but the recorded reply gives \"2 candidates, more \
                     than 1\""
                ),
            ),
            (
                "the candidate count",
                Box::new(|j| {
                    j["queries"][0]["phrasings"][0]["candidates"]
                        .as_array_mut()
                        .unwrap()
                        .pop();
                }),
                format!(
                    "{maine}: 1 candidate in results.json, but the recorded reply gives 2 \
                     candidates"
                ),
            ),
            (
                "a known gap's date",
                Box::new(|j| {
                    j["queries"][0]["phrasings"][0]["expectations"][4]["known_gap"] =
                        json!("2027-01-01");
                }),
                format!(
                    "{maine}, expectation 5 (count_at_most): its known gap (found) is \
                     \"2027-01-01\" in results.json, but the catalog's is \"2026-12-02\""
                ),
            ),
            (
                "a known gap closed by hand",
                Box::new(|j| {
                    j["queries"][0]["phrasings"][0]["expectations"][4]["status"] =
                        json!("known_gap_fixed");
                }),
                format!(
                    "{maine}, expectation 5 (count_at_most): status known_gap_fixed in \
                     results.json, but the recorded reply gives known_gap_open"
                ),
            ),
            (
                "a tool's name",
                Box::new(|j| j["queries"][2]["phrasings"][0]["tool"] = json!("query")),
                "query 'graphs-listed', canonical phrasing: the tool is \"query\" in \
                 results.json, but the catalog calls \"list_graphs\""
                    .to_string(),
            ),
            (
                "a wording",
                Box::new(|j| {
                    j["queries"][0]["phrasings"][1]["user_query"] = json!("Maine, the state")
                }),
                "query 'maine-by-name', rephrasing 1: the wording is \"Maine, the state\" in \
                 results.json, but the catalog's is \"Maine counties\""
                    .to_string(),
            ),
            (
                "a category",
                Box::new(|j| j["queries"][0]["category"] = json!("schema")),
                "query 'maine-by-name': category is \"schema\" in results.json, but the \
                 catalog's is \"discovery\""
                    .to_string(),
            ),
            (
                "a query left out",
                Box::new(|j| {
                    j["queries"].as_array_mut().unwrap().remove(2);
                }),
                "query 'graphs-listed': absent from results.json, though the run's catalog has \
                 it"
                .to_string(),
            ),
            (
                "a type left out",
                Box::new(|j| j["types"] = json!(["contract", "quality"])),
                format!(
                    "{maine}, expectation 4: in results.json, but the catalog has no such \
                     expectation of a type the run evaluated"
                ),
            ),
            (
                "the catalog kept beside the run",
                Box::new(|j| {
                    j["catalog_document"]["queries"][0]["why"] = json!("edited");
                }),
                "catalog_document, query 'maine-by-name': differs from the catalog \
                 catalog_source holds"
                    .to_string(),
            ),
            (
                "the catalog's digest",
                Box::new(|j| j["catalog_sha256"] = json!(format!("sha256:{}", "0".repeat(64)))),
                "catalog_source: its SHA-256 is sha256:".to_string(),
            ),
            (
                "a member no version writes",
                Box::new(|j| j["counts"] = json!({"contract": {"pass": 10}})),
                "unknown field `counts`".to_string(),
            ),
            (
                "a reply removed",
                Box::new(|j| j["queries"][3]["phrasings"][0]["reply"] = Value::Null),
                "query 'bad-query-fails', canonical phrasing: holds neither a reply nor an \
                 execution error"
                    .to_string(),
            ),
        ];
        for (what, edit, said) in &cases {
            let mut edited = json.clone();
            edit(&mut edited);
            let edited = serde_json::to_string_pretty(&edited).unwrap();
            let compared = Test::new()
                .write("good/results.json", &text)
                .write("edited/results.json", &edited)
                .args(["catalog", "compare", "good", "edited"])
                .status(2)
                .run();
            assert!(
                compared.stderr.starts_with("error: edited/results.json:")
                    && compared.stderr.contains(said.as_str()),
                "{what}: {said}\n{}",
                compared.stderr
            );
            let built = Test::new()
                .write("edited/results.json", &edited)
                .args(["build"])
                .status(2)
                .run();
            assert!(
                built.stderr.contains(said.as_str()),
                "{what}\n{}",
                built.stderr
            );
            assert!(!built.path().join("edited/report.md").exists(), "{what}");
        }
        // The run as recorded is read, a copy with a changed duration
        // (evidence: nothing else gives it) is too, and so is the same run
        // as format 2 wrote it (without catalog_source).
        let mut slower = json.clone();
        slower["queries"][0]["phrasings"][0]["duration_s"] = json!(9.5);
        let mut format_2 = json.clone();
        format_2["format"] = json!(2);
        format_2.as_object_mut().unwrap().remove("catalog_source");
        for other in [slower, format_2] {
            Test::new()
                .write("good/results.json", &text)
                .write("other/results.json", other.to_string())
                .args(["catalog", "compare", "good", "other"])
                .stdout("5 of 5 queries unchanged\n")
                .status(0)
                .run();
        }
    }

    /// Issue 24, item 8: `catalog compare` of two runs whose query of one
    /// id asks another question (other arguments, other expectations)
    /// classed the query by its statuses ("regressed"). It is now "not
    /// comparable", naming what differs, and counted in no other class.
    #[test]
    fn compare_calls_a_query_asked_with_other_arguments_not_comparable_naming_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut catalog: Value =
            serde_json::from_str(&read(repo().join("catalogs/demo-kg.json"))).unwrap();
        let queries = catalog["queries"].as_array_mut().unwrap();
        assert_eq!(queries[0]["id"], "maine-by-name");
        queries[0]["run"]["arguments"]["label"] = json!("Maine counties");
        assert_eq!(queries[1]["id"], "diabetes-by-name");
        assert_eq!(queries[1]["expectations"][2]["n"], 1);
        queries[1]["expectations"][2]["n"] = json!(2);
        assert_eq!(queries[2]["id"], "graphs-listed");
        queries.remove(2);
        let other = dir.path().join("other.json");
        std::fs::write(&other, serde_json::to_string_pretty(&catalog).unwrap()).unwrap();
        run(Path::new("catalogs/demo-kg.json"), &dir.path().join("base"));
        run(&other, &dir.path().join("cand"));
        let compared = Test::new()
            .current_dir(dir.path())
            .args(["catalog", "compare", "base", "cand"])
            .status(0)
            .run()
            .stdout;
        assert_eq!(
            compared,
            "The catalogs differ: queries are compared on the ids both ran\n\
             maine-by-name: not comparable\n  \
             argument 'label' is \"Maine\" in the baseline, but \"Maine counties\" in the candidate\n\
             diabetes-by-name: not comparable\n  \
             the query's expectation no. 3 is {\"type\":\"quality\",\"check\":\"acceptable_in_top\",\"n\":1} in the\n    \
             baseline, but {\"type\":\"quality\",\"check\":\"acceptable_in_top\",\"n\":2} in the candidate\n\
             graphs-listed: not comparable\n  in the baseline's run only\n\
             2 of 5 queries unchanged\n"
        );
        let markdown = Test::new()
            .current_dir(dir.path())
            .args(["catalog", "compare", "base", "cand", "--markdown", "-"])
            .status(0)
            .run()
            .stdout;
        assert!(
            markdown.contains(
                "| regressed | 0 |\n| mixed | 0 |\n| improved | 0 |\n| changed | 0 |\n\
                 | not comparable | 3 |\n| unchanged | 2 |\n"
            ),
            "{markdown}"
        );
        assert!(
            markdown.contains(
                "## maine-by-name: not comparable\n\n- argument 'label' is \"Maine\" in the \
                 baseline, but \"Maine counties\" in the candidate\n"
            ),
            "{markdown}"
        );
    }
}
