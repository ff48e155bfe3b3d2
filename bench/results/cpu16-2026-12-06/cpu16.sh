#!/usr/bin/env bash
# CPU at 16 threads on the GPU machine's host: 03c4182 (old) against the working tree (new), alternating processes.
set -x
nb=$(python3 -c "import nanobind;print(nanobind.cmake_dir())")
for v in old new; do
  src=.; [ $v = old ] && src=.devexp/base
  cmake -S $src -B /tmp/b_$v -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_TESTS=OFF -DLOCKSTEP_PYTHON=ON -Dnanobind_DIR=$nb > $OUT/cmake_$v.log 2>&1
  ninja -C /tmp/b_$v _core > $OUT/build_$v.log 2>&1 || tail -30 $OUT/build_$v.log
  rm -rf /tmp/pkg_$v && mkdir -p /tmp/pkg_$v && cp -r $src/python/lockstep /tmp/pkg_$v/ && rm -f /tmp/pkg_$v/lockstep/_core*.so && cp /tmp/b_$v/_core*.so /tmp/pkg_$v/lockstep/
done
lscpu > $OUT/lscpu.txt
.devexp/lockstep_tests_head --gtest_brief=1 > $OUT/cpp_tests_new.txt 2>&1; tail -3 $OUT/cpp_tests_new.txt
bash bench/ab_builds.sh 2 bench/cpu_models.py --threads 16 --runs 10 --warmup 3 > $OUT/ab16.txt 2>&1
python3 bench/summarize_ab.py $OUT/ab16.txt
bash bench/ab_builds.sh 1 bench/cpu_models.py --threads 2 --runs 10 --warmup 3 > $OUT/ab2.txt 2>&1
python3 bench/summarize_ab.py $OUT/ab2.txt
