//! JSON Schemas of ksim's JSON outputs (docs/json.md), generated from the result models
//! with `schemars`, so a schema cannot drift from the types that serialise the output.
//! `cargo run --example json_schema` writes them to `docs/schema/`; `tests/json_schema.rs`
//! checks the checked-in files are current and validates real outputs against them.
//!
//! Every `Option` field of a model is always written (as `null` when absent), so the
//! generator makes it required too ([`RequireNullable`]); the few fields that are left out
//! when empty (`#[serde(skip_serializing_if)]`) stay optional.

use crate::explore::model::{ExplorationModel, RaceModel};
use crate::fix::FixReport;
use crate::outcome::{End, RacesReport, RunReport};
use crate::report::{KeySpec, RaceReport};
use crate::trace::{BarrierRecord, StepRecord, WarpRecord};
use crate::verify::scan::ScanJson;
use schemars::gen::{SchemaGenerator, SchemaSettings};
use schemars::schema::{RootSchema, Schema, SchemaObject, SubschemaValidation};
use schemars::visit::{visit_schema_object, Visitor};
use schemars::JsonSchema;

/// The `race` of a race report: a race as `ksim explore --json` lists it (without
/// `schedule` and `report`), and its key.
#[derive(schemars::JsonSchema)]
pub struct ReportRace {
    #[serde(flatten)]
    pub race: RaceModel,
    pub key: KeySpec,
}

/// Hand-written: `RaceView` serialises through [`crate::outcome::RaceJson`].
impl JsonSchema for crate::outcome::RaceView {
    fn schema_name() -> String {
        "Race".into()
    }
    fn json_schema(gen: &mut SchemaGenerator) -> Schema {
        crate::outcome::RaceJson::json_schema(gen)
    }
}

/// Hand-written: `Arrays` serialises as a map from array name to its instances, each the
/// flat row-major list of its elements.
impl JsonSchema for crate::outcome::Arrays {
    fn schema_name() -> String {
        "Arrays".into()
    }
    fn json_schema(gen: &mut SchemaGenerator) -> Schema {
        std::collections::BTreeMap::<String, Vec<Vec<interp::Value>>>::json_schema(gen)
    }
}

/// Hand-written: `ScanReport` serialises through [`ScanJson`].
impl JsonSchema for crate::verify::scan::ScanReport {
    fn schema_name() -> String {
        "ScanReport".into()
    }
    fn json_schema(gen: &mut SchemaGenerator) -> Schema {
        ScanJson::json_schema(gen)
    }
}

/// One record of `ksim trace --format json`: a step (a warp instruction under
/// `--warp-size`), a K-BARRIER application, or the end.
#[allow(dead_code)] // only its schema is used: the records are serialised one by one
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
enum TraceRecord<'a> {
    Step(StepRecord<'a>),
    Warp(WarpRecord<'a>),
    Barrier(BarrierRecord<'a>),
    End(End<'a>),
}

/// Properties the models leave out when empty (`skip_serializing_if` on an `Option`): the
/// only nullable properties that are not required.
const OMITTED_WHEN_EMPTY: &[&str] = &[
    "kernel_path_absolute",
    "kernel_path_from_report",
    "source",
    "launch_hash",
    "warp_size",
    "simt",
    "other_orders",
    "other_schedule",
];

/// Makes every nullable property required (see the module documentation).
#[derive(Clone, Debug)]
struct RequireNullable;

impl Visitor for RequireNullable {
    fn visit_schema_object(&mut self, schema: &mut SchemaObject) {
        if let Some(obj) = schema.object.as_mut() {
            for (name, prop) in &obj.properties {
                if !OMITTED_WHEN_EMPTY.contains(&name.as_str()) && nullable(prop) {
                    obj.required.insert(name.clone());
                }
            }
        }
        visit_schema_object(self, schema)
    }
}

/// Whether `schema` admits `null` (how schemars writes an `Option`).
fn nullable(schema: &Schema) -> bool {
    let Schema::Object(o) = schema else {
        return false;
    };
    let null = schemars::schema::InstanceType::Null;
    o.instance_type.as_ref().is_some_and(|t| t.contains(&null))
        || matches!(&o.subschemas, Some(s) if matches!(&**s, SubschemaValidation { any_of: Some(v), .. } if v.iter().any(nullable)))
}

fn schema_of<T: JsonSchema>() -> RootSchema {
    let settings = SchemaSettings::draft07().with_visitor(RequireNullable);
    settings.into_generator().into_root_schema_for::<T>()
}

/// Every output's schema, by file stem: `run`, `races`, `explore`, `verify-scan`, `fix`,
/// `trace` (one record), `race-report` and `circuit`.
pub fn schemas() -> Vec<(&'static str, RootSchema)> {
    vec![
        ("run", schema_of::<RunReport>()),
        ("races", schema_of::<RacesReport>()),
        ("explore", schema_of::<ExplorationModel>()),
        (
            "verify-scan",
            schema_of::<crate::verify::scan::ScanReport>(),
        ),
        ("fix", schema_of::<FixReport>()),
        ("trace", schema_of::<TraceRecord<'static>>()),
        ("race-report", schema_of::<RaceReport>()),
        ("circuit", schema_of::<interp::circuit::Circuit>()),
    ]
}

/// The pretty JSON text of a schema, as checked in under `docs/schema/`.
pub fn text(schema: &RootSchema) -> String {
    serde_json::to_string_pretty(schema).expect("JSON") + "\n"
}
