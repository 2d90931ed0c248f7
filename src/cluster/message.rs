//! What the learner and the workers send each other, and how it is checked on arrival: a
//! message from the cluster is input like any other, and one that does not read is refused
//! with the reason, never trusted.
//!
//! A game is `EPAMGAM1`, then a header (u32 length, JSON: run, worker, serial, network,
//! simulations, seconds), the game's record (u32 length, text), and its samples as a replay
//! chunk (the rest). Notices are JSON.

use crate::config::Config;
use crate::game::{GameRecord, Rules};
use crate::replay::{decode_samples, encode_chunk, Sample};
use serde::{Deserialize, Serialize};

const GAME_MAGIC: &[u8; 8] = b"EPAMGAM1";

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MessageError {
    #[error("a game message: {0}")]
    Game(String),
    #[error("a notice of the run: {0}")]
    Notice(String),
}

/// The run a learner trains: its id (new runs, and only they, get a new one) and its config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunNotice {
    pub run: String,
    /// The run's config as TOML (what `config.toml` in the run directory holds).
    pub config: String,
}

impl RunNotice {
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a notice serialises")
    }

    pub fn decode(bytes: &[u8]) -> Result<RunNotice, MessageError> {
        let notice: RunNotice =
            serde_json::from_slice(bytes).map_err(|e| MessageError::Notice(e.to_string()))?;
        check_run_id(&notice.run).map_err(MessageError::Notice)?;
        Ok(notice)
    }

    /// The config, checked as a stored run's config is.
    pub fn config(&self) -> Result<Config, crate::config::ConfigError> {
        Config::parse_stored(&self.config, "the run's config on the server")
    }
}

/// Checks a run's id: it names objects on the server and files on the workers, so it is 1 to
/// 64 ASCII letters, digits, `-` and `_` (a new run's is 16 hexadecimal digits).
pub fn check_run_id(id: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if id.is_empty() || id.len() > 64 || !id.chars().all(allowed) {
        return Err(format!("run id {id:?} is not 1 to 64 letters, digits, '-' and '_'"));
    }
    Ok(())
}

/// The highest network version a notice may carry.
pub const MAX_VERSION: u32 = u32::MAX / 2;

/// The network workers are to play with: the checkpoint of generation `version`, stored
/// under `object`, whose games make generation `version + 1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetworkNotice {
    pub run: String,
    pub version: u32,
    pub object: String,
}

impl NetworkNotice {
    pub fn new(run: &str, version: u32) -> NetworkNotice {
        NetworkNotice {
            run: run.into(),
            version,
            object: format!("{run}-{}", crate::util::generation_name(version)),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a notice serialises")
    }

    /// Reads a notice, refusing a version no run reaches: workers count generations on from
    /// it, which must not overflow.
    pub fn decode(bytes: &[u8]) -> Result<NetworkNotice, MessageError> {
        let notice: NetworkNotice =
            serde_json::from_slice(bytes).map_err(|e| MessageError::Notice(e.to_string()))?;
        if notice.version > MAX_VERSION {
            let problem = format!("network version {} is out of range", notice.version);
            return Err(MessageError::Notice(problem));
        }
        check_run_id(&notice.run).map_err(MessageError::Notice)?;
        // Workers name the downloaded file after the object: only the name the learner gives
        // a version is accepted, never a path.
        let expected = NetworkNotice::new(&notice.run, notice.version).object;
        if notice.object != expected {
            let problem = format!("network object {:?} is not {expected:?}", notice.object);
            return Err(MessageError::Notice(problem));
        }
        Ok(notice)
    }
}

/// Where a game comes from: the run, the worker that played it (its name and the process's
/// nonce), its number among that process's games, the network's generation, and its search
/// work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameHeader {
    pub run: String,
    pub worker: String,
    pub serial: u64,
    pub network: u32,
    pub simulations: u64,
    pub seconds: f64,
}

/// A finished game as a worker publishes it.
#[derive(Clone, Debug, PartialEq)]
pub struct GameMessage {
    pub header: GameHeader,
    pub record: GameRecord,
    pub samples: Vec<Sample>,
}

impl GameMessage {
    /// The game's id, unique in the cluster: its worker and serial.
    pub fn id(&self) -> String {
        game_id(&self.header.worker, self.header.serial)
    }

    pub fn encode(&self) -> Vec<u8> {
        let header = serde_json::to_vec(&self.header).expect("a header serialises");
        let record = self.record.to_string();
        let rules = self.record.start.rules();
        let mut out =
            Vec::with_capacity(64 + header.len() + record.len() + self.samples.len() * 200);
        out.extend_from_slice(GAME_MAGIC);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&(record.len() as u32).to_le_bytes());
        out.extend_from_slice(record.as_bytes());
        out.extend_from_slice(&encode_chunk(&self.samples, rules));
        out
    }

    /// Reads a game message, checking that its record is a legal game and its samples are of
    /// the record's board. `rules` are the run's: the game's board and ply cap may be a
    /// curriculum stage's, the rest must be the run's.
    pub fn decode(bytes: &[u8], rules: &Rules) -> Result<GameMessage, MessageError> {
        let bad = |problem: &str| MessageError::Game(problem.to_string());
        let rest = bytes.strip_prefix(GAME_MAGIC).ok_or_else(|| bad("not a game (bad magic)"))?;
        let (header, rest) = length_prefixed(rest).ok_or_else(|| bad("its header is cut short"))?;
        let header: GameHeader = serde_json::from_slice(header)
            .map_err(|e| MessageError::Game(format!("its header: {e}")))?;
        let (record, chunk) =
            length_prefixed(rest).ok_or_else(|| bad("its record is cut short"))?;
        let record = std::str::from_utf8(record).map_err(|_| bad("its record is not text"))?;
        let record = GameRecord::parse(record)
            .map_err(|e| MessageError::Game(format!("its record: {e}")))?;
        let board = |r: &Rules| (r.width, r.height, r.symmetry, r.stones);
        let game_rules = record.start.rules();
        if (game_rules.symmetry, game_rules.stones) != (rules.symmetry, rules.stones) {
            return Err(MessageError::Game(format!(
                "its record is of other rules ({game_rules}) than the run's ({rules})"
            )));
        }
        // The chunk's header gives the board and cap; the rest are the run's.
        let samples = decode_samples(chunk, rules, "a game message")
            .map_err(|e| MessageError::Game(format!("its samples: {e}")))?;
        if samples.len() > record.moves.len() + 1 {
            return Err(MessageError::Game(format!(
                "{} samples for a game of {} plies",
                samples.len(),
                record.moves.len()
            )));
        }
        if let Some(sample) =
            samples.iter().find(|s| board(s.position.rules()) != board(game_rules))
        {
            return Err(MessageError::Game(format!(
                "a sample of another board ({}) than its record's ({game_rules})",
                sample.position.rules()
            )));
        }
        Ok(GameMessage { header, record, samples })
    }
}

pub fn game_id(worker: &str, serial: u64) -> String {
    format!("{worker}-{serial}")
}

/// A u32 length, that many bytes, and the rest; None when the bytes run out.
fn length_prefixed(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let length = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    let body = bytes.get(4..4usize.checked_add(length)?)?;
    Some((body, &bytes[4 + length..]))
}
