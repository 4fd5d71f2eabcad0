// The order plugins register in, worked out from their own metadata: fastify-plugin keeps a plugin's options
// (`name`, `dependencies`) on the function under Symbol.for('plugin-meta'). A plugin comes after every plugin it
// names in `dependencies`; among plugins the graph leaves free, the name decides, so the list they come from is a
// set: where a plugin sits in it changes nothing.

const META = Symbol.for('plugin-meta')

interface Meta { name?: string, dependencies?: string[] }

/** a plugin's name and dependencies, as fastify-plugin stored them */
export function pluginMeta (plugin: unknown): { name: string, dependencies: string[] } {
  const meta = (plugin as { [META]?: Meta } | null)?.[META]
  if (meta?.name === undefined) throw new Error('a plugin without a name: wrap it in fastify-plugin with { name, dependencies }')
  return { name: meta.name, dependencies: meta.dependencies ?? [] }
}

/**
 * `plugins` in an order each one's dependencies come before it. `registered` names the plugins already
 * registered before these (their dependencies need no place here). Throws on two plugins of one name, a
 * dependency nobody provides and a cycle, naming them.
 */
export function inDependencyOrder<P> (plugins: Iterable<P>, registered: Iterable<string> = []): P[] {
  const byName = new Map<string, { plugin: P, dependencies: string[] }>()
  for (const plugin of plugins) {
    const { name, dependencies } = pluginMeta(plugin)
    if (byName.has(name)) throw new Error(`two plugins are named '${name}'`)
    byName.set(name, { plugin, dependencies })
  }
  const before = new Set(registered)
  for (const [name, { dependencies }] of byName) {
    const unknown = dependencies.filter((d) => !byName.has(d) && !before.has(d))
    if (unknown.length > 0) throw new Error(`plugin '${name}' depends on ${unknown.map((d) => `'${d}'`).join(', ')}, which no plugin provides`)
  }
  const order: P[] = []
  const placed = new Set<string>()
  const waiting = [...byName.keys()].sort()
  while (waiting.length > 0) {
    const next = waiting.findIndex((name) => (byName.get(name)?.dependencies ?? []).every((d) => placed.has(d) || before.has(d)))
    if (next === -1) throw new Error(`the plugins' dependencies form a cycle: ${cycleAmong(waiting, byName).join(' → ')}`)
    const [name] = waiting.splice(next, 1)
    placed.add(name)
    order.push((byName.get(name) as { plugin: P }).plugin)
  }
  return order
}

/** one cycle among plugins none of which can be placed (each waits on another of them) */
function cycleAmong (waiting: string[], byName: Map<string, { dependencies: string[] }>): string[] {
  const left = new Set(waiting)
  const path: string[] = []
  let at = waiting[0]
  while (!path.includes(at)) {
    path.push(at)
    at = (byName.get(at)?.dependencies ?? []).find((d) => left.has(d)) ?? at
  }
  return [...path.slice(path.indexOf(at)), at]
}
