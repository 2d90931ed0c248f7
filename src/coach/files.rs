//! The run directory's files: atomic writes, CSV tables, and the errors of a run.

use crate::nn::NetError;
use crate::replay::ReplayError;
use serde::Serialize;
use std::fmt::Display;
use std::path::{Path, PathBuf};

/// Why a run (or a distillation) could not go on. Nothing it saved is changed by the error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("run directory {dir} was made with an incompatible config: {problem}. Use another --run directory, or the run's own config ({dir}/config.toml)")]
    Incompatible { dir: PathBuf, problem: String },
    #[error("{path} is corrupt: {problem}")]
    Corrupt { path: PathBuf, problem: String },
    #[error("{dir} is not a run directory and no --config was given to start one")]
    NoConfig { dir: PathBuf },
    #[error("{dir} already holds a run; a run starts from another network's weights only when it is new")]
    AlreadyStarted { dir: PathBuf },
    #[error("{dir} holds a run's work ({found}) but no state.json, so it can be neither resumed nor started anew without losing that work; restore state.json, or use another --run directory")]
    StateMissing { dir: PathBuf, found: PathBuf },
    #[error("{dir} holds a run (state.json) but not its config.toml, which resuming it needs; restore the config there")]
    ConfigMissing { dir: PathBuf },
    #[error("{dir} is in use by another process (a `train` or `distill` there); wait for it to stop, or stop it, before starting another in the same directory")]
    InUse { dir: PathBuf },
    #[error(transparent)]
    Net(#[from] NetError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error("{place}: {source}")]
    Player { place: &'static str, source: crate::players::PlayerError },
    #[error("rating games: {0}")]
    Rating(#[from] crate::arena::ArenaError),
    #[error("the generation's match ([matches]): {0}")]
    Match(crate::arena::ArenaError),
    #[error("generation {generation}'s training diverged (its losses are not finite numbers); nothing of it was saved, so the run resumes before it: resume {dir} with --config naming a copy of its config.toml with a lower [training] learning_rate")]
    Diverged { dir: PathBuf, generation: u32 },
    #[error("cannot pretrain on {source_run}: {problem}")]
    Pretraining { source_run: PathBuf, problem: String },
    #[error("{dir} holds no distillation and no --teacher was given to start one")]
    NoTeacher { dir: PathBuf },
    #[error("{dir} holds {found} but no state.json, so it is not a distillation; use another --run directory")]
    NotADistillation { dir: PathBuf, found: String },
    #[error("teacher {path}: {problem}")]
    Teacher { path: PathBuf, problem: String },
    /// The games of a source other than this process's self-play (a cluster's workers).
    #[error("{0}")]
    Games(Box<dyn std::error::Error + Send + Sync>),
}

/// Turns an I/O error on `path` into a [`RunError`].
pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io { path: path.to_path_buf(), source }
}

/// Turns an error in reading `path` into [`RunError::Corrupt`], naming the file.
pub(crate) fn corrupt<E: Display>(path: &Path) -> impl Fn(E) -> RunError + '_ {
    move |e| RunError::Corrupt { path: path.to_path_buf(), problem: e.to_string() }
}

/// The exclusive hold of one process on a run (or distillation) directory, released when
/// dropped or when the process ends, however it ends. Two processes writing one run would
/// number their games alike and overwrite each other's chunks and checkpoints.
#[derive(Debug)]
pub(crate) struct DirLock {
    _file: std::fs::File,
}

/// The lock file inside a run directory (a dot file, so it is never taken for a run's work).
pub(crate) const LOCK_FILE: &str = ".lock";

impl DirLock {
    /// Holds `dir` (created if missing) for this process, or says it is held already.
    pub(crate) fn acquire(dir: &Path) -> Result<DirLock, RunError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        match file.try_lock() {
            Ok(()) => Ok(DirLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => {
                Err(RunError::InUse { dir: dir.to_path_buf() })
            }
            Err(std::fs::TryLockError::Error(source)) => Err(RunError::Io { path, source }),
        }
    }

    /// A hold on `dir` if it exists; none (and nothing made) if it does not.
    pub(crate) fn acquire_if_present(dir: &Path) -> Result<Option<DirLock>, RunError> {
        if dir.is_dir() {
            DirLock::acquire(dir).map(Some)
        } else {
            Ok(None)
        }
    }

    /// `held`, or where the caller holds no lock yet, a new one on `dir`.
    pub(crate) fn held_or_acquire(held: Option<DirLock>, dir: &Path) -> Result<DirLock, RunError> {
        match held {
            Some(lock) => Ok(lock),
            None => DirLock::acquire(dir),
        }
    }
}

/// Writes `bytes` to `path` atomically (see [`crate::util::write_atomically`]).
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    crate::util::write_atomically(path, bytes).map_err(io(path))
}

/// Writes `rows` as a CSV file with a header, atomically.
pub(crate) fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), RunError> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row).map_err(corrupt(path))?;
    }
    write_file(path, &writer.into_inner().map_err(corrupt(path))?)
}

/// The rows of a CSV file with a header that `keep` keeps; none when the file is missing.
pub(crate) fn read_csv<T: serde::de::DeserializeOwned>(
    path: &Path,
    keep: impl Fn(&T) -> bool,
) -> Result<Vec<T>, RunError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut reader = csv::Reader::from_path(path).map_err(corrupt(path))?;
    let mut rows = Vec::new();
    for row in reader.deserialize::<T>() {
        let row = row.map_err(corrupt(path))?;
        if keep(&row) {
            rows.push(row);
        }
    }
    Ok(rows)
}
