// Runs a model with ONNX Runtime (CPU execution provider) the way `ferry run --json` does, for side-by-side
// benchmarks (bench/compare_ort.py). Prints one JSON object:
//   {"session_ms": ..., "latencies_ms": [...], "peak_rss_kb": ..., "outputs": {name: {"shape": [...], "mean": ...}}}
// Usage: node ort_run.js MODEL --input NAME=FILE.npy... [--threads N] [--repeat N] [--save-dir DIR] [--lockstep]
//   [--graph-optimization disabled|basic|extended|all] (ORT's graphOptimizationLevel; default all)
// --lockstep, as `ferry run --lockstep`: prints "ready" after session creation, then runs once per line read on
// stdin and prints that run's latency (ms) on a line, until end of input; then the JSON object (--repeat ignored).
// --profile PREFIX: ORT's own profiler (enableProfiling); the JSON object names the trace file as "profile_file".
// --write-optimized FILE: ORT writes the graph it optimized (at --graph-optimization) to FILE
// (optimizedModelFilePath), as `optimized_model_filepath` does in ORT's Python API.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

// A minimal .npy reader/writer: little-endian float32, float64, float16, int64, int32, int16, int8, uint64, uint32,
// uint16, uint8 and bool, C order
// (what the benchmarks use).
const NPY_TYPES = {'<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
                   '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '<f2': ['float16', Uint16Array],
                   '|b1': ['bool', Uint8Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array],
                   '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array], '<u4': ['uint32', Uint32Array],
                   '<u8': ['uint64', BigUint64Array]};
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order is not supported`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  if (!NPY_TYPES[descr]) throw new Error(`${file}: dtype ${descr} is not supported`);
  const [type, Ctor] = NPY_TYPES[descr];
  const offset = start + headerLen;
  const bytes = buf.subarray(offset);
  const data = new Ctor(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return new ort.Tensor(type, data, shape);
}
const NPY_DESCR = {float32: '<f4', float64: '<f8', int64: '<i8', int32: '<i4', float16: '<f2', bool: '|b1',
                    uint8: '|u1', int8: '|i1', int16: '<i2', uint16: '<u2', uint32: '<u4', uint64: '<u8'};
function writeNpy(file, tensor) {
  const descr = NPY_DESCR[tensor.type];
  if (!descr) return;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${tensor.dims.join(', ')}${tensor.dims.length === 1 ? ',' : ''}), }`;
  while ((10 + header.length + 1) % 64 !== 0) header += ' ';
  header += '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength)]));
}

function peakRssKb() {
  try {
    const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) : -1;
  } catch (e) {
    return -1;
  }
}

async function main() {
  const args = process.argv.slice(2);
  const model = args[0];
  const feeds = {};
  let threads = 1, repeat = 10, saveDir = '', lockstep = false, profilePrefix = '', graphOpt = 'all', writeOpt = '';
  for (let i = 1; i < args.length; i++) {
    if (args[i] === '--input') {
      const [name, file] = args[++i].split('=');
      feeds[name] = readNpy(file);
    } else if (args[i] === '--threads') {
      threads = Number(args[++i]);
    } else if (args[i] === '--repeat') {
      repeat = Number(args[++i]);
    } else if (args[i] === '--profile') {
      profilePrefix = args[++i];
    } else if (args[i] === '--graph-optimization') {
      graphOpt = args[++i];
      if (!['disabled', 'basic', 'extended', 'all'].includes(graphOpt)) {
        throw new Error(`--graph-optimization: expected disabled, basic, extended or all, got '${graphOpt}'`);
      }
    } else if (args[i] === '--write-optimized') {
      writeOpt = args[++i];
    } else if (args[i] === '--lockstep') {
      lockstep = true;
    } else if (args[i] === '--save-dir') {
      saveDir = args[++i];
    } else {
      throw new Error(`unknown argument ${args[i]}`);
    }
  }
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
    graphOptimizationLevel: graphOpt, executionMode: 'sequential',
    ...(profilePrefix ? {enableProfiling: true, profileFilePrefix: profilePrefix} : {}),
    ...(writeOpt ? {optimizedModelFilePath: writeOpt} : {})});
  const sessionMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const latencies = [];
  let out;
  const runOnce = async () => {
    const s = process.hrtime.bigint();
    out = await session.run(feeds);
    latencies.push(Number(process.hrtime.bigint() - s) / 1e6);
  };
  if (lockstep) {
    console.log('ready');
    const lines = require('readline').createInterface({input: process.stdin});
    for await (const line of lines) {  // eslint-disable-line no-unused-vars
      await runOnce();
      console.log(String(latencies[latencies.length - 1]));
    }
    if (!latencies.length) throw new Error('--lockstep: standard input ended before the first run was asked for');
  } else {
    for (let r = 0; r < repeat; r++) await runOnce();
  }
  const outputs = {};
  for (const name of session.outputNames) {
    const t = out[name];
    let sum = 0;
    for (let k = 0; k < t.data.length; k++) sum += Number(t.data[k]);
    outputs[name] = {shape: t.dims, mean: sum / Math.max(1, t.data.length)};
    if (saveDir) writeNpy(path.join(saveDir, name.replace(/[\/\\:]/g, '_') + '.npy'), t);
  }
  const result = {session_ms: sessionMs, latencies_ms: latencies, peak_rss_kb: peakRssKb(),
                  ort_version: ort.env.versions.common, outputs};
  if (profilePrefix) {
    // endProfiling() writes PREFIX_<date>_<time>.json and returns nothing: name the newest such file.
    await session.endProfiling();
    const dir = path.dirname(profilePrefix), base = path.basename(profilePrefix) + '_';
    const files = fs.readdirSync(dir).filter(f => f.startsWith(base) && f.endsWith('.json'))
        .map(f => path.join(dir, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
    result.profile_file = files.length ? files[0] : '';
  }
  console.log(JSON.stringify(result));
}

main().catch(e => { console.error(`ort_run: ${e.message}`); process.exit(1); });
