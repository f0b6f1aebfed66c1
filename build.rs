//! Records the locked version of the embedded SPARQL engine (`oxigraph`) so
//! ground truth can say which engine produced it.

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let mut version = String::from("unknown");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"oxigraph\"" {
            if let Some(next) = lines.next() {
                if let Some(v) = next.trim().strip_prefix("version = ") {
                    version = v.trim_matches('"').to_string();
                }
            }
            break;
        }
    }
    println!("cargo:rustc-env=OKN_OXIGRAPH_VERSION={version}");
}
