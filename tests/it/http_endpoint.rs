//! The SPARQL 1.1 Protocol client against a real server: `oxigraph serve`
//! (the `oxigraph` package from PyPI, installed by `scripts/test`), started
//! on 127.0.0.1 by each test. Failure modes that no real server produces on
//! demand (malformed results, a server that never answers) use a raw TCP
//! listener in the test, and say so.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{KillOnDrop, Test, okn_in, stderr, stdout, tool, work_dir};

const DATA: &str = r#"<http://ex.org/place/1> <http://www.w3.org/2000/01/rdf-schema#label> "Alpha" <https://purl.org/okn/frink/kg/places> .
<http://ex.org/place/2> <http://www.w3.org/2000/01/rdf-schema#label> "Beta" <https://purl.org/okn/frink/kg/places> .
<http://ex.org/place/3> <http://www.w3.org/2000/01/rdf-schema#label> "Gamma"@en <https://purl.org/okn/frink/kg/places> .
<http://ex.org/place/1> <http://ex.org/prevalence> "7.5"^^<http://www.w3.org/2001/XMLSchema#decimal> <https://purl.org/okn/frink/kg/health> .
<http://ex.org/place/2> <http://ex.org/prevalence> "6.25"^^<http://www.w3.org/2001/XMLSchema#decimal> <https://purl.org/okn/frink/kg/health> .
<http://ex.org/place/3> <http://ex.org/prevalence> "1"^^<http://www.w3.org/2001/XMLSchema#decimal> <https://purl.org/okn/frink/kg/health> .
"#;

const SELECT: &str = "#+ summary: Places with their prevalence and label, highest prevalence first.\n#+ tags:\n#+   - places\n#+   - health\n\nSELECT ?place ?label ?prevalence WHERE {\n  GRAPH <https://purl.org/okn/frink/kg/places> { ?place <http://www.w3.org/2000/01/rdf-schema#label> ?label }\n  GRAPH <https://purl.org/okn/frink/kg/health> { ?place <http://ex.org/prevalence> ?prevalence }\n} ORDER BY DESC(?prevalence)\n";
const AVERAGE: &str = "#+ summary: The average prevalence.\n\nSELECT (AVG(?p) AS ?average) WHERE { ?s <http://ex.org/prevalence> ?p }\n";
const ASK: &str = "#+ summary: Is Beta a place?\n\nASK { ?s <http://www.w3.org/2000/01/rdf-schema#label> \"Beta\" }\n";
const CONSTRUCT: &str = "#+ summary: Labels as a graph.\n\nCONSTRUCT { ?s <http://ex.org/name> ?l } WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l }\n";

/// A running `oxigraph serve` over DATA, killed on drop.
struct Server {
    _child: KillOnDrop,
    url: String,
}

fn start_oxigraph(dir: &Path) -> Server {
    let oxigraph = tool("oxigraph");
    let db = dir.join("db");
    let status = Command::new(&oxigraph)
        .args(["load", "--location"])
        .arg(&db)
        .arg("--file")
        .arg(dir.join("data.nq"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "oxigraph load failed");
    let (child, port) = crate::support::oxigraph_serve(&oxigraph, &db, true);
    Server {
        _child: child,
        url: format!("http://127.0.0.1:{port}/query"),
    }
}

fn corpus_dir() -> tempfile::TempDir {
    work_dir(&[
        ("data.nq", DATA),
        ("corpus/prevalence_x.rq", SELECT),
        ("corpus/average_x.rq", AVERAGE),
        ("corpus/beta_y.rq", ASK),
        ("corpus/labels_y.rq", CONSTRUCT),
    ])
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap()
}

#[test]
fn http_endpoint_gives_the_same_ground_truth_as_the_embedded_store() {
    let dir = corpus_dir();
    let server = start_oxigraph(dir.path());
    let http = okn_in(dir.path())
        .args([
            "reference",
            "--corpus",
            "corpus",
            "--ground-truth",
            "gt-http",
            "--endpoint",
        ])
        .arg(&server.url)
        .output()
        .unwrap();
    assert_eq!(http.status.code(), Some(0), "{}", stderr(&http));
    assert!(
        stdout(&http)
            .lines()
            .any(|l| l.starts_with("4 records: 4 built, 0 reused")),
        "{}",
        stdout(&http)
    );
    let embedded = okn_in(dir.path())
        .args([
            "reference",
            "--corpus",
            "corpus",
            "--ground-truth",
            "gt-embedded",
            "--endpoint",
            "data.nq",
        ])
        .output()
        .unwrap();
    assert_eq!(embedded.status.code(), Some(0), "{}", stderr(&embedded));

    for id in ["prevalence_x", "average_x", "beta_y"] {
        assert_eq!(
            read(dir.path(), &format!("gt-http/{id}.csv")),
            read(dir.path(), &format!("gt-embedded/{id}.csv")),
            "{id}"
        );
    }
    assert_eq!(
        read(dir.path(), "gt-http/prevalence_x.csv"),
        "place,label,prevalence\nhttp://ex.org/place/1,Alpha,7.5\nhttp://ex.org/place/2,Beta,6.25\nhttp://ex.org/place/3,Gamma,1\n"
    );
    assert_eq!(read(dir.path(), "gt-http/beta_y.csv"), "ask\ntrue\n");
    // CONSTRUCT: the same triples (a graph has no order).
    let sorted = |text: String| {
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        lines.sort();
        lines
    };
    assert_eq!(
        sorted(read(dir.path(), "gt-http/labels_y.csv")),
        sorted(read(dir.path(), "gt-embedded/labels_y.csv"))
    );
    assert_eq!(sorted(read(dir.path(), "gt-http/labels_y.csv")).len(), 4);

    let meta: serde_json::Value =
        serde_json::from_str(&read(dir.path(), "gt-http/prevalence_x.json")).unwrap();
    assert_eq!(meta["endpoint"]["kind"], "http");
    assert_eq!(meta["endpoint"]["location"], server.url.as_str());
    // What the server says of itself (`Server: Oxigraph/0.5.13`), recorded
    // but not fingerprinted.
    assert_eq!(meta["endpoint"]["engine"], "Oxigraph", "{meta}");
    let version = meta["endpoint"]["engine_version"].as_str().unwrap_or("");
    assert!(version.starts_with("0.5."), "{meta}");
    assert_eq!(meta["endpoint"]["identity"], server.url.as_str());
    assert_eq!(meta["ordered"], true);
    assert_eq!(meta["row_count"], 3);
    let embedded_meta: serde_json::Value =
        serde_json::from_str(&read(dir.path(), "gt-embedded/prevalence_x.json")).unwrap();
    assert_ne!(meta["fingerprint"], embedded_meta["fingerprint"]);
    assert_eq!(embedded_meta["endpoint"]["engine"], "oxigraph");

    // A second run against the same endpoint queries nothing.
    let again = okn_in(dir.path())
        .args([
            "reference",
            "--corpus",
            "corpus",
            "--ground-truth",
            "gt-http",
            "--endpoint",
        ])
        .arg(&server.url)
        .output()
        .unwrap();
    assert!(
        stdout(&again)
            .lines()
            .any(|l| l.starts_with("4 records: 0 built, 4 reused")),
        "{}",
        stdout(&again)
    );
}

/// The bytes of every file under `dir`, by path.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

/// `reference ARGS --endpoint URL` in `dir`.
fn reference_at(dir: &Path, url: &str, args: &[&str]) -> std::process::Output {
    okn_in(dir)
        .args(["reference", "--corpus", "corpus"])
        .args(args)
        .args(["--endpoint", url])
        .output()
        .unwrap()
}

#[test]
fn reference_verify_catches_an_update_made_at_the_endpoint_and_plain_reference_does_not() {
    let dir = corpus_dir();
    let server = start_oxigraph(dir.path());
    let built = reference_at(dir.path(), &server.url, &[]);
    assert_eq!(built.status.code(), Some(0), "{}", stderr(&built));

    // Nothing changed: every record is the same, and the check is logged.
    let gt = dir.path().join("corpus/ground-truth");
    let before = snapshot(&gt);
    let clean = reference_at(dir.path(), &server.url, &["--verify"]);
    let text = stdout(&clean);
    assert_eq!(clean.status.code(), Some(0), "{text}{}", stderr(&clean));
    assert!(
        text.contains("4 records verified: 4 same, 0 differ, 0 unchecked, 0 failed;"),
        "{text}"
    );
    assert!(text.contains("same       prevalence_x  3 rows"), "{text}");
    let log: serde_json::Value =
        serde_json::from_str(&read(dir.path(), "corpus/ground-truth/.verified.json")).unwrap();
    assert_eq!(log["format"], 1);
    assert_eq!(log["records"].as_object().unwrap().len(), 4, "{log}");
    assert_eq!(log["records"]["prevalence_x"]["matched"], true);
    assert_eq!(
        log["records"]["prevalence_x"]["endpoint"]["engine"],
        "Oxigraph"
    );
    let logged = snapshot(&gt);

    // Beta's prevalence is updated at the endpoint: the ordered key's row
    // and its order change, and the average with it.
    let update_url = server.url.replace("/query", "/update");
    let update = "DELETE DATA { GRAPH <https://purl.org/okn/frink/kg/health> { <http://ex.org/place/2> <http://ex.org/prevalence> \"6.25\"^^<http://www.w3.org/2001/XMLSchema#decimal> } } ;\nINSERT DATA { GRAPH <https://purl.org/okn/frink/kg/health> { <http://ex.org/place/2> <http://ex.org/prevalence> \"9\"^^<http://www.w3.org/2001/XMLSchema#decimal> } }";
    let reply = ureq::post(&update_url)
        .send_form([("update", update)])
        .unwrap();
    assert!(reply.status().is_success(), "{}", reply.status());

    // The fingerprint of a URL is the URL: plain `reference` reuses every
    // stale row (README.md and docs/FORMAT.md say so).
    let again = reference_at(dir.path(), &server.url, &[]);
    assert!(
        stdout(&again)
            .lines()
            .any(|l| l.starts_with("4 records: 0 built, 4 reused, 0 stale")),
        "{}",
        stdout(&again)
    );
    assert_eq!(logged, snapshot(&gt), "plain reference wrote nothing");

    // --verify notices, names both records with their differing rows, and
    // writes no ground truth.
    let caught = reference_at(dir.path(), &server.url, &["--verify"]);
    let text = stdout(&caught);
    assert_eq!(caught.status.code(), Some(1), "{text}{}", stderr(&caught));
    assert!(
        text.contains("4 records verified: 2 same, 2 differ, 0 unchecked, 0 failed;"),
        "{text}"
    );
    assert!(
        text.contains("DIFFERS    prevalence_x  +1 -1 rows (3 cached, 3 now)\n"),
        "{text}"
    );
    assert!(
        text.contains("    + http://ex.org/place/2,Beta,9\n"),
        "{text}"
    );
    assert!(
        text.contains("    - http://ex.org/place/2,Beta,6.25\n"),
        "{text}"
    );
    assert!(
        text.contains("DIFFERS    average_x     +1 -1 rows"),
        "{text}"
    );
    assert!(text.contains("same       beta_y"), "{text}");
    assert!(text.contains("same       labels_y"), "{text}");
    assert!(
        stderr(&caught).contains("no longer answers the cached ground truth of 2 records"),
        "{}",
        stderr(&caught)
    );
    let after = snapshot(&gt);
    let without_log = |files: &[(std::path::PathBuf, Vec<u8>)]| {
        files
            .iter()
            .filter(|(p, _)| !p.ends_with(".verified.json"))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(without_log(&before), without_log(&after));
    let log: serde_json::Value =
        serde_json::from_str(&read(dir.path(), "corpus/ground-truth/.verified.json")).unwrap();
    assert_eq!(log["records"]["prevalence_x"]["matched"], false, "{log}");
    assert_eq!(log["records"]["average_x"]["matched"], false, "{log}");
    assert_eq!(log["records"]["beta_y"]["matched"], true, "{log}");

    // Still only --verify notices; --force rebuilds, and the check passes.
    let still = reference_at(dir.path(), &server.url, &[]);
    assert!(
        stdout(&still).contains("4 records: 0 built, 4 reused"),
        "{}",
        stdout(&still)
    );
    let forced = reference_at(dir.path(), &server.url, &["--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert_eq!(
        read(dir.path(), "corpus/ground-truth/prevalence_x.csv"),
        "place,label,prevalence\nhttp://ex.org/place/2,Beta,9\nhttp://ex.org/place/1,Alpha,7.5\nhttp://ex.org/place/3,Gamma,1\n"
    );
    let clean = reference_at(dir.path(), &server.url, &["--verify"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
}

#[test]
fn malformed_sparql_at_the_server_names_the_file_and_leaves_nothing_behind() {
    let dir = work_dir(&[
        ("data.nq", DATA),
        (
            "corpus/broken_x.rq",
            "#+ summary: Broken.\n\nSELECT ?s WHERE {\n  ?s ?p \n",
        ),
    ]);
    let server = start_oxigraph(dir.path());
    let out = okn_in(dir.path())
        .args(["reference", "--corpus", "corpus", "--endpoint"])
        .arg(&server.url)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report = stdout(&out);
    assert!(report.contains("corpus/broken_x.rq:"), "{report}");
    assert!(report.contains("HTTP 400"), "{report}");
    assert!(
        stderr(&out).starts_with("error: 1 answer key failed"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("corpus/ground-truth/broken_x.csv").exists());
    assert!(
        !dir.path()
            .join("corpus/ground-truth/broken_x.json")
            .exists()
    );
}

#[test]
fn unreachable_endpoint_is_a_clear_error() {
    let dir = corpus_dir();
    let closed = crate::support::closed_port();
    let port = closed.port;
    Test::new()
        .current_dir(dir.path())
        .args(["reference", "--corpus", "corpus", "--limit", "1"])
        .arg("--endpoint")
        .arg(format!("http://127.0.0.1:{port}/query"))
        .stdout_contains(format!("cannot reach http://127.0.0.1:{port}/query"))
        .status(2)
        .run();
}

/// Reads one whole HTTP request (headers, then Content-Length bytes of
/// body), so that closing the socket afterwards does not reset it under the
/// client's feet (unread data makes the kernel send RST).
fn read_request(stream: &mut std::net::TcpStream) {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let Ok(n) = stream.read(&mut buf) else { return };
        if n == 0 {
            return;
        }
        data.extend_from_slice(&buf[..n]);
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                return;
            }
        }
    }
}

/// Not a real server: a raw listener that answers every request with `reply`
/// (or, when `reply` is `None`, reads the request and never answers). No
/// real SPARQL server sends malformed results or hangs on demand.
fn fake_server(reply: Option<&'static str>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            read_request(&mut stream);
            match reply {
                Some(body) => {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
                None => {
                    std::thread::sleep(std::time::Duration::from_secs(30));
                }
            }
        }
    });
    format!("http://127.0.0.1:{port}/query")
}

#[test]
fn malformed_results_are_named_as_such() {
    let dir = corpus_dir();
    let url = fake_server(Some(
        "{\"head\": {\"vars\": [\"s\"]}, \"results\": {\"bindings\": [ {\"s\": ",
    ));
    let out = okn_in(dir.path())
        .args([
            "reference",
            "--corpus",
            "corpus",
            "--limit",
            "1",
            "--endpoint",
            &url,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("malformed SPARQL results from"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_redirect_is_reported_with_where_it_points() {
    let dir = corpus_dir();
    let url = fake_server_raw(
        "HTTP/1.1 302 Found\r\nLocation: https://elsewhere.example/sparql\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    Test::new()
        .current_dir(dir.path())
        .args(["reference", "--corpus", "corpus", "--limit", "1"])
        .args(["--endpoint", &url])
        .stdout_contains(format!("HTTP 302 from {url}: it redirects to https://elsewhere.example/sparql; use that URL as the endpoint"))
        .status(2)
        .run();
}

#[test]
fn unusable_urls_and_a_zero_timeout_fail_before_any_record() {
    let dir = corpus_dir();
    for (url, want) in [
        ("http://", "error: endpoint 'http://' is not a usable URL"),
        (
            "http://127.0.0.1:99999/sparql",
            "port '99999' is not a number from 0 to 65535",
        ),
    ] {
        Test::new()
            .current_dir(dir.path())
            .args(["reference", "--corpus", "corpus", "--endpoint", url])
            .stdout("")
            .stderr_contains(want)
            .status(2)
            .run();
    }
    Test::new()
        .current_dir(dir.path())
        .args(["reference", "--corpus", "corpus", "--timeout", "0"])
        .args(["--endpoint", "data.nq"])
        .stdout("")
        .stderr_contains("--timeout")
        .status(2)
        .run();
}

/// Not a real server: answers every request with the raw bytes `response`.
fn fake_server_raw(response: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            read_request(&mut stream);
            let _ = stream.write_all(response.as_bytes());
        }
    });
    format!("http://127.0.0.1:{port}/query")
}

#[test]
fn a_server_that_never_answers_hits_the_timeout() {
    let dir = corpus_dir();
    let url = fake_server(None);
    let started = std::time::Instant::now();
    let out = okn_in(dir.path())
        .args([
            "reference",
            "--corpus",
            "corpus",
            "--limit",
            "1",
            "--timeout",
            "1",
            "--endpoint",
            &url,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("did not answer within the timeout of 1 s"),
        "{}",
        stdout(&out)
    );
    assert!(started.elapsed().as_secs() < 20);
}
