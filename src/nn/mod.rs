//! The only part of the program that uses libtorch: the network, its checkpoints, and the
//! [`Evaluator`](crate::evaluator::Evaluator) that search calls.

pub mod export;
pub mod model;
pub mod optim;
pub mod tensor_file;

use crate::encode;
use crate::evaluator::{EvalRequest, Evaluation, Evaluator};
use crate::game::Move;
use model::{NetConfig, PolicyValueNet};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tch::{nn, Device, Kind, Tensor};
use tensor_file::TensorFile;

/// Runs `draw` holding libtorch's one global random generator, seeded first when `seed` is
/// given. The generator is shared by every thread, so a seeded initialisation is reproducible
/// only if no other thread draws between the seeding and the last draw (two networks built at
/// once, as parallel tests and arena players do, otherwise interleave their draws).
pub fn with_torch_generator<T>(seed: Option<u64>, draw: impl FnOnce() -> T) -> T {
    static GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A panic while drawing leaves no state behind that a later draw could trip on.
    let _held = GENERATOR.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(seed) = seed {
        tch::manual_seed(seed as i64);
    }
    draw()
}

/// Where a network runs, as the user says it.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum DeviceChoice {
    Cpu,
    Cuda,
    /// CUDA when available, else the CPU.
    #[default]
    Auto,
}

impl DeviceChoice {
    pub fn resolve(self) -> Result<Device, NetError> {
        match self {
            DeviceChoice::Cpu => Ok(Device::Cpu),
            DeviceChoice::Auto => Ok(Device::cuda_if_available()),
            DeviceChoice::Cuda if tch::Cuda::is_available() => Ok(Device::Cuda(0)),
            DeviceChoice::Cuda => Err(NetError::NoCuda),
        }
    }
}

/// The number format a network searches in, as the user says it. Training always runs in f32;
/// this is only for networks that evaluate positions for search (players, self-play).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    F32,
    /// bfloat16 weights and activations: f32's range with an 8-bit mantissa. On the shipped
    /// agents it moves the priors by about 1% (total variation) and keeps the same top move in
    /// 98% of positions.
    Bf16,
    /// bf16 on a CPU with AMX's bf16 tiles (the newer Xeons), where oneDNN runs the shipped
    /// agents 1.9-2.7 times faster than f32 at batch 8 and 2.8-3.7 times at batch 64
    /// (docs/performance.md), and on an AMD CPU with AVX512-BF16 (Zen 4, not measured, and
    /// Zen 5), where a Zen 5 ran them 1.5-1.6 times faster at batch 8, both channels-last. f32
    /// anywhere else, an Intel CPU with AVX512-BF16 but no AMX included, where bf16 ran the
    /// 8x96 agent at 0.59 times f32's speed. bf16 on CUDA, where an H200 ran the 6x64 network
    /// 1.4-1.5 times faster than f32 at batches of 1,024-4,096.
    #[default]
    Auto,
}

impl Precision {
    /// The tensor kind a network on `device` searches in.
    pub fn resolve(self, device: Device) -> Kind {
        match self {
            Precision::F32 => Kind::Float,
            Precision::Bf16 => Kind::BFloat16,
            Precision::Auto if device.is_cuda() => Kind::BFloat16,
            Precision::Auto if device == Device::Cpu && cpu_has_fast_bf16() => Kind::BFloat16,
            Precision::Auto => Kind::Float,
        }
    }
}

/// Whether bf16 pays on this CPU. It needs AMX-BF16 enabled by the operating system, or an
/// AMD CPU with AVX512-BF16. Without bf16 instructions libtorch emulates bf16, several times
/// slower than f32. With AVX512-BF16 alone it depends on the core: on an Intel Xeon without
/// AMX oneDNN's bf16 convolutions lost to f32 (364 against 622 evaluations a second for the
/// 8x96 agent at batch 64, `epaminondas bench --precision`), on a Zen 5 EPYC they won (808
/// against 497 at batch 8 on one core, channels-last both; docs/performance.md).
fn cpu_has_fast_bf16() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        cpu_has_amx_bf16() || (cpu_is_amd() && std::arch::is_x86_feature_detected!("avx512bf16"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// AMX's bf16 tiles, usable: the CPU has them and the OS saves their state.
#[cfg(target_arch = "x86_64")]
fn cpu_has_amx_bf16() -> bool {
    use std::arch::x86_64::{__cpuid_count, __get_cpuid_max, _xgetbv};
    // std's detection of AMX is still unstable, so read CPUID: leaf 7 EDX bit 22 is
    // AMX-BF16, leaf 1 ECX bit 27 says the OS manages extended state with XSAVE.
    if __get_cpuid_max(0).0 < 7 {
        return false;
    }
    let amx_bf16 = __cpuid_count(7, 0).edx & (1 << 22) != 0;
    let os_xsave = __cpuid_count(1, 0).ecx & (1 << 27) != 0;
    if !(amx_bf16 && os_xsave) {
        return false;
    }
    // SAFETY: XGETBV is available whenever the OS has set CR4.OSXSAVE, checked just above.
    let enabled_state = unsafe { _xgetbv(0) };
    // XCR0 bits 17 and 18: the OS saves the tile configuration and tile data, so programs
    // may use AMX.
    let amx_state = 0b11 << 17;
    enabled_state & amx_state == amx_state
}

/// CPUID leaf 0 names the vendor in EBX, EDX, ECX: "AuthenticAMD".
#[cfg(target_arch = "x86_64")]
fn cpu_is_amd() -> bool {
    let leaf = std::arch::x86_64::__cpuid(0);
    [leaf.ebx, leaf.edx, leaf.ecx].iter().flat_map(|word| word.to_le_bytes()).eq(*b"AuthenticAMD")
}

/// Linux lists `amx_bf16` and `avx512_bf16` among a CPU's flags only when the CPU has them
/// and the kernel has enabled their state, and names the vendor: what `cpu_has_fast_bf16`
/// reads for itself.
#[cfg(all(test, target_os = "linux", target_arch = "x86_64"))]
#[test]
fn fast_bf16_agrees_with_the_kernel() {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").expect("/proc/cpuinfo");
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("a {name} line"))
    };
    let flags = field("flags");
    let has = |wanted: &str| flags.split_whitespace().any(|flag| flag == wanted);
    let amd = field("vendor_id").ends_with("AuthenticAMD");
    assert_eq!(cpu_is_amd(), amd);
    let kernel_says = has("amx_bf16") || (amd && has("avx512_bf16"));
    assert_eq!(cpu_has_fast_bf16(), kernel_says, "{flags}");
}

/// The environment variable that sets libgomp's wait policy, read once when libtorch loads:
/// `passive` puts idle threads to sleep at once (self-play on 2 cores kept 0.9 of its speed
/// beside a busy process, where spinning threads kept 0.34, but ran 0.7 times as fast quiet;
/// docs/performance.md), so the default stays libgomp's.
pub const WAIT_POLICY: &str = "OMP_WAIT_POLICY";

/// How idle libtorch threads wait, as the environment set it when libtorch loaded.
pub fn wait_policy() -> String {
    std::env::var(WAIT_POLICY).unwrap_or_else(|_| "spin, then sleep (libgomp's default)".into())
}

/// Keeps the memory of freed tensors in the process's heap for the next ones. glibc's malloc
/// maps allocations over its threshold (from 128 KiB, rising with what is freed) fresh from the
/// kernel and hands freed heap tops back, so every training step faulted its activations in
/// anew: on a 2-core AMD EPYC (Zen 3) with the small network, 634-769 training samples a second
/// without this and 971-1,017 with it (docs/performance.md). Tensors up to 256 MiB come from
/// the heap (32 MiB where an older glibc refuses more), and up to 512 MiB of free heap is kept.
/// Call it first thing, before any thread starts.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets malloc's parameters; it is called before any other thread
    // exists, and a refused value (it returns 0) leaves that parameter as it was.
    unsafe {
        let threshold_set = [256 << 20, 32 << 20]
            .into_iter()
            .any(|bytes| libc::mallopt(libc::M_MMAP_THRESHOLD, bytes) == 1);
        // Only with the threshold raised: a trim threshold alone pins the mmap threshold at
        // 128 KiB, where training ran at half the speed of glibc's defaults.
        if threshold_set {
            libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
        }
    }
}

/// Sets libtorch's intra-op threads. Self-play alternates between tree work (rayon) and network
/// passes (libtorch), so each may use every core in its turn; inter-op parallelism is off
/// because one small network has nothing to run side by side.
pub fn configure_threads(threads: usize) {
    tch::set_num_threads(threads.max(1) as i32);
}

/// Why a network could not be built, saved or loaded.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("--device cuda was asked for, but libtorch sees no CUDA device (is this a CPU build of libtorch?)")]
    NoCuda,
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not an epaminondas network file: {problem}")]
    Format { path: PathBuf, problem: String },
    #[error("{path}: tensor {name} has shape {found:?}, the network described in the file needs {expected:?}")]
    Shape { path: PathBuf, name: String, expected: Vec<i64>, found: Vec<usize> },
    #[error(
        "{path}: tensor {name} holds a value that is not a finite number (a diverged training?)"
    )]
    NotFinite { path: PathBuf, name: String },
    #[error("{path}: tensor {name} is missing")]
    Missing { path: PathBuf, name: String },
    #[error("invalid network config: {0}")]
    Config(String),
    /// A network whose weights cannot start this one (`from` names it: its file, where known).
    #[error("cannot start from {from}: {problem}")]
    Incompatible { from: String, problem: String },
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
}

/// The `format` metadata value that marks our files.
pub const FORMAT: &str = "epaminondas-net-v1";

/// A network with its variables.
pub struct Network {
    pub config: NetConfig,
    pub vs: nn::VarStore,
    pub model: PolicyValueNet,
    /// The kind of its variables: f32 for a network that trains, perhaps bf16 for one that only
    /// searches (see [`Network::into_inference`]).
    kind: Kind,
    /// Set by [`Network::into_inference`]: the network only searches, so its weights may be
    /// bf16 or laid out for inference, and it must not be trained.
    inference: bool,
}

impl Network {
    /// A freshly initialised network. Seeds libtorch's generator first when `seed` is given, so
    /// runs are reproducible.
    pub fn new(config: &NetConfig, device: Device, seed: Option<u64>) -> Result<Network, NetError> {
        config.validate().map_err(NetError::Config)?;
        let (vs, model) = with_torch_generator(seed, || {
            let vs = nn::VarStore::new(device);
            let model = PolicyValueNet::new(&vs.root(), config);
            (vs, model)
        });
        Ok(Network { config: config.clone(), vs, model, kind: Kind::Float, inference: false })
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// The kind its variables and inference are in.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// This network converted to `precision` for search. A bf16 network still saves in f32
    /// (files are always f32), but must not be trained: the optimiser keeps f32 state.
    pub fn into_inference(mut self, precision: Precision) -> Network {
        self.kind = precision.resolve(self.device());
        self.inference = true;
        // Before the variables change kind, so the folding is done in f32.
        let layout: fn(&Tensor) -> Tensor =
            if self.device() == Device::Cpu { channels_last } else { Tensor::shallow_clone };
        self.model.fold_batch_norms(self.kind, layout);
        match self.kind {
            Kind::BFloat16 => self.vs.bfloat16(),
            _ => self.vs.float(),
        }
        if self.device() == Device::Cpu {
            self.lay_out_channels_last();
        }
        self
    }

    /// Stores the convolution weights channels-last (NHWC in memory), which makes libtorch run
    /// every convolution of the tower, and so its activations, in that layout. On an AVX2 CPU
    /// (a 2-core AMD EPYC) that evaluates the shipped agents 6-24% faster in f32 at batches
    /// 1-64 on one core; on a Zen 5 EPYC bf16 gains 8-42% from it (docs/performance.md). Training gained less and less surely (0.93-1.12 times from
    /// run to run), so a network that trains keeps the usual layout. Files are written in the
    /// usual layout.
    pub fn lay_out_channels_last(&mut self) {
        tch::no_grad(|| {
            for (_, mut variable) in self.vs.variables() {
                if variable.dim() == 4 {
                    variable.set_data(&channels_last(&variable));
                }
            }
        });
    }

    /// Writes the weights and config (plus `extra` metadata) as safetensors, atomically.
    pub fn save(&self, path: &Path, extra: &BTreeMap<String, String>) -> Result<(), NetError> {
        let mut metadata = extra.clone();
        metadata.insert("format".into(), FORMAT.into());
        metadata.insert(
            "net_config".into(),
            serde_json::to_string(&self.config).expect("config serialises"),
        );
        let mut tensors: Vec<(String, Tensor)> = self.vs.variables().into_iter().collect();
        tensors.sort_by(|a, b| a.0.cmp(&b.0));
        tensor_file::write(path, &tensors, metadata)
    }

    /// Reads a network file: the config from its metadata, then every tensor, checked by name
    /// and shape. Returns the network and the file's metadata.
    pub fn load(
        path: &Path,
        device: Device,
    ) -> Result<(Network, BTreeMap<String, String>), NetError> {
        let file = TensorFile::read(path, FORMAT)?;
        // Checked before the network is made: a damaged net_config could ask for gigabytes.
        let config = serde_json::from_str::<NetConfig>(file.meta("net_config")?)
            .map_err(|e| e.to_string())
            .and_then(|config| config.validate().map(|()| config))
            .map_err(|e| file.format_error(format!("bad net_config: {e}")))?;
        let (needed, held) = (config.trunk_weights(), file.value_count());
        if held < needed {
            return Err(file.format_error(format!(
                "its net_config ({} blocks of {} channels) needs at least {needed} weights, the file holds {held}",
                config.blocks, config.channels
            )));
        }
        let network = Network::new(&config, device, None)?;
        tch::no_grad(|| -> Result<(), NetError> {
            for (name, mut variable) in network.vs.variables() {
                variable.copy_(&file.tensor(&name, &variable.size(), device)?);
            }
            Ok(())
        })?;
        Ok((network, file.metadata))
    }

    /// Takes the weights of `source`, a trained network, so that this freshly made network
    /// computes exactly what `source` did until training moves it. This network may be larger in
    /// every dimension (grown from `source`, as in Net2Net's function-preserving widening and
    /// deepening): each tensor of `source` fills the leading part of ours, the weights from our
    /// new channels into the old ones are zero so the old channels compute what they did, the
    /// new channels read everything with this network's random weights, and blocks beyond
    /// `source`'s depth start as identities (their second batch norm starts at zero, see
    /// `ResBlock::new`). The stem may read the threat planes that `source` did not: they come
    /// after all other planes, so they are new inputs like any other. A smaller network in any
    /// dimension, or one of another game, is refused.
    pub fn init_from(&mut self, source: &Network) -> Result<(), NetError> {
        let incompatible =
            |problem: String| Err(NetError::Incompatible { from: "that network".into(), problem });
        if source.config.stones != self.config.stones
            || (source.config.threats && !self.config.threats)
        {
            return incompatible(format!(
                "it reads {:?}, this network {:?}",
                source.config.inputs(),
                self.config.inputs()
            ));
        }
        let sources = source.vs.variables();
        let ours = self.vs.variables();
        if let Some(extra) = sources.keys().filter(|name| !ours.contains_key(*name)).min() {
            return incompatible(format!(
                "it has a tensor {extra} that this network lacks (a deeper network?)"
            ));
        }
        let new_block = |name: &str| {
            let block = name.strip_prefix("trunk.").and_then(|rest| rest.split('.').next());
            block.and_then(|b| b.parse::<usize>().ok()).is_some_and(|b| b >= source.config.blocks)
        };
        tch::no_grad(|| {
            for (name, variable) in ours {
                let Some(from) = sources.get(&name) else {
                    if new_block(&name) {
                        continue;
                    }
                    return incompatible(format!("it has no tensor {name}"));
                };
                let (to_shape, from_shape) = (variable.size(), from.size());
                let fits = to_shape.len() == from_shape.len()
                    && from_shape.iter().zip(&to_shape).all(|(f, t)| f <= t)
                    && to_shape.get(2..) == from_shape.get(2..);
                if !fits {
                    return incompatible(format!("tensor {name} has shape {from_shape:?} there, {to_shape:?} here: this network must be at least as large in every dimension"));
                }
                if to_shape.len() > 1 {
                    let _ = variable.narrow(0, 0, from_shape[0]).zero_();
                }
                embed(&variable, from, model::reads_pooled_channels(&name));
            }
            Ok(())
        })
    }

    /// [`Network::init_from`] the network in the file at `path`, which an error names.
    pub fn init_from_file(&mut self, path: &Path) -> Result<(), NetError> {
        let (source, _) = Network::load(path, self.device())?;
        self.init_from(&source).map_err(|error| match error {
            NetError::Incompatible { problem, .. } => {
                NetError::Incompatible { from: path.display().to_string(), problem }
            }
            other => other,
        })
    }

    /// A copy of this network's weights in a new network (for a frozen opponent, say), in the
    /// same precision and layout.
    pub fn try_clone(&self) -> Result<Network, NetError> {
        let mut copy = Network::new(&self.config, self.device(), None)?;
        copy.vs.copy(&self.vs)?;
        if !self.inference {
            return Ok(copy);
        }
        Ok(copy.into_inference(if self.kind == Kind::BFloat16 {
            Precision::Bf16
        } else {
            Precision::F32
        }))
    }

    /// A copy in `precision` for search, leaving this network (which may go on training) as it
    /// is.
    pub fn inference_copy(&self, precision: Precision) -> Result<Network, NetError> {
        Ok(self.try_clone()?.into_inference(precision))
    }

    /// A copy of the network for each of self-play's `lanes`, each behind a cache of `cache`
    /// positions (see [`Network::inference_copy`]).
    pub fn lane_copies(
        &self,
        precision: Precision,
        lanes: usize,
        cache: usize,
    ) -> Result<Vec<crate::evaluator::CachedEvaluator<Network>>, NetError> {
        (0..lanes)
            .map(|_| {
                Ok(crate::evaluator::CachedEvaluator::new(self.inference_copy(precision)?, cache))
            })
            .collect()
    }

    /// A batch of encoded inputs ([batch, input planes, height, width], row-major in
    /// `inputs`) on the network's device, in its precision.
    pub fn upload(&self, inputs: &[f32], batch: usize, width: u8, height: u8) -> Tensor {
        let planes = self.config.input_planes() as i64;
        Tensor::from_slice(inputs)
            .view([batch as i64, planes, height as i64, width as i64])
            .to_device(self.device())
            .to_kind(self.kind)
    }

    /// One forward pass over uploaded inputs, waiting for the device to finish it: the
    /// network's own speed, without the copies to and from the host.
    pub fn forward_and_wait(&self, xs: &Tensor) {
        tch::no_grad(|| {
            let (_, value) = self.model.forward_t(xs, false);
            let _ = value.double_value(&[0, 0]);
        })
    }

    /// Policy logits and win/draw/loss probabilities for a batch of encoded inputs (see
    /// [`Network::upload`]), in inference mode and in the network's precision; the outputs are
    /// f32 whatever it computes in.
    pub fn infer(
        &self,
        inputs: &[f32],
        batch: usize,
        width: u8,
        height: u8,
    ) -> (Vec<f32>, Vec<f32>) {
        tch::no_grad(|| {
            let (policy, value) =
                self.model.forward_t(&self.upload(inputs, batch, width, height), false);
            (to_host(&policy), to_host(&value.softmax(-1, Kind::Float)))
        })
    }

    /// [`Network::infer`], but of the policy only the logits at `picked` (indices into the
    /// batch's logits flattened row by row): they are picked out on the device, so that only
    /// the legal moves' logits cross to the host. A 14x12 position has 10,752 logits and
    /// about 50 legal moves; at a GPU's batches of thousands, copying every logit took longer
    /// than the network.
    pub fn infer_picked(
        &self,
        inputs: &[f32],
        batch: usize,
        width: u8,
        height: u8,
        picked: &[i64],
    ) -> (Vec<f32>, Vec<f32>) {
        tch::no_grad(|| {
            let (policy, value) =
                self.model.forward_t(&self.upload(inputs, batch, width, height), false);
            let picked = Tensor::from_slice(picked).to_device(self.device());
            let logits = policy.flatten(0, -1).index_select(0, &picked);
            (to_host(&logits), to_host(&value.softmax(-1, Kind::Float)))
        })
    }
}

/// Copies `source` into the leading part of `target`, which is as large or larger in every
/// dimension: rows (outputs) first, then columns (inputs). The inputs of a tensor that reads
/// pooled channels (`pooled`) are two halves, the channel means and the maxima, each of which
/// goes into its own half.
pub(crate) fn embed(target: &Tensor, source: &Tensor, pooled: bool) {
    let mut rows = target.narrow(0, 0, source.size()[0]);
    if source.dim() == 1 {
        rows.copy_(source);
        return;
    }
    let (from, to) = (source.size()[1], target.size()[1]);
    let parts = if pooled {
        vec![(0, 0, from / 2), (from / 2, to / 2, from / 2)]
    } else {
        vec![(0, 0, from)]
    };
    for (at_source, at_target, width) in parts {
        rows.narrow(1, at_target, width).copy_(&source.narrow(1, at_source, width));
    }
}

/// A tensor's values as f32 on the host, row by row.
fn to_host(tensor: &Tensor) -> Vec<f32> {
    Vec::<f32>::try_from(&tensor.to_kind(Kind::Float).to_device(Device::Cpu).flatten(0, -1))
        .expect("a float tensor converts to f32 values")
}

/// The same 4-dimensional tensor stored channels-last (NHWC in memory, NCHW in shape).
fn channels_last(tensor: &Tensor) -> Tensor {
    tensor.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
}

/// Encodes a batch of positions (all of one board size) into one input buffer with the planes
/// `inputs` names (the network's: see [`model::NetConfig::inputs`]), in parallel.
pub fn encode_batch(positions: &[&crate::game::Position], inputs: encode::Inputs) -> Vec<f32> {
    let Some(first) = positions.first() else { return Vec::new() };
    let size = encode::input_size(first.rules(), inputs);
    let mut buffer = vec![0.0f32; positions.len() * size];
    buffer
        .par_chunks_mut(size)
        .zip(positions.par_iter())
        .for_each(|(chunk, position)| encode::encode_position(position, inputs, chunk));
    buffer
}

/// Softmax of `logits` (a position's legal moves').
pub fn softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exps: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
    let total: f32 = exps.iter().sum();
    exps.into_iter().map(|e| e / total).collect()
}

impl Evaluator for Network {
    fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        let Some(first) = batch.first() else { return Vec::new() };
        let (width, height) = (first.position.rules().width, first.position.rules().height);
        let positions: Vec<&crate::game::Position> = batch.iter().map(|r| &r.position).collect();
        let inputs = encode_batch(&positions, self.config.inputs());
        let policy_size = self.config.policy_planes() * width as usize * height as usize;
        // Each legal move's logit, by its index in the batch's logits. A move past a
        // position's logits (a placement asked of a network without the placement plane) gets
        // logit 0 rather than a panic; players refuse that pairing up front.
        let indices: Vec<Vec<Option<usize>>> = batch
            .par_iter()
            .enumerate()
            .map(|(row, request)| {
                let index = |mv: &Move| encode::move_index(&request.position, *mv);
                request
                    .moves
                    .iter()
                    .map(index)
                    .map(|index| (index < policy_size).then_some(row * policy_size + index))
                    .collect()
            })
            .collect();
        let picked: Vec<i64> = indices.iter().flatten().map(|i| i.unwrap_or(0) as i64).collect();
        let (logits, wdl) = self.infer_picked(&inputs, batch.len(), width, height, &picked);
        let mut starts = Vec::with_capacity(batch.len());
        let mut start = 0;
        for moves in &indices {
            starts.push(start);
            start += moves.len();
        }
        indices
            .par_iter()
            .zip(starts)
            .enumerate()
            .map(|(row, (moves, start))| {
                let legal: Vec<f32> = moves
                    .iter()
                    .zip(&logits[start..start + moves.len()])
                    .map(|(index, &logit)| if index.is_some() { logit } else { 0.0 })
                    .collect();
                let wdl = &wdl[3 * row..3 * row + 3];
                Evaluation { priors: softmax(&legal), value: wdl[0] - wdl[2], draw: wdl[1] }
            })
            .collect()
    }
}
