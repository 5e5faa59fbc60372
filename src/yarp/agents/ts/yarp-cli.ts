/**
 * Short-lived `yarp` invocations the extension needs: the version and configuration
 * handshake, the per-command shell plan, and raw-stream restore.
 *
 * Every call has a timeout and returns a parsed, validated value or throws an error
 * whose text is bounded and never includes the command being planned or the
 * restored output.
 */

import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { boundedText } from "./frame.ts"

/** The `yarp` major version this extension speaks to. */
export const SUPPORTED_MAJOR = 0

export type ExecResult = { stdout: string; stderr: string; code: number | null }

export class BinaryMissingError extends Error {}

/**
 * The `yarp` that installed an adapter, from the install record `yarp hook install`
 * writes at the root of the installed folder (`yarp-install.json`), or null when
 * there is none (the adapter runs from the package itself) or it is unreadable.
 */
export function installedBinary(recordUrl: URL): string | null {
  try {
    const record = JSON.parse(readFileSync(recordUrl, "utf8")) as { yarpBin?: unknown }
    return typeof record.yarpBin === "string" && record.yarpBin !== "" ? record.yarpBin : null
  } catch {
    return null
  }
}

/**
 * The install record `yarp hook install` writes at the root of the installed folder,
 * which holds this shared folder beside the agent's own (`ts/` beside `<agent>/`).
 */
export const INSTALL_RECORD_URL = new URL("../yarp-install.json", import.meta.url)

/** `YARP_BIN`, else the yarp that installed the adapter (its record at `recordUrl`), else `yarp` on PATH. */
export function binaryPath(env: NodeJS.ProcessEnv, recordUrl: URL): string {
  const configured = env["YARP_BIN"]
  if (configured !== undefined && configured !== "") return configured
  return installedBinary(recordUrl) ?? "yarp"
}

export function runYarp(
  bin: string,
  args: readonly string[],
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
  maxBuffer = 16 * 1024 * 1024,
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      args,
      { env, timeout: timeoutMs, maxBuffer, encoding: "utf8", killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        if (error !== null) {
          const code = (error as NodeJS.ErrnoException).code
          if (code === "ENOENT" || code === "EACCES") {
            reject(new BinaryMissingError(`yarp binary not found or not executable: ${bin}`))
            return
          }
          if ((error as { killed?: boolean }).killed) {
            reject(new Error(`yarp ${args[0] ?? ""} timed out after ${timeoutMs} ms`))
            return
          }
          if (typeof code === "string") {
            reject(new Error(`yarp ${args[0] ?? ""} failed: ${code}`))
            return
          }
          resolve({ stdout, stderr, code: typeof code === "number" ? code : 1 })
          return
        }
        resolve({ stdout, stderr, code: 0 })
      },
    )
  })
}

export function parseVersion(stdout: string): { major: number; minor: number; patch: number } {
  const match = /^yarp (\d+)\.(\d+)\.(\d+)\S*\s*$/u.exec(stdout)
  if (match === null) throw new Error("`yarp --version` did not print `yarp X.Y.Z`")
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) }
}

export type YarpConfig = {
  pruningEnabled: boolean
  capBytes: number
  archiveEnabled: boolean
  archivePath: string
}

function record(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`configuration ${name} is not an object`)
  }
  return value as Record<string, unknown>
}

export function parseConfig(stdout: string): YarpConfig {
  let value: unknown
  try {
    value = JSON.parse(stdout)
  } catch {
    throw new Error("`yarp config show --json` did not print JSON")
  }
  const root = record(value, "root")
  if (root["version"] !== 1) throw new Error("configuration version is not 1")
  const pruning = record(root["pruning"], "pruning")
  const output = record(root["output"], "output")
  const archive = record(root["archive"], "archive")
  const cap = output["cap_bytes"]
  if (typeof pruning["enabled"] !== "boolean") throw new Error("pruning.enabled is not a boolean")
  if (typeof archive["enabled"] !== "boolean") throw new Error("archive.enabled is not a boolean")
  if (typeof archive["path"] !== "string") throw new Error("archive.path is not a string")
  if (typeof cap !== "number" || !Number.isSafeInteger(cap) || (cap !== 0 && (cap < 1024 || cap > 16 * 1024 * 1024))) {
    throw new Error("output.cap_bytes is outside 0 or 1024..16777216")
  }
  return {
    pruningEnabled: pruning["enabled"],
    capBytes: cap,
    archiveEnabled: archive["enabled"],
    archivePath: archive["path"],
  }
}

export type ShellPlan = {
  /** `wrapped`: "whole" (the call holds the streams) or "segments" (each wrapped command records its own call). */
  execution: { kind: "original" } | { kind: "rewrite"; command: string; wrapped: "whole" | "segments" }
  result: { kind: "ordinary" | "recovery" }
}

export function parsePlan(stdout: string): ShellPlan {
  let value: unknown
  try {
    value = JSON.parse(stdout)
  } catch {
    throw new Error("`yarp plan --json` did not print JSON")
  }
  const root = record(value, "plan")
  if (root["version"] !== 1) throw new Error("shell plan version is not 1")
  const execution = record(root["execution"], "plan execution")
  const result = record(root["result"], "plan result")
  const resultKind = result["kind"]
  if (resultKind !== "ordinary" && resultKind !== "recovery") throw new Error("shell plan result kind is invalid")
  if (execution["kind"] === "original") return { execution: { kind: "original" }, result: { kind: resultKind } }
  if (execution["kind"] === "rewrite") {
    const command = execution["command"]
    if (typeof command !== "string" || command.trim() === "") throw new Error("shell plan rewrite has no command")
    // A plan without `wrapped` is the reference planner's: one simple command, wrapped whole.
    const wrapped = execution["wrapped"] ?? "whole"
    if (wrapped !== "whole" && wrapped !== "segments") throw new Error("shell plan wrapped kind is invalid")
    return { execution: { kind: "rewrite", command, wrapped }, result: { kind: resultKind } }
  }
  throw new Error("shell plan execution kind is invalid")
}

export type SourceIdentity = { agent: string; account: string; sourceSessionId: string; sourceCallId: string }

export function archiveFlags(identity: SourceIdentity): string[] {
  return [
    "--archive-agent", identity.agent,
    "--archive-account", identity.account,
    "--archive-session", identity.sourceSessionId,
    "--archive-call", identity.sourceCallId,
  ]
}

export async function planCommand(
  bin: string,
  command: string,
  identity: SourceIdentity,
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
): Promise<ShellPlan> {
  const launcher = `'${bin.replaceAll("'", "'\\''")}'`
  const result = await runYarp(
    bin, ["plan", "--json", "--compound", "--launcher", launcher, ...archiveFlags(identity), "--", command], timeoutMs, env,
  )
  if (result.code !== 0) {
    throw new Error(`yarp plan exited ${result.code}: ${boundedText(result.stderr, 200)}`)
  }
  return parsePlan(result.stdout)
}

/** The committed raw stdout and stderr of a wrapped call, as `yarp archive restore` prints them. */
export async function restoreStreams(
  bin: string,
  identity: SourceIdentity,
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
): Promise<{ stdout: string; stderr: string }> {
  const result = await runYarp(bin, ["archive", "restore", ...archiveFlags(identity)], timeoutMs, env, 512 * 1024 * 1024)
  if (result.code !== 0) {
    throw new Error(`yarp archive restore exited ${result.code}`)
  }
  return { stdout: result.stdout, stderr: result.stderr }
}
