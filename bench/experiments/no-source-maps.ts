// Experiment (BENCH_EXPERIMENT=no-source-maps), preloaded into the service after tsx: tsx turns Node's
// source-map support on for the whole process, so every `error.stack` read maps each frame through the
// source maps Baileys ships; Baileys reads a fresh stack two or three times per frame it sends
// (Utils/generics.js promiseTimeout and delayCancellable). This turns the support off again.
process.setSourceMapsEnabled(false)
