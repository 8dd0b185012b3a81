use std::os::unix::fs::PermissionsExt as _;

use super::*;

fn config(dir: &Path) -> SpoolConfig {
    SpoolConfig { fsync: FsyncPolicy::Always, ..SpoolConfig::new(dir) }
}

fn payload(index: usize) -> Vec<u8> {
    format!("action number {index} with some context to make it realistic").into_bytes()
}

async fn append_all(spool: &Spool, range: std::ops::Range<usize>) -> Vec<u64> {
    let mut ids = Vec::new();
    for index in range {
        ids.extend(spool.append(vec![payload(index)]).await.unwrap());
    }
    ids
}

fn read_all(spool: &Spool) -> Vec<SpooledRecord> {
    let mut reader = spool.reader();
    let mut records = Vec::new();
    loop {
        let batch = reader.read_batch(37, usize::MAX).unwrap();
        if batch.is_empty() {
            return records;
        }
        records.extend(batch);
    }
}

fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == SEGMENT_EXTENSION))
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn records_come_back_in_order_across_segment_rollover() {
    let dir = tempfile::tempdir().unwrap();
    let (spool, report) = Spool::open(config(dir.path())).unwrap();
    assert_eq!(report, RecoveryReport::default());
    let ids = append_all(&spool, 0..300).await;
    assert_eq!(ids, (1..=300).collect::<Vec<u64>>());
    assert!(segment_files(dir.path()).len() > 3, "small test segments roll over");
    let records = read_all(&spool);
    assert_eq!(records.len(), 300);
    for (index, record) in records.iter().enumerate() {
        assert_eq!((record.id, &record.payload), (index as u64 + 1, &payload(index)));
    }
}

#[tokio::test]
async fn a_batch_append_gets_consecutive_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (spool, _) = Spool::open(config(dir.path())).unwrap();
    let ids = spool.append((0..10).map(payload).collect()).await.unwrap();
    assert_eq!(ids, (1..=10).collect::<Vec<u64>>());
}

#[tokio::test]
async fn acked_segments_are_deleted_and_a_reopened_spool_continues_after_the_ack() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (spool, _) = Spool::open(config(dir.path())).unwrap();
        append_all(&spool, 0..300).await;
        let before = segment_files(dir.path()).len();
        spool.ack(250).unwrap();
        assert!(segment_files(dir.path()).len() < before, "fully acked segments are gone");
        assert_eq!(spool.stats().unacked_records, 50);
    }
    let (spool, report) = Spool::open(config(dir.path())).unwrap();
    assert_eq!(report.records, 50);
    let ids: Vec<u64> = read_all(&spool).iter().map(|record| record.id).collect();
    assert_eq!(ids, (251..=300).collect::<Vec<u64>>());
    // Ids are never reused after a restart.
    assert_eq!(spool.append(vec![payload(0)]).await.unwrap(), vec![301]);
}

/// A reader of the last run's records (the sidecar's inbox recovering its
/// position) finds them after a restart even when the server acknowledged
/// them all before the crash; they go once a later segment exists.
#[tokio::test]
async fn the_newest_segment_survives_a_reopen_when_fully_acked_until_a_later_one_exists() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (spool, _) = Spool::open(config(dir.path())).unwrap();
        append_all(&spool, 0..300).await;
        spool.ack(300).unwrap();
    }
    let (spool, report) = Spool::open(config(dir.path())).unwrap();
    assert_eq!((report.records, report.segments), (0, 1));
    assert!(read_all(&spool).is_empty(), "acknowledged records are not read again");
    let mut reader = spool.reader();
    reader.rewind(290);
    let ids: Vec<u64> = reader.read_batch(100, usize::MAX).unwrap().iter().map(|record| record.id).collect();
    assert_eq!(ids, (291..=300).collect::<Vec<u64>>());

    let kept = segment_files(dir.path());
    assert_eq!(spool.append(vec![payload(300)]).await.unwrap(), vec![301]);
    spool.ack(301).unwrap();
    let left = segment_files(dir.path());
    assert!(!left.contains(&kept[0]) && left.len() == 1, "{kept:?} then {left:?}");
}

#[tokio::test]
async fn a_torn_last_record_is_cut_off_and_every_whole_record_kept() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (spool, _) = Spool::open(config(dir.path())).unwrap();
        append_all(&spool, 0..20).await;
    }
    // A crash in the middle of writing record 21.
    let mut torn = Vec::new();
    record::encode(21, 0, &payload(20), &mut torn);
    let last = segment_files(dir.path()).pop().unwrap();
    let mut file = OpenOptions::new().append(true).open(&last).unwrap();
    file.write_all(&torn[..torn.len() / 2]).unwrap();
    drop(file);

    let (spool, report) = Spool::open(config(dir.path())).unwrap();
    assert_eq!(report.torn_bytes_truncated, (torn.len() / 2) as u64);
    assert_eq!(report.corrupt_records, 0);
    assert_eq!(read_all(&spool).len(), 20);
    assert_eq!(spool.append(vec![payload(20)]).await.unwrap(), vec![21]);
    assert_eq!(read_all(&spool).len(), 21);
}

#[tokio::test]
async fn a_damaged_record_in_the_middle_is_moved_aside_and_the_records_around_it_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    config.max_segment_bytes = 1024 * 1024;
    {
        let (spool, _) = Spool::open(config.clone()).unwrap();
        append_all(&spool, 0..10).await;
    }
    // Flip a byte inside record 5's payload.
    let segment = segment_files(dir.path()).pop().unwrap();
    let mut bytes = fs::read(&segment).unwrap();
    let record_len = HEADER_LEN + payload(0).len();
    bytes[4 * record_len + HEADER_LEN + 3] ^= 0xFF;
    fs::write(&segment, &bytes).unwrap();

    let (spool, report) = Spool::open(config.clone()).unwrap();
    assert_eq!(report.corrupt_records, 1);
    assert_eq!(report.moved_aside.len(), 1);
    assert_eq!(fs::read(&report.moved_aside[0]).unwrap().len(), record_len);
    let ids: Vec<u64> = read_all(&spool).iter().map(|record| record.id).collect();
    assert_eq!(ids, vec![1, 2, 3, 4, 6, 7, 8, 9, 10]);
    // The repair is durable: a second open finds nothing wrong.
    drop(spool);
    let (_, report) = Spool::open(config).unwrap();
    assert_eq!((report.corrupt_records, report.records), (0, 9));
}

#[tokio::test]
async fn a_full_disk_budget_refuses_appends_loses_nothing_and_accepts_again_after_acks() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    config.disk_budget_bytes = 8 * 1024;
    let (spool, _) = Spool::open(config).unwrap();
    let mut accepted = Vec::new();
    let refused = loop {
        match spool.append(vec![payload(accepted.len())]).await {
            Ok(ids) => accepted.extend(ids),
            Err(error) => break error,
        }
        assert!(accepted.len() < 1000, "the budget never filled");
    };
    assert!(matches!(refused, SpoolError::Full { .. }), "{refused:?}");
    assert_eq!(read_all(&spool).len(), accepted.len(), "nothing spooled was lost");
    spool.ack(*accepted.last().unwrap()).unwrap();
    spool.append(vec![payload(0)]).await.expect("room again after the acks");
}

#[tokio::test]
async fn drop_oldest_makes_room_and_counts_what_it_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    config.disk_budget_bytes = 8 * 1024;
    config.when_full = FullPolicy::DropOldest;
    let (spool, _) = Spool::open(config).unwrap();
    append_all(&spool, 0..500).await;
    let stats = spool.stats();
    assert!(stats.dropped_records > 0);
    assert!(stats.disk_bytes <= 8 * 1024);
    let kept = read_all(&spool);
    assert_eq!(kept.len() as u64 + stats.dropped_records, 500, "every record is either kept or counted as dropped");
    assert_eq!(kept.last().unwrap().id, 500);
}

#[tokio::test]
async fn every_fsync_policy_stores_and_reads_back() {
    for fsync in [FsyncPolicy::Always, FsyncPolicy::Batch(Duration::from_millis(2)), FsyncPolicy::Never] {
        let dir = tempfile::tempdir().unwrap();
        let (spool, _) = Spool::open(SpoolConfig { fsync, ..SpoolConfig::new(dir.path()) }).unwrap();
        let spool = Arc::new(spool);
        let tasks: Vec<_> = (0..8)
            .map(|task| {
                let spool = Arc::clone(&spool);
                tokio::spawn(async move {
                    for index in 0..25 {
                        spool.append(vec![payload(task * 100 + index)]).await.unwrap();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        let ids: Vec<u64> = read_all(&spool).iter().map(|record| record.id).collect();
        assert_eq!(ids, (1..=200).collect::<Vec<u64>>(), "{fsync:?}");
    }
}

#[tokio::test]
async fn spool_files_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let spool_dir = dir.path().join("spool");
    let (spool, _) = Spool::open(config(&spool_dir)).unwrap();
    append_all(&spool, 0..5).await;
    spool.ack(2).unwrap();
    assert_eq!(fs::metadata(&spool_dir).unwrap().permissions().mode() & 0o777, 0o700);
    for entry in fs::read_dir(&spool_dir).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600, "{}", path.display());
    }
}

#[tokio::test]
async fn a_damaged_ledger_replays_everything_rather_than_losing_anything() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (spool, _) = Spool::open(config(dir.path())).unwrap();
        append_all(&spool, 0..10).await;
        spool.ack(5).unwrap();
    }
    fs::write(dir.path().join(acked::LEDGER_FILE), b"garbage").unwrap();
    let (spool, report) = Spool::open(config(dir.path())).unwrap();
    assert!(report.ledger_damaged);
    assert_eq!(read_all(&spool).first().unwrap().id, 1);
}

#[tokio::test]
async fn a_record_on_disk_but_not_yet_published_is_read_once_it_is_published() {
    let dir = tempfile::tempdir().unwrap();
    let (spool, _) = Spool::open(SpoolConfig { max_segment_bytes: 1024 * 1024, ..config(dir.path()) }).unwrap();
    append_all(&spool, 0..10).await;
    // The writer has written record 11 but not published it yet.
    let mut bytes = Vec::new();
    record::encode(11, 0, &payload(10), &mut bytes);
    let segment = segment_files(dir.path()).pop().unwrap();
    OpenOptions::new().append(true).open(&segment).unwrap().write_all(&bytes).unwrap();

    let mut reader = spool.reader();
    let first: Vec<u64> = reader.read_batch(100, usize::MAX).unwrap().iter().map(|record| record.id).collect();
    assert_eq!(first, (1..=10).collect::<Vec<u64>>());

    {
        let mut state = spool.shared.state.lock().unwrap();
        let active = state.segments.back_mut().unwrap();
        active.last_id = 11;
        active.bytes += bytes.len() as u64;
    }
    spool.shared.written.send_replace(11);
    let second: Vec<u64> = reader.read_batch(100, usize::MAX).unwrap().iter().map(|record| record.id).collect();
    assert_eq!(second, vec![11], "the record past the old watermark was skipped");
}

#[tokio::test]
async fn a_spool_opened_for_each_append_continues_its_last_segment_and_keeps_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let continuing = SpoolConfig { continue_last_segment: true, max_segment_bytes: 16 * 1024, ..config(dir.path()) };
    for index in 0..40 {
        let (spool, _) = Spool::open(continuing.clone()).unwrap();
        append_all(&spool, index..index + 1).await;
        spool.close();
    }
    let segments = segment_files(dir.path());
    assert!(segments.len() <= 3, "40 opens, {} segments: one per 16 KiB, not one per open", segments.len());
    // A torn tail (a crash mid-append) is cut at the next open, and the
    // next append continues after the last whole record.
    let last = segments.last().unwrap();
    fs::OpenOptions::new().append(true).open(last).unwrap().write_all(&[7, 0, 0]).unwrap();
    let (spool, report) = Spool::open(continuing.clone()).unwrap();
    assert_eq!(report.torn_bytes_truncated, 3);
    append_all(&spool, 40..41).await;
    let records = read_all(&spool);
    assert_eq!(records.len(), 41);
    assert!(records.iter().enumerate().all(|(index, record)| record.payload == payload(index)), "in order");
    assert!(records.windows(2).all(|pair| pair[1].id == pair[0].id + 1));
    spool.close();
}
