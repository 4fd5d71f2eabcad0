/* global process, setInterval */
// Preloaded (--import) into every process spawnNode starts (test/support/processes.ts): if the test or
// benchmark that started it dies without cleaning up (SIGKILL, OOM), the orphan ends itself, so no run
// leaves a service or emulator behind.
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM')
}, 500).unref()
