//! The Burn peer of BENCHMARKS.md's MNIST table: the 784-128-10 MLP (ReLU, softmax
//! cross-entropy), PyTorch's `nn.Linear` initialisation (Burn's `LinearConfig` default, Kaiming
//! uniform with gain 1/sqrt(3): `U(-1/sqrt(in), 1/sqrt(in))`), the real MNIST training set
//! resident on the GPU, shuffled every epoch, batches of `--batch-size` (the last one partial),
//! SGD (momentum 0 unless given) or Adam, on Burn's wgpu backend with its fusion and autotune.
//!
//! Prints one line per epoch: `epoch E ms M acc A` (epoch time without the evaluation, which
//! follows it; the device is synchronised before each clock read).

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamConfig, GradientsParams, SgdConfig};
use burn::prelude::*;
use burn::tensor::{Int, TensorData};
use rand::SeedableRng;
use rand::seq::SliceRandom;

#[derive(Module, Debug)]
struct Mlp {
    hidden: Linear,
    activation: Relu,
    output: Linear,
}

impl Mlp {
    fn new(device: &Device) -> Self {
        Self {
            hidden: LinearConfig::new(784, 128).init(device),
            activation: Relu::new(),
            output: LinearConfig::new(128, 10).init(device),
        }
    }

    fn forward(&self, input: Tensor<2>) -> Tensor<2> {
        self.output
            .forward(self.activation.forward(self.hidden.forward(input)))
    }
}

include!("../../rust_peer_args.rs");

/// An IDX file (gzip): its dimensions and bytes.
fn idx(path: &Path) -> (Vec<usize>, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut raw)
        .expect("gzip");
    let dims = raw[3] as usize;
    let shape: Vec<usize> = (0..dims)
        .map(|d| u32::from_be_bytes(raw[4 + 4 * d..8 + 4 * d].try_into().unwrap()) as usize)
        .collect();
    (shape, raw[4 + 4 * dims..].to_vec())
}

fn load(dir: &Path, prefix: &str, device: &Device) -> (Tensor<2>, Tensor<1, Int>, usize) {
    let (shape, pixels) = idx(&dir.join(format!("{prefix}-images.idx3-ubyte.gz")));
    let (_, labels) = idx(&dir.join(format!("{prefix}-labels.idx1-ubyte.gz")));
    let n = shape[0];
    let x: Vec<f32> = pixels.iter().map(|&p| f32::from(p) / 255.0).collect();
    let y: Vec<i64> = labels.iter().map(|&l| i64::from(l)).collect();
    (
        Tensor::from_data(TensorData::new(x, [n, 784]), device),
        Tensor::from_data(TensorData::new(y, [n]), device),
        n,
    )
}

fn main() {
    let a = parse();
    let device = Device::default().autodiff();
    let (xtr, ytr, n) = load(&a.data, "train", &device);
    let (xte, yte, n_test) = load(&a.data, "t10k", &device);
    let mut model = Mlp::new(&device);
    let mut optim = if a.adam {
        AdamConfig::new().with_epsilon(1e-8).init()
    } else {
        let momentum = (a.momentum > 0.0).then(|| {
            MomentumConfig::new()
                .with_momentum(a.momentum)
                .with_dampening(0.0)
                .with_nesterov(false)
        });
        SgdConfig::new().with_momentum(momentum).init()
    };
    let loss_fn = CrossEntropyLossConfig::new().init(&device);
    let mut rng = rand::rngs::StdRng::seed_from_u64(a.seed);
    let mut order: Vec<i64> = (0..n as i64).collect();
    device.sync().expect("sync");
    for epoch in 1..=a.epochs {
        let t0 = Instant::now();
        order.shuffle(&mut rng);
        let perm: Tensor<1, Int> = Tensor::from_data(TensorData::new(order.clone(), [n]), &device);
        for start in (0..n).step_by(a.batch_size) {
            let end = (start + a.batch_size).min(n);
            let idx = perm.clone().slice(start..end);
            let x = xtr.clone().select(0, idx.clone());
            let y = ytr.clone().select(0, idx);
            let loss = loss_fn.forward(model.forward(x), y);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(a.lr, model, grads);
        }
        device.sync().expect("sync");
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let predicted = model.forward(xte.clone()).argmax(1).reshape([n_test]);
        let correct: i64 = predicted.equal(yte.clone()).int().sum().into_scalar();
        println!(
            "epoch {epoch} ms {ms:.1} acc {:.4}",
            correct as f64 / n_test as f64
        );
    }
}
