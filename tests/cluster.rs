//! The cluster end to end: a real `nats-server` with JetStream, a learner (`train --cluster`)
//! and workers (`worker`) as processes of the built binary. Workers and the learner are killed
//! with SIGKILL mid-run and the learner restarted; every generation must then be committed once
//! with its number of games, each game taken once, and the games played by the workers.
//!
//! What it needs: `nats-server` (Debian's package of that name). When it is missing the test
//! installs it with apt-get (as root, or through passwordless sudo); when it cannot be had the
//! tests pass after printing `SKIPPED` and the reason.

#[path = "support/apt.rs"]
mod apt;

use epaminondas::cluster::message::{GameHeader, GameMessage};
use epaminondas::cluster::{Cluster, ClusterOptions};
use epaminondas::game::{GameRecord, Position, Rules};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_epaminondas");

fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The nats-server program, installed if need be; None (said) when it cannot be had. The
/// tests run in parallel, so the first to ask installs it and the others wait for its answer:
/// two apt-gets at once fight over dpkg's lock, and the loser's test would be skipped.
fn nats_server() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    let found = FOUND.get_or_init(|| {
        apt::ensure(&["nats-server"], Duration::from_secs(120), || {
            apt::find_program(&["nats-server"])
        })
    });
    match found {
        Ok(program) => Some(program.clone()),
        Err(problem) => {
            say(&format!("SKIPPED: the cluster tests need nats-server: {problem}"));
            None
        }
    }
}

/// A nats-server with JetStream on a local port of its own choosing, its store in a folder of
/// its own; it is killed when dropped. The server picks the port itself (`-p -1`) and names it
/// in its log: a port the test found free and handed over could be taken by another test's
/// server in between, and this test would then talk to that one until it went away.
struct Server {
    process: Child,
    port: u16,
    _store: tempfile::TempDir,
}

impl Server {
    fn start(program: &Path, extra: &[&str]) -> Server {
        let store = tempfile::tempdir().unwrap();
        let mut process = Command::new(program)
            .args(["-js", "-a", "127.0.0.1", "-p", "-1", "-sd"])
            .arg(store.path())
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let log = process.stderr.take().unwrap();
        // Reads the log to its end, so that the server never blocks on a full pipe.
        std::thread::spawn(move || {
            const LISTENING: &str = "Listening for client connections on 127.0.0.1:";
            for line in BufReader::new(log).lines().map_while(Result::ok) {
                if let Some(port) = line.split_once(LISTENING).and_then(|(_, p)| p.parse().ok()) {
                    let _ = port_tx.send(port);
                }
            }
        });
        let port: u16 = port_rx
            .recv_timeout(Duration::from_secs(15))
            .expect("nats-server named no client port in its log within 15 s");
        let ready = Instant::now() + Duration::from_secs(15);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < ready, "nats-server did not listen on port {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        Server { process, port, _store: store }
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// A process of the binary whose stderr is collected (and echoed when the test fails).
struct Program {
    child: Child,
    output: Arc<Mutex<String>>,
}

impl Program {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Program {
        let mut child = Command::new(BINARY)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        for stream in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let output = Arc::clone(&output);
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let mut output = output.lock().unwrap();
                    output.push_str(&line);
                    output.push('\n');
                }
            });
        }
        Program { child, output }
    }

    fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// SIGKILL: nothing of the process runs after it.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn wait_until(&mut self, what: &str, limit: Duration, done: impl Fn(&Program) -> bool) {
        let deadline = Instant::now() + limit;
        while !done(self) {
            if let Ok(Some(status)) = self.child.try_wait() {
                if !done(self) {
                    panic!("the process ended ({status}) before {what}:\n{}", self.output());
                }
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}:\n{}", self.output());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for the process to end by itself.
    fn finish(&mut self, limit: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(200)); // the last lines of its output
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for it to end:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Publishes bytes on the games stream's subject, as a faulty or hostile client could.
fn publish_raw(server: &Server, payload: &'static [u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let client = async_nats::connect(server.url()).await.unwrap();
        let jetstream = async_nats::jetstream::new(client);
        jetstream.publish("epaminondas.games", payload.into()).await.unwrap().await.unwrap();
    });
}

fn smoke_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/smoke.toml")
}

/// Generations committed so far (rows of metrics.csv).
fn committed(run: &Path) -> usize {
    std::fs::read_to_string(run.join("metrics.csv"))
        .map_or(0, |text| text.lines().count().saturating_sub(1))
}

/// Games per generation in configs/smoke.toml.
const GAMES_PER_GENERATION: usize = 4;

/// Generations committed, and the games in the journal of the one after them.
fn progress(run: &Path) -> (u32, usize) {
    let generation = committed(run) as u32;
    let journal = run.join("selfplay").join(format!("gen-{:06}", generation + 1));
    let taken = std::fs::read_dir(journal).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                name.starts_with("game-") && name.ends_with(".txt")
            })
            .count()
    });
    (generation, taken)
}

/// `progress` once it has not changed for 5 seconds with fewer than a generation's games taken
/// (the learner waiting for games).
fn settled(run: &Path, learning: &mut Program) -> (u32, usize) {
    let mut last = progress(run);
    let mut since = Instant::now();
    let deadline = since + Duration::from_secs(120);
    while since.elapsed() < Duration::from_secs(5) || last.1 >= GAMES_PER_GENERATION {
        assert!(Instant::now() < deadline, "the games never settled:\n{}", learning.output());
        if let Ok(Some(status)) = learning.child.try_wait() {
            panic!("the learner ended ({status}) while waiting for games:\n{}", learning.output());
        }
        std::thread::sleep(Duration::from_millis(50));
        let now = progress(run);
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
    last
}

fn worker(server: &Server, name: &str) -> Program {
    worker_with(server, name, &[])
}

/// A worker with `more` flags after the usual ones.
fn worker_with(server: &Server, name: &str, more: &[&str]) -> Program {
    let url = server.url();
    let mut args = vec!["worker", "--cluster", &url, "--name", name, "--threads", "1"];
    args.extend_from_slice(more);
    Program::start(&args, &[])
}

fn learner(server: &Server, config: &Path, run: &Path, generations: u32) -> Program {
    Program::start(
        &[
            "train",
            "--config",
            config.to_str().unwrap(),
            "--run",
            run.to_str().unwrap(),
            "--cluster",
            &server.url(),
            "--generations",
            &generations.to_string(),
        ],
        &[],
    )
}

#[test]
fn a_learner_and_two_workers_lose_nothing_and_count_nothing_twice_when_killed() {
    let Some(program) = nats_server() else { return };
    let server = Server::start(&program, &[]);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let generations = 12;
    // The workers play one game at a time: a fresh network's games all run to the ply cap, so
    // games played side by side would end together, and the moment below (some but not all of
    // a generation's games taken) would last no time at all.
    let config = dir.path().join("config.toml");
    let smoke = std::fs::read_to_string(smoke_config()).unwrap();
    assert!(smoke.contains("parallel_games = 3"), "configs/smoke.toml changed");
    std::fs::write(&config, smoke.replace("parallel_games = 3", "parallel_games = 1")).unwrap();

    // A game that does not read, and one of another run, waiting before any other: refused,
    // counted, never trained on.
    let options = ClusterOptions { url: server.url(), ..Default::default() };
    let cluster = Cluster::connect(&options).unwrap();
    cluster.prepare().unwrap();
    let record = GameRecord::new("x", "y", Position::start(Rules::default()).unwrap(), Vec::new());
    let foreign = GameMessage {
        header: GameHeader {
            run: "another-run".into(),
            worker: "stranger".into(),
            serial: 0,
            network: 0,
            simulations: 0,
            seconds: 0.0,
        },
        record,
        samples: Vec::new(),
    };
    cluster.publish_game(&foreign).unwrap();
    publish_raw(&server, b"not a game");

    let mut first = worker(&server, "first");
    let second = worker(&server, "second");
    let mut learning = learner(&server, &config, &run, generations);
    learning.wait_until("generation 1", Duration::from_secs(120), |_| committed(&run) >= 1);

    // A worker killed mid-run loses only its unfinished games.
    first.kill();
    let third = worker(&server, "third");
    learning.wait_until("generation 2", Duration::from_secs(120), |_| committed(&run) >= 2);

    // The learner killed mid-generation, some but not all of the generation's games in its
    // journal. Polling for that moment misses it (a generation takes a second), so the moment is
    // made: the workers are killed, the learner takes what the server still holds and waits;
    // while its journal is empty, a worker that plays one game and leaves is started.
    let mut names: Vec<String> = ["first", "second", "third"].map(String::from).to_vec();
    drop((second, third));
    loop {
        let (generation, taken) = settled(&run, &mut learning);
        if (1..GAMES_PER_GENERATION).contains(&taken) {
            break;
        }
        let name = format!("spare{}", names.len() - 2);
        let mut spare = worker_with(&server, &name, &["--games", "1"]);
        names.push(name);
        learning.wait_until("a game taken", Duration::from_secs(120), |_| {
            progress(&run) != (generation, taken)
        });
        let status = spare.finish(Duration::from_secs(60));
        assert!(status.success(), "the one-game worker failed:\n{}", spare.output());
        assert!(
            spare.output().contains("published the games asked for (1); leaving"),
            "{}",
            spare.output()
        );
    }
    // Restarted, it takes the generation's journal and the games it had not acknowledged, and
    // counts none of them twice.
    learning.kill();
    let mut learning = learner(&server, &config, &run, generations);
    let last = worker(&server, "last");
    names.push("last".into());
    let status = learning.finish(Duration::from_secs(180));
    assert!(status.success(), "the restarted learner failed:\n{}", learning.output());
    assert!(learning.output().contains("taken before the stop"), "{}", learning.output());
    drop(last);

    // Every generation committed once, with its number of games.
    let metrics = std::fs::read_to_string(run.join("metrics.csv")).unwrap();
    let rows: Vec<Vec<&str>> = metrics.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let numbers: Vec<String> = rows.iter().map(|r| r[0].to_string()).collect();
    let expected: Vec<String> = (1..=generations).map(|g| g.to_string()).collect();
    assert_eq!(numbers, expected, "{metrics}");
    assert!(rows.iter().all(|r| r[1] == "4"), "every generation holds 4 games:\n{metrics}");
    // Each game taken once, all played by the workers.
    let mut ids = HashSet::new();
    let mut by_worker: BTreeMap<String, usize> = BTreeMap::new();
    for generation in 1..=generations {
        let path = run.join("games").join(format!("gen-{generation:06}.txt"));
        let records = GameRecord::parse_all(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(records.len(), 4, "{}", path.display());
        for record in records {
            let id = epaminondas::cluster::learner::game_id_of(&record).unwrap().to_string();
            assert!(ids.insert(id.clone()), "game {id} was taken twice");
            let worker = epaminondas::cluster::learner::worker_of(&record).unwrap();
            let name = worker.split('-').next().unwrap().to_string();
            assert!(names.contains(&name), "{worker}");
            *by_worker.entry(name).or_default() += 1;
        }
    }
    assert!(by_worker.len() >= 2, "games of one worker only: {by_worker:?}");
    // The refused games are counted in cluster.csv.
    let table = std::fs::read_to_string(run.join("cluster.csv")).unwrap();
    let refused: usize = table
        .lines()
        .skip(1)
        .map(|line| line.split(',').nth(5).unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(refused, 2, "{table}");
}

#[test]
fn workers_present_counts_each_worker_once_however_often_it_says_so() {
    let Some(program) = nats_server() else { return };
    let server = Server::start(&program, &[]);
    let options = ClusterOptions { url: server.url(), ..Default::default() };
    let (first, second) =
        (Cluster::connect(&options).unwrap(), Cluster::connect(&options).unwrap());
    first.prepare().unwrap();
    assert_eq!(first.workers_present().unwrap(), 0);
    // A name with a dot and a space (not allowed in a subject) and a worker heard twice, over
    // two connections.
    first.announce_worker("host.example.org worker-1").unwrap();
    first.announce_worker("w-2").unwrap();
    second.announce_worker("w-2").unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let announcements = || {
        runtime.block_on(async {
            let client = async_nats::connect(server.url()).await.unwrap();
            let jetstream = async_nats::jetstream::new(client);
            let mut stream = jetstream.get_stream("EPAMINONDAS_WORKERS").await.unwrap();
            stream.info().await.unwrap().state.last_sequence
        })
    };
    let heard = Instant::now() + Duration::from_secs(10);
    while announcements() < 3 {
        assert!(Instant::now() < heard, "three announcements were not stored");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(first.workers_present().unwrap(), 2);
    assert_eq!(second.workers_present().unwrap(), 2);
}

/// A worker abandons its games under way only when the learner can no longer take them: no
/// generation still to come takes their network (the default's `max_network_age` is 1) or is
/// played on their board (the default plays generations 1-32 on 8x8), or the newest network is
/// of another run.
#[test]
fn a_worker_abandons_games_only_when_the_learner_can_no_longer_take_them() {
    use epaminondas::cluster::worker::still_taken;
    use epaminondas::cluster::NetworkNotice;
    let config = epaminondas::config::Config::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/default.toml"
    )))
    .unwrap();
    let network = |version| NetworkNotice::new("run", version);
    let (small, large) = (config.rules_for(32), config.rules_for(33));
    assert_eq!((small.width, large.width), (8, 14));
    assert!(still_taken(&config, &network(3), &network(4), &small));
    assert!(!still_taken(&config, &network(3), &network(5), &small), "two networks newer");
    assert!(!still_taken(&config, &network(3), &NetworkNotice::new("other", 4), &small));
    // Generation 32, the last on 8x8, takes network 30's games; 33 plays on 14x12.
    assert!(still_taken(&config, &network(30), &network(31), &small));
    assert!(!still_taken(&config, &network(31), &network(32), &small), "the board is left");
    assert!(still_taken(&config, &network(31), &network(32), &large));
}

#[test]
fn a_worker_with_wrong_credentials_or_no_server_says_why_and_keeps_trying() {
    let Some(program) = nats_server() else { return };
    let server = Server::start(&program, &["--user", "learner", "--pass", "right"]);
    let mut refused = Program::start(
        &["worker", "--cluster", &server.url(), "--user", "learner", "--name", "w"],
        &[("EPAMINONDAS_NATS_PASSWORD", "wrong")],
    );
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut unreachable = Program::start(
        &["worker", "--cluster", &format!("nats://127.0.0.1:{port}"), "--name", "w"],
        &[],
    );
    for (worker, why) in
        [(&mut refused, "refused the credentials"), (&mut unreachable, "cannot connect")]
    {
        worker.wait_until(why, Duration::from_secs(30), |p| {
            let out = p.output();
            out.contains(why) && out.contains("trying again")
        });
        assert!(
            worker.child.try_wait().unwrap().is_none(),
            "the worker stopped:\n{}",
            worker.output()
        );
        assert!(!worker.output().contains("panicked"), "{}", worker.output());
    }
    // Without a password at all, the worker says what it needs.
    let mut missing =
        Program::start(&["worker", "--cluster", &server.url(), "--user", "learner"], &[]);
    let status = missing.finish(Duration::from_secs(20));
    assert!(!status.success());
    assert!(missing.output().contains("EPAMINONDAS_NATS_PASSWORD"), "{}", missing.output());
}

/// A game of `plies` first legal moves on `rules`, with a sample at each position.
fn message_of(rules: Rules, plies: usize) -> GameMessage {
    let start = Position::start(rules).unwrap();
    let (mut position, mut moves) = (start, Vec::new());
    for _ in 0..plies {
        let mv = position.legal_moves()[0];
        position = position.play(mv).unwrap();
        moves.push(mv);
    }
    let record = GameRecord::new("self-play:gen-000001", "self-play:gen-000001", start, moves);
    let samples = record
        .positions()
        .into_iter()
        .map(|position| epaminondas::replay::Sample {
            position,
            policy: vec![(0, 1.0)],
            outcome: 0,
            searched: None,
        })
        .collect();
    GameMessage {
        header: GameHeader {
            run: "r".into(),
            worker: "w-1".into(),
            serial: 3,
            network: 1,
            simulations: 100,
            seconds: 1.5,
        },
        record,
        samples,
    }
}

#[test]
fn game_messages_read_back_and_bad_ones_are_refused_with_the_reason() {
    let rules = Rules { ply_cap: Some(40), ..Rules::default() };
    let message = message_of(rules, 6);
    let bytes = message.encode();
    assert_eq!(GameMessage::decode(&bytes, &rules).unwrap(), message);
    assert_eq!(message.id(), "w-1-3");
    // A curriculum stage's board reads under the run's rules.
    let small = message_of(Rules { width: 8, height: 8, ..rules }, 4);
    assert_eq!(GameMessage::decode(&small.encode(), &rules).unwrap(), small);

    let refused = |bytes: &[u8], why: &str| {
        let error = GameMessage::decode(bytes, &rules).unwrap_err().to_string();
        assert!(error.contains(why), "{error:?} should say {why:?}");
    };
    refused(b"not a game", "bad magic");
    refused(&bytes[..10], "its header is cut short");
    refused(&bytes[..30], "its header is cut short");
    refused(&bytes[..bytes.len() - 5], "its samples");
    let mut header = bytes.clone();
    header[12] = b'!';
    refused(&header, "its header: ");
    let stones = message_of(Rules { stones: true, ..rules }, 0);
    refused(&stones.encode(), "other rules");
    // Samples of another board than the record's.
    let mut mixed = b"EPAMGAM1".to_vec();
    for part in
        [serde_json::to_vec(&message.header).unwrap(), message.record.to_string().into_bytes()]
    {
        mixed.extend_from_slice(&(part.len() as u32).to_le_bytes());
        mixed.extend_from_slice(&part);
    }
    mixed.extend(epaminondas::replay::encode_chunk(&small.samples, small.record.start.rules()));
    refused(&mixed, "another board");
    // More samples than positions.
    let mut padded = message.clone();
    padded.samples.extend(message.samples.clone());
    refused(&padded.encode(), "samples for a game of 6 plies");
}

/// A network notice reads back; one whose version no run reaches is refused (workers count
/// generations on from it).
#[test]
fn network_notices_out_of_range_are_refused() {
    use epaminondas::cluster::message::NetworkNotice;
    let notice = NetworkNotice::new("run-1", 7);
    assert_eq!(NetworkNotice::decode(&serde_json::to_vec(&notice).unwrap()).unwrap(), notice);
    let last = NetworkNotice { version: u32::MAX, ..notice };
    let error = NetworkNotice::decode(&serde_json::to_vec(&last).unwrap()).unwrap_err();
    assert!(error.to_string().contains("out of range"), "{error}");
}

/// Workers fetch a notice's object and name a file after it: a notice whose object is not the
/// name its run and version give, or whose run id could be a path, is refused with the reason;
/// so is a run notice with such an id.
#[test]
fn notices_naming_paths_are_refused() {
    use epaminondas::cluster::message::{NetworkNotice, RunNotice};
    let decode = |notice: &NetworkNotice| {
        NetworkNotice::decode(&serde_json::to_vec(notice).unwrap()).map_err(|e| e.to_string())
    };
    let notice = NetworkNotice::new("0123456789abcdef", 3);
    assert_eq!(decode(&notice), Ok(notice.clone()));
    let elsewhere = NetworkNotice { object: "../../etc/passwd".into(), ..notice.clone() };
    let error = decode(&elsewhere).unwrap_err();
    assert!(error.contains("\"../../etc/passwd\" is not"), "{error}");
    let other_version =
        NetworkNotice { object: NetworkNotice::new("0123456789abcdef", 2).object, ..notice };
    assert!(decode(&other_version).unwrap_err().contains("is not"));
    for bad in ["", "a/b", "..", "run id", "x".repeat(65).as_str()] {
        let error = decode(&NetworkNotice::new(bad, 3)).unwrap_err();
        assert!(error.contains("run id"), "{bad:?}: {error}");
        let run = RunNotice { run: bad.into(), config: String::new() };
        let error = RunNotice::decode(&serde_json::to_vec(&run).unwrap()).unwrap_err();
        assert!(error.to_string().contains("run id"), "{bad:?}: {error}");
    }
}
