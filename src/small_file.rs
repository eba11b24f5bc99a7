//! Reading a small file the operator names (a key, a certificate, a trusted
//! root, a lockfile, the Docker config) whole, reading at most one byte
//! past its limit, so a file that grows or lies about its size is still
//! refused before it is held in memory.

use std::io::Read;
use std::path::Path;

/// The file at `path`, whole, or `None` if there is none; one larger than
/// `limit` bytes is an error. `what` names the file in errors ("the
/// trusted root").
pub(crate) fn read_small_file(
    path: &Path,
    limit: u64,
    what: &str,
) -> Result<Option<Vec<u8>>, String> {
    let shown = path.display();
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {what} {shown}: {e}")),
    };
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "{what} {shown} is larger than {limit} bytes, the most accepted"
        ));
    }
    Ok(Some(bytes))
}

/// As [`read_small_file`], for a file that must exist.
pub(crate) fn read_required_file(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    read_small_file(path, limit, what)?.ok_or_else(|| {
        format!(
            "cannot read {what} {}: there is no such file",
            path.display()
        )
    })
}
