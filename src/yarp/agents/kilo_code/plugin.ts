/**
 * Kilo Code plugin: opencode's plugin under this agent's name.
 *
 * Kilo Code's CLI is a fork of opencode with its plugin API unchanged (the
 * same `tool.execute.before`, `tool.execute.after`, `event` and `chat.params`
 * hooks, the same tool parts and names), so every rule of ../opencode/plugin.ts
 * holds as written; only the agent the archive records differs. Kilo loads it
 * through one entry file, `<config>/plugin/yarp.ts`, which re-exports
 * `YarpPlugin` from here.
 */

import { createYarpPlugin } from "../opencode/plugin.ts"

export const AGENT = "kilo-code"

export const YarpPlugin = createYarpPlugin({ agent: AGENT })
