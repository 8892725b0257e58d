-- memskill registry, schema 2 (PostgreSQL): the memory embedding as a pgvector column
-- (`embedding_vector vector`, beside the BYTEA copy) where the server has the extension
-- (https://github.com/pgvector/pgvector), so memories can be searched by similarity in SQL:
--   SELECT memory_id FROM memory ORDER BY embedding_vector <=> '[0.1, ...]' LIMIT 5
-- A server without it, or a role that may not create it, keeps the BYTEA column only (the
-- registry works the same; `registry status` says which). The column has no fixed width:
-- each row keeps its encoder's (384 for MiniLM, 1024 for Qwen3-Embedding-0.6B).
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS vector;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'memskill registry: pgvector is installed but this role may not create it; embeddings stay BYTEA only';
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
    ALTER TABLE memory ADD COLUMN IF NOT EXISTS embedding_vector vector;
  END IF;
END
$$;
