//! The JSON Schemas in `schemas/` are generated from the types that write
//! the files, so they cannot drift: this test regenerates them and fails
//! when a committed schema differs. `OKN_UPDATE_SCHEMAS=1 cargo test --test
//! it schemas` rewrites them. `docs/FORMAT.md` describes each file.

use okn_benchmark::catalog::format::Catalog;
use okn_benchmark::catalog::run::Results as CatalogResults;
use okn_benchmark::layout::{CallsFile, Metrics};
use okn_benchmark::reference::GroundTruthMeta;
use okn_benchmark::reference::verify::VerifiedFile;
use okn_benchmark::runs::records::{ConditionFile, Episode, QuestionResult};
use okn_benchmark::runs::rescore::FrozenFile;
use schemars::{JsonSchema, schema_for};

fn render<T: JsonSchema>() -> String {
    let mut text = serde_json::to_string_pretty(&schema_for!(T)).unwrap();
    text.push('\n');
    text
}

#[test]
fn committed_schemas_match_the_types() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let schemas = [
        ("ground-truth", render::<GroundTruthMeta>()),
        ("calls", render::<CallsFile>()),
        ("metrics", render::<Metrics>()),
        ("episode", render::<Episode>()),
        ("result", render::<QuestionResult>()),
        ("condition", render::<ConditionFile>()),
        ("frozen", render::<FrozenFile>()),
        ("verified", render::<VerifiedFile>()),
        ("catalog", render::<Catalog>()),
        ("catalog-results", render::<CatalogResults>()),
    ];
    let update = std::env::var_os("OKN_UPDATE_SCHEMAS").is_some();
    let mut stale = Vec::new();
    for (name, text) in schemas {
        let path = dir.join(format!("{name}.schema.json"));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(
            schema["properties"]["format"].is_object(),
            "{name} carries a format version"
        );
    }
    assert!(
        stale.is_empty(),
        "stale schemas (run OKN_UPDATE_SCHEMAS=1 cargo test --test it schemas): {stale:?}"
    );
}
