//! What the proxy adds to each tool call (docs/PERFORMANCE.md, "The
//! proxy's cost per call").
//!
//! ```sh
//! cargo build --release --bin okn-benchmark --example bench_proxy
//! target/release/examples/bench_proxy                 # 1,000 calls each way
//! target/release/examples/bench_proxy --calls 5000 --tool get_schema
//! ```
//!
//! Starts the demo KG server over stdio twice, in one run: directly
//! (`okn-benchmark kg-server --data demo/kg`) and behind the proxy
//! (`okn-benchmark proxy --tools all-tools --profile
//! profiles/demo-kg.local.toml --log-dir DIR`, which starts the same
//! server), each with rmcp's client. After the MCP handshake and a few
//! unmeasured calls, it sends the burst: `--calls` sequential `tools/call`
//! of a cheap tool (`list_graphs`) on each connection, the two
//! alternating call by call so that the machine's load falls on both
//! alike. Each call is timed from the request to its reply. It prints the
//! median, 99th percentile and mean latency of each way and of the
//! difference call by call (the proxy's call i minus the direct call i),
//! the median added over the burst's first and last 100 calls, and the
//! proxy's median over its first and last tenths (a log that grows with
//! every call would show there).
//!
//! `--bin` names the okn-benchmark binary (default: the one beside this
//! example, `target/release/okn-benchmark`); run from the repository root
//! (the demo data and profile are found there). The proxy's log goes to a
//! fresh folder under $TMPDIR, removed at the end.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;

/// Times tool calls to the demo KG server, directly and through the proxy.
#[derive(Parser)]
struct Args {
    /// Calls timed on each connection.
    #[arg(long, default_value_t = 1000)]
    calls: usize,
    /// Calls made first on each connection and not timed.
    #[arg(long, default_value_t = 50)]
    warmup: usize,
    /// The tool called (no arguments).
    #[arg(long, default_value = "list_graphs")]
    tool: String,
    /// The okn-benchmark binary.
    #[arg(long)]
    bin: Option<PathBuf>,
}

type Session = RunningService<RoleClient, ClientConfig>;

async fn connect(bin: &PathBuf, args: &[&str]) -> Result<Session, String> {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(args);
    let transport =
        TokioChildProcess::new(cmd).map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    ClientConfig::default()
        .serve(transport)
        .await
        .map_err(|e| format!("MCP initialization failed: {e}"))
}

/// One call, timed; an error reply or a failed call is an error.
async fn call(session: &Session, tool: &str) -> Result<Duration, String> {
    let started = Instant::now();
    let reply = session
        .peer()
        .call_tool(CallToolRequestParams::new(tool.to_string()))
        .await
        .map_err(|e| format!("{tool} failed: {e}"))?;
    let took = started.elapsed();
    if reply.is_error == Some(true) {
        return Err(format!("{tool} replied with an error: {:?}", reply.content));
    }
    Ok(took)
}

/// `q`-quantile (0..=1) of sorted durations, in milliseconds (nearest rank).
fn quantile(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1000.0
}

fn mean(times: &[Duration]) -> f64 {
    times.iter().map(Duration::as_secs_f64).sum::<f64>() * 1000.0 / times.len().max(1) as f64
}

fn sorted(times: &[Duration]) -> Vec<Duration> {
    let mut times = times.to_vec();
    times.sort();
    times
}

async fn run(args: Args) -> Result<(), String> {
    if args.calls == 0 {
        return Err("--calls must be at least 1".into());
    }
    let bin = match args.bin {
        Some(bin) => bin,
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .parent()
            .and_then(|examples| examples.parent())
            .map(|release| release.join("okn-benchmark"))
            .ok_or("cannot find the okn-benchmark binary: give --bin")?,
    };
    let log = tempfile::Builder::new()
        .prefix("okn-bench-proxy.")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let log_dir = log.path().display().to_string();
    let direct = connect(&bin, &["kg-server", "--data", "demo/kg"]).await?;
    let proxied = connect(
        &bin,
        &[
            "proxy",
            "--tools",
            "all-tools",
            "--profile",
            "profiles/demo-kg.local.toml",
            "--log-dir",
            &log_dir,
        ],
    )
    .await?;
    for _ in 0..args.warmup {
        call(&direct, &args.tool).await?;
        call(&proxied, &args.tool).await?;
    }
    let mut times = (Vec::new(), Vec::new());
    for _ in 0..args.calls {
        times.0.push(call(&direct, &args.tool).await?);
        times.1.push(call(&proxied, &args.tool).await?);
    }
    let _ = direct.cancel().await;
    let _ = proxied.cancel().await;
    // The proxy writes calls.json whole once the agent's side closes
    // (until then its calls are in its journal, calls.jsonl): wait for it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let logged = loop {
        let text = std::fs::read_to_string(log.path().join("calls.json")).unwrap_or_default();
        if !log.path().join("calls.jsonl").exists() || Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (d, p) = (sorted(&times.0), sorted(&times.1));
    let tenth = (args.calls / 10).max(1);
    let (first, last) = (
        sorted(&times.1[..tenth.min(times.1.len())]),
        sorted(&times.1[times.1.len().saturating_sub(tenth)..]),
    );
    println!(
        "{} sequential `{}` calls each way, after {} untimed; latency per call in ms",
        args.calls, args.tool, args.warmup
    );
    println!();
    println!("| path | median | p99 | mean |");
    println!("|---|---:|---:|---:|");
    for (name, s, t) in [
        ("straight to the server", &d, &times.0),
        ("through the proxy", &p, &times.1),
    ] {
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} |",
            quantile(s, 0.5),
            quantile(s, 0.99),
            mean(t)
        );
    }
    // Call i through the proxy minus call i straight to the server (the
    // two alternate, so each pair ran under the same load).
    let in_order: Vec<f64> = times
        .0
        .iter()
        .zip(&times.1)
        .map(|(d, p)| (p.as_secs_f64() - d.as_secs_f64()) * 1000.0)
        .collect();
    let median = |values: &[f64]| {
        let mut values = values.to_vec();
        values.sort_by(f64::total_cmp);
        values[values.len().div_ceil(2).max(1) - 1]
    };
    let hundred = args.calls.min(100);
    let (added_first, added_last) = (
        median(&in_order[..hundred]),
        median(&in_order[in_order.len() - hundred..]),
    );
    let mut added = in_order.clone();
    added.sort_by(f64::total_cmp);
    let rank = |q: f64| added[((q * added.len() as f64).ceil() as usize).clamp(1, added.len()) - 1];
    println!(
        "| added by the proxy (call by call) | {:.3} | {:.3} | {:.3} |",
        rank(0.5),
        rank(0.99),
        mean(&times.1) - mean(&times.0)
    );
    println!();
    println!(
        "added by the proxy (call by call), median over the first {hundred} timed calls {added_first:.3} ms, over the last {hundred} {added_last:.3} ms"
    );
    println!(
        "proxy median over the first {tenth} timed calls {:.3} ms, over the last {tenth} {:.3} ms; calls.json at the end: {} KB",
        quantile(&first, 0.5),
        quantile(&last, 0.5),
        logged.len() / 1024
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("bench_proxy: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_proxy: {e}");
            ExitCode::FAILURE
        }
    }
}
