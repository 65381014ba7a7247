#!/usr/bin/env bash
# The GPU machine's resnet-50 run (device tool, run from the repository root with .gpu-bundle carried:
# bench/gpu/bundle.sh first): resnet-50 NHWC tuned for cuda on the GPU for TUNE_S seconds (resuming
# from .gpu-bundle/r50_cuda.json when an earlier call left one there: copy $OUT/r50_cuda.json back
# into .gpu-bundle/ between calls), compiled with the log, benchmarked tuned and untuned, checked
# against the interpreter, and set beside PyTorch/cuDNN measured on the same card in the same call
# (bench/gpu/torch_peer.py, bench/gpu/r50_vs_cudnn.py). The run input is .gpu-bundle/r50_in.pb, a
# 1x224x224x3 float TensorProto (any values). Everything lands in $OUT.
set -u
REPO=$PWD
mkdir -p /tmp/tb && tar -xJf .gpu-bundle/tunebench.tar.xz -C /tmp/tb
export PATH=/tmp/tb:$PATH
nvidia-smi -L
T="cuda -arch=sm_90"
cd "$OUT"
TUNE_S=${TUNE_S:-300}
RESUME=()
if [ -f "$REPO/.gpu-bundle/r50_cuda.json" ]; then
  cp "$REPO/.gpu-bundle/r50_cuda.json" r50_cuda.json
  RESUME=(--resume)
  echo "resuming from $(grep -c . r50_cuda.json) records"
fi
if [ "$TUNE_S" -gt 0 ]; then
  /usr/bin/time -v timeout "$TUNE_S" tunebench-cli tune --network resnet-50 --target "$T" --trials 20000 --per-round 64 \
    --min-repeat-ms 10 --timeout 10 --log r50_cuda.json --tsv r50.tsv "${RESUME[@]}" > tune.txt 2> tune_err.txt
  echo "tune rc=$? records=$(grep -c . r50_cuda.json)"
  grep -E "^Measured task|search:" tune.txt | tail -4
  tail -2 r50.tsv
fi
# POST=0: tune only (a first call of a resumed run); TB_GPU_WORKER_VERBOSE=1 prints the worker's
# NVRTC and run seconds per round into tune_err.txt.
[ "${POST:-1}" = 0 ] && exit 0
tunebench-cli compile --network resnet-50 --target "$T" --log r50_cuda.json --bench --repeat 5 --number 20 > compile.txt 2>&1
echo "compile rc=$?"; tail -6 compile.txt
tunebench-cli compile --network resnet-50 --target "$T" --bench --repeat 5 --number 20 > compile_untuned.txt 2>&1
echo "compile untuned rc=$?"; tail -3 compile_untuned.txt
tunebench-cli run --network resnet-50 --target "$T" --log r50_cuda.json --input "$REPO/.gpu-bundle/r50_in.pb" --check > run.txt 2>&1
echo "run rc=$?"; tail -4 run.txt
if [ -x /opt/torch/.venv/bin/python ]; then
  /opt/torch/.venv/bin/python "$REPO/bench/gpu/torch_peer.py" > torch_peer.json 2> torch_err.txt
  echo "torch rc=$?"
  python3 "$REPO/bench/gpu/r50_vs_cudnn.py" r50_cuda.json torch_peer.json | tee r50_vs_cudnn.txt
fi
# mobilenet (NHWC, the same 1x224x224x3 input) compiled untuned for the GPU and checked against the
# interpreter: the second network of the GPU issue's "outputs equal to the interpreter".
tunebench-cli run --network mobilenet --target "$T" --input "$REPO/.gpu-bundle/r50_in.pb" --check > run_mobilenet.txt 2>&1
echo "mobilenet run rc=$?"; tail -2 run_mobilenet.txt
