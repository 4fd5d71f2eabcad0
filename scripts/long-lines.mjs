#!/usr/bin/env node
// Lists the lines the lint's line-length rule refuses (@stylistic/max-len in eslint.config.js), and nothing
// else the lint says:
//
//   npm run lint:long                    the whole tree eslint lints
//   npm run lint:long -- src plugins     some paths only
//
// The rule has no fix: a line over it is wrapped by hand (a signature split at its parameters, a wide
// literal over lines, a long type named once). Exit status 1 while one is left.
/* global console, process */
import { relative } from 'node:path'
import { ESLint } from 'eslint'

const RULE = '@stylistic/max-len'
const eslint = new ESLint({ ruleFilter: ({ ruleId }) => ruleId === RULE })
const results = await eslint.lintFiles(process.argv.length > 2 ? process.argv.slice(2) : ['.'])
const long = results.flatMap((r) => r.messages.filter((m) => m.ruleId === RULE).map((m) => `${relative(process.cwd(), r.filePath)}:${m.line} ${m.message}`))
for (const line of long) console.log(line)
console.log(long.length === 0 ? 'no line over the limit' : `${long.length} line(s) over the limit`)
process.exitCode = long.length === 0 ? 0 : 1
