/**
 * The real `yarp` for the tests that need it: found on YARP_REAL_BIN, YARP_BIN or
 * PATH (`make test-pi` puts the checkout's virtual environment there), and a private
 * world to run it in (HOME, XDG folders, runtime directory, archive), where a broker
 * the test starts serves only that test and exits on its own soon after.
 */

import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"

export function findRealYarp(): string | null {
  const candidates = [process.env["YARP_REAL_BIN"], process.env["YARP_BIN"]]
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) candidates.push(join(dir, "yarp"))
  for (const candidate of candidates) {
    if (candidate === undefined || candidate === "" || !existsSync(candidate)) continue
    const probe = spawnSync(candidate, ["archive", "ingest", "--help"], { encoding: "utf8" })
    if (probe.status === 0) return candidate
  }
  return null
}

export type World = { root: string; env: NodeJS.ProcessEnv; bin: string; close: () => Promise<void> }

/**
 * A private world for `yarp`. `bin` is a two-line wrapper that answers `yarp plan`
 * with "run it as it is" (the tests hand the adapters recorded results, never run
 * the commands) and passes everything else to the real `yarp`.
 */
export function realWorld(yarp: string): World {
  const root = mkdtempSync(join(tmpdir(), "yarp-real-"))
  const home = join(root, "home")
  const run = join(root, "run")
  for (const dir of [home, run, join(root, "bin")]) mkdirSync(dir, { mode: 0o700 })
  const bin = join(root, "bin", "yarp")
  writeFileSync(
    bin,
    `#!/bin/sh\n[ "$1" = plan ] && { echo '{"version":1,"execution":{"kind":"original"},"result":{"kind":"ordinary"}}'; exit 0; }\nexec '${yarp}' "$@"\n`,
    { mode: 0o755 },
  )
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_RUNTIME_DIR: run,
    YARP_ARCHIVE: join(root, "tool-calls.sqlite3"),
    YARP_BIN: bin,
    // A short idle grace lets the broker this test started exit on its own.
    YARP_BROKER_IDLE_MS: "300",
  }
  const close = async () => {
    // Never pull the runtime directory from under a live broker: wait for its socket to go.
    const sockets = () => (existsSync(join(run, "yarp")) ? readdirSync(join(run, "yarp")).filter((name) => name.endsWith(".sock")) : [])
    for (let waited = 0; sockets().length > 0 && waited < 15_000; waited += 50) await sleep(50)
    rmSync(root, { recursive: true, force: true })
  }
  return { root, env, bin, close }
}

/**
 * The view the Python side makes of `text` (`yarp.view.host.text_view`, source
 * `result_text`), run by the interpreter the real `yarp` names on its first line:
 * what the Claude Code hooks show, and what the adapters must show too.
 */
export function pythonView(yarp: string, text: string, cap: number, ref: string, completeness: string): string {
  const python = /^#!(\S+)/u.exec(readFileSync(yarp, "utf8").split("\n", 1)[0]!)?.[1]
  if (python === undefined) throw new Error(`${yarp} is not a Python console script`)
  const program = "import sys; from yarp.view.host import text_view\n"
    + "view = text_view(sys.stdin.buffer.read(), cap=int(sys.argv[1]), archive_ref=sys.argv[2], source='result_text', completeness=sys.argv[3])\n"
    + "sys.stdout.buffer.write(b'<fits>' if view is None else view)\n"
  return execFileSync(python, ["-c", program, String(cap), ref, completeness], { input: text, encoding: "utf8", maxBuffer: 64 << 20 })
}
