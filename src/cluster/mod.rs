//! Self-play spread over many machines through a NATS server with JetStream: one learner
//! (`train --cluster`, [`learner`]) and any number of workers (`worker`, [`worker`]).
//!
//! ```text
//! stream EPAMINONDAS_RUN        epaminondas.run.config   the run's id and config (TOML)
//!                               epaminondas.run.network  the newest network: its generation
//!                               and object name (the newest message of each subject counts)
//! object store EPAMINONDAS_NETWORKS      gen-N: the checkpoint of generation N (safetensors)
//! stream EPAMINONDAS_GAMES      subject epaminondas.games: finished games (workers publish,
//!                               the learner consumes; a work queue, so an acknowledged game
//!                               leaves the stream)
//! stream EPAMINONDAS_WORKERS    epaminondas.workers.ID: each worker present, its newest
//!                               announcement (every 10 s), kept for a minute
//! ```
//!
//! A game is acknowledged only once the generation holding it is committed, so a learner
//! killed at any moment gets its unacknowledged games again when it restarts; games carry an
//! id (worker, process, serial) that the learner checks against its journal and its newest
//! committed generations, so a game delivered twice counts once. One server (or NATS account)
//! holds one run at a time: games of another run are refused by its id.

pub mod learner;
pub mod message;
pub mod worker;

use async_nats::jetstream::{self, consumer, object_store, stream};
use async_nats::ConnectOptions;
use bytes::Bytes;
use futures_util::StreamExt;
use std::path::PathBuf;
use std::time::Duration;

pub use message::{GameMessage, MessageError, NetworkNotice, RunNotice};

const GAMES_STREAM: &str = "EPAMINONDAS_GAMES";
const GAMES_SUBJECT: &str = "epaminondas.games";
const LEARNER_CONSUMER: &str = "learner";
const RUN_STREAM: &str = "EPAMINONDAS_RUN";
const RUN_SUBJECT: &str = "epaminondas.run";
const NETWORKS_BUCKET: &str = "EPAMINONDAS_NETWORKS";
const CONFIG_KEY: &str = "config";
const NETWORK_KEY: &str = "network";
const WORKERS_STREAM: &str = "EPAMINONDAS_WORKERS";
const WORKERS_SUBJECT: &str = "epaminondas.workers";
/// How often a worker says it is present, and how long it counts as present after it last
/// did (several announcements, so that one lost or late does not drop it).
const ANNOUNCE_EVERY: Duration = Duration::from_secs(10);
const PRESENCE_LIFETIME: Duration = Duration::from_secs(60);

/// How to reach the server: its address and the credentials and TLS settings it asks for.
#[derive(Clone, Debug, Default)]
pub struct ClusterOptions {
    /// `nats://HOST:PORT`, or `tls://HOST:PORT` to require TLS.
    pub url: String,
    /// A user and password (`authorization { users = [...] }` on the server).
    pub user: Option<String>,
    pub password: Option<String>,
    /// A NATS credentials file (a JWT and an nkey seed), for servers run with accounts.
    pub credentials: Option<PathBuf>,
    /// A file holding an nkey seed (`SU...`), for servers that list users by nkey.
    pub nkey: Option<PathBuf>,
    /// The CA certificate (PEM) the server's certificate is checked against, instead of the
    /// system's; giving it requires TLS.
    pub tls_ca: Option<PathBuf>,
    /// A client certificate and its key (PEM), for servers that verify clients.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// This client's name in the server's monitoring.
    pub name: String,
}

/// Why the cluster could not be used. Nothing saved is changed by any of them.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("cannot connect to {url}: {problem}")]
    Connect { url: String, problem: String, retry: bool },
    #[error("{file}: {problem}")]
    Credentials { file: PathBuf, problem: String },
    #[error("NATS server: {action}: {problem}")]
    Server { action: String, problem: String },
    #[error("a game of {bytes} bytes is more than the server takes in one message ({limit}; raise max_payload in its config)")]
    TooLarge { bytes: usize, limit: usize },
    #[error("the server stopped telling of new networks")]
    WatchEnded,
    #[error("{0}")]
    Message(#[from] MessageError),
    #[error("the run's config on the server: {0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("{0}")]
    Net(#[from] crate::nn::NetError),
    #[error("{0}")]
    Run(#[from] crate::coach::RunError),
}

impl ClusterError {
    /// Whether trying again later may succeed (the server down or restarting, a network
    /// error); wrong credentials or a bad certificate are not, but a worker retries them too,
    /// slowly, since a server's users may be fixed while it waits.
    pub fn is_transient(&self) -> bool {
        match self {
            ClusterError::Connect { retry, .. } => *retry,
            ClusterError::Server { .. } | ClusterError::WatchEnded => true,
            _ => false,
        }
    }
}

/// `text` as one token of a subject: a worker's name may hold dots or spaces, which subjects
/// do not.
fn subject_token(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect()
}

/// The error of a server call, naming what was being done.
fn server<E: std::fmt::Display>(action: impl Into<String>) -> impl FnOnce(E) -> ClusterError {
    let action = action.into();
    move |error| ClusterError::Server { action, problem: error.to_string() }
}

/// A connection to the server, with a runtime of its own so that its blocking methods can be
/// called from the trainer's and self-play's threads.
pub struct Cluster {
    runtime: tokio::runtime::Runtime,
    client: async_nats::Client,
    jetstream: jetstream::Context,
    url: String,
}

impl Cluster {
    /// Connects once (callers that should wait for a server retry, see [`worker::run`]).
    pub fn connect(options: &ClusterOptions) -> Result<Cluster, ClusterError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("nats")
            .enable_all()
            .build()
            .map_err(|e| ClusterError::Connect {
                url: options.url.clone(),
                problem: format!("cannot start the network thread: {e}"),
                retry: false,
            })?;
        let client = runtime.block_on(connect(options))?;
        // The context starts a task of its own, which needs the runtime.
        let mut jetstream = {
            let _inside = runtime.enter();
            jetstream::new(client.clone())
        };
        jetstream.set_timeout(Duration::from_secs(20));
        Ok(Cluster { runtime, client, jetstream, url: options.url.clone() })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// The stream of finished games, made if it does not exist.
    fn games_stream(&self) -> Result<stream::Stream, ClusterError> {
        self.block_on(self.jetstream.get_or_create_stream(stream::Config {
            name: GAMES_STREAM.into(),
            subjects: vec![GAMES_SUBJECT.into()],
            retention: stream::RetentionPolicy::WorkQueue,
            storage: stream::StorageType::File,
            // Games waiting while no learner takes them: the oldest go first, as they are
            // the first to be too old to train on.
            max_messages: 200_000,
            discard: stream::DiscardPolicy::Old,
            duplicate_window: Duration::from_secs(600),
            ..Default::default()
        }))
        .map_err(server("opening the games stream"))
    }

    /// The stream of the run's notices: the newest message of each subject is the notice.
    /// (Not a JetStream key-value bucket, which async-nats makes only on servers from 2.10 on;
    /// Debian's is 2.9.)
    fn run_stream(&self) -> Result<stream::Stream, ClusterError> {
        self.block_on(self.jetstream.get_or_create_stream(stream::Config {
            name: RUN_STREAM.into(),
            subjects: vec![format!("{RUN_SUBJECT}.*")],
            max_messages_per_subject: 1,
            storage: stream::StorageType::File,
            ..Default::default()
        }))
        .map_err(server("opening the run's notices"))
    }

    /// The stream of the workers present: each one's newest announcement, until it is a
    /// minute old. In memory: presence needs no keeping across a server's restart.
    fn workers_stream(&self) -> Result<stream::Stream, ClusterError> {
        self.block_on(self.jetstream.get_or_create_stream(stream::Config {
            name: WORKERS_STREAM.into(),
            subjects: vec![format!("{WORKERS_SUBJECT}.*")],
            max_messages_per_subject: 1,
            max_age: PRESENCE_LIFETIME,
            storage: stream::StorageType::Memory,
            ..Default::default()
        }))
        .map_err(server("opening the workers' presence"))
    }

    /// The networks' object store, made if it does not exist (by the learner only: a worker
    /// that made it would hide a learner that has not started, see [`Cluster::stored_networks`]).
    fn networks_bucket(&self) -> Result<object_store::ObjectStore, ClusterError> {
        if let Ok(store) = self.stored_networks() {
            return Ok(store);
        }
        self.block_on(self.jetstream.create_object_store(object_store::Config {
            bucket: NETWORKS_BUCKET.into(),
            ..Default::default()
        }))
        .map_err(server("opening the networks' object store"))
    }

    /// The networks' object store as the learner made it.
    fn stored_networks(&self) -> Result<object_store::ObjectStore, ClusterError> {
        self.block_on(self.jetstream.get_object_store(NETWORKS_BUCKET))
            .map_err(server("opening the networks' object store (has a learner started the run?)"))
    }

    /// Makes the run's streams and buckets, so that workers can wait on them.
    pub fn prepare(&self) -> Result<(), ClusterError> {
        self.games_stream()?;
        self.run_stream()?;
        self.workers_stream()?;
        self.networks_bucket()?;
        Ok(())
    }

    fn put_key(&self, key: &str, value: Vec<u8>) -> Result<(), ClusterError> {
        self.run_stream()?;
        self.block_on(async {
            self.jetstream
                .publish(format!("{RUN_SUBJECT}.{key}"), Bytes::from(value))
                .await
                .map_err(server(format!("writing the run's {key}")))?
                .await
                .map_err(server(format!("writing the run's {key}")))?;
            Ok(())
        })
    }

    fn get_key(&self, key: &str) -> Result<Option<Bytes>, ClusterError> {
        let Ok(stream) = self.block_on(self.jetstream.get_stream(RUN_STREAM)) else {
            return Ok(None);
        };
        match self.block_on(stream.get_last_raw_message_by_subject(&format!("{RUN_SUBJECT}.{key}")))
        {
            Ok(message) => Ok(Some(message.payload)),
            Err(error) if error.kind() == stream::LastRawMessageErrorKind::NoMessageFound => {
                Ok(None)
            }
            Err(error) => Err(server(format!("reading the run's {key}"))(error)),
        }
    }

    /// Publishes the run's config, which workers play by.
    pub fn publish_run(&self, notice: &RunNotice) -> Result<(), ClusterError> {
        self.put_key(CONFIG_KEY, notice.encode())
    }

    /// The run's config, once a learner has published one.
    pub fn run(&self) -> Result<Option<RunNotice>, ClusterError> {
        match self.get_key(CONFIG_KEY)? {
            Some(bytes) => Ok(Some(RunNotice::decode(&bytes)?)),
            None => Ok(None),
        }
    }

    /// Stores a network under `notice.object` (unless it is there already) and announces it
    /// as the newest.
    pub fn publish_network(
        &self,
        notice: &NetworkNotice,
        weights: &[u8],
    ) -> Result<(), ClusterError> {
        let store = self.networks_bucket()?;
        let stored = self.block_on(store.info(notice.object.as_str()));
        if !stored.is_ok_and(|info| !info.deleted && info.size == weights.len()) {
            let mut reader = weights;
            self.block_on(store.put(notice.object.as_str(), &mut reader))
                .map_err(server(format!("storing network {}", notice.object)))?;
        }
        self.put_key(NETWORK_KEY, notice.encode())
    }

    /// Removes stored networks other than those named in `keep`.
    pub fn prune_networks(&self, keep: &[String]) -> Result<(), ClusterError> {
        let store = self.networks_bucket()?;
        let names: Vec<String> = self.block_on(async {
            let mut names = Vec::new();
            if let Ok(mut list) = store.list().await {
                while let Some(Ok(info)) = list.next().await {
                    names.push(info.name);
                }
            }
            names
        });
        for name in names.into_iter().filter(|name| !keep.contains(name)) {
            self.block_on(store.delete(name.as_str()))
                .map_err(server(format!("removing network {name}")))?;
        }
        Ok(())
    }

    /// The newest network's notice, once a learner has published one.
    pub fn newest_network(&self) -> Result<Option<NetworkNotice>, ClusterError> {
        match self.get_key(NETWORK_KEY)? {
            Some(bytes) => Ok(Some(NetworkNotice::decode(&bytes)?)),
            None => Ok(None),
        }
    }

    /// The weights stored under `object`.
    pub fn download_network(&self, object: &str) -> Result<Vec<u8>, ClusterError> {
        let store = self.stored_networks()?;
        self.block_on(async {
            let mut reader =
                store.get(object).await.map_err(server(format!("fetching network {object}")))?;
            let mut bytes = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut bytes)
                .await
                .map_err(server(format!("reading network {object}")))?;
            Ok(bytes)
        })
    }

    /// Calls `on_notice` with every network notice from now on (Some), on the connection's
    /// thread, and with None if the watch ends.
    pub fn watch_networks(
        &self,
        on_notice: impl Fn(Option<NetworkNotice>) + Send + 'static,
    ) -> Result<(), ClusterError> {
        let stream = self.run_stream()?;
        let mut watch = self
            .block_on(async {
                stream
                    .create_consumer(consumer::pull::OrderedConfig {
                        filter_subject: format!("{RUN_SUBJECT}.{NETWORK_KEY}"),
                        deliver_policy: consumer::DeliverPolicy::New,
                        ..Default::default()
                    })
                    .await?
                    .messages()
                    .await
                    .map_err(async_nats::Error::from)
            })
            .map_err(server("watching for new networks"))?;
        self.runtime.spawn(async move {
            while let Some(message) = watch.next().await {
                if let Ok(message) = message {
                    if let Ok(notice) = NetworkNotice::decode(&message.payload) {
                        on_notice(Some(notice));
                    }
                }
            }
            on_notice(None);
        });
        Ok(())
    }

    /// Publishes a finished game, waiting for the server to store it. Its id makes a second
    /// publication of the same game (after a lost acknowledgement) a no-op.
    pub fn publish_game(&self, game: &GameMessage) -> Result<(), ClusterError> {
        let payload = game.encode();
        let limit = self.client.server_info().max_payload;
        if payload.len() > limit {
            return Err(ClusterError::TooLarge { bytes: payload.len(), limit });
        }
        let publish = jetstream::message::PublishMessage::build()
            .payload(Bytes::from(payload))
            .message_id(game.id());
        self.block_on(async {
            self.jetstream
                .send_publish(GAMES_SUBJECT, publish)
                .await
                .map_err(server("publishing a game"))?
                .await
                .map_err(server("publishing a game"))?;
            Ok(())
        })
    }

    /// The games in the stream: waiting for the learner, or taken by it and not yet
    /// acknowledged (those of the generation it is training on).
    pub fn games_in_stream(&self) -> Result<u64, ClusterError> {
        self.messages_in(GAMES_STREAM, "reading the games stream's state")
    }

    /// How many messages stream `name` holds now.
    fn messages_in(&self, name: &str, action: &str) -> Result<u64, ClusterError> {
        let stream = self.block_on(self.jetstream.get_stream(name)).map_err(server(action))?;
        Ok(stream.cached_info().state.messages)
    }

    /// Says that worker `id` is present, now and then every 10 s while this connection lasts.
    pub fn announce_worker(&self, id: &str) -> Result<(), ClusterError> {
        self.workers_stream()?;
        let subject = format!("{WORKERS_SUBJECT}.{}", subject_token(id));
        let jetstream = self.jetstream.clone();
        self.runtime.spawn(async move {
            loop {
                // One that fails is made good by the next, well within the lifetime.
                if let Ok(stored) = jetstream.publish(subject.clone(), Bytes::new()).await {
                    let _ = stored.await;
                }
                tokio::time::sleep(ANNOUNCE_EVERY).await;
            }
        });
        Ok(())
    }

    /// How many workers have said they are present within the last minute.
    pub fn workers_present(&self) -> Result<u64, ClusterError> {
        self.messages_in(WORKERS_STREAM, "reading the workers present")
    }

    /// The learner's consumer of the games stream, made afresh, so that every game not yet
    /// acknowledged (by a learner stopped before its generation's commit) comes at once rather
    /// than after its acknowledgement time.
    pub fn games_consumer(&self) -> Result<GamesConsumer, ClusterError> {
        let stream = self.games_stream()?;
        let _ = self.block_on(stream.delete_consumer(LEARNER_CONSUMER));
        let consumer = self
            .block_on(stream.create_consumer(consumer::pull::Config {
                durable_name: Some(LEARNER_CONSUMER.into()),
                ack_policy: consumer::AckPolicy::Explicit,
                // A game waits unacknowledged until its generation is committed; one delivered
                // again after this is recognised by its id.
                ack_wait: Duration::from_secs(24 * 3600),
                max_ack_pending: 1_000_000,
                ..Default::default()
            }))
            .map_err(server("making the learner's consumer"))?;
        Ok(GamesConsumer(consumer))
    }

    /// Up to `count` games, waiting at most `wait` for them.
    pub fn next_games(
        &self,
        consumer: &GamesConsumer,
        count: usize,
        wait: Duration,
    ) -> Result<Vec<Delivery>, ClusterError> {
        self.block_on(async {
            let mut batch = consumer
                .0
                .batch()
                .max_messages(count.max(1))
                .expires(wait)
                .messages()
                .await
                .map_err(server("asking for games"))?;
            let mut deliveries = Vec::new();
            while let Some(message) = batch.next().await {
                let message = message.map_err(server("receiving games"))?;
                deliveries.push(Delivery { message });
                if deliveries.len() >= count {
                    break;
                }
            }
            Ok(deliveries)
        })
    }

    /// Acknowledges games, waiting until the server confirms each: they leave the stream.
    pub fn acknowledge(&self, deliveries: &[Delivery]) -> Result<(), ClusterError> {
        self.block_on(async {
            for delivery in deliveries {
                delivery.message.double_ack().await.map_err(server("acknowledging a game"))?;
            }
            Ok(())
        })
    }

    /// Refuses a game for good (unreadable, or of another run): it is not delivered again.
    pub fn refuse(&self, delivery: &Delivery) -> Result<(), ClusterError> {
        self.block_on(delivery.message.ack_with(jetstream::AckKind::Term))
            .map_err(server("refusing a game"))
    }
}

/// The learner's place in the games stream.
pub struct GamesConsumer(consumer::PullConsumer);

/// A game taken from the stream and not yet acknowledged.
pub struct Delivery {
    message: jetstream::Message,
}

impl Delivery {
    pub fn payload(&self) -> &[u8] {
        &self.message.payload
    }
}

async fn connect(options: &ClusterOptions) -> Result<async_nats::Client, ClusterError> {
    let url = options.url.clone();
    let mut connect = ConnectOptions::new()
        .name(if options.name.is_empty() { "epaminondas" } else { &options.name })
        .connection_timeout(Duration::from_secs(10))
        .max_reconnects(None);
    if let Some(user) = &options.user {
        connect =
            connect.user_and_password(user.clone(), options.password.clone().unwrap_or_default());
    }
    if let Some(file) = &options.credentials {
        connect = connect.credentials_file(file).await.map_err(|e| ClusterError::Credentials {
            file: file.clone(),
            problem: format!("not a NATS credentials file: {e}"),
        })?;
    }
    if let Some(file) = &options.nkey {
        let seed = std::fs::read_to_string(file).map_err(|e| ClusterError::Credentials {
            file: file.clone(),
            problem: e.to_string(),
        })?;
        let seed = seed.trim();
        if !seed.starts_with('S') {
            return Err(ClusterError::Credentials {
                file: file.clone(),
                problem: "does not hold an nkey seed (a line starting with S)".into(),
            });
        }
        connect = connect.nkey(seed.to_string());
    }
    if let Some(ca) = &options.tls_ca {
        readable(ca)?;
        connect = connect.add_root_certificates(ca.clone()).require_tls(true);
    }
    match (&options.tls_cert, &options.tls_key) {
        (Some(cert), Some(key)) => {
            readable(cert)?;
            readable(key)?;
            connect = connect.add_client_certificate(cert.clone(), key.clone()).require_tls(true);
        }
        (None, None) => {}
        (Some(file), None) | (None, Some(file)) => {
            return Err(ClusterError::Credentials {
                file: file.clone(),
                problem: "a client certificate needs both --tls-cert and --tls-key".into(),
            })
        }
    }
    connect.connect(url.as_str()).await.map_err(|error| {
        use async_nats::ConnectErrorKind::*;
        let kind = error.kind();
        let (problem, retry) = match kind {
            AuthorizationViolation | Authentication => {
                (format!("the server refused the credentials ({error})"), false)
            }
            ServerParse => (format!("not a server address ({error})"), false),
            Tls => (format!("TLS: {error}"), false),
            _ => (error.to_string(), true),
        };
        ClusterError::Connect { url, problem, retry }
    })
}

/// A file named in the options that cannot be read is said so by name (the client's own
/// error would not name it).
fn readable(path: &std::path::Path) -> Result<(), ClusterError> {
    std::fs::metadata(path)
        .map(|_| ())
        .map_err(|e| ClusterError::Credentials { file: path.to_path_buf(), problem: e.to_string() })
}
