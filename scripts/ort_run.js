#!/usr/bin/env node
// Run an ONNX model with ONNX Runtime (CPU) on .npy inputs and write each
// output as OUTDIR/<name>.npy: the oracle gopt-run's outputs are compared
// with (test/Models). Float32, int64 or bool inputs, float32 outputs.
//   ort_run.js MODEL.onnx --input NAME=FILE.npy [...] --output-dir OUTDIR
// With --iterations N (and --warmup N, --threads N) it times the runs
// instead, as benchmarks/real_models.py does, and prints one JSON line with
// the median latency in ms. --profile FILE also writes ONNX Runtime's
// per-node times of the timed runs (each node's minimum, ms) as JSON, for
// benchmarks/op_gaps.py.
// Needs onnxruntime-node: ORT_NODE_MODULE, or benchmarks/.peers.
const fs = require('fs');
const path = require('path');
const ort = require(process.env.ORT_NODE_MODULE ||
                    path.join(__dirname, '..', 'benchmarks', '.peers',
                              'node_modules', 'onnxruntime-node'));

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY')
    throw new Error(file + ': not a .npy file');
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12);
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = (header.match(/'descr':\s*'([^']*)'/) || [])[1];
  if ((descr !== '<f4' && descr !== '<i8' && descr !== '|b1') ||
      /'fortran_order':\s*True/.test(header))
    throw new Error(file + ': expects a C-order float32, int64 or bool array, got ' +
                    header);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1]
                    .split(',').map(s => s.trim()).filter(s => s).map(Number);
  const offset = start + headerLen;
  const bytes = buf.buffer.slice(buf.byteOffset + offset,
                                 buf.byteOffset + buf.length);
  if (descr === '|b1')
    return new ort.Tensor('bool', new Uint8Array(bytes), shape);
  if (descr === '<i8')
    return new ort.Tensor('int64', new BigInt64Array(bytes), shape);
  return new ort.Tensor('float32', new Float32Array(bytes), shape);
}

function writeNpy(file, tensor) {
  if (tensor.type !== 'float32')
    throw new Error('output type ' + tensor.type + ' is not float32');
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)`
                                         : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([
    head, Buffer.from(header, 'latin1'),
    Buffer.from(tensor.data.buffer, tensor.data.byteOffset,
                tensor.data.byteLength)]));
}

// Each node's minimum kernel time (ms) over the profiled runs, and its op
// type, from the trace ONNX Runtime wrote; the trace is removed.
function writeNodeProfile(session, prefix, outFile) {
  session.endProfiling();
  const dir = path.dirname(prefix);
  const trace = fs.readdirSync(dir).find(
      f => f.startsWith(path.basename(prefix)) && f.endsWith('.json'));
  if (!trace)
    throw new Error('ONNX Runtime wrote no profile beside ' + outFile);
  const events = JSON.parse(fs.readFileSync(path.join(dir, trace)));
  fs.unlinkSync(path.join(dir, trace));
  const nodes = {};
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time'))
      continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    const ms = e.dur / 1000;
    if (!nodes[name] || ms < nodes[name].ms)
      nodes[name] = {ms, op: e.args.op_name};
  }
  fs.writeFileSync(outFile, JSON.stringify({nodes}));
}

async function main() {
  const args = process.argv.slice(2);
  const model = args[0];
  const feeds = {};
  let outDir = null;
  const timing = {};
  for (let i = 1; i < args.length; i++) {
    if (args[i] === '--input') {
      const [name, file] = args[++i].split('=');
      feeds[name] = readNpy(file);
    } else if (args[i] === '--output-dir') {
      outDir = args[++i];
    } else if (args[i] === '--profile') {
      timing.profile = args[++i];
    } else if (['--iterations', '--warmup', '--threads'].includes(args[i])) {
      timing[args[i].slice(2)] = Number(args[++i]);
    } else {
      throw new Error('unknown argument ' + args[i]);
    }
  }
  const timed = timing.iterations !== undefined;
  if (!model || (!outDir && !timed))
    throw new Error('usage: ort_run.js MODEL --input NAME=FILE.npy ' +
                    '(--output-dir DIR | --iterations N [--warmup N] ' +
                    '[--threads N] [--profile FILE])');
  const profilePrefix = timing.profile &&
      path.join(path.dirname(path.resolve(timing.profile)),
                'ort_run_profile_' + process.pid);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: timed ? (timing.threads || 0) : 1,
    interOpNumThreads: 1, executionMode: 'sequential'});
  if (timed) {
    for (let i = 0; i < (timing.warmup || 0); i++)
      await session.run(feeds);
    // Profiling starts after the warm-up: ORT profiles from session
    // creation, so a second session with profiling on is timed instead.
    const timedSession = !profilePrefix ? session :
        await ort.InferenceSession.create(model, {
          intraOpNumThreads: timing.threads || 0, interOpNumThreads: 1,
          executionMode: 'sequential', enableProfiling: true,
          profileFilePrefix: profilePrefix});
    if (profilePrefix)
      for (let i = 0; i < (timing.warmup || 0); i++)
        await timedSession.run(feeds);
    const times = [];
    for (let i = 0; i < timing.iterations; i++) {
      const t0 = process.hrtime.bigint();
      await timedSession.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    if (profilePrefix)
      writeNodeProfile(timedSession, profilePrefix, timing.profile);
    console.log(JSON.stringify({
      peer: 'onnxruntime-node ' + ort.env.versions.common,
      median_ms: times[Math.floor(times.length / 2)], min_ms: times[0]}));
    return;
  }
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, {recursive: true});
  for (const name of session.outputNames)
    writeNpy(path.join(outDir, name + '.npy'), results[name]);
}

main().catch(e => { console.error('ort_run: ' + e.message); process.exit(1); });
