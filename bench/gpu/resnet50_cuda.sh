#!/usr/bin/env bash
# The GPU machine's resnet-50 run (device tool, run from the repository root with .gpu-bundle carried:
# bench/gpu/bundle.sh first): resnet-50 NHWC tuned for cuda on the GPU,
# compiled with the log, benchmarked and checked against the interpreter.
set -u
mkdir -p /tmp/tb && tar -xJf .gpu-bundle/tunebench.tar.xz -C /tmp/tb
export PATH=/tmp/tb:$PATH
nvidia-smi -L
T="cuda -arch=sm_90"
cd $OUT
TUNE_S=${TUNE_S:-300}
/usr/bin/time -v timeout $TUNE_S tunebench-cli tune --network resnet-50 --target "$T" --trials 3000 --per-round 32 \
  --min-repeat-ms 10 --timeout 10 --log r50_cuda.json --tsv r50.tsv > tune.txt 2> tune_err.txt
echo "tune rc=$?"; tail -5 tune.txt; grep -c . r50_cuda.json
tunebench-cli compile --network resnet-50 --target "$T" --log r50_cuda.json --bench --repeat 5 --number 20 > compile.txt 2>&1
echo "compile rc=$?"; tail -12 compile.txt
tunebench-cli compile --network resnet-50 --target "$T" --bench --repeat 5 --number 20 > compile_untuned.txt 2>&1
echo "compile untuned rc=$?"; tail -4 compile_untuned.txt
tunebench-cli run --network resnet-50 --target "$T" --log r50_cuda.json --input $OLDPWD/.gpu-bundle/r50_in.pb   # a 1x224x224x3 float TensorProto (any values) --check > run.txt 2>&1
echo "run rc=$?"; tail -4 run.txt
