//! The proxy: an MCP server over stdio that an agent host starts through
//! its MCP config, standing between the agent and the server under test
//! (README.md, "Servers under test: profiles, the proxy, probe"; the files
//! it writes are in `docs/FORMAT.md`, "calls.json" and "metrics.json").
//!
//! It is the ablation surface and the measuring instrument:
//!
//! - it discovers the upstream's tools (nothing is configured), filters
//!   `tools/list` by `--without-tool`, and **refuses** `tools/call` for a
//!   withheld tool, so a remembered name cannot get through; each refusal
//!   is recorded;
//! - it injects `submit_csv` after filtering, so the answer channel can
//!   never be withheld; a submission writes `answer.csv` (a header-only
//!   submission is an answer with zero rows; a later one replaces it);
//! - it forwards the server's instructions at `all-tools`; at `sparql-only`
//!   there is no upstream, only the neutral SPARQL tool and its preamble;
//! - every forwarded call is bounded by `--timeout`; three consecutive
//!   failed forwarded calls (a timeout, a transport error, a JSON-RPC
//!   error reply) declare the session dead ([`BREAKER_THRESHOLD`]); any
//!   tool result resets the count; a reply that cannot be read ends its
//!   call at once, saying so, and resets the count too
//!   ([`super::upstream::is_unreadable_reply`]); the proxy outlives a lost
//!   upstream and keeps `submit_csv` open, answering other calls with a reply that says
//!   the connection will not come back and the answer channel is still
//!   open;
//! - failures hidden in successful replies are recorded as `soft_error`
//!   and tallied per tool; `--strict-upstream-errors` relabels such replies
//!   as errors, payload unchanged;
//! - a line from the agent host it cannot read as a JSON-RPC message (not
//!   JSON, or JSON text that is not Unicode, such as a lone surrogate
//!   escape `\ud800`; JSON that is not a valid request; a message nested
//!   deeper than it reads; a request under an id still in flight) is
//!   answered with a JSON-RPC error, -32700, -32600 or -32602, instead of
//!   being dropped or answered without its id, and recorded
//!   ([`super::framing`]);
//! - a header, environment or URL credential of the profile is redacted in
//!   every file it writes, before any preview is cut ([`super::redact`]);
//!   an answer redaction changed is saved so, and its names recorded;
//! - every request with an id is answered under that id as the agent wrote
//!   it, one rmcp would not echo as written travelling as an alias
//!   ([`super::framing::Aliases`]);
//! - it appends each call to its journal and writes `metrics.json` after
//!   every call, and `calls.json` at its start and end ([`super::calllog`]).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, ContentBlock,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext, RoleClient, RunningService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

pub use super::calllog::carries_query;
use super::calllog::{CallLog, soft_error_in_reply};
use super::framing;
pub use super::level::ToolLevel;
use super::probe::{self, SUBMIT_CSV};
use super::profile::Profile;
use super::redact::Redactor;
use super::sparql_only::{self, SparqlOnly};
use crate::error::{Error, Result};
use crate::layout::{
    ANSWER_FILE, CallRecord, LINE_PREVIEW_CHARS, LOG_FORMAT, Metrics, PREVIEW_CHARS,
    SUBMISSIONS_DIR, UPSTREAM_STDERR_FILE,
};
use crate::table::Table;

/// Consecutive failed forwarded calls that declare the session dead
/// (README.md, "Servers under test"; issue 24, item 17).
///
/// A forwarded call *failed* when it got no tool result: no reply within
/// `--timeout`, a transport error, or a JSON-RPC error reply (a session the
/// server terminated answers every call with one). A tool result resets
/// the count, `isError: true` and soft errors included: the server is
/// there and answering, and a run of bad queries from the agent (each an
/// error result it can act on) must not cut off a live server. So does a
/// reply the proxy could not read (issue 24, item 18): the server answered.
pub const BREAKER_THRESHOLD: u32 = 3;

/// Submissions longer than this (bytes) are logged as a file, not inline.
pub const LOGGED_CSV_BYTES: usize = 64 * 1024;

/// Default read timeout for one forwarded call, seconds (README.md,
/// "Servers under test": 120 s).
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// Everything the proxy is started with.
pub struct ProxySettings {
    /// Tool level.
    pub level: ToolLevel,
    /// The server under test (all-tools only).
    pub profile: Option<Profile>,
    /// Tools to withhold (all-tools only).
    pub without: Vec<String>,
    /// Where answer.csv, calls.json, metrics.json go.
    pub log_dir: PathBuf,
    /// Read timeout of one forwarded call (also bounds the connection at startup).
    pub timeout: Duration,
    /// Relabel soft errors as errors.
    pub strict_upstream_errors: bool,
    /// The control's endpoint (sparql-only only).
    pub sparql_only: Option<SparqlOnly>,
}

/// The running proxy (cheap to clone: shared state).
#[derive(Clone)]
pub struct Proxy {
    inner: Arc<Inner>,
}

struct Inner {
    level: ToolLevel,
    timeout: Duration,
    strict: bool,
    info: ServerConfig,
    offered: Vec<Tool>,
    /// `offered` as the agent's `tools/list` gets it ([`listed_tools`]).
    listed: String,
    upstream_names: BTreeSet<String>,
    withheld: BTreeSet<String>,
    peer: Option<Peer<RoleClient>>,
    sparql_only: Option<SparqlOnly>,
    /// The profile's header and environment values, replaced in every file
    /// written ([`Redactor`]).
    redactor: Redactor,
    shutting_down: AtomicBool,
    state: Mutex<State>,
}

struct State {
    log: CallLog,
    consecutive_failures: u32,
    /// Why the upstream is unusable (startup error or lost connection).
    dead: Option<Dead>,
}

#[derive(Clone)]
enum Dead {
    Startup(String),
    Lost(String),
}

fn sparql_tool() -> Tool {
    Tool::new(
        sparql_only::TOOL,
        "Run a SPARQL 1.1 query against one knowledge graph, named by its shortname; returns the result as CSV.",
        probe::schema(json!({
            "type": "object",
            "properties": {
                "graph": {"type": "string", "description": "The graph's shortname (see the instructions)."},
                "query": {"type": "string", "description": "A SPARQL 1.1 query."}
            },
            "required": ["graph", "query"]
        })),
    )
}

fn reply(text: impl Into<String>, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(text.into())];
    if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

/// The text of a reply as the agent reads it: its text blocks, one per
/// line; a reply with none is its structured content, as JSON. Structured
/// content beside text blocks repeats them (FastMCP sends both) and is
/// not counted twice.
fn reply_text(result: &CallToolResult) -> String {
    let parts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    match (&result.structured_content, parts.is_empty()) {
        (Some(structured), true) => structured.to_string(),
        _ => parts.join("\n"),
    }
}

/// Characters a reply put into the agent's context: those of its text
/// blocks, or of its structured content as JSON when it has none
/// (`docs/FORMAT.md`, `result_chars`).
fn received_chars(result: &CallToolResult) -> usize {
    let texts: Vec<usize> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.chars().count()))
        .collect();
    match (&result.structured_content, texts.is_empty()) {
        (Some(structured), true) => structured.to_string().chars().count(),
        _ => texts.iter().sum(),
    }
}

/// A failure hidden in a successful reply, judged over its text blocks and
/// its structured content together ([`soft_error_in_reply`]), once every
/// value of the profile in them is replaced (`redactor`): the label may
/// quote the reply, and is cut where a value would not be whole (issue 24,
/// item 27).
fn soft_error_of(result: &CallToolResult, redactor: &Redactor) -> Option<String> {
    let texts: Vec<std::borrow::Cow<'_, str>> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| redactor.text(&t.text)))
        .collect();
    let texts: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
    let structured = result.structured_content.as_ref().map(|s| {
        let mut s = s.clone();
        redactor.value(&mut s);
        s
    });
    soft_error_in_reply(&texts, structured.as_ref())
}

/// Why an HTTP server's reply could not be read, from the error rmcp's
/// streamable-HTTP client gave the call (`could not parse JSON response as
/// ServerJsonRpcMessage: WHY: BODY`): the JSON reader's reason alone, not
/// the body; `None` for any other failure.
fn unreadable_http_reply(error: &str) -> Option<String> {
    const SAID: &str = "could not parse JSON response as ServerJsonRpcMessage: ";
    let (_, rest) = error.split_once(SAID)?;
    let why = rest.split_once(": ").map_or(rest, |(why, _)| why);
    Some(if why.contains("recursion limit") {
        format!("it nests arrays and objects more deeply than the JSON reader goes ({why})")
    } else {
        format!("it is not a JSON-RPC message the proxy can read ({why})")
    })
}

/// A forwarded call that got no reply: what the log and the breaker
/// record, and what the agent is told.
fn not_answered(failure: String) -> (String, String) {
    let said = format!("The server under test did not answer: {failure}.");
    (failure, said)
}

fn lost_message(reason: &str) -> String {
    format!(
        "The connection to the server under test was lost ({reason}) and will not come back in \
this session. The answer channel is still open: call {SUBMIT_CSV} with your result table (the \
header row alone if nothing satisfies the question)."
    )
}

fn startup_message(reason: &str) -> String {
    format!(
        "The server under test could not be reached when this session started ({reason}), so \
its tools are unavailable. The answer channel is still open: call {SUBMIT_CSV} with your result \
table."
    )
}

/// An upstream session and its stdio process (killed when dropped).
type UpstreamSession = (
    RunningService<RoleClient, ClientConfig>,
    Option<tokio::process::Child>,
);

/// The `result` of the agent's `tools/list` (`{"tools":[...]}`), as
/// text: the offered tools in their order, each server tool as the server
/// wrote it, byte for byte (the proxy forwards each tool exactly as the
/// server described it, README.md, "Servers under test"), and the proxy's
/// own tools as rmcp serializes them. `raw` holds the server's objects
/// (`upstream::Connection::raw_tools`) in the order of `server_tools`; the
/// offered ones are picked by position with the rule of
/// [`probe::offered_tools`], so two tools of one name each keep their own
/// object. When `raw` is absent (HTTP, the control) or does not pair up
/// with `server_tools` name for name, every tool is as rmcp serializes it.
fn listed_tools(
    offered: &[Tool],
    server_tools: &[Tool],
    raw: Option<&[Box<serde_json::value::RawValue>]>,
    withheld: &BTreeSet<String>,
) -> String {
    let paired = raw.filter(|raw| {
        raw.len() == server_tools.len()
            && raw.iter().zip(server_tools).all(|(r, t)| {
                serde_json::from_str::<Value>(r.get())
                    .ok()
                    .and_then(|v| v.get("name").and_then(Value::as_str).map(|n| n == t.name))
                    .unwrap_or(false)
            })
    });
    let serialized = |tool: &Tool| serde_json::to_string(tool).unwrap_or_else(|_| "null".into());
    let texts: Vec<String> = match paired {
        Some(raw) => raw
            .iter()
            .zip(server_tools)
            .filter(|(_, t)| probe::is_offered(t, withheld))
            .map(|(r, _)| r.get().to_string())
            .chain(
                offered
                    .iter()
                    .filter(|t| t.name == SUBMIT_CSV)
                    .map(serialized),
            )
            .collect(),
        None => offered.iter().map(serialized).collect(),
    };
    format!("{{\"tools\":[{}]}}", texts.join(","))
}

/// What the proxy found when it started: what the agent is offered, and
/// how calls reach the upstream.
struct Startup {
    offered: Vec<Tool>,
    /// The server's tools as it wrote them, over stdio
    /// (`upstream::Connection::raw_tools`).
    raw_tools: Option<Vec<Box<serde_json::value::RawValue>>>,
    /// The server's tools, all of them, in its order.
    server_tools: Vec<Tool>,
    upstream_names: BTreeSet<String>,
    instructions: Option<String>,
    peer: Option<Peer<RoleClient>>,
    dead: Option<Dead>,
    session: Option<UpstreamSession>,
}

impl Startup {
    /// All-tools: the server's tools minus the withheld ones, and its
    /// instructions; or, when it cannot be reached or a withheld name is not
    /// one of its tools, no server tools and the reason.
    async fn connect(
        profile: &Profile,
        settings: &ProxySettings,
        withheld: &BTreeSet<String>,
    ) -> Startup {
        let stderr_log = settings.log_dir.join(UPSTREAM_STDERR_FILE);
        let connection =
            match super::upstream::connect(profile, settings.timeout, Some(&stderr_log)).await {
                Ok(connection) => connection,
                Err(reason) => return Startup::failed(reason, withheld),
            };
        // A name the server does not have would withhold nothing while
        // saying it did: the episode gets no server tools, and the reason
        // is recorded.
        if let Err(e) = probe::check_withheld(&profile.name, &connection.tools, &settings.without) {
            return Startup::failed(e.to_string(), withheld);
        }
        Startup {
            offered: probe::offered_tools(&connection.tools, withheld),
            raw_tools: connection.raw_tools.clone(),
            server_tools: connection.tools.clone(),
            upstream_names: connection
                .tools
                .iter()
                .map(|t| t.name.to_string())
                .collect(),
            instructions: connection.instructions.clone(),
            peer: Some(connection.service.peer().clone()),
            dead: None,
            session: Some((connection.service, connection.child)),
        }
    }

    /// All-tools with the server unusable from the start: `submit_csv` only.
    fn failed(reason: String, withheld: &BTreeSet<String>) -> Startup {
        Startup {
            offered: probe::offered_tools(&[], withheld),
            raw_tools: None,
            server_tools: Vec::new(),
            upstream_names: BTreeSet::new(),
            instructions: None,
            peer: None,
            dead: Some(Dead::Startup(reason)),
            session: None,
        }
    }

    /// Sparql-only: the control's SPARQL tool and preamble, no upstream.
    fn control(control: &SparqlOnly) -> Startup {
        Startup {
            offered: vec![sparql_tool(), probe::submit_tool()],
            raw_tools: None,
            server_tools: Vec::new(),
            upstream_names: BTreeSet::new(),
            instructions: Some(control.preamble.clone()),
            peer: None,
            dead: None,
            session: None,
        }
    }
}

/// The proxy's own server description, carrying the instructions the agent
/// receives (the server's, or the control's preamble).
fn server_info(instructions: Option<String>) -> ServerConfig {
    let info =
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("okn-benchmark-proxy", env!("CARGO_PKG_VERSION")),
        );
    match instructions {
        Some(text) => info.with_instructions(text),
        None => info,
    }
}

impl Proxy {
    /// Connects to the upstream (all-tools) or opens the control's endpoint
    /// (sparql-only), works out what the agent will see, and writes the
    /// first `metrics.json`. An upstream that cannot be reached is not an
    /// error here: it is recorded as `startup_error`, and the proxy still
    /// serves `submit_csv`.
    ///
    /// Errors: the log folder cannot be written; a sparql-only proxy
    /// without an endpoint; an all-tools proxy without a profile.
    pub async fn start(settings: ProxySettings) -> Result<Proxy> {
        std::fs::create_dir_all(&settings.log_dir)
            .map_err(|e| Error::io(&settings.log_dir, "create log folder", e))?;
        let withheld: BTreeSet<String> = settings.without.iter().cloned().collect();
        let mut metrics = Metrics {
            format: LOG_FORMAT,
            level: settings.level.as_str().to_string(),
            withheld: withheld.iter().cloned().collect(),
            reply_chars: Some(std::collections::BTreeMap::new()),
            ..Metrics::default()
        };
        let startup = match settings.level {
            ToolLevel::AllTools => {
                let profile = settings.profile.as_ref().ok_or_else(|| {
                    Error::Usage("--tools all-tools needs --profile (the server under test)".into())
                })?;
                metrics.server = Some(profile.name.clone());
                Startup::connect(profile, &settings, &withheld).await
            }
            ToolLevel::SparqlOnly => {
                let control = settings.sparql_only.as_ref().ok_or_else(|| {
                    Error::Usage(
                        "--tools sparql-only needs an endpoint (--endpoint or okn-benchmark.toml)"
                            .into(),
                    )
                })?;
                metrics.preamble_sha256 = Some(control.preamble_digest());
                Startup::control(control)
            }
        };
        if let Some(Dead::Startup(reason)) = &startup.dead {
            metrics.startup_error = Some(reason.clone());
        }
        metrics.tools_offered = startup.offered.iter().map(|t| t.name.to_string()).collect();
        metrics.instructions_forwarded = startup.instructions.is_some();
        metrics.instructions_chars = startup
            .instructions
            .as_deref()
            .map_or(0, |i| i.chars().count());

        // A server may echo a header or environment value: none reaches
        // the log, the answer or a submission (issue 24, item 27).
        let redactor = settings
            .profile
            .as_ref()
            .map(Profile::redactor)
            .unwrap_or_default();
        let log = CallLog::new(&settings.log_dir, metrics).redacting(redactor.clone());
        log.flush()?;
        let proxy = Proxy {
            inner: Arc::new(Inner {
                level: settings.level,
                timeout: settings.timeout,
                strict: settings.strict_upstream_errors,
                info: server_info(startup.instructions),
                listed: listed_tools(
                    &startup.offered,
                    &startup.server_tools,
                    startup.raw_tools.as_deref(),
                    &withheld,
                ),
                offered: startup.offered,
                upstream_names: startup.upstream_names,
                withheld,
                peer: startup.peer,
                sparql_only: settings.sparql_only,
                redactor,
                shutting_down: AtomicBool::new(false),
                state: Mutex::new(State {
                    log,
                    consecutive_failures: 0,
                    dead: startup.dead,
                }),
            }),
        };
        if let Some(session) = startup.session {
            proxy.watch(session);
        }
        Ok(proxy)
    }

    /// Runs the upstream session beside the stdio server; when it ends on
    /// its own (not at shutdown), the session is marked lost.
    fn watch(&self, (service, child): UpstreamSession) {
        let watcher = self.clone();
        tokio::spawn(async move {
            let outcome = service.waiting().await;
            drop(child);
            if !watcher.inner.shutting_down.load(Ordering::SeqCst) {
                let reason = match outcome {
                    Ok(rmcp::service::QuitReason::Closed) => {
                        "the server closed the connection".to_string()
                    }
                    Ok(rmcp::service::QuitReason::Cancelled) => {
                        "the session was cancelled".to_string()
                    }
                    Ok(rmcp::service::QuitReason::JoinError(e)) | Err(e) => {
                        format!("the session failed: {e}")
                    }
                    Ok(_) => "the session ended".to_string(),
                };
                watcher.mark_lost(reason);
            }
        });
    }

    /// True when the server could not be reached at startup.
    fn startup_failed(&self) -> bool {
        let state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        matches!(state.dead, Some(Dead::Startup(_)))
    }

    /// Marks the upstream lost (once) and records why.
    fn mark_lost(&self, reason: String) {
        let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.dead.is_none() {
            state.log.metrics.lost_upstream = Some(reason.clone());
            state.dead = Some(Dead::Lost(reason));
            let _ = state.log.flush();
        }
    }

    /// The tool names the agent sees, in order.
    pub fn offered_names(&self) -> Vec<String> {
        self.inner
            .offered
            .iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    /// Serves MCP on stdin/stdout until the agent host closes it, then
    /// writes the log whole ([`CallLog::finish`]) and drops the upstream.
    ///
    /// rmcp reads and writes through in-memory pipes: [`framing::read_lines`]
    /// stands between stdin and rmcp, answering (and recording) each line
    /// that is not a JSON-RPC message the proxy can read, and
    /// [`framing::write_lines`] alone writes stdout, so those answers and
    /// rmcp's never cut into each other's lines.
    ///
    /// Errors: the MCP initialization with the agent host failed; the log
    /// cannot be written.
    pub async fn serve_stdio(self) -> Result<()> {
        // Enough for rmcp to read ahead of the filter, small enough that a
        // huge message streams through rather than being copied whole.
        const PIPE_BYTES: usize = 1 << 20;
        let max_bytes = super::upstream::MAX_MESSAGE_BYTES;
        let (to_rmcp, rmcp_input) = tokio::io::duplex(PIPE_BYTES);
        let (rmcp_output, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
        let (replies, queued) = tokio::sync::mpsc::unbounded_channel();
        let recorder = self.clone();
        let in_flight = framing::InFlight::default();
        let aliases = framing::Aliases::default();
        let answers = framing::Answers {
            replies,
            max_bytes,
            tools_list: Some(self.inner.listed.clone()),
            in_flight: in_flight.clone(),
            aliases: aliases.clone(),
        };
        let reader = tokio::spawn(framing::read_lines(
            tokio::io::stdin(),
            to_rmcp,
            answers,
            move |rejected| recorder.record_unreadable(rejected),
        ));
        let writer = tokio::spawn(framing::write_lines(
            from_rmcp,
            queued,
            tokio::io::stdout(),
            aliases,
        ));
        let served = self
            .clone()
            .serve(framing::Tracked::new(
                rmcp::transport::async_rw::AsyncRwTransport::new_server(rmcp_input, rmcp_output)
                    .with_max_line_length(max_bytes),
                in_flight,
            ))
            .await;
        let service = match served {
            Ok(service) => service,
            Err(e) => {
                reader.abort();
                let _ = writer.await;
                return Err(Error::Other(format!(
                    "proxy: MCP initialization with the agent host failed: {e}"
                )));
            }
        };
        let _ = service.waiting().await;
        self.inner.shutting_down.store(true, Ordering::SeqCst);
        // rmcp has stopped: after the end of stdin the reader is done
        // already; if rmcp stopped first, nothing more is read. The writer
        // then ends once it has written every reply queued.
        reader.abort();
        let _ = writer.await;
        let state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        state.log.finish()
    }

    fn record(&self, call: CallRecord, is_query: bool) {
        let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        state.log.record(call, is_query);
        if let Err(e) = state.log.flush() {
            errln!("proxy: cannot write the call log: {e}");
        }
    }

    /// Records a line from the agent host that could not be read
    /// ([`framing`]), before its reply is sent: a reader of `calls.json`
    /// sees every reply the agent got.
    fn record_unreadable(&self, rejected: &framing::Rejected) {
        let replied = rejected.reply.is_some();
        let text = if replied {
            rejected.message.clone()
        } else {
            String::new()
        };
        // The line's preview, redacted before it is cut (issue 24, item
        // 27); its start, when the line was longer than its head, hides a
        // value the head's end cuts.
        let mut record = rejected.record.clone();
        record.line_preview = self.inner.redactor.preview(
            &rejected.line_head,
            LINE_PREVIEW_CHARS,
            rejected.record.line_bytes > rejected.line_head.len(),
        );
        self.record(
            CallRecord {
                index: 0,
                tool: rejected.tool.clone().unwrap_or_default(),
                arguments: Value::Null,
                start_s: self.now(),
                duration_s: 0.0,
                ok: false,
                soft_error: None,
                refused: false,
                forwarded: false,
                error: Some(rejected.message.clone()),
                result_chars: text.chars().count(),
                result_preview: self.inner.redactor.preview(&text, PREVIEW_CHARS, false),
                unreadable: Some(record),
            },
            false,
        );
    }

    fn now(&self) -> f64 {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .log
            .now()
    }

    fn submit(&self, arguments: &Value) -> (CallToolResult, Option<String>) {
        let Some(csv) = arguments.get("csv").and_then(Value::as_str) else {
            let message = format!(
                "{SUBMIT_CSV} needs a 'csv' argument: the complete result table as CSV text, header row first."
            );
            return (reply(message.clone(), true), Some(message));
        };
        if csv.trim().is_empty() {
            let message = format!(
                "{SUBMIT_CSV} got an empty table: submit at least the header row of column names (the header alone means an empty result)."
            );
            return (reply(message.clone(), true), Some(message));
        }
        let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        let path = state.log.dir().join(ANSWER_FILE);
        // No value of the profile is written, the answer included; when
        // that changes what the agent submitted, the names are recorded,
        // and the verdict says it is of the answer as saved (issue 24,
        // item 27).
        let (csv, redacted) = self.inner.redactor.text_and_names(csv);
        if let Err(e) = crate::fsutil::write_atomic(&path, csv.as_bytes()) {
            let message = format!("the answer could not be saved: {e}");
            return (reply(message.clone(), true), Some(message));
        }
        state.log.metrics.answer_redacted = redacted.into_iter().collect();
        state.log.metrics.submissions += 1;
        let replaced = state.log.metrics.submissions > 1;
        let text = match Table::from_csv(csv.as_bytes()) {
            Ok(table) => {
                state.log.metrics.submitted_rows = Some(table.rows.len());
                format!(
                    "Answer saved: {} row{} with columns {}.{} Calling {SUBMIT_CSV} again replaces it.",
                    table.rows.len(),
                    crate::format::plural(table.rows.len()),
                    table.columns.join(", "),
                    if replaced {
                        " It replaces your earlier answer."
                    } else {
                        ""
                    }
                )
            }
            Err(e) => {
                state.log.metrics.submitted_rows = None;
                format!(
                    "Answer saved, but it is not well-formed CSV ({e}). Call {SUBMIT_CSV} again with a corrected table to replace it."
                )
            }
        };
        (reply(text, false), None)
    }

    async fn forward(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> (CallToolResult, CallOutcome) {
        let peer = self.inner.peer.clone();
        let dead = {
            let state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
            state.dead.clone()
        };
        match (dead, peer) {
            (Some(Dead::Lost(reason)), _) => {
                let text = lost_message(&reason);
                (reply(text.clone(), true), CallOutcome::failed(text, false))
            }
            (Some(Dead::Startup(reason)), _) => {
                let text = startup_message(&reason);
                (reply(text.clone(), true), CallOutcome::failed(text, false))
            }
            (None, None) => {
                let text = startup_message("no connection");
                (reply(text.clone(), true), CallOutcome::failed(text, false))
            }
            (None, Some(peer)) => {
                let mut params = CallToolRequestParams::new(name.to_string());
                if let Some(arguments) = arguments {
                    params = params.with_arguments(arguments);
                }
                let outcome =
                    tokio::time::timeout(self.inner.timeout, peer.call_tool(params)).await;
                let (failure, said) = match outcome {
                    Ok(Ok(mut result)) => {
                        self.reset_failures();
                        let text = reply_text(&result);
                        let ok = result.is_error != Some(true);
                        let redactor = &self.inner.redactor;
                        let soft = if ok {
                            soft_error_of(&result, redactor)
                        } else {
                            None
                        };
                        if soft.is_some() && self.inner.strict {
                            result.is_error = Some(true);
                        }
                        // Redacted before it is cut (issue 24, item 27).
                        let error = (!ok).then(|| redactor.preview(&text, PREVIEW_CHARS, false));
                        let chars = received_chars(&result);
                        return (
                            result,
                            CallOutcome {
                                ok,
                                soft_error: soft,
                                error,
                                text,
                                chars,
                                forwarded: true,
                            },
                        );
                    }
                    Ok(Err(rmcp::service::ServiceError::McpError(e)))
                        if super::upstream::is_unreadable_reply(&e) =>
                    {
                        // The server answered, but its reply could not be
                        // read (issue 24, item 18): the call ends now, and
                        // says so. The server is there and answering, as
                        // after an error result, so the count starts again.
                        self.reset_failures();
                        let failure =
                            format!("the server's reply could not be read: {}", e.message);
                        let said = format!(
                            "The server under test replied, but its reply could not be read: {}. \
                             Try the call another way (a smaller or simpler result).",
                            e.message
                        );
                        return (reply(said, true), CallOutcome::failed(failure, true));
                    }
                    Ok(Err(rmcp::service::ServiceError::McpError(e))) => {
                        // A JSON-RPC error reply is a failed forwarded call
                        // like a timeout (issue 24, item 17): a session the
                        // server has terminated answers every call with one
                        // (the Python SDK's "Session terminated"), and
                        // nothing else would ever trip the breaker.
                        let failure =
                            format!("the server rejected the call: {} ({})", e.message, e.code.0);
                        let said =
                            format!("The server rejected the call: {} ({})", e.message, e.code.0);
                        (failure, said)
                    }
                    Ok(Err(rmcp::service::ServiceError::TransportClosed)) => {
                        let reason = "the server closed the connection".to_string();
                        self.mark_lost(reason.clone());
                        let text = lost_message(&reason);
                        return (reply(text.clone(), true), CallOutcome::failed(reason, true));
                    }
                    Ok(Err(e)) => {
                        if let Some(why) = unreadable_http_reply(&e.to_string()) {
                            // As over stdio: the server answered, but its
                            // reply could not be read (issue 24, item 18).
                            self.reset_failures();
                            let failure = format!("the server's reply could not be read: {why}");
                            let said = format!(
                                "The server under test replied, but its reply could not be read: \
                                 {why}. Try the call another way (a smaller or simpler result)."
                            );
                            return (reply(said, true), CallOutcome::failed(failure, true));
                        }
                        not_answered(format!(
                            "the call failed: {}",
                            super::upstream::without_type_names(&e.to_string())
                        ))
                    }
                    Err(_) => not_answered(format!(
                        "no reply within {} s; the call was abandoned",
                        self.inner.timeout.as_secs()
                    )),
                };
                let text = match self.count_failure(&failure) {
                    Some(reason) => lost_message(&reason),
                    None => said,
                };
                (
                    reply(text.clone(), true),
                    CallOutcome::failed(failure, true),
                )
            }
        }
    }

    /// Answers one call: the answer channel, a refusal, the control's
    /// SPARQL tool, a forwarded call, or an unknown tool. Returns the reply,
    /// what to log, and whether it was a refusal.
    async fn dispatch(
        &self,
        name: &str,
        arguments: &Value,
        raw_arguments: Option<JsonObject>,
    ) -> (CallToolResult, CallOutcome, bool) {
        let name = name.to_string();
        let request_arguments = raw_arguments;
        let mut refused = false;
        let (result, outcome) = if name == SUBMIT_CSV {
            let (result, error) = self.submit(arguments);
            let text = reply_text(&result);
            let chars = received_chars(&result);
            (
                result,
                CallOutcome {
                    ok: error.is_none(),
                    soft_error: None,
                    error,
                    chars,
                    text,
                    forwarded: false,
                },
            )
        } else if probe::refuses(&self.inner.withheld, &self.inner.offered, &name) {
            refused = true;
            let text = format!("The tool '{name}' is not available in this session.");
            (reply(text.clone(), true), CallOutcome::failed(text, false))
        } else if self.inner.level == ToolLevel::SparqlOnly && name == sparql_only::TOOL {
            let control = self.inner.sparql_only.clone();
            let limits = crate::sparql::QueryLimits {
                timeout: Some(self.inner.timeout),
                ..crate::sparql::QueryLimits::FOR_AGENTS
            };
            let text_argument = |key: &str| match arguments.get(key) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(format!(
                    "the '{key}' argument must be a string, not {other}"
                )),
                None => Err(format!("{} needs a '{key}' argument", sparql_only::TOOL)),
            };
            let checked = text_argument("graph").and_then(|g| Ok((g, text_argument("query")?)));
            let (graph, query) = match checked {
                Ok(pair) => pair,
                Err(message) => {
                    return (
                        reply(message.clone(), true),
                        CallOutcome::failed(message, false),
                        false,
                    );
                }
            };
            let ran = tokio::task::spawn_blocking(move || match control {
                Some(control) if !query.trim().is_empty() => control.run(&graph, &query, &limits),
                Some(_) => Err("the 'query' argument is empty".to_string()),
                None => Err("no endpoint is configured".to_string()),
            })
            .await
            .unwrap_or_else(|e| Err(format!("the query task failed: {e}")));
            match ran {
                Ok(csv) => (
                    reply(csv.clone(), false),
                    CallOutcome {
                        ok: true,
                        soft_error: None,
                        error: None,
                        chars: csv.chars().count(),
                        text: csv,
                        forwarded: false,
                    },
                ),
                Err(message) => (
                    reply(message.clone(), true),
                    CallOutcome::failed(message, false),
                ),
            }
        } else if self.inner.level == ToolLevel::AllTools
            && (self.inner.upstream_names.contains(&name) || self.startup_failed())
        {
            self.forward(&name, request_arguments).await
        } else {
            let text = format!(
                "Unknown tool '{name}'. Available tools: {}.",
                self.offered_names().join(", ")
            );
            (reply(text.clone(), true), CallOutcome::failed(text, false))
        };
        (result, outcome, refused)
    }

    /// The arguments as logged: a large submission is kept in
    /// `submissions/N.csv` beside the log and referenced, so `calls.json`
    /// stays small enough to rewrite after every call.
    fn logged_arguments(&self, name: &str, arguments: Value) -> Value {
        let Some(csv) = arguments.get("csv").and_then(Value::as_str) else {
            return arguments;
        };
        if name != SUBMIT_CSV || csv.len() <= LOGGED_CSV_BYTES {
            return arguments;
        }
        let state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        let file = format!("{SUBMISSIONS_DIR}/{}.csv", state.log.calls().len() + 1);
        let written = self.inner.redactor.text(csv);
        match crate::fsutil::write_atomic(&state.log.dir().join(&file), written.as_bytes()) {
            Ok(()) => json!({"csv_file": file, "csv_bytes": written.len()}),
            Err(_) => arguments,
        }
    }

    fn reset_failures(&self) {
        let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        state.consecutive_failures = 0;
    }

    /// Counts a failed forwarded call; returns the reason if this one
    /// tripped the breaker.
    fn count_failure(&self, failure: &str) -> Option<String> {
        let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        state.consecutive_failures += 1;
        if state.consecutive_failures >= BREAKER_THRESHOLD && state.dead.is_none() {
            let reason = format!(
                "{BREAKER_THRESHOLD} consecutive forwarded calls failed; the last: {failure}"
            );
            state.log.metrics.lost_upstream = Some(reason.clone());
            state.dead = Some(Dead::Lost(reason.clone()));
            return Some(reason);
        }
        None
    }
}

/// What happened to one call, for the log.
struct CallOutcome {
    ok: bool,
    soft_error: Option<String>,
    error: Option<String>,
    text: String,
    /// [`received_chars`] of the reply the agent got.
    chars: usize,
    forwarded: bool,
}

impl CallOutcome {
    fn failed(error: String, forwarded: bool) -> CallOutcome {
        CallOutcome {
            ok: false,
            soft_error: None,
            chars: error.chars().count(),
            text: error.clone(),
            error: Some(error),
            forwarded,
        }
    }
}

impl ServerHandler for Proxy {
    fn get_info(&self) -> ServerConfig {
        self.inner.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.offered.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.offered.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let start_s = self.now();
        let clock = Instant::now();
        let name = request.name.to_string();
        let arguments = request
            .arguments
            .clone()
            .map(Value::Object)
            .unwrap_or(Value::Null);
        let is_query = super::calllog::is_query(&name, &arguments);
        let dispatched = tokio::select! {
            done = self.dispatch(&name, &arguments, request.arguments) => done,
            _ = context.ct.cancelled() => {
                // The agent gave up on the call: dropping the work cancels a
                // forwarded request upstream too.
                let text = "cancelled by the agent".to_string();
                (reply(text.clone(), true), CallOutcome::failed(text, false), false)
            }
        };
        let (result, outcome, refused) = dispatched;
        let logged = self.logged_arguments(&name, arguments);
        let duration_s = clock.elapsed().as_secs_f64();
        self.record(
            CallRecord {
                index: 0,
                tool: name,
                arguments: logged,
                start_s,
                duration_s,
                ok: outcome.ok,
                soft_error: outcome.soft_error,
                refused,
                forwarded: outcome.forwarded,
                error: outcome.error,
                result_chars: outcome.chars,
                // Redacted before it is cut (issue 24, item 27).
                result_preview: self
                    .inner
                    .redactor
                    .preview(&outcome.text, PREVIEW_CHARS, false),
                unreadable: None,
            },
            is_query,
        );
        Ok(result.into())
    }
}
