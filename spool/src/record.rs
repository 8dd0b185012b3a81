//! One framed record of a segment file:
//!
//! ```text
//! record:
//!   payload_len: u32 LE    length of the payload
//!   checksum:    u32 LE    CRC32C of record_id + appended_at (LE bytes) + payload
//!   record_id:   u64 LE    monotonic, 1-based, never reused
//!   appended_at: i64 LE    when the spool took the record, microseconds since the epoch
//!   payload:     [u8; payload_len]
//! ```

/// Bytes before the payload.
pub const HEADER_LEN: usize = 24;
/// Larger payloads are refused on write, and a header that claims one is
/// taken for corruption on read.
pub const MAX_PAYLOAD_LEN: usize = 16 * 1024 * 1024;

/// Encodes one record onto `out`.
pub fn encode(id: u64, appended_at: i64, payload: &[u8], out: &mut Vec<u8>) {
    debug_assert!(payload.len() <= MAX_PAYLOAD_LEN);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&checksum(id, appended_at, payload).to_le_bytes());
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&appended_at.to_le_bytes());
    out.extend_from_slice(payload);
}

fn checksum(id: u64, appended_at: i64, payload: &[u8]) -> u32 {
    let header = crc32c::crc32c_append(crc32c::crc32c(&id.to_le_bytes()), &appended_at.to_le_bytes());
    crc32c::crc32c_append(header, payload)
}

/// What is at some offset of a segment.
#[derive(Debug, PartialEq, Eq)]
pub enum RecordStatus<'a> {
    /// A whole record whose checksum holds.
    Valid { id: u64, appended_at: i64, payload: &'a [u8], len: usize },
    /// The bytes end before the record does: a write that was cut off (a
    /// torn tail), or the end of what the writer has flushed so far.
    Incomplete,
    /// A whole header whose length is impossible, or a checksum that does
    /// not hold.
    Corrupted,
}

/// Reads the record that starts at the beginning of `bytes`.
pub fn decode(bytes: &[u8]) -> RecordStatus<'_> {
    if bytes.len() < HEADER_LEN {
        return RecordStatus::Incomplete;
    }
    let payload_len = u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes")) as usize;
    if payload_len > MAX_PAYLOAD_LEN {
        return RecordStatus::Corrupted;
    }
    let stored_checksum = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    let id = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let appended_at = i64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    let len = HEADER_LEN + payload_len;
    if bytes.len() < len {
        return RecordStatus::Incomplete;
    }
    let payload = &bytes[HEADER_LEN..len];
    if checksum(id, appended_at, payload) != stored_checksum || id == 0 {
        return RecordStatus::Corrupted;
    }
    RecordStatus::Valid { id, appended_at, payload, len }
}

/// The offset of the next valid record after corruption at the start of
/// `bytes` whose id is above `after_id`, if any. A false match needs a
/// CRC32C collision and a plausible id.
pub fn resync(bytes: &[u8], after_id: u64) -> Option<usize> {
    (1..bytes.len()).find(|offset| matches!(decode(&bytes[*offset..]), RecordStatus::Valid { id, .. } if id > after_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_any_flipped_bit_is_detected() {
        let mut bytes = Vec::new();
        encode(7, 1_700_000_000_000_000, b"hello spool", &mut bytes);
        let valid = RecordStatus::Valid {
            id: 7,
            appended_at: 1_700_000_000_000_000,
            payload: b"hello spool",
            len: bytes.len(),
        };
        assert_eq!(decode(&bytes), valid);
        for bit in 0..bytes.len() * 8 {
            let mut flipped = bytes.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            assert_ne!(decode(&flipped), valid, "bit {bit} flipped unnoticed");
        }
    }

    #[test]
    fn a_cut_record_is_incomplete_not_corrupt() {
        let mut bytes = Vec::new();
        encode(1, 0, b"payload", &mut bytes);
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut]), RecordStatus::Incomplete, "cut at {cut}");
        }
    }

    #[test]
    fn resync_finds_the_next_good_record_after_garbage() {
        let mut bytes = Vec::new();
        encode(1, 0, b"first", &mut bytes);
        let garbage_at = bytes.len();
        bytes.extend_from_slice(&[0xAB; 37]);
        let second_at = bytes.len();
        encode(3, 0, b"third", &mut bytes);
        assert_eq!(resync(&bytes[garbage_at..], 1), Some(second_at - garbage_at));
    }
}
