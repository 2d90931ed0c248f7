//! The learner's side: each generation it publishes the newest network, takes exactly the
//! generation's number of games from the workers into its journal, and acknowledges them
//! once the generation is committed.
//!
//! ```text
//! RUN/cluster.json   the run's id on the server (made by the first cluster start)
//! RUN/cluster.csv    per generation: games taken, workers, games dropped and why
//! ```

use super::message::{GameMessage, NetworkNotice, RunNotice};
use super::{Cluster, ClusterError, Delivery, GamesConsumer};
use crate::coach::files::{read_csv, write_csv, write_file};
use crate::coach::{checkpoint_path, GameSource, Generation, Observer, Run, RunError};
use crate::game::GameRecord;
use crate::nn::Network;
use crate::selfplay::{FinishedGame, SelfPlayOutput};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::Path;
use std::time::{Duration, Instant};

/// The tags a taken game's record gets: who played it and with which network.
const WORKER_TAG: &str = "Worker";
const GAME_TAG: &str = "Game";
const NETWORK_TAG: &str = "Network";

/// How long the learner goes without saying anything while it waits for games.
const HEARTBEAT: Duration = Duration::from_secs(20);

/// One row of `cluster.csv`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ClusterRow {
    pub generation: u32,
    pub games: usize,
    /// The workers whose games the generation holds, and how many each (`name:count ...`).
    pub workers: String,
    /// Games dropped: played by a network older than `max_network_age` allows (or on a board
    /// a curriculum has left), delivered a second time, unreadable or of another run.
    pub too_old: usize,
    pub repeated: usize,
    pub refused: usize,
    /// The learner's wait for the games (the time it did not train).
    pub seconds: f64,
}

/// What the learner does with a delivered game.
enum Verdict {
    /// A game of this generation's networks, new: it joins the generation.
    Take(Box<GameMessage>),
    /// Unreadable, or of another run: refused for good, with the reason to say.
    Refuse(String),
    /// Delivered again after its generation was committed: acknowledged, not counted.
    Committed,
    /// Delivered again while its generation takes its games (it is in the journal already):
    /// held, to be acknowledged with the generation.
    InJournal,
    /// Played by a network too old (or too new) for this generation, or on a board the
    /// curriculum has left: acknowledged and dropped.
    TooOld,
}

/// The games of a run's generations from a cluster's workers.
pub struct ClusterGames {
    cluster: Cluster,
    /// Set on the first generation: the run's id, and the learner's consumer.
    joined: Option<(String, GamesConsumer)>,
    /// The generation in progress's games, acknowledged once it is committed.
    held: Vec<Delivery>,
    /// Ids of the games of the newest committed generations (a learner stopped between a
    /// commit and its acknowledgements gets those games again).
    committed: VecDeque<HashSet<String>>,
    /// The generation in progress: its number, its games' ids, and its row of cluster.csv.
    current: Option<(u32, HashSet<String>, ClusterRow)>,
    /// When the previous generation's games were all taken: the workers have played this
    /// generation's games since (while the learner trained, too).
    last_taken: Option<Instant>,
}

impl ClusterGames {
    pub fn new(cluster: Cluster) -> ClusterGames {
        ClusterGames {
            cluster,
            joined: None,
            held: Vec::new(),
            committed: VecDeque::new(),
            current: None,
            last_taken: None,
        }
    }

    /// Publishes the run, reads the ids of its newest committed games, and makes the consumer.
    fn join(&mut self, run: &Run, observer: &dyn Observer) -> Result<(), ClusterError> {
        let id = run_id(&run.dir)?;
        self.cluster.prepare()?;
        self.cluster.publish_run(&RunNotice { run: id.clone(), config: run.config.to_toml() })?;
        let newest = run.state.generation;
        let keep = run.config.selfplay.max_network_age + 2;
        for generation in newest.saturating_sub(keep - 1).max(1)..=newest {
            let path = crate::coach::games_path(&run.dir, generation);
            let records = match std::fs::read_to_string(&path) {
                Ok(text) => GameRecord::parse_all(&text).map_err(|e| RunError::Corrupt {
                    path: path.clone(),
                    problem: e.to_string(),
                })?,
                Err(_) => Vec::new(),
            };
            self.remember(
                records.iter().filter_map(|r| game_id_of(r).map(str::to_string)).collect(),
                keep as usize,
            );
        }
        let consumer = self.cluster.games_consumer()?;
        observer.message(&format!(
            "cluster {}: run {id}; workers join with `epaminondas worker --cluster {}`",
            self.cluster.url(),
            self.cluster.url()
        ));
        self.joined = Some((id, consumer));
        Ok(())
    }

    fn remember(&mut self, ids: HashSet<String>, keep: usize) {
        self.committed.push_back(ids);
        while self.committed.len() > keep {
            self.committed.pop_front();
        }
    }

    /// Publishes the network that plays generation `version + 1` and removes from the store
    /// the networks too old to play for it.
    fn publish_network(&self, run: &Run, run_id: &str, version: u32) -> Result<(), ClusterError> {
        let path = checkpoint_path(&run.dir, version);
        let weights =
            std::fs::read(&path).map_err(|source| RunError::Io { path: path.clone(), source })?;
        let notice = NetworkNotice::new(run_id, version);
        self.cluster.publish_network(&notice, &weights)?;
        let keep: Vec<String> = (version.saturating_sub(run.config.selfplay.max_network_age)
            ..=version)
            .map(|v| NetworkNotice::new(run_id, v).object)
            .collect();
        self.cluster.prune_networks(&keep)
    }

    /// Up to `count` games from the stream; none after an error, which is said, waited out,
    /// and met with a new consumer (which gets every game not acknowledged, those held
    /// included: they count once, by id).
    fn next_games(&mut self, count: usize, observer: &dyn Observer) -> Vec<Delivery> {
        let consumer = &self.joined.as_ref().expect("joined before taking games").1;
        match self.cluster.next_games(consumer, count, Duration::from_secs(2)) {
            Ok(deliveries) => deliveries,
            Err(error) => {
                observer.message(&format!("{error}; asking again in 5 s"));
                std::thread::sleep(Duration::from_secs(5));
                if let Ok(consumer) = self.cluster.games_consumer() {
                    self.joined.as_mut().expect("joined before taking games").1 = consumer;
                    self.held.clear();
                }
                Vec::new()
            }
        }
    }

    /// What to do with a game delivered while generation `generation` (played by network
    /// `generation - 1`) takes its games; `taken` holds the ids of those it has.
    fn judge(
        &self,
        delivery: &Delivery,
        run: &Run,
        run_id: &str,
        generation: &Generation,
        taken: &HashSet<String>,
    ) -> Verdict {
        let message = match GameMessage::decode(delivery.payload(), &run.config.rules) {
            Ok(message) if message.header.run == run_id => message,
            Ok(message) => {
                return Verdict::Refuse(format!(
                    "refused a game of another run ({}) from worker {}",
                    message.header.run, message.header.worker
                ))
            }
            Err(error) => return Verdict::Refuse(format!("refused {error}")),
        };
        let id = message.id();
        if self.committed.iter().any(|c| c.contains(&id)) {
            return Verdict::Committed;
        }
        if taken.contains(&id) {
            return Verdict::InJournal;
        }
        let version = generation.number - 1;
        let network = message.header.network;
        let board = |r: &crate::game::Rules| (r.width, r.height);
        if network > version
            || network + run.config.selfplay.max_network_age < version
            || board(message.record.start.rules()) != board(&generation.rules)
        {
            return Verdict::TooOld;
        }
        Verdict::Take(Box::new(message))
    }

    fn collect(
        &mut self,
        run: &Run,
        generation: &Generation,
        observer: &dyn Observer,
    ) -> Result<SelfPlayOutput, ClusterError> {
        if self.joined.is_none() {
            self.join(run, observer)?;
        }
        let run_id = self.joined.as_ref().expect("joined above").0.clone();
        let number = generation.number;
        let version = number - 1;
        self.publish_network(run, &run_id, version)?;

        let wanted = run.config.selfplay.games_per_generation;
        let mut games = generation.journal.finished_games()?;
        let mut ids: HashSet<String> =
            games.iter().filter_map(|g| game_id_of(&g.record).map(str::to_string)).collect();
        // Not the count of games: embedded self-play's journal can have gaps.
        let mut free_indices =
            crate::selfplay::free_indices(games.iter().map(|g| g.index).collect());
        if !games.is_empty() {
            observer.message(&format!(
                "generation {number}: {} games were taken before the stop; taking the rest",
                games.len()
            ));
        }
        observer.selfplay_started(number, wanted);
        observer.game_finished(games.len());
        let mut row = ClusterRow {
            generation: number,
            games: 0,
            workers: String::new(),
            too_old: 0,
            repeated: 0,
            refused: 0,
            seconds: 0.0,
        };
        let started = Instant::now();
        let (mut simulations, mut said_at) = (0u64, Instant::now());
        while games.len() < wanted {
            for delivery in self.next_games(wanted - games.len(), observer) {
                let message = match self.judge(&delivery, run, &run_id, generation, &ids) {
                    Verdict::Take(message) => message,
                    Verdict::Refuse(reason) => {
                        row.refused += 1;
                        observer.message(&reason);
                        unsettled(observer, self.cluster.refuse(&delivery));
                        continue;
                    }
                    Verdict::Committed => {
                        row.repeated += 1;
                        unsettled(observer, self.cluster.acknowledge(&[delivery]));
                        continue;
                    }
                    Verdict::InJournal => {
                        // Acknowledged with the generation.
                        row.repeated += 1;
                        self.held.push(delivery);
                        continue;
                    }
                    Verdict::TooOld => {
                        row.too_old += 1;
                        unsettled(observer, self.cluster.acknowledge(&[delivery]));
                        continue;
                    }
                };
                let id = message.id();
                simulations = simulations.saturating_add(message.header.simulations);
                let record = message
                    .record
                    .with_tag(WORKER_TAG, &message.header.worker)
                    .with_tag(GAME_TAG, &id)
                    .with_tag(NETWORK_TAG, message.header.network);
                let game = FinishedGame {
                    index: free_indices.next().expect("an unbounded range"),
                    record,
                    samples: message.samples,
                    simulations: message.header.simulations,
                };
                generation.journal.save(&game)?;
                generation.save_time()?;
                ids.insert(id);
                games.push(game);
                self.held.push(delivery);
                observer.game_finished(games.len());
                said_at = Instant::now();
            }
            if said_at.elapsed() >= HEARTBEAT {
                said_at = Instant::now();
                let present = self.cluster.workers_present().map_or("?".into(), |n| n.to_string());
                observer.message(&format!(
                    "generation {number}: {} of {wanted} games; waiting for workers ({present} present; network {} is published)",
                    games.len(),
                    crate::util::generation_name(version)
                ));
            }
        }
        row.games = games.len();
        row.workers = workers_of(&games);
        row.seconds = started.elapsed().as_secs_f64();
        self.current = Some((number, ids, row));
        let since = self.last_taken.unwrap_or(started);
        self.last_taken = Some(Instant::now());
        Ok(SelfPlayOutput::of_games(games, simulations, since.elapsed().as_secs_f64()))
    }

    fn acknowledge(&mut self, run: &Run, observer: &dyn Observer) -> Result<(), ClusterError> {
        let Some((number, ids, row)) = self.current.take() else { return Ok(()) };
        let held = std::mem::take(&mut self.held);
        // Unacknowledged, the games come again and are known by their ids (or, later, as too
        // old): a failure here loses nothing and needs no stop.
        if let Err(error) = self.cluster.acknowledge(&held) {
            observer.message(&format!("generation {number}'s games not all acknowledged: {error}"));
        }
        let keep = run.config.selfplay.max_network_age as usize + 2;
        self.remember(ids, keep);
        let path = run.dir.join("cluster.csv");
        let mut rows: Vec<ClusterRow> = if path.exists() {
            read_csv(&path, |r: &ClusterRow| r.generation < number)?
        } else {
            Vec::new()
        };
        observer.message(&format!(
            "gen {number:>4}: games from {}; dropped {} of older networks, {} delivered twice, {} refused",
            row.workers, row.too_old, row.repeated, row.refused
        ));
        rows.push(row);
        write_csv(&path, &rows)?;
        Ok(())
    }
}

impl GameSource for ClusterGames {
    fn games(
        &mut self,
        run: &Run,
        generation: &Generation,
        _network: &Network,
        observer: &dyn Observer,
    ) -> Result<SelfPlayOutput, RunError> {
        self.collect(run, generation, observer).map_err(into_run_error)
    }

    fn committed(&mut self, run: &Run, observer: &dyn Observer) -> Result<(), RunError> {
        self.acknowledge(run, observer).map_err(into_run_error)
    }
}

fn into_run_error(error: ClusterError) -> RunError {
    match error {
        ClusterError::Run(error) => error,
        other => RunError::Games(Box::new(other)),
    }
}

/// Says why a game the learner does not take could not be settled with the server. Nothing is
/// lost: the server delivers it again after its wait, and it is judged again (a refused game
/// is then counted twice in cluster.csv), so the generation goes on.
fn unsettled(observer: &dyn Observer, result: Result<(), ClusterError>) {
    if let Err(error) = result {
        observer.message(&format!("{error}; the server will deliver that game again"));
    }
}

/// `name:count` for each worker whose games are among `games`, by name.
fn workers_of(games: &[FinishedGame]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for game in games {
        *counts.entry(worker_of(&game.record).unwrap_or("unknown")).or_default() += 1;
    }
    counts.iter().map(|(name, count)| format!("{name}:{count}")).collect::<Vec<_>>().join(" ")
}

/// The run's id on the server, made on its first cluster start and kept in `cluster.json`.
fn run_id(dir: &Path) -> Result<String, RunError> {
    let path = dir.join("cluster.json");
    if let Ok(text) = std::fs::read_to_string(&path) {
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| RunError::Corrupt { path: path.clone(), problem: e.to_string() })?;
        let id = value["run"]
            .as_str()
            .ok_or(RunError::Corrupt { path: path.clone(), problem: "no \"run\" id".into() })?;
        super::message::check_run_id(id).map_err(|problem| RunError::Corrupt { path, problem })?;
        return Ok(id.to_string());
    }
    let id = format!("{:016x}", rand::random::<u64>());
    write_file(&path, serde_json::json!({ "run": id }).to_string().as_bytes())?;
    Ok(id)
}

/// The id a game taken into a run has in its record, if it came from a cluster.
pub fn game_id_of(record: &GameRecord) -> Option<&str> {
    record.tag(GAME_TAG)
}

/// The worker a game came from, if it came from a cluster.
pub fn worker_of(record: &GameRecord) -> Option<&str> {
    record.tag(WORKER_TAG)
}
