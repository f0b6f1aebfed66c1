//! `okn-benchmark kg-server`: the demo KG server on stdio or streamable HTTP.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;
use rmcp::ServiceExt;

use crate::error::{Error, Result};
use crate::mcp::kg_server::{Faults, KgServer, Lookup};
use crate::sparql::EndpointSpec;

/// Serve the demo knowledge graph as an MCP server (the embedded default's
/// server under test).
///
/// Tools: list_graphs, get_schema, query, lookup_uri, get_descendants; results
/// are JSON with typed cells. Over stdio it serves one client until stdin
/// closes; over HTTP it serves streamable-HTTP MCP at http://BIND/mcp until
/// interrupted. --fault degrades it on purpose, to test a proxy's guards.
#[derive(Debug, clap::Args)]
pub(crate) struct KgServerArgs {
    /// RDF data to serve (a folder of .ttl files with .graph sidecars, .nq or .trig).
    #[arg(long, value_name = "PATH", default_value = "demo/kg")]
    data: PathBuf,
    /// Transport.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    transport: Transport,
    /// Address for --transport http (127.0.0.1 only is advised; port 0 picks a free one).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8808")]
    bind: String,
    /// Degrade on purpose: rate-limit-every=N (a 429 inside a successful reply on
    /// every Nth call), rpc-error-every=N (a JSON-RPC error on every Nth call),
    /// hang-after=N (never answer after N calls), die-after=N (exit after N calls).
    /// Repeatable.
    #[arg(long, value_name = "KIND=N")]
    fault: Vec<String>,
    /// How lookup_uri ranks candidates: exact-first (labels equal to the
    /// name, then starting with it, then containing it) or fuzzy (labels
    /// sharing the most words with the name, then the best-connected IRIs,
    /// with no exact-match tier). The two are the baseline and candidate
    /// of docs/CATALOG.md's published example.
    #[arg(long, value_enum, default_value_t = LookupArg::ExactFirst)]
    lookup: LookupArg,
    /// Answer query with at most N rows (the rest cut, the reply marked
    /// "truncated": true), as a deployment that caps its results does: the
    /// candidate of docs/SCALING.md's published comparison.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    row_limit: Option<usize>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LookupArg {
    ExactFirst,
    Fuzzy,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Transport {
    Stdio,
    Http,
}

pub(crate) fn run(args: KgServerArgs) -> Result<ExitCode> {
    let mut faults = Faults::default();
    for spec in &args.fault {
        faults.add(spec)?;
    }
    let data = args.data.to_string_lossy().into_owned();
    let spec = EndpointSpec::resolve(&data, std::path::Path::new(""))?;
    let EndpointSpec::Embedded {
        display,
        files,
        identity,
        ..
    } = &spec
    else {
        return Err(Error::Usage(format!(
            "--data {data}: kg-server serves local RDF data, not a SPARQL URL"
        )));
    };
    let store = crate::sparql::EmbeddedStore::load(display, files, identity)?;
    let mut server = KgServer::new(store, faults).with_lookup(match args.lookup {
        LookupArg::ExactFirst => Lookup::ExactFirst,
        LookupArg::Fuzzy => Lookup::Fuzzy,
    });
    if let Some(limit) = args.row_limit {
        server = server.with_row_limit(limit);
    }
    let runtime = crate::mcp::runtime()?;
    runtime.block_on(async move {
        match args.transport {
            Transport::Stdio => {
                let service = server.serve(rmcp::transport::stdio()).await.map_err(|e| {
                    Error::Other(format!("kg-server: MCP initialization failed: {e}"))
                })?;
                let _ = service.waiting().await;
                Ok(ExitCode::SUCCESS)
            }
            Transport::Http => serve_http(server, &args.bind).await,
        }
    })
}

async fn serve_http(server: KgServer, bind: &str) -> Result<ExitCode> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let service: StreamableHttpService<KgServer, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(server.clone()),
        Default::default(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    crate::http::serve(router, bind, "kg-server", "MCP", "/mcp").await?;
    Ok(ExitCode::SUCCESS)
}
