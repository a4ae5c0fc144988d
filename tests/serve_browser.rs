//! `ksim serve`'s page in a real headless chromium, driven over the DevTools protocol
//! (`--remote-debugging-pipe`: JSON messages on file descriptors 3 and 4, no crate
//! needed): the page opens the first example, a mouse click on a thread's button takes
//! its K-STEP and the page shows the rule, the value written and the cell marked; a run to
//! the race marks both racing steps and both racing lines; back goes back; a kernel that
//! does not load shows its diagnostic; at 1024×768 and 1280×720 the threads, the last step
//! and the racing lines are on screen without scrolling.
//!
//! Without chromium the test prints why and passes, unless CI=true or
//! KSIM_REQUIRE_BROWSER=1, where it fails (as tests/teach_html.rs). KSIM_CHROMIUM names
//! another binary.

mod common;
mod serve_support;

use serde_json::{json, Value};
use serve_support::Server;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A headless chromium and one page of it, attached over the DevTools pipe.
struct Browser {
    child: Child,
    to: File,
    from: BufReader<File>,
    next_id: u64,
    session: String,
    _profile: PathBuf,
}

/// A pipe whose ends are closed in children (`dup2` in the child clears that on fds 3, 4).
fn pipe() -> (i32, i32) {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    (fds[0], fds[1])
}

impl Browser {
    fn start(chromium: &PathBuf, url: &str) -> Browser {
        let profile =
            std::env::temp_dir().join(format!("ksim-serve-chromium-{}", std::process::id()));
        let (read3, write3) = pipe();
        let (read4, write4) = pipe();
        let mut cmd = Command::new(chromium);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--remote-debugging-pipe",
            "--window-size=1024,768",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        unsafe {
            cmd.pre_exec(move || {
                // Moved above 4 first: a pipe's end may itself be fd 3 or 4.
                let (r, w) = (
                    libc::fcntl(read3, libc::F_DUPFD, 10),
                    libc::fcntl(write4, libc::F_DUPFD, 10),
                );
                if r < 0 || w < 0 || libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("chromium starts");
        unsafe {
            libc::close(read3);
            libc::close(write4);
        }
        let mut b = Browser {
            child,
            to: unsafe { File::from_raw_fd(write3) },
            from: BufReader::new(unsafe { File::from_raw_fd(read4) }),
            next_id: 0,
            session: String::new(),
            _profile: profile,
        };
        let target = b.call(
            "Target.createTarget",
            json!({ "url": "about:blank" }),
            false,
        );
        let target = target["targetId"].as_str().expect("a target").to_string();
        let attached = b.call(
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
            false,
        );
        b.session = attached["sessionId"]
            .as_str()
            .expect("a session")
            .to_string();
        b.viewport(1024, 768);
        b.call("Page.navigate", json!({ "url": url }), true);
        b
    }

    /// Sends a command (to the page when `page`) and waits for its answer.
    fn call(&mut self, method: &str, params: Value, page: bool) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if page {
            msg["sessionId"] = json!(self.session);
        }
        let mut bytes = msg.to_string().into_bytes();
        bytes.push(0);
        self.to.write_all(&bytes).expect("chromium reads");
        loop {
            let mut buf = Vec::new();
            let n = self.from.read_until(0, &mut buf).expect("chromium answers");
            assert!(n > 0, "chromium closed the pipe");
            buf.pop();
            let v: Value = serde_json::from_slice(&buf).expect("JSON from chromium");
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    fn viewport(&mut self, width: u32, height: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
            true,
        );
    }

    /// The value of a JavaScript expression in the page.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
            true,
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// Waits until `expr` is true in the page.
    fn wait(&mut self, expr: &str) {
        let start = Instant::now();
        while self.eval(expr) != json!(true) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "timed out waiting for `{expr}`; the page says: {}",
                self.eval("document.body.innerText")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn text(&mut self, selector: &str) -> String {
        let v = self.eval(&format!(
            "(document.querySelector({}) || {{}}).textContent",
            json!(selector)
        ));
        v.as_str().unwrap_or_default().to_string()
    }

    /// A mouse click (pressed and released) at the middle of the element.
    fn click(&mut self, selector: &str) {
        let r = self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); e.scrollIntoView({{block: 'nearest'}}); \
             const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            json!(selector)
        ));
        let (x, y) = (r[0].as_f64().unwrap(), r[1].as_f64().unwrap());
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
                true,
            );
        }
    }

    /// Whether every element the selector finds is on screen without scrolling: inside the
    /// window, and what the window shows at its top left and bottom right corners (not
    /// hidden by a panel's scrolling or by another element).
    fn on_screen(&mut self, selector: &str) -> bool {
        self.eval(&format!(
            "(() => {{ const all = [...document.querySelectorAll({})]; \
             const seen = (e, x, y) => {{ const h = document.elementFromPoint(x, y); return !!h && e.contains(h); }}; \
             return all.length > 0 && all.every(e => {{ const r = e.getBoundingClientRect(); \
               return r.width > 0 && r.top >= 0 && r.bottom <= innerHeight && r.right <= innerWidth \
                 && seen(e, r.left + 2, r.top + 2) && seen(e, r.left + 2, r.bottom - 2); }}); }})()",
            json!(selector)
        )) == json!(true)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self._profile);
    }
}

#[test]
fn a_student_clicks_threads_and_reads_the_page() {
    let Some(chromium) = common::chromium() else {
        return;
    };
    let server = Server::start(&[]);
    let mut b = Browser::start(&chromium, &server.url("/"));
    // The page opens the first example: kogge_stone_racy, n = 4, in = 1,2,3,4.
    b.wait("document.querySelectorAll('#threads tbody tr').length === 4");
    assert_eq!(b.text("#step-no"), "initial configuration");
    assert!(b
        .text("#threads tr[data-thread='2'] .next")
        .contains("out[tid]"));

    b.click("button.run[data-thread='2']");
    b.wait("document.querySelector('#step-no').textContent === 'step 0:'");
    assert_eq!(b.text("#rule"), "S-ARRAY");
    assert!(
        b.text("#last-text").contains("out[2]: 0 -> 3"),
        "{}",
        b.text("#last-text")
    );
    assert_eq!(b.text("#arrays td.changed"), "3");
    assert_eq!(b.text("#threads tr[data-thread='2'] .status"), "at barrier");
    assert_eq!(
        b.eval("document.querySelector(\"button.run[data-thread='2']\").disabled"),
        json!(true)
    );

    b.click("button.run[data-thread='0']");
    b.wait("document.querySelector('#step-no').textContent === 'step 1:'");
    b.click("#back");
    b.wait("document.querySelector('#step-no').textContent === 'step 0:'");
    b.click("#forward");
    b.wait("document.querySelector('#step-no').textContent === 'step 1:'");

    b.click("#run-race");
    b.wait("document.querySelectorAll('#races li').length > 0");
    let race = b.text("#races li");
    let steps: Vec<u64> = race
        .split("step ")
        .skip(1)
        .filter_map(|s| s.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .collect();
    assert_eq!(steps.len(), 2, "{race}");
    let marked = b
        .eval("[...document.querySelectorAll('#log li.raced')].map(li => Number(li.dataset.step))");
    assert_eq!(marked, json!(steps), "both racing steps are marked");
    assert!(b.text("#races pre").contains("data race on out["));
    let raced_lines = b.eval("document.querySelectorAll('#listing div.raced').length");
    assert_eq!(raced_lines, json!(2), "both racing statements are marked");
    assert_eq!(
        b.eval("document.querySelectorAll('#arrays td.raced').length > 0"),
        json!(true)
    );

    // One screen at a projector's sizes: the last step, the threads, the racing lines.
    for (w, h) in [(1024, 768), (1280, 720)] {
        b.viewport(w, h);
        for sel in [
            "#rule",
            "#threads tr[data-thread='3']",
            "#arrays",
            "#listing div.raced",
            "#run-race",
            "#back",
        ] {
            assert!(b.on_screen(sel), "{sel} is off screen at {w}×{h}");
        }
    }

    // The race timeline, with the race drawn.
    b.click("#show-timeline");
    b.wait("!!document.querySelector('#timeline svg #race-second')");

    // A kernel that does not load: its diagnostic, in the page.
    b.eval("document.querySelector('#source').value = 'kernel k(local int a[n] { }'");
    b.click("#load");
    b.wait("document.querySelector('#error').textContent.length > 0");
    assert!(
        b.text("#error").contains("kogge_stone_racy.ksim:1:"),
        "{}",
        b.text("#error")
    );
    assert_eq!(
        b.eval("document.querySelector('#source').classList.contains('hidden')"),
        json!(false)
    );
}
