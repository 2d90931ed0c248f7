//! A network with PUCT search: `net:PATH`, by simulations or time per move; with `sims=1` it
//! plays the raw policy (the most likely move).

use super::{Decision, Limit, Player, PlayerError};
use crate::evaluator::{CachedEvaluator, Evaluator};
use crate::game::Position;
use crate::mcts::{Search, SearchConfig};
use crate::nn::{Network, Precision};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::path::Path;
use std::time::Instant;

pub const DEFAULT_LIMIT: Limit = Limit { nodes: Some(400), depth: None, time: None };

/// Leaves evaluated per network call unless a spec says (`leaves=N`): enough to amortise
/// libtorch's per-call cost, few enough that virtual loss does not blur a small search.
pub const DEFAULT_LEAVES_PER_CALL: usize = 8;

pub struct NetPlayer {
    name: String,
    evaluator: CachedEvaluator<Network>,
    search_config: SearchConfig,
    /// The tree of the last search, kept to reuse when the game continues from it.
    search: Option<Search>,
    limit: Limit,
    /// Leaves gathered (under virtual loss) for each network call.
    leaves_per_call: usize,
    rng: StdRng,
}

impl NetPlayer {
    pub fn new(
        network: Network,
        name: String,
        limit: Limit,
        search_config: SearchConfig,
        seed: u64,
    ) -> NetPlayer {
        NetPlayer {
            name,
            evaluator: CachedEvaluator::new(network, 100_000),
            search_config,
            search: None,
            limit,
            leaves_per_call: DEFAULT_LEAVES_PER_CALL,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// Gathers `leaves` leaves for each network call instead of the default
    /// [`DEFAULT_LEAVES_PER_CALL`] (at least one).
    pub fn with_leaves_per_call(mut self, leaves: usize) -> NetPlayer {
        self.leaves_per_call = leaves.max(1);
        self
    }

    /// The network in `path`, searching in `precision`.
    pub fn load(
        path: &Path,
        device: tch::Device,
        precision: Precision,
        limit: Limit,
        search_config: SearchConfig,
        seed: u64,
    ) -> Result<NetPlayer, PlayerError> {
        let network = Network::load(path, device)?.0.into_inference(precision);
        let name = format!("net:{}", path.display());
        Ok(NetPlayer::new(network, name, limit, search_config, seed))
    }

    /// The search tree for `position`: the previous tree when `position` is its root or one
    /// move past it (the opponent's reply to our last move), else a new one.
    fn tree_for(&mut self, position: &Position) -> Search {
        if let Some(mut search) = self.search.take() {
            if search.root_position() == position {
                return search;
            }
            let root = *search.root_position();
            if let Some(mv) =
                root.legal_moves().into_iter().find(|&mv| root.play_unchecked(mv) == *position)
            {
                search.advance(mv);
                return search;
            }
        }
        Search::new(*position, self.search_config.clone())
    }
}

impl Player for NetPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, seed: u64) {
        self.search = None;
        self.evaluator.clear();
        self.rng = StdRng::seed_from_u64(seed);
    }

    fn choose(&mut self, position: &Position, limit: Limit) -> Decision {
        let mut limit = limit.or(self.limit);
        if limit.nodes.is_none() && limit.time.is_none() {
            limit.nodes = DEFAULT_LIMIT.nodes; // a depth means nothing to MCTS
        }
        let mut search = self.tree_for(position);
        let started = Instant::now();
        let before = search.root_visits();
        let target = |visits: u32| {
            limit.nodes.map_or(u32::MAX, |n| visits.saturating_add(n.min(u32::MAX as u64) as u32))
        };
        let goal = target(before);
        // The root is expanded first, so even `sims=1` has priors to play from.
        let evaluator: &mut dyn Evaluator = &mut self.evaluator;
        search.run(evaluator, 1, 1, &mut self.rng);
        while search.root_visits() < goal && limit.time.is_none_or(|t| started.elapsed() < t) {
            // On a clock, one network call between readings of it, so the search overruns its
            // time by a few milliseconds, not by a chunk of simulations (a chunk of 64 was 0.2 s
            // for the 8x96 agent in f32, doubling a 0.2 s move).
            let step = if limit.time.is_some() {
                self.leaves_per_call as u32
            } else {
                goal - search.root_visits()
            };
            let next = search.root_visits().saturating_add(step).min(goal);
            search.run(evaluator, next, self.leaves_per_call, &mut self.rng);
        }
        let summary = search.summary();
        let mv = search
            .choose_move(0.0, &mut self.rng)
            .expect("choose is only asked in positions with a legal move");
        let mut principal_variation = search.principal_variation(16);
        if principal_variation.first() != Some(&mv) {
            principal_variation = vec![mv]; // a tie on visits, broken the other way by prior
        }
        let nodes = (search.root_visits() - before) as u64;
        let decision =
            Decision { mv, value: Some(summary.value), nodes, depth: None, principal_variation };
        search.advance(mv);
        self.search = Some(search);
        decision
    }
}

/// The rules a network file says it was trained for (its `rules` metadata), if it says.
pub fn trained_rules(path: &Path) -> Result<Option<crate::game::Rules>, PlayerError> {
    Ok(rules_in(&crate::nn::tensor_file::TensorFile::read(path, crate::nn::FORMAT)?))
}

/// The `rules` metadata of a network file already read, if it has any that parse.
fn rules_in(file: &crate::nn::tensor_file::TensorFile) -> Option<crate::game::Rules> {
    file.metadata.get("rules").and_then(|text| serde_json::from_str(text).ok())
}

/// Refuses a network player for games it was not built for: a network for the standard game
/// has no input plane for stones nor policy plane for placements, and one for the stones
/// variant has only learnt games with stones. (Board sizes and the other options are fine:
/// the network is fully convolutional.)
pub fn check_net_rules(path: &Path, rules: &crate::game::Rules) -> Result<(), PlayerError> {
    let file = crate::nn::tensor_file::TensorFile::read(path, crate::nn::FORMAT)?;
    let config: crate::nn::model::NetConfig = serde_json::from_str(file.meta("net_config")?)
        .map_err(|e| file.format_error(format!("bad net_config: {e}")))?;
    if config.stones != rules.stones {
        let game =
            |stones: bool| if stones { "the stones variant" } else { "the game without stones" };
        return Err(PlayerError::WrongRules {
            path: path.to_path_buf(),
            trained: game(config.stones).into(),
            asked: game(rules.stones).into(),
        });
    }
    Ok(())
}

/// The file in a folder of agents that names each board's default agent.
const DEFAULTS_FILE: &str = "defaults.toml";

/// The agent in `dir` that `play`, `serve` and `engine` use for a game on a `width` x `height`
/// board (with stones or not) when none is named: the one `dir/defaults.toml` names for that
/// board, else the best rated of the `*.safetensors` network files trained for it, by their
/// `elo` metadata, then by name. (Ratings from different runs are on different scales, so
/// where a board has agents from several runs the defaults file says which one plays.) A file
/// that names no rules counts as trained for the standard board. A defaults file that does
/// not parse, or names a missing agent or one trained for another board, is an error.
pub fn default_agent(
    dir: &Path,
    width: u8,
    height: u8,
    stones: bool,
) -> Result<Option<std::path::PathBuf>, PlayerError> {
    if let Some(path) = named_default(dir, width, height, stones)? {
        return Ok(Some(path));
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(None) };
    let mut agents: Vec<(f64, std::path::PathBuf)> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "safetensors"))
        .filter_map(|path| {
            let file = crate::nn::tensor_file::TensorFile::read(&path, crate::nn::FORMAT).ok()?;
            let rules = rules_in(&file).unwrap_or_default();
            if (rules.width, rules.height, rules.stones) != (width, height, stones) {
                return None;
            }
            let elo =
                file.metadata.get("elo").and_then(|e| e.parse().ok()).unwrap_or(f64::NEG_INFINITY);
            Some((elo, path))
        })
        .collect();
    agents.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(&a.1)));
    Ok(agents.pop().map(|(_, path)| path))
}

/// The agent `dir/defaults.toml` names for the board, keyed `WIDTHxHEIGHT` (`+stones` added
/// for the stones variant); None if there is no such file or it names none for this board.
fn named_default(
    dir: &Path,
    width: u8,
    height: u8,
    stones: bool,
) -> Result<Option<std::path::PathBuf>, PlayerError> {
    let defaults = dir.join(DEFAULTS_FILE);
    let Ok(text) = std::fs::read_to_string(&defaults) else { return Ok(None) };
    let problem = |problem: String| PlayerError::Defaults { path: defaults.clone(), problem };
    let table: std::collections::BTreeMap<String, String> =
        toml::from_str(&text).map_err(|e| problem(e.to_string()))?;
    let board = board_key(width, height, stones);
    let Some(name) = table.get(&board) else { return Ok(None) };
    let path = dir.join(name);
    let rules = trained_rules(&path)
        .map_err(|e| problem(format!("its agent for {board}: {e}")))?
        .unwrap_or_default();
    if (rules.width, rules.height, rules.stones) != (width, height, stones) {
        return Err(problem(format!(
            "{name}, named for {board}, was trained for {}",
            board_key(rules.width, rules.height, rules.stones)
        )));
    }
    Ok(Some(path))
}

/// A board's key in the defaults file: `14x12`, or `14x12+stones` for the stones variant.
fn board_key(width: u8, height: u8, stones: bool) -> String {
    format!("{width}x{height}{}", if stones { "+stones" } else { "" })
}
