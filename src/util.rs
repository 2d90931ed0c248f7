//! Small helpers shared across modules.

use std::io::Write;
use std::path::Path;

/// The name of a generation's files and folders in a run (`gen-000042`: its checkpoint, replay
/// chunk, games, journal, match and rating records), and of its checkpoint as a player in the
/// run's ratings. Six digits so that they sort in order.
pub fn generation_name(generation: u32) -> String {
    format!("gen-{generation:06}")
}

/// Writes `bytes` to `path` so that `path` holds either its old content or all of the new one,
/// never a part: write a temporary file beside it, flush it to disk, rename it over `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_atomically(path, |temp| {
        let mut file = std::fs::File::create(temp)?;
        file.write_all(bytes)?;
        file.sync_all()
    })
}

/// Has `write` make the new content of `path` as a temporary file beside it (the path it is
/// given), then renames that over `path`: for writers that want a path of their own (a plot).
/// On an error the temporary file is removed and `path` keeps its old content.
pub fn replace_atomically(
    path: &Path,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = write(&temp).and_then(|()| std::fs::rename(&temp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}
