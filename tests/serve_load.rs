//! A loopback load test of `ksim serve`, run by hand (ignored by default: its figures
//! depend on the machine):
//!
//!     cargo test --release --test serve_load -- --ignored --nocapture
//!
//! N students at once (`KSIM_LOAD_SESSIONS`, default 50), each opening the racy
//! Kogge-Stone example and taking `KSIM_LOAD_REQUESTS` (default 60) requests: steps of
//! the threads in turn, a back now and then, a run to the end. Every request must answer
//! 200 (none lost); it prints requests/s, p50/p99 latency and the server's resident memory
//! (VmRSS and its peak VmHWM from /proc), and fails if the peak passes 1 GiB.

mod serve_support;

use serde_json::json;
use serve_support::{racy, request, Server};
use std::time::{Duration, Instant};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        (status.lines())
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[test]
#[ignore]
fn many_students_step_at_once() {
    let sessions = env("KSIM_LOAD_SESSIONS", 50);
    let requests = env("KSIM_LOAD_REQUESTS", 60);
    let server = Server::start(&["--max-sessions", &(sessions + 10).to_string()]);
    let (rss0, _) = memory(server.pid());
    let req = racy().to_string();
    let start = Instant::now();
    let workers: Vec<_> = (0..sessions)
        .map(|w| {
            let addr = server.addr.clone();
            let req = req.clone();
            std::thread::spawn(move || {
                let mut lat = Vec::new();
                let mut timed = |method: &str, path: &str, body: Option<&str>| {
                    let t = Instant::now();
                    let (status, text) = request(&addr, method, path, body);
                    lat.push(t.elapsed());
                    assert_eq!(status, 200, "{method} {path}: {text}");
                    text
                };
                let opened = timed("POST", "/api/sessions", Some(&req));
                let v: serde_json::Value = serde_json::from_str(&opened).unwrap();
                let id = v["id"].as_str().unwrap().to_string();
                for k in 0..requests.saturating_sub(1) {
                    let path = format!("/api/sessions/{id}");
                    match k % 10 {
                        9 => timed("POST", &format!("{path}/back"), None),
                        8 => timed("GET", &path, None),
                        _ if k % 30 == 29 => {
                            timed("POST", &format!("{path}/run"), Some(r#"{"until":"end"}"#))
                        }
                        _ => {
                            // The lowest enabled thread after the student's own offset.
                            let v: serde_json::Value =
                                serde_json::from_str(&timed("GET", &path, None)).unwrap();
                            let enabled: Vec<u64> = (v["threads"].as_array().unwrap().iter())
                                .filter(|t| t["enabled"] == json!(true))
                                .map(|t| t["thread"].as_u64().unwrap())
                                .collect();
                            if enabled.is_empty() {
                                timed("POST", &format!("{path}/back"), None)
                            } else {
                                let t = enabled[(w + k) % enabled.len()];
                                let body = json!({ "thread": t }).to_string();
                                timed("POST", &format!("{path}/step"), Some(&body))
                            }
                        }
                    };
                }
                lat
            })
        })
        .collect();
    let mut lat: Vec<Duration> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("a student's requests all answered 200"))
        .collect();
    let wall = start.elapsed();
    let (rss, hwm) = memory(server.pid());
    lat.sort();
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize];
    println!(
        "{sessions} sessions × {requests} requests: {} requests in {:.2} s, {:.0} requests/s; \
         latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; server RSS {} MiB before, {} MiB \
         after, peak {} MiB",
        lat.len(),
        wall.as_secs_f64(),
        lat.len() as f64 / wall.as_secs_f64(),
        pct(0.5).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        lat.last().unwrap().as_secs_f64() * 1e3,
        rss0 / 1024,
        rss / 1024,
        hwm / 1024,
    );
    assert!(hwm < 1 << 20, "peak RSS {hwm} KiB");
}
