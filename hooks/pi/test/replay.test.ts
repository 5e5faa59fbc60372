/**
 * Second workload: the recorded real Pi sessions in ../shared/data/pi-sessions,
 * replayed through the extension's handlers into the real `yarp archive ingest`.
 *
 * Every recorded call is driven in Pi's event order with its recorded input and
 * result; calls whose result was never recorded are replayed as calls that never
 * reached their tool. Recorded commands are never executed, so every shell call is
 * planned as `original` (a two-line wrapper answers `yarp plan`; everything else
 * goes to the real binary). Skips cleanly when the data or a real yarp is absent.
 */

import assert from "node:assert/strict"
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import test from "node:test"
import { joinedText } from "../../../src/yarp/agents/ts/content.ts"
import { FakePi } from "./harness.ts"
import { findRealYarp, realWorld } from "./real-yarp.ts"
import { createYarpExtension } from "../../../src/yarp/agents/pi/extension.ts"

const REPO = resolve(fileURLToPath(new URL("../../..", import.meta.url)))
const SESSIONS = resolve(REPO, "..", "shared", "data", "pi-sessions")
const FILES = ["before-compaction.jsonl", "large-session.jsonl"]

type Recorded = {
  sessionId: string
  model: { provider: string; id: string }
  steps: Array<{ assistant: any; calls: Array<{ id: string; name: string; arguments: any; result?: any }> }>
}

function load(file: string): Recorded {
  const lines = readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line))
  const header = lines.find((entry) => entry.type === "session")
  const results = new Map<string, any>()
  for (const entry of lines) {
    if (entry.type === "message" && entry.message?.role === "toolResult") results.set(entry.message.toolCallId, entry.message)
  }
  const steps: Recorded["steps"] = []
  for (const entry of lines) {
    const message = entry.message
    if (entry.type !== "message" || message?.role !== "assistant" || !Array.isArray(message.content)) continue
    const calls = message.content
      .filter((item: any) => item.type === "toolCall")
      .map((item: any) => ({ id: item.id, name: item.name, arguments: item.arguments, result: results.get(item.id) }))
    if (calls.length > 0) steps.push({ assistant: message, calls })
  }
  return { sessionId: header.id, model: { provider: header.provider, id: header.modelId }, steps }
}

const realYarp = findRealYarp()
const present = FILES.every((name) => existsSync(join(SESSIONS, name)))
const skip = !present ? `recorded Pi sessions not found under ${SESSIONS}` : realYarp === null ? "no real yarp with `archive ingest` on YARP_REAL_BIN, YARP_BIN or PATH" : false

test("recorded real Pi sessions replay into the archive: every call archived, verify passes", { skip, timeout: 300_000 }, async () => {
  const world = realWorld(realYarp!)
  try {
    const { env, bin: wrapper } = world
    const warnings: string[] = []
    let total = 0
    let capped: { ref: string; omitted: string } | null = null
    // Each recorded session is its own Pi process with its own bridge; they run at once.
    const replay = async (name: string) => {
      const pi = new FakePi()
      await createYarpExtension({ env, warn: (text) => warnings.push(text), account: "replay" })(pi)
      const recorded = load(join(SESSIONS, name))
      const ctx = { hasUI: false, cwd: "/replay", model: recorded.model, sessionManager: { getSessionId: () => recorded.sessionId } }
      await pi.emit("session_start", { reason: "startup" }, ctx)
      for (const step of recorded.steps) {
        await pi.emit("message_end", { message: step.assistant }, ctx)
        for (const call of step.calls) {
          total += 1
          await pi.emit("tool_execution_start", { toolCallId: call.id, toolName: call.name, args: call.arguments }, ctx)
          if (call.result === undefined) {
            const result = { content: [{ type: "text", text: "no result was recorded" }], details: {} }
            await pi.emit("tool_execution_end", { toolCallId: call.id, toolName: call.name, result, isError: true }, ctx)
            continue
          }
          const input = structuredClone(call.arguments ?? {})
          await pi.emit("tool_call", { toolCallId: call.id, toolName: call.name, input }, ctx)
          const raw = call.result
          const patch: any = await pi.emit(
            "tool_result",
            { toolCallId: call.id, toolName: call.name, input, content: raw.content, details: raw.details, isError: raw.isError === true },
            ctx,
          )
          if (patch?.content !== undefined && capped === null) {
            const shown = joinedText(patch.content)
            const ref = /ref=(yr_[0-9a-f]{32})/u.exec(shown)?.[1]
            const omitted = joinedText(raw.content).split("\n").find((line) => line.length > 12 && !shown.includes(line) && /^[\x20-\x7e]+$/u.test(line))
            if (ref !== undefined && omitted !== undefined) capped = { ref, omitted }
          }
          const final = { content: patch?.content ?? raw.content, details: raw.details }
          await pi.emit("tool_execution_end", { toolCallId: call.id, toolName: call.name, result: final, isError: raw.isError === true }, ctx)
        }
      }
      await pi.emit("session_shutdown", { reason: "quit" }, ctx)
    }
    await Promise.all(FILES.map(replay))
    assert.deepEqual(warnings, [])
    assert.ok(total >= 800, `replayed ${total} calls`)

    const stats = execFileSync(wrapper, ["archive", "stats"], { env, encoding: "utf8" })
    const value = (key: string) => Number(new RegExp(`^${key}: (\\d+)$`, "mu").exec(stats)?.[1])
    assert.equal(value("sessions"), FILES.length)
    assert.equal(value("calls"), total)
    assert.equal(value("incomplete_calls"), 0)
    const verify = execFileSync(wrapper, ["archive", "verify"], { env, encoding: "utf8" })
    assert.match(verify, /archive: ok/u)

    assert.ok(capped !== null, "no replayed result was capped")
    const found = execFileSync(wrapper, ["search", "-F", capped.ref, capped.omitted], { env, encoding: "utf8" })
    assert.ok(found.includes(capped.omitted))
  } finally {
    await world.close()
  }
})
