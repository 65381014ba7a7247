// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime (onnxruntime-node, CPU) latency of one ONNX model, as the peer of
// `tunebench-cli compile --bench`: one warm-up run, then `repeat` rounds of `number` runs each,
// per-round mean in ms; prints one JSON line {model, threads, results_ms, mean_ms, median_ms}.
//
//   NODE_PATH=<dir>/node_modules node bench_ort.js MODEL.onnx THREADS [REPEAT] [MIN_REPEAT_MS] [INPUT_SHAPE]
//
// Install once, without the CUDA download: ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node
// Input: the model's first input, float32, filled with a fixed LCG stream in [-1, 1).
const ort = require('onnxruntime-node');

async function main() {
  const [model, threadsArg, repeatArg, minMsArg, shapeArg] = process.argv.slice(2);
  const threads = parseInt(threadsArg || '1');
  const repeat = parseInt(repeatArg || '5');
  const minRepeatMs = parseFloat(minMsArg || '300');
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const name = session.inputNames[0];
  let shape = shapeArg ? shapeArg.split(',').map(Number) : null;
  if (!shape) {
    const meta = session.inputMetadata ? session.inputMetadata[0] : null;
    shape = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1)) : [1, 3, 224, 224];
  }
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  let s = 12345;
  for (let i = 0; i < n; ++i) {
    s = (s * 1103515245 + 12345) % 2147483648;
    data[i] = (s / 2147483648) * 2 - 1;
  }
  const feeds = {[name]: new ort.Tensor('float32', data, shape)};
  await session.run(feeds);  // warm-up
  // number grows until a round lasts minRepeatMs (TVM's time evaluator rule).
  let number = 1;
  const results = [];
  for (let r = 0; r < repeat; ++r) {
    for (;;) {
      const t0 = process.hrtime.bigint();
      for (let k = 0; k < number; ++k) await session.run(feeds);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (ms >= minRepeatMs || number > 100000) {
        results.push(ms / number);
        break;
      }
      number = Math.max(Math.ceil(minRepeatMs / (ms / number)) + 1, Math.ceil(number * 1.618));
    }
  }
  const sorted = [...results].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const mean = results.reduce((a, b) => a + b, 0) / results.length;
  console.log(JSON.stringify({model, threads, shape, results_ms: results, mean_ms: mean, median_ms: median}));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
