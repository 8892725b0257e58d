-- memskill registry, schema 2 (SQLite): nothing to do. On PostgreSQL this version adds the
-- pgvector column `memory.embedding_vector` where the server has the extension; SQLite keeps
-- the embedding as the BLOB of schema 1 (little-endian f32).
SELECT 1;
