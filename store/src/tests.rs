use super::*;
use crate::knowledge::embeddings;
use lore_pgtest::TestDatabase;

/// Tables, indexes, functions and triggers of the public schema: what a
/// migration run could change.
async fn schema_fingerprint(pool: &PgPool) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT kind || ' ' || name FROM (
             SELECT 'relation' AS kind, c.relname::text AS name
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'public'
             UNION ALL
             SELECT 'function', p.proname::text
               FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = 'public' AND p.proname LIKE 'lore_%'
             UNION ALL
             SELECT 'trigger', t.tgname::text FROM pg_trigger t WHERE NOT t.tgisinternal
         ) AS objects ORDER BY 1",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// Inserts project `p` and one action of it at `occurred_at` (an SQL
/// timestamp expression).
async fn insert_action(pool: &PgPool, occurred_at: &str) {
    sqlx::query("INSERT INTO projects (name) VALUES ('p') ON CONFLICT DO NOTHING").execute(pool).await.unwrap();
    let statement = format!(
        "INSERT INTO actions (action_id, occurred_at, project, action_type, outcome, chain_hash)
         VALUES (gen_random_uuid(), {occurred_at}, 'p', 'commit', 'success', '\\x00')"
    );
    sqlx::query(sqlx::AssertSqlSafe(statement)).execute(pool).await.unwrap();
}

#[tokio::test]
async fn migrations_apply_cleanly_and_a_second_run_is_a_no_op() {
    let database = TestDatabase::new().await.unwrap(); // first run happens here
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations WHERE success")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert_eq!(applied as usize, MIGRATOR.iter().filter(|m| m.migration_type.is_up_migration()).count());
    let before = schema_fingerprint(&database.pool).await;
    assert!(before.contains(&"relation actions".to_owned()));
    assert!(before.contains(&"relation knowledge_embeddings".to_owned()));
    assert!(before.contains(&"relation qa_failures".to_owned()));

    migrate(&database.pool).await.expect("second run succeeds");
    let after = schema_fingerprint(&database.pool).await;
    assert_eq!(before, after);
    let applied_again: i64 =
        sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations").fetch_one(&database.pool).await.unwrap();
    assert_eq!(applied_again, applied);
}

#[tokio::test]
async fn action_log_has_partitions_for_this_month_and_the_next_three() {
    let database = TestDatabase::new().await.unwrap();
    let partitions: Vec<String> = sqlx::query_scalar(
        "SELECT format('actions_p%s', to_char(now() + make_interval(months => m), 'YYYYMM'))
         FROM generate_series(0, 3) AS m
         WHERE to_regclass(format('actions_p%s', to_char(now() + make_interval(months => m), 'YYYYMM'))) IS NULL",
    )
    .fetch_all(&database.pool)
    .await
    .unwrap();
    assert!(partitions.is_empty(), "missing partitions: {partitions:?}");
}

#[tokio::test]
async fn actions_outside_every_partition_are_kept_and_moved_when_their_month_is_created() {
    let database = TestDatabase::new().await.unwrap();
    insert_action(&database.pool, "'2031-07-04T10:00:00Z'").await;
    let partition: String =
        sqlx::query_scalar("SELECT tableoid::regclass::text FROM actions").fetch_one(&database.pool).await.unwrap();
    assert_eq!(partition, "actions_default");

    sqlx::query("SELECT lore_ensure_action_partition('2031-07-01')").execute(&database.pool).await.unwrap();
    let partition: String =
        sqlx::query_scalar("SELECT tableoid::regclass::text FROM actions").fetch_one(&database.pool).await.unwrap();
    assert_eq!(partition, "actions_p203107");
}

#[tokio::test]
async fn append_only_tables_refuse_updates() {
    let database = TestDatabase::new().await.unwrap();
    insert_action(&database.pool, "now()").await;
    let error = sqlx::query("UPDATE actions SET error = 'rewritten'").execute(&database.pool).await.unwrap_err();
    let code = error.as_database_error().and_then(|db| db.code()).map(|code| code.into_owned());
    assert_eq!(code.as_deref(), Some(sqlstate::RESTRICT_VIOLATION), "{error}");
}

#[tokio::test]
async fn replayed_action_id_with_the_same_timestamp_is_rejected_by_the_primary_key() {
    let database = TestDatabase::new().await.unwrap();
    sqlx::query("INSERT INTO projects (name) VALUES ('p')").execute(&database.pool).await.unwrap();
    let insert = "INSERT INTO actions (action_id, occurred_at, project, action_type, outcome, chain_hash)
                  VALUES ('0190b6a0-0000-7000-8000-000000000001', '2026-11-01T00:00:00Z', 'p', 'commit', 'success', '\\x00')
                  ON CONFLICT DO NOTHING";
    let first = sqlx::query(insert).execute(&database.pool).await.unwrap().rows_affected();
    let replay = sqlx::query(insert).execute(&database.pool).await.unwrap().rows_affected();
    assert_eq!((first, replay), (1, 0));
}

#[tokio::test]
async fn embeddings_of_two_models_with_different_dimensions_live_side_by_side() {
    let database = TestDatabase::new().await.unwrap();
    let pool = &database.pool;
    sqlx::raw_sql(
        "INSERT INTO projects (name) VALUES ('p');
         INSERT INTO knowledge_entries (entry_id, project, kind, title)
             VALUES ('00000000-0000-4000-8000-000000000001', 'p', 'learning', 'RLS blocks inserts');
         INSERT INTO embedding_models (model, provider, dimensions) VALUES ('hash/8', 'hash', 8);
         SELECT lore_ensure_embedding_index('hash/8');
         INSERT INTO knowledge_embeddings (entry_id, model, project, content_hash, embedding)
             VALUES ('00000000-0000-4000-8000-000000000001', 'local/all-MiniLM-L6-v2', 'p', '\\x00',
                     array_fill(0.1::real, ARRAY[384])::vector),
                    ('00000000-0000-4000-8000-000000000001', 'hash/8', 'p', '\\x00',
                     array_fill(0.5::real, ARRAY[8])::vector);",
    )
    .execute(pool)
    .await
    .unwrap();
    let indexes: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_indexes WHERE tablename = 'knowledge_embeddings' AND indexdef LIKE '%hnsw%'",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(indexes, 2);
    let nearest: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT entry_id FROM knowledge_embeddings WHERE model = 'hash/8'
         ORDER BY embedding::vector(8) <=> array_fill(0.4::real, ARRAY[8])::vector(8) LIMIT 5) AS hits",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(nearest, 1);
}

#[tokio::test]
async fn a_claimed_job_is_leased_and_an_entry_edited_while_embedded_keeps_its_job() {
    let database = TestDatabase::new().await.unwrap();
    let pool = &database.pool;
    let model = "local/all-MiniLM-L6-v2";
    sqlx::raw_sql(
        "INSERT INTO projects (name) VALUES ('p');
         INSERT INTO knowledge_entries (entry_id, project, kind, title, content_hash)
             VALUES ('00000000-0000-4000-8000-000000000001', 'p', 'learning', 'kept as it was', '\\x01'),
                    ('00000000-0000-4000-8000-000000000002', 'p', 'learning', 'edited meanwhile', '\\x02'),
                    ('00000000-0000-4000-8000-000000000003', 'p', 'learning', 'removed meanwhile', '\\x03');
         INSERT INTO knowledge_embedding_jobs (entry_id, model, project)
             SELECT entry_id, 'local/all-MiniLM-L6-v2', 'p' FROM knowledge_entries;",
    )
    .execute(pool)
    .await
    .unwrap();
    let lease = std::time::Duration::from_secs(60);
    let jobs = embeddings::claim(pool, model, 10, lease).await.unwrap();
    assert_eq!(jobs.len(), 3);
    assert!(jobs.iter().any(|job| job.text.starts_with("kept as it was")), "the entry's text comes with its job");
    assert!(embeddings::claim(pool, model, 10, lease).await.unwrap().is_empty(), "leased jobs are not due");

    sqlx::raw_sql(
        "UPDATE knowledge_entries SET title = 'edited', content_hash = '\\x22'
             WHERE entry_id = '00000000-0000-4000-8000-000000000002';
         DELETE FROM knowledge_entries WHERE entry_id = '00000000-0000-4000-8000-000000000003';",
    )
    .execute(pool)
    .await
    .unwrap();
    let vectors = vec![vec![0.1f32; 384]; jobs.len()];
    embeddings::store(pool, model, &jobs, &vectors).await.unwrap();
    let left: Vec<String> = sqlx::query_scalar(
        "SELECT e.title FROM knowledge_embedding_jobs j JOIN knowledge_entries e USING (entry_id) ORDER BY 1",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(left, ["edited"], "only the entry whose text changed waits again");
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM knowledge_embeddings").fetch_one(pool).await.unwrap();
    assert_eq!(stored, 2, "the removed entry got no vector");
}
