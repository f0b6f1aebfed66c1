//! Writes a large synthetic runs root, for benchmarking `build` only
//! (docs/PERFORMANCE.md, "build and build --check"; `scripts/bench-build`
//! runs it). Never commit what it writes.
//!
//! ```sh
//! cargo run --release --example synth_root -- --out "$TMPDIR/bench/runs-synth" --attempts 50000
//! ```
//!
//! The root is shaped exactly like a recorded one (docs/FORMAT.md) and is
//! written with the crate's own types and writers: each attempt's
//! `calls.json` and `metrics.json` through the proxy's [`CallLog`], its
//! `episode.json` as an [`Episode`], its verdict by [`judge`] (the function
//! `run` and `rescore` use), each `result.json` from [`summarize`] and
//! each `conditions/NAME.json` from [`aggregate`], so every aggregate agrees
//! with the attempts. Sizes follow the recorded demo roots
//! (`runs-AGENT-CORPUS/`): two to five tool calls per attempt with SPARQL
//! text and result previews, answers of none to a few dozen rows, prompts
//! of a paragraph, and a claude-like agent report.
//!
//! Deterministic: the same flags give the same bytes. The output folder
//! must be given, must be empty or absent, and must not lie inside a git
//! working tree, so nothing lands in a repository by accident.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use rayon::prelude::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use okn_benchmark::agent::census::CensusRecord;
use okn_benchmark::fsutil::write_json;
use okn_benchmark::layout::{
    AGENT_FILE, ANSWER_FILE, COMMAND_FILE, CWD_DIR, CallRecord, EPISODE_FILE, GROUND_TRUTH_CSV,
    GROUND_TRUTH_JSON, LOG_FORMAT, Metrics, PREVIEW_CHARS, PROMPT_FILE, RESULT_FILE, RunsRoot,
};
use okn_benchmark::mcp::calllog::CallLog;
use okn_benchmark::mcp::profile::ProfileRecord;
use okn_benchmark::reference::{GROUND_TRUTH_FORMAT, GroundTruthMeta};
use okn_benchmark::runs::identity::{Arm, Identity, KgHint, ToolLevel, condition_name};
use okn_benchmark::runs::judge::judge;
use okn_benchmark::runs::prompt::{SUFFIX, hint};
use okn_benchmark::runs::records::{
    ConditionFile, Episode, Meta, QuestionResult, QuestionSummary, RUNS_FORMAT, Settings,
    aggregate, summarize,
};
use okn_benchmark::score::{
    DEFAULT_SIGNIFICANT_FIGURES, NUMERIC_REL_TOL, SCORING_VERSION, ScoreOptions,
};
use okn_benchmark::sparql::{EndpointInfo, hex};
use okn_benchmark::table::Table;

/// Writes a synthetic runs root (benchmark use only).
#[derive(Debug, Parser)]
struct Args {
    /// The runs root to create (absent or empty; not inside a git working tree).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Attempts in all; questions = attempts / (conditions × repeat).
    #[arg(long, default_value_t = 50_000, conflicts_with = "questions")]
    attempts: usize,
    /// Questions (instead of --attempts).
    #[arg(long)]
    questions: Option<usize>,
    /// Conditions (4 distinct kinds, then labelled repeats of them).
    #[arg(long, default_value_t = 4)]
    conditions: usize,
    /// Attempts per question and condition.
    #[arg(long, default_value_t = 5)]
    repeat: u32,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// SplitMix64: small, fast, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Rng {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F));
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// In `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const GRAPHS: [&str; 8] = [
    "spoke-okn",
    "fiokg",
    "spatialkg",
    "biobricks-ice",
    "ubergraph",
    "spoke-genelab",
    "sawgraph",
    "ruralkg",
];
const TIERS: [&str; 3] = ["narrow", "wide", "deep"];
const TOPICS: [&str; 12] = [
    "county-obesity",
    "facility-counts",
    "gene-disease",
    "assay-hits",
    "water-samples",
    "landfill-sites",
    "spaceflight-genes",
    "drug-targets",
    "place-density",
    "chemical-exposure",
    "descendants",
    "paper-mills",
];
const WORDS: [&str; 40] = [
    "county",
    "state",
    "facility",
    "gene",
    "disease",
    "compound",
    "assay",
    "sample",
    "measurement",
    "industry",
    "subsector",
    "prevalence",
    "population",
    "label",
    "identifier",
    "concentration",
    "value",
    "average",
    "number",
    "distinct",
    "related",
    "located",
    "within",
    "classified",
    "reported",
    "associated",
    "highest",
    "lowest",
    "at least",
    "more than",
    "each",
    "every",
    "whose",
    "together with",
    "name",
    "code",
    "treatment",
    "exposure",
    "region",
    "site",
];

/// What a column holds.
#[derive(Clone, Copy)]
enum Kind {
    Iri(&'static str),
    Label,
    Decimal,
    Integer,
}

const COLUMNS: [(&str, Kind); 10] = [
    (
        "county",
        Kind::Iri("http://stko-kwg.geog.ucsb.edu/lod/resource/administrativeRegion.USA."),
    ),
    ("gene", Kind::Iri("https://www.ncbi.nlm.nih.gov/gene/")),
    (
        "facility",
        Kind::Iri("http://w3id.org/fio/v1/fio#Facility."),
    ),
    (
        "compound",
        Kind::Iri("http://purl.obolibrary.org/obo/CHEBI_"),
    ),
    ("name", Kind::Label),
    ("label", Kind::Label),
    ("value", Kind::Decimal),
    ("average", Kind::Decimal),
    ("count", Kind::Integer),
    ("facilities", Kind::Integer),
];

/// One question: its id, prose, answer key and ground truth.
struct Question {
    id: String,
    tier: String,
    tags: Vec<String>,
    summary: String,
    key_text: String,
    ordered: bool,
    kinds: Vec<Kind>,
    truth: Table,
}

fn words(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| *rng.pick(&WORDS))
        .collect::<Vec<_>>()
        .join(" ")
}

fn cell(rng: &mut Rng, kind: Kind) -> String {
    match kind {
        Kind::Iri(prefix) => format!("{prefix}{}", 10_000 + rng.below(90_000)),
        Kind::Label => {
            let n = 1 + rng.below(3);
            let a = words(rng, n);
            let mut c = a.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        }
        Kind::Decimal => format!("{}.{:04}", rng.below(100), rng.below(10_000)),
        Kind::Integer => (1 + rng.below(500)).to_string(),
    }
}

fn question(seed: u64, index: usize) -> Question {
    let mut rng = Rng::new(seed, index as u64);
    let tier = rng.pick(&TIERS).to_string();
    let topic = rng.pick(&TOPICS);
    let first = *rng.pick(&GRAPHS);
    let mut tags = vec![first.to_string()];
    if rng.chance(0.6) {
        let second = *rng.pick(&GRAPHS);
        if second != first {
            tags.push(second.to_string());
        }
    }
    let id = format!("{}-{topic}-{index:05}_{tier}", tags.join("-"));
    let width = 1 + rng.below(5);
    let mut chosen: Vec<(&str, Kind)> = Vec::new();
    while chosen.len() < width {
        let c = *rng.pick(&COLUMNS);
        if !chosen.iter().any(|(n, _)| *n == c.0) {
            chosen.push(c);
        }
    }
    let rows = match rng.below(20) {
        0 => 0,
        1..=3 => 1,
        4..=13 => 2 + rng.below(9),
        _ => 10 + rng.below(21),
    };
    let mut truth = Table::new(chosen.iter().map(|(n, _)| n.to_string()).collect());
    for _ in 0..rows {
        truth
            .rows
            .push(chosen.iter().map(|(_, k)| cell(&mut rng, *k)).collect());
    }
    let ordered = rng.chance(0.4);
    if ordered {
        truth.rows.sort();
    }
    let summary = format!(
        "For {} {}, find {}. Return {}. {}{}",
        words(&mut rng, 2),
        words(&mut rng, 6),
        words(&mut rng, 14),
        chosen
            .iter()
            .map(|(n, _)| format!("its {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        words(&mut rng, 12),
        if ordered {
            format!(" Order by {} from highest to lowest.", chosen[0].0)
        } else {
            String::new()
        }
    );
    let key_text = sparql(&mut rng, &tags, &chosen, ordered);
    Question {
        id,
        tier,
        tags,
        summary,
        key_text,
        ordered,
        kinds: chosen.iter().map(|(_, k)| *k).collect(),
        truth,
    }
}

fn sparql(rng: &mut Rng, tags: &[String], columns: &[(&str, Kind)], ordered: bool) -> String {
    let mut q = String::from(
        "PREFIX rdf:     <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n\
         PREFIX rdfs:    <http://www.w3.org/2000/01/rdf-schema#>\n\
         PREFIX fio:     <http://w3id.org/fio/v1/fio#>\n\
         PREFIX kwg-ont: <http://stko-kwg.geog.ucsb.edu/lod/ontology/>\n\
         PREFIX spoke:   <https://purl.org/okn/frink/kg/spoke-okn/schema/>\n\n",
    );
    let vars: Vec<String> = columns.iter().map(|(n, _)| format!("?{n}")).collect();
    q.push_str(&format!("SELECT {}\nWHERE {{\n", vars.join(" ")));
    for tag in tags {
        q.push_str(&format!(
            "  GRAPH <https://purl.org/okn/frink/kg/{tag}> {{\n"
        ));
        for (n, _) in columns {
            q.push_str(&format!(
                "    ?s spoke:{}_{} ?{n} .\n",
                words(rng, 1).replace(' ', "_"),
                rng.below(100)
            ));
        }
        q.push_str("  }\n");
    }
    q.push_str(&format!("  FILTER(?{} != \"\")\n}}\n", columns[0].0));
    if ordered {
        q.push_str(&format!("ORDER BY DESC(?{})\n", columns[0].0));
    }
    q
}

/// A condition: how its episodes were run.
struct Condition {
    name: String,
    all_tools: bool,
    named: bool,
    withheld: Vec<String>,
}

fn conditions(n: usize) -> Vec<Condition> {
    (0..n)
        .map(|i| {
            let (all_tools, named, withheld) = match i % 4 {
                0 => (true, true, vec![]),
                1 => (true, false, vec![]),
                2 => (true, true, vec!["get_schema".to_string()]),
                _ => (false, true, vec![]),
            };
            let label = (i >= 4).then(|| format!("v{}", i / 4 + 1));
            let level = if all_tools {
                ToolLevel::AllTools
            } else {
                ToolLevel::SparqlOnly
            };
            let name = condition_name(
                &Arm {
                    level,
                    server: all_tools.then_some("synth-kg"),
                    withheld: &withheld,
                    strict: false,
                    kg_hint: if named { KgHint::Tags } else { KgHint::None },
                    host: None,
                },
                label.as_deref(),
            );
            Condition {
                name,
                all_tools,
                named,
                withheld,
            }
        })
        .collect()
}

fn tools_offered(c: &Condition) -> Vec<String> {
    let mut tools: Vec<String> = if c.all_tools {
        [
            "get_descendants",
            "get_schema",
            "list_graphs",
            "lookup_uri",
            "query",
        ]
        .iter()
        .map(|t| t.to_string())
        .filter(|t| !c.withheld.contains(t))
        .collect()
    } else {
        vec!["run_sparql".to_string()]
    };
    tools.push("submit_csv".into());
    tools
}

/// What the simulated agent does in one attempt.
#[derive(Clone, Copy, PartialEq)]
enum Play {
    Oracle,
    RenameColumns,
    Decimals,
    DropRow,
    ExtraRow,
    Reverse,
    Nothing,
    TimedOut,
    Blocked,
}

fn play(rng: &mut Rng) -> Play {
    match rng.below(100) {
        0..=49 => Play::Oracle,
        50..=59 => Play::RenameColumns,
        60..=67 => Play::Decimals,
        68..=79 => Play::DropRow,
        80..=84 => Play::ExtraRow,
        85..=91 => Play::Reverse,
        92..=95 => Play::Nothing,
        96..=98 => Play::TimedOut,
        _ => Play::Blocked,
    }
}

fn answer(rng: &mut Rng, q: &Question, how: Play) -> Table {
    let mut t = q.truth.clone();
    match how {
        Play::RenameColumns => {
            for c in &mut t.columns {
                c.insert_str(0, "the_");
            }
        }
        Play::Decimals => {
            for row in &mut t.rows {
                for (cell, kind) in row.iter_mut().zip(&q.kinds) {
                    if let (Kind::Decimal, Ok(v)) = (kind, cell.parse::<f64>()) {
                        *cell = format!("{v:.3}");
                    }
                }
            }
        }
        Play::DropRow if !t.rows.is_empty() => {
            let i = rng.below(t.rows.len());
            t.rows.remove(i);
        }
        Play::ExtraRow | Play::DropRow => {
            let row = q.kinds.iter().map(|k| cell(rng, *k)).collect();
            t.rows.push(row);
        }
        Play::Reverse => t.rows.reverse(),
        _ => {}
    }
    t
}

/// The query tool's reply: typed JSON cells (the demo KG server's shape),
/// or CSV from the control's `run_sparql`.
fn reply(q: &Question, all_tools: bool) -> String {
    if !all_tools {
        return q.truth.to_csv();
    }
    let rows: Vec<Value> = q
        .truth
        .rows
        .iter()
        .map(|row| {
            Value::Array(
                row.iter()
                    .zip(&q.kinds)
                    .map(|(v, k)| match k {
                        Kind::Iri(_) => json!({"type": "uri", "value": v}),
                        Kind::Label => json!({"type": "literal", "value": v,
                            "datatype": "http://www.w3.org/2001/XMLSchema#string"}),
                        Kind::Decimal => json!({"type": "literal", "value": v,
                            "datatype": "http://www.w3.org/2001/XMLSchema#decimal"}),
                        Kind::Integer => json!({"type": "literal", "value": v,
                            "datatype": "http://www.w3.org/2001/XMLSchema#integer"}),
                    })
                    .collect(),
            )
        })
        .collect();
    json!({"columns": q.truth.columns, "row_count": q.truth.rows.len(), "rows": rows}).to_string()
}

fn call(tool: &str, arguments: Value, start: f64, duration: f64, reply: &str) -> CallRecord {
    CallRecord {
        index: 0,
        tool: tool.into(),
        arguments,
        start_s: start,
        duration_s: duration,
        ok: true,
        soft_error: None,
        refused: false,
        forwarded: tool != "submit_csv" && tool != "run_sparql",
        error: None,
        result_chars: reply.chars().count(),
        result_preview: reply.chars().take(PREVIEW_CHARS).collect(),
        unreadable: None,
    }
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

fn endpoint() -> EndpointInfo {
    EndpointInfo {
        kind: "embedded".into(),
        location: "kg".into(),
        engine: Some("oxigraph".into()),
        engine_version: Some("0.5.13".into()),
        identity: sha256(b"synthetic knowledge graph"),
    }
}

/// Writes one attempt's files and judges them.
#[allow(clippy::too_many_arguments)]
fn attempt(
    rng: &mut Rng,
    root: &RunsRoot,
    q: &Question,
    c: &Condition,
    n: u32,
    prompt: &str,
    options: &ScoreOptions,
) -> std::io::Result<okn_benchmark::runs::records::AttemptResult> {
    let dir = root.attempt_dir(&q.id, &c.name, n);
    std::fs::create_dir_all(dir.join(CWD_DIR))?;
    let io = |e: okn_benchmark::Error| std::io::Error::other(e.to_string());
    std::fs::write(dir.join(PROMPT_FILE), prompt)?;
    let mcp = json!({"mcpServers": {"okn": {"type": "stdio", "command": "okn-benchmark",
        "args": ["proxy", "--tools", if c.all_tools { "all-tools" } else { "sparql-only" },
                 "--log-dir", dir.display().to_string(), "--timeout", "120"]}}});
    std::fs::write(
        dir.join(COMMAND_FILE),
        format!(
            "claude -p --model claude-opus-5 --effort high --output-format json --strict-mcp-config --mcp-config '{mcp}' --allowedTools mcp__okn --disallowedTools Task < prompt.txt\n"
        ),
    )?;
    let how = play(rng);
    let offered = tools_offered(c);
    let mut log = CallLog::new(
        &dir,
        Metrics {
            format: LOG_FORMAT,
            level: if c.all_tools {
                "all-tools"
            } else {
                "sparql-only"
            }
            .into(),
            server: c.all_tools.then(|| "synth-kg".into()),
            tools_offered: offered.clone(),
            withheld: c.withheld.clone(),
            instructions_forwarded: c.all_tools,
            instructions_chars: if c.all_tools { 820 } else { 0 },
            preamble_sha256: (!c.all_tools).then(|| sha256(b"preamble")),
            ..Metrics::default()
        },
    );
    let mut clock = 0.5 + rng.below(2000) as f64 / 1000.0;
    let mut wall = clock;
    let answer_table = if how == Play::Blocked {
        log.metrics.startup_error = Some("could not start the server: connection refused".into());
        // A proxy that never reached its server offers only the answer's
        // submission.
        log.metrics.tools_offered = vec!["submit_csv".into()];
        None
    } else {
        if c.all_tools && rng.chance(0.5) {
            let r = json!({"graphs": q.tags}).to_string();
            log.record(call("list_graphs", json!({}), clock, 0.05, &r), false);
            clock += 2.0 + rng.below(3000) as f64 / 1000.0;
        }
        if offered.iter().any(|t| t == "get_schema") && rng.chance(0.4) {
            let r = format!("{{\"classes\": [{}]}}", words(rng, 60));
            let r: String = r.chars().take(1500).collect();
            log.record(
                call("get_schema", json!({"graph": q.tags[0]}), clock, 0.3, &r),
                false,
            );
            clock += 2.0 + rng.below(4000) as f64 / 1000.0;
        }
        let tool = if c.all_tools { "query" } else { "run_sparql" };
        let arg = if c.all_tools { "query_string" } else { "query" };
        for k in 0..1 + rng.below(2) {
            let last = k > 0 && rng.chance(0.5);
            let failed = !last && rng.chance(0.15);
            let text = if failed {
                q.key_text.replace("SELECT", "SELEC")
            } else {
                q.key_text.clone()
            };
            let mut record = if failed {
                let r = "Parse error: expected a query form at line 7".to_string();
                let mut r = call(
                    tool,
                    json!({arg: text, "graph": "federation"}),
                    clock,
                    0.1,
                    &r,
                );
                r.ok = false;
                r.error = Some("Parse error: expected a query form at line 7".into());
                r
            } else {
                let r = reply(q, c.all_tools);
                call(
                    tool,
                    json!({arg: text, "graph": "federation"}),
                    clock,
                    0.4,
                    &r,
                )
            };
            if !c.all_tools {
                record.forwarded = false;
            }
            // Judged as the proxy judges it: a query the agent mistyped
            // ("SELEC") is no query to the detector.
            let is_query = okn_benchmark::mcp::calllog::is_query(&record.tool, &record.arguments);
            log.record(record, is_query);
            clock += 3.0 + rng.below(8000) as f64 / 1000.0;
            if last {
                break;
            }
        }
        match how {
            Play::Nothing | Play::TimedOut => None,
            _ => {
                let t = answer(rng, q, how);
                let csv = t.to_csv();
                let r = format!(
                    "Answer saved: {} rows with columns {}. Calling submit_csv again replaces it.",
                    t.rows.len(),
                    t.columns.join(", ")
                );
                log.record(
                    call("submit_csv", json!({"csv": csv}), clock, 0.001, &r),
                    false,
                );
                log.metrics.submissions = 1;
                log.metrics.submitted_rows = Some(t.rows.len());
                std::fs::write(dir.join(ANSWER_FILE), csv)?;
                Some(t)
            }
        }
    };
    wall = wall.max(clock + 1.0 + rng.below(5000) as f64 / 1000.0);
    if how == Play::TimedOut {
        wall = 900.0;
    }
    log.flush().map_err(io)?;
    let turns = log.calls().len() + 1;
    let report = json!({
        "type": "result",
        "subtype": if how == Play::TimedOut { "error_max_turns" } else { "success" },
        "is_error": how == Play::TimedOut,
        "duration_ms": (wall * 1000.0).round(),
        "num_turns": turns,
        "result": match &answer_table {
            Some(t) => format!("I submitted {} rows answering the question.", t.rows.len()),
            None => "I could not find an answer.".to_string(),
        },
        "session_id": format!("{:016x}", rng.next()),
        "total_cost_usd": (rng.below(40_000) as f64) / 100_000.0,
        "model": "claude-opus-5",
    });
    let stdout = format!("{report}\n");
    std::fs::write(dir.join(AGENT_FILE), &stdout)?;
    // The host report, as the runner records it (issue 25).
    let host_report =
        okn_benchmark::agent::host::Host::Claude.parse(&okn_benchmark::agent::host::HostOutput {
            stdout: stdout.as_bytes(),
            stderr: b"",
            exit_code: (how != Play::TimedOut).then_some(0),
            timed_out: how == Play::TimedOut,
            measured: true,
        });
    write_json(
        &dir.join(EPISODE_FILE),
        &Episode {
            format: RUNS_FORMAT,
            attempt: n,
            agent: "claude".into(),
            model_requested: Some("claude-opus-5".into()),
            model_resolved: Some("claude-opus-5".into()),
            wall_s: okn_benchmark::layout::round_seconds(wall),
            exit_code: (how != Play::TimedOut).then_some(0),
            timed_out: how == Play::TimedOut,
            agent_timeout_s: Some(900),
            source: "runner".into(),
            usage: None,
            upstream: None,
            host_report: Some(host_report),
        },
    )
    .map_err(io)?;
    // Judged as run judges: from the files just written, against the
    // ground truth recorded beside them.
    let truth =
        okn_benchmark::runs::recorded::read_ground_truth(&root.question_dir(&q.id)).map_err(io)?;
    let files = okn_benchmark::runs::recorded::AttemptFiles::read(&dir, n).map_err(io)?;
    Ok(judge(&files, n, (&truth, &[]), options))
}

/// Writes one question's files under every condition; returns its summary
/// per condition.
fn write_question(
    seed: u64,
    index: usize,
    root: &RunsRoot,
    conds: &[Condition],
    repeat: u32,
) -> std::io::Result<(String, Vec<QuestionSummary>)> {
    let q = question(seed, index);
    let io = |e: okn_benchmark::Error| std::io::Error::other(e.to_string());
    let qdir = root.question_dir(&q.id);
    std::fs::create_dir_all(&qdir)?;
    let csv = q.truth.to_csv();
    std::fs::write(qdir.join(GROUND_TRUTH_CSV), &csv)?;
    let key = q.key_text.trim_end().to_string();
    write_json(
        &qdir.join(GROUND_TRUTH_JSON),
        &GroundTruthMeta {
            format: GROUND_TRUTH_FORMAT,
            id: q.id.clone(),
            endpoint: endpoint(),
            answer_key_sha256: sha256(key.as_bytes()),
            answer_key: key.clone(),
            form: "SELECT".into(),
            ordered: q.ordered,
            columns: q.truth.columns.clone(),
            row_count: q.truth.rows.len(),
            csv_sha256: sha256(csv.as_bytes()),
            fingerprint: sha256(format!("{}\0{key}", endpoint().identity).as_bytes()),
        },
    )
    .map_err(io)?;
    let options = ScoreOptions {
        ordered: q.ordered,
        ..ScoreOptions::default()
    };
    let mut summaries = Vec::new();
    for (ci, c) in conds.iter().enumerate() {
        let mut rng = Rng::new(seed ^ 0x5eed, (index * 64 + ci) as u64);
        let mut prompt = q.summary.clone();
        prompt.push_str("\n\n");
        if c.named
            && let Some(line) = hint(&q.tags)
        {
            prompt.push_str(&line);
            prompt.push_str("\n\n");
        }
        prompt.push_str(SUFFIX);
        let mut attempts = Vec::new();
        for n in 1..=repeat {
            attempts.push(attempt(&mut rng, root, &q, c, n, &prompt, &options)?);
        }
        let summary = summarize(&attempts, q.ordered);
        write_json(
            &root.condition_dir(&q.id, &c.name).join(RESULT_FILE),
            &QuestionResult {
                format: RUNS_FORMAT,
                question: q.id.clone(),
                condition: c.name.clone(),
                tier: Some(q.tier.clone()),
                ordered_key: q.ordered,
                scoring_version: SCORING_VERSION.into(),
                expectations: Vec::new(),
                attempts,
                summary: summary.clone(),
            },
        )
        .map_err(io)?;
        summaries.push(summary);
    }
    Ok((q.id, summaries))
}

/// Refuses an output folder that is not empty or lies in a git working tree.
fn check_out(out: &Path) -> Result<(), String> {
    if out.exists()
        && std::fs::read_dir(out)
            .map_err(|e| format!("{}: {e}", out.display()))?
            .next()
            .is_some()
    {
        return Err(format!(
            "{} is not empty: give a new folder (outside any repository)",
            out.display()
        ));
    }
    let absolute = std::path::absolute(out).map_err(|e| format!("{}: {e}", out.display()))?;
    if let Some(repo) = absolute.ancestors().find(|a| a.join(".git").exists()) {
        return Err(format!(
            "{} is inside the git working tree {}: synthetic roots are for benchmarks and never committed; write it under $TMPDIR",
            out.display(),
            repo.display()
        ));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(e) = check_out(&args.out) {
        eprintln!("synth_root: {e}");
        return ExitCode::from(2);
    }
    let conds = conditions(args.conditions.max(1));
    let repeat = args.repeat.max(1);
    let questions = args
        .questions
        .unwrap_or_else(|| (args.attempts / (conds.len() * repeat as usize)).max(1));
    let root = RunsRoot::new(&args.out);
    let written: std::io::Result<Vec<(String, Vec<QuestionSummary>)>> = (0..questions)
        .into_par_iter()
        .map(|i| write_question(args.seed, i, &root, &conds, repeat))
        .collect();
    let written = match written {
        Ok(w) => w,
        Err(e) => {
            eprintln!("synth_root: {}: {e}", args.out.display());
            return ExitCode::from(2);
        }
    };
    for (ci, c) in conds.iter().enumerate() {
        let summaries: BTreeMap<String, QuestionSummary> = written
            .iter()
            .map(|(id, s)| (id.clone(), s[ci].clone()))
            .collect();
        let preamble = (!c.all_tools).then(|| {
            format!(
                "You can query these knowledge graphs with run_sparql(graph, query): {}.",
                GRAPHS.join(", ")
            )
        });
        let file = ConditionFile {
            format: RUNS_FORMAT,
            name: c.name.clone(),
            identity: Identity {
                level: if c.all_tools {
                    ToolLevel::AllTools
                } else {
                    ToolLevel::SparqlOnly
                },
                kg_hint: if c.named { KgHint::Tags } else { KgHint::None },
                server: c.all_tools.then(|| "synth-kg".into()),
                upstream: None,
                agent: "claude".into(),
                base_url: None,
                host_version: None,
                model: Some("claude-opus-5".into()),
                effort: Some("high".into()),
                tier: None,
                corpus: "corpora/synth".into(),
                repeat,
                withheld: c.withheld.clone(),
                strict_upstream_errors: false,
                excluded: vec![],
                shards: None,
            },
            settings: Settings {
                corpus: "corpora/synth".into(),
                corpus_commit: None,
                profile: c.all_tools.then(|| ProfileRecord {
                    name: "synth-kg".into(),
                    transport: "stdio".into(),
                    target: "synth-kg-server --data kg".into(),
                    header_names: vec![],
                    env_names: vec![],
                    public: Default::default(),
                }),
                server_build: c.all_tools.then(|| "synth-kg 1.0.0".into()),
                server_info: None,
                agent_version: Some("2.1.0 (Claude Code)".into()),
                model_resolved: Some("claude-opus-5".into()),
                reference_endpoint: Some(endpoint()),
                preamble_sha256: preamble.as_ref().map(|p| sha256(p.as_bytes())),
                sparql_only_preamble: preamble,
                scoring_version: SCORING_VERSION.into(),
                significant_figures: DEFAULT_SIGNIFICANT_FIGURES,
                numeric_rel_tol: NUMERIC_REL_TOL,
                timeout_s: 120,
                agent_timeout_s: 900,
                max_turns: None,
                prompt_suffix: SUFFIX.into(),
                ground_truth: None,
                // The census a claude condition records from runs-root format
                // 5 on: the proxy's tools, under the host's names for them.
                census: Some(CensusRecord::new(
                    "2.1.0 (Claude Code)",
                    tools_offered(c)
                        .iter()
                        .map(|t| format!("mcp__okn__{t}"))
                        .collect(),
                    vec!["claude-user-instructions".into()],
                )),
            },
            meta: Meta::default(),
            aggregate: aggregate(&summaries),
            questions: summaries,
            shard: None,
        };
        if let Err(e) = write_json(&root.condition_file(&c.name), &file) {
            eprintln!("synth_root: {e}");
            return ExitCode::from(2);
        }
    }
    println!(
        "synth_root: {} questions × {} conditions × {} attempts = {} attempts in {}",
        questions,
        conds.len(),
        repeat,
        questions * conds.len() * repeat as usize,
        args.out.display()
    );
    ExitCode::SUCCESS
}
