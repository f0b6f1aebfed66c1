//! `okn-benchmark probe --agent HOST` through the real binary (issue 25,
//! "Isolation verified, not assumed": "`run` (and `probe --agent HOST`)
//! starts the host once ..."): after what an agent would see, probe takes
//! the host's tool census with the episode's own command, proxy and
//! environment, against the real claude and codex CLIs that
//! `scripts/test` installs. No stand-in is started here: the census points
//! the host at its own.

use std::path::{Path, PathBuf};

use crate::support::{Test, repo, tool};

const PROFILE: &str = "profiles/demo-kg.local.toml";

/// `probe --profile PROFILE --agent HOST` from the repository with `home`
/// as HOME and `extra` flags.
fn probe(home: &Path, host: &str, extra: &[&str]) -> Test {
    Test::in_repo()
        .env("HOME", home)
        .args(["probe", "--profile", PROFILE, "--agent", host])
        .args(extra)
}

/// The tools a `census: VERSION: N tools offered (A, B, ...); ...` line
/// names, in order.
fn census_tools(stdout: &str) -> Vec<String> {
    let line = stdout
        .lines()
        .rfind(|l| l.starts_with("census: ") && l.contains(" offered ("))
        .unwrap_or_else(|| panic!("no census line in:\n{stdout}"));
    let inside = &line[line.find(" offered (").unwrap() + " offered (".len()..];
    let inside = &inside[..inside.find(')').unwrap()];
    inside.split(", ").map(str::to_string).collect()
}

/// An executable script `name` in a new folder that starts the real
/// claude CLI with its arguments rewritten by `rewrite` (a bash expression
/// of `$a`, each argument in turn).
fn claude_wrapper(name: &str, rewrite: &str) -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let script = format!(
        "#!/usr/bin/env bash\nargs=()\nfor a in \"$@\"; do\n  args+=(\"{rewrite}\")\ndone\nexec '{}' \"${{args[@]}}\"\n",
        tool("claude").display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, path)
}

/// Issue 25, section 3 (`probe --agent HOST`): probe starts the real
/// claude CLI once with the episode's flags and proxy, after its own
/// output, and prints the tools it offered: the proxy's (minus the one
/// withheld, so the proxy is the episode's) and claude's ToolSearch.
#[test]
fn probe_agent_claude_prints_the_tools_the_real_cli_offers() {
    let home = tempfile::tempdir().unwrap();
    let without = Test::in_repo()
        .args([
            "probe",
            "--profile",
            PROFILE,
            "--without-tool",
            "get_schema",
        ])
        .run();
    let out = probe(home.path(), "claude", &["--without-tool", "get_schema"])
        .env("ANTHROPIC_API_KEY", "dummy")
        .arg("--agent-program")
        .arg(tool("claude"))
        .run();
    // What probe printed without --agent comes first, unchanged.
    assert!(
        out.stdout.starts_with(&without.stdout),
        "{}\n---\n{}",
        without.stdout,
        out.stdout
    );
    let census: Vec<&str> = out.stdout[without.stdout.len()..].lines().collect();
    assert_eq!(
        census[..2],
        [
            "",
            "census: starting claude once against a local stand-in to see the tools it offers"
        ],
        "{}",
        out.stdout
    );
    assert_eq!(census.len(), 3, "{}", out.stdout);
    assert!(
        census[2].starts_with("census: claude-cli "),
        "{}",
        census[2]
    );
    assert!(
        census[2].contains("planted markers, none reached the model; digest "),
        "{}",
        census[2]
    );
    let tools = census_tools(&out.stdout);
    for expected in [
        "ToolSearch",
        "mcp__okn__get_descendants",
        "mcp__okn__list_graphs",
        "mcp__okn__lookup_uri",
        "mcp__okn__query",
        "mcp__okn__submit_csv",
    ] {
        assert!(tools.iter().any(|t| t == expected), "{expected}: {tools:?}");
    }
    assert!(
        !tools.iter().any(|t| t == "mcp__okn__get_schema"),
        "withheld by --without-tool: {tools:?}"
    );
    assert!(
        tools.iter().all(|t| t.starts_with("mcp__okn__")
            || t == "ToolSearch"
            || t == "DeferredToolPlaceholder"),
        "{tools:?}"
    );
}

/// Issue 25, section 3: the census's proxy is at the `--tools` level
/// probe is given, as the episode's would be: at sparql-only the control's
/// two tools, none of the profile's server (probe still shows both levels).
#[test]
fn probe_agent_at_sparql_only_offers_the_controls_tools() {
    let home = tempfile::tempdir().unwrap();
    let out = probe(home.path(), "claude", &["--tools", "sparql-only"])
        .env("ANTHROPIC_API_KEY", "dummy")
        .arg("--agent-program")
        .arg(tool("claude"))
        .stdout_contains("all-tools: 6 tools: ")
        .run();
    let tools = census_tools(&out.stdout);
    let proxy: Vec<&String> = tools
        .iter()
        .filter(|t| t.starts_with("mcp__okn__"))
        .collect();
    assert_eq!(
        proxy,
        ["mcp__okn__run_sparql", "mcp__okn__submit_csv"],
        "{tools:?}"
    );
}

/// Issue 25, section 3: a host that offers a tool beyond the proxy's (a
/// claude CLI that no longer blocks `ListAgents`, played by a wrapper that
/// drops it from `--disallowed-tools`) stops probe --agent with exit 2,
/// naming the tool and `--block-tool ListAgents`; with that flag, which
/// probe passes to the host as run does, the census passes.
#[test]
fn probe_agent_names_a_tool_the_host_offers_beyond_the_proxy_and_how_to_block_it() {
    let home = tempfile::tempdir().unwrap();
    let (_keep, wrapper) = claude_wrapper("claude", "${a/,ListAgents,/,}");
    let failed = probe(home.path(), "claude", &[])
        .env("ANTHROPIC_API_KEY", "dummy")
        .arg("--agent-program")
        .arg(&wrapper)
        .stderr_contains("error: the tool census of claude (claude-cli ")
        .stderr_contains("  - tool ListAgents: offered beyond the proxy's tools; block it with `--block-tool ListAgents`")
        .status(2)
        .run();
    assert_eq!(
        failed.stdout.lines().last(),
        Some("census: starting claude once against a local stand-in to see the tools it offers"),
        "{}",
        failed.stdout
    );
    assert_eq!(
        failed.stderr.matches("  - ").count(),
        1,
        "only ListAgents: {}",
        failed.stderr
    );
    let blocked = probe(home.path(), "claude", &["--block-tool", "ListAgents"])
        .env("ANTHROPIC_API_KEY", "dummy")
        .arg("--agent-program")
        .arg(&wrapper)
        .run();
    let tools = census_tools(&blocked.stdout);
    assert!(!tools.iter().any(|t| t == "ListAgents"), "{tools:?}");
    assert!(
        tools.iter().any(|t| t == "mcp__okn__submit_csv"),
        "{tools:?}"
    );
}

/// Issue 25, section 3: probe --agent codex takes the real codex CLI's
/// census: the proxy's tools and codex's own MCP-resource tools, which
/// reach only the proxy.
#[test]
fn probe_agent_codex_lists_the_proxys_tools_and_its_mcp_resource_tools() {
    let home = tempfile::tempdir().unwrap();
    let out = probe(home.path(), "codex", &["--model", "gpt-standin-1"])
        .env("OPENAI_API_KEY", "dummy")
        .arg("--agent-program")
        .arg(tool("codex"))
        .run();
    assert!(
        out.stdout
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("census: codex-cli ")),
        "{}",
        out.stdout
    );
    let tools = census_tools(&out.stdout);
    for expected in [
        "read_mcp_resource",
        "list_mcp_resources",
        "mcp__okn__query",
        "mcp__okn__submit_csv",
    ] {
        assert!(tools.iter().any(|t| t == expected), "{expected}: {tools:?}");
    }
}

/// Issue 25, section 3: a scripted agent calls no model, so probe --agent
/// takes no census of it, says so, and exits 0.
#[test]
fn probe_agent_scripted_says_there_is_no_census() {
    let home = tempfile::tempdir().unwrap();
    let out = probe(home.path(), "scripted:oracle", &[]).run();
    assert_eq!(
        out.stdout.lines().last(),
        Some("census: none: a scripted agent calls no model"),
        "{}",
        out.stdout
    );
}

/// Issue 25, section 3: probe takes the agent flags of run and refuses
/// what run refuses with the same words, before it connects to anything;
/// without --agent it refuses an agent flag it would ignore.
#[test]
fn probe_agent_refuses_the_flags_run_refuses_in_the_same_words() {
    let cases: &[&[&str]] = &[
        &["--agent", "codex", "--max-turns", "3"],
        &["--agent", "gemini", "--effort", "high"],
        &["--agent", "claude", "--base-url", "http://127.0.0.1:9/v1"],
        &["--agent", "scripted:oracle", "--model", "m"],
        &["--agent", "openai:m"],
        &["--agent", "codex", "--block-tool", "ListAgents"],
        &["--agent", "claude", "--block-tool", "a,b"],
        &["--agent", "nobody"],
    ];
    let out = tempfile::tempdir().unwrap();
    for flags in cases {
        let run = Test::in_repo()
            .args(["run", "--corpus", "demo/benchmarks-single", "--out"])
            .arg(out.path().join("runs"))
            .args(["--tools", "all-tools", "--kg-hint", "tags"])
            .args(["--profile", PROFILE])
            .args(*flags)
            .stdout("")
            .status(2)
            .run();
        assert!(
            run.stderr.starts_with("error: "),
            "{flags:?}: {}",
            run.stderr
        );
        let probe = Test::in_repo()
            .args(["probe", "--profile", PROFILE])
            .args(*flags)
            .stdout("")
            .status(2)
            .run();
        // The same refusal; a flag that does not apply ends with the
        // command that works, each command's own (issue 26, section 2).
        let reason = |e: &str| e.split("; run it without").next().unwrap_or("").to_string();
        assert_eq!(reason(&probe.stderr), reason(&run.stderr), "{flags:?}");
        if run.stderr.contains("; run it without") {
            assert!(
                run.stderr.contains(":\n  okn-benchmark run "),
                "{}",
                run.stderr
            );
            assert!(
                probe.stderr.contains(":\n  okn-benchmark probe "),
                "{}",
                probe.stderr
            );
        }
    }
    assert!(!out.path().join("runs").exists(), "run recorded nothing");
    Test::in_repo()
        .args(["probe", "--profile", PROFILE, "--block-tool", "ListAgents"])
        .stdout("")
        .stderr(
            "error: --block-tool is for 'probe --agent HOST' (the tool census); without --agent \
             probe starts no agent host\n",
        )
        .status(2)
        .run();
}

/// `--agent-program` with a folder in it is found from where run and
/// probe were started: the host runs in the attempt's `cwd/`, where the
/// relative path named nothing and the census (and every episode) failed
/// to start it.
#[test]
fn a_relative_agent_program_is_started_from_where_the_command_ran() {
    let home = tempfile::tempdir().unwrap();
    let (dir, _wrapper) = claude_wrapper("bin/claude", "$a");
    let out = Test::new()
        .current_dir(dir.path())
        .env("HOME", home.path())
        .env("ANTHROPIC_API_KEY", "dummy")
        .args(["probe", "--profile"])
        .arg(repo().join(PROFILE))
        .args(["--agent", "claude", "--agent-program", "bin/claude"])
        .run();
    assert!(
        census_tools(&out.stdout).contains(&"mcp__okn__submit_csv".to_string()),
        "{}",
        out.stdout
    );
}

/// An executable script `name` in `dir` with `body` (bash).
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Issue 25, red team: messages printed Rust's debug text for an exit
/// ("the host exited Some(0)", "'auth status' gave no JSON (exit
/// Some(1))"). A host whose `auth status` fails and which exits, or is
/// killed, before it asks the census anything is now told in words.
#[test]
fn regression_exit_statuses_are_worded_not_printed_as_rust_debug_text() {
    let home = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let version = "if [ \"$1\" = --version ]; then echo '2.1.999 (Claude Code)'; exit 0; fi\n\
                   if [ \"$1\" = auth ]; then exit 1; fi\ncat >/dev/null\n";
    let exits = script(bin.path(), "claude-exits", &format!("{version}exit 1\n"));
    let killed = script(
        bin.path(),
        "claude-killed",
        &format!("{version}kill -9 $$\n"),
    );
    for (program, how) in [
        (&exits, "the host exited with status 1 before it asked"),
        (&killed, "the host was killed by a signal before it asked"),
    ] {
        let out = probe(home.path(), "claude", &[])
            .env("ANTHROPIC_API_KEY", "dummy")
            .arg("--agent-program")
            .arg(program)
            .stderr_contains(how)
            .status(2)
            .run();
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(
            said.contains("cannot tell whether claude is logged in ('auth status' gave no JSON: it exited with status 1)"),
            "{said}"
        );
        assert!(!said.contains("Some("), "{said}");
        assert!(!said.contains("None"), "{said}");
    }
}

/// Issue 25, red team: the gemini and codex preflight ran `PROGRAM
/// --version` in the user's own HOME, and gemini 0.61 left
/// `~/.gemini/projects.json.UUID.tmp` files there on every run and probe.
/// The version check now runs in a fresh home, as every episode and the
/// login check do: the user's home is byte for byte as it was.
#[test]
fn regression_probe_agent_leaves_the_users_home_byte_for_byte_unchanged() {
    for (host, key) in [("gemini", "GEMINI_API_KEY"), ("codex", "OPENAI_API_KEY")] {
        let home = tempfile::tempdir().unwrap();
        for (path, text) in [
            (".gemini/settings.json", "{\"general\": {}}\n"),
            (".codex/config.toml", "# the user's own\n"),
            ("notes.txt", "kept\n"),
        ] {
            let path = home.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let before = crate::support::snapshot(home.path());
        let out = probe(
            home.path(),
            host,
            &["--model", &format!("{host}-standin-1")],
        )
        .env(key, "dummy")
        .arg("--agent-program")
        .arg(tool(host))
        .run();
        assert!(
            out.stdout.contains(&format!("census: {host}-cli ")),
            "{}",
            out.stdout
        );
        assert_eq!(
            crate::support::snapshot(home.path()),
            before,
            "{host} wrote into the user's home"
        );
    }
}

/// Issue 25, red team: `probe --agent gemini` without `--model` took ~87
/// s: gemini 0.61's model router asks for JSON, the census's stand-in
/// answered text, and gemini retried with backoff. The census now answers
/// JSON, so the census takes seconds.
#[test]
fn regression_probe_agent_gemini_without_a_model_takes_seconds_not_minutes() {
    let home = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = probe(home.path(), "gemini", &[])
        .env("GEMINI_API_KEY", "dummy")
        .arg("--agent-program")
        .arg(tool("gemini"))
        .run();
    let took = started.elapsed().as_secs_f64();
    assert!(
        census_tools(&out.stdout).contains(&"mcp_okn_submit_csv".to_string()),
        "{}",
        out.stdout
    );
    assert!(took < 45.0, "probe --agent gemini took {took:.0} s");
}
