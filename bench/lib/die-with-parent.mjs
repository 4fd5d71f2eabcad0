/* global process, setInterval */
// Preloaded (--import) into the processes a benchmark spawns: if the driver dies without cleaning up
// (SIGKILL, OOM), the orphan ends itself, so no benchmark leaves a service or emulator behind.
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM')
}, 500).unref()
