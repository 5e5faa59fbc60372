import assert from "node:assert/strict"
import { Buffer } from "node:buffer"
import test from "node:test"
import { entries, frames, rewritePlan } from "./harness.ts"
import { bashOutput, DIRECTORY, erroredPart, opencode, runTool, turn } from "./opencode-harness.ts"

const REWRITE = (command: string, id: string) => rewritePlan(command, id, "opencode", "ses_1")
const big = (n: number) => Array.from({ length: n }, (_, i) => `output line ${i}`).join("\n")
const readOutput = (text: string) => ({ title: "a.txt", output: text, metadata: { preview: text.slice(0, 20), truncated: false } })

test("loading the plugin starts nothing: the first model request does", async () => {
  const { hooks, log } = await opencode()
  assert.deepEqual(entries(log), [])
  await turn(hooks, "ses_1")
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.deepEqual(entries(log).map((e) => e.kind), ["version"])
  await hooks["dispose"]!()
})

test("a read is begun, its raw output recorded, staged and finished under the session's model", async () => {
  const { hooks, log, warnings } = await opencode()
  await turn(hooks, "ses_1", "title") // opencode's title request names no tool-calling agent
  await turn(hooks, "ses_1")
  const { output } = await runTool(hooks, "ses_1", "call_1", "read", { filePath: "a.txt" }, () => readOutput("hello"))
  await hooks["dispose"]!()
  assert.deepEqual(warnings, [])
  assert.equal(output.output, "hello")
  const sent = frames(log)
  assert.deepEqual(sent.map((f) => f.operation), ["begin_call", "result_before", "stage_result", "finish_call"])
  const [begin, before, stage, finish] = sent
  assert.deepEqual(begin.session, { agent: "opencode", account: "tester", sourceSessionId: "ses_1", startedAtMs: begin.session.startedAtMs })
  assert.deepEqual(begin.call, {
    sourceCallId: "call_1", toolName: "read", startedAtMs: begin.call.startedAtMs, requiresStreams: false,
    provider: "scripted", model: "scripted-model", workingDirectory: DIRECTORY,
  })
  assert.deepEqual(begin.inputBefore, { filePath: "a.txt" })
  assert.deepEqual(before.result, readOutput("hello"))
  assert.equal(before.fullOutputPath, undefined)
  assert.deepEqual(stage.result, before.result)
  assert.deepEqual(finish.result, before.result)
  assert.equal(finish.isError, false)
  assert.equal(finish.requirePreResult, true)
  assert.equal(entries(log).find((e) => e.kind === "eof")?.atBoundary, true)
})

test("bash is rewritten in the args object opencode keeps, only after begin_call committed", async () => {
  const { hooks, log } = await opencode({ FAKE_YARP_PLAN: REWRITE("git log", "call_1") })
  let ran = ""
  const { args } = await runTool(hooks, "ses_1", "call_1", "bash", { command: "git log", description: "log" }, (live) => {
    ran = live["command"] as string
    return bashOutput("[yarp summary: log]\n", 0)
  })
  await hooks["dispose"]!()
  // The plan's `yarp` is the binary the adapter runs: the agent's PATH may not have it.
  assert.match(ran, /^'[^']*fake-yarp\.mjs' run --archive-agent 'opencode' .* --archive-call 'call_1' -- git log$/u)
  assert.equal(args["description"], "log")
  const [begin] = frames(log)
  assert.deepEqual(begin.inputBefore, { command: "git log", description: "log" })
  assert.deepEqual(begin.inputAfter, { command: ran, description: "log" })
  assert.equal(begin.call.requiresStreams, true)
  const plan = entries(log).find((e) => e.kind === "plan")
  assert.deepEqual(plan?.args.slice(2, 4), ["--compound", "--launcher"])
  assert.deepEqual(plan?.args.slice(5, 13), [
    "--archive-agent", "opencode", "--archive-account", "tester", "--archive-session", "ses_1", "--archive-call", "call_1",
  ])
})

test("a large bash output: the spill file and exact text are archived, the model gets the view", async () => {
  const { hooks, log } = await opencode()
  const text = `...output truncated...\n\nFull output saved to: /data/tool_1\n\n${big(3000)}\n`
  const metadata = { output: "...", exit: 0, truncated: true, outputPath: "/data/tool_1" }
  const { output } = await runTool(hooks, "ses_1", "call_1", "bash", { command: "seq 1 30000" }, () => ({ title: "seq", output: text, metadata }))
  await hooks["dispose"]!()
  const sent = frames(log)
  assert.deepEqual(sent.map((f) => f.operation), ["begin_call", "result_before", "result_text", "stage_result", "finish_call"])
  const [, before, resultText, stage, finish] = sent
  assert.equal(before.fullOutputPath, "/data/tool_1")
  assert.deepEqual(before.result, { title: "seq", output: text, metadata })
  assert.equal(resultText.text, text)
  // opencode can write its spill file short (1.18.33): only its own flag says what the text is.
  assert.equal(resultText.sourceCompleteness, "incomplete")
  assert.equal(resultText.capBytes, 5120)
  // The view the acknowledgement carries (the fake's stand-in; view.test.ts has the broker's) is the output.
  assert.match(output.output, new RegExp(`^\\[fake view: ${Buffer.byteLength(text)} byte\\(s\\) under 5120; ref=yr_[0-9a-f]{32}\\]\n$`, "u"))
  assert.deepEqual(output.metadata, metadata, "opencode's metadata is left as it was")
  assert.deepEqual(stage.result, { title: "seq", output: output.output, metadata })
  assert.deepEqual(finish.result, stage.result)
})

test("recovery commands and results at the cap are never capped", async () => {
  const plan = JSON.stringify({ "yarp search yr_x foo": { version: 1, execution: { kind: "original" }, result: { kind: "recovery" } } })
  const { hooks, log } = await opencode({ FAKE_YARP_PLAN: plan })
  const recovered = big(2000)
  const first = await runTool(hooks, "ses_1", "r1", "bash", { command: "yarp search yr_x foo" }, () => bashOutput(recovered, 0))
  const atCap = "y".repeat(5120)
  const second = await runTool(hooks, "ses_1", "r2", "read", { filePath: "x" }, () => readOutput(atCap))
  await hooks["dispose"]!()
  assert.equal(first.output.output, recovered)
  assert.equal(second.output.output, atCap)
  assert.ok(!frames(log).some((f) => f.operation === "result_text"))
  assert.deepEqual(frames(log).filter((f) => f.operation === "finish_call").map((f) => f.sourceCallId), ["r1", "r2"])
})

test("bash's exit status decides the error: non-zero and a timeout's null are errors", async () => {
  const { hooks, log } = await opencode()
  await runTool(hooks, "ses_1", "c0", "bash", { command: "true" }, () => bashOutput("(no output)", 0))
  await runTool(hooks, "ses_1", "c3", "bash", { command: "exit 3" }, () => bashOutput("oops\n", 3))
  await runTool(hooks, "ses_1", "ct", "bash", { command: "sleep 9", timeout: 10 }, () => bashOutput("<shell_metadata>\nterminated\n</shell_metadata>", null))
  await runTool(hooks, "ses_1", "ci", "invalid", { tool: "nosuch", error: "unavailable" }, () => ({ title: "Invalid Tool", output: "The arguments provided to the tool are invalid", metadata: {} }))
  await hooks["dispose"]!()
  const finishes = frames(log).filter((f) => f.operation === "finish_call")
  assert.deepEqual(finishes.map((f) => [f.sourceCallId, f.isError]), [["c0", false], ["c3", true], ["ct", true], ["ci", true]])
})

test("a call that ends in an error instead of a result is finished as not executed", async () => {
  const { hooks, log } = await opencode()
  await hooks["tool.execute.before"]!({ tool: "read", sessionID: "ses_1", callID: "call_1" }, { args: { filePath: "missing" } })
  await hooks["event"]!(erroredPart("ses_1", "call_1", "read", "File not found: missing"))
  // A later update of the same part, or one for a call never begun, changes nothing.
  await hooks["event"]!(erroredPart("ses_1", "call_1", "read", "File not found: missing"))
  await hooks["event"]!(erroredPart("ses_1", "other", "read", "x"))
  await hooks["dispose"]!()
  const sent = frames(log)
  assert.deepEqual(sent.map((f) => f.operation), ["begin_call", "finish_call"])
  assert.deepEqual(sent[1].result, { error: "File not found: missing" })
  assert.equal(sent[1].isError, true)
  assert.equal(sent[1].requirePreResult, false)
})

test("an MCP tool's result is its content blocks: capped in place, error from isError", async () => {
  const { hooks, log } = await opencode()
  const content = [{ type: "text", text: big(2000) }, { type: "image", data: "AAAA", mimeType: "image/png" }]
  const { output } = await runTool(hooks, "ses_1", "m1", "srv_echo", { q: 1 }, () => ({ content, isError: true }))
  await hooks["dispose"]!()
  const [, before, , , finish] = frames(log)
  assert.deepEqual(before.result, { content: [{ type: "text", text: big(2000) }, content[1]], isError: true })
  assert.equal(output.content, content, "the same array, changed in place")
  assert.equal(output.content.length, 2)
  assert.ok(Buffer.byteLength(output.content[0].text, "utf8") <= 5120)
  assert.deepEqual(output.content[1], { type: "image", data: "AAAA", mimeType: "image/png" })
  assert.equal(finish.isError, true)
  assert.deepEqual(finish.result.content, output.content)
})

test("parallel calls of two sessions share one bridge, one request at a time, in order per call", async () => {
  const { hooks, log } = await opencode()
  const calls = [["ses_1", "p1"], ["ses_2", "p2"], ["ses_1", "p3"]]
  const outputs = calls.map(() => readOutput(big(1000)))
  await Promise.all(calls.map(([s, id]) => hooks["tool.execute.before"]!({ tool: "read", sessionID: s, callID: id }, { args: { filePath: id } })))
  await Promise.all(calls.map(([s, id], i) => hooks["tool.execute.after"]!({ tool: "read", sessionID: s, callID: id, args: { filePath: id } }, outputs[i])))
  await hooks["dispose"]!()
  const sent = frames(log)
  assert.equal(sent.length, 3 * 5)
  assert.deepEqual(sent.map((f) => f.requestId), Array.from({ length: sent.length }, (_, i) => i + 1))
  assert.equal(new Set(entries(log).filter((e) => e.kind === "frame").map((e) => e.pid)).size, 1)
  for (const [s, id] of calls) {
    const mine = sent.filter((f) => (f.call?.sourceCallId ?? f.sourceCallId) === id)
    assert.deepEqual(mine.map((f) => f.operation), ["begin_call", "result_before", "result_text", "stage_result", "finish_call"])
    assert.ok(mine.every((f) => f.session.sourceSessionId === s))
  }
  assert.ok(outputs.every((o) => Buffer.byteLength(o.output, "utf8") <= 5120))
})

test("a slow begin_call runs the original command uncaptured and uncapped, with one warning per session", async () => {
  const { hooks, log, warnings } = await opencode({ FAKE_YARP_BEGIN_DELAY_MS: "4000", FAKE_YARP_PLAN: REWRITE("git log", "t1") })
  const first = await runTool(hooks, "ses_1", "t1", "bash", { command: "git log" }, () => bashOutput(big(2000), 0))
  const second = await runTool(hooks, "ses_1", "t2", "read", { filePath: "f" }, () => readOutput(big(2000)))
  await hooks["dispose"]!()
  assert.equal(first.args["command"], "git log")
  assert.equal(first.output.output, big(2000))
  assert.equal(second.output.output, big(2000))
  assert.equal(warnings.length, 1)
  assert.match(warnings[0], /^\[yarp\] archive capture failed; running tool calls without capture, rewriting or caps: .*timed out after 2000 ms/u)
  assert.deepEqual(frames(log).map((f) => f.operation), ["begin_call", "begin_call"])
})

test("a result archive failure gives a wrapped command its raw streams and other tools their own output", async () => {
  const { hooks } = await opencode({
    FAKE_YARP_FAIL_OPS: "finish_call",
    FAKE_YARP_PLAN: REWRITE("pytest -q", "w1"),
    FAKE_YARP_RESTORE_STDOUT: "raw stdout\n",
    FAKE_YARP_RESTORE_STDERR: "raw stderr\n",
  })
  const wrapped = await runTool(hooks, "ses_1", "w1", "bash", { command: "pytest -q" }, () => bashOutput("[yarp summary: test] 1 failed", 1))
  const plain = await runTool(hooks, "ses_1", "r1", "read", { filePath: "f" }, () => readOutput(big(2000)))
  await hooks["dispose"]!()
  assert.equal(wrapped.output.output, "raw stdout\nraw stderr\n")
  assert.equal(wrapped.output.metadata.exit, 1)
  assert.equal(plain.output.output, big(2000))
})

test("no hook throws: a broken output object leaves the call as opencode made it", async () => {
  const { hooks, warnings } = await opencode()
  await hooks["tool.execute.before"]!({ tool: "read", sessionID: "ses_1", callID: "x1" }, { args: { filePath: "f" } })
  const hostile = Object.defineProperty({}, "output", { enumerable: true, get: () => { throw new Error("no access") } })
  await hooks["tool.execute.after"]!({ tool: "read", sessionID: "ses_1", callID: "x1", args: {} }, hostile)
  await hooks["tool.execute.before"]!(undefined, undefined)
  await hooks["tool.execute.after"]!({ tool: "read", sessionID: "ses_1", callID: "never" }, null)
  await hooks["event"]!({})
  await hooks["dispose"]!()
  assert.equal(warnings.length, 1)
  assert.match(warnings[0], /tool\.execute\.after failed; the call runs unchanged: no access/u)
})

test("a missing binary disables the plugin with one warning; its hooks change nothing", async () => {
  const { hooks, warnings } = await opencode({}, "/nonexistent/yarp")
  await turn(hooks, "ses_1")
  const { args, output } = await runTool(hooks, "ses_1", "c1", "bash", { command: "git log" }, () => bashOutput(big(2000), 0))
  await hooks["dispose"]!()
  assert.equal(args["command"], "git log")
  assert.equal(output.output, big(2000))
  assert.equal(warnings.length, 1)
  assert.match(warnings[0], /plugin disabled, tool calls are not archived: yarp binary not found/u)
})
