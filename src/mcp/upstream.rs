//! The connection to the server under test: an rmcp client over a stdio
//! child process or streamable HTTP, as a [`Profile`] says.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{ClientConfig, Implementation, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::profile::{Profile, Upstream};

/// The longest JSON-RPC message (one line) accepted over stdio, bytes.
/// rmcp's default is 16 MiB, past which a message is dropped without a
/// word: a large reply then looks like a timeout.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

/// A live client session with the server under test.
pub struct Connection {
    /// The running client; its peer sends requests.
    pub service: RunningService<RoleClient, ClientConfig>,
    /// A stdio server's process, killed when dropped.
    pub child: Option<tokio::process::Child>,
    /// The tools the server lists, in its order.
    pub tools: Vec<Tool>,
    /// The same tools as the server wrote them, each JSON object whole,
    /// members rmcp's [`Tool`] has no field for included (the npm
    /// servers' `execution`, for one): over stdio, where the proxy reads
    /// the server's output itself (`StdioUpstream`). `None` over HTTP, where
    /// rmcp's transport reads it. Each is the server's text of the object,
    /// byte for byte (a number such as `1e2` or a 30-digit integer stays
    /// as written).
    pub raw_tools: Option<Vec<Box<serde_json::value::RawValue>>>,
    /// The server's instructions, if it sent any.
    pub instructions: Option<String>,
    /// The server's name and version, as it reported them.
    pub server_info: Option<Implementation>,
}

/// Installs the ring crypto provider for rustls once (HTTPS upstreams).
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn client_config() -> ClientConfig {
    let mut config = ClientConfig::default();
    config.client_info = Implementation::new("okn-benchmark", env!("CARGO_PKG_VERSION"));
    config
}

/// How many times a broken SSE stream of a streamable HTTP upstream is
/// opened again before the call waiting on it fails.
pub const SSE_RECONNECTS: usize = 2;

/// The wait before each of those, [`SSE_RECONNECTS`].
pub const SSE_RECONNECT_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

/// Connects to the profile's upstream, initializes, and lists its tools,
/// all within `timeout`.
///
/// `stderr_log` receives a stdio server's stderr (the agent host never sees
/// it). A relative `cwd` in the profile is resolved against the profile's
/// folder; `command = "okn-benchmark"` runs this very binary, so shipped
/// profiles work without installing it on PATH.
///
/// Errors: a one-line reason (spawn failure, refused connection, HTTP
/// status, initialization error, timeout), suitable for `startup_error`.
pub async fn connect(
    profile: &Profile,
    timeout: Duration,
    stderr_log: Option<&Path>,
) -> Result<Connection, String> {
    connect_inner(profile, timeout, stderr_log)
        .await
        .map_err(|reason| without_type_names(&reason))
}

/// `reason` without the Rust type names rmcp's errors carry in brackets
/// (`Transport [rmcp::transport::worker::WorkerTransport<...>] error: x`
/// becomes `Transport error: x`): a blocked reason is read by people, on
/// every progress line and in the report.
pub fn without_type_names(reason: &str) -> String {
    let mut out = String::with_capacity(reason.len());
    let mut rest = reason;
    while let Some(open) = rest.find('[') {
        let mut depth = 0usize;
        let mut close = None;
        for (i, c) in rest[open..].char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            break;
        };
        if rest[open..close].contains("::") {
            out.push_str(rest[..open].trim_end());
            rest = &rest[close + 1..];
        } else {
            out.push_str(&rest[..=close]);
            rest = &rest[close + 1..];
        }
    }
    out.push_str(rest);
    out
}

async fn connect_inner(
    profile: &Profile,
    timeout: Duration,
    stderr_log: Option<&Path>,
) -> Result<Connection, String> {
    let mut child = None;
    let mut stderr_copy: Option<tokio::task::JoinHandle<()>> = None;
    let attempt = async {
        let mut tap: Option<Tap> = None;
        let service = match &profile.upstream {
            Upstream::Stdio {
                command,
                args,
                cwd,
                env,
            } => {
                let program = resolve_program(command);
                let mut cmd = tokio::process::Command::new(&program);
                // The runner's credentials stay with the runner: the
                // server under test inherits none but those its profile
                // sets or passes (issue 24, item 27; mcp/runner_env.rs).
                for name in super::runner_env::withheld(|name| profile.keeps_env(name)) {
                    cmd.env_remove(name);
                }
                cmd.args(args)
                    .envs(env)
                    .kill_on_drop(true)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped());
                let base = profile.path.parent().unwrap_or(Path::new(""));
                if let Some(dir) = cwd {
                    cmd.current_dir(base.join(dir));
                }
                // Not written atomically, on purpose: it is the server's
                // live stream, and what it wrote before it (or the run)
                // was killed is the evidence the attempt page links. A
                // server given environment values writes through the
                // proxy, which redacts them (issue 24, item 27).
                // Without a log (`probe`), the server's stderr is shown on
                // this process's, redacted as well.
                let redactor = profile.redactor();
                let log = stderr_log.and_then(|path| std::fs::File::create(path).ok());
                cmd.stderr(match (&log, redactor.is_empty()) {
                    (Some(_), false) => Stdio::piped(),
                    (Some(file), true) => file
                        .try_clone()
                        .map(Stdio::from)
                        .unwrap_or_else(|_| Stdio::null()),
                    (None, _) if stderr_log.is_some() => Stdio::null(),
                    (None, true) => Stdio::inherit(),
                    (None, false) => Stdio::piped(),
                });
                // The working folder, named as the profile writes it when
                // it is missing: spawning would blame the program.
                if let Some(dir) = cwd
                    && !base.join(dir).is_dir()
                {
                    let written = profile.target().cwd.unwrap_or_default();
                    return Err(format!(
                        "the working folder '{written}' (cwd in the profile) does not exist or is not a folder: create it, or fix 'cwd'"
                    ));
                }
                // Reasons name the program as the profile writes it: they
                // are recorded, and name no folder of this machine.
                let shown = profile.program_as_written();
                let mut process = cmd
                    .spawn()
                    .map_err(|e| format!("cannot start '{shown}': {e}"))?;
                if let Some(stderr) = process.stderr.take() {
                    let out: Box<dyn std::io::Write + Send> = match log {
                        Some(file) => Box::new(file),
                        None => Box::new(std::io::stderr()),
                    };
                    stderr_copy = Some(tokio::spawn(copy_redacted(stderr, out, redactor)));
                }
                let (Some(stdout), Some(stdin)) = (process.stdout.take(), process.stdin.take())
                else {
                    return Err(format!("cannot talk to '{shown}': no pipes"));
                };
                child = Some(process);
                let (transport, tapped) = StdioUpstream::new(stdout, stdin);
                tap = Some(tapped);
                client_config()
                    .serve(transport)
                    .await
                    .map_err(|e| format!("MCP initialization with '{shown}' failed: {e}"))?
            }
            Upstream::Http { url, headers } => {
                install_crypto_provider();
                let mut custom = HashMap::new();
                for (name, value) in headers {
                    let name = http::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| format!("header name '{name}' is not valid"))?;
                    let value = http::HeaderValue::from_str(value)
                        .map_err(|_| format!("the value of header '{name}' is not valid"))?;
                    custom.insert(name, value);
                }
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom)
                    .max_sse_event_size(MAX_MESSAGE_BYTES)
                    .max_json_response_size(MAX_MESSAGE_BYTES);
                // rmcp reconnects a broken SSE stream forever by default, so
                // a call in flight to a server that died waited for the
                // proxy's --timeout. A stream is tried again twice, briefly:
                // a server that is gone fails the call within a second.
                let mut retry = rmcp::transport::common::client_side_sse::FixedInterval::default();
                retry.max_times = Some(SSE_RECONNECTS);
                retry.duration = SSE_RECONNECT_DELAY;
                config.retry_config = std::sync::Arc::new(retry);
                let transport = StreamableHttpClientTransport::from_config(config);
                client_config().serve(transport).await.map_err(|e| {
                    let shown = super::profile::redact_url(url);
                    format!(
                        "MCP initialization with {shown} failed: {}",
                        e.to_string().replace(url.as_str(), &shown)
                    )
                })?
            }
        };
        let tools = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        let raw_tools = tap.as_ref().map(Tap::finish);
        let info = service.peer().peer_info();
        Ok::<_, String>(Connection {
            raw_tools,
            child: None,
            instructions: info.as_ref().and_then(|i| i.instructions.clone()),
            server_info: info.as_ref().and_then(|i| i.server_info.clone()),
            tools,
            service,
        })
    };
    let outcome = match tokio::time::timeout(timeout, attempt).await {
        Ok(result) => result.map(|mut connection| {
            connection.child = child.take();
            connection
        }),
        Err(_) => Err(format!(
            "no answer from the server within {} s while connecting",
            timeout.as_secs()
        )),
    };
    if outcome.is_err() {
        // The server is stopped; what it wrote is in its log before the
        // reason is read beside it.
        drop(child);
        if let Some(copy) = stderr_copy {
            let _ = tokio::time::timeout(Duration::from_secs(2), copy).await;
        }
    }
    outcome
}

/// Copies a stdio server's stderr into `file` (its log, or this process's
/// stderr) as it comes, every value of its profile replaced
/// ([`super::redact::Stream`]).
async fn copy_redacted(
    mut stderr: tokio::process::ChildStderr,
    mut file: Box<dyn std::io::Write + Send>,
    redactor: super::redact::Redactor,
) {
    use std::io::Write;
    use tokio::io::AsyncReadExt;
    let mut stream = redactor.stream();
    let mut buffer = vec![0u8; 1 << 14];
    loop {
        match stderr.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if file.write_all(&stream.push(&buffer[..n])).is_err() {
                    return;
                }
            }
        }
    }
    let _ = file.write_all(&stream.finish());
}

/// What [`StdioUpstream`] keeps: the `tools` objects of the `tools/list`
/// replies read so far, and whether it still looks for them.
struct Tap {
    tools: std::sync::Arc<std::sync::Mutex<Vec<Box<serde_json::value::RawValue>>>>,
    armed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Tap {
    /// Stops looking and returns the tools kept, in the server's order
    /// (all pages of a paginated list, one after another).
    fn finish(&self) -> Vec<Box<serde_json::value::RawValue>> {
        self.armed.store(false, std::sync::atomic::Ordering::SeqCst);
        std::mem::take(&mut *self.tools.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// A JSON-RPC reply with a `tools` list, the tools kept as their text.
#[derive(serde::Deserialize)]
struct ListReply<'a> {
    #[serde(borrow)]
    result: Option<ListResult<'a>>,
}

#[derive(serde::Deserialize)]
struct ListResult<'a> {
    #[serde(borrow)]
    tools: Vec<&'a serde_json::value::RawValue>,
}

/// The code of the error reply that stands for a reply the proxy could
/// not read ([`StdioUpstream`]): JSON-RPC 2.0's "Internal error".
const UNREADABLE_REPLY_CODE: i64 = -32603;

/// What marks an error reply as the proxy's own, standing for a reply of
/// the server it could not read: a value made for this process, which no
/// server can send ([`is_unreadable_reply`]).
fn unreadable_marker() -> &'static str {
    static MARKER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MARKER.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        format!("unreadable-reply-{:016x}", hasher.finish())
    })
}

/// Whether `error`, the reply a call got, stands for a reply of the
/// server that the proxy could not read (`StdioUpstream`); its message
/// then says why.
pub fn is_unreadable_reply(error: &rmcp::model::ErrorData) -> bool {
    error
        .data
        .as_ref()
        .and_then(|d| d.get("okn_benchmark_proxy"))
        .and_then(serde_json::Value::as_str)
        == Some(unreadable_marker())
}

/// rmcp's transport to a stdio server, whose output the proxy reads
/// itself (issue 24, item 18). Each line is read as rmcp reads it, as one
/// JSON-RPC message; a reply that cannot be read (nested deeper than the
/// JSON reader goes, not JSON, cut short, longer than [`MAX_MESSAGE_BYTES`])
/// would be dropped by rmcp without a word, and the call waiting on it
/// would wait for `--timeout` and be recorded as never answered. When its
/// id can be read ([`super::framing::reply_id`]), it is replaced by an
/// error reply under that id that says why ([`is_unreadable_reply`]), and
/// the call ends at once. Other lines that cannot be read are skipped, as
/// rmcp skips them. Requests go out through rmcp's own writer.
///
/// Until [`Tap::finish`], each `tools/list` reply has its tool objects kept
/// whole: rmcp's [`Tool`] drops members it has no field for, and README.md
/// ("Servers under test") promises the agent each tool exactly as the
/// server described it.
struct StdioUpstream {
    /// rmcp's writer to the server's stdin; its reading half is never read.
    writer: AsyncRwTransport<RoleClient, tokio::io::Empty, tokio::process::ChildStdin>,
    reader: tokio::io::BufReader<tokio::process::ChildStdout>,
    /// The line read so far (kept across a cancelled read).
    line: Vec<u8>,
    /// A line longer than [`MAX_MESSAGE_BYTES`] being skipped: its bytes so
    /// far and its head.
    over: Option<(usize, Vec<u8>)>,
    tools: std::sync::Arc<std::sync::Mutex<Vec<Box<serde_json::value::RawValue>>>>,
    armed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// One line of a stdio server's output.
enum ServerLine {
    /// A whole line, its line end included.
    Whole(Vec<u8>),
    /// A line longer than [`MAX_MESSAGE_BYTES`]: its length and its head.
    Oversized(usize, Vec<u8>),
}

/// Bytes of an oversized line kept to read its id from.
const HEAD_BYTES: usize = 64 * 1024;

impl StdioUpstream {
    /// The transport over a server's `stdout` and `stdin`, and the tap
    /// that keeps its `tools/list` replies.
    fn new(
        stdout: tokio::process::ChildStdout,
        stdin: tokio::process::ChildStdin,
    ) -> (StdioUpstream, Tap) {
        let tap = Tap {
            tools: Default::default(),
            armed: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
        };
        let transport = StdioUpstream {
            writer: AsyncRwTransport::new_client(tokio::io::empty(), stdin),
            reader: tokio::io::BufReader::with_capacity(1 << 16, stdout),
            line: Vec::new(),
            over: None,
            tools: tap.tools.clone(),
            armed: tap.armed.clone(),
        };
        (transport, tap)
    }

    /// The next line, or `None` at the end of the server's output (a line
    /// cut by the end is no message, as rmcp reads it). Cancellation safe:
    /// what was read stays in `self`.
    async fn next_line(&mut self) -> Option<ServerLine> {
        use tokio::io::AsyncBufReadExt;
        loop {
            let (taken, ended) = {
                let available = self.reader.fill_buf().await.ok()?;
                if available.is_empty() {
                    return None;
                }
                let newline = memchr::memchr(b'\n', available);
                let take = newline.map_or(available.len(), |i| i + 1);
                let chunk = &available[..take];
                match &mut self.over {
                    Some((seen, head)) => {
                        *seen += take;
                        let room = HEAD_BYTES.saturating_sub(head.len()).min(take);
                        head.extend_from_slice(&chunk[..room]);
                    }
                    None if self.line.len().saturating_add(take) > MAX_MESSAGE_BYTES => {
                        let mut head = std::mem::take(&mut self.line);
                        let seen = head.len() + take;
                        head.truncate(HEAD_BYTES);
                        let room = HEAD_BYTES.saturating_sub(head.len()).min(take);
                        head.extend_from_slice(&chunk[..room]);
                        self.over = Some((seen, head));
                    }
                    None => self.line.extend_from_slice(chunk),
                }
                (take, newline.is_some())
            };
            self.reader.consume(taken);
            if ended {
                return Some(match self.over.take() {
                    Some((seen, head)) => ServerLine::Oversized(seen, head),
                    None => ServerLine::Whole(std::mem::take(&mut self.line)),
                });
            }
        }
    }

    /// Keeps the tool objects of a `tools/list` reply, until
    /// [`Tap::finish`].
    fn keep_tools(&self, line: &[u8]) {
        use std::sync::atomic::Ordering;
        if self.armed.load(Ordering::SeqCst)
            && memchr::memmem::find(line, b"\"tools\"").is_some()
            && let Ok(ListReply {
                result: Some(ListResult { tools: listed }),
            }) = serde_json::from_slice::<ListReply>(line)
        {
            self.tools
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(listed.into_iter().map(|t| t.to_owned()));
        }
    }
}

/// The error reply that stands for a reply in `body` the proxy could not
/// read, under its id, saying `why`; `None` when no reply's id can be read
/// there.
fn unreadable_reply(body: &[u8], why: &str) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
    let id = super::framing::reply_id(body)?;
    let error = serde_json::json!({
        "code": UNREADABLE_REPLY_CODE,
        "message": why,
        "data": {"okn_benchmark_proxy": unreadable_marker()},
    });
    serde_json::from_str(&format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}"
    ))
    .ok()
}

/// Why the line `body` is no message the proxy can read, from the JSON
/// reader's `error`.
fn why_unreadable(body: &[u8], error: &serde_json::Error) -> String {
    if error.to_string().contains("recursion limit") {
        format!(
            "it nests arrays and objects {} levels deep, more than the {} levels the proxy reads",
            super::framing::nesting(body),
            super::framing::MAX_MESSAGE_DEPTH + 1
        )
    } else {
        format!("it is not a JSON-RPC message the proxy can read ({error})")
    }
}

impl rmcp::transport::Transport<RoleClient> for StdioUpstream {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.writer.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        loop {
            let (body, why) = match self.next_line().await? {
                ServerLine::Whole(line) => {
                    let body = line.strip_suffix(b"\n").unwrap_or(&line);
                    let body = body.strip_suffix(b"\r").unwrap_or(body);
                    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
                    if body.trim_ascii().is_empty() {
                        continue;
                    }
                    self.keep_tools(body);
                    match serde_json::from_slice(body) {
                        Ok(message) => return Some(message),
                        Err(e) => (body.to_vec(), why_unreadable(body, &e)),
                    }
                }
                ServerLine::Oversized(bytes, head) => (
                    head,
                    format!(
                        "it is {bytes} bytes, more than the {MAX_MESSAGE_BYTES} bytes the proxy reads in one message"
                    ),
                ),
            };
            if let Some(message) = unreadable_reply(&body, &why) {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.writer.close()
    }
}

/// `okn-benchmark` (the program's own name) resolves to this executable
/// when it is not on PATH; any other command is used as given.
fn resolve_program(command: &str) -> std::path::PathBuf {
    if command == "okn-benchmark"
        && which(command).is_none()
        && let Ok(own) = std::env::current_exe()
    {
        return own;
    }
    std::path::PathBuf::from(command)
}

fn which(command: &str) -> Option<std::path::PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(command))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_lose_rust_type_names() {
        assert_eq!(
            without_type_names(
                "MCP initialization with http://127.0.0.1:1/mcp failed: Transport [rmcp::transport::worker::WorkerTransport<rmcp::a::B<reqwest::Client>>] error: connection refused"
            ),
            "MCP initialization with http://127.0.0.1:1/mcp failed: Transport error: connection refused"
        );
        assert_eq!(
            without_type_names("keeps [brackets] and [a::b"),
            "keeps [brackets] and [a::b"
        );
    }
}
