//! Self-play: many games in lockstep, in one or more lanes (threads, each with its own copy of
//! the network and its share of the games). Each round every game of a lane that needs thinking
//! gathers a few leaves (rayon spreads the tree work over the lane's threads), all its leaves go
//! to its network in one batch, and the results are applied in parallel. A finished game is
//! replaced at once so the batch stays full.
//! Configured opponents (players without a network) think on a pool of their own, so that a
//! game waiting for an opponent's move holds up no round: a round would otherwise last as long
//! as the slowest opponent move in it (0.2 s for mcts-rollout as sparring partner, where a
//! GPU's round takes milliseconds).

use crate::arena::a_score;
use crate::config::SelfPlayConfig;
use crate::encode;
use crate::evaluator::{EvalRequest, Evaluator, Wdl};
use crate::game::{Color, GameRecord, Move, Position, RecordResult, Rules, Termination};
use crate::mcts::{Gathered, LeafToken, Search, SearchConfig};
use crate::nn::DeviceChoice;
use crate::players::{Limit, Player, PlayerSpec};
use crate::replay::{outcome_for, Sample, SparsePolicy};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// What a generation of self-play produced.
#[derive(Default)]
pub struct SelfPlayOutput {
    pub samples: Vec<Sample>,
    pub records: Vec<GameRecord>,
    pub stats: SelfPlayStats,
}

#[derive(Clone, Debug, Default)]
pub struct SelfPlayStats {
    pub games: usize,
    /// Plies played (every move, recorded or not).
    pub plies: usize,
    pub white_wins: usize,
    pub black_wins: usize,
    pub draws: usize,
    /// The games against each of `SelfPlayConfig::opponents`, in the config's order (then any
    /// other opponent named in games resumed from an earlier config's journal).
    pub opponents: Vec<OpponentTally>,
    /// Search simulations (network leaves and terminal visits).
    pub simulations: u64,
    pub seconds: f64,
    /// Games under way when the caller said [`Room::Abandon`], dropped unfinished.
    pub abandoned: usize,
}

impl SelfPlayStats {
    /// Games against any opponent.
    pub fn opponent_games(&self) -> usize {
        self.opponents.iter().map(|o| o.games).sum()
    }

    /// The network's points against all opponents together.
    pub fn opponent_points(&self) -> f64 {
        self.opponents.iter().map(|o| o.points).sum()
    }
}

/// The network's games against one opponent, and its points in them (a win 1, a draw 1/2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpponentTally {
    /// The opponent's spec, as its records name it.
    pub name: String,
    pub games: usize,
    pub points: f64,
}

impl OpponentTally {
    /// Points per game; None without games.
    pub fn score(&self) -> Option<f64> {
        (self.games > 0).then(|| self.points / self.games as f64)
    }
}

/// The configured opponents, shared by the games: their specs with their shares of the games,
/// and the pool their players think on.
struct OpponentSource {
    players: Vec<(PlayerSpec, f64)>,
    pool: Arc<rayon::ThreadPool>,
}

impl OpponentSource {
    /// The opponent of a new game, or None for a game of the network against itself: one draw
    /// of `rng` falls among the shares, laid end to end.
    fn draw(&self, rng: &mut StdRng) -> Option<&PlayerSpec> {
        let mut point: f64 = rng.random();
        for (spec, share) in &self.players {
            if point < *share {
                return Some(spec);
            }
            point -= share;
        }
        None
    }
}

/// The other side of a game against one of `SelfPlayConfig::opponents`.
struct Opponent {
    color: Color,
    thinking: Thinking,
    name: String,
    pool: Arc<rayon::ThreadPool>,
}

/// Where the opponent's player is: waiting for its turn, or choosing a move on the opponents'
/// pool (the player travels with the job and comes back with the move).
enum Thinking {
    Idle(Box<dyn Player>),
    Busy(mpsc::Receiver<(Box<dyn Player>, Move)>),
}

impl Opponent {
    /// The opponent's move in `position` once chosen; the first call for a position starts the
    /// choosing on the opponents' pool, and None means it is still under way.
    fn poll(&mut self, position: &Position) -> Option<Move> {
        if let Thinking::Idle(_) = self.thinking {
            let (sender, receiver) = mpsc::channel();
            let Thinking::Idle(mut player) =
                std::mem::replace(&mut self.thinking, Thinking::Busy(receiver))
            else {
                unreachable!("matched above")
            };
            let position = *position;
            self.pool.spawn(move || {
                // Its own limit (the spec's, or its kind's default), never a clock.
                let mv = player.choose(&position, Limit::default()).mv;
                // The game may have been dropped meanwhile (a stopped generation); nothing waits.
                let _ = sender.send((player, mv));
            });
        }
        let Thinking::Busy(receiver) = &self.thinking else { unreachable!("started above") };
        match receiver.try_recv() {
            Ok((player, mv)) => {
                self.thinking = Thinking::Idle(player);
                Some(mv)
            }
            Err(mpsc::TryRecvError::Empty) => None,
            // A panic in the job aborts the process (rayon's default), so the sender outlives it.
            Err(mpsc::TryRecvError::Disconnected) => {
                unreachable!("an opponent's job always answers")
            }
        }
    }

    fn is_thinking(&self) -> bool {
        matches!(self.thinking, Thinking::Busy(_))
    }
}

struct Game {
    search: Search,
    /// None in a game of the network against itself.
    opponent: Option<Opponent>,
    rng: StdRng,
    start: Position,
    moves: Vec<Move>,
    /// Positions with their search targets (policy, and the searched chances), waiting for
    /// the game's result.
    targets: Vec<(Position, SparsePolicy, Option<Wdl>)>,
    /// Whether the current move gets a full search (recorded) or a fast one.
    full: bool,
    opening_plies: u16,
    /// Plies since the last capture (or the start), for `stall_plies`.
    plies_since_capture: u16,
    simulations: u64,
}

impl Game {
    /// `opponents` are the configured opponents, if any (checked by the config: players that
    /// build without a network).
    fn new(
        rules: Rules,
        search_config: &SearchConfig,
        config: &SelfPlayConfig,
        opponents: Option<&OpponentSource>,
        seed: u64,
    ) -> Game {
        let mut rng = StdRng::seed_from_u64(seed);
        let start = Position::start(rules).expect("validated rules");
        let opening_plies = rng.random_range(0..=config.random_opening_plies);
        // Drawn only when opponents are configured, so that self-play alone plays the games
        // it always did from the same seeds.
        let opponent = opponents.and_then(|source| {
            let spec = source.draw(&mut rng)?;
            let color = if rng.random_bool(0.5) { Color::White } else { Color::Black };
            let player = spec
                .build(DeviceChoice::Cpu, rng.random())
                .expect("the config allows only opponents that build without a network");
            Some(Opponent {
                color,
                thinking: Thinking::Idle(player),
                name: spec.text.clone(),
                pool: Arc::clone(&source.pool),
            })
        });
        let mut game = Game {
            search: Search::new(start, search_config.clone()),
            opponent,
            rng,
            start,
            moves: Vec::new(),
            targets: Vec::new(),
            full: false,
            opening_plies,
            plies_since_capture: 0,
            simulations: 0,
        };
        game.pick_search_kind(config);
        // The random opening at once (up to the first search), so that a game is a function of
        // its seed alone: a game that replaces a finished one mid-round would otherwise search
        // its start position for a round first, drawing from its generator before its opening.
        game.advance(config);
        game
    }

    fn position(&self) -> &Position {
        self.search.root_position()
    }

    fn pick_search_kind(&mut self, config: &SelfPlayConfig) {
        self.full = self.rng.random_bool(config.full_search_probability);
        let visits = self.visit_target(config);
        self.search.prepare(self.full, visits, &mut self.rng);
    }

    /// The root visits the current move's search aims at: a full search's or a fast one's.
    fn visit_target(&self, config: &SelfPlayConfig) -> u32 {
        if self.full {
            config.full_visits
        } else {
            config.fast_visits
        }
    }

    fn play(&mut self, mv: Move, config: &SelfPlayConfig) {
        let before = self.position().occupied().count();
        self.moves.push(mv);
        self.search.advance(mv);
        self.plies_since_capture = if self.position().occupied().count() < before {
            0
        } else {
            self.plies_since_capture.saturating_add(1)
        };
        self.pick_search_kind(config);
    }

    /// Whether the game is stopped by `stall_plies`: that many plies without a capture.
    fn stalled(&self, config: &SelfPlayConfig) -> bool {
        config.stall_plies > 0 && self.plies_since_capture >= config.stall_plies
    }

    fn over(&self, config: &SelfPlayConfig) -> bool {
        self.search.root_is_terminal() || self.stalled(config)
    }

    /// Whether the game waits for its opponent's move (and needs no simulations meanwhile).
    fn waiting(&self) -> bool {
        self.opponent.as_ref().is_some_and(Opponent::is_thinking)
    }

    /// Plays every move that needs no more search; stops when the game needs simulations, waits
    /// for its opponent, or is over (then returns true).
    fn advance(&mut self, config: &SelfPlayConfig) -> bool {
        loop {
            if self.over(config) {
                return true;
            }
            if (self.moves.len() as u16) < self.opening_plies {
                let moves = self.position().legal_moves();
                let mv = *moves
                    .choose(&mut self.rng)
                    .expect("a position that is not terminal has moves");
                self.play(mv, config);
                continue;
            }
            if let Some(opponent) = self
                .opponent
                .as_mut()
                .filter(|o| o.color == self.search.root_position().side_to_move())
            {
                match opponent.poll(self.search.root_position()) {
                    Some(mv) => {
                        self.play(mv, config);
                        continue;
                    }
                    None => return false,
                }
            }
            let position = *self.position();
            if self.search.root_visits() < self.visit_target(config) {
                return false;
            }
            if self.full {
                let target = self.search.policy_target();
                let total: f32 = target.iter().map(|&(_, w)| w).sum();
                let policy =
                    target.iter().filter(|&&(_, w)| w > 0.0).map(|&(mv, w)| (mv, w / total));
                self.record_target(position, policy);
            }
            let temperature = if position.ply() < config.temperature_plies {
                config.temperature_start
            } else {
                config.temperature_end
            };
            let mv = self
                .search
                .choose_move(temperature, &mut self.rng)
                .expect("an expanded root has moves");
            self.play(mv, config);
        }
    }

    /// Records `position` with its policy target and the root's searched chances, for the
    /// game's result to complete.
    fn record_target(&mut self, position: Position, policy: impl Iterator<Item = (Move, f32)>) {
        let policy = policy.map(|(mv, p)| (encode::move_index(&position, mv) as u16, p)).collect();
        self.targets.push((position, policy, self.search.root_wdl()));
    }

    fn gather(&mut self, leaves: usize) -> Vec<(LeafToken, EvalRequest)> {
        let mut out = Vec::with_capacity(leaves);
        for _ in 0..leaves {
            match self.search.gather() {
                Gathered::Leaf { token, request } => out.push((token, request)),
                Gathered::Terminal => self.simulations += 1,
                Gathered::Collision => break,
            }
        }
        self.simulations += out.len() as u64;
        out
    }

    /// The record (the network named `player`) and the samples of a finished game.
    fn finish(self, player: &str) -> (GameRecord, Vec<Sample>) {
        let (white, black) = match &self.opponent {
            Some(Opponent { color: Color::White, name, .. }) => (name.as_str(), player),
            Some(Opponent { color: Color::Black, name, .. }) => (player, name.as_str()),
            None => (player, player),
        };
        let mut record = GameRecord::new(white, black, self.start, self.moves);
        if record.termination == Termination::Unfinished {
            record = record
                .with_tag("Stopped", format!("no capture in {} plies", self.plies_since_capture));
        }
        let scored = target_result(&record);
        let samples = self
            .targets
            .into_iter()
            .map(|(position, policy, searched)| Sample {
                outcome: outcome_for(scored, position.side_to_move()),
                position,
                policy,
                searched,
            })
            .collect();
        (record, samples)
    }
}

/// The result the value targets of `record` learn: its own, except for a game cut short (by
/// the ply cap, or stopped unfinished by `stall_plies`), which is a draw. (Scoring such games
/// for the side with more pieces was tried and dropped: it did not stop the drift to the cap,
/// and made caution pay; docs/methods.md.)
pub fn target_result(record: &GameRecord) -> RecordResult {
    match record.termination {
        Termination::PlyCap | Termination::Unfinished => RecordResult::Draw,
        _ => record.result,
    }
}

/// A finished self-play game: its index in the generation (which fixes its seed), its record
/// and its training samples.
#[derive(Clone, Debug, PartialEq)]
pub struct FinishedGame {
    pub index: usize,
    pub record: GameRecord,
    pub samples: Vec<Sample>,
    /// Its search simulations (0 for a game read back from a journal).
    pub simulations: u64,
}

/// The name self-play records give the network that played: `self-play:gen-N`, N the
/// generation of its checkpoint.
pub fn network_name(checkpoint_generation: u32) -> String {
    format!("{NETWORK_NAME_PREFIX}{}", crate::util::generation_name(checkpoint_generation))
}

/// How every [`network_name`] begins, and no opponent's spec does.
const NETWORK_NAME_PREFIX: &str = "self-play:";

impl SelfPlayOutput {
    /// The output of `games` played elsewhere (by a cluster's workers, with networks of
    /// several generations), with the simulations and seconds they took.
    pub fn of_games(games: Vec<FinishedGame>, simulations: u64, seconds: f64) -> SelfPlayOutput {
        let mut output = SelfPlayOutput::default();
        for game in games {
            output.add(game, &|name| name.starts_with(NETWORK_NAME_PREFIX));
        }
        output.stats.simulations = simulations;
        output.stats.seconds = seconds;
        output
    }

    /// Counts `game` in, except for its search simulations (unknown for a game resumed from
    /// disk, and not this invocation's work). `network` tells the network's name in the
    /// records: a game where only one side has it was against the opponent named on the other.
    fn add(&mut self, game: FinishedGame, network: &dyn Fn(&str) -> bool) {
        self.stats.plies += game.record.moves.len();
        let against = match (network(&game.record.white), network(&game.record.black)) {
            (true, false) => Some((true, &game.record.black)),
            (false, true) => Some((false, &game.record.white)),
            _ => None,
        };
        if let Some((network_is_white, opponent)) = against {
            let index = match self.stats.opponents.iter().position(|o| o.name == *opponent) {
                Some(index) => index,
                None => {
                    self.stats
                        .opponents
                        .push(OpponentTally { name: opponent.clone(), ..OpponentTally::default() });
                    self.stats.opponents.len() - 1
                }
            };
            let tally = &mut self.stats.opponents[index];
            tally.games += 1;
            tally.points += a_score(&game.record, network_is_white);
        }
        match game.record.result {
            RecordResult::WhiteWins => self.stats.white_wins += 1,
            RecordResult::BlackWins => self.stats.black_wins += 1,
            _ => self.stats.draws += 1,
        }
        self.records.push(game.record);
        self.samples.extend(game.samples);
        self.stats.games += 1;
    }
}

/// Where a generation's self-play stands, reported about once a second while it plays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelfPlayProgress {
    pub games_done: usize,
    pub games_total: usize,
    /// The games this invocation plays: the total less those an interrupted one finished.
    pub games_to_play: usize,
    /// Plies played by this invocation, in finished games and in games under way.
    pub plies: usize,
    /// Simulations searched by this invocation.
    pub simulations: u64,
    pub seconds: f64,
    /// The plies a game is expected to take: the mean of this invocation's finished games,
    /// else the ply cap (a fresh network's games in lockstep all run to it).
    pub plies_per_game: f64,
}

impl SelfPlayProgress {
    pub fn simulations_per_second(&self) -> f64 {
        self.simulations as f64 / self.seconds.max(1e-9)
    }

    /// The time the generation has left at the pace so far, once a ply has been played; None
    /// while games remain that have already played more plies than expected of all of them
    /// (there is no saying how much longer they will take), and where the expected length
    /// gives no time a duration holds (a run's metrics.csv may say anything of its last games).
    pub fn time_left(&self) -> Option<Duration> {
        let expected = self.games_to_play as f64 * self.plies_per_game;
        let plies_left = expected - self.plies as f64;
        let unknown = plies_left <= 0.0 && self.games_done < self.games_total;
        let seconds = (self.seconds / self.plies as f64 * plies_left).max(0.0);
        (self.plies > 0 && !unknown).then(|| Duration::try_from_secs_f64(seconds).ok()).flatten()
    }
}

/// How often [`play_games`] reports its progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How often a lane tells the coordinating thread where its games under way stand.
const LANE_REPORT_EVERY: Duration = Duration::from_millis(250);

/// Plays `config.games_per_generation` games with the `lanes`' evaluators guiding every search.
/// Each lane is a thread with its own evaluator (a copy of the network, with its own cache)
/// and its share of `parallel_games` in lockstep; with several lanes, each lane's network passes
/// and tree work take their share of the threads (see [`play_games_while`]). `seed` fixes every
/// game's randomness, by its index, whichever lane plays it. `resumed` holds games of this
/// generation that an interrupted invocation finished: they count in the output and are not
/// played again. `on_game` is given every game as it finishes, with the number done so far; an
/// error from it stops the generation and is returned. `on_progress` hears where the
/// generation stands about once a second. The output holds the games in the order of their
/// indices, whatever order they finished in (which depends on the lanes' and the opponents'
/// timing, and on where an interruption fell).
#[allow(clippy::too_many_arguments)]
pub fn play_games<V: Evaluator + Send, E>(
    lanes: &mut [V],
    rules: Rules,
    search: &SearchConfig,
    config: &SelfPlayConfig,
    seed: u64,
    player_name: &str,
    resumed: Vec<FinishedGame>,
    on_game: &mut dyn FnMut(&FinishedGame, usize) -> Result<(), E>,
    on_progress: &mut dyn FnMut(&SelfPlayProgress),
) -> Result<SelfPlayOutput, E> {
    let session = Session { rules, search, config, seed, player_name };
    play_games_while(lanes, &session, resumed, &|| Room::Games(usize::MAX), on_game, on_progress)
}

/// The games a caller of [`play_games_while`] still wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Room {
    /// At most this many under way (begun here and not finished): with 0, those under way are
    /// finished and no others begun.
    Games(usize),
    /// No more, and not those under way either: they are dropped unfinished (a cluster worker's
    /// games of a network the learner no longer takes).
    Abandon,
}

/// The indices further games of a generation may take, lowest first: those `held` (the saved
/// games' indices) leaves free. Resumed self-play deals these; a stop can leave gaps, and games
/// taken from the cluster fill them, which keeps every index below the generation's number of
/// games, as self-play resuming the journal expects.
pub fn free_indices(held: std::collections::BTreeSet<usize>) -> impl Iterator<Item = usize> {
    (0..).filter(move |index| !held.contains(index))
}

/// What every game of a [`play_games_while`] shares: the rules, the search and self-play
/// settings, the seed its games' seeds come from, and the network's name in their records.
pub struct Session<'a> {
    pub rules: Rules,
    pub search: &'a SearchConfig,
    pub config: &'a SelfPlayConfig,
    pub seed: u64,
    pub player_name: &'a str,
}

/// [`play_games`], except that a new game starts only while fewer games are under way (begun
/// here and not finished) than `room` says, and all stop when it says [`Room::Abandon`]. A
/// cluster worker says 0 when a newer network appears, and loses no game it had begun that the
/// learner can still take; it keeps the games it has under way to its share of what the learner
/// still takes, since more would wait until they were too old; and it abandons those that would
/// come too old. `room` is asked at the start, after every finished game and about once a
/// second. A finished game holds its place until `on_game` has taken it and `room` has been
/// asked again, so no game begins on an answer that had not yet counted an earlier finish.
///
/// The calling thread coordinates: it hands the lanes the games' indices, hears of every
/// finished game, and calls `room`, `on_game` and `on_progress`. Of the threads rayon
/// has (the process's, by default), each lane gets an equal share for its tree work and its
/// network passes; libtorch's thread count is set to that share while the lanes play, and back
/// to what it was after. One lane with every thread alternates tree work and network passes on all of
/// them; a lane per thread keeps every core busy without threads that wait for each other.
pub fn play_games_while<V: Evaluator + Send, E>(
    lanes: &mut [V],
    session: &Session,
    resumed: Vec<FinishedGame>,
    room: &dyn Fn() -> Room,
    on_game: &mut dyn FnMut(&FinishedGame, usize) -> Result<(), E>,
    on_progress: &mut dyn FnMut(&SelfPlayProgress),
) -> Result<SelfPlayOutput, E> {
    assert!(!lanes.is_empty(), "self-play needs at least one lane");
    let Session { rules, config, player_name, .. } = *session;
    let started_at = Instant::now();
    let mut reported_at = started_at;
    let total = config.games_per_generation;
    let (mut finished_plies, mut finished_here) = (0, 0);
    let done: std::collections::BTreeSet<usize> = resumed.iter().map(|game| game.index).collect();
    let mut simulations = 0;
    let mut finished_games = resumed;
    let opponents = (!config.opponents.is_empty()).then(|| OpponentSource {
        players: config
            .opponents
            .iter()
            .map(|o| (o.spec().expect("Config::validate checks the opponents"), o.share))
            .collect(),
        // As many threads as the tree work's; the operating system shares the cores between
        // the two pools.
        pool: Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(rayon::current_num_threads())
                .thread_name(|i| format!("opponent-{i}"))
                .build()
                .expect("the operating system starts threads for the opponents' pool"),
        ),
    });
    let games_to_play = total - done.iter().filter(|&&index| index < total).count();
    // Lazily: a cluster worker plays an endless generation.
    let to_play = free_indices(done).take_while(move |&index| index < total);
    let dealer = Dealer {
        next: std::sync::Mutex::new(Box::new(to_play)),
        room: AtomicUsize::new(0),
        under_way: AtomicUsize::new(0),
        unheard: AtomicUsize::new(0),
        stopped: AtomicBool::new(false),
    };
    let mut abandoning = dealer.listen(room());
    let mut room_asked_at = Instant::now();
    // Games dropped unfinished, or finished after the word to abandon them.
    let mut abandoned = 0;

    let threads = rayon::current_num_threads();
    let lane_count = lanes.len();
    let lane_threads = (threads / lane_count).max(1);
    let pools: Vec<rayon::ThreadPool> = (0..lane_count)
        .map(|lane| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(lane_threads)
                .thread_name(move |i| format!("self-play-{lane}-{i}"))
                .build()
                .expect("the operating system starts threads for self-play")
        })
        .collect();
    // libtorch reads its thread count on each new thread's first operation: the lanes' threads
    // are new, so they take this share.
    let libtorch_threads = tch::get_num_threads().max(1) as usize;
    crate::nn::configure_threads(lane_threads);
    let (sender, events) = mpsc::channel();
    // Each lane's share of the games in lockstep, and its first games, dealt here in lane order
    // before any lane starts, so that every lane has its games however late its thread starts.
    let mut starts: Vec<(usize, Vec<usize>)> = Vec::with_capacity(lane_count);
    for lane in 0..lane_count {
        let parallel = (config.parallel_games / lane_count
            + usize::from(lane < config.parallel_games % lane_count))
        .max(1);
        starts.push((parallel, dealer.deal_up_to(parallel).0));
    }
    let outcome = std::thread::scope(|scope| {
        let lanes = lanes.iter_mut().zip(&pools).zip(starts);
        for (number, ((evaluator, pool), (parallel, first_games))) in lanes.enumerate() {
            let play = Lane {
                number,
                parallel,
                first_games,
                session,
                opponents: opponents.as_ref(),
                dealer: &dealer,
                events: sender.clone(),
            };
            scope.spawn(move || pool.install(|| play.run(evaluator)));
        }
        drop(sender);
        let mut under_way = vec![UnderWay::default(); lane_count];
        let mut outcome = Ok(());
        loop {
            if !abandoning && outcome.is_ok() && room_asked_at.elapsed() >= PROGRESS_EVERY {
                room_asked_at = Instant::now();
                abandoning = dealer.listen(room());
            }
            match events.recv_timeout(PROGRESS_EVERY) {
                Ok(LaneEvent::Finished { lane, game, under_way: rest }) => {
                    under_way[lane] = rest;
                    if outcome.is_err() || abandoning {
                        // The generation stopped: games finished since do not count.
                        abandoned += usize::from(abandoning);
                    } else {
                        simulations += game.simulations;
                        finished_plies += game.record.moves.len();
                        finished_here += 1;
                        match on_game(&game, finished_games.len() + 1) {
                            Err(error) => {
                                dealer.stopped.store(true, Ordering::Relaxed);
                                outcome = Err(error);
                            }
                            Ok(()) => {
                                finished_games.push(*game);
                                room_asked_at = Instant::now();
                                abandoning = dealer.listen(room());
                            }
                        }
                    }
                    dealer.heard_finish();
                }
                Ok(LaneEvent::Dropped(games)) => abandoned += games,
                Ok(LaneEvent::UnderWay { lane, under_way: now }) => under_way[lane] = now,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break, // every lane is done
            }
            if reported_at.elapsed() >= PROGRESS_EVERY && outcome.is_ok() && !abandoning {
                reported_at = Instant::now();
                let ply_cap = f64::from(rules.ply_cap.unwrap_or(crate::config::DEFAULT_PLY_CAP));
                on_progress(&SelfPlayProgress {
                    games_done: finished_games.len(),
                    games_total: total,
                    games_to_play,
                    plies: finished_plies + under_way.iter().map(|u| u.plies).sum::<usize>(),
                    simulations: simulations + under_way.iter().map(|u| u.simulations).sum::<u64>(),
                    seconds: started_at.elapsed().as_secs_f64(),
                    plies_per_game: if finished_here > 0 {
                        finished_plies as f64 / finished_here as f64
                    } else {
                        ply_cap
                    },
                });
            }
        }
        outcome
    });
    crate::nn::configure_threads(libtorch_threads);
    outcome?;
    finished_games.sort_by_key(|game| game.index);
    let mut output = SelfPlayOutput::default();
    // Every configured opponent has its tally, with or without games.
    output.stats.opponents = opponents
        .iter()
        .flat_map(|source| &source.players)
        .map(|(spec, _)| OpponentTally { name: spec.text.clone(), ..OpponentTally::default() })
        .collect();
    for game in finished_games {
        output.add(game, &|name| name == player_name);
    }
    output.stats.simulations = simulations;
    output.stats.seconds = started_at.elapsed().as_secs_f64();
    output.stats.abandoned = abandoned;
    Ok(output)
}

/// Hands the lanes the indices of the games to play, while there is room for more.
struct Dealer {
    next: std::sync::Mutex<Box<dyn Iterator<Item = usize> + Send>>,
    /// What `room` said last: how many games may be under way.
    room: AtomicUsize,
    /// Games dealt whose finish the coordinating thread has not yet heard: those in play and
    /// those finished on their way to it.
    under_way: AtomicUsize,
    /// Of those, the finished ones on their way: `room` has not yet answered for them.
    unheard: AtomicUsize,
    /// Set when the generation stops early: the lanes drop their games.
    stopped: AtomicBool,
}

/// What a lane asking for a game gets.
enum Deal {
    Game(usize),
    /// No room now, but a finished game is on its way to the coordinating thread, whose next
    /// word on the room may make some.
    Later,
    /// No room and no word on its way, or nothing more to play.
    Nothing,
}

impl Dealer {
    fn deal(&self) -> Deal {
        if self.stopped() {
            return Deal::Nothing;
        }
        // Read before the room: a finish heard after this read has already had its answer
        // stored (see `heard_finish`), so "no room and nothing unheard" is final.
        let unheard = self.unheard.load(Ordering::Acquire);
        let room = self.room.load(Ordering::Acquire);
        let taken = self
            .under_way
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < room).then_some(n + 1));
        if taken.is_err() {
            return if unheard > 0 { Deal::Later } else { Deal::Nothing };
        }
        match self.next.lock().expect("no lane panics holding the indices").next() {
            Some(index) => Deal::Game(index),
            None => {
                self.under_way.fetch_sub(1, Ordering::AcqRel);
                Deal::Nothing
            }
        }
    }

    /// Up to `count` games, and whether room for more may come once the coordinating thread has
    /// heard of the finishes on their way ([`Deal::Later`]).
    fn deal_up_to(&self, count: usize) -> (Vec<usize>, bool) {
        let mut indices = Vec::with_capacity(count);
        while indices.len() < count {
            match self.deal() {
                Deal::Game(index) => indices.push(index),
                Deal::Later => return (indices, true),
                Deal::Nothing => break,
            }
        }
        (indices, false)
    }

    /// Takes what `room` said: the room for games under way, or, for [`Room::Abandon`], the stop
    /// of every game (then true).
    fn listen(&self, room: Room) -> bool {
        match room {
            Room::Games(games) => self.room.store(games, Ordering::Release),
            Room::Abandon => self.stopped.store(true, Ordering::Relaxed),
        }
        room == Room::Abandon
    }

    /// A lane's game is over: on its way to the coordinating thread, it still holds its room.
    fn finished(&self) {
        self.unheard.fetch_add(1, Ordering::AcqRel);
    }

    /// The coordinating thread has taken a finished game and asked for the room since: the game
    /// no longer holds any.
    fn heard_finish(&self) {
        self.under_way.fetch_sub(1, Ordering::AcqRel);
        self.unheard.fetch_sub(1, Ordering::AcqRel);
    }

    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }
}

/// What a lane tells the coordinating thread.
enum LaneEvent {
    /// A game finished, and what the lane has under way without it.
    Finished { lane: usize, game: Box<FinishedGame>, under_way: UnderWay },
    /// The lane stopped with this many games unfinished, dropped.
    Dropped(usize),
    /// What the lane has under way now (every quarter second, and none when it ends).
    UnderWay { lane: usize, under_way: UnderWay },
}

/// The plies played and simulations searched so far in a lane's games under way.
#[derive(Clone, Copy, Debug, Default)]
struct UnderWay {
    plies: usize,
    simulations: u64,
}

impl UnderWay {
    fn of(games: &[(usize, Game)]) -> UnderWay {
        UnderWay {
            plies: games.iter().map(|(_, g)| g.moves.len()).sum(),
            simulations: games.iter().map(|(_, g)| g.simulations).sum(),
        }
    }
}

/// One thread of self-play: its games in lockstep, their leaves in one batch to its evaluator.
struct Lane<'a> {
    number: usize,
    parallel: usize,
    /// The indices of the games it begins with.
    first_games: Vec<usize>,
    session: &'a Session<'a>,
    opponents: Option<&'a OpponentSource>,
    dealer: &'a Dealer,
    events: mpsc::Sender<LaneEvent>,
}

impl Lane<'_> {
    fn run(&self, evaluator: &mut dyn Evaluator) {
        let Session { rules, search, config, seed, player_name } = *self.session;
        let new_game = |index: usize| {
            let seed = seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            (index, Game::new(rules, search, config, self.opponents, seed))
        };
        let mut games: Vec<(usize, Game)> =
            self.first_games.iter().map(|&index| new_game(index)).collect();
        let mut reported_at = Instant::now();
        // The coordinating thread is gone only when the generation stopped: nothing to tell.
        let tell = |event| {
            let _ = self.events.send(event);
        };
        let fill = |games: &mut Vec<(usize, Game)>| -> bool {
            let (indices, later) = self.dealer.deal_up_to(self.parallel - games.len());
            games.extend(indices.into_iter().map(new_game));
            later
        };
        // Whether the free places may get games once the coordinating thread has had its word.
        let mut room_later = fill(&mut games);
        while !self.dealer.stopped() {
            if games.is_empty() {
                if !room_later {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
                room_later = fill(&mut games);
                continue;
            }
            let finished: Vec<bool> =
                games.par_iter_mut().map(|(_, g)| g.advance(config)).collect();
            // What is under way once each finished game has left, told with the game: a game's
            // plies then count once at every moment, among the finished or among those in play.
            let mut under_way = UnderWay::of(&games);
            // Replace finished games in place, so the batch keeps its order and stays full.
            for i in (0..games.len()).rev() {
                if !finished[i] {
                    continue;
                }
                self.dealer.finished();
                let (index, game) = match self.dealer.deal() {
                    Deal::Game(next) => std::mem::replace(&mut games[i], new_game(next)),
                    Deal::Later | Deal::Nothing => games.swap_remove(i),
                };
                under_way.plies -= game.moves.len();
                under_way.simulations -= game.simulations;
                let game_simulations = game.simulations;
                let (record, samples) = game.finish(player_name);
                tell(LaneEvent::Finished {
                    lane: self.number,
                    game: Box::new(FinishedGame {
                        index,
                        record,
                        samples,
                        simulations: game_simulations,
                    }),
                    under_way,
                });
            }
            // Room may have grown since a place was given up.
            room_later = fill(&mut games);
            if games.is_empty() {
                continue;
            }
            if reported_at.elapsed() >= LANE_REPORT_EVERY {
                reported_at = Instant::now();
                tell(LaneEvent::UnderWay { lane: self.number, under_way: UnderWay::of(&games) });
            }
            if games.iter().all(|(_, g)| g.over(config)) {
                continue; // fresh games may need advancing before they can search
            }
            // A game waiting for its opponent does not search (the tree would grow without bound
            // under the opponent's position).
            let gathered: Vec<Vec<(LeafToken, EvalRequest)>> = games
                .par_iter_mut()
                .map(|(_, g)| {
                    if g.over(config) || g.waiting() {
                        Vec::new()
                    } else {
                        g.gather(config.leaves_per_game)
                    }
                })
                .collect();
            let requests: Vec<EvalRequest> =
                gathered.iter().flatten().map(|(_, r)| r.clone()).collect();
            if requests.is_empty() {
                // Every game in play waits for its opponent.
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            let mut evaluations = evaluator.evaluate(&requests).into_iter();
            let per_game: Vec<Vec<_>> = gathered
                .into_iter()
                .map(|leaves| {
                    leaves
                        .into_iter()
                        .map(|(t, r)| {
                            (t, r, evaluations.next().expect("one evaluation per request"))
                        })
                        .collect()
                })
                .collect();
            games.par_iter_mut().zip(per_game).for_each(|((_, game), leaves)| {
                for (token, request, evaluation) in leaves {
                    let Game { search, rng, .. } = game;
                    search.apply(token, request, evaluation, rng);
                }
            });
        }
        if !games.is_empty() {
            tell(LaneEvent::Dropped(games.len()));
        }
        tell(LaneEvent::UnderWay { lane: self.number, under_way: UnderWay::default() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn free_indices_fill_the_gaps_first() {
        let free: Vec<usize> = free_indices(BTreeSet::from([0, 1, 3, 6])).take(4).collect();
        assert_eq!(free, [2, 4, 5, 7]);
        assert_eq!(free_indices(BTreeSet::new()).next(), Some(0));
    }
}
