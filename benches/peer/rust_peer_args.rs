// The command line of the Rust peers of the MNIST table (benches/peer/burn and
// benches/peer/meganeura include this file: each is its own package outside the workspace):
// the arguments mnist_side_by_side.py passes to every peer.

/// A peer's settings.
struct Args {
    /// The MNIST directory (IDX files, gzip).
    data: std::path::PathBuf,
    epochs: usize,
    batch_size: usize,
    lr: f64,
    momentum: f64,
    /// `--optimizer adam` (else SGD).
    adam: bool,
    seed: u64,
}

/// `--data DIR --epochs N --batch-size N --lr X --momentum X --optimizer sgd|adam --seed N`,
/// defaulting to the repository's MNIST, 3 epochs, batch 128, SGD lr 0.1.
fn parse() -> Args {
    let mut a = Args {
        data: std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../data/mnist"),
        epochs: 3,
        batch_size: 128,
        lr: 0.1,
        momentum: 0.0,
        adam: false,
        seed: 0,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let value = argv.get(i + 1).cloned().unwrap_or_default();
        match argv[i].as_str() {
            "--data" => a.data = value.into(),
            "--epochs" => a.epochs = value.parse().expect("--epochs N"),
            "--batch-size" => a.batch_size = value.parse().expect("--batch-size N"),
            "--lr" => a.lr = value.parse().expect("--lr X"),
            "--momentum" => a.momentum = value.parse().expect("--momentum X"),
            "--optimizer" => a.adam = value == "adam",
            "--seed" => a.seed = value.parse().expect("--seed N"),
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    a
}
