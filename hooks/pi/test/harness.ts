/**
 * Test harness: a minimal stand-in for Pi's extension host that records handlers
 * and lets a test fire events in Pi's order, plus helpers for the fake yarp peer.
 */

import { mkdtempSync, readFileSync, existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createYarpExtension } from "../../../src/yarp/agents/pi/extension.ts"

export const FAKE_YARP = fileURLToPath(new URL("./fixtures/fake-yarp.mjs", import.meta.url))

/** FAKE_YARP_PLAN for one command the fake `yarp plan` rewrites to `yarp run` for the call `id`. */
export function rewritePlan(command: string, id: string, agent: string, session: string): string {
  const flags = `--archive-agent '${agent}' --archive-account 'tester' --archive-session '${session}' --archive-call '${id}'`
  return JSON.stringify({
    [command]: { version: 1, execution: { kind: "rewrite", command: `yarp run ${flags} -- ${command}` }, result: { kind: "ordinary" } },
  })
}

export class FakePi {
  handlers = new Map<string, Array<(event: any, ctx: any) => unknown>>()

  on(event: string, handler: (event: any, ctx: any) => unknown): void {
    const list = this.handlers.get(event) ?? []
    list.push(handler)
    this.handlers.set(event, list)
  }

  async emit(event: string, payload: any, ctx: any = CTX): Promise<unknown> {
    let last: unknown
    for (const handler of this.handlers.get(event) ?? []) {
      const result = await handler({ type: event, ...payload }, ctx)
      if (result !== undefined) last = result
    }
    return last
  }
}

export const CTX = {
  hasUI: false,
  cwd: "/work/project",
  model: { provider: "scripted", id: "scripted-model" },
  sessionManager: { getSessionId: () => "session-1" },
}

export type Setup = { pi: FakePi; warnings: string[]; log: string; env: NodeJS.ProcessEnv }

export async function setup(vars: Record<string, string> = {}, bin = FAKE_YARP): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), "yarp-pi-test-"))
  const log = join(dir, "log.jsonl")
  const env: NodeJS.ProcessEnv = { ...process.env, YARP_BIN: bin, FAKE_YARP_LOG: log, ...vars }
  const warnings: string[] = []
  const pi = new FakePi()
  await createYarpExtension({ env, warn: (text) => warnings.push(text), account: "tester" })(pi)
  return { pi, warnings, log, env }
}

export type LogEntry = { kind: string; request?: any; args?: string[]; pid?: number; atBoundary?: boolean; receivedAtMs?: number }

export function entries(log: string): LogEntry[] {
  if (!existsSync(log)) return []
  return readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line))
}

export function frames(log: string): any[] {
  return entries(log).filter((entry) => entry.kind === "frame").map((entry) => entry.request)
}

/** Drive one executed tool call through Pi's event order; returns what tool_result returned. */
export async function runCall(
  pi: FakePi,
  id: string,
  toolName: string,
  input: Record<string, unknown>,
  execute: (input: Record<string, unknown>) => { content: any[]; details?: unknown; isError?: boolean },
): Promise<{ input: Record<string, unknown>; patch: any; result: any }> {
  await pi.emit("message_end", {
    message: { role: "assistant", provider: "scripted", model: "scripted-model", content: [{ type: "toolCall", id, name: toolName, arguments: input }] },
  })
  await pi.emit("tool_execution_start", { toolCallId: id, toolName, args: input })
  const live = structuredClone(input)
  await pi.emit("tool_call", { toolCallId: id, toolName, input: live })
  const result = execute(live)
  const isError = result.isError ?? false
  const patch = await pi.emit("tool_result", {
    toolCallId: id, toolName, input: live, content: result.content, details: result.details, isError,
  })
  const final = { content: (patch as any)?.content ?? result.content, details: result.details }
  await pi.emit("tool_execution_end", { toolCallId: id, toolName, result: final, isError: (patch as any)?.isError ?? isError })
  return { input: live, patch, result: final }
}
