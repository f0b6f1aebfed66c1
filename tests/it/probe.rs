//! `okn-benchmark probe` and `kg-server` through the real binary: what an
//! agent would see at each level, checked against the shipped demo profile,
//! and profile errors that name the file and key.

use crate::support::{okn, stderr, stdout, work_dir};

#[test]
fn probe_shows_both_levels_for_the_shipped_demo_profile() {
    let out = okn()
        .args([
            "probe",
            "--profile",
            "profiles/demo-kg.local.toml",
            "--without-tool",
            "get_schema",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "server: demo-kg (stdio okn-benchmark kg-server --data demo/kg)"
    );
    assert_eq!(
        lines[1],
        format!(
            "reports itself as: okn-demo-kg {}",
            env!("CARGO_PKG_VERSION")
        )
    );
    assert_eq!(
        lines[2],
        "tools: 5 (get_descendants, get_schema, list_graphs, lookup_uri, query)"
    );
    assert!(
        lines[3].starts_with("instructions: ") && lines[3].ends_with(" characters"),
        "{text}"
    );
    assert_eq!(
        lines[5],
        "all-tools: 5 tools: get_descendants, list_graphs, lookup_uri, query, submit_csv; the server's instructions are forwarded"
    );
    assert_eq!(
        lines[6],
        "  withheld: get_schema (hidden from tools/list, refused if called)"
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
    let out = okn()
        .args([
            "probe",
            "--profile",
            "profiles/demo-kg.local.toml",
            "--without-tool",
            "get_shema",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).lines().last().unwrap(),
        "error: --without-tool: 'get_shema' is not a tool of demo-kg (did you mean 'get_schema'?). The server's tools: get_descendants, get_schema, list_graphs, lookup_uri, query."
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn profile_errors_name_the_file_line_and_key() {
    let dir = work_dir(&[(
        "p.toml",
        "name = \"x\"\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:9/mcp\"\nheader = {}\n",
    )]);
    let out = crate::support::okn_in(dir.path())
        .args(["probe", "--profile", "p.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: p.toml:5: unknown key 'header' in [upstream] for transport \"http\" (expected url, headers)\n"
    );
    let out = crate::support::okn_in(dir.path())
        .args(["probe", "--profile", "missing.toml"])
        .output()
        .unwrap();
    assert_eq!(
        stderr(&out),
        "error: missing.toml: cannot read: no such file or folder\n"
    );
}

#[test]
fn an_unreachable_server_is_a_one_line_error() {
    let dir = work_dir(&[(
        "p.toml",
        "name = \"x\"\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:9/mcp\"\n",
    )]);
    let out = crate::support::okn_in(dir.path())
        .args(["probe", "--profile", "p.toml", "--timeout", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: p.toml: MCP initialization with http://127.0.0.1:9/mcp failed"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn kg_server_rejects_an_unknown_fault() {
    let out = okn()
        .args(["kg-server", "--fault", "explode=1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "expected rate-limit-every=N, rpc-error-every=N, hang-after=N or die-after=N"
        ),
        "{}",
        stderr(&out)
    );
}
