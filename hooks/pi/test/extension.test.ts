import assert from "node:assert/strict"
import { Buffer } from "node:buffer"
import test from "node:test"
import { joinedText } from "../../../src/yarp/agents/ts/content.ts"
import { CTX, entries, frames, rewritePlan, runCall, setup } from "./harness.ts"

const REWRITE = (command: string, id: string) => rewritePlan(command, id, "pi", "session-1")
const text = (value: string) => ({ content: [{ type: "text", text: value }] })
const big = (n: number) => Array.from({ length: n }, (_, i) => `output line ${i}`).join("\n")

test("an ordinary call is begun, its raw result recorded, staged and finished, with ids from 1", async () => {
  const { pi, log, warnings } = await setup()
  await pi.emit("session_start", { reason: "startup" })
  const before = Date.now()
  const { patch } = await runCall(pi, "call-1", "read", { path: "a.txt" }, () => text("hello"))
  await pi.emit("session_shutdown", { reason: "quit" })
  assert.equal(patch, undefined)
  assert.deepEqual(warnings, [])
  const sent = frames(log)
  assert.deepEqual(sent.map((f) => f.operation), ["begin_call", "result_before", "stage_result", "finish_call"])
  assert.deepEqual(sent.map((f) => f.requestId), [1, 2, 3, 4])
  assert.ok(sent.every((f) => f.schemaVersion === 1))
  const [begin, resultBefore, stage, finish] = sent
  assert.deepEqual(begin.session, { agent: "pi", account: "tester", sourceSessionId: "session-1", startedAtMs: begin.session.startedAtMs })
  assert.deepEqual(begin.call, {
    sourceCallId: "call-1", toolName: "read", startedAtMs: begin.call.startedAtMs, requiresStreams: false,
    provider: "scripted", model: "scripted-model", workingDirectory: "/work/project",
  })
  assert.deepEqual(begin.inputBefore, { path: "a.txt" })
  assert.deepEqual(begin.inputAfter, { path: "a.txt" })
  assert.ok(begin.deadlineAtMs >= before + 2000 && begin.deadlineAtMs <= Date.now() + 2000)
  assert.deepEqual(resultBefore.result, { content: [{ type: "text", text: "hello" }], details: null, isError: false })
  assert.equal(resultBefore.fullOutputPath, undefined)
  assert.deepEqual(stage.result, resultBefore.result)
  assert.deepEqual(finish.result, resultBefore.result)
  assert.equal(finish.requirePreResult, true)
  const eof = entries(log).find((e) => e.kind === "eof")
  assert.equal(eof?.atBoundary, true)
})

test("a compound rewrite's wrapped commands record their own calls: the call itself requires no streams", async () => {
  const command = "cd sub && git status"
  const rewritten = "cd sub && 'yarp' run --archive-agent 'pi' --archive-account 'tester' --archive-session 'session-1' " +
    "--archive-parent 'call-1' -- git status"
  const plan = { version: 1, execution: { kind: "rewrite", command: rewritten, wrapped: "segments" }, result: { kind: "ordinary" } }
  const { pi, log } = await setup({ FAKE_YARP_PLAN: JSON.stringify({ [command]: plan }) })
  await pi.emit("session_start", { reason: "startup" })
  let ran = ""
  await runCall(pi, "call-1", "bash", { command }, (input) => {
    ran = input["command"] as string
    return text("clean")
  })
  await pi.emit("session_shutdown", {})
  assert.equal(ran, rewritten)
  const [begin] = frames(log).filter((f) => f.operation === "begin_call")
  assert.deepEqual(begin.inputAfter, { command: rewritten })
  assert.equal(begin.call.requiresStreams, false)
  // Finished as an ordinary call: no stream capture is waited for or restored.
  const finish = frames(log).find((f) => f.operation === "finish_call")
  assert.equal(finish.requirePreResult, true)
})

test("bash is rewritten only when the plan says rewrite, after begin_call committed", async () => {
  const { pi, log } = await setup({ FAKE_YARP_PLAN: REWRITE("git status", "call-1") })
  await pi.emit("session_start", { reason: "startup" })
  let ran = ""
  await runCall(pi, "call-1", "bash", { command: "git status", timeout: 5 }, (input) => {
    ran = input["command"] as string
    return text("clean")
  })
  let ranOriginal = ""
  await runCall(pi, "call-2", "bash", { command: "ls | wc -l" }, (input) => {
    ranOriginal = input["command"] as string
    return text("3")
  })
  await pi.emit("session_shutdown", {})
  // The plan's `yarp` is the binary the adapter runs: the agent's PATH may not have it.
  assert.match(ran, /^'[^']*fake-yarp\.mjs' run --archive-agent 'pi' .* --archive-call 'call-1' -- git status$/u)
  assert.equal(ranOriginal, "ls | wc -l")
  const plans = entries(log).filter((e) => e.kind === "plan").map((e) => e.args)
  // Compound planning, with the binary the adapter runs named in every wrapped command.
  assert.deepEqual(plans[0].slice(0, 4), ["plan", "--json", "--compound", "--launcher"])
  assert.match(plans[0][4], /^'[^']*fake-yarp\.mjs'$/u)
  assert.deepEqual(plans[0].slice(5), [
    "--archive-agent", "pi", "--archive-account", "tester",
    "--archive-session", "session-1", "--archive-call", "call-1", "--", "git status",
  ])
  const begins = frames(log).filter((f) => f.operation === "begin_call")
  assert.deepEqual(begins[0].inputBefore, { command: "git status", timeout: 5 })
  assert.deepEqual(begins[0].inputAfter, { command: ran, timeout: 5 })
  assert.equal(begins[0].call.requiresStreams, true)
  assert.deepEqual(begins[1].inputAfter, begins[1].inputBefore)
  assert.equal(begins[1].call.requiresStreams, false)
})

test("a large result: its exact text goes out with the cap, and the view the acknowledgement carries is shown", async () => {
  const { pi, log } = await setup()
  await pi.emit("session_start", {})
  const output = big(3000)
  const details = { truncation: { truncated: true }, fullOutputPath: "/tmp/pi-bash-00112233aabbccdd.log" }
  const { patch } = await runCall(pi, "c1", "bash", { command: "seq 3000 | sed s/^/x/" }, () => ({ ...text(output), details }))
  await pi.emit("session_shutdown", {})
  const sent = frames(log)
  assert.deepEqual(sent.map((f) => f.operation), ["begin_call", "result_before", "result_text", "stage_result", "finish_call"])
  const [begin, before, resultText, stage, finish] = sent
  assert.equal(before.fullOutputPath, details.fullOutputPath)
  assert.equal(before.result.content[0].text, output)
  assert.equal(resultText.text, output)
  assert.equal(resultText.sourceCompleteness, "complete")
  assert.equal(resultText.capBytes, 5120)
  // The view is the broker's (the fake's stand-in here; view.test.ts has the real one), in the text's place.
  assert.equal(patch.content.length, 1)
  assert.match(patch.content[0].text, new RegExp(`^\\[fake view: ${Buffer.byteLength(output)} byte\\(s\\) under 5120; ref=yr_[0-9a-f]{32}\\]\n$`, "u"))
  assert.ok(begin.call.sourceCallId === "c1")
  assert.deepEqual(stage.result.content, patch.content)
  assert.deepEqual(finish.result.content, patch.content)
  assert.deepEqual(stage.result.details, details)
})

test("the configured cap is the one asked for; an acknowledgement without a view leaves the result as it was", async () => {
  const small = await setup({ FAKE_YARP_CAP: "1024" })
  await small.pi.emit("session_start", {})
  const capped = await runCall(small.pi, "k1", "read", { path: "f" }, () => text("z".repeat(1025)))
  const under = await runCall(small.pi, "k2", "read", { path: "f" }, () => text("é".repeat(512)))
  await small.pi.emit("session_shutdown", {})
  assert.match(joinedText(capped.patch.content), /^\[fake view: 1025 byte\(s\) under 1024; /u)
  assert.equal(under.patch, undefined, "1,024 bytes fit a cap of 1,024")
  assert.deepEqual(frames(small.log).filter((f) => f.operation === "result_text").map((f) => [f.sourceCallId, f.capBytes]), [["k1", 1024]])
  const none = await setup({ FAKE_YARP_NO_VIEW: "1" })
  await none.pi.emit("session_start", {})
  const unchanged = await runCall(none.pi, "k3", "read", { path: "f" }, () => text(big(2000)))
  await none.pi.emit("session_shutdown", {})
  assert.equal(unchanged.patch, undefined)
  assert.deepEqual(none.warnings, [])
  assert.deepEqual(frames(none.log).map((f) => f.operation), ["begin_call", "result_before", "result_text", "stage_result", "finish_call"])
  assert.deepEqual(frames(none.log)[3].result.content, [{ type: "text", text: big(2000) }])
})

test("recovery commands and results at the cap are never capped", async () => {
  const plan = JSON.stringify({ "yarp search yr_x foo": { version: 1, execution: { kind: "original" }, result: { kind: "recovery" } } })
  const { pi, log } = await setup({ FAKE_YARP_PLAN: plan })
  await pi.emit("session_start", {})
  const first = await runCall(pi, "r1", "bash", { command: "yarp search yr_x foo" }, () => text(big(2000)))
  const second = await runCall(pi, "r2", "read", { path: "x" }, () => text("y".repeat(5120)))
  await pi.emit("session_shutdown", {})
  assert.equal(first.patch, undefined)
  assert.equal(second.patch, undefined)
  assert.ok(!frames(log).some((f) => f.operation === "result_text"))
})

test("a slow begin_call times out at 2 s: original input runs uncaptured and uncapped, one warning", async () => {
  const { pi, log, warnings } = await setup({ FAKE_YARP_BEGIN_DELAY_MS: "4000", FAKE_YARP_PLAN: REWRITE("git log", "t1") })
  await pi.emit("session_start", {})
  const first = await runCall(pi, "t1", "bash", { command: "git log" }, (input) => text(`${input["command"]}\n${big(2000)}`))
  const second = await runCall(pi, "t2", "read", { path: "f" }, () => text(big(2000)))
  await pi.emit("session_shutdown", {})
  assert.ok(first.input["command"] === "git log")
  assert.equal(first.patch, undefined)
  assert.equal(second.patch, undefined)
  assert.equal(warnings.length, 1)
  assert.match(warnings[0], /archive capture failed; running tool calls without capture, rewriting or caps: .*timed out after 2000 ms/u)
  assert.deepEqual(frames(log).map((f) => f.operation), ["begin_call", "begin_call"])
  // The timed-out bridge was replaced: each begin_call went to a fresh child, numbered from 1.
  const pids = entries(log).filter((e) => e.kind === "frame").map((e) => e.pid)
  assert.notEqual(pids[0], pids[1])
  assert.deepEqual(frames(log).map((f) => f.requestId), [1, 1])
})

test("a rejected begin_call falls back the same way and warns once per session", async () => {
  const { pi, log, warnings } = await setup({ FAKE_YARP_FAIL_OPS: "begin_call", FAKE_YARP_PLAN: REWRITE("git diff", "b1") })
  await pi.emit("session_start", {})
  const first = await runCall(pi, "b1", "bash", { command: "git diff" }, () => text(big(2000)))
  await runCall(pi, "b2", "read", { path: "f" }, () => text("z"))
  assert.equal(first.input["command"], "git diff")
  assert.equal(first.patch, undefined)
  assert.equal(warnings.length, 1)
  assert.match(warnings[0], /simulated rejection of begin_call/u)
  // A new session may warn again.
  await pi.emit("session_start", {}, { ...CTX, sessionManager: { getSessionId: () => "session-2" } })
  await runCall(pi, "b3", "read", { path: "f" }, () => text("z"))
  await pi.emit("session_shutdown", {})
  assert.equal(warnings.length, 2)
  assert.deepEqual(frames(log).map((f) => f.operation), ["begin_call", "begin_call", "begin_call"])
})

test("a result archive failure leaves ordinary tools unchanged and uncapped", async () => {
  const { pi, log, warnings } = await setup({ FAKE_YARP_FAIL_OPS: "stage_result" })
  await pi.emit("session_start", {})
  const { patch } = await runCall(pi, "f1", "read", { path: "big" }, () => text(big(2000)))
  await pi.emit("session_shutdown", {})
  assert.equal(patch, undefined)
  assert.equal(warnings.length, 1)
  assert.match(warnings[0], /result archive failed/u)
  assert.ok(!entries(log).some((e) => e.kind === "restore"))
  assert.ok(!frames(log).some((f) => f.operation === "finish_call"))
})

test("a result archive failure gives wrapped shell calls their committed raw streams", async () => {
  const { pi, log } = await setup({
    FAKE_YARP_FAIL_OPS: "finish_call",
    FAKE_YARP_PLAN: REWRITE("pytest -q", "w1"),
    FAKE_YARP_RESTORE_STDOUT: "raw stdout\n",
    FAKE_YARP_RESTORE_STDERR: "raw stderr\n",
  })
  await pi.emit("session_start", {})
  const { patch } = await runCall(pi, "w1", "bash", { command: "pytest -q" }, () => ({ ...text("[yarp summary: test] 1 failed"), isError: true }))
  await pi.emit("session_shutdown", {})
  assert.deepEqual(patch, { content: [{ type: "text", text: "raw stdout\nraw stderr\n" }], isError: true })
  const restore = entries(log).find((e) => e.kind === "restore")
  assert.deepEqual(restore?.args, [
    "archive", "restore", "--archive-agent", "pi", "--archive-account", "tester",
    "--archive-session", "session-1", "--archive-call", "w1",
  ])
})

test("a bridge that dies mid-call is replaced for the next call", async () => {
  const { pi, log, warnings } = await setup({ FAKE_YARP_EXIT_ON: "result_before" })
  await pi.emit("session_start", {})
  const first = await runCall(pi, "d1", "read", { path: "a" }, () => text(big(2000)))
  assert.equal(first.patch, undefined)
  assert.match(warnings[0], /yarp archive ingest exited \(status 74\): yarp: simulated transport failure/u)
  await pi.emit("session_shutdown", {})
  const seen = entries(log).filter((e) => e.kind === "frame")
  assert.deepEqual(seen.map((e) => [e.request.operation, e.request.requestId]), [["begin_call", 1], ["result_before", 2]])
})

test("a call that never reached the tool is begun and finished as not executed", async () => {
  const { pi, log } = await setup()
  await pi.emit("session_start", {})
  await pi.emit("tool_execution_start", { toolCallId: "n1", toolName: "nosuchtool", args: { x: 1 } })
  const result = { content: [{ type: "text", text: "Tool nosuchtool not found" }], details: {} }
  await pi.emit("tool_execution_end", { toolCallId: "n1", toolName: "nosuchtool", result, isError: true })
  await pi.emit("session_shutdown", {})
  const [begin, finish] = frames(log)
  assert.equal(begin.operation, "begin_call")
  assert.deepEqual(begin.inputBefore, { x: 1 })
  assert.deepEqual(begin.inputAfter, { x: 1 })
  assert.equal(finish.operation, "finish_call")
  assert.equal(finish.requirePreResult, false)
  assert.deepEqual(finish.result, { content: result.content, details: {}, isError: true })
})

test("parallel results are serialised: one request in flight, ids strictly increasing", async () => {
  const { pi, log } = await setup()
  await pi.emit("session_start", {})
  const ids = ["p1", "p2", "p3"]
  for (const id of ids) {
    await pi.emit("tool_execution_start", { toolCallId: id, toolName: "read", args: { path: id } })
    await pi.emit("tool_call", { toolCallId: id, toolName: "read", input: { path: id } })
  }
  await Promise.all(ids.map((id) => pi.emit("tool_result", { toolCallId: id, toolName: "read", input: { path: id }, content: text(big(1000)).content, isError: false })))
  await pi.emit("session_shutdown", {})
  const sent = frames(log)
  assert.equal(sent.length, 3 + 3 * 4)
  assert.deepEqual(sent.map((f) => f.requestId), Array.from({ length: sent.length }, (_, i) => i + 1))
  for (const id of ids) {
    const ops = sent.filter((f) => (f.call?.sourceCallId ?? f.sourceCallId) === id).map((f) => f.operation)
    assert.deepEqual(ops, ["begin_call", "result_before", "result_text", "stage_result", "finish_call"])
  }
})

test("a missing or incompatible binary disables the extension with one clear warning", async () => {
  const missing = await setup({}, "/nonexistent/yarp")
  assert.equal(missing.warnings.length, 1)
  assert.match(missing.warnings[0], /extension disabled.*yarp binary not found/u)
  assert.equal(missing.pi.handlers.size, 0)
  const old = await setup({ FAKE_YARP_VERSION: "yarp 1.2.0" })
  assert.equal(old.warnings.length, 1)
  assert.match(old.warnings[0], /yarp 1\.2\.0 is incompatible/u)
  assert.equal(old.pi.handlers.size, 0)
  const garbled = await setup({ FAKE_YARP_VERSION: "something else" })
  assert.match(garbled.warnings[0], /did not print `yarp X\.Y\.Z`/u)
})

test("pruning disabled: no plan, no rewrite, no cap, still archived", async () => {
  const { pi, log } = await setup({ FAKE_YARP_PRUNING: "0", FAKE_YARP_PLAN: REWRITE("git status", "q1") })
  await pi.emit("session_start", {})
  const { input, patch } = await runCall(pi, "q1", "bash", { command: "git status" }, () => text(big(2000)))
  await pi.emit("session_shutdown", {})
  assert.equal(input["command"], "git status")
  assert.equal(patch, undefined)
  assert.ok(!entries(log).some((e) => e.kind === "plan"))
  assert.deepEqual(frames(log).map((f) => f.operation), ["begin_call", "result_before", "stage_result", "finish_call"])
})

test("the yarp to run: YARP_BIN, else the one the install record names, else yarp on PATH", async () => {
  const { mkdtempSync, writeFileSync } = await import("node:fs")
  const { tmpdir } = await import("node:os")
  const { join } = await import("node:path")
  const { pathToFileURL } = await import("node:url")
  const { binaryPath } = await import("../../../src/yarp/agents/ts/yarp-cli.ts")
  const dir = mkdtempSync(join(tmpdir(), "yarp-record-"))
  const record = pathToFileURL(join(dir, "yarp-install.json"))
  assert.equal(binaryPath({}, record), "yarp", "no record: PATH")
  writeFileSync(record, JSON.stringify({ format: 1, yarpBin: "/opt/venv/bin/yarp" }))
  assert.equal(binaryPath({}, record), "/opt/venv/bin/yarp")
  assert.equal(binaryPath({ YARP_BIN: "/elsewhere/yarp" }, record), "/elsewhere/yarp")
  writeFileSync(record, "{not json")
  assert.equal(binaryPath({}, record), "yarp", "an unreadable record is no record")
})
