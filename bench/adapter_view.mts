/**
 * What the broker's view costs an adapter beside the TypeScript cap it replaced, in
 * one run: bench/adapter_view.py starts this (see there) with the old cap module
 * extracted from git (`OLD_CAP`, the last revision that had src/yarp/hooks/ts/cap.ts,
 * with the salience data it read beside it).
 *
 * Per text (`seq 1 100000`, 588,895 bytes; a 1 MiB build log with a failure every
 * 1,000 lines) and per round, against the real `yarp archive ingest`, a warm broker and
 * a private archive, each call begun and its raw result recorded untimed, then timed:
 *
 * - `new`: `result_text` with `capBytes`, its acknowledgement carrying the broker's view,
 *   placed among the blocks (what src/yarp/agents/ts/lifecycle.ts does now);
 * - `old`: `result_text` without it, then the old local cap (what it did before), also
 *   split into its round trip (`old_rtt`) and its cap (`old_cap`).
 *
 * `new` and `old` alternate which goes first each round. Prints one JSON object:
 * per text, the medians and p90s in milliseconds, the view sizes, `added_p50_ms`
 * (new − old: what an adapter now waits longer) and `view_in_round_trip_p50_ms`
 * (new − old_rtt: what making and sending the view adds to the round trip).
 */

import { Buffer } from "node:buffer"
import { withView, type ContentBlock } from "../src/yarp/agents/ts/content.ts"
import { IngestClient, OTHER_TIMEOUT_MS } from "../src/yarp/agents/ts/ingest.ts"
import { findRealYarp, realWorld } from "../hooks/pi/test/real-yarp.ts"

type OldCap = {
  capContent: (content: ContentBlock[], cap: number, ref: string, source: string, completeness: string) => { content: ContentBlock[] } | null
}

const rounds = Number(process.env["ROUNDS"] ?? "15")
const CAP = Number(process.env["CAP"] ?? "5120")
const oldPath = process.env["OLD_CAP"]
if (oldPath === undefined) throw new Error("OLD_CAP names the old cap.ts (bench/adapter_view.py extracts it)")
const old = (await import(oldPath)) as OldCap
const yarp = findRealYarp()
if (yarp === null) throw new Error("no real yarp on YARP_REAL_BIN, YARP_BIN or PATH")

const seq = Array.from({ length: 100_000 }, (_, i) => `${i + 1}\n`).join("")
const log = (() => {
  const lines: string[] = []
  let size = 0
  for (let i = 0; size < 1 << 20; i += 1) {
    const line = i % 1000 === 999 ? `error: step ${i} failed: expected 3, got 4\n` : `[${i}] compiling module_${i % 97}.c -O2 -Wall -o build/module_${i % 97}.o\n`
    lines.push(line)
    size += line.length
  }
  return lines.join("").slice(0, 1 << 20)
})()
const TEXTS: Record<string, string> = { "seq 1 100000": seq, "1 MiB build log": log }

const world = realWorld(yarp)
const client = new IngestClient({ bin: world.bin, env: world.env })
const session = { agent: "bench", account: "bench", sourceSessionId: `adapter-view-${process.pid}`, startedAtMs: Date.now() }
let counter = 0

async function begun(text: string): Promise<{ id: string; ref: string }> {
  counter += 1
  const id = `c${counter}`
  const now = Date.now()
  const ack = await client.request({
    operation: "begin_call", session, capturedAtMs: now, inputBefore: { command: "x" }, inputAfter: { command: "x" },
    call: { sourceCallId: id, toolName: "bash", startedAtMs: now, requiresStreams: false },
  }, OTHER_TIMEOUT_MS)
  await client.request({ operation: "result_before", session, sourceCallId: id, result: { content: [{ type: "text", text }] }, capturedAtMs: now }, OTHER_TIMEOUT_MS)
  return { id, ref: ack.archiveRef! }
}

const resultText = (id: string, text: string, capBytes?: number) => ({
  operation: "result_text", session, sourceCallId: id, text, sourceCompleteness: "complete", capturedAtMs: Date.now(),
  ...(capBytes === undefined ? {} : { capBytes }),
})

async function viaBroker(text: string): Promise<{ ms: number; bytes: number }> {
  const { id } = await begun(text)
  const content: ContentBlock[] = [{ type: "text", text }]
  const start = performance.now()
  const ack = await client.request(resultText(id, text, CAP), OTHER_TIMEOUT_MS)
  const shown = withView(content, ack.view!)
  const ms = performance.now() - start
  return { ms, bytes: Buffer.byteLength((shown[0] as { text: string }).text) }
}

async function local(text: string): Promise<{ ms: number; rtt: number; cap: number; bytes: number }> {
  const { id, ref } = await begun(text)
  const content: ContentBlock[] = [{ type: "text", text }]
  const start = performance.now()
  await client.request(resultText(id, text), OTHER_TIMEOUT_MS)
  const acked = performance.now()
  const capped = old.capContent(content, CAP, ref, "result_text", "complete")
  const end = performance.now()
  return { ms: end - start, rtt: acked - start, cap: end - acked, bytes: Buffer.byteLength((capped!.content[0] as { text: string }).text) }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2))
}

const report: Record<string, unknown> = { rounds, cap: CAP }
try {
  for (const [name, text] of Object.entries(TEXTS)) {
    const times = { new: [] as number[], old: [] as number[], old_rtt: [] as number[], old_cap: [] as number[] }
    let sizes = { new: 0, old: 0 }
    for (let round = -2; round < rounds; round += 1) {
      const first = round % 2 === 0
      const a = first ? await viaBroker(text) : null
      const b = await local(text)
      const c = first ? a! : await viaBroker(text)
      if (round < 0) continue // warm-up: the broker's pool, the classifiers, the JIT
      times.new.push(c.ms)
      times.old.push(b.ms)
      times.old_rtt.push(b.rtt)
      times.old_cap.push(b.cap)
      sizes = { new: c.bytes, old: b.bytes }
    }
    const summary: Record<string, unknown> = { bytes: Buffer.byteLength(text), view_bytes: sizes }
    for (const [key, values] of Object.entries(times)) summary[key] = { p50_ms: quantile(values, 0.5), p90_ms: quantile(values, 0.9) }
    // What the adapters wait longer than before (negative: shorter), and what the view adds to the round trip.
    summary["added_p50_ms"] = Number((quantile(times.new, 0.5) - quantile(times.old, 0.5)).toFixed(2))
    summary["view_in_round_trip_p50_ms"] = Number((quantile(times.new, 0.5) - quantile(times.old_rtt, 0.5)).toFixed(2))
    report[name] = summary
  }
} finally {
  await client.close()
  await world.close()
}
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
