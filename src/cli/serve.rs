//! `ksim serve`: the stepper of `ksim step` as a local web application for the lecture
//! hall. This module is the wiring: the HTTP routes (axum), the bounds on requests and
//! sessions, and the loading of a kernel from the page through the command line's own
//! launch options. The sessions are [`sim::session`]; the page is `serve.html`, embedded.

use super::common::*;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use clap::{Args, Parser};
use interp::Launch;
use serde::Deserialize;
use serde_json::json;
use sim::report::LaunchSpec;
use sim::session::{LaunchRequest, Loaded, Session, Until};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Kernels to offer in the page besides the bundled examples (read once, at start).
    pub files: Vec<PathBuf>,
    /// The TCP port (0: any free port; the address is printed at start).
    #[arg(long, default_value_t = 7878)]
    pub port: u16,
    /// The address to listen on. The default serves this machine only; `0.0.0.0` serves
    /// the network (a lecture hall's students), with no authentication.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub bind: std::net::IpAddr,
    /// The most sessions kept at once (one per open kernel in a browser tab); a new one
    /// beyond it is refused until idle ones expire.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub max_sessions: usize,
    /// Seconds after which an idle session is dropped.
    #[arg(long, default_value_t = 1800, value_name = "SECONDS")]
    pub idle_timeout: u64,
}

/// The largest request body: a kernel's source, a schedule or a race report.
const MAX_BODY: usize = 512 * 1024;
/// The longest a request may compute (loading a kernel, a run, the state graph).
const REQUEST_TIME: Duration = Duration::from_secs(20);
/// Threads that load kernels and take steps; each has a large stack (see below).
const WORKERS: usize = 8;
/// The front ends recurse on expressions (see `STACK_BYTES` in main.rs): each thread gets
/// that stack, committed only as it is used.
const STACK_BYTES: usize = 1 << 30;

const PAGE: &str = include_str!("serve.html");

/// The bundled examples, with a launch whose values move on screen.
const EXAMPLES: &[(&str, &str, &[&str], &[&str])] = &[
    (
        "kogge_stone_racy.ksim",
        include_str!("../../examples/kogge_stone_racy.ksim"),
        &["n=4"],
        &["in=1,2,3,4"],
    ),
    (
        "kogge_stone.ksim",
        include_str!("../../examples/kogge_stone.ksim"),
        &["n=4"],
        &["in=1,2,3,4"],
    ),
    (
        "blelloch.ksim",
        include_str!("../../examples/blelloch.ksim"),
        &["n=4"],
        &["in=1,2,3,4"],
    ),
    (
        "blelloch_missing_barrier.ksim",
        include_str!("../../examples/blelloch_missing_barrier.ksim"),
        &["n=4"],
        &["in=1,2,3,4"],
    ),
    (
        "brent_kung.ksim",
        include_str!("../../examples/brent_kung.ksim"),
        &["n=4"],
        &["in=1,2,3,4"],
    ),
    (
        "sklansky.ksim",
        include_str!("../../examples/sklansky.ksim"),
        &["n=4"],
        &["in=1,2,3,4"],
    ),
    (
        "scan_off_by_one.ksim",
        include_str!("../../examples/scan_off_by_one.ksim"),
        &["n=4"],
        &["in=1,2,3,4"],
    ),
    (
        "sequential_scan.ksim",
        include_str!("../../examples/sequential_scan.ksim"),
        &["n=4"],
        &["in=1,2,3,4"],
    ),
    (
        "left_rotation.ksim",
        include_str!("../../examples/left_rotation.ksim"),
        &["n=4"],
        &["array=1,2,3,4"],
    ),
];

pub fn serve(args: &ServeArgs) -> CmdResult {
    let mut examples = Vec::new();
    for path in &args.files {
        let source = files::read_to_string(path, files::TEXT_LIMIT)
            .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
        let file = (path.file_name())
            .map(|f| f.to_string_lossy().into_owned())
            .ok_or_else(|| Failure::usage(format!("{} is no file", path.display())))?;
        examples.push(LaunchRequest {
            file,
            source,
            ..LaunchRequest::default()
        });
    }
    examples.extend(
        EXAMPLES
            .iter()
            .map(|(file, source, defines, inputs)| LaunchRequest {
                file: file.to_string(),
                source: source.to_string(),
                defines: defines.iter().map(|s| s.to_string()).collect(),
                inputs: inputs.iter().map(|s| s.to_string()).collect(),
                ..LaunchRequest::default()
            }),
    );
    let app = Arc::new(App {
        sessions: Mutex::new(HashMap::new()),
        examples,
        max_sessions: args.max_sessions.max(1),
        idle: Duration::from_secs(args.idle_timeout.max(1)),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(WORKERS)
        .thread_stack_size(STACK_BYTES)
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("cannot start the server: {e}")))?;
    runtime.block_on(async move {
        let addr = std::net::SocketAddr::new(args.bind, args.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| Failure::usage(e.to_string()))?;
        println!("ksim serve: http://{local}/ (Ctrl-C stops)");
        tokio::spawn(expire(app.clone()));
        axum::serve(listener, router(app))
            .await
            .map_err(|e| Failure::usage(format!("the server stopped: {e}")))?;
        Ok(EXIT_OK)
    })
}

fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(|| async { Html(PAGE) }))
        .route("/api/examples", get(examples))
        .route("/api/sessions", post(create))
        .route("/api/open", post(open))
        .route("/api/sessions/{id}", get(view))
        .route("/api/sessions/{id}/step", post(step))
        .route("/api/sessions/{id}/run", post(run))
        .route("/api/sessions/{id}/back", post(back))
        .route("/api/sessions/{id}/forward", post(forward))
        .route("/api/sessions/{id}/schedule", get(schedule))
        .route("/api/sessions/{id}/report/{race}", get(report))
        .route("/api/sessions/{id}/graph", get(graph))
        .route("/api/sessions/{id}/timeline", get(timeline))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(app)
}

/// The sessions and what the page offers.
struct App {
    sessions: Mutex<HashMap<String, Arc<Mutex<Entry>>>>,
    examples: Vec<LaunchRequest>,
    max_sessions: usize,
    idle: Duration,
}

struct Entry {
    session: Session,
    used: Instant,
}

impl App {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Mutex<Entry>>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, id: &str) -> Result<Arc<Mutex<Entry>>, ApiError> {
        self.sessions().get(id).cloned().ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!(
                    "no session `{id}`: it was idle for more than {} s, or the server \
                     restarted; open the kernel again",
                    self.idle.as_secs()
                ),
            )
        })
    }

    /// Keeps a new session; refused when [`App::max_sessions`] are kept.
    fn insert(&self, session: Session) -> Result<String, ApiError> {
        let mut sessions = self.sessions();
        if sessions.len() >= self.max_sessions {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the server keeps {} sessions, the most it keeps (--max-sessions); \
                     try again when idle ones have expired",
                    self.max_sessions
                ),
            ));
        }
        let id = loop {
            let id = format!("{:016x}", rand::random::<u64>());
            if !sessions.contains_key(&id) {
                break id;
            }
        };
        let entry = Entry {
            session,
            used: Instant::now(),
        };
        sessions.insert(id.clone(), Arc::new(Mutex::new(entry)));
        Ok(id)
    }
}

/// Drops idle sessions, every few seconds.
async fn expire(app: Arc<App>) {
    let every = (app.idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(30));
    loop {
        tokio::time::sleep(every).await;
        let now = Instant::now();
        app.sessions().retain(|_, e| match e.try_lock() {
            Ok(e) => now.duration_since(e.used) < app.idle,
            Err(_) => true, // in use
        });
    }
}

/// An error as the page shows it: `{"error": message, "line": N}` (the line of a kernel's
/// diagnostic, when it has one).
struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({ "error": self.message, "line": diagnostic_line(&self.message) })),
        )
            .into_response()
    }
}

/// The line of the first `file:line:col` a diagnostic names.
fn diagnostic_line(message: &str) -> Option<usize> {
    message.split(['[', ' ', '\n']).find_map(|word| {
        let mut parts = word.trim_end_matches(']').rsplitn(3, ':');
        let col = parts.next()?;
        let line = parts.next()?;
        parts.next()?;
        col.parse::<usize>().ok()?;
        line.parse().ok()
    })
}

/// Runs `f` on a worker thread, bounded by [`REQUEST_TIME`].
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    match tokio::time::timeout(REQUEST_TIME, tokio::task::spawn_blocking(f)).await {
        Err(_) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the request took longer than {} s", REQUEST_TIME.as_secs()),
        )),
        Ok(Err(_)) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error in ksim (a bug): the server's log has the details",
        )),
        Ok(Ok(r)) => r,
    }
}

/// Runs `f` on session `id`, on a worker thread.
async fn with_session<T: Send + 'static>(
    app: &App,
    id: &str,
    f: impl FnOnce(&mut Session) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let entry = app.get(id)?;
    blocking(move || {
        let mut e = entry.lock().unwrap_or_else(|e| e.into_inner());
        e.used = Instant::now();
        f(&mut e.session)
    })
    .await
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::bad(format!("invalid request: {e}")))
}

type ApiResult = Result<Response, ApiError>;

async fn examples(State(app): State<Arc<App>>) -> Json<Vec<LaunchRequest>> {
    Json(app.examples.clone())
}

fn opened(id: String, session: &Session) -> Response {
    Json(json!({ "id": id, "view": session.view() })).into_response()
}

async fn create(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    let req: LaunchRequest = parse(&body)?;
    let session = blocking(move || start(&req)).await?;
    let view = session.view();
    let id = app.insert(session)?;
    Ok(Json(json!({ "id": id, "view": view })).into_response())
}

fn start(req: &LaunchRequest) -> Result<Session, ApiError> {
    Session::new(load(req)?).map_err(ApiError::bad)
}

#[derive(Deserialize)]
struct OpenRequest {
    /// The session a schedule is replayed in (a race report opens a new one).
    session: Option<String>,
    text: String,
}

/// Opens a file saved from the page: a race report (a new session at its race) or a
/// schedule (replayed in the session named).
async fn open(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    let req: OpenRequest = parse(&body)?;
    if let Ok(rep) = sim::RaceReport::parse(&req.text) {
        let session = blocking(move || {
            let mut s = start(&LaunchRequest::of_report(&rep).map_err(ApiError::bad)?)?;
            s.replay(&rep.schedule).map_err(ApiError::bad)?;
            Ok(s)
        })
        .await?;
        let id = app.insert(session)?;
        let entry = app.get(&id)?;
        let e = entry.lock().unwrap_or_else(|e| e.into_inner());
        return Ok(opened(id, &e.session));
    }
    let doc: serde_json::Value = serde_json::from_str(&req.text).map_err(|e| {
        ApiError::bad(format!(
            "neither a race report nor a schedule (not JSON: {e})"
        ))
    })?;
    let obj = doc.get("schedule").cloned().unwrap_or(doc);
    let schedule: interp::exec::Schedule = serde_json::from_value(obj).map_err(|e| {
        ApiError::bad(format!(
            "neither a race report nor a schedule ({{\"runs\": [[thread, count], ...]}}): {e}"
        ))
    })?;
    let id = req
        .session
        .ok_or_else(|| ApiError::bad("a schedule is replayed in an open kernel: open one first"))?;
    with_session(&app, &id.clone(), move |s| {
        s.replay(&schedule).map_err(ApiError::bad)?;
        Ok(opened(id, s))
    })
    .await
}

async fn view(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult {
    with_session(&app, &id, |s| Ok(Json(s.view()).into_response())).await
}

#[derive(Deserialize)]
struct StepRequest {
    thread: usize,
}

async fn step(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>, body: Bytes) -> ApiResult {
    let req: StepRequest = parse(&body)?;
    with_session(&app, &id, move |s| {
        s.step(req.thread)
            .map_err(|e| ApiError::new(StatusCode::CONFLICT, e))?;
        Ok(Json(s.view()).into_response())
    })
    .await
}

#[derive(Deserialize)]
struct RunRequest {
    until: Until,
}

async fn run(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>, body: Bytes) -> ApiResult {
    let req: RunRequest = parse(&body)?;
    with_session(&app, &id, move |s| {
        s.run(req.until)
            .map_err(|e| ApiError::new(StatusCode::CONFLICT, e))?;
        Ok(Json(s.view()).into_response())
    })
    .await
}

async fn back(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult {
    with_session(&app, &id, |s| {
        if !s.back() {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "already at the initial configuration",
            ));
        }
        Ok(Json(s.view()).into_response())
    })
    .await
}

async fn forward(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult {
    with_session(&app, &id, |s| {
        match s.forward() {
            Ok(true) => {}
            Ok(false) => {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    "no step to go forward to: go back first",
                ))
            }
            Err(e) => return Err(ApiError::new(StatusCode::CONFLICT, e)),
        }
        Ok(Json(s.view()).into_response())
    })
    .await
}

/// A file download.
fn download(name: &str, content_type: &'static str, body: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        body,
    )
        .into_response()
}

async fn schedule(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult {
    with_session(&app, &id, |s| {
        Ok(download(
            "schedule.json",
            "application/json",
            s.schedule_json(),
        ))
    })
    .await
}

async fn report(
    State(app): State<Arc<App>>,
    UrlPath((id, race)): UrlPath<(String, usize)>,
) -> ApiResult {
    with_session(&app, &id, move |s| {
        let (name, text) = s
            .report(race)
            .map_err(|e| ApiError::new(StatusCode::NOT_FOUND, e))?;
        Ok(download(&name, "application/json", text))
    })
    .await
}

fn svg(body: String) -> Response {
    ([(header::CONTENT_TYPE, "image/svg+xml")], body).into_response()
}

async fn graph(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult {
    with_session(&app, &id, |s| s.graph().map(svg).map_err(ApiError::bad)).await
}

async fn timeline(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult {
    with_session(&app, &id, |s| s.timeline().map(svg).map_err(ApiError::bad)).await
}

/// The launch options of a kernel opened in the page: the command line's, parsed by clap
/// from the page's fields, so that they mean what they mean there.
#[derive(Parser, Debug)]
#[command(no_binary_name = true, name = "the launch")]
struct PageLaunch {
    #[command(flatten)]
    launch: LaunchArgs,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// The kernel a page sent, and nothing else: `ksim serve` reads no file for a student
/// (no `#include`, no `@FILE` input).
struct PageFiles<'a> {
    file: &'a Path,
    text: &'a str,
}

impl sim::replay::Files for PageFiles<'_> {
    fn read(&self, path: &Path) -> Result<String, String> {
        if path == self.file {
            Ok(self.text.to_string())
        } else {
            Err(format!(
                "`ksim serve` reads no file but the kernel's own text: `{}` cannot be read \
                 (paste what it holds into the kernel)",
                path.display()
            ))
        }
    }
}

/// Loads the kernel a page sent and binds its launch.
fn load(req: &LaunchRequest) -> Result<Loaded, ApiError> {
    let name = Path::new(&req.file);
    let plain = name.components().count() == 1
        && !req.file.starts_with(['-', '.'])
        && name.extension().is_some();
    if !plain {
        return Err(ApiError::bad(format!(
            "`{}` is not a file name such as `kernel.ksim` (its extension says the language: \
             .ksim, .cl, .cu or .pvl)",
            req.file
        )));
    }
    if let Some(i) = req.inputs.iter().find(|i| i.contains('@')) {
        return Err(ApiError::bad(format!(
            "--input {i}: `ksim serve` reads no file; give the values (`1,2,3`, `iota`, ...)"
        )));
    }
    let mut argv = vec![req.file.clone()];
    let mut opt = |flag: &str, values: &[String]| {
        argv.extend(values.iter().map(|v| format!("{flag}={v}")));
    };
    opt("-D", &req.defines);
    opt("--input", &req.inputs);
    opt("--arg", &req.args);
    for (flag, v) in [
        ("--groups", &req.groups),
        ("--local-size", &req.local_size),
        ("--global", &req.global),
        ("--local", &req.local),
        ("--kernel", &req.kernel),
    ] {
        if let Some(v) = v.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
            argv.push(format!("{flag}={v}"));
        }
    }
    let args = PageLaunch::try_parse_from(&argv).map_err(|e| {
        let text = e.render().to_string();
        let first = text.split("\n\nUsage").next().unwrap_or(&text);
        ApiError::bad(first.trim().to_string())
    })?;
    let files = PageFiles {
        file: &args.launch.file,
        text: &req.source,
    };
    let (src, kernel, opts, _) =
        (args.launch.load_with(&files)).map_err(|f| ApiError::bad(strip_colour(&f.message)))?;
    let mut launch = Launch::new(kernel, &opts).map_err(|e| ApiError::bad(e.0))?;
    args.policy.apply(&mut launch);
    let recorded = args.launch.recorded(&src);
    let mut spec = LaunchSpec::from_options(&opts, launch.max_steps, launch.race_policy);
    spec.atomicity = launch.atomicity;
    spec.warp_size = launch.warp_size;
    spec.continue_after_faults = false;
    Ok(Loaded {
        source: sim::session::Source {
            path: src.path,
            text: src.text,
            includes: src.includes,
        },
        launch,
        recorded,
        spec,
    })
}

/// A diagnostic without the terminal's colour codes (the server's standard error may be a
/// terminal; the page is not).
fn strip_colour(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters final-byte
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
