-- memskill registry, schema 1 (SQLite). The PostgreSQL file of the same number defines the
-- same tables and columns (a test compares them); only the column types differ: JSON is
-- JSON_TEXT here (text affinity; the declared type tells readers to parse it) and JSONB
-- there, the embedding a BLOB here and BYTEA there; times are RFC 3339 UTC text in both, so
-- that `registry export` is byte-identical across the two.

-- A run directory that wrote into the registry (training, evaluation, `skills eval`, import).
CREATE TABLE source_run (
  source_run_id TEXT PRIMARY KEY,
  kind          TEXT NOT NULL,
  path          TEXT NOT NULL,
  dataset       TEXT,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);

CREATE TABLE trajectory (
  trace_id       TEXT PRIMARY KEY,
  source_run_id  TEXT NOT NULL REFERENCES source_run (source_run_id),
  user_id        TEXT,
  org_id         TEXT,
  project_id     TEXT,
  task_type      TEXT NOT NULL,
  task_summary   TEXT NOT NULL,
  messages       JSON_TEXT NOT NULL,
  tool_calls     JSON_TEXT NOT NULL,
  artifacts      JSON_TEXT NOT NULL,
  errors         JSON_TEXT NOT NULL,
  recoveries     JSON_TEXT NOT NULL,
  outcome_status TEXT NOT NULL,
  user_feedback  JSON_TEXT,
  metrics        JSON_TEXT NOT NULL,
  created_at     TEXT NOT NULL
);

CREATE TABLE memory (
  memory_id        TEXT PRIMARY KEY,
  source_run_id    TEXT NOT NULL REFERENCES source_run (source_run_id),
  sample_id        TEXT NOT NULL,
  scope_user_id    TEXT,
  scope_org_id     TEXT,
  scope_project_id TEXT,
  type             TEXT NOT NULL,
  content          TEXT NOT NULL,
  normalized       JSON_TEXT,
  source_event_ids JSON_TEXT NOT NULL,
  source_trace_ids JSON_TEXT NOT NULL,
  entities         JSON_TEXT NOT NULL,
  confidence       DOUBLE PRECISION,
  importance       DOUBLE PRECISION,
  sensitivity      TEXT NOT NULL,
  valid_from       TEXT,
  valid_to         TEXT,
  supersedes       JSON_TEXT NOT NULL,
  status           TEXT NOT NULL,
  embedding        BLOB,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  last_used_at     TEXT,
  use_count        BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE skill (
  skill_id          TEXT PRIMARY KEY,
  name              TEXT NOT NULL UNIQUE,
  version           TEXT NOT NULL,
  status            TEXT NOT NULL,
  scope             JSON_TEXT NOT NULL,
  description       TEXT NOT NULL,
  skill_md          TEXT NOT NULL,
  risk_level        TEXT NOT NULL,
  required_tools    JSON_TEXT NOT NULL,
  required_env_vars JSON_TEXT NOT NULL,
  source_trace_ids  JSON_TEXT NOT NULL,
  created_by        TEXT NOT NULL,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL
);

-- Every text a skill had: one row per (skill, version, content); two runs that evolved the
-- same name to the same version with different texts keep both.
CREATE TABLE skill_version (
  skill_id      TEXT NOT NULL REFERENCES skill (skill_id),
  version       TEXT NOT NULL,
  content_hash  TEXT NOT NULL,
  action        TEXT NOT NULL,
  description   TEXT NOT NULL,
  instructions  TEXT NOT NULL,
  skill_md      TEXT NOT NULL,
  source_run_id TEXT NOT NULL REFERENCES source_run (source_run_id),
  created_at    TEXT NOT NULL,
  PRIMARY KEY (skill_id, version, content_hash)
);

CREATE TABLE skill_eval_case (
  eval_id         TEXT PRIMARY KEY,
  skill_id        TEXT NOT NULL REFERENCES skill (skill_id),
  case_type       TEXT NOT NULL,
  prompt          TEXT NOT NULL,
  input_files     JSON_TEXT NOT NULL,
  expected_output TEXT,
  assertions      JSON_TEXT NOT NULL,
  created_at      TEXT NOT NULL
);

CREATE TABLE skill_eval_run (
  run_id              TEXT PRIMARY KEY,
  eval_group          TEXT NOT NULL,
  skill_id            TEXT NOT NULL REFERENCES skill (skill_id),
  skill_version       TEXT NOT NULL,
  eval_id             TEXT,
  mode                TEXT NOT NULL,
  trace_id            TEXT,
  source_run_id       TEXT NOT NULL REFERENCES source_run (source_run_id),
  assertion_results   JSON_TEXT NOT NULL,
  pass_rate           DOUBLE PRECISION,
  tokens              BIGINT NOT NULL,
  duration_ms         DOUBLE PRECISION NOT NULL,
  tool_call_count     BIGINT NOT NULL,
  safety_failures     BIGINT NOT NULL,
  regression_failures BIGINT NOT NULL,
  passed              BIGINT NOT NULL,
  summary             JSON_TEXT NOT NULL,
  created_at          TEXT NOT NULL
);

CREATE TABLE skill_invocation (
  invocation_id     TEXT PRIMARY KEY,
  skill_id          TEXT NOT NULL REFERENCES skill (skill_id),
  skill_version     TEXT,
  trace_id          TEXT NOT NULL,
  source_run_id     TEXT NOT NULL REFERENCES source_run (source_run_id),
  activation_reason TEXT NOT NULL,
  activation_score  DOUBLE PRECISION,
  outcome_status    TEXT NOT NULL,
  user_feedback     JSON_TEXT,
  postmortem        JSON_TEXT,
  metrics           JSON_TEXT NOT NULL,
  created_at        TEXT NOT NULL
);

CREATE TABLE skill_release (
  release_id    TEXT PRIMARY KEY,
  seq           BIGINT NOT NULL,
  skill_id      TEXT NOT NULL REFERENCES skill (skill_id),
  from_version  TEXT,
  to_version    TEXT NOT NULL,
  release_type  TEXT NOT NULL,
  kind          TEXT NOT NULL,
  diff          TEXT NOT NULL,
  eval_summary  JSON_TEXT NOT NULL,
  approved_by   TEXT NOT NULL,
  note          TEXT NOT NULL,
  source_run_id TEXT REFERENCES source_run (source_run_id),
  created_at    TEXT NOT NULL
);

CREATE INDEX skill_release_by_skill ON skill_release (skill_id, seq);
CREATE INDEX skill_invocation_by_skill ON skill_invocation (skill_id);
CREATE INDEX skill_eval_run_by_skill ON skill_eval_run (skill_id);
CREATE INDEX memory_by_sample ON memory (source_run_id, sample_id);
CREATE INDEX trajectory_by_run ON trajectory (source_run_id);
