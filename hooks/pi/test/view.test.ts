/**
 * The view of a large result, for real: the extension and the plugin against the
 * real `yarp archive ingest`, its real broker and a real archive. The text over the
 * cap goes out in `result_text` with `capBytes`; the view the acknowledgement
 * carries, made by the broker once the text is committed, is exactly the Python
 * view the Claude Code hooks show (`yarp.view.host.text_view`); the exact text is in
 * the archive; images keep their place. Needs the real yarp (`make test-pi` puts it
 * on PATH).
 */

import assert from "node:assert/strict"
import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import test from "node:test"
import { createYarpPlugin } from "../../../src/yarp/agents/opencode/plugin.ts"
import { createYarpExtension } from "../../../src/yarp/agents/pi/extension.ts"
import { joinedText } from "../../../src/yarp/agents/ts/content.ts"
import { FakePi, runCall } from "./harness.ts"
import { runTool, type Hooks } from "./opencode-harness.ts"
import { findRealYarp, pythonView, realWorld } from "./real-yarp.ts"

const yarp = findRealYarp()
const CAP = 5120
const SEQ = Array.from({ length: 100_000 }, (_, i) => `${i + 1}\n`).join("") // `seq 1 100000`
const LOG = Array.from({ length: 3000 }, (_, i) => (i === 1500 ? "error: the step failed\n" : `row ${i} lorem ipsum dolor sit amet\n`)).join("")

function refOf(view: string): string {
  const ref = /ref=(yr_[0-9a-f]{32})/u.exec(view)?.[1]
  assert.ok(ref !== undefined, "the view names no archive reference")
  return ref
}

/** The archived exact text's first and last bytes, read back as `yarp read` reads them. */
function assertArchived(bin: string, env: NodeJS.ProcessEnv, ref: string, text: string): void {
  const size = Buffer.byteLength(text, "utf8")
  const read = (range: string) => execFileSync(bin, ["read", ref, "result_text", "--bytes", range], { env, encoding: "utf8" })
  assert.equal(read(`0:200`), Buffer.from(text).subarray(0, 200).toString())
  assert.equal(read(`${size - 200}:${size}`), Buffer.from(text).subarray(size - 200).toString())
}

test("Pi: the view of a large result is the broker's, made by the Python view from the committed text", { skip: yarp === null ? "no real yarp" : false, timeout: 120_000 }, async () => {
  const world = realWorld(yarp!)
  try {
    const warnings: string[] = []
    const pi = new FakePi()
    await createYarpExtension({ env: world.env, warn: (text) => warnings.push(text), account: "tester" })(pi)
    const ctx = { hasUI: false, cwd: world.root, model: { provider: "p", id: "m" }, sessionManager: { getSessionId: () => "view-session" } }
    const emit = pi.emit.bind(pi)
    pi.emit = (event: string, payload: any) => emit(event, payload, ctx)
    await pi.emit("session_start", {})
    // Pi's bash keeps a tail and names the complete output file: the text is complete.
    const full = join(world.root, "pi-bash-0011223344556677.log")
    writeFileSync(full, SEQ)
    const bash = await runCall(pi, "b1", "bash", { command: "seq 1 100000" }, () => ({
      content: [{ type: "text", text: SEQ }], details: { fullOutputPath: full, truncation: { truncated: true } },
    }))
    // Two text blocks around an image: one view in the first one's place, the image after it.
    const image = { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }
    const [head, tail] = [LOG.slice(0, 40_000), LOG.slice(40_000)]
    const mixed = await runCall(pi, "m1", "read", { path: "log.txt" }, () => ({
      content: [{ type: "text", text: head }, image, { type: "text", text: tail }], details: {},
    }))
    const fits = await runCall(pi, "f1", "read", { path: "small.txt" }, () => ({ content: [{ type: "text", text: "x".repeat(CAP) }] }))
    await pi.emit("session_shutdown", {})
    assert.deepEqual(warnings, [])

    const shown = joinedText(bash.patch.content)
    const ref = refOf(shown)
    assert.equal(shown, pythonView(yarp!, SEQ, CAP, ref, "complete"))
    assert.ok(Buffer.byteLength(shown) <= CAP)
    assertArchived(world.bin, world.env, ref, SEQ)

    assert.deepEqual(mixed.patch.content.map((block: any) => block.type), ["text", "image"])
    assert.deepEqual(mixed.patch.content[1], image)
    const mixedRef = refOf(mixed.patch.content[0].text)
    assert.notEqual(mixedRef, ref)
    assert.equal(mixed.patch.content[0].text, pythonView(yarp!, LOG, CAP, mixedRef, "unknown"))
    assert.ok(mixed.patch.content[0].text.includes("error: the step failed\n"))
    assertArchived(world.bin, world.env, mixedRef, LOG)

    assert.equal(fits.patch, undefined, "a result at the cap is left as it is")
    const verify = execFileSync(world.bin, ["archive", "verify"], { env: world.env, encoding: "utf8" })
    assert.match(verify, /incomplete_calls: 0\narchive: ok/u)
  } finally {
    await world.close()
  }
})

test("opencode: the output over the cap becomes the broker's view, the MCP blocks too", { skip: yarp === null ? "no real yarp" : false, timeout: 120_000 }, async () => {
  const world = realWorld(yarp!)
  try {
    const warnings: string[] = []
    const plugin = createYarpPlugin({ env: world.env, warn: (text) => warnings.push(text), account: "tester" })
    const hooks = (await plugin({ directory: world.root })) as unknown as Hooks
    // opencode keeps the tail of a long bash output and spills the whole of it; its own flag says "truncated".
    const spill = join(world.root, "tool_1")
    writeFileSync(spill, SEQ)
    const shownText = `...output truncated...\n\nFull output saved to: ${spill}\n\n${SEQ.slice(-51_200)}`
    const bash = await runTool(hooks, "ses_view", "call_seq", "bash", { command: "seq 1 100000", description: "count" }, () => ({
      title: "seq", output: shownText, metadata: { output: "…", exit: 0, truncated: true, outputPath: spill },
    }))
    const image = { type: "image", data: "AAAA", mimeType: "image/png" }
    const content = [{ type: "text", text: LOG }, image]
    const mcp = await runTool(hooks, "ses_view", "call_mcp", "srv_logs", { q: 1 }, () => ({ content, isError: false }))
    await hooks["dispose"]!()
    assert.deepEqual(warnings, [])

    const ref = refOf(bash.output.output)
    assert.equal(bash.output.output, pythonView(yarp!, shownText, CAP, ref, "incomplete"))
    assert.deepEqual(bash.output.metadata, { output: "…", exit: 0, truncated: true, outputPath: spill })
    assertArchived(world.bin, world.env, ref, shownText)

    assert.equal(mcp.output.content, content, "the same array, changed in place")
    const mcpRef = refOf(mcp.output.content[0].text)
    assert.deepEqual(mcp.output.content, [{ type: "text", text: pythonView(yarp!, LOG, CAP, mcpRef, "unknown") }, image])
  } finally {
    await world.close()
  }
})
