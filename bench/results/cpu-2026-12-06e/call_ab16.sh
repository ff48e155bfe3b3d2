#!/usr/bin/env bash
# Two CPU-only builds side by side at 16 threads on the device host. Run from the repository root, with the trees to
# compare as .devexp/old.tar and .devexp/new.tar (git archive COMMIT -o ...) and $OUT set.
set -e
repo=$PWD; out=${OUT:-/tmp/out}
nb=$(python3 -c "import nanobind;print(nanobind.cmake_dir())")
for v in old new; do
  rm -rf /tmp/$v && mkdir -p /tmp/$v && tar -xf $repo/.devexp/$v.tar -C /tmp/$v
  cmake -S /tmp/$v -B /tmp/$v/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_TESTS=OFF -DLOCKSTEP_PYTHON=ON -Dnanobind_DIR=$nb > /dev/null
  ninja -C /tmp/$v/build _core > /dev/null
  rm -rf /tmp/pkg_$v && mkdir -p /tmp/pkg_$v && cp -r /tmp/$v/python/lockstep /tmp/pkg_$v/ && cp /tmp/$v/build/_core*.so /tmp/pkg_$v/lockstep/
done
echo built
bash bench/ab_builds.sh 2 bench/cpu_models.py --threads 16 --runs 10 --warmup 2 --models vit_b_16_features,bert_base_encoder,gpt2_small > $out/ab16_transformers.txt 2>&1
python3 bench/summarize_ab.py $out/ab16_transformers.txt
