//! The acked cursor: the highest record id the server has acknowledged. It
//! is written to a temporary file, fsynced and renamed over the old one, so
//! it is always either the old or the new value, never torn.
//!
//! ```text
//! ledger file: acked_id: u64 LE, checksum: u32 LE (CRC32C of acked_id)
//! ```

use std::fs;
use std::io::{self, Write as _};
use std::path::Path;

use super::open_options;

pub const LEDGER_FILE: &str = "acked.ledger";

/// Reads the acked id. A missing ledger is 0 (nothing acked). A damaged one
/// is also 0, reported as `Err`: replaying from the start is safe, because
/// the server deduplicates replays.
pub fn read(dir: &Path) -> Result<u64, LedgerError> {
    let bytes = match fs::read(dir.join(LEDGER_FILE)) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(LedgerError::Io(error)),
    };
    if bytes.len() != 12 {
        return Err(LedgerError::Damaged);
    }
    let acked = u64::from_le_bytes(bytes[0..8].try_into().expect("8 bytes"));
    let checksum = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if crc32c::crc32c(&bytes[0..8]) != checksum {
        return Err(LedgerError::Damaged);
    }
    Ok(acked)
}

/// Durably records `acked`.
pub fn write(dir: &Path, acked: u64) -> io::Result<()> {
    let mut bytes = acked.to_le_bytes().to_vec();
    bytes.extend_from_slice(&crc32c::crc32c(&acked.to_le_bytes()).to_le_bytes());
    replace_file(dir, LEDGER_FILE, &bytes)
}

/// Replaces `dir/name` with `bytes` so that a crash leaves either the old or
/// the new content: written to a temporary file, fsynced, renamed over.
pub fn replace_file(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let temporary = dir.join(format!("{name}.tmp"));
    let mut file = open_options().write(true).create(true).truncate(true).open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_data()?;
    drop(file);
    fs::rename(&temporary, dir.join(name))?;
    // The rename itself must survive a crash.
    fs::File::open(dir)?.sync_all()?;
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("cannot read the ledger: {0}")]
    Io(io::Error),
    #[error("the ledger is damaged")]
    Damaged,
}
