//! Servers started by a test on a port of 127.0.0.1 that they alone hold.
//!
//! A port picked free (bound to 0, then let go) can be taken by another
//! test's server before ours binds it. Ours then fails to bind and exits,
//! while a wait that only tries to connect finds the other server and
//! returns: the test talks to a stranger (a stand-in model that hangs, an
//! MCP server that answers something else). CI once saw a gemini episode
//! time out that way. So a server is ready only when a socket listening on
//! its port belongs to its own process tree (Linux `/proc`), and a server
//! that exits before that is started again on another port. A port that
//! must be closed is held bound and never listened on, so that nothing
//! else can open it while the test expects a refused connection.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::KillOnDrop;

/// Starts `command(port)` on a free port of 127.0.0.1 and waits until it
/// listens there itself; returns it (killed on drop) and the port.
///
/// A server that exits before listening (its port taken in between) is
/// started again on another port, up to five times; then this panics with
/// its exit status. Panics too when it does not listen within 60 s.
pub fn serve_on_free_port(mut command: impl FnMut(u16) -> Command) -> (KillOnDrop, u16) {
    let mut exits = Vec::new();
    for _ in 0..5 {
        let port = free_port();
        let mut child = command(port).spawn().expect("start the server");
        match listening(&mut child, port, Duration::from_secs(60)) {
            Ok(()) => return (KillOnDrop(child), port),
            Err(Exit(status)) => exits.push(format!("{port}: {status}")),
        }
    }
    panic!(
        "the server exited before listening, five times: {}",
        exits.join("; ")
    );
}

/// A port of 127.0.0.1 that refuses connections for as long as it lives:
/// bound, never listened on, so no other server can take it.
pub struct ClosedPort {
    _socket: socket2::Socket,
    /// The port.
    pub port: u16,
}

/// A [`ClosedPort`].
pub fn closed_port() -> ClosedPort {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    socket
        .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    let port = socket.local_addr().unwrap().as_socket().unwrap().port();
    ClosedPort {
        _socket: socket,
        port,
    }
}

/// A TCP port of 127.0.0.1 free when asked (see the module's doc for why
/// a server is not simply started on it: [`serve_on_free_port`]).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// How a server ended before it listened.
struct Exit(std::process::ExitStatus);

/// Waits until `child` or a process it started listens on `port`.
fn listening(child: &mut Child, port: u16, within: Duration) -> Result<(), Exit> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Exit(status));
        }
        let listeners = listeners_on(port);
        if !listeners.is_empty() {
            let owned = sockets_of_tree(child.id());
            if listeners.iter().any(|inode| owned.contains(inode)) {
                return Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!(
        "the server did not listen on 127.0.0.1:{port} within {} s",
        within.as_secs()
    );
}

/// The inodes of the sockets listening on `port` (any local address,
/// IPv4 or IPv6), from `/proc/net/tcp` and `/proc/net/tcp6`.
fn listeners_on(port: u16) -> Vec<u64> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let listens = *state == "0A";
            let on_port = local
                .rsplit_once(':')
                .and_then(|(_, hex)| u16::from_str_radix(hex, 16).ok())
                == Some(port);
            if listens && on_port {
                if let Ok(inode) = inode.parse() {
                    inodes.push(inode);
                }
            }
        }
    }
    inodes
}

/// The socket inodes open in `root` and every process descended from it.
fn sockets_of_tree(root: u32) -> HashSet<u64> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces and parentheses.
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse().ok())
        else {
            continue;
        };
        children.entry(ppid).or_default().push(pid);
    }
    let mut sockets = HashSet::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let target = target.to_string_lossy();
            if let Some(inode) = target
                .strip_prefix("socket:[")
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|n| n.parse().ok())
            {
                sockets.insert(inode);
            }
        }
        stack.extend(children.get(&pid).into_iter().flatten());
    }
    sockets
}

/// `okn-benchmark standin-model` run in `dir` with `args`, and
/// `--log-dir log` when given, on a port of its own
/// ([`serve_on_free_port`]), its stderr dropped; returns it and its root
/// URL, `http://127.0.0.1:PORT`.
pub fn standin_model(dir: &Path, args: &[&str], log: Option<&Path>) -> (KillOnDrop, String) {
    let (child, port) = serve_on_free_port(|port| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_okn-benchmark"));
        command
            .arg("standin-model")
            .args(args)
            .args(["--bind", &format!("127.0.0.1:{port}")])
            .current_dir(dir)
            .stderr(Stdio::null());
        if let Some(log) = log {
            command.arg("--log-dir").arg(log);
        }
        command
    });
    (child, format!("http://127.0.0.1:{port}"))
}

/// [`standin_model`] over the repository's `demo/benchmarks-single`
/// corpus, playing `strategy` (`oracle`, `hang`, `skill:85:101`, ...),
/// with `extra` arguments after those: the stand-in most tests talk to.
pub fn standin_single(strategy: &str, log: Option<&Path>, extra: &[&str]) -> (KillOnDrop, String) {
    let corpus = ["--corpus", "demo/benchmarks-single", "--strategy", strategy];
    let args = [&corpus[..], extra].concat();
    standin_model(&crate::support::repo(), &args, log)
}

/// `oxigraph serve` (the program at `oxigraph`) over the store at `db`,
/// its default graph the union of the named ones when `union`, on a port
/// of its own ([`serve_on_free_port`]), its output dropped; returns it
/// and its port.
pub fn oxigraph_serve(oxigraph: &Path, db: &Path, union: bool) -> (KillOnDrop, u16) {
    serve_on_free_port(|port| {
        let mut command = Command::new(oxigraph);
        command.arg("serve");
        if union {
            command.arg("--union-default-graph");
        }
        command
            .arg("--location")
            .arg(db)
            .args(["--bind", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    })
}
