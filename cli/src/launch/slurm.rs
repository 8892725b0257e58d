//! The `sbatch` array script of a launch, as a pure function of the launch: one array task
//! per [`Task`](super::plan::Task), each training (or resuming) its own run. No I/O.
//!
//! What the script does for its task (the text is bash):
//! - traps SIGUSR1, SIGTERM and SIGINT and forwards the signal to `memskill train`, which
//!   stops after the update in progress with a checkpoint and exits 75 (`--second-signal
//!   ignore`: Slurm often signals the script and memskill both, and sends SIGKILL itself when
//!   its grace ends);
//! - on exit status 75 asks Slurm to requeue the task (`scontrol requeue JOB_TASK`) while the
//!   job is still RUNNING (a signal that is only a signal: `--signal=B:USR1@<grace>` before
//!   the time limit, `scancel --signal`); a job Slurm is already ending (a cancel, a requeue,
//!   a preemption, a time limit: state COMPLETING) is left to Slurm, so a cancel stays a
//!   cancel;
//! - runs `memskill train --resume` when the run already has a checkpoint, else the fresh
//!   command; a task already done exits at once;
//! - with `--serve`, starts the server in a session of its own first, waits until its health
//!   URL answers (failing early when it exits or the wait times out) and stops it at exit;
//! - records its state (`done`, `stopped`, `failed`) in `<launch dir>/tasks/<id>.json`,
//!   written atomically (temp file + rename), for `memskill launch slurm --resume`.

use std::fmt::Write as _;
use std::path::Path;

use super::plan::shell_word;

/// `#SBATCH` resources and options of a launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    pub partition: Option<String>,
    pub account: Option<String>,
    pub gpus: Option<u32>,
    pub cpus: Option<u32>,
    pub mem: Option<String>,
    pub time: Option<String>,
    /// Seconds before the time limit Slurm sends SIGUSR1 to the script (`--signal=B:USR1@N`).
    pub signal_grace: u32,
    /// At most this many tasks at once (`--array=0-N%M`).
    pub max_parallel: Option<usize>,
    /// Further `#SBATCH` options, each one argument (`--qos=high`).
    pub extra: Vec<String>,
}

/// A server each task starts before it trains (`--serve`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Serve {
    /// The command, run by `bash -c` in a session of its own.
    pub command: String,
    /// The URL that answers 2xx once the server is ready.
    pub health_url: String,
    /// How long to wait for it, in seconds.
    pub timeout_secs: u64,
}

/// One task's line in the script: its id, run name and fresh `train` arguments.
pub struct TaskLine<'a> {
    pub task: usize,
    pub run_name: &'a str,
    pub fresh: &'a [String],
}

/// Everything the script is made from.
pub struct Script<'a> {
    pub name: &'a str,
    pub launch_dir: &'a Path,
    /// The working folder of every task (`--chdir`): where the launch was made, so relative
    /// paths in the config mean the same.
    pub workdir: &'a Path,
    pub runs_dir: &'a Path,
    pub memskill: &'a Path,
    pub tasks: &'a [TaskLine<'a>],
    pub resources: &'a Resources,
    pub serve: Option<&'a Serve>,
    /// The array ids to run (`--array=...`).
    pub array: &'a str,
}

/// `s` as one argument of an `#SBATCH` line: unchanged when plain, else double-quoted with
/// `\`, `"` and `#` escaped (sbatch reads quotes and backslashes there, and an unescaped `#`
/// starts a comment).
pub fn sbatch_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,%[]".contains(c));
    if plain {
        return s.to_string();
    }
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '\\' | '"' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The `--array` value of `ids` (sorted, unique): ranges where ids run on (`0-4,7,9-10`),
/// then `%M` when at most M may run at once.
pub fn array_spec(ids: &[usize], max_parallel: Option<usize>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            ids[i].to_string()
        } else {
            format!("{}-{}", ids[i], ids[j])
        });
        i = j + 1;
    }
    let mut s = parts.join(",");
    if let Some(m) = max_parallel {
        let _ = write!(s, "%{m}");
    }
    s
}

/// The `#SBATCH` lines.
fn header(s: &Script) -> String {
    let r = s.resources;
    let mut opts: Vec<String> = vec![
        format!("--job-name=memskill-{}", s.name),
        format!("--array={}", s.array),
        format!(
            "--output={}",
            s.launch_dir.join("logs").join("%A_%a.out").display()
        ),
        "--open-mode=append".into(),
        "--requeue".into(),
        format!("--signal=B:USR1@{}", r.signal_grace),
        format!("--chdir={}", s.workdir.display()),
    ];
    let optional = [
        ("partition", r.partition.clone()),
        ("account", r.account.clone()),
        ("gpus", r.gpus.map(|g| g.to_string())),
        ("cpus-per-task", r.cpus.map(|c| c.to_string())),
        ("mem", r.mem.clone()),
        ("time", r.time.clone()),
    ];
    for (k, v) in optional {
        if let Some(v) = v {
            opts.push(format!("--{k}={v}"));
        }
    }
    opts.extend(r.extra.iter().cloned());
    opts.iter()
        .map(|o| format!("#SBATCH {}\n", sbatch_word(o)))
        .collect()
}

/// The variables and the task table.
fn task_table(s: &Script) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "memskill={}",
        shell_word(&s.memskill.display().to_string())
    );
    let _ = writeln!(
        t,
        "launch_dir={}",
        shell_word(&s.launch_dir.display().to_string())
    );
    let _ = writeln!(
        t,
        "runs_dir={}",
        shell_word(&s.runs_dir.display().to_string())
    );
    t.push_str(
        "task=\"${SLURM_ARRAY_TASK_ID:?run this script with sbatch (an array task), or set SLURM_ARRAY_TASK_ID}\"\n\
         case \"$task\" in\n",
    );
    for l in s.tasks {
        let fresh: Vec<String> = l.fresh.iter().map(|a| shell_word(a)).collect();
        let _ = writeln!(
            t,
            "  {}) run={}; fresh=({}) ;;",
            l.task,
            shell_word(l.run_name),
            fresh.join(" ")
        );
    }
    t.push_str(
        "  *) echo \"memskill launch: this script has no task $task\" >&2; exit 2 ;;\nesac\n",
    );
    t
}

/// The functions every task uses: logging, the state file, the signal forwarding, the
/// requeue.
const FUNCTIONS: &str = r#"job="${SLURM_ARRAY_JOB_ID:-local}_$task"
say() { echo "[memskill launch $(date -u +%FT%TZ) task $task] $*" >&2; }
# the task's state for `memskill launch slurm --resume`, written atomically
status() {
  local f="$launch_dir/tasks/$task.json"
  printf '{"task":%s,"state":"%s","exit_code":%s,"slurm_job":"%s","at":"%s"}\n' \
    "$task" "$1" "$2" "$job" "$(date -u +%FT%TZ)" >"$f.tmp.$$" && mv -f "$f.tmp.$$" "$f"
}
stop=""; child=""; interrupted=0; serve_pid=""
forward() {
  stop="$1"; interrupted=1
  say "got SIG$1"
  if [ -n "$child" ]; then kill -s "$1" "$child" 2>/dev/null || true; fi
}
trap 'forward USR1' USR1
trap 'forward TERM' TERM
trap 'forward INT' INT
cleanup() { if [ -n "$serve_pid" ]; then kill -TERM -- "-$serve_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT
# stopped at a checkpoint (status $1): requeue while the job runs; a job Slurm is ending
# (cancel, requeue, preemption, time limit) is Slurm's to requeue or not
requeue() {
  status stopped "$1"
  if [ -z "${SLURM_JOB_ID:-}" ]; then
    say "stopped (status $1); not under Slurm: run this task again to continue"; exit 75
  fi
  local state
  state="$(scontrol show job -o "$SLURM_JOB_ID" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n 1)"
  state="${state#JobState=}"
  if [ "$state" != RUNNING ]; then
    say "stopped (status $1) while Slurm ends the job (state ${state:-unknown}): a requeue or preemption requeues it, a cancel or time limit does not (memskill launch slurm --resume submits it again)"
    exit 75
  fi
  if scontrol requeue "$job"; then
    say "stopped at a checkpoint; requeued $job"; exit 0
  fi
  say "stopped at a checkpoint; scontrol requeue $job failed (memskill launch slurm --resume submits it again)"
  exit 75
}
if grep -q '"state":"done"' "$launch_dir/tasks/$task.json" 2>/dev/null; then
  say "already done: $runs_dir/$run"; exit 0
fi
"#;

/// The server start and health wait (`--serve`).
fn serve_block(v: &Serve) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "serve_cmd={}", shell_word(&v.command));
    let _ = writeln!(t, "health={}", shell_word(&v.health_url));
    let _ = writeln!(t, "serve_timeout={}", v.timeout_secs);
    t.push_str(
        r#"healthy() {
  if command -v curl >/dev/null 2>&1; then curl -fsS -o /dev/null --max-time 5 "$health" 2>/dev/null
  else python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' "$health" >/dev/null 2>&1
  fi
}
serve_log="$launch_dir/logs/serve-$job.log"
say "starting the server: $serve_cmd (log $serve_log)"
setsid bash -c "$serve_cmd" >>"$serve_log" 2>&1 &
serve_pid=$!
waited=0
until healthy; do
  if [ -n "$stop" ]; then requeue 75; fi
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    say "the server exited before $health answered (log $serve_log):"; tail -n 20 "$serve_log" >&2
    status failed 1; exit 1
  fi
  if [ "$waited" -ge "$serve_timeout" ]; then
    say "no answer from $health within ${serve_timeout}s (log $serve_log)"; status failed 1; exit 1
  fi
  sleep 2; waited=$((waited + 2))
done
say "the server answers at $health (after ${waited}s)"
"#,
    );
    t
}

/// Training: resume or fresh, the wait that survives trapped signals, and what each exit
/// status means.
const TRAIN: &str = r#"if [ -e "$runs_dir/$run/checkpoints/latest" ]; then
  args=(train --resume --run-name "$run" --runs-dir "$runs_dir")
  say "resuming $runs_dir/$run from its latest checkpoint"
else
  args=(train "${fresh[@]}")
  say "starting $runs_dir/$run"
fi
if [ -n "$stop" ]; then requeue 75; fi
"$memskill" "${args[@]}" --no-progress --second-signal ignore &
child=$!
if [ -n "$stop" ]; then kill -s "$stop" "$child" 2>/dev/null || true; fi
rc=""
while [ -z "$rc" ]; do
  interrupted=0
  wait "$child"; r=$?
  if [ "$interrupted" = 1 ]; then
    # a trapped signal cut the wait short: wait on while memskill runs, else take its status
    if kill -0 "$child" 2>/dev/null; then continue; fi
    wait "$child" 2>/dev/null; r2=$?
    if [ "$r2" != 127 ]; then r=$r2; fi
  fi
  rc=$r
done
child=""
if [ "$rc" = 0 ]; then status done 0; say "done: $runs_dir/$run"; exit 0; fi
if [ "$rc" = 75 ]; then requeue 75; fi
if [ -n "$stop" ] && [ "$rc" -gt 128 ]; then
  say "memskill ended by a signal (status $rc) after SIG$stop: its last checkpoint stays"; requeue "$rc"
fi
status failed "$rc"; say "failed with status $rc"; exit "$rc"
"#;

/// The whole `sbatch` script.
pub fn script(s: &Script) -> String {
    let mut t = String::from("#!/bin/bash\n");
    let _ = writeln!(
        t,
        "# memskill launch slurm: {} ({} tasks). Task -> run: {}.\n\
         # Submit again (unfinished tasks only): memskill launch slurm --resume --name {} --runs-dir {}",
        s.name,
        s.tasks.len(),
        s.launch_dir.join("index.json").display(),
        shell_word(s.name),
        shell_word(&s.runs_dir.display().to_string()),
    );
    t.push_str(&header(s));
    t.push_str("set -u\n");
    t.push_str(&task_table(s));
    t.push_str(FUNCTIONS);
    if let Some(v) = s.serve {
        t.push_str(&serve_block(v));
    }
    t.push_str(TRAIN);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(serve: Option<&Serve>, check: impl FnOnce(&str)) {
        let fresh = vec![
            "--config".to_string(),
            "/cfg dir/it's.toml".into(),
            "--run-name".into(),
            "x-p0".into(),
        ];
        let tasks = [
            TaskLine {
                task: 0,
                run_name: "x-p0",
                fresh: &fresh,
            },
            TaskLine {
                task: 1,
                run_name: "x-p1",
                fresh: &fresh,
            },
        ];
        let res = Resources {
            partition: Some("gpu".into()),
            gpus: Some(2),
            time: Some("04:00:00".into()),
            signal_grace: 300,
            extra: vec!["--qos=high prio".into()],
            ..Default::default()
        };
        let (ld, wd, rd, bin) = (
            PathBuf::from("/runs/launch/x"),
            PathBuf::from("/work dir"),
            PathBuf::from("/runs"),
            PathBuf::from("/bin/memskill"),
        );
        let s = Script {
            name: "x",
            launch_dir: &ld,
            workdir: &wd,
            runs_dir: &rd,
            memskill: &bin,
            tasks: &tasks,
            resources: &res,
            serve,
            array: "0-1",
        };
        check(&script(&s));
    }

    #[test]
    fn the_script_asks_for_requeue_and_the_early_signal() {
        fixture(None, |t| {
            for line in [
                "#SBATCH --job-name=memskill-x\n",
                "#SBATCH --array=0-1\n",
                "#SBATCH --output=/runs/launch/x/logs/%A_%a.out\n",
                "#SBATCH --open-mode=append\n",
                "#SBATCH --requeue\n",
                "#SBATCH --signal=B:USR1@300\n",
                "#SBATCH \"--chdir=/work dir\"\n",
                "#SBATCH --partition=gpu\n",
                "#SBATCH --gpus=2\n",
                "#SBATCH --time=04:00:00\n",
                "#SBATCH \"--qos=high prio\"\n",
                "trap 'forward USR1' USR1\n",
                "trap 'forward TERM' TERM\n",
                "if scontrol requeue \"$job\"; then\n",
                "--no-progress --second-signal ignore &\n",
                "  args=(train --resume --run-name \"$run\" --runs-dir \"$runs_dir\")\n",
            ] {
                assert!(t.contains(line), "missing {line:?} in\n{t}");
            }
            assert!(!t.contains("--cpus-per-task"), "unset options are left out");
            assert!(!t.contains("serve_cmd"), "no server without --serve");
            // the task table quotes every word for the shell
            assert!(
                t.contains(
                    "  0) run=x-p0; fresh=(--config '/cfg dir/it'\\''s.toml' --run-name x-p0) ;;\n"
                ),
                "{t}"
            );
            assert!(t.contains("  1) run=x-p1;"));
            // every #SBATCH line comes before the first command (sbatch stops reading there)
            let first_cmd = t.find("set -u").unwrap();
            assert!(t.rfind("#SBATCH").unwrap() < first_cmd);
        });
    }

    #[test]
    fn a_server_is_started_and_waited_for_before_training() {
        let v = Serve {
            command: "vllm serve m --port 8000".into(),
            health_url: "http://127.0.0.1:8000/v1/models".into(),
            timeout_secs: 900,
        };
        fixture(Some(&v), |t| {
            assert!(t.contains("serve_cmd='vllm serve m --port 8000'\n"));
            assert!(t.contains("health=http://127.0.0.1:8000/v1/models\n"));
            assert!(t.contains("serve_timeout=900\n"));
            assert!(t.contains("setsid bash -c \"$serve_cmd\""));
            assert!(
                t.find("until healthy").unwrap() < t.find("\"$memskill\" \"${args[@]}\"").unwrap()
            );
        });
    }

    #[test]
    fn sbatch_words_are_quoted_for_sbatch() {
        assert_eq!(sbatch_word("--time=1:00:00"), "--time=1:00:00");
        assert_eq!(sbatch_word("--chdir=/a b"), "\"--chdir=/a b\"");
        assert_eq!(
            sbatch_word("--comment=x#y\"z\\"),
            "\"--comment=x\\#y\\\"z\\\\\""
        );
    }

    #[test]
    fn array_specs_compress_runs_of_ids() {
        assert_eq!(array_spec(&[0, 1, 2], None), "0-2");
        assert_eq!(array_spec(&[0, 1, 2, 4, 6, 7], Some(2)), "0-2,4,6-7%2");
        assert_eq!(array_spec(&[5], None), "5");
    }
}
