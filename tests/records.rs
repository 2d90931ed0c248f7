//! Game records held beside the replay window (`replay.records`): their positions and targets,
//! the mixture of each batch, the policy loss they stay out of, and a run that trains on them.

use epaminondas::coach::{Run, Silent};
use epaminondas::config::Config;
use epaminondas::game::{Color, GameRecord, Position, RecordResult, Rules};
use epaminondas::nn::{model::NetConfig, Network};
use epaminondas::replay::{samples_from_records, ReplayBuffer, ReplayError, Sample};
use epaminondas::train::{self, LossWeights};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::path::{Path, PathBuf};

mod common;

fn smoke() -> Config {
    Config::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml"))).unwrap()
}

/// A game White wins on its second move: a11-a12 reaches the far row, Black's one reply does not
/// take the piece there, and at White's next turn the back-row win stands.
fn white_wins_at_once() -> GameRecord {
    let start: Position = "14/w13/14/14/14/14/14/7b6/14/14/14/3w10 w".parse().unwrap();
    let entry = start.parse_move("a11-a12").unwrap();
    let reply = start.play_unchecked(entry).legal_moves()[0];
    let record = GameRecord::new("a", "b", start, vec![entry, reply]);
    assert_eq!(record.result, RecordResult::WhiteWins);
    record
}

/// A game of random moves from the standard start until it ends (a win, or the ply cap).
fn random_game(rules: Rules, seed: u64) -> GameRecord {
    use rand::Rng;
    let mut rng = StdRng::seed_from_u64(seed);
    let start = Position::start(rules).unwrap();
    let mut position = start;
    let mut moves = Vec::new();
    while position.status() == epaminondas::game::Status::Ongoing {
        let legal = position.legal_moves();
        let mv = legal[rng.random_range(0..legal.len())];
        moves.push(mv);
        position = position.play_unchecked(mv);
    }
    GameRecord::new("random", "random", start, moves)
}

fn write_records(path: &Path, records: &[GameRecord]) {
    std::fs::write(path, records.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
}

#[test]
fn record_positions_carry_their_games_results_and_no_policy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.txt");
    let won = white_wins_at_once();
    let capped = random_game(smoke().rules, 3);
    write_records(&path, &[won.clone(), capped.clone()]);
    let samples = samples_from_records(&[path], &Rules::default()).unwrap();
    // The won game's two positions with a move to play (not the last, whose side to move has
    // won), then the 40 of the game of random moves before the cap of 40 plies ended it (at
    // the cap no move is left to play).
    let positions = won.positions();
    assert_eq!(samples[0].position, positions[0]);
    assert_eq!(samples[1].position, positions[1]);
    assert_eq!(
        (samples[0].outcome, samples[1].outcome),
        (1, -1),
        "White to move won, Black to move lost"
    );
    assert_eq!(
        (capped.termination, capped.moves.len()),
        (epaminondas::game::Termination::PlyCap, 40)
    );
    assert_eq!(samples.len(), 2 + 40);
    let capped_outcome = |side: Color| epaminondas::replay::outcome_for(capped.result, side);
    for sample in &samples[2..] {
        assert_eq!(sample.outcome, capped_outcome(sample.position.side_to_move()));
    }
    assert!(samples.iter().all(|s| s.policy.is_empty() && s.searched.is_none()));
}

#[test]
fn records_that_cannot_be_trained_on_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.txt");
    let error =
        samples_from_records(std::slice::from_ref(&missing), &Rules::default()).unwrap_err();
    assert!(
        matches!(error, ReplayError::Io { .. }) && error.to_string().contains("missing.txt"),
        "{error}"
    );

    let garbled = dir.path().join("garbled.txt");
    std::fs::write(&garbled, "[White \"a\"]\n[Black \"b\"]\n\n1. z99-z98 1-0\n").unwrap();
    let error =
        samples_from_records(std::slice::from_ref(&garbled), &Rules::default()).unwrap_err();
    assert!(
        matches!(error, ReplayError::Records { .. }) && error.to_string().contains("garbled.txt"),
        "{error}"
    );

    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let error = samples_from_records(std::slice::from_ref(&empty), &Rules::default()).unwrap_err();
    assert!(
        matches!(error, ReplayError::NoGames { .. }) && error.to_string().contains("empty.txt"),
        "{error}"
    );

    // Games of another board are not this run's game; the second game in the file is named.
    let small = dir.path().join("small.txt");
    let rules = Rules { width: 8, height: 8, ..Rules::default() };
    write_records(&small, &[white_wins_at_once(), random_game(rules, 1)]);
    let error = samples_from_records(std::slice::from_ref(&small), &Rules::default()).unwrap_err();
    assert!(matches!(error, ReplayError::OtherGame { game: 2, .. }), "{error}");
    assert!(
        error.to_string().contains("small.txt") && error.to_string().contains("8x8"),
        "{error}"
    );
}

/// Samples with a policy target from the start position onwards (the first legal move) and a
/// made-up result, as self-play's would be.
fn self_play_samples(count: usize, outcome: i8) -> Vec<Sample> {
    let mut samples = Vec::new();
    let mut position = Position::standard();
    for _ in 0..count {
        let moves = position.legal_moves();
        let index = epaminondas::encode::move_index(&position, moves[0]) as u16;
        samples.push(Sample { position, policy: vec![(index, 1.0)], outcome, searched: None });
        position = position.play_unchecked(moves[moves.len() / 3]);
    }
    samples
}

#[test]
fn every_batch_holds_the_records_share() {
    let mut buffer = ReplayBuffer::default();
    buffer.push(1, self_play_samples(40, 1));
    let plain: Vec<Position> = buffer
        .draw_batch(40, 16, &mut StdRng::seed_from_u64(4))
        .iter()
        .map(|s| s.position)
        .collect();
    // Without records a batch is the window's draws one by one, as before records existed.
    let mut rng = StdRng::seed_from_u64(4);
    let one_by_one: Vec<Position> = (0..16).map(|_| buffer.sample(40, &mut rng).position).collect();
    assert_eq!(plain, one_by_one);

    let records = self_play_samples(10, -1)
        .into_iter()
        .map(|s| Sample { policy: Vec::new(), ..s })
        .collect::<Vec<_>>();
    buffer.hold_records(records, 0.25);
    assert_eq!(buffer.len(), 40, "records are not in the window");
    let mut rng = StdRng::seed_from_u64(5);
    for _ in 0..20 {
        let batch = buffer.draw_batch(40, 16, &mut rng);
        assert_eq!(batch.len(), 16);
        assert_eq!(
            batch.iter().filter(|s| s.policy.is_empty()).count(),
            4,
            "a quarter of 16 from the records"
        );
    }
    // The share is rounded: 0.25 of 10 is 2.5, drawn as 3 (rounded half away from zero).
    assert_eq!(
        buffer.draw_batch(40, 10, &mut rng).iter().filter(|s| s.policy.is_empty()).count(),
        3
    );
}

#[test]
fn samples_without_a_policy_target_add_nothing_to_the_policy_loss() {
    let network =
        Network::new(&NetConfig::named("tiny").unwrap(), tch::Device::Cpu, Some(3)).unwrap();
    let with_policy = self_play_samples(6, 1);
    let without: Vec<Sample> = self_play_samples(12, -1)
        .into_iter()
        .skip(6)
        .map(|s| Sample { policy: Vec::new(), ..s })
        .collect();
    let inputs = network.config.inputs();
    let weights = LossWeights { value: 1.0 };
    let batch_of = |samples: &[&Sample]| {
        train::make_batch(samples, &vec![false; samples.len()], inputs, 0.0, tch::Device::Cpu)
    };
    let alone: Vec<&Sample> = with_policy.iter().collect();
    let mixed: Vec<&Sample> = with_policy.iter().chain(&without).collect();
    let records: Vec<&Sample> = without.iter().collect();
    let losses_of = |samples: &[&Sample]| {
        tch::no_grad(|| train::losses(&network, &batch_of(samples), weights, false))
    };
    let (alone, records, mixed) = (losses_of(&alone), losses_of(&records), losses_of(&mixed));
    assert!(
        (alone.policy - mixed.policy).abs() < 1e-5,
        "policy loss {} alone, {} with the records",
        alone.policy,
        mixed.policy
    );
    assert!(
        alone.policy > 1.0,
        "an untrained network is far from a one-hot target: {}",
        alone.policy
    );
    assert_eq!(records.policy, 0.0, "a batch of records alone has no policy loss");
    // The value loss is the mean over all of them, records included.
    assert!(
        (mixed.value - (alone.value + records.value) / 2.0).abs() < 1e-5,
        "value loss {} and {} alone, {} mixed",
        alone.value,
        records.value,
        mixed.value
    );
}

/// Trained with records whose results contradict self-play's, the value learns the records'
/// positions as they say, while the policy learns from self-play.
#[test]
fn training_learns_the_records_values() {
    let network =
        Network::new(&NetConfig::named("tiny").unwrap(), tch::Device::Cpu, Some(11)).unwrap();
    let mut buffer = ReplayBuffer::default();
    buffer.push(1, self_play_samples(32, 1));
    // Positions of another line of play, each lost for the side to move.
    let mut records = Vec::new();
    let mut position = Position::standard();
    for _ in 0..16 {
        let moves = position.legal_moves();
        position = position.play_unchecked(moves[moves.len() - 1]);
        records.push(Sample { position, policy: Vec::new(), outcome: -1, searched: None });
    }
    buffer.hold_records(records.clone(), 0.5);
    let mut training = smoke().training;
    training.batch_size = 32;
    training.mirror_augmentation = false;
    let (first, last) = common::train_first_and_last(&network, &buffer, &training);
    assert!(
        last.policy_loss < first.policy_loss * 0.5,
        "policy loss {} -> {}",
        first.policy_loss,
        last.policy_loss
    );
    let on_records = train::held_out_losses(&network, &records, 0.0).unwrap();
    let on_self_play = train::held_out_losses(&network, &self_play_samples(32, 1), 0.0).unwrap();
    assert!(
        on_records.value < 0.2 && on_self_play.value < 0.2,
        "value loss {} on the records, {} on self-play",
        on_records.value,
        on_self_play.value
    );
}

#[test]
fn a_run_trains_on_records_beside_its_self_play() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games.txt");
    write_records(&games, &[white_wins_at_once(), random_game(smoke().rules, 8)]);
    let held = samples_from_records(std::slice::from_ref(&games), &smoke().rules).unwrap().len();
    let mut config = smoke();
    config.replay.records = vec![games.clone()];
    config.replay.records_share = 0.25;
    let run_dir = dir.path().join("run");
    let messages = common::Messages::default();
    Run::open(&run_dir, Some(config.clone())).unwrap().train(Some(1), &messages).unwrap();
    let said = messages.0.borrow().join("\n");
    assert!(said.contains(&format!("holding {held} positions of 1 record files")), "{said}");
    // The run's stored config keeps them, so a resume holds them too.
    let stored = Config::load(&run_dir.join("config.toml")).unwrap();
    assert_eq!(
        (stored.replay.records.clone(), stored.replay.records_share),
        (vec![games.clone()], 0.25)
    );
    Run::open(&run_dir, None).unwrap().train(Some(2), &Silent).unwrap();

    // The same run without them trains other weights from the same games: the records were
    // drawn.
    let plain_dir = dir.path().join("plain");
    Run::open(&plain_dir, Some(smoke())).unwrap().train(Some(1), &Silent).unwrap();
    // (By tensor: the files' bytes differ even for the same weights.)
    let weights = |dir: &Path| common::tensors(&epaminondas::coach::checkpoint_path(dir, 1));
    assert_eq!(
        std::fs::read(run_dir.join("games/gen-000001.txt")).unwrap(),
        std::fs::read(plain_dir.join("games/gen-000001.txt")).unwrap()
    );
    assert_ne!(weights(&run_dir), weights(&plain_dir));

    // A records file gone by the next invocation is named, and the run is left as it was.
    std::fs::remove_file(&games).unwrap();
    let state = std::fs::read(run_dir.join("state.json")).unwrap();
    let error = Run::open(&run_dir, None).unwrap().train(Some(3), &Silent).unwrap_err().to_string();
    assert!(error.contains("games.txt"), "{error}");
    assert_eq!(std::fs::read(run_dir.join("state.json")).unwrap(), state);
}

#[test]
fn record_settings_that_cannot_work_are_refused() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml"))
        .unwrap();
    let with = |settings: &str| text.replace("[replay]", &format!("[replay]\n{settings}"));
    let parsed =
        Config::parse(&with("records = [\"a.txt\"]\nrecords_share = 0.3"), "x.toml").unwrap();
    assert_eq!(
        (parsed.replay.records, parsed.replay.records_share),
        (vec![PathBuf::from("a.txt")], 0.3)
    );
    for (settings, named) in [
        ("records = [\"a.txt\"]\nrecords_share = 1.0", "records_share"),
        ("records = [\"a.txt\"]\nrecords_share = -0.1", "records_share"),
        ("records_share = 0.3", "names no files"),
        ("records = [\"a.txt\"]", "records_share is 0"),
    ] {
        let error = Config::parse(&with(settings), "x.toml").unwrap_err().to_string();
        assert!(error.contains(named), "{settings}: {error}");
    }
    // A config without them saves as it did before they existed.
    assert!(!smoke().to_toml().contains("records"));
}
