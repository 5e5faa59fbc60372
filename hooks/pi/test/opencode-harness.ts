/**
 * Test harness for the opencode plugin: the plugin's hooks created against the fake
 * yarp peer, and helpers that fire them in opencode's order with the objects
 * opencode 1.18.33 passes (tool.execute.before's `{args}`, tool.execute.after's
 * `{title, output, metadata}`, the `event` hook's tool part updates).
 */

import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createYarpPlugin } from "../../../src/yarp/agents/opencode/plugin.ts"
import { FAKE_YARP } from "./harness.ts"

export type Hooks = Record<string, (...args: any[]) => Promise<void>>
export type OpencodeSetup = { hooks: Hooks; warnings: string[]; log: string }

export const DIRECTORY = "/work/project"

export async function opencode(vars: Record<string, string> = {}, bin = FAKE_YARP): Promise<OpencodeSetup> {
  const dir = mkdtempSync(join(tmpdir(), "yarp-opencode-test-"))
  const log = join(dir, "log.jsonl")
  const env: NodeJS.ProcessEnv = { ...process.env, YARP_BIN: bin, FAKE_YARP_LOG: log, ...vars }
  const warnings: string[] = []
  const plugin = createYarpPlugin({ env, warn: (text) => warnings.push(text), account: "tester" })
  const hooks = (await plugin({ directory: DIRECTORY })) as unknown as Hooks
  return { hooks, warnings, log }
}

/** A model request of the session's build agent (opencode's `chat.params`). */
export async function turn(hooks: Hooks, sessionID: string, agent = "build"): Promise<void> {
  await hooks["chat.params"]!(
    { sessionID, agent, model: { id: "scripted-model", providerID: "scripted" }, provider: {}, message: {} },
    { temperature: 0, topP: 1, topK: 0, maxOutputTokens: undefined, options: {} },
  )
}

/** bash's after-hook output for `text` and an exit status. */
export function bashOutput(text: string, exit: number | null, extra: Record<string, unknown> = {}) {
  return { title: "command", output: text, metadata: { output: text, exit, truncated: false, ...extra } }
}

/**
 * One executed call: the before hook (whose args `execute` then sees, as opencode
 * runs the tool with them), then the after hook with the tool's output object.
 */
export async function runTool(
  hooks: Hooks,
  sessionID: string,
  callID: string,
  tool: string,
  args: Record<string, unknown>,
  execute: (args: Record<string, unknown>) => Record<string, unknown>,
): Promise<{ args: Record<string, unknown>; output: Record<string, any> }> {
  const live = { args: structuredClone(args) }
  await hooks["tool.execute.before"]!({ tool, sessionID, callID }, live)
  const output = execute(live.args)
  await hooks["tool.execute.after"]!({ tool, sessionID, callID, args: live.args }, output)
  return { args: live.args, output }
}

/** The `event` hook's update of a tool part that ended in an error instead of a result. */
export function erroredPart(sessionID: string, callID: string, tool: string, error: string) {
  return {
    event: {
      type: "message.part.updated",
      properties: {
        part: {
          id: "prt_1", messageID: "msg_1", sessionID, type: "tool", callID, tool,
          state: { status: "error", input: {}, error, time: { start: 1, end: 2 } },
        },
      },
    },
  }
}
