//! Serving an axum router for the local servers this tool runs (the demo
//! KG server over streamable HTTP, the Messages-API stand-in).

use crate::error::{Error, Result};

/// Serves `router` on `bind` until Ctrl-C, announcing on stderr
/// `NAME: serving WHAT at http://ADDRESS{path}` (the real port when `bind`
/// asks for port 0).
///
/// Errors: [`Error::Usage`] when `bind` cannot be listened on.
pub async fn serve(
    router: axum::Router,
    bind: &str,
    name: &str,
    what: &str,
    path: &str,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|e| Error::Usage(format!("--bind {bind}: cannot listen: {e}")))?;
    let address = listener
        .local_addr()
        .map_err(|e| Error::Other(e.to_string()))?;
    errln!("{name}: serving {what} at http://{address}{path} (Ctrl-C to stop)");
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| Error::Other(format!("{name}: {e}")))
}
