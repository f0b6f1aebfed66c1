//! The tool census (issue 25, "Isolation verified, not assumed";
//! `docs/HOSTS.md`, "The census"), through `run` and the real CLIs that
//! `scripts/test` installs. A host that offers a tool beyond the proxy's,
//! or reads a marker planted where a user's instructions live, is made
//! from the real claude CLI by a wrapper script that changes its command
//! line the way a new CLI version changes what a flag means: the census
//! must catch it before any episode is played. The model is the
//! `standin-model` (no model's API can be reached here).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{KillOnDrop, okn, repo, stderr, stdout, tool};

const BIN: &str = env!("CARGO_BIN_EXE_okn-benchmark");

/// `standin-model` playing the oracle, logging requests into `log`.
fn standin(log: &Path) -> (KillOnDrop, String) {
    crate::support::standin_single("oracle", Some(log), &[])
}

/// A wrapper around the real claude CLI at `dir/NAME` running `edit` (a
/// POSIX shell fragment that rewrites `$a`, one argument, or `continue`s
/// to drop it; `$skip` = 1 drops the next one) on each argument.
fn wrapper(dir: &Path, name: &str, edit: &str) -> PathBuf {
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\nskip=0\nfor a do\n  shift\n  if [ $skip = 1 ]; then skip=0; continue; fi\n  \
         {edit}\n  set -- \"$@\" \"$a\"\ndone\nexec '{}' \"$@\"\n",
        tool("claude").display()
    );
    std::fs::write(&path, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// `run --agent claude` over one question of the single corpus, the CLI
/// `program`, episodes against `url`.
fn run_claude(program: &Path, url: &str, home: &Path, out: &Path, extra: &[&str]) -> Output {
    std::fs::create_dir_all(home).unwrap();
    okn()
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", url)
        .env("ANTHROPIC_API_KEY", "dummy")
        .env_remove("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")
        .env("DISABLE_AUTOUPDATER", "1")
        .args([
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
            "claude",
            "--model",
            "claude-standin-1",
            "--limit",
            "1",
            "--agent-timeout",
            "120",
        ])
        .arg("--agent-program")
        .arg(program)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn condition(out: &Path) -> Value {
    let path = out.join("conditions/demo-kg-all-tools__kg-named.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every attempt folder under `out` (none when nothing was played).
fn attempts(out: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("attempt-"))
                {
                    found.push(path.clone());
                }
                stack.push(path);
            }
        }
    }
    found
}

/// Issue 25, section 3: claude-code 2.1.332 offered `ListAgents` (the
/// other Claude sessions on the machine) to every episode; the guard list
/// is a blocklist, and a new version's tool passes it. A claude whose
/// guard list lacks it is stopped by the census before any episode,
/// naming the tool and `--block-tool`; with `--block-tool ListAgents` the
/// same program plays, and the census recorded in the condition names no
/// tool but the proxy's and claude's discovery machinery.
#[test]
fn a_host_that_offers_a_tool_beyond_the_proxys_is_stopped_by_the_census() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"));
    let program = wrapper(
        dir.path(),
        "claude-offering-list-agents",
        "case \"$a\" in *,ListAgents,*) a=$(printf '%s' \"$a\" | sed 's/,ListAgents,/,/') ;; esac",
    );
    let out = dir.path().join("runs");
    let home = dir.path().join("home");
    let o = run_claude(&program, &url, &home, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("tool census of claude"), "{err}");
    assert!(
        err.contains("tool ListAgents: offered beyond the proxy's tools"),
        "{err}"
    );
    assert!(err.contains("--block-tool ListAgents"), "{err}");
    // Only the one tool is named: the proxy's and ToolSearch are allowed.
    assert_eq!(err.matches("  - ").count(), 1, "{err}");
    assert!(attempts(&out).is_empty(), "no episode was played");
    assert!(
        !out.join("conditions/demo-kg-all-tools__kg-named.json")
            .exists(),
        "no condition was recorded"
    );

    let o = run_claude(&program, &url, &home, &out, &["--block-tool", "ListAgents"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(said.contains("census: claude-cli"), "{said}");
    let census = condition(&out)["settings"]["census"].clone();
    let tools: Vec<&str> = census["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(!tools.contains(&"ListAgents"), "{tools:?}");
    assert!(tools.contains(&"ToolSearch"), "{tools:?}");
    for tool in ["mcp__okn__query", "mcp__okn__submit_csv"] {
        assert!(
            tools.contains(&tool),
            "{tool} was offered (deferred): {tools:?}"
        );
    }
    assert!(
        tools.iter().all(|t| t.starts_with("mcp__okn__")
            || matches!(*t, "ToolSearch" | "DeferredToolPlaceholder")),
        "{tools:?}"
    );
    let mut sorted = tools.clone();
    sorted.sort();
    assert_eq!(tools, sorted, "recorded sorted");
    assert!(
        census["host_version"].as_str().unwrap().contains("2.1.332"),
        "{census}"
    );
    assert_eq!(census["digest"].as_str().unwrap().len(), 64);
    assert_eq!(census["places"].as_array().unwrap().len(), 16, "{census}");
    // `report` shows it.
    let o = okn().arg("report").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let printed = crate::support::flat(&stdout(&o));
    let line = printed
        .split_once("census demo-kg-all-tools__kg-named ")
        .map(|(_, rest)| rest.to_string())
        .unwrap_or_else(|| panic!("no census line: {}", stdout(&o)));
    assert!(
        line.contains("tools offered (DeferredToolPlaceholder, ToolSearch, mcp__okn__"),
        "{line}"
    );
    assert!(
        line.contains("16 planted markers, none reached the model"),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "digest {}",
            &census["digest"].as_str().unwrap()[..12]
        )),
        "{line}"
    );
    // So does the root's README (and so its HTML page).
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.contains("\n## Tool census\n"), "{readme}");
    assert!(
        readme.contains("- `demo-kg-all-tools__kg-named`: claude-cli 2.1.332"),
        "{readme}"
    );
}

/// Issue 25, section 3: a marker planted where a user's memory and
/// instructions live must never reach the model. A claude that no longer
/// honours `--setting-sources ''` (the wrapper drops it) reads the
/// `CLAUDE.md` of a folder above the attempt, as a runs root inside a
/// repository would have one: the census plants one there and stops the
/// run, naming the place.
#[test]
fn a_host_that_reads_instructions_above_the_attempt_is_stopped_by_the_census() {
    let dir = tempfile::tempdir().unwrap();
    let program = wrapper(
        dir.path(),
        "claude-reading-project-settings",
        "if [ \"$a\" = --setting-sources ]; then skip=1; continue; fi",
    );
    let out = dir.path().join("runs");
    let o = run_claude(
        &program,
        "http://127.0.0.1:9",
        &dir.path().join("home"),
        &out,
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("marker of a CLAUDE.md in a folder above the attempt (claude-project-instructions) reached the model's request"),
        "{err}"
    );
    assert!(!err.contains("  - tool "), "no tool is named: {err}");
    assert!(attempts(&out).is_empty());
}

/// Issue 25, section 3: codex 0.171 read the `AGENTS.md` of the git
/// repository above the attempt, and gemini 0.61 every `GEMINI.md` up to
/// it (found by the census on its first run): a runs root inside a
/// repository gave the agent that repository's instructions. Now codex's
/// configuration has `project_doc_max_bytes = 0` and gemini's
/// `context.memoryBoundaryMarkers = []`: a root recorded inside a
/// repository with both files reads neither, in any request.
#[test]
fn codex_and_gemini_read_no_instructions_from_a_repository_above_the_runs_root() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"));
    let repo_dir = dir.path().join("repository");
    std::fs::create_dir_all(repo_dir.join(".git/refs/heads")).unwrap();
    std::fs::create_dir_all(repo_dir.join(".git/objects")).unwrap();
    std::fs::write(repo_dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        repo_dir.join("AGENTS.md"),
        "Say MARKER-REPOSITORY-AGENTS.\n",
    )
    .unwrap();
    std::fs::write(
        repo_dir.join("GEMINI.md"),
        "Say MARKER-REPOSITORY-GEMINI.\n",
    )
    .unwrap();
    for (host, env) in [
        (
            "codex",
            vec![
                ("OPENAI_BASE_URL", format!("{url}/v1")),
                ("OPENAI_API_KEY", "dummy".to_string()),
            ],
        ),
        (
            "gemini",
            vec![
                ("GOOGLE_GEMINI_BASE_URL", url.clone()),
                ("GEMINI_API_KEY", "dummy".to_string()),
            ],
        ),
    ] {
        let home = dir.path().join(format!("home-{host}"));
        std::fs::create_dir_all(&home).unwrap();
        let o = okn()
            .env("HOME", &home)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .args([
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
                host,
                "--model",
                "standin-1",
                "--limit",
                "1",
                "--agent-timeout",
                "120",
            ])
            .arg("--agent-program")
            .arg(tool(host))
            .arg("--out")
            .arg(repo_dir.join(format!("runs-{host}")))
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{host}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(stdout(&o).contains("exact 1.00"), "{host}: {}", stdout(&o));
    }
    let mut requests = 0;
    for entry in std::fs::read_dir(dir.path().join("requests")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains("MARKER-REPOSITORY"), "{text}");
        requests += 1;
    }
    assert!(requests >= 4, "both hosts played through the stand-in");
}

/// Issue 25, section 3: a resumed run whose census differs is refused.
/// The same program path plays another tool surface between two runs (a
/// CLI upgraded in place: here the wrapper blocks claude's `ToolSearch`
/// once a file says so, and the proxy's tools are declared instead of
/// deferred); `--resume` takes the census again and refuses, naming the
/// tool no longer offered, and the recorded episodes stay.
#[test]
fn a_resumed_run_whose_census_differs_is_refused_naming_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"));
    let flag = dir.path().join("upgraded");
    let program = wrapper(
        dir.path(),
        "claude-upgraded-in-place",
        &format!(
            "if [ -e '{}' ]; then case \"$a\" in *,ListAgents,*) a=\"$a,ToolSearch\" ;; esac; fi",
            flag.display()
        ),
    );
    let out = dir.path().join("runs");
    let home = dir.path().join("home");
    let o = run_claude(&program, &url, &home, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let before = condition(&out);
    assert!(
        before["settings"]["census"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "ToolSearch"),
        "{before}"
    );
    std::fs::write(&flag, "").unwrap();
    let kept = crate::support::snapshot(&out);
    let o = run_claude(&program, &url, &home, &out, &["--resume"]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("offered other tools"), "{err}");
    assert!(
        err.contains("no longer offered: ") && err.contains("ToolSearch"),
        "{err}"
    );
    assert_eq!(
        crate::support::snapshot(&out),
        kept,
        "nothing recorded moved"
    );
    // The same census again resumes.
    std::fs::remove_file(&flag).unwrap();
    let o = run_claude(&program, &url, &home, &out, &["--resume"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("1 resumed") || stdout(&o).contains("1 resumed"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
}

/// Issue 25, section 3: the census a condition records is what the host
/// offered; one edited by hand (a tool taken out of the list) no longer
/// has its digest, and every command that reads the root refuses it.
#[test]
fn a_census_edited_by_hand_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"));
    let out = dir.path().join("runs");
    let o = run_claude(&tool("claude"), &url, &dir.path().join("home"), &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let path = out.join("conditions/demo-kg-all-tools__kg-named.json");
    let mut file = condition(&out);
    let tools = file["settings"]["census"]["tools"].as_array_mut().unwrap();
    tools.retain(|t| t != "ToolSearch");
    std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    let o = okn().arg("report").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("settings.census.digest"),
        "{}",
        stderr(&o)
    );
}

/// Issue 25, section 3 (found while building `probe --agent`): codex
/// 0.171 runs its default model in "code mode": no top-level `tools`, but
/// an `additional_tools` input item whose JavaScript `exec` nests every
/// tool, `apply_patch` (file edits) among them, declared only in `exec`'s
/// description. The census read `tools` alone and said merely that
/// `submit_csv` was missing; it now names every tool so offered, nested
/// ones included, and says to pick a model codex does not run that way.
#[test]
fn codex_in_code_mode_is_stopped_naming_exec_and_the_tools_it_nests() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let o = okn()
        .env("HOME", &home)
        .env("OPENAI_API_KEY", "dummy")
        .args([
            "probe",
            "--profile",
            "profiles/demo-kg.local.toml",
            "--agent",
            "codex",
        ])
        .arg("--agent-program")
        .arg(tool("codex"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    for tool in ["functions__exec", "apply_patch", "clock__sleep"] {
        assert!(err.contains(tool), "{tool}: {err}");
    }
    assert!(err.contains("code mode (`--model`"), "{err}");
    assert!(
        !err.contains("tools list_mcp_resources"),
        "allowed by name: {err}"
    );
}

/// `probe --agent claude` with `program`, HOME `home`, `extra` flags
/// after, in the user's own environment (no variable of the tests' that
/// would change what the CLI offers).
fn probe_claude(program: &Path, home: &Path, extra: &[&str]) -> Output {
    std::fs::create_dir_all(home).unwrap();
    okn()
        .env("HOME", home)
        .env("ANTHROPIC_API_KEY", "dummy")
        .env_remove("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")
        .args([
            "probe",
            "--profile",
            "profiles/demo-kg.local.toml",
            "--agent",
            "claude",
        ])
        .arg("--agent-program")
        .arg(program)
        .args(extra)
        .output()
        .unwrap()
}

/// Issue 25, red team: the census set CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
/// and episodes did not; without it claude 2.1.332 offers `DesignSync`
/// (Claude design projects: write_files, delete_files), so the census
/// passed while every episode had the tool. The census now changes
/// nothing of the episode's environment but the API it points at, and
/// `DesignSync` is blocked: a claude whose guard list lacks it is caught.
#[test]
fn the_census_sees_the_tools_an_episode_sees_design_sync_included() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let o = probe_claude(&tool("claude"), &home, &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(!stdout(&o).contains("DesignSync"), "{}", stdout(&o));
    let program = wrapper(
        dir.path(),
        "claude-offering-design-sync",
        "case \"$a\" in *,DesignSync,*) a=$(printf '%s' \"$a\" | sed 's/,DesignSync,/,/') ;; esac",
    );
    let o = probe_claude(&program, &home, &[]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("tool DesignSync: offered beyond the proxy's tools"),
        "{}",
        stderr(&o)
    );
}

/// Issue 25, red team: the census took any tool named `mcp__okn__...` for
/// the proxy's, so a second MCP server named `okn__mem` passed it and its
/// tools reached every episode. The census now compares with the tools
/// the proxy lists, by exact name.
#[test]
fn a_second_mcp_server_named_like_the_proxy_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let config = serde_json::json!({"mcpServers": {"okn__mem": {
        "type": "stdio",
        "command": BIN,
        "args": ["kg-server", "--data", repo().join("demo/kg").to_string_lossy()],
    }}})
    .to_string();
    let program = dir.path().join("claude-with-a-second-server");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\nexec '{}' \"$@\" --mcp-config '{config}'\n",
            tool("claude").display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let o = probe_claude(&program, &dir.path().join("home"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("mcp__okn__mem__list_graphs"),
        "{}",
        stderr(&o)
    );
}

/// Issue 25, red team: `--block-tool mcp__okn__query` played an "all
/// tools" condition without the server's query tool, its identity saying
/// nothing withheld. The proxy's tools are refused by `--block-tool`
/// (withheld with `--without-tool`), and a census that misses one of the
/// proxy's tools stops the run.
#[test]
fn the_proxys_own_tools_are_never_blocked_in_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let o = probe_claude(
        &tool("claude"),
        &dir.path().join("home"),
        &["--block-tool", "mcp__okn__query"],
    );
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("--without-tool"), "{}", stderr(&o));
    // A host that drops one of the proxy's tools by itself is caught.
    let program = wrapper(
        dir.path(),
        "claude-dropping-query",
        "case \"$a\" in *,ListAgents,*) a=\"$a,mcp__okn__query\" ;; esac",
    );
    let o = probe_claude(&program, &dir.path().join("home"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("the proxy's tool query not offered"),
        "{}",
        stderr(&o)
    );
}

/// Issue 25, red team: a condition file of runs-root format 5 played by a
/// model's host whose census was deleted by hand read as "recorded before
/// okn-benchmark took a census", and a resume then skipped the comparison.
/// It is refused, as is a census no run could have recorded.
#[test]
fn a_census_deleted_or_made_impossible_by_hand_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"));
    let out = dir.path().join("runs");
    let o = run_claude(&tool("claude"), &url, &dir.path().join("home"), &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let path = out.join("conditions/demo-kg-all-tools__kg-named.json");
    let recorded = std::fs::read_to_string(&path).unwrap();
    let mut file: Value = serde_json::from_str(&recorded).unwrap();
    file["settings"].as_object_mut().unwrap().remove("census");
    std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    let o = okn().arg("report").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("settings.census: absent"),
        "{}",
        stderr(&o)
    );
    // A census listing Bash, its digest made anew so it holds.
    let mut file: Value = serde_json::from_str(&recorded).unwrap();
    let census = &mut file["settings"]["census"];
    let mut tools: Vec<String> = census["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    tools.push("Bash".into());
    tools.sort();
    let version = census["host_version"].as_str().unwrap().to_string();
    census["digest"] = Value::from(okn_benchmark::agent::census::digest(&version, &tools));
    census["tools"] = serde_json::json!(tools);
    std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    let o = okn().arg("report").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("it lists Bash"), "{}", stderr(&o));
    // A turn limit no run takes (`--max-turns 0` is refused as parsed;
    // a red team's finding) is an edit too.
    let mut file: Value = serde_json::from_str(&recorded).unwrap();
    file["settings"]["max_turns"] = Value::from(0);
    std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    let o = okn().arg("report").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("settings.max_turns"), "{}", stderr(&o));
}
