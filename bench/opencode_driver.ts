/**
 * Drives the opencode plugin's hooks the way opencode 1.18.33 calls them, in its own
 * runtime (Bun, `BUN_BE_BUN=1 opencode bench/opencode_driver.ts`), against the real
 * `yarp` and a warm broker, and prints each case's hook time per call as JSON.
 *
 * Per round: a read (its before and after hooks), a bash command `yarp plan` leaves
 * as it is, one it wraps (the rewritten `yarp run` runs between the hooks, timed
 * apart, as opencode's own execution), and a read whose output is capped. Inputs:
 * DRIVER_ROUNDS, DRIVER_WORK (the directory the commands run in); YARP_BIN and the
 * archive come from the environment as they would in opencode.
 */

import { execFileSync } from "node:child_process"
import { createYarpPlugin } from "../src/yarp/agents/opencode/plugin.ts"

const rounds = Number(process.env["DRIVER_ROUNDS"] ?? "20")
const work = process.env["DRIVER_WORK"] ?? process.cwd()
const fail = (text: string) => {
  process.stderr.write(`${text}\n`)
  process.exit(3)
}
const plugin = createYarpPlugin({ env: process.env, account: "bench", warn: fail })
const hooks = (await plugin({ directory: work })) as Record<string, (...args: any[]) => Promise<void>>
const session = `ses_bench_${process.pid}`
const times: Record<string, number[]> = { read: [], bashOriginal: [], bashWrapped: [], wrappedRun: [], readCapped: [] }
const big = Array.from({ length: 3000 }, (_, i) => `${i + 1}: row ${i} lorem ipsum dolor sit amet`).join("\n")

async function call(tool: string, id: string, args: Record<string, unknown>, run: (args: Record<string, unknown>) => Record<string, unknown>) {
  const live = { args }
  const started = performance.now()
  await hooks["tool.execute.before"]!({ tool, sessionID: session, callID: id }, live)
  const between = performance.now()
  const output = run(live.args)
  const resumed = performance.now()
  await hooks["tool.execute.after"]!({ tool, sessionID: session, callID: id, args: live.args }, output)
  return { hooks: between - started + (performance.now() - resumed), run: resumed - between, output, ran: live.args }
}

const shell = (args: Record<string, unknown>) => {
  const stdout = execFileSync("bash", ["-c", String(args["command"])], { cwd: work, encoding: "utf8", maxBuffer: 64 << 20 })
  return { title: String(args["command"]), output: stdout, metadata: { output: stdout, exit: 0, truncated: false } }
}

await hooks["chat.params"]!({ sessionID: session, agent: "build", model: { id: "bench-model", providerID: "bench" } }, {})
for (let round = -2; round < rounds; round += 1) {
  const keep = round >= 0 // two warm-up rounds
  const read = await call("read", `r${round}`, { filePath: "notes.txt" }, () => ({ title: "notes.txt", output: "line\n", metadata: { truncated: false } }))
  const plain = await call("bash", `b${round}`, { command: "seq 1 10", description: "count" }, shell)
  const wrapped = await call("bash", `w${round}`, { command: "grep -rn needle .", description: "find" }, shell)
  if (!/^'[^']*' run --archive-agent /u.test(String(wrapped.ran["command"]))) fail("the wrapped command was not rewritten")
  const capped = await call("read", `c${round}`, { filePath: "big.txt" }, () => ({ title: "big.txt", output: big, metadata: { truncated: false } }))
  if (!String(capped.output["output"]).includes("capped at")) fail("the large read was not capped")
  if (!keep) continue
  times["read"]!.push(read.hooks)
  times["bashOriginal"]!.push(plain.hooks)
  times["bashWrapped"]!.push(wrapped.hooks)
  times["wrappedRun"]!.push(wrapped.run)
  times["readCapped"]!.push(capped.hooks)
}
await hooks["dispose"]!()
process.stdout.write(`${JSON.stringify(times)}\n`)
