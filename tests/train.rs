//! The training loop end to end on configs/smoke.toml, and its failure modes.

use epaminondas::coach::{checkpoint_path, rating, Run, RunError, Silent, Until};
use epaminondas::config::{Config, MatchesConfig, TrainingConfig};
use epaminondas::game::{Color, GameRecord, Position, RecordResult};
use epaminondas::nn::optim::{Optimizer, OptimizerKind, OptimizerSettings};
use epaminondas::nn::{model::NetConfig, Network};
use epaminondas::replay::{outcome_for, ReplayBuffer, Sample};
use epaminondas::train::{self, Round};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::path::Path;
use std::process::Command;

mod common;

fn smoke() -> Config {
    Config::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml"))).unwrap()
}

fn metrics_generations(dir: &Path) -> Vec<u32> {
    epaminondas::coach::read_metrics(&dir.join("metrics.csv"), u32::MAX)
        .unwrap()
        .iter()
        .map(|r| r.generation)
        .collect()
}

/// A newest checkpoint that is not the network the run's config builds (replaced by hand, say
/// with one for the stones variant) stops the run by name before it plays or trains.
#[test]
fn a_run_refuses_a_checkpoint_of_another_network() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let config = smoke();
    drop(Run::open(&run_dir, Some(config.clone())).unwrap());
    let mut other = config.net_config().unwrap();
    other.stones = !other.stones;
    let checkpoint = checkpoint_path(&run_dir, 0);
    let network = Network::new(&other, tch::Device::Cpu, Some(1)).unwrap();
    network.save(&checkpoint, &Default::default()).unwrap();
    let error = Run::open(&run_dir, None).unwrap().train(Some(1), &Silent).unwrap_err();
    assert!(
        matches!(&error, RunError::Corrupt { path, .. } if path == &checkpoint)
            && error.to_string().contains("the run's config asks for"),
        "{error}"
    );
    assert!(!run_dir.join("metrics.csv").exists(), "nothing was played or trained");
}

/// The players a run measures itself against are checked before it plays: a network of the
/// other variant as the `[matches]` opponent, or a baseline file that is not there, stops the
/// run by its place in the config before generation 1 rather than at its first match or rating.
/// With rating off the baselines are not played, and not checked.
#[test]
fn a_run_refuses_fixed_players_that_cannot_play_its_game() {
    let dir = tempfile::tempdir().unwrap();
    let mut other = smoke().net_config().unwrap();
    other.stones = !other.stones;
    let stones = dir.path().join("stones.safetensors");
    let network = Network::new(&other, tch::Device::Cpu, Some(1)).unwrap();
    network.save(&stones, &Default::default()).unwrap();
    let mut against_stones = smoke();
    against_stones.matches = Some(MatchesConfig {
        opponent: format!("net:{}:sims=2", stones.display()),
        agent: "sims=2".into(),
        games: 2,
        parallel: 2,
        opening_plies: 2,
        learn: false,
    });
    let mut missing_baseline = smoke();
    let missing = dir.path().join("missing.safetensors");
    missing_baseline.evaluation.baselines =
        vec!["random".into(), format!("net:{}", missing.display())];
    for (name, config, place, problem) in [
        ("opponent", against_stones, "[matches] opponent", "the stones variant"),
        ("baseline", missing_baseline.clone(), "[evaluation] baselines", "missing.safetensors"),
    ] {
        let run_dir = dir.path().join(name);
        let error = Run::open(&run_dir, Some(config)).unwrap().train(Some(1), &Silent).unwrap_err();
        assert!(
            matches!(&error, RunError::Player { place: found, .. } if *found == place)
                && error.to_string().starts_with(place)
                && error.to_string().contains(problem),
            "{error}"
        );
        assert!(!run_dir.join("metrics.csv").exists(), "nothing was played or trained");
    }
    missing_baseline.evaluation.every = 0;
    let unrated = dir.path().join("unrated");
    Run::open(&unrated, Some(missing_baseline)).unwrap().train(Some(1), &Silent).unwrap();
    assert_eq!(metrics_generations(&unrated), [1]);
}

/// A metrics file written before the held-out losses were measured still reads, without them.
#[test]
fn metrics_without_the_held_out_losses_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metrics.csv");
    std::fs::write(
        &path,
        "generation,games,positions,samples,mean_game_length,white_wins,black_wins,draws,policy_loss,value_loss,policy_entropy,value_accuracy,grad_norm,elo,elo_error,selfplay_sims_per_second,train_samples_per_second,train_steps,learning_rate,window,total_games,total_positions,wall_seconds\n\
         1,128,12011,3006,93.8,61,64,3,1.853,0.701,1.833,0.695,1.209,,,646.3,143.5,100,0.00005,3006,128,12011,862.2\n",
    )
    .unwrap();
    let rows = epaminondas::coach::read_metrics(&path, u32::MAX).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].policy_loss, rows[0].fresh_policy_loss, rows[0].fresh_value_loss),
        (1.853, None, None)
    );
}

#[test]
fn generations_add_up_across_invocations() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let mut run = Run::open(&run_dir, Some(smoke())).unwrap();
    run.train(Some(1), &Silent).unwrap();
    assert_eq!(metrics_generations(&run_dir), [1]);
    // One process at a time: two writing one run would overwrite each other's games.
    let error = Run::open(&run_dir, None).err().expect("held by the first");
    assert!(matches!(&error, RunError::InUse { dir } if dir == &run_dir), "{error}");
    drop(run);
    // `--generations 2` on the same directory means two in total, not two more.
    let mut run = Run::open(&run_dir, None).unwrap();
    assert_eq!(run.state.generation, 1);
    run.train(Some(2), &Silent).unwrap();
    assert_eq!(metrics_generations(&run_dir), [1, 2]);
    for g in 0..=2 {
        assert!(checkpoint_path(&run_dir, g).exists(), "checkpoint {g}");
    }
    for g in 1..=2 {
        assert!(run_dir.join(format!("replay/gen-{g:06}.bin")).exists());
        let games = std::fs::read_to_string(run_dir.join(format!("games/gen-{g:06}.txt"))).unwrap();
        let records = GameRecord::parse_all(&games).unwrap();
        assert_eq!(records.len(), 4, "every game is saved and replays");
    }
    assert!(run_dir.join("config.toml").exists() && run_dir.join("run.json").exists());
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("state.json")).unwrap())
            .unwrap();
    assert_eq!(state["generation"], 2);
    assert_eq!(state["total_games"], 8);
    assert_eq!(state["rated_generation"], 2);
    // Rating (every generation in the smoke config): 2 games against random and 2 against the
    // previous checkpoint, per generation, with an Elo in every metrics row.
    let metrics = epaminondas::coach::read_metrics(&run_dir.join("metrics.csv"), 2).unwrap();
    assert!(metrics.iter().all(|r| r.elo.is_some() && r.elo_error.is_some()), "{metrics:?}");
    // The held-out losses are those of the network that played a generation's games, on their
    // samples, before it trained on them; the network trained on them scores otherwise.
    let config = smoke();
    let share = config.training.search_value_share;
    for row in &metrics {
        let samples =
            epaminondas::replay::read_chunk(&run_dir.join("replay"), row.generation, &config.rules)
                .unwrap();
        let scored_by = |generation| {
            let (network, _) =
                Network::load(&checkpoint_path(&run_dir, generation), tch::Device::Cpu).unwrap();
            train::held_out_losses(&network, &samples, share).unwrap()
        };
        let (player, trained) = (scored_by(row.generation - 1), scored_by(row.generation));
        let recorded = (row.fresh_policy_loss.unwrap(), row.fresh_value_loss.unwrap());
        assert!(
            (recorded.0 - player.policy).abs() < 1e-4 && (recorded.1 - player.value).abs() < 1e-4,
            "{recorded:?} {player:?}"
        );
        assert!((recorded.0 - trained.policy).abs() > 1e-4, "{recorded:?} {trained:?}");
    }
    let games = rating::read_games(&run_dir.join("ratings/games.csv")).unwrap();
    assert_eq!(games.len(), 8);
    assert!(games
        .iter()
        .filter(|g| g.rated_generation == 2)
        .all(|g| [&g.white, &g.black].contains(&&"gen-000002".to_string())));
    let ratings = rating::read_ratings(&run_dir.join("ratings/ratings.csv")).unwrap();
    let names: Vec<&str> = ratings.iter().map(|r| r.player.as_str()).collect();
    assert_eq!(names, ["random", "gen-000000", "gen-000001", "gen-000002"]);
    assert_eq!(ratings[0].elo, 0.0, "random is the anchor");
    let records = GameRecord::parse_all(
        &std::fs::read_to_string(run_dir.join("ratings/gen-000002.txt")).unwrap(),
    )
    .unwrap();
    assert_eq!(records.len(), 4);
    // The pictures: the run's own, and a comparison (here of the run with itself).
    let progress = epaminondas::plot::plot_run(&run_dir, None).unwrap();
    assert_eq!(progress, run_dir.join("plots/progress.svg"));
    let svg = std::fs::read_to_string(progress).unwrap();
    assert!(svg.contains("<svg") && svg.contains("run run"), "titled by the run's name");
    assert!(svg.contains("policy, new games"), "the held-out losses are drawn");
    assert!(
        !svg.contains("score against each opponent"),
        "a run without opponents has no scores to draw"
    );
    let comparison =
        epaminondas::plot::plot_comparison(&[run_dir.clone(), run_dir.clone()], dir.path())
            .unwrap();
    assert!(std::fs::read_to_string(comparison).unwrap().contains("runs run vs run"));
    let unrated = dir.path().join("unrated");
    Run::open(&unrated, Some(smoke())).unwrap();
    let err = epaminondas::plot::plot_comparison(&[run_dir.clone(), unrated.clone()], dir.path())
        .unwrap_err();
    assert!(
        matches!(&err, epaminondas::plot::PlotError::Unrated(path) if *path == unrated),
        "{err}"
    );
    // The yardstick picture: match scores by hours of training, one line an opponent.
    let yardstick = dir.path().join("yardstick.csv");
    std::fs::write(
        &yardstick,
        "generation,opponent,wins,draws,losses\n0,greedy,10,0,90\n2,greedy,60,10,30\n2,alphabeta,5,0,95\n",
    )
    .unwrap();
    let scores = epaminondas::plot::plot_yardstick(&run_dir, &yardstick, None).unwrap();
    assert_eq!(scores, run_dir.join("plots/scores.svg"));
    let svg = std::fs::read_to_string(scores).unwrap();
    assert!(
        svg.contains("hours of training") && svg.contains("greedy") && svg.contains("alphabeta")
    );
    std::fs::write(&yardstick, "generation,opponent,wins,draws,losses\n7,greedy,1,0,1\n").unwrap();
    let err = epaminondas::plot::plot_yardstick(&run_dir, &yardstick, None).unwrap_err();
    assert!(err.to_string().contains("generation 7 is not in the run's metrics.csv"), "{err}");
}

/// `--hours` counts the run's training time over every invocation and stops at the end of the
/// first generation past it, before any limit in generations; a run already past it trains no
/// more, and says so. Hours that are not above zero are refused by name.
#[test]
fn hours_stop_a_run_at_the_generation_that_passes_them() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let tiny = Until { generations: None, hours: Some(1e-9) };
    Run::open(&run_dir, Some(smoke())).unwrap().train(tiny, &Silent).unwrap();
    assert_eq!(metrics_generations(&run_dir), [1], "one generation passes a nanohour");

    let mut run = Run::open(&run_dir, None).unwrap();
    let one_more =
        Until { generations: Some(5), hours: Some(run.state.wall_seconds / 3600.0 * (1.0 + 1e-9)) };
    run.train(one_more, &Silent).unwrap();
    assert_eq!(metrics_generations(&run_dir), [1, 2], "the hours stop it before 5 generations");
    drop(run);

    let said = common::Messages::default();
    Run::open(&run_dir, None).unwrap().train(one_more, &said).unwrap();
    assert_eq!(metrics_generations(&run_dir), [1, 2]);
    let messages = said.0.borrow();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("run already has") && m.contains("hours of training")),
        "{messages:?}"
    );

    let output = Command::new(env!("CARGO_BIN_EXE_epaminondas"))
        .args(["train", "--hours", "0", "--run"])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("--hours") && error.contains("\"0\" is not a number above 0"),
        "{error}"
    );
}

/// Kill the real program in the middle of a run, then resume: what was saved is intact and the
/// run continues from its last finished generation.
#[test]
fn killed_run_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let binary = env!("CARGO_BIN_EXE_epaminondas");
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml");
    let mut child = Command::new(binary)
        .args(["train", "--config", config, "--run"])
        .arg(&run_dir)
        .args(["--generations", "50"])
        .spawn()
        .unwrap();
    // Wait until at least one generation is done, then kill without warning.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while metrics_generations_safe(&run_dir) < 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(700));
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Run::open(&run_dir, None).unwrap();
    let done = killed.state.generation;
    assert!(done >= 1, "at least one generation finished before the kill");
    // A kill between a generation's metrics row and its commit leaves the row on disk; the run
    // reads only the committed ones, and its next commit writes the file again.
    let committed: Vec<u32> = killed.metrics().iter().map(|r| r.generation).collect();
    assert_eq!(committed, (1..=done).collect::<Vec<_>>());
    // The kill let go of the directory (the open above held it); while this process holds it,
    // another `train` there is refused and changes nothing.
    let metrics = std::fs::read(run_dir.join("metrics.csv")).unwrap();
    let refused = Command::new(binary).args(["train", "--run"]).arg(&run_dir).output().unwrap();
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && error.contains("in use by another process"), "{error}");
    assert_eq!(std::fs::read(run_dir.join("metrics.csv")).unwrap(), metrics);
    drop(killed);
    let status = Command::new(binary)
        .args(["train", "--run"])
        .arg(&run_dir)
        .args(["--generations"])
        .arg((done + 1).to_string())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        metrics_generations(&run_dir),
        (1..=done + 1).collect::<Vec<_>>(),
        "exactly one more row"
    );
}

/// Kill the real program in the middle of a generation's self-play, then resume: the games it
/// finished are kept, the rest are played, and the generation has all its games.
#[test]
fn a_generation_killed_in_self_play_keeps_its_finished_games() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let config = dir.path().join("config.toml");
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml"))
        .unwrap();
    let text = text
        .replace("games_per_generation = 4", "games_per_generation = 60")
        .replace("parallel_games = 3", "parallel_games = 2");
    std::fs::write(&config, text).unwrap();
    let binary = env!("CARGO_BIN_EXE_epaminondas");
    let journal = run_dir.join("selfplay/gen-000001");
    let saved_records = || -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&journal) else { return Vec::new() };
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().unwrap().to_str().unwrap().starts_with("game-")
                    && p.extension().unwrap() == "txt"
            })
            .collect();
        paths.sort();
        paths.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
    };
    let mut child = Command::new(binary)
        .args(["train", "--config"])
        .arg(&config)
        .arg("--run")
        .arg(&run_dir)
        .args(["--generations", "1"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while saved_records().len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        Run::open(&run_dir, None).unwrap().state.generation,
        0,
        "the generation was still in progress"
    );
    let saved = saved_records();
    assert!((3..60).contains(&saved.len()), "{} games saved", saved.len());
    // A committed generation's journal whose removal was interrupted goes on resuming; a file
    // that is not the run's stays.
    let stale = run_dir.join("selfplay/gen-000000");
    std::fs::create_dir_all(&stale).unwrap();
    let foreign = run_dir.join("selfplay/notes.txt");
    std::fs::write(&foreign, "mine").unwrap();

    let output = Command::new(binary)
        .args(["train", "--run"])
        .arg(&run_dir)
        .args(["--generations", "1"])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{log}");
    assert!(
        log.contains(&format!("generation 1: {} games were finished before the stop", saved.len())),
        "{log}"
    );
    let games = GameRecord::parse_all(
        &std::fs::read_to_string(run_dir.join("games/gen-000001.txt")).unwrap(),
    )
    .unwrap();
    assert_eq!(games.len(), 60);
    let kept: Vec<String> = games.iter().map(|g| g.to_string()).collect();
    for record in &saved {
        assert!(kept.contains(record), "a game finished before the kill is missing:\n{record}");
    }
    let row = &epaminondas::coach::read_metrics(&run_dir.join("metrics.csv"), u32::MAX).unwrap()[0];
    assert_eq!((row.generation, row.games, row.total_games), (1, 60, 60));
    assert!(!journal.exists(), "the journal goes once the generation is committed");
    assert!(!stale.exists(), "a committed generation's journal is removed");
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "mine");
}

/// Self-play in several lanes (threads, each with its own evaluator and share of the games)
/// plays the very games one lane plays: a game is a function of its seed, whichever lane and
/// batch it is in. Each lane's evaluator is called from a thread of its own.
#[test]
fn self_play_in_lanes_plays_the_games_of_one_lane() {
    use epaminondas::evaluator::{EvalRequest, Evaluation, Evaluator, UniformEvaluator};
    use epaminondas::selfplay::play_games;
    use std::collections::HashSet;
    use std::sync::{Arc, Mutex};
    use std::thread::ThreadId;

    /// Uniform priors, noting the threads it is called from.
    struct Noting(Arc<Mutex<HashSet<ThreadId>>>);
    impl Evaluator for Noting {
        fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
            self.0.lock().unwrap().insert(std::thread::current().id());
            UniformEvaluator.evaluate(batch)
        }
    }
    let mut config = smoke();
    config.selfplay.games_per_generation = 7;
    config.selfplay.parallel_games = 4;
    let play = |lanes: usize| {
        let threads = Arc::new(Mutex::new(HashSet::new()));
        let mut evaluators: Vec<Noting> = (0..lanes).map(|_| Noting(threads.clone())).collect();
        let mut finished = Vec::new();
        let Ok(output) = play_games(
            &mut evaluators,
            config.rules,
            &config.search,
            &config.selfplay,
            5,
            "test",
            Vec::new(),
            &mut |game, done| {
                finished.push((game.index, done));
                Ok::<(), std::convert::Infallible>(())
            },
            &mut |_| {},
        );
        let seen = threads.lock().unwrap().len();
        (output, finished, seen)
    };
    let (one, _, one_thread) = play(1);
    let (three, finished, lane_threads) = play(3);
    assert_eq!(one_thread, 1);
    assert_eq!(lane_threads, 3, "each lane searches on a thread of its own");
    assert_eq!(
        finished.iter().map(|(_, done)| *done).collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
    let mut indices: Vec<usize> = finished.iter().map(|(index, _)| *index).collect();
    indices.sort();
    assert_eq!(indices, (0..7).collect::<Vec<_>>(), "every game once");
    assert_eq!(one.records, three.records);
    assert_eq!(one.samples, three.samples);
    assert_eq!(one.stats.simulations, three.stats.simulations);
}

/// The smoke config with twelve games a generation, eight in lockstep.
fn twelve_games_eight_at_once() -> Config {
    let mut config = smoke();
    config.selfplay.games_per_generation = 12;
    config.selfplay.parallel_games = 8;
    config
}

/// A self-play session of `config`'s rules and settings, seed 5.
fn session_of(config: &Config) -> epaminondas::selfplay::Session<'_> {
    epaminondas::selfplay::Session {
        rules: config.rules,
        search: &config.search,
        config: &config.selfplay,
        seed: 5,
        player_name: "test",
    }
}

/// Self-play keeps the games it has under way within the room it is told, asked after every
/// finished game (a cluster worker's share of the games its learner still takes): with room for
/// one until five are done and none after, it plays them one after another, though eight could
/// be under way at once, and stops at five: a finished game holds its place until the room has
/// been asked again, so no sixth begins on the answer given before the fifth was done.
#[test]
fn self_play_starts_games_only_while_there_is_room() {
    use epaminondas::evaluator::UniformEvaluator;
    use epaminondas::selfplay::{play_games_while, Room};
    let config = twelve_games_eight_at_once();
    let session = session_of(&config);
    let done = std::cell::Cell::new(0);
    let mut order = Vec::new();
    let Ok(_) = play_games_while(
        &mut [UniformEvaluator],
        &session,
        Vec::new(),
        &|| Room::Games(usize::from(done.get() < 5)),
        &mut |game, _| {
            done.set(done.get() + 1);
            order.push(game.index);
            Ok::<(), std::convert::Infallible>(())
        },
        &mut |_| {},
    );
    assert_eq!(order.len(), 5, "{order:?}");
    assert_eq!(order, (0..order.len()).collect::<Vec<_>>());
}

/// Told to abandon its games, self-play drops those under way and returns: with room for
/// eight until two games are done and then the word to abandon, it keeps those two and counts
/// every other game it began (at least the six more under way, at most the other ten) as
/// abandoned, whether dropped unfinished or finished after the word.
#[test]
fn self_play_abandons_the_games_under_way_when_told() {
    use epaminondas::evaluator::UniformEvaluator;
    use epaminondas::selfplay::{play_games_while, Room};
    let config = twelve_games_eight_at_once();
    let session = session_of(&config);
    let done = std::cell::Cell::new(0);
    let Ok(output) = play_games_while(
        &mut [UniformEvaluator],
        &session,
        Vec::new(),
        &|| if done.get() < 2 { Room::Games(8) } else { Room::Abandon },
        &mut |_, _| {
            done.set(done.get() + 1);
            Ok::<(), std::convert::Infallible>(())
        },
        &mut |_| {},
    );
    assert_eq!(done.get(), 2, "no game is handed on after the word to abandon");
    assert_eq!(output.records.len(), 2);
    assert!((6..=10).contains(&output.stats.abandoned), "{}", output.stats.abandoned);
}

/// Self-play given the finished games of an interrupted generation plays only the others,
/// each exactly as it would have been played (a game's seed is fixed by its index), and counts
/// all of them. The journal saves and reads back games whole, refuses a damaged one by name,
/// and a journal of another generation is cleared.
#[test]
fn self_play_resumes_a_generation_from_its_journal() {
    use epaminondas::coach::journal::Journal;
    use epaminondas::evaluator::UniformEvaluator;
    use epaminondas::selfplay::{play_games, FinishedGame};
    let mut config = smoke();
    config.selfplay.games_per_generation = 6;
    let play = |resumed: Vec<FinishedGame>| {
        let mut finished = Vec::new();
        let Ok(output) = play_games(
            &mut [UniformEvaluator],
            config.rules,
            &config.search,
            &config.selfplay,
            5,
            "test",
            resumed,
            &mut |game, done| {
                finished.push((game.clone(), done));
                Ok::<(), std::convert::Infallible>(())
            },
            &mut |_| {},
        );
        (output, finished)
    };
    let (whole, finished) = play(Vec::new());
    assert_eq!(
        finished.iter().map(|(_, done)| *done).collect::<Vec<_>>(),
        (1..=6).collect::<Vec<_>>()
    );
    let mut indices: Vec<usize> = finished.iter().map(|(game, _)| game.index).collect();
    indices.sort();
    assert_eq!(indices, (0..6).collect::<Vec<_>>());

    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path(), 1, config.rules).unwrap();
    let first: Vec<FinishedGame> = finished[..3].iter().map(|(game, _)| game.clone()).collect();
    for game in &first {
        journal.save(game).unwrap();
    }
    // A journal keeps no search simulations (they are not this invocation's work).
    let mut expected: Vec<FinishedGame> =
        first.iter().map(|game| FinishedGame { simulations: 0, ..game.clone() }).collect();
    expected.sort_by_key(|game| game.index);
    let saved = journal.finished_games().unwrap();
    assert_eq!(saved, expected);

    let (resumed, replayed) = play(saved);
    assert_eq!(
        replayed.iter().map(|(_, done)| *done).collect::<Vec<_>>(),
        vec![4, 5, 6],
        "counted on from the saved games"
    );
    for (game, _) in &replayed {
        assert!(
            !first.iter().any(|saved| saved.index == game.index),
            "game {} was played again",
            game.index
        );
        let original = &finished.iter().find(|(other, _)| other.index == game.index).unwrap().0;
        assert_eq!(game, original, "game {} was played differently", game.index);
    }
    let s = (resumed.stats, whole.stats);
    assert_eq!(
        (s.0.games, s.0.plies, s.0.white_wins, s.0.black_wins, s.0.draws),
        (s.1.games, s.1.plies, s.1.white_wins, s.1.black_wins, s.1.draws)
    );
    assert_eq!(
        (resumed.records.len(), resumed.samples.len()),
        (whole.records.len(), whole.samples.len())
    );
    assert_eq!(
        resumed.records, whole.records,
        "the same games in the same order (of their indices), resumed or not"
    );

    let samples = dir.path().join(format!("selfplay/gen-000001/game-{:06}.bin", expected[0].index));
    std::fs::remove_file(&samples).unwrap();
    let error = journal.finished_games().unwrap_err().to_string();
    assert!(error.contains(&samples.display().to_string()), "{error}");
    Journal::open(dir.path(), 2, config.rules).unwrap();
    assert!(
        !dir.path().join("selfplay/gen-000001").exists(),
        "another generation's journal is cleared"
    );
}

/// A generation whose games were all played before a stop trains on the journal's games at
/// once, and claims no self-play rate for this invocation; the next generation measures one.
#[test]
fn a_generation_resumed_with_all_its_games_claims_no_self_play_rate() {
    use epaminondas::coach::journal::Journal;
    use epaminondas::evaluator::UniformEvaluator;
    use epaminondas::selfplay::play_games;
    let config = smoke();
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let mut run = Run::open(&run_dir, Some(config.clone())).unwrap();
    let journal = Journal::open(&run_dir, 1, config.rules).unwrap();
    let played = play_games(
        &mut [UniformEvaluator],
        config.rules,
        &config.search,
        &config.selfplay,
        9,
        "before the stop",
        Vec::new(),
        &mut |game, _| journal.save(game),
        &mut |_| {},
    )
    .unwrap();
    // The stopped invocation's time counts in the wall time: a file that does not read as
    // seconds is refused by name, one that does is added.
    let seconds = run_dir.join("selfplay/gen-000001/seconds.txt");
    std::fs::write(&seconds, "an hour").unwrap();
    let error = run.train(Some(1), &Silent).unwrap_err().to_string();
    assert!(error.contains("seconds.txt") && error.contains("an hour"), "{error}");
    assert_eq!(
        journal.finished_games().unwrap().len(),
        config.selfplay.games_per_generation,
        "the saved games are kept"
    );
    journal.save_seconds(1000.0).unwrap();
    let resumed = std::time::Instant::now();
    run.train(Some(1), &Silent).unwrap();
    let resumed = resumed.elapsed().as_secs_f64();
    let row = &run.metrics()[0];
    assert_eq!(
        (row.games, row.selfplay_sims_per_second),
        (config.selfplay.games_per_generation, None)
    );
    // The saved 1,000 s plus this invocation's own time, no more.
    assert!(
        row.wall_seconds >= 1000.0 && row.wall_seconds <= 1000.0 + resumed,
        "{} s after {resumed} s",
        row.wall_seconds
    );
    let games = std::fs::read_to_string(run_dir.join("games/gen-000001.txt")).unwrap();
    assert_eq!(
        games,
        played.records.iter().map(|r| format!("{r}\n")).collect::<String>(),
        "the journal's games, in the order of their indices"
    );
    run.train(Some(2), &Silent).unwrap();
    assert!(run.metrics()[1].selfplay_sims_per_second.is_some_and(|rate| rate > 0.0));
}

/// Self-play of `config`'s generation (seed 5) with a uniform network named `net`: its output
/// and its games.
fn play_uniform(
    config: &Config,
) -> (epaminondas::selfplay::SelfPlayOutput, Vec<epaminondas::selfplay::FinishedGame>) {
    let mut games = Vec::new();
    let Ok(output) = epaminondas::selfplay::play_games(
        &mut [epaminondas::evaluator::UniformEvaluator],
        config.rules,
        &config.search,
        &config.selfplay,
        5,
        "net",
        Vec::new(),
        &mut |game: &epaminondas::selfplay::FinishedGame, _| {
            games.push(game.clone());
            Ok::<(), std::convert::Infallible>(())
        },
        &mut |_| {},
    );
    (output, games)
}

/// Self-play with a Gumbel root (`[search] root_noise`): every full search teaches a distribution,
/// and with a uniform network one over all the moves, where 8 visits reach at most 7.
#[test]
fn self_play_with_a_gumbel_root_teaches_distributions_over_every_move() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml"))
        .unwrap()
        .replace(
            "[selfplay]",
            "[search]\nroot_noise = { kind = \"gumbel\", considered = 4 }\n\n[selfplay]",
        );
    let config = Config::parse(&text, "gumbel.toml").unwrap();
    assert_eq!(config.search.root_noise.gumbel().map(|g| g.considered), Some(4));
    let (_, games) = play_uniform(&config);
    let samples: Vec<_> = games.iter().flat_map(|game| &game.samples).collect();
    assert!(samples.len() > 10, "{} samples", samples.len());
    for sample in &samples {
        let total: f32 = sample.policy.iter().map(|&(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-4, "{total}");
    }
    let wide = samples.iter().filter(|sample| sample.policy.len() > 8).count();
    assert!(
        wide * 2 > samples.len(),
        "{wide} of {} samples cover more than 8 moves",
        samples.len()
    );
}

/// The colour `net` played in a game of [`play_uniform`] against `other`; any other pair of
/// players fails the test.
fn network_side(game: &epaminondas::selfplay::FinishedGame, other: &str) -> Color {
    match (game.record.white.as_str(), game.record.black.as_str()) {
        ("net", black) if black == other => Color::White,
        (white, "net") if white == other => Color::Black,
        players => panic!("game {} was played by {players:?}", game.index),
    }
}

#[test]
fn self_play_against_an_opponent_learns_only_from_the_networks_moves() {
    use epaminondas::config::OpponentConfig;
    use epaminondas::game::{Color, RecordResult};
    use epaminondas::players::greedy::score_after;
    use epaminondas::selfplay::OpponentTally;
    let mut config = smoke();
    config.selfplay.games_per_generation = 8;
    config.selfplay.full_search_probability = 1.0;
    config.selfplay.opponents = vec![OpponentConfig { player: "greedy".into(), share: 1.0 }];
    let (output, games) = play_uniform(&config);
    assert_eq!(games.len(), 8);
    let mut points = 0.0;
    let mut sides = Vec::new();
    for game in &games {
        let record = &game.record;
        let side = network_side(game, "greedy");
        sides.push(side);
        // Every recorded position is one where the network moved (every move of its is a full
        // search here), and none is the opponent's.
        assert!(!game.samples.is_empty());
        assert!(
            game.samples.iter().all(|s| s.position.side_to_move() == side),
            "game {}: a sample of the opponent's move",
            game.index
        );
        // After the random opening, the opponent's moves are greedy's: the best one-ply score.
        let positions = record.positions();
        for (ply, mv) in
            record.moves.iter().enumerate().skip(config.selfplay.random_opening_plies as usize)
        {
            let before = positions[ply];
            if before.side_to_move() != side {
                let best = before
                    .legal_moves()
                    .iter()
                    .map(|&m| score_after(&before.play_unchecked(m)))
                    .max()
                    .unwrap();
                assert_eq!(
                    score_after(&before.play_unchecked(*mv)),
                    best,
                    "game {} ply {ply}: {mv} is not greedy's",
                    game.index
                );
            }
        }
        points +=
            match (record.result, side) {
                (RecordResult::WhiteWins, Color::White)
                | (RecordResult::BlackWins, Color::Black) => 1.0,
                (RecordResult::WhiteWins, Color::Black)
                | (RecordResult::BlackWins, Color::White) => 0.0,
                _ => 0.5,
            };
    }
    assert!(
        sides.contains(&Color::White) && sides.contains(&Color::Black),
        "both colours: {sides:?}"
    );
    assert_eq!(
        output.stats.opponents,
        vec![OpponentTally { name: "greedy".into(), games: 8, points }]
    );
    assert_eq!(
        play_uniform(&config).0.records,
        output.records,
        "a game against the opponent is a function of its seed"
    );
    // The opponent thinks on a pool of its own, so games finish in any order; the output keeps
    // the order of their indices.
    let mut by_index = games.clone();
    by_index.sort_by_key(|game| game.index);
    assert!(
        by_index.iter().map(|game| &game.record).eq(output.records.iter()),
        "the output's games are not in the order of their indices"
    );

    // Half the games on average: this seed draws some of each.
    config.selfplay.opponents = vec![OpponentConfig { player: "greedy".into(), share: 0.5 }];
    let (half, _) = play_uniform(&config);
    let against = half.records.iter().filter(|r| r.white != r.black).count();
    assert!(
        against > 0 && against < 8 && half.stats.opponent_games() == against,
        "{against} of 8 against the opponent"
    );

    // Through the trainer, with two opponents: the metrics row counts the games against both,
    // opponents.csv each one's, and the records name them.
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    config.selfplay.games_per_generation = 16;
    config.selfplay.opponents = vec![
        OpponentConfig { player: "mcts-rollout:sims=20".into(), share: 0.5 },
        OpponentConfig { player: "alphabeta:depth=1".into(), share: 0.5 },
    ];
    let mut run = Run::open(&run_dir, Some(config.clone())).unwrap();
    run.train(Some(1), &Silent).unwrap();
    let row = &run.metrics()[0];
    assert_eq!(row.opponent_games, Some(16));
    let score = row.opponent_score.unwrap();
    let text = std::fs::read_to_string(run_dir.join("games/gen-000001.txt")).unwrap();
    let records = epaminondas::game::GameRecord::parse_all(&text).unwrap();
    let against = |name: &str| {
        records.iter().filter(|r| r.white == name || r.black == name).collect::<Vec<_>>()
    };
    let (rollout_games, alphabeta_games) =
        (against("mcts-rollout:sims=20").len(), against("alphabeta:depth=1").len());
    assert_eq!(rollout_games + alphabeta_games, 16);
    assert!(
        rollout_games > 0 && alphabeta_games > 0,
        "this seed draws both opponents: {rollout_games} and {alphabeta_games}"
    );
    let read = epaminondas::coach::read_metrics(&run_dir.join("metrics.csv"), 1).unwrap();
    assert_eq!((read[0].opponent_games, read[0].opponent_score), (Some(16), Some(score)));
    let by_opponent =
        epaminondas::coach::read_opponents(&run_dir.join("opponents.csv"), 1).unwrap();
    assert_eq!(
        by_opponent
            .iter()
            .map(|o| (o.generation, o.opponent.as_str(), o.games))
            .collect::<Vec<_>>(),
        [(1, "mcts-rollout:sims=20", rollout_games), (1, "alphabeta:depth=1", alphabeta_games)]
    );
    // Each score is the network's points in that opponent's records; together they make the
    // row's score.
    for o in &by_opponent {
        let points: f64 = against(&o.opponent)
            .iter()
            .map(|r| epaminondas::arena::a_score(r, r.black == o.opponent))
            .sum();
        assert_eq!(o.score, Some(points / o.games as f64), "{}", o.opponent);
    }
    let total: f64 = by_opponent.iter().map(|o| o.score.unwrap() * o.games as f64).sum();
    assert!((total / 16.0 - score).abs() < 1e-9, "{total} / 16 against {score}");
    // The run's picture has a panel of the scores, with a line for each opponent.
    let picture =
        std::fs::read_to_string(epaminondas::plot::plot_run(&run_dir, None).unwrap()).unwrap();
    assert!(
        picture.contains("score against each opponent")
            && picture.contains("mcts-rollout:sims=20")
            && picture.contains("alphabeta:depth=1")
    );
}

fn metrics_generations_safe(dir: &Path) -> usize {
    epaminondas::coach::read_metrics(&dir.join("metrics.csv"), u32::MAX)
        .map(|r| r.len())
        .unwrap_or(0)
}

/// A config given to a run that it cannot resume with (here another optimiser than its saved
/// state's) is refused and leaves the stored config as it was; one it resumes with is stored.
#[test]
fn a_config_the_run_cannot_resume_with_leaves_the_stored_one() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    Run::open(&run_dir, Some(smoke())).unwrap().train(Some(1), &Silent).unwrap();
    let stored = || std::fs::read_to_string(run_dir.join("config.toml")).unwrap();
    let before = stored();
    let mut sgd = smoke();
    sgd.training.optimizer = OptimizerKind::Sgd;
    let error = Run::open(&run_dir, Some(sgd)).unwrap().train(Some(2), &Silent).unwrap_err();
    assert!(error.to_string().contains("AdamW state"), "{error}");
    assert_eq!(stored(), before, "the refused config was stored");
    Run::open(&run_dir, None).unwrap().train(Some(2), &Silent).unwrap();
    let mut longer = smoke();
    longer.training.steps_per_generation = 5;
    Run::open(&run_dir, Some(longer)).unwrap().train(Some(3), &Silent).unwrap();
    assert_eq!(
        Config::load(&run_dir.join("config.toml")).unwrap().training.steps_per_generation,
        5
    );
}

#[test]
fn bad_configs_are_named() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml"))
        .unwrap();
    let unknown = text.replace("[training]", "[training]\nlearnin_rate = 3");
    let error = Config::parse(&unknown, "x.toml").unwrap_err().to_string();
    assert!(error.contains("learnin_rate") && error.contains("x.toml"), "{error}");
    let range = text.replace("full_search_probability = 0.5", "full_search_probability = 1.5");
    assert!(Config::parse(&range, "x.toml")
        .unwrap_err()
        .to_string()
        .contains("full_search_probability"));
    let size = text.replace("size = \"tiny\"", "size = \"enormous\"");
    assert!(Config::parse(&size, "x.toml").unwrap_err().to_string().contains("enormous"));
    let board = text.replace("[rules]", "[rules]\nwidth = 40");
    assert!(Config::parse(&board, "x.toml").unwrap_err().to_string().contains("40x12"));
    let precision = text.replace("device = \"cpu\"", "device = \"cpu\"\nprecision = \"f16\"");
    assert_ne!(precision, text);
    assert!(Config::parse(&precision, "x.toml").unwrap_err().to_string().contains("f16"));
    let bf16 = text.replace("device = \"cpu\"", "device = \"cpu\"\nprecision = \"bf16\"");
    assert_eq!(
        Config::parse(&bf16, "x.toml").unwrap().run.precision,
        epaminondas::nn::Precision::Bf16
    );
    let age = text.replace(
        "random_opening_plies = 2",
        "random_opening_plies = 2\nmax_network_age = 4000000000",
    );
    assert_ne!(age, text);
    assert!(Config::parse(&age, "x.toml").unwrap_err().to_string().contains("max_network_age"));
    let odd =
        text.replace("[evaluation]\nevery = 1\ngames = 2", "[evaluation]\nevery = 1\ngames = 3");
    assert_ne!(odd, text);
    let error = Config::parse(&odd, "x.toml").unwrap_err().to_string();
    assert!(error.contains("evaluation.games must be even"), "{error}");
    // Optimiser settings that would turn the weights to NaN within a step.
    for (key, named) in [
        ("weight_decay = inf", "weight_decay"),
        ("value_loss_weight = nan", "value_loss_weight"),
        ("momentum = 1.0", "momentum"),
        ("momentum = nan", "momentum"),
    ] {
        let bad = text.replace("[training]", &format!("[training]\n{key}"));
        let error = Config::parse(&bad, "x.toml").unwrap_err().to_string();
        assert!(error.contains(named), "{key}: {error}");
    }
    // Sizes allocated up front are bounded, so that a typo is an error and not an abort.
    for key in ["parallel_games", "leaves_per_game", "lanes", "batch_size"] {
        let line = format!("{key} = 9223372036854775807");
        let huge = match text.lines().find(|l| l.starts_with(&format!("{key} ="))) {
            Some(given) => text.replace(given, &line),
            None => text.replace("[selfplay]", &format!("[selfplay]\n{line}")),
        };
        let error = Config::parse(&huge, "x.toml").unwrap_err().to_string();
        assert!(error.contains(key) && error.contains("at most"), "{key}: {error}");
    }
    // Numbers that pass a comparison as NaN or infinity would silently break self-play (NaN
    // temperatures always play the last move, an infinite value scale makes every target NaN).
    for (section, key, named) in [
        ("[selfplay]", "temperature_start = nan", "temperatures"),
        ("[selfplay]", "temperature_end = inf", "temperatures"),
        ("[search]", "root_noise = { kind = \"gumbel\", c_scale = inf }", "c_scale"),
        ("[search]", "fpu = { kind = \"parent-reduction\", reduction = nan }", "fpu"),
        ("[search]", "fpu = { kind = \"const\", value = -inf }", "fpu"),
    ] {
        let bad = if text.contains(section) {
            text.replacen(section, &format!("{section}\n{key}"), 1)
        } else {
            format!("{text}\n{section}\n{key}\n")
        };
        let error = Config::parse(&bad, "x.toml").unwrap_err().to_string();
        assert!(error.contains(named), "{key}: {error}");
    }
    let rating = text.replace("every = 1\ngames = 2", "every = 1\ngames = 100000000000");
    assert_ne!(rating, text);
    let error = Config::parse(&rating, "x.toml").unwrap_err().to_string();
    assert!(error.contains("evaluation.games") && error.contains("at most"), "{error}");
    let reuse = text.replace("max_sample_reuse = 4.0", "max_sample_reuse = nan");
    assert_ne!(reuse, text);
    let error = Config::parse(&reuse, "x.toml").unwrap_err().to_string();
    assert!(error.contains("max_sample_reuse"), "{error}");
    let matches = |lines: &str| {
        format!("{text}\n[matches]\nopponent = \"greedy\"\nagent = \"sims=8\"\n{lines}\n")
    };
    Config::parse(&matches("games = 2\nparallel = 2\nlearn = false"), "x.toml").unwrap();
    for (lines, named) in [
        ("games = 100000000000\nparallel = 2\nlearn = false", "matches.games must be at most"),
        ("games = 2\nparallel = 20000\nlearn = false", "matches.parallel must be 1..=256"),
    ] {
        let error = Config::parse(&matches(lines), "x.toml").unwrap_err().to_string();
        assert!(error.contains(named), "{lines}: {error}");
    }
    // A run's stored config gets no default cap: one without a cap is refused, since its
    // games could run forever.
    let stored = Config::parse(&text, "x.toml").unwrap().to_toml();
    let uncapped = stored.replace("ply_cap = 40\n", "");
    assert_ne!(uncapped, stored);
    let error = Config::parse_stored(&uncapped, "run/config.toml").unwrap_err().to_string();
    assert!(error.contains("ply_cap"), "{error}");
    let share = text.replace("[training]", "[training]\nsearch_value_share = 1.5");
    assert!(Config::parse(&share, "x.toml")
        .unwrap_err()
        .to_string()
        .contains("search_value_share"));
    let opponent = |spec: &str, share: &str| {
        text.replace(
            "random_opening_plies = 2",
            &format!(
                "random_opening_plies = 2\nopponent = {{ player = \"{spec}\", share = {share} }}"
            ),
        )
    };
    Config::parse(&opponent("mcts-rollout:sims=100", "0.5"), "x.toml").unwrap();
    for (spec, share, named) in [
        ("net:models/x.safetensors", "0.5", "is a network"),
        ("mcts-rollout:time=0.1", "0.5", "time limit"),
        ("greedy", "0", "share"),
        ("greedy", "1.5", "share"),
        ("grredy", "0.5", "grredy"),
    ] {
        let error = Config::parse(&opponent(spec, share), "x.toml").unwrap_err().to_string();
        assert!(
            error.contains("selfplay.opponent") && error.contains(named),
            "{spec} {share}: {error}"
        );
    }
    // Several opponents, as an array; the one-table form reads as a list of one.
    let opponents = |list: &str| {
        text.replace(
            "random_opening_plies = 2",
            &format!("random_opening_plies = 2\nopponents = [{list}]"),
        )
    };
    let two = Config::parse(&opponents(r#"{ player = "greedy", share = 0.25 }, { player = "alphabeta:depth=2", share = 0.25 }"#), "x.toml").unwrap();
    assert_eq!(
        two.selfplay.opponents.iter().map(|o| o.player.as_str()).collect::<Vec<_>>(),
        ["greedy", "alphabeta:depth=2"]
    );
    assert_eq!(
        Config::parse(&opponent("greedy", "0.5"), "x.toml").unwrap().selfplay.opponents.len(),
        1
    );
    // What a run directory stores reads back the same.
    assert_eq!(Config::parse(&two.to_toml(), "x.toml").unwrap(), two);
    for (list, named) in [
        (
            r#"{ player = "greedy", share = 0.6 }, { player = "alphabeta:depth=2", share = 0.6 }"#,
            "add up to 1.2",
        ),
        (
            r#"{ player = "greedy", share = 0.2 }, { player = "greedy", share = 0.2 }"#,
            "given twice",
        ),
        (
            r#"{ player = "greedy", share = 0.2 }, { player = "alphabeta:depth=2", shares = 0.2 }"#,
            "shares",
        ),
    ] {
        let error = Config::parse(&opponents(list), "x.toml").unwrap_err().to_string();
        assert!(error.contains(named), "{list}: {error}");
    }
}

/// Every key has its default in the code, the value configs/default.toml shows, so that file,
/// an empty one and one naming a few keys all read as the default recipe where they say
/// nothing.
#[test]
fn configs_name_only_what_differs_from_the_defaults() {
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let default = Config::load(&configs.join("default.toml")).unwrap();
    assert_eq!(default, Config::default());
    assert_eq!(Config::parse("", "empty.toml").unwrap(), default);
    assert_eq!(default.rules.ply_cap, Some(epaminondas::config::DEFAULT_PLY_CAP));
    // A section that names one key keeps the defaults of the others, the search's root noise
    // (which a player's search has not) included, and a [rules] without a cap gets the default.
    let variant = Config::parse(
        "[rules]\nwidth = 10\nheight = 8\n[search]\nc_puct = 2.0\n[training]\nbatch_size = 64\n",
        "v.toml",
    )
    .unwrap();
    assert_eq!(
        (variant.rules.width, variant.rules.height, variant.rules.ply_cap),
        (10, 8, Some(300))
    );
    assert_eq!(
        variant.search,
        epaminondas::mcts::SearchConfig { c_puct: 2.0, ..default.search.clone() }
    );
    assert_eq!(
        variant.training,
        epaminondas::config::TrainingConfig { batch_size: 64, ..default.training.clone() }
    );
    assert_eq!(
        (variant.selfplay, variant.replay, variant.network),
        (default.selfplay.clone(), default.replay.clone(), default.network.clone())
    );
    // Left out, the threads are the cores this process may use, found on every start.
    assert_eq!(default.run.threads, None);
    assert_eq!(default.run.threads(), epaminondas::config::available_cores());
    assert!(!default.to_toml().contains("threads"));
}

/// Self-play's lanes: by default one per thread, on any device; a number set is kept; never
/// more lanes than games in lockstep.
#[test]
fn self_play_lanes_default_to_one_per_thread() {
    let default = Config::default().selfplay;
    assert_eq!(default.lanes, 0);
    assert_eq!(default.lanes(2), 2);
    assert_eq!(default.lanes(1), 1);
    assert_eq!(default.lanes(16), 16);
    let three = epaminondas::config::SelfPlayConfig { lanes: 3, ..default.clone() };
    assert_eq!(three.lanes(2), 3);
    let few = epaminondas::config::SelfPlayConfig { parallel_games: 4, ..default };
    assert_eq!(few.lanes(16), 4);
}

#[test]
fn broken_runs_fail_clearly_and_touch_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    Run::open(&run_dir, Some(smoke())).unwrap().train(Some(1), &Silent).unwrap();
    let state_before = std::fs::read(run_dir.join("state.json")).unwrap();

    // Another board size: incompatible.
    let mut other = smoke();
    other.rules.width = 10;
    let error = Run::open(&run_dir, Some(other)).err().unwrap().to_string();
    assert!(error.contains("incompatible") && error.contains("rules"), "{error}");

    // A corrupt checkpoint: named, and the run is left as it was.
    let checkpoint = checkpoint_path(&run_dir, 1);
    let good = std::fs::read(&checkpoint).unwrap();
    std::fs::write(&checkpoint, &good[..good.len() / 3]).unwrap();
    let error = Run::open(&run_dir, None).unwrap().train(Some(2), &Silent).unwrap_err().to_string();
    assert!(error.contains("gen-000001.safetensors"), "{error}");
    std::fs::write(&checkpoint, &good).unwrap();

    // A corrupt replay chunk: named too.
    let chunk = run_dir.join("replay/gen-000001.bin");
    let good_chunk = std::fs::read(&chunk).unwrap();
    std::fs::write(&chunk, &good_chunk[..good_chunk.len() - 7]).unwrap();
    let error = Run::open(&run_dir, None).unwrap().train(Some(2), &Silent).unwrap_err().to_string();
    assert!(error.contains("gen-000001.bin") && error.contains("corrupt"), "{error}");
    assert_eq!(std::fs::read(run_dir.join("state.json")).unwrap(), state_before);
    assert_eq!(metrics_generations(&run_dir), [1]);
    std::fs::write(&chunk, &good_chunk).unwrap();

    // state.json lost: a new start would write over generation 1's work, so it is refused,
    // with or without a config, and nothing is touched.
    std::fs::remove_file(run_dir.join("state.json")).unwrap();
    let state_missing = |config: Option<Config>| {
        let error = Run::open(&run_dir, config).err().unwrap();
        assert!(matches!(error, epaminondas::coach::RunError::StateMissing { .. }), "{error}");
        assert!(error.to_string().contains("state.json"), "{error}");
    };
    state_missing(Some(smoke()));
    state_missing(None);
    // So too for a pretrained run (a chunk 0), rather than naming chunk 0 as left by an
    // interrupted start.
    let chunk_zero = run_dir.join("replay/gen-000000.bin");
    std::fs::copy(&chunk, &chunk_zero).unwrap();
    state_missing(Some(smoke()));
    std::fs::remove_file(&chunk_zero).unwrap();
    // And with the config lost as well: not taken for a directory that holds no run.
    let config_text = std::fs::read(run_dir.join("config.toml")).unwrap();
    std::fs::remove_file(run_dir.join("config.toml")).unwrap();
    state_missing(None);
    std::fs::write(run_dir.join("config.toml"), &config_text).unwrap();
    assert_eq!(std::fs::read(&checkpoint).unwrap(), good);
    assert_eq!(metrics_generations(&run_dir), [1]);
    // The config lost instead: named, not taken for a new directory.
    std::fs::write(run_dir.join("state.json"), &state_before).unwrap();
    std::fs::remove_file(run_dir.join("config.toml")).unwrap();
    let error = Run::open(&run_dir, Some(smoke())).err().unwrap().to_string();
    assert!(error.contains("config.toml"), "{error}");
    std::fs::write(run_dir.join("config.toml"), config_text).unwrap();
    assert_eq!(Run::open(&run_dir, None).unwrap().state.generation, 1);

    // A start killed before its state.json (generation 0's files and a temporary file left)
    // is started again.
    let fresh = dir.path().join("fresh");
    Run::open(&fresh, Some(smoke())).unwrap();
    std::fs::remove_file(fresh.join("state.json")).unwrap();
    std::fs::write(fresh.join("checkpoints/.gen-000001.safetensors.tmp-7"), b"half").unwrap();
    assert_eq!(Run::open(&fresh, None).unwrap().state.generation, 0);
}

/// A training that diverges (here a learning rate no network survives) stops the run with an
/// error naming the generation, and saves nothing of it: the NaN weights would poison every
/// later generation. A network file holding a NaN is refused by name when loaded.
#[test]
fn a_diverged_training_saves_nothing_and_nan_weights_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let mut config = smoke();
    config.training.learning_rate = vec![(0, 1e30)];
    let error = Run::open(&run_dir, Some(config)).unwrap().train(Some(1), &Silent).unwrap_err();
    assert!(
        matches!(error, epaminondas::coach::RunError::Diverged { generation: 1, .. }),
        "{error}"
    );
    assert!(!checkpoint_path(&run_dir, 1).exists());
    assert_eq!(Run::open(&run_dir, None).unwrap().state.generation, 0);

    let network = Network::new(&smoke().net_config().unwrap(), tch::Device::Cpu, Some(1)).unwrap();
    let name = network.vs.variables().into_keys().min().unwrap();
    tch::no_grad(|| {
        let _ = network.vs.variables()[&name].get(0).fill_(f64::NAN);
    });
    let path = dir.path().join("nan.safetensors");
    network.save(&path, &Default::default()).unwrap();
    let error = Network::load(&path, tch::Device::Cpu).err().unwrap().to_string();
    assert!(error.contains(&name) && error.contains("not a finite number"), "{error}");
}

/// Self-play keeps the search's chances with every sample; the chunk format carries them and
/// still reads chunks written before them; training blends them into the value target by
/// `search_value_share`.
#[test]
fn searched_chances_are_kept_and_blended_into_the_value_target() {
    use epaminondas::evaluator::Wdl;
    use epaminondas::replay::{encode_chunk, read_chunk, read_samples};
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let config = smoke();
    Run::open(&run_dir, Some(config.clone())).unwrap().train(Some(1), &Silent).unwrap();
    let samples = read_chunk(&run_dir.join("replay"), 1, &config.rules).unwrap();
    assert!(samples.len() > 10);
    for sample in &samples {
        let Wdl { win, draw, loss } =
            sample.searched.expect("a self-play sample has the search's chances");
        assert!(
            [win, draw, loss].iter().all(|c| (0.0..=1.0).contains(c))
                && (win + draw + loss - 1.0).abs() < 1e-4,
            "{:?}",
            sample.searched
        );
    }
    // They are the search's estimates, not the results again.
    assert!(samples.iter().any(|s| s.searched != Some(Wdl::certain(s.outcome as f32))));

    // Round trip, with and without chances; a chunk of the first layout reads without them.
    let mut pair = vec![samples[0].clone(), samples[1].clone()];
    pair[1].searched = None;
    let path = dir.path().join("chunk.bin");
    std::fs::write(&path, encode_chunk(&pair, &config.rules)).unwrap();
    assert_eq!(read_samples(&path, &config.rules).unwrap(), pair);
    // Header 16 bytes (magic 8, width and height 2, ply cap 2, count 4), then two bitboards (64),
    // side, ply and outcome (4): the chances' flag is byte 84. The layouts before the ply cap
    // lack bytes 10-11, and read under the run's cap.
    let before_the_cap = |magic: &[u8; 8]| {
        let mut old = encode_chunk(&pair[1..], &config.rules);
        assert_eq!(old[10..12], 40u16.to_le_bytes(), "smoke's ply cap");
        assert_eq!(old[84], 0);
        old.drain(10..12);
        old[..8].copy_from_slice(magic);
        old
    };
    let mut old = before_the_cap(b"EPAMREP1");
    old.remove(82);
    std::fs::write(&path, &old).unwrap();
    assert_eq!(read_samples(&path, &config.rules).unwrap(), pair[1..]);
    std::fs::write(&path, before_the_cap(b"EPAMREP2")).unwrap();
    assert_eq!(read_samples(&path, &config.rules).unwrap(), pair[1..]);
    // The layout that kept piece leads after the chances (a flag and two bytes) reads with them
    // skipped, and a flag that is neither 0 nor 1 is refused by name.
    for (leads, expected) in
        [(vec![0u8], Ok(())), (vec![1, 3, 253], Ok(())), (vec![9], Err("piece-leads flag"))]
    {
        let mut with_leads = before_the_cap(b"EPAMREP3");
        with_leads.splice(83..83, leads);
        std::fs::write(&path, &with_leads).unwrap();
        match expected {
            Ok(()) => assert_eq!(read_samples(&path, &config.rules).unwrap(), pair[1..]),
            Err(problem) => {
                let error = read_samples(&path, &config.rules).unwrap_err().to_string();
                assert!(error.contains("chunk.bin") && error.contains(problem), "{error}");
            }
        }
    }
    // Chances that are not a distribution are refused by name.
    let mut bad = pair[..1].to_vec();
    bad[0].searched = Some(Wdl { win: 0.9, draw: 0.9, loss: 0.0 });
    std::fs::write(&path, encode_chunk(&bad, &config.rules)).unwrap();
    let error = read_samples(&path, &config.rules).unwrap_err().to_string();
    assert!(error.contains("chunk.bin") && error.contains("not a distribution"), "{error}");

    // The blend: a won game whose search gave (0.2, 0.3, 0.5).
    let mut won = samples[0].clone();
    won.outcome = 1;
    won.searched = Some(Wdl { win: 0.2, draw: 0.3, loss: 0.5 });
    let close =
        |got: [f32; 3], want: [f32; 3]| got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-6);
    assert!(close(train::value_target(&won, 0.0), [1.0, 0.0, 0.0]));
    assert!(
        close(train::value_target(&won, 0.5), [0.6, 0.15, 0.25]),
        "{:?}",
        train::value_target(&won, 0.5)
    );
    assert!(close(train::value_target(&won, 1.0), [0.2, 0.3, 0.5]));
    let mut unsearched = won.clone();
    unsearched.searched = None;
    assert!(close(train::value_target(&unsearched, 0.5), [1.0, 0.0, 0.0]));
    // And the batch carries it, mirrored or not.
    let batch = train::make_batch(
        &[&won, &unsearched],
        &[true, false],
        epaminondas::encode::Inputs::default(),
        0.5,
        tch::Device::Cpu,
    );
    let values: Vec<f32> = Vec::try_from(batch.value.flatten(0, -1)).unwrap();
    assert!(
        close(values[..3].try_into().unwrap(), [0.6, 0.15, 0.25])
            && close(values[3..].try_into().unwrap(), [1.0, 0.0, 0.0]),
        "{values:?}"
    );
}

/// Self-play tells where it stands about once a second while it plays, whether or not a game
/// has finished: plies, simulations and the time left (from the ply cap until a game ends).
#[test]
fn selfplay_reports_its_progress_while_games_are_under_way() {
    use epaminondas::evaluator::{EvalRequest, Evaluation, Evaluator, UniformEvaluator};
    use epaminondas::selfplay::{play_games, SelfPlayProgress};
    /// The uniform evaluator, slowed so that a short generation takes a few seconds.
    struct Slow;
    impl Evaluator for Slow {
        fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
            std::thread::sleep(std::time::Duration::from_millis(20));
            UniformEvaluator.evaluate(batch)
        }
    }
    let config = smoke();
    let mut reports: Vec<SelfPlayProgress> = Vec::new();
    let Ok(output) = play_games(
        &mut [Slow],
        config.rules,
        &config.search,
        &config.selfplay,
        5,
        "test",
        Vec::new(),
        &mut |_, _| Ok::<(), std::convert::Infallible>(()),
        &mut |p| reports.push(*p),
    );
    assert!(reports.len() >= 2, "{} reports in {:.1} s", reports.len(), output.stats.seconds);
    for pair in reports.windows(2) {
        assert!(
            pair[1].plies > pair[0].plies
                && pair[1].simulations > pair[0].simulations
                && pair[1].seconds > pair[0].seconds,
            "{pair:?}"
        );
    }
    let last = reports.last().unwrap();
    assert!(
        last.plies <= output.records.iter().map(|r| r.moves.len()).sum::<usize>()
            && last.simulations <= output.stats.simulations,
        "{last:?}"
    );
    assert_eq!((last.games_total, last.games_to_play), (4, 4));
    let first = reports[0];
    if first.games_done == 0 {
        assert_eq!(first.plies_per_game, 40.0, "no game has ended: the ply cap");
    }
    let left = first.time_left().unwrap().as_secs_f64();
    let expected =
        first.seconds / first.plies as f64 * (4.0 * first.plies_per_game - first.plies as f64);
    assert!((left - expected).abs() < 1e-6 && left > 0.0, "{left} against {expected}");
    assert!(
        (first.simulations_per_second() - first.simulations as f64 / first.seconds).abs() < 1e-9
    );
    // Games still under way that have played more than all were expected to: no estimate
    // rather than "nothing left"; once every game is done, nothing is.
    let outlived = SelfPlayProgress { games_done: 1, plies: 170, plies_per_game: 40.0, ..first };
    assert_eq!(outlived.time_left(), None);
    assert_eq!(
        SelfPlayProgress { games_done: 4, ..outlived }.time_left(),
        Some(std::time::Duration::ZERO)
    );
    // An expected length no duration holds (a resumed run's metrics.csv may say anything):
    // no estimate.
    for length in [f64::INFINITY, 1e300] {
        assert_eq!(SelfPlayProgress { plies_per_game: length, ..first }.time_left(), None);
    }
}

#[test]
fn value_targets_have_the_right_sign_for_both_colours() {
    assert_eq!(outcome_for(RecordResult::WhiteWins, Color::White), 1);
    assert_eq!(outcome_for(RecordResult::WhiteWins, Color::Black), -1);
    assert_eq!(outcome_for(RecordResult::BlackWins, Color::Black), 1);
    assert_eq!(outcome_for(RecordResult::BlackWins, Color::White), -1);
    assert_eq!(outcome_for(RecordResult::Draw, Color::White), 0);
    // A finished game: White steps onto row 12 and Black cannot answer.
    let start: Position = "14/w13/14/14/14/14/14/7b6/14/14/14/3w10 w".parse().unwrap();
    let entry = start.parse_move("a11-a12").unwrap();
    let after = start.play_unchecked(entry);
    let reply = after.legal_moves()[0];
    let record = GameRecord::new("a", "b", start, vec![entry, reply]);
    assert_eq!(record.result, RecordResult::WhiteWins);
    assert_eq!(outcome_for(record.result, start.side_to_move()), 1);
    assert_eq!(outcome_for(record.result, after.side_to_move()), -1);
}

/// A buffer of positions from one game, each with a made-up but consistent target: the first
/// legal move, and a result that depends on the side to move.
fn fixed_buffer() -> ReplayBuffer {
    let mut buffer = ReplayBuffer::default();
    let mut samples = Vec::new();
    let mut position = Position::standard();
    for _ in 0..32 {
        let moves = position.legal_moves();
        let index = epaminondas::encode::move_index(&position, moves[0]) as u16;
        let outcome = if position.side_to_move() == Color::White { 1 } else { -1 };
        samples.push(Sample { position, policy: vec![(index, 1.0)], outcome, searched: None });
        position = position.play_unchecked(moves[moves.len() / 2]);
    }
    buffer.push(1, samples);
    buffer
}

fn fixed_training() -> TrainingConfig {
    let mut training = smoke().training;
    training.batch_size = 32;
    training.mirror_augmentation = false;
    training
}

/// On a fixed small buffer the losses fall: the network, loss and optimiser can learn.
#[test]
fn training_lowers_the_loss_on_a_fixed_buffer() {
    for kind in [OptimizerKind::AdamW, OptimizerKind::Sgd] {
        let network =
            Network::new(&NetConfig::named("tiny").unwrap(), tch::Device::Cpu, Some(11)).unwrap();
        let buffer = fixed_buffer();
        let mut training = fixed_training();
        training.optimizer = kind;
        let rate = if kind == OptimizerKind::Sgd { 0.05 } else { 0.01 };
        let mut optimizer = Optimizer::new(&network, training.optimizer_settings());
        let mut rng = StdRng::seed_from_u64(1);
        let first = train::train(
            &network,
            &mut optimizer,
            Round { buffer: &buffer, window: 32, steps: 5, learning_rate: rate },
            &training,
            &mut rng,
            &|_| {},
        );
        let _ = train::train(
            &network,
            &mut optimizer,
            Round { buffer: &buffer, window: 32, steps: 150, learning_rate: rate },
            &training,
            &mut rng,
            &|_| {},
        );
        let last = train::train(
            &network,
            &mut optimizer,
            Round { buffer: &buffer, window: 32, steps: 5, learning_rate: rate },
            &training,
            &mut rng,
            &|_| {},
        );
        assert!(
            last.policy_loss < first.policy_loss * 0.5,
            "{kind:?}: policy loss {} -> {}",
            first.policy_loss,
            last.policy_loss
        );
        assert!(
            last.value_loss < first.value_loss * 0.5,
            "{kind:?}: value loss {} -> {}",
            first.value_loss,
            last.value_loss
        );
        assert!(last.value_accuracy > 0.9, "{kind:?}: value accuracy {}", last.value_accuracy);
        assert!(first.grad_norm > 0.0);
    }
}

/// Saving and loading the optimiser loses nothing: a network trained on after a save/load
/// round trip ends bit-identical to one trained straight through.
#[test]
fn optimizer_state_survives_a_save_and_load() {
    let dir = tempfile::tempdir().unwrap();
    let buffer = fixed_buffer();
    let training = fixed_training();
    let settings = training.optimizer_settings();
    let straight =
        Network::new(&NetConfig::named("tiny").unwrap(), tch::Device::Cpu, Some(5)).unwrap();
    let mut optimizer = Optimizer::new(&straight, settings);
    train::train(
        &straight,
        &mut optimizer,
        Round { buffer: &buffer, window: 32, steps: 10, learning_rate: 0.01 },
        &training,
        &mut StdRng::seed_from_u64(2),
        &|_| {},
    );
    let path = dir.path().join("optimizer.safetensors");
    optimizer.save(&path).unwrap();
    straight.save(&dir.path().join("net.safetensors"), &Default::default()).unwrap();

    let (resumed, _) =
        Network::load(&dir.path().join("net.safetensors"), tch::Device::Cpu).unwrap();
    let mut reloaded = Optimizer::load(&path, &resumed, settings).unwrap();
    assert_eq!(reloaded.steps(), 10);
    train::train(
        &straight,
        &mut optimizer,
        Round { buffer: &buffer, window: 32, steps: 5, learning_rate: 0.01 },
        &training,
        &mut StdRng::seed_from_u64(3),
        &|_| {},
    );
    train::train(
        &resumed,
        &mut reloaded,
        Round { buffer: &buffer, window: 32, steps: 5, learning_rate: 0.01 },
        &training,
        &mut StdRng::seed_from_u64(3),
        &|_| {},
    );
    for (name, tensor) in straight.vs.variables() {
        let other = &resumed.vs.variables()[&name];
        assert!(tensor.equal(other), "{name} differs after resuming the optimiser");
    }

    // The wrong kind, or a file that is not optimiser state, is refused by name.
    let sgd = OptimizerSettings { kind: OptimizerKind::Sgd, ..settings };
    let error = Optimizer::load(&path, &resumed, sgd).err().unwrap().to_string();
    assert!(error.contains("AdamW") && error.contains("Sgd"), "{error}");
    let error = Optimizer::load(&dir.path().join("net.safetensors"), &resumed, settings)
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("epaminondas-optimizer-v1"), "{error}");

    // A step count past what Adam's bias correction takes (an i32 exponent): refused, where it
    // would have wrapped to a division by zero and trained every weight into NaN.
    let bytes = std::fs::read(&path).unwrap();
    let length = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&bytes[8..8 + length]).unwrap();
    let mut edited_header =
        header.replace("\"steps\":\"10\"", "\"steps\":\"4294967296\"").into_bytes();
    assert_ne!(edited_header.len(), length, "{header}");
    while !edited_header.len().is_multiple_of(8) {
        edited_header.push(b' ');
    }
    let mut edited = (edited_header.len() as u64).to_le_bytes().to_vec();
    edited.extend(edited_header);
    edited.extend(&bytes[8 + length..]);
    std::fs::write(&path, edited).unwrap();
    let error = Optimizer::load(&path, &resumed, settings).err().unwrap().to_string();
    assert!(error.contains("bad steps \"4294967296\""), "{error}");
}

/// The medium agent, loaded in f32 on the CPU.
fn medium_agent() -> Network {
    let agent = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/anchored-values-6x64-step1600.safetensors"
    ));
    Network::load(agent, tch::Device::Cpu).unwrap().0
}

/// Evaluation requests for the positions of one game, 24 plies from the start.
fn positions_of_a_game() -> Vec<epaminondas::evaluator::EvalRequest> {
    let mut position = Position::standard();
    let mut requests = Vec::new();
    for ply in 0..24 {
        let moves = position.legal_moves();
        requests.push(epaminondas::evaluator::EvalRequest { position, moves: moves.clone() });
        position = position.play_unchecked(moves[(ply * 7) % moves.len()]);
    }
    requests
}

/// A bf16 copy for search computes nearly what its network does, in its own number format and
/// channels-last on the CPU, leaves the network as it was, and saves its own values in f32.
#[test]
fn a_bf16_copy_searches_like_its_network_and_saves_in_f32() {
    use epaminondas::evaluator::Evaluator;
    use epaminondas::nn::Precision;
    let mut network = medium_agent();
    let requests = positions_of_a_game();
    let before = network.evaluate(&requests);
    let mut copy = network.inference_copy(Precision::Bf16).unwrap();
    assert_eq!((network.kind(), copy.kind()), (tch::Kind::Float, tch::Kind::BFloat16));
    assert!(convolutions_channels_last(&copy) && !convolutions_channels_last(&network));
    assert_eq!(Precision::F32.resolve(tch::Device::Cpu), tch::Kind::Float);
    assert_eq!(Precision::Auto.resolve(tch::Device::Cuda(0)), tch::Kind::BFloat16);
    let rounded = copy.evaluate(&requests);
    let after = network.evaluate(&requests);
    let mut differs = false;
    for ((f32_eval, bf16_eval), again) in before.iter().zip(&rounded).zip(&after) {
        assert_eq!(
            (f32_eval.priors.clone(), f32_eval.value),
            (again.priors.clone(), again.value),
            "the original changed"
        );
        let prior_gap = f32_eval
            .priors
            .iter()
            .zip(&bf16_eval.priors)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(prior_gap < 0.05, "a prior moved by {prior_gap}");
        assert!(
            (f32_eval.value - bf16_eval.value).abs() < 0.1,
            "value {} in f32, {} in bf16",
            f32_eval.value,
            bf16_eval.value
        );
        differs |= f32_eval.priors != bf16_eval.priors;
    }
    assert!(differs, "the copy computed in f32");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bf16.safetensors");
    copy.save(&path, &Default::default()).unwrap();
    let (saved, _) = Network::load(&path, tch::Device::Cpu).unwrap();
    assert_eq!(saved.kind(), tch::Kind::Float);
    let copied = copy.vs.variables();
    for (name, tensor) in saved.vs.variables() {
        assert!(
            tensor.equal(&copied[&name].to_kind(tch::Kind::Float)),
            "{name} was not saved as its bf16 value"
        );
    }
    assert_eq!(copy.try_clone().unwrap().kind(), tch::Kind::BFloat16);
}

/// Whether a medium network's convolutions (4-d weights reading more than one channel) are all
/// laid out channels-last: the channel dimension has stride 1.
fn convolutions_channels_last(network: &Network) -> bool {
    let convolutions: Vec<tch::Tensor> =
        network.vs.variables().into_values().filter(|v| v.dim() == 4 && v.size()[1] > 1).collect();
    assert!(
        convolutions.len() > 10,
        "the medium network has more convolutions than {}",
        convolutions.len()
    );
    convolutions.iter().all(|v| v.stride()[1] == 1)
}

/// An f32 copy for search on the CPU stores its convolution weights channels-last (faster to
/// evaluate there; a bf16 copy too, checked above), with its batch norms folded into them, and
/// still computes what its network does, saves the usual layout and values, and keeps its
/// layout when cloned.
#[test]
fn an_f32_copy_for_search_is_laid_out_channels_last() {
    use epaminondas::evaluator::Evaluator;
    use epaminondas::nn::Precision;
    let mut network = medium_agent();
    let requests = positions_of_a_game();
    let mut copy = network.inference_copy(Precision::F32).unwrap();
    assert_eq!(copy.kind(), tch::Kind::Float);
    assert!(convolutions_channels_last(&copy) && !convolutions_channels_last(&network));
    // Its batch norms are folded into the convolutions, which must not change what it computes
    // (the agent's running statistics are far from the identity a fresh network has).
    assert!(copy.model.batch_norms_folded() && !network.model.batch_norms_folded());
    for (usual, searching) in network.evaluate(&requests).iter().zip(&copy.evaluate(&requests)) {
        let prior_gap = usual
            .priors
            .iter()
            .zip(&searching.priors)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(
            prior_gap < 1e-4 && (usual.value - searching.value).abs() < 1e-4,
            "a prior moved by {prior_gap}, the value by {}",
            usual.value - searching.value
        );
    }
    assert!(convolutions_channels_last(&copy.try_clone().unwrap()));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("searching.safetensors");
    copy.save(&path, &Default::default()).unwrap();
    let (saved, _) = Network::load(&path, tch::Device::Cpu).unwrap();
    let usual = network.vs.variables();
    for (name, tensor) in saved.vs.variables() {
        assert!(tensor.equal(&usual[&name]), "{name} was saved with other values");
    }
    assert!(!convolutions_channels_last(&saved));
}

/// Every shipped training config loads and validates, names the board it is for, and comes back
/// unchanged from the config.toml a run saves. (`distill.toml` is a distillation config,
/// checked in tests/distill.rs.)
#[test]
fn shipped_configs_load() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs"));
    let mut boards = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let distillation =
            path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("distill"));
        if path.extension().is_some_and(|e| e == "toml") && !distillation {
            let config = Config::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // A run saves its config and reads it back on resume: it must come back unchanged.
            let saved = config.to_toml();
            assert_eq!(Config::parse(&saved, "saved").unwrap(), config, "{saved}");
            boards.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                config.rules.width,
                config.rules.height,
                config.rules.stones,
            ));
        }
    }
    // f32 options are saved as written, not widened to f64 digits.
    let saved = Config::parse("[search]\ndraw_value = -0.7\n", "contempt.toml").unwrap().to_toml();
    assert!(
        saved.contains("draw_value = -0.7\n") && saved.contains("reduction = 0.2\n"),
        "{saved}"
    );
    boards.sort();
    let expected = [
        ("10x8.toml", 10, 8, false),
        ("8x8.toml", 8, 8, false),
        ("default.toml", 14, 12, false),
        ("gpu.toml", 14, 12, false),
        ("smoke.toml", 14, 12, false),
        ("stones.toml", 14, 12, true),
    ];
    assert_eq!(boards, expected.map(|(name, w, h, stones)| (name.to_string(), w, h, stones)));
}

/// The stones variant end to end: a generation of self-play from the placements on, its
/// records, replay chunk and training, then rating games, with a network built for stones.
#[test]
fn stones_run_learns_placements_too() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let mut config = smoke();
    config.rules.stones = true;
    config.selfplay.random_opening_plies = 0; // the search chooses the placements
    let mut run = Run::open(&run_dir, Some(config.clone())).unwrap();
    run.train(Some(1), &Silent).unwrap();
    // Every game replays and opens with Black's, White's and Black's stone.
    let records = GameRecord::parse_all(
        &std::fs::read_to_string(run_dir.join("games/gen-000001.txt")).unwrap(),
    )
    .unwrap();
    assert_eq!(records.len(), 4);
    for record in &records {
        assert!(record.rules().stones);
        assert!(
            record.moves.len() > 3 && record.moves[..3].iter().all(|mv| mv.is_placement()),
            "{record}"
        );
        assert!(record.moves[3..].iter().all(|mv| !mv.is_placement()));
        assert_eq!(record.final_position().stones().count(), 3);
        assert_eq!(GameRecord::parse(&record.to_string()).unwrap(), *record);
    }
    // The replay chunk reads back with its stones, and placement positions have targets on the
    // placement plane.
    let samples =
        epaminondas::replay::read_chunk(&run_dir.join("replay"), 1, &config.rules).unwrap();
    let area = 14 * 12;
    let placing: Vec<&Sample> = samples.iter().filter(|s| s.position.in_placement()).collect();
    assert!(!placing.is_empty(), "no placement position became a training target");
    for sample in &placing {
        assert!(sample
            .policy
            .iter()
            .all(|&(index, _)| index as usize / area == epaminondas::encode::PLANE_PLACE));
    }
    assert!(samples.iter().any(|s| s.position.stones().count() == 3));
    // The checkpoints are networks for the stones variant (7 + 1 input planes, 65 policy
    // planes), with the smoke config's 4 threat planes after the stones plane.
    let (network, _) = Network::load(&checkpoint_path(&run_dir, 1), tch::Device::Cpu).unwrap();
    assert!(network.config.stones && network.config.threats);
    assert_eq!((network.config.input_planes(), network.config.policy_planes()), (12, 65));
    assert!(network.vs.variables()["stem.conv.weight"].size()[1] == 12);
    // A standard network is refused for this game, and this network for the standard game.
    let standard_path = dir.path().join("standard.safetensors");
    Network::new(&NetConfig::named("tiny").unwrap(), tch::Device::Cpu, Some(1))
        .unwrap()
        .save(&standard_path, &Default::default())
        .unwrap();
    let error = epaminondas::players::check_net_rules(&standard_path, &config.rules)
        .unwrap_err()
        .to_string();
    assert!(error.contains("stones"), "{error}");
    let error =
        epaminondas::players::check_net_rules(&checkpoint_path(&run_dir, 1), &smoke().rules)
            .unwrap_err()
            .to_string();
    assert!(
        error.contains("trained for the stones variant, but this game is the game without stones"),
        "{error}"
    );
    assert!(
        epaminondas::players::check_net_rules(&checkpoint_path(&run_dir, 1), &config.rules).is_ok()
    );
}

/// Networks for the standard game are what they were: no stones key in their config, and a
/// file written before the variant existed loads as one.
#[test]
fn standard_network_files_are_unchanged_by_the_variant() {
    let tiny = NetConfig::named("tiny").unwrap();
    let json = serde_json::to_string(&tiny).unwrap();
    assert!(!json.contains("stones"), "{json}");
    let old: NetConfig = serde_json::from_str(
        r#"{"blocks":1,"channels":16,"policy_channels":8,"value_channels":8,"value_hidden":16}"#,
    )
    .unwrap();
    assert_eq!(old, tiny);
    let network = Network::new(&tiny, tch::Device::Cpu, Some(1)).unwrap();
    assert_eq!(network.vs.variables()["stem.conv.weight"].size()[1], 7);
    assert_eq!(network.vs.variables()["policy.out.weight"].size()[0], 64);
    // A shipped agent without stones and threat planes reads as standard.
    let shipped =
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/models/crossings-blend-gen70.safetensors"));
    let (network, _) = Network::load(shipped, tch::Device::Cpu).unwrap();
    assert!(!network.config.stones && !network.config.threats);
}

/// A game cut by the ply cap is a draw, in its record and in its value targets, whatever the
/// material; a game that ended on the board keeps its result.
#[test]
fn capped_games_are_draws() {
    use epaminondas::game::{Rules, Termination};
    use epaminondas::selfplay::target_result;
    let record_of = |text: &str, rules: Rules, moves: &[&str]| {
        let start = Position::parse(text, rules).unwrap();
        let mut position = start;
        let mut played = Vec::new();
        for text in moves {
            let mv = position.parse_move(text).unwrap();
            position = position.play(mv).unwrap();
            played.push(mv);
        }
        GameRecord::new("w", "b", start, played)
    };
    let capped = Rules { ply_cap: Some(2), ..Rules::default() };
    // White has three pieces to Black's two, far from each other.
    let record =
        record_of("14/14/b13/b13/14/14/14/14/14/13w/13w/13w w 0", capped, &["n3-m4", "a10-b9"]);
    assert_eq!((record.result, record.termination), (RecordResult::Draw, Termination::PlyCap));
    assert_eq!(target_result(&record), RecordResult::Draw);
    let record = record_of(
        "14/13w/b13/b13/b13/14/14/14/14/14/14/14 w 0",
        Rules::default(),
        &["n11-n12", "a8-a7"],
    );
    assert_eq!(
        (record.result, record.termination),
        (RecordResult::WhiteWins, Termination::BackRow)
    );
    assert_eq!(target_result(&record), RecordResult::WhiteWins);
}

/// `stall_plies`: a self-play game stops after that many plies in a row without a capture. Its
/// record is unfinished and says why, its value targets are scored as a capped game's, and a
/// game that captures in time goes on.
#[test]
fn self_play_stops_games_that_stall() {
    use epaminondas::evaluator::UniformEvaluator;
    use epaminondas::game::Termination;
    use epaminondas::selfplay::{play_games, target_result};
    let mut config = smoke();
    config.selfplay.games_per_generation = 8;
    let play = |config: &epaminondas::config::Config| {
        let Ok(output) = play_games(
            &mut [UniformEvaluator],
            config.rules,
            &config.search,
            &config.selfplay,
            3,
            "test",
            Vec::new(),
            &mut |_, _| Ok::<(), std::convert::Infallible>(()),
            &mut |_| {},
        );
        output
    };
    // 0 never stops a game: they all run to the cap.
    config.selfplay.stall_plies = 0;
    let never = play(&config);
    assert!(never.records.iter().all(|r| r.termination != Termination::Unfinished));
    config.selfplay.stall_plies = 12;
    let output = play(&config);
    assert_eq!(output.records.len(), 8);
    let mut stopped = 0;
    for record in &output.records {
        let positions = record.positions();
        let captures: Vec<bool> = positions
            .windows(2)
            .map(|w| w[1].occupied().count() < w[0].occupied().count())
            .collect();
        let quiet_tail = captures.iter().rev().take_while(|&&c| !c).count();
        if record.termination == Termination::Unfinished {
            stopped += 1;
            assert_eq!(quiet_tail, 12, "stopped exactly at the limit");
            assert!(
                record
                    .extra
                    .contains(&("Stopped".to_string(), "no capture in 12 plies".to_string())),
                "{:?}",
                record.extra
            );
            assert_eq!(target_result(record), RecordResult::Draw);
        } else {
            assert!(quiet_tail < 12, "a game that went on never stalled");
        }
        // No run of 12 quiet plies anywhere before the end.
        assert!(captures.split(|&c| c).all(|run| run.len() <= 12));
        // The saved record reads back with its tag.
        let reread = GameRecord::parse_all(&record.to_string()).unwrap();
        assert_eq!(reread[0].extra, record.extra);
    }
    assert!(stopped > 0, "12 plies is shorter than the opening before the first capture");
}

/// Priors and values of `network` for positions of one game with captures and far-row threats
/// about.
fn outputs_along_a_game(network: &mut Network) -> Vec<(Vec<f32>, f32)> {
    use epaminondas::evaluator::{EvalRequest, Evaluator};
    let mut position = Position::standard();
    let mut requests = Vec::new();
    for ply in 0..60u64 {
        let moves = position.legal_moves();
        if moves.is_empty() {
            break;
        }
        requests.push(EvalRequest { position, moves: moves.clone() });
        position = position.play(moves[(ply * 7919) as usize % moves.len()]).unwrap();
    }
    network.evaluate(&requests).into_iter().map(|e| (e.priors, e.value)).collect()
}

fn assert_same_outputs(before: &[(Vec<f32>, f32)], after: &[(Vec<f32>, f32)]) {
    assert_eq!(before.len(), after.len());
    for ((priors, value), (grown_priors, grown_value)) in before.iter().zip(after) {
        assert!((value - grown_value).abs() < 1e-4, "{value} against {grown_value}");
        assert!(priors.iter().zip(grown_priors).all(|(p, q)| (p - q).abs() < 1e-4));
    }
}

/// A run can start from a trained network's weights in a network that reads the threat planes
/// besides and is wider and deeper: its first network computes what the source did (new planes,
/// channels and blocks start without effect). A network of another game, or smaller in some
/// dimension, is refused with the reason.
#[test]
fn a_run_starts_from_a_trained_network_grown_and_with_threat_planes_added() {
    use epaminondas::coach::RunError;
    use epaminondas::nn::NetError;
    let dir = tempfile::tempdir().unwrap();
    // Every weight made non-zero (the output layers start at zero) so the comparison means
    // something.
    // Two blocks, so that the second one's pooled bias is widened too.
    let two_blocks = NetConfig { blocks: 2, ..NetConfig::named("tiny").unwrap() };
    let mut source = common::noisy_network(&two_blocks, 7, 0.1);
    assert!(!source.config.threats);
    let source_path = dir.path().join("source.safetensors");
    source.save(&source_path, &Default::default()).unwrap();
    // Every dimension larger: the trunk (2 x 16 to 4 x 32) and both heads.
    let mut grown = smoke();
    grown.network.threats = true;
    grown.network.size = Some("small".into());
    let run = Run::start_from(&dir.path().join("run"), grown.clone(), &source_path).unwrap();
    let (mut started, _) = Network::load(&checkpoint_path(&run.dir, 0), tch::Device::Cpu).unwrap();
    assert_eq!(started.config, NetConfig { threats: true, ..NetConfig::named("small").unwrap() });
    assert!(std::fs::read_to_string(run.dir.join("run.json"))
        .unwrap()
        .contains("source.safetensors"));
    assert_same_outputs(&outputs_along_a_game(&mut source), &outputs_along_a_game(&mut started));
    // A second start in the same directory would overwrite the run: refused.
    let again = Run::start_from(&run.dir, grown.clone(), &source_path);
    assert!(matches!(again, Err(RunError::AlreadyStarted { .. })));
    // Another game (stones) or a network narrower than the source: refused, saying why.
    let mut stones = grown.clone();
    stones.rules.stones = true;
    let refused = Run::start_from(&dir.path().join("stones"), stones, &source_path).err().unwrap();
    assert!(matches!(refused, RunError::Net(NetError::Incompatible { .. })), "{refused}");
    assert!(!dir.path().join("stones").exists(), "a refused start leaves no run directory behind");
    let mut narrower = grown.clone();
    narrower.network.channels = Some(8);
    let refused =
        Run::start_from(&dir.path().join("narrower"), narrower, &source_path).err().unwrap();
    assert!(refused.to_string().contains("at least as large"), "{refused}");
    // A deeper source would lend its first blocks and lose the rest unsaid.
    let mut deeper = grown.clone();
    deeper.network.blocks = Some(5);
    let deeper_path = dir.path().join("deeper.safetensors");
    Network::new(&deeper.net_config().unwrap(), tch::Device::Cpu, Some(7))
        .unwrap()
        .save(&deeper_path, &Default::default())
        .unwrap();
    let refused =
        Run::start_from(&dir.path().join("shallower"), grown, &deeper_path).err().unwrap();
    assert!(refused.to_string().contains("that this network lacks"), "{refused}");
}

/// A new run can begin with a network of another size trained on an earlier run's replay
/// buffer: that network fits the source's samples better than the same network untrained, the
/// optimiser's state and those samples go on into generation 1, run.json says what was done,
/// and a source of other rules, with no games yet, or no run at all, is refused by name and
/// leaves no directory behind.
#[test]
fn a_run_starts_from_another_runs_games_with_a_larger_network() {
    use epaminondas::coach::{Pretraining, RunError};
    let dir = tempfile::tempdir().unwrap();
    let source_dir = dir.path().join("source");
    Run::open(&source_dir, Some(smoke())).unwrap().train(Some(2), &Silent).unwrap();
    let rules = smoke().rules;
    let samples: Vec<Sample> = (1..=2)
        .flat_map(|g| {
            epaminondas::replay::read_chunk(&source_dir.join("replay"), g, &rules).unwrap()
        })
        .collect();

    let mut wider = smoke();
    wider.network.channels = Some(24);
    let pretraining = Pretraining { source_run: &source_dir, steps: 40, init: None };
    let mut run =
        Run::start_pretrained(&dir.path().join("wider"), wider.clone(), pretraining, &Silent)
            .unwrap();
    let (pretrained, _) = Network::load(&checkpoint_path(&run.dir, 0), tch::Device::Cpu).unwrap();
    assert_eq!(pretrained.config.channels, 24);
    let untrained =
        Network::new(&wider.net_config().unwrap(), tch::Device::Cpu, Some(wider.run.seed)).unwrap();
    let refs: Vec<&Sample> = samples.iter().collect();
    let batch = train::make_batch(
        &refs,
        &vec![false; refs.len()],
        pretrained.config.inputs(),
        0.0,
        tch::Device::Cpu,
    );
    let loss = |network: &Network| {
        train::losses(network, &batch, train::LossWeights { value: 1.0 }, false)
            .total
            .double_value(&[])
    };
    assert!(
        loss(&pretrained) < loss(&untrained) - 0.1,
        "pretrained {} untrained {}",
        loss(&pretrained),
        loss(&untrained)
    );
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["pretrained"]["samples"], samples.len());
    assert_eq!(info["pretrained"]["steps"], 40);
    assert_eq!(info["pretrained"]["generations"], serde_json::json!([1, 2]));
    assert!(run.dir.join("checkpoints/optimizer-000000.safetensors").exists());
    // The samples it learned from stay in its replay buffer as chunk 0, for its first
    // generations to train on too.
    let kept = epaminondas::replay::read_chunk(&run.dir.join("replay"), 0, &rules).unwrap();
    assert_eq!(kept.len(), samples.len());
    assert_eq!(run.state.total_samples, samples.len());
    run.train(Some(1), &Silent).unwrap();
    assert_eq!(metrics_generations(&run.dir), [1]);
    assert_eq!(run.replay_window().unwrap().generations(), [0, 1]);

    let again = Run::start_pretrained(
        &run.dir,
        wider.clone(),
        Pretraining { source_run: &source_dir, steps: 1, init: None },
        &Silent,
    );
    assert!(matches!(again, Err(RunError::AlreadyStarted { .. })));
    let mut other_rules = wider.clone();
    other_rules.rules.ply_cap = Some(41);
    let refused = Run::start_pretrained(
        &dir.path().join("other"),
        other_rules,
        Pretraining { source_run: &source_dir, steps: 1, init: None },
        &Silent,
    )
    .err()
    .unwrap();
    assert!(
        matches!(refused, RunError::Pretraining { .. }) && refused.to_string().contains("rules"),
        "{refused}"
    );
    let nowhere = dir.path().join("nowhere");
    let refused = Run::start_pretrained(
        &dir.path().join("other"),
        wider.clone(),
        Pretraining { source_run: &nowhere, steps: 1, init: None },
        &Silent,
    )
    .err()
    .unwrap();
    assert!(refused.to_string().contains("not a run directory"), "{refused}");
    let unplayed = dir.path().join("unplayed");
    Run::open(&unplayed, Some(smoke())).unwrap();
    let refused = Run::start_pretrained(
        &dir.path().join("other"),
        wider.clone(),
        Pretraining { source_run: &unplayed, steps: 1, init: None },
        &Silent,
    )
    .err()
    .unwrap();
    assert!(refused.to_string().contains("replay buffer is empty"), "{refused}");
    assert!(!dir.path().join("other").exists());

    // A pretrained start killed after writing its chunk 0 but before its state: opening the
    // directory as a new run would train random weights on those samples, so it is refused;
    // starting it again with pretraining works.
    let half_made = dir.path().join("half-made");
    std::fs::create_dir_all(half_made.join("replay")).unwrap();
    std::fs::copy(run.dir.join("replay/gen-000000.bin"), half_made.join("replay/gen-000000.bin"))
        .unwrap();
    std::fs::copy(run.dir.join("config.toml"), half_made.join("config.toml")).unwrap();
    let refused = Run::open(&half_made, None).err().unwrap();
    assert!(refused.to_string().contains("--pretrain-on"), "{refused}");
    let restarted = Run::start_pretrained(
        &half_made,
        wider,
        Pretraining { source_run: &source_dir, steps: 1, init: None },
        &Silent,
    )
    .unwrap();
    assert_eq!(restarted.state.total_samples, samples.len());
}

/// A trained network can go on in a new run with another run's replay buffer as its window
/// from the first generation: with `init` and no pretraining steps, generation 0's network is
/// the checkpoint's unchanged, the source's samples are chunk 0, and run.json names both the
/// weights and the samples (with no losses, as nothing was trained). A checkpoint larger than
/// the config's network in some dimension is refused and leaves no run behind.
#[test]
fn a_trained_network_goes_on_with_another_runs_buffer() {
    use epaminondas::coach::{Pretraining, RunError};
    use epaminondas::nn::NetError;
    let dir = tempfile::tempdir().unwrap();
    let source_dir = dir.path().join("source");
    Run::open(&source_dir, Some(smoke())).unwrap().train(Some(2), &Silent).unwrap();
    let rules = smoke().rules;
    let samples: Vec<Sample> = (1..=2)
        .flat_map(|g| {
            epaminondas::replay::read_chunk(&source_dir.join("replay"), g, &rules).unwrap()
        })
        .collect();
    let trained = checkpoint_path(&source_dir, 2);

    let pretraining = Pretraining { source_run: &source_dir, steps: 0, init: Some(&trained) };
    let mut run =
        Run::start_pretrained(&dir.path().join("on"), smoke(), pretraining, &Silent).unwrap();
    let (started, _) = Network::load(&checkpoint_path(&run.dir, 0), tch::Device::Cpu).unwrap();
    let (source, _) = Network::load(&trained, tch::Device::Cpu).unwrap();
    let refs: Vec<&Sample> = samples.iter().collect();
    let batch = train::make_batch(
        &refs,
        &vec![false; refs.len()],
        source.config.inputs(),
        0.0,
        tch::Device::Cpu,
    );
    let loss = |network: &Network| {
        train::losses(network, &batch, train::LossWeights { value: 1.0 }, false)
            .total
            .double_value(&[])
    };
    assert!(
        (loss(&started) - loss(&source)).abs() < 1e-9,
        "started {} source {}",
        loss(&started),
        loss(&source)
    );
    let fresh =
        Network::new(&smoke().net_config().unwrap(), tch::Device::Cpu, Some(smoke().run.seed))
            .unwrap();
    assert!(
        (loss(&fresh) - loss(&source)).abs() > 1e-3,
        "the checkpoint's weights, not the run's seed, were loaded"
    );
    assert_eq!(
        epaminondas::replay::read_chunk(&run.dir.join("replay"), 0, &rules).unwrap().len(),
        samples.len()
    );
    assert_eq!(run.state.total_samples, samples.len());
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["pretrained"]["steps"], 0);
    assert!(info["pretrained"].get("policy_loss").is_none(), "{info}");
    assert!(
        info["initialised_from"].as_str().unwrap().ends_with("gen-000002.safetensors"),
        "{info}"
    );
    run.train(Some(1), &Silent).unwrap();
    assert_eq!(run.replay_window().unwrap().generations(), [0, 1]);

    let mut narrower = smoke();
    narrower.network.channels = Some(8);
    let pretraining = Pretraining { source_run: &source_dir, steps: 0, init: Some(&trained) };
    let refused =
        Run::start_pretrained(&dir.path().join("narrower"), narrower, pretraining, &Silent)
            .err()
            .unwrap();
    assert!(matches!(refused, RunError::Net(NetError::Incompatible { .. })), "{refused}");
    assert!(
        !dir.path().join("narrower").exists(),
        "a refused start leaves no run directory behind"
    );
}

/// The run's first line says how many threads run and how idle libtorch threads wait: as the
/// environment says, else libgomp's default.
#[test]
fn the_first_line_names_threads_and_the_wait_policy() {
    let dir = tempfile::tempdir().unwrap();
    let smoke = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml");
    // --generations 0 creates the run and stops before self-play.
    let first_line = |run: &str, policy: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_epaminondas"));
        command
            .args(["train", "--generations", "0", "--config", smoke, "--run"])
            .arg(dir.path().join(run))
            .env_remove("OMP_WAIT_POLICY");
        if let Some(policy) = policy {
            command.env("OMP_WAIT_POLICY", policy);
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stderr).lines().next().unwrap_or_default().to_string()
    };
    let line = first_line("a", None);
    assert!(
        line.ends_with("idle libtorch threads: spin, then sleep (libgomp's default)")
            && line.contains("; threads: 2;"),
        "{line}"
    );
    let line = first_line("b", Some("passive"));
    assert!(line.ends_with("idle libtorch threads: passive"), "{line}");
}
