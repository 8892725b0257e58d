-- memskill registry, schema 1 (PostgreSQL). The SQLite file of the same number defines the
-- same tables and columns (a test compares them); only the column types differ: JSON is
-- JSONB here and JSON_TEXT there, the embedding BYTEA here and a BLOB there; times are
-- RFC 3339 UTC text in both, so that `registry export` is byte-identical across the two.
-- Text columns sort bytewise (COLLATE "C"), as SQLite's do, whatever the database's locale.

-- A run directory that wrote into the registry (training, evaluation, `skills eval`, import).
CREATE TABLE source_run (
  source_run_id TEXT COLLATE "C" PRIMARY KEY,
  kind          TEXT COLLATE "C" NOT NULL,
  path          TEXT COLLATE "C" NOT NULL,
  dataset       TEXT COLLATE "C",
  created_at    TEXT COLLATE "C" NOT NULL,
  updated_at    TEXT COLLATE "C" NOT NULL
);

CREATE TABLE trajectory (
  trace_id       TEXT COLLATE "C" PRIMARY KEY,
  source_run_id  TEXT COLLATE "C" NOT NULL REFERENCES source_run (source_run_id),
  user_id        TEXT COLLATE "C",
  org_id         TEXT COLLATE "C",
  project_id     TEXT COLLATE "C",
  task_type      TEXT COLLATE "C" NOT NULL,
  task_summary   TEXT COLLATE "C" NOT NULL,
  messages       JSONB   NOT NULL,
  tool_calls     JSONB   NOT NULL,
  artifacts      JSONB   NOT NULL,
  errors         JSONB   NOT NULL,
  recoveries     JSONB   NOT NULL,
  outcome_status TEXT COLLATE "C" NOT NULL,
  user_feedback  JSONB  ,
  metrics        JSONB   NOT NULL,
  created_at     TEXT COLLATE "C" NOT NULL
);

CREATE TABLE memory (
  memory_id        TEXT COLLATE "C" PRIMARY KEY,
  source_run_id    TEXT COLLATE "C" NOT NULL REFERENCES source_run (source_run_id),
  sample_id        TEXT COLLATE "C" NOT NULL,
  scope_user_id    TEXT COLLATE "C",
  scope_org_id     TEXT COLLATE "C",
  scope_project_id TEXT COLLATE "C",
  type             TEXT COLLATE "C" NOT NULL,
  content          TEXT COLLATE "C" NOT NULL,
  normalized       JSONB  ,
  source_event_ids JSONB   NOT NULL,
  source_trace_ids JSONB   NOT NULL,
  entities         JSONB   NOT NULL,
  confidence       DOUBLE PRECISION,
  importance       DOUBLE PRECISION,
  sensitivity      TEXT COLLATE "C" NOT NULL,
  valid_from       TEXT COLLATE "C",
  valid_to         TEXT COLLATE "C",
  supersedes       JSONB   NOT NULL,
  status           TEXT COLLATE "C" NOT NULL,
  embedding        BYTEA,
  created_at       TEXT COLLATE "C" NOT NULL,
  updated_at       TEXT COLLATE "C" NOT NULL,
  last_used_at     TEXT COLLATE "C",
  use_count        BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE skill (
  skill_id          TEXT COLLATE "C" PRIMARY KEY,
  name              TEXT COLLATE "C" NOT NULL UNIQUE,
  version           TEXT COLLATE "C" NOT NULL,
  status            TEXT COLLATE "C" NOT NULL,
  scope             JSONB   NOT NULL,
  description       TEXT COLLATE "C" NOT NULL,
  skill_md          TEXT COLLATE "C" NOT NULL,
  risk_level        TEXT COLLATE "C" NOT NULL,
  required_tools    JSONB   NOT NULL,
  required_env_vars JSONB   NOT NULL,
  source_trace_ids  JSONB   NOT NULL,
  created_by        TEXT COLLATE "C" NOT NULL,
  created_at        TEXT COLLATE "C" NOT NULL,
  updated_at        TEXT COLLATE "C" NOT NULL
);

-- Every text a skill had: one row per (skill, version, content); two runs that evolved the
-- same name to the same version with different texts keep both.
CREATE TABLE skill_version (
  skill_id      TEXT COLLATE "C" NOT NULL REFERENCES skill (skill_id),
  version       TEXT COLLATE "C" NOT NULL,
  content_hash  TEXT COLLATE "C" NOT NULL,
  action        TEXT COLLATE "C" NOT NULL,
  description   TEXT COLLATE "C" NOT NULL,
  instructions  TEXT COLLATE "C" NOT NULL,
  skill_md      TEXT COLLATE "C" NOT NULL,
  source_run_id TEXT COLLATE "C" NOT NULL REFERENCES source_run (source_run_id),
  created_at    TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (skill_id, version, content_hash)
);

CREATE TABLE skill_eval_case (
  eval_id         TEXT COLLATE "C" PRIMARY KEY,
  skill_id        TEXT COLLATE "C" NOT NULL REFERENCES skill (skill_id),
  case_type       TEXT COLLATE "C" NOT NULL,
  prompt          TEXT COLLATE "C" NOT NULL,
  input_files     JSONB   NOT NULL,
  expected_output TEXT COLLATE "C",
  assertions      JSONB   NOT NULL,
  created_at      TEXT COLLATE "C" NOT NULL
);

CREATE TABLE skill_eval_run (
  run_id              TEXT COLLATE "C" PRIMARY KEY,
  eval_group          TEXT COLLATE "C" NOT NULL,
  skill_id            TEXT COLLATE "C" NOT NULL REFERENCES skill (skill_id),
  skill_version       TEXT COLLATE "C" NOT NULL,
  eval_id             TEXT COLLATE "C",
  mode                TEXT COLLATE "C" NOT NULL,
  trace_id            TEXT COLLATE "C",
  source_run_id       TEXT COLLATE "C" NOT NULL REFERENCES source_run (source_run_id),
  assertion_results   JSONB   NOT NULL,
  pass_rate           DOUBLE PRECISION,
  tokens              BIGINT NOT NULL,
  duration_ms         DOUBLE PRECISION NOT NULL,
  tool_call_count     BIGINT NOT NULL,
  safety_failures     BIGINT NOT NULL,
  regression_failures BIGINT NOT NULL,
  passed              BIGINT NOT NULL,
  summary             JSONB   NOT NULL,
  created_at          TEXT COLLATE "C" NOT NULL
);

CREATE TABLE skill_invocation (
  invocation_id     TEXT COLLATE "C" PRIMARY KEY,
  skill_id          TEXT COLLATE "C" NOT NULL REFERENCES skill (skill_id),
  skill_version     TEXT COLLATE "C",
  trace_id          TEXT COLLATE "C" NOT NULL,
  source_run_id     TEXT COLLATE "C" NOT NULL REFERENCES source_run (source_run_id),
  activation_reason TEXT COLLATE "C" NOT NULL,
  activation_score  DOUBLE PRECISION,
  outcome_status    TEXT COLLATE "C" NOT NULL,
  user_feedback     JSONB  ,
  postmortem        JSONB  ,
  metrics           JSONB   NOT NULL,
  created_at        TEXT COLLATE "C" NOT NULL
);

CREATE TABLE skill_release (
  release_id    TEXT COLLATE "C" PRIMARY KEY,
  seq           BIGINT NOT NULL,
  skill_id      TEXT COLLATE "C" NOT NULL REFERENCES skill (skill_id),
  from_version  TEXT COLLATE "C",
  to_version    TEXT COLLATE "C" NOT NULL,
  release_type  TEXT COLLATE "C" NOT NULL,
  kind          TEXT COLLATE "C" NOT NULL,
  diff          TEXT COLLATE "C" NOT NULL,
  eval_summary  JSONB   NOT NULL,
  approved_by   TEXT COLLATE "C" NOT NULL,
  note          TEXT COLLATE "C" NOT NULL,
  source_run_id TEXT COLLATE "C" REFERENCES source_run (source_run_id),
  created_at    TEXT COLLATE "C" NOT NULL
);

CREATE INDEX skill_release_by_skill ON skill_release (skill_id, seq);
CREATE INDEX skill_invocation_by_skill ON skill_invocation (skill_id);
CREATE INDEX skill_eval_run_by_skill ON skill_eval_run (skill_id);
CREATE INDEX memory_by_sample ON memory (source_run_id, sample_id);
CREATE INDEX trajectory_by_run ON trajectory (source_run_id);
