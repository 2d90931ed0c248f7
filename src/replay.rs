//! Training samples and the replay buffer on disk.
//!
//! Each generation's samples are one chunk file `replay/gen-NNNNNN.bin`, written atomically;
//! the buffer is the most recent chunks that fill the window. Chunk layout (little endian):
//! `EPAMREP4`, width u8, height u8, ply cap u16 (0: none), count u32, then per sample: white
//! and black bitboards
//! (4 x u64 each), in the stones variant the stones' bitboard too (only there, so standard
//! chunks are unchanged), side u8, ply u16, outcome i8 (for the side to move), the searched
//! chances as a flag u8 (1 when present) and then win, draw and loss f32, move count u16, then
//! (policy index u16, probability f32) per move. A chunk holds the board and cap its games were
//! played under, which need not be the run's (see [`crate::config::BoardStage`]). Older chunks
//! still read, under their header's board and the run's cap: `EPAMREP2` is the same without the
//! ply cap;
//! `EPAMREP3` has, after the searched chances, piece leads (a flag u8 and, when 1, two i8) for a
//! head since removed, which are skipped; and `EPAMREP1`, from before the searched chances,
//! lacks those.

use crate::encode;
use crate::evaluator::Wdl;
use crate::game::{Bitboard, Color, Position, RecordResult, Rules};
use rand::Rng;
use std::path::{Path, PathBuf};

/// A policy target over a position's legal moves only, as (policy index, probability): a
/// position has tens of legal moves among its thousands of policy entries.
pub type SparsePolicy = Vec<(u16, f32)>;

/// One position from self-play with its training targets.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub position: Position,
    /// The search's policy target over the legal moves: visit shares, or a Gumbel root's
    /// improved policy.
    pub policy: SparsePolicy,
    /// The game's result for the side to move here: +1 won, 0 drawn, -1 lost.
    pub outcome: i8,
    /// The search's chances for the side to move here, which training can blend into the
    /// value target (`search_value_share`). None in chunks written before they were kept.
    pub searched: Option<Wdl>,
}

/// The result of a game from the view of `side`. The one place where a result becomes a value
/// target: a sign error here would teach every position backwards.
pub fn outcome_for(result: RecordResult, side: Color) -> i8 {
    match (result, side) {
        (RecordResult::WhiteWins, Color::White) | (RecordResult::BlackWins, Color::Black) => 1,
        (RecordResult::WhiteWins, Color::Black) | (RecordResult::BlackWins, Color::White) => -1,
        (RecordResult::Draw, _) | (RecordResult::Unfinished, _) => 0,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is corrupt: {problem}")]
    Corrupt { path: PathBuf, problem: String },
    #[error("{path}: cannot read its game records: {source}")]
    Records { path: PathBuf, source: crate::game::RecordError },
    #[error("{path} holds no finished game")]
    NoGames { path: PathBuf },
    #[error("{path} not written: a sample of a {found} board in a chunk of {expected}")]
    MixedBoards { path: PathBuf, found: String, expected: String },
    #[error("{path}: game {game} is played on {found}, not on the {expected} being trained")]
    OtherGame { path: PathBuf, game: usize, found: String, expected: String },
}

/// Every position of the finished games recorded in `paths` (game records, as `match` writes
/// them) at which the side to move has a move, as a sample whose value target is its game's
/// result. The policy target is empty, which the policy loss reads as none (see
/// [`crate::train::losses`]): a match's moves are not a search's visit shares. The games must be
/// of `rules`' board, symmetry rule and variant; their ply cap may differ, as it only ended them.
pub fn samples_from_records(paths: &[PathBuf], rules: &Rules) -> Result<Vec<Sample>, ReplayError> {
    let game_of = |r: &Rules| (r.width, r.height, r.symmetry, r.stones);
    let describe = |r: &Rules| {
        format!(
            "{}x{} board (symmetry {:?}{})",
            r.width,
            r.height,
            r.symmetry,
            if r.stones { ", stones" } else { "" }
        )
    };
    let mut found = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ReplayError::Io { path: path.clone(), source })?;
        let records = crate::game::GameRecord::parse_all(&text)
            .map_err(|source| ReplayError::Records { path: path.clone(), source })?;
        if records.iter().all(|record| record.result == RecordResult::Unfinished) {
            return Err(ReplayError::NoGames { path: path.clone() });
        }
        for (number, record) in records.iter().enumerate() {
            if game_of(record.rules()) != game_of(rules) {
                return Err(ReplayError::OtherGame {
                    path: path.clone(),
                    game: number + 1,
                    found: describe(record.rules()),
                    expected: describe(rules),
                });
            }
            found.extend(samples_of_game(record));
        }
    }
    Ok(found)
}

/// The samples of one game record, as [`samples_from_records`] makes them: every position at
/// which the side to move has a move, value target the game's result. None for an unfinished
/// game.
pub fn samples_of_game(record: &crate::game::GameRecord) -> Vec<Sample> {
    if record.result == RecordResult::Unfinished {
        return Vec::new();
    }
    record
        .positions()
        .iter()
        .filter(|position| !position.side_to_move_has_won() && position.has_legal_move())
        .map(|position| Sample {
            position: *position,
            policy: Vec::new(),
            outcome: outcome_for(record.result, position.side_to_move()),
            searched: None,
        })
        .collect()
}

const MAGIC: &[u8; 8] = b"EPAMREP4";
/// The layout without the ply cap.
const MAGIC_V2: &[u8; 8] = b"EPAMREP2";
/// The layout with piece leads after the searched chances.
const MAGIC_WITH_LEADS: &[u8; 8] = b"EPAMREP3";
/// The layout before the searched chances.
const MAGIC_V1: &[u8; 8] = b"EPAMREP1";

pub fn encode_chunk(samples: &[Sample], rules: &Rules) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + samples.len() * 200);
    out.extend_from_slice(MAGIC);
    out.push(rules.width);
    out.push(rules.height);
    out.extend_from_slice(&rules.ply_cap.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    for sample in samples {
        for color in Color::BOTH {
            for limb in sample.position.pieces(color).0 {
                out.extend_from_slice(&limb.to_le_bytes());
            }
        }
        if rules.stones {
            for limb in sample.position.stones().0 {
                out.extend_from_slice(&limb.to_le_bytes());
            }
        }
        out.push(sample.position.side_to_move().index() as u8);
        out.extend_from_slice(&sample.position.ply().to_le_bytes());
        out.push(sample.outcome as u8);
        out.push(sample.searched.is_some() as u8);
        if let Some(Wdl { win, draw, loss }) = sample.searched {
            for chance in [win, draw, loss] {
                out.extend_from_slice(&chance.to_le_bytes());
            }
        }
        out.extend_from_slice(&(sample.policy.len() as u16).to_le_bytes());
        for (index, p) in &sample.policy {
            out.extend_from_slice(&index.to_le_bytes());
            out.extend_from_slice(&p.to_le_bytes());
        }
    }
    out
}

/// A cursor over a chunk's bytes that turns running out into a `Corrupt` error.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], ReplayError> {
        let slice = self.bytes.get(self.at..self.at + n).ok_or_else(|| ReplayError::Corrupt {
            path: self.path.to_path_buf(),
            problem: format!("truncated at byte {}", self.at),
        })?;
        self.at += n;
        Ok(slice)
    }
    fn u8(&mut self) -> Result<u8, ReplayError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, ReplayError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u32(&mut self) -> Result<u32, ReplayError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64, ReplayError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn f32(&mut self) -> Result<f32, ReplayError> {
        Ok(f32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
}

/// The samples of a chunk held in memory (a game sent over the network); `origin` names it in
/// errors.
pub fn decode_samples(
    bytes: &[u8],
    rules: &Rules,
    origin: &str,
) -> Result<Vec<Sample>, ReplayError> {
    decode_chunk(bytes, rules, Path::new(origin))
}

fn decode_chunk(bytes: &[u8], rules: &Rules, path: &Path) -> Result<Vec<Sample>, ReplayError> {
    let corrupt = |problem: String| ReplayError::Corrupt { path: path.to_path_buf(), problem };
    let mut r = Reader { bytes, at: 0, path };
    let (has_cap, has_searched, has_leads) = match r.take(8)? {
        magic if magic == MAGIC => (true, true, false),
        magic if magic == MAGIC_V2 => (false, true, false),
        magic if magic == MAGIC_WITH_LEADS => (false, true, true),
        magic if magic == MAGIC_V1 => (false, false, false),
        _ => return Err(corrupt("not a replay chunk (bad magic)".into())),
    };
    let (width, height) = (r.u8()?, r.u8()?);
    let ply_cap = if has_cap { Some(r.u16()?).filter(|&cap| cap > 0) } else { rules.ply_cap };
    // The game the chunk's positions were played under: its own board and cap, the run's
    // other rules.
    let rules = &Rules { width, height, ply_cap, ..*rules };
    rules.validate().map_err(|e| corrupt(format!("its board: {e}")))?;
    let count = r.u32()? as usize;
    let policy_size = encode::policy_size(rules);
    let mut samples = Vec::with_capacity(count.min(1 << 20));
    for i in 0..count {
        let mut pieces = [Bitboard::EMPTY; 2];
        for bits in &mut pieces {
            for limb in 0..4 {
                bits.0[limb] = r.u64()?;
            }
        }
        let mut stones = Bitboard::EMPTY;
        if rules.stones {
            for limb in 0..4 {
                stones.0[limb] = r.u64()?;
            }
        }
        let side = match r.u8()? {
            0 => Color::White,
            1 => Color::Black,
            other => return Err(corrupt(format!("sample {i}: side {other}"))),
        };
        let ply = r.u16()?;
        let position = Position::from_parts(*rules, pieces[0], pieces[1], side, ply)
            .and_then(|p| p.with_stones(stones))
            .map_err(|e| corrupt(format!("sample {i}: {e}")))?;
        let outcome = r.u8()? as i8;
        if !(-1..=1).contains(&outcome) {
            return Err(corrupt(format!("sample {i}: outcome {outcome}")));
        }
        let searched = match if has_searched { r.u8()? } else { 0 } {
            0 => None,
            1 => {
                let (win, draw, loss) = (r.f32()?, r.f32()?, r.f32()?);
                let in_range = [win, draw, loss].iter().all(|c| (0.0..=1.0).contains(c));
                if !in_range || (win + draw + loss - 1.0).abs() > 1e-3 {
                    return Err(corrupt(format!("sample {i}: searched chances ({win}, {draw}, {loss}) are not a distribution")));
                }
                Some(Wdl { win, draw, loss })
            }
            other => return Err(corrupt(format!("sample {i}: searched-chances flag {other}"))),
        };
        match if has_leads { r.u8()? } else { 0 } {
            0 => {}
            1 => {
                r.take(2)?;
            }
            other => return Err(corrupt(format!("sample {i}: piece-leads flag {other}"))),
        }
        let moves = r.u16()? as usize;
        let mut policy = Vec::with_capacity(moves);
        for _ in 0..moves {
            let index = r.u16()?;
            let p = r.f32()?;
            if index as usize >= policy_size || !(0.0..=1.0 + 1e-4).contains(&p) {
                return Err(corrupt(format!(
                    "sample {i}: policy entry ({index}, {p}) out of range"
                )));
            }
            policy.push((index, p));
        }
        samples.push(Sample { position, policy, outcome, searched });
    }
    if r.at != bytes.len() {
        return Err(corrupt(format!("{} bytes after the last sample", bytes.len() - r.at)));
    }
    Ok(samples)
}

/// Path of a generation's chunk.
pub fn chunk_path(dir: &Path, generation: u32) -> PathBuf {
    dir.join(format!("{}.bin", crate::util::generation_name(generation)))
}

pub fn write_chunk(
    dir: &Path,
    generation: u32,
    samples: &[Sample],
    rules: &Rules,
) -> Result<(), ReplayError> {
    let path = chunk_path(dir, generation);
    // The header names one board: a sample of another would read back as another position.
    if let Some(other) = samples
        .iter()
        .map(|s| s.position.rules())
        .find(|r| (r.width, r.height, r.stones) != (rules.width, rules.height, rules.stones))
    {
        let board = |r: &Rules| {
            format!("{}x{}{}", r.width, r.height, if r.stones { " stones" } else { "" })
        };
        return Err(ReplayError::MixedBoards { path, found: board(other), expected: board(rules) });
    }
    crate::util::write_atomically(&path, &encode_chunk(samples, rules))
        .map_err(|source| ReplayError::Io { path, source })
}

pub fn read_chunk(dir: &Path, generation: u32, rules: &Rules) -> Result<Vec<Sample>, ReplayError> {
    read_samples(&chunk_path(dir, generation), rules)
}

/// The samples of a chunk file anywhere (a generation's chunk, or one game's samples in a
/// self-play journal).
pub fn read_samples(path: &Path, rules: &Rules) -> Result<Vec<Sample>, ReplayError> {
    let bytes = std::fs::read(path)
        .map_err(|source| ReplayError::Io { path: path.to_path_buf(), source })?;
    decode_chunk(&bytes, rules, path)
}

/// The samples in memory: the newest chunks, trimmed to the window, and the positions of game
/// records held beside them for the whole run (`replay.records`), which neither count in the
/// window nor leave it.
#[derive(Default)]
pub struct ReplayBuffer {
    /// (generation, samples), oldest first.
    chunks: Vec<(u32, Vec<Sample>)>,
    records: Vec<Sample>,
    /// The share of each batch drawn from `records`.
    records_share: f64,
}

impl ReplayBuffer {
    pub fn push(&mut self, generation: u32, samples: Vec<Sample>) {
        self.chunks.push((generation, samples));
    }

    /// Holds `records` (see [`samples_from_records`]) beside the window, `share` of every batch
    /// [`draw_batch`](Self::draw_batch) makes to be drawn from them.
    pub fn hold_records(&mut self, records: Vec<Sample>, share: f64) {
        self.records = records;
        self.records_share = share;
    }

    /// Adds the positions of more game records to those held beside the window (the share stays
    /// as [`hold_records`](Self::hold_records) set it).
    pub fn add_records(&mut self, records: Vec<Sample>) {
        self.records.extend(records);
    }

    /// The positions of game records held beside the window.
    pub fn records(&self) -> &[Sample] {
        &self.records
    }

    /// The self-play samples held (the records held beside them are not counted).
    pub fn len(&self) -> usize {
        self.chunks.iter().map(|(_, s)| s.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops whole old chunks while the rest still fills `window` positions.
    pub fn trim(&mut self, window: usize) {
        while self.chunks.len() > 1 && self.len() - self.chunks[0].1.len() >= window {
            self.chunks.remove(0);
        }
    }

    /// Every sample held, oldest first.
    pub fn into_samples(self) -> Vec<Sample> {
        self.chunks.into_iter().flat_map(|(_, samples)| samples).collect()
    }

    /// Keeps only the samples of a `width` x `height` board, and the chunks that still hold any.
    pub fn keep_board(&mut self, width: u8, height: u8) {
        let of_board =
            |s: &Sample| (s.position.rules().width, s.position.rules().height) == (width, height);
        for (_, samples) in &mut self.chunks {
            samples.retain(of_board);
        }
        self.chunks.retain(|(_, samples)| !samples.is_empty());
    }

    /// Generations held, oldest first.
    pub fn generations(&self) -> Vec<u32> {
        self.chunks.iter().map(|(g, _)| *g).collect()
    }

    /// A uniform draw from the newest `window` positions.
    pub fn sample<'a>(&'a self, window: usize, rng: &mut impl Rng) -> &'a Sample {
        let total = self.len();
        let window = window.clamp(1, total);
        let mut index = total - window + rng.random_range(0..window);
        for (_, samples) in &self.chunks {
            if index < samples.len() {
                return &samples[index];
            }
            index -= samples.len();
        }
        unreachable!("index within the buffer")
    }

    /// A training batch of `size` samples: the records' share of it, rounded, drawn uniformly
    /// from the records held, and the rest from the newest `window` positions. The count is
    /// fixed rather than drawn, so that every batch holds the same mixture. Without records the
    /// draws are [`sample`](Self::sample)'s, one by one, as they were before records existed.
    pub fn draw_batch<'a>(
        &'a self,
        window: usize,
        size: usize,
        rng: &mut impl Rng,
    ) -> Vec<&'a Sample> {
        let from_records = if self.records.is_empty() {
            0
        } else {
            ((size as f64 * self.records_share).round() as usize).min(size)
        };
        let mut batch: Vec<&Sample> = (0..from_records)
            .map(|_| &self.records[rng.random_range(0..self.records.len())])
            .collect();
        batch.extend((from_records..size).map(|_| self.sample(window, rng)));
        batch
    }
}
