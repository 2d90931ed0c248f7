//! The residual policy-value network.
//!
//! Trunk: a 3x3 input convolution, then residual blocks of two 3x3 convolutions with batch norm;
//! every other block adds a global-pooling bias (KataGo): the channel means and maxima after its
//! first convolution pass through a linear layer and are added per channel, letting the whole
//! board inform every square for the price of a matrix-vector product.
//! Policy head: 1x1 convolutions to one plane per (direction, distance), over the tail square.
//! Value head: 1x1 convolution, global mean and max pooling, two linear layers to
//! win/draw/loss logits. Nothing depends on the board size, so one network can play several.
//!
//! Variable names (the `nn::Path`s) are the checkpoint keys: keep them stable.

use crate::encode::{policy_planes, Inputs};
use serde::{Deserialize, Serialize};
use tch::nn::{self, ModuleT};
use tch::Tensor;

/// The shape of a network. Stored inside every checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    /// Residual blocks in the trunk.
    pub blocks: usize,
    /// Channels of the trunk.
    pub channels: i64,
    /// Channels of the policy head's hidden layer.
    pub policy_channels: i64,
    /// Channels of the value head's convolution.
    pub value_channels: i64,
    /// Width of the value head's hidden linear layer.
    pub value_hidden: i64,
    /// Built for the stones variant: one more input plane (the stones) and one more policy
    /// plane (placements). Left out of the file when false, so standard networks' files are
    /// byte for byte what they were before the variant, and older files read as standard.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stones: bool,
    /// Reads the threat planes (`encode::THREAT_PLANES`: captures and far-row entries each
    /// side's next move could make). Left out of the file when false, like `stones`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub threats: bool,
}

/// Named sizes, from tests to GPUs. Throughput is in docs/performance.md.
pub const NAMED_SIZES: [(&str, NetConfig); 5] = [
    (
        "tiny",
        NetConfig {
            blocks: 1,
            channels: 16,
            policy_channels: 8,
            value_channels: 8,
            value_hidden: 16,
            stones: false,
            threats: false,
        },
    ),
    (
        "small",
        NetConfig {
            blocks: 4,
            channels: 32,
            policy_channels: 32,
            value_channels: 16,
            value_hidden: 64,
            stones: false,
            threats: false,
        },
    ),
    (
        "medium",
        NetConfig {
            blocks: 6,
            channels: 64,
            policy_channels: 32,
            value_channels: 32,
            value_hidden: 128,
            stones: false,
            threats: false,
        },
    ),
    (
        "large",
        NetConfig {
            blocks: 10,
            channels: 128,
            policy_channels: 64,
            value_channels: 32,
            value_hidden: 256,
            stones: false,
            threats: false,
        },
    ),
    (
        "huge",
        NetConfig {
            blocks: 20,
            channels: 256,
            policy_channels: 64,
            value_channels: 32,
            value_hidden: 256,
            stones: false,
            threats: false,
        },
    ),
];

impl NetConfig {
    pub fn named(name: &str) -> Option<NetConfig> {
        NAMED_SIZES.iter().find(|(n, _)| *n == name).map(|(_, c)| c.clone())
    }

    /// The same shape, built for games under `rules` (the stones variant's extra planes).
    pub fn for_rules(self, rules: &crate::game::Rules) -> NetConfig {
        NetConfig { stones: rules.stones, ..self }
    }

    /// The optional input planes this network reads.
    pub fn inputs(&self) -> Inputs {
        Inputs { stones: self.stones, threats: self.threats }
    }

    /// Input planes this network reads.
    pub fn input_planes(&self) -> usize {
        self.inputs().planes()
    }

    /// Policy planes this network writes.
    pub fn policy_planes(&self) -> usize {
        policy_planes(self.stones)
    }

    /// The weights of the trunk's 3x3 convolutions (two a block), which every file of this
    /// shape holds: a lower bound on the weights of the whole network.
    pub fn trunk_weights(&self) -> u64 {
        let channels = self.channels.unsigned_abs();
        (self.blocks as u64).saturating_mul(18).saturating_mul(channels.saturating_mul(channels))
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.blocks == 0 || self.blocks > 64 {
            return Err(format!("blocks must be 1..=64, not {}", self.blocks));
        }
        for (name, value) in [
            ("channels", self.channels),
            ("policy_channels", self.policy_channels),
            ("value_channels", self.value_channels),
            ("value_hidden", self.value_hidden),
        ] {
            if !(1..=1024).contains(&value) {
                return Err(format!("{name} must be 1..=1024, not {value}"));
            }
        }
        Ok(())
    }

    /// Multiply-adds per square of one forward pass (for FLOP/s figures).
    pub fn macs_per_square(&self) -> i64 {
        let c = self.channels;
        let trunk = self.input_planes() as i64 * c * 9 + self.blocks as i64 * 2 * c * c * 9;
        let policy = c * self.policy_channels + self.policy_channels * self.policy_planes() as i64;
        trunk + policy + c * self.value_channels
    }
}

/// Conv 3x3 (no bias: batch norm follows) + batch norm.
#[derive(Debug)]
struct ConvBn {
    conv: nn::Conv2D,
    bn: nn::BatchNorm,
    /// For a network that only searches: the convolution with the batch norm folded in, which
    /// [`ConvBn::forward`] runs instead of the two (see [`ConvBn::fold`]).
    folded: Option<FoldedConv>,
}

/// A convolution with its batch norm folded in.
#[derive(Debug)]
struct FoldedConv {
    weight: Tensor,
    bias: Tensor,
    /// The convolution's own padding (kernel / 2), kept so a forward pass need not ask the
    /// weight's shape for it.
    padding: i64,
}

impl ConvBn {
    fn new(path: &nn::Path, input: i64, output: i64, kernel: i64) -> ConvBn {
        ConvBn::with_scale(path, input, output, kernel, 1.0)
    }

    /// `scale` initialises the batch-norm multiplier.
    fn with_scale(path: &nn::Path, input: i64, output: i64, kernel: i64, scale: f64) -> ConvBn {
        let config = nn::ConvConfig { padding: kernel / 2, bias: false, ..Default::default() };
        let bn = nn::BatchNormConfig { ws_init: nn::Init::Const(scale), ..Default::default() };
        ConvBn {
            conv: nn::conv2d(path / "conv", input, output, kernel, config),
            bn: nn::batch_norm2d(path / "bn", output, bn),
            folded: None,
        }
    }

    fn forward(&self, xs: &Tensor, train: bool) -> Tensor {
        match &self.folded {
            Some(FoldedConv { weight, bias, padding }) => {
                xs.conv2d(weight, Some(bias), [1, 1], [*padding, *padding], [1, 1], 1)
            }
            None => self.conv.forward_t(xs, train).apply_t(&self.bn, train),
        }
    }

    /// Batch norm at inference is a fixed affine map per channel, so it can be folded into the
    /// convolution before it: weight * gamma / sqrt(var + eps), and bias beta - mean * gamma /
    /// sqrt(var + eps). That saves a pass over every activation and a libtorch call per layer
    /// (batch norm was 3% of a move's search on one core). Computed in f32 from the variables as
    /// they are (f32 for a network loaded to search; the rounded values for a copy of a bf16
    /// one) and then put in `kind` and `layout`. The variables stay as they were, so the network
    /// still copies and saves as the one it was loaded as; nothing writes to the variables of a
    /// network that only searches, which would leave these behind.
    fn fold(&mut self, kind: tch::Kind, layout: fn(&Tensor) -> Tensor) {
        let float = |t: &Tensor| t.to_kind(tch::Kind::Float);
        let (Some(gamma), Some(beta)) = (&self.bn.ws, &self.bn.bs) else { return };
        let scale = float(gamma) / (float(&self.bn.running_var) + BATCH_NORM_EPS).sqrt();
        let weight = float(&self.conv.ws) * scale.view([-1, 1, 1, 1]);
        let bias = float(beta) - float(&self.bn.running_mean) * &scale;
        let padding = self.conv.ws.size()[2] / 2;
        self.folded = Some(FoldedConv {
            weight: layout(&weight.to_kind(kind)),
            bias: bias.to_kind(kind),
            padding,
        });
    }
}

/// tch's default batch-norm epsilon, which every [`ConvBn`] is built with.
const BATCH_NORM_EPS: f64 = 1e-5;

/// Channel means and maxima over the board: [B, C, H, W] -> [B, 2C].
fn global_pool(xs: &Tensor) -> Tensor {
    let mean = xs.mean_dim([2i64, 3].as_slice(), false, xs.kind());
    let max = xs.amax([2i64, 3].as_slice(), false);
    Tensor::cat(&[mean, max], 1)
}

/// Whether the variable `name` reads [`global_pool`]'s output, whose inputs are all the channel
/// means and then all the maxima: a wider network's inputs of channel `c` are at `c` and at its
/// own width + `c` (see [`crate::nn::Network::init_from`]).
pub fn reads_pooled_channels(name: &str) -> bool {
    name.ends_with(".pool_bias.weight") || name == "value.hidden.weight"
}

fn zero_conv() -> nn::ConvConfig {
    nn::ConvConfig { ws_init: nn::Init::Const(0.0), ..Default::default() }
}

fn zero_linear() -> nn::LinearConfig {
    nn::LinearConfig {
        ws_init: nn::Init::Const(0.0),
        bs_init: Some(nn::Init::Const(0.0)),
        bias: true,
    }
}

#[derive(Debug)]
struct ResBlock {
    first: ConvBn,
    second: ConvBn,
    pool_bias: Option<nn::Linear>,
}

impl ResBlock {
    fn new(path: &nn::Path, channels: i64, global_pooling: bool) -> ResBlock {
        ResBlock {
            first: ConvBn::new(&(path / "first"), channels, channels, 3),
            // A zero multiplier makes each block start as the identity, so a fresh tower of any
            // depth passes its input through unchanged and trains stably (Goyal et al. 2017).
            second: ConvBn::with_scale(&(path / "second"), channels, channels, 3, 0.0),
            pool_bias: global_pooling.then(|| {
                nn::linear(path / "pool_bias", 2 * channels, channels, Default::default())
            }),
        }
    }

    fn forward(&self, xs: &Tensor, train: bool) -> Tensor {
        if self.first.folded.is_some() {
            return self.forward_folded(xs);
        }
        let hidden = self.first.forward(xs, train).relu();
        // Out of place: relu's backward reads its output, which an in-place `+=` would overwrite.
        let hidden = match &self.pool_bias {
            Some(linear) => {
                let bias = global_pool(&hidden).apply(linear);
                hidden + bias.unsqueeze(-1).unsqueeze(-1)
            }
            None => hidden,
        };
        (xs + self.second.forward(&hidden, train)).relu()
    }

    /// [`ResBlock::forward`] for a network that only searches (its batch norms folded), in
    /// place: no backward pass will read the intermediate values, and each activation not
    /// allocated again is one pass less over memory.
    fn forward_folded(&self, xs: &Tensor) -> Tensor {
        let mut hidden = self.first.forward(xs, false);
        let _ = hidden.relu_();
        if let Some(linear) = &self.pool_bias {
            let bias = global_pool(&hidden).apply(linear);
            hidden += bias.unsqueeze(-1).unsqueeze(-1);
        }
        let mut out = self.second.forward(&hidden, false);
        out += xs;
        let _ = out.relu_();
        out
    }
}

/// A 1x1 convolution, global mean and max pooling, and two linear layers: the value head.
#[derive(Debug)]
struct PooledHead {
    conv: ConvBn,
    hidden: nn::Linear,
    out: nn::Linear,
}

impl PooledHead {
    fn new(path: &nn::Path, channels: i64, config: &NetConfig, outputs: i64) -> PooledHead {
        PooledHead {
            conv: ConvBn::new(&(path / "conv"), channels, config.value_channels, 1),
            hidden: nn::linear(
                path / "hidden",
                2 * config.value_channels,
                config.value_hidden,
                Default::default(),
            ),
            // Zero at the start, like the policy's output layer (see `PolicyValueNet::new`).
            out: nn::linear(path / "out", config.value_hidden, outputs, zero_linear()),
        }
    }

    fn forward(&self, trunk: &Tensor, train: bool) -> Tensor {
        global_pool(&self.conv.forward(trunk, train).relu())
            .apply(&self.hidden)
            .relu()
            .apply(&self.out)
    }
}

/// The network. `forward_t` maps [B, input planes, H, W] to (policy logits [B, policy planes*H*W],
/// win/draw/loss logits [B, 3]) for the side to move.
#[derive(Debug)]
pub struct PolicyValueNet {
    stem: ConvBn,
    blocks: Vec<ResBlock>,
    policy_hidden: ConvBn,
    policy_out: nn::Conv2D,
    value: PooledHead,
}

impl PolicyValueNet {
    pub fn new(path: &nn::Path, config: &NetConfig) -> PolicyValueNet {
        let c = config.channels;
        let blocks = (0..config.blocks)
            .map(|i| ResBlock::new(&(path / "trunk" / i), c, i % 2 == 1))
            .collect();
        PolicyValueNet {
            stem: ConvBn::new(&(path / "stem"), config.input_planes() as i64, c, 3),
            blocks,
            policy_hidden: ConvBn::new(&(path / "policy" / "hidden"), c, config.policy_channels, 1),
            // The output layers start at zero: a fresh network has uniform priors and an even
            // win/draw/loss, so the first self-play is plain uniform search, not arbitrary noise.
            policy_out: nn::conv2d(
                path / "policy" / "out",
                config.policy_channels,
                config.policy_planes() as i64,
                1,
                zero_conv(),
            ),
            value: PooledHead::new(&(path / "value"), c, config, 3),
        }
    }

    fn trunk(&self, xs: &Tensor, train: bool) -> Tensor {
        let mut trunk = self.stem.forward(xs, train).relu();
        for block in &self.blocks {
            trunk = block.forward(&trunk, train);
        }
        trunk
    }

    fn policy(&self, trunk: &Tensor, train: bool) -> Tensor {
        self.policy_hidden.forward(trunk, train).relu().apply(&self.policy_out).flatten(1, -1)
    }

    /// (policy logits, win/draw/loss logits).
    pub fn forward_t(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
        let trunk = self.trunk(xs, train);
        (self.policy(&trunk, train), self.value.forward(&trunk, train))
    }

    /// Folds every batch norm into its convolution for a network that only searches (see
    /// [`ConvBn::fold`]); the folded weights are in `kind`, laid out by `layout`.
    pub fn fold_batch_norms(&mut self, kind: tch::Kind, layout: fn(&Tensor) -> Tensor) {
        tch::no_grad(|| {
            let heads = [&mut self.stem, &mut self.policy_hidden, &mut self.value.conv].into_iter();
            let blocks =
                self.blocks.iter_mut().flat_map(|block| [&mut block.first, &mut block.second]);
            for conv_bn in heads.chain(blocks) {
                conv_bn.fold(kind, layout);
            }
        });
    }

    /// Whether [`PolicyValueNet::fold_batch_norms`] has run (a network that only searches).
    pub fn batch_norms_folded(&self) -> bool {
        self.stem.folded.is_some()
    }
}
