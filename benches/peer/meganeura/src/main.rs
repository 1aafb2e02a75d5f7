//! The meganeura peer of BENCHMARKS.md's MNIST table: the 784-128-10 MLP (ReLU, softmax
//! cross-entropy) of meganeura's own `examples/mnist.rs`, set to the table's recipe: PyTorch's
//! `nn.Linear` initialisation (`U(-1/sqrt(in), 1/sqrt(in))` for weights and biases, as the other
//! peers), the real MNIST training set, shuffled every epoch by meganeura's `DataLoader`, SGD
//! (constant learning rate) or Adam, trained by meganeura's `Trainer` (its documented loop).
//!
//! What differs from the other peers, by meganeura 0.3's design, not by choice here:
//! - its `DataLoader` gathers each batch on the host and uploads it (`Session::set_input`), and
//!   its `Trainer` waits for every step and reads the loss back;
//! - a graph has one batch size, so the last partial batch of an epoch is dropped (60000 / 128:
//!   468 steps of 128, the other programs 469 with a last one of 96);
//! - it has no SGD momentum: `--momentum` other than 0 exits with an error.
//!
//! Prints one line per epoch: `epoch E ms M acc A` (epoch time without the evaluation, which
//! follows it on the CPU from the parameters read back).

use std::path::Path;
use std::time::Instant;

use meganeura::{Graph, MnistDataset, Optimizer, TrainConfig, Trainer};
use rand::{Rng, SeedableRng};

include!("../../rust_peer_args.rs");

fn load(dir: &Path, prefix: &str) -> MnistDataset {
    MnistDataset::load_gz(
        &dir.join(format!("{prefix}-images.idx3-ubyte.gz")),
        &dir.join(format!("{prefix}-labels.idx1-ubyte.gz")),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// `U(-1/sqrt(fan_in), 1/sqrt(fan_in))`, PyTorch's `nn.Linear` default.
fn uniform(rng: &mut rand::rngs::StdRng, fan_in: usize, n: usize) -> Vec<f32> {
    let bound = 1.0 / (fan_in as f32).sqrt();
    (0..n).map(|_| rng.random_range(-bound..bound)).collect()
}

/// Test accuracy on the CPU: `argmax(relu(x w1 + b1) w2 + b2)`, `w1` `[784, 128]`, `w2`
/// `[128, 10]`, row-major.
fn accuracy(test: &MnistDataset, w1: &[f32], b1: &[f32], w2: &[f32], b2: &[f32]) -> f64 {
    let mut correct = 0usize;
    let mut h = [0f32; 128];
    for s in 0..test.n {
        let x = &test.images[s * 784..(s + 1) * 784];
        h.copy_from_slice(b1);
        for (i, &xi) in x.iter().enumerate() {
            if xi != 0.0 {
                for (hj, &w) in h.iter_mut().zip(&w1[i * 128..(i + 1) * 128]) {
                    *hj += xi * w;
                }
            }
        }
        let mut logits = [0f32; 10];
        logits.copy_from_slice(b2);
        for (j, &hj) in h.iter().enumerate() {
            let hj = hj.max(0.0);
            for (l, &w) in logits.iter_mut().zip(&w2[j * 10..(j + 1) * 10]) {
                *l += hj * w;
            }
        }
        let predicted = (0..10).fold(0, |best, c| if logits[c] > logits[best] { c } else { best });
        let label = &test.labels[s * 10..(s + 1) * 10];
        correct += usize::from(label[predicted] == 1.0);
    }
    correct as f64 / test.n as f64
}

fn main() {
    let a = parse();
    if a.momentum != 0.0 {
        eprintln!("meganeura 0.3 has no SGD momentum (train::Optimizer is Sgd or Adam)");
        std::process::exit(2);
    }
    let train = load(&a.data, "train");
    let test = load(&a.data, "t10k");
    let batch = a.batch_size;

    let mut g = Graph::new();
    let x = g.input("x", &[batch, 784]);
    let labels = g.input("labels", &[batch, 10]);
    let w1 = g.parameter("w1", &[784, 128]);
    let b1 = g.parameter("b1", &[128]);
    let mm1 = g.matmul(x, w1);
    let h1 = g.bias_add(mm1, b1);
    let a1 = g.relu(h1);
    let w2 = g.parameter("w2", &[128, 10]);
    let b2 = g.parameter("b2", &[10]);
    let mm2 = g.matmul(a1, w2);
    let logits = g.bias_add(mm2, b2);
    let loss = g.cross_entropy_loss(logits, labels);
    g.set_outputs(vec![loss]);
    let mut session = meganeura::build(&g, meganeura::SessionConfig::from_env()).0;
    eprintln!(
        "meganeura session: {} buffers, {} dispatches per step",
        session.plan().buffers.len(),
        session.plan().dispatches.len()
    );

    let mut rng = rand::rngs::StdRng::seed_from_u64(a.seed);
    session.set_parameter("w1", &uniform(&mut rng, 784, 784 * 128));
    session.set_parameter("b1", &uniform(&mut rng, 784, 128));
    session.set_parameter("w2", &uniform(&mut rng, 128, 128 * 10));
    session.set_parameter("b2", &uniform(&mut rng, 128, 10));

    let lr = a.lr as f32;
    let optimizer = if a.adam {
        Optimizer::adam(lr)
    } else {
        Optimizer::sgd(lr)
    };
    let config = TrainConfig {
        optimizer,
        learning_rate: lr,
        log_interval: 0,
    };
    let mut trainer = Trainer::new(session, config);
    let mut loader = train.loader(batch);
    let (mut w1v, mut b1v) = (vec![0f32; 784 * 128], vec![0f32; 128]);
    let (mut w2v, mut b2v) = (vec![0f32; 128 * 10], vec![0f32; 10]);
    for epoch in 1..=a.epochs {
        let t0 = Instant::now();
        // `train_epoch` waits for the GPU after every step, so the clock stops after the last.
        let stats = trainer.train_epoch(&mut loader, epoch + a.seed as usize);
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let s = trainer.session();
        s.read_param("w1", &mut w1v);
        s.read_param("b1", &mut b1v);
        s.read_param("w2", &mut w2v);
        s.read_param("b2", &mut b2v);
        let acc = accuracy(&test, &w1v, &b1v, &w2v, &b2v);
        eprintln!(
            "epoch {epoch}: {} steps, mean loss {:.4}",
            stats.steps, stats.avg_loss
        );
        println!("epoch {epoch} ms {ms:.1} acc {acc:.4}");
    }
}
