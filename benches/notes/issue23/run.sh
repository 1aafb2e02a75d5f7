#!/bin/bash
# Brief B2's one device call (branch mlp-ad): (b) the relu step with derived derivatives (mnist,
# branch mlp-ad) against main's hand-written one (mnist-main), both orders; (a) test accuracy
# after 5 epochs per activation, full MNIST, seed 0.
D=.devbin/mlp-ad
. benches/notes/device_env.sh
S="--epochs 5 --peers mnist --settings sgd128,adam128,default64 --profile --timeout 60"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } > $OUT/acc.txt
python3 benches/peer/mnist_side_by_side.py --mnist $D/mnist --baseline $D/mnist-main $S > $OUT/side_ab.txt 2>&1
python3 benches/peer/mnist_side_by_side.py --mnist $D/mnist-main --baseline $D/mnist $S > $OUT/side_ba.txt 2>&1
for a in relu leaky-relu gelu silu tanh sigmoid softplus; do
  echo "## $D/mnist train --activation $a --seed 0 --data data/mnist" >> $OUT/acc.txt
  timeout 40 $D/mnist train --activation $a --seed 0 --data data/mnist >> $OUT/acc.txt 2>&1
done
date -u >> $OUT/acc.txt
