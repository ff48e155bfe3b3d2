#!/usr/bin/env bash
# Builds two source trees' CPU-only Python packages for bench/ab_builds.sh: .devexp/old.tar and .devexp/new.tar
# (made with `git archive COMMIT -o ...`) into /tmp/pkg_old/lockstep and /tmp/pkg_new/lockstep. Run from the
# repository root, on a machine with cmake, ninja and nanobind (the device host: see bench/results/*/call_ab16.sh).
set -e
repo=$PWD
nb=$(python3 -c "import nanobind;print(nanobind.cmake_dir())")
for v in old new; do
  rm -rf /tmp/$v && mkdir -p /tmp/$v && tar -xf $repo/.devexp/$v.tar -C /tmp/$v
  cmake -S /tmp/$v -B /tmp/$v/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_TESTS=OFF \
    -DLOCKSTEP_PYTHON=ON -Dnanobind_DIR=$nb > /dev/null
  ninja -C /tmp/$v/build _core > /dev/null
  rm -rf /tmp/pkg_$v && mkdir -p /tmp/pkg_$v && cp -r /tmp/$v/python/lockstep /tmp/pkg_$v/
  cp /tmp/$v/build/_core*.so /tmp/pkg_$v/lockstep/
done
echo built
