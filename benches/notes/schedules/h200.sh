#!/bin/bash
# trainer's H200 run (issue 12 §5): the new recipe on MNIST (seeds 0, 1, 2), Fashion-MNIST with
# the old and the new recipe, the old recipe on MNIST, two nearby recipes, and epoch times with
# and without the pipelined chunks. Prints a table last. The binary's built-in defaults at the
# time were the old ones, so every recipe is given in full.
set -u
B=.dev/trainer/mnist
M=data/mnist
F=.dev/trainer/fashion
O=${OUT:-/tmp}/trainer
mkdir -p $O
NEW="--lr 0.1 --schedule cosine --warmup-epochs 0.5"
OLD="--lr 0.05 --schedule constant --warmup-epochs 0"  # the binary of this run had no warm-up by default; today's needs the 0
run() { # name, args...
  local name=$1; shift
  timeout 30 $B train "$@" > $O/$name.out 2> $O/$name.err
  local rc=$?
  local acc=$(grep -o 'final test accuracy [0-9.]*%' $O/$name.out | grep -o '[0-9.]*%')
  local sps=$(grep -o '([0-9]* samples/s), evaluation' $O/$name.out | grep -o '[0-9]*' | head -1)
  local accs=$(grep -o 'test accuracy [0-9.]*%' $O/$name.out | grep -o '[0-9.]*%' | tr '\n' ' ')
  echo "$name | $* | $acc | training samples/s $sps | rc $rc | $accs" | tee -a $O/table.txt
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in 0 1 2; do run mnist-new-s$s --data $M --seed $s $NEW; done
for s in 0 1 2; do run fashion-new-s$s --data $F --seed $s $NEW; done
for s in 0 1 2; do run fashion-old-s$s --data $F --seed $s $OLD; done
for s in 0 1 2; do run mnist-old-s$s --data $M --seed $s $OLD; done
run mnist-new-s0-nopipe --data $M --seed 0 $NEW --no-pipeline
run mnist-new-s0-pipe --data $M --seed 0 $NEW
for s in 0 1 2; do run mnist-lr07-s$s --data $M --seed $s --lr 0.07 --schedule cosine --warmup-epochs 0.5; done
for s in 0 1 2; do run mnist-warm1-s$s --data $M --seed $s --lr 0.1 --schedule cosine --warmup-epochs 1; done
run mnist-step-s0 --data $M --seed 0 --lr 0.1 --schedule step --step-epochs 2 --step-gamma 0.1 --warmup-epochs 0.5
echo; echo "=== table ==="; cat $O/table.txt
