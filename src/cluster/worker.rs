//! A worker: plays self-play games with the run's newest network, with the same code as the
//! trainer's own self-play, and publishes each as it finishes. When a newer network appears
//! it starts no new game, finishes those under way while the learner can still take them
//! (abandoning them once it cannot), and goes on with the new one. It needs no shared
//! filesystem, and keeps trying (saying why) while the server cannot be reached.

use super::message::{GameHeader, GameMessage, NetworkNotice};
use super::{Cluster, ClusterError, ClusterOptions};
use crate::config::Config;
use crate::game::Rules;
use crate::nn::{configure_threads, DeviceChoice, Network, Precision};
use crate::selfplay::{self, FinishedGame, Room, SelfPlayProgress, Session};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a worker is told on its command line.
#[derive(Clone, Debug, Default)]
pub struct WorkerSettings {
    /// The name its games carry (default: the host's name).
    pub name: String,
    /// Override the run config's device, precision and thread count.
    pub device: Option<DeviceChoice>,
    pub precision: Option<Precision>,
    pub threads: Option<usize>,
    /// Leave after publishing this many games (none: play until stopped).
    pub games: Option<u64>,
}

/// What the watch of new networks has seen.
#[derive(Clone)]
enum Watched {
    Nothing,
    Notice(NetworkNotice),
    /// The watch ended (the connection was closed): networks to come would go unseen.
    Ended,
}

/// How often a worker says where it stands.
const REPORT_EVERY: Duration = Duration::from_secs(20);

/// Runs a worker until the process is stopped or it has published the games it was asked for,
/// trying again after any error: a server that is down or restarting, wrong credentials (which
/// an operator may fix while it waits), a learner not yet started.
pub fn run(options: &ClusterOptions, settings: &WorkerSettings) {
    // A nonce per process, so that a restarted worker's game ids never repeat its earlier ones.
    let id = format!("{}-{:08x}", settings.name, rand::random::<u32>());
    let mut published = 0;
    let mut delay = Duration::from_secs(1);
    loop {
        let error = match work(options, settings, &id, &mut published) {
            Ok(()) => {
                eprintln!(
                    "worker {}: published the games asked for ({published}); leaving",
                    settings.name
                );
                return;
            }
            Err(error) => error,
        };
        let wait = if error.is_transient() { delay } else { delay.max(Duration::from_secs(30)) };
        eprintln!("worker {}: {error}; trying again in {} s", settings.name, wait.as_secs());
        std::thread::sleep(wait);
        delay = (delay * 2).min(Duration::from_secs(30));
    }
}

/// One connection's work: networks one after another, until something fails or the games asked
/// for are published.
fn work(
    options: &ClusterOptions,
    settings: &WorkerSettings,
    id: &str,
    published: &mut u64,
) -> Result<(), ClusterError> {
    let cluster = Cluster::connect(options)?;
    eprintln!("worker {}: connected to {}", settings.name, cluster.url());
    cluster.announce_worker(id)?;
    // The newest notice the server has sent since the watch began (in the order published).
    let newest: Arc<Mutex<Watched>> = Arc::new(Mutex::new(Watched::Nothing));
    let seen = Arc::clone(&newest);
    cluster.watch_networks(move |notice| {
        *seen.lock().expect("the lock is never poisoned") = match notice {
            Some(notice) => Watched::Notice(notice),
            None => Watched::Ended,
        };
    })?;
    let mut said_at = Instant::now();
    loop {
        if settings.games.is_some_and(|games| *published >= games) {
            return Ok(());
        }
        let (Some(notice), Some(run)) = (cluster.newest_network()?, cluster.run()?) else {
            if said_at.elapsed() >= REPORT_EVERY {
                said_at = Instant::now();
                eprintln!("worker {}: waiting for the learner to publish a network", settings.name);
            }
            std::thread::sleep(Duration::from_secs(1));
            continue;
        };
        if notice.run != run.run {
            // The learner is between runs: its config and network come one after the other.
            std::thread::sleep(Duration::from_secs(1));
            continue;
        }
        {
            let mut watched = newest.lock().expect("the lock is never poisoned");
            match *watched {
                Watched::Ended => return Err(ClusterError::WatchEnded),
                // One published before the watch began is the newest until it sees another.
                Watched::Nothing => *watched = Watched::Notice(notice.clone()),
                Watched::Notice(_) => {}
            }
        }
        let mut config = run.config()?;
        config.run.override_device(settings.device, settings.precision);
        // The run's `[run] threads` is the learner's machine's: a worker uses its own cores.
        config.run.threads = settings.threads;
        if cluster.games_in_stream()? >= backlog_limit(&config) {
            if said_at.elapsed() >= REPORT_EVERY {
                said_at = Instant::now();
                eprintln!(
                    "worker {}: enough games wait for the learner; waiting for it to take them",
                    settings.name
                );
            }
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        play_with(&cluster, &config, &notice, &newest, settings, id, published)?;
    }
}

/// Plays with the network of `notice` until a newer one is announced, publishing every game.
fn play_with(
    cluster: &Cluster,
    config: &Config,
    notice: &NetworkNotice,
    newest: &Mutex<Watched>,
    settings: &WorkerSettings,
    id: &str,
    published: &mut u64,
) -> Result<(), ClusterError> {
    let threads = config.run.threads();
    configure_threads(threads);
    // Only the first configuration of rayon's global pool counts.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global();
    let device = config.run.device.resolve()?;
    let weights = cluster.download_network(&notice.object)?;
    let network = load_network(&weights, device, &format!("{id}-{}", notice.object))?;
    let generation = notice.version + 1;
    let mut selfplay_config = config.selfplay_for(generation);
    let lanes = selfplay_config.lanes(threads);
    let mut evaluators = network.lane_copies(config.run.precision, lanes, 200_000)?;
    let rules = config.rules_for(generation);
    let search = config.search_for(generation);
    eprintln!(
        "worker {}: playing with network {} on {}x{} ({threads} threads, {lanes} lanes)",
        settings.name, notice.object, rules.width, rules.height
    );
    // Games go on until a new network comes; the count only numbers them.
    selfplay_config.games_per_generation = usize::MAX / 2;
    let player = selfplay::network_name(notice.version);
    let session = Session {
        rules,
        search: &search,
        config: &selfplay_config,
        seed: rand::random(),
        player_name: &player,
    };
    let start_count = *published;
    // Counted in a cell: the room below reads it while each finished game adds to it.
    let count = std::cell::Cell::new(*published);
    // A new game starts while the network is the newest and the learner needs games: this
    // worker's share of those it still takes, among the workers present, and never more than
    // the games it was asked for.
    let enough = backlog_limit(config);
    let left = || {
        settings.games.map_or(usize::MAX, |games| {
            usize::try_from(games.saturating_sub(count.get())).unwrap_or(usize::MAX)
        })
    };
    let room = || {
        // A copy, the lock let go before the server is asked: the watch takes the lock on the
        // connection's one thread, which the server's answer needs, so asking while holding it
        // could leave the two waiting for each other for good.
        let watched = newest.lock().expect("the lock is never poisoned").clone();
        match &watched {
            Watched::Notice(newer) if newer != notice => {
                return if still_taken(config, notice, newer, &rules) {
                    Room::Games(0)
                } else {
                    Room::Abandon
                };
            }
            Watched::Notice(_) => {}
            Watched::Nothing | Watched::Ended => return Room::Games(0),
        }
        let Ok(games) = cluster.games_in_stream() else { return Room::Games(left()) };
        let workers = cluster.workers_present().unwrap_or(1).max(1);
        let share =
            usize::try_from(enough.saturating_sub(games).div_ceil(workers)).unwrap_or(usize::MAX);
        Room::Games(share.min(left()))
    };
    let started_at = Instant::now();
    let mut reported_at = Instant::now();
    let mut on_game = |game: &FinishedGame, _done: usize| -> Result<(), ClusterError> {
        let message = GameMessage {
            header: GameHeader {
                run: notice.run.clone(),
                worker: id.to_string(),
                serial: count.get(),
                network: notice.version,
                simulations: game.simulations,
                seconds: started_at.elapsed().as_secs_f64(),
            },
            record: game.record.clone(),
            samples: game.samples.clone(),
        };
        publish(cluster, &message, &settings.name);
        count.set(count.get() + 1);
        Ok(())
    };
    let mut on_progress = |progress: &SelfPlayProgress| {
        if reported_at.elapsed() >= REPORT_EVERY {
            reported_at = Instant::now();
            eprintln!(
                "worker {}: network {}: {} games published in all, {:.0} sims/s",
                settings.name,
                notice.object,
                start_count + progress.games_done as u64,
                progress.simulations_per_second()
            );
        }
    };
    let output = selfplay::play_games_while(
        &mut evaluators,
        &session,
        Vec::new(),
        &room,
        &mut on_game,
        &mut on_progress,
    );
    *published = count.get();
    let output = output?;
    if output.stats.abandoned > 0 {
        eprintln!(
            "worker {}: abandoned {} games of network {} under way: the learner no longer takes them",
            settings.name, output.stats.abandoned, notice.object
        );
    }
    Ok(())
}

/// Whether the learner, whose newest network is `newer`, may still take games that `played`
/// plays on `rules`' board: some generation still to come (from the one `newer` plays on)
/// takes the games of networks as old as `played` (the learner's `max_network_age`) and is
/// played on that board. Not when `newer` belongs to another run.
pub fn still_taken(
    config: &Config,
    played: &NetworkNotice,
    newer: &NetworkNotice,
    rules: &Rules,
) -> bool {
    let last = played.version + 1 + config.selfplay.max_network_age;
    newer.run == played.run
        && (newer.version + 1..=last).any(|generation| {
            let board = config.rules_for(generation);
            (board.width, board.height) == (rules.width, rules.height)
        })
}

/// The games in the stream (waiting, or held by the learner until its commit) and under way at
/// which workers stop starting new ones: a generation's for each network version the learner
/// still takes (`max_network_age` + 1). So workers go on playing while the learner trains on the
/// generation it holds, with the newest network, whose games the next generation still takes;
/// more would be of a network too old by the time the learner took them (the stream is first in,
/// first out), and played for nothing. With an age of 0 they wait while it trains.
fn backlog_limit(config: &Config) -> u64 {
    config.selfplay.games_per_generation as u64 * (1 + config.selfplay.max_network_age as u64)
}

/// Publishes a game, trying again until the server has it: the games under way wait meanwhile,
/// and the game's id makes a repeat harmless. A game the server can never take is dropped,
/// with the reason.
fn publish(cluster: &Cluster, message: &GameMessage, name: &str) {
    let mut delay = Duration::from_millis(500);
    loop {
        match cluster.publish_game(message) {
            Ok(()) => return,
            Err(error @ ClusterError::TooLarge { .. }) => {
                eprintln!("worker {name}: game {} dropped: {error}", message.id());
                return;
            }
            Err(error) => {
                eprintln!(
                    "worker {name}: {error}; publishing again in {:.1} s",
                    delay.as_secs_f64()
                );
                std::thread::sleep(delay);
                delay = (delay * 2).min(Duration::from_secs(30));
            }
        }
    }
}

/// A network from the bytes of a checkpoint file (`name` unique to this worker).
fn load_network(weights: &[u8], device: tch::Device, name: &str) -> Result<Network, ClusterError> {
    let path =
        std::env::temp_dir().join(format!("epaminondas-{}-{name}.safetensors", std::process::id()));
    crate::util::write_atomically(&path, weights).map_err(|e| ClusterError::Server {
        action: format!("keeping network {name} on disk"),
        problem: e.to_string(),
    })?;
    let loaded = Network::load(&path, device);
    let _ = std::fs::remove_file(&path);
    Ok(loaded?.0)
}
