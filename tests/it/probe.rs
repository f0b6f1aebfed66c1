//! `okn-benchmark probe` and `kg-server` through the real binary: what an
//! agent would see at each level, checked against the shipped demo profile,
//! and profile errors that name the file and key.

use crate::support::Test;

#[test]
fn probe_shows_both_levels_for_the_shipped_demo_profile() {
    let out = Test::in_repo()
        .args(["probe", "--profile", "profiles/demo-kg.local.toml"])
        .args(["--without-tool", "get_schema"])
        .run();
    let lines: Vec<&str> = out.stdout.lines().collect();
    let text = &out.stdout;
    assert_eq!(
        lines[..3],
        [
            "server: demo-kg (stdio okn-benchmark kg-server --data demo/kg)",
            &format!(
                "reports itself as: okn-demo-kg {}",
                env!("CARGO_PKG_VERSION")
            ),
            "tools: 5 (get_descendants, get_schema, list_graphs, lookup_uri, query)",
        ],
        "{text}"
    );
    assert!(
        lines[3].starts_with("instructions: ") && lines[3].ends_with(" characters"),
        "{text}"
    );
    assert_eq!(
        lines[5..7],
        [
            "all-tools: 5 tools: get_descendants, list_graphs, lookup_uri, query, submit_csv; the server's instructions are forwarded",
            "  withheld: get_schema (hidden from tools/list, refused if called)",
        ],
        "{text}"
    );
    assert!(
        lines[7].starts_with("sparql-only: 2 tools: run_sparql, submit_csv"),
        "{text}"
    );
    assert_eq!(
        lines[8],
        "  graphs: biobricks-ice, federation, fiokg, spatialkg, spoke-genelab, spoke-okn, ubergraph"
    );
    assert!(lines[9].starts_with("  preamble digest: sha256:"), "{text}");
}

#[test]
fn a_misspelt_tool_to_withhold_is_an_error_with_did_you_mean() {
    let out = Test::in_repo()
        .args(["probe", "--profile", "profiles/demo-kg.local.toml"])
        .args(["--without-tool", "get_shema"])
        .stdout("")
        .status(2)
        .run();
    assert_eq!(
        out.stderr.lines().last().unwrap(),
        "error: --without-tool: 'get_shema' is not a tool of demo-kg (did you mean 'get_schema'?). The server's tools: get_descendants, get_schema, list_graphs, lookup_uri, query."
    );
}

#[test]
fn profile_errors_name_the_file_line_and_key() {
    Test::new()
        .write(
            "p.toml",
            "name = \"x\"\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:9/mcp\"\nheader = {}\n",
        )
        .args(["probe", "--profile", "p.toml"])
        .stderr("error: p.toml:5: unknown key 'header' in [upstream] for transport \"http\" (expected url, headers, public_headers)\n")
        .status(2)
        .run();
}

#[test]
fn a_missing_profile_is_an_error_naming_it() {
    Test::new()
        .args(["probe", "--profile", "missing.toml"])
        .stderr("error: missing.toml: cannot read: no such file or folder\n")
        .status(2)
        .run();
}

#[test]
fn an_unreachable_server_is_a_one_line_error() {
    let out = Test::new()
        .write(
            "p.toml",
            "name = \"x\"\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:9/mcp\"\n",
        )
        .args(["probe", "--profile", "p.toml", "--timeout", "10"])
        .status(2)
        .run();
    let err = out.stderr;
    assert!(
        err.starts_with("error: p.toml: MCP initialization with http://127.0.0.1:9/mcp failed"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn kg_server_rejects_an_unknown_fault() {
    Test::in_repo()
        .args(["kg-server", "--fault", "explode=1"])
        .stderr_contains(
            "expected rate-limit-every=N, rpc-error-every=N, hang-after=N or die-after=N",
        )
        .status(2)
        .run();
}

mod regression {
    //! One test per fixed defect, named after what it guards; the comment
    //! says what broke.

    use crate::support::Test;

    // probe --tools sparql-only with no endpoint printed a message cut off
    // mid-sentence and exited 0; with an unreachable endpoint it said "2
    // tools" and exited 0 without trying it.
    #[test]
    fn probe_of_the_control_tries_its_endpoint_and_says_what_is_wrong() {
        Test::new()
            .args(["probe", "--tools", "sparql-only"])
            .stderr_contains("no SPARQL endpoint: pass --endpoint URL|PATH, or set it once in okn-benchmark.toml")
            .status(2)
            .run();
        let closed = crate::support::closed_port();
        let port = closed.port;
        Test::new()
            .args([
                "probe",
                "--tools",
                "sparql-only",
                "--shortname",
                "a",
                "--graph-template",
            ])
            .arg("http://x/{shortname}")
            .arg("--endpoint")
            .arg(format!("http://127.0.0.1:{port}/sparql"))
            .stderr_contains("sparql-only: the control's endpoint did not answer ASK {} (")
            .status(2)
            .run();
        Test::in_repo()
            .args(["probe", "--tools", "sparql-only"])
            .stdout_contains("  endpoint: answers (ASK {})\n")
            .status(0)
            .run();
    }

    // `kg-server --fault hang-after=0` was accepted though the help says
    // N is a positive integer.
    #[test]
    fn a_fault_count_of_zero_is_refused_as_the_help_says() {
        for kind in [
            "rate-limit-every",
            "rpc-error-every",
            "hang-after",
            "die-after",
        ] {
            Test::in_repo()
                .args(["kg-server", "--data", "demo/kg", "--fault"])
                .arg(format!("{kind}=0"))
                .stderr_contains(format!(
                    "--fault '{kind}=0': expected rate-limit-every=N, rpc-error-every=N, \
                     hang-after=N or die-after=N (N a positive integer)"
                ))
                .status(2)
                .run();
        }
    }

    // The README named three of the four fault kinds.
    #[test]
    fn the_readme_names_every_fault_kind() {
        let readme = std::fs::read_to_string(crate::support::repo().join("README.md")).unwrap();
        for kind in [
            "rate-limit-every",
            "rpc-error-every",
            "hang-after",
            "die-after",
        ] {
            assert!(
                readme.contains(&format!("`{kind}=N`")),
                "README lacks {kind}"
            );
        }
    }

    // Messages said "1 tools".
    #[test]
    fn one_tool_is_one_tool() {
        Test::in_repo()
            .args(["probe", "--profile", "profiles/demo-kg.local.toml"])
            .args([
                "--without-tool",
                "get_schema",
                "--without-tool",
                "get_descendants",
            ])
            .args([
                "--without-tool",
                "list_graphs",
                "--without-tool",
                "lookup_uri",
            ])
            .args(["--without-tool", "query"])
            .stdout_contains("all-tools: 1 tool: submit_csv;")
            .status(0)
            .run();
    }

    // `reference --help` did not say the endpoint may come from
    // okn-benchmark.toml.
    #[test]
    fn reference_help_says_where_the_endpoint_comes_from() {
        let out = Test::new().args(["reference", "--help"]).run();
        let flat = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(
                "[default: `endpoint` under `[reference]` in the nearest okn-benchmark.toml"
            ),
            "{}",
            out.stdout
        );
    }

    // After a missing-argument error, the usage line listed the optional
    // flags that were given as if they were required.
    #[test]
    fn the_usage_after_a_missing_argument_lists_only_what_is_required() {
        let out = Test::new()
            .args([
                "run",
                "--profile",
                "p.toml",
                "--repeat",
                "2",
                "--corpus",
                "c",
            ])
            .stderr_contains(
                "\nUsage: okn-benchmark run [OPTIONS] --corpus <DIR|GIT-URL> --out <ROOT> --tools \
                 <TOOLS> --kg-hint <KG_HINT>\n",
            )
            .status(2)
            .run();
        assert!(
            out.stderr.starts_with(
                "error: the following required arguments were not provided:\n  --out <ROOT>\n"
            ),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("--repeat <N>"), "{}", out.stderr);
        Test::new()
            .args(["corpus", "list"])
            .stderr_contains(
                "\nUsage: okn-benchmark corpus list [OPTIONS] --corpus <DIR|GIT-URL>\n",
            )
            .status(2)
            .run();
    }
}
