//! The adapter as a child process speaking JSON lines: one request at a time on its stdin,
//! its replies read from stdout by a thread, the last few KB of its stderr kept by another.
//!
//! Never hangs: every request has a deadline; a timeout, a malformed reply or the process's
//! exit kill it, and every later request fails at once with the first failure's message.
//! The child is killed when the [`AdapterProcess`] is dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::protocol::{parse_reply, reply_id, request_line, Op, Payload, Timeouts};

/// How much of the adapter's stderr is kept for error messages.
pub const STDERR_TAIL_BYTES: usize = 4096;
/// The longest reply line read (a longer one is a malformed reply).
const MAX_LINE_BYTES: u64 = 16 << 20;

/// Why a request got no usable reply.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestError {
    /// The adapter answered `ok: false`: counted; the adapter stays in use.
    Refused(String),
    /// Timeout, malformed reply, exit: counted; the adapter is killed and every later
    /// request fails at once.
    Broken(String),
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::Refused(m) | RequestError::Broken(m) => f.write_str(m),
        }
    }
}

/// The last [`STDERR_TAIL_BYTES`] of a stream.
#[derive(Default)]
struct Tail(VecDeque<u8>);

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend(bytes);
        let over = self.0.len().saturating_sub(STDERR_TAIL_BYTES);
        self.0.drain(..over);
    }
    fn text(&self) -> String {
        let (a, b) = self.0.as_slices();
        String::from_utf8_lossy(&[a, b].concat()).trim().to_string()
    }
}

/// A running adapter.
pub struct AdapterProcess {
    /// The command line as given (for messages).
    command: String,
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<Result<String, String>>,
    stderr: Arc<Mutex<Tail>>,
    timeouts: Timeouts,
    next_id: u64,
    broken: Option<String>,
}

impl AdapterProcess {
    /// Start `argv` (no shell) with `env` added to the environment.
    pub fn spawn(
        command: &str,
        argv: &[String],
        env: &[(String, String)],
        timeouts: Timeouts,
    ) -> anyhow::Result<Self> {
        let (prog, args) = argv
            .split_first()
            .ok_or_else(|| anyhow::anyhow!("--adapter: empty command"))?;
        let mut cmd = Command::new(prog);
        cmd.args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // its own process group: stopping the adapter stops what it started too
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .spawn()
            .map_err(|e| anyhow::anyhow!("--adapter {command:?}: cannot start {prog:?}: {e}"))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || read_lines(stdout, tx));
        let stderr = Arc::new(Mutex::new(Tail::default()));
        let tail = stderr.clone();
        std::thread::spawn(move || read_tail(stderr_pipe, tail));
        Ok(Self {
            command: command.to_string(),
            stdin: child.stdin.take(),
            child,
            replies,
            stderr,
            timeouts,
            next_id: 1,
            broken: None,
        })
    }

    /// The adapter's stderr tail (the last few KB), trimmed.
    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).text()
    }

    /// Send `op` and wait for its reply (at most the op kind's timeout).
    pub fn request(&mut self, op: &Op) -> Result<Payload, RequestError> {
        if let Some(first) = &self.broken {
            return Err(RequestError::Broken(format!(
                "adapter {:?} is not usable after an earlier failure: {first}",
                self.command
            )));
        }
        let id = self.next_id;
        self.next_id += 1;
        match self.exchange(id, op) {
            Ok(Ok(p)) => Ok(p),
            Ok(Err(refused)) => Err(RequestError::Refused(format!(
                "adapter {:?} refused {} ({}): {refused}",
                self.command,
                op.kind().name(),
                id
            ))),
            Err(why) => {
                let msg = self.failure(op, id, &why);
                self.broken = Some(msg.clone());
                self.kill();
                Err(RequestError::Broken(msg))
            }
        }
    }

    /// Write the request and read its reply; the outer error breaks the adapter.
    fn exchange(&mut self, id: u64, op: &Op) -> Result<Result<Payload, String>, String> {
        let mut line = request_line(id, op);
        line.push('\n');
        let stdin = self.stdin.as_mut().ok_or("its stdin is closed")?;
        if let Err(e) = stdin.write_all(line.as_bytes()).and_then(|_| stdin.flush()) {
            return Err(self.exit_reason(&format!("writing the request failed ({e})")));
        }
        let timeout = self.timeouts.of(op.kind());
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.replies.recv_timeout(left) {
                Ok(Ok(text)) => {
                    if text.trim().is_empty() {
                        continue;
                    }
                    if reply_id(&text).is_some_and(|r| r < id) {
                        continue; // a late reply to an earlier request
                    }
                    let reply = parse_reply(&text, op.kind())?;
                    if reply.id > id {
                        return Err(format!("reply id {} to request {id}", reply.id));
                    }
                    return Ok(reply.result);
                }
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "no reply within {:.1} s (the {} timeout; raise it with --adapter-timeout {}=SECONDS)",
                        timeout.as_secs_f64(),
                        op.kind().name(),
                        op.kind().name()
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.exit_reason("its stdout closed"))
                }
            }
        }
    }

    /// "the adapter exited with ..." when it did (waiting a moment for it), else `what`.
    fn exit_reason(&mut self, what: &str) -> String {
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            if let Ok(Some(status)) = self.child.try_wait() {
                return format!("the adapter exited ({status})");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        what.to_string()
    }

    /// The message of a failed request, naming the adapter and its stderr tail.
    fn failure(&self, op: &Op, id: u64, why: &str) -> String {
        // the stderr thread may still be reading what the adapter wrote before exiting
        std::thread::sleep(Duration::from_millis(50));
        let tail = self.stderr_tail();
        let tail = if tail.is_empty() {
            "(stderr empty)".to_string()
        } else {
            format!("stderr tail:\n{tail}")
        };
        format!(
            "adapter {:?}: {} (request {id}) failed: {why}; {tail}",
            self.command,
            op.kind().name()
        )
    }

    fn kill(&mut self) {
        self.stdin = None;
        self.kill_group();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGKILL to the adapter's process group (its own, see [`AdapterProcess::spawn`]): the
    /// processes it started go with it (issue 46: a `sleep 600` it spawned outlived memskill).
    /// A descendant that left the group (`setsid`, its own session) is found in `/proc` while
    /// its parents still live, killed by its pid and reported; one whose parent had already
    /// exited was handed to init and cannot be told apart from any other process.
    fn kill_group(&self) {
        #[cfg(unix)]
        if let Ok(pgid) = i32::try_from(self.child.id()) {
            let escaped: Vec<i32> = descendants(pgid)
                .into_iter()
                .filter(|&(_, group)| group != pgid)
                .map(|(pid, _)| pid)
                .collect();
            // SAFETY: kill(2) with a negative pid signals that process group, with a positive
            // pid one process; no memory is touched
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
                for &pid in &escaped {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            if !escaped.is_empty() {
                eprintln!(
                    "warning: adapter {:?}: killed {} process(es) it started outside its process group (own session; pids {escaped:?})",
                    self.command,
                    escaped.len()
                );
            }
        }
    }

    /// Send `close`, then wait (the close timeout) for the adapter to exit; kill it if not.
    pub fn close(mut self) -> Result<(), RequestError> {
        let r = self.request(&Op::Close).map(|_| ());
        self.stdin = None;
        let until = Instant::now() + self.timeouts.close;
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return r;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        r
    }
}

/// Every descendant of `root` as (pid, process group), from `/proc/<pid>/stat` (empty where
/// there is no `/proc`).
fn descendants(root: i32) -> Vec<(i32, i32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    // (pid, ppid, pgrp) of every process
    let all: Vec<(i32, i32, i32)> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // after the command name (which may hold spaces and parentheses): state ppid pgrp
            let rest: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            Some((pid, rest.get(1)?.parse().ok()?, rest.get(2)?.parse().ok()?))
        })
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid, pgrp) in &all {
            if ppid == parent && !out.iter().any(|&(p, _)| p == pid) {
                out.push((pid, pgrp));
                frontier.push(pid);
            }
        }
    }
    out
}

impl Drop for AdapterProcess {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            // the adapter exited (after `close`); what it left running in its group goes too
            self.kill_group();
        } else {
            self.kill();
        }
    }
}

/// Send each stdout line (bounded) until EOF; a read error or an over-long line is sent as
/// an error and ends the reading.
fn read_lines(stdout: impl Read, tx: mpsc::Sender<Result<String, String>>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut buf = Vec::new();
        match reader
            .by_ref()
            .take(MAX_LINE_BYTES)
            .read_until(b'\n', &mut buf)
        {
            Ok(0) => return,
            Ok(n) if n as u64 == MAX_LINE_BYTES && !buf.ends_with(b"\n") => {
                let _ = tx.send(Err(format!(
                    "a reply line longer than {MAX_LINE_BYTES} bytes"
                )));
                return;
            }
            Ok(_) => {
                let text = String::from_utf8_lossy(&buf).into_owned();
                if tx.send(Ok(text)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Err(format!("reading its stdout failed: {e}")));
                return;
            }
        }
    }
}

/// Keep the last bytes of the adapter's stderr until EOF.
fn read_tail(mut stderr: impl Read, tail: Arc<Mutex<Tail>>) {
    let mut buf = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut buf) {
        if n == 0 {
            return;
        }
        tail.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a process with this pid is alive (not a zombie).
    #[cfg(unix)]
    fn alive(pid: i32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // the state letter follows the command name in parentheses
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .chars()
            .next();
        !stat.is_empty() && state != Some('Z')
    }

    /// A process the adapter started is stopped with it (issue 46, case 7).
    #[cfg(target_os = "linux")]
    #[test]
    fn what_the_adapter_started_is_stopped_with_it() {
        let d = tempfile::tempdir().unwrap();
        let pidfile = d.path().join("pid");
        // one child in the adapter's group, one in a session of its own (setsid)
        let script = format!(
            "sleep 600 & echo $! > {p}; setsid sleep 601 & echo $! >> {p}; exec sleep 600",
            p = pidfile.display()
        );
        let argv = vec!["sh".to_string(), "-c".to_string(), script];
        let p = AdapterProcess::spawn("test", &argv, &[], Timeouts::default()).unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        let pids: Vec<i32> = loop {
            let got: Vec<i32> = std::fs::read_to_string(&pidfile)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
            if got.len() == 2 {
                break got;
            }
            assert!(
                Instant::now() < until,
                "the adapter did not start its child"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(pids.iter().all(|&p| alive(p)));
        drop(p);
        let until = Instant::now() + Duration::from_secs(5);
        for pid in pids {
            while alive(pid) {
                assert!(
                    Instant::now() < until,
                    "the adapter's child {pid} outlived it"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    #[test]
    fn the_tail_keeps_the_last_bytes() {
        let mut t = Tail::default();
        t.push(&vec![b'a'; STDERR_TAIL_BYTES]);
        t.push(b"the end");
        let s = t.text();
        assert_eq!(s.len(), STDERR_TAIL_BYTES);
        assert!(s.ends_with("the end"));
    }

    fn sh(script: &str, timeouts: Timeouts) -> AdapterProcess {
        let argv = vec!["sh".to_string(), "-c".to_string(), script.to_string()];
        AdapterProcess::spawn("test-adapter", &argv, &[], timeouts).unwrap()
    }

    #[test]
    fn an_exited_adapter_fails_this_and_every_later_request_at_once() {
        let mut a = sh("echo dying words >&2; exit 3", Timeouts::default());
        let t0 = Instant::now();
        let e = a.request(&Op::Build).unwrap_err();
        assert!(matches!(e, RequestError::Broken(_)));
        let m = e.to_string();
        assert!(m.contains("exited") && m.contains("dying words"), "{m}");
        let e2 = a.request(&Op::Build).unwrap_err().to_string();
        assert!(e2.contains("earlier failure"), "{e2}");
        assert!(t0.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_silent_adapter_times_out_and_is_killed() {
        let t = Timeouts::default()
            .with_settings(&["all=0.3".into()])
            .unwrap();
        let mut a = sh("sleep 30", t);
        let e = a.request(&Op::Build).unwrap_err().to_string();
        assert!(e.contains("no reply within 0.3 s"), "{e}");
        assert!(matches!(a.child.try_wait(), Ok(Some(_))), "killed");
    }

    #[test]
    fn replies_are_matched_by_id_and_refusals_keep_the_adapter() {
        let script = r#"read l; echo '{"id":1,"ok":false,"error":"no"}'
read l; echo '{"id":1,"ok":true}'; echo '{"id":2,"ok":true,"memories":["m"]}'
read l; echo 'garbage'"#;
        let mut a = sh(script, Timeouts::default());
        let e = a.request(&Op::Build).unwrap_err();
        assert!(
            matches!(&e, RequestError::Refused(m) if m.contains("no")),
            "{e}"
        );
        let op = Op::Retrieve {
            query_id: "q".into(),
            question: "?".into(),
            date: None,
            k: 3,
        };
        assert_eq!(a.request(&op), Ok(Payload::Memories(vec!["m".into()])));
        let e = a.request(&Op::Build).unwrap_err().to_string();
        assert!(e.contains("malformed reply"), "{e}");
    }
}
