import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { routeConsole } from './logging/console-guard.js'

let config: Config
try {
  config = loadConfig()
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`)
    process.exit(1)
  }
  throw err
}

const app = await buildApp(config)
// stdout is the JSON log alone: what dependencies print (libsignal dumps sessions with their private
// keys) goes into the log at debug, redacted
routeConsole(app.log)

if (config.apiKeySource === 'generated') app.log.info(`No API_KEY set: generated one and stored it in ${config.apiKeyFile} (mode 0600)`)
else if (config.apiKeySource === 'file') app.log.info(`Using the API key stored in ${config.apiKeyFile}`)
if (config.speedTricksOff.size > 0) app.log.warn({ speedTricksOff: [...config.speedTricksOff] }, 'SPEED_TRICKS_OFF is set: these speed tricks take their plain, slower path (docs/benchmarks.md#speed-tricks)')

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
  else app.log.info(`${String(signal)} received, shutting down`)
  await app.close()
})

try {
  await app.listen({ port: config.port, host: config.host })
  app.log.info(`API docs at http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${config.port}/docs`)
} catch (err) {
  app.log.error({ err }, 'could not start')
  process.exit(1)
}
